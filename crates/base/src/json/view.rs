//! One way to read JSON whatever holds it: a [`View`] is a JSON value (a `serde_json::Value`,
//! or a [`Node`] borrowing its strings from the document's text), and [`J`] is what it is.
//! The row checks and the classification are written once against it, so the fast path
//! (rows parsed as [`Node`]s, without a `Map` per row) and the ordinary path (`Value`s) run the
//! same code.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

use super::MAX_DEPTH;

/// A JSON value, seen through [`View::view`].
pub trait View: Sized {
    /// Its objects.
    type Obj: Obj<V = Self>;
    /// What the value is.
    fn view(&self) -> J<'_, Self>;
    /// The number of the one value this is a share of ([`Node::Shared`]: a container many rows
    /// repeat, read once): two values with the same number are the same value, so whatever
    /// is computed from one holds for the other. `None` for any other value.
    fn repeat_id(&self) -> Option<u64> {
        None
    }
}

/// A JSON object: keys in sorted order, none twice.
pub trait Obj {
    /// Its values.
    type V: View<Obj = Self>;
    fn get(&self, key: &str) -> Option<&Self::V>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The members in key order.
    fn iter(&self) -> impl Iterator<Item = (&str, &Self::V)>;
    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    /// A member as a [`J`]: a missing member reads as null.
    fn field(&self, key: &str) -> J<'_, Self::V> {
        self.get(key).map_or(J::Null, View::view)
    }
    /// [`Obj::get`] of `key`, which the caller knows is the `i`th member in key order: taken
    /// by position where that is direct, else looked up by name.
    fn get_at(&self, _i: usize, key: &str) -> Option<&Self::V> {
        self.get(key)
    }
}

/// A number, as serde_json's `Number` holds it: a nonnegative integer, a negative one, or a
/// finite float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Pos(u64),
    Neg(i64),
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Num {
        match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Num::Pos(u),
            (None, Some(i)) => Num::Neg(i),
            _ => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }
    fn from_i64(i: i64) -> Num {
        if i < 0 {
            Num::Neg(i)
        } else {
            Num::Pos(i as u64)
        }
    }
    /// The `serde_json::Number` it is (`None` for a float that is not finite).
    pub fn to_number(self) -> Option<Number> {
        match self {
            Num::Pos(u) => Some(u.into()),
            Num::Neg(i) => Some(i.into()),
            Num::Float(f) => Number::from_f64(f),
        }
    }
    pub fn as_u64(self) -> Option<u64> {
        match self {
            Num::Pos(u) => Some(u),
            _ => None,
        }
    }
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Num::Pos(u) => i64::try_from(u).ok(),
            Num::Neg(i) => Some(i),
            Num::Float(_) => None,
        }
    }
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Pos(u) => u as f64,
            Num::Neg(i) => i as f64,
            Num::Float(f) => f,
        }
    }
    pub fn is_f64(self) -> bool {
        matches!(self, Num::Float(_))
    }
}

/// What a JSON value is, with its contents borrowed from the [`View`].
pub enum J<'a, V: View> {
    Null,
    Bool(bool),
    Number(Num),
    String(&'a str),
    Array(&'a [V]),
    Object(&'a V::Obj),
}

impl<V: View> Clone for J<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<V: View> Copy for J<'_, V> {}

impl<'a, V: View> J<'a, V> {
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            J::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_object(self) -> Option<&'a V::Obj> {
        match self {
            J::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_array(self) -> Option<&'a [V]> {
        match self {
            J::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_bool(self) -> Option<bool> {
        match self {
            J::Bool(b) => Some(b),
            _ => None,
        }
    }
    /// Any number as a float (as `Value::as_f64`).
    pub fn as_f64(self) -> Option<f64> {
        match self {
            J::Number(n) => Some(n.as_f64()),
            _ => None,
        }
    }
    pub fn is_null(self) -> bool {
        matches!(self, J::Null)
    }
    pub fn is_string(self) -> bool {
        matches!(self, J::String(_))
    }
    /// A member of an object (`None` for anything else).
    pub fn get(self, key: &str) -> Option<J<'a, V>> {
        self.as_object()?.get(key).map(View::view)
    }
    /// The value as a `serde_json::Value` (for messages).
    pub fn to_value(self) -> Value {
        match self {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(b),
            J::Number(n) => n.to_number().map_or(Value::Null, Value::Number),
            J::String(s) => Value::String(s.to_owned()),
            J::Array(a) => Value::Array(a.iter().map(|v| v.view().to_value()).collect()),
            J::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.to_owned(), v.view().to_value()))
                    .collect(),
            ),
        }
    }
}

/// As `Value`'s `Display`: compact JSON.
impl<V: View> fmt::Display for J<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.to_value().fmt(f)
    }
}

