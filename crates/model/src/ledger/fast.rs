//! The fast path of [`Ledger::parse`](super::Ledger::parse): the rows are parsed strictly and
//! checked on every core, each core taking the next share of the document's bytes not yet
//! taken, and assembled in order: by the same code as the ordinary path ([`parse`]), or, for
//! [`parse_kept`], by comparing schedule positions and record-key hashes found on the cores
//! (anything else is left to the ordinary path).
//!
//! No core reads the whole document first. The `rows` list is cut into shares at guessed row
//! starts (the next `}`, `,` and `{` after k/n of the bytes, spaced like the list's first row),
//! and each share is parsed from its guessed start. A guess is only believed when proved: share
//! 0 starts at the list's genuine first row, and a share that parses whole rows from a genuine
//! row start and stops exactly at the next share's start proves that start genuine too. A guess
//! that is not proved (it fell inside a string or a nested list) costs a second, single-share
//! pass from the genuine start; nothing unproved is ever kept.
//!
//! It only ever says yes: any fault at all (invalid JSON or UTF-8 anywhere, a refused row, a
//! missing `rows`) makes it give up, and the ordinary path parses the document again and names
//! every fault, exactly as before. A ledger it accepts is the one the ordinary path builds.

use serde::de::{Deserialize, DeserializeSeed, Deserializer};
use serde_json::{Map, Value};
use std::hash::BuildHasher;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{
    assemble_rows, check_members, check_top, Checked, Keep, KeptRows, Ledger, Placed, Row,
};
use crate::declaration::Declaration;
use crate::error::Reasons;
use crate::json::{skip_ws, ByteCursor, Node, NodeParser, NodeSeed, StrictSeed, View};

/// Below this many bytes of rows one thread does it all.
const PARALLEL_BYTES: usize = 1 << 20;

/// Most threads used.
const MAX_THREADS: usize = 8;

/// Shares per core: rows do not all cost the same, and with a few shares each a core that is
/// done early takes another instead of waiting for the last one.
const SHARES_PER_CORE: usize = 4;

/// The ledger in `bytes`, when the fast path proves every row and rule holds (`None` for the
/// ordinary path to decide). Rows are read by [`NodeParser`] (serde_json where it gives up) and checked as [`Node`]s by
/// the same [`check_members`] as a [`Row`] (as [`parse_kept`] does); only a row that passes is
/// built into the `Map` a [`Row`] holds. The map is the one serde_json's strict parse builds.
pub(super) fn parse(decl: &Declaration, bytes: &[u8]) -> Option<Ledger> {
    let check = |row: &mut RowNode| -> Option<Checked> {
        let Node::Object(m) = &row.0 else {
            return None;
        };
        // The row's name matters only in a refusal, and the fast path refuses nothing.
        check_members(decl, m, &"a row").ok()?;
        let Value::Object(fields) = row.0.view().to_value() else {
            return None;
        };
        Some(Ok(Row::new(fields)))
    };
    Some(Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows: checked(decl, bytes, &check, &|_| {})?,
    })
}

/// [`parse`] keeping only what `keep` takes of each row, in schedule order: rows are parsed
/// into [`crate::json::Members`] (strings borrowed from the document), checked by the same
/// [`check_members`] as a [`Row`] and dropped on the core that parsed them, which also finds
/// each row's schedule position and hashes its record key (see [`placed`]).
///
/// `release` is told each stretch of `bytes` the parse is done with (see [`Release`]).
pub(super) fn parse_kept<K: Keep>(
    decl: &Declaration,
    bytes: &[u8],
    keep: &K,
    release: Release,
) -> Option<KeptRows<K::Kept>> {
    // Hashed with foldhash, not SipHash (2% of a 100,000-row report): two keys hashing alike
    // only send the ledger to the ordinary path, which compares the keys themselves.
    let keys = foldhash::fast::RandomState::default();
    let check = |row: &mut RowNode| -> Option<Placed<K::Kept>> {
        let Node::Object(m) = &row.0 else {
            return None;
        };
        let (pos, row) = check_members(decl, m, &"a row").ok()?;
        Some(Placed {
            pos: u32::try_from(pos).ok()?,
            // The key `<kind>:<id>` hashed as its two parts, without building it: a checked
            // row's kind is one of a few words without `:`, so the pairs are equal exactly
            // when the keys are. (A hash of 0 is taken as 1: one more way to collide.)
            record: row.native_record().map(|rec| {
                NonZeroU64::new(keys.hash_one((rec.kind, rec.id))).unwrap_or(NonZeroU64::MIN)
            }),
            kept: keep.keep(decl, row),
        })
    };
    let (top, shares) = document(bytes, threads(), &check, &kept_share, release)?;
    top_ok(decl, top)?;
    placed(decl.schedule_len(), shares)
}

