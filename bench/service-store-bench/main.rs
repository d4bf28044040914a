//! Scratch benchmark: redb vs fjall for the dedup service's durable group-commit workload.
//! Usage: storebench <redb|fjall> [n_docs=1000000] [n_g1=20000] [n_reads=200000]
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::xxh3_64_with_seed;

// ---------------- workload data ----------------
fn doc_id(seq: u64) -> Vec<u8> {
    // 28-byte string id, random order
    format!("d/{:016x}{:010}", xxh3_64_with_seed(&seq.to_le_bytes(), 1), seq).into_bytes()
}
fn fingerprint(seq: u64) -> u64 {
    xxh3_64_with_seed(&seq.to_le_bytes(), 2)
}
/// value: fp u64 | identity u128 | len u32 | ts u64 | extra 16B = 52 bytes
fn doc_value(seq: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(52);
    v.extend_from_slice(&fingerprint(seq).to_le_bytes());
    v.extend_from_slice(&xxh3_64_with_seed(&seq.to_le_bytes(), 3).to_le_bytes());
    v.extend_from_slice(&xxh3_64_with_seed(&seq.to_le_bytes(), 4).to_le_bytes());
    v.extend_from_slice(&((seq as u32) % 5000 + 100).to_le_bytes());
    v.extend_from_slice(&(1_700_000_000_000u64 + seq).to_le_bytes());
    v.extend_from_slice(&[0xAB; 16]);
    v
}
/// 4-byte block prefix: band index (1 byte) + 24 bits of the fingerprint band
fn block_prefix(fp: u64, band: u8) -> [u8; 4] {
    let b = ((fp >> (band as u64 * 13)) & 0xFF_FFFF) as u32; // 4 bands of 24 bits (overlapping), shift <= 39
    [band, (b >> 16) as u8, (b >> 8) as u8, b as u8]
}
/// 12-byte block key = prefix(4) + doc seq u64 BE (makes it unique); value = 8-byte doc seq (internal handle)
fn block_entries(seq: u64) -> [([u8; 12], [u8; 8]); 4] {
    let fp = fingerprint(seq);
    std::array::from_fn(|band| {
        let mut k = [0u8; 12];
        k[..4].copy_from_slice(&block_prefix(fp, band as u8));
        k[4..].copy_from_slice(&seq.to_be_bytes());
        (k, seq.to_le_bytes())
    })
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
}

// ---------------- store abstraction ----------------
trait Store: Send + Sync {
    /// insert seqs [start, start+n) in one durable commit
    fn write_group(&self, start: u64, n: u64);
    fn get(&self, id: &[u8]) -> bool;
    fn prefix_count(&self, prefix: &[u8]) -> usize;
    fn count(&self) -> u64;
}

mod rdb {
    use super::*;
    use redb::{Database, Durability, ReadableDatabase, ReadableTableMetadata, TableDefinition};
    const DOCS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("docs");
    const BLOCKS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("blocks");
    pub struct R(pub Database);
    pub fn open(dir: &Path) -> R {
        std::fs::create_dir_all(dir).unwrap();
        let db = Database::create(dir.join("db.redb")).unwrap();
        let w = db.begin_write().unwrap();
        {
            w.open_table(DOCS).unwrap();
            w.open_table(BLOCKS).unwrap();
        }
        w.commit().unwrap();
        R(db)
    }
    impl Store for R {
        fn write_group(&self, start: u64, n: u64) {
            let mut w = self.0.begin_write().unwrap();
            w.set_durability(Durability::Immediate).unwrap();
            {
                let mut d = w.open_table(DOCS).unwrap();
                let mut b = w.open_table(BLOCKS).unwrap();
                for s in start..start + n {
                    d.insert(doc_id(s).as_slice(), doc_value(s).as_slice()).unwrap();
                    for (k, v) in block_entries(s) {
                        b.insert(k.as_slice(), v.as_slice()).unwrap();
                    }
                }
            }
            w.commit().unwrap();
        }
        fn get(&self, id: &[u8]) -> bool {
            let r = self.0.begin_read().unwrap();
            let t = r.open_table(DOCS).unwrap();
            let g = t.get(id).unwrap();
            g.map(|v| v.value().len() == 52).unwrap_or(false)
        }
        fn prefix_count(&self, prefix: &[u8]) -> usize {
            let r = self.0.begin_read().unwrap();
            let t = r.open_table(BLOCKS).unwrap();
            let mut end = prefix.to_vec();
            // prefixes here never are all-0xFF in the last byte chain for our generator except rarely; handle carry
            let mut i = end.len();
            while i > 0 {
                i -= 1;
                if end[i] == 0xFF { end[i] = 0; } else { end[i] += 1; break; }
            }
            let mut c = 0;
            for e in t.range::<&[u8]>(prefix..end.as_slice()).unwrap() {
                let (_k, v) = e.unwrap();
                std::hint::black_box(v.value());
                c += 1;
            }
            c
        }
        fn count(&self) -> u64 {
            let r = self.0.begin_read().unwrap();
            r.open_table(DOCS).unwrap().len().unwrap()
        }
    }
}

