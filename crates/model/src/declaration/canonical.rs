//! A declaration's canonical bytes (`declaration.md`): the key order a reader sees, which
//! `pin` writes and every pinned declaration keeps.

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::Value;

use super::{TASK_KEYS, TOP_KEYS};
use crate::json;

/// A declaration's canonical bytes: top-level and task keys in the order `declaration.md`
/// shows, every other object's keys sorted, two-space indent, trailing newline.
pub fn canonical(value: &Value) -> Vec<u8> {
    json::canonical(&InOrder {
        value,
        order: &TOP_KEYS,
        depth: 0,
    })
}

struct InOrder<'a> {
    value: &'a Value,
    order: &'a [&'a str],
    depth: u8,
}

impl Serialize for InOrder<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let Value::Object(m) = self.value else {
            return self.value.serialize(s);
        };
        let mut keys: Vec<&String> = m
            .keys()
            .filter(|k| self.order.contains(&k.as_str()))
            .collect();
        keys.sort_by_key(|k| self.order.iter().position(|o| o == k));
        keys.extend(m.keys().filter(|k| !self.order.contains(&k.as_str())));
        let mut map = s.serialize_map(Some(m.len()))?;
        for k in keys {
            if self.depth == 0 && k == "tasks" {
                map.serialize_entry(k, &Tasks(&m[k]))?;
            } else {
                map.serialize_entry(k, &m[k])?;
            }
        }
        map.end()
    }
}

struct Tasks<'a>(&'a Value);

impl Serialize for Tasks<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let Value::Array(items) = self.0 else {
            return self.0.serialize(s);
        };
        let mut seq = s.serialize_seq(Some(items.len()))?;
        for t in items {
            seq.serialize_element(&InOrder {
                value: t,
                order: &TASK_KEYS,
                depth: 1,
            })?;
        }
        seq.end()
    }
}
