//! `git-ledger import`: the real binary against real Git repositories and real SQLite stores.
//! Each test copies the embedded catalogue (`arena/`) into a fresh repository, pins its draft
//! there, writes the example records for that declaration and the template ledger, and
//! imports (file mode, and ref mode with concurrent importers).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::common::{commit_all, git, ledger, new_repo, project_root, write, Run};
use crate::make_examples;

/// A repository holding the embedded catalogue, its pinned declaration, the example records
/// and a template ledger.
pub struct Campaign {
    pub dir: tempfile::TempDir,
    pub revision: String,
    pub decl: git_ledger::declaration::Declaration,
}

impl Campaign {
    pub fn new() -> Campaign {
        let dir = new_repo();
        let root = dir.path();
        // The catalogue without the examples and the pinned declaration of the project (a
        // test may be rebuilding the example store there meanwhile).
        std::fs::create_dir_all(root.join("arena")).unwrap();
        for entry in std::fs::read_dir(project_root().join("arena")).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            if name == "examples" || name == "campaign.json" {
                continue;
            }
            let status = std::process::Command::new("cp")
                .arg("-r")
                .arg(entry.path())
                .arg(root.join("arena"))
                .status()
                .unwrap();
            assert!(status.success());
        }
        write(root, ".gitattributes", "arena/** -text\n");
        write(
            root,
            ".gitignore",
            "/arena/examples/arena-store/\n/ledger.json\n/campaign.json\n",
        );
        let revision = commit_all(root, "catalogue");
        let draft = std::fs::read(root.join("arena/campaign.draft.json")).unwrap();
        let repo = git_ledger::git::open(Some(root)).unwrap();
        let bytes = git_ledger::git::pin::pin(&repo, &draft, "HEAD", u64::MAX).unwrap();
        std::fs::write(root.join("campaign.json"), &bytes).unwrap();
        let decl = git_ledger::declaration::Declaration::parse(&bytes, u64::MAX)
            .unwrap_or_else(|e| panic!("pinned declaration refused: {e}"));
        make_examples::write_records(&decl, &root.join("arena/examples")).unwrap();
        let c = Campaign {
            dir,
            revision,
            decl,
        };
        c.reset_ledger();
        c
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn ledger_path(&self) -> PathBuf {
        self.root().join("ledger.json")
    }

    pub fn ledger_bytes(&self) -> Vec<u8> {
        std::fs::read(self.ledger_path()).unwrap()
    }

    pub fn reset_ledger(&self) {
        let bytes = git_ledger::ledger::Ledger::template(&self.decl).canonical(&self.decl);
        std::fs::write(self.ledger_path(), bytes).unwrap();
    }

    /// The example records' directory.
    pub fn examples(&self) -> PathBuf {
        PathBuf::from("arena/examples")
    }

    pub fn run_dir(&self, run_id: &str) -> String {
        format!("arena/examples/scenario-runs/{run_id}")
    }

    /// `git-ledger import campaign.json ledger.json <args>` in the repository.
    pub fn import(&self, args: &[&str]) -> Run {
        let mut all = vec!["import", "campaign.json", "ledger.json"];
        all.extend_from_slice(args);
        ledger(self.root(), &all)
    }

    /// Import and expect a refusal that leaves the ledger byte-identical; returns the run.
    #[track_caller]
    pub fn refused(&self, args: &[&str], needles: &[&str]) -> Run {
        let before = self.ledger_bytes();
        let r = self.import(args);
        r.expect_code(2);
        assert_eq!(
            before,
            self.ledger_bytes(),
            "a refused import changed the ledger"
        );
        for n in needles {
            assert!(r.stderr.contains(n), "stderr lacks {n:?}:\n{}", r.stderr);
        }
        r
    }

    /// The ledger's row of a schedule id.
    pub fn row(&self, id: &str) -> Value {
        let v: Value = serde_json::from_slice(&self.ledger_bytes()).unwrap();
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["schedule_id"] == id)
            .cloned()
            .unwrap()
    }

    /// Write a scenario result.json in a new evidence directory; returns its path.
    pub fn scenario_run(&self, run_id: &str, result: &Value) -> String {
        let rel = format!("runs/{run_id}");
        write(
            self.root(),
            &format!("{rel}/result.json"),
            git_ledger::json::canonical(result),
        );
        rel
    }

    /// The result.json of an example run, parsed.
    pub fn example_result(&self, run_id: &str) -> Value {
        serde_json::from_slice(
            &std::fs::read(self.root().join(self.run_dir(run_id)).join("result.json")).unwrap(),
        )
        .unwrap()
    }

    /// The example store's SQL script.
    pub fn arena_sql(&self) -> String {
        std::fs::read_to_string(self.root().join("arena/examples/arena-store.sql")).unwrap()
    }

    /// Build a store at `rel` from SQL.
    pub fn store(&self, rel: &str, sql: &str) -> String {
        git_ledger::import::build_store_from_sql(&self.root().join(rel), sql).unwrap();
        rel.to_owned()
    }
}