mod fj {
    use super::*;
    use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
    pub struct F {
        pub db: Database,
        pub docs: Keyspace,
        pub blocks: Keyspace,
    }
    pub fn open(dir: &Path) -> F {
        let db = Database::builder(dir).open().unwrap();
        let docs = db.keyspace("docs", KeyspaceCreateOptions::default).unwrap();
        let blocks = db.keyspace("blocks", KeyspaceCreateOptions::default).unwrap();
        F { db, docs, blocks }
    }
    impl Store for F {
        fn write_group(&self, start: u64, n: u64) {
            let mut b = self.db.batch().durability(Some(PersistMode::SyncAll));
            for s in start..start + n {
                b.insert(&self.docs, doc_id(s), doc_value(s));
                for (k, v) in block_entries(s) {
                    b.insert(&self.blocks, k.to_vec(), v.to_vec());
                }
            }
            b.commit().unwrap();
        }
        fn get(&self, id: &[u8]) -> bool {
            self.docs.get(id).unwrap().map(|v| v.len() == 52).unwrap_or(false)
        }
        fn prefix_count(&self, prefix: &[u8]) -> usize {
            let mut c = 0;
            for kv in self.blocks.prefix(prefix) {
                let v = kv.value().unwrap();
                std::hint::black_box(&v);
                c += 1;
            }
            c
        }
        fn count(&self) -> u64 {
            self.docs.len().unwrap() as u64
        }
    }
}

// ---------------- helpers ----------------
fn pct(v: &mut [u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}
fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}
fn du(p: &Path) -> u64 {
    let o = std::process::Command::new("du").arg("-sb").arg(p).output().unwrap();
    String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap().parse().unwrap()
}
fn du_alloc(p: &Path) -> u64 {
    let o = std::process::Command::new("du").arg("-sk").arg(p).output().unwrap();
    let k: u64 = String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap().parse().unwrap();
    k * 1024
}
fn vm_hwm() -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("")
        .to_string()
}
fn open(kind: &str, dir: &Path) -> Arc<dyn Store> {
    match kind {
        "redb" => Arc::new(rdb::open(dir)),
        "fjall" => Arc::new(fj::open(dir)),
        _ => panic!("kind"),
    }
}

