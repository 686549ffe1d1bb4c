//! Tree diffs: the general diff [`tree_changes`] (skipping unchanged subtrees, bounded under a
//! budget so a hostile tree is never listed whole), and a step's diff, which compares
//! `records/` by fan-out directory ([`super::fanout`]) when only `rows/` and `records/` changed.

use gix::objs::tree::EntryMode;
use gix::ObjectId;

use super::{Admission, TreeChange};
use crate::error::{Error, Result};
use crate::git::layout::{RECORDS, ROWS};
use crate::git::tree::RecentTrees;

impl Admission<'_> {
    /// The changes from P's tree `a` to C's tree `b`, in the general diff's order, and the ids
    /// of C's trees already checked as Git writes them. When at the top only `records/` and
    /// `rows/` changed (as trees), `records/` is compared by [`super::fanout::changes`] (P's tree is
    /// admitted, so unchanged fan-out directories are skipped and only the run of entries that
    /// changed in each other one is read and checked); anything else goes to the general diff.
    pub(super) fn step_changes(
        &mut self,
        a: ObjectId,
        b: ObjectId,
    ) -> Result<(Vec<TreeChange>, Vec<ObjectId>)> {
        use gix::objs::TreeRefIter;
        let hash = self.repo.object_hash();
        let read = |trees: &RecentTrees<'_>, id: &ObjectId| trees.tree(id, || "tree".into());
        let (top_a, top_b) = (read(&self.trees, &a)?, read(&self.trees, &b)?);
        let top = |data| -> Option<Vec<(gix::bstr::BString, EntryMode, ObjectId)>> {
            TreeRefIter::from_bytes(data, hash)
                .map(|e| {
                    e.ok()
                        .map(|e| (e.filename.to_owned(), e.mode, e.oid.to_owned()))
                })
                .collect()
        };
        let general = |s: &mut Self| Ok((s.tree_changes(a, b, true)?, Vec::new()));
        let (Some(ea), Some(eb)) = (top(&top_a), top(&top_b)) else {
            return general(self);
        };
        if ea.len() != eb.len() {
            return general(self);
        }
        let (mut changed, mut records, mut rows) = (Vec::new(), None, None);
        for (x, y) in ea.iter().zip(&eb) {
            if x.0 != y.0 {
                return general(self);
            }
            if (x.1, x.2) == (y.1, y.2) {
                continue;
            }
            if !(x.1.is_tree() && y.1.is_tree()) {
                return general(self);
            }
            match x.0.as_slice() {
                n if n == RECORDS.as_bytes() => records = Some((x.2, y.2)),
                n if n == ROWS.as_bytes() => rows = Some((x.2, y.2)),
                _ => return general(self),
            }
            changed.push(TreeChange {
                path: x.0.clone(),
                old: Some((x.1, x.2)),
                new: Some((y.1, y.2)),
            });
        }
        let Some((records_a, records_b)) = records else {
            return general(self);
        };
        let data_a = read(&self.trees, &records_a)?;
        let data_b = read(&self.trees, &records_b)?;
        let trees = &self.trees;
        let found = super::fanout::changes(&data_a, &data_b, hash.len_in_bytes(), &mut |id| {
            read(trees, id).ok()
        });
        let Some((fanned, mut checked)) = found else {
            return general(self);
        };
        checked.push(records_b);
        fn under(dir: &'static str, changes: Vec<TreeChange>) -> impl Iterator<Item = TreeChange> {
            changes.into_iter().map(move |mut ch| {
                let mut path = gix::bstr::BString::from(format!("{dir}/"));
                path.extend_from_slice(&ch.path);
                ch.path = path;
                ch
            })
        }
        // The general diff's order: breadth first, level by level, and within a level
        // `records` before `rows` (the order their trees were queued in).
        let mut below: Vec<TreeChange> = under(RECORDS, fanned).collect();
        if let Some((rows_a, rows_b)) = rows {
            below.extend(under(ROWS, self.tree_changes(rows_a, rows_b, false)?));
        }
        below.sort_by_key(|ch| ch.path.iter().filter(|&&c| c == b'/').count());
        changed.extend(below);
        Ok((changed, checked))
    }

    /// The changes between two trees, skipping unchanged subtrees. Under a budget the diff
    /// stops (a bound refusal) once it has found more changes than an admissible step can
    /// have ([`DiffBound`]), so a hostile tree of 300,000 files is never listed whole.
    /// `at_root`: `a` and `b` are root trees (else both are `rows/` trees, every entry in the
    /// layout).
    fn tree_changes(&mut self, a: ObjectId, b: ObjectId, at_root: bool) -> Result<Vec<TreeChange>> {
        let bound = self.budget.map(|b| DiffBound {
            max_layout: b.max_rows.saturating_mul(4).saturating_add(16),
            max_other: DiffBound::MAX_OTHER,
            key: b.rows_key,
            at_root,
        });
        tree_changes_bounded(
            &self.trees,
            self.repo.object_hash(),
            &mut self.state,
            a,
            b,
            bound,
        )
    }
}