impl View for Value {
    type Obj = Map<String, Value>;
    fn view(&self) -> J<'_, Value> {
        match self {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => J::Number(Num::of(n)),
            Value::String(s) => J::String(s),
            Value::Array(a) => J::Array(a),
            Value::Object(o) => J::Object(o),
        }
    }
}

impl Obj for Map<String, Value> {
    type V = Value;
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
    fn len(&self) -> usize {
        Map::len(self)
    }
    fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        Map::iter(self).map(|(k, v)| (k.as_str(), v))
    }
}

/// Equality as `Value`'s `==` (`1` and `1.0` differ), across views.
pub fn same<A: View, B: View>(a: &A, b: &B) -> bool {
    match (a.view(), b.view()) {
        (J::Null, J::Null) => true,
        (J::Bool(x), J::Bool(y)) => x == y,
        (J::Number(x), J::Number(y)) => x == y,
        (J::String(x), J::String(y)) => x == y,
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((k, v), (l, w))| k == l && same(v, w))
        }
        _ => false,
    }
}

/// A JSON value parsed from a document's text, its strings borrowed from the text where they
/// have no escapes: what the fast path parses each row into (a handful of allocations instead
/// of one per key and string).
#[derive(Clone)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Number(Num),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Members<'a>),
    /// A container (never another `Shared`) read once and shared by every document that
    /// repeats its text byte for byte: [`super::NodeParser`] gives a member of a document's
    /// top object that holds the same text as the same member of the document before it
    /// (every row of a campaign carries the same runtime, models and options) as this,
    /// instead of reading it again. It is the value it holds, as far as [`View`] can tell,
    /// but for [`View::repeat_id`]: its number, never given to another value.
    Shared(u64, std::sync::Arc<Node<'a>>),
}

/// As derived, but a [`Node::Shared`] shows as the value it holds: a value prints the same
/// however it was read.
impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Null => f.write_str("Null"),
            Node::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            Node::Number(n) => f.debug_tuple("Number").field(n).finish(),
            Node::String(s) => f.debug_tuple("String").field(s).finish(),
            Node::Array(a) => f.debug_tuple("Array").field(a).finish(),
            Node::Object(o) => f.debug_tuple("Object").field(o).finish(),
            Node::Shared(_, n) => n.fmt(f),
        }
    }
}

/// Equal as JSON values (as [`same`]): a [`Node::Shared`] is the value it holds.
impl PartialEq for Node<'_> {
    fn eq(&self, other: &Self) -> bool {
        same(self, other)
    }
}

/// The members of a [`Node`] object, sorted by key (as a `Map` iterates), no key twice.
#[derive(Debug, Clone)]
pub struct Members<'a>(Vec<(Cow<'a, str>, Node<'a>)>);

impl<'a> Members<'a> {
    /// Members already sorted by key, no key twice.
    pub(super) fn from_sorted(members: Vec<(Cow<'a, str>, Node<'a>)>) -> Self {
        debug_assert!(members.is_sorted_by(|(a, _), (b, _)| a < b));
        Members(members)
    }
    pub(super) fn into_vec(self) -> Vec<(Cow<'a, str>, Node<'a>)> {
        self.0
    }
}

impl<'a> View for Node<'a> {
    type Obj = Members<'a>;
    fn view(&self) -> J<'_, Node<'a>> {
        match self {
            Node::Null => J::Null,
            Node::Bool(b) => J::Bool(*b),
            Node::Number(n) => J::Number(*n),
            Node::String(s) => J::String(s),
            Node::Array(a) => J::Array(a),
            Node::Object(o) => J::Object(o),
            Node::Shared(_, n) => n.view(),
        }
    }
    fn repeat_id(&self) -> Option<u64> {
        match self {
            Node::Shared(id, _) => Some(*id),
            _ => None,
        }
    }
}

impl<'a> Obj for Members<'a> {
    type V = Node<'a>;
    fn get(&self, key: &str) -> Option<&Node<'a>> {
        // Objects are small (a row has ~20 members): a scan comparing lengths first does fewer
        // byte comparisons than a binary search; large objects are searched.
        if self.0.len() <= 32 {
            let key = key.as_bytes();
            self.0
                .iter()
                .find(|(k, _)| same_key(k.as_bytes(), key))
                .map(|(_, v)| v)
        } else {
            self.0
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|i| &self.0[i].1)
        }
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn iter(&self) -> impl Iterator<Item = (&str, &Node<'a>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
    fn get_at(&self, i: usize, key: &str) -> Option<&Node<'a>> {
        let (k, v) = &self.0[i];
        debug_assert_eq!(k, key, "the caller's position of {key:?}");
        Some(v)
    }
}

