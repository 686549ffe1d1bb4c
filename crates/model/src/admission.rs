//! Admission: which ledger state may follow which.
//!
//! This module is the one place where the transition rules of `docs/reference/layout.md` live (rules 4 and 5 as
//! they apply to rows and records, and rule 7's one kind of change per step). Every path that
//! changes or judges a ledger reduces what it holds to a [`LedgerChange`] — each changed row
//! before and after, each record file added, changed or removed — and [`admit`] decides: the
//! writers in both modes (`store::check_change`), the commit validator (`git::admit`, which
//! keeps only what is about Git objects and the layout), `pre-commit`, `diff --files` and,
//! through the validator, `sync`, the hooks, `verify` and `diff`'s "follows". (`init`'s root
//! changes nothing: rule 1 compares its tree with the template's.) Each refusal is a [`Reason`]
//! naming the row, the field and the rule; `tests/cli/agree.rs` shows the paths agree.
//!
//! The rules, in the order [`admit`] applies them:
//!
//! - **one row, once** (rule 4): a change names each scheduled attempt at most once;
//! - **a retry** (rule 4): a row that holds an attempt is never filled again — a change that
//!   gives it another record or native outcome, writes the same attempt again, or writes the
//!   same record's attempt with another field (a re-import of changed harness output, a hand
//!   edit) is refused, with the field that shows it; asked of the rows alone, so a writer and
//!   the commit validator get the same reasons for the same rows;
//! - **the transition** (rule 4, [`transition`]): a DEFERRED row becomes a valid attempted row
//!   that names its record (a hand record named after its own row), or a filled row gains only
//!   appended `repair` interventions, each with a note;
//! - **records** (rule 5), for every row the change fills (and every retry, whose record is
//!   checked too): one record fills one row — not two rows of this change, not one the ledger
//!   already holds ([`LedgerState::record_owner`]); where the change carries record files
//!   ([`Records::Files`]), each filled row brings its file, whose bytes hash to
//!   `native_record.sha256`, no file is added that no filled row names, and no file changes or
//!   disappears;
//! - **one kind of change** (rule 7): a change fills rows or repairs them, and fills
//!   hand-written rows or imported ones, not both (a commit's message says one of them).
//!
//! What an admitted change did is [`admit`]'s answer too, as a value ([`Step`]: its [`Kind`]
//! and what each row did), so that no caller classifies rows itself: the commit validator and
//! `log` compose the message rule 7 wants from it, `sync` writes a replayed commit of its kind,
//! `diff --files` splits two states into steps by [`Kind::of`], and a ledger commit that
//! changes no row is refused by [`Step::commit_kind`]. `sync`'s question, which of a local
//! commit's rows may follow the remote's tip, is [`replay`].

// Maps of a change's rows and records, hashed with foldhash (SipHash was 2% of an import of
// 1,000 Harbor trials); keys from input files only cost a comparison when two hash alike.
use foldhash::{HashMap, HashMapExt, HashSet};

use serde_json::Value;

use crate::declaration::Declaration;
use crate::json;
use crate::ledger::{Ledger, Row};
use crate::refusal::{Reason, Rule};

/// What a changed row did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowChange {
    /// A DEFERRED row now holds an attempt (a new record file must come with it).
    Filled,
    /// A filled row gained this many appended repair interventions.
    Repaired(usize),
}

/// The kind of one step (rule 7): each ledger commit is one of them, and says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It fills DEFERRED rows from hand records (`put`).
    Hand,
    /// It fills DEFERRED rows from harness records (`import`).
    Imported,
    /// It appends repairs to filled rows (`repair`).
    Repairs,
}

impl Kind {
    /// The kind of step a change of one row belongs to: a DEFERRED row is filled (by hand
    /// when its record is a hand record), a filled row is repaired (or retried, which
    /// [`admit`] refuses).
    pub fn of(before: &Row, after: &Row) -> Kind {
        if !before.is_deferred() {
            Kind::Repairs
        } else if is_hand(after) {
            Kind::Hand
        } else {
            Kind::Imported
        }
    }
}

/// What [`admit`] found a change to do: its kind and what each row did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The step's kind; `None` when it changes no row.
    pub kind: Option<Kind>,
    /// What each row did, in the order of the change's rows.
    pub rows: Vec<RowChange>,
}