const VERIFIED: &str = "20261129T101500Z-a001";
const FAKE: &str = "20261129T150000Z-f001";
const UNGRADED: &str = "20261129T160000Z-a005";
const STORE: &str = "arena/examples/arena-store";

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn the_example_records_import_to_their_outcomes() {
    let c = Campaign::new();
    let mut args = make_examples::import_args(&c.examples(), false);
    args.extend(make_examples::runtime_args(&c.examples()));
    let r = c.import(&strs(&args));
    r.ok();
    // Every imported attempt: schedule id, native outcome, portfolio outcome.
    assert!(r.stdout.contains(
        "scenario/bugfix-iso-weeks/01  PASS (COMPLETE)  verified delivery\n  from arena/examples/scenario-runs/20261129T101500Z-a001/result.json\n"
    ), "{}", r.stdout);
    assert!(r.stdout.contains("scenario/feature-csv-export/01  PASS (COMPLETE)  native pass without complete evidence\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("  gaps: no oracle checks\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("arena/sympy-matrix-derivatives/01  PASS (COMPLETED)  verified delivery\n  from arena/examples/arena-store#att-0001\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("imported 9 attempts (9/26 rows filled)\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("an edited scenario definition is not detected"),
        "{}",
        r.stdout
    );
    // The order of the output is the order the records were given.
    let first_arena = r.stdout.find("arena/sympy-matrix-derivatives/01").unwrap();
    let last_scenario = r
        .stdout
        .find("scenario/interrupted-verification-reuse/02")
        .unwrap();
    assert!(last_scenario < first_arena);

    let report = ledger(
        c.root(),
        &["report", "campaign.json", "ledger.json", "--json"],
    );
    report.ok();
    let rep = report.json();
    let outcome = |id: &str| -> String {
        rep["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["schedule_id"] == id)
            .map(|r| r["outcome"].as_str().unwrap().to_owned())
            .unwrap()
    };
    for s in make_examples::SCENARIO_RUNS {
        assert_eq!(
            outcome(s.schedule_id),
            s.outcome.unwrap_or("not_attempted"),
            "{}",
            s.schedule_id
        );
    }
    for a in make_examples::ARENA_ATTEMPTS {
        assert_eq!(
            outcome(a.schedule_id),
            a.outcome.unwrap_or("not_attempted"),
            "{}",
            a.schedule_id
        );
    }

    // What each record field became.
    let row = c.row("scenario/bugfix-iso-weeks/01");
    assert_eq!(row["source_revision"], json!(c.revision));
    assert_eq!(row["runner_options"], Value::Null);
    assert_eq!(row["option_deviations"], json!([]));
    assert_eq!(
        row["spent_budget"],
        json!({"harness_minutes": 2710.4 / 60.0, "max_steps": 143})
    );
    assert_eq!(row["estimated_usd"], json!(3.91));
    assert_eq!(
        row["usage"],
        json!({"input_tokens": 812345, "output_tokens": 40211})
    );
    assert_eq!(row["elapsed_seconds"], json!(2731.0));
    assert_eq!(
        row["interventions_decision_or_repair"],
        json!([{"kind": "decision", "note": "answer from scenario-script"},
               {"kind": "decision", "note": "gate plan-approval: approved"}])
    );
    assert_eq!(
        row["evidence_refs"],
        json!([
            format!("arena/examples/scenario-runs/{VERIFIED}"),
            format!("arena/examples/scenario-runs/{VERIFIED}/result.json")
        ])
    );
    let result_bytes =
        std::fs::read(c.root().join(c.run_dir(VERIFIED)).join("result.json")).unwrap();
    assert_eq!(
        row["native_record"],
        json!({"kind": "scenario", "id": VERIFIED, "sha256": git_ledger::sha256_hex(&result_bytes)})
    );
    assert_eq!(row["runtime_identity"]["python"], json!("3.12.7"));
    assert_eq!(
        row["actual_models_and_efforts"]["roles"]["resolver"],
        json!({"model": "astra-large-2025-06", "effort": "high"})
    );
    // A status view that is not complete gives no cost and no usage.
    let csv = c.row("scenario/feature-csv-export/01");
    assert_eq!(csv["estimated_usd"], Value::Null);
    assert_eq!(csv["usage"], Value::Null);
    assert_eq!(csv["oracle_checks"], Value::Null);
    // The fixture rows keep the argv-derived values.
    let fake = c.row("scenario/interrupted-verification-reuse/01");
    assert_eq!(fake["evidence"], "fixture");
    assert_eq!(
        fake["actual_models_and_efforts"]["provider"],
        "autocode-native"
    );

    let arena = c.row("arena/sympy-matrix-derivatives/01");
    assert_eq!(arena["source_revision"], json!(c.revision));
    assert_eq!(
        arena["spent_budget"],
        json!({"cli_invocation_seconds": null, "max_iterations": null, "oracle_seconds": null})
    );
    assert_eq!(arena["estimated_usd"], Value::Null);
    assert_eq!(arena["usage"], Value::Null);
    assert_eq!(arena["option_deviations"], json!([]));
    assert!(arena["runner_options"]
        .as_array()
        .unwrap()
        .contains(&json!("--test-command")));
    assert_eq!(
        arena["interventions_decision_or_repair"],
        json!([{"kind": "decision", "note": "benchmark plan approval: alice@example.org (arena/policy/approval.md)"}])
    );
    assert_eq!(
        arena["evidence_refs"],
        json!([
            "logs/att-0001/transcript.jsonl",
            "logs/att-0001/oracle-output.json",
            "arena/examples/arena-store#att-0001"
        ])
    );
    assert_eq!(
        arena["native_record"]["id"],
        "arena-hard-v1-examples/att-0001"
    );
    let checks = arena["oracle_checks"].as_array().unwrap();
    assert_eq!(checks.len(), 4);
    assert!(checks
        .windows(2)
        .all(|w| w[0]["name"].as_str() < w[1]["name"].as_str()));

    // Importing the same records again is a retry: refused, the ledger unchanged.
    c.refused(
        &strs(&args),
        &[
            "already holds an attempt",
            "a retry needs a new declared schedule",
        ],
    );
}

#[test]
fn never_graded_and_running_records_are_refused() {
    let c = Campaign::new();
    let args = make_examples::import_args(&c.examples(), true);
    let r = c.refused(
        &strs(&args),
        &[
            "admitted but never graded",
            "still RUNNING",
            "scenario/ladder-2-ledger/01",
            "arena/sympy-matrix-derivatives/02",
        ],
    );
    assert!(r.stderr.starts_with("refused (2 reasons):"), "{}", r.stderr);
    // Together with good records, nothing is written.
    let mut all = make_examples::import_args(&c.examples(), false);
    all.extend(make_examples::import_args(&c.examples(), true));
    c.refused(&strs(&all), &["admitted but never graded", "still RUNNING"]);
}

#[test]
fn a_record_fills_one_row_only() {
    let c = Campaign::new();
    let run = c.run_dir(VERIFIED);
    // Twice in one call.
    c.refused(
        &[
            "--scenario",
            "scenario/bugfix-iso-weeks/01",
            &run,
            "--scenario",
            "scenario/bugfix-iso-weeks/02",
            &run,
        ],
        &["would fill two rows", "one record cannot fill two rows"],
    );
    // The same schedule id twice in one call.
    c.refused(
        &[
            "--scenario",
            "scenario/bugfix-iso-weeks/01",
            &run,
            "--scenario",
            "scenario/bugfix-iso-weeks/01",
            &run,
        ],
        &[
            "is filled twice by this change",
            "one row holds one attempt",
        ],
    );
    // Once imported, it cannot fill another row.
    c.import(&["--scenario", "scenario/bugfix-iso-weeks/01", &run])
        .ok();
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/02", &run],
        &["already filled row scenario/bugfix-iso-weeks/01"],
    );
    // And the same Arena attempt neither.
    c.import(&[
        "--arena",
        "arena/sympy-matrix-derivatives/01",
        STORE,
        "att-0001",
    ])
    .ok();
    c.refused(
        &[
            "--arena",
            "arena/sympy-matrix-derivatives/02",
            STORE,
            "att-0001",
        ],
        &["already filled row arena/sympy-matrix-derivatives/01"],
    );
}

#[test]
fn a_record_of_another_task_or_kind_is_refused() {
    let c = Campaign::new();
    let run = c.run_dir(VERIFIED);
    c.refused(
        &["--scenario", "scenario/feature-csv-export/01", &run],
        &[
            "a record of another task or kind",
            "scenario/bugfix-iso-weeks",
            "scenario/feature-csv-export/01",
        ],
    );
    c.refused(
        &["--scenario", "arena/sympy-matrix-derivatives/01", &run],
        &[
            "a record of another task or kind",
            "arena task arena/sympy-matrix-derivatives",
        ],
    );
    c.refused(
        &["--arena", "scenario/bugfix-iso-weeks/01", STORE, "att-0001"],
        &["a record of another task or kind"],
    );
    c.refused(
        &[
            "--arena",
            "arena/networkx-shortest-path-weights/02",
            STORE,
            "att-0001",
        ],
        &["a record of another task or kind"],
    );
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/07", &run],
        &["scenario/bugfix-iso-weeks/07 is not scheduled"],
    );
}

#[test]
fn evidence_must_match_the_task() {
    let c = Campaign::new();
    // A fake run of a live task.
    let mut fake = c.example_result(VERIFIED);
    fake["run_id"] = json!("fake-1");
    fake["mode"] = json!("fake");
    let p = c.scenario_run("fake-1", &fake);
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/01", &p],
        // The row check's reason (a relabeled row), and the hint that says why it is fixture.
        &[
            "row scenario/bugfix-iso-weeks/01: evidence: is \"fixture\" but task scenario/bugfix-iso-weeks is declared live",
            "hint: ",
            "a \"fake\" run is fixture evidence",
        ],
    );
    // A hybrid run (even one skipped before the hybrid setup) of a live task.
    fake["run_id"] = json!("hybrid-1");
    fake["mode"] = json!("live-hybrid");
    let p = c.scenario_run("hybrid-1", &fake);
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/02", &p],
        &[
            "row scenario/bugfix-iso-weeks/02: evidence: is \"fixture\"",
            "\"live-hybrid\" run is fixture evidence",
        ],
    );
    // A live run of the fixture task.
    let mut live = c.example_result(FAKE);
    live["run_id"] = json!("live-1");
    live["mode"] = json!("live");
    let p = c.scenario_run("live-1", &live);
    c.refused(
        &[
            "--scenario",
            "scenario/interrupted-verification-reuse/01",
            &p,
        ],
        &["evidence: is \"live\"", "a \"live\" run is live evidence"],
    );
    // An Arena attempt run in fake mode.
    let sql = c
        .arena_sql()
        .replacen("'live', 'PASS'", "'fake', 'PASS'", 1);
    let s = c.store("stores/fake", &sql);
    c.refused(
        &[
            "--arena",
            "arena/sympy-matrix-derivatives/01",
            &s,
            "att-0001",
        ],
        &[
            "row arena/sympy-matrix-derivatives/01: evidence: is \"fixture\"",
            "\"fake\" run is fixture evidence",
        ],
    );
}