/// What [`parse_kept`] keeps of a share, made on the core that parsed it: the rows' kept
/// values alone, their positions checked to follow one another (only the first is kept) and
/// their record hashes in a list of their own. The rows' placings (40 bytes each) are held
/// for a share at a time, not for every row until the last is parsed: at 1,000,000 rows that
/// was 40 MB where the kept values are 24.
struct KeptShare<T> {
    first: usize,
    rows: Vec<T>,
    records: Vec<NonZeroU64>,
}

/// [`KeptShare`] of a share's placed rows; `None` when their positions do not follow one
/// another (the ordinary path decides).
fn kept_share<T>(placed: Vec<Placed<T>>) -> Option<KeptShare<T>> {
    let first = placed.first().map_or(0, |p| p.pos as usize);
    let records = placed.iter().filter_map(|p| p.record).collect();
    let mut rows = Vec::with_capacity(placed.len());
    for (i, p) in placed.into_iter().enumerate() {
        if p.pos as usize != first + i {
            return None;
        }
        rows.push(p.kept);
    }
    Some(KeptShare {
        first,
        rows,
        records,
    })
}

/// The kept rows, when they show at a glance that the ledger-level rules hold: exactly one
/// row per schedule position, in schedule order, and no two record keys hashing alike (so no
/// record fills two rows). Anything else, a ledger those rules refuse or two distinct keys
/// whose hashes collide, gives up: the ordinary path decides and names the fault. This keeps
/// the one pass over 100,000 rows that cannot be shared between cores to comparing integers,
/// where building the ordinary path's maps of ids and keys was a sixth of a report's time.
fn placed<T>(n: usize, mut shares: Vec<KeptShare<T>>) -> Option<KeptRows<T>> {
    let mut i = 0;
    for share in &shares {
        if !share.rows.is_empty() && share.first != i {
            return None;
        }
        i += share.rows.len();
    }
    if i != n {
        return None;
    }
    // Each share's list is moved into one and let go, so that the hashes are held about once.
    let mut records = Vec::with_capacity(n);
    for share in &mut shares {
        records.extend(std::mem::take(&mut share.records));
    }
    records.sort_unstable();
    if records.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    Some(KeptRows(shares.into_iter().map(|s| s.rows).collect()))
}

/// Whether the document's top level (without `rows`) passes the ledger's checks.
fn top_ok(decl: &Declaration, top: Map<String, Value>) -> Option<()> {
    let mut r = Reasons::new();
    check_top(&mut r, decl, &Value::Object(top)).ok()?;
    r.is_empty().then_some(())
}

/// The rows of the document, each checked by `check` (`None` at a fault), the top level
/// checked and the rows assembled in schedule order as on the ordinary path.
fn checked<'a, R: RowText<'a>>(
    decl: &Declaration,
    bytes: &'a [u8],
    check: &(impl Fn(&mut R) -> Option<Checked> + Sync),
    release: Release,
) -> Option<Vec<Row>> {
    let (top, checked) = document(bytes, threads(), check, &Some, release)?;
    top_ok(decl, top)?;
    assemble_rows(decl, Reasons::new(), checked.into_iter().flatten(), true).ok()
}

/// How many shares to cut a large `rows` list into.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
}

/// A row parsed strictly at the depth rows have in the document (the document's object, then
/// its `rows` list: a row is two containers deep).
#[cfg(test)]
struct StrictRow(Value);

#[cfg(test)]
impl<'de> Deserialize<'de> for StrictRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        StrictSeed { depth: 2 }.deserialize(d).map(StrictRow)
    }
}

/// A row parsed strictly into a [`Node`], two containers deep as [`StrictRow`].
struct RowNode<'a>(Node<'a>);

impl<'de> Deserialize<'de> for RowNode<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        NodeSeed { depth: 2 }.deserialize(d).map(RowNode)
    }
}

