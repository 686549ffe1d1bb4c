//! Proof that the paths agree (issue 17, item 2; issue 28, item 2): generated ledger changes,
//! each applied through every path that decides one — the file-mode writer (`store::verdict` on
//! a `FileStore`), the ref-mode writer (`store::verdict` on a `RefStore`), the commit validator
//! (the change committed with plumbing, `Admission::step_verdict`), `pre-commit`
//! (`hook::precommit::verdict` over a real repository whose HEAD holds the parent ledger file
//! and whose index holds the new one), `diff --files` (`ledger_diff::files_verdict`), `sync`'s
//! replay question (`admission::replay`, the parent as the remote's tip) and `log`
//! (`git::history::history` of the committed change) — must get the same verdict, and their
//! reasons must name the same rows, fields and rules.
//!
//! The changes, over a declaration of six rows and three parent states (every row DEFERRED; two
//! rows filled; three filled, one of them repaired): fills from harness records and from hand
//! records (`put`; one named after another row), fills whose record has other bytes than
//! `native_record.sha256` says, retries (another record or outcome; the attempt's own record
//! with another outcome; the same attempt written again over a row repaired since; the same
//! record and outcome with another field, as a re-import of changed harness output builds it
//! — the case the writers' old `fills` flag answered differently), edits of each field of a
//! filled row, repairs (with a note, a blank note, a decision instead; a repair after a
//! repair), repairs mixed with edits, one record filling two rows of the change, a record the
//! parent already holds, a DEFERRED row carrying one field (refused by the row checks, group 6
//! of `ledger.md`). No writer's change can hold that last row (a `RowWrite` holds a `Row`, which
//! only `Row::check` builds; `import` never builds a DEFERRED row), so its writer verdict is
//! `put`'s, in both modes, which refuses a DEFERRED outcome before the row checks with its own
//! reason: it must refuse naming that row and no other. A change a writer cannot express
//! (fills and repairs together, or an edit in an import) goes through the other paths only. A ledger file holds no record files, so `pre-commit` and `diff --files` are compared
//! without the reasons only record bytes can give (`native_record.sha256`, a missing record
//! file). `sync`'s replay question must keep every row of a change the validator admits, and
//! refuse at least one row of one it refuses, with reasons the validator gives (asked of the
//! change as the test builds it: `sync`'s own reduction of trees, `Tip::change`, is private to
//! a sync and reached only by running one against a remote whose tip moved, one fetch, replay
//! and push a case; the sync tests drive it on chosen conflicts instead); `log` must show each
//! changed row as an attempt (a fill or a retry) or a repair, and an admitted change as
//! admitted with its message.
//!
//! Numbers: `AGREE_CASES` changes (default 1,000; `AGREE_SEED` replays a run), every one
//! through every path (`cargo test --test cli agree::every -- --nocapture` prints the counts
//! and the time). Seed 0x5eed_a9ee (2026-12-02, debug build, 2 shared cores): 1,000 changes, 30
//! of them empty, 810 refused and 160 admitted, 0 disagreements, 19–57 s; with the `fills`
//! flag put back, 272 (76 of the writers, every one a re-import; 196 of `log`, which showed
//! an edit of a filled row as a repair).

use std::collections::BTreeMap;
use std::path::Path;

use git_ledger::admission::RowChange;
use git_ledger::declaration::Declaration;
use git_ledger::git::ObjectId;
use git_ledger::ledger::{Ledger, Row};
use git_ledger::refusal::{Reason, Rule};
use git_ledger::store::{Change, ChangeKind, RowWrite};
use serde_json::{json, Value};

use crate::common::{git, new_repo};
use crate::gitstore::{declaration_value, pretty, ID};

const MAX: u64 = 1 << 26;

/// A small xorshift generator: the same seed, the same changes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// The bytes of the record with key `key` (a record the parent holds has these bytes too).
fn record_bytes(key: &str) -> Vec<u8> {
    format!("the record {key}\n").into_bytes()
}

fn sha(bytes: &[u8]) -> String {
    git_ledger::sha256_hex(bytes)
}

/// The record kind a row of `decl` is filled from (its task's kind).
fn kind_of(decl: &Declaration, sid: &str) -> &'static str {
    if sid.starts_with("arena/") {
        "arena"
    } else {
        let _ = decl;
        "scenario"
    }
}

/// How many interventions a row's value holds.
fn interventions(v: &Value) -> usize {
    v["interventions_decision_or_repair"]
        .as_array()
        .map_or(0, Vec::len)
}

/// A filled row of `sid`: a non-PASS outcome with a reason, from record `id`.
fn filled_value(decl: &Declaration, sid: &str, outcome: &str, id: &str) -> Value {
    let mut v = Row::template(decl, sid).unwrap().to_value();
    let kind = kind_of(decl, sid);
    let key = format!("{kind}:{id}");
    v["native_outcome"] = outcome.into();
    v["reason"] = format!("{outcome} as recorded").into();
    v["native_record"] = json!({"kind": kind, "id": id, "sha256": sha(&record_bytes(&key))});
    v
}