impl Step {
    /// The kind of a ledger commit that makes this step: a commit that changes no row is
    /// refused (rule 7: the tool writes none, and its message could say nothing it did).
    pub fn commit_kind(&self) -> Result<Kind, Reason> {
        self.kind.ok_or_else(changes_no_row)
    }
}

/// Why a ledger commit that changes no row is refused (rule 7).
pub const CHANGES_NO_ROW: &str =
    "it changes no row; the tool writes no ledger commit that changes nothing";

/// The reason a ledger commit that changes no row is refused (rule 7).
pub fn changes_no_row() -> Reason {
    Reason::new(CHANGES_NO_ROW).rule(Rule::Admission(7))
}

/// Whether a row was filled from a hand record (`put`).
pub fn is_hand(row: &Row) -> bool {
    row.native_record().is_some_and(|r| r.kind == "hand")
}

/// The kind of a step that fills `filled` and repairs `repaired` (rule 7: one kind per
/// step; `Ok(None)`: it changes no row). [`admit`] asks it of every change; the commit
/// validator's message rule (`git::message::expected`) asks it of a commit's rows.
pub fn step_kind(filled: &[&Row], repaired: &[&Row]) -> Result<Option<Kind>, Reason> {
    kind_of(
        !filled.is_empty(),
        !repaired.is_empty(),
        filled.iter().map(|r| is_hand(r)),
    )
}

fn kind_of(
    fills: bool,
    repairs: bool,
    hand: impl Iterator<Item = bool>,
) -> Result<Option<Kind>, Reason> {
    // Whether any filled row is a hand row, and any is not: one pass over the rows (each
    // answer reads a row's record), stopping once both are seen.
    let (mut any_hand, mut any_imported) = (false, false);
    for h in hand {
        any_hand |= h;
        any_imported |= !h;
        if any_hand && any_imported {
            break;
        }
    }
    let why = if fills && repairs {
        "it both fills and repairs rows; each is its own step (a ledger commit says `import` or `put`, or `repair`): commit them separately"
    } else if any_hand && any_imported {
        "it fills hand-written rows and imported rows together; each is its own step (a ledger commit says `put` or `import`): commit them separately"
    } else {
        return Ok(match (fills, repairs) {
            (true, _) if any_hand => Some(Kind::Hand),
            (true, _) => Some(Kind::Imported),
            (false, true) => Some(Kind::Repairs),
            (false, false) => None,
        });
    };
    Err(Reason::new(why).rule(Rule::Admission(7)))
}

/// Why an appended repair with a blank note is refused (`repair` and the hooks alike).
pub const REPAIR_NOTE_EMPTY: &str =
    "a repair's note is empty; it must say what the person fixed (`git ledger repair <ID> --note TEXT`)";

/// The hint that comes with a retry.
pub const RETRY_HINT: &str = "to run the task again, raise `repetitions` (or add a task) in the draft and pin a new declaration; this row keeps its attempt";

const ROW_RULE: Rule = Rule::Admission(4);
const RECORD_RULE: Rule = Rule::Admission(5);

/// One changed row of a [`LedgerChange`]: its state before and after (both passed
/// [`Row::check`]).
#[derive(Debug, Clone)]
pub struct RowEdit {
    pub before: Row,
    pub after: Row,
    /// Where the new row came from, for messages (the record path a writer was given); empty
    /// when the change was read from two states (commits, files).
    pub from: String,
}

/// What happened to one record file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordEdit {
    /// A new record file, with the SHA-256 of its bytes (`None`: its bytes could not be read,
    /// which the reduction reported).
    Added {
        sha256: Option<String>,
    },
    Changed,
    Removed,
}

/// One record file a change touches.
#[derive(Debug, Clone)]
pub struct RecordFile {
    /// The SHA-256 (64 hex) of the record key `<kind>:<id>` it holds ([`record_id`]).
    pub id: String,
    /// How messages name it (`record file records/…`, `the record's bytes (<path>)`).
    pub shown: String,
    pub edit: RecordEdit,
}

/// The record files of a change.
#[derive(Debug, Clone)]
pub enum Records {
    /// The change carries record files (a ledger ref's `records/`, a writer's record bytes).
    /// `name`, when set, names the file a record key belongs at (for "no record file … was
    /// added").
    Files {
        files: Vec<RecordFile>,
        name: Option<fn(&str) -> String>,
    },
    /// The form holds no record files (a ledger document): a filled row's record is its
    /// `native_record` key, and only "one record, one row" applies.
    Keys,
}

