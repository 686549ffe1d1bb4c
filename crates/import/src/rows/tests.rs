//! The conversion rules of import.md, each from both sides, against the small test
//! declaration (`testutil`): one live Arena task, one live and one fixture scenario task.

use serde_json::{json, Value};
use std::collections::BTreeMap;

use super::*;
use crate::refusal::Rule;
use crate::testutil::{assert_only_reason, assert_reason, declaration, hex, refusal, revision};
use crate::{ArenaAttempt, ArenaCase, Check, ScenarioRecord};

const LIVE: &str = "scenario/bugfix-iso-weeks/01";
const FIXTURE: &str = "scenario/interrupted-reuse/01";
const ARENA: &str = "arena/sympy-matrix/01";

/// The declared configuration as flags (testutil's profile).
fn declared_argv() -> Vec<&'static str> {
    vec![
        "--provider",
        "acme",
        "--joint-planning",
        "--no-telemetry",
        "--reasoning-effort",
        "high",
        "--builder-model",
        "m-large",
        "--reviewer-model",
        "m-small",
        "--reviewer-reasoning-effort",
        "medium",
    ]
}

fn result(scenario: &str, mode: &str) -> Value {
    json!({
        "format": "scenario-result/1",
        "run_id": format!("run-{scenario}-{mode}"),
        "scenario": scenario,
        "mode": mode,
        "commit": revision(),
        "tools_dirty": false,
        "verdict": "PASS",
        "autocode_status": "COMPLETE",
        "reason": null,
        "oracle": {"checks": [{"name": "t1", "ok": true}]},
        "profile": {"name": "build-comparison", "argv": declared_argv()},
        "harness": {"wall_seconds": 600.0, "cli_calls": 12},
        "status_view": {"complete": true, "spent_usd": 1.5, "usage": {"input_tokens": 10}},
        "answers": [{"source": "scenario-script", "question": "q", "answer": "a"}],
        "gates": [{"name": "plan-approval", "decision": "approved"}],
        "elapsed_seconds": 610
    })
}

/// Load a result.json written to a temporary evidence directory.
fn load(v: &Value) -> (tempfile::TempDir, ScenarioRecord) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("runs").join("R1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("result.json"), crate::json::canonical(v)).unwrap();
    let rec = crate::load(&run, u64::MAX).unwrap();
    (dir, rec)
}

fn convert(id: &str, v: &Value) -> Result<Converted> {
    let (dir, rec) = load(v);
    let ctx = Context {
        repo_root: Some(dir.path()),
        ..Context::default()
    };
    scenario_row(&declaration(), &ctx, id, &rec)
}

fn pins() -> GitPins {
    GitPins {
        revision: revision(),
        runner_tools_identity: hex('d', 64),
        oracles: BTreeMap::from([("arena/sympy-matrix".to_owned(), hex('f', 64))]),
    }
}

fn attempt() -> ArenaAttempt {
    let mut options: Vec<String> = declared_argv().into_iter().map(String::from).collect();
    options.extend(["--max-iterations", "3", "--test-command", "pytest -q"].map(String::from));
    ArenaAttempt {
        store_dir: "stores/s1".into(),
        store_id: "store-1".into(),
        attempt_id: "a1".into(),
        case_id: "sympy-matrix".into(),
        case_digest: hex('9', 64),
        runner_tools_identity: Some(hex('d', 64)),
        runner_options: options,
        mode: "live".into(),
        verdict: "PASS".into(),
        status: "COMPLETED".into(),
        reason: None,
        plan_approval: Some("alice".into()),
        started_at: None,
        finished_at: None,
        elapsed_seconds: Some(serde_json::Number::from(42)),
        case: ArenaCase {
            case_id: "sympy-matrix".into(),
            base_commit: hex('1', 40),
            required_checks: vec!["test_b".into(), "test_a".into()],
            oracle_sha256: hex('f', 64),
            definition: "{}".into(),
            definition_digest: hex('9', 64),
        },
        checks: vec![
            Check {
                name: "test_a".into(),
                ok: true,
            },
            Check {
                name: "test_b".into(),
                ok: true,
            },
        ],
        evidence: vec!["logs/a1.txt".into()],
        export: b"{\"export\": 1}\n".to_vec(),
        export_sha256: crate::sha256_hex(b"{\"export\": 1}\n"),
    }
}

