//! The JSON reader for Inspect logs, and for nothing else: strict JSON (a duplicate key in any
//! object, nesting deeper than [`MAX_DEPTH`], invalid UTF-8, a bad escape, trailing data and
//! numbers out of range are refused, as [`crate::json::parse_strict`] refuses them) except
//! that the three bare tokens Inspect writes where a value is not a number — `NaN`,
//! `Infinity` and `-Infinity` — are numbers. Every other JSON input of the tool goes through
//! the ordinary parser, which refuses them.
//!
//! A sample is read selectively: the fields the importer interprets become [`IVal`]s; every
//! other value (the transcript, the messages) is checked just as strictly but not built.
//! Values keep their byte ranges where the caller asks (a `.json` log's samples: the record
//! keeps the exact bytes of each sample object).

use std::borrow::Cow;
use std::cell::Cell;

/// Deepest nesting of arrays and objects accepted (as for every JSON input).
pub const MAX_DEPTH: usize = crate::json::MAX_DEPTH;

/// A number as an Inspect log writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    UInt(u64),
    /// A finite float.
    Float(f64),
    /// `NaN`: Inspect's "not a number" (a sample not scored).
    NaN,
    /// `Infinity` or `-Infinity`.
    Inf(bool),
}

impl Num {
    /// The value as a finite float; `None` for `NaN` and the infinities.
    pub fn finite(self) -> Option<f64> {
        match self {
            Num::Int(i) => Some(i as f64),
            Num::UInt(u) => Some(u as f64),
            Num::Float(f) => Some(f),
            Num::NaN | Num::Inf(_) => None,
        }
    }
    /// The number as serde_json holds it (integers stay integers); `None` when not finite.
    pub fn to_json(self) -> Option<serde_json::Number> {
        match self {
            Num::Int(i) => Some(i.into()),
            Num::UInt(u) => Some(u.into()),
            Num::Float(f) => serde_json::Number::from_f64(f),
            Num::NaN | Num::Inf(_) => None,
        }
    }
}

/// A parsed value of an Inspect log. Objects keep their members in order.
#[derive(Debug, Clone, PartialEq)]
pub enum IVal {
    Null,
    Bool(bool),
    Num(Num),
    Str(String),
    Arr(Vec<IVal>),
    Obj(Vec<(String, IVal)>),
}

/// The null every missing member reads as.
pub static NULL: IVal = IVal::Null;

