//! The root check (rule 1 for a ledger's first commit, with rules 7 and 8): no parent, and
//! exactly the tree `init` writes; when it differs, every path that differs is named.

use std::collections::BTreeMap;
use std::rc::Rc;

use gix::objs::tree::EntryMode;
use gix::ObjectId;

use super::step::rule7;
use super::{Admission, Admitted, Known};
use crate::error::{Error, Reasons, Result};
use crate::git::layout::{self, CAMPAIGN, WRITERS};
use crate::git::message;
use crate::git::objects::{is_regular, not_regular, read_commit};
use crate::git::signature;
use crate::refusal::{Reason, Rule};

impl Admission<'_> {
    /// Rule 1 for a root commit: no parent, and exactly the tree `init` writes.
    pub fn root(&mut self, commit: ObjectId, refname: Option<&str>) -> Result<Rc<Known>> {
        let info = read_commit(self.repo, commit)?;
        let at = format!("commit {commit}");
        if !info.parents.is_empty() {
            return Err(Error::refused(
                crate::refusal::Reason::new(format!(
                    "it has {} parent(s); a ledger's root commit has none",
                    info.parents.len()
                ))
                .rule(crate::refusal::Rule::Admission(1))
                .at(&at),
            ));
        }
        let known = self
            .declaration_found(info.tree, &at, Some(Rule::Admission(1)))
            .map_err(|e| match e {
                Error::Refused(r) => Error::Refused(r.map(|mut reason| {
                    reason
                        .sentence
                        .push_str(" (the root must be exactly what `init` writes)");
                    reason
                })),
                other => other,
            })?;
        if let Some(name) = refname {
            self.check_ref_name(name, &known.decl, &at)?;
        }
        let writers = signature::writers_of(self.repo, &known, info.tree, &at, self.max_bytes)?;
        let writers = writers.map(|(blob, _)| blob);
        let hash = self.repo.object_hash();
        let expected = layout::template_tree_id(hash, &known.decl, known.blob, writers)?;
        if info.tree != expected {
            return Err(Error::refusal(
                self.root_differences(&known, info.tree, &at)?,
            ));
        }
        let mut r = Reasons::new();
        rule7(&info, &Ok(message::root_expected(&known.decl)), &at, &mut r);
        r.extend(signature::rule8(
            self.repo,
            &known,
            info.tree,
            commit,
            self.max_bytes,
        )?);
        r.into_result()?;
        Ok(known)
    }

    /// Why a root tree is not the template tree: each path that differs (reads the whole root
    /// tree, only when the root is refused).
    fn root_differences(&self, known: &Known, tree: ObjectId, at: &str) -> Result<Vec<Reason>> {
        let hash = self.repo.object_hash();
        let mut expected: BTreeMap<String, ObjectId> = BTreeMap::new();
        expected.insert(CAMPAIGN.to_owned(), known.blob);
        if let Some(&w) = known.writers_blob.get() {
            expected.insert(WRITERS.to_owned(), w);
        }
        for (path, bytes) in layout::template_files(&known.decl) {
            let id = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes)
                .map_err(|e| Error::failed(format!("cannot hash: {e}")))?;
            expected.insert(path, id);
        }
        let mut actual = Vec::new();
        list_tree(self.repo, tree, String::new(), &mut actual)?;
        let mut r = Vec::new();
        let rule = "the root commit must be exactly what `init` writes";
        // Each difference breaks rule 1, at the root commit.
        let breaks = |sentence: String| Reason::new(sentence).rule(Rule::Admission(1)).at(at);
        for (path, mode, id) in &actual {
            match expected.remove(path) {
                None => r.push(breaks(format!("{rule}: {path} is not part of the template (every row DEFERRED, no records)"
                ))),
                Some(_) if !is_regular(*mode) => {
                    r.push(breaks(format!("{rule}: {}", not_regular(path, *mode))))
                }
                Some(want) if want != *id => match layout::schedule_id_of(path) {
                    Some(sid) => r.push(breaks(format!("differs from its template row (a root row is DEFERRED, byte for byte; {rule})"
                    )).row(sid)),
                    None => r.push(breaks(format!("{rule}: {path} differs from what `init` writes"))),
                },
                Some(_) => {}
            }
        }
        for path in expected.keys() {
            r.push(breaks(format!("{rule}: {path} is missing")));
        }
        if r.is_empty() {
            r.push(breaks(format!("{rule}: its tree is not the template tree (an empty directory or an entry Git would not write?)"
            )));
        }
        Ok(r)
    }

    /// [`Self::root`] for `init`'s root commit on `refname`, as [`Admitted`].
    pub fn admit_root(&mut self, commit: ObjectId, refname: &str) -> Result<Admitted> {
        self.root(commit, Some(refname))?;
        Ok(Admitted(commit))
    }
}

/// Every non-tree entry below `tree`, with its full path (used only to explain a refused root).
fn list_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: String,
    out: &mut Vec<(String, EntryMode, ObjectId)>,
) -> Result<()> {
    let mut buf = Vec::new();
    let entries = crate::git::tree::tree_entries(
        &repo.objects,
        repo.object_hash(),
        &tree,
        &prefix,
        &mut buf,
    )?;
    for (name, mode, id) in entries {
        let name = crate::git::show_path(&name);
        let path = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if mode.is_tree() {
            list_tree(repo, id, path, out)?;
        } else {
            out.push((path, mode, id));
        }
    }
    Ok(())
}
