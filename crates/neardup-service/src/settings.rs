//! A collection's settings (the body of `PUT /v1/collections/{name}`), durations and times.

use std::collections::BTreeMap;

use neardup_core::registry::{self, ParamKind};
use neardup_engine::online_rules::{self, Holder, Refusal};
use neardup_engine::stream::FrequencyOptions;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ServiceError;

/// The default method of a collection: MinHash-LSH, verified (see [`ONLINE_MINHASH`]).
///
/// Until issue 45 it was `simhash` at the batch default radius (`"<100:15,11"`): an exact
/// Hamming search at radius 11-15 reads a growing share of the collection as it grows (8,108
/// documents a second at a million, 1,588 at 250,000 with its verification), where the band
/// keys of MinHash read a few buckets whatever the size; on the labelled corpora the MinHash
/// default is as precise and finds more (`bench/run online`, docs/service.md).
pub const DEFAULT_METHOD: &str = "minhash";

/// The LSH layout of a `minhash` collection that sets none of `bands`, `rows`,
/// `permutations`, `threshold` and `lsh_threshold`: 12 bands of 4 rows over 48
/// permutations. A band of 4 rows keeps chance candidates rare at tens of millions of
/// documents (two unrelated texts share a band with probability J^4), and 12 keys a document
/// keep the index near 120 bytes a document; the batch default (bands tuned to the
/// threshold over 128 permutations) stores about three times as many keys.
pub const ONLINE_MINHASH: [(&str, &str); 3] =
    [("bands", "12"), ("rows", "4"), ("permutations", "48")];

/// The parameters whose presence leaves the LSH layout to the method ([`ONLINE_MINHASH`]).
const LSH_PARAMS: [&str; 5] = [
    "bands",
    "rows",
    "permutations",
    "threshold",
    "lsh_threshold",
];
/// The default number of documents per partition (segment file and in-memory index).
pub const DEFAULT_PARTITION_DOCUMENTS: u64 = 1_000_000;

/// Which time a document's retention counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RetentionBy {
    /// When it was inserted.
    #[default]
    Insert,
    /// Its own `time` (the insertion time when it has none).
    Time,
}

/// What a collection was created with; stored as `settings.json` in its folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The method (`simhash`, `minhash`, `exact`).
    pub method: String,
    /// The method's parameters as given, by name.
    pub params: BTreeMap<String, String>,
    /// The retention window (`48h`), or none: documents stay until deleted.
    pub retention: Option<String>,
    /// What the window counts from.
    pub retention_by: RetentionBy,
    /// Whether texts are stored (`GET .../documents/{id}` returns them).
    pub keep_text: bool,
    /// Documents per partition.
    pub partition_documents: u64,
    /// How frequencies are learned from the stream when `max_df` or `boilerplate_df` is set
    /// (documents of the window, documents of the warm-up, bytes of the tables); `None`:
    /// the defaults of [`neardup_engine::stream`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_window: Option<u64>,
    /// See [`Settings::frequency_window`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_warmup: Option<u64>,
    /// See [`Settings::frequency_window`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_memory: Option<u64>,
}

/// A number of bytes, or a size as a string (`"36M"`, `"64MiB"`).
fn bytes(key: &str, value: &Value) -> Result<u64, ServiceError> {
    match value {
        Value::String(text) => {
            neardup_core::size::parse_size(text).map_err(|m| ServiceError::invalid(key, m))
        }
        _ => value.as_u64().ok_or_else(|| {
            ServiceError::invalid(
                key,
                format!("{value}: expected a number of bytes or a size such as \"36M\""),
            )
        }),
    }
}