/// A ledger change: what every path that writes or judges a ledger reduces its input to.
#[derive(Debug, Clone)]
pub struct LedgerChange {
    /// The changed rows, in the order reasons are listed (schedule order, or a writer's).
    pub rows: Vec<RowEdit>,
    pub records: Records,
}

impl LedgerChange {
    /// Two states of one ledger document as a change (`pre-commit`, `diff --files`): each row
    /// whose canonical bytes differ, no record files (a ledger file has none: a filled row's
    /// record is its `native_record` key).
    pub fn between(decl: &Declaration, old: &Ledger, new: &Ledger) -> LedgerChange {
        let rows = (old.rows.iter().zip(&new.rows))
            .filter(|(a, b)| a != b && a.canonical(decl) != b.canonical(decl))
            .map(|(a, b)| RowEdit {
                before: a.clone(),
                after: b.clone(),
                from: String::new(),
            })
            .collect();
        LedgerChange {
            rows,
            records: Records::Keys,
        }
    }
}

impl LedgerChange {
    /// The change of the rows at `rows` (indices into `self.rows`) alone, with the record files
    /// those rows name.
    pub fn only(&self, rows: &[usize]) -> LedgerChange {
        let rows: Vec<RowEdit> = rows.iter().map(|&i| self.rows[i].clone()).collect();
        let records = match &self.records {
            Records::Keys => Records::Keys,
            Records::Files { files, name } => {
                let named: HashSet<String> = (rows.iter())
                    .filter_map(|e| e.after.native_record().map(|r| record_id(&r.key())))
                    .collect();
                Records::Files {
                    files: (files.iter())
                        .filter(|f| named.contains(&f.id))
                        .cloned()
                        .collect(),
                    name: *name,
                }
            }
        };
        LedgerChange { rows, records }
    }
}

/// What [`admit`] asks of the ledger state a change applies to.
pub trait LedgerState {
    /// Where record key `<kind>:<id>` is already in the ledger (`row X`, a record file's path),
    /// if it is.
    fn record_owner(&mut self, key: &str) -> crate::Result<Option<String>>;
}

/// A ledger state whose records are those its rows name (a ledger document).
pub struct RowsState<'a>(pub &'a [Row]);

impl LedgerState for RowsState<'_> {
    fn record_owner(&mut self, key: &str) -> crate::Result<Option<String>> {
        Ok(self
            .0
            .iter()
            .find(|r| r.native_record().is_some_and(|n| n.key() == key))
            .map(|r| format!("row {}", r.schedule_id())))
    }
}

/// A refusal of [`admit`]: every reason, and the next steps a person may take (the one type
/// every refusal is).
pub use crate::error::Reasons as Refusal;

/// The identity of a record: the SHA-256 (64 hex) of its key `<kind>:<id>`, which names its
/// file in a ledger ref.
pub fn record_id(key: &str) -> String {
    crate::sha256_hex(key.as_bytes())
}

/// Decide a ledger change against the state it applies to: `Ok` with what the step does (its
/// kind, and what each row did in the order of `change.rows`), or every reason it is refused.
/// `Err` of the outer result is a failure to read the state.
pub fn admit(
    decl: &Declaration,
    change: &LedgerChange,
    state: &mut dyn LedgerState,
) -> crate::Result<Result<Step, Refusal>> {
    let mut reasons = Vec::new();
    let mut hints = Vec::new();
    let mut done = Vec::new();
    // Each row named so far, with where it came from (a change may name thousands).
    let mut seen: HashMap<&str, &str> = HashMap::with_capacity(change.rows.len());
    // Rows that claim a record: (schedule id, record key, declared sha256, where from).
    let mut claims: Vec<(&str, String, &str, &str)> = Vec::new();
    for e in &change.rows {
        let id = e.after.schedule_id();
        if let Some(first) = seen.get(id) {
            reasons.push(
                Reason::new(format!(
                    "is filled twice by this change ({first} and {}); one row holds one attempt",
                    e.from
                ))
                .row(id)
                .rule(ROW_RULE),
            );
            continue;
        }
        seen.insert(id, &e.from);
        if let Some(r) = retry(decl, &e.before, &e.after) {
            reasons.push(r);
            if !hints.iter().any(|h| h == RETRY_HINT) {
                hints.push(RETRY_HINT.to_owned());
            }
        } else {
            match transition(decl, &e.before, &e.after) {
                Ok(c) => {
                    done.push(c);
                    if c != RowChange::Filled {
                        continue;
                    }
                }
                Err(r) => {
                    reasons.extend(r);
                    continue;
                }
            }
        }
        if let Some(rec) = e.after.native_record() {
            claims.push((id, rec.key(), rec.sha256, &e.from));
        }
    }
    records(change, state, &claims, &mut reasons)?;
    let kind = one_kind(change, &done);
    Ok(if reasons.is_empty() && kind.is_ok() {
        Ok(Step {
            kind: kind.ok().flatten(),
            rows: done,
        })
    } else {
        reasons.extend(kind.err());
        let mut refusal = Refusal::from(reasons);
        for h in hints {
            refusal.hint(h);
        }
        Err(refusal)
    })
}

