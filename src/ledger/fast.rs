//! The fast path of [`Ledger::parse`](super::Ledger::parse): the document's top level is
//! parsed strictly with each row left as its raw bytes, then the rows are parsed strictly and
//! checked on every core (contiguous shares of about equal bytes), and assembled in order by
//! the same code as the ordinary path.
//!
//! It only ever says yes: any fault at all (invalid JSON anywhere, a refused row, a missing
//! `rows`) makes it give up, and the ordinary path parses the document again and names every
//! fault, exactly as before. A ledger it accepts is the one the ordinary path builds.

use serde::de::{self, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

use super::{assemble_slots, check_top, checked_row, Checked, Ledger, Row, Slot};
use crate::declaration::Declaration;
use crate::error::Reasons;
use crate::json::{self, StrictSeed};

/// Below this many rows one thread does it all.
const PARALLEL_ROWS: usize = 2_000;

/// Most threads used.
const MAX_THREADS: usize = 8;

pub(super) fn parse(decl: &Declaration, bytes: &[u8]) -> Option<Ledger> {
    let rows = parse_with(decl, bytes, |_, row| row)?;
    Some(Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows,
    })
}

/// [`parse`], keeping `keep(decl, row)` of each checked row (on the core that checked it) and
/// returning those in schedule order.
pub(super) fn parse_with<T: Slot + Send>(
    decl: &Declaration,
    bytes: &[u8],
    keep: impl Fn(&Declaration, Row) -> T + Sync,
) -> Option<Vec<T>> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let (top, rows) = de::Deserializer::deserialize_map(&mut de, Top).ok()?;
    de.end().ok()?;
    let rows = rows?;
    let mut r = Reasons::new();
    check_top(&mut r, decl, &Value::Object(top)).ok()?;
    if !r.is_empty() {
        return None;
    }
    let threads = if rows.len() < PARALLEL_ROWS {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)
    };
    let shares = split(&rows, threads);
    let keep = &keep;
    let checked: Vec<Vec<Checked<T>>> = if shares.len() == 1 {
        vec![check_share(decl, 0, &rows, keep)?]
    } else {
        let rows = &rows;
        std::thread::scope(|s| {
            let handles: Vec<_> = shares
                .iter()
                .map(|&(start, end)| {
                    s.spawn(move || check_share(decl, start, &rows[start..end], keep))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect::<Option<Vec<_>>>()
        })?
    };
    assemble_slots(decl, r, checked.into_iter().flatten()).ok()
}

/// Cut `rows` into at most `n` contiguous shares of about equal bytes: `(start, end)` indices.
fn split(rows: &[&RawValue], n: usize) -> Vec<(usize, usize)> {
    let total: usize = rows.iter().map(|r| r.get().len()).sum();
    let mut shares = Vec::with_capacity(n);
    let (mut start, mut acc) = (0, 0);
    for (i, row) in rows.iter().enumerate() {
        acc += row.get().len();
        if shares.len() + 1 < n && acc * n >= total * (shares.len() + 1) {
            shares.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < rows.len() || shares.is_empty() {
        shares.push((start, rows.len()));
    }
    shares
}

/// Parse (strictly, at the depth rows have in the document) and check `rows`, the first of
/// which is `rows[first]`, keeping `keep(decl, row)` of each; `None` at the first fault.
fn check_share<T>(
    decl: &Declaration,
    first: usize,
    rows: &[&RawValue],
    keep: &impl Fn(&Declaration, Row) -> T,
) -> Option<Vec<Checked<T>>> {
    let mut out = Vec::with_capacity(rows.len());
    for (k, raw) in rows.iter().enumerate() {
        // The document's object, then its `rows` list: a row is two containers deep.
        let v = json::parse_strict_at(raw.get(), 2).ok()?;
        let (sid, checked) = checked_row(decl, first + k, v);
        out.push((sid, Ok(keep(decl, checked.ok()?))));
    }
    Some(out)
}

/// The top-level object without `rows`, and the rows as raw JSON.
struct Top;

impl<'de> Visitor<'de> for Top {
    type Value = (Map<String, Value>, Option<Vec<&'de RawValue>>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a ledger object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        let mut rows = None;
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) || (key == "rows" && rows.is_some()) {
                return Err(de::Error::custom("duplicate key"));
            }
            if key == "rows" {
                rows = Some(map.next_value::<Vec<&'de RawValue>>()?);
            } else {
                out.insert(key, map.next_value_seed(StrictSeed { depth: 1 })?);
            }
        }
        Ok((out, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(sizes: &[usize]) -> Vec<Box<RawValue>> {
        sizes
            .iter()
            .map(|&n| RawValue::from_string(format!("\"{}\"", "x".repeat(n))).unwrap())
            .collect()
    }

    #[test]
    fn shares_cover_every_row_once_in_order() {
        for sizes in [
            vec![],
            vec![1],
            vec![1, 1],
            vec![100, 1, 1, 1],
            vec![1, 1, 1, 100],
            vec![5; 17],
        ] {
            let owned = raw(&sizes);
            let rows: Vec<&RawValue> = owned.iter().map(|b| &**b).collect();
            for n in 1..=4 {
                let shares = split(&rows, n);
                assert!(!shares.is_empty() && shares.len() <= n.max(1));
                let mut next = 0;
                for &(a, b) in &shares {
                    assert_eq!(a, next, "{sizes:?} {n}");
                    assert!(b >= a);
                    next = b;
                }
                assert_eq!(next, rows.len());
            }
        }
    }
}
