//! One step, rules 1–8 for a commit C following its parent P: the tree diff read path by path
//! (rules 2 and 3, the trees C changed as Git writes them), reduced to an
//! [`admission::LedgerChange`] that [`admission::admit`] decides (rules 4 and 5), then C's
//! message (rule 7) and signature (rule 8).

use gix::objs::tree::EntryMode;
use gix::ObjectId;

use super::canonical::noncanonical_entry;
use super::row::read_row;
use super::{Admission, Admitted, Known, Step, TreeChange};
use crate::admission::{
    self, LedgerChange, LedgerState, RecordEdit, RecordFile, Records, RowChange, RowEdit,
};
use crate::declaration::Declaration;
use crate::error::{Error, Reasons, Result};
use crate::git::layout::{self, CAMPAIGN, HEADER, RECORDS, WRITERS};
use crate::git::message;
use crate::git::objects::{is_regular, not_regular, read_blob_bounded_at, read_commit};
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

    /// Rules 1–8 in their order: the parent (rule 1), the bounds, the signature (rule 8), the
    /// trees C changed as Git writes them and each changed path (rules 2, 3 and 5's file
    /// names), the change reduced for [`admission::admit`] (rules 4 and 5), then the message
    /// (rule 7) for the step `admit` says C makes.
    fn step_checked(
        &mut self,
        parent: ObjectId,
        child: ObjectId,
    ) -> Result<std::result::Result<Step, Vec<Reason>>> {
        let c = read_commit(self.repo, child)?;
        let at = format!("commit {child}");
        one_parent(&c, parent, &at)?;
        let p = read_commit(self.repo, parent)?;
        let known = self.declaration_of_tree(p.tree, &format!("commit {parent}"))?;
        let (changes, checked) = self.bounded_changes(p.tree, c.tree, &at)?;
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
        let bad_trees =
            self.noncanonical_trees((p.tree, c.tree), &changes, &checked, &at, &mut r)?;
        let mut reduced = Reduced::default();
        for TreeChange { path, old, new } in changes {
            let path = crate::git::show_path(&path);
            if within(&bad_trees, &path) || within(&reduced.bad_dirs, &path) {
                continue; // an entry of a tree or directory refused above
            }
            self.path_change(&known, parent, (&path, old, new), &at, &mut reduced, &mut r)?;
        }
        // Rules 4 and 5 on the rows and records: the one admission function.
        let model = LedgerChange {
            rows: reduced.rows,
            records: Records::Files {
                files: reduced.files,
                name: Some(layout::record_path),
            },
        };
        let mut state = ParentRecords {
            trees: &self.trees,
            hash: self.repo.object_hash(),
            tree: p.tree,
        };
        let done = match admission::admit(&known.decl, &model, &mut state)? {
            Ok(done) => done,
            Err(refusal) => {
                r.absorb(refusal.at(&at));
                return Ok(Err(r.into_vec()));
            }
        };
        if !r.is_empty() {
            return Ok(Err(r.into_vec()));
        }
        // Rule 7, once `admit` says what C did: its message says exactly that, counted from
        // P's admitted message.
        let mut r = Reasons::new();
        let expected = expected_message(&known.decl, (parent, &p.message), &model, &done);
        rule7(&c, &expected, &at, &mut r);
        r.into_result()?;
        Ok(Ok(step_of(&model, &done)))
    }

    /// The tree changes of P → C, within the bounds of this validator (row files and record
    /// files counted against its budget).
    fn bounded_changes(
        &mut self,
        parent_tree: ObjectId,
        tree: ObjectId,
        at: &str,
    ) -> Result<(Vec<TreeChange>, Vec<ObjectId>)> {
        self.bound_records_before_diff(parent_tree, tree, at)?;
        let (changes, checked) = self.step_changes(parent_tree, tree).map_err(|e| match e {
            Error::Refused(_) => e.context(at),
            e => e,
        })?;
        if let Some(b) = self.budget {
            let under = |prefix: &[u8]| {
                (changes.iter())
                    .filter(|ch| ch.path.starts_with(prefix))
                    .count()
            };
            self.rows_read += under(b"rows/");
            if self.rows_read > b.max_rows {
                return Err(Error::refused(
                    crate::refusal::Reason::new(format!(
                        "bound: this update changes more than {} row files (raise it with `git config {}`)",
                        b.max_rows, b.rows_key
                    ))
                    .at(at),
                ));
            }
            let records = under(b"records/");
            self.bound_records(records, at)?;
        }
        Ok((changes, checked))
    }

    /// Every tree C changed must be one Git writes: the diff reads entry modes as numbers and
    /// pairs entries by name in order, so a zero-padded mode (`0100644`), entries out of order
    /// or a duplicated name would pass unseen, and readers that look a path up could see
    /// another entry than the one admitted. Unchanged trees are P's, already admitted. Returns
    /// the directories refused (`""`: the root), whose entries are not looked into: paths
    /// joined from their entries' names may spell paths that are not in the commit.
    fn noncanonical_trees(
        &self,
        (parent_tree, tree): (ObjectId, ObjectId),
        changes: &[TreeChange],
        checked: &[ObjectId],
        at: &str,
        r: &mut Reasons,
    ) -> Result<Vec<String>> {
        let mut new_trees = Vec::new();
        if tree != parent_tree {
            new_trees.push((String::new(), tree));
        }
        for ch in changes {
            if let Some((mode, id)) = ch.new {
                if mode.is_tree() {
                    new_trees.push((crate::git::show_path(&ch.path), id));
                }
            }
        }
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
                r.push(breaks!(at, 3, None, "{dir} is not as Git writes it: {bad}"));
            }
        }
        Ok(bad_trees)
    }

    /// One path of the tree diff, by what it is: the fixed files (rule 2), a directory, a row
    /// file, a record file, or something outside the layout (rule 3).
    fn path_change(
        &self,
        known: &Known,
        parent: ObjectId,
        (path, old, new): (&str, Entry, Entry),
        at: &str,
        out: &mut Reduced,
        r: &mut Reasons,
    ) -> Result<()> {
        if path == CAMPAIGN || path == HEADER || path == WRITERS {
            let what = match (old, new) {
                (None, _) => "was added",
                (_, None) => "was removed",
                (Some((om, oi)), Some((nm, ni))) if oi == ni && om != nm => "changed mode",
                _ => "changed",
            };
            r.push(breaks!(at, 2, None, "{path} {what}; the declaration, the ledger header and the writers never change (same blob as the parent's)"));
        } else if is_tree(new) || (new.is_none() && is_tree(old)) {
            self.directory_change(known, (path, old, new), at, out, r);
        } else if path.starts_with("rows/") {
            self.row_change(known, parent, (path, old, new), at, out, r)?;
        } else if let Some(name) = path.strip_prefix("records/").filter(|n| !n.contains('/')) {
            // Directly in `records/`, only fan-out directories belong.
            if new.is_some() {
                r.push(breaks(at, 3, None, not_a_fanout_dir(path, name)));
            }
        } else if path.starts_with("records/") {
            self.record_change((path, old, new), at, out, r)?;
        } else if new.is_some() {
            r.push(breaks(at, 3, None, outside_layout(path)));
        }
        Ok(())
    }

    /// A directory of the diff: a changed one is recursed into; an added one must be one the
    /// layout implies; a removed one shows as removed rows; a file that became one is gone.
    fn directory_change(
        &self,
        known: &Known,
        (path, old, new): (&str, Entry, Entry),
        at: &str,
        out: &mut Reduced,
        r: &mut Reasons,
    ) {
        let decl = &known.decl;
        if new.is_some() && !is_tree(old) {
            let known_dir =
                path == RECORDS || layout::is_fanout_dir(path) || known.is_row_dir(path);
            if !known_dir {
                let sid = scheduled(decl, path);
                let what = match sid {
                    Some(_) => format!("{path} is a directory (a tree entry), not a row file"),
                    None => outside_layout(path),
                };
                r.push(breaks(at, 3, sid, what));
                out.bad_dirs.push(path.to_owned());
            }
        }
        if let Some((_, id)) = new.filter(|_| old.is_none() && layout::is_fanout_dir(path)) {
            if id == ObjectId::empty_tree(self.repo.object_hash()) {
                r.push(breaks!(at, 3, None, "{path} is an empty directory (Git writes no empty trees; a fan-out directory holds record files)"));
            }
        }
        if !is_tree(old) && old.is_some() {
            // A file became a directory: the file is gone.
            if let Some(sid) = scheduled(decl, path) {
                r.push(breaks(at, 3, None, row_removed(sid, path)));
            }
        }
    }

    /// A row file of the diff: a scheduled row, changed in place, is read on both sides for
    /// [`admission::admit`]; one added, removed or not a regular file breaks rule 3.
    fn row_change(
        &self,
        known: &Known,
        parent: ObjectId,
        (path, old, new): (&str, Entry, Entry),
        at: &str,
        out: &mut Reduced,
        r: &mut Reasons,
    ) -> Result<()> {
        let Some(sid) = scheduled(&known.decl, path) else {
            if new.is_some() {
                r.push(breaks!(at, 3, None, "{path} is not a row of the schedule (no row is added; a retry needs a new declared schedule)"));
            }
            return Ok(());
        };
        match (old, new) {
            (_, None) => r.push(breaks(at, 3, None, row_removed(sid, path))),
            (_, Some((mode, _))) if !is_regular(mode) => {
                r.push(breaks(at, 3, Some(sid), not_regular(path, mode)))
            }
            (None, Some(_)) => r.push(breaks!(
                at,
                3,
                None,
                "row {sid} was added ({path} is not in the parent); no row is ever added"
            )),
            (Some((om, _)), Some(_)) if om.is_tree() => r.push(breaks!(
                at,
                3,
                None,
                "row {sid} was added ({path} was a directory); no row is ever added"
            )),
            (Some((_, oid)), Some((_, nid))) => {
                match self.row_edit(&known.decl, sid, (parent, oid), nid, at)? {
                    Ok(e) => out.rows.push(e),
                    Err(reasons) => r.extend(reasons),
                }
            }
        }
        Ok(())
    }

    /// A record file of the diff, for the change model: an added one is named as the layout
    /// says, a regular file, and hashed; a changed or removed one is [`admission::admit`]'s
    /// to refuse.
    fn record_change(
        &self,
        (path, old, new): (&str, Entry, Entry),
        at: &str,
        out: &mut Reduced,
        r: &mut Reasons,
    ) -> Result<()> {
        let edit = match (old, new) {
            (None, Some(_)) if !layout::is_record_path(path) => {
                r.push(breaks!(at, 5, None, "{path} is not a record file name (records/<hh>/<rest>.json: the record key's SHA-256, 64 lowercase hex digits, split after the first two)"));
                return Ok(());
            }
            (None, Some((mode, _))) if !is_regular(mode) => {
                r.push(breaks(at, 5, None, not_regular(path, mode)));
                return Ok(());
            }
            (None, Some((_, oid))) => {
                let read = read_blob_bounded_at(self.repo, oid, self.max_bytes, at, path);
                let sha256 = match read {
                    Ok(bytes) => Some(crate::sha256_hex(&bytes)),
                    Err(Error::Refused(reasons)) => {
                        r.absorb(reasons);
                        None
                    }
                    Err(e) => return Err(e),
                };
                RecordEdit::Added { sha256 }
            }
            (Some(_), None) => RecordEdit::Removed,
            (Some(_), Some(_)) => RecordEdit::Changed,
            (None, None) => return Ok(()),
        };
        out.files.push(record_file(path, edit));
        Ok(())
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

/// One side of a tree diff entry: its mode and object (`None`: absent).
type Entry = Option<(EntryMode, ObjectId)>;

fn is_tree(e: Entry) -> bool {
    e.is_some_and(|(m, _)| m.is_tree())
}

/// Whether `path` lies inside one of `dirs` (`""`: the root, which holds every path).
fn within(dirs: &[String], path: &str) -> bool {
    dirs.iter()
        .any(|d| d.is_empty() || (path.starts_with(d.as_str()) && path[d.len()..].starts_with('/')))
}

/// What the path-by-path reading of a step's diff found for [`admission::admit`]: the rows
/// it changed (read on both sides), the record files it touched, and the directories refused
/// (whose entries are not read).
#[derive(Default)]
struct Reduced {
    rows: Vec<RowEdit>,
    files: Vec<RecordFile>,
    bad_dirs: Vec<String>,
}

/// Rule 1 for C: exactly one parent, `parent`.
fn one_parent(c: &crate::git::objects::CommitInfo, parent: ObjectId, at: &str) -> Result<()> {
    let why = match c.parents.as_slice() {
        [p] if *p == parent => return Ok(()),
        [p] => format!("its parent is {p}, not {parent}"),
        [] => format!("it has no parent, but follows {parent} (only the root has none)"),
        ps => format!(
            "it is a merge commit ({} parents); a ledger's history is linear, each commit has exactly one parent",
            ps.len()
        ),
    };
    Err(Error::refused(breaks(at, 1, None, why)))
}

/// The message rule 7 wants for the step `admit` found (`done`, of the rows of `model`),
/// counted from the parent's admitted message.
fn expected_message(
    decl: &Declaration,
    (parent, parent_message): (ObjectId, &str),
    model: &LedgerChange,
    done: &admission::Step,
) -> std::result::Result<message::Expected, String> {
    let n = decl.schedule_len();
    let Some(k) = message::filled_of(parent_message, n) else {
        return Err(format!(
            "its parent {parent}'s message carries no `{}: k/{n}` trailer to count from (a parent written without rule 7; check the chain with `git ledger verify`)",
            layout::T_FILLED
        ));
    };
    let (filled, repaired) = rows_by_change(model, done);
    message::expected_of(
        decl,
        done.commit_kind().map_err(|r| r.sentence),
        &filled,
        &repaired,
        k,
    )
}

/// The rows of `model` that `done` says were filled, and those it says were repaired.
fn rows_by_change<'m>(
    model: &'m LedgerChange,
    done: &admission::Step,
) -> (Vec<&'m crate::ledger::Row>, Vec<&'m crate::ledger::Row>) {
    let (mut filled, mut repaired) = (Vec::new(), Vec::new());
    for (e, c) in model.rows.iter().zip(&done.rows) {
        match c {
            RowChange::Filled => filled.push(&e.after),
            RowChange::Repaired(_) => repaired.push(&e.after),
        }
    }
    (filled, repaired)
}