impl Settings {
    /// Reads a `PUT` body: the service's keys (`method`, `retention`, `retention_by`,
    /// `keep_text`, `partition_documents`) and the method's parameters by name, as strings,
    /// numbers or booleans.
    ///
    /// # Errors
    /// A wrong type, an unknown method or parameter, a value the method refuses, or a
    /// parameter that needs a corpus or a file; each names the field.
    pub fn from_json(body: &Value) -> Result<Settings, ServiceError> {
        let empty = Map::new();
        let object = match body {
            Value::Object(object) => object,
            Value::Null => &empty,
            _ => {
                return Err(ServiceError::bad_request(
                    "the settings must be a JSON object",
                ))
            }
        };
        let mut settings = Settings {
            method: DEFAULT_METHOD.into(),
            params: BTreeMap::new(),
            retention: None,
            retention_by: RetentionBy::Insert,
            keep_text: false,
            partition_documents: DEFAULT_PARTITION_DOCUMENTS,
            frequency_window: None,
            frequency_warmup: None,
            frequency_memory: None,
        };
        for (key, value) in object {
            match key.as_str() {
                "method" => settings.method = string_field(key, value)?,
                "retention" => {
                    if !value.is_null() {
                        let text = string_field(key, value)?;
                        parse_duration(&text).map_err(|m| ServiceError::invalid(key, m))?;
                        settings.retention = Some(text);
                    }
                }
                "retention_by" => {
                    settings.retention_by = match string_field(key, value)?.as_str() {
                        "insert" => RetentionBy::Insert,
                        "time" => RetentionBy::Time,
                        other => {
                            return Err(ServiceError::invalid(
                                key,
                                format!("{other:?} (expected \"insert\" or \"time\")"),
                            ))
                        }
                    }
                }
                "keep_text" => {
                    settings.keep_text = value.as_bool().ok_or_else(|| {
                        ServiceError::bad_request(format!("{value}: expected true or false"))
                            .field(key)
                    })?
                }
                "partition_documents" => {
                    let n = value.as_u64().filter(|&n| (1000..=1 << 32).contains(&n));
                    settings.partition_documents = n.ok_or_else(|| {
                        ServiceError::invalid(
                            key,
                            format!("{value}: expected a whole number from 1000 to 2^32"),
                        )
                    })?;
                }
                "frequency_memory" => settings.frequency_memory = Some(bytes(key, value)?),
                "frequency_window" | "frequency_warmup" => {
                    let n = value.as_u64().ok_or_else(|| {
                        ServiceError::invalid(key, format!("{value}: expected a whole number"))
                    })?;
                    *match key.as_str() {
                        "frequency_window" => &mut settings.frequency_window,
                        _ => &mut settings.frequency_warmup,
                    } = Some(n);
                }
                _ => {
                    let text = match value {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        _ => {
                            return Err(ServiceError::bad_request(format!(
                                "{value}: expected a string, a number or a boolean"
                            ))
                            .field(key))
                        }
                    };
                    settings.params.insert(key.clone(), text);
                }
            }
        }
        if settings.method == "minhash"
            && !LSH_PARAMS.iter().any(|p| settings.params.contains_key(*p))
        {
            for (name, value) in ONLINE_MINHASH {
                settings.params.insert(name.into(), value.into());
            }
        }
        settings.check()?;
        Ok(settings)
    }