/// How a share reads a row: serde_json, unless a hand parser is sure of it first.
trait RowText<'a>: Deserialize<'a> {
    /// The row at the start of `text` and the bytes it takes, or `None` to let serde_json read
    /// it (a hand parser's value must be the one serde_json would give).
    fn direct(_parser: &mut NodeParser<'a>, _text: &'a str) -> Option<(Self, usize)> {
        None
    }
    /// Drop a checked row (giving what it can back to the parser).
    fn recycle(self, _parser: &mut NodeParser<'a>) {}
}

#[cfg(test)]
impl<'a> RowText<'a> for StrictRow {}

/// Rows are the report's bulk: [`NodeParser`] reads them, and takes their containers back.
impl<'a> RowText<'a> for RowNode<'a> {
    fn direct(parser: &mut NodeParser<'a>, text: &'a str) -> Option<(Self, usize)> {
        parser
            .parse(text, 2)
            .map(|(node, len)| (RowNode(node), len))
    }
    fn recycle(self, parser: &mut NodeParser<'a>) {
        parser.recycle(self.0);
    }
}

/// A value of the document's top-level object, parsed strictly one container deep.
struct StrictMember(Value);

impl<'de> Deserialize<'de> for StrictMember {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        StrictSeed { depth: 1 }.deserialize(d).map(StrictMember)
    }
}

/// The rows of each share, in document order.
#[cfg(test)]
type Shares<T> = Vec<Vec<T>>;

/// The document's top-level object without `rows`, and `check` of each row (`None` at the
/// first fault), using up to `threads` cores; each share's checked rows are turned by `finish`
/// into what is kept of the share, on the core that parsed it (`None` gives up, as a fault
/// does; `&Some` keeps them as they are).
fn document<'a, R: RowText<'a>, T, U: Send>(
    bytes: &'a [u8],
    threads: usize,
    check: &(impl Fn(&mut R) -> Option<T> + Sync),
    finish: &(impl Fn(Vec<T>) -> Option<U> + Sync),
    release: Release,
) -> Option<(Map<String, Value>, Vec<U>)> {
    let mut c = ByteCursor { b: bytes, pos: 0 };
    let mut top = Map::new();
    c.ws();
    c.eat(b'{')?;
    c.ws();
    if c.peek() == Some(b'}') || !members(&mut c, &mut top, true)? {
        return None; // no `rows`: the ordinary path says so
    }
    c.eat(b'[')?;
    let open = c.pos;
    c.ws();
    let (rows, close) = if c.peek() == Some(b']') {
        (Vec::new(), c.pos + 1)
    } else {
        let first = c.pos;
        // A row begins where the first one does, after the same spacing.
        let sep = &bytes[open..first];
        let n = if bytes.len() - first < PARALLEL_BYTES {
            1
        } else {
            (threads * SHARES_PER_CORE).max((bytes.len() - first) / SHARE_BYTES)
        };
        rows(
            bytes,
            &guesses(bytes, first, sep, n, release),
            check,
            finish,
            release,
        )?
    };
    c.pos = close;
    c.ws();
    match c.next()? {
        b',' => {
            if members(&mut c, &mut top, false)? {
                return None; // `rows` twice
            }
        }
        b'}' => {}
        _ => return None,
    }
    c.ws();
    (c.pos == bytes.len()).then_some((top, rows))
}

/// Parse the members of the top-level object up to and including its closing `}` (`false`),
/// or up to the value of `rows` (`true`, the cursor on that value) when `rows_next` allows it.
fn members(c: &mut ByteCursor, top: &mut Map<String, Value>, rows_next: bool) -> Option<bool> {
    loop {
        c.ws();
        let key: String = c.value()?;
        c.ws();
        c.eat(b':')?;
        c.ws();
        if key == "rows" {
            return rows_next.then_some(true);
        }
        if top.contains_key(&key) {
            return None;
        }
        let StrictMember(v) = c.value()?;
        top.insert(key, v);
        c.ws();
        match c.next()? {
            b',' => {}
            b'}' => return Some(false),
            _ => return None,
        }
    }
}

/// Where up to `n` shares of the rows begin: the genuine first row at `first`, then a guessed
/// row start after each k/n of the remaining bytes (strictly increasing).
///
/// What each guess read is given back at once: a fault maps a whole folio of the page cache
/// (up to 2 MB), and the 536 guesses of a 1,000,000-row ledger left 170 MB resident until
/// the share at each one was parsed (each share maps its own pages again when it gets there).
fn guesses(bytes: &[u8], first: usize, sep: &[u8], n: usize, release: Release) -> Vec<usize> {
    let mut starts = vec![first];
    let span = bytes.len() - first;
    for k in 1..n {
        let last = *starts.last().expect("one start");
        let from = (first + span / n * k).max(last + 1);
        let next = next_row_start(bytes, from, sep);
        release(from..next.map_or(bytes.len(), |p| p + 1));
        match next {
            Some(p) => starts.push(p),
            None => break,
        }
    }
    starts
}

