//! The fanned-out `records/` tree, compared as bytes.
//!
//! `docs/reference/layout.md` fans record files out as `records/<hh>/<rest>.json`: `records/` holds up to 256
//! fan-out directories, each of about 1/256 of the record files. Between an admitted parent
//! and its child, a step compares the two `records/` trees (at most 256 entries), skips every
//! fan-out directory whose id did not change, and in each one that changed reads only the run
//! of entries between the bytes the two versions share at their start and at their end. What
//! an import costs here grows with the records it adds, not with the records filled.

use gix::objs::tree::EntryKind;
use gix::ObjectId;

use super::TreeChange;
use crate::git::layout::{is_fanout_name, is_record_name};

/// What precedes each record entry's object id: `100644 `, 62 hex digits, `.json`, NUL.
const HEAD: usize = 7 + 62 + 5 + 1;
/// What precedes each fan-out entry's object id: `40000 `, 2 hex digits, NUL.
const DIR_HEAD: usize = 6 + 2 + 1;

/// The changes from `a`, the parent's `records/` tree, to `b`, the child's, with paths relative
/// to `records/` in the general diff's order (each level before the next: every changed
/// fan-out directory, then the record files below them), and the ids of the child's trees
/// this already checked as Git writes them (each changed or added fan-out directory; `b` itself
/// is checked too, and its id is the caller's).
///
/// `read` gives a tree's bytes (`None` when it cannot: the general diff then says why). `None`
/// when `b` is not what an admitted step can hold
/// (an entry that is not a fan-out directory, a fan-out directory removed, a name out of
/// order, a record run that is not record files in order): the general diff and checks then
/// decide, and name what is wrong.
pub(super) fn changes(
    a: &[u8],
    b: &[u8],
    hash_len: usize,
    read: &mut dyn FnMut(&ObjectId) -> Option<std::rc::Rc<Vec<u8>>>,
) -> Option<(Vec<TreeChange>, Vec<ObjectId>)> {
    let (top_a, top_b) = (dirs(a, hash_len)?, dirs(b, hash_len)?);
    let tree = || EntryKind::Tree.into();
    let (mut level, mut below, mut checked) = (Vec::new(), Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while j < top_b.len() {
        let (name, new) = top_b[j];
        let old = match top_a.get(i) {
            Some(&(n, _)) if n < name => return None, // a fan-out directory removed
            Some(&(n, o)) if n == name => {
                i += 1;
                Some(o)
            }
            _ => None,
        };
        j += 1;
        if old == Some(new) {
            continue;
        }
        let data_b = read(&new)?;
        let found = match old {
            Some(o) => records(&read(&o)?, &data_b, hash_len)?,
            None => records(&[], &data_b, hash_len)?,
        };
        level.push(TreeChange {
            path: name.into(),
            old: old.map(|o| (tree(), o)),
            new: Some((tree(), new)),
        });
        below.extend(found.into_iter().map(|mut ch| {
            let mut path = gix::bstr::BString::from(name);
            path.push(b'/');
            path.extend_from_slice(&ch.path);
            ch.path = path;
            ch
        }));
        checked.push(new);
    }
    if i < top_a.len() {
        return None; // a fan-out directory removed
    }
    level.extend(below);
    Some((level, checked))
}

/// The entries of a `records/` tree, each `40000 <hh>\0<id>` in strictly increasing order;
/// `None` when it holds anything else.
fn dirs(data: &[u8], hash_len: usize) -> Option<Vec<(&[u8], ObjectId)>> {
    let w = DIR_HEAD + hash_len;
    if data.len() % w != 0 {
        return None;
    }
    let mut out: Vec<(&[u8], ObjectId)> = Vec::with_capacity(data.len() / w);
    for e in data.chunks_exact(w) {
        let rest = e.strip_prefix(b"40000 ")?;
        let (name, rest) = rest.split_at(2);
        if !is_fanout_name(name) || rest.first() != Some(&0) {
            return None;
        }
        if out.last().is_some_and(|&(last, _)| last >= name) {
            return None;
        }
        out.push((name, ObjectId::try_from(&rest[1..]).ok()?));
    }
    Some(out)
}

/// The changes from `a`, the parent's version of one fan-out directory (empty when it is new),
/// to `b`, the child's, with paths relative to the directory, when `b` differs from `a` in one
/// run of record-file entries.
///
/// `a` is admitted (every entry of it is a record file `100644 <62 hex>.json`, in Git's order:
/// rules 3 and 5), so the bytes `b` shares with it at the start and at the end are entries
/// already admitted, at the same boundaries. The run between is parsed strictly: record file
/// names only, in Git's order with the entries before and after it. `None` when `b` is not
/// that (another kind of entry, a name out of order, bytes that are not whole entries).
fn records(a: &[u8], b: &[u8], hash_len: usize) -> Option<Vec<TreeChange>> {
    let w = HEAD + hash_len;
    if a.len() % w != 0 || b.len() % w != 0 {
        return None;
    }
    let start = common_prefix(a, b) / w * w;
    let room = a.len().min(b.len()) - start;
    let end = common_suffix(a, b).min(room) / w * w;
    let old = entries(&a[start..a.len() - end], w)?;
    let new = entries(&b[start..b.len() - end], w)?;
    // Git's order (names bytewise: every entry is a file) across the run and its neighbours.
    let before = start.checked_sub(w).map(|s| &b[s..start]);
    let after = (end > 0).then(|| &b[b.len() - end..][..w]);
    let names: Vec<&[u8]> = before
        .into_iter()
        .map(|e| entry(e, w).map(|(n, _)| n))
        .chain(new.iter().map(|&(n, _)| Some(n)))
        .chain(after.into_iter().map(|e| entry(e, w).map(|(n, _)| n)))
        .collect::<Option<_>>()?;
    if names.windows(2).any(|p| p[0] >= p[1]) {
        return None;
    }
    // Both runs are sorted: merge them by name.
    let blob = || EntryKind::Blob.into();
    let change = |name: &[u8], old: Option<ObjectId>, new: Option<ObjectId>| TreeChange {
        path: name.into(),
        old: old.map(|id| (blob(), id)),
        new: new.map(|id| (blob(), id)),
    };
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(&(n, o)), Some(&(m, _))) if n < m => {
                out.push(change(n, Some(o), None));
                i += 1;
            }
            (Some(&(n, o)), Some(&(m, id))) if n == m => {
                if o != id {
                    out.push(change(n, Some(o), Some(id)));
                }
                i += 1;
                j += 1;
            }
            (_, Some(&(m, id))) => {
                out.push(change(m, None, Some(id)));
                j += 1;
            }
            (Some(&(n, o)), None) => {
                out.push(change(n, Some(o), None));
                i += 1;
            }
            (None, None) => unreachable!("the loop runs while one side has entries"),
        }
    }
    Some(out)
}