/// What [`replay`] answers for a commit's rows on another tip.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// The rows that follow the tip, as one step (indices into the change's rows, in order),
    /// and what that step does (`None`: no row does).
    pub admitted: Vec<usize>,
    pub step: Option<Step>,
    /// The rows the tip already holds as they are (the same attempt arrived twice).
    pub same: Vec<usize>,
    /// The rows the tip refuses, each with its reasons, in order.
    pub refused: Vec<(usize, Vec<Reason>)>,
}

/// `sync`'s question: which rows of a commit made elsewhere may follow another tip. `change`
/// holds the commit's rows, each `before` as the tip holds it, and the record files they would
/// add or change there; `state` is the tip. A row the tip holds as it is is already there;
/// the rest is decided as one change; when [`admit`] refuses it, each row alone says which
/// rows the tip refuses, and the rest is decided again as one change (refused too, with the
/// reasons of the whole, if it still is).
pub fn replay(
    decl: &Declaration,
    change: &LedgerChange,
    state: &mut dyn LedgerState,
) -> crate::Result<Replay> {
    let mut out = Replay::default();
    let mut rest = Vec::new();
    for (i, e) in change.rows.iter().enumerate() {
        if e.before == e.after || e.before.canonical(decl) == e.after.canonical(decl) {
            out.same.push(i);
        } else {
            rest.push(i);
        }
    }
    if rest.is_empty() {
        return Ok(out);
    }
    if let Ok(step) = admit(decl, &change.only(&rest), state)? {
        (out.admitted, out.step) = (rest, Some(step));
        return Ok(out);
    }
    let mut kept = Vec::new();
    for i in rest {
        match admit(decl, &change.only(&[i]), state)? {
            Ok(_) => kept.push(i),
            Err(r) => out.refused.push((i, r.into_vec())),
        }
    }
    if kept.is_empty() {
        return Ok(out);
    }
    match admit(decl, &change.only(&kept), state)? {
        Ok(step) => (out.admitted, out.step) = (kept, Some(step)),
        Err(r) => {
            let reasons = r.into_vec();
            out.refused
                .extend(kept.into_iter().map(|i| (i, reasons.clone())));
        }
    }
    Ok(out)
}

/// One step is one kind of change (rule 7): it fills rows or repairs them, and fills
/// hand-written rows (`put`) or imported ones, not both — a ledger commit's message says one of
/// them, and a ledger file follows its predecessor by the same steps.
fn one_kind(change: &LedgerChange, done: &[RowChange]) -> Result<Option<Kind>, Reason> {
    let hand = (change.rows.iter())
        .filter(|e| e.before.is_deferred() && !e.after.is_deferred())
        .map(|e| is_hand(&e.after));
    kind_of(
        done.contains(&RowChange::Filled),
        done.iter().any(|c| matches!(c, RowChange::Repaired(_))),
        hand,
    )
}

