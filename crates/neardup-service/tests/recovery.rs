//! What the service keeps and refuses across restarts: collection names, refused creations,
//! corrupt and missing segments, salvage, limits, expired ids, empty texts, counters, and
//! level merges made while documents come and go, and the level files a restart loads
//! (`recovery/level_files.rs`).
//! Driven through [`Service`] directly (the HTTP layer is tested in `service.rs`).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use neardup_service::clock::ManualClock;
use neardup_service::{salvage, AnyCollection, NewDocument, Service, ServiceOptions, Settings};
use serde_json::{json, Value};

#[path = "recovery/level_files.rs"]
mod level_files;

fn settings(body: Value) -> Settings {
    Settings::from_json(&body).unwrap()
}

/// A text of `chars` characters drawn from `seed` among the 20,000 common CJK ideographs:
/// two seeds' texts share almost nothing.
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

/// Inserts one document; `Ok(stored)` or the error's status.
fn insert(collection: &Arc<dyn AnyCollection>, id: &str, text: &str) -> Result<bool, u16> {
    let answer = collection
        .submit(vec![NewDocument {
            id: id.into(),
            text: text.into(),
            time_ms: None,
        }])
        .unwrap()
        .blocking_recv()
        .unwrap();
    match answer.into_iter().next().unwrap() {
        Ok(inserted) => Ok(inserted.stored),
        Err(error) => Err(error.status),
    }
}

fn fill(service: &Service, name: &str, n: u64) {
    let collection = service.collection(name).unwrap();
    for i in 0..n {
        assert_eq!(
            insert(&collection, &format!("d{i}"), &text(i, 60)),
            Ok(true)
        );
    }
}

fn reopen(service: Arc<Service>, dir: &Path) -> Arc<Service> {
    service.close();
    drop(service);
    Service::open(dir).unwrap()
}

fn segments(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("collections").join(name).join("segments"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn collections_with_reserved_looking_names_are_created_filled_and_kept_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    // `x.creating` used to be removed as an interrupted creation at every start, and when
    // collection `x` was created.
    let names = [
        "x.creating",
        "x",
        "staging",
        "trash",
        "collections",
        "segments",
        "settings.json",
        "counters.json",
        "neardup-service.lock",
        "a.tmp",
        "x.creating.creating",
    ];
    for name in names {
        assert!(service.create(name, settings(json!({}))).unwrap(), "{name}");
        fill(&service, name, 3);
    }
    let service = reopen(service, dir.path());
    let service = reopen(service, dir.path());
    assert!(
        service.unavailable().is_empty(),
        "{:?}",
        service.unavailable()
    );
    for name in names {
        assert_eq!(service.collection(name).unwrap().len(), 3, "{name}");
    }
    // Dropping and re-creating one leaves the others alone.
    assert!(service.drop_collection("x").unwrap());
    assert!(service.create("x", settings(json!({}))).unwrap());
    let service = reopen(service, dir.path());
    assert_eq!(service.collection("x.creating").unwrap().len(), 3);
    assert_eq!(service.collection("x").unwrap().len(), 0);
}

#[test]
fn a_refused_put_writes_nothing_and_the_service_still_starts() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    for method in ["ngram", "segments", "sentences"] {
        // The settings are refused when read, before the service sees them...
        let body = json!({ "method": method });
        let error = Settings::from_json(&body).unwrap_err();
        assert_eq!(error.status, 422, "{method}: {error}");
        // ... and by `create` itself, for settings built by hand.
        let raw: Settings = serde_json::from_value(json!({
            "method": method, "params": {}, "retention": null, "retention_by": "insert",
            "keep_text": false, "partition_documents": 1_000_000u64,
        }))
        .unwrap();
        for _ in 0..2 {
            let error = service.create("evil", raw.clone()).unwrap_err();
            assert_eq!(error.status, 422, "{method}: {error}");
        }
        let left: Vec<_> = fs::read_dir(dir.path().join("collections"))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{method}: {left:?}");
    }
    let service = reopen(service, dir.path());
    assert!(service.names().is_empty());
    assert!(service.create("evil", settings(json!({}))).unwrap());
}

