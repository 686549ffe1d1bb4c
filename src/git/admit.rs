//! Commit-level admission (`git.md`, "Admission"): whether ledger commit C may follow P, and
//! whether a ref update `old → new` of a `refs/ledgers/*` ref is admitted.
//!
//! One step compares P's and C's trees with a tree diff that skips unchanged subtrees, so its
//! cost follows the rows C changed, not the ledger's size or history. Each changed row goes
//! through [`crate::admission::row_transition`], the one row-level rule. Rule 6 ("C passes the
//! report's checks") follows from the others when P did: every changed row passes every row
//! check, the set of rows is unchanged (rule 3), the declaration and header are unchanged
//! (rule 2), and two rows cannot share a record because each filled row adds its record file at
//! a path not present in P (rule 5). Rule 7, once the trees say what C did, compares C's
//! message with the parts [`super::message::expected`] builds for it (the same parts the tool's
//! writers compose their messages from), counting from P's message.
//!
//! Every refusal names the commit, the rule, and the row and field where there is one. The
//! hooks call [`admit_update`]; `verify` calls [`Admission::chain`]; the writers call
//! [`Admission::step`] before they move a ref.

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use gix::objs::tree::EntryMode;
use gix::ObjectId;

use super::decl_cache;
use super::layout::{self, CAMPAIGN, HEADER, RECORDS, REF_PREFIX, ROWS, WRITERS};
use super::message;
use super::objects::{describe_mode, find_in_tree, is_regular, read_blob_bounded_id, read_commit};
use super::signature;
use super::tree::{KeptTrees, RecentTrees};

mod fanout;
use crate::admission::{
    self, LedgerChange, LedgerState, RecordEdit, RecordFile, Records, RowChange, RowEdit,
};
use crate::declaration::Declaration;
use crate::error::{Error, Reasons, Result};
use crate::ledger::Row;
use crate::refusal::Reason;

/// A parsed declaration and the directories its row paths imply (`rows`, `rows/scenario`, …).
#[derive(Debug)]
pub struct Known {
    pub decl: Declaration,
    /// The blob id of `campaign.json` it was parsed from.
    pub blob: ObjectId,
    dirs: HashSet<String>,
    /// The ledger's writers and their blob, read once (see [`signature::writers_of`]).
    pub(crate) writers: signature::WritersCell,
    pub(crate) writers_blob: std::cell::OnceCell<ObjectId>,
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

/// What one admitted commit did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    /// Rows that went from DEFERRED to an attempt.
    pub filled: Vec<String>,
    /// Rows that gained repair interventions.
    pub repaired: Vec<String>,
}

/// A commit the validator admitted on a ledger ref: the root of its chain, or a commit that
/// follows an admitted one by admitted steps. Only this module makes one (the field is
/// private), and the only way to move a `refs/ledgers/*` ref (`git::store::move_ref`)
/// takes one: a ref cannot move to a commit admission did not decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admitted(ObjectId);

impl Admitted {
    /// The admitted commit.
    pub fn id(&self) -> ObjectId {
        self.0
    }
}

/// The admission validator, with a cache of the last declaration it parsed (a chain keeps the
/// same `campaign.json` blob, so it is parsed once per chain).
pub struct Admission<'r> {
    repo: &'r gix::Repository,
    max_bytes: u64,
    known: Option<Rc<Known>>,
    /// Whether declarations may come from the cache of checked ones (see [`decl_cache`]).
    use_cache: bool,
    state: gix::diff::tree::State,
    /// The last large trees read (see [`RecentTrees`]).
    trees: RecentTrees<'r>,
    budget: Option<Budget>,
    /// Commits walked and row files read so far (counted against the budget).
    commits_walked: usize,
    rows_read: usize,
    records_read: usize,
}

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

/// Admit a ref update `old → new` (`None` for a missing side): creation needs the whole chain
/// from `new` down to its root; deletion and non-fast-forward updates are refused; otherwise
/// each commit of `old..new` is checked, first parent to last. Refs outside `refs/ledgers/`
/// pass untouched. This is the entry point for the hooks.
pub fn admit_update(
    repo: &gix::Repository,
    refname: &str,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    max_bytes: u64,
) -> Result<usize> {
    Admission::new(repo, max_bytes).update(refname, old, new, &mut |_, _| {})
}

impl<'r> Admission<'r> {
    pub fn new(repo: &'r gix::Repository, max_bytes: u64) -> Self {
        Admission {
            repo,
            max_bytes,
            known: None,
            use_cache: true,
            state: Default::default(),
            trees: RecentTrees::new(&repo.objects),
            budget: None,
            commits_walked: 0,
            rows_read: 0,
            records_read: 0,
        }
    }

    /// Bound the work of this validator (shared by every update it admits).
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Commits walked and row files read so far.
    pub fn work(&self) -> (usize, usize) {
        (self.commits_walked, self.rows_read)
    }

    /// Count one commit walked, refusing once the budget is spent.
    fn spend_commit(&mut self, tip: ObjectId) -> Result<()> {
        self.commits_walked += 1;
        match self.budget {
            Some(b) if self.commits_walked > b.max_commits => Err(Error::refused(format!(
                "commit {tip}: bound: this update walks more than {} commits (raise it with `git config {}`)",
                b.max_commits, b.commits_key
            ))),
            _ => Ok(()),
        }
    }

