//! The fast path of declaration parsing: the strict parse of [`json::parse_strict`], except that
//! a `schedule` coming after `tasks` and `repetitions` (the written order) is compared entry by
//! entry, as it streams, with the schedule those imply, instead of being built as a `Value`
//! tree (100,000 entries are 10.8 MB of JSON and ~600,000 allocations).
//!
//! It only ever says yes: any difference at all (a syntax error, a duplicate key, an entry not
//! exactly the expected one, an unusual key order) makes it give up, and the caller runs the
//! ordinary parse and validation, which name the fault. A declaration it accepts is one the
//! ordinary path accepts with the same result.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

use crate::json::{self, StrictSeed};

/// The top-level object with the schedule left out, and whether a schedule was there and was
/// exactly `tasks × repetitions` of the (not yet validated) `tasks[*].id` and `repetitions`.
pub(super) fn parse(bytes: &[u8]) -> Option<(Map<String, Value>, bool)> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let out = de::Deserializer::deserialize_map(&mut de, Top).ok()?;
    de.end().ok()?;
    Some(out)
}

/// The fastest path, for a declaration whose `schedule` is written exactly as `pin` writes it
/// (canonical JSON, two-space indent, the last top-level key): the bytes before the schedule
/// are parsed strictly with the schedule replaced by `[]`, and the schedule's bytes are compared
/// with the text `tasks × repetitions` implies, without parsing them (10.8 MB for 100,000
/// entries). Returns the top level without the schedule, as [`parse`] does when its schedule
/// was checked; `None` when anything differs (then [`parse`] runs).
#[cfg(test)]
pub(super) fn parse_canonical(bytes: &[u8]) -> Option<Map<String, Value>> {
    parse_canonical_releasing(bytes, &|_| {})
}

/// What a parse is told it may give back: each stretch of the bytes it is done with (a
/// mapped file's pages, [`crate::json::Input::release`]).
pub(super) type Release<'r> = &'r dyn Fn(std::ops::Range<usize>);

/// [`parse_canonical`], telling `release` each stretch of the schedule once compared: the
/// schedule is nearly all of a large declaration (104 MB of a 1,000,000-row one), and it is
/// never read again.
pub(super) fn parse_canonical_releasing(
    bytes: &[u8],
    release: Release,
) -> Option<Map<String, Value>> {
    let start = schedule_start(bytes)?;
    // The prefix as a document of its own: `…"schedule": []}`.
    let mut doc = Vec::with_capacity(start + 3);
    doc.extend_from_slice(&bytes[..start]);
    doc.extend_from_slice(b"[]}");
    let mut de = serde_json::Deserializer::from_slice(&doc);
    let top = de::Deserializer::deserialize_map(&mut de, Prefix).ok()?;
    de.end().ok()?;
    let expected = Expected::of(&top)?;
    let len = expected.canonical_len(&bytes[start..], &|r| {
        release(start + r.start..start + r.end)
    })?;
    // Nothing but the object's end may follow, amid JSON's whitespace (not `trim_ascii`'s,
    // which also skips a form feed).
    let json_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let rest = &bytes[start + len..];
    let close = rest.iter().position(|b| !json_ws(b))?;
    (rest[close] == b'}' && rest[close + 1..].iter().all(json_ws)).then_some(top)
}