/// Rule 5 for the rows that claim a record (see the module documentation).
fn records(
    change: &LedgerChange,
    state: &mut dyn LedgerState,
    claims: &[(&str, String, &str, &str)],
    reasons: &mut Vec<Reason>,
) -> crate::Result<()> {
    let (files, name) = match &change.records {
        Records::Files { files, name } => (Some(files.as_slice()), *name),
        Records::Keys => (None, None),
    };
    // Record key -> the row that claimed it; record id -> the first file of that id that was
    // added, and any file of that id.
    let mut claimed: HashMap<&str, &str> = HashMap::with_capacity(claims.len());
    let mut used = vec![false; files.map_or(0, <[_]>::len)];
    let (mut added_at, mut any_at) = (HashMap::new(), HashMap::new());
    for (i, f) in files.unwrap_or_default().iter().enumerate() {
        any_at.entry(f.id.as_str()).or_insert(i);
        if matches!(f.edit, RecordEdit::Added { .. }) {
            added_at.entry(f.id.as_str()).or_insert(i);
        }
    }
    for &(id, ref key, sha, from) in claims {
        let bad = |s: String, field: &str| Reason::new(s).row(id).field(field).rule(RECORD_RULE);
        // Where the row came from, as a reason shows it (made only for a reason).
        let from = || {
            if from.is_empty() {
                String::new()
            } else {
                format!(" ({from})")
            }
        };
        if let Some(other) = claimed.get(key.as_str()) {
            reasons.push(bad(
                format!("record {key}{} would fill two rows ({other} and {id}); one record cannot fill two rows", from()),
                "native_record",
            ));
            continue;
        }
        claimed.insert(key, id);
        let rid = record_id(key);
        if let Some(owner) = state.record_owner(key)? {
            reasons.push(bad(
                format!(
                    "record {key}{} already filled {owner}; one record cannot fill two rows",
                    from()
                ),
                "native_record",
            ));
            // Its file is the ledger's already: whether the change brings it again is no second
            // reason (a file it changes still is).
            if let Some(&i) = added_at.get(rid.as_str()) {
                used[i] = true;
            }
            continue;
        }
        let Some(files) = files else { continue };
        match added_at.get(rid.as_str()).copied() {
            Some(i) => {
                used[i] = true;
                let f = &files[i];
                if let RecordEdit::Added { sha256: Some(got) } = &f.edit {
                    if got != sha {
                        reasons.push(bad(
                            format!("is {sha}, but {} hashes to {got}", f.shown),
                            "native_record.sha256",
                        ));
                    }
                }
            }
            None if any_at.contains_key(rid.as_str()) => {} // changed or removed: below
            None => {
                let file = name.map(|n| format!(" {}", n(key))).unwrap_or_default();
                reasons.push(bad(
                    format!("no record file{file} was added for record {key} (every filled row adds exactly one)"),
                    "native_record",
                ));
            }
        }
    }
    // A record file that a row of the change names but does not fill (a row refused above)
    // is that row's reason, not one of its own.
    // (Made only when a file added is not used: an import's files all are.)
    let mut named: Option<HashSet<String>> = None;
    let mut named_by_a_row = |id: &str| {
        (named.get_or_insert_with(|| {
            (change.rows.iter())
                .filter_map(|e| e.after.native_record().map(|r| record_id(&r.key())))
                .collect()
        }))
        .contains(id)
    };
    for (f, used) in files.unwrap_or_default().iter().zip(used) {
        let what = match f.edit {
            RecordEdit::Added { .. } if used || named_by_a_row(&f.id) => continue,
            RecordEdit::Added { .. } => "was added, but no row this commit fills names it",
            RecordEdit::Changed => "changed; existing record files never change or disappear",
            RecordEdit::Removed => "was removed; existing record files never change or disappear",
        };
        reasons.push(Reason::new(format!("{} {what}", f.shown)).rule(RECORD_RULE));
    }
    Ok(())
}

