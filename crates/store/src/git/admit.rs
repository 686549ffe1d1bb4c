//! Commit-level admission (`docs/reference/layout.md`, "Admission"): whether ledger commit C may follow P, and
//! whether a ref update `old → new` of a `refs/ledgers/*` ref is admitted.
//!
//! One step compares P's and C's trees with a tree diff that skips unchanged subtrees, so its
//! cost follows the rows C changed, not the ledger's size or history. What C does to rows and
//! records is reduced to a [`crate::admission::LedgerChange`] and decided by
//! [`crate::admission::admit`], the one row-level rule. Rule 6 ("C passes the
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
//!
//! This file holds the validator and what it keeps between commits; the rest is by job:
//! `budget.rs` (the bounds of one run), `root.rs` (the root check), `chain.rs` (chains and ref
//! updates), `step.rs` (one step, the tree diff reduced to the change model), `row.rs` (one row
//! file read and checked), `canonical.rs` (trees as Git writes them), `diff.rs` (tree diffs) and
//! `fanout.rs` (`records/` compared as bytes).

use std::rc::Rc;

use gix::ObjectId;

use super::decl_cache;
use super::layout::{self, CAMPAIGN};
use super::objects::{find_in_tree, is_regular, not_regular, read_blob_bounded_at};
use super::tree::{KeptTrees, RecentTrees};

mod budget;
mod canonical;
mod chain;
mod diff;
mod fanout;
mod root;
mod row;
mod step;
pub use super::known::Known;
use crate::declaration::Declaration;
use crate::error::{Error, Result};
pub use budget::Budget;
pub use diff::tree_changes;
pub use row::{check_row_bytes, read_row, read_row_bytes};
pub(crate) use step::{record_file, rule7};

/// One path that differs between two trees: its entry before (`None`: added) and after
/// (`None`: removed).
#[derive(Debug, Clone)]
pub struct TreeChange {
    pub path: gix::bstr::BString,
    pub old: Option<(gix::objs::tree::EntryMode, ObjectId)>,
    pub new: Option<(gix::objs::tree::EntryMode, ObjectId)>,
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
    /// Where this repository's ledger refs live (`git config ledger.refPrefix`); an
    /// unreadable setting is kept as its error, which every admission returns.
    refs: std::result::Result<layout::LedgerRefs, String>,
}

/// Admit a ref update `old → new` (`None` for a missing side): creation needs the whole chain
/// from `new` down to its root; deletion and non-fast-forward updates are refused; otherwise
/// each commit of `old..new` is checked, first parent to last. Refs outside `refs/ledgers/`
/// pass untouched. As in the hooks (`hook::admit_all`, which bounds the work too), every
/// declaration is parsed from its blob, never taken from the writers' cache of checked
/// declarations ([`decl_cache`]): a verdict on a ref update depends on nothing it did not
/// check itself.
pub fn admit_update(
    repo: &gix::Repository,
    refname: &str,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    max_bytes: u64,
) -> Result<usize> {
    Admission::new(repo, max_bytes)
        .without_cache()
        .update(refname, old, new, &mut |_, _| {})
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
            refs: layout::LedgerRefs::of(repo).map_err(|e| e.to_string()),
        }
    }

    /// Where this repository's ledger refs live.
    pub fn refs(&self) -> Result<&layout::LedgerRefs> {
        self.refs.as_ref().map_err(|m| Error::Usage(m.clone()))
    }

    /// Bound the work of this validator (shared by every update it admits).
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
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
        self.declaration_found(tree, at, None)
    }

    /// [`Admission::declaration_of_tree`], each refusal found by `rule` at `at` when it is
    /// given (rule 1 of a root: `commit X: rule 1: campaign.json: …`).
    pub(crate) fn declaration_found(
        &mut self,
        tree: ObjectId,
        at: &str,
        rule: Option<crate::refusal::Rule>,
    ) -> Result<Rc<Known>> {
        let found_by = |e: Error| match e {
            Error::Refused(r) => Error::Refused(
                r.map(|r| match rule {
                    Some(rule) => r.within_around(rule),
                    None => r,
                })
                .at(at),
            ),
            e => e,
        };
        let Some((mode, blob)) = find_in_tree(self.repo, tree, CAMPAIGN)? else {
            return Err(found_by(Error::refused(format!(
                "{CAMPAIGN} is missing (a ledger commit holds its declaration)"
            ))));
        };
        if let Some(k) = &self.known {
            if k.blob == blob && is_regular(mode) {
                return Ok(k.clone());
            }
        }
        if !is_regular(mode) {
            return Err(found_by(Error::refused(not_regular(CAMPAIGN, mode))));
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
                // Its refusals are found at `at` (then `campaign.json`) already: the rule
                // follows the outermost place, `at`.
                let bytes = read_blob_bounded_at(self.repo, blob, self.max_bytes, at, CAMPAIGN)
                    .map_err(|e| match (e, rule) {
                        (Error::Refused(r), Some(rule)) => Error::Refused(r.map(|r| {
                            let mut r = r.within(rule);
                            r.rule_inside = r.place.len().saturating_sub(1);
                            r
                        })),
                        (e, _) => e,
                    })?;
                let len = bytes.len() as u64;
                let decl = Declaration::parse_vec(bytes, self.max_bytes).map_err(|e| match e {
                    e @ Error::Refused(_) => found_by(e.context(CAMPAIGN)),
                    e => e.context(format!("{at}: {CAMPAIGN}")),
                })?;
                decl_cache::store(self.repo, blob, len, &decl);
                decl
            }
        };
        let k = Rc::new(Known::new(decl, blob));
        self.known = Some(k.clone());
        Ok(k)
    }

    /// Check that a declaration belongs on `refname` (`refs/ledgers/<its id>`).
    fn check_ref_name(&self, refname: &str, decl: &Declaration, at: &str) -> Result<()> {
        let wanted = self.refs()?.name(&decl.id);
        if refname != wanted {
            return Err(Error::refused(
                crate::refusal::Reason::new(format!(
                    "the ledger of declaration {:?} belongs on {wanted}, not {refname} (a ledger ref is named after its declaration's id)",
                    decl.id
                ))
                .at(at)
            ));
        }
        Ok(())
    }
}
