//! The service over real HTTP on loopback: the contract of the routes, linearizable
//! check-and-insert, retention, restart, limits and authentication.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use neardup_service::client::{Client, Method};
use neardup_service::clock::{Clock, ManualClock};
use neardup_service::http::{self, HttpConfig};
use neardup_service::{Service, ServiceOptions};
use serde_json::{json, Value};
use tokio::sync::oneshot;

#[path = "service/access.rs"]
mod access;
#[path = "service/hostile.rs"]
mod hostile;
#[path = "service/learning.rs"]
mod learning;

const NEWS: &str = "国务院总理李克强今天在北京主持召开国务院常务会议，部署进一步扩大内需的措施，\
                    会议决定加大对基础设施建设的投入，并要求各地加快推进重点项目的审批和开工。";
const REPOST: &str = "國務院總理李克強今天在北京主持召開國務院常務會議,部署進一步擴大內需的措施!\
                      會議決定加大對基礎設施建設的投入,並要求各地加快推進重點項目的審批和開工。";
const EDITED: &str = "国务院总理李克强今天在北京主持召开国务院常务会议，部署进一步扩大内需的措施，\
                      会议决定加大对基础设施建设的资金，并要求各地加快推进重点项目的审批和开工。";
const OTHER: &str = "今天上海天气晴朗，适合出门散步，傍晚可能有小雨，请带好雨具出行。\
                     明天气温回升，最高气温二十五度，空气质量良好，适合户外运动。";

