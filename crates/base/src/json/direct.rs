//! A strict JSON parser building a [`Node`] straight from the text, for the fast path's rows:
//! serde_json with [`NodeSeed`](super::NodeSeed) spends most of a row's time in its visitor
//! protocol, growing a `Vec` per container and sorting keys; this reads the bytes once, sizes
//! each container exactly from a reused stack, and borrows every unescaped string.
//!
//! It only ever says yes. On anything it does not handle with certainty (a value that does not
//! start with `{` or `[`, a lone or invalid `\u` surrogate, a number with more than 19 digits
//! or an exponent of more than four, nesting over [`MAX_DEPTH`], any invalid or truncated
//! input) it returns `None`, and the caller parses the value with serde_json as before, so
//! every refusal and its message stay serde_json's. Where it returns a value, it is the one
//! serde_json and `NodeSeed` build from the same text: `fuzz/checks.rs` compares the two on
//! arbitrary bytes.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::view::{key_prefix, Members, Node, Num};
use super::ByteCursor;
use super::MAX_DEPTH;

/// The parser, with its scratch stacks: kept across the rows of a share so that members and
/// items are gathered without allocating, then moved into one exact allocation per container.
#[derive(Default)]
pub struct NodeParser<'a> {
    /// The members of the objects being parsed, innermost last.
    members: Vec<(Cow<'a, str>, Node<'a>)>,
    /// The [`key_prefix`] of each of `members`, to order them mostly without reading keys.
    prefixes: Vec<u64>,
    /// The items of the arrays being parsed, innermost last.
    items: Vec<Node<'a>>,
    /// The orders that sorted the last unsorted objects' members, most recent first: rows all
    /// come in their declared order, so one sorts the next row too, and a document of another
    /// writer (a Harbor result) holds a few shapes of object, each in its writer's order, met
    /// again in the next document; trying one takes a pass to check.
    orders: Vec<Vec<usize>>,
    /// Emptied containers of values given back ([`NodeParser::recycle`]), to be filled again:
    /// once a few rows are read, a row is read and dropped without an allocation.
    spare_members: Vec<Vec<(Cow<'a, str>, Node<'a>)>>,
    spare_items: Vec<Vec<Node<'a>>>,
    /// The depth of the object [`NodeParser::parse`] reads, in the containers of its document
    /// and itself (its members are looked up in `repeats`); 0 before the first parse.
    top: usize,
    /// What the containers of the last objects read held, by member position: a row's
    /// runtime, models and options are the same text row after row.
    repeats: Vec<Repeat<'a>>,
}

/// A container member of a top object (see [`NodeParser::repeated`]): its text, and once the
/// same text has been read twice, the value it is.
#[derive(Default)]
struct Repeat<'a> {
    text: &'a str,
    node: Option<(u64, Arc<Node<'a>>)>,
}

/// The next [`Node::Shared`]'s number: one counter for the process, so no two shared values
/// ever have the same one (a `u64` is not used up).
static NEXT_REPEAT: AtomicU64 = AtomicU64::new(1);

/// The shortest container text worth remembering: comparing bytes instead of reading them
/// only pays for more than a few tokens.
const MIN_REPEAT: usize = 64;

/// Spare containers kept at most, of each kind (a row of a ledger has about twenty).
const MAX_SPARES: usize = 256;

/// Orders of unsorted objects kept at most ([`NodeParser`]'s `orders`).
const MAX_ORDERS: usize = 16;

