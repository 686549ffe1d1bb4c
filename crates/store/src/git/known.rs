//! The declaration a ledger's commits hold, as admission and rule 8 keep it: parsed once per
//! `campaign.json` blob, with the directories its row paths imply and its writers, read once.
//! Both `git::admit` (which parses it) and `git::signature` (which fills its writers) use it.

use std::cell::OnceCell;
use std::collections::HashSet;
use std::rc::Rc;

use gix::ObjectId;

use super::allowed_signers::AllowedSigners;
use super::layout::ROWS;
use crate::declaration::Declaration;

/// A parsed declaration, what its row paths imply of directories, and its writers.
#[derive(Debug)]
pub struct Known {
    pub decl: Declaration,
    /// The blob id of `campaign.json` it was parsed from.
    pub blob: ObjectId,
    /// The proper prefixes of the task ids that end before a `/` (`scenario` of
    /// `scenario/t0001`): with the task ids, the directories under `rows/` (see
    /// [`Known::is_row_dir`]).
    prefixes: HashSet<String>,
    /// The ledger's writers and their blob, read once (see [`super::signature::writers_of`]).
    pub(crate) writers: OnceCell<Rc<AllowedSigners>>,
    pub(crate) writers_blob: OnceCell<ObjectId>,
}

impl Known {
    /// The declaration `decl`, parsed from the blob `blob` (the caller's own parse).
    pub(crate) fn new(decl: Declaration, blob: ObjectId) -> Self {
        // Row paths are `rows/<task id>/<repetition>.json` (the schedule is exactly tasks ×
        // repetitions): the directories are `rows`, `rows/<task id>` and `rows/<prefix>` for
        // each prefix of a task id ending before a `/`. Task ids are looked up in the
        // declaration; only the prefixes (a few, shared by many tasks) are kept here.
        let mut prefixes = HashSet::new();
        for id in decl.tasks.ids() {
            for (i, _) in id.match_indices('/') {
                if !prefixes.contains(&id[..i]) {
                    prefixes.insert(id[..i].to_owned());
                }
            }
        }
        Known {
            decl,
            blob,
            prefixes,
            writers: Default::default(),
            writers_blob: Default::default(),
        }
    }

    /// Whether `path` is a directory the row paths imply (`rows`, `rows/scenario`,
    /// `rows/scenario/t0001`, …).
    pub(super) fn is_row_dir(&self, path: &str) -> bool {
        path == ROWS
            || (path.strip_prefix(ROWS))
                .and_then(|p| p.strip_prefix('/'))
                .is_some_and(|d| self.decl.tasks.position(d).is_some() || self.prefixes.contains(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::layout;

    #[test]
    fn known_directories_are_those_of_every_row_path() {
        let decl = crate::testutil::declaration();
        let mut want = HashSet::new();
        for e in decl.schedule() {
            let path = layout::row_path(&e.id);
            let mut end = 0;
            while let Some(i) = path[end..].find('/') {
                end += i;
                want.insert(path[..end].to_owned());
                end += 1;
            }
        }
        let known = Known::new(decl, ObjectId::null(gix::hash::Kind::Sha1));
        for dir in &want {
            assert!(known.is_row_dir(dir), "{dir}");
        }
        for path in want.iter().map(|d| format!("{d}/")).chain(
            [
                "row",
                "rows/",
                "records",
                "rows/scenario/interrupted",
                "scenario",
                "rows/rows",
            ]
            .map(String::from),
        ) {
            assert!(!known.is_row_dir(&path), "{path}");
        }
    }
}