    /// Parse every declaration from its blob, never from the cache of checked declarations
    /// (`verify`, which trusts nothing it did not check itself).
    pub fn without_cache(mut self) -> Self {
        self.use_cache = false;
        self
    }

    /// Keep large trees in `kept`, shared with the writer whose write this admits (the trees
    /// it read and wrote are then not read again).
    pub(crate) fn with_trees(mut self, kept: KeptTrees) -> Self {
        self.trees = RecentTrees::sharing(&self.repo.objects, kept);
        self
    }

    /// Start with a declaration already parsed (a writer's own).
    pub fn with_known(mut self, known: Rc<Known>) -> Self {
        self.known = Some(known);
        self
    }

    /// The declaration held in `campaign.json` of `tree` (parsed once per blob). `at` names the
    /// commit for messages.
    pub fn declaration_of_tree(&mut self, tree: ObjectId, at: &str) -> Result<Rc<Known>> {
        let Some((mode, blob)) = find_in_tree(self.repo, tree, CAMPAIGN)? else {
            return Err(Error::refused(format!(
                "{at}: {CAMPAIGN} is missing (a ledger commit holds its declaration)"
            )));
        };
        if let Some(k) = &self.known {
            if k.blob == blob && is_regular(mode) {
                return Ok(k.clone());
            }
        }
        if !is_regular(mode) {
            return Err(Error::refused(format!(
                "{at}: {CAMPAIGN} has mode {}; every entry is a regular file (100644)",
                describe_mode(mode)
            )));
        }
        // The blob's size bounds it (the ordinary read refuses what is too large) and must match
        // a cached entry's.
        let size = gix::objs::FindHeader::try_header(&self.repo.objects, &blob)
            .ok()
            .flatten()
            .map(|h| h.size)
            .filter(|&n| n <= self.max_bytes);
        let cached = size
            .filter(|_| self.use_cache)
            .and_then(|n| decl_cache::load(self.repo, blob, n));
        let decl = match cached {
            Some(decl) => decl,
            None => {
                let what = format!("{at}: {CAMPAIGN}");
                let bytes = read_blob_bounded_id(self.repo, blob, self.max_bytes, &what)?;
                let len = bytes.len() as u64;
                let decl =
                    Declaration::parse_vec(bytes, self.max_bytes).map_err(|e| e.context(&what))?;
                decl_cache::store(self.repo, blob, len, &decl);
                decl
            }
        };
        let k = Rc::new(Known::new(decl, blob));
        self.known = Some(k.clone());
        Ok(k)
    }

    /// Check that a declaration belongs on `refname` (`refs/ledgers/<its id>`).
    fn check_ref_name(refname: &str, decl: &Declaration, at: &str) -> Result<()> {
        if refname != layout::ref_name(&decl.id) {
            return Err(Error::refused(format!(
                "{at}: the ledger of declaration {:?} belongs on {}, not {refname} (a ledger ref is named after its declaration's id)",
                decl.id,
                layout::ref_name(&decl.id)
            )));
        }
        Ok(())
    }

    /// Rule 1 for a root commit: no parent, and exactly the tree `init` writes.
    pub fn root(&mut self, commit: ObjectId, refname: Option<&str>) -> Result<Rc<Known>> {
        let info = read_commit(self.repo, commit)?;
        let at = format!("commit {commit}");
        if !info.parents.is_empty() {
            return Err(Error::refused(format!(
                "{at}: rule 1: it has {} parent(s); a ledger's root commit has none",
                info.parents.len()
            )));
        }
        let known = self
            .declaration_of_tree(info.tree, &format!("{at}: rule 1"))
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
            Self::check_ref_name(name, &known.decl, &at)?;
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
    fn root_differences(&self, known: &Known, tree: ObjectId, at: &str) -> Result<Vec<String>> {
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
        let rule = "rule 1: the root commit must be exactly what `init` writes";
        for (path, mode, id) in &actual {
            match expected.remove(path) {
                None => r.push(format!(
                    "{at}: {rule}: {path} is not part of the template (every row DEFERRED, no records)"
                )),
                Some(_) if !is_regular(*mode) => r.push(format!(
                    "{at}: {rule}: {path} has mode {}; every entry is a regular file (100644)",
                    describe_mode(*mode)
                )),
                Some(want) if want != *id => match layout::schedule_id_of(path) {
                    Some(sid) => r.push(format!(
                        "{at}: {rule}: row {sid} differs from its template row (a root row is DEFERRED, byte for byte)"
                    )),
                    None => r.push(format!("{at}: {rule}: {path} differs from what `init` writes")),
                },
                Some(_) => {}
            }
        }
        for path in expected.keys() {
            r.push(format!("{at}: {rule}: {path} is missing"));
        }
        if r.is_empty() {
            r.push(format!(
                "{at}: {rule}: its tree is not the template tree (an empty directory or an entry Git would not write?)"
            ));
        }
        Ok(r)
    }

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
    ) -> Result<std::result::Result<usize, Vec<String>>> {
        if a == b {
            return Ok(Ok(0));
        }
        let (chain, reached) = self.first_parent_chain(b, Some(a))?;
        if reached.is_none() {
            return Ok(Err(vec![format!(
                "{a} is not an ancestor of {b} on its first-parent chain"
            )]));
        }
        let total = chain.len();
        let mut parent = a;
        for child in chain.into_iter().rev() {
            match self.step(parent, child) {
                Ok(_) => parent = child,
                Err(Error::Refused(r)) => return Ok(Err(r.into_strings())),
                Err(e) => return Err(e),
            }
        }
        Ok(Ok(total))
    }