    /// Checks the method and its parameters (they build).
    ///
    /// # Errors
    /// As [`Settings::from_json`].
    pub fn check(&self) -> Result<(), ServiceError> {
        let spec = registry::method(&self.method).ok_or_else(|| {
            let names: Vec<&str> = registry::methods().iter().map(|m| m.name).collect();
            ServiceError::invalid(
                "method",
                format!("{:?} (expected one of: {})", self.method, names.join(", ")),
            )
        })?;
        for name in self.params.keys() {
            if let Some(param) = spec.param(name) {
                if param.kind == ParamKind::File {
                    return Err(ServiceError::invalid(
                        name,
                        "a file parameter cannot be given to the service (the server reads no \
                         client paths)",
                    ));
                }
            }
        }
        if let Some(options) = self.frequency_options() {
            options
                .check()
                .map_err(|e| ServiceError::invalid(e.parameter(), e.to_string()))?;
        } else if let Some((field, _)) = [
            ("frequency_window", self.frequency_window),
            ("frequency_warmup", self.frequency_warmup),
            ("frequency_memory", self.frequency_memory),
        ]
        .into_iter()
        .find(|(_, value)| value.is_some())
        {
            // Named under the field given (the first of them), not always the window.
            return Err(ServiceError::invalid(
                field,
                format!(
                    "{field}: frequencies are learned only with max_df or boilerplate_df set \
                     (minhash, simhash)"
                ),
            ));
        }
        // Everything a collection builds from its settings is built here once, so that a
        // refused PUT has touched nothing on disk and a stored settings.json always opens.
        struct Online;
        impl registry::MethodVisitor for Online {
            type Output = Result<(), neardup_core::Error>;
            fn visit<M: registry::Registered>(self, method: M) -> Self::Output {
                let radius = neardup_core::Method::join(&method).max_radius();
                neardup_engine::collection_index::CollectionIndex::new(&method, radius).map(drop)
            }
        }
        registry::with_method(&self.method, &self.method_params()?, Online)??;
        struct Learns;
        impl registry::MethodVisitor for Learns {
            type Output = bool;
            fn visit<M: registry::Registered>(self, method: M) -> bool {
                neardup_core::Method::learns_from_corpus(&method)
            }
        }
        // max_df and boilerplate_df are learned from the stream; a method that would still
        // learn from a corpus without them (a lexicon, IDF weights) has none to learn from.
        let mut params = self.method_params()?;
        for name in online_rules::CORPUS_PARAMS {
            if spec.param(name).is_some() {
                params.insert(*name, "off");
            }
        }
        let learns = registry::with_method(&self.method, &params, Learns)?;
        online_rules::refuse_learning(learns, &self.method, &params, Holder::Collection)
            .map_err(refused)
    }

    /// How the stream's frequencies are counted, when the collection learns them: its
    /// method has `max_df` or `boilerplate_df` (`minhash`, `simhash`) and not both are set to
    /// `off`. A collection learns by default, as a batch run does: the method's own
    /// defaults (`max_df` 0.1%, `boilerplate_df` 0.05%) resolved against the window.
    pub fn frequency_options(&self) -> Option<FrequencyOptions> {
        let spec = registry::method(&self.method)?;
        let learns = online_rules::CORPUS_PARAMS.iter().any(|name| {
            spec.param(name).is_some() && self.params.get(*name).is_none_or(|v| v != "off")
        });
        let defaults = FrequencyOptions::default();
        learns.then(|| FrequencyOptions {
            window: self.frequency_window.unwrap_or(defaults.window),
            warmup: (self.frequency_warmup).unwrap_or(
                defaults
                    .warmup
                    .min(self.frequency_window.unwrap_or(u64::MAX)),
            ),
            memory: (self.frequency_memory).map_or(defaults.memory, |m| {
                usize::try_from(m).unwrap_or(usize::MAX)
            }),
        })
    }

    /// The most memory the collection's stream learning may take: `frequency_memory` for
    /// each window it keeps (the lines and shingles; the set values too, for `max_df` with
    /// `common_shingles` `check`), 0 when it does not learn. What the server's learning
    /// budget counts ([`crate::learning_budget`]).
    pub fn learning_memory(&self) -> u64 {
        let Some(options) = self.frequency_options() else {
            return 0;
        };
        (options.memory as u64).saturating_mul(self.learning_windows())
    }

    /// How [`Settings::learning_memory`] is made, for a message.
    pub fn learning_memory_detail(&self) -> String {
        let memory = self.frequency_options().map_or(0, |options| options.memory);
        match self.learning_windows() {
            1 => format!("frequency_memory {memory}"),
            windows => format!(
                "frequency_memory {memory} for each of {windows} windows: the lines, and \
                 the set values the method marks common"
            ),
        }
    }