fn checked(decl: &Declaration, v: &Value) -> Row {
    Row::check(decl, v, "agree").unwrap_or_else(|r| panic!("{v}: {r:?}"))
}

/// One row of a change: its new state and the record bytes that come with it (a new record).
#[derive(Clone, Debug)]
struct Written {
    row: Row,
    record: Option<(String, Vec<u8>)>,
}

/// One generated change on a parent state.
#[derive(Clone, Debug)]
struct Case {
    parent: usize,
    what: Vec<&'static str>,
    rows: Vec<Written>,
    /// The kind a writer would give it (`None`: no writer writes such a change).
    kind: Option<ChangeKind>,
    /// A DEFERRED row carrying one field (a row no check admits, so the change holds only it).
    unchecked: Option<Value>,
}

/// A parent state: its rows, and the commit holding it on the ledger ref.
struct Parent {
    rows: Vec<Row>,
    commit: ObjectId,
}

fn outcomes(sid: &str) -> &'static [&'static str] {
    if sid.starts_with("arena/") {
        &["FAIL", "ERROR", "STOPPED"]
    } else {
        &["ERROR", "INTERRUPTED_UNGRADED"]
    }
}

/// One of the non-PASS outcomes of `sid`'s task.
fn outcome(rng: &mut Rng, sid: &str) -> &'static str {
    let all: &[&'static str] = outcomes(sid);
    all[rng.below(all.len())]
}

/// Edits of one field of a filled row, each a valid row on its own.
fn edit_field(rng: &mut Rng, v: &mut Value) -> &'static str {
    let edits: &[(&str, Value)] = &[
        ("reason", json!("edited later")),
        ("elapsed_seconds", json!(12.5)),
        ("estimated_usd", json!(0.75)),
        ("evidence_refs", json!(["log://x"])),
        ("option_deviations", json!(["--extra"])),
        ("source_revision", json!("c".repeat(40))),
        ("native_status", json!("RUNNING")),
        ("oracle_checks", json!([{"name": "t", "ok": true}])),
        ("runner_options", json!(["--a"])),
        ("usage", json!({"calls": 3})),
    ];
    let (f, val) = rng.pick(edits);
    v[*f] = val.clone();
    f
}

