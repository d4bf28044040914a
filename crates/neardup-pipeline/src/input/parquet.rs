//! Parquet inputs, read as Arrow record batches.

use std::fmt;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{self, DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use super::{display_path, quoted_list, too_long, Columns, CorpusReader, ParquetData, Raw, Record};
use crate::compression::open_seekable;
use crate::error::{Error, Result};

/// The message for a Parquet or Arrow failure.
fn parquet_error(name: &str, error: impl fmt::Display) -> Error {
    Error::format(name, format!("cannot read Parquet: {error}"))
}

/// The index of the column named `field` in a Parquet schema, which must hold a type that
/// `accepts` takes (`expected` names those types).
fn schema_column(
    name: &str,
    schema: &SchemaRef,
    field: &str,
    (accepts, expected): (fn(&DataType) -> bool, &str),
) -> Result<usize> {
    let index = schema.index_of(field).map_err(|_| {
        let names = quoted_list(schema.fields().iter().map(|column| column.name()));
        Error::format(
            name,
            format!("column {field:?} not found; the schema has {names}"),
        )
    })?;
    let data_type = schema.field(index).data_type();
    if !accepts(data_type) {
        let message = format!("column {field:?} has type {data_type}; expected {expected}");
        return Err(Error::format(name, message));
    }
    Ok(index)
}

/// Whether `data_type` is a string type.
fn is_string(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

/// The type of the values of `data_type`: the dictionary's values for a dictionary-encoded
/// column (a pandas categorical, a string column pyarrow wrote dictionary-encoded), else
/// the type itself.
fn value_type(data_type: &DataType) -> &DataType {
    match data_type {
        DataType::Dictionary(_, values) => values,
        other => other,
    }
}

/// The Arrow types a text column may have.
const TEXT_TYPES: (fn(&DataType) -> bool, &str) = (
    |data_type| is_string(value_type(data_type)),
    "a string type (Utf8, LargeUtf8 or Utf8View, or a dictionary of them)",
);

/// The Arrow types an id column may have.
const ID_TYPES: (fn(&DataType) -> bool, &str) = (
    |data_type| is_string(value_type(data_type)) || value_type(data_type).is_integer(),
    "a string or integer type (or a dictionary of them)",
);

/// `array` with a dictionary's values looked up, once per batch; other arrays as they are.
fn decoded(name: &str, array: &ArrayRef) -> Result<ArrayRef> {
    match array.data_type() {
        DataType::Dictionary(_, values) => {
            arrow::compute::cast(array, values).map_err(|e| parquet_error(name, e))
        }
        _ => Ok(array.clone()),
    }
}

/// The string at `row` of a string array; `None` if it is null.
fn string_value(array: &ArrayRef, row: usize) -> Option<&str> {
    if array.is_null(row) {
        return None;
    }
    // Other types were refused by `schema_column`.
    match array.data_type() {
        DataType::Utf8 => array
            .as_string_opt::<i32>()
            .map(|strings| strings.value(row)),
        DataType::LargeUtf8 => array
            .as_string_opt::<i64>()
            .map(|strings| strings.value(row)),
        DataType::Utf8View => array.as_string_view_opt().map(|strings| strings.value(row)),
        _ => None,
    }
}

/// The value at `row` of a string or integer array as JSON; `None` if it is null.
fn id_value(array: &ArrayRef, row: usize) -> Option<Value> {
    if array.is_null(row) {
        return None;
    }
    match array.data_type() {
        DataType::Int8 => integer::<datatypes::Int8Type>(array, row),
        DataType::Int16 => integer::<datatypes::Int16Type>(array, row),
        DataType::Int32 => integer::<datatypes::Int32Type>(array, row),
        DataType::Int64 => integer::<datatypes::Int64Type>(array, row),
        DataType::UInt8 => integer::<datatypes::UInt8Type>(array, row),
        DataType::UInt16 => integer::<datatypes::UInt16Type>(array, row),
        DataType::UInt32 => integer::<datatypes::UInt32Type>(array, row),
        DataType::UInt64 => integer::<datatypes::UInt64Type>(array, row),
        _ => string_value(array, row).map(Value::from),
    }
}

/// The integer at `row` of a primitive array as JSON.
fn integer<T: datatypes::ArrowPrimitiveType>(array: &ArrayRef, row: usize) -> Option<Value>
where
    T::Native: Into<Value>,
{
    array
        .as_primitive_opt::<T>()
        .map(|integers| integers.value(row).into())
}

impl Columns<'_> {
    /// Makes a record of row `row` of batch `index`, which is row `line` of the file, from
    /// the batch's text and id columns (dictionaries [`decoded`]).
    fn batch_record(
        &self,
        (text, id, index): (&ArrayRef, Option<&ArrayRef>, u32),
        row: usize,
        line: u64,
        ordinal: u64,
    ) -> Result<Record> {
        let null = |field: &str| Error::input(self.name, line, format!("column {field:?} is null"));
        let text = string_value(text, row).ok_or_else(|| null(self.text.0))?;
        if text.len() > self.limit.bytes {
            return Err(Error::input(
                self.name,
                line,
                too_long(text.len() as u64, self.limit),
            ));
        }
        let id = match self.id.zip(id) {
            Some(((field, _), column)) => id_value(column, row).ok_or_else(|| null(field))?,
            None => Value::from(ordinal),
        };
        let row =
            u32::try_from(row).map_err(|_| Error::format(self.name, "record batch too large"))?;
        let raw = Raw::Parquet { batch: index, row };
        Ok(self.record(id, text.to_owned(), raw, line))
    }
}

impl CorpusReader<'_> {
    /// Reads a Parquet input.
    pub(super) fn read_parquet(&mut self, source: u32, path: &str) -> Result<ParquetData> {
        let (name, options) = (display_path(path), self.options);
        let file = open_seekable(self.opened(source, path))?;
        self.corpus.bytes_read += file.metadata().map_err(|e| Error::io(name, e))?.len();
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet_error(name, e))?;
        let schema = builder.schema().clone();
        let text = schema_column(name, &schema, &options.text_field, TEXT_TYPES)?;
        let id = options.id_field.as_deref();
        let id = id
            .map(|field| schema_column(name, &schema, field, ID_TYPES))
            .transpose()?;
        let columns = Columns::new(name, source, options, text, id);
        let (mut batches, mut rows_before) = (Vec::new(), 0);
        for batch in builder.build().map_err(|e| parquet_error(name, e))? {
            let batch = batch.map_err(|e| parquet_error(name, e))?;
            let index = u32::try_from(batches.len())
                .map_err(|_| parquet_error(name, "too many record batches"))?;
            self.read_batch(&columns, (&batch, index), rows_before)?;
            rows_before += batch.num_rows() as u64;
            batches.push(batch);
        }
        Ok(ParquetData { schema, batches })
    }

    /// Makes records of the rows of one record batch, which follows `rows_before` rows.
    fn read_batch(
        &mut self,
        columns: &Columns<'_>,
        batch: (&RecordBatch, u32),
        rows_before: u64,
    ) -> Result<()> {
        let (batch, index) = batch;
        let text = decoded(columns.name, batch.column(columns.text.1))?;
        let id = columns
            .id
            .map(|(_, column)| decoded(columns.name, batch.column(column)));
        let id = id.transpose()?;
        for row in 0..batch.num_rows() {
            let ordinal = self.next_ordinal();
            let line = rows_before + row as u64 + 1;
            let record = columns.batch_record((&text, id.as_ref(), index), row, line, ordinal);
            self.accept(record)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::input::tests::{
        error_of, gzip, read_one, skip, texts, write_file, write_parquet_file,
    };
    use crate::input::InputOptions;

    #[test]
    fn parquet_reads_all_batches_with_row_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let count = 2_500;
        let ids: Vec<i64> = (100..100 + count).collect();
        let texts: Vec<String> = (0..count).map(|n| format!("doc {n}")).collect();
        let mut text_refs: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
        text_refs[1_999] = None;
        let path = write_parquet_file(&dir, "in.parquet", ids, text_refs);
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..skip()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(corpus.records.len(), 2_499);
        assert_eq!(corpus.records[0].id, json!(100));
        assert_eq!(corpus.records[2_000].text, "doc 2001");
        assert_eq!(corpus.records[2_000].line, 2_002);
        assert_eq!(
            corpus.records[2_000].raw,
            Raw::Parquet { batch: 1, row: 977 }
        );
        assert!(corpus.skipped.first[0].ends_with("in.parquet:2000: column \"text\" is null"));
        let data = corpus.sources[0].parquet.as_ref().unwrap();
        assert_eq!(
            data.batches.iter().map(|b| b.num_rows()).sum::<usize>(),
            2_500
        );
    }

    /// Issue 46: pandas writes a categorical column as a dictionary of strings; it was refused.
    #[test]
    fn dictionary_encoded_strings_are_read_as_their_values() {
        use std::sync::Arc;

        use arrow::array::{DictionaryArray, Int64Array};
        use arrow::datatypes::{Field, Int32Type, Int8Type, Schema};
        use parquet::arrow::ArrowWriter;

        let dir = tempfile::tempdir().unwrap();
        let strings: DictionaryArray<Int32Type> = vec![
            Some("今天天气很好"),
            None,
            Some("today"),
            Some("今天天气很好"),
        ]
        .into_iter()
        .collect();
        let ids: DictionaryArray<Int8Type> = vec!["a", "b", "c", "d"].into_iter().collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", ids.data_type().clone(), false),
            Field::new("text", strings.data_type().clone(), true),
            Field::new("n", arrow::datatypes::DataType::Int64, false),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(ids),
            Arc::new(strings),
            Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let path = dir.path().join("categorical.parquet");
        let mut writer = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None);
        let writer = writer.as_mut().unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        let path = path.to_string_lossy().into_owned();
        let options = InputOptions {
            id_field: Some("id".to_owned()),
            ..skip()
        };
        let corpus = read_one(&path, &options).unwrap();
        assert_eq!(texts(&corpus), ["今天天气很好", "today", "今天天气很好"]);
        let ids: Vec<_> = corpus.records.iter().map(|r| r.id.clone()).collect();
        assert_eq!(ids, [json!("a"), json!("c"), json!("d")]);
        assert!(corpus.skipped.first[0].ends_with("categorical.parquet:2: column \"text\" is null"));
        // A dictionary of another type is still refused, naming what is accepted.
        let message = error_of(
            &path,
            &InputOptions {
                text_field: "n".into(),
                ..skip()
            },
        );
        assert!(message.contains("or a dictionary of them"), "{message}");
    }

    #[test]
    fn parquet_column_must_exist_and_hold_strings() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_parquet_file(&dir, "in.parquet", vec![1], vec![Some("a")]);
        let options = InputOptions {
            text_field: "body".to_owned(),
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(
            message.ends_with("column \"body\" not found; the schema has \"id\", \"text\""),
            "{message}"
        );
        let options = InputOptions {
            text_field: "id".to_owned(),
            ..InputOptions::default()
        };
        let message = error_of(&path, &options);
        assert!(message.contains("column \"id\" has type Int64; expected a string type"));
    }

    #[test]
    fn parquet_compressed_input_is_spooled() {
        let dir = tempfile::tempdir().unwrap();
        let plain = write_parquet_file(&dir, "in.parquet", vec![1, 2], vec![Some("a"), Some("b")]);
        let bytes = std::fs::read(&plain).unwrap();
        let path = write_file(&dir, "in.parquet.gz", &gzip(&bytes));
        let corpus = read_one(&path, &InputOptions::default()).unwrap();
        assert_eq!(texts(&corpus), ["a", "b"]);
    }
}
