//! Write the example records of the embedded campaign and the ledger importing them produces.
//!
//! ```text
//! cargo run --example make_examples            # reads arena/campaign.json, writes arena/examples/
//! ```
//!
//! The records name what the pinned declaration pins (its `source_revision` as the scenario
//! runs' `commit`, the Arena cases' base commits, checks and oracle digests, the runner tools
//! identity), so they are generated from `arena/campaign.json` rather than written by hand.
//! It writes, under `arena/examples/`:
//!
//! - `scenario-runs/<run id>/result.json` (and `attempt.json`): a verified PASS, a PASS without
//!   oracle checks, a FALSE_COMPLETE, an HONEST_BLOCKER, a fake run and a hybrid run (both for
//!   the fixture task), and a run admitted but never graded (`attempt.json` only);
//! - `arena-store.sql`: the Arena store schema, the three cases and four attempts (a PASS with
//!   every check, a FAIL, a STOPPED, one still RUNNING), built into the git-ignored
//!   `arena-store/results.sqlite3` with `git_ledger::import::build_store_from_sql`;
//! - `runtime.json`: the evaluator's runtime identity, matching the declared requirements;
//! - `ledger.json`: the template ledger after `git-ledger import` of every record that can be
//!   imported ([`import_args`], with `runtime.json`; the never-graded run and the RUNNING
//!   attempt are refused).
//!
//! The test `examples::ledger_json_is_what_importing_the_examples_produces` re-runs that import
//! with the built binary and compares the bytes.

#[path = "common/profile_argv.rs"]
mod profile_argv;
use profile_argv::declared_argv;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use git_ledger::declaration::{Declaration, Kind};

/// Where the examples live, relative to the repository root.
pub const EXAMPLES: &str = "arena/examples";
/// The Arena store directory (git-ignored), relative to the repository root.
pub const ARENA_STORE: &str = "arena/examples/arena-store";
/// The committed SQL script the store is built from.
pub const ARENA_SQL: &str = "arena/examples/arena-store.sql";
/// The Arena store's id.
pub const STORE_ID: &str = "arena-hard-v1-examples";

/// A scenario example: run id, scenario name, schedule id it fills, and whether it is graded.
pub struct ScenarioExample {
    pub run_id: &'static str,
    pub scenario: &'static str,
    pub schedule_id: &'static str,
    /// The portfolio outcome key the import gives it (None: the import refuses it).
    pub outcome: Option<&'static str>,
}

/// The scenario runs, in the order they are imported.
pub const SCENARIO_RUNS: &[ScenarioExample] = &[
    ScenarioExample {
        run_id: "20261129T101500Z-a001",
        scenario: "bugfix-iso-weeks",
        schedule_id: "scenario/bugfix-iso-weeks/01",
        outcome: Some("verified_delivery"),
    },
    ScenarioExample {
        run_id: "20261129T113000Z-a002",
        scenario: "feature-csv-export",
        schedule_id: "scenario/feature-csv-export/01",
        outcome: Some("pass_without_complete_evidence"),
    },
    ScenarioExample {
        run_id: "20261129T124500Z-a003",
        scenario: "greenfield-rate-limiter",
        schedule_id: "scenario/greenfield-rate-limiter/01",
        outcome: Some("false_completion"),
    },
    ScenarioExample {
        run_id: "20261129T140000Z-a004",
        scenario: "ladder-1-transactional-import",
        schedule_id: "scenario/ladder-1-transactional-import/01",
        outcome: Some("stopped_unestablished"),
    },
    ScenarioExample {
        run_id: "20261129T150000Z-f001",
        scenario: "interrupted-verification-reuse",
        schedule_id: "scenario/interrupted-verification-reuse/01",
        outcome: Some("verified_delivery"),
    },
    ScenarioExample {
        run_id: "20261129T151500Z-h001",
        scenario: "interrupted-verification-reuse",
        schedule_id: "scenario/interrupted-verification-reuse/02",
        outcome: Some("skipped"),
    },
    ScenarioExample {
        run_id: "20261129T160000Z-a005",
        scenario: "ladder-2-ledger",
        schedule_id: "scenario/ladder-2-ledger/01",
        outcome: None,
    },
];