fn generate(decl: &Declaration, parents: &[Parent], rng: &mut Rng, n: usize) -> Case {
    let parent = rng.below(parents.len());
    let rows = &parents[parent].rows;
    let ids: Vec<String> = rows.iter().map(|r| r.schedule_id().to_owned()).collect();
    let deferred: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].is_deferred()).collect();
    let filled: Vec<usize> = (0..rows.len())
        .filter(|&i| !rows[i].is_deferred())
        .collect();
    let mut case = Case {
        parent,
        what: Vec::new(),
        rows: Vec::new(),
        kind: None,
        unchecked: None,
    };
    if rng.below(12) == 0 {
        // A DEFERRED row that carries one field: refused by the row checks (group 6).
        let i = *rng.pick(&deferred);
        let mut v = rows[i].to_value();
        let carried = [
            ("elapsed_seconds", json!(3.5)),
            ("estimated_usd", json!(0.25)),
            ("native_status", json!("RUNNING")),
            ("evidence_refs", json!(["log://y"])),
            ("usage", json!({"calls": 1})),
        ];
        let (f, val) = rng.pick(&carried);
        v[*f] = val.clone();
        case.unchecked = Some(v);
        case.what.push("deferred with a field");
        case.kind = Some(ChangeKind::Import);
        return case;
    }
    let mut used: Vec<usize> = Vec::new();
    let ops = 1 + rng.below(3);
    let (mut fills, mut repairs, mut hand) = (false, false, false);
    for k in 0..ops {
        let fill_ops: &[&str] = if deferred.iter().all(|i| used.contains(i)) {
            &[]
        } else {
            &[
                "fill",
                "fill",
                "put",
                "put",
                "bad hand",
                "bad hash",
                "clash in change",
                "clash with ledger",
            ]
        };
        let filled_ops: &[&str] = if filled.iter().all(|i| used.contains(i)) {
            &[]
        } else {
            &[
                "retry",
                "retry, same record",
                "refill",
                "reimport",
                "edit",
                "repair",
                "blank repair",
                "decision",
                "repair and edit",
            ]
        };
        let all: Vec<&str> = fill_ops.iter().chain(filled_ops).copied().collect();
        if all.is_empty() {
            break;
        }
        let op = *rng.pick(&all);
        let free = |pool: &[usize], used: &[usize], rng: &mut Rng| -> usize {
            let left: Vec<usize> = pool.iter().copied().filter(|i| !used.contains(i)).collect();
            *rng.pick(&left)
        };
        let rec = format!("c{n}-{k}");
        let mut op = op;
        match op {
            "put" | "bad hand" => {
                // A hand record (`put`): named after its own row, or after another one.
                let i = free(&deferred, &used, rng);
                used.push(i);
                let sid = &ids[i];
                let id = if op == "put" {
                    sid.clone()
                } else {
                    ids[(i + 1) % ids.len()].clone()
                };
                let key = format!("hand:{id}");
                let mut v = filled_value(decl, sid, outcome(rng, sid), &rec);
                v["native_record"] =
                    json!({"kind": "hand", "id": id, "sha256": sha(&record_bytes(&key))});
                case.rows.push(Written {
                    row: checked(decl, &v),
                    record: Some((key.clone(), record_bytes(&key))),
                });
                hand = true;
            }
            "fill" | "bad hash" => {
                let i = free(&deferred, &used, rng);
                used.push(i);
                let sid = &ids[i];
                let mut v = filled_value(decl, sid, outcome(rng, sid), &rec);
                let key = format!("{}:{rec}", kind_of(decl, sid));
                if op == "bad hash" {
                    v["native_record"]["sha256"] = sha(b"other bytes").into();
                }
                case.rows.push(Written {
                    row: checked(decl, &v),
                    record: Some((key.clone(), record_bytes(&key))),
                });
                fills = true;
            }
            "clash in change" => {
                // Two DEFERRED rows of one task kind, one record.
                let i = free(&deferred, &used, rng);
                let kind = kind_of(decl, &ids[i]);
                let Some(j) = deferred
                    .iter()
                    .copied()
                    .find(|&j| j != i && !used.contains(&j) && kind_of(decl, &ids[j]) == kind)
                else {
                    continue;
                };
                used.extend([i, j]);
                let key = format!("{kind}:{rec}");
                for x in [i, j] {
                    let v = filled_value(decl, &ids[x], outcome(rng, &ids[x]), &rec);
                    case.rows.push(Written {
                        row: checked(decl, &v),
                        record: Some((key.clone(), record_bytes(&key))),
                    });
                }
                fills = true;
            }
            "clash with ledger" => {
                let i = free(&deferred, &used, rng);
                let kind = kind_of(decl, &ids[i]);
                let held: Vec<String> = filled
                    .iter()
                    .filter_map(|&f| rows[f].native_record())
                    .filter(|r| r.kind == kind)
                    .map(|r| r.id.to_owned())
                    .collect();
                if held.is_empty() {
                    continue;
                }
                let id = rng.pick(&held).clone();
                used.push(i);
                let key = format!("{kind}:{id}");
                let v = filled_value(decl, &ids[i], outcome(rng, &ids[i]), &id);
                case.rows.push(Written {
                    row: checked(decl, &v),
                    record: Some((key.clone(), record_bytes(&key))),
                });
                fills = true;
            }
            _ => {
                let i = free(&filled, &used, rng);
                used.push(i);
                let sid = &ids[i];
                let mut v = rows[i].to_value();
                let mut record = None;
                let again = interventions(&v) > 0;
                match op {
                    "retry, same record" | "refill" | "reimport" => {
                        // The attempt's own record again: another outcome, or (on a row
                        // repaired since) the same attempt as first written, without its
                        // repairs, or (a re-import of changed harness output) the same
                        // outcome with another field. The same row again is no change of a
                        // tree or a file, so only a row repaired since is refilled.
                        let rec = rows[i].native_record().unwrap();
                        let (kind, id) = (rec.kind.to_owned(), rec.id.to_owned());
                        let same = rows[i].native_outcome().to_owned();
                        let now = if op == "refill" {
                            if !again {
                                continue;
                            }
                            same
                        } else if op == "reimport" {
                            same
                        } else {
                            let others: Vec<&str> = (outcomes(sid).iter().copied())
                                .filter(|o| *o != same)
                                .collect();
                            rng.pick(&others).to_string()
                        };
                        v = filled_value(decl, sid, &now, &id);
                        if op == "reimport" {
                            edit_field(rng, &mut v);
                        }
                        let key = format!("{kind}:{id}");
                        record = Some((key.clone(), record_bytes(&key)));
                        fills = true;
                    }
                    "retry" => {
                        let outcome = outcome(rng, sid);
                        v = filled_value(decl, sid, outcome, &rec);
                        let key = format!("{}:{rec}", kind_of(decl, sid));
                        record = Some((key.clone(), record_bytes(&key)));
                        fills = true;
                    }
                    "edit" => {
                        edit_field(rng, &mut v);
                        repairs = true;
                    }
                    "repair" if again => {
                        v["interventions_decision_or_repair"]
                            .as_array_mut()
                            .unwrap()
                            .push(json!({"kind": "repair", "note": "fixed it again"}));
                        op = "repair after repair";
                        repairs = true;
                    }
                    _ => {
                        let (kind, note) = match op {
                            "blank repair" => ("repair", " "),
                            "decision" => ("decision", "approved"),
                            _ => ("repair", "fixed the import path"),
                        };
                        v["interventions_decision_or_repair"]
                            .as_array_mut()
                            .unwrap()
                            .push(json!({"kind": kind, "note": note}));
                        if op == "repair and edit" {
                            edit_field(rng, &mut v);
                        }
                        repairs = true;
                    }
                }
                case.rows.push(Written {
                    row: checked(decl, &v),
                    record,
                });
            }
        }
        case.what.push(op);
    }
    case.kind = match (fills, hand, repairs) {
        (true, false, false) => Some(ChangeKind::Import),
        (false, true, false) => Some(ChangeKind::Put),
        (false, false, _) => Some(ChangeKind::Repair),
        _ => None,
    };
    // A writer writes rows in schedule order.
    case.rows
        .sort_by_key(|w| decl.schedule_position(w.row.schedule_id()));
    case
}