/// The first plausible row start at or after `from`: a `{` after `}`, whitespace, `,` and
/// exactly `sep`. Only plausible: it may lie in a string or a nested list.
fn next_row_start(bytes: &[u8], from: usize, sep: &[u8]) -> Option<usize> {
    let mut i = from;
    loop {
        let close = i + bytes.get(i..)?.iter().position(|&b| b == b'}')?;
        let comma = skip_ws(bytes, close + 1);
        if bytes.get(comma) == Some(&b',') {
            let open = comma + 1 + sep.len();
            if bytes[comma + 1..].starts_with(sep) && bytes.get(open) == Some(&b'{') {
                return Some(open);
            }
        }
        i = close + 1;
    }
}

/// The checked rows of every share (in order), each share finished by `finish` (see
/// [`document`]), and the position after the list's `]`; `None` at a fault. Shares whose
/// starts are not all proved are done again as one share.
fn rows<'a, R: RowText<'a>, T, U: Send>(
    bytes: &'a [u8],
    starts: &[usize],
    check: &(impl Fn(&mut R) -> Option<T> + Sync),
    finish: &(impl Fn(Vec<T>) -> Option<U> + Sync),
    release: Release,
) -> Option<(Vec<U>, usize)> {
    if starts.len() > 1 {
        match shares(bytes, starts, check, finish, release) {
            Spec::Done(rows, close) => return Some((rows, close)),
            Spec::Fault => return None,
            Spec::Unproved => {}
        }
    }
    // One share from the genuine first row: nothing to prove.
    match shares(bytes, &starts[..1], check, finish, release) {
        Spec::Done(rows, close) => Some((rows, close)),
        _ => None,
    }
}

/// What a speculative cut came to.
#[derive(Debug)]
enum Spec<U> {
    /// Every share's start proved; what was kept of each and the position after `]`.
    Done(Vec<U>, usize),
    /// A fault in a share whose start is proved: the document is refused.
    Fault,
    /// A guessed start was not a row start.
    Unproved,
}

/// Parse and check every share on its own core (share 0 on this one), each finished by
/// `finish` there, and keep the result only if each share ended exactly where the next one
/// began.
fn shares<'a, R: RowText<'a>, T, U: Send>(
    bytes: &'a [u8],
    starts: &[usize],
    check: &(impl Fn(&mut R) -> Option<T> + Sync),
    finish: &(impl Fn(Vec<T>) -> Option<U> + Sync),
    release: Release,
) -> Spec<U> {
    let share = |k: usize| {
        let (rows, end) = share(bytes, starts[k], starts.get(k + 1).copied(), check, release)?;
        Some((finish(rows)?, end))
    };
    let workers = threads().min(starts.len());
    let results: Vec<Option<(U, End)>> = if workers == 1 {
        (0..starts.len()).map(share).collect()
    } else {
        // Each core takes the next share not yet taken, so a core whose shares parse faster
        // does more of them rather than wait for the other.
        let next = AtomicUsize::new(0);
        let work = || {
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= starts.len() {
                    return done;
                }
                done.push((k, share(k)));
            }
        };
        let done = std::thread::scope(|s| {
            let handles: Vec<_> = (1..workers).map(|_| s.spawn(work)).collect();
            let mut done = work();
            for h in handles {
                done.extend(h.join().ok()?);
            }
            Some(done)
        });
        let Some(mut done) = done else {
            return Spec::Fault;
        };
        done.sort_unstable_by_key(|(k, _)| *k);
        done.into_iter().map(|(_, r)| r).collect()
    };
    let last = results.len() - 1;
    let mut rows = Vec::with_capacity(results.len());
    for (k, result) in results.into_iter().enumerate() {
        // Share k starts at a genuine row: share 0 at the first, and share k-1 ended at it.
        let Some((checked, end)) = result else {
            return Spec::Fault;
        };
        rows.push(checked);
        match end {
            End::Next if k < last => {}
            End::Close(close) if k == last => return Spec::Done(rows, close),
            _ => return Spec::Unproved,
        }
    }
    unreachable!("the last share ends the loop")
}