/// An Arena example attempt: attempt id, the schedule id it fills, and its outcome.
pub struct ArenaExample {
    pub attempt_id: &'static str,
    pub schedule_id: &'static str,
    pub outcome: Option<&'static str>,
}

/// The Arena attempts, in the order they are imported.
pub const ARENA_ATTEMPTS: &[ArenaExample] = &[
    ArenaExample {
        attempt_id: "att-0001",
        schedule_id: "arena/sympy-matrix-derivatives/01",
        outcome: Some("verified_delivery"),
    },
    ArenaExample {
        attempt_id: "att-0002",
        schedule_id: "arena/networkx-shortest-path-weights/01",
        outcome: Some("ended_without_completing"),
    },
    ArenaExample {
        attempt_id: "att-0003",
        schedule_id: "arena/astropy-units-roundtrip/01",
        outcome: Some("stopped_unestablished"),
    },
    ArenaExample {
        attempt_id: "att-0004",
        schedule_id: "arena/sympy-matrix-derivatives/02",
        outcome: None,
    },
];

/// The `import` record arguments (after `import <DECLARATION> <LEDGER>`) for every example
/// record the import accepts (`refused`: false) or every one it refuses (`refused`: true),
/// with paths under `examples` (a directory holding `scenario-runs/` and `arena-store/`).
pub fn import_args(examples: &Path, refused: bool) -> Vec<String> {
    let mut args = Vec::new();
    for s in SCENARIO_RUNS
        .iter()
        .filter(|s| s.outcome.is_none() == refused)
    {
        args.push("--scenario".to_owned());
        args.push(s.schedule_id.to_owned());
        args.push(path(&examples.join("scenario-runs").join(s.run_id)));
    }
    for a in ARENA_ATTEMPTS
        .iter()
        .filter(|a| a.outcome.is_none() == refused)
    {
        args.push("--arena".to_owned());
        args.push(a.schedule_id.to_owned());
        args.push(path(&examples.join("arena-store")));
        args.push(a.attempt_id.to_owned());
    }
    args
}