fn convert_arena(id: &str, a: &ArenaAttempt) -> Result<Converted> {
    let pins = pins();
    let ctx = Context {
        pins: Some(&pins),
        ..Context::default()
    };
    arena_row(&declaration(), &ctx, id, a)
}

// ---- scenario records ---------------------------------------------------------------------

#[test]
fn a_live_scenario_pass_fills_every_field() {
    let c = convert(LIVE, &result("bugfix-iso-weeks", "live")).unwrap();
    let row = c.row.fields();
    assert_eq!(row.len(), declaration().attempt_fields.len());
    assert_eq!(row["task_id"], "scenario/bugfix-iso-weeks");
    assert_eq!(row["repetition"], 1);
    assert_eq!(row["evidence"], "live");
    assert_eq!(row["native_outcome"], "PASS");
    assert_eq!(row["native_status"], "COMPLETE");
    assert_eq!(row["source_revision"], json!(revision()));
    assert_eq!(row["runtime_identity"], Value::Null);
    assert_eq!(
        row["actual_models_and_efforts"],
        json!({"provider": "acme", "roles": {
            "builder": {"model": "m-large", "effort": "high"},
            "reviewer": {"model": "m-small", "effort": "medium"}}})
    );
    assert_eq!(row["runner_options"], Value::Null);
    assert_eq!(row["option_deviations"], json!([]));
    assert_eq!(row["oracle_checks"], json!([{"name": "t1", "ok": true}]));
    assert_eq!(
        row["evidence_refs"],
        json!(["runs/R1", "runs/R1/result.json"])
    );
    assert_eq!(row["elapsed_seconds"], json!(610));
    assert_eq!(row["usage"], json!({"input_tokens": 10}));
    assert_eq!(row["estimated_usd"], json!(1.5));
    assert_eq!(
        row["spent_budget"],
        json!({"harness_minutes": 10.0, "max_steps": 12})
    );
    assert_eq!(
        row["interventions_decision_or_repair"],
        json!([{"kind": "decision", "note": "answer from scenario-script"},
               {"kind": "decision", "note": "gate plan-approval: approved"}])
    );
    assert_eq!(row["native_record"]["kind"], "scenario");
    assert_eq!(
        row["native_record"]["sha256"],
        json!(crate::sha256_hex(c.record.bytes()))
    );
    assert_eq!(c.key, "scenario:run-bugfix-iso-weeks-live");
    assert_eq!(c.source, "runs/R1/result.json");
    assert!(c.notes.is_empty());
}

#[test]
fn dirty_tools_or_no_commit_leave_the_revision_null() {
    let mut v = result("bugfix-iso-weeks", "live");
    v["tools_dirty"] = json!(true);
    let c = convert(LIVE, &v).unwrap();
    assert_eq!(c.row.get("source_revision"), &Value::Null);
    assert_eq!(c.notes, ["source_revision null: tools_dirty is true"]);
    v["tools_dirty"] = json!(false);
    v["commit"] = json!("abc123");
    let c = convert(LIVE, &v).unwrap();
    assert_eq!(c.row.get("source_revision"), &Value::Null);
    v["commit"] = Value::Null;
    assert_eq!(
        convert(LIVE, &v).unwrap().row.get("source_revision"),
        &Value::Null
    );
}

