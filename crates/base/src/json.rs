//! Strict JSON in, canonical JSON out.
//!
//! Every JSON input goes through [`parse_strict`]: duplicate keys, NaN/Infinity, numbers that
//! overflow, trailing data, nesting deeper than [`MAX_DEPTH`] and inputs over the byte bound are
//! refused with a message naming the place. Every JSON document the tool writes goes through
//! [`canonical`] or [`canonical_ordered`]: serde_json's pretty printer (two-space indent), raw
//! UTF-8, sorted keys (except where a format fixes the order), and a trailing newline.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Number, Value};
use std::fmt;

use crate::error::{Error, Result};

mod direct;
mod view;

/// A position in JSON text read byte by byte (the text need not be checked as UTF-8 yet): what
/// the hand-written readers share (the row parser, [`direct`], and the ledger's top level).
pub struct ByteCursor<'a> {
    pub b: &'a [u8],
    pub pos: usize,
}

impl<'a> ByteCursor<'a> {
    /// One JSON value at the cursor, strictly as serde_json reads it.
    pub fn value<T: serde::Deserialize<'a>>(&mut self) -> Option<T> {
        let mut de = serde_json::Deserializer::from_slice(&self.b[self.pos..]).into_iter::<T>();
        let v = de.next()?.ok()?;
        self.pos += de.byte_offset();
        Some(v)
    }

    pub fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }
    // The cursor's next byte; the cursor is no iterator (it peeks, eats and seeks too).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }
    pub fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }
    pub fn ws(&mut self) {
        self.pos = skip_ws(self.b, self.pos);
    }
}

/// The position of the first byte at or after `pos` that is not JSON's whitespace (and nothing
/// else counts: no form feed, no Unicode spaces). The indentation after a line break is
/// skipped eight bytes at a time.
pub fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    loop {
        match b.get(pos) {
            Some(b' ') => pos += 1,
            Some(b'\n' | b'\r' | b'\t') => {
                pos += 1;
                while let Some(chunk) = b.get(pos..pos + 8) {
                    let v = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
                    // The spaces before the first other byte (the lowest, little-endian).
                    let other = v ^ u64::from_ne_bytes([b' '; 8]);
                    if other != 0 {
                        pos += other.trailing_zeros() as usize / 8;
                        break;
                    }
                    pos += 8;
                }
            }
            _ => return pos,
        }
    }
}
pub use direct::{parse_node_prefix, NodeParser};
pub use view::NodeSeed;
pub use view::{parse_node, same, same_key, stream_node_prefix, Members, Node, Num, Obj, View, J};

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 64;

/// Default bound on the size of a JSON input (`--max-input-bytes`).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Parse `bytes` as one strict JSON value. The error message names the line and column.
pub fn parse_strict(bytes: &[u8]) -> std::result::Result<Value, String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = StrictSeed { depth: 0 }
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// [`parse_strict`] of a value nested `depth` containers deep in its document (the depth limit
/// counts from the document's top), from text already known to be UTF-8 (a row of a parsed
/// document: its strings are not checked for UTF-8 again).
pub fn parse_strict_at(text: &str, depth: usize) -> std::result::Result<Value, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = StrictSeed { depth }
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// Parse a JSON document, refusing it (exit 2) with `what` named when it is not strict JSON or
/// exceeds `max_bytes`.
pub fn parse_document(bytes: &[u8], what: &str, max_bytes: u64) -> Result<Value> {
    if bytes.len() as u64 > max_bytes {
        return Err(Error::refused_with_hint(
            crate::refusal::Reason::new(format!(
                "{} bytes is over the input bound of {max_bytes} bytes (--max-input-bytes)",
                bytes.len()
            ))
            .at(what),
            crate::error::MAX_INPUT_HINT,
        ));
    }
    parse_strict(bytes).map_err(|e| {
        Error::refused(crate::refusal::Reason::new(format!("not valid JSON: {e}")).at(what))
    })
}

/// Read a file and parse it strictly. The file is refused before it is read whole when it is
/// larger than `max_bytes`; a file that cannot be read is a failure (exit 1).
pub fn read_document(path: &std::path::Path, max_bytes: u64) -> Result<(Vec<u8>, Value)> {
    let bytes = read_bounded(path, max_bytes)?;
    let value = parse_document(&bytes, &path.display().to_string(), max_bytes)?;
    Ok((bytes, value))
}