/// `--runtime-identity <examples>/runtime.json`.
pub fn runtime_args(examples: &Path) -> Vec<String> {
    vec![
        "--runtime-identity".to_owned(),
        path(&examples.join("runtime.json")),
    ]
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Canonical JSON bytes, as the tool writes every document.
fn canonical(v: &Value) -> Vec<u8> {
    git_ledger::json::canonical(v)
}

/// Hidden test names of the scenario tasks the examples grade.
fn scenario_checks(scenario: &str) -> Vec<(&'static str, bool)> {
    match scenario {
        "bugfix-iso-weeks" => vec![
            ("hidden_tests/test_iso_weeks.py::test_year_boundary", true),
            ("hidden_tests/test_iso_weeks.py::test_mid_year_weeks", true),
            ("hidden_tests/test_iso_weeks.py::test_weeks_in_year", true),
            (
                "hidden_tests/test_iso_weeks.py::test_week_start_is_monday_of_iso_week",
                true,
            ),
            (
                "hidden_tests/test_iso_weeks.py::test_agrees_with_isocalendar_over_a_decade",
                true,
            ),
        ],
        "greenfield-rate-limiter" => vec![
            (
                "hidden_tests/test_token_bucket.py::test_starts_full_and_drains",
                true,
            ),
            (
                "hidden_tests/test_token_bucket.py::test_refills_at_rate",
                false,
            ),
            (
                "hidden_tests/test_token_bucket.py::test_refill_capped_at_capacity",
                false,
            ),
            (
                "hidden_tests/test_token_bucket.py::test_denied_request_takes_nothing",
                true,
            ),
            ("hidden_tests/test_token_bucket.py::test_retry_after", false),
            ("hidden_tests/test_token_bucket.py::test_validation", true),
        ],
        "interrupted-verification-reuse" => vec![
            (
                "hidden_tests/test_verification_reuse.py::test_finished_run_is_reused",
                true,
            ),
            (
                "hidden_tests/test_verification_reuse.py::test_interrupted_run_is_not_reused",
                true,
            ),
            (
                "hidden_tests/test_verification_reuse.py::test_digest_covers_contents_and_paths",
                true,
            ),
            (
                "hidden_tests/test_verification_reuse.py::test_result_for_other_tree_is_not_reused",
                true,
            ),
        ],
        _ => Vec::new(),
    }
}

fn checks_value(checks: &[(&str, bool)]) -> Value {
    Value::Array(
        checks
            .iter()
            .map(|(n, ok)| json!({"name": n, "ok": ok}))
            .collect(),
    )
}

/// The `result.json` of each graded scenario example.
fn scenario_result(decl: &Declaration, s: &ScenarioExample) -> Value {
    let commit = decl.source_revision.clone().unwrap_or_default();
    let argv = declared_argv(decl, &[]);
    let profile = json!({"name": decl.profile.name, "argv": argv});
    let base = |mode: &str, verdict: &str, status: Value, reason: Value| {
        json!({
            "format": "scenario-result/1",
            "run_id": s.run_id,
            "scenario": s.scenario,
            "mode": mode,
            "commit": commit,
            "tools_dirty": false,
            "verdict": verdict,
            "autocode_status": status,
            "reason": reason,
            "profile": profile,
        })
    };
    let v = match s.run_id {
        "20261129T101500Z-a001" => {
            let mut v = base("live", "PASS", json!("COMPLETE"), Value::Null);
            v["oracle"] = json!({"checks": checks_value(&scenario_checks(s.scenario))});
            v["harness"] = json!({"wall_seconds": 2710.4, "cli_calls": 143});
            v["status_view"] = json!({"complete": true, "spent_usd": 3.91,
                "usage": {"input_tokens": 812345, "output_tokens": 40211}});
            v["answers"] = json!([{"source": "scenario-script",
                "question": "Should week 53 be reported for years that have one?",
                "answer": "Yes, follow ISO 8601."}]);
            v["gates"] = json!([{"name": "plan-approval", "decision": "approved"}]);
            v["elapsed_seconds"] = json!(2731.0);
            v
        }
        "20261129T113000Z-a002" => {
            // A PASS whose oracle never ran: no checks, so not a verified delivery.
            let mut v = base("live", "PASS", json!("COMPLETE"), Value::Null);
            v["oracle"] = Value::Null;
            v["harness"] = json!({"wall_seconds": 3300.0, "cli_calls": 201});
            // The status view stopped updating before the end: its spend is a floor.
            v["status_view"] = json!({"complete": false, "spent_usd": 2.4,
                "usage": {"input_tokens": 600000, "output_tokens": 30100}});
            v["gates"] = json!([{"name": "plan-approval", "decision": "approved"}]);
            v["elapsed_seconds"] = json!(3321.5);
            v
        }
        "20261129T124500Z-a003" => {
            let mut v = base(
                "live",
                "FALSE_COMPLETE",
                json!("COMPLETE"),
                json!("the agent reported completion, but the hidden tests of refill and retry-after fail"),
            );
            v["oracle"] = json!({"checks": checks_value(&scenario_checks(s.scenario))});
            v["harness"] = json!({"wall_seconds": 4102.0, "cli_calls": 288});
            v["status_view"] = json!({"complete": true, "spent_usd": 5.02,
                "usage": {"input_tokens": 1020000, "output_tokens": 51800}});
            v["elapsed_seconds"] = json!(4125.25);
            v
        }
        "20261129T140000Z-a004" => {
            let mut v = base(
                "live",
                "HONEST_BLOCKER",
                json!("BLOCKED"),
                json!("the agent stopped: the import format's duplicate-id rule contradicts the brief, and it asked instead of guessing"),
            );
            v["oracle"] = Value::Null;
            v["harness"] = json!({"wall_seconds": 1510.0, "cli_calls": 97});
            v["status_view"] = json!({"complete": true, "spent_usd": 1.37,
                "usage": {"input_tokens": 301000, "output_tokens": 12040}});
            v["answers"] = json!([{"source": "scenario-script",
                "question": "Which duplicate-id rule applies?", "answer": "Not specified."}]);
            v["elapsed_seconds"] = json!(1522.0);
            v
        }
        "20261129T150000Z-f001" => {
            // The fixture task: a scripted (fake) run with a scripted interruption.
            let mut v = base("fake", "PASS", json!("COMPLETE"), Value::Null);
            v["oracle"] = json!({"checks": checks_value(&scenario_checks(s.scenario))});
            v["harness"] = json!({"wall_seconds": 212.0, "cli_calls": 41});
            v["status_view"] = json!({"complete": true, "spent_usd": 0,
                "usage": {"input_tokens": 0, "output_tokens": 0}});
            v["answers"] = json!([{"source": "scenario-script",
                "question": "Resume after the interruption?", "answer": "Yes."}]);
            v["elapsed_seconds"] = json!(215.5);
            v
        }
        "20261129T151500Z-h001" => {
            // A hybrid run skipped before its hybrid route was set up: still fixture evidence.
            let mut v = base(
                "live-hybrid",
                "SKIPPED",
                Value::Null,
                json!("skipped before the hybrid route was set up: no hybrid provider configured"),
            );
            v["oracle"] = Value::Null;
            v["harness"] = json!({"wall_seconds": 3.2, "cli_calls": 0});
            v["elapsed_seconds"] = json!(3.4);
            v
        }
        other => panic!("no result for {other}"),
    };
    v
}

/// The `attempt.json` the harness writes when it admits a run.
fn scenario_attempt(decl: &Declaration, s: &ScenarioExample, mode: &str) -> Value {
    json!({
        "run_id": s.run_id,
        "scenario": s.scenario,
        "mode": mode,
        "commit": decl.source_revision,
        "tools_dirty": false,
        "profile": {"name": decl.profile.name, "argv": declared_argv(decl, &[])},
        "admitted_at": format!("{}-{}-{}T{}:{}:{}Z", &s.run_id[0..4], &s.run_id[4..6], &s.run_id[6..8], &s.run_id[9..11], &s.run_id[11..13], &s.run_id[13..15]),
    })
}

fn mode_of(v: &Value) -> String {
    v["mode"].as_str().unwrap_or("live").to_owned()
}

/// SQL string literal.
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The SQL script of the example Arena store.
pub fn arena_sql(decl: &Declaration) -> String {
    let mut sql = String::new();
    sql.push_str("-- The example Arena store of the embedded campaign (generated by\n");
    sql.push_str("-- `cargo run --example make_examples` from arena/campaign.json).\n");
    sql.push_str("-- Built into arena/examples/arena-store/results.sqlite3 by\n");
    sql.push_str("-- git_ledger::import::build_store_from_sql; that directory is git-ignored.\n");
    sql.push_str(git_ledger::import::arena::SCHEMA);
    sql.push_str(&format!(
        "INSERT INTO store VALUES ('store_id', {}), ('schema_version', '1');\n",
        q(STORE_ID)
    ));
    let tools = decl.runner_tools.sha256.clone().unwrap_or_default();
    let mut digests = std::collections::BTreeMap::new();
    for task in decl.tasks.iter().filter(|t| t.kind == Kind::Arena) {
        let case_id = task.id.trim_start_matches("arena/");
        let up = task.upstream.as_ref().expect("arena task has upstream");
        let definition = String::from_utf8(canonical(&json!({
            "case_id": case_id,
            "repository": up.repository,
            "base_commit": up.base_commit,
            "checks": up.checks,
            "oracle": task.oracle.as_ref().map(|o| o.path.clone()),
            "test_command": "python -m pytest -q hidden_tests",
        })))
        .unwrap();
        let digest = git_ledger::sha256_hex(definition.as_bytes());
        digests.insert(case_id.to_owned(), (digest.clone(), up.checks.clone()));
        sql.push_str(&format!(
            "INSERT INTO cases VALUES ({}, {}, {}, {}, {}, {});\n",
            q(case_id),
            q(&up.base_commit),
            q(&serde_json::to_string(&up.checks).unwrap()),
            q(task
                .oracle
                .as_ref()
                .and_then(|o| o.sha256.as_deref())
                .unwrap_or("")),
            q(&definition),
            q(&digest)
        ));
    }
    let max_iter = |case: &str| {
        decl.task(&format!("arena/{case}"))
            .and_then(|t| t.limits.get("max_iterations").copied())
            .unwrap_or(3.0)
            .to_string()
    };
    let options = |case: &str| {
        serde_json::to_string(&declared_argv(
            decl,
            &[
                "--max-iterations",
                &max_iter(case),
                "--test-command",
                "python -m pytest -q hidden_tests",
            ],
        ))
        .unwrap()
    };
    // (attempt, case, verdict, status, reason, plan approval, started, finished, elapsed,
    //  failing checks: None = no checks recorded)
    type Attempt<'a> = (
        &'a str,
        &'a str,
        Option<&'a str>,
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        &'a str,
        Option<&'a str>,
        Option<f64>,
        Option<&'a [usize]>,
    );
    let attempts: [Attempt; 4] = [
        (
            "att-0001",
            "sympy-matrix-derivatives",
            Some("PASS"),
            "COMPLETED",
            None,
            Some("alice@example.org (arena/policy/approval.md)"),
            "2026-11-29T09:00:00Z",
            Some("2026-11-29T09:30:22Z"),
            Some(1822.5),
            Some(&[]),
        ),
        (
            "att-0002",
            "networkx-shortest-path-weights",
            Some("FAIL"),
            "FAILED",
            Some("two upstream checks still fail after 3 iterations"),
            Some("alice@example.org (arena/policy/approval.md)"),
            "2026-11-29T10:00:00Z",
            Some("2026-11-29T10:58:41Z"),
            Some(3521.0),
            Some(&[1, 2]),
        ),
        (
            "att-0003",
            "astropy-units-roundtrip",
            Some("STOPPED"),
            "STOPPED",
            Some("the agent stopped: the brief's fractional-power format is ambiguous"),
            None,
            "2026-11-29T11:00:00Z",
            Some("2026-11-29T11:12:05Z"),
            Some(725.0),
            None,
        ),
        (
            "att-0004",
            "sympy-matrix-derivatives",
            None,
            "RUNNING",
            None,
            None,
            "2026-11-29T12:00:00Z",
            None,
            None,
            None,
        ),
    ];
    for (id, case, verdict, status, reason, approval, started, finished, elapsed, failing) in
        attempts
    {
        let (digest, checks) = &digests[case];
        let opt = |v: Option<&str>| v.map_or("NULL".to_owned(), q);
        sql.push_str(&format!(
            "INSERT INTO attempts VALUES ({}, {}, {}, {}, {}, 'live', {}, {}, {}, {}, {}, {}, {});\n",
            q(id),
            q(case),
            q(digest),
            q(&tools),
            q(&options(case)),
            opt(verdict),
            q(status),
            opt(reason),
            opt(approval),
            q(started),
            opt(finished),
            elapsed.map_or("NULL".to_owned(), |e| format!("{e:?}")),
        ));
        if let Some(failing) = failing {
            for (i, name) in checks.iter().enumerate() {
                sql.push_str(&format!(
                    "INSERT INTO checks VALUES ({}, {}, {});\n",
                    q(id),
                    q(name),
                    if failing.contains(&i) { 0 } else { 1 }
                ));
            }
        }
        if verdict.is_some() {
            for r in ["transcript.jsonl", "oracle-output.json"] {
                sql.push_str(&format!(
                    "INSERT INTO evidence VALUES ({}, {});\n",
                    q(id),
                    q(&format!("logs/{id}/{r}"))
                ));
            }
        }
    }
    sql
}

