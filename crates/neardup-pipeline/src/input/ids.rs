//! Ids taken from a field must name one record each.
//!
//! `--clusters` and `--pairs` name documents by id, so two records with one id (or a record
//! with an empty id) would make them ambiguous. [`SeenIds`] remembers every id accepted so far
//! by the index of the record that holds it: the table costs a few bytes per record and no copy
//! of the ids, which are hashed (and compared on a hash match) in place.

use std::hash::BuildHasher;

use neardup_core::offsets::Offsets;
use neardup_core::sharded::ShardedTable;
use serde_json::Value;

/// The ids of the records accepted so far.
#[derive(Default)]
pub(super) struct SeenIds {
    /// Indexes into the accepted records, in shards (so that growing never holds the whole
    /// table twice).
    table: ShardedTable<u32>,
    hasher: foldhash::fast::FixedState,
}

impl SeenIds {
    /// The index of the accepted record whose id is `id`; `id_of` gives the id of an index.
    pub(super) fn find<'v>(&self, id: &Value, id_of: impl Fn(u32) -> &'v Value) -> Option<u32> {
        let hash = self.hasher.hash_one(id);
        let index = self.table.find(hash, |&index| id_of(index) == id)?;
        Some(*index)
    }

    /// Records that `index` (whose id `id_of` gives) was accepted.
    pub(super) fn insert<'v>(&mut self, index: u32, id_of: impl Fn(u32) -> &'v Value) {
        let hasher = &self.hasher;
        let hash_of = |index: &u32| hasher.hash_one(id_of(*index));
        self.table.insert_unique(hash_of(&index), index, hash_of);
    }
}

impl SeenIds {
    /// Room for `ids` ids.
    pub(super) fn reserve(&mut self, ids: usize) {
        // Only a new table is sized: its entries' hashes would need their ids.
        if self.table.is_empty() {
            let hasher = &self.hasher;
            self.table.reserve(ids, |_| hasher.hash_one(0u32));
        }
    }

    /// [`SeenIds::find`] over ids held as their JSON text (an [`IdArena`]).
    pub(super) fn find_text<'v>(&self, id: &[u8], id_of: impl Fn(u32) -> &'v [u8]) -> Option<u32> {
        let hash = self.hasher.hash_one(id);
        let index = self.table.find(hash, |&index| id_of(index) == id)?;
        Some(*index)
    }

    /// [`SeenIds::insert`] over ids held as their JSON text (an [`IdArena`]).
    pub(super) fn insert_text<'v>(&mut self, index: u32, id_of: impl Fn(u32) -> &'v [u8]) {
        let hasher = &self.hasher;
        let hash_of = |index: &u32| hasher.hash_one(id_of(*index));
        self.table.insert_unique(hash_of(&index), index, hash_of);
    }
}

/// Ids kept as their JSON text, end to end in one buffer: about the id's length and 4 bytes
/// a record, where a [`Value`] costs 32 bytes and an allocation. Two ids are equal exactly
/// when their texts are (serde_json writes a value one way).
#[derive(Debug, Default, Clone)]
pub struct IdArena {
    text: Vec<u8>,
    /// The end of each id in `text`.
    ends: Offsets,
}

impl IdArena {
    /// Ids held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Gives back the room no id uses.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Bytes of the ids' JSON text, in all.
    pub fn text_bytes(&self) -> usize {
        self.text.len()
    }

    /// Whether no id is held.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Room for `ids` more ids of about `bytes` bytes in all.
    pub fn reserve(&mut self, ids: usize, bytes: usize) {
        self.ends.reserve_exact(ids);
        self.text.reserve_exact(bytes);
    }

    /// Adds an id.
    pub fn push(&mut self, id: &Value) {
        // Writing a `Value` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut self.text, id);
        self.ends.push(self.text.len() as u64);
    }

    /// Adds an id given as its JSON text (as [`IdArena::text`] gives it).
    fn push_text(&mut self, text: &[u8]) {
        self.text.extend_from_slice(text);
        self.ends.push(self.text.len() as u64);
    }

    /// Where id `index` ends in `text`.
    fn end(&self, index: usize) -> usize {
        self.ends.get(index) as usize
    }

    /// The JSON text of id `index`.
    pub fn text(&self, index: usize) -> &[u8] {
        let start = match index {
            0 => 0,
            _ => self.end(index - 1),
        };
        &self.text[start..self.end(index)]
    }

    /// Writes the ids to `out`.
    pub fn encode(&self, out: &mut neardup_core::codec::Encoder) {
        out.u64(self.len() as u64);
        for index in 0..self.len() {
            out.bytes(self.text(index));
        }
    }