impl IVal {
    /// The member `key` of an object; [`NULL`] when absent or not an object.
    pub fn get(&self, key: &str) -> &IVal {
        match self {
            IVal::Obj(m) => m.iter().find(|(k, _)| k == key).map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, IVal::Null)
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            IVal::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            IVal::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_num(&self) -> Option<Num> {
        match self {
            IVal::Num(n) => Some(*n),
            _ => None,
        }
    }
    /// A finite number's value.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_num().and_then(Num::finite)
    }
    /// A nonnegative integer.
    pub fn as_count(&self) -> Option<u64> {
        match self {
            IVal::Num(Num::UInt(u)) => Some(*u),
            IVal::Num(Num::Int(i)) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[IVal]> {
        match self {
            IVal::Arr(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&[(String, IVal)]> {
        match self {
            IVal::Obj(m) => Some(m),
            _ => None,
        }
    }
    /// The value as serde_json holds it; `None` when it holds `NaN` or an infinity anywhere.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        use serde_json::Value;
        Some(match self {
            IVal::Null => Value::Null,
            IVal::Bool(b) => Value::Bool(*b),
            IVal::Num(n) => Value::Number(n.to_json()?),
            IVal::Str(s) => Value::String(s.clone()),
            IVal::Arr(a) => Value::Array(a.iter().map(IVal::to_json).collect::<Option<_>>()?),
            IVal::Obj(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| Some((k.clone(), v.to_json()?)))
                    .collect::<Option<_>>()?,
            ),
        })
    }
    /// The value as it would be written, for messages (`NaN` and the infinities as Inspect
    /// writes them).
    pub fn display(&self) -> String {
        match self {
            IVal::Num(Num::NaN) => "NaN".to_owned(),
            IVal::Num(Num::Inf(true)) => "-Infinity".to_owned(),
            IVal::Num(Num::Inf(false)) => "Infinity".to_owned(),
            IVal::Str(s) => s.clone(),
            other => match other.to_json() {
                Some(v) => v.to_string(),
                None => "(a value holding NaN or Infinity)".to_owned(),
            },
        }
    }
}

/// Whether two values are equal as JSON values (numbers by value, `1` equals `1.0`; `NaN`
/// equals nothing).
pub fn same(a: &IVal, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (IVal::Null, Value::Null) => true,
        (IVal::Bool(x), Value::Bool(y)) => x == y,
        (IVal::Str(x), Value::String(y)) => x == y,
        (IVal::Num(n), Value::Number(m)) => match (n, m.as_u64(), m.as_i64()) {
            (Num::UInt(x), Some(y), _) => *x == y,
            (Num::Int(x), _, Some(y)) => *x == y,
            _ => n.finite().is_some_and(|x| Some(x) == m.as_f64()),
        },
        (IVal::Arr(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (IVal::Obj(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => false,
    }
}

/// What a caller does with one member of an object it reads selectively.
pub enum Take {
    /// Build the value.
    Value,
    /// Check it strictly, keep nothing.
    Skip,
    /// An array: check each element, count them.
    Count,
}

/// A strict reader over one document's bytes (already checked as UTF-8).
pub struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    depth: usize,
    /// The memory the values built may still take, when bounded (an import's, shared by the
    /// readers of all its logs: [`Reader::kept`]).
    kept: Option<&'a Cell<u64>>,
}

/// The memory one value built takes, as charged to [`Reader::kept`]: its node (an object's
/// member: the key's `String` beside it) and the bytes of its string, if it is one.
fn node_bytes(member: bool, heap: usize) -> u64 {
    let node = if member {
        std::mem::size_of::<(String, IVal)>()
    } else {
        std::mem::size_of::<IVal>()
    };
    (node + heap) as u64
}

type Res<T> = std::result::Result<T, String>;

impl<'a> Reader<'a> {
    /// A reader over `bytes`, refusing bytes that are not UTF-8.
    pub fn new(bytes: &'a [u8]) -> Res<Self> {
        if let Err(e) = std::str::from_utf8(bytes) {
            return Err(format!("not UTF-8 at byte {}", e.valid_up_to()));
        }
        Ok(Reader {
            b: bytes,
            pos: 0,
            depth: 0,
            kept: None,
        })
    }

    /// A reader whose built values are charged to `kept` (bytes of memory left): a value that
    /// would take more is refused, so what is kept of a log is bounded whatever its shape (a
    /// list of a million zeros is 2 MB of JSON and 32 MB of values).
    pub fn kept(bytes: &'a [u8], kept: &'a Cell<u64>) -> Res<Self> {
        let mut r = Reader::new(bytes)?;
        r.kept = Some(kept);
        Ok(r)
    }

    fn keep(&self, n: u64) -> Res<()> {
        match self.kept {
            Some(left) => keep(left, n).or_else(|e| self.err(e)),
            None => Ok(()),
        }
    }

    /// The byte offset reached.
    pub fn pos(&self) -> usize {
        self.pos
    }

    fn err<T>(&self, what: impl std::fmt::Display) -> Res<T> {
        // Line and column, as the ordinary parser names a place.
        let upto = &self.b[..self.pos.min(self.b.len())];
        let line = upto.iter().filter(|&&c| c == b'\n').count() + 1;
        let col = upto.len() - upto.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1) + 1;
        Err(format!("{what} at line {line} column {col}"))
    }

    fn ws(&mut self) {
        self.pos = crate::json::skip_ws(self.b, self.pos);
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Res<()> {
        self.ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            self.err(format_args!("expected '{}'", c as char))
        }
    }

    /// After the document's value: nothing but whitespace.
    pub fn end(&mut self) -> Res<()> {
        self.ws();
        if self.pos == self.b.len() {
            Ok(())
        } else {
            self.err("trailing characters")
        }
    }

    fn enter(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format_args!("nesting deeper than {MAX_DEPTH} levels"));
        }
        self.pos += 1;
        Ok(())
    }

    /// One whole value, built.
    pub fn value(&mut self) -> Res<IVal> {
        self.ws();
        match self.peek() {
            Some(b'{') => {
                let mut out: Vec<(String, IVal)> = Vec::new();
                self.object(|r, key| {
                    r.keep(node_bytes(true, key.len()))?;
                    let v = r.value()?;
                    out.push((key.into_owned(), v));
                    Ok(())
                })?;
                Ok(IVal::Obj(out))
            }
            Some(b'[') => {
                let mut out = Vec::new();
                self.array(|r| {
                    r.keep(node_bytes(false, 0))?;
                    out.push(r.value()?);
                    Ok(())
                })?;
                Ok(IVal::Arr(out))
            }
            Some(b'"') => {
                let s = self.string()?;
                self.keep(s.len() as u64)?;
                Ok(IVal::Str(s.into_owned()))
            }
            _ => self.scalar(),
        }
    }

    /// One whole value, checked as strictly as [`Reader::value`], nothing built.
    pub fn skip(&mut self) -> Res<()> {
        self.ws();
        match self.peek() {
            Some(b'{') => self.object(|r, _| r.skip()),
            Some(b'[') => self.array(|r| r.skip()).map(|_| ()),
            Some(b'"') => self.string().map(|_| ()),
            _ => self.scalar().map(|_| ()),
        }
    }

    /// An object, calling `member(reader, key)` at each member's value (which it must read).
    /// Duplicate keys are refused.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Res<()>,
    ) -> Res<()> {
        self.ws();
        if self.peek() != Some(b'{') {
            return self.err("expected an object");
        }
        self.enter()?;
        let mut keys: Keys<'a> = Keys::default();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return self.err("expected a key");
            }
            let at = self.pos;
            let key = self.string()?;
            if !keys.insert(key.clone()) {
                self.pos = at;
                return self.err(format_args!("duplicate key {key:?}"));
            }
            self.expect(b':')?;
            member(self, key)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return self.err("expected ',' or '}'"),
            }
        }
    }

    /// An array, calling `element(reader)` at each element (which it must read); returns how
    /// many there were.
    pub fn array(&mut self, mut element: impl FnMut(&mut Self) -> Res<()>) -> Res<usize> {
        self.ws();
        if self.peek() != Some(b'[') {
            return self.err("expected an array");
        }
        self.enter()?;
        self.ws();
        let mut n = 0;
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(0);
        }
        loop {
            element(self)?;
            n += 1;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(n);
                }
                _ => return self.err("expected ',' or ']'"),
            }
        }
    }

    /// The start of the next value (after whitespace).
    pub fn value_start(&mut self) -> usize {
        self.ws();
        self.pos
    }

    /// Whether the next value is `null` (not consumed).
    pub fn at_null(&mut self) -> bool {
        self.ws();
        self.b[self.pos..].starts_with(b"null")
    }

    /// Whether the next value is an array (not consumed).
    pub fn at_array(&mut self) -> bool {
        self.ws();
        self.peek() == Some(b'[')
    }

    /// Whether the next value is an object (not consumed).
    pub fn at_object(&mut self) -> bool {
        self.ws();
        self.peek() == Some(b'{')
    }

    fn string(&mut self) -> Res<Cow<'a, str>> {
        // At the opening quote.
        self.pos += 1;
        let start = self.pos;
        let b = self.b;
        // The fast run: no escape, no control character.
        let mut i = start;
        while let Some(&c) = b.get(i) {
            match c {
                b'"' => {
                    self.pos = i + 1;
                    let s = std::str::from_utf8(&b[start..i]).expect("checked as UTF-8");
                    return Ok(Cow::Borrowed(s));
                }
                b'\\' => break,
                0..=0x1f => {
                    self.pos = i;
                    return self.err("control character in a string");
                }
                _ => i += 1,
            }
        }
        let mut out: Vec<u8> = b[start..i].to_vec();
        self.pos = i;
        loop {
            match self.peek() {
                None => return self.err("EOF while parsing a string"),
                Some(b'"') => {
                    self.pos += 1;
                    let s = String::from_utf8(out).map_err(|_| "not UTF-8".to_owned())?;
                    return Ok(Cow::Owned(s));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let e = self.peek();
                    self.pos += 1;
                    let c = match e {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => self.unicode_escape()?,
                        _ => {
                            self.pos -= 1;
                            return self.err("invalid escape");
                        }
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(0..=0x1f) => return self.err("control character in a string"),
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn hex4(&mut self) -> Res<u32> {
        let mut unit = [0u8; 2];
        let v = match self.b.get(self.pos..self.pos + 4) {
            Some(d) if faster_hex::hex_decode(d, &mut unit).is_ok() => {
                Some(u32::from(u16::from_be_bytes(unit)))
            }
            _ => None,
        };
        match v {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => self.err("invalid \\u escape"),
        }
    }

    /// After `\u`: one escape, or a surrogate pair. A lone surrogate (Python's `json` writes
    /// one when a string holds it) reads as U+FFFD: the record keeps the bytes as written.
    fn unicode_escape(&mut self) -> Res<char> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) {
            if self.b[self.pos..].starts_with(b"\\u") {
                let save = self.pos;
                self.pos += 2;
                let lo = self.hex4()?;
                if (0xDC00..0xE000).contains(&lo) {
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
                }
                self.pos = save;
            }
            return Ok('\u{FFFD}');
        }
        Ok(char::from_u32(hi).unwrap_or('\u{FFFD}'))
    }

    fn scalar(&mut self) -> Res<IVal> {
        let rest = &self.b[self.pos..];
        for (word, v) in [
            (&b"null"[..], IVal::Null),
            (b"true", IVal::Bool(true)),
            (b"false", IVal::Bool(false)),
            (b"NaN", IVal::Num(Num::NaN)),
            (b"Infinity", IVal::Num(Num::Inf(false))),
            (b"-Infinity", IVal::Num(Num::Inf(true))),
        ] {
            if rest.starts_with(word) {
                self.pos += word.len();
                // A word must end where a value may end.
                if self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    return self.err("expected a value");
                }
                return Ok(v);
            }
        }
        self.number()
    }

    fn number(&mut self) -> Res<IVal> {
        let b = self.b;
        let start = self.pos;
        let mut i = start;
        let digits = |i: &mut usize| {
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - s
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                digits(&mut i);
            }
            _ => return self.err("expected a value"),
        }
        let mut float = false;
        if b.get(i) == Some(&b'.') {
            i += 1;
            float = true;
            if digits(&mut i) == 0 {
                self.pos = i;
                return self.err("invalid number");
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            float = true;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                self.pos = i;
                return self.err("invalid number");
            }
        }
        self.pos = i;
        let text = std::str::from_utf8(&b[start..i]).expect("ASCII");
        if !float {
            if let Ok(u) = text.parse::<u64>() {
                return Ok(IVal::Num(Num::UInt(u)));
            }
            if let Ok(n) = text.parse::<i64>() {
                return Ok(IVal::Num(Num::Int(n)));
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(IVal::Num(Num::Float(f))),
            _ => {
                self.pos = start;
                self.err("number out of range")
            }
        }
    }
}