#[test]
fn unknown_modes_and_missing_reasons_are_refused() {
    let c = Campaign::new();
    let mut v = c.example_result(VERIFIED);
    v["run_id"] = json!("m-1");
    v["mode"] = json!("scripted");
    let p = c.scenario_run("m-1", &v);
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/01", &p],
        &["mode \"scripted\" is not one the import knows"],
    );
    let mut v = c.example_result("20261129T124500Z-a003");
    v["run_id"] = json!("r-1");
    v["reason"] = Value::Null;
    let p = c.scenario_run("r-1", &v);
    c.refused(
        &["--scenario", "scenario/greenfield-rate-limiter/01", &p],
        &[
            "native outcome FALSE_COMPLETE has no reason",
            "git ledger put",
        ],
    );
    let sql = c.arena_sql().replace(
        "'two upstream checks still fail after 3 iterations'",
        "NULL",
    );
    let s = c.store("stores/noreason", &sql);
    c.refused(
        &[
            "--arena",
            "arena/networkx-shortest-path-weights/01",
            &s,
            "att-0002",
        ],
        &["native outcome FAIL has no reason"],
    );
    // A NULL verdict with a status other than RUNNING.
    let sql = c.arena_sql().replace("NULL, 'RUNNING'", "NULL, 'FAILED'");
    let s = c.store("stores/nullverdict", &sql);
    c.refused(
        &[
            "--arena",
            "arena/sympy-matrix-derivatives/02",
            &s,
            "att-0004",
        ],
        &["NULL verdict with status FAILED"],
    );
}

