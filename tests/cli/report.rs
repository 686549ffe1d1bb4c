//! The file-mode commands through the real binary: `template`, `report` (text and `--json`),
//! `put` and `repair`, with their exit statuses, refusals on stderr and as JSON, ledgers left
//! byte-identical by every refusal, atomic rewrites and a quiet broken pipe.

use serde_json::{json, Value};
use std::path::PathBuf;

use crate::common::{bin, ledger, pin_env};

fn hex(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(v).unwrap();
    b.push(b'\n');
    b
}

const RULES: [&str; 10] = git_ledger::declaration::ACCEPTANCE_RULES;

/// A small pinned declaration: a live scenario task and a fixture scenario task,
/// `repetitions` each.
fn declaration(repetitions: u64) -> Value {
    let width = repetitions.to_string().len().max(2);
    let tasks = [
        ("scenario/bugfix-iso-weeks", "live", 90),
        ("scenario/interrupted-reuse", "fixture", 5),
    ];
    let mut schedule = Vec::new();
    for (id, _, _) in tasks {
        for rep in 1..=repetitions {
            schedule
                .push(json!({"id": format!("{id}/{rep:0width$}"), "task": id, "repetition": rep}));
        }
    }
    let acceptance: serde_json::Map<String, Value> =
        RULES.iter().map(|r| (r.to_string(), json!(true))).collect();
    json!({
        "format": "campaign-declaration/1",
        "id": "cli-slice",
        "source_revision": hex('c', 40),
        "repetitions": repetitions,
        "profile": {
            "name": "build-comparison",
            "source": { "path": "arena/profiles/build-comparison.json", "sha256": hex('a', 64) },
            "provider": "acme",
            "joint_planning": true,
            "roles": { "builder": { "model": "m-large", "effort": "high" } },
            "extra_options": []
        },
        "policy_files": [],
        "runner_tools": { "path": "arena/runner-tools", "sha256": hex('d', 64), "files": 4 },
        "runtime_requirements": { "python": "3.12.7" },
        "acceptance": acceptance,
        "attempt_fields": git_ledger::declaration::STANDARD_FIELDS,
        "tasks": tasks.iter().enumerate().map(|(i, (id, evidence, minutes))| json!({
            "id": id,
            "kind": "scenario",
            "evidence": evidence,
            "expects": "completion",
            "definition": { "path": format!("arena/tasks/{id}"), "sha256": hex(char::from(b'1' + i as u8), 64), "files": 3 },
            "limits": { "harness_minutes": minutes, "max_steps": 400 },
            "native_outcomes": ["PASS", "ERROR", "INTERRUPTED_UNGRADED"]
        })).collect::<Vec<_>>(),
        "schedule": schedule
    })
}

/// A work directory with `campaign.json` and `ledger.json` (the template, made by the binary).
struct Work {
    dir: tempfile::TempDir,
}