/// load n docs from seq 0 in groups of g; returns docs/s, p50, p99 commit ns
fn load(s: &dyn Store, n: u64, g: u64) -> (f64, u64, u64) {
    let mut lat = Vec::with_capacity((n / g + 1) as usize);
    let t0 = Instant::now();
    let mut seq = 0;
    while seq < n {
        let k = g.min(n - seq);
        let t = Instant::now();
        s.write_group(seq, k);
        lat.push(t.elapsed().as_nanos() as u64);
        seq += k;
    }
    let el = t0.elapsed().as_secs_f64();
    let p50 = pct(&mut lat, 0.5);
    let p99 = pct(&mut lat, 0.99);
    let max = *lat.last().unwrap();
    println!("  load G={g}: {n} docs in {el:.2}s = {:.0} docs/s, commit p50 {} us p99 {} us max {} us", n as f64 / el, us(p50), us(p99), us(max));
    (n as f64 / el, p50, p99)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let kind = a.get(1).expect("redb|fjall").clone();
    let n: u64 = a.get(2).map(|x| x.parse().unwrap()).unwrap_or(1_000_000);
    let n1: u64 = a.get(3).map(|x| x.parse().unwrap()).unwrap_or(20_000);
    let nr: u64 = a.get(4).map(|x| x.parse().unwrap()).unwrap_or(200_000);
    let phases: String = a.get(5).cloned().unwrap_or("big,g64,g1".into());
    let min_secs: f64 = a.get(6).map(|x| x.parse().unwrap()).unwrap_or(10.0);
    // optional writer throttle for the concurrent phase (docs/s, 0 = as fast as possible)
    let wrate: f64 = a.get(7).map(|x| x.parse().unwrap()).unwrap_or(0.0);
    let base = PathBuf::from("/work/scratch-store/data");
    std::fs::create_dir_all(&base).unwrap();
    println!("== {kind}  n={n} n_g1={n1} reads={nr} phases={phases}");

    if phases.contains("big") {
        let dir = base.join(format!("{kind}-big"));
        let _ = std::fs::remove_dir_all(&dir);
        let s = open(&kind, &dir);
        // 1. load 1M in groups of 1024
        load(&*s, n, 1024);
        println!("  disk after {n} docs (G=1024): du -sb {} bytes, du -sk {} bytes", du(&dir), du_alloc(&dir));

        // 2. concurrent reads while writer inserts G=64 groups
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let wlat = {
            let s = s.clone();
            let stop = stop.clone();
            let written = written.clone();
            std::thread::spawn(move || {
                let mut seq = n;
                let mut lat = Vec::new();
                let t0 = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    s.write_group(seq, 64);
                    lat.push(t.elapsed().as_nanos() as u64);
                    seq += 64;
                    written.store(seq - n, Ordering::Relaxed);
                    if wrate > 0.0 {
                        let due = Duration::from_secs_f64((seq - n) as f64 / wrate);
                        let el = t0.elapsed();
                        if due > el { std::thread::sleep(due - el); }
                    }
                }
                (lat, t0.elapsed())
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        let t0 = Instant::now();
        let readers: Vec<_> = (0..2u64)
            .map(|r| {
                let s = s.clone();
                std::thread::spawn(move || {
                    let t0 = Instant::now();
                    let mut rng = Rng(0xC0FFEE + r);
                    let half = nr / 2; // per reader: nr/2 gets and nr/2 scans (total nr each)
                    let mut gl = Vec::with_capacity(half as usize);
                    let mut sl = Vec::with_capacity(half as usize);
                    let mut hits = 0u64;
                    let mut found = 0u64;
                    let mut i = 0u64;
                    // at least nr/2 gets + nr/2 scans per reader; keep going (whole passes) until >= min_secs so the writer sample is long enough
                    while i < 2 * half || t0.elapsed().as_secs_f64() < min_secs {
                        i += 1;
                        let seq = rng.next() % n;
                        if i % 2 == 0 {
                            let id = doc_id(seq);
                            let t = Instant::now();
                            if s.get(&id) { found += 1; }
                            gl.push(t.elapsed().as_nanos() as u64);
                        } else {
                            let band = (rng.next() % 4) as u8;
                            // 3 of 4 scans hit an existing doc's block, 1 of 4 a random block (mostly 0 hits)
                            let p = if i % 8 == 7 { block_prefix(rng.next(), band) } else { block_prefix(fingerprint(seq), band) };
                            let t = Instant::now();
                            hits += s.prefix_count(&p) as u64;
                            sl.push(t.elapsed().as_nanos() as u64);
                        }
                    }
                    let _ = &mut i;
                    (gl, sl, hits, found)
                })
            })
            .collect();
        let mut gl = Vec::new();
        let mut sl = Vec::new();
        let (mut hits, mut found) = (0, 0);
        for r in readers {
            let (g, sc, h, f) = r.join().unwrap();
            gl.extend(g);
            sl.extend(sc);
            hits += h;
            found += f;
        }
        let rel = t0.elapsed().as_secs_f64();
        let wdocs_during = written.load(Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        let (mut wl, wel) = wlat.join().unwrap();
        let total_w = written.load(Ordering::Relaxed);
        println!(
            "  concurrent: {} gets + {} scans in {rel:.2}s = {:.0} reads/s total; found {found}/{}, scan hits avg {:.2}",
            gl.len(), sl.len(), (gl.len() + sl.len()) as f64 / rel, gl.len(), hits as f64 / sl.len() as f64
        );
        let (gp50, gp99, gmax) = (pct(&mut gl, 0.5), pct(&mut gl, 0.99), *gl.last().unwrap());
        let (sp50, sp99, smax) = (pct(&mut sl, 0.5), pct(&mut sl, 0.99), *sl.last().unwrap());
        println!("  get  p50 {} us p99 {} us max {} us", us(gp50), us(gp99), us(gmax));
        println!("  scan p50 {} us p99 {} us max {} us", us(sp50), us(sp99), us(smax));
        println!(
            "  writer during reads: {wdocs_during} docs in {rel:.2}s ~ {:.0} docs/s (whole writer run {total_w} docs / {:.2}s = {:.0} docs/s; commit p50 {} us p99 {} us)",
            wdocs_during as f64 / rel, wel.as_secs_f64(), total_w as f64 / wel.as_secs_f64(), us(pct(&mut wl, 0.5)), us(pct(&mut wl, 0.99))
        );
        let expected = n + total_w;
        let c = s.count();
        println!("  count before close {c} (expected {expected})");
        drop(s);
        // 4. reopen
        let t = Instant::now();
        let s = open(&kind, &dir);
        let ot = t.elapsed();
        let t = Instant::now();
        let c = s.count();
        let ct = t.elapsed();
        let ok = s.get(&doc_id(n - 1)) && s.get(&doc_id(expected - 1));
        println!("  reopen: open {:.1} ms, count {c} (expected {expected}, {}) in {:.1} ms, spot get ok={ok}", ot.as_secs_f64() * 1e3, if c == expected { "OK" } else { "MISMATCH" }, ct.as_secs_f64() * 1e3);
        println!("  disk at end ({expected} docs): du -sb {} bytes, du -sk {} bytes", du(&dir), du_alloc(&dir));
        drop(s);
        println!("  peak RSS after big phase: {}", vm_hwm());
        let _ = std::fs::remove_dir_all(&dir);
    }
    if phases.contains("g64") {
        let dir = base.join(format!("{kind}-g64"));
        let _ = std::fs::remove_dir_all(&dir);
        let s = open(&kind, &dir);
        load(&*s, n, 64);
        println!("  disk after {n} docs (G=64): du -sb {} bytes, du -sk {} bytes", du(&dir), du_alloc(&dir));
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }
    if phases.contains("g1") {
        let dir = base.join(format!("{kind}-g1"));
        let _ = std::fs::remove_dir_all(&dir);
        let s = open(&kind, &dir);
        load(&*s, n1, 1);
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!("  final {}", vm_hwm());
}