/// A running service on a loopback port, stopped (drained) on drop or by `stop`.
struct Server {
    client: Client,
    /// The service served, for what HTTP does not reach (the writer's maintenance).
    service: Arc<Service>,
    url: String,
    stop: std::sync::Mutex<Option<oneshot::Sender<()>>>,
    done: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Server {
    async fn start(dir: &Path, config: HttpConfig) -> Server {
        Server::start_with(dir, config, ServiceOptions::default()).await
    }

    /// A server on `dir` whose time is `clock`.
    async fn start_clocked(dir: &Path, clock: &Arc<ManualClock>) -> Server {
        let options = ServiceOptions {
            clock: clock.clone(),
            ..ServiceOptions::default()
        };
        Server::start_with(dir, HttpConfig::default(), options).await
    }

    async fn start_with(dir: &Path, config: HttpConfig, options: ServiceOptions) -> Server {
        let token = config.token.clone();
        let dir = dir.to_owned();
        let service = tokio::task::spawn_blocking(move || Service::open_with(&dir, options))
            .await
            .unwrap()
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let served = Arc::clone(&service);
        let done = tokio::spawn(async move {
            http::serve(served, config, listener, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Server {
            client: Client::new(&url, token).unwrap(),
            service,
            url,
            stop: std::sync::Mutex::new(Some(stop)),
            done: std::sync::Mutex::new(Some(done)),
        }
    }

    /// Stops accepting, lets in-flight requests finish, closes the collections.
    async fn stop(&self) {
        let stop = self.stop.lock().unwrap().take();
        if let Some(stop) = stop {
            let _ = stop.send(());
        }
        let done = self.done.lock().unwrap().take();
        if let Some(done) = done {
            done.await.unwrap();
        }
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        self.client.json(method, path, body.as_ref()).await.unwrap()
    }

    async fn create(&self, name: &str, settings: Value) {
        let (status, answer) = self
            .call(
                Method::PUT,
                &format!("/v1/collections/{name}"),
                Some(settings),
            )
            .await;
        assert_eq!(status, 201, "{answer}");
    }

    async fn insert(&self, name: &str, id: &str, text: &str) -> (u16, Value) {
        self.call(
            Method::POST,
            &format!("/v1/collections/{name}/documents"),
            Some(json!({"id": id, "text": text})),
        )
        .await
    }

    async fn check(&self, name: &str, text: &str) -> Vec<Value> {
        let (status, answer) = self
            .call(
                Method::POST,
                &format!("/v1/collections/{name}/check"),
                Some(json!({"text": text})),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        answer["matches"].as_array().unwrap().clone()
    }
}

/// `chars` pseudo-random common Chinese characters, a comma every ten; different seeds give
/// unrelated texts.
fn random_text(seed: u64, chars: usize) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut text = String::new();
    for i in 0..chars {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push(char::from_u32(0x4e00 + (state % 0x5000) as u32).unwrap_or('中'));
        if i % 10 == 9 {
            text.push('，');
        }
    }
    text
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn every_method_checks_and_inserts_through_the_routes() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        for (name, settings, finds_repost) in [
            ("sim", json!({}), true),
            ("min", json!({"method": "minhash"}), true),
            ("exact", json!({"method": "exact"}), true),
            (
                "edit",
                json!({"method": "join", "measure": "edit", "threshold": 0.9}),
                true,
            ),
            ("jaccard", json!({"method": "join", "threshold": 0.7}), true),
        ] {
            server.create(name, settings).await;
            let (status, first) = server.insert(name, "a", NEWS).await;
            assert_eq!(status, 200);
            assert_eq!(
                first,
                json!({"id": "a", "stored": true, "duplicate_of": null, "similarity": null, "distance": null})
            );
            // The repost differs only in script and punctuation: every method folds it.
            let (_, repost) = server.insert(name, "b", REPOST).await;
            assert_eq!(repost["stored"], json!(!finds_repost), "{name}: {repost}");
            assert_eq!(repost["duplicate_of"], json!("a"), "{name}");
            let (_, other) = server.insert(name, "c", OTHER).await;
            assert_eq!(other["stored"], json!(true), "{name}");
            // A one-word edit is near (simhash, minhash), not exact.
            let matches = server.check(name, EDITED).await;
            if name == "exact" {
                assert!(matches.is_empty(), "{matches:?}");
            } else {
                assert_eq!(matches.len(), 1, "{name}: {matches:?}");
                assert_eq!(matches[0]["id"], "a");
                assert!(matches[0]["similarity"].as_f64().unwrap() < 1.0);
            }
            let (status, conflict) = server.insert(name, "a", OTHER).await;
            assert_eq!(status, 409);
            assert_eq!(conflict["error"]["code"], "id_exists");
            // Batch routes answer in order.
            let (status, batch) = server
                .call(
                    Method::POST,
                    &format!("/v1/collections/{name}/documents/batch"),
                    Some(json!({"documents": [
                        {"id": "d", "text": "一段全新的文字，说的是农业科技的新进展和农民的收入变化情况。"},
                        {"id": "e", "text": NEWS},
                        {"id": "a", "text": "x"},
                        {"id": "f", "text": "一段全新的文字，说的是农业科技的新进展和农民的收入变化情况。"},
                    ]})),
                )
                .await;
            assert_eq!(status, 200, "{batch}");
            let results = batch["results"].as_array().unwrap();
            assert_eq!(results[0]["stored"], true);
            assert_eq!(results[1]["duplicate_of"], "a");
            assert_eq!(results[2]["status"], 409);
            assert_eq!(results[2]["error"]["code"], "id_exists");
            assert_eq!(results[3]["duplicate_of"], "d", "within one batch");
            let (status, checked) = server
                .call(
                    Method::POST,
                    &format!("/v1/collections/{name}/check/batch"),
                    Some(json!({"texts": [OTHER, "无关"], "limit": 1})),
                )
                .await;
            assert_eq!(status, 200);
            assert_eq!(checked["results"][0]["matches"][0]["id"], "c");
            assert_eq!(checked["results"][1]["matches"], json!([]));
        }
        let (_, list) = server.call(Method::GET, "/v1/collections", None).await;
        let names: Vec<&str> = list["collections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["edit", "exact", "jaccard", "min", "sim"]);
        let (_, shown) = server.call(Method::GET, "/v1/collections/sim", None).await;
        assert_eq!(shown["stats"]["documents"], 3, "a, c and d: {shown}");
        server.stop().await;
    });
}

#[test]
fn of_identical_texts_sent_at_once_exactly_one_is_stored() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Arc::new(Server::start(dir.path(), HttpConfig::default()).await);
        server.create("c", json!({})).await;
        server.create("m", json!({"method": "minhash"})).await;
        for round in 0..40 {
            let name = if round % 2 == 0 { "c" } else { "m" };
            // Each round a new text; half the senders send it as is, half with its
            // punctuation in half-width form.
            let text = random_text(round, 80);
            let repost = text.replace('，', ",");
            let mut tasks = Vec::new();
            for sender in 0..16 {
                let server = Arc::clone(&server);
                let text = if sender % 2 == 0 {
                    text.clone()
                } else {
                    repost.clone()
                };
                let id = format!("r{round}-s{sender}");
                tasks.push(tokio::spawn(async move {
                    if sender % 4 == 3 {
                        // Some through the batch route.
                        let (status, answer) = server
                            .call(
                                Method::POST,
                                &format!("/v1/collections/{name}/documents/batch"),
                                Some(json!({"documents": [{"id": id, "text": text}]})),
                            )
                            .await;
                        assert_eq!(status, 200);
                        answer["results"][0].clone()
                    } else {
                        server.insert(name, &id, &text).await.1
                    }
                }));
            }
            let mut answers = Vec::new();
            for task in tasks {
                answers.push(task.await.unwrap());
            }
            let stored: Vec<&Value> = answers.iter().filter(|a| a["stored"] == true).collect();
            assert_eq!(stored.len(), 1, "round {round}: {answers:?}");
            let winner = stored[0]["id"].clone();
            for answer in &answers {
                if answer["stored"] == false {
                    assert_eq!(answer["duplicate_of"], winner, "round {round}");
                }
            }
        }
        server.stop().await;
    });
}