#[test]
fn a_case_that_changed_or_differs_from_the_declaration_is_refused() {
    let c = Campaign::new();
    let sql = c.arena_sql();
    let task = c
        .decl
        .task("arena/sympy-matrix-derivatives")
        .unwrap()
        .clone();
    let up = task.upstream.clone().unwrap();
    // Another base commit.
    let other = "0000000000000000000000000000000000000001";
    let s = c.store(
        "stores/base",
        &sql.replacen(&format!("'{}'", up.base_commit), &format!("'{other}'"), 1),
    );
    c.refused(
        &["--arena", "arena/sympy-matrix-derivatives/01", &s, "att-0001"],
        &["base_commit 0000000000000000000000000000000000000001 is not the declared upstream.base_commit"],
    );
    // Other checks (a declared one dropped).
    let checks_json = serde_json::to_string(&up.checks).unwrap();
    let fewer = serde_json::to_string(&up.checks[1..]).unwrap();
    let s = c.store("stores/checks", &sql.replacen(&checks_json, &fewer, 1));
    c.refused(
        &[
            "--arena",
            "arena/sympy-matrix-derivatives/01",
            &s,
            "att-0001",
        ],
        &[
            "required_checks are not the declared upstream.checks",
            &up.checks[0],
        ],
    );
    // The same checks in another order are the same set.
    let mut reordered = up.checks.clone();
    reordered.reverse();
    let s = c.store(
        "stores/reordered",
        &sql.replacen(&checks_json, &serde_json::to_string(&reordered).unwrap(), 1),
    );
    c.import(&[
        "--arena",
        "arena/sympy-matrix-derivatives/01",
        &s,
        "att-0001",
    ])
    .ok();
    c.reset_ledger();
    // Another oracle.
    let oracle = task.oracle.unwrap().sha256.unwrap();
    let s = c.store("stores/oracle", &sql.replacen(&oracle, &"e".repeat(64), 1));
    c.refused(
        &[
            "--arena",
            "arena/sympy-matrix-derivatives/01",
            &s,
            "att-0001",
        ],
        &["is another oracle than the declared"],
    );
    // A definition edited in place (its digest no longer matches).
    let s = c.store(
        "stores/edited",
        &sql.replacen(
            "\"test_command\": \"python -m pytest -q hidden_tests\"",
            "\"test_command\": \"pytest\"",
            1,
        ),
    );
    c.refused(
        &[
            "--arena",
            "arena/sympy-matrix-derivatives/01",
            &s,
            "att-0001",
        ],
        &["the definition changed"],
    );
}