/// How a share ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// After a row, `,` and whitespace, exactly at the next share's start.
    Next,
    /// At the list's `]`: the position after it.
    Close(usize),
    /// Not at a row boundary: the next share's start lay inside a row, or the list ended first.
    Missed,
}

/// Parse and check the rows from `start` (up to the next share's `stop`, or to the list's
/// end); `None` at a fault. Faults are genuine only when `start` is (see [`shares`]).
fn share<'a, R: RowText<'a>, T>(
    bytes: &'a [u8],
    start: usize,
    stop: Option<usize>,
    check: &impl Fn(&mut R) -> Option<T>,
    release: Release,
) -> Option<(Vec<T>, End)> {
    let end = stop.unwrap_or(bytes.len());
    let text = utf8(&bytes[start..end], start, release)?;
    // Whatever the share comes to, the stretch it read is done with.
    let _released = Released(start..end, release);
    let mut out = Vec::new();
    let mut parser = NodeParser::new();
    let mut pos = 0;
    let mut done = 0;
    loop {
        if pos - done >= SHARE_BYTES {
            release(start + done..start + pos);
            done = pos;
        }
        if text.as_bytes().get(pos) != Some(&b'{') {
            return None;
        }
        let (mut row, len) = match R::direct(&mut parser, &text[pos..]) {
            Some(read) => read,
            // serde_json decides, as it did before there was a hand parser: a row cut at the
            // share's end is told apart from a fault by its error.
            None => {
                let mut de = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<R>();
                match de.next()? {
                    Ok(row) => (row, de.byte_offset()),
                    // The share was cut inside this row: its start is not the next share's.
                    Err(e) if stop.is_some() && e.is_eof() => return Some((out, End::Missed)),
                    Err(_) => return None,
                }
            }
        };
        let kept = check(&mut row)?;
        if out.is_empty() {
            // Room for as many rows as the share holds if they are all as long as this one
            // (checked: a row that passes has every declared field, so no tiny row can ask
            // for a huge reservation).
            out.reserve(text.len() / len.max(1) + 1);
        }
        out.push(kept);
        row.recycle(&mut parser);
        pos = skip_ws(text.as_bytes(), pos + len);
        match text.as_bytes().get(pos) {
            Some(b',') => {
                pos = skip_ws(text.as_bytes(), pos + 1);
                if pos == text.len() && stop.is_some() {
                    return Some((out, End::Next));
                }
            }
            Some(b']') if stop.is_none() => return Some((out, End::Close(start + pos + 1))),
            Some(b']') => return Some((out, End::Missed)),
            None if stop.is_some() => return Some((out, End::Missed)),
            _ => return None,
        }
    }
}

/// Told each stretch of the document's bytes a parse is done with, so that a mapped file's
/// pages can be given back as the rows are read ([`crate::json::Input::release`]): what
/// stays resident is the stretch each core is reading, not the document.
pub type Release<'r> = &'r (dyn Fn(std::ops::Range<usize>) + Sync);

/// The most bytes of rows a share takes (more shares for a larger document), and the
/// stretch a long share reads before it releases what it read.
const SHARE_BYTES: usize = 4 << 20;

/// Releases its range when dropped (however the share ends).
struct Released<'r>(std::ops::Range<usize>, Release<'r>);

impl Drop for Released<'_> {
    fn drop(&mut self) {
        (self.1)(self.0.clone());
    }
}