#[test]
fn documents_expire_at_once_and_their_partitions_are_dropped() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::starting_now());
        let server = Server::start_clocked(dir.path(), &clock).await;
        server.create("short", json!({"retention": "2s"})).await;
        let (_, first) = server.insert("short", "a", NEWS).await;
        assert_eq!(first["stored"], true);
        assert_eq!(server.check("short", REPOST).await.len(), 1);
        clock.advance(Duration::from_millis(2300));
        assert!(
            server.check("short", REPOST).await.is_empty(),
            "expired at once"
        );
        let (status, _) = server
            .call(Method::GET, "/v1/collections/short/documents/a", None)
            .await;
        assert_eq!(status, 404);
        let (_, again) = server.insert("short", "b", REPOST).await;
        assert_eq!(
            again["stored"], true,
            "an expired document no longer blocks"
        );
        // The writer's maintenance (every second, or now when asked) drops the expired
        // partition with its file.
        let collection = server.service.collection("short").unwrap();
        collection.run_maintenance().unwrap().await.unwrap();
        let shown = server
            .call(Method::GET, "/v1/collections/short", None)
            .await
            .1;
        assert!(
            shown["stats"]["partitions_dropped"].as_u64().unwrap() >= 1,
            "{shown}"
        );
        assert!(shown["stats"]["expired"].as_u64().unwrap() >= 1, "{shown}");
        let segments = std::fs::read_dir(dir.path().join("collections/short/segments"))
            .unwrap()
            .count();
        assert!(segments <= 2, "{segments} segment files");

        // By the document's own time.
        server
            .create("bytime", json!({"retention": "2h", "retention_by": "time"}))
            .await;
        let now = clock.now_ms() as f64 / 1000.0;
        let insert = |id: &str, text: &str, time: Value| {
            server.call(
                Method::POST,
                "/v1/collections/bytime/documents",
                Some(json!({"id": id, "text": text, "time": time})),
            )
        };
        let (status, old) = insert("old", NEWS, json!(now - 3.0 * 3600.0)).await;
        assert_eq!(status, 422, "{old}");
        assert_eq!(old["error"]["field"], "time");
        let (status, _) = insert("future", NEWS, json!(now + 3.0 * 3600.0)).await;
        assert_eq!(status, 422);
        let (status, recent) = insert("recent", NEWS, json!(now - 3600.0)).await;
        assert_eq!((status, recent["stored"].clone()), (200, json!(true)));
        let (_, got) = server
            .call(Method::GET, "/v1/collections/bytime/documents/recent", None)
            .await;
        assert!(got["expires"].as_str().unwrap().ends_with('Z'), "{got}");
        server.stop().await;
    });
}

#[test]
fn a_restart_keeps_every_document_collection_and_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..300)
        .map(|i| {
            format!(
                "第{i}条新闻：{}",
                if i % 2 == 0 { NEWS } else { OTHER }.repeat(1 + i % 3)
            )
        })
        .collect();
    let answers = rt().block_on(async {
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        server
            .create(
                "keep",
                // SimHash, as when this was written: the default (MinHash) compares a text
                // sketched before the stream learned its boilerplate by its set, which a
                // corpus of two texts makes all boilerplate.
                json!({"method": "simhash", "keep_text": true, "partition_documents": 1000}),
            )
            .await;
        server.create("other", json!({"method": "minhash"})).await;
        let mut answers = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            answers.push(server.insert("keep", &format!("id{i}"), text).await.1);
        }
        let (status, _) = server
            .call(Method::DELETE, "/v1/collections/keep/documents/id0", None)
            .await;
        assert_eq!(status, 200);
        server.stop().await;
        answers
    });
    rt().block_on(async {
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        let (_, list) = server.call(Method::GET, "/v1/collections", None).await;
        assert_eq!(list["collections"].as_array().unwrap().len(), 2);
        for (i, answer) in answers.iter().enumerate() {
            let (status, got) = server
                .call(
                    Method::GET,
                    &format!("/v1/collections/keep/documents/id{i}"),
                    None,
                )
                .await;
            let expected = if i == 0 {
                404
            } else if answer["stored"] == true {
                200
            } else {
                404
            };
            assert_eq!(status, expected, "id{i}: {answer} {got}");
            if status == 200 {
                assert_eq!(got["text"], texts[i].as_str());
            }
        }
        // Duplicates are still found after the restart, and the deleted id is free again.
        let (_, again) = server.insert("keep", "new", &texts[1]).await;
        assert_eq!(again["stored"], false);
        let (_, reused) = server.insert("keep", "id0", &texts[0]).await;
        assert_eq!(reused["stored"], true, "{reused}");
        server.stop().await;
    });
    // A torn write after the durable end is cut at the next start.
    let segments = dir.path().join("collections/keep/segments");
    let newest = std::fs::read_dir(&segments)
        .unwrap()
        .map(|e| e.unwrap().path())
        .max()
        .unwrap();
    let mut bytes = std::fs::read(&newest).unwrap();
    bytes.extend_from_slice(&[200, 0, 0, 0, 1, 2, 3]);
    std::fs::write(&newest, &bytes).unwrap();
    rt().block_on(async {
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        let (_, shown) = server.call(Method::GET, "/v1/collections/keep", None).await;
        assert_eq!(shown["stats"]["recovered_bytes"], 7, "{shown}");
        let (status, _) = server
            .call(Method::GET, "/v1/collections/keep/documents/id0", None)
            .await;
        assert_eq!(status, 200);
        server.stop().await;
    });
}