/// How long opening a FIFO (named pipe) waits for a process to open its other end.
pub const FIFO_WRITER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Open an input file. Opening a FIFO blocks until a writer opens it, so a FIFO that nobody
/// feeds would hang the command: it is opened on a helper thread and given up after
/// [`FIFO_WRITER_TIMEOUT`] (the thread stays blocked until the process exits). A fed FIFO (a
/// pipe, `<(…)`) reads as usual, within the input bound.
fn open_input(path: &std::path::Path) -> Result<std::fs::File> {
    let fail = |e: std::io::Error| Error::failed(format!("{}: cannot open: {e}", path.display()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            let (tx, rx) = std::sync::mpsc::channel();
            let owned = path.to_owned();
            std::thread::spawn(move || {
                let _ = tx.send(std::fs::File::open(owned));
            });
            return match rx.recv_timeout(FIFO_WRITER_TIMEOUT) {
                Ok(r) => r.map_err(fail),
                Err(_) => Err(Error::failed(format!(
                    "{}: a FIFO that no process opened for writing within {} s; nothing to read",
                    path.display(),
                    FIFO_WRITER_TIMEOUT.as_secs()
                ))),
            };
        }
    }
    std::fs::File::open(path).map_err(fail)
}

/// Read a whole file, refusing it when it is over `max_bytes` (checked before and while reading).
pub fn read_bounded(path: &std::path::Path, max_bytes: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let file = open_input(path)?;
    let meta = file
        .metadata()
        .map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    if meta.is_dir() {
        return Err(Error::failed(format!(
            "{}: is a directory, not a file",
            path.display()
        )));
    }
    if meta.len() > max_bytes {
        return Err(Error::refused_with_hint(
            crate::refusal::Reason::new(format!(
                "{} bytes is over the input bound of {max_bytes} bytes (--max-input-bytes)",
                meta.len()
            ))
            .at(path.display()),
            crate::error::MAX_INPUT_HINT,
        ));
    }
    #[cfg(unix)]
    if meta.is_file() && meta.len() >= PARALLEL_READ_BYTES {
        let read = read_halves(&file, meta.len() as usize)
            .map_err(|e| Error::failed(format!("{}: cannot read: {e}", path.display())))?;
        if let Some(bytes) = read {
            return Ok(bytes);
        }
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::failed(format!("{}: cannot read: {e}", path.display())))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::refused_with_hint(
            crate::refusal::Reason::new(format!(
                "over the input bound of {max_bytes} bytes (--max-input-bytes)"
            ))
            .at(path.display()),
            crate::error::MAX_INPUT_HINT,
        ));
    }
    Ok(bytes)
}

/// A large input file's bytes: mapped from the page cache when it is a regular file of at
/// least [`MAP_BYTES`], else read (see [`read_mapped`]).
pub enum Input {
    Read(Vec<u8>),
    #[cfg(unix)]
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Read(v) => v,
            #[cfg(unix)]
            Input::Mapped(m) => m,
        }
    }
}

