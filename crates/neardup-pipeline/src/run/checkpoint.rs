//! The checkpoints of a resumable run (`--resume`, see [`crate::resume`]): the corpus
//! pass's and the sketch stage's, each encoded with [`neardup_core::codec`].

use neardup_core::codec::{self, Decoder, Encoder};
use neardup_core::corpus::CorpusStats;

use super::sides::{ReadSummary, SidesRead};
use crate::error::Result;
use crate::input::{Corpus, Format, IdArena, Meta, Runs, Skipped, Source};

/// The layout of the checkpoints a resumable run writes (a line of its manifest): 2 since
/// the sketch checkpoint sums the boilerplate notes and holds places as runs.
pub(super) const CHECKPOINT_LAYOUT: u32 = 2;

/// What the corpus pass found: the method's corpus statistics, the pass's seconds and what
/// its read found (which the next read must find again).
pub(super) struct CorpusPass {
    pub(super) stats: CorpusStats,
    pub(super) seconds: f64,
    pub(super) summary: ReadSummary,
}

/// The corpus pass's checkpoint: its counts, seconds and what it read.
pub(super) fn encode_corpus_checkpoint(pass: &CorpusPass) -> Vec<u8> {
    let CorpusPass {
        stats,
        seconds,
        summary,
    } = pass;
    let mut out = Encoder::new();
    stats.encode(&mut out);
    out.f64(*seconds);
    for (records, id_bytes) in [summary.reference, summary.corpus] {
        out.u64(records as u64);
        out.u64(id_bytes as u64);
    }
    out.u64(summary.reference_bytes);
    out.u64(summary.corpus_bytes);
    out.finish()
}

/// Reads a corpus pass's checkpoint ([`encode_corpus_checkpoint`]).
pub(super) fn decode_corpus_checkpoint(bytes: &[u8]) -> Result<CorpusPass> {
    let mut from = Decoder::new(bytes)?;
    let stats = CorpusStats::decode(&mut from)?;
    let seconds = from.f64()?;
    let mut side =
        || -> Result<(usize, usize)> { Ok((from.u64()? as usize, from.u64()? as usize)) };
    let (reference, corpus) = (side()?, side()?);
    let summary = ReadSummary {
        reference,
        corpus,
        reference_bytes: from.u64()?,
        corpus_bytes: from.u64()?,
    };
    from.end()?;
    Ok(CorpusPass {
        stats,
        seconds,
        summary,
    })
}

/// The sketch stage's checkpoint: the engine's state ([`neardup_engine::Sketcher::checkpoint`]) and what
/// the read found (sources, skips, bytes, and the records' ids and places).
pub(super) fn encode_sketch_checkpoint(state: &[u8], read: &SidesRead) -> Vec<u8> {
    let mut out = Encoder::new();
    out.bytes(state);
    for (corpus, meta) in [
        (&read.reference, &read.reference_meta),
        (&read.corpus, &read.corpus_meta),
    ] {
        out.seq(&corpus.sources, |out, source| {
            out.str(&source.path);
            out.u8(Format::ALL
                .iter()
                .position(|&f| f == source.format)
                .unwrap_or(0) as u8);
            match &source.csv_headers {
                None => out.bool(false),
                Some(headers) => {
                    out.bool(true);
                    let fields: Vec<&[u8]> = headers.iter().collect();
                    out.seq(&fields, |out, field| out.bytes(field));
                }
            }
        });
        out.u64(corpus.skipped.count);
        out.seq(&corpus.skipped.first, |out, message| out.str(message));
        out.u64(corpus.bytes_read);
        meta.ids.encode(&mut out);
        meta.ordinals.encode(&mut out);
        meta.sources.encode(&mut out);
        meta.lines.encode(&mut out);
    }
    out.finish()
}