/// The entries of a run of whole record-file entries of `w` bytes each.
fn entries(run: &[u8], w: usize) -> Option<Vec<(&[u8], ObjectId)>> {
    run.chunks_exact(w).map(|e| entry(e, w)).collect()
}

/// One record-file entry: `100644 <62 lowercase hex>.json\0<id>`, its name and object id.
fn entry(e: &[u8], w: usize) -> Option<(&[u8], ObjectId)> {
    if e.len() != w {
        return None;
    }
    let rest = e.strip_prefix(b"100644 ")?;
    let (name, rest) = rest.split_at(HEAD - 8);
    if rest.first() != Some(&0) || !is_record_name(name) {
        return None;
    }
    Some((name, ObjectId::try_from(&rest[1..]).ok()?))
}

/// How many bytes `a` and `b` share at their start (compared a block at a time, then a byte).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    for block in [4096, 64] {
        while i + block <= n && a[i..i + block] == b[i..i + block] {
            i += block;
        }
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many bytes `a` and `b` share at their end.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    for block in [4096, 64] {
        while i + block <= n && a[n - i - block..n - i] == b[n - i - block..n - i] {
            i += block;
        }
    }
    while i < n && a[n - i - 1] == b[n - i - 1] {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A record-file name from a number, and an object id from another.
    fn name(i: u32) -> String {
        format!("{}.json", &crate::sha256_hex(&i.to_le_bytes())[2..])
    }
    fn oid(v: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[v; 20])
    }

    fn raw(entries: &BTreeMap<String, ObjectId>) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, id) in entries {
            out.extend_from_slice(format!("100644 {n}\0").as_bytes());
            out.extend_from_slice(id.as_bytes());
        }
        out
    }

    /// The changes a merge of the two maps gives, in name order.
    fn expected(a: &BTreeMap<String, ObjectId>, b: &BTreeMap<String, ObjectId>) -> Vec<String> {
        let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|n| a.get(*n) != b.get(*n))
            .map(|n| format!("{n} {:?} {:?}", a.get(n), b.get(n)))
            .collect()
    }

    fn got(changes: Vec<TreeChange>) -> Vec<String> {
        changes
            .into_iter()
            .map(|ch| {
                for (mode, _) in ch.old.iter().chain(&ch.new) {
                    assert_eq!(*mode, EntryKind::Blob.into());
                }
                format!(
                    "{} {:?} {:?}",
                    ch.path,
                    ch.old.map(|o| o.1),
                    ch.new.map(|n| n.1)
                )
            })
            .collect()
    }

    #[test]
    fn every_change_of_a_run_is_found_as_a_merge_would() {
        let base: BTreeMap<String, ObjectId> = (0..40).map(|i| (name(i), oid(1))).collect();
        let keys: Vec<String> = base.keys().cloned().collect();
        let mut cases: Vec<BTreeMap<String, ObjectId>> = vec![base.clone()];
        let first = format!("{}.json", "0".repeat(62));
        let last = format!("{}.json", "f".repeat(62));
        for (i, k) in [0, 1, 20, 39].into_iter().enumerate() {
            // One record added (first, last, anywhere), one modified, one removed.
            for n in [first.clone(), last.clone(), name(1000 + i as u32)] {
                let mut added = base.clone();
                added.insert(n, oid(2));
                cases.push(added);
            }
            let mut changed = base.clone();
            changed.insert(keys[k].clone(), oid(3));
            cases.push(changed);
            let mut removed = base.clone();
            removed.remove(&keys[k]);
            cases.push(removed);
        }
        // Several at once, apart from each other, and everything replaced.
        let mut several = base.clone();
        several.insert(name(100), oid(4));
        several.insert(name(101), oid(4));
        several.remove(&keys[5]);
        several.insert(keys[30].clone(), oid(5));
        cases.push(several);
        cases.push((200..230).map(|i| (name(i), oid(6))).collect());
        cases.push(BTreeMap::new());
        for a in [&base, &BTreeMap::new()] {
            for b in &cases {
                let found = records(&raw(a), &raw(b), 20).expect("record entries in order");
                assert_eq!(got(found), expected(a, b));
            }
        }
    }

    #[test]
    fn a_run_that_is_not_record_files_in_order_is_left_to_the_general_diff() {
        let base: BTreeMap<String, ObjectId> = (0..10).map(|i| (name(i), oid(1))).collect();
        let a = raw(&base);
        let first = base.keys().next().unwrap().clone();
        let last = base.keys().last().unwrap().clone();
        let entry = |mode: &str, n: &str| {
            let mut e = format!("{mode} {n}\0").into_bytes();
            e.extend_from_slice(&[9; 20]);
            e
        };
        let at_end = |e: Vec<u8>| [a.clone(), e].concat();
        let at_start = |e: Vec<u8>| [e, a.clone()].concat();
        for (what, b) in [
            // Sorts before the last entry but is appended after it.
            ("out of order", at_end(entry("100644", &first))),
            ("a name twice", at_end(entry("100644", &last))),
            // Each of these sorts first, so only its own fault is at stake.
            (
                "not lowercase hex",
                at_start(entry("100644", &format!("{}g.json", "0".repeat(61)))),
            ),
            (
                "another mode",
                at_start(entry("100755", &format!("{}.json", "0".repeat(62)))),
            ),
            // (as long as a record entry: `40000 ` is one byte shorter than `100644 `)
            (
                "a directory",
                at_start(entry("40000", &format!("{}.jsonx", "0".repeat(62)))),
            ),
            ("not whole entries", [a.clone(), b"x".to_vec()].concat()),
        ] {
            assert!(records(&a, &b, 20).is_none(), "{what}");
        }
        // The same place with a record entry is found.
        let good = at_start(entry("100644", &format!("{}.json", "0".repeat(62))));
        assert_eq!(records(&a, &good, 20).map(|c| c.len()), Some(1));
    }

    #[test]
    fn shared_bytes_are_counted_from_both_ends() {
        assert_eq!(common_prefix(b"", b"abc"), 0);
        assert_eq!(common_prefix(&[7; 200], &[7; 130]), 130);
        let mut x = vec![7; 200];
        x[150] = 8;
        assert_eq!(common_prefix(&x, &[7; 200]), 150);
        assert_eq!(common_suffix(&x, &[7; 200]), 49);
        assert_eq!(common_suffix(&[7; 200], &[7; 130]), 130);
        assert_eq!(common_suffix(b"abc", b"xbc"), 2);
        let mut y = vec![7; 10_000];
        y[6000] = 8;
        assert_eq!(common_prefix(&y, &[7; 10_000]), 6000);
        assert_eq!(common_suffix(&y, &[7; 10_000]), 3999);
    }
}
