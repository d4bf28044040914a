//! What a collection keeps in memory per stored document, packed: 24 bytes of metadata and
//! the id's bytes in one buffer per partition ([`Docs`]), and one 8-byte slot per id in the
//! id map ([`Ids`], which keeps only sequence numbers and compares ids through the
//! partitions). A `Box<str>` id kept twice, in the document and as the map's key, cost about
//! 60 bytes more per document.

use hashbrown::HashTable;

/// The most id bytes a partition holds: its id offsets are `u32`. The writer starts a new
/// partition before it (see `writer::maybe_roll`); a segment written by an older version
/// beyond it is refused at opening, naming the file.
pub const MAX_PARTITION_ID_BYTES: usize = u32::MAX as usize;

/// The live flag, in the top bit of a record's length (a body is at most 2^31 bytes).
const LIVE: u32 = 1 << 31;

/// One document's metadata.
#[derive(Debug, Clone, Copy)]
struct Meta {
    /// The retention time.
    time_ms: i64,
    /// The record's offset in the segment.
    offset: u64,
    /// The record's length, with [`LIVE`] set while the document is live.
    len_live: u32,
    /// The end of the id in [`Docs::id_bytes`].
    id_end: u32,
}

/// A document as read from [`Docs`].
#[derive(Debug, Clone, Copy)]
pub struct Doc<'a> {
    /// The caller's id.
    pub id: &'a str,
    /// The retention time (milliseconds since the epoch).
    pub time_ms: i64,
    /// The record's offset in the segment.
    pub offset: u64,
    /// The record's length.
    pub len: u32,
    /// Not deleted (expiry is told by the time).
    pub live: bool,
}

/// The documents of one partition, in sequence order.
#[derive(Debug, Default)]
pub struct Docs {
    meta: Vec<Meta>,
    id_bytes: String,
}

impl Docs {
    /// Appends a live document; `false` (nothing appended) when the partition's id bytes
    /// would pass [`MAX_PARTITION_ID_BYTES`].
    pub fn push(&mut self, id: &str, time_ms: i64, offset: u64, len: u32) -> bool {
        if self.id_bytes.len() + id.len() > MAX_PARTITION_ID_BYTES || len >= LIVE {
            return false;
        }
        self.id_bytes.push_str(id);
        self.meta.push(Meta {
            time_ms,
            offset,
            len_live: len | LIVE,
            id_end: self.id_bytes.len() as u32,
        });
        true
    }

    /// The document at `at`.
    pub fn get(&self, at: usize) -> Option<Doc<'_>> {
        let meta = self.meta.get(at)?;
        let start = match at {
            0 => 0,
            _ => self.meta[at - 1].id_end as usize,
        };
        Some(Doc {
            id: self
                .id_bytes
                .get(start..meta.id_end as usize)
                .unwrap_or_default(),
            time_ms: meta.time_ms,
            offset: meta.offset,
            len: meta.len_live & !LIVE,
            live: meta.len_live & LIVE != 0,
        })
    }

    /// Marks the document at `at` deleted; `true` when it was live.
    pub fn kill(&mut self, at: usize) -> bool {
        match self.meta.get_mut(at) {
            Some(meta) if meta.len_live & LIVE != 0 => {
                meta.len_live &= !LIVE;
                true
            }
            _ => false,
        }
    }

    /// The documents in order.
    pub fn iter(&self) -> impl Iterator<Item = Doc<'_>> {
        (0..self.meta.len()).filter_map(|at| self.get(at))
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.meta.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }

    /// The id bytes held.
    pub fn id_len(&self) -> usize {
        self.id_bytes.len()
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.meta.capacity() * std::mem::size_of::<Meta>() + self.id_bytes.capacity()
    }

    /// Appends the documents to `out`, every one live (a restart applies the tombstones
    /// again): their count, then per document its time, offset, length and id end (24
    /// bytes), then the id bytes' length and the id bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(16 + self.meta.len() * 24 + self.id_bytes.len());
        out.extend_from_slice(&(self.meta.len() as u64).to_le_bytes());
        for meta in &self.meta {
            out.extend_from_slice(&meta.time_ms.to_le_bytes());
            out.extend_from_slice(&meta.offset.to_le_bytes());
            out.extend_from_slice(&(meta.len_live & !LIVE).to_le_bytes());
            out.extend_from_slice(&meta.id_end.to_le_bytes());
        }
        out.extend_from_slice(&(self.id_bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(self.id_bytes.as_bytes());
    }

    /// The documents [`Docs::encode`] wrote at the start of `bytes`, every one live, and
    /// the bytes after them; checked so that every id is a whole UTF-8 string.
    ///
    /// # Errors
    /// What is wrong, in words.
    pub fn decode(bytes: &[u8]) -> Result<(Docs, &[u8]), String> {
        let word = |b: &[u8], at: usize| {
            b.get(at..at + 8)
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
        };
        let count = word(bytes, 0).ok_or("no document count")? as usize;
        let meta_end = count
            .checked_mul(24)
            .and_then(|n| n.checked_add(8))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| format!("{count} documents in {} bytes", bytes.len()))?;
        let id_len = word(bytes, meta_end).ok_or("no id length")? as usize;
        let ids_end = (meta_end + 8)
            .checked_add(id_len)
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| format!("{id_len} id bytes past the end"))?;
        let id_bytes = std::str::from_utf8(&bytes[meta_end + 8..ids_end])
            .map_err(|_| "the ids are not UTF-8".to_owned())?
            .to_owned();
        let mut meta = Vec::with_capacity(count);
        let mut start = 0usize;
        for chunk in bytes[8..meta_end].chunks_exact(24) {
            let m = Meta {
                time_ms: i64::from_le_bytes(chunk[..8].try_into().unwrap_or([0; 8])),
                offset: u64::from_le_bytes(chunk[8..16].try_into().unwrap_or([0; 8])),
                len_live: u32::from_le_bytes(chunk[16..20].try_into().unwrap_or([0; 4])) | LIVE,
                id_end: u32::from_le_bytes(chunk[20..24].try_into().unwrap_or([0; 4])),
            };
            let end = m.id_end as usize;
            if end < start || end > id_bytes.len() || !id_bytes.is_char_boundary(end) {
                return Err(format!("document {}: its id ends at {end}", meta.len()));
            }
            start = end;
            meta.push(m);
        }
        Ok((Docs { meta, id_bytes }, &bytes[ids_end..]))
    }
}