#[test]
fn a_record_of_another_task_or_kind_is_refused() {
    let v = result("bugfix-iso-weeks", "live");
    assert!(convert("scenario/bugfix-iso-weeks/02", &v).is_ok());
    let r = refusal(convert(FIXTURE, &v));
    assert_reason!(r, row = FIXTURE, field = None, rule = None, sentence = "a record of another task or kind: it is a scenario record of task scenario/bugfix-iso-weeks, but scenario/interrupted-reuse/01 schedules scenario task scenario/interrupted-reuse");
    let r = refusal(convert(ARENA, &v));
    assert_reason!(r, row = ARENA, field = None, rule = None, sentence = "a record of another task or kind: it is a scenario record of task scenario/bugfix-iso-weeks, but arena/sympy-matrix/01 schedules arena task arena/sympy-matrix");
    let r = refusal(convert("scenario/bugfix-iso-weeks/03", &v));
    assert_reason!(r, row = "scenario/bugfix-iso-weeks/03", field = None, rule = None, sentence = "scenario/bugfix-iso-weeks/03 is not scheduled by declaration reliability-slice-1 (a retry needs a new declared schedule)");
    let r = refusal(convert_arena(LIVE, &attempt()));
    assert_reason!(r, place = ["stores/s1#a1"], row = "scenario/bugfix-iso-weeks/01", field = None, rule = None, sentence = "a record of another task or kind: it is an arena record of task arena/sympy-matrix, but scenario/bugfix-iso-weeks/01 schedules scenario task scenario/bugfix-iso-weeks");
}

/// `r` is refused by the row check as a relabeled row: one reason at the record, about the
/// row's `evidence`, of `ledger.md`'s group 4, saying the row's class is `class` and `task`'s
/// the other; and a hint that says the record's mode (`run`, e.g. `a "fake" run`) made it so
/// (no rule of the importer's own).
#[track_caller]
fn relabeled(r: Result<Converted>, class: &str, task: &str, run: &str) {
    let Err(crate::Error::Refused(r)) = r else {
        panic!("refused, not {r:?}");
    };
    let declared = if class == "live" { "fixture" } else { "live" };
    let reasons = r.reasons();
    let found = assert_only_reason!(
        reasons,
        field = "evidence",
        rule = Rule::Ledger(4),
        sentence = format!(
            "is {class:?} but task {task} is declared {declared} (a fixture row is never \
             relabeled live, nor the reverse)"
        )
    );
    let [place] = &found.place[..] else {
        panic!("found at the record: {found:?}");
    };
    let row = found.row.as_deref().expect("about the row");
    assert_eq!(
        r.hints(),
        [format!(
            "{place}: row {row}: {run} is {class} evidence: it cannot fill a row of task {task}, declared \
             {declared}"
        )]
    );
}

#[test]
fn fixture_evidence_never_fills_a_live_row_and_live_never_a_fixture_row() {
    for mode in ["fake", "live-hybrid", "fake-hybrid"] {
        let r = convert(LIVE, &result("bugfix-iso-weeks", mode));
        relabeled(
            r,
            "fixture",
            "scenario/bugfix-iso-weeks",
            &format!("a {mode:?} run"),
        );
        // The same run fills a fixture row, keeping its argv-derived values.
        let c = convert(FIXTURE, &result("interrupted-reuse", mode)).unwrap();
        assert_eq!(c.row.get("evidence"), "fixture");
        assert_eq!(c.row.get("actual_models_and_efforts")["provider"], "acme");
    }
    let r = convert(FIXTURE, &result("interrupted-reuse", "live"));
    relabeled(r, "live", "scenario/interrupted-reuse", "a \"live\" run");
    let mut a = attempt();
    a.mode = "fake".into();
    relabeled(
        convert_arena(ARENA, &a),
        "fixture",
        "arena/sympy-matrix",
        "a \"fake\" run",
    );
}