/// What a verdict names: admitted, or each reason's (row, field, rule), sorted.
type Named = Result<(), Vec<(Option<String>, Option<String>, Option<Rule>)>>;

fn named(v: Result<(), Vec<Reason>>) -> Named {
    v.map_err(|r| {
        let mut n: Vec<_> = r.into_iter().map(|r| (r.row, r.field, r.rule)).collect();
        n.sort();
        n
    })
}

/// `v` without the reasons only record bytes can give (for the paths without record files).
fn without_record_bytes(v: &Named) -> Named {
    without(v, |(_, f, rule)| {
        *rule == Some(Rule::Admission(5)) && f.as_deref() == Some("native_record.sha256")
    })
}

/// `v` without the reasons `drop` picks.
fn without(
    v: &Named,
    drop: impl Fn(&(Option<String>, Option<String>, Option<Rule>)) -> bool,
) -> Named {
    match v {
        Ok(()) => Ok(()),
        Err(r) => {
            let rest: Vec<_> = r.iter().filter(|x| !drop(x)).cloned().collect();
            if rest.is_empty() {
                Ok(())
            } else {
                Err(rest)
            }
        }
    }
}

fn outer<T>(r: git_ledger::Result<Result<T, Vec<Reason>>>) -> Result<(), Vec<Reason>> {
    match r {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(r)) => Err(r),
        Err(git_ledger::Error::Refused(r)) => Err(r.into_vec()),
        Err(e) => panic!("{e}"),
    }
}

fn writer_change(case: &Case, kind: ChangeKind) -> Change {
    Change {
        kind,
        rows: case
            .rows
            .iter()
            .map(|w| RowWrite {
                row: w.row.clone(),
                record: (w.record.as_ref())
                    .map(|(_, b)| git_ledger::store::Record::new(b.as_slice())),
                source: String::new(),
            })
            .collect(),
    }
}

/// `put`'s verdict on the row file `bytes` for `sid` (the change it builds, decided as it
/// writes it).
fn put_verdict<S: git_ledger::store::Store>(
    s: &mut S,
    sid: &str,
    bytes: &[u8],
) -> Result<(), Vec<Reason>> {
    match git_ledger::hand::put(s, sid, bytes, "row.json", MAX) {
        Ok(change) => store_verdict(s, &change),
        Err(git_ledger::Error::Refused(r)) => Err(r.into_vec()),
        Err(e) => panic!("{e}"),
    }
}

fn store_verdict<S: git_ledger::store::Store>(
    s: &mut S,
    change: &Change,
) -> Result<(), Vec<Reason>> {
    match git_ledger::store::verdict(s, change) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(r)) => Err(r.into_vec()),
        Err(git_ledger::Error::Refused(r)) => Err(r.into_vec()),
        Err(e) => panic!("{e}"),
    }
}

/// The parent's ledger with the case's rows in their slots.
fn ledger_of(decl: &Declaration, rows: &[Row], case: Option<&Case>) -> Ledger {
    let mut rows = rows.to_vec();
    for w in case.map(|c| c.rows.as_slice()).unwrap_or_default() {
        rows[decl.schedule_position(w.row.schedule_id()).unwrap()] = w.row.clone();
    }
    Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows,
    }
}

/// The bytes of the case's new ledger file (a row no check admits written in its slot).
fn new_ledger_bytes(decl: &Declaration, parent: &[Row], case: &Case) -> Vec<u8> {
    let bytes = ledger_of(decl, parent, Some(case)).canonical(decl);
    let Some(v) = &case.unchecked else {
        return bytes;
    };
    let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
    let pos = decl
        .schedule_position(v["schedule_id"].as_str().unwrap())
        .unwrap();
    doc["rows"][pos] = v.clone();
    pretty(&doc)
}