/// The changes between trees `a` and `b` (full paths), skipping unchanged subtrees.
pub fn tree_changes(
    repo: &gix::Repository,
    state: &mut gix::diff::tree::State,
    a: ObjectId,
    b: ObjectId,
) -> Result<Vec<TreeChange>> {
    tree_changes_in(&repo.objects, repo.object_hash(), state, a, b)
}

/// [`tree_changes`], reading objects from `objects`.
fn tree_changes_in(
    objects: &impl gix::objs::Find,
    hash: gix::hash::Kind,
    state: &mut gix::diff::tree::State,
    a: ObjectId,
    b: ObjectId,
) -> Result<Vec<TreeChange>> {
    tree_changes_bounded(objects, hash, state, a, b, None)
}

/// How many changes one bounded diff may find: in `rows/` and `records/` (an admissible step
/// changes at most `max_rows` row files and as many record files, and their directories), and
/// elsewhere (an admissible step changes nothing else; the first few are named).
#[derive(Debug, Clone, Copy)]
struct DiffBound {
    max_layout: usize,
    max_other: usize,
    key: &'static str,
    /// Paths start at the root tree (else inside `rows/`: all in the layout).
    at_root: bool,
}

impl DiffBound {
    const MAX_OTHER: usize = 64;
}

/// A diff recorder that stops once a [`DiffBound`] is passed, saying which.
struct BoundedRecorder {
    rec: gix::diff::tree::Recorder,
    bound: DiffBound,
    layout: usize,
    other: usize,
    exceeded: Option<crate::refusal::Reason>,
}

impl gix::diff::tree::Visit for BoundedRecorder {
    fn pop_front_tracked_path_and_set_current(&mut self) {
        self.rec.pop_front_tracked_path_and_set_current()
    }
    fn push_back_tracked_path_component(&mut self, component: &gix::bstr::BStr) {
        self.rec.push_back_tracked_path_component(component)
    }
    fn push_path_component(&mut self, component: &gix::bstr::BStr) {
        self.rec.push_path_component(component)
    }
    fn pop_path_component(&mut self) {
        self.rec.pop_path_component()
    }
    fn visit(&mut self, change: gix::diff::tree::visit::Change) -> gix::diff::tree::visit::Action {
        use gix::diff::tree::recorder::Change as C;
        let action = self.rec.visit(change);
        let path = match self.rec.records.last() {
            Some(
                C::Addition { path, .. } | C::Deletion { path, .. } | C::Modification { path, .. },
            ) => path,
            None => return action,
        };
        let top = path.split(|&b| b == b'/').next().unwrap_or_default();
        if !self.bound.at_root || top == ROWS.as_bytes() || top == RECORDS.as_bytes() {
            self.layout += 1;
        } else {
            self.other += 1;
        }
        let b = self.bound;
        if self.layout > b.max_layout {
            self.exceeded = Some(crate::refusal::Reason::new(format!(
                "bound: this update changes more than {} entries in rows/ and records/ (raise it with `git config {}`)",
                b.max_layout, b.key
            )));
        } else if self.other > b.max_other {
            self.exceeded = Some(
                crate::refusal::Reason::new(format!(
                    "more than {} entries outside rows/ and records/ changed (the rest were not read); a ledger's other entries never change",
                    b.max_other
                ))
                .rule(crate::refusal::Rule::Admission(3)),
            );
        }
        match self.exceeded {
            Some(_) => std::ops::ControlFlow::Break(()),
            None => action,
        }
    }
}