    /// Reads what [`IdArena::encode`] wrote.
    ///
    /// # Errors
    /// Malformed ids (parameter `checkpoint`).
    pub fn decode(from: &mut neardup_core::codec::Decoder<'_>) -> crate::Result<IdArena> {
        let count = from.u64()?;
        let mut arena = IdArena::default();
        for _ in 0..count {
            let text = from.bytes()?;
            serde_json::from_slice::<serde::de::IgnoredAny>(text)
                .map_err(|e| neardup_core::codec::corrupt(format!("an id: {e}")))?;
            arena.push_text(text);
        }
        Ok(arena)
    }

    /// Id `index`, or `None` past the end.
    pub fn get(&self, index: usize) -> Option<Value> {
        (index < self.len()).then(|| {
            // The text was written from a `Value`.
            serde_json::from_slice(self.text(index)).unwrap_or(Value::Null)
        })
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.ends.heap_bytes()
    }
}

/// An [`IdArena`] moved to a file while a run does not need its ids (the engine stage of a
/// spilling run), so that they take disk instead of memory; [`ParkedIds::restore`] gives it
/// back as it was.
#[derive(Debug)]
pub struct ParkedIds {
    path: std::path::PathBuf,
    text_bytes: usize,
    ids: usize,
}

impl ParkedIds {
    /// Writes `arena` to `path` (created) and frees it.
    ///
    /// # Errors
    /// The file cannot be written (its path and the error: a full disk, for one).
    pub fn park(arena: IdArena, path: &std::path::Path) -> std::io::Result<ParkedIds> {
        use std::io::Write;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
        out.write_all(&arena.text)?;
        for end in arena.ends.iter() {
            out.write_all(&end.to_le_bytes())?;
        }
        out.into_inner()
            .map_err(std::io::IntoInnerError::into_error)?
            .sync_data()?;
        Ok(ParkedIds {
            path: path.to_path_buf(),
            text_bytes: arena.text.len(),
            ids: arena.len(),
        })
    }

    /// The file the ids wait in.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The arena written by [`ParkedIds::park`]; the file is removed.
    ///
    /// # Errors
    /// The file cannot be read back whole, or holds ends that do not fit its text.
    pub fn restore(self) -> std::io::Result<IdArena> {
        use std::io::Read;
        let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&self.path)?);
        let mut text = vec![0u8; self.text_bytes];
        file.read_exact(&mut text)?;
        let mut ends = Offsets::with_capacity(self.ids);
        let mut previous = 0;
        let mut end = [0u8; 8];
        for _ in 0..self.ids {
            file.read_exact(&mut end)?;
            let value = u64::from_le_bytes(end);
            if value < previous || value > self.text_bytes as u64 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "{}: an id ends at {value}, out of order",
                        self.path.display()
                    ),
                ));
            }
            ends.push(value);
            previous = value;
        }
        drop(file);
        std::fs::remove_file(&self.path)?;
        Ok(IdArena { text, ends })
    }
}

impl FromIterator<Value> for IdArena {
    fn from_iter<I: IntoIterator<Item = Value>>(ids: I) -> IdArena {
        let mut arena = IdArena::default();
        for id in ids {
            arena.push(&id);
        }
        arena
    }
}