#[test]
fn a_collection_that_cannot_open_is_named_and_the_others_serve() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    for name in ["a", "b"] {
        service.create(name, settings(json!({}))).unwrap();
        fill(&service, name, 2);
    }
    let service_dir = dir.path().join("collections/b/settings.json");
    service.close();
    drop(service);
    fs::write(&service_dir, b"{not json").unwrap();
    let service = Service::open(dir.path()).unwrap();
    assert_eq!(service.collection("a").unwrap().len(), 2);
    let unavailable = service.unavailable();
    assert_eq!(unavailable.len(), 1);
    assert_eq!(unavailable[0].0, "b");
    assert!(
        unavailable[0].1.contains("settings.json"),
        "{unavailable:?}"
    );
    let error = service.collection("b").err().unwrap();
    assert_eq!(error.status, 503);
    assert!(error.message.contains("settings.json"), "{error}");
    // It cannot be re-created over, but it can be dropped, then created anew.
    assert_eq!(
        service.create("b", settings(json!({}))).unwrap_err().status,
        409
    );
    assert!(service.drop_collection("b").unwrap());
    assert!(service.unavailable().is_empty());
    assert!(service.create("b", settings(json!({}))).unwrap());
}

#[test]
fn an_unavailable_collection_names_its_file_but_not_the_server_data_path() {
    // Issue 44, item 9: the 503 showed the server's data path to any reader.
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    for name in ["s", "c"] {
        service.create(name, settings(json!({}))).unwrap();
        fill(&service, name, 3);
    }
    service.close();
    drop(service);
    fs::write(dir.path().join("collections/s/settings.json"), b"{not json").unwrap();
    let segment = segments(dir.path(), "c").remove(0);
    let mut bytes = fs::read(&segment).unwrap();
    bytes[40] ^= 0x01;
    fs::write(&segment, &bytes).unwrap();
    let service = Service::open(dir.path()).unwrap();
    let data_path = dir.path().display().to_string();
    let file_name = segment.file_name().unwrap().to_str().unwrap();
    for (name, file) in [
        ("s", "settings.json".to_owned()),
        ("c", format!("segments/{file_name}")),
    ] {
        let unavailable = service.collection(name).err().unwrap();
        assert_eq!(unavailable.status, 503);
        let exists = service.create(name, settings(json!({}))).unwrap_err();
        assert_eq!(exists.status, 409);
        let (_, listed) = service
            .unavailable()
            .into_iter()
            .find(|(n, _)| n == name)
            .unwrap();
        for message in [&unavailable.message, &exists.message, &listed] {
            assert!(!message.contains(&data_path), "{message}");
            assert!(message.contains(&format!("{file}: ")), "{message}");
        }
    }
}

#[test]
fn a_flipped_bit_in_the_newest_segment_refuses_the_collection_and_salvage_skips_that_record_only() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    service.create("c", settings(json!({}))).unwrap();
    service.create("other", settings(json!({}))).unwrap();
    fill(&service, "c", 40);
    fill(&service, "other", 5);
    service.close();
    drop(service);
    let files = segments(dir.path(), "c");
    assert_eq!(files.len(), 1);
    let path = &files[0];
    let original = fs::read(path).unwrap();
    let mut flipped = original.clone();
    let middle = original.len() / 2;
    flipped[middle] ^= 0x04;
    fs::write(path, &flipped).unwrap();

    let service = Service::open(dir.path()).unwrap();
    // Nothing was cut, the collection is refused by name with the file and the offset,
    // and the other collection serves.
    assert_eq!(fs::read(path).unwrap(), flipped);
    let error = service.collection("c").err().unwrap();
    assert_eq!(error.status, 503);
    let file_name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        error.message.contains(&format!("segments/{file_name}")),
        "{error}"
    );
    assert!(error.message.contains("corrupt record at byte"), "{error}");
    assert_eq!(service.collection("other").unwrap().len(), 5);
    // Salvage needs the folder to itself.
    assert!(salvage(dir.path(), "c").is_err());
    drop(service);

    // Issue 44, item 6: salvage kept the documents before the bad record only (100 of 200
    // lost where one was bad). Now it skips the bad record and keeps every other one.
    let report = salvage(dir.path(), "c").unwrap();
    assert_eq!(report.rewritten.len(), 1);
    let rewritten = &report.rewritten[0];
    assert_eq!(&rewritten.path, path);
    assert_eq!(fs::read(&rewritten.copy).unwrap(), flipped);
    let skipped = &rewritten.salvaged.skipped;
    assert_eq!(skipped.len(), 1);
    let (offset, bytes) = (skipped[0].offset, skipped[0].bytes);
    assert!(
        offset as usize <= middle && middle < (offset + bytes) as usize,
        "{skipped:?}"
    );
    assert!(
        bytes < original.len() as u64 / 20,
        "one record: {bytes} bytes"
    );
    assert_eq!(rewritten.salvaged.kept, 39);
    assert_eq!(rewritten.salvaged.documents_skipped, 1);
    assert_eq!(
        report.gaps.len(),
        1,
        "the lost document's number is accepted"
    );
    let service = Service::open(dir.path()).unwrap();
    assert_eq!(service.collection("c").unwrap().len(), 39);
    // The collection takes new documents after the salvage.
    let collection = service.collection("c").unwrap();
    assert_eq!(insert(&collection, "new", &text(1000, 60)), Ok(true));
}

