//! The `admission` fuzz target's harness, shared with `tests/cli/fuzz_regressions.rs`: a parent
//! and a child ledger commit of the embedded campaign, built in a real bare Git repository from
//! fuzzer bytes, judged by the commit-level admission validator (`docs/reference/layout.md`, "Admission"), and
//! what it admits checked against the rules by independent code.
//!
//! The repository is created once per process (a temporary directory): the template root commit
//! and two later states (rows filled validly, then one repaired) are written to disk; each
//! input's child objects are kept in gix's object memory (`repo.objects`, which the validator
//! reads through) and dropped after the input.
//!
//! Input: byte 0 chooses the parent (template root, filled, repaired) and the validator's size
//! bound; then ops, each an opcode byte and its arguments, edit a model of the parent's tree
//! (a list of leaf entries, duplicates allowed, modes as raw octal text) and the child's
//! parents. Trees and commits are serialised here, not by gix, so that entries Git would not
//! write (duplicates, unsorted trees, odd modes, a file and a directory of one name) are
//! reachable too.
//!
//! Each input's verdict is what the step, the update and the creation decided (see
//! [`Harness::run`]), written with `checks.rs`'s verdict helpers: a module that includes this
//! file includes `checks.rs` beside it as `checks`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::checks::verdict::{self, line, Refusal};
use git_ledger::declaration::Declaration;
use git_ledger::git::admit::{admit_update, Admission, Known};
use git_ledger::git::layout;
use git_ledger::git::message;
use git_ledger::git::store;
use git_ledger::json::DEFAULT_MAX_INPUT_BYTES;
use git_ledger::ledger::Row;
use git_ledger::report;
use gix::objs::{Find, Kind, Write};
use gix::ObjectId;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// One leaf entry of a tree model: full path (`/`-separated bytes), mode as Git writes it
/// (octal text), object id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    pub path: Vec<u8>,
    pub mode: Vec<u8>,
    pub oid: ObjectId,
}

/// A ledger state the child may follow: its commit and its tree model.
#[derive(Debug, Clone)]
pub struct Base {
    pub commit: ObjectId,
    pub leaves: Vec<Leaf>,
    /// Rows filled in it (its `Ledger-Filled` count).
    pub filled: usize,
}

/// The process-wide repository and the states built in it.
pub struct Harness {
    _dir: tempfile::TempDir,
    pub repo: gix::Repository,
    pub decl: Declaration,
    pub refname: String,
    /// Template root, rows filled, one repaired.
    pub bases: Vec<Base>,
    /// A valid filled row (as a value) for each schedule entry, where one could be made.
    pub fills: Vec<Option<Value>>,
    /// A tree holding one file (for "a tree where a file should be").
    pub small_tree: ObjectId,
    pub empty_blob: ObjectId,
    /// The campaign as the validator parses it (shared by some calls, to save parsing).
    known: Rc<Known>,
    /// `ADMISSION_FUZZ_VERBOSE` set: print each verdict line (to sort a corpus by refusal).
    verbose: bool,
}

/// The embedded campaign (as in `checks.rs`).
const CAMPAIGN: &[u8] = include_bytes!("../arena/campaign.json");

const REGULAR: &[u8] = b"100644";
const SIG: &str = "Fuzz <fuzz@example.com> 1700000000 +0000";

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn blob(repo: &gix::Repository, bytes: &[u8]) -> ObjectId {
    repo.objects
        .write_buf(Kind::Blob, bytes)
        .expect("writing a blob")
}

/// Git's tree entry order: names compared bytewise, a tree's name as if followed by `/`.
fn git_key(name: &[u8], mode: &[u8]) -> Vec<u8> {
    let mut k = name.to_vec();
    if mode == b"40000" {
        k.push(b'/');
    }
    k
}

/// A leaf split into path components, with its mode and id.
type Split<'a> = (Vec<&'a [u8]>, &'a [u8], ObjectId);

