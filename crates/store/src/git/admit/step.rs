//! One step, rules 1–8 for a commit C following its parent P: the tree diff read path by path
//! (rules 2 and 3, the trees C changed as Git writes them), reduced to an
//! [`admission::LedgerChange`] that [`admission::admit`] decides (rules 4 and 5), then C's
//! message (rule 7) and signature (rule 8).

use gix::objs::tree::EntryMode;
use gix::ObjectId;

use super::canonical::noncanonical_entry;
use super::row::read_row;
use super::{Admission, Admitted, Step, TreeChange};
use crate::admission::{
    self, LedgerChange, LedgerState, RecordEdit, RecordFile, Records, RowChange, RowEdit,
};
use crate::declaration::Declaration;
use crate::error::{Error, Reasons, Result};
use crate::git::layout::{self, CAMPAIGN, HEADER, RECORDS, WRITERS};
use crate::git::message;
use crate::git::objects::{describe_mode, is_regular, read_blob_bounded_id, read_commit};
use crate::git::signature;
use crate::refusal::{Reason, Rule};

/// [`breaks`] with a `format!` sentence.
macro_rules! breaks {
    ($at:expr, $rule:expr, $row:expr, $($fmt:tt)+) => {
        breaks($at, $rule, $row, format!($($fmt)+))
    };
}