/// What an admitted commit did, by schedule id.
fn step_of(model: &LedgerChange, done: &admission::Step) -> Step {
    let (filled, repaired) = rows_by_change(model, done);
    let ids = |rows: Vec<&crate::ledger::Row>| {
        (rows.into_iter())
            .map(|r| r.schedule_id().to_owned())
            .collect()
    };
    Step {
        filled: ids(filled),
        repaired: ids(repaired),
    }
}

/// Rule 3's sentence for a row file that is gone.
fn row_removed(sid: &str, path: &str) -> String {
    format!("row {sid} was removed ({path} is gone); no row is ever removed")
}

/// Rule 3's sentence for a path the ledger layout has no place for.
fn outside_layout(path: &str) -> String {
    format!("{path} is outside the ledger layout (campaign.json, ledger.json, rows/<schedule id>.json, records/<hh>/<rest>.json)")
}

/// Rule 3's sentence for an entry directly in `records/` (named `name`) that is not a fan-out
/// directory.
fn not_a_fanout_dir(path: &str, name: &str) -> String {
    if layout::is_fanout_name(name.as_bytes()) {
        format!("{path} is not a directory; a fan-out directory records/<hh>/ is a tree of record files")
    } else if name
        .strip_suffix(".json")
        .is_some_and(crate::declaration::is_sha256)
    {
        format!("{path} is outside the ledger layout: a record file is records/<hh>/<rest>.json, fanned out after the first two hex digits of its key's SHA-256 (a flat records/<sha256>.json is the layout before 2026-12)")
    } else {
        format!("{path} is outside the ledger layout: records/ holds only fan-out directories records/<hh>/ (two lowercase hex digits)")
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