impl Input {
    /// Give back the pages of `range` that this process holds of a mapped input (a read one
    /// keeps its bytes): a reader that is done with a stretch of a large file releases it, so
    /// that what stays resident is the stretch being read, not the whole file. The bytes stay
    /// readable: a page read again is mapped again from the page cache (the map is read-only
    /// and never written, so the page holds the file's bytes, which the reader already
    /// checked; a file changed in place by another program is the risk [`read_mapped`] names).
    ///
    /// The range is widened to whole stretches of [`RELEASE_ALIGN`]: a fault maps the whole
    /// folio of the page cache it falls in (up to 2 MB of a file read ahead in order), so a
    /// release that stopped inside one left the rest mapped, up to 2 MB at every share
    /// boundary of the parse (1,000,000 rows: 8–32 MB resident while the rows were parsed,
    /// 6–17 MB widened, the CPU time the same). Widening may give back pages another reader
    /// is still reading; they are mapped again when it reads them.
    pub fn release(&self, range: std::ops::Range<usize>) {
        #[cfg(unix)]
        if let Input::Mapped(m) = self {
            let start = range.start & !(RELEASE_ALIGN - 1);
            let end = range
                .end
                .checked_next_multiple_of(RELEASE_ALIGN)
                .unwrap_or(usize::MAX)
                .min(m.len());
            if range.start < range.end && start < end {
                // SAFETY: `DontNeed` on a read-only file map only drops this process's
                // mapping of the pages; any later read maps the page cache's bytes of the
                // file again, so every `&[u8]` borrowed from the map stays valid.
                #[allow(unsafe_code)]
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
                };
            }
        }
        #[cfg(not(unix))]
        let _ = range;
    }

    /// The lowercase hex SHA-256 of the bytes, hashed a stretch at a time, each stretch
    /// released once hashed ([`Input::release`]).
    ///
    /// Hashed from the mapping, not read again through a buffer: copying 225 MB out of the
    /// page cache cost as much as hashing it (a 100,000-row report: 1.54–1.68 s CPU through a
    /// 1 MB buffer, 1.44–1.48 s from the mapping, peak resident 25–27 MB either way, load
    /// average 4). Each reader of a mapped input gives back only what it has read, so a page
    /// another reader has not reached yet is mapped again from the page cache when it gets
    /// there: what stays resident is a stretch per reader, however far apart they are.
    pub fn sha256_released(&self) -> String {
        let go_on = std::sync::atomic::AtomicBool::new(false);
        self.sha256_released_unless(&go_on).expect("never stopped")
    }

    /// [`Input::sha256_released`], given up (`None`) once `stop` is set: it is checked before
    /// each stretch of 4 MB, so a reader whose hash is no longer wanted (the declaration or
    /// the rows beside it were refused) stops within a few milliseconds, not at the file's end.
    pub fn sha256_released_unless(&self, stop: &std::sync::atomic::AtomicBool) -> Option<String> {
        use sha2::{Digest, Sha256};
        use std::sync::atomic::Ordering;
        const STRETCH: usize = 4 << 20;
        let mut hasher = Sha256::new();
        for (k, stretch) in self.chunks(STRETCH).enumerate() {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            hasher.update(stretch);
            self.release(k * STRETCH..k * STRETCH + stretch.len());
        }
        Some(crate::hex(&hasher.finalize()))
    }
}

/// [`read_mapped`] for one reader going through the file from start to end and releasing
/// what it has read ([`Input::release`]): the map is not populated up front (that would make
/// the whole file resident at once), and the system is told it is read in order.
pub fn read_streamed(path: &std::path::Path, max_bytes: u64) -> Result<Input> {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_file() && meta.len() >= STREAM_MAP_BYTES && meta.len() <= max_bytes {
            let file = open_input(path)?;
            if let Some(map) = map_file(&file, meta.len(), false) {
                let _ = map.advise(memmap2::Advice::Sequential);
                return Ok(Input::Mapped(map));
            }
        }
    }
    read_bounded(path, max_bytes).map(Input::Read)
}

/// What [`Input::release`] gives back whole: the largest folio the page cache maps at a fault.
pub const RELEASE_ALIGN: usize = 2 << 20;

/// From this size on [`read_streamed`] maps a file: a smaller one is read whole.
pub const STREAM_MAP_BYTES: u64 = 4 * 1024 * 1024;

/// From this size on a regular file that is only read (a ledger file for `report` or `diff`)
/// is mapped, not copied: copying 225 MB out of the page cache, and faulting in the memory it
/// goes to, was a sixth of a 100,000-row report's CPU time.
pub const MAP_BYTES: u64 = 32 * 1024 * 1024;

/// [`read_bounded`] for a file whose bytes are only read: a regular file of [`MAP_BYTES`] or
/// more (and within `max_bytes`) is mapped read-only instead of copied.
pub fn read_mapped(path: &std::path::Path, max_bytes: u64) -> Result<Input> {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_file() && meta.len() >= MAP_BYTES && meta.len() <= max_bytes {
            let file = open_input(path)?;
            if let Some(map) = map_file(&file, meta.len(), true) {
                return Ok(Input::Mapped(map));
            }
        }
    }
    read_bounded(path, max_bytes).map(Input::Read)
}