impl Admission<'_> {
    /// [`Self::step`], with `child` as [`Admitted`]. `parent` must itself be admitted (the tip
    /// of the ref the caller moves, or a commit this validator admitted).
    pub fn admit_step(&mut self, parent: ObjectId, child: ObjectId) -> Result<(Step, Admitted)> {
        let step = self.step(parent, child)?;
        Ok((step, Admitted(child)))
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
                return Err(Error::refused(breaks!(&at, 1, None, "its parent is {p}, not {parent}"
                )))
            }
            [] => {
                return Err(Error::refused(breaks!(&at, 1, None, "it has no parent, but follows {parent} (only the root has none)"
                )))
            }
            ps => {
                return Err(Error::refused(breaks!(&at, 1, None, "it is a merge commit ({} parents); a ledger's history is linear, each commit has exactly one parent",
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
                return Err(Error::refused(
                    crate::refusal::Reason::new(format!(
                        "bound: this update changes more than {} row files (raise it with `git config {}`)",
                        b.max_rows,
                        b.rows_key
                    ))
                    .at(&at)
                ));
            }
            let records = changes
                .iter()
                .filter(|ch| ch.path.starts_with(b"records/"))
                .count();
            self.bound_records(records, &at)?;
        }
        // Rules 1–5 and 8's reasons, in the order they are found; rule 7 is judged only when
        // they are none.
        let mut r = Reasons::new();
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
                    new_trees.push((crate::git::show_path(&ch.path), id));
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
                r.push(breaks!(
                    &at,
                    3,
                    None,
                    "{dir} is not as Git writes it: {bad}"
                ));
            }
        }
        // What C does to rows and records, reduced to the change model that
        // `admission::admit` decides (rules 4 and 5 as they apply to rows and records).
        let mut rows: Vec<RowEdit> = Vec::new();
        let mut files: Vec<RecordFile> = Vec::new();
        let mut bad_dirs: Vec<String> = Vec::new();
        for TreeChange { path, old, new } in changes {
            let path = crate::git::show_path(&path);
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
                r.push(breaks!(&at, 2, None, "{path} {what}; the declaration, the ledger header and the writers never change (same blob as the parent's)"
                ));
                continue;
            }
            // Directories: a changed one is recursed into; an added one must be one the layout
            // implies; a removed one shows as removed rows.
            if is_tree(new) || (new.is_none() && is_tree(old)) {
                if let (None, Some((m, _))) = (old.filter(|_| is_tree(old)), new) {
                    let known_dir =
                        path == RECORDS || layout::is_fanout_dir(&path) || known.is_row_dir(&path);
                    if !known_dir {
                        let what = match layout::schedule_id_of(&path) {
                            Some(sid) if decl.schedule_position(sid).is_some() => {
                                let _ = m;
                                format!("row {sid}: {path} is a directory (a tree entry), not a row file")
                            }
                            _ => format!("{path} is outside the ledger layout (campaign.json, ledger.json, rows/<schedule id>.json, records/<hh>/<rest>.json)"),
                        };
                        r.push(breaks!(&at, 3, None, "{what}"));
                        bad_dirs.push(path.clone());
                    }
                }
                if let Some((_, id)) = new.filter(|_| old.is_none() && layout::is_fanout_dir(&path))
                {
                    if id == ObjectId::empty_tree(self.repo.object_hash()) {
                        r.push(breaks!(&at, 3, None, "{path} is an empty directory (Git writes no empty trees; a fan-out directory holds record files)"));
                    }
                }
                if !is_tree(old) {
                    // A file became a directory: the file is gone.
                    if let Some(sid) = scheduled(decl, &path) {
                        if old.is_some() {
                            r.push(breaks!(
                                &at,
                                3,
                                None,
                                "row {sid} was removed ({path} is gone); no row is ever removed"
                            ));
                        }
                    }
                }
                continue;
            }
            if path.starts_with("rows/") {
                let Some(sid) = scheduled(decl, &path) else {
                    if new.is_some() {
                        r.push(breaks!(&at, 3, None, "{path} is not a row of the schedule (no row is added; a retry needs a new declared schedule)"));
                    }
                    continue;
                };
                match (old, new) {
                    (_, None) => r.push(breaks!(
                        &at,
                        3,
                        None,
                        "row {sid} was removed ({path} is gone); no row is ever removed"
                    )),
                    (old, Some((mode, _))) if !is_regular(mode) => {
                        let _ = old;
                        r.push(breaks!(
                            &at,
                            3,
                            Some(sid),
                            "{path} has mode {}; every entry is a regular file (100644)",
                            describe_mode(mode)
                        ))
                    }
                    (None, Some(_)) => r.push(breaks!(
                        &at,
                        3,
                        None,
                        "row {sid} was added ({path} is not in the parent); no row is ever added"
                    )),
                    (Some((om, _)), Some(_)) if om.is_tree() => r.push(breaks!(
                        &at,
                        3,
                        None,
                        "row {sid} was added ({path} was a directory); no row is ever added"
                    )),
                    (Some((_, oid)), Some((_, nid))) => {
                        match self.row_edit(&known.decl, sid, (parent, oid), nid, &at)? {
                            Ok(e) => rows.push(e),
                            Err(reasons) => r.extend(reasons),
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
                    r.push(breaks!(&at, 3, None, "{what}"));
                }
                continue;
            }
            if path.starts_with("records/") {
                match (old, new) {
                    (None, Some((mode, oid))) => {
                        if !layout::is_record_path(&path) {
                            r.push(breaks!(&at, 5, None, "{path} is not a record file name (records/<hh>/<rest>.json: the record key's SHA-256, 64 lowercase hex digits, split after the first two)"));
                        } else if !is_regular(mode) {
                            r.push(breaks!(
                                &at,
                                5,
                                None,
                                "{path} has mode {}; every entry is a regular file (100644)",
                                describe_mode(mode)
                            ));
                        } else {
                            let what = format!("{at}: {path}");
                            let sha256 =
                                match read_blob_bounded_id(self.repo, oid, self.max_bytes, &what) {
                                    Ok(bytes) => Some(crate::sha256_hex(&bytes)),
                                    Err(Error::Refused(reasons)) => {
                                        r.absorb(reasons);
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
                r.push(breaks!(&at, 3, None, "{path} is outside the ledger layout (campaign.json, ledger.json, rows/<schedule id>.json, records/<hh>/<rest>.json)"));
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
            trees: &self.trees,
            hash: self.repo.object_hash(),
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
                r.absorb(refusal.at(&at));
                return Ok(Err(r.into_vec()));
            }
        }
        if !r.is_empty() {
            return Ok(Err(r.into_vec()));
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

    /// One changed row file read for rule 4: strict JSON, every row check, the path naming its
    /// `schedule_id` and canonical bytes, on both sides (`old` in the parent commit; the
    /// transition is `admission`'s). Each reason is found within rule 4.
    fn row_edit(
        &self,
        decl: &Declaration,
        sid: &str,
        (parent, old): (ObjectId, ObjectId),
        new: ObjectId,
        at: &str,
    ) -> Result<std::result::Result<RowEdit, Vec<Reason>>> {
        let rule4 = |reasons: Vec<Reason>| {
            (reasons.into_iter())
                .map(|r| r.within(Rule::Admission(4)))
                .collect::<Vec<_>>()
        };
        let parent_at = format!("commit {parent}");
        let before = match read_row(self.repo, decl, old, sid, self.max_bytes, &parent_at)? {
            Ok(row) => row,
            Err(r) => return Ok(Err(rule4(r))),
        };
        let after = match read_row(self.repo, decl, new, sid, self.max_bytes, at)? {
            Ok(row) => row,
            Err(r) => return Ok(Err(rule4(r))),
        };
        Ok(Ok(RowEdit {
            before,
            after,
            from: String::new(),
        }))
    }
}

/// A record file of the tree diff, for the change model: its id is the key's SHA-256 its
/// path spells (`records/<hh>/<rest>.json`).
pub(crate) fn record_file(path: &str, edit: RecordEdit) -> RecordFile {
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
/// Each lookup goes through the step's tree cache: the root, `records/` and the fan-out
/// directories a step's claims share are read once, not once per claim.
struct ParentRecords<'t, 'r> {
    trees: &'t crate::git::tree::RecentTrees<'r>,
    hash: gix::hash::Kind,
    tree: ObjectId,
}

impl LedgerState for ParentRecords<'_, '_> {
    fn record_owner(&mut self, key: &str) -> Result<Option<String>> {
        let path = layout::record_path(key);
        Ok(
            crate::git::objects::find_in_tree_of(self.trees, self.hash, self.tree, &path)?
                .map(|_| format!("a row of the ledger ({path} exists in the parent)")),
        )
    }
}

/// Rule 7 for commit `c` (named `at`): its message is the one `expected` describes (`Err`: why
/// no message fits what its tree does), in UTF-8 as Git shows it.
pub(crate) fn rule7(
    c: &crate::git::objects::CommitInfo,
    expected: &std::result::Result<message::Expected, String>,
    at: &str,
    r: &mut Reasons,
) {
    if let Some(enc) = c.encoding.as_deref() {
        if !enc.eq_ignore_ascii_case("utf-8") && !enc.eq_ignore_ascii_case("utf8") {
            r.push(breaks!(at, 7, None, "its message is declared in encoding {enc:?}; Git would re-encode it to show it, so a ledger commit's message is UTF-8 without an encoding header"));
        }
    }
    // One identity writes a ledger commit (docs/messages.md): an author field naming someone else
    // than the committer (whose key signs, rule 8) is a claim the tool never makes.
    if (c.author_name.as_str(), c.author_email.as_str())
        != (c.committer_name.as_str(), c.committer_email.as_str())
    {
        r.push(breaks!(at, 7, None, "its author ({} <{}>) is not its committer ({} <{}>); the tool writes one identity as both (on a ledger with writers, the signer's), so the author field claims no one else's work", c.author_name, c.author_email, c.committer_name, c.committer_email));
    }
    match expected {
        Ok(e) => r.extend(message::check(&c.message, e).into_iter().map(|x| x.at(at))),
        Err(why) => r.push(breaks(at, 7, None, why.clone())),
    }
}

/// The schedule id a `rows/…` path names, if it is scheduled.
fn scheduled<'p>(decl: &Declaration, path: &'p str) -> Option<&'p str> {
    layout::schedule_id_of(path).filter(|sid| decl.schedule_position(sid).is_some())
}

/// A reason of the commit validator: at `at` (the commit), breaking admission rule `rule`, about
/// row `row` where there is one.
fn breaks(at: &str, rule: u8, row: Option<&str>, sentence: String) -> Reason {
    let r = Reason::new(sentence).rule(crate::refusal::Rule::Admission(rule));
    match row {
        Some(id) => r.row(id),
        None => r,
    }
    .at(at)
}