/// The evaluator's runtime identity: the declared requirements and a dependency freeze.
fn runtime(decl: &Declaration) -> Value {
    let mut v = Value::Object(decl.runtime_requirements.clone());
    let mut deps: Vec<String> = decl
        .runtime_requirements
        .get("packages")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(n, v)| format!("{n}=={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    if let Some(psutil) = decl
        .runtime_requirements
        .get("psutil")
        .and_then(Value::as_str)
    {
        deps.push(format!("psutil=={psutil}"));
    }
    deps.sort();
    v["dependencies"] = json!(deps);
    v
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Write every example record for `decl` under `out` and build the Arena store from its SQL.
pub fn write_records(decl: &Declaration, out: &Path) -> Result<(), String> {
    let runs = out.join("scenario-runs");
    if runs.exists() {
        std::fs::remove_dir_all(&runs).map_err(|e| format!("{}: {e}", runs.display()))?;
    }
    for s in SCENARIO_RUNS {
        let dir = runs.join(s.run_id);
        let mode = if s.outcome.is_some() {
            let result = scenario_result(decl, s);
            write(&dir.join("result.json"), &canonical(&result))?;
            mode_of(&result)
        } else {
            "live".to_owned()
        };
        write(
            &dir.join("attempt.json"),
            &canonical(&scenario_attempt(decl, s, &mode)),
        )?;
    }
    let sql = arena_sql(decl);
    write(&out.join("arena-store.sql"), sql.as_bytes())?;
    git_ledger::import::build_store_from_sql(&out.join("arena-store"), &sql)
        .map_err(|e| e.to_string())?;
    write(&out.join("runtime.json"), &canonical(&runtime(decl)))?;
    Ok(())
}

/// Run `git-ledger <argv[1..]>` in this process (the same code as the binary); returns the exit
/// status.
pub fn run_import(argv: &[String]) -> i32 {
    use clap::Parser;
    let cli = match git_ledger::cli::Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return 64;
        }
    };
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let mut io = git_ledger::cli::Io {
        out: &mut out,
        err: &mut err,
    };
    match git_ledger::cli::run(cli.command, &mut io) {
        Ok(code) => code,
        Err(e) => {
            git_ledger::cli::report_error(&e, false, &mut std::io::stdout(), &mut std::io::stderr())
        }
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if let Err(e) = std::env::set_current_dir(&root) {
        eprintln!("error: {}: {e}", root.display());
        std::process::exit(1);
    }
    let campaign = Path::new("arena/campaign.json");
    let decl = match Declaration::read(campaign, u64::MAX) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}\nhint: pin the campaign first: git-ledger pin arena/campaign.draft.json -o arena/campaign.json");
            std::process::exit(1);
        }
    };
    let out = Path::new(EXAMPLES);
    if let Err(e) = write_records(&decl, out) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    // ledger.json: the template, then the import of every record the import accepts.
    let ledger = out.join("ledger.json");
    let template = git_ledger::ledger::Ledger::template(&decl).canonical(&decl);
    if let Err(e) = write(&ledger, &template) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    let mut argv = vec![
        "git-ledger".to_owned(),
        "import".to_owned(),
        path(campaign),
        path(&ledger),
    ];
    argv.extend(import_args(out, false));
    argv.extend(runtime_args(out));
    let code = run_import(&argv);
    if code != 0 {
        eprintln!("error: the import exited with status {code}");
        std::process::exit(code);
    }
    println!(
        "wrote {} and the records under {EXAMPLES}",
        ledger.display()
    );
}
