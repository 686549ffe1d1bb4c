//! Unit tests of the Harbor reader and row: `job.log`'s retried trials, Harbor's error policy
//! deciding whether an exception's reward counts, the row's usage and spend, and the row
//! check accepting what the conversion builds.

use serde_json::{json, Value};

use super::*;
use crate::testutil::harbor_declaration_value;

fn decl() -> Declaration {
    Declaration::parse(
        &crate::testutil::bytes(&harbor_declaration_value()),
        u64::MAX,
    )
    .unwrap()
}

/// A trial of Harbor task `hello-file` as Harbor writes its result (the parts a row reads).
fn result(exception: Option<&str>, rewards: Value) -> Value {
    json!({
        "id": "7d0c7f1e-0000-4000-8000-000000000001",
        "task_name": "hello-file",
        "trial_name": "hello-file__abcdefg",
        "config": {
            "job_id": "0883e0e5-39ec-42df-aa50-afae326ebba7",
            "timeout_multiplier": 1.0,
            "agent": {"name": "terminus-2", "model_name": "anthropic/claude-x", "kwargs": {"reasoning_effort": "high"}}
        },
        "agent_info": {"name": "terminus-2", "version": "2.0", "model_info": {"name": "claude-x", "provider": "anthropic"}},
        "agent_result": {"n_input_tokens": 1200, "n_cache_tokens": 200, "n_output_tokens": 300, "cost_usd": 0.25,
                         "model_usage": {"claude-x": {"n_input_tokens": 1200, "n_cache_tokens": 200, "n_output_tokens": 300, "cost_usd": 0.25}}},
        "verifier_result": if rewards.is_null() { Value::Null } else { json!({"rewards": rewards}) },
        "exception_info": exception.map(|t| json!({"exception_type": t, "exception_message": format!("{t} happened\nsecond line"), "exception_traceback": "", "occurred_at": "2026-12-01T21:02:33Z"})),
        "started_at": "2026-12-01T21:02:00Z",
        "finished_at": "2026-12-01T21:03:30.5Z",
        "agent_execution": {"started_at": "2026-12-01T21:02:10Z", "finished_at": "2026-12-01T21:03:10Z"},
        "verifier": {"started_at": "2026-12-01T21:03:10Z", "finished_at": "2026-12-01T21:03:25.25Z"}
    })
}

fn trial(result: Value) -> HarborTrial {
    let bytes = crate::json::canonical(&result);
    assert!(
        check_result(&result).is_empty(),
        "{:?}",
        check_result(&result)
    );
    HarborTrial {
        dir: "jobs/j/hello-file__abcdefg".into(),
        record: crate::store::Record::new(bytes),
        task_name: result["task_name"].as_str().unwrap().into(),
        trial_name: result["trial_name"].as_str().unwrap().into(),
        job_id: result["config"]["job_id"].as_str().unwrap().into(),
        result: TrialResult::read(&result),
        digest: Some(format!("sha256:{}", "7".repeat(64))),
        n_attempts: Some(2),
        retried: None,
        from_job_dir: true,
        evidence: "j/hello-file__abcdefg/result.json".into(),
    }
}

/// The row of `harbor/hello-file/01` built from `t`, checked by the row check.
fn row(t: &HarborTrial) -> (Value, Vec<String>) {
    let d = decl();
    let task = d.task("harbor/hello-file").unwrap().clone();
    let env = Env {
        runtime_identity: None,
        revision: Some("0123456789abcdef0123456789abcdef01234567"),
    };
    let b = trial_row(&d, &env, &task, "harbor/hello-file/01", t).expect("converted");
    assert!(b.evidence_hint.is_none());
    crate::ledger::Row::check_owned(&d, b.row.clone(), "").expect("the row check accepts it");
    (b.row, b.notes)
}

#[test]
fn job_log_names_the_retried_trials_and_their_first_exception() {
    let log = "Agent 'oracle' does not declare an options_model\n\
        Trial hello-file__PZqRvyK failed with exception EnvironmentStartTimeoutError. Retrying in 1.00 seconds...\n\
        Trial hello-file__PZqRvyK failed with exception ApiError. Retrying in 2.00 seconds...\n\
        Trial x__1 failed: something\n\
        2026-12-01 INFO Trial other__2aLUhoL failed with exception RuntimeError. Retrying in 1.00 seconds...\n\
        Trial bad name failed with exception X. Retrying\n";
    let r = retried_trials(log);
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(r["hello-file__PZqRvyK"], "EnvironmentStartTimeoutError");
    assert_eq!(r["other__2aLUhoL"], "RuntimeError");
}