#[test]
fn an_unknown_mode_is_refused() {
    for mode in ["scripted", "Live", ""] {
        let r = refusal(convert(LIVE, &result("bugfix-iso-weeks", mode)));
        let s = format!(
            "mode {mode:?} is not one the import knows (live, fake, or a mode containing -hybrid)"
        );
        assert_reason!(r, row = LIVE, field = None, rule = None, sentence = s);
    }
    let mut a = attempt();
    a.mode = "replay".into();
    assert_reason!(refusal(convert_arena(ARENA, &a)), place = ["stores/s1#a1"], row = "arena/sympy-matrix/01", field = None, rule = None, sentence = "mode \"replay\" is not one the import knows (live, fake, or a mode containing -hybrid)");
}

#[test]
fn a_non_pass_needs_a_reason_and_a_pass_does_not() {
    let mut v = result("bugfix-iso-weeks", "live");
    v["verdict"] = json!("FALSE_COMPLETE");
    let r = refusal(convert(LIVE, &v));
    assert_reason!(
        r,
        row = LIVE,
        field = None,
        rule = None,
        sentence = "native outcome FALSE_COMPLETE has no reason; the import never invents one"
    );
    assert_eq!(
        convert(LIVE, &v).unwrap_err().hints(),
        ["write this row by hand with `git ledger put <ID> <ROW.json>`, stating the reason"]
    );
    v["reason"] = json!("the hidden tests fail");
    v["oracle"]["checks"][0]["ok"] = json!(false);
    let c = convert(LIVE, &v).unwrap();
    assert_eq!(c.row.get("reason"), "the hidden tests fail");
    assert!(convert(LIVE, &result("bugfix-iso-weeks", "live")).is_ok());
    let mut a = attempt();
    a.verdict = "FAIL".into();
    a.status = "FAILED".into();
    assert_reason!(
        refusal(convert_arena(ARENA, &a)),
        place = ["stores/s1#a1"],
        row = "arena/sympy-matrix/01",
        field = None,
        rule = None,
        sentence = "native outcome FAIL has no reason; the import never invents one"
    );
    a.reason = Some("two checks fail".into());
    assert!(convert_arena(ARENA, &a).is_ok());
}

#[test]
fn a_result_that_would_fail_the_report_is_refused_by_the_row_check() {
    let mut v = result("bugfix-iso-weeks", "live");
    v["autocode_status"] = json!("BLOCKED");
    assert_reason!(refusal(convert(LIVE, &v)), row = "scenario/bugfix-iso-weeks/01", field = "native_status", rule = Rule::Ledger(5), sentence = "a native PASS contradicts its own status: a stop (BLOCKED) on a task that expects completion (expected COMPLETE)");
    let mut v = result("bugfix-iso-weeks", "live");
    v["oracle"]["checks"][0]["ok"] = json!(false);
    assert_reason!(
        refusal(convert(LIVE, &v)),
        row = "scenario/bugfix-iso-weeks/01",
        field = "oracle_checks",
        rule = Rule::Ledger(5),
        sentence = "a PASS carries a failing oracle check \"t1\""
    );
}

#[test]
fn cost_and_usage_only_from_a_complete_status_view() {
    let mut v = result("bugfix-iso-weeks", "live");
    v["status_view"]["complete"] = json!(false);
    let c = convert(LIVE, &v).unwrap();
    assert_eq!(c.row.get("estimated_usd"), &Value::Null);
    assert_eq!(c.row.get("usage"), &Value::Null);
    v.as_object_mut().unwrap().remove("harness");
    let c = convert(LIVE, &v).unwrap();
    assert_eq!(
        c.row.get("spent_budget"),
        &json!({"harness_minutes": null, "max_steps": null})
    );
}

#[test]
fn forwarded_options_become_models_efforts_and_deviations() {
    let mut v = result("bugfix-iso-weeks", "live");
    v["profile"]["argv"] = json!(["--provider", "acme", "--single-model", "m-x"]);
    let c = convert(LIVE, &v).unwrap();
    assert_eq!(
        c.row.get("actual_models_and_efforts")["roles"]["builder"]["model"],
        "m-x"
    );
    let devs = c.row.get("option_deviations").as_array().unwrap().clone();
    assert!(
        devs.contains(&json!("missing --joint-planning")),
        "{devs:?}"
    );
    assert!(
        devs.contains(&json!("added --single-model=m-x")),
        "{devs:?}"
    );
}