#[test]
fn salvage_names_a_missing_data_folder_and_refuses_a_path_for_a_name() {
    // Issue 44, item 13: a missing folder gave a lock-file error, and `../../etc` was
    // answered with a suggestion to PUT /v1/collections/../../etc.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    let error = salvage(&missing, "c").unwrap_err();
    assert_eq!(
        error.message,
        format!("{}: the data folder does not exist", missing.display())
    );
    assert!(!missing.exists(), "salvage created the folder");
    Service::open(dir.path()).unwrap();
    for name in ["../../etc", "..", "a/b"] {
        let error = salvage(dir.path(), name).unwrap_err();
        assert!(error.message.contains("a collection name is"), "{error}");
        assert!(!error.message.contains("PUT"), "{error}");
    }
    let error = salvage(dir.path(), "absent").unwrap_err();
    assert_eq!(error.status, 404);
    assert!(!error.message.contains("PUT"), "{error}");
    // The service's own 404 suggests a PUT for a legal name only.
    let service = Service::open(dir.path()).unwrap();
    let error = service.collection("..").err().unwrap();
    assert_eq!(error.status, 404);
    assert!(!error.message.contains("PUT"), "{error}");
    let error = service.collection("absent").err().unwrap();
    assert!(
        error.message.contains("PUT /v1/collections/absent"),
        "{error}"
    );
}

#[test]
fn a_flipped_bit_in_the_last_acknowledged_document_refuses_the_collection() {
    // Issue 44, item 5: the last acknowledged record was cut as a torn write, and its
    // document silently lost.
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    service.create("c", settings(json!({}))).unwrap();
    fill(&service, "c", 20);
    service.close();
    drop(service);
    let path = segments(dir.path(), "c").remove(0);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    fs::write(&path, &bytes).unwrap();
    let service = Service::open(dir.path()).unwrap();
    let error = service.collection("c").err().unwrap();
    assert_eq!(error.status, 503);
    assert!(
        error.message.contains("this record was acknowledged"),
        "{error}"
    );
    assert_eq!(fs::read(&path).unwrap(), bytes, "nothing was cut");
    drop(service);
    // Salvage skips the one bad record and the collection opens with the 19 before it.
    let report = salvage(dir.path(), "c").unwrap();
    assert_eq!(report.rewritten.len(), 1);
    assert_eq!(report.rewritten[0].salvaged.skipped.len(), 1);
    let service = Service::open(dir.path()).unwrap();
    assert_eq!(service.collection("c").unwrap().len(), 19);
}

#[test]
fn a_missing_middle_segment_is_detected_and_salvage_accepts_the_gap() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    service
        .create(
            "c",
            settings(json!({"partition_documents": 1000, "method": "exact"})),
        )
        .unwrap();
    let collection = service.collection("c").unwrap();
    for batch in 0..25u64 {
        let answers = submit(&collection, batch * 100..batch * 100 + 100, 20);
        assert!(answers.iter().all(|a| a.as_ref().is_ok_and(|a| a.stored)));
    }
    drop(collection);
    service.close();
    drop(service);
    let files = segments(dir.path(), "c");
    assert_eq!(files.len(), 3, "{files:?}");
    fs::remove_file(&files[1]).unwrap();

    let service = Service::open(dir.path()).unwrap();
    let error = service.collection("c").err().unwrap();
    assert!(error.message.contains("are missing"), "{error}");
    let file_name = files[2].file_name().unwrap().to_str().unwrap();
    assert!(error.message.contains(file_name), "{error}");
    drop(service);
    let report = salvage(dir.path(), "c").unwrap();
    assert_eq!(report.gaps, vec![(1000, 2000)]);
    let service = Service::open(dir.path()).unwrap();
    assert_eq!(service.collection("c").unwrap().len(), 1500);
}

#[test]
fn the_collection_limit_refuses_a_creation_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let options = ServiceOptions {
        max_collections: 2,
        ..ServiceOptions::default()
    };
    let service = Service::open_with(dir.path(), options).unwrap();
    service.create("a", settings(json!({}))).unwrap();
    service.create("b", settings(json!({}))).unwrap();
    let error = service.create("c", settings(json!({}))).unwrap_err();
    assert_eq!(error.status, 409);
    assert_eq!(error.code, "collection_limit");
    assert!(!dir.path().join("collections/c").exists());
    let staged: Vec<_> = fs::read_dir(dir.path().join("staging"))
        .map(|entries| entries.collect())
        .unwrap_or_default();
    assert!(staged.is_empty(), "{staged:?}");
    service.drop_collection("a").unwrap();
    assert!(service.create("c", settings(json!({}))).unwrap());
}