/// The case committed on its parent with plumbing: the rows' files and each new record file.
fn commit_case(
    repo: &gix::Repository,
    decl: &Declaration,
    parent: &Parent,
    case: &Case,
) -> ObjectId {
    let info = repo.find_commit(parent.commit).unwrap();
    let tree = info.tree_id().unwrap().detach();
    let message = info.message_raw_sloppy().to_string();
    let mut editor = repo.edit_tree(tree).unwrap();
    let (mut filled, mut repaired) = (Vec::new(), Vec::new());
    if let Some(v) = &case.unchecked {
        let sid = v["schedule_id"].as_str().unwrap();
        let blob = repo
            .write_blob(crate::gitstore::canonical_row(v))
            .unwrap()
            .detach();
        editor
            .upsert(
                git_ledger::git::layout::row_path(sid),
                gix::objs::tree::EntryKind::Blob,
                blob,
            )
            .unwrap();
    }
    for w in &case.rows {
        let sid = w.row.schedule_id();
        let blob = repo.write_blob(w.row.canonical(decl)).unwrap().detach();
        editor
            .upsert(
                git_ledger::git::layout::row_path(sid),
                gix::objs::tree::EntryKind::Blob,
                blob,
            )
            .unwrap();
        if let Some((key, bytes)) = &w.record {
            let blob = repo.write_blob(bytes).unwrap().detach();
            editor
                .upsert(
                    git_ledger::git::layout::record_path(key),
                    gix::objs::tree::EntryKind::Blob,
                    blob,
                )
                .unwrap();
        }
        let before = &parent.rows[decl.schedule_position(sid).unwrap()];
        if before.is_deferred() {
            filled.push(&w.row);
        } else {
            repaired.push(&w.row);
        }
    }
    let tree = editor.write().unwrap().detach();
    let k = git_ledger::git::message::filled_of(&message, decl.schedule_len()).unwrap();
    let text = match git_ledger::git::message::expected(decl, &filled, &repaired, k) {
        Ok(e) => git_ledger::git::message::compose(&e, &[]),
        Err(_) => "no message fits\n".to_owned(),
    };
    let sig = repo.committer().unwrap().unwrap().to_owned().unwrap();
    let commit = gix::objs::Commit {
        message: text.into(),
        tree,
        author: sig.clone(),
        committer: sig,
        encoding: None,
        parents: vec![parent.commit].into(),
        extra_headers: Vec::new(),
    };
    repo.write_object(&commit).unwrap().detach()
}

/// The parent states, written by the ref-mode writer on `rf`: the root; two rows filled; a
/// third filled and one of the first repaired.
fn parents(dir: &Path, decl: &Declaration, rf: &str) -> Vec<Parent> {
    let mut store = git_ledger::git::store::RefStore::open(Some(dir), Some(rf), MAX).unwrap();
    let ids: Vec<String> = decl.schedule().map(|e| e.id.clone()).collect();
    let tip = |dir: &Path| ObjectId::from_hex(git(dir, &["rev-parse", rf]).as_bytes()).unwrap();
    let rows_now = |store: &mut git_ledger::git::store::RefStore| -> Vec<Row> {
        use git_ledger::store::Store;
        ids.iter().map(|id| store.row(id).unwrap()).collect()
    };
    let mut out = vec![Parent {
        rows: rows_now(&mut store),
        commit: tip(dir),
    }];
    let fill = |sid: &str, outcome: &str, id: &str| {
        let key = format!("{}:{id}", kind_of(decl, sid));
        RowWrite {
            row: checked(decl, &filled_value(decl, sid, outcome, id)),
            record: Some(git_ledger::store::Record::new(record_bytes(&key))),
            source: String::new(),
        }
    };
    let steps = [
        Change {
            kind: ChangeKind::Import,
            rows: vec![fill(&ids[0], "FAIL", "p1a"), fill(&ids[2], "ERROR", "p1b")],
        },
        Change {
            kind: ChangeKind::Import,
            rows: vec![fill(&ids[4], "ERROR", "p2c")],
        },
    ];
    for (i, change) in steps.into_iter().enumerate() {
        git_ledger::store::apply(&mut store, |_| Ok(change.clone())).unwrap();
        if i == 1 {
            let repair = git_ledger::hand::repair(&mut store, &ids[2], "fixed the path").unwrap();
            git_ledger::store::apply(&mut store, |_| Ok(repair.clone())).unwrap();
        }
        out.push(Parent {
            rows: rows_now(&mut store),
            commit: tip(dir),
        });
    }
    out
}