/// The keys of one object, to refuse a duplicate: a list while small, a set beyond.
#[derive(Default)]
struct Keys<'a> {
    few: Vec<Cow<'a, str>>,
    many: Option<std::collections::HashSet<Cow<'a, str>>>,
}

impl<'a> Keys<'a> {
    fn insert(&mut self, key: Cow<'a, str>) -> bool {
        if let Some(set) = &mut self.many {
            return set.insert(key);
        }
        if self.few.contains(&key) {
            return false;
        }
        self.few.push(key);
        if self.few.len() > 16 {
            self.many = Some(self.few.drain(..).collect());
        }
        true
    }
}

/// Parse one whole document (a header, the eval spec): built, strictly, to its end.
pub fn parse(bytes: &[u8]) -> Res<IVal> {
    let mut r = Reader::new(bytes)?;
    let v = r.value()?;
    r.end()?;
    Ok(v)
}

/// Charge `n` bytes to `kept` (what an import's logs may still keep in memory beyond their
/// bytes: the values built, each sample's entry, the central directory), or refuse.
pub fn keep(kept: &Cell<u64>, n: u64) -> Res<()> {
    match kept.get().checked_sub(n) {
        Some(l) => {
            kept.set(l);
            Ok(())
        }
        None => Err(
            "the values read from this import's Inspect logs (scores, usage, the eval \
                     spec, events, each sample and archive entry, …) take more than the memory \
                     kept for them (2 × --max-input-bytes)"
                .to_owned(),
        ),
    }
}