/// Map `file` read-only when it is still a regular file of `len` bytes; `None` (read it
/// instead) when it is not or cannot be mapped.
#[cfg(unix)]
#[allow(unsafe_code)]
fn map_file(file: &std::fs::File, len: u64, populate: bool) -> Option<memmap2::Mmap> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() != len {
        return None;
    }
    // SAFETY: the map is read-only and private to this process, and the bytes are only ever
    // read through the returned `Mmap`. What the type system cannot promise is that no other
    // process changes the file while it is mapped: git-ledger's own writers never do (a ledger
    // file is replaced by renaming a new file over it, which leaves this mapping on the old
    // one), and Git itself maps its packs and index under the same assumption. A file truncated
    // in place by another program while a report reads it may end the process with SIGBUS; one
    // rewritten in place reads as whatever bytes are there, which the strict parser refuses or
    // reads as a ledger like any other.
    // Populated: the pages are mapped by one call, on the thread that maps the file (`report`
    // does it while the declaration is parsed), not by a fault per 64 KB in the parsers.
    // Not populated for a reader that releases what it has read (`read_streamed`).
    let mut options = memmap2::MmapOptions::new();
    if populate {
        options.populate();
    }
    let map = unsafe { options.map(file) }.ok()?;
    (map.len() as u64 == len).then_some(map)
}

/// From this size on a regular file is read by two threads, a half each: copying a large file
/// out of the page cache (and faulting in the memory it goes to) is most of the time it takes.
const PARALLEL_READ_BYTES: u64 = 32 * 1024 * 1024;

/// A regular file of `len` bytes (its metadata's), read as two halves at once; `None` when it
/// is not `len` bytes long after all (it changed meanwhile): the caller reads it as a stream
/// (the file's cursor has not moved).
#[cfg(unix)]
fn read_halves(file: &std::fs::File, len: usize) -> std::io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::FileExt;
    // Fill `buf` from `offset`; false if the file ends first.
    let fill = |buf: &mut [u8], mut offset: u64| -> std::io::Result<bool> {
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], offset) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    done += n;
                    offset += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    };
    let mut bytes = vec![0u8; len];
    let half = len / 2;
    let (first, second) = bytes.split_at_mut(half);
    let (a, b) = std::thread::scope(|s| {
        let second = s.spawn(|| fill(second, half as u64));
        let a = fill(first, 0);
        (
            a,
            second
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e)),
        )
    });
    if !(a? && b?) || file.read_at(&mut [0u8; 1], len as u64)? != 0 {
        return Ok(None);
    }
    Ok(Some(bytes))
}

/// The strict value parser as a serde seed, for parsers that handle part of a document
/// themselves (the declaration's schedule); `depth` is the nesting of the value's container.
pub struct StrictSeed {
    pub depth: usize,
}

impl<'de> DeserializeSeed<'de> for StrictSeed {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl StrictSeed {
    fn enter<E: de::Error>(&self) -> std::result::Result<usize, E> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            Err(E::custom(format_args!(
                "nesting deeper than {MAX_DEPTH} levels"
            )))
        } else {
            Ok(depth)
        }
    }
}

impl<'de> Visitor<'de> for StrictSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let depth = self.enter()?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(StrictSeed { depth })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let depth = self.enter()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            let v = map.next_value_seed(StrictSeed { depth })?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// The canonical bytes of any value: pretty-printed, keys sorted, trailing newline.
pub fn canonical<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::pretty(&mut out);
    // Serialising an in-memory value to a Vec cannot fail for the types used here.
    value
        .serialize(&mut ser)
        .expect("serialising JSON to memory");
    out.push(b'\n');
    out
}

/// An object whose keys are written in the given order (rows follow `attempt_fields`; the
/// declaration and the ledger document have a fixed key order). Nested objects are sorted.
pub struct Ordered<'a>(pub Vec<(&'a str, &'a Value)>);

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Canonical bytes of an object with a fixed key order.
pub fn canonical_ordered(fields: Vec<(&str, &Value)>) -> Vec<u8> {
    canonical(&Ordered(fields))
}

/// The JSON type name of a value, for messages.
pub fn type_name(v: &Value) -> &'static str {
    v.view().type_name()
}

impl<V: View> J<'_, V> {
    /// The JSON type name, for messages.
    pub fn type_name(self) -> &'static str {
        match self {
            J::Null => "null",
            J::Bool(_) => "a boolean",
            J::Number(n) if n.is_f64() => "a number",
            J::Number(_) => "an integer",
            J::String(_) => "a string",
            J::Array(_) => "a list",
            J::Object(_) => "an object",
        }
    }

    /// A nonnegative finite number (`Some(f64)`), else `None`.
    pub fn nonneg_number(self) -> Option<f64> {
        match self {
            J::Number(n) => Some(n.as_f64()).filter(|f| f.is_finite() && *f >= 0.0),
            _ => None,
        }
    }

    /// A nonnegative integer count. Floats are not counts (`2.0` is refused).
    pub fn count(self) -> Option<u64> {
        match self {
            J::Number(n) => n.as_u64(),
            _ => None,
        }
    }
}