/// The offset of the value of the top-level key `schedule` (its `[`), found by a lexical scan
/// that stops there: strings are skipped (escapes included) and brackets counted. The caller
/// proves the scan right by parsing what comes before strictly.
fn schedule_start(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i = start;
                loop {
                    match *bytes.get(i)? {
                        b'"' => break,
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
                let key = &bytes[start..i];
                i += 1;
                if depth == 1 && key == b"schedule" {
                    let mut j = i;
                    while bytes.get(j)?.is_ascii_whitespace() {
                        j += 1;
                    }
                    if bytes[j] == b':' {
                        j += 1;
                        while bytes.get(j)?.is_ascii_whitespace() {
                            j += 1;
                        }
                        return (bytes[j] == b'[').then_some(j);
                    }
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The top level of `…"schedule": []}`: every key once, `schedule` last and empty.
struct Prefix;

impl<'de> Visitor<'de> for Prefix {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a declaration object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(give_up());
            }
            if key == "schedule" {
                // The placeholder `[]`, and nothing after it.
                let placeholder = map.next_value::<Vec<IgnoredAny>>()?;
                return match map.next_key::<IgnoredAny>()? {
                    None if placeholder.is_empty() => Ok(out),
                    _ => Err(give_up()),
                };
            }
            let v = map.next_value_seed(StrictSeed { depth: 1 })?;
            out.insert(key, v);
        }
        Err(give_up())
    }
}

/// Any failure: the fast path gives up.
fn give_up<E: de::Error>() -> E {
    E::custom("not the usual declaration")
}

struct Top;

impl<'de> Visitor<'de> for Top {
    type Value = (Map<String, Value>, bool);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a declaration object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        let mut checked = false;
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) || (checked && key == "schedule") {
                return Err(give_up());
            }
            if key == "schedule" {
                if let Some(expected) = Expected::of(&out) {
                    map.next_value_seed(expected)?;
                    checked = true;
                    continue;
                }
            }
            let v = map.next_value_seed(StrictSeed { depth: 1 })?;
            out.insert(key, v);
        }
        Ok((out, checked))
    }
}

/// The schedule `tasks × repetitions` implies, as the task ids and the repetition count.
struct Expected {
    tasks: Vec<String>,
    repetitions: u64,
    width: usize,
}

impl Expected {
    fn of(top: &Map<String, Value>) -> Option<Self> {
        let repetitions = top.get("repetitions").and_then(json::count)?;
        if !(1..=999).contains(&repetitions) {
            return None;
        }
        let tasks = match top.get("tasks")? {
            Value::Array(items) => items
                .iter()
                .map(|t| t.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect::<Option<Vec<_>>>()?,
            _ => return None,
        };
        Some(Expected {
            tasks,
            repetitions,
            width: super::repetition_width(repetitions),
        })
    }
}

impl Expected {
    /// The length of the schedule's canonical text (as `pin` writes it, at the top level of a
    /// two-space-indented document) when `bytes` starts with exactly that text. `release` is
    /// told each stretch once compared: [`RELEASE_BYTES`] or more, then the rest.
    fn canonical_len(&self, bytes: &[u8], release: Release) -> Option<usize> {
        let mut at = 0;
        let mut released = 0;
        let take = |at: &mut usize, want: &[u8]| -> Option<()> {
            let end = *at + want.len();
            (bytes.get(*at..end)? == want).then(|| *at = end)
        };
        if self.tasks.is_empty() {
            take(&mut at, b"[]")?;
            return Some(at);
        }
        take(&mut at, b"[")?;
        let mut entry = Vec::with_capacity(256);
        let mut first = true;
        for task in &self.tasks {
            // serde_json's escaping of the task id; `/` and digits are never escaped.
            let quoted = serde_json::to_string(task).ok()?;
            let bare = &quoted[..quoted.len() - 1];
            for repetition in 1..=self.repetitions {
                entry.clear();
                if !first {
                    entry.push(b',');
                }
                first = false;
                entry.extend_from_slice(b"\n    {\n      \"id\": ");
                entry.extend_from_slice(bare.as_bytes());
                entry.push(b'/');
                push_decimal(&mut entry, repetition, self.width);
                entry.extend_from_slice(b"\",\n      \"repetition\": ");
                push_decimal(&mut entry, repetition, 1);
                entry.extend_from_slice(b",\n      \"task\": ");
                entry.extend_from_slice(quoted.as_bytes());
                entry.extend_from_slice(b"\n    }");
                take(&mut at, &entry)?;
            }
            if at - released >= RELEASE_BYTES {
                release(released..at);
                released = at;
            }
        }
        take(&mut at, b"\n  ]")?;
        release(released..at);
        Some(at)
    }
}

/// The stretch of a schedule compared before it is given back.
const RELEASE_BYTES: usize = 4 << 20;

/// What [`push_decimal`] writes into: bytes, or a string (its digits are ASCII).
pub(crate) trait Digits {
    fn push_ascii(&mut self, ascii: &[u8]);
}

impl Digits for Vec<u8> {
    fn push_ascii(&mut self, ascii: &[u8]) {
        self.extend_from_slice(ascii);
    }
}

impl Digits for String {
    fn push_ascii(&mut self, ascii: &[u8]) {
        self.push_str(std::str::from_utf8(ascii).expect("ASCII digits"));
    }
}

/// `n` in decimal, zero-padded to at least `width` digits (`format!("{n:0width$}")` without
/// the formatting machinery, which cost more than the comparison it feeds; a report writes
/// one for every row it names).
pub(crate) fn push_decimal(out: &mut impl Digits, n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut rest = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let len = digits.len() - i;
    for _ in len..width {
        out.push_ascii(b"0");
    }
    out.push_ascii(&digits[i..]);
}

impl<'de> DeserializeSeed<'de> for Expected {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Expected {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the schedule")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        for task in &self.tasks {
            for repetition in 1..=self.repetitions {
                let entry = Entry {
                    task,
                    repetition,
                    width: self.width,
                };
                seq.next_element_seed(entry)?.ok_or_else(give_up)?;
            }
        }
        match seq.next_element::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(give_up()),
        }
    }
}