#[test]
fn the_runtime_identity_goes_on_the_row() {
    let runtime = json!({"python": "3.12.7", "psutil": "6.1.0", "native_provider": "acme 1.2",
                         "packages": {"numpy": "2.1.0"}, "dependencies": ["numpy==2.1.0"]});
    let (dir, rec) = load(&result("bugfix-iso-weeks", "live"));
    let ctx = Context {
        repo_root: Some(dir.path()),
        runtime_identity: Some(&runtime),
        pins: None,
        ..Context::default()
    };
    let c = scenario_row(&declaration(), &ctx, LIVE, &rec).unwrap();
    assert_eq!(c.row.get("runtime_identity"), &runtime);
    let cl = crate::portfolio::classify(&declaration(), &c.row);
    assert_eq!(
        cl.outcome,
        crate::portfolio::Outcome::VerifiedDelivery,
        "{cl:?}"
    );
}

// ---- Arena attempts -------------------------------------------------------------------------

#[test]
fn an_arena_pass_fills_every_field() {
    let c = convert_arena(ARENA, &attempt()).unwrap();
    let row = c.row.fields();
    assert_eq!(row["native_outcome"], "PASS");
    assert_eq!(row["native_status"], "COMPLETED");
    assert_eq!(row["source_revision"], json!(revision()));
    assert_eq!(row["runner_options"], json!(attempt().runner_options));
    assert_eq!(row["option_deviations"], json!([]));
    assert_eq!(
        row["spent_budget"],
        json!({"cli_invocation_seconds": null, "max_iterations": null, "oracle_seconds": null})
    );
    assert_eq!(row["usage"], Value::Null);
    assert_eq!(row["estimated_usd"], Value::Null);
    assert_eq!(row["elapsed_seconds"], json!(42));
    assert_eq!(
        row["interventions_decision_or_repair"],
        json!([{"kind": "decision", "note": "benchmark plan approval: alice"}])
    );
    assert_eq!(row["evidence_refs"], json!(["logs/a1.txt", "stores/s1#a1"]));
    assert_eq!(
        row["native_record"],
        json!({"kind": "arena", "id": "store-1/a1", "sha256": attempt().export_sha256})
    );
    assert_eq!(c.record.bytes(), attempt().export);
    assert_eq!(c.key, "arena:store-1/a1");
    assert!(c.notes.is_empty());
}

#[test]
fn the_revision_is_the_declared_one_only_when_the_runner_tools_match() {
    let mut a = attempt();
    a.runner_tools_identity = Some(hex('7', 64));
    let c = convert_arena(ARENA, &a).unwrap();
    assert_eq!(c.row.get("source_revision"), &Value::Null);
    assert_eq!(
        c.notes,
        [format!(
            "source_revision null: runner_tools_identity {} is not the definition hash of \
             arena/runner-tools at {} ({})",
            hex('7', 64),
            revision(),
            pins().runner_tools_identity
        )]
    );
    a.runner_tools_identity = None;
    let c = convert_arena(ARENA, &a).unwrap();
    assert_eq!(c.row.get("source_revision"), &Value::Null);
    let cl = crate::portfolio::classify(&declaration(), &c.row);
    assert!(cl.deviations.contains(&"revision null".to_owned()));
}

