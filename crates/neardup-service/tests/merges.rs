//! Index level merges run on a thread of their own, from snapshots of the frozen levels:
//! a collection loaded through many merges, with deletes made while they run, answers every
//! check as the documents say, before and after a restart. Driven through [`Service`]
//! directly.

use std::sync::Arc;

use neardup_service::{AnyCollection, NewDocument, Service, Settings};
use serde_json::json;

/// A text of `chars` CJK ideographs drawn from `seed`: two seeds' texts share almost nothing.
fn text(seed: u64, chars: usize) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..chars)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from_u32(0x4e00 + (state % 20_000) as u32).unwrap_or('中')
        })
        .collect()
}

/// The same text with one more character: one more shingle, a fingerprint a few bits away
/// (well within SimHash's radius, where a changed character in a short text can pass it).
fn edited(seed: u64, chars: usize) -> String {
    text(seed, chars) + "一"
}

/// Enough for three merges: levels freeze every 8,192 documents.
const DOCUMENTS: u64 = 30_000;
const CHARS: usize = 80;
const BATCH: u64 = 500;

/// Loads `DOCUMENTS` texts, deleting every 97th a batch after it was stored.
fn load(collection: &Arc<dyn AnyCollection>) {
    for first in (0..DOCUMENTS).step_by(BATCH as usize) {
        let documents = (first..first + BATCH)
            .map(|i| NewDocument {
                id: format!("d{i}"),
                text: text(i, CHARS),
                time_ms: None,
            })
            .collect();
        let answers = collection
            .submit(documents)
            .unwrap()
            .blocking_recv()
            .unwrap();
        for (i, answer) in (first..).zip(answers) {
            assert!(answer.unwrap().stored, "d{i} was not stored");
        }
        for i in (first.saturating_sub(BATCH)..first).filter(|i| i % 97 == 0) {
            let deleted = collection.delete(&format!("d{i}")).unwrap();
            assert!(deleted.blocking_recv().unwrap().unwrap(), "d{i}");
        }
    }
}

/// Every 25th document: found by its text and by an edited copy unless deleted.
fn check_all(collection: &Arc<dyn AnyCollection>, method: &str) {
    let sample: Vec<u64> = (0..DOCUMENTS).step_by(25).collect();
    let texts: Vec<String> = sample.iter().map(|&i| text(i, CHARS)).collect();
    let copies: Vec<String> = sample.iter().map(|&i| edited(i, CHARS)).collect();
    let found = collection.check(&texts, 3).unwrap();
    let near = collection.check(&copies, 3).unwrap();
    for ((&i, found), near) in sample.iter().zip(found).zip(near) {
        let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
        let near: Vec<&str> = near.iter().map(|f| f.id.as_str()).collect();
        let deleted = i % 97 == 0 && i < DOCUMENTS - BATCH;
        let own = format!("d{i}");
        if deleted {
            assert!(
                ids.is_empty() && near.is_empty(),
                "{method}: deleted d{i} found"
            );
        } else {
            assert_eq!(ids, [own.as_str()], "{method}: d{i}");
            assert_eq!(near, [own.as_str()], "{method}: the edited copy of d{i}");
        }
    }
}

#[test]
fn merges_off_the_request_path_lose_nothing() {
    for (method, body) in [
        ("simhash", json!({"method": "simhash"})),
        ("default minhash", json!({})),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let service = Service::open(dir.path()).unwrap();
        assert!(service
            .create("c", Settings::from_json(&body).unwrap())
            .unwrap());
        let collection = service.collection("c").unwrap();
        load(&collection);
        let merges = collection.stats().merges;
        assert!(merges >= 2, "{method}: {merges} merges");
        check_all(&collection, method);
        drop(collection);
        service.close();
        drop(service);
        let service = Service::open(dir.path()).unwrap();
        let collection = service.collection("c").unwrap();
        let deleted = (0..DOCUMENTS - BATCH).filter(|i| i % 97 == 0).count() as u64;
        assert_eq!(collection.len(), DOCUMENTS - deleted, "{method}");
        check_all(&collection, method);
    }
}