/// The id map: the sequence number of each stored id, found by the id's hash and compared
/// with the id its document holds. In two shards by the hash's top bit, so that a restart
/// builds them on two threads.
#[derive(Debug, Default)]
pub struct Ids {
    shards: [HashTable<u64>; 2],
}

/// The hash of an id (in memory only).
fn hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x1d5).hash_one(id)
}

/// The shard of a hash.
fn shard(h: u64) -> usize {
    (h >> 63) as usize
}

impl Ids {
    /// The id map of the documents `docs` gives (`(id, seq, live)`, in sequence order; called
    /// once per shard), each shard built on a thread of its own: every id maps to its latest
    /// document, and to none when that one is deleted (as its tombstone did when written);
    /// each shard sized once for `count` documents. `id_of` gives a stored sequence number's
    /// id.
    pub fn build<'a, I>(
        count: usize,
        docs: impl Fn() -> I + Sync,
        id_of: impl Fn(u64) -> Option<&'a str> + Sync,
    ) -> Ids
    where
        I: Iterator<Item = (&'a str, u64, bool)>,
    {
        let mut ids = Ids::default();
        std::thread::scope(|scope| {
            for (at, table) in ids.shards.iter_mut().enumerate() {
                let (docs, id_of) = (&docs, &id_of);
                scope.spawn(move || {
                    let rehash = |&other: &u64| id_of(other).map_or(0, hash);
                    table.reserve(count / 2 + count / 16, rehash);
                    let mut dead = Vec::new();
                    for (id, seq, live) in docs() {
                        let h = hash(id);
                        if shard(h) != at {
                            continue;
                        }
                        match table.find_mut(h, |&other| id_of(other) == Some(id)) {
                            Some(slot) => *slot = seq,
                            None => {
                                table.insert_unique(h, seq, rehash);
                            }
                        }
                        if !live {
                            dead.push((h, seq));
                        }
                    }
                    for (h, seq) in dead {
                        if let Ok(entry) = table.find_entry(h, |&other| other == seq) {
                            entry.remove();
                        }
                    }
                });
            }
        });
        ids
    }

    /// The sequence number of `id`; `id_of` gives a stored sequence number's id.
    pub fn get<'a>(&self, id: &str, id_of: impl Fn(u64) -> Option<&'a str>) -> Option<u64> {
        let h = hash(id);
        self.shards[shard(h)]
            .find(h, |&seq| id_of(seq) == Some(id))
            .copied()
    }

    /// Maps `id` to `seq` (replacing what it mapped to); `id_of` must already give `seq`'s
    /// id. `true` when the id was new.
    pub fn insert<'a>(
        &mut self,
        id: &str,
        seq: u64,
        id_of: impl Fn(u64) -> Option<&'a str>,
    ) -> bool {
        let h = hash(id);
        let table = &mut self.shards[shard(h)];
        if let Some(slot) = table.find_mut(h, |&other| id_of(other) == Some(id)) {
            *slot = seq;
            return false;
        }
        table.insert_unique(h, seq, |&other| id_of(other).map_or(0, hash));
        true
    }

    /// Unmaps `id` if it maps to `seq`.
    pub fn remove_if(&mut self, id: &str, seq: u64) {
        let h = hash(id);
        if let Ok(entry) = self.shards[shard(h)].find_entry(h, |&other| other == seq) {
            entry.remove();
        }
    }

    /// The number of ids.
    pub fn len(&self) -> usize {
        self.shards.iter().map(HashTable::len).sum()
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        (self.shards.iter()).map(|t| t.capacity() * 9 * 8 / 7).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_read_back_as_pushed_and_die_once() {
        let mut docs = Docs::default();
        assert!(docs.push("a1", 5, 16, 100));
        assert!(docs.push("", 6, 116, 7));
        assert!(docs.push("文档-3", 7, 123, (1 << 31) - 1));
        assert!(
            !docs.push("x", 8, 0, 1 << 31),
            "a length past 2^31 is refused"
        );
        let got: Vec<(String, i64, u64, u32, bool)> = docs
            .iter()
            .map(|d| (d.id.to_owned(), d.time_ms, d.offset, d.len, d.live))
            .collect();
        assert_eq!(
            got,
            [
                ("a1".into(), 5, 16, 100, true),
                (String::new(), 6, 116, 7, true),
                ("文档-3".into(), 7, 123, (1 << 31) - 1, true),
            ]
        );
        assert!(docs.kill(2));
        assert!(!docs.kill(2));
        assert!(!docs.kill(9));
        assert!(!docs.get(2).unwrap().live);
        assert_eq!(docs.get(2).unwrap().len, (1 << 31) - 1);
        assert!(docs.get(3).is_none());
    }

    #[test]
    fn ids_map_to_their_latest_sequence_number() {
        let names: Vec<String> = (0..5000).map(|i| format!("id-{i}")).collect();
        let mut docs = Docs::default();
        let mut ids = Ids::default();
        for (seq, name) in names.iter().enumerate() {
            docs.push(name, 0, 0, 1);
            let id_of = |s: u64| docs.get(s as usize).map(|d| d.id);
            assert!(ids.insert(name, seq as u64, id_of));
        }
        // The same id again, as a later document.
        docs.push("id-7", 0, 0, 1);
        let id_of = |s: u64| docs.get(s as usize).map(|d| d.id);
        assert!(!ids.insert("id-7", 5000, id_of));
        assert_eq!(ids.len(), 5000);
        for (seq, name) in names.iter().enumerate() {
            let want = if name == "id-7" { 5000 } else { seq as u64 };
            assert_eq!(ids.get(name, id_of), Some(want), "{name}");
        }
        assert_eq!(ids.get("id-5000", id_of), None);
        ids.remove_if("id-7", 7);
        assert_eq!(
            ids.get("id-7", id_of),
            Some(5000),
            "only the mapped seq is removed"
        );
        ids.remove_if("id-7", 5000);
        assert_eq!(ids.get("id-7", id_of), None);
        assert_eq!(ids.len(), 4999);
    }
}