/// A retry: `before` holds an attempt, and the new row gives it another native outcome or
/// record, fills it again with the same row, or writes the attempt of the same record again
/// with another field (a re-import of changed harness output, or a hand edit of a filled row:
/// the rows cannot tell them apart, so each is told it is a retry and which field shows it).
/// The reason names that field (the outcome first); asked of the rows alone, whoever asks.
fn retry(decl: &Declaration, before: &Row, after: &Row) -> Option<Reason> {
    let retried = retried(decl, before, after)?;
    let attempt = |r: &Row| {
        format!(
            "{}{}",
            r.native_outcome(),
            r.native_record()
                .map(|r| format!(", from {}", r.key()))
                .unwrap_or_default()
        )
    };
    let was = attempt(before);
    let (now, field) = match retried {
        Retried::Another(f) => {
            let now = attempt(after);
            let now = if now == was {
                String::new() // the same key, another sha256
            } else {
                format!("; the new row: {now}")
            };
            (now, Some(f))
        }
        Retried::Again => (String::new(), None),
        Retried::Rewritten(f) => {
            // Short values are shown (a hand edit's); a long one (a runtime identity) only named.
            let (a, b) = (before.get(f).to_string(), after.get(f).to_string());
            let values = if a.len() + b.len() <= 120 {
                format!(" (was {a}, now {b})")
            } else {
                String::new()
            };
            (
                format!("; the new row, from the same record, changes {f}{values}"),
                Some(f),
            )
        }
    };
    let r = Reason::new(format!(
        "already holds an attempt ({was}){now}; a filled row is never replaced (a retry needs a new declared schedule, and the original row stays)"
    ))
    .row(before.schedule_id())
    .rule(ROW_RULE);
    Some(match field {
        Some(f) => r.field(f),
        None => r,
    })
}

/// How `after` retries `before` (see [`retry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retried<'a> {
    /// Another native outcome or record, in this field.
    Another(&'static str),
    /// The same attempt again (the same row, or the row without repairs recorded since).
    Again,
    /// The same outcome and record, and this field (the first in the declaration's order)
    /// written otherwise.
    Rewritten(&'a str),
}

/// Whether `after` retries `before` (see [`retry`]); `None` when `before` is DEFERRED, or
/// when only the interventions differ (what [`transition`] decides: appended repairs, or a
/// recorded intervention changed).
fn retried<'a>(decl: &'a Declaration, before: &Row, after: &Row) -> Option<Retried<'a>> {
    if before.is_deferred() || before.schedule_id() != after.schedule_id() {
        return None; // a row that names another attempt: the transition's reason
    }
    if before.native_outcome() != after.native_outcome() {
        return Some(Retried::Another("native_outcome"));
    }
    if !json::value_eq(before.get("native_record"), after.get("native_record")) {
        return Some(Retried::Another("native_record"));
    }
    if same_attempt(decl, before, after) {
        return Some(Retried::Again);
    }
    (decl.attempt_fields.iter())
        .filter(|f| *f != "interventions_decision_or_repair")
        .find(|f| !json::value_eq(before.get(f), after.get(f)))
        .map(|f| Retried::Rewritten(f.as_str()))
}

/// Whether `after` is `before` again, or `before`'s attempt written again without some of the
/// interventions recorded since (a writer's import or put of the same record into a row that
/// was repaired since): the same attempt filled anew, not a repair.
fn same_attempt(decl: &Declaration, before: &Row, after: &Row) -> bool {
    if before == after || before.canonical(decl) == after.canonical(decl) {
        return true;
    }
    let (was, now) = (interventions(before), interventions(after));
    let fewer = now.len() < was.len() && now.iter().zip(was).all(|(a, b)| json::value_eq(a, b));
    fewer
        && (decl.attempt_fields.iter())
            .filter(|f| *f != "interventions_decision_or_repair")
            .all(|f| json::value_eq(before.get(f), after.get(f)))
}

/// What a change did to one row, admitted or not (what `log` shows of any commit, a refused
/// one too): the question [`admit`] asks first of each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Did {
    /// A DEFERRED row now holds an attempt.
    Filled,
    /// A row that held an attempt was given another, the same again, or its record's attempt
    /// with another field: a retry, refused.
    Retried,
    /// A filled row's interventions changed, nothing else: a repair when [`admit`] admits it.
    Changed,
    /// A DEFERRED row stays DEFERRED.
    Nothing,
}

/// What `e` did to its row (see [`Did`]).
pub fn did(decl: &Declaration, e: &RowEdit) -> Did {
    if e.before.is_deferred() {
        if e.after.is_deferred() {
            Did::Nothing
        } else {
            Did::Filled
        }
    } else if retried(decl, &e.before, &e.after).is_some() {
        Did::Retried
    } else {
        Did::Changed
    }
}