/// `bytes` (at `offset` in the document) as text if it is UTF-8, checked a stretch at a time
/// and each stretch released once checked, so that checking a long share (the one-share pass
/// over a whole list) does not make it all resident at once.
fn utf8<'a>(bytes: &'a [u8], offset: usize, release: Release) -> Option<&'a str> {
    let mut from = 0;
    while bytes.len() - from > SHARE_BYTES {
        let mut to = from + SHARE_BYTES;
        // Never between the bytes of one character: back to the start of the one at `to`.
        while to > from && bytes[to] & 0xC0 == 0x80 {
            to -= 1;
        }
        if to == from {
            return None; // a stretch of continuation bytes only
        }
        std::str::from_utf8(&bytes[from..to]).ok()?;
        release(offset + from..offset + to);
        from = to;
    }
    if from == 0 {
        return std::str::from_utf8(bytes).ok();
    }
    std::str::from_utf8(&bytes[from..]).ok()?;
    // SAFETY: every stretch `bytes[a..b]` was checked UTF-8, each cut at a character's first
    // byte, so their concatenation, `bytes`, is UTF-8.
    #[allow(unsafe_code)]
    Some(unsafe { std::str::from_utf8_unchecked(bytes) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `check` of the split: a row (parsed strictly) is refused when it has `"bad"`.
    fn keep_good(v: &mut StrictRow) -> Option<Value> {
        v.0.get("bad").is_none().then(|| std::mem::take(&mut v.0))
    }

    /// The rows of `doc` as `document` reads them with the given guessed starts, flattened.
    fn with_starts(doc: &str, starts: &[usize]) -> Option<(Vec<Value>, usize)> {
        rows(doc.as_bytes(), starts, &keep_good, &Some, &|_| {})
            .map(|(rows, close)| (rows.into_iter().flatten().collect(), close))
    }

    fn speculate(doc: &str, starts: &[usize]) -> Spec<Vec<Value>> {
        shares(doc.as_bytes(), starts, &keep_good, &Some, &|_| {})
    }

    fn doc_of(rows: &[Value], pretty: bool) -> String {
        let d = json!({"format": "f", "rows": rows, "z": 1});
        if pretty {
            serde_json::to_string_pretty(&d).unwrap()
        } else {
            d.to_string()
        }
    }

    fn first_row(doc: &str) -> usize {
        doc.find("\"rows\"").unwrap() + doc[doc.find("\"rows\"").unwrap()..].find('{').unwrap()
    }

    /// Every row start, found by parsing the rows as the ordinary path does.
    fn row_starts(doc: &str) -> Vec<usize> {
        let first = first_row(doc);
        let mut out = vec![first];
        let mut pos = first;
        loop {
            let mut de = serde_json::Deserializer::from_str(&doc[pos..]).into_iter::<Value>();
            de.next().unwrap().unwrap();
            pos = skip_ws(doc.as_bytes(), pos + de.byte_offset());
            if doc.as_bytes()[pos] == b']' {
                return out;
            }
            pos = skip_ws(doc.as_bytes(), pos + 1);
            out.push(pos);
        }
    }

    fn tricky_rows() -> Vec<Value> {
        vec![
            json!({"s": "},{", "n": 1}),
            json!({"s": "}, {\"x\": \"\\\"},\n    {", "n": 2}),
            json!({"nested": [{"a": 1}, {"b": {"c": [{}, {}]}}], "n": 3}),
            json!({"s": "\\", "n": 4}),
            json!({"n": 5}),
        ]
    }

    #[test]
    fn proved_guesses_give_every_row_once_in_order() {
        for pretty in [true, false] {
            let rows = tricky_rows();
            let doc = doc_of(&rows, pretty);
            let starts = row_starts(&doc);
            assert_eq!(starts.len(), rows.len());
            let close = doc[..doc.rfind("\"z\"").unwrap()].rfind(']').unwrap() + 1;
            // Every subset of the genuine starts that keeps the first is proved.
            for mask in 0..1u32 << (starts.len() - 1) {
                let mut cut = vec![starts[0]];
                cut.extend(
                    (1..starts.len())
                        .filter(|k| mask & 1 << (k - 1) != 0)
                        .map(|k| starts[k]),
                );
                match speculate(&doc, &cut) {
                    Spec::Done(shares, end) => {
                        assert_eq!(shares.len(), cut.len());
                        assert_eq!(shares.into_iter().flatten().collect::<Vec<_>>(), rows);
                        assert_eq!(end, close, "{doc}");
                    }
                    other => panic!("{cut:?}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn a_guess_inside_a_row_is_not_proved_and_one_share_reads_all() {
        for pretty in [true, false] {
            let rows = tricky_rows();
            let doc = doc_of(&rows, pretty);
            let genuine = row_starts(&doc);
            let first = genuine[0];
            // Every `{` that is not a row start (in strings, in nested objects and lists).
            let wrong: Vec<usize> = doc
                .match_indices('{')
                .map(|(i, _)| i)
                .filter(|i| *i > first && !genuine.contains(i))
                .collect();
            assert!(wrong.len() >= 6, "{doc}");
            for &w in &wrong {
                assert!(
                    matches!(speculate(&doc, &[first, w]), Spec::Unproved),
                    "{w} in {doc}"
                );
                let (got, _) = with_starts(&doc, &[first, w]).unwrap();
                assert_eq!(got, rows);
                // Also as the third share, after a proved one.
                if w > genuine[1] {
                    let cut = [first, genuine[1], w];
                    assert!(matches!(speculate(&doc, &cut), Spec::Unproved));
                    assert_eq!(with_starts(&doc, &cut).unwrap().0, rows);
                }
            }
        }
    }

    #[test]
    fn the_guesses_skip_nested_lists_and_strings_when_pretty() {
        let rows: Vec<Value> = (0..200).map(|n| tricky_rows()[n % 5].clone()).collect();
        let doc = doc_of(&rows, true);
        let first = first_row(&doc);
        let sep = &doc.as_bytes()[doc.find('[').unwrap() + 1..first];
        let genuine = row_starts(&doc);
        for n in 2..=7 {
            let starts = guesses(doc.as_bytes(), first, sep, n, &|_| {});
            assert_eq!(starts.len(), n);
            assert!(starts.iter().all(|s| genuine.contains(s)), "{starts:?}");
            assert!(matches!(speculate(&doc, &starts), Spec::Done(..)));
        }
    }

    #[test]
    fn a_fault_in_any_share_is_found() {
        let mut rows = tricky_rows();
        for bad in 0..rows.len() {
            rows[bad]["bad"] = json!(true);
            let doc = doc_of(&rows, true);
            let starts = row_starts(&doc);
            for cut in [
                &starts[..1],
                &starts[..2],
                &starts[..],
                &[starts[0], starts[3]],
            ] {
                assert!(matches!(speculate(&doc, cut), Spec::Fault), "{bad} {cut:?}");
                assert!(with_starts(&doc, cut).is_none());
            }
            rows[bad].as_object_mut().unwrap().remove("bad");
        }
        // Invalid JSON in the last share, invalid UTF-8 in the first.
        let doc = doc_of(&rows, true);
        let starts = row_starts(&doc);
        let broken = doc.replacen("\"n\": 5", "\"n\": 5,", 1);
        assert!(matches!(speculate(&broken, &starts), Spec::Fault));
        let mut bytes = doc.clone().into_bytes();
        bytes[starts[0] + 8] = 0xff;
        assert!(rows_of_bytes(&bytes, &starts).is_none());
    }

    fn rows_of_bytes(bytes: &[u8], starts: &[usize]) -> Option<(Shares<Value>, usize)> {
        rows(bytes, starts, &keep_good, &Some, &|_| {})
    }

    /// What is held of every row until the last is parsed is its kept value and its record
    /// hash (24 + 8 bytes with a report's summary); the placing (40) only for a share.
    #[test]
    fn a_kept_row_stays_small() {
        use crate::report::RowSummary;
        assert_eq!(std::mem::size_of::<RowSummary>(), 24);
        assert_eq!(std::mem::size_of::<super::Placed<RowSummary>>(), 40);
    }

    /// A share's placed rows are kept when their positions follow one another, else the fast
    /// path gives up; the shares must then follow one another and fill the schedule.
    #[test]
    fn kept_shares_follow_one_another() {
        use std::num::NonZeroU64;
        let place = |pos: u32, record: Option<u64>| super::Placed {
            pos,
            record: record.and_then(NonZeroU64::new),
            kept: pos,
        };
        let a = super::kept_share(vec![place(0, Some(7)), place(1, None)]).unwrap();
        assert_eq!((a.first, a.rows.clone()), (0, vec![0, 1]));
        assert_eq!(a.records, vec![NonZeroU64::new(7).unwrap()]);
        assert!(super::kept_share(vec![place(0, None), place(2, None)]).is_none());
        let b = || super::kept_share(vec![place(2, Some(9))]).unwrap();
        let kept = super::placed(3, vec![a, b()]).expect("one row per position");
        assert_eq!(kept.iter().copied().collect::<Vec<_>>(), vec![0, 1, 2]);
        // A gap, a short schedule, a record twice.
        let a = || super::kept_share(vec![place(0, Some(7)), place(1, None)]).unwrap();
        assert!(super::placed(4, vec![a(), b()]).is_none());
        let c = super::kept_share(vec![place(3, None)]).unwrap();
        assert!(super::placed(3, vec![a(), c]).is_none());
        let twice = super::kept_share(vec![place(2, Some(7))]).unwrap();
        assert!(super::placed(3, vec![a(), twice]).is_none());
    }

    /// Text longer than a stretch is checked a stretch at a time, cut only between characters,
    /// every stretch released once checked; a fault anywhere is still a fault.
    #[test]
    fn utf8_by_stretches() {
        let released = std::sync::Mutex::new(Vec::new());
        let release = |r: std::ops::Range<usize>| released.lock().unwrap().push(r);
        // "é" is two bytes and "€" three: the cuts fall inside characters at every phase.
        let text = "aé€".repeat(SHARE_BYTES / 3 + 7);
        assert_eq!(utf8(text.as_bytes(), 10, &release), Some(text.as_str()));
        let got = released.lock().unwrap().clone();
        assert!(got.len() >= 2, "{got:?}");
        assert_eq!(got[0].start, 10);
        for w in got.windows(2) {
            assert_eq!(w[0].end, w[1].start, "{got:?}");
        }
        let mut bad = text.clone().into_bytes();
        let at = bad.len() - 2;
        bad[at] = 0xff;
        assert_eq!(utf8(&bad, 0, &release), None);
        let mut bad = text.into_bytes();
        bad[1] = 0xff;
        assert_eq!(utf8(&bad, 0, &release), None);
        assert_eq!(utf8(&[0x80; SHARE_BYTES + 1], 0, &release), None);
    }

    /// The whole document through [`document`], with the guesses it makes itself.
    fn read(doc: &str, threads: usize) -> Option<(Map<String, Value>, Vec<Value>)> {
        document(doc.as_bytes(), threads, &keep_good, &Some, &|_| {})
            .map(|(top, rows)| (top, rows.into_iter().flatten().collect()))
    }

    #[test]
    fn the_document_is_read_whole_and_strictly() {
        let rows = tricky_rows();
        for pretty in [true, false] {
            for n in [0, 1, 5] {
                let doc = doc_of(&rows[..n], pretty);
                for threads in [1, 2, 3] {
                    let (top, got) = read(&doc, threads).unwrap();
                    assert_eq!(got, rows[..n]);
                    assert_eq!(Value::Object(top), json!({"format": "f", "z": 1}));
                }
            }
        }
        let good = doc_of(&rows, true);
        for bad in [
            good.replacen("\"format\"", "\"rows\": [], \"format\"", 1),
            good.replacen("\"format\"", "\"z\": 2, \"format\"", 1),
            good.replacen("\"format\": \"f\",", "", 1).replacen('{', "{\"z\": 0,", 1),
            format!("{good} {{}}"),
            format!("{good},"),
            good.replacen("\"z\": 1", "\"z\": 1,", 1),
            good.replacen("\"z\": 1", "\"z\": NaN", 1),
            good.replacen("\"z\": 1", "\"z\": 1e999", 1),
            good.replacen("\"n\": 5", "\"n\": 5, \"n\": 5", 1),
            good.replacen("\"n\": 5\n    }", "\"n\": 5\n    },", 1),
            good.replacen("\"n\": 5", "\"n\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 1),
            r#"{"format": "f"}"#.to_owned(),
            r#"{"rows": 1}"#.to_owned(),
            r#"{"rows": [1]}"#.to_owned(),
            "{}".to_owned(),
            "[]".to_owned(),
        ] {
            assert_eq!(read(&bad, 2), None, "{bad}");
        }
        // The depth limit counts from the document's top, as the ordinary parse does.
        for levels in 58..64 {
            let nest = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
            let deep = good.replacen("\"n\": 5", &format!("\"n\": {nest}"), 1);
            let whole = crate::json::parse_strict(deep.as_bytes()).is_ok();
            assert_eq!(read(&deep, 2).is_some(), whole, "{levels}");
            assert_eq!(whole, levels <= 61);
        }
        // Invalid UTF-8 in a string of a row or of the top level.
        for at in [
            good.find("\"},{\"").unwrap() + 1,
            good.find("\"f\"").unwrap() + 1,
        ] {
            let mut bytes = good.clone().into_bytes();
            bytes[at] = 0xff;
            assert!(
                document(&bytes, 2, &keep_good, &Some, &|_| {}).is_none(),
                "{at}"
            );
        }
    }

    #[test]
    fn a_large_list_is_cut_at_proved_starts() {
        let rows: Vec<Value> = (0..40_000)
            .map(|n| json!({"n": n, "s": "},\n    {"}))
            .collect();
        let doc = doc_of(&rows, true);
        assert!(doc.len() > PARALLEL_BYTES);
        let first = first_row(&doc);
        let sep = &doc.as_bytes()[doc.find('[').unwrap() + 1..first];
        let starts = guesses(doc.as_bytes(), first, sep, 4, &|_| {});
        assert_eq!(starts.len(), 4);
        let (_, got) = read(&doc, 4).unwrap();
        assert_eq!(got, rows);
    }
}