#[test]
fn a_ledger_that_already_fails_the_report_is_refused() {
    let c = Campaign::new();
    let mut v: Value = serde_json::from_slice(&c.ledger_bytes()).unwrap();
    v["rows"][5]["elapsed_seconds"] = json!(12.0);
    std::fs::write(c.ledger_path(), git_ledger::json::canonical(&v)).unwrap();
    let run = c.run_dir(VERIFIED);
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/01", &run],
        &["the ledger already fails a check of the report"],
    );
}

#[test]
fn a_result_that_would_fail_the_report_is_refused() {
    let c = Campaign::new();
    // A PASS at a stop status on a task that expects completion.
    let mut v = c.example_result(VERIFIED);
    v["run_id"] = json!("stop-1");
    v["autocode_status"] = json!("BLOCKED");
    let p = c.scenario_run("stop-1", &v);
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/01", &p],
        &[
            "row scenario/bugfix-iso-weeks/01: native_status: a native PASS contradicts its own status",
        ],
    );
    // A PASS carrying a failing check.
    let mut v = c.example_result(VERIFIED);
    v["run_id"] = json!("fail-1");
    v["oracle"]["checks"][0]["ok"] = json!(false);
    let p = c.scenario_run("fail-1", &v);
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/01", &p],
        &["a PASS carries a failing oracle check"],
    );
    // A native outcome the task does not declare.
    let mut v = c.example_result(VERIFIED);
    v["run_id"] = json!("odd-1");
    v["verdict"] = json!("FAIL");
    v["reason"] = json!("tests fail");
    let p = c.scenario_run("odd-1", &v);
    c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/01", &p],
        &["\"FAIL\" is not DEFERRED nor a native outcome task scenario/bugfix-iso-weeks declares"],
    );
}