#[test]
fn an_expired_id_is_gone_for_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::starting_now());
    let options = ServiceOptions {
        clock: clock.clone(),
        ..ServiceOptions::default()
    };
    let service = Service::open_with(dir.path(), options).unwrap();
    service
        .create("c", settings(json!({"retention": "1s"})))
        .unwrap();
    let collection = service.collection("c").unwrap();
    assert_eq!(insert(&collection, "x", &text(1, 60)), Ok(true));
    clock.advance(std::time::Duration::from_millis(1100));
    assert_eq!(collection.get("x").unwrap(), None);
    let deleted = collection.delete("x").unwrap().blocking_recv().unwrap();
    assert_eq!(deleted, Ok(false));
    // Posting it again stores it (it used to answer 409: the id exists).
    assert_eq!(insert(&collection, "x", &text(2, 60)), Ok(true));
    assert!(collection.get("x").unwrap().is_some());
}

#[test]
fn empty_and_punctuation_only_texts_are_never_duplicates_of_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    // Every method the service takes (the ones that learn from a corpus are refused online).
    let mut served = Vec::new();
    for spec in neardup_core::registry::methods() {
        let method = spec.name;
        let Ok(settings) = Settings::from_json(&json!({ "method": method })) else {
            continue;
        };
        if service.create(method, settings).is_err() {
            continue;
        }
        let collection = service.collection(method).unwrap();
        served.push(method);
        for (i, empty) in ["", "！！！", "...", "   ", "，。"].iter().enumerate() {
            assert_eq!(
                insert(&collection, &format!("e{i}"), empty),
                Ok(true),
                "{method}: {empty:?}"
            );
        }
        // A real text and its copy still are.
        assert_eq!(insert(&collection, "t", &text(7, 60)), Ok(true));
        assert_eq!(
            insert(&collection, "u", &text(7, 60)),
            Ok(false),
            "{method}"
        );
    }
    assert!(served.len() > 1, "the service took {served:?}");
}

#[test]
fn counters_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::open(dir.path()).unwrap();
    service.create("c", settings(json!({}))).unwrap();
    let collection = service.collection("c").unwrap();
    assert_eq!(insert(&collection, "a", &text(1, 60)), Ok(true));
    assert_eq!(insert(&collection, "b", &text(2, 60)), Ok(true));
    assert_eq!(insert(&collection, "c", &text(1, 60)), Ok(false));
    collection
        .check(&[text(1, 60), text(3, 60), text(4, 60)], 10)
        .unwrap();
    drop(collection);
    let service = reopen(service, dir.path());
    let stats = service.collection("c").unwrap().stats();
    assert_eq!(stats.stored, 2, "{stats:?}");
    assert_eq!(stats.duplicates, 1, "{stats:?}");
    assert_eq!(stats.checks, 3, "{stats:?}");
}

// Index level merges run on a thread of their own, from snapshots of the frozen levels:
// a collection loaded through several merges, with deletes made while they run, answers
// every check as the documents say, before and after a restart.

/// The same text with one more character: one more shingle, a fingerprint a few bits away
/// (well within SimHash's radius, where a changed character in a short text can pass it).
fn edited(seed: u64, chars: usize) -> String {
    text(seed, chars) + "一"
}

/// Enough for three merges: levels freeze every 8,192 documents.
const DOCUMENTS: u64 = 30_000;
const CHARS: usize = 80;
const BATCH: u64 = 500;

/// Submits documents `d{i}` of texts of `chars` characters, `i` in `ids`; the answers.
fn submit(
    collection: &Arc<dyn AnyCollection>,
    ids: std::ops::Range<u64>,
    chars: usize,
) -> Vec<Result<neardup_service::Inserted, neardup_service::ServiceError>> {
    let documents = ids
        .map(|i| NewDocument {
            id: format!("d{i}"),
            text: text(i, chars),
            time_ms: None,
        })
        .collect();
    collection
        .submit(documents)
        .unwrap()
        .blocking_recv()
        .unwrap()
}

/// Loads `DOCUMENTS` texts, deleting every 97th a batch after it was stored.
fn load(collection: &Arc<dyn AnyCollection>) {
    for first in (0..DOCUMENTS).step_by(BATCH as usize) {
        let answers = submit(collection, first..first + BATCH, CHARS);
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
    check_sample(collection, method, |_| false);
}

/// As [`check_all`], less the documents `skip` names.
fn check_sample(collection: &Arc<dyn AnyCollection>, method: &str, skip: impl Fn(u64) -> bool) {
    let sample: Vec<u64> = (0..DOCUMENTS).step_by(25).filter(|&i| !skip(i)).collect();
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