/// [`parse`], the values built charged to `kept` ([`Reader::kept`]).
pub fn parse_kept(bytes: &[u8], kept: &Cell<u64>) -> Res<IVal> {
    let mut r = Reader::kept(bytes, kept)?;
    let v = r.value()?;
    r.end()?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> IVal {
        parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }
    fn bad(text: &str, needle: &str) {
        match parse(text.as_bytes()) {
            Ok(v) => panic!("{text} parsed as {v:?}"),
            Err(e) => assert!(e.contains(needle), "{text}: {e}"),
        }
        // Skipping is exactly as strict.
        let mut r = match Reader::new(text.as_bytes()) {
            Ok(r) => r,
            Err(_) => return,
        };
        assert!(r.skip().and_then(|_| r.end()).is_err(), "{text} skipped");
    }

    #[test]
    fn the_three_inspect_tokens_are_numbers() {
        assert_eq!(ok("NaN"), IVal::Num(Num::NaN));
        assert_eq!(ok("Infinity"), IVal::Num(Num::Inf(false)));
        assert_eq!(ok("-Infinity"), IVal::Num(Num::Inf(true)));
        let v = ok(r#"{"value": NaN, "xs": [Infinity, -Infinity, 1]}"#);
        assert_eq!(v.get("value").as_num(), Some(Num::NaN));
        assert_eq!(v.get("value").to_json(), None);
        assert_eq!(v.get("xs").as_array().unwrap().len(), 3);
    }

    #[test]
    fn nothing_else_that_is_not_json_is_a_number() {
        for text in [
            "nan",
            "NAN",
            "inf",
            "-inf",
            "+Infinity",
            "infinity",
            "-NaN",
            "+1",
            "Infinit",
            "NaNa",
            "Infinity1",
            "01",
            "1.",
            ".5",
            "1e",
            "1e+",
            "0x10",
            "- 1",
            "--1",
            "+NaN",
            "undefined",
            "None",
            "True",
        ] {
            bad(text, "");
            bad(&format!("[{text}]"), "");
        }
        // NaN as a string is a string.
        assert_eq!(ok(r#""NaN""#), IVal::Str("NaN".into()));
    }

    #[test]
    fn the_ordinary_parser_still_refuses_them() {
        for text in ["NaN", "Infinity", "-Infinity", r#"{"a": NaN}"#] {
            assert!(
                crate::json::parse_strict(text.as_bytes()).is_err(),
                "{text}"
            );
            assert!(
                crate::json::parse_document(text.as_bytes(), "x", 1 << 20).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth_and_after_escapes() {
        bad(r#"{"a": 1, "a": 2}"#, "duplicate key");
        bad(r#"{"x": [{"b": 1, "b": NaN}]}"#, "duplicate key");
        bad(r#"{"a": 1, "\u0061": 2}"#, "duplicate key");
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        ok(&format!("{{{}}}", many.join(",")));
        bad(
            &format!("{{{}, \"k7\": 0}}", many.join(",")),
            "duplicate key",
        );
    }

    #[test]
    fn depth_trailing_data_and_bad_text_are_refused() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        ok(&deep);
        let deeper = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        bad(&deeper, "nesting deeper");
        bad("{} {}", "trailing");
        bad("[1,]", "");
        bad(r#"{"a" 1}"#, "");
        bad("\"a\u{1}b\"", "control character");
        bad(r#""\x""#, "invalid escape");
        bad(r#""\u12""#, "");
        bad(r#""\u12G4""#, "invalid \\u escape");
        bad(r#""\u+0e9""#, "invalid \\u escape");
        bad("1e400", "out of range");
        bad("", "");
        bad("[", "");
        bad("\"abc", "");
        assert!(parse(b"\"\xff\"").unwrap_err().contains("UTF-8"));
    }

    #[test]
    fn strings_escapes_and_numbers_read_as_json() {
        assert_eq!(
            ok(r#""a\"b\\c\/\n\u00e9\ud83d\ude00""#).as_str(),
            Some("a\"b\\c/\né😀")
        );
        assert_eq!(ok(r#""\ud800x""#).as_str(), Some("\u{FFFD}x"));
        assert_eq!(ok(r#""\u00E9\uD83D\uDE00""#).as_str(), Some("é😀"));
        assert_eq!(ok("-3"), IVal::Num(Num::Int(-3)));
        assert_eq!(ok("18446744073709551615"), IVal::Num(Num::UInt(u64::MAX)));
        assert_eq!(ok("1.5e2"), IVal::Num(Num::Float(150.0)));
        assert!(same(&ok("1.0"), &serde_json::json!(1)));
        assert!(!same(&ok("NaN"), &serde_json::json!(null)));
        assert_eq!(
            ok(r#"{"a": [1, "x", null, true]}"#).to_json(),
            Some(serde_json::json!({"a": [1, "x", null, true]}))
        );
    }
}
