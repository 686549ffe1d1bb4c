//! Chains and ref updates: a whole first-parent chain from its root (`verify`, a creation),
//! whether one commit follows another by admitted steps, and a ref update `old → new` (the
//! hooks, `sync`): no deletion, no rewrite, the ref named after its declaration.

use gix::ObjectId;

use super::{Admission, Admitted};
use crate::error::{Error, Result};
use crate::git::objects::read_commit;

impl Admission<'_> {
    /// Admit the whole first-parent chain ending at `tip`, root included. `progress(done,
    /// total)` is called after each commit. Returns how many commits were checked.
    pub fn chain(
        &mut self,
        refname: Option<&str>,
        tip: ObjectId,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<usize> {
        let (chain, reached) = self.first_parent_chain(tip, None)?;
        debug_assert!(reached.is_none());
        let total = chain.len();
        let root = *chain.last().expect("a chain holds its tip");
        self.root(root, refname)?;
        progress(1, total);
        let mut done = 1;
        for pair in chain.windows(2).rev() {
            let (child, parent) = (pair[0], pair[1]);
            self.step(parent, child)?;
            done += 1;
            progress(done, total);
        }
        Ok(total)
    }

    /// Commits from `tip` down the first-parent chain, newest first, stopping before `stop`
    /// (returned as reached) or at the root (included).
    fn first_parent_chain(
        &mut self,
        tip: ObjectId,
        stop: Option<ObjectId>,
    ) -> Result<(Vec<ObjectId>, Option<ObjectId>)> {
        let mut out = Vec::new();
        let mut current = tip;
        loop {
            if Some(current) == stop {
                return Ok((out, stop));
            }
            self.spend_commit(tip)?;
            out.push(current);
            let info = read_commit(self.repo, current)?;
            match info.parents.first() {
                Some(p) => current = *p,
                None => return Ok((out, None)),
            }
        }
    }

    /// Whether `b` follows `a` by admitted steps: `a` on `b`'s first-parent chain and every
    /// commit after it admitted. `Ok(Ok(steps))` when it does, `Ok(Err(reasons))` when not.
    /// `a` itself is taken as admitted, as every step takes its parent (what a step leaves
    /// unchanged, whole trees or the shared run of `records/`, is not checked again); whether
    /// `a` is admitted is `verify`'s question.
    pub fn follows(
        &mut self,
        a: ObjectId,
        b: ObjectId,
    ) -> Result<std::result::Result<usize, Vec<crate::refusal::Reason>>> {
        if a == b {
            return Ok(Ok(0));
        }
        let (chain, reached) = self.first_parent_chain(b, Some(a))?;
        if reached.is_none() {
            return Ok(Err(vec![crate::refusal::Reason::new(format!(
                "{a} is not an ancestor of {b} on its first-parent chain"
            ))]));
        }
        let total = chain.len();
        let mut parent = a;
        for child in chain.into_iter().rev() {
            match self.step(parent, child) {
                Ok(_) => parent = child,
                Err(Error::Refused(r)) => return Ok(Err(r.into_vec())),
                Err(e) => return Err(e),
            }
        }
        Ok(Ok(total))
    }

    /// Admit a ref update (see [`super::admit_update`]). Returns how many commits were checked.
    pub fn update(
        &mut self,
        refname: &str,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<usize> {
        if let Some(why) = self.refs()?.misspelled(refname) {
            return Err(Error::refused(why));
        }
        if !self.refs()?.is_ledger_ref(refname) {
            return Ok(0);
        }
        let Some(new) = new else {
            return Err(Error::refused_with_hint(
                crate::refusal::Reason::new(
                    "deleting a ledger ref is refused (its history is the ledger)",
                )
                .at(refname),
                "a ledger is kept, not deleted; a new protocol goes on a new ref (`git ledger init` with a declaration of a new id)",
            ));
        };
        let Some(old) = old else {
            return self.chain(Some(refname), new, progress);
        };
        if old == new {
            return Ok(0);
        }
        let (chain, reached) = self.first_parent_chain(new, Some(old))?;
        if reached.is_none() {
            return Err(Error::refused_with_hint(
                crate::refusal::Reason::new(format!(
                    "{old} is not an ancestor of {new} on its first-parent chain: a rewritten ledger history (force push, reset) is refused"
                ))
                .at(refname),
                "if the other side moved while you wrote, do not force: `git ledger sync` fetches it and replays your commits on top",
            ));
        }
        let at = format!("commit {old}");
        let old_tree = read_commit(self.repo, old)?.tree;
        let known = self.declaration_of_tree(old_tree, &at)?;
        self.check_ref_name(refname, &known.decl, &at)?;
        let total = chain.len();
        let mut parent = old;
        for (done, child) in chain.into_iter().rev().enumerate() {
            self.step(parent, child)?;
            progress(done + 1, total);
            parent = child;
        }
        Ok(total)
    }

    /// Admit the ref update `old → new` of `refname` (see [`Self::update`]; `None`: a
    /// creation, which admits the whole chain from the root), with `new` as [`Admitted`].
    pub fn admit(
        &mut self,
        refname: &str,
        old: Option<ObjectId>,
        new: ObjectId,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(usize, Admitted)> {
        if !self.refs()?.is_ledger_ref(refname) {
            return Err(Error::failed(format!(
                "{refname} is not a ledger ref ({}<declaration id>); only ledger refs are admitted",
                self.refs()?.prefix()
            )));
        }
        let n = self.update(refname, old, Some(new), progress)?;
        Ok((n, Admitted(new)))
    }
}