#[test]
fn collections_are_created_once_and_dropped_whole() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        server.create("c", json!({"retention": "48h"})).await;
        let (status, _) = server
            .call(
                Method::PUT,
                "/v1/collections/c",
                Some(json!({"retention": "48h"})),
            )
            .await;
        assert_eq!(status, 200, "same settings: unchanged");
        let (status, conflict) = server
            .call(
                Method::PUT,
                "/v1/collections/c",
                Some(json!({"method": "minhash"})),
            )
            .await;
        assert_eq!(status, 409);
        assert_eq!(conflict["error"]["code"], "collection_exists");
        server.insert("c", "a", NEWS).await;
        let (status, _) = server.call(Method::DELETE, "/v1/collections/c", None).await;
        assert_eq!(status, 200);
        let (status, missing) = server.call(Method::GET, "/v1/collections/c", None).await;
        assert_eq!(
            (status, missing["error"]["code"].clone()),
            (404, json!("unknown_collection"))
        );
        let (status, _) = server.call(Method::DELETE, "/v1/collections/c", None).await;
        assert_eq!(status, 404);
        server.create("c", json!({})).await;
        assert!(
            server.check("c", NEWS).await.is_empty(),
            "dropped with its documents"
        );
        server.stop().await;
    });
}

#[test]
fn malformed_requests_get_json_errors_naming_the_field() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = HttpConfig {
            max_body_bytes: 4096,
            max_batch: 3,
            max_text_bytes: 500,
            ..HttpConfig::default()
        };
        let server = Server::start(dir.path(), config).await;
        server.create("c", json!({})).await;
        let docs = "/v1/collections/c/documents";
        // (method, path, body, status, code, field)
        type Case<'a> = (Method, &'a str, Vec<u8>, u16, &'a str, Option<&'a str>);
        let cases: Vec<Case> = vec![
            (Method::POST, docs, b"{bad".to_vec(), 400, "bad_request", None),
            (Method::POST, docs, b"[1]".to_vec(), 400, "bad_request", None),
            (Method::POST, docs, br#"{"id": 5, "text": "x"}"#.to_vec(), 400, "bad_request", Some("id")),
            (Method::POST, docs, br#"{"id": "a"}"#.to_vec(), 400, "bad_request", Some("text")),
            (Method::POST, docs, br#"{"id": "a", "text": ["x"]}"#.to_vec(), 400, "bad_request", Some("text")),
            (Method::POST, docs, br#"{"id": "a", "text": "x", "colour": 1}"#.to_vec(), 400, "bad_request", Some("colour")),
            (Method::POST, docs, br#"{"id": "", "text": "x"}"#.to_vec(), 422, "invalid_value", Some("id")),
            (Method::POST, docs, br#"{"id": "a", "text": "x", "time": "soon"}"#.to_vec(), 422, "invalid_value", Some("time")),
            (Method::POST, docs, br#"{"id": "a", "text": "x", "time": {}}"#.to_vec(), 400, "invalid_value", Some("time")),
            (Method::POST, docs, format!(r#"{{"id": "a", "text": "{}"}}"#, "长".repeat(200)).into_bytes(), 413, "text_too_long", Some("text")),
            (Method::POST, docs, vec![b' '; 5000], 413, "body_too_large", None),
            (Method::POST, "/v1/collections/c/documents/batch", br#"{"documents": [{"id":"a","text":"x"},{"id":"b","text":"y"},{"id":"c","text":"z"},{"id":"d","text":"w"}]}"#.to_vec(), 413, "batch_too_large", Some("documents")),
            (Method::POST, "/v1/collections/c/documents/batch", br#"{"documents": [{"id":"a","text":"x"},{"id":"b"}]}"#.to_vec(), 400, "bad_request", Some("documents[1].text")),
            (Method::POST, "/v1/collections/c/documents/batch", br#"{"documents": {}}"#.to_vec(), 400, "bad_request", Some("documents")),
            (Method::POST, "/v1/collections/c/check", br#"{"text": "x", "limit": 0}"#.to_vec(), 422, "invalid_value", Some("limit")),
            (Method::POST, "/v1/collections/c/check/batch", br#"{"texts": ["x", 3]}"#.to_vec(), 400, "bad_request", Some("texts[1]")),
            (Method::POST, "/v1/collections/nope/check", br#"{"text": "x"}"#.to_vec(), 404, "unknown_collection", None),
            (Method::POST, "/v1/collections/nope/documents", br#"{"id": "a", "text": "x"}"#.to_vec(), 404, "unknown_collection", None),
            (Method::PUT, "/v1/collections/bad%20name", b"{}".to_vec(), 422, "invalid_value", Some("name")),
            (Method::PUT, "/v1/collections/d", br#"{"method": "minhash", "threshold": "high"}"#.to_vec(), 422, "invalid_value", Some("threshold")),
            (Method::PUT, "/v1/collections/d", br#"{"method": "nope"}"#.to_vec(), 422, "invalid_value", Some("method")),
            (Method::PUT, "/v1/collections/d", br#"{"method": "ngram"}"#.to_vec(), 422, "invalid_value", Some("method")),
            (Method::PUT, "/v1/collections/d", br#"{"method": "join", "max_edits": 2, "threshold": 0.9}"#.to_vec(), 422, "invalid_value", Some("threshold")),
            (Method::GET, "/v1/nothing", vec![], 404, "not_found", None),
            (Method::PATCH, "/v1/collections/c", vec![], 405, "method_not_allowed", None),
        ];
        for (method, path, body, status, code, field) in cases {
            let shown = String::from_utf8_lossy(&body[..body.len().min(60)]).into_owned();
            let (got, answer) = server.client.send(method.clone(), path, Some(body)).await.unwrap();
            let answer: Value = serde_json::from_slice(&answer)
                .unwrap_or_else(|e| panic!("{method} {path} {shown}: not JSON ({e})"));
            assert_eq!(got, status, "{method} {path} {shown}: {answer}");
            assert_eq!(answer["error"]["code"], code, "{method} {path} {shown}: {answer}");
            assert_eq!(answer["error"]["field"].as_str(), field, "{method} {path} {shown}: {answer}");
        }
        // Nothing was stored by any of them, and the server still answers.
        let (_, shown) = server.call(Method::GET, "/v1/collections/c", None).await;
        assert_eq!(shown["stats"]["documents"], 0);
        // Arbitrary bytes never get anything but a JSON 4xx.
        let mut state = 12345u64;
        for n in 0..300 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (state >> 33) as usize % 200;
            let mut body: Vec<u8> = (0..len)
                .map(|i| {
                    let pool = b"{}[]\":,0123456789abcdeftrunlx \\\xe4\xb8\xad";
                    pool[((state >> (i % 50)) as usize + i * 7) % pool.len()]
                })
                .collect();
            if n % 3 == 0 {
                body = format!(r#"{{"id": "z{n}", "text": {}}}"#, String::from_utf8_lossy(&body)).into_bytes();
            }
            let (status, answer) = server.client.send(Method::POST, docs, Some(body)).await.unwrap();
            let answer: Value = serde_json::from_slice(&answer).unwrap();
            assert!(status == 200 || (400..500).contains(&status), "{status} {answer}");
        }
        let (status, _) = server.call(Method::GET, "/healthz", None).await;
        assert_eq!(status, 200);
        server.stop().await;
    });
}

#[test]
fn a_token_is_required_on_every_route_but_healthz() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = HttpConfig {
            token: Some("s3cret".into()),
            ..HttpConfig::default()
        };
        let server = Server::start(dir.path(), config).await;
        server.create("c", json!({})).await;
        for token in [None, Some("wrong".to_owned()), Some("S3cret".to_owned())] {
            let anonymous = Client::new(&server.url, token).unwrap();
            for (method, path) in [
                (Method::GET, "/v1/collections"),
                (Method::POST, "/v1/collections/c/check"),
                (Method::GET, "/metrics"),
                (Method::GET, "/v1/openapi.json"),
            ] {
                let (status, answer) = anonymous
                    .json(method, path, Some(&json!({"text": "x"})))
                    .await
                    .unwrap();
                assert_eq!(status, 401, "{path}");
                assert_eq!(answer["error"]["code"], "unauthorized");
            }
            let (status, _) = anonymous.json(Method::GET, "/healthz", None).await.unwrap();
            assert_eq!(status, 200);
        }
        let (status, _) = server.call(Method::GET, "/v1/collections", None).await;
        assert_eq!(status, 200);
        server.stop().await;
    });
}

#[test]
fn metrics_and_openapi_describe_the_service() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        server.create("c", json!({})).await;
        server.insert("c", "a", NEWS).await;
        server.insert("c", "b", REPOST).await;
        let (status, text) = server.client.send(Method::GET, "/metrics", None).await.unwrap();
        assert_eq!(status, 200);
        let text = String::from_utf8(text.to_vec()).unwrap();
        for line in [
            "neardup_collection_documents{collection=\"c\"} 1",
            "neardup_collection_duplicates_total{collection=\"c\"} 1",
            "neardup_http_requests_total{route=\"/v1/collections/{name}/documents\",method=\"POST\",status=\"200\"} 2",
        ] {
            assert!(text.contains(line), "{line} not in\n{text}");
        }
        let (status, openapi) = server.call(Method::GET, "/v1/openapi.json", None).await;
        assert_eq!(status, 200);
        let paths = openapi["paths"].as_object().unwrap();
        for (path, methods) in [
            ("/healthz", &["get"][..]),
            ("/metrics", &["get"]),
            ("/v1/openapi.json", &["get"]),
            ("/v1/collections", &["get"]),
            ("/v1/collections/{name}", &["put", "get", "delete"]),
            ("/v1/collections/{name}/documents", &["post"]),
            ("/v1/collections/{name}/documents/batch", &["post"]),
            ("/v1/collections/{name}/documents/{id}", &["get", "delete"]),
            ("/v1/collections/{name}/check", &["post"]),
            ("/v1/collections/{name}/check/batch", &["post"]),
            ("/v1/collections/{name}/activity", &["get"]),
        ] {
            for method in methods {
                assert!(paths[path].get(*method).is_some(), "{method} {path}");
            }
        }
        assert_eq!(paths.len(), 11, "every documented path is a route");
        server.stop().await;
    });
}

#[test]
fn a_document_called_batch_is_still_reachable() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        server.create("c", json!({})).await;
        server.insert("c", "batch", NEWS).await;
        let (status, got) = server
            .call(Method::GET, "/v1/collections/c/documents/batch", None)
            .await;
        assert_eq!((status, got["id"].clone()), (200, json!("batch")));
        let (status, _) = server
            .call(Method::DELETE, "/v1/collections/c/documents/batch", None)
            .await;
        assert_eq!(status, 200);
        // Ids with slashes and spaces travel percent-encoded.
        server.insert("c", "a/b c", OTHER).await;
        let (status, _) = server
            .call(Method::GET, "/v1/collections/c/documents/a%2Fb%20c", None)
            .await;
        assert_eq!(status, 200);
        server.stop().await;
    });
}

#[test]
fn shutdown_answers_every_queued_insert_and_keeps_what_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let acknowledged = rt().block_on(async {
        let server = Arc::new(Server::start(dir.path(), HttpConfig::default()).await);
        server.create("c", json!({})).await;
        // The stop is sent once the first insert is acknowledged, so that it
        // lands while the rest are queued or in flight, however slow the machine.
        let (first, first_acknowledged) = tokio::sync::mpsc::channel::<()>(400);
        let mut tasks = Vec::new();
        for i in 0..400 {
            let server = Arc::clone(&server);
            let first = first.clone();
            tasks.push(tokio::spawn(async move {
                let text = format!("第{i}号文件：{}", OTHER.repeat(1 + i % 4));
                let id = format!("d{i}");
                match server
                    .client
                    .json(
                        Method::POST,
                        "/v1/collections/c/documents",
                        Some(&json!({"id": id, "text": text})),
                    )
                    .await
                {
                    Ok((200, answer)) if answer["stored"] == true => {
                        let _ = first.try_send(());
                        Some(id)
                    }
                    _ => None,
                }
            }));
        }
        drop(first);
        let mut first_acknowledged = first_acknowledged;
        tokio::time::timeout(Duration::from_secs(60), first_acknowledged.recv())
            .await
            .expect("no insert was acknowledged within 60 s")
            .expect("every insert failed before the stop");
        let mut acknowledged = Vec::new();
        let stopping = Arc::clone(&server);
        let stopper = tokio::spawn(async move { stopping.stop().await });
        for task in tasks {
            acknowledged.extend(task.await.unwrap());
        }
        let _ = stopper.await;
        acknowledged
    });
    assert!(!acknowledged.is_empty());
    rt().block_on(async {
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        for id in &acknowledged {
            let (status, _) = server
                .call(
                    Method::GET,
                    &format!("/v1/collections/c/documents/{id}"),
                    None,
                )
                .await;
            assert_eq!(status, 200, "{id} was acknowledged");
        }
        server.stop().await;
    });
}

#[test]
fn sealed_partitions_answer_after_compaction_deletion_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let text = |i: u64| random_text(1000 + i, 60);
    rt().block_on(async {
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        server
            .create("p", json!({"partition_documents": 1000}))
            .await;
        for batch in 0..5u64 {
            let documents: Vec<Value> = (batch * 500..batch * 500 + 500)
                .map(|i| json!({"id": format!("d{i}"), "text": text(i)}))
                .collect();
            let (status, answer) = server
                .call(
                    Method::POST,
                    "/v1/collections/p/documents/batch",
                    Some(json!({"documents": documents})),
                )
                .await;
            assert_eq!(status, 200);
            assert!(answer["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["stored"] == true));
        }
        let (_, shown) = server.call(Method::GET, "/v1/collections/p", None).await;
        assert_eq!(shown["stats"]["partitions"], 3, "{shown}");
        // Near copies of documents in every partition, the sealed ones compacted.
        for i in [10u64, 990, 1500, 2499] {
            let matches = server.check("p", &text(i).replace('，', ",")).await;
            assert_eq!(matches.len(), 1, "d{i}: {matches:?}");
            assert_eq!(matches[0]["id"], format!("d{i}"));
        }
        let (status, _) = server
            .call(Method::DELETE, "/v1/collections/p/documents/d10", None)
            .await;
        assert_eq!(status, 200);
        assert!(server.check("p", &text(10)).await.is_empty());
        server.stop().await;
    });
    rt().block_on(async {
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        assert!(
            server.check("p", &text(10)).await.is_empty(),
            "deleted stays deleted"
        );
        for i in [11u64, 1500, 2499] {
            let matches = server.check("p", &text(i).replace('，', ",")).await;
            assert_eq!(matches.len(), 1, "after restart, d{i}: {matches:?}");
        }
        let (_, shown) = server.call(Method::GET, "/v1/collections/p", None).await;
        assert_eq!(shown["stats"]["documents"], 2499);
        server.stop().await;
    });
}

fn window_text(i: u64) -> String {
    random_text(50_000 + i, 40)
}

/// Documents `first..first + 2000` of `window_text`, all stored (unrelated texts).
async fn load_window(server: &Server, first: u64) {
    let documents: Vec<Value> = (first..first + 2000)
        .map(|i| json!({"id": format!("d{i}"), "text": window_text(i)}))
        .collect();
    let (status, answer) = server
        .call(
            Method::POST,
            "/v1/collections/w/documents/batch",
            Some(json!({"documents": documents})),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let results = answer["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["stored"] == true), "{answer}");
}

const WINDOW_PROBES: [u64; 6] = [3, 7_777, 9_999, 10_000, 14_321, 19_999];

/// The matches of a near copy of each probe.
async fn window_answers(server: &Server) -> Vec<Vec<Value>> {
    let mut got = Vec::new();
    for i in WINDOW_PROBES {
        got.push(server.check("w", &window_text(i).replace('，', ",")).await);
    }
    got
}

/// One index over the whole collection: past 8,192 documents its Hamming levels freeze and
/// merge (built beside the readers, installed after), a retention drop forgets the dropped
/// partitions' documents, and a check still finds the near copy of every kept document in
/// any partition, never a dropped one, before and after a restart.
#[test]
fn the_collection_index_answers_across_merges_retention_drops_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::starting_now());
    let text = window_text;
    rt().block_on(async {
        let server = Server::start_clocked(dir.path(), &clock).await;
        server
            .create(
                "w",
                json!({"method": "simhash", "retention": "2h", "partition_documents": 3000, "max_distance": 6}),
            )
            .await;
        for first in (0..10_000).step_by(2000) {
            load_window(&server, first).await;
        }
        clock.advance(Duration::from_secs(90 * 60));
        for first in (10_000..20_000).step_by(2000) {
            load_window(&server, first).await;
        }
        for (i, matches) in WINDOW_PROBES.iter().zip(window_answers(&server).await) {
            assert_eq!(matches.len(), 1, "d{i}: {matches:?}");
            assert_eq!(matches[0]["id"], format!("d{i}"));
        }
        // The first 10,000 leave the window; maintenance drops their partitions.
        clock.advance(Duration::from_secs(40 * 60));
        let collection = server.service.collection("w").unwrap();
        collection.run_maintenance().unwrap().await.unwrap();
        let stats = collection.stats();
        assert!(stats.partitions_dropped >= 3, "{stats:?}");
        assert_eq!(stats.documents, 10_000, "{stats:?}");
        for (i, matches) in WINDOW_PROBES.iter().zip(window_answers(&server).await) {
            if *i < 10_000 {
                assert!(matches.is_empty(), "d{i} expired: {matches:?}");
            } else {
                assert_eq!(matches.len(), 1, "d{i}: {matches:?}");
                assert_eq!(matches[0]["id"], format!("d{i}"));
            }
        }
        server.stop().await;
    });
    rt().block_on(async {
        let server = Server::start_clocked(dir.path(), &clock).await;
        for (i, matches) in WINDOW_PROBES.iter().zip(window_answers(&server).await) {
            assert_eq!(matches.len(), usize::from(*i >= 10_000), "restarted, d{i}");
        }
        // An expired text is new again; a kept one is still a duplicate.
        let (_, again) = server.insert("w", "again", &text(3)).await;
        assert_eq!(again["stored"], true, "{again}");
        let (_, copy) = server.insert("w", "copy", &text(14_321)).await;
        assert_eq!(copy["duplicate_of"], "d14321", "{copy}");
        server.stop().await;
    });
}

/// The activity route: each duplicate answered, newest first, with what it matched, its
/// similarity and (with `keep_text`) its text; and the counters sampled over time, one sample
/// per 10 seconds of the service's clock at most.
#[test]
fn the_activity_shows_the_latest_duplicates_and_the_counters_over_time() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::starting_now());
        let server = Server::start_clocked(dir.path(), &clock).await;
        server.create("act", json!({"keep_text": true})).await;
        let collection = server.service.collection("act").unwrap();
        collection.run_maintenance().unwrap().await.unwrap();
        server.insert("act", "a", NEWS).await;
        server.insert("act", "b", OTHER).await;
        let (_, first) = server.insert("act", "c", EDITED).await;
        assert_eq!(first["duplicate_of"], "a");
        server.insert("act", "d", OTHER).await;
        collection.run_maintenance().unwrap().await.unwrap();
        clock.advance(Duration::from_secs(10));
        collection.run_maintenance().unwrap().await.unwrap();
        let (status, activity) = server
            .call(Method::GET, "/v1/collections/act/activity", None)
            .await;
        assert_eq!(status, 200, "{activity}");
        let recent = activity["recent_duplicates"].as_array().unwrap();
        assert_eq!(recent.len(), 2, "{activity}");
        assert_eq!(
            (&recent[0]["id"], &recent[0]["duplicate_of"]),
            (&json!("d"), &json!("b"))
        );
        assert_eq!(recent[0]["similarity"], 1.0);
        assert_eq!(recent[1]["id"], "c");
        assert_eq!(recent[1]["text"], EDITED);
        assert!(recent[1]["similarity"].as_f64().unwrap() < 1.0);
        // Two samples: the second run of the maintenance came less than 10 s after the first.
        let history = activity["history"].as_array().unwrap();
        assert_eq!(history.len(), 2, "{activity}");
        assert_eq!(activity["sample_seconds"], 10);
        assert_eq!(history[0]["stored"], 0);
        assert_eq!(
            (
                &history[1]["stored"],
                &history[1]["duplicates"],
                &history[1]["documents"]
            ),
            (&json!(2), &json!(2), &json!(2))
        );
        let (status, _) = server
            .call(Method::GET, "/v1/collections/nothing/activity", None)
            .await;
        assert_eq!(status, 404);
        server.stop().await;
    });
}

#[test]
fn a_template_flood_verifies_a_bounded_number_and_still_finds_exact_copies() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), HttpConfig::default()).await;
        // Learning off: a default collection learns the template's lines after its warm-up,
        // and its notices are no longer candidates of each other (1,200 of them verify 182
        // candidates in all); the cap is what is tested here.
        server
            .create("t", json!({"max_df": "off", "boilerplate_df": "off"}))
            .await;
        // Notices of one template whose bodies differ: every stored one is a candidate of the
        // next (close fingerprints), none a duplicate (different bodies).
        let notice = |i: u64| {
            format!(
                "【系统通知】您好，{}。本消息由系统自动发送，请勿回复。如有疑问请联系客服热线。",
                random_text(50_000 + i, 30).replace('，', "")
            )
        };
        // In batches of 50: each later batch is checked against the stored ones.
        let mut stored = 0;
        for batch in 0..24u64 {
            let documents: Vec<Value> = (batch * 50..batch * 50 + 50)
                .map(|i| json!({"id": format!("n{i}"), "text": notice(i)}))
                .collect();
            let (status, answer) = server
                .call(
                    Method::POST,
                    "/v1/collections/t/documents/batch",
                    Some(json!({"documents": documents})),
                )
                .await;
            assert_eq!(status, 200);
            stored += answer["results"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["stored"] == true)
                .count();
        }
        assert!(stored > 1000, "{stored} stored");
        let (_, shown) = server.call(Method::GET, "/v1/collections/t", None).await;
        assert!(
            shown["stats"]["candidates_capped"].as_u64().unwrap() > 0,
            "the flood was capped: {shown}"
        );
        // Exact copies come first, whatever the flood.
        let (_, copy) = server.insert("t", "again", &notice(5)).await;
        assert_eq!(copy["duplicate_of"], "n5", "{copy}");
        assert_eq!(copy["similarity"], 1.0);
        server.stop().await;
    });
}