impl<'a> NodeParser<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The object or array at the very start of `text`, nested in `depth` containers of its
    /// document, and the bytes it takes; `None` where serde_json must decide (see the module).
    /// What follows the value is not looked at, as serde_json's `StreamDeserializer` does not
    /// for a value that ends with `}` or `]`.
    pub fn parse(&mut self, text: &'a str, depth: usize) -> Option<(Node<'a>, usize)> {
        if !matches!(text.as_bytes().first(), Some(b'{' | b'[')) {
            return None;
        }
        let mut c = Cursor {
            text,
            at: ByteCursor {
                b: text.as_bytes(),
                pos: 0,
            },
        };
        if self.top != depth + 1 {
            // What a container holds is the same at another depth, but whether it is
            // accepted is not (the nesting limit counts from the document's top).
            self.repeats.clear();
            self.top = depth + 1;
        }
        match self.value(&mut c, depth) {
            Some(node) => Some((node, c.pos)),
            None => {
                // A value given up halfway leaves its partial containers behind.
                self.members.clear();
                self.prefixes.clear();
                self.items.clear();
                None
            }
        }
    }

    /// Drop a value, keeping its containers' allocations for the values read next.
    pub fn recycle(&mut self, node: Node<'a>) {
        match node {
            Node::Object(m) => {
                let mut members = m.into_vec();
                for (_, v) in members.drain(..) {
                    self.recycle_inner(v);
                }
                if members.capacity() > 0 && self.spare_members.len() < MAX_SPARES {
                    self.spare_members.push(members);
                }
            }
            Node::Array(mut items) => {
                for v in items.drain(..) {
                    self.recycle_inner(v);
                }
                if items.capacity() > 0 && self.spare_items.len() < MAX_SPARES {
                    self.spare_items.push(items);
                }
            }
            _ => {}
        }
    }

    /// Recycle a member or item: a container by a call, anything else where it is (most
    /// values own nothing, and are let go without the call their drop would be).
    #[inline(always)]
    fn recycle_inner(&mut self, v: Node<'a>) {
        match v {
            Node::Object(_) | Node::Array(_) => self.recycle(v),
            Node::String(Cow::Owned(_)) | Node::Shared(..) => drop(v),
            Node::Null | Node::Bool(_) | Node::Number(_) | Node::String(Cow::Borrowed(_)) => {
                std::mem::forget(v)
            }
        }
    }

    fn value(&mut self, c: &mut Cursor<'a>, depth: usize) -> Option<Node<'a>> {
        match c.peek()? {
            b'{' => self.object(c, depth),
            b'[' => self.array(c, depth),
            _ => c.scalar(),
        }
    }

    #[inline(never)]
    fn object(&mut self, c: &mut Cursor<'a>, depth: usize) -> Option<Node<'a>> {
        let depth = enter(depth)?;
        // The object `parse` was asked for: its containers may repeat the last one's.
        let top = depth == self.top;
        let mut i = 0;
        c.pos += 1;
        c.ws();
        if c.peek()? == b'}' {
            c.pos += 1;
            return Some(Node::Object(Members::from_sorted(Vec::new())));
        }
        let base = self.members.len();
        loop {
            if c.peek()? != b'"' {
                return None;
            }
            let at = c.pos + 1;
            let key = c.string()?;
            let prefix = match key {
                // The eight bytes at the key, but those past its end (there are eight: the
                // text goes on at least with `":` and a value).
                Cow::Borrowed(k) if k.len() < 8 => (c.text.as_bytes().get(at..at + 8)).map_or_else(
                    || key_prefix(k),
                    |b| {
                        let all = u64::from_be_bytes(b.try_into().expect("eight bytes"));
                        all & !(u64::MAX >> (8 * k.len()))
                    },
                ),
                _ => key_prefix(&key),
            };
            c.ws();
            c.eat(b':')?;
            c.ws();
            let value = match c.peek()? {
                b'{' | b'[' if top => self.repeated(c, i, depth)?,
                b'{' => self.object(c, depth)?,
                b'[' => self.array(c, depth)?,
                _ => c.scalar()?,
            };
            i += 1;
            self.prefixes.push(prefix);
            self.members.push((key, value));
            c.ws();
            match c.next()? {
                b',' => c.ws(),
                b'}' => break,
                _ => return None,
            }
        }
        let members = self.sorted(base)?;
        Some(Node::Object(Members::from_sorted(members)))
    }

    /// The container at the cursor, the `i`th member of a top object (in `depth` containers):
    /// when its text is, byte for byte, what the same member of the last top object held
    /// (and that text was read twice), the value read then, shared; else read.
    ///
    /// The same text is the same value: a container's parse is decided by its bytes up to its
    /// closing bracket (nothing past it is looked at), and every member of a top object is
    /// at the same depth, so the text read at the cursor is the remembered text, and it is
    /// the remembered value, with every check it passed (keys, numbers, depth).
    #[inline(never)]
    fn repeated(&mut self, c: &mut Cursor<'a>, i: usize, depth: usize) -> Option<Node<'a>> {
        let start = c.pos;
        let seen = self.repeats.get(i).is_some_and(|r| {
            !r.text.is_empty() && c.text.as_bytes()[start..].starts_with(r.text.as_bytes())
        });
        if seen {
            if let Some((id, node)) = &self.repeats[i].node {
                c.pos += self.repeats[i].text.len();
                return Some(Node::Shared(*id, node.clone()));
            }
        }
        let node = match c.peek()? {
            b'{' => self.object(c, depth)?,
            _ => self.array(c, depth)?,
        };
        let text = &c.text[start..c.pos];
        if self.repeats.len() <= i {
            self.repeats.resize_with(i + 1, Repeat::default);
        }
        if text.len() < MIN_REPEAT {
            return Some(node);
        }
        if seen {
            // The second time: kept, to be shared from the third on.
            let node = Arc::new(node);
            let id = NEXT_REPEAT.fetch_add(1, Ordering::Relaxed);
            self.repeats[i] = Repeat {
                text,
                node: Some((id, node.clone())),
            };
            Some(Node::Shared(id, node))
        } else {
            self.repeats[i] = Repeat { text, node: None };
            Some(node)
        }
    }

    /// The members from `base` on, taken off the stack in key order; `None` if a key is there
    /// twice (as `NodeSeed`).
    fn sorted(&mut self, base: usize) -> Option<Vec<(Cow<'a, str>, Node<'a>)>> {
        let (members, prefixes) = (&self.members[base..], &self.prefixes[base..]);
        let less = |i: usize, j: usize| match prefixes[i].cmp(&prefixes[j]) {
            std::cmp::Ordering::Equal => members[i].0 < members[j].0,
            o => o.is_lt(),
        };
        let n = members.len();
        // Nested objects of a canonical document come sorted.
        let mut out = self.spare_members.pop().unwrap_or_default();
        if (1..n).all(|i| less(i - 1, i)) {
            out.extend(self.members.drain(base..));
        } else {
            // An order kept still sorts them if it leaves each key below the next (which also
            // says no key is there twice); else sort them, and keep the order (first).
            let sorts = |o: &Vec<usize>| o.len() == n && o.windows(2).all(|w| less(w[0], w[1]));
            match self.orders.iter().position(sorts) {
                Some(0) => {}
                Some(k) => self.orders[..=k].rotate_right(1),
                None => {
                    let mut order = if self.orders.len() < MAX_ORDERS {
                        Vec::with_capacity(n)
                    } else {
                        let mut last = self.orders.pop().unwrap_or_default();
                        last.clear();
                        last
                    };
                    order.extend(0..n);
                    order.sort_unstable_by(|&i, &j| {
                        prefixes[i]
                            .cmp(&prefixes[j])
                            .then_with(|| members[i].0.cmp(&members[j].0))
                    });
                    if !order.windows(2).all(|w| less(w[0], w[1])) {
                        return None;
                    }
                    self.orders.insert(0, order);
                }
            }
            let members = &mut self.members[base..];
            out.extend(
                (self.orders[0].iter()).map(|&i| std::mem::replace(&mut members[i], PLACEHOLDER)),
            );
            // The placeholders own nothing: let go without a drop call each.
            self.members.drain(base..).for_each(std::mem::forget);
        }
        self.prefixes.truncate(base);
        Some(out)
    }

    #[inline(never)]
    fn array(&mut self, c: &mut Cursor<'a>, depth: usize) -> Option<Node<'a>> {
        let depth = enter(depth)?;
        c.pos += 1;
        c.ws();
        if c.peek()? == b']' {
            c.pos += 1;
            return Some(Node::Array(Vec::new()));
        }
        let base = self.items.len();
        loop {
            let value = match c.peek()? {
                b'{' => self.object(c, depth)?,
                b'[' => self.array(c, depth)?,
                _ => c.scalar()?,
            };
            self.items.push(value);
            c.ws();
            match c.next()? {
                b',' => c.ws(),
                b']' => break,
                _ => return None,
            }
        }
        let mut out = self.spare_items.pop().unwrap_or_default();
        out.extend(self.items.drain(base..));
        Some(Node::Array(out))
    }
}

/// What a member taken out of order leaves on the stack until the stack is cut.
const PLACEHOLDER: (Cow<'_, str>, Node<'_>) = (Cow::Borrowed(""), Node::Null);

/// The depth of a container nested in one `depth` deep, if allowed (as `NodeSeed::enter`).
fn enter(depth: usize) -> Option<usize> {
    let depth = depth + 1;
    (depth <= MAX_DEPTH).then_some(depth)
}

/// A position in the text: the shared byte cursor (`peek`, `next`, `eat`, `ws`, `pos`), and
/// the text its strings are borrowed from.
struct Cursor<'a> {
    text: &'a str,
    at: ByteCursor<'a>,
}

impl<'a> std::ops::Deref for Cursor<'a> {
    type Target = ByteCursor<'a>;
    fn deref(&self) -> &ByteCursor<'a> {
        &self.at
    }
}

impl std::ops::DerefMut for Cursor<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.at
    }
}