#[test]
fn the_case_must_pin_the_declared_base_commit_checks_and_oracle() {
    let mut a = attempt();
    a.case.base_commit = hex('2', 40);
    assert_reason!(refusal(convert_arena(ARENA, &a)), place = ["stores/s1#a1"], row = "arena/sympy-matrix/01", field = None, rule = None, sentence = "case sympy-matrix: base_commit 2222222222222222222222222222222222222222 is not the declared upstream.base_commit 1111111111111111111111111111111111111111");
    let mut a = attempt();
    a.case.required_checks = vec!["test_a".into(), "test_c".into()];
    assert_reason!(refusal(convert_arena(ARENA, &a)), place = ["stores/s1#a1"], row = "arena/sympy-matrix/01", field = None, rule = None, sentence = "case sympy-matrix: required_checks are not the declared upstream.checks (missing: [test_b]; not declared: [test_c])");
    // Checks compare as sets: order and repetition do not matter.
    let mut a = attempt();
    a.case.required_checks = vec!["test_b".into(), "test_a".into(), "test_a".into()];
    assert!(convert_arena(ARENA, &a).is_ok());
    let mut a = attempt();
    a.case.oracle_sha256 = hex('0', 64);
    assert_reason!(refusal(convert_arena(ARENA, &a)), place = ["stores/s1#a1"], row = "arena/sympy-matrix/01", field = None, rule = None, sentence = "case sympy-matrix: oracle_sha256 0000000000000000000000000000000000000000000000000000000000000000 is another oracle than the declared arena/tasks/arena/sympy-matrix/oracle.py at cccccccccccccccccccccccccccccccccccccccc (SHA-256 ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff)");
}

#[test]
fn every_reason_of_one_record_is_listed() {
    let mut a = attempt();
    a.case.base_commit = hex('2', 40);
    a.case.oracle_sha256 = hex('0', 64);
    a.mode = "fake".into();
    a.verdict = "ERROR".into();
    let r = refusal(convert_arena(ARENA, &a));
    assert_reason!(r, place = ["stores/s1#a1"], row = "arena/sympy-matrix/01", field = None, rule = None, sentence = "case sympy-matrix: base_commit 2222222222222222222222222222222222222222 is not the declared upstream.base_commit 1111111111111111111111111111111111111111");
    assert_reason!(r, place = ["stores/s1#a1"], row = "arena/sympy-matrix/01", field = None, rule = None, sentence = "case sympy-matrix: oracle_sha256 0000000000000000000000000000000000000000000000000000000000000000 is another oracle than the declared arena/tasks/arena/sympy-matrix/oracle.py at cccccccccccccccccccccccccccccccccccccccc (SHA-256 ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff)");
    assert_reason!(r, place = ["stores/s1#a1"], row = "arena/sympy-matrix/01", field = "evidence", rule = Rule::Ledger(4), sentence = "is \"fixture\" but task arena/sympy-matrix is declared live (a fixture row is never relabeled live, nor the reverse)");
    assert_reason!(
        r,
        place = ["stores/s1#a1"],
        row = "arena/sympy-matrix/01",
        field = None,
        rule = None,
        sentence = "native outcome ERROR has no reason; the import never invents one"
    );
    for reason in &r {
        assert_eq!(reason.place, ["stores/s1#a1"], "{reason:?}");
        assert_eq!(
            reason.row.as_deref(),
            Some("arena/sympy-matrix/01"),
            "{reason:?}"
        );
    }
}

#[test]
fn a_forwarded_max_iterations_other_than_declared_is_a_deviation() {
    let mut a = attempt();
    let i = a
        .runner_options
        .iter()
        .position(|o| o == "--max-iterations")
        .unwrap();
    a.runner_options[i + 1] = "5".into();
    let c = convert_arena(ARENA, &a).unwrap();
    assert_eq!(
        c.row.get("option_deviations"),
        &json!(["--max-iterations: declared 3, forwarded 5"])
    );
}

#[test]
fn an_arena_record_without_pins_is_a_failure_not_a_panic() {
    let e = arena_row(&declaration(), &Context::default(), ARENA, &attempt()).unwrap_err();
    assert_eq!(e.exit_code(), 1);
}