/// 1,000 seeded changes under the default prefix; under the branch prefix a fixed sample, the
/// first 100 of the same seed, so that this test's CI time does not double: what it varies
/// (the change) does not depend on the ledger ref's name.
fn every_path_decides_a_change_alike(prefix: &str) {
    let rf: &str = &format!("{prefix}{ID}");
    let full = if prefix == crate::common::PREFIXES[0] {
        1000
    } else {
        100
    };
    let cases: usize = std::env::var("AGREE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(full);
    let seed: u64 = std::env::var("AGREE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_a9ee);
    let started = std::time::Instant::now();

    // The ledger ref (ref mode, the validator), a ledger file (file mode), and a repository
    // with the ledger file on a branch (pre-commit).
    let refs = new_repo();
    crate::common::use_prefix(refs.path(), prefix);
    let files = tempfile::tempdir().unwrap();
    let decl_path = files.path().join("campaign.json");
    let decl_bytes = pretty(&declaration_value(ID, 2));
    std::fs::write(&decl_path, &decl_bytes).unwrap();
    let decl = Declaration::parse(&decl_bytes, MAX).unwrap();
    for (k, v) in [("user.name", "A"), ("user.email", "a@example.com")] {
        git(refs.path(), &["config", k, v]);
    }
    crate::common::ledger(refs.path(), &["init", decl_path.to_str().unwrap()]).ok();
    let parents = parents(refs.path(), &decl, rf);
    // Each change's objects stay in memory (the validator reads through them).
    let repo = gix::open(refs.path()).unwrap().with_object_memory();

    let branch = new_repo();
    for (k, v) in [("user.name", "A"), ("user.email", "a@example.com")] {
        git(branch.path(), &["config", k, v]);
    }
    std::fs::write(branch.path().join("campaign.json"), &decl_bytes).unwrap();

    let mut rng = Rng(seed);
    let generated: Vec<Case> = (0..cases)
        .map(|n| generate(&decl, &parents, &mut rng, n))
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let (mut pre_commits, mut replays) = (0, 0);
    // Time spent in pre-commit (with its `git add`) and in log.
    let mut times = [std::time::Duration::ZERO; 2];
    // Changes the validator refused and admitted.
    let mut admitted = [0usize; 2];
    let mut disagreements = Vec::new();
    for (p, parent) in parents.iter().enumerate() {
        let old = ledger_of(&decl, &parent.rows, None);
        let old_bytes = old.canonical(&decl);
        let a = Ledger::parse(&decl, &old_bytes, MAX).unwrap();
        // File mode: the parent's ledger file.
        let ledger_path = files.path().join(format!("ledger-{p}.json"));
        std::fs::write(&ledger_path, &old_bytes).unwrap();
        let mut file_store =
            git_ledger::store::file::FileStore::open(&decl_path, &ledger_path, MAX).unwrap();
        // Ref mode: the ref at the parent.
        git(refs.path(), &["update-ref", rf, &parent.commit.to_string()]);
        let mut ref_store =
            git_ledger::git::store::RefStore::open(Some(refs.path()), Some(rf), MAX).unwrap();
        // pre-commit: HEAD holds the parent's ledger file.
        std::fs::write(branch.path().join("ledger.json"), &old_bytes).unwrap();
        git(branch.path(), &["add", "-A"]);
        git(
            branch.path(),
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("parent {p}"),
            ],
        );

        let mut admission = git_ledger::git::admit::Admission::new(&repo, MAX);
        for (n, case) in generated.iter().enumerate().filter(|(_, c)| c.parent == p) {
            if case.rows.is_empty() && case.unchecked.is_none() {
                continue;
            }
            *seen.entry(case.what.join(" + ")).or_default() += 1;
            let mut verdicts: Vec<(&str, Named)> = Vec::new();
            let new_bytes = new_ledger_bytes(&decl, &parent.rows, case);
            // The commit validator.
            let child = commit_case(&repo, &decl, parent, case);
            let step = named(outer(admission.step_verdict(parent.commit, child)));
            verdicts.push(("commit validator", step.clone()));
            // The writers. A DEFERRED row carrying a field reaches no writer's change (a
            // `RowWrite` holds a `Row`, which only `Row::check` builds, and `import` builds
            // rows from records, never a DEFERRED one): the writer that takes a row as
            // written is `put`, which refuses a DEFERRED outcome before the row checks, with
            // its own reason. So both modes' `put` must refuse it naming the row the
            // validator names, and only that row.
            if let Some(v) = &case.unchecked {
                let sid = v["schedule_id"].as_str().unwrap();
                let rows_of = |n: &Named| match n {
                    Ok(()) => None,
                    Err(r) => Some(r.iter().map(|(row, _, _)| row.clone()).collect::<Vec<_>>()),
                };
                let want = rows_of(&step);
                for (path, put) in [
                    (
                        "file mode put",
                        put_verdict(&mut file_store, sid, &pretty(v)),
                    ),
                    ("ref mode put", put_verdict(&mut ref_store, sid, &pretty(v))),
                ] {
                    let put = named(put);
                    let (got, rows) = (rows_of(&put), rows_of(&step));
                    let same_row = got
                        .as_ref()
                        .zip(rows.as_ref())
                        .is_some_and(|(g, w)| g.iter().chain(w).all(|r| r.as_deref() == Some(sid)));
                    if !same_row {
                        disagreements.push(format!(
                            "change {n} (deferred with a field) on parent {p}: {path}: {put:?}\n  commit validator: {want:?}"
                        ));
                    }
                }
            } else if let Some(kind) = case.kind {
                let change = writer_change(case, kind);
                verdicts.push(("file mode", named(store_verdict(&mut file_store, &change))));
                verdicts.push(("ref mode", named(store_verdict(&mut ref_store, &change))));
            }
            // diff --files.
            let diff = match Ledger::parse_for_change(&decl, &new_bytes, MAX) {
                Ok(b) => named(outer(git_ledger::ledger_diff::files_verdict(&decl, &a, &b))),
                Err(r) => named(Err(r.into_vec())),
            };
            let mut keyed: Vec<(&str, Named)> = vec![("diff --files", diff)];
            // pre-commit, on every change.
            let t = std::time::Instant::now();
            pre_commits += 1;
            std::fs::write(branch.path().join("ledger.json"), &new_bytes).unwrap();
            git(branch.path(), &["add", "ledger.json"]);
            let branch_repo = gix::open(branch.path()).unwrap();
            let v = git_ledger::hook::precommit::verdict(&branch_repo, MAX)
                .map(|v| v.map_err(|r| r.into_vec()));
            keyed.push(("pre-commit", named(outer(v))));
            times[0] += t.elapsed();
            // sync's replay: the case's rows asked of the parent as the remote's tip.
            if case.unchecked.is_none() {
                if let Some(why) = replay_disagrees(&decl, &parent.rows, case, &step) {
                    disagreements.push(format!(
                        "change {n} ({}) on parent {p}: sync's replay: {why}",
                        case.what.join(" + ")
                    ));
                }
                replays += 1;
            }
            // log: what it says the commit did, and whether its message says so.
            let t = std::time::Instant::now();
            if let Some(why) = log_disagrees(&repo, &decl, parent, case, child, &step) {
                disagreements.push(format!(
                    "change {n} ({}) on parent {p}: log: {why}",
                    case.what.join(" + ")
                ));
            }
            times[1] += t.elapsed();
            let reference = step;
            admitted[usize::from(reference.is_ok())] += 1;
            for (path, v) in &verdicts {
                if *v != reference {
                    disagreements.push(format!(
                        "change {n} ({}) on parent {p}: {path}: {v:?}\n  commit validator: {reference:?}",
                        case.what.join(" + ")
                    ));
                }
            }
            let expected = without_record_bytes(&reference);
            // `diff --files` asks whether B follows A by admitted steps, so a change of two
            // kinds (fills and repairs) is two steps there, not a refusal.
            let by_steps = without(&expected, |(_, _, rule)| *rule == Some(Rule::Admission(7)));
            for (path, v) in &keyed {
                let expected = if *path == "diff --files" {
                    &by_steps
                } else {
                    &expected
                };
                if v != expected {
                    disagreements.push(format!(
                        "change {n} ({}) on parent {p}: {path}: {v:?}\n  commit validator (without record bytes): {expected:?}",
                        case.what.join(" + ")
                    ));
                }
            }
            // The model on its own, over the rows alone, agrees too.
            let model = model_verdict(&decl, &parent.rows, case);
            if case.unchecked.is_none() && model.is_ok() != expected.is_ok() {
                disagreements.push(format!(
                    "change {n}: the model says {model:?}, the validator {reference:?}"
                ));
            }
        }
    }
    eprintln!(
        "agree: pre-commit {:.1} s, log {:.1} s",
        times[0].as_secs_f64(),
        times[1].as_secs_f64()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements (seed {seed}):\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(10)].join("\n")
    );
    // Every kind of change was generated, admitted and refused ones among them (the full
    // run's claim: the branch prefix's sample of 100 is too small to meet every kind).
    let every_kind: &[&str] = if cases < 1000 {
        &[]
    } else {
        &[
            "fill",
            "put",
            "bad hand",
            "bad hash",
            "retry",
            "retry, same record",
            "refill",
            "reimport",
            "repair after repair",
            "edit",
            "repair",
            "blank repair",
            "decision",
            "repair and edit",
            "clash in change",
            "clash with ledger",
            "deferred with a field",
        ]
    };
    for op in every_kind {
        assert!(
            seen.keys().any(|k| k.split(" + ").any(|o| o == *op)),
            "no change did {op}: {seen:?}"
        );
    }
    assert_eq!(
        pre_commits,
        seen.values().sum::<usize>(),
        "every change through pre-commit"
    );
    assert!(
        admitted[0] >= cases / 10 && admitted[1] >= cases / 10,
        "refused, admitted: {admitted:?}"
    );
    eprintln!(
        "agree: {cases} changes ({} refused, {} admitted; {pre_commits} through pre-commit, {replays} through sync's replay, each through log), seed {seed}, {:.1} s",
        admitted[0],
        admitted[1],
        started.elapsed().as_secs_f64()
    );
}