/// Reads a sketch checkpoint: the engine's state (borrowed) and what the read found.
pub(super) fn split_sketch_checkpoint(bytes: &[u8]) -> Result<(&[u8], SidesRead)> {
    let mut from = Decoder::new(bytes)?;
    let state = from.bytes()?;
    let mut sides = Vec::with_capacity(2);
    for _ in 0..2 {
        let sources = from.seq(10, |d| {
            let path = d.str()?.to_owned();
            let format = *Format::ALL
                .get(d.u8()? as usize)
                .ok_or_else(|| codec::corrupt("an input format"))?;
            let csv_headers = match d.bool()? {
                false => None,
                true => Some(csv::ByteRecord::from(
                    d.seq(8, |d| Ok(d.bytes()?.to_vec()))?,
                )),
            };
            Ok(Source {
                path,
                format,
                csv_headers,
                parquet: None,
                reread: None,
            })
        })?;
        let skipped = Skipped {
            count: from.u64()?,
            first: from.seq(8, |d| Ok(d.str()?.to_owned()))?,
        };
        let bytes_read = from.u64()?;
        let meta = Meta {
            ids: IdArena::decode(&mut from)?,
            ordinals: Runs::decode(&mut from)?,
            sources: Runs::decode(&mut from)?,
            lines: Runs::decode(&mut from)?,
        };
        let corpus = Corpus {
            records: Vec::new(),
            sources,
            skipped,
            bytes_read,
        };
        sides.push((corpus, meta));
    }
    from.end()?;
    let (corpus, corpus_meta) = sides.pop().unwrap_or_default();
    let (reference, reference_meta) = sides.pop().unwrap_or_default();
    Ok((
        state,
        SidesRead {
            reference,
            corpus,
            reference_meta,
            corpus_meta,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> ReadSummary {
        ReadSummary {
            reference: (2, 7),
            reference_bytes: 40,
            corpus: (5, 0),
            corpus_bytes: 1234,
        }
    }

    #[test]
    fn corpus_checkpoint_round_trip() {
        let mut stats = CorpusStats::exact();
        stats.add_document(&[1, 5, 9]);
        stats.add_document(&[5]);
        let pass = CorpusPass {
            stats,
            seconds: 1.25,
            summary: summary(),
        };
        let back = decode_corpus_checkpoint(&encode_corpus_checkpoint(&pass)).unwrap();
        assert_eq!(back.seconds, 1.25);
        assert_eq!(back.summary, summary());
        assert_eq!(back.stats.documents(), 2);
        assert_eq!(back.stats.document_frequency(5), 2);
        assert_eq!(back.stats.document_frequency(9), 1);
    }

    #[test]
    fn a_cut_corpus_checkpoint_is_refused() {
        let pass = CorpusPass {
            stats: CorpusStats::exact(),
            seconds: 0.5,
            summary: summary(),
        };
        let bytes = encode_corpus_checkpoint(&pass);
        assert!(decode_corpus_checkpoint(&bytes[..bytes.len() - 3]).is_err());
    }

    fn side(path: &str, format: Format, csv: Option<&[&str]>, records: u64) -> (Corpus, Meta) {
        let source = Source {
            path: path.to_owned(),
            format,
            csv_headers: csv.map(csv::ByteRecord::from),
            parquet: None,
            reread: None,
        };
        let corpus = Corpus {
            records: Vec::new(),
            sources: vec![source],
            skipped: Skipped {
                count: 1,
                first: vec![format!("{path}:3: bad")],
            },
            bytes_read: 99 * records,
        };
        let mut meta = Meta::default();
        for record in 0..records {
            meta.ordinals.push(record + 1);
            meta.sources.push(0);
            meta.lines.push(2 * record + 1);
        }
        (corpus, meta)
    }

    #[test]
    fn sketch_checkpoint_round_trip() {
        let (reference, reference_meta) = side("ref.csv", Format::Csv, Some(&["id", "text"]), 2);
        let (corpus, mut corpus_meta) = side("in.jsonl", Format::Jsonl, None, 3);
        corpus_meta.ids = IdArena::from_iter([
            serde_json::json!("a"),
            serde_json::json!(7),
            serde_json::json!("c"),
        ]);
        let read = SidesRead {
            reference,
            corpus,
            reference_meta,
            corpus_meta,
        };
        let bytes = encode_sketch_checkpoint(b"engine state", &read);
        let (state, back) = split_sketch_checkpoint(&bytes).unwrap();
        assert_eq!(state, b"engine state");
        assert_eq!(back.summary(), read.summary());
        for (side, original) in [
            (&back.reference, &read.reference),
            (&back.corpus, &read.corpus),
        ] {
            assert_eq!(side.sources[0].path, original.sources[0].path);
            assert_eq!(side.sources[0].format, original.sources[0].format);
            assert_eq!(side.sources[0].csv_headers, original.sources[0].csv_headers);
            assert_eq!(side.skipped.first, original.skipped.first);
            assert_eq!(side.bytes_read, original.bytes_read);
        }
        assert_eq!(back.corpus_meta.id(1), serde_json::json!(7));
        assert_eq!(back.reference_meta.id(1), serde_json::json!(2));
        let lines: Vec<u64> = back.corpus_meta.lines.iter().collect();
        assert_eq!(lines, [1, 3, 5]);
        assert!(split_sketch_checkpoint(&bytes[..bytes.len() - 1]).is_err());
    }
}