// ---- runtime identity -----------------------------------------------------------------------

fn runtime(v: &Value) -> Result<Value> {
    parse_runtime_identity(&crate::json::canonical(v), "rt.json", u64::MAX)
}

#[test]
fn a_runtime_identity_has_the_pinned_keys_and_a_freeze() {
    let ok = json!({"python": "3.12.7", "psutil": "6.1.0", "native_provider": "n",
                    "packages": {"p": "1"}, "dependencies": ["p==1", "q==2.0"]});
    assert_eq!(runtime(&ok).unwrap(), ok);
    let mut digest = ok.clone();
    digest["dependencies"] = json!({"sha256": hex('a', 64)});
    assert!(runtime(&digest).is_ok());
    // An empty freeze is well formed (the report then says "runtime not recorded").
    let mut empty = ok.clone();
    empty["dependencies"] = json!([]);
    assert!(runtime(&empty).is_ok());
}

#[test]
fn a_malformed_runtime_identity_is_refused() {
    let ok = json!({"python": "3.12.7", "psutil": "6.1.0", "native_provider": "n",
                    "packages": {"p": "1"}, "dependencies": ["p==1"]});
    let cases: Vec<(Value, Option<&str>, &str)> = vec![
        (
            json!([]),
            None,
            "a runtime identity must be a JSON object, not a list",
        ),
        (
            {
                let mut v = ok.clone();
                v["extra"] = json!(1);
                v
            },
            Some("extra"),
            "unknown key (expected python, psutil, native_provider, packages, dependencies)",
        ),
        (
            {
                let mut v = ok.clone();
                v.as_object_mut().unwrap().remove("dependencies");
                v
            },
            Some("dependencies"),
            "missing (required)",
        ),
        (
            {
                let mut v = ok.clone();
                v.as_object_mut().unwrap().remove("python");
                v
            },
            Some("python"),
            "missing (required)",
        ),
        (
            {
                let mut v = ok.clone();
                v["psutil"] = json!(6);
                v
            },
            Some("psutil"),
            "must be a string, not an integer",
        ),
        (
            {
                let mut v = ok.clone();
                v["packages"] = json!({"p": 1});
                v
            },
            Some("packages.p"),
            "must be a version string, not an integer",
        ),
        (
            {
                let mut v = ok.clone();
                v["dependencies"] = json!(["p"]);
                v
            },
            Some("dependencies[0]"),
            "must be a \"name==version\" string, not \"p\"",
        ),
        (
            {
                let mut v = ok.clone();
                v["dependencies"] = json!(["==1"]);
                v
            },
            Some("dependencies[0]"),
            "must be a \"name==version\" string, not \"==1\"",
        ),
        (
            {
                let mut v = ok.clone();
                v["dependencies"] = json!({"sha256": "xyz"});
                v
            },
            Some("dependencies.sha256"),
            "must be 64 lowercase hex digits, not \"xyz\"",
        ),
        (
            {
                let mut v = ok.clone();
                v["dependencies"] = json!({"sha256": hex('a', 64), "n": 1});
                v
            },
            Some("dependencies.n"),
            "unknown key (a freeze object holds only sha256)",
        ),
        (
            {
                let mut v = ok.clone();
                v["dependencies"] = json!("p==1");
                v
            },
            Some("dependencies"),
            "must be a list of \"name==version\" strings or an object with a sha256, not a string",
        ),
    ];
    for (v, field, sentence) in cases {
        assert_only_reason!(
            refusal(runtime(&v)),
            place = ["rt.json"],
            field = field,
            rule = None,
            sentence = sentence
        );
    }
    // Duplicate keys are refused by the strict parser.
    let e = parse_runtime_identity(br#"{"python": "a", "python": "b"}"#, "rt.json", u64::MAX);
    assert_reason!(
        refusal(e),
        place = ["rt.json"],
        row = None,
        field = None,
        rule = None
    );
}