/// The case's rows and record files as a change of the parent's state, as sync's replay asks
/// it of a tip (`admission::replay`).
fn replay_disagrees(
    decl: &Declaration,
    parent: &[Row],
    case: &Case,
    validator: &Named,
) -> Option<String> {
    use git_ledger::admission::{replay, LedgerChange, RecordEdit, RecordFile, Records, RowEdit};
    let held = |key: &str| {
        parent
            .iter()
            .any(|r| r.native_record().is_some_and(|n| n.key() == key))
    };
    let mut files = Vec::new();
    for w in &case.rows {
        if let Some((key, bytes)) = &w.record {
            let id = git_ledger::admission::record_id(key);
            // A record file the tip holds already is no edit (whose it is, the state says).
            if !held(key) && !files.iter().any(|f: &RecordFile| f.id == id) {
                files.push(RecordFile {
                    id,
                    shown: format!("record {key}"),
                    edit: RecordEdit::Added {
                        sha256: Some(sha(bytes)),
                    },
                });
            }
        }
    }
    let change = LedgerChange {
        rows: (case.rows.iter())
            .map(|w| RowEdit {
                before: parent[decl.schedule_position(w.row.schedule_id()).unwrap()].clone(),
                after: w.row.clone(),
                from: String::new(),
            })
            .collect(),
        records: Records::Files { files, name: None },
    };
    let state = &mut git_ledger::admission::RowsState(parent);
    let answer = replay(decl, &change, state).unwrap();
    let all = change.rows.len();
    match validator {
        // Every row the validator admits follows the tip, as one step.
        Ok(()) if answer.admitted.len() == all && answer.refused.is_empty() => None,
        Ok(()) => Some(format!(
            "the validator admits it, replay answers {answer:?}"
        )),
        // A refused change: replay refuses at least one row, and every reason it gives is
        // one the validator gives (a row refused with the rest names the rest's reasons).
        Err(reasons) => {
            if answer.refused.is_empty() {
                return Some(format!(
                    "the validator refuses it ({reasons:?}), replay keeps every row"
                ));
            }
            (answer.refused.iter())
                .flat_map(|(_, r)| r.iter())
                .map(|r| (r.row.clone(), r.field.clone(), r.rule))
                .find(|n| !reasons.contains(n))
                .map(|n| format!("replay gives {n:?}, which the validator ({reasons:?}) does not"))
        }
    }
}