impl Work {
    fn new(repetitions: u64) -> Work {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("campaign.json"),
            pretty(&declaration(repetitions)),
        )
        .unwrap();
        let w = Work { dir };
        let t = w.run(&["template", "campaign.json"]);
        t.ok();
        std::fs::write(w.path("ledger.json"), &t.stdout).unwrap();
        w
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn run(&self, args: &[&str]) -> crate::common::Run {
        ledger(self.dir.path(), args)
    }
    fn ledger_bytes(&self) -> Vec<u8> {
        std::fs::read(self.path("ledger.json")).unwrap()
    }
    fn ledger_json(&self) -> Value {
        serde_json::from_slice(&self.ledger_bytes()).unwrap()
    }
    fn write(&self, rel: &str, bytes: &[u8]) {
        std::fs::write(self.path(rel), bytes).unwrap();
    }
    fn report_json(&self) -> Value {
        let r = self.run(&["report", "campaign.json", "ledger.json", "--json"]);
        r.ok();
        r.json()
    }
    /// File names in the work directory.
    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// The template row of a schedule id, from the ledger file.
fn row_of(ledger: &Value, id: &str) -> Value {
    ledger["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["schedule_id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no row {id}"))
}

const LIVE_1: &str = "scenario/bugfix-iso-weeks/01";
const LIVE_2: &str = "scenario/bugfix-iso-weeks/02";
const FIXTURE_1: &str = "scenario/interrupted-reuse/01";

/// A hand row: a scenario attempt the harness reports as INTERRUPTED_UNGRADED.
fn interrupted_row(w: &Work, id: &str) -> Value {
    let mut row = row_of(&w.ledger_json(), id);
    for (k, v) in [
        ("native_outcome", json!("INTERRUPTED_UNGRADED")),
        (
            "reason",
            json!("the run was interrupted before grading (scenarios/run.py stats)"),
        ),
        ("source_revision", json!(hex('c', 40))),
        (
            "evidence_refs",
            json!([format!(".scenario-runs/{}", id.replace('/', "-"))]),
        ),
        ("elapsed_seconds", json!(1234.5)),
        ("native_record", Value::Null),
    ] {
        row[k] = v;
    }
    row
}

/// A hand PASS with complete evidence.
fn pass_row(w: &Work, id: &str) -> Value {
    let mut row = row_of(&w.ledger_json(), id);
    for (k, v) in [
        ("native_outcome", json!("PASS")),
        ("native_status", json!("COMPLETE")),
        ("reason", Value::Null),
        ("source_revision", json!(hex('c', 40))),
        (
            "runtime_identity",
            json!({"python": "3.12.7", "dependencies": ["psutil==6.1.0"]}),
        ),
        (
            "actual_models_and_efforts",
            json!({"provider": "acme", "roles": {"builder": {"model": "m-large", "effort": "high"}}}),
        ),
        (
            "oracle_checks",
            json!([{"name": "hidden/test_weeks.py::test_53", "ok": true}]),
        ),
        ("evidence_refs", json!([".scenario-runs/run-1"])),
        ("elapsed_seconds", json!(60)),
        ("estimated_usd", json!(0.5)),
        (
            "spent_budget",
            json!({"harness_minutes": 1, "max_steps": 10}),
        ),
    ] {
        row[k] = v;
    }
    row
}

// --- template and report --------------------------------------------------------------------

#[test]
fn template_prints_a_ledger_that_report_accepts_as_blocked() {
    let w = Work::new(2);
    let l = w.ledger_json();
    assert_eq!(l["format"], "campaign-ledger/1");
    assert_eq!(l["rows"].as_array().unwrap().len(), 4);
    let r = w.run(&["report", "campaign.json", "ledger.json"]);
    r.ok();
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert!(r.stdout.contains("BLOCKED"), "{}", r.stdout);
    assert!(r.stdout.contains("not attempted"), "{}", r.stdout);
    let j = w.report_json();
    for s in ["live", "fixture"] {
        assert_eq!(j["sections"][s]["comparison"]["blocked"], true);
        assert_eq!(j["sections"][s]["comparison"]["sentence"], Value::Null);
        assert_eq!(j["sections"][s]["outcomes"]["not_attempted"]["count"], 2);
    }
    assert_eq!(
        j["declaration"]["sha256"],
        sha256_hex(&std::fs::read(w.path("campaign.json")).unwrap())
    );
    // The same files give the same bytes.
    let again = w.run(&["report", "campaign.json", "ledger.json", "--json"]);
    assert_eq!(
        again.stdout,
        w.run(&["report", "campaign.json", "ledger.json", "--json"])
            .stdout
    );
}

#[test]
fn a_refused_ledger_exits_2_with_every_reason_on_stderr_and_as_json_on_stdout() {
    let w = Work::new(2);
    let mut l = w.ledger_json();
    // Two problems: a DEFERRED row that spent time, and a missing scheduled attempt.
    l["rows"][0]["elapsed_seconds"] = json!(12);
    l["rows"].as_array_mut().unwrap().remove(3);
    w.write("ledger.json", &pretty(&l));
    let r = w.run(&["report", "campaign.json", "ledger.json"]);
    r.expect_code(2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.contains("refused (2 reasons)"), "{}", r.stderr);
    assert!(r.stderr.contains("elapsed_seconds"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("row scenario/interrupted-reuse/02: is missing"),
        "{}",
        r.stderr
    );

    let r = w.run(&["report", "campaign.json", "ledger.json", "--json"]);
    r.expect_code(2);
    let j = r.json();
    assert_eq!(keys(&j), ["details", "reasons", "refused"]);
    assert_eq!(j["refused"], true);
    let reasons: Vec<&str> = j["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(reasons.len(), 2);
    assert!(reasons.iter().any(|s| s.contains("elapsed_seconds")));
    assert!(reasons.iter().any(|s| s.contains("is missing")));
    // The same reasons as values: the missing row names its row and ledger.md's group 1.
    assert!(
        j["details"].as_array().unwrap().iter().any(|d| {
            d["row"] == "scenario/interrupted-reuse/02"
                && d["rule"] == json!({"spec": "ledger", "number": 1})
        }),
        "{j}"
    );
    for reason in &reasons {
        assert!(
            r.stderr.contains(reason),
            "{reason} on stderr:\n{}",
            r.stderr
        );
    }
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn a_refused_declaration_exits_2() {
    let w = Work::new(2);
    let mut d = declaration(2);
    d["acceptance"]["unknown_is_null"] = json!(false);
    w.write("campaign.json", &pretty(&d));
    let r = w.run(&["report", "campaign.json", "ledger.json"]);
    r.expect_code(2);
    assert!(r.stderr.contains("unknown_is_null"), "{}", r.stderr);
    let r = w.run(&["template", "campaign.json"]);
    r.expect_code(2);
    assert!(r.stdout.is_empty());
    // A ledger of other declaration bytes is refused too (rule 2).
    let w = Work::new(2);
    let mut bytes = std::fs::read(w.path("campaign.json")).unwrap();
    bytes.push(b'\n');
    w.write("campaign.json", &bytes);
    let r = w.run(&["report", "campaign.json", "ledger.json", "--json"]);
    r.expect_code(2);
    assert!(r.json()["reasons"][0]
        .as_str()
        .unwrap()
        .contains("declaration.sha256"));
}

#[test]
fn an_unreadable_file_exits_1() {
    let w = Work::new(2);
    let r = w.run(&["report", "campaign.json", "missing.json"]);
    r.expect_code(1);
    assert!(r.stderr.contains("missing.json"), "{}", r.stderr);
    let r = w.run(&["report", "campaign.json", "missing.json", "--json"]);
    r.expect_code(1);
    assert_eq!(r.json()["refused"], false);
    let r = w.run(&["template", "nope.json"]);
    r.expect_code(1);
    // A directory is not a file.
    std::fs::create_dir(w.path("dir")).unwrap();
    w.run(&["report", "campaign.json", "dir"]).expect_code(1);
}

#[test]
fn bad_usage_exits_64() {
    let w = Work::new(2);
    let before = w.ledger_bytes();
    for args in [
        &["report", "campaign.json", "ledger.json", "--no-such-flag"][..],
        &["report", "campaign.json"],
        &["template"],
        &["template", "campaign.json", "--jsn"],
        &["put", LIVE_1],
        &["repair", LIVE_1, "campaign.json", "ledger.json"],
        &["no-such-command"],
    ] {
        let r = w.run(args);
        r.expect_code(64);
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
    // The usage errors change nothing.
    assert_eq!(w.ledger_bytes(), before);
}

// --- put and repair -------------------------------------------------------------------------

#[test]
fn put_writes_a_hand_row_with_its_hand_record() {
    let w = Work::new(2);
    let row = interrupted_row(&w, LIVE_1);
    let row_bytes = pretty(&row);
    w.write("row.json", &row_bytes);
    let before = w.files();
    let r = w.run(&["put", LIVE_1, "row.json", "campaign.json", "ledger.json"]);
    r.ok();
    assert!(r.stdout.contains(LIVE_1), "{}", r.stdout);
    assert!(r.stdout.contains("INTERRUPTED_UNGRADED"), "{}", r.stdout);
    assert!(r.stdout.contains("ungraded"), "{}", r.stdout);
    // Atomic rewrite: no temporary file left beside the ledger.
    assert_eq!(w.files(), before);
    let l = w.ledger_json();
    let mut want = row.clone();
    want["native_record"] = json!({"kind": "hand", "id": LIVE_1, "sha256": sha256_hex(&row_bytes)});
    assert_eq!(row_of(&l, LIVE_1), want);
    // Every other row is untouched; the file is canonical (its keys in attempt_fields order).
    assert_eq!(row_of(&l, LIVE_2)["native_outcome"], "DEFERRED");
    let text = String::from_utf8(w.ledger_bytes()).unwrap();
    assert!(text.starts_with("{\n  \"format\": \"campaign-ledger/1\",\n  \"declaration\": {"));
    let j = w.report_json();
    assert_eq!(
        j["sections"]["live"]["outcomes"]["ungraded"]["rows"],
        json!([LIVE_1])
    );
    assert!(j["sections"]["live"]["comparison"]["blockers"]
        .as_array()
        .unwrap()
        .contains(&json!({"schedule_id": LIVE_1, "why": "ungraded"})));
}

/// Run a writing command that must be refused, and check the ledger is byte-identical.
#[track_caller]
fn refused_unchanged(w: &Work, args: &[&str], needle: &str) {
    let before = w.ledger_bytes();
    let files = w.files();
    let r = w.run(args);
    r.expect_code(2);
    assert!(
        r.stderr.contains(needle),
        "{needle:?} not in:\n{}",
        r.stderr
    );
    assert_eq!(w.ledger_bytes(), before, "the ledger changed");
    assert_eq!(w.files(), files, "files appeared or went");
}

#[test]
fn put_is_refused_into_a_filled_slot_with_another_schedule_id_or_a_record() {
    let w = Work::new(2);
    w.write("row.json", &pretty(&interrupted_row(&w, LIVE_1)));
    w.run(&["put", LIVE_1, "row.json", "campaign.json", "ledger.json"])
        .ok();
    // Into a filled slot, even with another row file.
    let mut other = interrupted_row(&w, LIVE_1);
    other["reason"] = json!("a retry of the interrupted run");
    w.write("retry.json", &pretty(&other));
    refused_unchanged(
        &w,
        &["put", LIVE_1, "retry.json", "campaign.json", "ledger.json"],
        "already holds an attempt",
    );
    // The same row file again (same record).
    refused_unchanged(
        &w,
        &["put", LIVE_1, "row.json", "campaign.json", "ledger.json"],
        "already holds an attempt",
    );
    // A schedule id that is not the argument.
    w.write("row2.json", &pretty(&interrupted_row(&w, LIVE_2)));
    refused_unchanged(
        &w,
        &[
            "put",
            FIXTURE_1,
            "row2.json",
            "campaign.json",
            "ledger.json",
        ],
        "schedule_id",
    );
    // native_record must be null.
    let mut rec = interrupted_row(&w, LIVE_2);
    rec["native_record"] = json!({"kind": "hand", "id": LIVE_2, "sha256": hex('0', 64)});
    w.write("rec.json", &pretty(&rec));
    refused_unchanged(
        &w,
        &["put", LIVE_2, "rec.json", "campaign.json", "ledger.json"],
        "native_record must be null",
    );
    // A row that fails the row checks (no reason on a non-PASS row).
    let mut no_reason = interrupted_row(&w, LIVE_2);
    no_reason["reason"] = Value::Null;
    w.write("noreason.json", &pretty(&no_reason));
    refused_unchanged(
        &w,
        &[
            "put",
            LIVE_2,
            "noreason.json",
            "campaign.json",
            "ledger.json",
        ],
        "reason",
    );
    // An unscheduled id.
    refused_unchanged(
        &w,
        &[
            "put",
            "scenario/bugfix-iso-weeks/03",
            "row2.json",
            "campaign.json",
            "ledger.json",
        ],
        "not scheduled",
    );
    // Not JSON.
    w.write("bad.json", b"{\"schedule_id\": ");
    refused_unchanged(
        &w,
        &["put", LIVE_2, "bad.json", "campaign.json", "ledger.json"],
        "not valid JSON",
    );
    // And the other side: the untouched slot still takes its own row.
    w.run(&["put", LIVE_2, "row2.json", "campaign.json", "ledger.json"])
        .ok();
}

#[test]
fn repair_appends_one_repair_to_a_filled_row() {
    let w = Work::new(2);
    w.write("pass.json", &pretty(&pass_row(&w, LIVE_1)));
    w.run(&["put", LIVE_1, "pass.json", "campaign.json", "ledger.json"])
        .ok();
    let j = w.report_json();
    assert_eq!(
        j["sections"]["live"]["outcomes"]["verified_delivery"]["rows"],
        json!([LIVE_1])
    );
    let before = row_of(&w.ledger_json(), LIVE_1);
    let files = w.files();
    let r = w.run(&[
        "repair",
        LIVE_1,
        "--note",
        "fixed the failing import by hand",
        "campaign.json",
        "ledger.json",
    ]);
    r.ok();
    assert!(r.stdout.contains("+ repair"), "{}", r.stdout);
    assert_eq!(w.files(), files, "no temporary file left");
    let after = row_of(&w.ledger_json(), LIVE_1);
    let mut want = before.clone();
    want["interventions_decision_or_repair"] =
        json!([{"kind": "repair", "note": "fixed the failing import by hand"}]);
    assert_eq!(after, want);
    let j = w.report_json();
    let live = &j["sections"]["live"];
    assert_eq!(
        live["outcomes"]["verified_after_repair"]["rows"],
        json!([LIVE_1])
    );
    assert_eq!(live["outcomes"]["verified_delivery"]["count"], 0);
    assert_eq!(live["repairs"], 1);
    assert_eq!(live["repair_rows"], json!([LIVE_1]));
    // A second repair appends again.
    w.run(&[
        "repair",
        LIVE_1,
        "--note",
        "and the test",
        "campaign.json",
        "ledger.json",
    ])
    .ok();
    assert_eq!(
        row_of(&w.ledger_json(), LIVE_1)["interventions_decision_or_repair"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn repair_is_refused_on_a_deferred_row_or_without_a_note() {
    let w = Work::new(2);
    refused_unchanged(
        &w,
        &[
            "repair",
            LIVE_2,
            "--note",
            "n",
            "campaign.json",
            "ledger.json",
        ],
        "DEFERRED",
    );
    w.write("row.json", &pretty(&interrupted_row(&w, LIVE_1)));
    w.run(&["put", LIVE_1, "row.json", "campaign.json", "ledger.json"])
        .ok();
    refused_unchanged(
        &w,
        &[
            "repair",
            LIVE_1,
            "--note",
            "  ",
            "campaign.json",
            "ledger.json",
        ],
        "--note",
    );
    refused_unchanged(
        &w,
        &[
            "repair",
            "scenario/nope/01",
            "--note",
            "n",
            "campaign.json",
            "ledger.json",
        ],
        "not scheduled",
    );
}

#[test]
fn writers_refuse_a_ledger_that_already_fails_a_check() {
    let w = Work::new(2);
    let mut l = w.ledger_json();
    l["rows"][3]["usage"] = json!({"calls": 1});
    w.write("ledger.json", &pretty(&l));
    w.write("row.json", &pretty(&interrupted_row(&w, LIVE_1)));
    refused_unchanged(
        &w,
        &["put", LIVE_1, "row.json", "campaign.json", "ledger.json"],
        "usage",
    );
}

// --- output plumbing ------------------------------------------------------------------------

#[test]
fn a_broken_pipe_ends_the_report_quietly() {
    // Enough rows that the report is larger than a pipe buffer, so `head` has closed the pipe
    // while the report is still being written.
    let w = Work::new(999);
    for extra in [&[][..], &["--json"][..]] {
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c")
            .arg(r#"{ "$0" report campaign.json ledger.json "$@" 2>stderr.txt; echo $? >code.txt; } | head -1"#)
            .arg(bin())
            .args(extra)
            .current_dir(w.dir.path());
        pin_env(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
        let code = std::fs::read_to_string(w.path("code.txt")).unwrap();
        let stderr = std::fs::read_to_string(w.path("stderr.txt")).unwrap();
        assert_eq!(code.trim(), "0", "{extra:?}: stderr:\n{stderr}");
        assert_eq!(stderr, "", "{extra:?}");
    }
}