#[test]
fn a_pass_carries_usage_spend_models_and_deviations() {
    let (r, notes) = row(&trial(result(None, json!({"reward": 1.0, "other": 0}))));
    assert_eq!(r["native_outcome"], "PASS");
    assert_eq!(r["native_status"], "completed");
    assert!(r["reason"].is_null());
    assert_eq!(r["oracle_checks"], json!([{"name": "reward", "ok": true}]));
    assert_eq!(r["elapsed_seconds"], json!(90.5));
    assert_eq!(
        r["spent_budget"],
        json!({"agent_seconds": 60.0, "verifier_seconds": 15.25, "cost_usd": 0.25})
    );
    assert_eq!(r["estimated_usd"], json!(0.25));
    assert_eq!(r["usage"]["n_input_tokens"], json!(1200));
    assert_eq!(
        r["usage"]["model_usage"]["claude-x"]["n_output_tokens"],
        json!(300)
    );
    assert_eq!(r["actual_models_and_efforts"]["provider"], "anthropic");
    assert_eq!(
        r["actual_models_and_efforts"]["roles"]["builder"],
        json!({"model": null, "effort": null})
    );
    assert_eq!(r["evidence"], "live");
    assert_eq!(r["option_deviations"], json!([]));
    assert_eq!(
        r["native_record"],
        json!({"kind": "harbor", "id": "0883e0e5-39ec-42df-aa50-afae326ebba7/hello-file__abcdefg",
               "sha256": crate::sha256_hex(&crate::json::canonical(&result(None, json!({"reward": 1.0, "other": 0}))))})
    );
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn harbors_error_policy_decides_whether_an_exceptions_reward_counts() {
    // The agent's budget ran out: its reward is a measurement.
    let (r, _) = row(&trial(result(
        Some("AgentTimeoutError"),
        json!({"reward": 0.5}),
    )));
    assert_eq!(r["native_outcome"], "FAIL");
    assert_eq!(r["native_status"], "exception:AgentTimeoutError");
    assert_eq!(
        r["reason"],
        "reward = 0.5 (AgentTimeoutError: AgentTimeoutError happened)"
    );
    let (r, _) = row(&trial(result(
        Some("AgentTimeoutError"),
        json!({"reward": 1}),
    )));
    assert_eq!(r["native_outcome"], "PASS", "a PASS at a graded exception");
    let (r, _) = row(&trial(result(
        Some("ContentPolicyViolationError"),
        Value::Null,
    )));
    assert_eq!(r["native_outcome"], "UNSCORED");
    assert!(r["reason"]
        .as_str()
        .unwrap()
        .starts_with("the verifier recorded no rewards"));
    // Any other cause, known or not: ERROR, whatever reward there is.
    for t in [
        "VerifierTimeoutError",
        "EnvironmentStartTimeoutError",
        "RewardFileNotFoundError",
        "NonZeroAgentExitCodeError",
        "SomethingHarborDoesNotKnow",
    ] {
        let (r, _) = row(&trial(result(Some(t), json!({"reward": 1.0}))));
        assert_eq!(r["native_outcome"], "ERROR", "{t}");
        assert_eq!(r["native_status"], format!("exception:{t}"));
        assert_eq!(r["reason"], format!("{t}: {t} happened"), "the first line");
        assert!(r["oracle_checks"].is_null());
        // The spend was measured all the same.
        assert_eq!(r["spent_budget"]["agent_seconds"], json!(60.0));
    }
    // A step's exception counts as the trial's (Harbor's _recorded_exceptions).
    let mut v = result(None, json!({"reward": 1.0}));
    v["step_results"] = json!([{"step_name": "one", "exception_info": {"exception_type": "HealthcheckError", "exception_message": "down"}}]);
    let (r, _) = row(&trial(v));
    assert_eq!(r["native_outcome"], "ERROR");
    assert_eq!(r["reason"], "HealthcheckError: down");
}

#[test]
fn no_reward_at_all_is_unscored_and_says_what_is_missing() {
    for rewards in [json!({}), Value::Null] {
        let mut v = result(None, Value::Null);
        v["verifier_result"] = json!({ "rewards": rewards });
        let (r, _) = row(&trial(v));
        assert_eq!(r["native_outcome"], "UNSCORED");
        assert_eq!(r["reason"], "the verifier recorded no rewards");
        assert!(r["oracle_checks"].is_null());
    }
}

#[test]
fn rewards_without_the_declared_one_are_refused_naming_them() {
    // A typo in harbor.reward (or a verifier writing another key): the declaration and the
    // trial disagree, which an UNSCORED row would record for good (docs/reference/workflow.md,
    // rule 4).
    let d = decl();
    let task = d.task("harbor/hello-file").unwrap().clone();
    let env = Env {
        runtime_identity: None,
        revision: None,
    };
    let t = trial(result(None, json!({"score": 1.0, "accuracy": 0.0})));
    let Err(r) = trial_row(&d, &env, &task, "harbor/hello-file/01", &t) else {
        panic!("a trial with other rewards converted");
    };
    crate::testutil::assert_only_reason!(
        r,
        place = [t.label()],
        row = "harbor/hello-file/01",
        field = None,
        rule = Some(crate::refusal::Rule::Workflow(4)),
        sentence =
            "the verifier recorded no reward \"reward\" but has rewards accuracy, score: the \
                    declaration (task harbor/hello-file, harbor.reward) and the trial disagree"
    );
    // An exception whose reward does not count is an ERROR whatever the rewards say.
    let t = trial(result(Some("VerifierTimeoutError"), json!({"score": 1.0})));
    let (r, _) = row(&t);
    assert_eq!(r["native_outcome"], "ERROR");
}

#[test]
fn a_trial_job_log_retried_is_the_first_trys_error_without_spend() {
    let mut t = trial(result(None, json!({"reward": 1.0})));
    t.retried = Some("EnvironmentStartTimeoutError".into());
    let (r, notes) = row(&t);
    assert_eq!(r["native_outcome"], "ERROR");
    assert_eq!(r["native_status"], "exception:EnvironmentStartTimeoutError");
    assert!(r["reason"]
        .as_str()
        .unwrap()
        .contains("Harbor deleted the first attempt"));
    for f in ["elapsed_seconds", "usage", "estimated_usd", "oracle_checks"] {
        assert!(r[f].is_null(), "{f}");
    }
    assert!(r["spent_budget"]
        .as_object()
        .unwrap()
        .values()
        .all(Value::is_null));
    assert!(notes[0].contains("job.log says Harbor retried this trial"));
}

#[test]
fn deviations_name_agent_multipliers_digest_and_attempts() {
    let mut v = result(None, json!({"reward": 1.0}));
    v["config"]["agent"]["name"] = json!("codex");
    v["config"]["timeout_multiplier"] = json!(2);
    v["config"]["verifier_timeout_multiplier"] = json!(0.5);
    let mut t = trial(v);
    t.digest = Some(format!("sha256:{}", "8".repeat(64)));
    t.n_attempts = Some(3);
    let (r, _) = row(&t);
    let d: Vec<&str> = r["option_deviations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(d[0], "agent: declared terminus-2, the trial ran codex");
    assert_eq!(d[1], "timeout_multiplier: 2.0 (the task's timeouts scaled)");
    assert_eq!(
        d[2],
        "verifier_timeout_multiplier: 0.5 (the task's timeouts scaled)"
    );
    assert!(d[3].starts_with("task digest: declared sha256:777"));
    assert_eq!(d[4], "n_attempts: declared 2 (repetitions), the job ran 3");
    t.digest = None;
    t.n_attempts = None;
    let (r, _) = row(&t);
    let d = r["option_deviations"].to_string();
    assert!(d.contains("no lock.json"), "{d}");
    assert!(d.contains("no config.json"), "{d}");
}

#[test]
fn an_oracle_trial_is_fixture_evidence() {
    let mut v = result(None, json!({"reward": 1.0}));
    v["config"]["agent"]["name"] = json!("oracle");
    v["agent_info"] = json!({"name": "oracle", "version": "1.0.0", "model_info": null});
    let t = trial(v);
    let d = decl();
    let task = d.task("harbor/hello-file").unwrap().clone();
    let env = Env {
        runtime_identity: None,
        revision: None,
    };
    let b = trial_row(&d, &env, &task, "harbor/hello-file/01", &t).unwrap();
    assert_eq!(b.row["evidence"], "fixture");
    assert!(b
        .evidence_hint
        .unwrap()
        .contains("Harbor's scripted oracle agent"));
    assert!(crate::ledger::Row::check_owned(&d, b.row, "").is_err());
    // The fixture task takes it.
    let task = d.task("harbor/hello-oracle").unwrap().clone();
    let b = trial_row(&d, &env, &task, "harbor/hello-oracle/01", &t).unwrap();
    assert!(b.evidence_hint.is_none());
    assert!(b.row["source_revision"].is_null());
    crate::ledger::Row::check_owned(&d, b.row, "").unwrap();
    assert!(b
        .notes
        .iter()
        .any(|n| n.starts_with("source_revision null")));
}

#[test]
fn a_result_that_breaks_harbors_format_names_every_field() {
    let mut v = result(None, json!({"reward": true, "r2": "1"}));
    v["trial_name"] = json!("");
    v["config"]["agent"]["kwargs"] = json!([]);
    v["started_at"] = json!("2026-12-01T21:02:00");
    v["agent_result"]["n_input_tokens"] = json!(-1);
    v["agent_result"]["model_usage"] = json!({"m": 3});
    let p = check_result(&v).join("\n");
    for needle in [
        "trial_name must be a non-empty string",
        "config.agent.kwargs must be an object or null",
        "verifier_result.rewards.reward must be a number",
        "verifier_result.rewards.r2 must be a number",
        "started_at must be a UTC timestamp",
        "agent_result.n_input_tokens must be a nonnegative integer",
        "agent_result.model_usage.m must be an object",
    ] {
        assert!(p.contains(needle), "{needle}: {p}");
    }
    assert!(check_result(&json!([1]))
        .join("")
        .contains("must be a JSON object"));
}

/// A trial lock read by the parser kept across a job's trials (`read_lock`, as `load` reads
/// every lock.json of a job) gives what the ordinary strict parse gives for each lock: the
/// digest, or the same failure in the same words, after locks it took, gave up on or refused.
#[test]
fn a_lock_read_by_the_kept_parser_reads_as_the_strict_parse_reads_it() {
    let j1 =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/harbor-jobs/j1");
    let real: Vec<Vec<u8>> = [
        "hello-file__eD2pj5h",
        "wrong-answer__iXAkqa2",
        "slow-verifier__fUYZsC5",
    ]
    .iter()
    .map(|t| std::fs::read(j1.join(t).join("lock.json")).unwrap())
    .collect();
    let docs: Vec<Vec<u8>> = vec![
        real[0].clone(),
        br#"{"task": {"digest": null}}"#.to_vec(),
        real[1].clone(),
        br#"{"task": {"digest": "sha256:1", "digest": "sha256:2"}}"#.to_vec(),
        br#"{"task": {"name": "x"}, "z": [1, {"b": 2, "a": 1}]}"#.to_vec(),
        br#"{"task": "t"}"#.to_vec(),
        real[2].clone(),
        br#"{"task": {"digest": 7}}"#.to_vec(),
        br#"{"task": {"digest": "sha256:1"}"#.to_vec(),
        br#"[{"task": {}}]"#.to_vec(),
        br#"{"task": {"digest": "sha256:1"}} x"#.to_vec(),
        real[0].clone(),
        br#"{"a": 1, "task": {"digest": "sha256:3"}}"#.to_vec(),
    ];
    let path = std::path::Path::new("jobs/j/t/lock.json");
    let show = |r: crate::error::Result<Option<String>>| match r {
        Ok(d) => format!("ok {d:?}"),
        Err(e) => format!("{} {e}", e.exit_code()),
    };
    let mut parser = crate::json::NodeParser::new();
    let mut takes = 0;
    for doc in &docs {
        let kept = show(read_lock(doc, &mut parser, path, u64::MAX));
        let strict = show(
            crate::json::parse_document(doc, &path.display().to_string(), u64::MAX)
                .and_then(|v| lock_digest(&v, path)),
        );
        assert_eq!(kept, strict, "{}", String::from_utf8_lossy(doc));
        takes += usize::from(read::parse_fast(doc).is_some());
    }
    assert!(takes >= 8, "the fast reader took {takes} of the locks");
}
