//! JSON bodies that repeat no key.
//!
//! `serde_json::Value` keeps the last of two equal keys, so `{"id": "a", "id": "b"}` would be
//! read as `{"id": "b"}` while a proxy or a log reading the first sees `"a"`. Bodies are
//! therefore read twice: once by a visitor that only remembers the keys of each object, at
//! every nesting level, and refuses the first repeated one with its place (`documents[3].id`),
//! then into a `Value`. Reading is linear in the body either way; the nesting depth stays
//! bounded by `serde_json`'s recursion limit.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::error::ServiceError;

/// Parses `bytes` as JSON, refusing an object that repeats a key.
///
/// # Errors
/// 400 `bad_request`: not JSON, or a repeated key (its place in `field`).
pub fn parse(bytes: &[u8]) -> Result<Value, ServiceError> {
    let place = RefCell::new(Vec::new());
    let repeated = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let checked = Keys {
        place: &place,
        repeated: &repeated,
    }
    .deserialize(&mut deserializer)
    .and_then(|()| deserializer.end());
    if let Err(error) = checked {
        return Err(match repeated.into_inner() {
            Some((field, key)) => ServiceError::bad_request(format!(
                "the key {key:?} appears twice in one object of the body; give each key once"
            ))
            .field(field),
            None => ServiceError::bad_request(format!("the body is not valid JSON: {error}")),
        });
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ServiceError::bad_request(format!("the body is not valid JSON: {e}")))
}

/// One step of the path to a value: an object key or an array index.
enum Step {
    Key(String),
    Index(usize),
}

fn path(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Visits a value, remembering the keys of each object; the first repeated key is recorded
/// in `repeated` as (its path, the key).
#[derive(Clone, Copy)]
struct Keys<'a> {
    place: &'a RefCell<Vec<Step>>,
    repeated: &'a RefCell<Option<(String, String)>>,
}

impl<'de> DeserializeSeed<'de> for Keys<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Keys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            self.place.borrow_mut().push(Step::Index(index));
            let item = items.next_element_seed(self)?;
            self.place.borrow_mut().pop();
            if item.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = entries.next_key::<String>()? {
            if keys.contains(&key) {
                let mut place = self.place.borrow_mut();
                place.push(Step::Key(key.clone()));
                *self.repeated.borrow_mut() = Some((path(&place), key));
                return Err(de::Error::custom("a repeated key"));
            }
            self.place.borrow_mut().push(Step::Key(key.clone()));
            entries.next_value_seed(self)?;
            self.place.borrow_mut().pop();
            keys.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_is_refused_at_every_level_with_its_place() {
        for (body, field, key) in [
            (r#"{"id": "a", "id": "b"}"#, "id", "id"),
            (
                r#"{"documents": [{"id": "a"}, {"id": "b", "text": "x", "id": "c"}]}"#,
                "documents[1].id",
                "id",
            ),
            (r#"{"a": {"b": [[{"c": 1, "c": 2}]]}}"#, "a.b[0][0].c", "c"),
            (r#"{"\u0069d": 1, "id": 2}"#, "id", "id"),
        ] {
            let error = parse(body.as_bytes()).unwrap_err();
            assert_eq!(error.status, 400, "{body}");
            assert_eq!(error.field.as_deref(), Some(field), "{body}");
            assert!(
                error.message.contains(&format!("{key:?}")),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn bodies_without_repeated_keys_read_as_before() {
        for body in [
            r#"{"id": "a", "text": "x", "time": 1.5e9, "n": 123456789012345678901234567890}"#,
            r#"[{"id": 1}, {"id": 2}]"#,
            r#"{"a": {"id": 1}, "b": {"id": 1}}"#,
            "null",
            "\"x\"",
        ] {
            let expected: Value = serde_json::from_str(body).unwrap();
            assert_eq!(parse(body.as_bytes()).unwrap(), expected, "{body}");
        }
        let error = parse(b"{\"id\": ").unwrap_err();
        assert!(
            error.message.starts_with("the body is not valid JSON"),
            "{}",
            error.message
        );
        assert_eq!(error.field, None);
    }
}