/// [`tree_changes_in`], stopping with a refusal once `bound` is passed.
fn tree_changes_bounded(
    objects: &impl gix::objs::Find,
    hash: gix::hash::Kind,
    state: &mut gix::diff::tree::State,
    a: ObjectId,
    b: ObjectId,
    bound: Option<DiffBound>,
) -> Result<Vec<TreeChange>> {
    use gix::diff::tree::recorder::Change as C;
    use gix::objs::{Kind, TreeRefIter};
    let mut buf_a = Vec::new();
    let mut buf_b = Vec::new();
    let data_a =
        crate::git::tree::read_object(objects, &a, Kind::Tree, || "tree".into(), &mut buf_a)?;
    let data_b =
        crate::git::tree::read_object(objects, &b, Kind::Tree, || "tree".into(), &mut buf_b)?;
    let mut rec = BoundedRecorder {
        rec: gix::diff::tree::Recorder::default(),
        bound: bound.unwrap_or(DiffBound {
            max_layout: usize::MAX,
            max_other: usize::MAX,
            key: "",
            at_root: false,
        }),
        layout: 0,
        other: 0,
        exceeded: None,
    };
    let diffed = gix::diff::tree(
        TreeRefIter::from_bytes(data_a, hash),
        TreeRefIter::from_bytes(data_b, hash),
        state,
        objects,
        &mut rec,
    );
    if let Some(why) = rec.exceeded {
        return Err(Error::refused(why));
    }
    diffed.map_err(|e| Error::failed(format!("cannot compare trees {a} and {b}: {e}")))?;
    Ok(rec
        .rec
        .records
        .into_iter()
        .map(|ch| match ch {
            C::Addition {
                entry_mode,
                oid,
                path,
                ..
            } => TreeChange {
                path,
                old: None,
                new: Some((entry_mode, oid)),
            },
            C::Deletion {
                entry_mode,
                oid,
                path,
                ..
            } => TreeChange {
                path,
                old: Some((entry_mode, oid)),
                new: None,
            },
            C::Modification {
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
                path,
            } => TreeChange {
                path,
                old: Some((previous_entry_mode, previous_oid)),
                new: Some((entry_mode, oid)),
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::git::layout::{self, CAMPAIGN};

    /// A small seeded generator (xorshift64*), so a failing case can be replayed from its seed.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn shown(changes: &[TreeChange]) -> Vec<String> {
        changes
            .iter()
            .map(|c| format!("{} {:?} {:?}", c.path, c.old, c.new))
            .collect()
    }

    /// The fast `records/` diff ([`Admission::step_changes`]) against gix's tree diff of the
    /// same two trees, for many seeded random changes: record files added (in new and in
    /// existing fan-out directories), changed and removed, rows changed, and now and then an
    /// entry the layout does not allow (which the fast diff leaves to the general one). Both
    /// must give the same changes in the same order.
    #[test]
    fn the_fast_records_diff_agrees_with_the_tree_diff() {
        use gix::objs::Write;
        let dir = tempfile::tempdir().unwrap();
        crate::testutil::git(dir.path(), &["init", "-q", "--bare"]);
        let mut repo = crate::git::open(Some(dir.path())).unwrap();
        repo.objects.enable_object_memory(); // nothing needs to reach the disk
        let hash = repo.object_hash();
        let mut write = |kind, data: &[u8]| {
            repo.objects
                .write_buf(kind, data)
                .map_err(|e| Error::failed(e.to_string()))
        };
        let tree = |files: &BTreeMap<String, Vec<u8>>, write: &mut dyn FnMut(_, &[u8]) -> _| {
            let files: Vec<(String, Vec<u8>)> =
                files.iter().map(|(p, b)| (p.clone(), b.clone())).collect();
            layout::build_tree(hash, &[], &files, write).unwrap()
        };
        let mut fast_cases = 0;
        for seed in 1..=200u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut a: BTreeMap<String, Vec<u8>> = BTreeMap::new();
            a.insert(CAMPAIGN.into(), b"{}".to_vec());
            for i in 0..8 {
                a.insert(
                    format!("rows/t{}/{i:02}.json", i % 3),
                    format!("{i}").into(),
                );
            }
            for i in 0..rng.below(300) {
                a.insert(
                    layout::record_path(&format!("hand:{seed}-{i}")),
                    vec![i as u8],
                );
            }
            let mut b = a.clone();
            let records: Vec<String> = a
                .keys()
                .filter(|p| p.starts_with("records/"))
                .cloned()
                .collect();
            for _ in 0..rng.below(6) {
                let key = format!("hand:{seed}-new-{}", rng.next());
                b.insert(layout::record_path(&key), b"new".to_vec());
            }
            if !records.is_empty() {
                for _ in 0..rng.below(3) {
                    let p = &records[rng.below(records.len())];
                    if rng.below(2) == 0 {
                        b.insert(p.clone(), b"changed".to_vec());
                    } else {
                        b.remove(p);
                    }
                }
            }
            for _ in 0..rng.below(3) {
                let i = rng.below(8);
                b.insert(format!("rows/t{}/{i:02}.json", i % 3), b"filled".to_vec());
            }
            if rng.below(8) == 0 {
                let hex = crate::sha256_hex(&rng.next().to_le_bytes());
                let odd = [
                    format!("records/{hex}.json"),
                    format!("records/{}", &hex[..2]),
                    format!("records/{}/x.json", &hex[..2]),
                    format!("records/{}/{}/{}.json", &hex[..2], &hex[2..4], &hex[4..]),
                    format!("records/{}/{}.json", &hex[..3], &hex[3..]),
                    "notes.txt".to_owned(),
                ];
                let path = odd[rng.below(odd.len())].clone();
                if !b.keys().any(|k| k.starts_with(&format!("{path}/"))) {
                    b.insert(path, b"odd".to_vec());
                }
            }
            let (ta, tb) = (tree(&a, &mut write), tree(&b, &mut write));
            let mut admission = Admission::new(&repo, 1 << 20);
            let (fast, checked) = admission.step_changes(ta, tb).unwrap();
            let general = admission.tree_changes(ta, tb, true).unwrap();
            assert_eq!(shown(&fast), shown(&general), "seed {seed}");
            fast_cases += usize::from(!checked.is_empty());
        }
        // Most cases went through the fast diff, not only the general one.
        assert!(
            fast_cases > 100,
            "{fast_cases} of 200 cases took the fast diff"
        );
    }
}