    /// Admit a ref update (see [`admit_update`]). Returns how many commits were checked.
    pub fn update(
        &mut self,
        refname: &str,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<usize> {
        if let Some(why) = layout::misspelled_ledger_ref(refname) {
            return Err(Error::refused(why));
        }
        if !refname.starts_with(REF_PREFIX) {
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
        Self::check_ref_name(refname, &known.decl, &at)?;
        let total = chain.len();
        let mut parent = old;
        for (done, child) in chain.into_iter().rev().enumerate() {
            self.step(parent, child)?;
            progress(done + 1, total);
            parent = child;
        }
        Ok(total)
    }

    /// [`Self::step`], with `child` as [`Admitted`]. `parent` must itself be admitted (the tip
    /// of the ref the caller moves, or a commit this validator admitted).
    pub fn admit_step(&mut self, parent: ObjectId, child: ObjectId) -> Result<(Step, Admitted)> {
        let step = self.step(parent, child)?;
        Ok((step, Admitted(child)))
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
        if !refname.starts_with(REF_PREFIX) {
            return Err(Error::failed(format!(
                "{refname} is not a ledger ref ({REF_PREFIX}<declaration id>); only ledger refs are admitted"
            )));
        }
        let n = self.update(refname, old, Some(new), progress)?;
        Ok((n, Admitted(new)))
    }

    /// [`Self::root`] for `init`'s root commit on `refname`, as [`Admitted`].
    pub fn admit_root(&mut self, commit: ObjectId, refname: &str) -> Result<Admitted> {
        self.root(commit, Some(refname))?;
        Ok(Admitted(commit))
    }

    /// Rules 1–8 for one commit `child` following `parent`.
    pub fn step(&mut self, parent: ObjectId, child: ObjectId) -> Result<Step> {
        self.step_verdict(parent, child)?
            .map_err(|r| Error::Refused(r.into()))
    }

    /// [`Self::step`]'s verdict before it becomes an [`Error`]: the reasons of rules 4 and 5
    /// on rows and records as [`admission::admit`] gives them (row, field and rule named), the
    /// others as sentences. `Err` when the step cannot be checked (a missing object) or is
    /// refused before its trees are compared (rule 1, a bound).
    pub fn step_verdict(
        &mut self,
        parent: ObjectId,
        child: ObjectId,
    ) -> Result<std::result::Result<Step, Vec<Reason>>> {
        match self.step_checked(parent, child) {
            Err(Error::Refused(r)) => Ok(Err(r.into_vec())),
            other => other,
        }
    }

    fn step_checked(
        &mut self,
        parent: ObjectId,
        child: ObjectId,
    ) -> Result<std::result::Result<Step, Vec<Reason>>> {
        let c = read_commit(self.repo, child)?;
        let at = format!("commit {child}");
        match c.parents.as_slice() {
            [p] if *p == parent => {}
            [p] => {
                return Err(Error::refused(format!(
                    "{at}: rule 1: its parent is {p}, not {parent}"
                )))
            }
            [] => {
                return Err(Error::refused(format!(
                    "{at}: rule 1: it has no parent, but follows {parent} (only the root has none)"
                )))
            }
            ps => {
                return Err(Error::refused(format!(
                    "{at}: rule 1: it is a merge commit ({} parents); a ledger's history is linear, each commit has exactly one parent",
                    ps.len()
                )))
            }
        }
        let p = read_commit(self.repo, parent)?;
        let known = self.declaration_of_tree(p.tree, &format!("commit {parent}"))?;
        let decl = &known.decl;

        self.bound_records_before_diff(p.tree, c.tree, &at)?;
        let (changes, checked) = self.step_changes(p.tree, c.tree).map_err(|e| match e {
            Error::Refused(_) => e.context(&at),
            e => e,
        })?;
        if let Some(b) = self.budget {
            let rows = changes
                .iter()
                .filter(|ch| ch.path.starts_with(b"rows/"))
                .count();
            self.rows_read += rows;
            if self.rows_read > b.max_rows {
                return Err(Error::refused(format!(
                    "{at}: bound: this update changes more than {} row files (raise it with `git config {}`)",
                    b.max_rows, b.rows_key
                )));
            }
            let records = changes
                .iter()
                .filter(|ch| ch.path.starts_with(b"records/"))
                .count();
            self.bound_records(records, &at)?;
        }
        let mut r = StepReasons::default();
        r.extend(signature::rule8(
            self.repo,
            &known,
            p.tree,
            child,
            self.max_bytes,
        )?);
        // Every tree C changed must be one Git writes: the diff reads entry modes as numbers
        // and pairs entries by name in order, so a zero-padded mode (`0100644`), entries out of
        // order or a duplicated name would pass unseen, and readers that look a path up could
        // see another entry than the one admitted. Unchanged trees are P's, already admitted.
        let mut new_trees = Vec::new();
        if c.tree != p.tree {
            new_trees.push((String::new(), c.tree));
        }
        for ch in &changes {
            if let Some((mode, id)) = ch.new {
                if mode.is_tree() {
                    new_trees.push((super::show_path(&ch.path), id));
                }
            }
        }
        // Trees refused here are not looked into below: paths joined from their entries'
        // names may spell paths that are not in the commit.
        let mut bad_trees: Vec<String> = Vec::new();
        for (dir, id) in new_trees {
            if checked.contains(&id) {
                continue; // `records/` or a fan-out directory, checked as the diff read it
            }
            let data = self.trees.tree(&id, || format!("tree {dir}"))?;
            if let Some(bad) = noncanonical_entry(&data, self.repo.object_hash().len_in_bytes()) {
                bad_trees.push(dir.clone());
                let dir = if dir.is_empty() {
                    "the root tree".to_owned()
                } else {
                    format!("tree {dir}/")
                };
                let what = if bad.starts_with("it has an entry named") {
                    String::new()
                } else {
                    " (a zero-padded mode, entries out of order or a name twice)".to_owned()
                };
                r.push(format!(
                    "{at}: rule 3: {dir} is not as Git writes it: {bad}{what}"
                ));
            }
        }
        // What C does to rows and records, reduced to the change model that
        // `admission::admit` decides (rules 4 and 5 as they apply to rows and records).
        let mut rows: Vec<RowEdit> = Vec::new();
        let mut files: Vec<RecordFile> = Vec::new();
        let mut bad_dirs: Vec<String> = Vec::new();
        let rule3 = "rule 3";
        for TreeChange { path, old, new } in changes {
            let path = super::show_path(&path);
            if bad_trees.iter().any(|t| {
                t.is_empty() || (path.starts_with(t.as_str()) && path[t.len()..].starts_with('/'))
            }) {
                continue; // an entry of a tree refused above
            }
            if bad_dirs
                .iter()
                .any(|d| path.starts_with(d.as_str()) && path[d.len()..].starts_with('/'))
            {
                continue; // inside a directory already refused
            }
            let is_tree = |e: Option<(EntryMode, ObjectId)>| e.is_some_and(|(m, _)| m.is_tree());
            if path == CAMPAIGN || path == HEADER || path == WRITERS {
                let what = match (old, new) {
                    (None, _) => "was added",
                    (_, None) => "was removed",
                    (Some((om, oi)), Some((nm, ni))) if oi == ni && om != nm => "changed mode",
                    _ => "changed",
                };
                r.push(format!(
                    "{at}: rule 2: {path} {what}; the declaration, the ledger header and the writers never change (same blob as the parent's)"
                ));
                continue;
            }
            // Directories: a changed one is recursed into; an added one must be one the layout
            // implies; a removed one shows as removed rows.
            if is_tree(new) || (new.is_none() && is_tree(old)) {
                if let (None, Some((m, _))) = (old.filter(|_| is_tree(old)), new) {
                    let known_dir = path == RECORDS
                        || layout::is_fanout_dir(&path)
                        || known.dirs.contains(&path);
                    if !known_dir {
                        let what = match layout::schedule_id_of(&path) {
                            Some(sid) if decl.schedule_position(sid).is_some() => {
                                let _ = m;
                                format!("row {sid}: {path} is a directory (a tree entry), not a row file")
                            }
                            _ => format!("{path} is outside the ledger layout (campaign.json, ledger.json, rows/<schedule id>.json, records/<hh>/<rest>.json)"),
                        };
                        r.push(format!("{at}: {rule3}: {what}"));
                        bad_dirs.push(path.clone());
                    }
                }
                if let Some((_, id)) = new.filter(|_| old.is_none() && layout::is_fanout_dir(&path))
                {
                    if id == ObjectId::empty_tree(self.repo.object_hash()) {
                        r.push(format!("{at}: {rule3}: {path} is an empty directory (Git writes no empty trees; a fan-out directory holds record files)"));
                    }
                }
                if !is_tree(old) {
                    // A file became a directory: the file is gone.
                    if let Some(sid) = scheduled(decl, &path) {
                        if old.is_some() {
                            r.push(format!("{at}: {rule3}: row {sid} was removed ({path} is gone); no row is ever removed"));
                        }
                    }
                }
                continue;
            }
            if path.starts_with("rows/") {
                let Some(sid) = scheduled(decl, &path) else {
                    if new.is_some() {
                        r.push(format!("{at}: {rule3}: {path} is not a row of the schedule (no row is added; a retry needs a new declared schedule)"));
                    }
                    continue;
                };
                match (old, new) {
                    (_, None) => r.push(format!(
                        "{at}: {rule3}: row {sid} was removed ({path} is gone); no row is ever removed"
                    )),
                    (old, Some((mode, _))) if !is_regular(mode) => {
                        let _ = old;
                        r.push(format!(
                            "{at}: {rule3}: row {sid}: {path} has mode {}; every entry is a regular file (100644)",
                            describe_mode(mode)
                        ))
                    }
                    (None, Some(_)) => r.push(format!(
                        "{at}: {rule3}: row {sid} was added ({path} is not in the parent); no row is ever added"
                    )),
                    (Some((om, _)), Some(_)) if om.is_tree() => r.push(format!(
                        "{at}: {rule3}: row {sid} was added ({path} was a directory); no row is ever added"
                    )),
                    (Some((_, oid)), Some((_, nid))) => {
                        match self.row_edit(&known.decl, sid, oid, nid, &at) {
                            Ok(e) => rows.push(e),
                            Err(reasons) => r.0.extend(reasons),
                        }
                    }
                }
                continue;
            }
            if let Some(name) = path.strip_prefix("records/").filter(|n| !n.contains('/')) {
                // Directly in `records/`, only fan-out directories belong.
                if new.is_some() {
                    let what = if layout::is_fanout_name(name.as_bytes()) {
                        format!("{path} is not a directory; a fan-out directory records/<hh>/ is a tree of record files")
                    } else if name
                        .strip_suffix(".json")
                        .is_some_and(crate::declaration::is_sha256)
                    {
                        format!("{path} is outside the ledger layout: a record file is records/<hh>/<rest>.json, fanned out after the first two hex digits of its key's SHA-256 (a flat records/<sha256>.json is the layout before 2026-12)")
                    } else {
                        format!("{path} is outside the ledger layout: records/ holds only fan-out directories records/<hh>/ (two lowercase hex digits)")
                    };
                    r.push(format!("{at}: {rule3}: {what}"));
                }
                continue;
            }
            if path.starts_with("records/") {
                match (old, new) {
                    (None, Some((mode, oid))) => {
                        if !layout::is_record_path(&path) {
                            r.push(format!("{at}: rule 5: {path} is not a record file name (records/<hh>/<rest>.json: the record key's SHA-256, 64 lowercase hex digits, split after the first two)"));
                        } else if !is_regular(mode) {
                            r.push(format!(
                                "{at}: rule 5: {path} has mode {}; every entry is a regular file (100644)",
                                describe_mode(mode)
                            ));
                        } else {
                            let what = format!("{at}: {path}");
                            let sha256 =
                                match read_blob_bounded_id(self.repo, oid, self.max_bytes, &what) {
                                    Ok(bytes) => Some(crate::sha256_hex(&bytes)),
                                    Err(Error::Refused(reasons)) => {
                                        r.0.extend(reasons.into_vec());
                                        None
                                    }
                                    Err(e) => return Err(e),
                                };
                            files.push(record_file(&path, RecordEdit::Added { sha256 }));
                        }
                    }
                    (Some(_), None) => files.push(record_file(&path, RecordEdit::Removed)),
                    (Some(_), Some(_)) => files.push(record_file(&path, RecordEdit::Changed)),
                    (None, None) => {}
                }
                continue;
            }
            if new.is_some() {
                r.push(format!("{at}: {rule3}: {path} is outside the ledger layout (campaign.json, ledger.json, rows/<schedule id>.json, records/<hh>/<rest>.json)"));
            }
        }

        // Rules 4 and 5 on the rows and records: the one admission function.
        let model = LedgerChange {
            rows,
            records: Records::Files {
                files,
                name: Some(layout::record_path),
            },
            fills: false,
        };
        let mut state = ParentRecords {
            repo: self.repo,
            tree: p.tree,
        };
        let mut step = Step::default();
        let (mut filled_rows, mut repaired_rows) = (Vec::new(), Vec::new());
        match admission::admit(decl, &model, &mut state)? {
            Ok(done) => {
                for (e, c) in model.rows.iter().zip(done) {
                    let sid = e.after.schedule_id().to_owned();
                    match c {
                        RowChange::Filled => {
                            step.filled.push(sid);
                            filled_rows.push(&e.after);
                        }
                        RowChange::Repaired(_) => {
                            step.repaired.push(sid);
                            repaired_rows.push(&e.after);
                        }
                    }
                }
            }
            Err(refusal) => {
                r.0.extend(refusal.into_vec().into_iter().map(|x| x.at(&at)));
                return Ok(Err(r.0));
            }
        }
        if !r.0.is_empty() {
            return Ok(Err(r.0));
        }
        let mut r = Reasons::new();
        // Rule 7, once the trees say what C did: its message says exactly that, counted from
        // P's admitted message.
        let n = decl.schedule_len();
        let expected = match message::filled_of(&p.message, n) {
            Some(k) => message::expected(decl, &filled_rows, &repaired_rows, k),
            None => Err(format!(
                "its parent {parent}'s message carries no `{}: k/{n}` trailer to count from (a parent written without rule 7; check the chain with `git ledger verify`)",
                layout::T_FILLED
            )),
        };
        rule7(&c, &expected, &at, &mut r);
        r.into_result()?;
        Ok(Ok(step))
    }

    /// Count `n` more changed record files against the budget. Every admitted record file
    /// fills a row, so records are bounded like rows (by the same number and `git config`
    /// key): a push of 300,000 unclaimed record files is one reason, not 300,000.
    fn bound_records(&mut self, n: usize, at: &str) -> Result<()> {
        let Some(b) = self.budget else {
            return Ok(());
        };
        self.records_read = self.records_read.saturating_add(n);
        if self.records_read > b.max_rows {
            return Err(Error::refused(format!(
                "{at}: bound: this update adds more than {} record files (each fills a row, so records are bounded like rows: raise it with `git config {}`)",
                b.max_rows, b.rows_key
            )));
        }
        Ok(())
    }

    /// The bound of [`Self::bound_records`] checked before the diff is built: `records/` of
    /// `b` has at least as many added entries as it has more entries than `a`'s, counted from
    /// the two tree objects without building a list.
    fn bound_records_before_diff(&mut self, a: ObjectId, b: ObjectId, at: &str) -> Result<()> {
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
            return Err(Error::refused(format!(
                "{at}: bound: this update adds more than {} record files (each fills a row, so records are bounded like rows: raise it with `git config {}`)",
                budget.max_rows, budget.rows_key
            )));
        }
        Ok(())
    }

    /// One changed row file read for rule 4: strict JSON, every row check, the path naming its
    /// `schedule_id` and canonical bytes, on both sides (the transition is `admission`'s).
    fn row_edit(
        &self,
        decl: &Declaration,
        sid: &str,
        old: ObjectId,
        new: ObjectId,
        at: &str,
    ) -> std::result::Result<RowEdit, Vec<Reason>> {
        let rule = format!("{at}: rule 4");
        let before = read_row_reasons(
            self.repo,
            decl,
            old,
            sid,
            self.max_bytes,
            &format!("{rule} (the parent's row)"),
        )?;
        let after = read_row_reasons(self.repo, decl, new, sid, self.max_bytes, &rule)?;
        Ok(RowEdit {
            before,
            after,
            from: String::new(),
        })
    }

    /// The changes from P's tree `a` to C's tree `b`, in the general diff's order, and the ids
    /// of C's trees already checked as Git writes them. When at the top only `records/` and
    /// `rows/` changed (as trees), `records/` is compared by [`fanout::changes`] (P's tree is
    /// admitted, so unchanged fan-out directories are skipped and only the run of entries that
    /// changed in each other one is read and checked); anything else goes to the general diff.
    fn step_changes(
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
        let found = fanout::changes(&data_a, &data_b, hash.len_in_bytes(), &mut |id| {
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

/// The reasons one step is refused, in the order they are found: rules 4 and 5 as values
/// (row, field, rule), the rest as sentences.
#[derive(Default)]
struct StepReasons(Vec<Reason>);

impl StepReasons {
    fn push(&mut self, sentence: impl Into<String>) {
        self.0.push(Reason::new(sentence.into()));
    }
    fn extend(&mut self, sentences: impl IntoIterator<Item = String>) {
        self.0.extend(sentences.into_iter().map(Reason::new));
    }
}

/// A record file of the tree diff, for the change model: its id is the key's SHA-256 its
/// path spells (`records/<hh>/<rest>.json`).
fn record_file(path: &str, edit: RecordEdit) -> RecordFile {
    let id = path
        .strip_prefix("records/")
        .and_then(|p| p.strip_suffix(".json"))
        .map(|p| p.replace('/', ""))
        .unwrap_or_default();
    RecordFile {
        id,
        shown: format!("record file {path}"),
        edit,
    }
}

/// The parent's records, as the ledger state a commit is admitted against: a record key is
/// in the ledger when its file is in the parent's tree.
struct ParentRecords<'r> {
    repo: &'r gix::Repository,
    tree: ObjectId,
}

impl LedgerState for ParentRecords<'_> {
    fn record_owner(&mut self, key: &str) -> Result<Option<String>> {
        let path = layout::record_path(key);
        Ok(find_in_tree(self.repo, self.tree, &path)?
            .map(|_| format!("a row of the ledger ({path} exists in the parent)")))
    }
}

/// Rule 7 for commit `c` (named `at`): its message is the one `expected` describes (`Err`: why
/// no message fits what its tree does), in UTF-8 as Git shows it.
fn rule7(
    c: &super::objects::CommitInfo,
    expected: &std::result::Result<message::Expected, String>,
    at: &str,
    r: &mut Reasons,
) {
    let at = format!("{at}: rule 7");
    if let Some(enc) = c.encoding.as_deref() {
        if !enc.eq_ignore_ascii_case("utf-8") && !enc.eq_ignore_ascii_case("utf8") {
            r.push(format!(
                "{at}: its message is declared in encoding {enc:?}; Git would re-encode it to show it, so a ledger commit's message is UTF-8 without an encoding header"
            ));
        }
    }
    match expected {
        Ok(e) => r.extend(message::check(&c.message, e, &at)),
        Err(why) => r.push(format!("{at}: {why}")),
    }
}

/// Read and check the row file `blob` of `sid`: strict JSON under the size bound, every row
/// check, its `schedule_id` equal to the one its path names, and canonical bytes. `at` starts
/// every reason.
pub fn read_row(
    repo: &gix::Repository,
    decl: &Declaration,
    blob: ObjectId,
    sid: &str,
    max_bytes: u64,
    at: &str,
) -> std::result::Result<Row, Vec<String>> {
    read_row_reasons(repo, decl, blob, sid, max_bytes, at)
        .map_err(|r| r.iter().map(Reason::to_string).collect())
}

/// [`read_row`] with each reason as a value (a row check names the row, the field and its
/// refusal group; the others are sentences), found at `at`.
pub fn read_row_reasons(
    repo: &gix::Repository,
    decl: &Declaration,
    blob: ObjectId,
    sid: &str,
    max_bytes: u64,
    at: &str,
) -> std::result::Result<Row, Vec<Reason>> {
    let path = layout::row_path(sid);
    let what = format!("{at}: {path}");
    let sentence = |s: String| vec![Reason::new(s)];
    let bytes = read_blob_bounded_id(repo, blob, max_bytes, &what)
        .map_err(|e| e.reasons().into_iter().map(Reason::new).collect::<Vec<_>>())?;
    let value = crate::json::parse_strict(&bytes)
        .map_err(|e| sentence(format!("{at}: row {sid}: {path} is not valid JSON: {e}")))?;
    let row = Row::check_reasons(decl, &value, &path)
        .map_err(|reasons| reasons.into_iter().map(|r| r.at(at)).collect::<Vec<_>>())?;
    if row.schedule_id() != sid {
        return Err(sentence(format!(
            "{at}: row {sid}: schedule_id: {path} holds row {}; a row file's path names its schedule_id",
            row.schedule_id()
        )));
    }
    if row.canonical(decl) != bytes {
        return Err(sentence(format!(
            "{at}: row {sid}: {path} is not the row's canonical bytes (fields in attempt_fields order, nested keys sorted, two-space indent, trailing newline)"
        )));
    }
    Ok(row)
}

/// Why a raw tree object is not one Git writes, if it is not: each entry's mode in canonical
/// octal (no leading zero), entries strictly in Git's order (a directory's name compared as if
/// followed by `/`), no name twice (a file and a directory of one name included).
fn noncanonical_entry(data: &[u8], hash_len: usize) -> Option<String> {
    let mut rest = data;
    // The previous entry's name and whether it was a directory (compared as `name/`).
    let mut previous: Option<(&[u8], bool)> = None;
    // Files a later directory could share a name with. In Git's order a file `a` comes before
    // the directory `a` (compared as `a/`), with only names `a` + a byte below `/` + … between
    // them, so the candidates are the files that are prefixes of the current name that way: a
    // stack, not a set of every name (which cost `verify` a hash per entry of each changed
    // `records/` tree).
    let mut files: Vec<&[u8]> = Vec::new();
    while !rest.is_empty() {
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            return Some("an entry has no mode".into());
        };
        if rest[..sp].contains(&0) {
            return Some("an entry has no name".into());
        }
        let Some(nul) = memchr::memchr(0, &rest[sp..]).map(|n| sp + n) else {
            return Some("an entry has no name".into());
        };
        if rest.len() < nul + 1 + hash_len {
            return Some("an entry is cut short".into());
        }
        let (mode, name) = (&rest[..sp], &rest[sp + 1..nul]);
        rest = &rest[nul + 1 + hash_len..];
        let shown = || super::show_path(name);
        // One path component per entry, as Git writes it (`git fsck`: fullPathname, emptyName,
        // hasDot, hasDotdot): an entry `a/b.json` is no file `b.json` in a directory `a`, and
        // naming it by the path it spells would name a file that is not there.
        if name.contains(&b'/') || name.is_empty() || name == b"." || name == b".." {
            return Some(format!(
                "it has an entry named {:?}, which is not one path component (Git writes no '/' in a name, nor an empty, '.' or '..' name)",
                shown()
            ));
        }
        if mode.first() == Some(&b'0') || !mode.iter().all(|b| (b'0'..=b'7').contains(b)) {
            return Some(format!(
                "entry {} has mode {}",
                shown(),
                super::show_path(mode)
            ));
        }
        let is_dir = mode == b"40000";
        if previous.is_some_and(|p| git_order(p, (name, is_dir)).is_ge()) {
            return Some(format!("entry {} is out of order", shown()));
        }
        while let Some(&file) = files.last() {
            match name.strip_prefix(file) {
                Some([]) => break,
                Some([next, ..]) if *next < b'/' => break,
                _ => {
                    files.pop();
                }
            }
        }
        if is_dir && files.last() == Some(&name) {
            return Some(format!("{} appears twice", shown()));
        }
        if !is_dir {
            files.push(name);
        }
        previous = Some((name, is_dir));
    }
    None
}

/// Git's order of tree entries: names compared bytewise, a directory's as if followed by `/`.
fn git_order((a, a_dir): (&[u8], bool), (b, b_dir): (&[u8], bool)) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    let slash = |dir: bool| if dir { Some(&b'/') } else { None };
    a[..n].cmp(&b[..n]).then_with(|| {
        a[n..]
            .iter()
            .chain(slash(a_dir))
            .cmp(b[n..].iter().chain(slash(b_dir)))
    })
}

/// The schedule id a `rows/…` path names, if it is scheduled.
fn scheduled<'p>(decl: &Declaration, path: &'p str) -> Option<&'p str> {
    layout::schedule_id_of(path).filter(|sid| decl.schedule_position(sid).is_some())
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
    exceeded: Option<String>,
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
            self.exceeded = Some(format!(
                "bound: this update changes more than {} entries in rows/ and records/ (raise it with `git config {}`)",
                b.max_layout, b.key
            ));
        } else if self.other > b.max_other {
            self.exceeded = Some(format!(
                "rule 3: more than {} entries outside rows/ and records/ changed (the rest were not read); a ledger's other entries never change",
                b.max_other
            ));
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
    let data_a = super::tree::read_object(objects, &a, Kind::Tree, || "tree".into(), &mut buf_a)?;
    let data_b = super::tree::read_object(objects, &b, Kind::Tree, || "tree".into(), &mut buf_b)?;
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

/// One path that differs between two trees: its entry before (`None`: added) and after
/// (`None`: removed).
#[derive(Debug, Clone)]
pub struct TreeChange {
    pub path: gix::bstr::BString,
    pub old: Option<(gix::objs::tree::EntryMode, ObjectId)>,
    pub new: Option<(gix::objs::tree::EntryMode, ObjectId)>,
}

/// Every non-tree entry below `tree`, with its full path (used only to explain a refused root).
fn list_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: String,
    out: &mut Vec<(String, EntryMode, ObjectId)>,
) -> Result<()> {
    let mut buf = Vec::new();
    let entries =
        super::tree::tree_entries(&repo.objects, repo.object_hash(), &tree, &prefix, &mut buf)?;
    for (name, mode, id) in entries {
        let name = super::show_path(&name);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw tree of `(mode, name)` entries, each with a 20-byte id.
    fn raw_tree(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (mode, name) in entries {
            out.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            out.extend_from_slice(&[7; 20]);
        }
        out
    }

    /// Every tree over a few names that are prefixes of each other, each name absent, a file,
    /// a directory or both, in Git's order: a name twice is found exactly when it is both.
    #[test]
    fn a_name_twice_is_found_wherever_it_sorts() {
        let names = ["a", "a!", "a!b", "a-", "ab", "b"];
        for combo in 0..4usize.pow(names.len() as u32) {
            let mut entries = Vec::new();
            let mut twice = None;
            for (i, name) in names.iter().enumerate() {
                let pick = combo / 4usize.pow(i as u32) % 4;
                if pick & 1 != 0 {
                    entries.push(("100644", *name));
                }
                if pick & 2 != 0 {
                    entries.push(("40000", *name));
                }
                if pick == 3 && twice.is_none() {
                    twice = Some(format!("{name} appears twice"));
                }
            }
            entries.sort_by(|a, b| {
                git_order(
                    (a.1.as_bytes(), a.0 == "40000"),
                    (b.1.as_bytes(), b.0 == "40000"),
                )
            });
            let got = noncanonical_entry(&raw_tree(&entries), 20);
            // With several names twice, the first found is the one whose directory sorts first.
            assert_eq!(got.is_some(), twice.is_some(), "{entries:?}");
            if let Some(got) = got {
                assert!(got.ends_with("appears twice"), "{entries:?}: {got}");
            }
        }
    }

    #[test]
    fn trees_as_git_writes_them_are_canonical() {
        for entries in [
            &[][..],
            &[
                ("100644", "campaign.json"),
                ("100644", "ledger.json"),
                ("40000", "rows"),
            ][..],
            // A directory sorts as if followed by `/`: after `a.json` (`.` < `/`), before `a0`.
            &[("100644", "a.json"), ("40000", "a"), ("100644", "a0")][..],
            // A file that is a prefix of a directory's name is another name.
            &[
                ("100644", "a"),
                ("40000", "a-"),
                ("100644", "a-b"),
                ("40000", "ab"),
            ][..],
            &[
                ("100644", "a"),
                ("40000", "a-"),
                ("100644", "b"),
                ("40000", "c"),
            ][..],
        ] {
            assert_eq!(
                noncanonical_entry(&raw_tree(entries), 20),
                None,
                "{entries:?}"
            );
        }
    }

    #[test]
    fn trees_git_would_not_write_are_named() {
        for (entries, why) in [
            (
                &[("0100644", "01.json")][..],
                "entry 01.json has mode 0100644",
            ),
            (&[("040000", "rows")][..], "entry rows has mode 040000"),
            (
                &[("100644", "b"), ("100644", "a")][..],
                "entry a is out of order",
            ),
            (
                &[("100644", "a"), ("100644", "a")][..],
                "entry a is out of order",
            ),
            (
                &[("100644", "a"), ("100644", "a.json"), ("40000", "a")][..],
                "a appears twice",
            ),
            (&[("10x644", "a")][..], "entry a has mode 10x644"),
            (
                &[
                    ("100644", "a"),
                    ("100644", "a!"),
                    ("100644", "a!b"),
                    ("100644", "a-c"),
                    ("40000", "a"),
                ][..],
                "a appears twice",
            ),
            (
                &[
                    ("100644", "a!"),
                    ("100644", "a!!"),
                    ("100644", "a!-"),
                    ("40000", "a!"),
                ][..],
                "a! appears twice",
            ),
            // A directory sorts as `a/`, after `a.json`.
            (
                &[("40000", "a"), ("100644", "a.json")][..],
                "entry a.json is out of order",
            ),
        ] {
            assert_eq!(
                noncanonical_entry(&raw_tree(entries), 20).as_deref(),
                Some(why)
            );
        }
        assert!(noncanonical_entry(b"100644 a", 20).is_some());
        assert!(noncanonical_entry(b"100644 a\0short", 20).is_some());
        assert!(noncanonical_entry(b"100644a\0", 20).is_some());
    }

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