/// `a == b`, inline: keys of up to sixteen bytes (most) are told apart by their first and last
/// eight (or four) bytes without a call to `memcmp`, which a scan would make for every key of
/// the same length.
#[inline]
pub fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let u64_at = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8"));
    let u32_at = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4"));
    match n {
        0..=3 => a == b,
        4..=7 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        8..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        _ => u64_at(a, 0) == u64_at(b, 0) && a == b,
    }
}

/// The strict parser of [`super::StrictSeed`], building [`Node`]s: the same values refused
/// (duplicate keys, nesting deeper than [`MAX_DEPTH`] counted from the document's top, numbers
/// that are not finite), with shorter messages (the fast path never shows them).
pub struct NodeSeed {
    /// The nesting of the value's container.
    pub depth: usize,
}

impl NodeSeed {
    fn enter<E: de::Error>(&self) -> Result<usize, E> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            Err(E::custom("nesting too deep"))
        } else {
            Ok(depth)
        }
    }
}

impl<'de> DeserializeSeed<'de> for NodeSeed {
    type Value = Node<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(Num::from_i64(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(Num::Pos(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node<'de>, E> {
        if v.is_finite() {
            Ok(Node::Number(Num::Float(v)))
        } else {
            Err(E::custom("number is not finite"))
        }
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let depth = self.enter()?;
        let mut out = Vec::with_capacity(8);
        while let Some(v) = seq.next_element_seed(NodeSeed { depth })? {
            out.push(v);
        }
        Ok(Node::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let depth = self.enter()?;
        let mut out = Vec::with_capacity(8);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            out.push((key, map.next_value_seed(NodeSeed { depth })?));
        }
        // Nested objects of a canonical document come sorted; a row comes in its declared order.
        if !out.is_sorted_by(|(a, _), (b, _)| key_cmp(a, b).is_lt()) {
            out.sort_unstable_by(|(a, _), (b, _)| key_cmp(a, b));
            if out.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(de::Error::custom("duplicate key"));
            }
        }
        Ok(Node::Object(Members(out)))
    }
}

/// The order of keys (`str`'s, bytewise), deciding most pairs by their first eight bytes.
pub(super) fn key_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    key_prefix(a).cmp(&key_prefix(b)).then_with(|| a.cmp(b))
}

/// A key's first eight bytes, zero-padded: prefixes order as their keys do, or tie (and then
/// the whole keys decide).
pub(super) fn key_prefix(s: &str) -> u64 {
    match s.as_bytes().get(..8) {
        Some(head) => u64::from_be_bytes(head.try_into().expect("eight bytes")),
        // Byte by byte: a copy of a length not known beforehand is a call to `memcpy`.
        None => (s.bytes().enumerate()).fold(0, |p, (i, c)| p | u64::from(c) << (56 - 8 * i)),
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

/// Parse `text` strictly into a [`Node`] whose container is `depth` deep in its document.
pub fn parse_node(text: &str, depth: usize) -> Result<Node<'_>, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let node = NodeSeed { depth }
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(node)
}

/// The value at the start of `text` (after any whitespace) as serde_json's
/// `StreamDeserializer` reads it with `NodeSeed` when it starts with `{` or `[`, and the
/// bytes up to its end: what [`super::NodeParser`] is checked against (tests and the fuzz
/// checks; the fast path's `share` reads a row it gives up on the same way, with its own
/// `StreamDeserializer`).
pub fn stream_node_prefix(
    text: &str,
    depth: usize,
) -> Result<(Node<'_>, usize), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let node = NodeSeed { depth }.deserialize(&mut de)?;
    // A stream starts where the deserializer stands: after the value.
    let end = de.into_iter::<de::IgnoredAny>().byte_offset();
    Ok((node, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documents both parsers must agree on (accept or refuse), and whose values must agree.
    const DOCS: &[&str] = &[
        r#"{"b": 1, "a": [1, -2, 2.5, 1e3, 0.1, 18446744073709551615, -9223372036854775808]}"#,
        r#"{"s": "plain", "e": "esc\"aped\n\u00e9", "k\u0061": null, "t": true, "f": false}"#,
        r#"{"nested": {"z": {}, "a": [[], [{}]]}, "": ""}"#,
        r#"{"a": 1, "a": 1}"#,
        r#"{"a": {"x": 1, "y": 2, "x": 3}}"#,
        r#"{"ka": 1, "k\u0061": 2}"#,
        r#"[1e999]"#,
        r#"[-1e999]"#,
        r#"NaN"#,
        r#"{"a": 1,}"#,
        r#"[1, 2] x"#,
        "1.7976931348623157e308",
        "[0.30000000000000004, 29.183333333333334, 5e-324]",
        "\"\u{1F600}\"",
    ];

    #[test]
    fn nodes_accept_and_refuse_what_values_do() {
        for doc in DOCS {
            let value = super::super::parse_strict(doc.as_bytes());
            let node = parse_node(doc, 0);
            assert_eq!(value.is_ok(), node.is_ok(), "{doc}: {value:?} / {node:?}");
            if let (Ok(v), Ok(n)) = (value, node) {
                assert_eq!(n.view().to_value(), v, "{doc}");
                assert!(same(&n, &v) && same(&v, &n), "{doc}");
                assert_eq!(n.view().to_string(), v.to_string());
                assert_eq!(v.view().to_string(), v.to_string());
            }
        }
    }

    #[test]
    fn nodes_keep_the_depth_limit() {
        for levels in 60..=66 {
            let doc = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
            let value = super::super::parse_strict(doc.as_bytes()).is_ok();
            assert_eq!(parse_node(&doc, 0).is_ok(), value, "{levels}");
            assert_eq!(value, levels <= MAX_DEPTH);
            // Two containers deep (a row of a ledger), two levels fewer.
            assert_eq!(parse_node(&doc, 2).is_ok(), levels + 2 <= MAX_DEPTH);
        }
    }

    #[test]
    fn objects_iterate_sorted_and_find_every_key() {
        let doc = r#"{"b": 1, "a": 2, "ab": 3, "B": 4, "é": 5}"#;
        let n = parse_node(doc, 0).unwrap();
        let v = super::super::parse_strict(doc.as_bytes()).unwrap();
        let (J::Object(m), J::Object(w)) = (n.view(), v.view()) else {
            panic!()
        };
        assert!(m.iter().map(|(k, _)| k).eq(w.iter().map(|(k, _)| k)));
        for (k, _) in w.iter() {
            assert!(same(m.get(k).unwrap(), w.get(k).unwrap()));
        }
        assert!(m.get("c").is_none() && m.field("c").is_null());
    }

    #[test]
    fn large_objects_find_every_key() {
        let keys: Vec<String> = (0..100).map(|i| format!("k{}", i * 7 % 100)).collect();
        let doc = format!(
            "{{{}}}",
            keys.iter()
                .map(|k| format!("\"{k}\": \"{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let n = parse_node(&doc, 0).unwrap();
        let m = n.view().as_object().unwrap();
        for k in &keys {
            assert_eq!(m.field(k).as_str(), Some(k.as_str()));
        }
        assert!(m.get("k100").is_none() && m.get("").is_none());
    }

    #[test]
    fn keys_are_the_same_exactly_when_equal() {
        let keys: Vec<String> = (0..40)
            .flat_map(|n| {
                let base = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"[..n].to_owned();
                // The same length, differing in one byte at each place.
                let mut out = vec![base.clone()];
                for i in 0..n {
                    let mut b = base.clone().into_bytes();
                    b[i] = b'_';
                    out.push(String::from_utf8(b).unwrap());
                }
                out
            })
            .collect();
        for a in &keys {
            for b in &keys {
                assert_eq!(same_key(a.as_bytes(), b.as_bytes()), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn keys_order_bytewise() {
        let keys = [
            "",
            "\0",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefgi",
            "b",
            "é",
            "\u{7f}",
            "zzzzzzzzzzzz",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(key_cmp(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
        // Sorted input (nested objects) and unsorted input (rows) both find duplicates.
        for doc in [r#"{"a": 1, "b": 2, "b": 3}"#, r#"{"b": 1, "a": 2, "b": 3}"#] {
            assert!(parse_node(doc, 0).is_err(), "{doc}");
        }
    }

    #[test]
    fn same_is_values_equality() {
        let pairs = [
            ("1", "1.0", false),
            ("1", "1", true),
            ("-1", "-1", true),
            ("[1, 2]", "[1, 2]", true),
            ("[1, 2]", "[2, 1]", false),
            (r#"{"a": 1}"#, r#"{"a": 1, "b": 2}"#, false),
            (r#"{"a": 1, "b": 2}"#, r#"{"b": 2, "a": 1}"#, true),
            (r#"{"a": "x"}"#, r#"{"b": "x"}"#, false),
            ("null", "false", false),
        ];
        for (a, b, want) in pairs {
            let (va, vb) = (
                super::super::parse_strict(a.as_bytes()).unwrap(),
                super::super::parse_strict(b.as_bytes()).unwrap(),
            );
            assert_eq!(va == vb, want, "{a} {b}");
            let (na, nb) = (parse_node(a, 0).unwrap(), parse_node(b, 0).unwrap());
            assert_eq!(same(&na, &vb), want, "{a} {b}");
            assert_eq!(same(&va, &nb), want, "{a} {b}");
            assert_eq!(same(&na, &nb), want, "{a} {b}");
        }
    }
}
