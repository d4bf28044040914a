//! Level files: a restart loads the index levels written beside the segments and answers as
//! a rebuild from the segments would; damaged, missing and half-written files (what a crash
//! during a merge or a file's write leaves) are rebuilt from the segments.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use super::*;

/// Levels freeze every 8,192 documents: each frozen level gets a file.
fn options() -> ServiceOptions {
    ServiceOptions {
        level_file_docs: 4096,
        ..ServiceOptions::default()
    }
}

fn open(dir: &Path) -> Arc<Service> {
    Service::open_with(dir, options()).unwrap()
}

fn close(service: Arc<Service>) {
    service.close();
    drop(service);
}

fn index_dir(dir: &Path) -> PathBuf {
    dir.join("collections").join("c").join("index")
}

/// The files of the index folder, with their inode numbers (a file rewritten gets another).
fn index_files(dir: &Path) -> BTreeMap<String, u64> {
    files_of(&index_dir(dir))
}

/// The files of folder `dir`, with their inode numbers.
fn files_of(dir: &Path) -> BTreeMap<String, u64> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap())
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, e.metadata().unwrap().ino())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The segment summaries, with their inode numbers.
fn summaries(dir: &Path) -> BTreeMap<String, u64> {
    files_of(&dir.join("collections").join("c").join("docs"))
}