#[cfg(test)]
mod build_tests {
    use super::*;

    /// Built on two threads, the map is the one inserts and tombstones in order give: ids
    /// repeated by later documents, deleted latest documents, deleted earlier ones.
    #[test]
    fn a_built_map_equals_the_map_of_inserts_and_tombstones_in_order() {
        let mut docs = Docs::default();
        let mut ids = Ids::default();
        let mut live = Vec::new();
        for seq in 0..20_000u64 {
            let name = format!("id-{}", seq % 7000);
            docs.push(&name, 0, 0, 1);
            let id_of = |s: u64| docs.get(s as usize).map(|d| d.id);
            ids.insert(&name, seq, id_of);
            live.push(seq % 13 != 0);
        }
        for (seq, _) in live.iter().enumerate().filter(|(_, &l)| !l) {
            docs.kill(seq);
            let id = docs.get(seq).unwrap().id.to_owned();
            ids.remove_if(&id, seq as u64);
        }
        let id_of = |s: u64| docs.get(s as usize).map(|d| d.id);
        let all = || (docs.iter().enumerate()).map(|(seq, d)| (d.id, seq as u64, d.live));
        let built = Ids::build(docs.len(), all, id_of);
        assert_eq!(built.len(), ids.len());
        for i in 0..7001 {
            let name = format!("id-{i}");
            assert_eq!(built.get(&name, id_of), ids.get(&name, id_of), "{name}");
        }
        assert!(built.len() < 7000 && built.len() > 6000, "{}", built.len());
    }
}
