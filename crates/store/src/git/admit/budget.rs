//! The budget of one admission run: how many commits it may walk and how many row and record
//! files it may read, so that a hostile push cannot exhaust a server (the hooks set it from
//! `git config`; without one, nothing is bounded but blob sizes).

use std::collections::BTreeMap;

use gix::ObjectId;

use super::Admission;
use crate::error::{Error, Result};
use crate::git::layout::RECORDS;

/// Bounds on the work one admission run may do, so that a hostile push cannot exhaust a
/// server: commits walked (a creation walks the whole chain; a rewrite is detected by walking
/// too) and changed row files read. Blob sizes are bounded separately by `max_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub max_commits: usize,
    pub max_rows: usize,
    /// Where the bounds are configured, for messages (`git config ledger.maxCommitsPerPush`).
    pub commits_key: &'static str,
    pub rows_key: &'static str,
}

impl Admission<'_> {
    /// Count one commit walked, refusing once the budget is spent.
    pub(super) fn spend_commit(&mut self, tip: ObjectId) -> Result<()> {
        self.commits_walked += 1;
        match self.budget {
            Some(b) if self.commits_walked > b.max_commits => Err(Error::refused(
                crate::refusal::Reason::new(format!(
                    "bound: this update walks more than {} commits (raise it with `git config {}`)",
                    b.max_commits, b.commits_key
                ))
                .at(format!("commit {tip}")),
            )),
            _ => Ok(()),
        }
    }

    /// Count `n` more changed record files against the budget. Every admitted record file
    /// fills a row, so records are bounded like rows (by the same number and `git config`
    /// key): a push of 300,000 unclaimed record files is one reason, not 300,000.
    pub(super) fn bound_records(&mut self, n: usize, at: &str) -> Result<()> {
        let Some(b) = self.budget else {
            return Ok(());
        };
        self.records_read = self.records_read.saturating_add(n);
        if self.records_read > b.max_rows {
            return Err(Error::refused(
                crate::refusal::Reason::new(format!(
                    "bound: this update adds more than {} record files (each fills a row, so records are bounded like rows: raise it with `git config {}`)",
                    b.max_rows,
                    b.rows_key
                ))
                .at(at)
            ));
        }
        Ok(())
    }

    /// The bound of [`Self::bound_records`] checked before the diff is built: `records/` of
    /// `b` has at least as many added entries as it has more entries than `a`'s, counted from
    /// the two tree objects without building a list.
    pub(super) fn bound_records_before_diff(
        &mut self,
        a: ObjectId,
        b: ObjectId,
        at: &str,
    ) -> Result<()> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        let hash = self.repo.object_hash();
        // The fan-out directories of `records/` in a top tree: name → (tree id, entry count
        // read later). Entries that are not trees count as one file each.
        let dirs = |s: &Self, top: ObjectId| -> Result<BTreeMap<Vec<u8>, (ObjectId, bool)>> {
            let data = s.trees.tree(&top, || "tree".into())?;
            let records = gix::objs::TreeRefIter::from_bytes(&data, hash)
                .filter_map(|e| e.ok())
                .find(|e| e.filename == RECORDS.as_bytes() && e.mode.is_tree())
                .map(|e| e.oid.to_owned());
            let Some(records) = records else {
                return Ok(BTreeMap::new());
            };
            let data = s.trees.tree(&records, || format!("tree {RECORDS}"))?;
            Ok(gix::objs::TreeRefIter::from_bytes(&data, hash)
                .filter_map(|e| e.ok())
                .map(|e| (e.filename.to_vec(), (e.oid.to_owned(), e.mode.is_tree())))
                .collect())
        };
        let entries = |s: &Self, (id, is_tree): (ObjectId, bool)| -> Result<usize> {
            if !is_tree {
                return Ok(1);
            }
            let data = s.trees.tree(&id, || format!("tree {RECORDS}/"))?;
            Ok(gix::objs::TreeRefIter::from_bytes(&data, hash).count())
        };
        let (before, after) = (dirs(self, a)?, dirs(self, b)?);
        let mut grown = 0usize;
        for (name, dir) in &after {
            let old = before.get(name).copied();
            if old == Some(*dir) {
                continue; // unchanged fan-out directory
            }
            let old = old.map_or(Ok(0), |d| entries(self, d))?;
            grown = grown.saturating_add(entries(self, *dir)?.saturating_sub(old));
        }
        if self.records_read.saturating_add(grown) > budget.max_rows {
            return Err(Error::refused(
                crate::refusal::Reason::new(format!(
                    "bound: this update adds more than {} record files (each fills a row, so records are bounded like rows: raise it with `git config {}`)",
                    budget.max_rows,
                    budget.rows_key
                ))
                .at(at)
            ));
        }
        Ok(())
    }
}