/// Serialise the tree of `leaves` (paths relative to it) bottom-up; `unsorted` reverses the
/// order of the entries of every tree.
fn write_tree(repo: &gix::Repository, leaves: &[Split<'_>], unsorted: bool) -> ObjectId {
    // Direct entries in input order; subdirectories grouped by first component (first seen).
    let mut entries: Vec<(Vec<u8>, Vec<u8>, ObjectId)> = Vec::new();
    let mut dirs: Vec<(&[u8], Vec<Split<'_>>)> = Vec::new();
    for (comps, mode, oid) in leaves {
        if comps.len() == 1 {
            entries.push((comps[0].to_vec(), mode.to_vec(), *oid));
        } else {
            let rest = (comps[1..].to_vec(), *mode, *oid);
            match dirs.iter_mut().find(|(n, _)| *n == comps[0]) {
                Some((_, v)) => v.push(rest),
                None => dirs.push((comps[0], vec![rest])),
            }
        }
    }
    for (name, sub) in dirs {
        let id = write_tree(repo, &sub, unsorted);
        entries.push((name.to_vec(), b"40000".to_vec(), id));
    }
    entries.sort_by_key(|e| git_key(&e.0, &e.1));
    if unsorted {
        entries.reverse();
    }
    let mut buf = Vec::new();
    for (name, mode, oid) in entries {
        buf.extend_from_slice(&mode);
        buf.push(b' ');
        buf.extend_from_slice(&name);
        buf.push(0);
        buf.extend_from_slice(oid.as_bytes());
    }
    repo.objects
        .write_buf(Kind::Tree, &buf)
        .expect("writing a tree")
}

fn tree_of(repo: &gix::Repository, leaves: &[Leaf], unsorted: bool) -> ObjectId {
    let split: Vec<Split<'_>> = leaves
        .iter()
        .map(|l| {
            (
                l.path.split(|&b| b == b'/').collect(),
                l.mode.as_slice(),
                l.oid,
            )
        })
        .collect();
    write_tree(repo, &split, unsorted)
}

fn commit(repo: &gix::Repository, tree: ObjectId, parents: &[ObjectId], message: &str) -> ObjectId {
    let mut s = format!("tree {tree}\n");
    for p in parents {
        s.push_str(&format!("parent {p}\n"));
    }
    s.push_str(&format!("author {SIG}\ncommitter {SIG}\n\n{message}\n"));
    repo.objects
        .write_buf(Kind::Commit, s.as_bytes())
        .expect("writing a commit")
}

/// The message the tool writes for a child whose tree model is `after` on a parent `before`
/// with `parent_filled` rows filled ([`message::expected`] of the row files whose blob changed
/// and that check as rows: filled when the parent's was DEFERRED, repaired otherwise), or a
/// plain one when none fits.
fn tool_message(
    repo: &gix::Repository,
    decl: &Declaration,
    before: &[Leaf],
    after: &[Leaf],
    parent_filled: usize,
) -> String {
    let row_at = |leaves: &[Leaf], path: &[u8]| -> Option<Row> {
        let l = leaves.iter().find(|l| l.path == path)?;
        let v: Value = serde_json::from_slice(&read_blob(repo, l.oid)?).ok()?;
        Row::check(decl, &v, "fuzz").ok()
    };
    let (mut filled, mut repaired) = (Vec::new(), Vec::new());
    for e in decl.schedule() {
        let path = layout::row_path(&e.id);
        let (Some(b), Some(a)) = (
            before.iter().find(|l| l.path == path.as_bytes()),
            after.iter().find(|l| l.path == path.as_bytes()),
        ) else {
            continue;
        };
        if a.oid == b.oid {
            continue;
        }
        let (Some(old), Some(new)) = (
            row_at(before, path.as_bytes()),
            row_at(after, path.as_bytes()),
        ) else {
            continue;
        };
        if old.is_deferred() {
            filled.push(new);
        } else {
            repaired.push(new);
        }
    }
    let f: Vec<&Row> = filled.iter().collect();
    let r: Vec<&Row> = repaired.iter().collect();
    match message::expected(decl, &f, &r, parent_filled) {
        Ok(e) => message::compose(&e, &[]),
        Err(_) => "fuzz child".to_owned(),
    }
}

/// A row value's file bytes: canonical when it checks, pretty JSON otherwise.
fn row_bytes(decl: &Declaration, v: &Value) -> Vec<u8> {
    match Row::check(decl, v, "fuzz") {
        Ok(row) => row.canonical(decl),
        Err(_) => {
            let mut b = serde_json::to_vec_pretty(v).expect("serialising a value");
            b.push(b'\n');
            b
        }
    }
}

/// The known-valid filled rows of `tests/fuzz_corpus/row_transition/` (a scenario PASS and an
/// arena FAIL), as templates for any schedule entry of their task kind.
fn fill_candidates() -> Vec<Value> {
    let scenario = json!({
        "schedule_id": "", "task_id": "", "repetition": 1, "evidence": "live",
        "native_outcome": "PASS", "native_status": "COMPLETE", "reason": null,
        "source_revision": "ee4fa2ee20eace7ad96d99d9ed222b88d734c792",
        "runtime_identity": {"dependencies": ["psutil==5.9.8"], "native_provider": "autocode-native 2.4.1",
            "packages": {"iniconfig": "2.0.0", "packaging": "24.1", "pluggy": "1.5.0", "pytest": "8.3.3"},
            "psutil": "6.1.0", "python": "3.12.7"},
        "actual_models_and_efforts": {"provider": "autocode-native", "roles": {
            "builder": {"effort": "high", "model": "astra-large-2025-06"},
            "planner": {"effort": "medium", "model": "astra-medium-2025-06"},
            "resolver": {"effort": "high", "model": "astra-large-2025-06"},
            "reviewer": {"effort": "medium", "model": "astra-medium-2025-06"}}},
        "runner_options": null, "option_deviations": [],
        "oracle_checks": [{"name": "hidden/test.py::t", "ok": true}],
        "evidence_refs": [".scenario-runs/R1/result.json"], "elapsed_seconds": 2731.0,
        "usage": {"input_tokens": 812345, "output_tokens": null}, "estimated_usd": 3.91,
        "spent_budget": {"harness_minutes": 1, "max_steps": 1},
        "interventions_decision_or_repair": [{"kind": "decision", "note": "gate plan-approval: approved"}],
        "native_record": {"id": "", "kind": "hand", "sha256": ""}
    });
    let arena = json!({
        "schedule_id": "", "task_id": "", "repetition": 1, "evidence": "live",
        "native_outcome": "FAIL", "native_status": "COMPLETED", "reason": "oracle failed",
        "source_revision": null, "runtime_identity": null, "actual_models_and_efforts": null,
        "runner_options": ["--provider", "x"], "option_deviations": ["missing --joint-planning"],
        "oracle_checks": [{"name": "c1", "ok": false}], "evidence_refs": [], "elapsed_seconds": 12,
        "usage": null, "estimated_usd": null,
        "spent_budget": {"cli_invocation_seconds": null, "max_iterations": null, "oracle_seconds": null},
        "interventions_decision_or_repair": [],
        "native_record": {"id": "", "kind": "hand", "sha256": ""}
    });
    vec![scenario, arena]
}

/// A filled row for schedule entry `sid` from `template`, naming a record of `record` bytes
/// under key `hand:<id>`.
fn fill_value(template: &Value, decl: &Declaration, sid: &str, id: &str, record: &[u8]) -> Value {
    let e = decl.schedule_entry(sid).expect("a scheduled row");
    let mut v = template.clone();
    v["schedule_id"] = json!(sid);
    v["task_id"] = json!(e.task);
    v["repetition"] = json!(e.repetition);
    v["native_record"]["id"] = json!(id);
    v["native_record"]["sha256"] = json!(sha256_hex(record));
    v
}

fn record_bytes(sid: &str, variant: u8) -> Vec<u8> {
    format!("record of {sid} ({variant})\n").into_bytes()
}

fn set_leaf(leaves: &mut Vec<Leaf>, path: &[u8], mode: &[u8], oid: ObjectId) {
    match leaves.iter_mut().find(|l| l.path == path) {
        Some(l) => {
            l.mode = mode.to_vec();
            l.oid = oid;
        }
        None => leaves.push(Leaf {
            path: path.to_vec(),
            mode: mode.to_vec(),
            oid,
        }),
    }
}

impl Harness {
    pub fn new() -> Harness {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut repo = gix::init_bare(dir.path()).expect("git init --bare");
        let decl = Declaration::parse(CAMPAIGN, DEFAULT_MAX_INPUT_BYTES)
            .expect("the embedded campaign parses");
        let refname = layout::LedgerRefs::default().name(&decl.id);

        // The template root, as `init` writes it.
        let mut files = layout::template_files(&decl);
        files.push((layout::CAMPAIGN.to_owned(), CAMPAIGN.to_vec()));
        let mut leaves: Vec<Leaf> = files
            .iter()
            .map(|(p, b)| Leaf {
                path: p.clone().into_bytes(),
                mode: REGULAR.to_vec(),
                oid: blob(&repo, b),
            })
            .collect();
        let tree = tree_of(&repo, &leaves, false);
        assert_eq!(
            tree,
            layout::template_tree_id(repo.object_hash(), &decl, blob(&repo, CAMPAIGN), None)
                .unwrap(),
            "the harness writes the template tree as init does"
        );
        let root = commit(&repo, tree, &[], &message::root_message(&decl));
        let mut bases = vec![Base {
            commit: root,
            leaves: leaves.clone(),
            filled: 0,
        }];

        let candidates = fill_candidates();
        let fills: Vec<Option<Value>> = decl
            .schedule()
            .map(|e| {
                candidates.iter().find_map(|t| {
                    let v = fill_value(t, &decl, &e.id, &e.id, b"x");
                    Row::check(&decl, &v, "fill").ok().map(|_| v)
                })
            })
            .collect();
        assert!(fills.iter().any(Option::is_some), "no row can be filled");
        // Fill three rows (the first, the seventh and the last of the schedule: arena and
        // scenario tasks), then repair the first.
        let mut filled = Vec::new();
        let n = decl.schedule_len();
        for i in [0, 6, n - 1] {
            let Some(t) = &fills[i] else { continue };
            let sid = &decl.schedule_at(i).id;
            let rec = record_bytes(sid, 0);
            let v = fill_value(t, &decl, sid, sid, &rec);
            set_leaf(
                &mut leaves,
                layout::row_path(sid).as_bytes(),
                REGULAR,
                blob(&repo, &row_bytes(&decl, &v)),
            );
            let key = format!("hand:{sid}");
            set_leaf(
                &mut leaves,
                layout::record_path(&key).as_bytes(),
                REGULAR,
                blob(&repo, &rec),
            );
            filled.push((sid.clone(), v));
        }
        let t1 = tree_of(&repo, &leaves, false);
        let m1 = tool_message(&repo, &decl, &bases[0].leaves, &leaves, 0);
        let c1 = commit(&repo, t1, &[root], &m1);
        bases.push(Base {
            commit: c1,
            leaves: leaves.clone(),
            filled: filled.len(),
        });
        let (sid, mut v) = filled[0].clone();
        v["interventions_decision_or_repair"]
            .as_array_mut()
            .unwrap()
            .push(json!({"kind": "repair", "note": "fixed the import path"}));
        set_leaf(
            &mut leaves,
            layout::row_path(&sid).as_bytes(),
            REGULAR,
            blob(&repo, &row_bytes(&decl, &v)),
        );
        let t2 = tree_of(&repo, &leaves, false);
        let m2 = tool_message(&repo, &decl, &bases[1].leaves, &leaves, filled.len());
        let c2 = commit(&repo, t2, &[c1], &m2);
        bases.push(Base {
            commit: c2,
            leaves,
            filled: filled.len(),
        });

        let small_tree = tree_of(
            &repo,
            &[Leaf {
                path: b"x.json".to_vec(),
                mode: REGULAR.to_vec(),
                oid: blob(&repo, b"{}\n"),
            }],
            false,
        );
        let empty_blob = blob(&repo, b"");
        // Git treats the empty tree as present without storing it; gix's tree diff reads it,
        // so store it, as a push that uses it would send it.
        repo.objects
            .write_buf(Kind::Tree, b"")
            .expect("writing the empty tree");
        // Every base is admitted, from the root up (a harness bug otherwise).
        admit_update(&repo, &refname, None, Some(c2), DEFAULT_MAX_INPUT_BYTES)
            .expect("the harness's own chain is admitted");
        let known = Admission::new(&repo, DEFAULT_MAX_INPUT_BYTES)
            .declaration_of_tree(tree, "the template")
            .expect("the template's declaration");
        // Decoded objects cached (the bases are loose objects: inflating them again for every
        // input cost a quarter of the time); the child's objects are kept in memory.
        repo.object_cache_size(Some(16 << 20));
        repo.objects.enable_object_memory();
        Harness {
            known,
            _dir: dir,
            repo,
            decl,
            refname,
            bases,
            fills,
            small_tree,
            empty_blob,
            verbose: std::env::var_os("ADMISSION_FUZZ_VERBOSE").is_some(),
        }
    }

    /// Run one input; panics on a broken property. The verdict: `step: <v>; update: <v>;
    /// create: <v>`, each `admitted` (the step with the rows it filled and repaired) or the
    /// refusal, with the repository's path masked as well as object ids.
    pub fn run(&self, data: &[u8]) -> String {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_inner(data)));
        // Drop this input's objects whatever happened.
        self.repo.objects.reset_object_memory();
        match r {
            Ok(v) => {
                let v = v.replace(&self._dir.path().display().to_string(), "<repo>");
                if self.verbose {
                    eprintln!("verdict: {v}");
                }
                v
            }
            Err(p) => std::panic::resume_unwind(p),
        }
    }

    fn run_inner(&self, data: &[u8]) -> String {
        let repo = &self.repo;
        let decl = &self.decl;
        let mut input = Input { data, pos: 0 };
        let head = input.byte();
        let base = &self.bases[head as usize % self.bases.len()];
        let max_bytes = match (head >> 2) % 8 {
            0 => 2_000,
            1 => 20_000,
            _ => DEFAULT_MAX_INPUT_BYTES,
        };
        let n = decl.schedule_len();
        let mut leaves = base.leaves.clone();
        let mut parents = vec![base.commit];
        let mut unsorted = false;
        let mut ops = 0;
        while !input.done() && ops < 48 {
            ops += 1;
            let op = input.byte();
            match op % 14 {
                // Replace a row file with fuzzer bytes.
                0 => {
                    let sid = &decl.schedule_at(input.byte() as usize % n).id;
                    let bytes = input.bytes();
                    set_leaf(
                        &mut leaves,
                        layout::row_path(sid).as_bytes(),
                        REGULAR,
                        blob(repo, bytes),
                    );
                }
                // Fill a row validly (or nearly: the variant bits break one part).
                1 => {
                    let i = input.byte() as usize % n;
                    let variant = input.byte();
                    let Some(t) = &self.fills[i] else { continue };
                    let sid = &decl.schedule_at(i).id;
                    let id = if variant & 0x10 != 0 {
                        decl.schedule_at((i + 1) % n).id.clone()
                    } else {
                        sid.clone()
                    };
                    let rec = record_bytes(sid, variant >> 5);
                    let v = fill_value(t, decl, sid, &id, &rec);
                    let mut bytes = row_bytes(decl, &v);
                    if variant & 0x08 != 0 {
                        bytes = serde_json::to_vec(&v).unwrap();
                    }
                    set_leaf(
                        &mut leaves,
                        layout::row_path(sid).as_bytes(),
                        REGULAR,
                        blob(repo, &bytes),
                    );
                    if variant & 1 == 0 {
                        let key = if variant & 4 != 0 {
                            format!("hand:{}", decl.schedule_at((i + 2) % n).id)
                        } else {
                            format!("hand:{id}")
                        };
                        let mut rec = rec;
                        if variant & 2 != 0 {
                            rec.push(b'!');
                        }
                        set_leaf(
                            &mut leaves,
                            layout::record_path(&key).as_bytes(),
                            REGULAR,
                            blob(repo, &rec),
                        );
                    }
                }
                // Append an intervention to a row (kind chosen), maybe change another field.
                2 => {
                    let sid = decl.schedule_at(input.byte() as usize % n).id.clone();
                    let kind = ["repair", "decision", "", "REPAIR"][input.byte() as usize % 4];
                    let note = String::from_utf8_lossy(input.bytes()).into_owned();
                    let Some(mut v) = self.row_value(&leaves, &sid) else {
                        continue;
                    };
                    if let Some(a) = v
                        .get_mut("interventions_decision_or_repair")
                        .and_then(Value::as_array_mut)
                    {
                        a.push(json!({"kind": kind, "note": note}));
                    }
                    set_leaf(
                        &mut leaves,
                        layout::row_path(&sid).as_bytes(),
                        REGULAR,
                        blob(repo, &row_bytes(decl, &v)),
                    );
                }
                // Set one field of a row to a value from a palette or from the input.
                3 => {
                    let sid = decl.schedule_at(input.byte() as usize % n).id.clone();
                    let f = decl.attempt_fields[input.byte() as usize % decl.attempt_fields.len()]
                        .clone();
                    let sel = input.byte();
                    let Some(mut v) = self.row_value(&leaves, &sid) else {
                        continue;
                    };
                    let i = decl.schedule_position(&sid).unwrap();
                    let value = match sel % 16 {
                        0 => Value::Null,
                        1 => json!(true),
                        2 => json!(0),
                        3 => json!(-1),
                        4 => json!(1.5),
                        5 => json!(""),
                        6 => json!("DEFERRED"),
                        7 => json!("PASS"),
                        8 => json!([]),
                        9 => json!({}),
                        10 => json!([{"kind": "repair", "note": "n"}]),
                        11 => self.fills[i]
                            .as_ref()
                            .map_or(Value::Null, |t| t[&f].clone()),
                        12 => Row::template(decl, &sid).unwrap().get(&f).clone(),
                        13 => json!(12.0),
                        14 => json!("not attempted"),
                        _ => match serde_json::from_slice(input.bytes()) {
                            Ok(v) => v,
                            Err(_) => continue,
                        },
                    };
                    match v.as_object_mut() {
                        Some(m) if sel & 0x80 != 0 => {
                            m.remove(&f);
                        }
                        Some(m) => {
                            m.insert(f, value);
                        }
                        None => continue,
                    }
                    set_leaf(
                        &mut leaves,
                        layout::row_path(&sid).as_bytes(),
                        REGULAR,
                        blob(repo, &row_bytes(decl, &v)),
                    );
                }
                // Remove an entry.
                4 => {
                    if !leaves.is_empty() {
                        let i = input.byte() as usize % leaves.len();
                        leaves.remove(i);
                    }
                }
                // Add a file at a path (a palette, or the input's bytes) with the input's bytes.
                5 => {
                    let sel = input.byte();
                    let path: Vec<u8> = match sel % 10 {
                        0 => b"rows/extra.json".to_vec(),
                        1 => format!("rows/{}/03.json", decl.schedule_at(0).task).into_bytes(),
                        2 => b"README.md".to_vec(),
                        3 => b"records/not-a-record".to_vec(),
                        4 => {
                            let h = sha256_hex(input.bytes());
                            format!("records/{}/{}.json", &h[..2], &h[2..]).into_bytes()
                        }
                        5 => format!(
                            "{}/x.json",
                            layout::row_path(&decl.schedule_at(sel as usize % n).id)
                        )
                        .into_bytes(),
                        6 => b"records/sub/x.json".to_vec(),
                        7 => format!("records/{}.JSON", sha256_hex(b"x")).into_bytes(),
                        // The flat layout before the fan-out.
                        8 => format!("records/{}.json", sha256_hex(input.bytes())).into_bytes(),
                        _ => input.bytes().to_vec(),
                    };
                    if path.is_empty() || path.split(|&b| b == b'/').any(<[u8]>::is_empty) {
                        continue;
                    }
                    let bytes = input.bytes();
                    let oid = blob(repo, bytes);
                    leaves.push(Leaf {
                        path,
                        mode: REGULAR.to_vec(),
                        oid,
                    });
                }
                // Add or replace a record file named after a row's record key.
                6 => {
                    let sid = &decl.schedule_at(input.byte() as usize % n).id;
                    let kind = ["hand", "scenario", "arena"][input.byte() as usize % 3];
                    let bytes = input.bytes();
                    let path = layout::record_path(&format!("{kind}:{sid}"));
                    set_leaf(&mut leaves, path.as_bytes(), REGULAR, blob(repo, bytes));
                }
                // Change campaign.json or ledger.json.
                7 => {
                    let sel = input.byte();
                    let path: &[u8] = if sel & 1 == 0 {
                        b"campaign.json"
                    } else {
                        b"ledger.json"
                    };
                    let oid = match (sel >> 1) % 4 {
                        0 => blob(repo, input.bytes()),
                        1 => {
                            // The other file's blob.
                            let other: &[u8] = if sel & 1 == 0 {
                                b"ledger.json"
                            } else {
                                b"campaign.json"
                            };
                            match leaves.iter().find(|l| l.path == other) {
                                Some(l) => l.oid,
                                None => continue,
                            }
                        }
                        2 => {
                            // The same content with a byte appended (or whitespace).
                            let mut b = if sel & 1 == 0 {
                                CAMPAIGN.to_vec()
                            } else {
                                layout::header_bytes(decl)
                            };
                            b.push(b'\n');
                            blob(repo, &b)
                        }
                        _ => self.empty_blob,
                    };
                    set_leaf(&mut leaves, path, REGULAR, oid);
                }
                // Set an entry's mode.
                8 => {
                    if leaves.is_empty() {
                        continue;
                    }
                    let i = input.byte() as usize % leaves.len();
                    let sel = input.byte();
                    let (mode, oid): (&[u8], ObjectId) = match sel % 10 {
                        0 => (b"100755", leaves[i].oid),
                        1 => (b"120000", leaves[i].oid),
                        2 => (b"160000", base.commit),
                        3 => (b"40000", self.small_tree),
                        4 => (b"40000", ObjectId::empty_tree(repo.object_hash())),
                        5 => (b"100664", leaves[i].oid),
                        6 => (b"644", leaves[i].oid),
                        7 => (b"040000", self.small_tree),
                        8 => (b"100644", leaves[i].oid),
                        _ => (b"0100644", leaves[i].oid),
                    };
                    leaves[i].mode = mode.to_vec();
                    leaves[i].oid = oid;
                }
                // The child's parents.
                9 => {
                    let sel = input.byte();
                    let other = self.bases[sel as usize / 16 % self.bases.len()].commit;
                    parents = match sel % 6 {
                        0 => vec![],
                        1 => vec![base.commit, other],
                        2 => vec![other],
                        3 => vec![base.commit, base.commit],
                        4 => vec![ObjectId::from_bytes_or_panic(&[sel; 20])],
                        _ => vec![base.commit],
                    };
                }
                // A duplicate of an entry (same path, another object).
                10 => {
                    if leaves.is_empty() {
                        continue;
                    }
                    let i = input.byte() as usize % leaves.len();
                    let sel = input.byte();
                    let mut l = leaves[i].clone();
                    l.oid = match sel % 3 {
                        0 => self.empty_blob,
                        1 => {
                            let j = sel as usize % leaves.len();
                            leaves[j].oid
                        }
                        _ => blob(repo, input.bytes()),
                    };
                    leaves.push(l);
                }
                // Trees written in reverse order.
                11 => unsorted = !unsorted,
                // An entry pointing at an object that is not in the repository.
                12 => {
                    if leaves.is_empty() {
                        continue;
                    }
                    let i = input.byte() as usize % leaves.len();
                    let b = input.byte();
                    leaves[i].oid = ObjectId::from_bytes_or_panic(&[b | 1; 20]);
                }
                // A row copied from another row's file (same bytes at another path).
                _ => {
                    let a = &decl.schedule_at(input.byte() as usize % n).id;
                    let b = &decl.schedule_at(input.byte() as usize % n).id;
                    let Some(from) = leaves
                        .iter()
                        .find(|l| l.path == layout::row_path(a).as_bytes())
                        .cloned()
                    else {
                        continue;
                    };
                    set_leaf(
                        &mut leaves,
                        layout::row_path(b).as_bytes(),
                        &from.mode,
                        from.oid,
                    );
                }
            }
        }
        let tree = tree_of(repo, &leaves, unsorted);
        // The message the tool writes for what the child's rows do (rule 7), so that inputs
        // reach rules 1-6; a few keep a message that says something else.
        let message = if head & 0x80 != 0 && head & 0x40 != 0 {
            "fuzz child".to_owned()
        } else {
            tool_message(repo, decl, &base.leaves, &leaves, base.filled)
        };
        let child = commit(repo, tree, &parents, &message);
        self.judge(base.commit, child, &parents, max_bytes)
    }

    /// The current row value at `sid`'s path in the model (parsed leniently), if any.
    fn row_value(&self, leaves: &[Leaf], sid: &str) -> Option<Value> {
        let l = leaves
            .iter()
            .find(|l| l.path == layout::row_path(sid).as_bytes())?;
        let bytes = read_blob(&self.repo, l.oid)?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Run the validator on (parent, child) and the ref-update entry points; check what is
    /// admitted. Returns the verdict line.
    fn judge(
        &self,
        parent: ObjectId,
        child: ObjectId,
        parents: &[ObjectId],
        max_bytes: u64,
    ) -> String {
        let repo = &self.repo;
        let step = Admission::new(repo, max_bytes).step(parent, child);
        if let Err(e) = &step {
            assert!(!e.to_string().is_empty(), "a refusal says why");
        }
        // The same step through the hooks' entry point: an update of the ref, and a creation
        // (the parent's chain is admitted, so the child's is iff the step is).
        // A validator with the campaign already parsed (as a writer starts one), where the bound
        // would not refuse the campaign anyway.
        let validator = || {
            let a = Admission::new(repo, max_bytes);
            if max_bytes == DEFAULT_MAX_INPUT_BYTES {
                a.with_known(self.known.clone())
            } else {
                a
            }
        };
        let update = validator().update(&self.refname, Some(parent), Some(child), &mut |_, _| {});
        let create = admit_update(repo, &self.refname, None, Some(child), max_bytes);
        if parents == [parent] && max_bytes == DEFAULT_MAX_INPUT_BYTES {
            assert_eq!(
                step.is_ok(),
                update.is_ok(),
                "step {step:?} but update {update:?}"
            );
            assert_eq!(
                step.is_ok(),
                create.is_ok(),
                "step {step:?} but create {create:?}"
            );
        }
        if parents.len() != 1 || parents[0] != parent {
            assert!(
                step.is_err(),
                "rule 1: a child of parents {parents:?} admitted after {parent}"
            );
        }
        assert!(
            validator()
                .update(&self.refname, Some(child), None, &mut |_, _| {})
                .is_err(),
            "deleting a ledger ref is refused"
        );
        assert!(
            validator()
                .update(
                    "refs/ledgers/another-ledger",
                    None,
                    Some(child),
                    &mut |_, _| {}
                )
                .is_err(),
            "a ledger on a ref not named after its declaration is refused"
        );
        assert_eq!(
            admit_update(
                repo,
                "refs/heads/main",
                Some(parent),
                Some(child),
                max_bytes
            )
            .ok(),
            Some(0),
            "refs outside refs/ledgers/ pass untouched"
        );
        if step.is_ok() {
            self.check_admitted(parent, child, max_bytes);
        }
        if create.is_ok() && parents.is_empty() {
            // A root admitted on creation is exactly the template tree.
            let info = read_commit_tree(repo, child);
            assert_eq!(
                info,
                read_commit_tree(repo, self.bases[0].commit),
                "an admitted root holds exactly the template tree"
            );
        }
        let step = match &step {
            Ok(s) => {
                let rows = |what: &str, ids: &[String]| {
                    (!ids.is_empty()).then(|| format!("{what} {}", line(&ids.join(", "))))
                };
                let did: Vec<String> = [rows("filled", &s.filled), rows("repaired", &s.repaired)]
                    .into_iter()
                    .flatten()
                    .collect();
                if did.is_empty() {
                    "admitted (no row changed)".to_owned()
                } else {
                    format!("admitted ({})", did.join("; "))
                }
            }
            Err(e) => e.verdict(),
        };
        // An update or a creation refused for the step's reason says `same`.
        let other = |r: &git_ledger::error::Result<usize>| match r {
            Ok(n) => format!("admitted ({} checked)", verdict::count(*n, "commit")),
            Err(e) if e.verdict() == step => "same".to_owned(),
            Err(e) => e.verdict(),
        };
        format!(
            "step: {step}; update: {}; create: {}",
            other(&update),
            other(&create)
        )
    }

    /// Rules 1–6 for an admitted step, checked without the validator's code: the trees are
    /// parsed here from their raw bytes, rows as plain JSON.
    fn check_admitted(&self, parent: ObjectId, child: ObjectId, max_bytes: u64) {
        let repo = &self.repo;
        let decl = &self.decl;
        let p = list(repo, read_commit_tree(repo, parent));
        let c = list(repo, read_commit_tree(repo, child));
        let pmap: BTreeMap<&[u8], (&[u8], ObjectId)> = p
            .iter()
            .map(|l| (l.path.as_slice(), (l.mode.as_slice(), l.oid)))
            .collect();
        let mut cmap: BTreeMap<&[u8], (&[u8], ObjectId)> = BTreeMap::new();
        for l in &c {
            let show = String::from_utf8_lossy(&l.path);
            assert!(
                cmap.insert(&l.path, (&l.mode, l.oid)).is_none(),
                "admitted: {show} appears twice in the child's tree"
            );
            assert_eq!(
                l.mode,
                REGULAR,
                "admitted: {show} has mode {}",
                String::from_utf8_lossy(&l.mode)
            );
        }
        // (a) rule 2: the declaration and header are the parent's blobs.
        for f in [&b"campaign.json"[..], b"ledger.json"] {
            assert_eq!(
                cmap.get(f).map(|e| e.1),
                pmap.get(f).map(|e| e.1),
                "admitted: {} changed",
                String::from_utf8_lossy(f)
            );
            assert!(cmap.contains_key(f));
        }
        // (b) rule 3: the same row paths, every path in the layout.
        let rows = |m: &BTreeMap<&[u8], (&[u8], ObjectId)>| -> BTreeSet<Vec<u8>> {
            m.keys()
                .filter(|k| k.starts_with(b"rows/"))
                .map(|k| k.to_vec())
                .collect()
        };
        assert_eq!(
            rows(&pmap),
            rows(&cmap),
            "admitted: the set of row paths changed"
        );
        let scheduled: BTreeSet<Vec<u8>> = decl
            .schedule()
            .map(|e| format!("rows/{}.json", e.id).into_bytes())
            .collect();
        for path in cmap.keys() {
            let ok = *path == b"campaign.json"
                || *path == b"ledger.json"
                || scheduled.contains(*path)
                || path
                    .strip_prefix(b"records/")
                    .and_then(|r| r.strip_suffix(b".json"))
                    .is_some_and(|h| {
                        // `<hh>/<62 hex>`: the fan-out of the record key's SHA-256.
                        h.len() == 65
                            && h[2] == b'/'
                            && h.iter().enumerate().all(|(i, b)| {
                                i == 2 || b.is_ascii_digit() || (b'a'..=b'f').contains(b)
                            })
                    });
            assert!(
                ok,
                "admitted: {} is outside the layout",
                String::from_utf8_lossy(path)
            );
        }
        // (c) rule 4 and (d) rule 5, per changed row.
        let mut claimed: BTreeSet<Vec<u8>> = BTreeSet::new();
        for (path, (_, cid)) in &cmap {
            if !path.starts_with(b"rows/") {
                continue;
            }
            let (_, pid) = pmap[path];
            if pid == *cid {
                continue;
            }
            let show = String::from_utf8_lossy(path);
            let pv: Value = serde_json::from_slice(&read_blob(repo, pid).unwrap()).unwrap();
            let cv: Value = serde_json::from_slice(&read_blob(repo, *cid).unwrap())
                .unwrap_or_else(|e| panic!("admitted: {show} is not JSON: {e}"));
            let deferred = |v: &Value| v["native_outcome"] == "DEFERRED";
            if deferred(&pv) {
                assert!(
                    !deferred(&cv),
                    "admitted: {show}: a DEFERRED row edited in place"
                );
                let rec = &cv["native_record"];
                let (Some(kind), Some(id), Some(sha)) = (
                    rec["kind"].as_str(),
                    rec["id"].as_str(),
                    rec["sha256"].as_str(),
                ) else {
                    panic!("admitted: {show}: a filled row without a native_record: {rec}");
                };
                if kind == "hand" {
                    assert_eq!(
                        Some(id),
                        cv["schedule_id"].as_str(),
                        "admitted: {show}: a hand record named after another row"
                    );
                }
                let h = sha256_hex(format!("{kind}:{id}").as_bytes());
                let rpath = format!("records/{}/{}.json", &h[..2], &h[2..]);
                assert!(
                    !pmap.contains_key(rpath.as_bytes()),
                    "admitted: {show}: its record {rpath} was already in the parent"
                );
                let Some((_, rid)) = cmap.get(rpath.as_bytes()) else {
                    panic!("admitted: {show}: no record file {rpath}");
                };
                assert_eq!(
                    sha256_hex(&read_blob(repo, *rid).unwrap()),
                    sha,
                    "admitted: {show}: {rpath} does not hash to native_record.sha256"
                );
                assert!(
                    claimed.insert(rpath.into_bytes()),
                    "admitted: {show}: a record fills two rows"
                );
            } else {
                let (Some(po), Some(co)) = (pv.as_object(), cv.as_object()) else {
                    panic!("admitted: {show}: a row is not an object");
                };
                let key = "interventions_decision_or_repair";
                let pk: BTreeSet<&String> = po.keys().collect();
                let ck: BTreeSet<&String> = co.keys().collect();
                assert_eq!(pk, ck, "admitted: {show}: fields added or removed");
                for (k, v) in po {
                    if k != key {
                        assert_eq!(
                            Some(v),
                            co.get(k),
                            "admitted: {show}: {k} of a filled row changed"
                        );
                    }
                }
                let before = po[key].as_array().expect("the parent's interventions");
                let after = co[key]
                    .as_array()
                    .unwrap_or_else(|| panic!("admitted: {show}: {key} is not a list"));
                assert!(
                    after.len() > before.len(),
                    "admitted: {show}: no repair appended"
                );
                assert_eq!(
                    &after[..before.len()],
                    &before[..],
                    "admitted: {show}: interventions changed"
                );
                for extra in &after[before.len()..] {
                    assert_eq!(
                        extra["kind"], "repair",
                        "admitted: {show}: appended {extra}"
                    );
                    assert!(
                        extra["note"].as_str().is_some_and(|n| !n.trim().is_empty()),
                        "admitted: {show}: a repair without a note: {extra}"
                    );
                }
            }
        }
        // (d) rule 5: records never change or disappear; every added one is claimed.
        for (path, (_, pid)) in &pmap {
            if path.starts_with(b"records/") {
                assert_eq!(
                    cmap.get(path).map(|e| e.1),
                    Some(*pid),
                    "admitted: record {} changed or disappeared",
                    String::from_utf8_lossy(path)
                );
            }
        }
        for path in cmap.keys() {
            if path.starts_with(b"records/") && !pmap.contains_key(path) {
                assert!(
                    claimed.contains(*path),
                    "admitted: record {} added that no filled row names",
                    String::from_utf8_lossy(path)
                );
            }
        }
        // Rule 6: the child as a whole passes the report's checks (read whole, not by step).
        let (known, ledger) = match store::ledger_at(repo, child, max_bytes, false) {
            Ok(read) => read,
            Err(e) => panic!("admitted, but the whole ledger of the child is refused: {e}"),
        };
        // `show` and `report` read the child a row at a time: the same document, the same
        // report as the whole ledger gives.
        let mut shown = Vec::new();
        store::write_ledger_at(repo, child, max_bytes, false, &mut shown)
            .expect("the child's rows are written a row at a time");
        assert!(
            shown == ledger.canonical(&known.decl),
            "show a row at a time differs from the whole ledger's bytes"
        );
        let (_, kept) = store::kept_at(repo, child, max_bytes, false, &report::Summarise::new())
            .expect("the child's rows are summarised a row at a time");
        let state = || report::LedgerState::file(String::new());
        assert_eq!(
            serde_json::to_value(report::build_from(&known.decl, kept, state())).unwrap(),
            serde_json::to_value(report::build(&known.decl, &ledger, state())).unwrap(),
            "the report a row at a time differs from the whole ledger's"
        );
    }
}

fn read_blob(repo: &gix::Repository, id: ObjectId) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let data = repo.objects.try_find(&id, &mut buf).ok()??;
    (data.kind == Kind::Blob).then(|| data.data.to_vec())
}