/// [`transition`] after the retry check, each reason found at `at` (a commit, a file): what
/// the fuzz targets compare.
pub fn row_transition(
    decl: &Declaration,
    parent: &Row,
    child: &Row,
    at: &str,
) -> Result<RowChange, Vec<Reason>> {
    if let Some(r) = retry(decl, parent, child) {
        return Err(vec![r.at(at)]);
    }
    transition(decl, parent, child).map_err(|r| r.into_iter().map(|r| r.at(at)).collect())
}

/// Decide whether `child` may follow `parent` for one scheduled attempt (not a retry: see
/// [`admit`]). Both rows have already passed [`Row::check`]. A row filled from a hand record
/// names that record after itself; an appended repair says what was fixed (a note that is not
/// blank).
pub fn transition(decl: &Declaration, parent: &Row, child: &Row) -> Result<RowChange, Vec<Reason>> {
    let id = parent.schedule_id();
    let bad = |field: Option<&str>, s: String| {
        let r = Reason::new(s).row(id).rule(ROW_RULE);
        match field {
            Some(f) => r.field(f),
            None => r,
        }
    };
    if child.schedule_id() != id {
        // A caller pairs rows by path or position; a row that names another attempt is not
        // a change of this one (and would otherwise fill a DEFERRED slot with another row).
        return Err(vec![bad(
            Some("schedule_id"),
            format!(
                "the new row names {:?}; a row never moves to another scheduled attempt",
                child.schedule_id()
            ),
        )]);
    }
    if parent.is_deferred() {
        if child.is_deferred() {
            // Both equal their template (Row::check), so nothing changed.
            return Err(vec![bad(
                None,
                "a DEFERRED row was rewritten without change".into(),
            )]);
        }
        let Some(rec) = child.native_record() else {
            // Rule 5, not 4: the row checks admit a null `native_record`, and what the row
            // then lacks is the record file each newly filled row adds.
            return Err(vec![bad(
                Some("native_record"),
                "a filled row names the record it was filled from (one record file per filled row)"
                    .into(),
            )
            .rule(RECORD_RULE)]);
        };
        if rec.kind == "hand" && rec.id != id {
            // `put` names a hand record after its own row; one named after another row takes
            // that row's record key, and that row's `put` would then be refused.
            return Err(vec![bad(
                Some("native_record.id"),
                format!(
                    "a hand record is named after the row it fills ({{\"kind\": \"hand\", \"id\": {id:?}}}, as `put` writes it), not {:?}: it would take the record key of another row and block that row's `put`",
                    rec.id
                ),
            )]);
        }
        return Ok(RowChange::Filled);
    }
    // A filled row: only appended repairs.
    let mut reasons = Vec::new();
    for f in &decl.attempt_fields {
        if f == "interventions_decision_or_repair" {
            continue;
        }
        if !json::value_eq(parent.get(f), child.get(f)) {
            let what = if f == "native_outcome" || f == "native_record" {
                "a filled row is never replaced (a retry needs a new declared schedule; the original row stays)"
            } else {
                "a filled row admits no change but appended repair interventions"
            };
            reasons.push(bad(
                Some(f),
                format!("{what} (was {}, now {})", parent.get(f), child.get(f)),
            ));
        }
    }
    let before = interventions(parent);
    let after = interventions(child);
    let field = Some("interventions_decision_or_repair");
    if after.len() < before.len() || !before.iter().zip(after).all(|(a, b)| json::value_eq(a, b)) {
        reasons.push(bad(
            field,
            "recorded interventions never change or disappear; a repair is appended".into(),
        ));
    } else {
        for extra in &after[before.len()..] {
            if extra.get("kind").and_then(Value::as_str) != Some("repair") {
                reasons.push(bad(
                    field,
                    format!(
                        "only repair interventions may be appended to a filled row, not {extra}"
                    ),
                ));
            } else if extra
                .get("note")
                .and_then(Value::as_str)
                .is_none_or(|n| n.trim().is_empty())
            {
                reasons.push(bad(field, REPAIR_NOTE_EMPTY.into()));
            }
        }
    }
    if !reasons.is_empty() {
        return Err(reasons);
    }
    match after.len() - before.len() {
        0 => Err(vec![bad(
            None,
            "a filled row was rewritten without change".into(),
        )]),
        n => Ok(RowChange::Repaired(n)),
    }
}

fn interventions(row: &Row) -> &[Value] {
    row.get("interventions_decision_or_repair")
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

#[cfg(test)]
mod tests;