/// One expected entry: `{"id": "<task>/<repetition, zero-padded>", "task", "repetition"}`.
struct Entry<'a> {
    task: &'a str,
    repetition: u64,
    width: usize,
}

impl Entry<'_> {
    fn is_id(&self, s: &str) -> bool {
        s.len() == self.task.len() + 1 + self.width
            && s.starts_with(self.task)
            && s.as_bytes()[self.task.len()] == b'/'
            && digits_value(&s[self.task.len() + 1..]) == Some(self.repetition)
    }
}

/// The value of a string of ASCII digits only (no sign, no space).
pub(super) fn digits_value(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl<'de> DeserializeSeed<'de> for Entry<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Entry<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a schedule entry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = [false; 3];
        while let Some(field) = map.next_key_seed(FieldSeed)? {
            if std::mem::replace(&mut seen[field as usize], true) {
                return Err(give_up());
            }
            let ok = match field {
                Field::Id => map.next_value_seed(Str(|s: &str| self.is_id(s)))?,
                Field::Task => map.next_value_seed(Str(|s: &str| s == self.task))?,
                Field::Repetition => map.next_value_seed(Count(self.repetition))?,
            };
            if !ok {
                return Err(give_up());
            }
        }
        if seen == [true; 3] {
            Ok(())
        } else {
            Err(give_up())
        }
    }
}

#[derive(Clone, Copy)]
enum Field {
    Id = 0,
    Task = 1,
    Repetition = 2,
}

struct FieldSeed;

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = Field;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Field, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("id, task or repetition")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
        match v {
            "id" => Ok(Field::Id),
            "task" => Ok(Field::Task),
            "repetition" => Ok(Field::Repetition),
            _ => Err(give_up()),
        }
    }
}

/// A string value, tested without copying it.
struct Str<F>(F);

impl<'de, F: FnOnce(&str) -> bool> DeserializeSeed<'de> for Str<F> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, F: FnOnce(&str) -> bool> Visitor<'de> for Str<F> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok((self.0)(v))
    }
}

/// A nonnegative integer value equal to the given one (a float such as `1.0` is not).
struct Count(u64);

impl<'de> DeserializeSeed<'de> for Count {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_u64(self)
    }
}

impl<'de> Visitor<'de> for Count {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a count")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        Ok(v == self.0)
    }
}