    /// The windows of frequencies the collection keeps when it learns: two when its method
    /// marks common set values (as [`crate::collection`]'s learning decides), else one.
    fn learning_windows(&self) -> u64 {
        struct MarksCommon;
        impl registry::MethodVisitor for MarksCommon {
            type Output = bool;
            fn visit<M: registry::Registered>(self, method: M) -> bool {
                neardup_core::CommonMarking::common_limit(&method, 1).is_some()
            }
        }
        let marks = (self.method_params().ok())
            .and_then(|params| registry::with_method(&self.method, &params, MarksCommon).ok());
        // Settings that do not build never open; counted at the most they could take.
        if marks.unwrap_or(true) {
            2
        } else {
            1
        }
    }

    /// Checks what only a new collection is refused (a stored one opens whatever it holds,
    /// and a `PUT` of its own settings still answers that it exists): stream learning that
    /// would not be amortised, a window too small for its memory
    /// ([`FrequencyOptions::check_learning_cost`]).
    ///
    /// # Errors
    /// A 422 under `frequency_window`, naming the smallest window and the largest memory
    /// that work.
    pub fn check_new(&self) -> Result<(), ServiceError> {
        if let Some(options) = self.frequency_options() {
            (options.check_learning_cost())
                .map_err(|e| ServiceError::invalid(e.parameter(), e.to_string()))?;
        }
        Ok(())
    }

    /// The method's parameters as given (the limits learned from the stream at the
    /// method's defaults unless set).
    ///
    /// # Errors
    /// A method that is not registered.
    pub fn method_params(&self) -> Result<registry::Params, ServiceError> {
        registry::method(&self.method)
            .ok_or_else(|| ServiceError::invalid("method", format!("{:?}", self.method)))?;
        let mut params = registry::Params::new();
        for (name, value) in &self.params {
            params.insert(name.clone(), value.clone());
        }
        Ok(params)
    }

    /// The retention window in milliseconds.
    pub fn window_ms(&self) -> Option<i64> {
        self.retention
            .as_deref()
            .and_then(|r| parse_duration(r).ok())
    }
}

/// A refusal of the online rules as a 422 naming the parameter.
fn refused(refusal: Refusal) -> ServiceError {
    ServiceError::invalid(&refusal.parameter, refusal.message)
}

fn string_field(key: &str, value: &Value) -> Result<String, ServiceError> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| ServiceError::bad_request(format!("{value}: expected a string")).field(key))
}

/// Parses a duration such as `48h`, `2d`, `90m`, `1h30m` or `45s` into milliseconds.
///
/// # Errors
/// A message naming the value.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    let bad = || format!("{text:?}: expected a duration such as 48h, 2d, 90m, 1h30m or 45s");
    let mut total: i64 = 0;
    let mut number = String::new();
    let mut any = false;
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit: i64 = match c {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            _ => return Err(bad()),
        };
        let n: i64 = number.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|ms| total.checked_add(ms))
            .ok_or_else(bad)?;
        number.clear();
        any = true;
    }
    if !number.is_empty() || !any || total == 0 {
        return Err(bad());
    }
    Ok(total)
}

/// Reads a document time: seconds since the Unix epoch (a number) or an RFC 3339 date-time
/// (`2026-11-23T08:00:00Z`, `2026-11-23T16:00:00+08:00`, fractions of a second allowed).
/// Returns milliseconds since the epoch.
///
/// # Errors
/// A message naming the value.
pub fn parse_time(value: &Value) -> Result<i64, String> {
    match value {
        Value::Number(n) => n
            .as_f64()
            .filter(|s| s.is_finite() && s.abs() < 1e13)
            .map(|s| (s * 1000.0).round() as i64)
            .ok_or_else(|| format!("{n}: expected seconds since the Unix epoch")),
        Value::String(s) => parse_rfc3339(s).ok_or_else(|| {
            format!("{s:?}: expected an RFC 3339 time such as 2026-11-23T08:00:00Z")
        }),
        other => Err(format!(
            "{other}: expected seconds since the Unix epoch or an RFC 3339 time"
        )),
    }
}

fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let part = s.get(from..from + n)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    let mut millis = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while at < b.len() && b[at].is_ascii_digit() {
            at += 1;
        }
        if at == start {
            return None;
        }
        let frac = &s[start..at.min(start + 3)];
        millis = frac.parse::<i64>().ok()? * 10i64.pow(3 - frac.len() as u32);
    }
    let offset_minutes = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && b[at + 3] == b':' => {
            let (h, m) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Formats milliseconds since the epoch as an RFC 3339 UTC time.
pub fn format_time(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let rem = seconds.rem_euclid(86_400);
    // Inverse of days_from_civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_parse_and_bad_ones_are_named() {
        assert_eq!(parse_duration("48h"), Ok(48 * 3_600_000));
        assert_eq!(parse_duration("2d"), Ok(2 * 86_400_000));
        assert_eq!(parse_duration("1h30m"), Ok(90 * 60_000));
        assert_eq!(parse_duration("45s"), Ok(45_000));
        for bad in ["", "h", "48", "48x", "0s", "-1h", "99999999999999999d"] {
            let error = parse_duration(bad).unwrap_err();
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }

    #[test]
    fn times_parse_as_numbers_and_rfc3339_and_round_trip() {
        assert_eq!(parse_time(&json!(1_700_000_000)), Ok(1_700_000_000_000));
        assert_eq!(parse_time(&json!(1.5)), Ok(1500));
        assert_eq!(
            parse_time(&json!("2026-11-23T08:00:00Z")),
            parse_time(&json!("2026-11-23T16:00:00+08:00"))
        );
        let ms = parse_time(&json!("2024-02-29T23:59:59.25Z")).unwrap();
        assert_eq!(format_time(ms), "2024-02-29T23:59:59.250Z");
        assert_eq!(format_time(0), "1970-01-01T00:00:00.000Z");
        for bad in [
            json!("2026-02-30T00:00:00Z"),
            json!("2026-11-23 08:00"),
            json!("yesterday"),
            json!(true),
            json!("2026-11-23T08:00:00+0800"),
        ] {
            assert!(parse_time(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn settings_take_defaults_and_refuse_what_the_service_cannot_do() {
        let settings = Settings::from_json(&json!({})).unwrap();
        assert_eq!(settings.method, "minhash");
        assert_eq!(settings.retention, None);
        // The online layout, written into the settings; not where the layout is asked for.
        for (name, value) in ONLINE_MINHASH {
            assert_eq!(settings.params[name], value);
        }
        let tuned = Settings::from_json(&json!({"method": "minhash", "bands": 20, "rows": 5}));
        assert!(!tuned.unwrap().params.contains_key("permutations"));
        let simhash = Settings::from_json(&json!({"method": "simhash"})).unwrap();
        assert!(simhash.params.is_empty());
        let minhash = Settings::from_json(
            &json!({"method": "minhash", "threshold": 0.8, "retention": "48h"}),
        )
        .unwrap();
        assert_eq!(minhash.params["threshold"], "0.8");
        assert_eq!(minhash.window_ms(), Some(48 * 3_600_000));
        // Issue 46: the table's memory as a size, as the docs write it, or in bytes.
        for (memory, bytes) in [(json!("36M"), 36 << 20), (json!(37748736), 36 << 20)] {
            let settings = Settings::from_json(&json!({"frequency_memory": memory})).unwrap();
            assert_eq!(settings.frequency_memory, Some(bytes));
        }
        // Thresholds and shingle sizes by length, as batch runs take them.
        for body in [
            json!({"method": "minhash", "threshold": "<25:0.43,0.4", "ngram": "<24:2,3"}),
            json!({"method": "join", "threshold": "<10:0.6,0.5"}),
        ] {
            let settings = Settings::from_json(&body).unwrap();
            assert_eq!(
                settings.params["threshold"],
                body["threshold"].as_str().unwrap()
            );
        }
        for (body, field) in [
            (json!({"method": "nope"}), "method"),
            (
                json!({"method": "simhash", "verify_threshold": 2}),
                "verify_threshold",
            ),
            (json!({"method": "simhash", "threshold": 0.5}), "threshold"),
            (json!({"max_distance": 3}), "max_distance"),
            (json!({"method": "minhash", "threshold": 2}), "threshold"),
            (
                json!({"method": "minhash", "threshold": "<25:0.43"}),
                "threshold",
            ),
            (
                json!({"method": "join", "threshold": "<10:0.6,<5:0.5,0.5"}),
                "threshold",
            ),
            (json!({"no_such": 1}), "no_such"),
            (json!({"method": "minhash", "max_df": "lots"}), "max_df"),
            (json!({"method": "minhash", "weighting": "idf"}), "method"),
            (
                json!({"method": "exact", "frequency_warmup": 10}),
                "frequency_warmup",
            ),
            (
                json!({"max_df": "off", "boilerplate_df": "off", "frequency_warmup": 10}),
                "frequency_warmup",
            ),
            // Issue 44, item 13: a bad frequency_memory was named frequency_window.
            (
                json!({"method": "exact", "frequency_memory": 1}),
                "frequency_memory",
            ),
            (json!({"frequency_memory": 1}), "frequency_memory"),
            (json!({"frequency_memory": "lots"}), "frequency_memory"),
            (json!({"frequency_memory": "1.5M"}), "frequency_memory"),
            (
                json!({"frequency_window": 100, "frequency_memory": 1u64 << 40}),
                "frequency_memory",
            ),
            (
                json!({"method": "simhash", "idf_file": "/etc/passwd"}),
                "idf_file",
            ),
            (json!({"method": "imatch"}), "method"),
            (json!({"method": "topn"}), "method"),
            (json!({"method": "simhash", "weights": "tfidf"}), "method"),
            (json!({"weights": "tfidf"}), "weights"),
            (json!({"retention": "soon"}), "retention"),
            (json!({"retention_by": "arrival"}), "retention_by"),
            (json!({"keep_text": "yes"}), "keep_text"),
            (json!({"partition_documents": 5}), "partition_documents"),
            (json!({"max_distance": [1]}), "max_distance"),
        ] {
            let error = Settings::from_json(&body).unwrap_err();
            assert_eq!(error.field.as_deref(), Some(field), "{body}: {error}");
        }
        assert_eq!(Settings::from_json(&json!([1])).unwrap_err().status, 400);
    }

    #[test]
    fn a_method_without_an_online_index_is_refused_in_words() {
        // Issue 44, item 13: the refusal printed `NgramBuckets { m: 4 }`.
        let error = Settings::from_json(&json!({"method": "ngram"})).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("method"));
        assert!(
            error.message.contains("ngram has no online index"),
            "{error}"
        );
        assert!(error.message.contains("character n-gram"), "{error}");
        for debug in ["NgramBuckets", "{", "m:"] {
            assert!(!error.message.contains(debug), "{error}");
        }
    }

    /// A collection of a method with `max_df` or `boilerplate_df` learns them from its stream
    /// unless both are off; the others have nothing to learn.
    #[test]
    fn collections_learn_by_default() {
        let learns = |body: Value| Settings::from_json(&body).unwrap().frequency_options();
        let options = learns(json!({})).expect("a default collection learns");
        assert_eq!(options, FrequencyOptions::default());
        assert!(learns(json!({"method": "minhash"})).is_some());
        assert!(learns(json!({"max_df": "off"})).is_some());
        assert!(learns(json!({"max_df": "off", "boilerplate_df": "off"})).is_none());
        assert!(learns(json!({"method": "exact"})).is_none());
        // `join` has the template model since issue 43's fifth part.
        assert!(learns(json!({"method": "join", "threshold": 0.7})).is_some());
        let off = json!({"method": "join", "max_df": "off", "boilerplate_df": "off"});
        assert!(learns(off).is_none());
        let warm = learns(json!({"frequency_warmup": 10})).unwrap();
        assert_eq!(warm.warmup, 10);
    }
}