pub(super) fn empty_id(id: &Value, field: &str) -> Option<String> {
    match id {
        Value::String(text) if text.is_empty() => {
            Some(format!("the id (field {field:?}) is empty"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::IdArena;
    #[cfg(feature = "parquet")]
    use crate::input::tests::write_parquet_file;
    use crate::input::tests::{read_one, skip, texts, write_file};
    use crate::input::{read_inputs, InputOptions};

    fn by_id() -> InputOptions {
        InputOptions {
            id_field: Some("id".to_owned()),
            ..InputOptions::default()
        }
    }

    fn skip_by_id() -> InputOptions {
        InputOptions {
            id_field: Some("id".to_owned()),
            ..skip()
        }
    }

    #[test]
    fn duplicate_ids_are_bad_records_naming_where_the_id_was_first_seen() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_file(
            &dir,
            "a.jsonl",
            b"{\"id\": \"a\", \"text\": \"1\"}\n{\"id\": 7, \"text\": \"2\"}\n",
        );
        let second = write_file(
            &dir,
            "b.jsonl",
            b"{\"id\": \"7\", \"text\": \"3\"}\n\n{\"id\": \"a\", \"text\": \"4\"}\n{\"id\": 7, \"text\": \"5\"}\n",
        );
        let paths = [first.clone(), second.clone()];
        let message = read_inputs(&paths, &by_id()).unwrap_err().to_string();
        assert_eq!(
            message,
            format!("{second}:3: duplicate id \"a\" (field \"id\"): first seen at {first}:1")
        );
        let corpus = read_inputs(&paths, &skip_by_id()).unwrap();
        assert_eq!(texts(&corpus), ["1", "2", "3"]);
        assert_eq!(corpus.skipped.count, 2);
        assert_eq!(
            corpus.skipped.first[1],
            format!("{second}:4: duplicate id 7 (field \"id\"): first seen at {first}:2")
        );
        let corpus = read_inputs(&paths, &skip()).unwrap();
        assert_eq!(corpus.records.len(), 5, "numbered ids are never checked");
    }

    #[test]
    fn empty_ids_are_bad_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.jsonl", b"{\"id\": \"\", \"text\": \"a\"}\n");
        let corpus = read_one(&path, &skip_by_id()).unwrap();
        assert_eq!(
            corpus.skipped.first,
            [format!("{path}:1: the id (field \"id\") is empty")]
        );
        let path = write_file(&dir, "in.csv", b"id,text\n,a\nx,b\nx,c\n");
        let corpus = read_one(&path, &skip_by_id()).unwrap();
        assert_eq!(texts(&corpus), ["b"]);
        assert_eq!(
            corpus.skipped.first,
            [
                format!("{path}:2: the id (field \"id\") is empty"),
                format!("{path}:4: duplicate id \"x\" (field \"id\"): first seen at {path}:3"),
            ]
        );
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn duplicate_parquet_ids_are_bad_records() {
        let dir = tempfile::tempdir().unwrap();
        let texts_in = vec![Some("a"), Some("b"), Some("c")];
        let path = write_parquet_file(&dir, "in.parquet", vec![5, 6, 5], texts_in);
        let message = read_one(&path, &by_id()).unwrap_err().to_string();
        assert_eq!(
            message,
            format!("{path}:3: duplicate id 5 (field \"id\"): first seen at {path}:1")
        );
    }

    #[test]
    fn numeric_ids_are_written_back_exactly_as_read() {
        let dir = tempfile::tempdir().unwrap();
        let ids = [
            "12345678901234567890123",
            "12345678901234567890124",
            "1e2",
            "1e-7",
            "100",
            "-0",
            "0",
            "1.50",
            "18446744073709551616",
            "\"12345678901234567890123\"",
        ];
        let data: String = ids
            .iter()
            .map(|id| format!("{{\"id\": {id}, \"text\": \"t\"}}\n"))
            .collect();
        let path = write_file(&dir, "in.jsonl", data.as_bytes());
        let corpus = read_one(&path, &by_id()).unwrap();
        let written: Vec<String> = corpus
            .records
            .iter()
            .map(|r| serde_json::json!({ "id": r.id }).to_string())
            .collect();
        let expected: Vec<String> = ids
            .iter()
            // serde_json spells every exponent `e` with a sign; the digits are kept.
            .map(|id| format!("{{\"id\":{}}}", id.replace("e2", "e+2")))
            .collect();
        assert_eq!(written, expected);
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn csv_and_parquet_ids_stay_as_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(&dir, "in.csv", b"id,text\n007,a\n1e2,b\n");
        let corpus = read_one(&path, &by_id()).unwrap();
        let ids: Vec<String> = corpus.records.iter().map(|r| r.id.to_string()).collect();
        assert_eq!(ids, ["\"007\"", "\"1e2\""]);
        let texts_in = vec![Some("a"), Some("b")];
        let path = write_parquet_file(&dir, "in.parquet", vec![i64::MIN, 0], texts_in);
        let corpus = read_one(&path, &by_id()).unwrap();
        let ids: Vec<String> = corpus.records.iter().map(|r| r.id.to_string()).collect();
        assert_eq!(ids, ["-9223372036854775808", "0"]);
    }

    #[test]
    fn an_id_arena_gives_back_every_id() {
        let ids = [
            json!("a"),
            json!(7),
            json!(""),
            json!("長い id"),
            json!(1.5),
            json!(-3),
        ];
        let arena: IdArena = ids.iter().cloned().collect();
        assert_eq!(arena.len(), ids.len());
        for (index, id) in ids.iter().enumerate() {
            assert_eq!(arena.get(index).as_ref(), Some(id));
            assert_eq!(arena.text(index), serde_json::to_vec(id).unwrap());
        }
        assert_eq!(arena.get(ids.len()), None);
        // Equal ids have equal texts, different ones different texts.
        assert_ne!(arena.text(1), IdArena::from_iter([json!("7")]).text(0));
    }

    #[test]
    fn parked_ids_come_back_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let arena: IdArena = [json!("a"), json!(7), json!({"k": [1, 2]}), json!("")]
            .into_iter()
            .collect();
        let path = dir.path().join("ids");
        let parked = super::ParkedIds::park(arena.clone(), &path).unwrap();
        assert!(path.exists());
        let back = parked.restore().unwrap();
        assert!(!path.exists());
        assert_eq!(back.len(), arena.len());
        for index in 0..arena.len() {
            assert_eq!(back.text(index), arena.text(index));
        }
        // A file cut short is an error, not a shorter arena.
        let parked = super::ParkedIds::park(arena, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(parked.restore().is_err());
    }
}