/// The level files the manifest lists.
fn listed(dir: &Path) -> Vec<String> {
    let text = fs::read(index_dir(dir).join("manifest.json")).unwrap();
    let manifest: Value = serde_json::from_slice(&text).unwrap();
    ["identities", "keys"]
        .iter()
        .flat_map(|kind| manifest[kind].as_array().unwrap().clone())
        .map(|l| l["file"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until the merge thread has written the files of a restart's levels.
fn wait_for_manifest(dir: &Path) {
    let started = Instant::now();
    while !index_dir(dir).join("manifest.json").exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no manifest");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Documents deleted after the load, from the oldest levels (written to files before).
fn deleted_late(i: u64) -> bool {
    i % 1000 == 1
}

/// A collection of `DOCUMENTS` (several segments, levels with files), every 97th deleted
/// during the load and the `deleted_late` ones after it; closed.
fn loaded(body: Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let service = open(dir.path());
    assert!(service.create("c", settings(body)).unwrap());
    let collection = service.collection("c").unwrap();
    load(&collection);
    for i in (0..DOCUMENTS).filter(|&i| deleted_late(i)) {
        let deleted = collection.delete(&format!("d{i}")).unwrap();
        assert!(deleted.blocking_recv().unwrap().unwrap(), "d{i}");
    }
    drop(collection);
    close(service);
    dir
}

/// Every answer as the documents say (see `check_all`), the late deletes not found, and the
/// count.
fn answers_right(dir: &Path, method: &str) {
    let service = open(dir);
    let collection = service.collection("c").unwrap();
    let deleted = (0..DOCUMENTS)
        .filter(|&i| (i % 97 == 0 && i < DOCUMENTS - BATCH) || deleted_late(i))
        .count() as u64;
    assert_eq!(collection.len(), DOCUMENTS - deleted, "{method}");
    let late: Vec<String> = (0..DOCUMENTS)
        .filter(|&i| deleted_late(i) && i % 97 != 0)
        .map(|i| text(i, CHARS))
        .collect();
    for found in collection.check(&late, 3).unwrap() {
        assert!(found.is_empty(), "{method}: a late delete found: {found:?}");
    }
    drop(collection);
    close_checked(service, method);
}

/// Checks every sample (`check_sample`, less the late deletes) with a fresh handle, then
/// closes.
fn close_checked(service: Arc<Service>, method: &str) {
    let collection = service.collection("c").unwrap();
    check_sample(&collection, method, deleted_late);
    drop(collection);
    close(service);
}

#[test]
fn a_restart_loads_the_level_files_and_answers_as_a_rebuild() {
    for (method, body) in [
        ("default minhash", json!({"partition_documents": 7000})),
        (
            "simhash",
            json!({"method": "simhash", "partition_documents": 7000}),
        ),
    ] {
        let dir = loaded(body);
        let files = index_files(dir.path());
        let listed = listed(dir.path());
        let keys = listed.iter().filter(|f| f.starts_with("keys-")).count();
        let identities = listed
            .iter()
            .filter(|f| f.starts_with("identities-"))
            .count();
        assert!(identities >= 1, "{method}: {listed:?}");
        assert_eq!(
            keys >= 1,
            method.contains("minhash"),
            "{method}: {listed:?}"
        );
        // Summaries of the sealed segments, but for a Hamming index (which replays them).
        let summaries = summaries(dir.path());
        assert_eq!(
            summaries.len() >= 3,
            method.contains("minhash"),
            "{method}: {summaries:?}"
        );
        answers_right(dir.path(), method);
        // Loaded, not rebuilt: the same files, not rewritten.
        let after = index_files(dir.path());
        for file in &listed {
            assert_eq!(
                after.get(file),
                files.get(file),
                "{method}: {file} was rewritten"
            );
        }
        assert_eq!(self::summaries(dir.path()), summaries, "{method}");
        // Without the files, the same answers from a rebuild; the files are written again.
        fs::remove_dir_all(index_dir(dir.path())).unwrap();
        answers_right(dir.path(), method);
        wait_for_manifest(dir.path());
    }
}

#[test]
fn damaged_missing_and_half_written_level_files_are_rebuilt_or_removed() {
    let original = loaded(json!({"partition_documents": 7000}));
    let listed = listed(original.path());
    let victim = listed
        .iter()
        .find(|f| f.starts_with("keys-"))
        .unwrap()
        .clone();
    type Damage = fn(&Path, &str);
    let cases: [(&str, Damage, bool); 4] = [
        (
            "a flipped byte",
            |index, victim| {
                let path = index.join(victim);
                let mut bytes = fs::read(&path).unwrap();
                let middle = bytes.len() / 2;
                bytes[middle] ^= 0x10;
                fs::write(&path, bytes).unwrap();
            },
            true,
        ),
        (
            "a missing file",
            |index, victim| fs::remove_file(index.join(victim)).unwrap(),
            true,
        ),
        (
            "a truncated file",
            |index, victim| {
                let path = index.join(victim);
                let bytes = fs::read(&path).unwrap();
                fs::write(&path, &bytes[..bytes.len() - 9]).unwrap();
            },
            true,
        ),
        (
            // A kill during a file's write leaves its temporary file; one between the rename
            // and the manifest leaves a file the manifest does not list.
            "a half-written temporary file and an unlisted file",
            |index, victim| {
                let bytes = fs::read(index.join(victim)).unwrap();
                fs::write(index.join("keys-1-99999.tmp"), &bytes[..bytes.len() / 3]).unwrap();
                fs::write(index.join("keys-1-99999.level"), &bytes).unwrap();
            },
            false,
        ),
    ];
    let summaries_dir = original.path().join("collections/c/docs");
    let summary = summaries(original.path()).into_keys().next().unwrap();
    {
        // A damaged summary: its segment is replayed, and the summary written again.
        let dir = tempfile::tempdir().unwrap();
        copy_dir(original.path(), dir.path());
        let path = dir.path().join("collections/c/docs").join(&summary);
        let mut bytes = fs::read(&path).unwrap();
        bytes[20] ^= 1;
        fs::write(&path, &bytes).unwrap();
        // And what a crash may leave: the summary of a segment dropped since, a temporary file.
        let docs = dir.path().join("collections/c/docs");
        let strays = [
            docs.join("seg-00000000000099999999.docs"),
            docs.join("seg-x.tmp"),
        ];
        for stray in &strays {
            fs::write(stray, b"left by a crash").unwrap();
        }
        answers_right(dir.path(), "a damaged summary");
        for stray in &strays {
            assert!(!stray.exists(), "{}", stray.display());
        }
        // Written again from the replayed segment (its start time taken from its documents).
        let again = fs::read(&path).unwrap();
        let original = fs::read(summaries_dir.join(&summary)).unwrap();
        assert!(again != bytes && again.len() == original.len(), "{summary}");
    }
    for (case, damage, rebuilt) in cases {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(original.path(), dir.path());
        damage(&index_dir(dir.path()), &victim);
        let before = index_files(dir.path());
        answers_right(dir.path(), case);
        let after = index_files(dir.path());
        assert!(!after.contains_key("keys-1-99999.tmp"), "{case}: {after:?}");
        assert!(
            !after.contains_key("keys-1-99999.level"),
            "{case}: {after:?}"
        );
        let kept = listed.iter().all(|f| after.get(f) == before.get(f));
        assert_eq!(kept, !rebuilt, "{case}: listed {listed:?}, now {after:?}");
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}