/// What `log` says of the case's commit: an admitted one fills and repairs the rows the
/// validator's step says and its message is admitted; a refused one shows each changed row as
/// an attempt (a fill, or a retry) or a repair (any other change of a filled row).
fn log_disagrees(
    repo: &gix::Repository,
    decl: &Declaration,
    parent: &Parent,
    case: &Case,
    child: ObjectId,
    validator: &Named,
) -> Option<String> {
    if case.unchecked.is_some() {
        return None; // a row no check admits: log refuses to read it, as verify does
    }
    let history = git_ledger::git::history::history(repo, child).unwrap();
    let last = history.entries.last().unwrap();
    let mut attempts: Vec<&str> = last
        .attempts
        .iter()
        .map(|a| a.schedule_id.as_str())
        .collect();
    let mut repairs: Vec<&str> = last.repairs.iter().map(String::as_str).collect();
    attempts.sort();
    repairs.sort();
    let (mut want_attempts, mut want_repairs) = (Vec::new(), Vec::new());
    for w in &case.rows {
        let sid = w.row.schedule_id();
        let before = &parent.rows[decl.schedule_position(sid).unwrap()];
        // A retry: any field but the interventions written otherwise (another outcome or
        // record, or the same record's attempt with another field), or the same attempt
        // without the repairs it gained (no generated change removes an intervention
        // otherwise).
        let (mut was, mut now) = (before.to_value(), w.row.to_value());
        let fewer = interventions(&now) < interventions(&was);
        for v in [&mut was, &mut now] {
            v.as_object_mut()
                .unwrap()
                .remove("interventions_decision_or_repair");
        }
        let retried = !before.is_deferred() && (was != now || fewer);
        if before.is_deferred() || retried {
            want_attempts.push(sid);
        } else {
            want_repairs.push(sid);
        }
    }
    want_attempts.sort();
    want_repairs.sort();
    if (&attempts, &repairs) != (&want_attempts, &want_repairs) {
        return Some(format!(
            "attempts {attempts:?}, repairs {repairs:?}; the commit fills {want_attempts:?} and changes {want_repairs:?}"
        ));
    }
    if validator.is_ok() && !(last.admitted && last.message_admitted) {
        return Some(format!(
            "the validator admits it, log says admitted {}, message admitted {}",
            last.admitted, last.message_admitted
        ));
    }
    if validator.is_err() && last.admitted {
        return Some("the validator refuses it, log calls it admitted".into());
    }
    None
}

/// The change decided by the model alone, from the rows (no store, no Git).
fn model_verdict(decl: &Declaration, parent: &[Row], case: &Case) -> Result<Vec<RowChange>, ()> {
    use git_ledger::admission::{admit, LedgerChange, Records, RowEdit, RowsState};
    let change = LedgerChange {
        rows: case
            .rows
            .iter()
            .map(|w| RowEdit {
                before: parent[decl.schedule_position(w.row.schedule_id()).unwrap()].clone(),
                after: w.row.clone(),
                from: String::new(),
            })
            .collect(),
        records: Records::Keys,
    };
    admit(decl, &change, &mut RowsState(parent))
        .unwrap()
        .map(|s| s.rows)
        .map_err(|_| ())
}

crate::common::under_both_prefixes!(every_path_decides_a_change_alike);