#[test]
fn every_reason_across_records_is_listed() {
    let c = Campaign::new();
    let run = c.run_dir(VERIFIED);
    let r = c.refused(
        &[
            "--scenario",
            "scenario/feature-csv-export/01",
            &run,
            "--arena",
            "arena/sympy-matrix-derivatives/02",
            STORE,
            "att-0004",
            "--scenario",
            "scenario/ladder-2-ledger/01",
            &c.run_dir(UNGRADED),
            "--arena",
            "scenario/bugfix-iso-weeks/02",
            STORE,
            "att-0002",
        ],
        &[
            "a record of another task or kind",
            "still RUNNING",
            "never graded",
        ],
    );
    assert!(r.stderr.starts_with("refused (4 reasons):"), "{}", r.stderr);
}

#[test]
fn json_output_and_json_refusals() {
    let c = Campaign::new();
    let run = c.run_dir(VERIFIED);
    let r = c.import(&["--scenario", "scenario/bugfix-iso-weeks/01", &run, "--json"]);
    r.ok();
    let v = r.json();
    assert_eq!(v["filled"], 1);
    assert_eq!(v["scheduled"], 26);
    assert_eq!(
        v["imported"][0]["schedule_id"],
        "scenario/bugfix-iso-weeks/01"
    );
    assert_eq!(
        v["imported"][0]["outcome"],
        "pass_without_complete_evidence"
    );
    assert_eq!(v["imported"][0]["gaps"], json!(["runtime not recorded"]));
    assert_eq!(v["imported"][0]["record"], format!("scenario:{VERIFIED}"));
    assert!(v["notes"][0]
        .as_str()
        .unwrap()
        .contains("edited scenario definition is not detected"));
    let r = c.refused(
        &["--scenario", "scenario/bugfix-iso-weeks/01", &run, "--json"],
        &["already holds an attempt"],
    );
    let v = r.json();
    assert_eq!(v["refused"], true);
    assert!(v["reasons"][0]
        .as_str()
        .unwrap()
        .contains("already holds an attempt"));
}

#[test]
fn runtime_identity_is_checked_and_recorded() {
    let c = Campaign::new();
    let run = c.run_dir(VERIFIED);
    write(
        c.root(),
        "bad-runtime.json",
        r#"{"python": "3.12.7", "python": "3.12.8"}"#,
    );
    c.refused(
        &[
            "--scenario",
            "scenario/bugfix-iso-weeks/01",
            &run,
            "--runtime-identity",
            "bad-runtime.json",
        ],
        &["bad-runtime.json"],
    );
    write(
        c.root(),
        "bad-runtime.json",
        r#"{"python": "3.12.7", "psutil": "6.1.0", "native_provider": "x", "packages": {}, "dependencies": ["pytest"], "extra": 1}"#,
    );
    c.refused(
        &[
            "--scenario",
            "scenario/bugfix-iso-weeks/01",
            &run,
            "--runtime-identity",
            "bad-runtime.json",
        ],
        &[
            "dependencies[0]: must be a \"name==version\" string",
            "extra: unknown key",
        ],
    );
    // A freeze given by its digest is accepted; the runtime differs from the declared one.
    write(
        c.root(),
        "other-runtime.json",
        format!(
            r#"{{"python": "3.11.0", "psutil": "6.1.0", "native_provider": "autocode-native 2.4.1", "packages": {{}}, "dependencies": {{"sha256": "{}"}}}}"#,
            "a".repeat(64)
        ),
    );
    let r = c.import(&[
        "--scenario",
        "scenario/bugfix-iso-weeks/01",
        &run,
        "--runtime-identity",
        "other-runtime.json",
    ]);
    r.ok();
    assert!(r.stdout.contains("gaps: runtime differs"), "{}", r.stdout);
    assert_eq!(
        c.row("scenario/bugfix-iso-weeks/01")["runtime_identity"]["python"],
        "3.11.0"
    );
}