impl<'a> Cursor<'a> {
    /// A value that is not a container, parsed in the loop that reads it: a `Node` returned
    /// through memory by a call and moved on stalls the loop (a store forwarded to a wider load).
    #[inline(always)]
    fn scalar(&mut self) -> Option<Node<'a>> {
        Some(match self.peek()? {
            b'"' => Node::String(self.string()?),
            b't' => self.literal("true", Node::Bool(true))?,
            b'f' => self.literal("false", Node::Bool(false))?,
            b'n' => self.literal("null", Node::Null)?,
            b'-' | b'0'..=b'9' => Node::Number(self.number()?),
            _ => return None,
        })
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> Option<Node<'a>> {
        let rest = &self.text.as_bytes()[self.pos..];
        rest.starts_with(word.as_bytes()).then(|| {
            self.pos += word.len();
            node
        })
    }

    /// The string at the cursor (on its `"`): borrowed when it has no escape. The text is a
    /// `str`, so the string is UTF-8; JSON refuses raw control characters in it.
    #[inline(always)]
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos + 1;
        let end = special(self.text.as_bytes(), start)?;
        match self.text.as_bytes()[end] {
            b'"' => {
                self.pos = end + 1;
                Some(Cow::Borrowed(&self.text[start..end]))
            }
            b'\\' => self.escaped(start, end).map(Cow::Owned),
            _ => None,
        }
    }

    /// The rest of a string from `start`, whose first escape is at `at`.
    #[cold]
    fn escaped(&mut self, start: usize, mut at: usize) -> Option<String> {
        let b = self.text.as_bytes();
        let mut out = String::with_capacity(at - start + 16);
        let mut from = start;
        loop {
            out.push_str(&self.text[from..at]);
            match b[at] {
                b'"' => {
                    self.pos = at + 1;
                    return Some(out);
                }
                b'\\' => {}
                _ => return None,
            }
            let (ch, len) = match *b.get(at + 1)? {
                b'"' => ('"', 2),
                b'\\' => ('\\', 2),
                b'/' => ('/', 2),
                b'b' => ('\x08', 2),
                b'f' => ('\x0c', 2),
                b'n' => ('\n', 2),
                b'r' => ('\r', 2),
                b't' => ('\t', 2),
                b'u' => unicode(b, at)?,
                _ => return None,
            };
            out.push(ch);
            from = at + len;
            at = special(b, from)?;
        }
    }

    /// The number at the cursor, as serde_json reads it: an integer without fraction or
    /// exponent is a `u64`, or an `i64` when negative (`-0` is the float `-0.0`); anything
    /// else is a correctly rounded, finite `f64` (serde_json's `float_roundtrip`, as
    /// `str::parse`). JSON's grammar is checked here: `str::parse` takes more (`+1`, `.5`,
    /// `1.`, `inf`).
    #[inline(always)]
    fn number(&mut self) -> Option<Num> {
        let b = self.text.as_bytes();
        let start = self.pos;
        let neg = b[start] == b'-';
        let mut i = start + usize::from(neg);
        let int_start = i;
        match b.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => i = digits(b, i),
            _ => return None,
        }
        let mut sig_digits = i - int_start;
        let mut float = false;
        if b.get(i) == Some(&b'.') {
            let frac = digits(b, i + 1);
            if frac == i + 1 {
                return None;
            }
            sig_digits += frac - (i + 1);
            i = frac;
            float = true;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp = digits(b, i);
            // A longer exponent is fine JSON, but rare: serde_json's long path decides.
            if exp == i || exp - i > 4 {
                return None;
            }
            i = exp;
            float = true;
        }
        self.pos = i;
        if float {
            // With at most 19 digits serde_json rounds the significand and exponent exactly,
            // as `str::parse` does; more digits take its other path, and serde_json decides.
            if sig_digits > 19 {
                return None;
            }
            let f: f64 = self.text[start..i].parse().ok()?;
            return f.is_finite().then_some(Num::Float(f));
        }
        let mut n: u64 = 0;
        for &d in &b[int_start..i] {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        match (neg, n) {
            (false, n) => Some(Num::Pos(n)),
            (true, 0) => Some(Num::Float(-0.0)),
            // Down to `i64::MIN`, whose magnitude is 2^63; below it serde_json makes a float.
            (true, n) if n <= 1 << 63 => Some(Num::Neg(0i64.wrapping_sub_unsigned(n))),
            (true, _) => None,
        }
    }
}