/// Equality by value: numbers compare numerically (`1` equals `1.0`), everything else
/// structurally.
pub fn value_eq<A: View, B: View>(a: &A, b: &B) -> bool {
    j_eq(a.view(), b.view())
}

/// [`value_eq`] of two values seen as [`J`]s.
pub fn j_eq<A: View, B: View>(a: J<'_, A>, b: J<'_, B>) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => number_eq(x, y),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| value_eq(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| value_eq(v, w)))
        }
        (J::Null, J::Null) => true,
        (J::Bool(x), J::Bool(y)) => x == y,
        (J::String(x), J::String(y)) => x == y,
        _ => false,
    }
}

fn number_eq(x: Num, y: Num) -> bool {
    match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
        (Some(a), Some(b), _, _) => a == b,
        (_, _, Some(a), Some(b)) => a == b,
        _ => x.as_f64() == y.as_f64(),
    }
}

/// A nonnegative finite number (`Some(f64)`), else `None`.
pub fn nonneg_number(v: &Value) -> Option<f64> {
    v.view().nonneg_number()
}

/// A nonnegative integer count. Floats are not counts (`2.0` is refused).
pub fn count(v: &Value) -> Option<u64> {
    v.view().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_json() {
        let v = parse_strict(br#"{"a": [1, 2.5, "x", null, true], "b": {}}"#).unwrap();
        assert_eq!(v["a"][1], serde_json::json!(2.5));
    }

    #[test]
    fn floats_round_trip_through_canonical_bytes() {
        // A computed spend (1751 s in minutes) must read back as the same f64, or a row the
        // tool wrote would not be its own canonical bytes (found by examples/synth.rs).
        for x in [
            1751.0_f64 / 60.0,
            0.1 + 0.2,
            1.0 / 3.0,
            2.0_f64.sqrt() * 1e-7,
        ] {
            let bytes = canonical(&serde_json::json!({ "x": x }));
            let back = parse_strict(&bytes).unwrap();
            assert_eq!(
                back["x"].as_f64(),
                Some(x),
                "{}",
                String::from_utf8_lossy(&bytes)
            );
            assert_eq!(canonical(&back), bytes);
        }
    }

    #[test]
    fn refuses_duplicate_keys_at_any_depth() {
        let e = parse_strict(br#"{"a": {"b": 1, "b": 2}}"#).unwrap_err();
        assert!(e.contains("duplicate key \"b\""), "{e}");
        let e = parse_strict(br#"[{"x": 1, "x": 1}]"#).unwrap_err();
        assert!(e.contains("duplicate key \"x\""), "{e}");
    }

    #[test]
    fn refuses_nan_infinity_and_overflow() {
        for bad in [
            &b"NaN"[..],
            b"Infinity",
            b"-Infinity",
            b"[1e999]",
            b"{\"a\": nan}",
        ] {
            assert!(
                parse_strict(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn refuses_trailing_data() {
        let e = parse_strict(b"{} {}").unwrap_err();
        assert!(e.contains("trailing"), "{e}");
        assert!(parse_strict(b"{}\n\n").is_ok());
    }

    #[test]
    fn depth_limit_is_64() {
        let ok = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert!(parse_strict(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        let e = parse_strict(deep.as_bytes()).unwrap_err();
        assert!(e.contains("nesting deeper than 64"), "{e}");
        let very_deep = "[".repeat(100_000);
        assert!(parse_strict(very_deep.as_bytes()).is_err());
    }

    #[test]
    fn refuses_invalid_utf8() {
        assert!(parse_strict(b"\"\xff\"").is_err());
    }

    #[test]
    fn large_files_read_in_halves_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let len = PARALLEL_READ_BYTES as usize + 3;
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert!(read_bounded(&path, len as u64).unwrap() == bytes);
        assert!(read_bounded(&path, len as u64 - 1).is_err());
        #[cfg(unix)]
        {
            let file = std::fs::File::open(&path).unwrap();
            // Not the length its metadata said: left to the stream read.
            assert!(read_halves(&file, len - 1).unwrap().is_none());
            assert!(read_halves(&file, len + 1).unwrap().is_none());
            assert!(read_halves(&file, len).unwrap().unwrap() == bytes);
        }
    }

    #[test]
    fn large_read_only_files_are_mapped_small_ones_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let len = MAP_BYTES as usize + 5;
        let bytes: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let input = read_mapped(&path, len as u64).unwrap();
        #[cfg(unix)]
        assert!(matches!(input, Input::Mapped(_)));
        assert!(*input == *bytes);
        // The input bound holds as for a read file.
        let e = read_mapped(&path, len as u64 - 1).err().unwrap();
        crate::assert_only_reason!(
            e.refusal_reasons(),
            place = [path.display().to_string()],
            field = None,
            sentence = format!(
                "{len} bytes is over the input bound of {} bytes (--max-input-bytes)",
                len - 1
            )
        );
        // Below the size, or not a regular file: read.
        let small = dir.path().join("small.json");
        std::fs::write(&small, b"[1]").unwrap();
        let input = read_mapped(&small, 10).unwrap();
        assert!(matches!(input, Input::Read(_)));
        assert_eq!(&*input, b"[1]");
        let e = read_mapped(dir.path(), u64::MAX).err().unwrap();
        assert_eq!(
            e.message().unwrap(),
            format!("{}: is a directory, not a file", dir.path().display())
        );
        #[cfg(unix)]
        {
            // A file that is no longer the length its metadata said is not mapped.
            let file = std::fs::File::open(&path).unwrap();
            assert!(map_file(&file, len as u64 + 1, true).is_none());
        }
    }

    #[test]
    fn input_bound_is_checked_before_parsing() {
        let e = parse_document(b"[1,2,3]", "x.json", 3).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        crate::assert_only_reason!(
            e.refusal_reasons(),
            place = ["x.json"],
            field = None,
            sentence = "7 bytes is over the input bound of 3 bytes (--max-input-bytes)"
        );
    }

    /// A mapped input given back in stretches (widened to whole 2 MB ones, cut anywhere)
    /// still reads its file's bytes, and hashes to the file's SHA-256; a read one too.
    #[cfg(unix)]
    #[test]
    fn a_released_input_reads_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let bytes: Vec<u8> = (0..(9 << 20) + 12_345).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let input = read_streamed(&path, u64::MAX).unwrap();
        assert!(matches!(input, Input::Mapped(_)));
        for cut in [
            0..1,
            3..(2 << 20) + 1,
            (5 << 20) + 7..(9 << 20) + 12_345,
            0..usize::MAX,
        ] {
            input.release(cut);
            assert!(input[..] == bytes[..]);
        }
        assert_eq!(input.sha256_released(), crate::sha256_hex(&bytes));
        assert!(input[..] == bytes[..]);
        let small = dir.path().join("small.json");
        std::fs::write(&small, &bytes[..1000]).unwrap();
        let input = read_streamed(&small, u64::MAX).unwrap();
        assert!(matches!(input, Input::Read(_)));
        input.release(0..1000);
        assert_eq!(input.sha256_released(), crate::sha256_hex(&bytes[..1000]));
        let stop = std::sync::atomic::AtomicBool::new(true);
        assert_eq!(input.sha256_released_unless(&stop), None);
    }

    #[test]
    fn canonical_is_pretty_sorted_utf8_with_newline() {
        let v = parse_strict("{\"b\": 1, \"a\": \"é\", \"c\": 45.0}".as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(canonical(&v)).unwrap(),
            "{\n  \"a\": \"é\",\n  \"b\": 1,\n  \"c\": 45.0\n}\n"
        );
    }

    #[test]
    fn ordered_keeps_order() {
        let (one, two) = (Value::from(1), Value::from(2));
        let out = canonical_ordered(vec![("z", &one), ("a", &two)]);
        assert_eq!(out, b"{\n  \"z\": 1,\n  \"a\": 2\n}\n");
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(value_eq(&serde_json::json!(1), &serde_json::json!(1.0)));
        assert!(!value_eq(&serde_json::json!(1), &serde_json::json!(1.5)));
        assert!(value_eq(
            &serde_json::json!({"a": [2]}),
            &serde_json::json!({"a": [2.0]})
        ));
    }
}