#[test]
fn a_runner_tools_identity_other_than_the_declared_one_leaves_the_revision_null() {
    let c = Campaign::new();
    let tools = c.decl.runner_tools.sha256.clone().unwrap();
    let sql = c
        .arena_sql()
        .replacen(&format!("'{tools}'"), &format!("'{}'", "9".repeat(64)), 1);
    let s = c.store("stores/tools", &sql);
    let r = c.import(&[
        "--arena",
        "arena/sympy-matrix-derivatives/01",
        &s,
        "att-0001",
        "--runtime-identity",
        "arena/examples/runtime.json",
    ]);
    r.ok();
    assert!(r.stdout.contains("native pass without complete evidence\n  from stores/tools#att-0001\n  gaps: revision null\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("note: source_revision null: runner_tools_identity 9999"),
        "{}",
        r.stdout
    );
    assert_eq!(
        c.row("arena/sympy-matrix-derivatives/01")["source_revision"],
        Value::Null
    );
}

#[test]
fn option_deviations_make_a_live_pass_unverified() {
    let c = Campaign::new();
    let mut v = c.example_result(VERIFIED);
    v["run_id"] = json!("dev-1");
    let argv = v["profile"]["argv"].as_array_mut().unwrap();
    argv.push(json!("--single-model"));
    argv.push(json!("m-other"));
    let p = c.scenario_run("dev-1", &v);
    let r = c.import(&[
        "--scenario",
        "scenario/bugfix-iso-weeks/01",
        &p,
        "--runtime-identity",
        "arena/examples/runtime.json",
    ]);
    r.ok();
    assert!(r.stdout.contains("gaps: option deviations"), "{}", r.stdout);
    assert_eq!(
        c.row("scenario/bugfix-iso-weeks/01")["option_deviations"],
        json!(["added --single-model=m-other"])
    );
}

#[test]
fn an_over_limit_attempt_is_reported() {
    let c = Campaign::new();
    let mut v = c.example_result("20261129T124500Z-a003");
    v["run_id"] = json!("over-1");
    v["harness"]["wall_seconds"] = json!(9000.0);
    let p = c.scenario_run("over-1", &v);
    let r = c.import(&[
        "--scenario",
        "scenario/greenfield-rate-limiter/01",
        &p,
        "--runtime-identity",
        "arena/examples/runtime.json",
    ]);
    r.ok();
    assert!(r.stdout.contains("false completion\n  from runs/over-1/result.json\n  overruns: over limit harness_minutes\n"), "{}", r.stdout);
}

#[test]
fn a_store_held_open_by_a_wal_writer_still_imports() {
    let c = Campaign::new();
    let s = c.store("stores/wal", &c.arena_sql());
    let db = c.root().join(&s).join("results.sqlite3");
    let writer = rusqlite::Connection::open(&db).unwrap();
    let mode: String = writer
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    writer
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO evidence VALUES ('att-0001', 'uncommitted');")
        .unwrap();
    let r = c.import(&[
        "--arena",
        "arena/sympy-matrix-derivatives/01",
        &s,
        "att-0001",
    ]);
    r.ok();
    // The import read the last commit: the uncommitted evidence is not there.
    let refs = c.row("arena/sympy-matrix-derivatives/01")["evidence_refs"].clone();
    assert!(
        !refs.as_array().unwrap().contains(&json!("uncommitted")),
        "{refs}"
    );
    writer.execute_batch("COMMIT;").unwrap();
}

#[test]
fn a_missing_pinned_commit_fails_with_the_fetch_hint() {
    let c = Campaign::new();
    // Import from another repository that does not hold the declared commit.
    let other = new_repo();
    write(other.path(), "x", "x");
    commit_all(other.path(), "other");
    let repo = other.path().to_string_lossy().into_owned();
    let r = c.import(&[
        "--arena",
        "arena/sympy-matrix-derivatives/01",
        STORE,
        "att-0001",
        "--repo",
        &repo,
    ]);
    r.expect_code(1);
    assert!(r.stderr.contains("git fetch --unshallow"), "{}", r.stderr);
    // Scenario records need no Git objects.
    c.import(&[
        "--scenario",
        "scenario/bugfix-iso-weeks/01",
        &c.run_dir(VERIFIED),
        "--repo",
        &repo,
    ])
    .ok();
}

#[test]
fn usage_errors() {
    let c = Campaign::new();
    c.import(&[]).expect_code(64);
    c.import(&["--scenario", "scenario/bugfix-iso-weeks/01"])
        .expect_code(64);
    c.import(&["--arena", "arena/sympy-matrix-derivatives/01", STORE])
        .expect_code(64);
    // Without <DECLARATION> <LEDGER> the import is ref mode: this repository has no ledger ref.
    let r = ledger(
        c.root(),
        &[
            "import",
            "--scenario",
            "scenario/bugfix-iso-weeks/01",
            &c.run_dir(VERIFIED),
        ],
    );
    r.expect_code(1);
    assert!(r.stderr.contains("no ledger ref"), "{}", r.stderr);
}

#[test]
fn a_missing_record_fails_and_writes_nothing() {
    let c = Campaign::new();
    let before = c.ledger_bytes();
    let r = c.import(&[
        "--scenario",
        "scenario/bugfix-iso-weeks/01",
        "runs/nope/result.json",
    ]);
    r.expect_code(1);
    let r2 = c.import(&[
        "--arena",
        "arena/sympy-matrix-derivatives/01",
        "stores/nope",
        "att-0001",
    ]);
    r2.expect_code(1);
    assert_eq!(before, c.ledger_bytes());
    let _ = git(c.root(), &["status", "--short"]);
}

/// Split import arguments into one job per record (`--scenario ID PATH`, `--arena ID STORE
/// ATTEMPT`).
fn one_job_per_record(args: &[String]) -> Vec<Vec<String>> {
    let mut jobs = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let n = if args[i] == "--arena" { 4 } else { 3 };
        jobs.push(args[i..i + n].to_vec());
        i += n;
    }
    jobs
}