fn read_object(repo: &gix::Repository, id: ObjectId, kind: Kind) -> Vec<u8> {
    let mut buf = Vec::new();
    let data = repo
        .objects
        .try_find(&id, &mut buf)
        .expect("reading an object")
        .unwrap_or_else(|| panic!("admitted, but object {id} is missing"));
    assert_eq!(data.kind, kind, "admitted, but {id} is a {}", data.kind);
    data.data.to_vec()
}

/// A commit's tree id, parsed here from the raw commit.
fn read_commit_tree(repo: &gix::Repository, id: ObjectId) -> ObjectId {
    let bytes = read_object(repo, id, Kind::Commit);
    let line = bytes.split(|&b| b == b'\n').next().unwrap();
    let hex = line
        .strip_prefix(b"tree ")
        .expect("a commit starts with its tree");
    ObjectId::from_hex(hex).expect("a tree id")
}

/// Every non-tree entry below `tree`, parsed here from raw tree objects (`<mode> <name>\0<id>`).
fn list(repo: &gix::Repository, tree: ObjectId) -> Vec<Leaf> {
    let mut out = Vec::new();
    list_into(repo, tree, Vec::new(), &mut out, 0);
    out
}

fn list_into(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: Vec<u8>,
    out: &mut Vec<Leaf>,
    depth: usize,
) {
    assert!(depth < 64, "admitted, but trees nest deeper than 64");
    let bytes = read_object(repo, tree, Kind::Tree);
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let sp = rest
            .iter()
            .position(|&b| b == b' ')
            .expect("a tree entry's mode");
        let mode = rest[..sp].to_vec();
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .expect("a tree entry's name");
        let name = &rest[sp + 1..nul];
        let id = ObjectId::from_bytes_or_panic(&rest[nul + 1..nul + 21]);
        rest = &rest[nul + 21..];
        let mut path = prefix.clone();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(name);
        if mode == b"40000" {
            list_into(repo, id, path, out, depth + 1);
        } else {
            out.push(Leaf {
                path,
                mode,
                oid: id,
            });
        }
    }
}

/// The fuzzer's bytes, read front to back; past the end everything is zero or empty.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    /// A length byte, then that many bytes (a length of 255: the rest of the input).
    fn bytes(&mut self) -> &'a [u8] {
        let len = self.byte() as usize;
        let start = self.pos.min(self.data.len());
        let end = if len == 255 {
            self.data.len()
        } else {
            (start + len).min(self.data.len())
        };
        self.pos = end.max(self.pos);
        &self.data[start..end]
    }
}