/// The end of the digits starting at `i`.
fn digits(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// The character of the `\u` escape at `at` and the bytes it takes: one escape, or two for a
/// surrogate pair. `None` for what serde_json refuses (a lone surrogate, a bad hex digit).
fn unicode(b: &[u8], at: usize) -> Option<(char, usize)> {
    let hi = hex4(b.get(at + 2..at + 6)?)?;
    match hi {
        0xD800..=0xDBFF => {
            if b.get(at + 6..at + 8)? != b"\\u" {
                return None;
            }
            let lo = hex4(b.get(at + 8..at + 12)?)?;
            if !(0xDC00..=0xDFFF).contains(&lo) {
                return None;
            }
            let c = 0x1_0000 + ((hi - 0xD800) << 10 | (lo - 0xDC00));
            Some((char::from_u32(c)?, 12))
        }
        0xDC00..=0xDFFF => None,
        _ => Some((char::from_u32(hi)?, 6)),
    }
}

/// The four hex digits of a `\u` escape (either case), as a code unit.
fn hex4(h: &[u8]) -> Option<u32> {
    let mut unit = [0u8; 2];
    faster_hex::hex_decode(h, &mut unit).ok()?;
    Some(u32::from(u16::from_be_bytes(unit)))
}

/// The first byte at or after `i` that ends a string's plain run: `"`, `\` or a control
/// character. Eight bytes at a time, as serde_json's own scan: in each of the three masks the
/// lowest flagged byte is a genuine match (a false flag only follows a genuine one, through
/// the borrow), so the lowest flag of their union is the first match.
fn special(b: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    let plain = |c: u8| c != b'"' && c != b'\\' && c >= 0x20;
    while let Some(chunk) = b.get(i..i + 8) {
        let v = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let quote = v ^ (ONES * u64::from(b'"'));
        let slash = v ^ (ONES * u64::from(b'\\'));
        let flags = (quote.wrapping_sub(ONES) & !quote)
            | (slash.wrapping_sub(ONES) & !slash)
            | (v.wrapping_sub(ONES * 0x20) & !v);
        let flags = flags & HIGH;
        if flags != 0 {
            return Some(i + flags.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    b.get(i..)?.iter().position(|&c| !plain(c)).map(|p| i + p)
}

/// [`NodeParser::parse`] with a fresh parser.
pub fn parse_node_prefix(text: &str, depth: usize) -> Option<(Node<'_>, usize)> {
    NodeParser::new().parse(text, depth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{stream_node_prefix, Obj};

    /// The same value down to the bits: `Debug` tells `-0.0` from `0.0`, `1` from `1.0`, and
    /// prints a float's shortest round-trip form.
    fn identical(a: &Node, b: &Node) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    /// `text` read both ways at `depth`: the hand parser's answer must be serde_json's.
    fn agree(text: &str, depth: usize) -> Option<(Node<'_>, usize)> {
        let direct = parse_node_prefix(text, depth);
        if let Some((node, len)) = &direct {
            let (want, want_len) = stream_node_prefix(text, depth)
                .unwrap_or_else(|e| panic!("{text:?}: accepted, serde_json says {e}"));
            assert!(identical(node, &want), "{text:?}: {node:?} / {want:?}");
            assert_eq!(*len, want_len, "{text:?}");
        }
        direct
    }

    #[test]
    fn what_it_reads_is_what_serde_json_reads() {
        for doc in [
            "{}",
            "[]",
            "[ ]",
            "{ }",
            "{\"a\":1}",
            " \n{}".trim_start(),
            "{\"b\": 1, \"a\": [1, -2, 2.5, 1e3, 0.1, 18446744073709551615, -9223372036854775808]}",
            "[0, -0, 0.0, -0.0, 1E5, 1e+5, 1e-5, 1.5E-0, -1.25e0003, 1e-400, -1e-400, 1e308]",
            "[5210.5, 86.63333333333334, 0.30000000000000004, 29.183333333333334, 5e-324]",
            "[1.7976931348623157e308, 2.2250738585072014e-308, 9007199254740993, 0.9999999999999999]",
            "[1234567890123456789, 123456789012345678.9, 9999999999999999999e-3, 12345678901234567890]",
            "[-9223372036854775807, -1, -922337203685477580.5, 1.00000000000000000e1]",
            "[true, false, null, \"\", \"x\", [[]], {\"\": {}}]",
            "{\"s\": \"plain\", \"é\": \"ü€😀\", \"\\u00e8\": 1}",
            "[\"esc\\\"aped\\n\\\\ \\/ \\b\\f\\r\\t\", \"\\u0000\\u001f\\u0041\\uFFFF\\ud83d\\ude00\"]",
            "[\"\\uD834\\uDD1E\", \"a\\u00e9b\\u20ACc\"]",
            "{\"nested\": {\"z\": {}, \"a\": [[], [{}]]}, \"\": \"\"}",
            "{\"b\": 1, \"a\": 2, \"ab\": 3, \"B\": 4, \"é\": 5, \"a\\u0000\": 6}",
            "{\"k\\u0061\": 1, \"kb\": 2}",
            "{\"a\" :\t1 ,\r\n\"c\"\n:\n[ 1 , 2 ] }",
            "{\"a\": 1} trailing text is the caller's",
            "[1]]",
        ] {
            assert!(agree(doc, 0).is_some(), "{doc:?}");
            assert!(agree(doc, 2).is_some(), "{doc:?}");
        }
    }

    #[test]
    fn it_gives_up_on_what_serde_json_refuses() {
        for doc in [
            "",
            "{",
            "[",
            "{\"a\"",
            "{\"a\":",
            "{\"a\": 1",
            "{\"a\": 1,",
            "[1,",
            "[1 2]",
            "{\"a\": 1,}",
            "[1,]",
            "{,}",
            "[,]",
            "{\"a\" 1}",
            "{a: 1}",
            "{'a': 1}",
            "{1: 1}",
            "{\"a\": 1, \"a\": 2}",
            "{\"a\": 1, \"b\": {\"x\": 1, \"y\": 2, \"x\": 3}}",
            "{\"b\": 1, \"a\": 2, \"b\": 3}",
            "{\"ka\": 1, \"k\\u0061\": 2}",
            "{\"é\": 1, \"\\u00e9\": 2}",
            "[01]",
            "[-01]",
            "[00]",
            "[1.]",
            "[.5]",
            "[-]",
            "[+1]",
            "[1e]",
            "[1e+]",
            "[1.e5]",
            "[-.5]",
            "[1e400]",
            "[-1e400]",
            "[1.0e+99999]",
            "[Infinity]",
            "[NaN]",
            "[inf]",
            "[0x10]",
            "[tru]",
            "[nul]",
            "[truex]",
            "[True]",
            "[\"unterminated]",
            "[\"tab\there\"]",
            "[\"nl\nhere\"]",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[\"\\u12G4\"]",
            "[\"\\ud800\"]",
            "[\"\\ud800x\"]",
            "[\"\\ud800\\n\"]",
            "[\"\\ud800\\u0041\"]",
            "[\"\\udc00\"]",
            "[\"\\",
            "[1\u{a0}]",
            "[1,\u{c}2]",
        ] {
            assert!(parse_node_prefix(doc, 0).is_none(), "{doc:?}");
            assert!(stream_node_prefix(doc, 0).is_err(), "{doc:?}");
        }
    }

    #[test]
    fn it_gives_up_on_what_it_leaves_to_serde_json() {
        // Valid JSON whose numbers take serde_json's long paths: left to it.
        for doc in [
            "[18446744073709551616]",
            "[-9223372036854775809]",
            "[123456789012345678901]",
            "[0.12345678901234567890]",
            "[1234567890123456789.0]",
            "[1e00001]",
            "[1e-99999]",
            "[0e99999999999]",
            // Values that are not a container (rows are objects), or after whitespace.
            " {}",
            "1",
            "\"s\"",
            "null",
        ] {
            assert!(parse_node_prefix(doc, 0).is_none(), "{doc:?}");
            assert!(stream_node_prefix(doc, 0).is_ok(), "{doc:?}");
        }
    }

    #[test]
    fn floats_round_as_serde_json_rounds_them() {
        // Pseudo-random decimals of up to 19 digits, many at the edges of f64's range and
        // halfway cases' length: where a parser that is not exact would differ.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut read = 0;
        for _ in 0..20_000 {
            let r = next();
            let digits = (r % 19 + 1) as usize;
            let mantissa = format!("{:019}", next() % 10_000_000_000_000_000_000);
            let (int, frac) = mantissa[..digits].split_at((r >> 8) as usize % digits);
            let int = int.trim_start_matches('0');
            let int = if int.is_empty() { "0" } else { int };
            let exp = (r >> 16) as i64 % 700 - 350;
            let sign = if r >> 40 & 1 == 1 { "-" } else { "" };
            let item = match (frac.is_empty(), r >> 41 & 1 == 1) {
                (true, _) => format!("{sign}{int}e{exp}"),
                (false, true) => format!("{sign}{int}.{frac}E{exp:+}"),
                (false, false) => format!("{sign}{int}.{frac}"),
            };
            // Some are out of range: both refuse them.
            read += usize::from(agree(&format!("[{item}]"), 0).is_some());
        }
        assert!(read > 15_000, "{read}");
    }

    #[test]
    fn the_depth_limit_counts_from_the_document_top() {
        for levels in 58..=66 {
            for depth in [0, 2] {
                let arrays = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
                let objects = format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels));
                for doc in [&arrays, &objects] {
                    let fits = levels + depth <= MAX_DEPTH;
                    assert_eq!(agree(doc, depth).is_some(), fits, "{levels} {depth}");
                    assert_eq!(stream_node_prefix(doc, depth).is_ok(), fits);
                }
            }
        }
    }

    #[test]
    fn a_parser_reused_after_giving_up_reads_the_next_value_whole() {
        let mut p = NodeParser::new();
        let text = "{\"a\": [1, {\"b\": 2}, {\"c\": [3, 1e999]}]}";
        assert!(p.parse(text, 0).is_none());
        let good = "{\"a\": [1, {\"b\": 2}], \"z\": {}}";
        let (node, len) = p.parse(good, 0).unwrap();
        assert_eq!(len, good.len());
        assert!(identical(&node, &stream_node_prefix(good, 0).unwrap().0));
    }

    #[test]
    fn members_come_sorted_whatever_order_came_before() {
        let mut p = NodeParser::new();
        for doc in [
            r#"{"b": 1, "a": 2, "c": 3}"#,
            r#"{"b": 1, "a": 2, "c": 3}"#,
            r#"{"b": 1, "a": 2, "a": 3}"#,
            r#"{"b": 1, "b": 2, "c": 3}"#,
            r#"{"b": 1, "a": 2, "c": 3}"#,
            r#"{"c": 1, "b": 2, "a": 3}"#,
            r#"{"c": 1, "b": 2, "a": 3, "d": {"y": 1, "x": 2}}"#,
            r#"{"c": 1, "b": 2, "a": 3, "d": {"y": 1, "x": 2, "y": 3}}"#,
            r#"{"c": 1, "b": 2, "a": 3}"#,
            r#"{"abcdefgh2": 1, "abcdefgh1": 2, "abcdefgh": 3, "abcdefg": 4}"#,
            r#"{"abcdefgh2": 1, "abcdefgh1": 2, "abcdefgh2": 3, "abcdefg": 4}"#,
            r#"{"abcdefgh1": 1, "abcdefgh2": 2, "abcdefgh": 3, "abcdefg": 4}"#,
        ] {
            let want = stream_node_prefix(doc, 0).ok();
            let got = p.parse(doc, 0);
            assert_eq!(got.is_some(), want.is_some(), "{doc}");
            if let (Some((a, _)), Some((b, _))) = (got, want) {
                assert!(identical(&a, &b), "{doc}");
            }
        }
    }

    /// Objects of many shapes, each in its own unsorted order, met again in turn (more shapes
    /// than orders are kept, so orders are dropped and made again), with keys doubled among
    /// them: each read as serde_json reads it.
    #[test]
    fn orders_kept_for_many_shapes_sort_each_as_serde_json_does() {
        let mut p = NodeParser::new();
        let shape = |n: usize, twice: bool| {
            let keys: Vec<String> = (0..n)
                .rev()
                .map(|k| format!("\"k{}\": {k}", if twice && k == 0 { 1 } else { k }))
                .collect();
            format!("{{{}}}", keys.join(", "))
        };
        let mut docs = Vec::new();
        for round in 0..3 {
            for n in 2..(MAX_ORDERS + 6) {
                docs.push(shape(n, false));
                docs.push(format!(
                    "{{\"outer\": {}, \"a\": {}}}",
                    shape(n, false),
                    shape(n + 1, false)
                ));
                if (n + round) % 5 == 0 {
                    docs.push(shape(n, true));
                }
            }
        }
        for doc in &docs {
            let want = stream_node_prefix(doc, 0).ok();
            let got = p.parse(doc, 0);
            assert_eq!(got.is_some(), want.is_some(), "{doc}");
            if let (Some((a, _)), Some((b, _))) = (got, want) {
                assert!(identical(&a, &b), "{doc}");
                p.recycle(a);
            }
        }
        assert!(p.orders.len() <= MAX_ORDERS);
    }

    #[test]
    fn recycled_containers_are_filled_again_from_empty() {
        let mut p = NodeParser::new();
        let docs = [
            r#"{"b": [1, 2, 3, {"x": [4, 5]}], "a": {"c": [], "d": {}}}"#,
            r#"{"a": [{"y": 1}], "b": [[[]]], "c": [6, 7, 8, 9, 10, 11, 12]}"#,
            r#"[1, {"z": [2]}, [3, [4]]]"#,
        ];
        for doc in docs.iter().cycle().take(9) {
            let (node, _) = p.parse(doc, 2).unwrap();
            assert!(
                identical(&node, &stream_node_prefix(doc, 2).unwrap().0),
                "{doc}"
            );
            p.recycle(node);
        }
        assert!(!p.spare_members.is_empty() && !p.spare_items.is_empty());
    }

    /// A row as rows come: the same runtime and models each time, the rest its own.
    fn row(i: usize, models: &str) -> String {
        format!(
            r#"{{"id": "t/{i:03}", "runtime": {{"deps": ["a==1", "b==2", "c==3"], "python": "3.12", "psutil": "6.1.0", "n": 1.5}}, "models": {models}, "checks": [{{"name": "t{i}", "ok": true}}], "small": [1]}}"#
        )
    }

    /// Whether the member `key` of a parsed object is held shared.
    fn shared(node: &Node, key: &str) -> bool {
        let Node::Object(m) = node else {
            panic!("an object")
        };
        matches!(m.get(key), Some(Node::Shared(..)))
    }

    #[test]
    fn a_container_repeated_byte_for_byte_is_read_once_and_shared() {
        let models = r#"{"roles": {"builder": {"effort": "high", "model": "m-large"}}, "p": "x"}"#;
        let docs: Vec<String> = (0..5).map(|i| row(i, models)).collect();
        let mut p = NodeParser::new();
        let mut held = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            let (node, len) = p.parse(doc, 2).unwrap();
            assert_eq!(len, doc.len());
            // The value is serde_json's, shared or not (Debug and == see through sharing).
            let want = stream_node_prefix(doc, 2).unwrap().0;
            assert!(identical(&node, &want), "{doc}");
            assert_eq!(node, want);
            // Read the first two times, and held shared from the second; a container of the
            // row's own (its checks) and one too short to pay (`small`) are never shared.
            assert_eq!(shared(&node, "runtime"), i >= 1, "{i}");
            assert_eq!(shared(&node, "models"), i >= 1, "{i}");
            assert!(!shared(&node, "checks") && !shared(&node, "small"));
            held.push(node);
        }
        // From the third on, not read at all: the second's value itself.
        fn value(n: &Node, key: &str) -> usize {
            match n {
                Node::Object(m) => match m.get(key) {
                    Some(Node::Shared(_, v)) => Arc::as_ptr(v) as usize,
                    _ => 0,
                },
                _ => 0,
            }
        }
        for key in ["runtime", "models"] {
            assert!(held[2..]
                .iter()
                .all(|n| value(n, key) == value(&held[1], key)));
        }
    }

    #[test]
    fn a_repeat_is_only_what_the_text_is() {
        let models = r#"{"roles": {"builder": {"effort": "high", "model": "m-large"}}, "p": "x"}"#;
        let first: Vec<String> = (0..3).map(|i| row(i, models)).collect();
        // The remembered text followed by more of the object: not the same text.
        let longer = models.replace(r#""p": "x"}"#, r#""p": "x", "q": 1}"#);
        // A byte changed, a key made a duplicate, a number made NaN-like: read, or given up.
        let changed = models.replace("high", "higH");
        let duplicate = models.replace(r#""p": "x""#, r#""roles": 1"#);
        let infinite = models.replace(r#""x""#, "1e999");
        let then: Vec<String> = [&longer, &changed, &duplicate, &infinite]
            .iter()
            .map(|m| row(9, m))
            .collect();
        let mut p = NodeParser::new();
        for doc in &first {
            p.parse(doc, 2).unwrap();
        }
        for doc in &then {
            let got = p.parse(doc, 2);
            let want = stream_node_prefix(doc, 2).ok();
            assert_eq!(got.is_some(), want.is_some(), "{doc}");
            if let (Some((node, len)), Some((want, want_len))) = (got, want) {
                assert!(identical(&node, &want), "{doc}");
                assert_eq!(len, want_len);
                assert!(!shared(&node, "models"), "{doc}");
            }
        }
    }

    #[test]
    fn a_repeat_read_at_one_depth_is_not_taken_at_another() {
        // A member nested to exactly the limit at depth 0: too deep two containers further down.
        let inner = format!(
            "{}\"padding to make the text long enough to remember\"{}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        let doc = format!("{{\"deep\": {inner}}}");
        let mut p = NodeParser::new();
        for _ in 0..3 {
            assert!(agree(&doc, 0).is_some());
            let (node, _) = p.parse(&doc, 0).unwrap();
            p.recycle(node);
        }
        assert!(stream_node_prefix(&doc, 2).is_err());
        assert!(p.parse(&doc, 2).is_none());
        // And back: read again at depth 0, the memory of it started anew.
        assert!(p.parse(&doc, 0).is_some());
    }

    #[test]
    fn the_scan_for_a_special_byte_finds_the_first() {
        let bytes: Vec<u8> = (0..=255).collect();
        // Every special byte at every offset of a run, after every other kind of byte.
        for &stop in &[b'"', b'\\', 0, 0x1f] {
            for &fill in &[b'a', b' ', 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xff] {
                for at in 0..24 {
                    let mut run = vec![fill; 30];
                    run[at] = stop;
                    run[at + 1..].copy_from_slice(&bytes[b'"' as usize..][..29 - at]);
                    for start in 0..=at {
                        assert_eq!(special(&run, start), Some(at), "{stop} {fill} {at}");
                    }
                }
            }
        }
        assert_eq!(special(b"abc", 0), None);
        assert_eq!(special(b"abcdefghijk", 3), None);
        assert_eq!(special(b"", 0), None);
        assert_eq!(special(b"ab", 3), None);
    }
}