/// Ref mode with one importer process per record, all at once, plus a retry of one record:
/// every row lands exactly once, the retry is refused, the chain verifies, and the ref's
/// ledger is byte-identical to importing the same records in file mode.
fn concurrent_importers_in_ref_mode_each_land_exactly_once(prefix: &str) {
    let c = Campaign::new();
    crate::common::use_prefix(c.root(), prefix);
    ledger(c.root(), &["init", "campaign.json"]).ok();
    let records = make_examples::import_args(&c.examples(), false);
    let runtime = make_examples::runtime_args(&c.examples());
    let mut jobs = one_job_per_record(&records);
    assert!(jobs.len() >= 8, "at least 8 importers ({})", jobs.len());
    jobs.push(jobs[0].clone());
    let children: Vec<_> = jobs
        .iter()
        .map(|job| {
            let mut cmd = std::process::Command::new(crate::common::bin());
            crate::common::pin_env(&mut cmd)
                .current_dir(c.root())
                .arg("import")
                .args(job)
                .args(&runtime)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let landed = outs.iter().filter(|o| o.status.code() == Some(0)).count();
    let refused: Vec<String> = outs
        .iter()
        .filter(|o| o.status.code() == Some(2))
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .collect();
    assert_eq!(
        landed + refused.len(),
        jobs.len(),
        "every importer landed or was refused"
    );
    assert_eq!(
        landed,
        jobs.len() - 1,
        "each record lands once: {refused:?}"
    );
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].contains("already holds an attempt") || refused[0].contains("already filled"),
        "{}",
        refused[0]
    );
    // One commit per landed record after the root.
    assert_eq!(
        git(
            c.root(),
            &[
                "rev-list",
                "--count",
                &format!("{prefix}reliability-634-slice-1")
            ]
        ),
        (landed + 1).to_string()
    );
    ledger(c.root(), &["verify"]).ok();
    // The same records imported at once in file mode give the same ledger document.
    let mut all = records.clone();
    all.extend(runtime);
    c.import(&strs(&all)).ok();
    let shown = ledger(c.root(), &["show"]);
    shown.ok();
    assert_eq!(shown.stdout.as_bytes(), &c.ledger_bytes()[..]);
}

/// The retry refusal, exactly as a person sees it: both reasons, and the next step.
#[test]
fn the_retry_refusal_names_the_row_the_record_and_the_next_step() {
    let c = Campaign::new();
    let run = c.run_dir(VERIFIED);
    c.import(&["--scenario", "scenario/bugfix-iso-weeks/01", &run])
        .ok();
    let r = c.refused(&["--scenario", "scenario/bugfix-iso-weeks/01", &run], &[]);
    assert_eq!(
        r.stderr,
        format!(
            "refused (2 reasons):\n  \
             rule 4: row scenario/bugfix-iso-weeks/01: already holds an attempt (PASS, from scenario:{VERIFIED}); a filled row is never replaced (a retry needs a new declared schedule, and the original row stays)\n  \
             rule 5: row scenario/bugfix-iso-weeks/01: native_record: record scenario:{VERIFIED} ({run}/result.json) already filled row scenario/bugfix-iso-weeks/01; one record cannot fill two rows\n\
             hint: to run the task again, raise `repetitions` (or add a task) in the draft and pin a new declaration; this row keeps its attempt\n"
        )
    );
    let j = c
        .refused(
            &["--json", "--scenario", "scenario/bugfix-iso-weeks/01", &run],
            &[],
        )
        .json();
    assert_eq!(j["refused"], true);
    assert_eq!(j["reasons"].as_array().unwrap().len(), 2);
    assert_eq!(j["hints"].as_array().unwrap().len(), 1);
}

crate::common::under_both_prefixes!(concurrent_importers_in_ref_mode_each_land_exactly_once);
