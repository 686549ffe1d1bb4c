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

/// A parsed declaration and the directories its row paths imply (`rows`, `rows/scenario`, …).
#[derive(Debug)]
pub struct Known {
    pub decl: Declaration,
    /// The blob id of `campaign.json` it was parsed from.
    pub blob: ObjectId,
    /// The directories the row paths imply.
    pub(super) dirs: HashSet<String>,
    /// The ledger's writers and their blob, read once (see [`super::signature::writers_of`]).
    pub(crate) writers: OnceCell<Rc<AllowedSigners>>,
    pub(crate) writers_blob: OnceCell<ObjectId>,
}

impl Known {
    /// The declaration `decl`, parsed from the blob `blob` (the caller's own parse).
    pub(crate) fn new(decl: Declaration, blob: ObjectId) -> Self {
        // Row paths are `rows/<task id>/<repetition>.json` (the schedule is exactly tasks ×
        // repetitions), so the directories are `rows` and every prefix of `rows/<task id>`:
        // one pass over the tasks, not over every scheduled row.
        let mut dirs = HashSet::new();
        dirs.insert(ROWS.to_owned());
        for t in &decl.tasks {
            let path = format!("{ROWS}/{}", t.id);
            let mut end = 0;
            while let Some(i) = path[end..].find('/') {
                end += i;
                dirs.insert(path[..end].to_owned());
                end += 1;
            }
            dirs.insert(path);
        }
        Known {
            decl,
            blob,
            dirs,
            writers: Default::default(),
            writers_blob: Default::default(),
        }
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
        assert_eq!(known.dirs, want);
    }
}
