//! `import --inspect` with the real binary: Inspect's own logs (tests/data/inspect-logs, MIT,
//! provenance in SOURCE.txt) and logs built here as Inspect writes them, against declarations
//! pinned in a real repository; file mode and ref mode; every refusal leaves the ledger as it
//! was.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::common::{commit_all, git, ledger, new_repo, project_root, write, Run};
use git_ledger::import::inspect::zip::write_archive;

const MODEL: &str = "azureai/Meta-Llama-3-1-405B-Instruct-jqf";

fn shared(name: &str) -> PathBuf {
    project_root().join("tests/data/inspect-logs").join(name)
}

/// A harness repository with an Inspect task's tree, a profile, a policy and tools, and a
/// declaration pinned from a draft of `tasks` × `repetitions`.
struct Harness {
    dir: tempfile::TempDir,
    head: String,
}

fn rules() -> serde_json::Map<String, Value> {
    git_ledger::declaration::ACCEPTANCE_RULES
        .iter()
        .map(|r| (r.to_string(), true.into()))
        .collect()
}

/// An Inspect task draft: sample `sample_id` of Inspect task `task`, scored by `scorer`.
fn task(name: &str, inspect_task: &str, sample_id: Value, scorer: &str, evidence: &str) -> Value {
    json!({
        "id": format!("inspect/{name}"),
        "kind": "inspect",
        "evidence": evidence,
        "expects": "completion",
        "definition": {"path": "evals/pop"},
        "inspect": {"task": inspect_task, "sample_id": sample_id, "scorer": scorer, "pass": ["C"]},
        "limits": {"message_limit": 10},
        "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"]
    })
}

/// The popularity samples `ids` of Inspect's logs, live.
fn popularity(ids: &[u64]) -> Vec<Value> {
    ids.iter()
        .map(|i| {
            task(
                &format!("popularity-{i}"),
                "popularity",
                json!(i),
                "match",
                "live",
            )
        })
        .collect()
}

impl Harness {
    fn new(tasks: Vec<Value>, repetitions: u64) -> Harness {
        Self::with_model(tasks, repetitions, MODEL)
    }

    fn with_model(tasks: Vec<Value>, repetitions: u64, model: &str) -> Harness {
        Self::with_profile(tasks, repetitions, model, json!("high"))
    }

    /// A harness whose profile's one role (`default`) runs `model` at `effort` (null: none).
    fn with_profile(tasks: Vec<Value>, repetitions: u64, model: &str, effort: Value) -> Harness {
        let dir = new_repo();
        let d = dir.path();
        write(d, "evals/pop/task.py", "# the task\n");
        write(d, "evals/pop/dataset.jsonl", "{}\n");
        let provider = model.split('/').next().unwrap();
        write(
            d,
            "h/profile.json",
            serde_json::to_string_pretty(&json!({
                "name": "inspect", "provider": provider, "joint_planning": false,
                "roles": {"default": {"model": model, "effort": effort}},
                "extra_options": []
            }))
            .unwrap(),
        );
        write(d, "h/policy.md", "spend nothing\n");
        write(d, "h/tools/run.sh", "#!/bin/sh\n");
        write(
            d,
            ".gitignore",
            "/ledger.json\n/campaign.json\n/logs/\n/runs/\n",
        );
        let head = commit_all(d, "harness");
        let draft = json!({
            "format": "campaign-declaration/1",
            "id": "inspect-small",
            "repetitions": repetitions,
            "profile": {"source": {"path": "h/profile.json"}},
            "policy_files": [{"path": "h/policy.md"}],
            "runner_tools": {"path": "h/tools"},
            "runtime_requirements": {"python": "3.12.7"},
            "acceptance": rules(),
            "attempt_fields": [
                "schedule_id", "task_id", "repetition", "evidence", "native_outcome",
                "native_status", "reason", "source_revision", "runtime_identity",
                "actual_models_and_efforts", "runner_options", "option_deviations",
                "oracle_checks", "evidence_refs", "elapsed_seconds", "usage", "estimated_usd",
                "spent_budget", "interventions_decision_or_repair", "native_record"
            ],
            "tasks": tasks
        });
        write(d, "draft.json", serde_json::to_vec_pretty(&draft).unwrap());
        ledger(d, &["pin", "draft.json", "-o", "campaign.json"]).ok();
        let t = ledger(d, &["template", "campaign.json"]);
        t.ok();
        write(d, "ledger.json", &t.stdout);
        Harness { dir, head }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copy a shared log into `logs/` (so evidence paths are repository-relative).
    fn log(&self, name: &str) -> String {
        let rel = format!("logs/{name}");
        std::fs::create_dir_all(self.path().join("logs")).unwrap();
        std::fs::copy(shared(name), self.path().join(&rel)).unwrap();
        rel
    }

    fn import(&self, args: &[&str]) -> Run {
        let mut all = vec!["import", "campaign.json", "ledger.json"];
        all.extend_from_slice(args);
        ledger(self.path(), &all)
    }

    fn ledger_bytes(&self) -> Vec<u8> {
        std::fs::read(self.path().join("ledger.json")).unwrap()
    }

    /// An import that must be refused, naming every needle, with the ledger left unchanged.
    #[track_caller]
    fn refused(&self, args: &[&str], needles: &[&str]) -> Run {
        let before = self.ledger_bytes();
        let r = self.import(args);
        r.expect_code(2);
        assert!(
            needles.iter().all(|n| r.stderr.contains(n)),
            "no {needles:?} in:\n{}",
            r.stderr
        );
        assert_eq!(self.ledger_bytes(), before, "a refusal changed the ledger");
        r
    }

    fn row(&self, id: &str) -> Value {
        let v: Value = serde_json::from_slice(&self.ledger_bytes()).unwrap();
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["schedule_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no row {id}"))
    }
}

/// JSON text with `"NaN!"` written as Inspect's bare `NaN`.
fn text(v: &Value) -> Vec<u8> {
    serde_json::to_string(v)
        .unwrap()
        .replace("\"NaN!\"", "NaN")
        .into_bytes()
}

fn eval_spec(model: &str, revision: Value) -> Value {
    json!({
        "eval_id": "E1", "run_id": "R1", "task": "popularity", "task_id": "T1",
        "model": model, "config": {"epochs": 2, "message_limit": 10},
        "task_args": {}, "revision": revision, "packages": {"inspect_ai": "0.3.285"}
    })
}

fn sample(id: u64, epoch: u64, uuid: &str, value: Value) -> Value {
    json!({
        "id": id, "epoch": epoch, "uuid": uuid,
        "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
        "scores": {"match": {"value": value, "explanation": "because"}},
        "model_usage": {MODEL: {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12, "total_cost": 0.5}},
        "total_time": 1.5, "working_time": 1.0, "error": null, "limit": null, "events": []
    })
}

/// Write an `.eval` of `samples` (zstd members, as a current Inspect writes).
fn eval_log(dir: &Path, rel: &str, eval: &Value, samples: &[Value], header: bool) -> String {
    let mut members: Vec<(String, Vec<u8>)> = vec![(
        "_journal/start.json".into(),
        text(&json!({"version": 2, "eval": eval})),
    )];
    for s in samples {
        members.push((
            format!("samples/{}_epoch_{}.json", s["id"], s["epoch"]),
            text(s),
        ));
    }
    if header {
        members.push((
            "header.json".into(),
            text(&json!({"version": 2, "status": "success", "eval": eval})),
        ));
    }
    let m: Vec<(&str, &[u8], u16)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice(), 93))
        .collect();
    write(dir, rel, write_archive(&m));
    rel.to_owned()
}

#[test]
fn inspects_streaming_log_fills_its_four_rows() {
    let h = Harness::new(popularity(&[1, 2]), 2);
    let log = h.log("log_streaming.eval");
    let r = h.import(&["--inspect", &log]);
    r.ok();
    assert!(
        r.stdout.contains("imported 4 attempts (4/4 rows filled)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("the pinned definition is what ran"));
    let row = h.row("inspect/popularity-1/01");
    assert_eq!(row["native_outcome"], "FAIL");
    assert_eq!(row["native_status"], "completed");
    assert!(
        row["reason"]
            .as_str()
            .unwrap()
            .starts_with("match scored I"),
        "{row}"
    );
    assert_eq!(
        row["oracle_checks"],
        json!([{"name": "match", "ok": false}])
    );
    assert_eq!(
        row["evidence_refs"],
        json!([format!("{log}#samples/1_epoch_1.json")])
    );
    assert_eq!(row["source_revision"], Value::Null);
    assert_eq!(row["estimated_usd"], Value::Null, "no model is priced");
    assert_eq!(row["spent_budget"], json!({"message_limit": 3}));
    assert_eq!(row["usage"][MODEL]["total_tokens"], json!(67));
    assert_eq!(row["native_record"]["id"], "3RWm2YmdLiKCyQMzEcERin/1/1");
    assert_eq!(
        row["actual_models_and_efforts"],
        json!({"provider": "azureai", "roles": {"default": {"model": MODEL, "effort": null}}})
    );
    for id in [
        "inspect/popularity-1/02",
        "inspect/popularity-2/01",
        "inspect/popularity-2/02",
    ] {
        assert_eq!(h.row(id)["native_outcome"], "PASS", "{id}");
    }
    // The report reads it.
    let rep = ledger(
        h.path(),
        &["report", "campaign.json", "ledger.json", "--json"],
    );
    rep.ok();
    let v = rep.json();
    assert_eq!(
        v["sections"]["live"]["outcomes"]["ended_without_completing"]["count"],
        1
    );
    assert_eq!(
        v["sections"]["live"]["outcomes"]["pass_without_complete_evidence"]["count"],
        3
    );
    // Importing the same log again: every sample is already in the ledger; nothing changes.
    let before = h.ledger_bytes();
    let dry = h.import(&["--inspect", &log, "--dry-run"]);
    dry.ok();
    assert!(
        dry.stdout
            .ends_with("dry run: nothing to write on ledger.json\n"),
        "{}",
        dry.stdout
    );
    let v = h
        .import(&["--inspect", &log, "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(v["rows"], json!([]));
    assert_eq!(v["filled"], 4);
    assert_eq!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n.as_str().unwrap().starts_with("skipped "))
            .count(),
        4,
        "{v}"
    );
    assert_eq!(h.ledger_bytes(), before);
    let again = h.import(&["--inspect", &log]);
    again.ok();
    assert_eq!(
        again.stdout.matches("already in the ledger").count(),
        4,
        "{}",
        again.stdout
    );
    assert_eq!(h.ledger_bytes(), before);
}

#[test]
fn a_scorer_the_samples_do_not_have_is_refused_naming_theirs() {
    // A one-letter typo in the declared scorer: every sample has scores, none under that name.
    let tasks = [1, 2]
        .iter()
        .map(|i| {
            task(
                &format!("popularity-{i}"),
                "popularity",
                json!(i),
                "matc",
                "live",
            )
        })
        .collect();
    let h = Harness::new(tasks, 2);
    let log = h.log("log_streaming.eval");
    let r = h.refused(
        &["--inspect", &log],
        &[
            "the sample has no score from the declared scorer matc but has scores from match: the declaration (task inspect/popularity-1, inspect.scorer) and the log disagree",
        ],
    );
    assert_eq!(
        r.stderr.matches("declared scorer matc").count(),
        4,
        "{}",
        r.stderr
    );
    assert_eq!(
        h.row("inspect/popularity-1/01")["native_outcome"],
        "DEFERRED"
    );
}

#[test]
fn older_formats_json_logs_and_a_copy_in_a_second_log() {
    let h = Harness::with_model(popularity(&[1]), 1, "ollama/llama3.1");
    // The same run written as .eval (deflate members) and as .json: one record.
    let a = h.log("log_formats.eval");
    let b = h.log("log_formats.json");
    let r = h.import(&["--inspect", &a, &b, "--json"]);
    r.ok();
    let v = r.json();
    assert_eq!(v["imported"].as_array().unwrap().len(), 1);
    assert_eq!(v["imported"][0]["native_outcome"], "FAIL");
    assert_eq!(v["deferred"], 0);
    let skipped = v["skipped"]["already_in_ledger"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{v}");
    assert!(skipped[0]
        .as_str()
        .unwrap()
        .contains("log_formats.json#samples[0]"));
    // The .json log's sample keeps its exact bytes: its SHA-256 is of those bytes.
    let row = h.row("inspect/popularity-1/01");
    assert_eq!(
        row["evidence_refs"],
        json!([format!("{a}#samples/1_epoch_1.json")])
    );
}

#[test]
fn a_directory_means_its_logs_in_name_order_and_header_only_logs_add_nothing() {
    let h = Harness::with_model(popularity(&[1, 2, 3]), 1, "openai/gpt-4o-mini");
    h.log("2025-05-12T20-28-13-04-00_popularity.json");
    h.log("2025-05-12T20-28-13-04-00_no-samples.json");
    // The manifests eval_set writes beside its logs are not logs.
    write(h.path(), "logs/logs.json", "{\"x.eval\": {}}");
    write(
        h.path(),
        "logs/eval-set.json",
        "{\"eval_set_id\": \"s\", \"tasks\": []}",
    );
    let r = h.import(&["--inspect", "logs", "--skip-undeclared"]);
    r.ok();
    assert!(
        r.stdout.contains("imported 3 attempts (3/3 rows filled)"),
        "{}",
        r.stdout
    );
    assert_eq!(h.row("inspect/popularity-3/01")["native_outcome"], "FAIL");
    assert_eq!(h.row("inspect/popularity-1/01")["native_outcome"], "PASS");
    assert!(
        r.stdout
            .contains("logs/eval-set.json: an eval_set manifest, not a log (left out)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("logs/logs.json: an eval_set manifest"));
    // A cancelled run is a run that ended: no "had not ended" note, but its status is named.
    assert!(!r.stdout.contains("had not ended"));
    assert!(
        r.stdout.contains("the run ended with status cancelled"),
        "{}",
        r.stdout
    );
    // The abbreviated commit says nothing about a dirty tree here.
    assert!(r
        .stdout
        .contains("does not say whether the tree of commit e9a9d7161 was dirty"));
}

#[test]
fn a_rerun_of_an_imported_sample_is_a_retry_and_refused() {
    let h = Harness::with_model(
        popularity(&(1..=10).collect::<Vec<_>>()),
        1,
        "openai/gpt-4o-mini",
    );
    let first = h.log("2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval");
    let second = h.log("2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval");
    let r = h.import(&["--inspect", &first]);
    r.ok();
    // The first run recorded no score: every sample is UNSCORED.
    let row = h.row("inspect/popularity-5/01");
    assert_eq!(row["native_outcome"], "UNSCORED");
    assert_eq!(row["reason"], "no match score from the scorer");
    // The second run of the same samples is another record for each filled row: refused.
    h.refused(
        &["--inspect", &second],
        &["already holds an attempt", "retry"],
    );
    // Both in one call: a row filled twice.
    let h = Harness::with_model(
        popularity(&(1..=10).collect::<Vec<_>>()),
        1,
        "openai/gpt-4o-mini",
    );
    let first = h.log("2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval");
    let second = h.log("2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval");
    h.refused(
        &["--inspect", &first, "--inspect", &second],
        &["filled twice"],
    );
}

#[test]
fn undeclared_samples_are_refused_unless_skipped_and_listed() {
    let h = Harness::new(popularity(&[1]), 2);
    let log = h.log("log_streaming.eval");
    h.refused(
        &["--inspect", &log],
        &[
            "sample 2 (epoch 1) of Inspect task \"popularity\" is not declared",
            "--skip-undeclared",
        ],
    );
    let r = h.import(&["--inspect", &log, "--skip-undeclared", "--json"]);
    r.ok();
    let v = r.json();
    assert_eq!(v["imported"].as_array().unwrap().len(), 2);
    let und = v["skipped"]["undeclared"].as_array().unwrap();
    assert_eq!(und.len(), 2);
    assert!(und
        .iter()
        .all(|u| u.as_str().unwrap().contains("samples/2_epoch_")));
}

#[test]
fn many_skipped_samples_show_the_first_twenty_and_a_count() {
    let h = Harness::new(popularity(&[1]), 2);
    let e = eval_spec(MODEL, Value::Null);
    let samples: Vec<Value> = (1..=26)
        .map(|i| sample(i, 1, &format!("U{i}"), json!("C")))
        .collect();
    let log = eval_log(h.path(), "logs/many.eval", &e, &samples, true);
    let r = h.import(&["--inspect", &log, "--skip-undeclared"]);
    r.ok();
    let skipped: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("skipped "))
        .collect();
    assert_eq!(skipped.len(), 20, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("\n… and 5 more skipped, undeclared (--json lists every one)\n"),
        "{}",
        r.stdout
    );
    // Importing the same log again: 1 already in the ledger, 25 undeclared; --json lists all.
    let r = h.import(&["--inspect", &log, "--skip-undeclared", "--json"]);
    r.ok();
    let v = r.json();
    assert_eq!(v["skipped"]["undeclared"].as_array().unwrap().len(), 25);
    let r = h.import(&["--inspect", &log, "--skip-undeclared"]);
    r.ok();
    assert_eq!(
        r.stdout
            .lines()
            .filter(|l| l.starts_with("skipped "))
            .count(),
        21,
        "{}",
        r.stdout
    );
}

#[test]
fn an_epoch_beyond_the_repetitions_is_refused() {
    let h = Harness::new(popularity(&[1, 2]), 1);
    let log = h.log("log_streaming.eval");
    for extra in [&[][..], &["--skip-undeclared"][..]] {
        let mut args = vec!["--inspect", log.as_str()];
        args.extend_from_slice(extra);
        h.refused(
            &args,
            &["epoch 2 of sample 1 is not scheduled", "1 repetitions"],
        );
    }
}

#[test]
fn a_scripted_model_cannot_fill_a_live_row_but_fills_a_fixture_row() {
    let h = Harness::new(popularity(&[1]), 2);
    let e = eval_spec("mockllm/model", Value::Null);
    let log = eval_log(
        h.path(),
        "logs/m.eval",
        &e,
        &[sample(1, 1, "U1", json!("C"))],
        true,
    );
    h.refused(
        &["--inspect", &log],
        &[
            "row inspect/popularity-1/01: evidence: is \"fixture\"",
            "mockllm (scripted) model is fixture evidence",
        ],
    );
    let h = Harness::new(
        vec![task("p1", "popularity", json!(1), "match", "fixture")],
        2,
    );
    let log = eval_log(
        h.path(),
        "logs/m.eval",
        &e,
        &[sample(1, 1, "U1", json!("C"))],
        true,
    );
    h.import(&["--inspect", &log]).ok();
    assert_eq!(h.row("inspect/p1/01")["evidence"], "fixture");
    assert_eq!(h.row("inspect/p1/01")["native_outcome"], "PASS");
}

#[test]
fn a_clean_revision_resolves_to_the_full_commit_and_a_dirty_one_is_null() {
    let h = Harness::new(popularity(&[1]), 2);
    let short = &h.head[..7];
    let clean = eval_spec(
        MODEL,
        json!({"type": "git", "origin": "o", "commit": short, "dirty": false}),
    );
    let log = eval_log(
        h.path(),
        "logs/c.eval",
        &clean,
        &[sample(1, 1, "U1", json!("C"))],
        true,
    );
    let runtime = json!({"python": "3.12.7", "psutil": "6.1.0", "native_provider": "azureai 1",
                         "packages": {"inspect_ai": "0.3.285"}, "dependencies": ["inspect_ai==0.3.285"]});
    write(
        h.path(),
        "runtime.json",
        serde_json::to_vec(&runtime).unwrap(),
    );
    let r = h.import(&["--inspect", &log, "--runtime-identity", "runtime.json"]);
    r.ok();
    let row = h.row("inspect/popularity-1/01");
    assert_eq!(row["runtime_identity"], runtime);
    assert_eq!(row["source_revision"], json!(h.head));
    assert_eq!(row["estimated_usd"], json!(0.5));
    assert_eq!(row["option_deviations"], json!([]));
    let dirty = eval_spec(
        MODEL,
        json!({"type": "git", "origin": "o", "commit": short, "dirty": true}),
    );
    let log = eval_log(
        h.path(),
        "logs/d.eval",
        &dirty,
        &[sample(1, 2, "U2", json!("C"))],
        true,
    );
    let r = h.import(&["--inspect", &log]);
    r.ok();
    assert_eq!(
        h.row("inspect/popularity-1/02")["source_revision"],
        Value::Null
    );
    assert!(
        r.stdout
            .contains(&format!("the tree of commit {short} was dirty")),
        "{}",
        r.stdout
    );
    // A commit the repository does not have.
    let h = Harness::new(popularity(&[1]), 2);
    let other = eval_spec(
        MODEL,
        json!({"type": "git", "origin": "o", "commit": "0000000", "dirty": false}),
    );
    let log = eval_log(
        h.path(),
        "logs/o.eval",
        &other,
        &[sample(1, 1, "U1", json!("C"))],
        true,
    );
    let r = h.import(&["--inspect", &log]);
    r.ok();
    assert!(
        r.stdout
            .contains("commit 0000000 is not in the local repository"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_run_still_being_written_imports_what_it_holds_and_says_so() {
    let h = Harness::new(popularity(&[1]), 2);
    let e = eval_spec(MODEL, Value::Null);
    let log = eval_log(
        h.path(),
        "logs/w.eval",
        &e,
        &[sample(1, 1, "U1", json!("C"))],
        false,
    );
    let r = h.import(&["--inspect", &log]);
    r.ok();
    assert!(r.stdout.contains("the run had not ended"), "{}", r.stdout);
    assert!(r.stdout.contains("1 row still DEFERRED"), "{}", r.stdout);
}

#[test]
fn damaged_or_foreign_logs_are_refused_and_the_ledger_is_unchanged() {
    let h = Harness::new(popularity(&[1, 2]), 2);
    let log = h.log("log_streaming.eval");
    let bytes = std::fs::read(h.path().join(&log)).unwrap();
    write(h.path(), "logs/cut.eval", &bytes[..bytes.len() / 2]);
    h.refused(&["--inspect", "logs/cut.eval"], &["logs/cut.eval", "zip"]);
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 3;
    flipped[mid] ^= 0x55;
    write(h.path(), "logs/flip.eval", &flipped);
    let r = h.import(&["--inspect", "logs/flip.eval"]);
    assert!(r.code == 2 || r.code == 0, "{r:?}");
    write(h.path(), "logs/x.txt", "{}");
    h.refused(&["--inspect", "logs/x.txt"], &["not an Inspect log"]);
    // A missing path cannot be read: exit 1, nothing written.
    let before = h.ledger_bytes();
    h.import(&["--inspect", "logs/missing.eval"]).expect_code(1);
    assert_eq!(h.ledger_bytes(), before);
    // NaN outside an Inspect log is refused as everywhere.
    write(h.path(), "rt.json", r#"{"python": NaN}"#);
    h.refused(
        &["--inspect", &log, "--runtime-identity", "rt.json"],
        &["rt.json"],
    );
}

fn ref_mode_one_commit_records_hold_the_samples_bytes_and_the_message_names_an_edit(prefix: &str) {
    let rf: &str = &format!("{prefix}inspect-small");
    let h = Harness::new(popularity(&[1]), 2);
    let d = h.path();
    crate::common::use_prefix(d, prefix);
    ledger(d, &["init", "campaign.json"]).ok();
    let mut edited = sample(1, 1, "U1", json!("C"));
    edited["scores"]["match"]["history"] = json!([
        {"value": "I", "explanation": "wrong", "provenance": null},
        {"value": "C", "provenance": {"author": "alice", "reason": "regrade", "timestamp": "2026-01-01"}}
    ]);
    let e = eval_spec(MODEL, Value::Null);
    let log = eval_log(d, "logs/e.eval", &e, &[edited.clone()], true);
    let r = ledger(d, &["import", "--inspect", &log]);
    r.ok();
    assert!(
        r.stdout.contains("score match was edited after the run"),
        "{}",
        r.stdout
    );
    let msg = git(d, &["log", "-1", "--format=%B", rf]);
    // The message says only what the change did (docs/messages.md): the edit is in import's
    // output above and in the record, the sample's score history, below.
    assert!(!msg.contains("note:") && !msg.contains("alice"), "{msg}");
    let row: Value =
        serde_json::from_str(&ledger(d, &["show", "--row", "inspect/popularity-1/01"]).stdout)
            .unwrap();
    assert_eq!(row["native_outcome"], "FAIL");
    assert_eq!(row["reason"], "match scored I: wrong");
    // records/ holds the sample's bytes exactly.
    let tree = git(d, &["ls-tree", "-r", "--name-only", rf]);
    let record = tree
        .lines()
        .find(|p| p.starts_with("records/"))
        .expect("a record file");
    let blob = git(d, &["show", &format!("{rf}:{record}")]);
    assert_eq!(blob.as_bytes(), &text(&edited)[..]);
    assert!(blob.contains("alice"), "the edit is in the record");
    // The same log again: nothing to write, no new commit.
    let tip = git(d, &["rev-parse", rf]);
    let again = ledger(d, &["import", "--inspect", &log]);
    again.ok();
    assert!(again.stdout.contains("already in the ledger"));
    assert_eq!(git(d, &["rev-parse", rf]), tip);
    // A re-run of the sample (another uuid) is refused and moves nothing.
    let rerun = eval_log(
        d,
        "logs/r.eval",
        &e,
        &[sample(1, 1, "U9", json!("C"))],
        true,
    );
    let r = ledger(d, &["import", "--inspect", &rerun]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("already holds an attempt"),
        "{}",
        r.stderr
    );
    assert_eq!(git(d, &["rev-parse", rf]), tip);
    // The chain verifies, and a server's pre-receive hook admits it.
    ledger(d, &["verify"]).ok();
    let servers = tempfile::tempdir().unwrap();
    let server = crate::common::hooked_server(servers.path(), "server.git");
    crate::common::use_prefix(&server, prefix);
    let push = crate::common::git_hooked(
        d,
        &[
            "push",
            "--porcelain",
            server.to_str().unwrap(),
            &format!("{rf}:{rf}"),
        ],
        None,
    );
    assert_eq!(push.code, 0, "{}{}", push.stdout, push.stderr);
    assert_eq!(git(&server, &["rev-parse", rf]), tip);
}

#[test]
fn inspect_and_scenario_records_in_one_call() {
    let mut tasks = popularity(&[1]);
    tasks.push(json!({
        "id": "scenario/bugfix",
        "kind": "scenario",
        "evidence": "live",
        "expects": "completion",
        "definition": {"path": "evals/pop"},
        "limits": {"harness_minutes": 90, "max_steps": 400},
        "native_outcomes": ["PASS", "ERROR"]
    }));
    let h = Harness::new(tasks, 2);
    let d = h.path();
    write(
        d,
        "runs/R1/result.json",
        serde_json::to_vec_pretty(&json!({
            "format": "scenario-result/1", "run_id": "R1", "scenario": "bugfix", "mode": "live",
            "commit": h.head, "tools_dirty": false, "verdict": "ERROR", "autocode_status": "FAILED",
            "reason": "crashed", "elapsed_seconds": 12.0
        }))
        .unwrap(),
    );
    let e = eval_spec(MODEL, Value::Null);
    let log = eval_log(
        d,
        "logs/a.eval",
        &e,
        &[sample(1, 2, "U1", json!("I"))],
        true,
    );
    let r = h.import(&[
        "--scenario",
        "scenario/bugfix/01",
        "runs/R1",
        "--inspect",
        &log,
        "--json",
    ]);
    r.ok();
    let v = r.json();
    let ids: Vec<&str> = v["imported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["schedule_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["scenario/bugfix/01", "inspect/popularity-1/02"]);
    assert_eq!(v["imported"][1]["reason"], "match scored I: because");
    assert_eq!(v["imported"][1]["outcome"], "ended_without_completing");
    assert_eq!(v["deferred"], 2);
}

#[test]
fn pin_and_check_an_inspect_declaration_and_refuse_a_bad_block() {
    let h = Harness::new(popularity(&[1]), 2);
    let d = h.path();
    let r = ledger(d, &["check", "campaign.json", "--json"]);
    r.ok();
    let pinned = std::fs::read_to_string(d.join("campaign.json")).unwrap();
    let decl: Value = serde_json::from_str(&pinned).unwrap();
    let (def, insp, lim) = (
        pinned.find("\"definition\"").unwrap(),
        pinned.find("\"inspect\": {").unwrap(),
        pinned.find("\"limits\"").unwrap(),
    );
    assert!(
        def < insp && insp < lim,
        "inspect follows definition:\n{pinned}"
    );
    // A draft whose inspect block breaks a rule is refused by pin, naming it.
    let mut draft: Value =
        serde_json::from_slice(&std::fs::read(d.join("draft.json")).unwrap()).unwrap();
    draft["tasks"][0]["inspect"]["sample_id"] = json!(1.5);
    draft["tasks"][0]["limits"] = json!({"harness_minutes": 3});
    write(d, "bad.json", serde_json::to_vec_pretty(&draft).unwrap());
    let r = ledger(d, &["pin", "bad.json"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("inspect.sample_id") && r.stderr.contains("limits.harness_minutes"),
        "{}",
        r.stderr
    );
    // And check refuses the same in a declaration.
    let mut bad = decl.clone();
    bad["tasks"][0]["native_outcomes"] = json!(["PASS", "STOPPED"]);
    write(d, "bad-decl.json", serde_json::to_vec_pretty(&bad).unwrap());
    let r = ledger(d, &["check", "bad-decl.json"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("\"STOPPED\" has no portfolio outcome for an inspect task"),
        "{}",
        r.stderr
    );
}

/// Every other shared log, each imported into a campaign declaring its samples: the rows and
/// refusals as `inspect.md` maps them.
#[test]
fn each_shared_log_imports_to_its_rows() {
    struct Case {
        log: &'static str,
        task: &'static str,
        scorer: &'static str,
        ids: Vec<(&'static str, Value)>,
        reps: u64,
        /// schedule id → native outcome
        want: &'static [(&'static str, &'static str)],
    }
    let cases = [
        Case {
            log: "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json",
            task: "input_task",
            scorer: "model_graded_fact",
            ids: vec![("s1", json!(1))],
            reps: 1,
            want: &[("inspect/s1/01", "PASS")],
        },
        Case {
            log: "2024-11-05T13-32-37-05-00_input-task_hxs4q9azL3ySGkjJirypKZ.eval",
            task: "input_task",
            scorer: "model_graded_fact",
            ids: vec![("s1", json!(1))],
            reps: 1,
            want: &[("inspect/s1/01", "PASS")],
        },
        Case {
            log: "2025-05-12T20-28-26-04-00_security-guide.json",
            task: "security_guide",
            scorer: "model_graded_fact",
            ids: vec![("s1", json!(1)), ("s2", json!(2)), ("s3", json!(3))],
            reps: 1,
            want: &[
                ("inspect/s1/01", "PASS"),
                ("inspect/s2/01", "PASS"),
                ("inspect/s3/01", "PASS"),
            ],
        },
        Case {
            log: "mmlu-summary-choices.eval",
            task: "inspect_evals/mmlu_0_shot",
            scorer: "choice",
            ids: vec![("q1", json!(1))],
            reps: 1,
            want: &[("inspect/q1/01", "FAIL")],
        },
        Case {
            log: "log_message_deduplication.eval",
            task: "inspect_test_utils/guess_number",
            scorer: "closeness_log",
            ids: vec![("g0", json!("0"))],
            reps: 1,
            want: &[("inspect/g0/01", "FAIL")],
        },
        Case {
            log: "log_read_sample.eval",
            task: "popularity",
            scorer: "match",
            ids: vec![("p1", json!(1))],
            reps: 1,
            want: &[("inspect/p1/01", "PASS")],
        },
        Case {
            log: "log_tool_call_error.json",
            task: "...",
            scorer: "match",
            ids: vec![("t1", json!(1))],
            reps: 4,
            want: &[("inspect/t1/04", "UNSCORED")],
        },
    ];
    for c in &cases {
        let tasks: Vec<Value> = c
            .ids
            .iter()
            .map(|(name, id)| task(name, c.task, id.clone(), c.scorer, "live"))
            .collect();
        let h = Harness::with_model(tasks, c.reps, "openai/gpt-4o-mini");
        let log = h.log(c.log);
        let r = h.import(&["--inspect", &log]);
        r.ok();
        for (id, outcome) in c.want {
            let row = h.row(id);
            assert_eq!(
                row["native_outcome"], *outcome,
                "{}: {id}\n{}",
                c.log, r.stdout
            );
            assert_eq!(row["native_record"]["kind"], "inspect");
            if *outcome != "PASS" {
                assert!(row["reason"].as_str().is_some_and(|s| !s.is_empty()));
            }
        }
        assert!(
            r.stdout
                .contains(&format!("imported {} attempt", c.want.len())),
            "{}",
            r.stdout
        );
    }
    // The scorer's value of a float score: closeness_log scored 0.0.
    let h = Harness::with_model(
        vec![task(
            "g0",
            "inspect_test_utils/guess_number",
            json!("0"),
            "closeness_log",
            "live",
        )],
        1,
        "openai/gpt-4o-mini",
    );
    let log = h.log("log_message_deduplication.eval");
    h.import(&["--inspect", &log]).ok();
    assert!(h.row("inspect/g0/01")["reason"]
        .as_str()
        .unwrap()
        .starts_with("closeness_log scored 0.0"));
    // log_read_sample.eval and .json are two runs of the same sample (other uuids): one row
    // cannot take both.
    let h = Harness::with_model(popularity(&[1]), 1, "ollama/gemma3");
    let a = h.log("log_read_sample.eval");
    let b = h.log("log_read_sample.json");
    h.refused(
        &["--inspect", &a, &b],
        &["row inspect/popularity-1/01: is filled twice"],
    );
    // An epoch the schedule does not have (the fixture's sample is epoch 4).
    let h = Harness::new(vec![task("t1", "...", json!(1), "match", "live")], 1);
    let log = h.log("log_tool_call_error.json");
    h.refused(
        &["--inspect", &log],
        &["epoch 4 of sample 1 is not scheduled"],
    );
    // Header-only logs of a scripted model: nothing to import, nothing written.
    let h = Harness::new(popularity(&[1]), 1);
    h.log("2024-08-29T15-11-17+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json");
    h.log("2024-08-29T15-11-18+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json");
    let before = h.ledger_bytes();
    let r = h.import(&["--inspect", "logs"]);
    r.ok();
    assert!(r.stdout.contains("imported 0 attempts"), "{}", r.stdout);
    assert_eq!(h.ledger_bytes(), before);
}

/// A live Inspect run whose every pin holds is a verified delivery: the declared revision
/// (resolved from the log's clean abbreviated commit), the runtime, the profile (a model run
/// without a reasoning effort, declared as null), no option deviation, spend within the limit.
#[test]
fn a_live_inspect_pass_with_every_pin_is_a_verified_delivery() {
    let h = Harness::with_profile(popularity(&[1]), 2, MODEL, Value::Null);
    let d = h.path();
    let decl: Value =
        serde_json::from_slice(&std::fs::read(d.join("campaign.json")).unwrap()).unwrap();
    let pinned = decl["source_revision"].as_str().unwrap().to_owned();
    assert_eq!(pinned, h.head);
    let rev = json!({"type": "git", "origin": "o", "commit": &pinned[..7], "dirty": false});
    let log = eval_log(
        d,
        "logs/v.eval",
        &eval_spec(MODEL, rev),
        &[
            sample(1, 1, "U1", json!("C")),
            sample(1, 2, "U2", json!("I")),
        ],
        true,
    );
    write(
        d,
        "runtime.json",
        serde_json::to_vec(
            &json!({"python": "3.12.7", "psutil": "6.1.0", "native_provider": "azureai",
                                   "packages": {}, "dependencies": ["inspect_ai==0.3.285"]}),
        )
        .unwrap(),
    );
    let r = h.import(&[
        "--inspect",
        &log,
        "--runtime-identity",
        "runtime.json",
        "--json",
    ]);
    r.ok();
    let v = r.json();
    assert_eq!(v["imported"][0]["outcome"], "verified_delivery", "{v}");
    assert_eq!(v["imported"][0]["gaps"], json!([]));
    assert_eq!(v["imported"][1]["outcome"], "ended_without_completing");
    let rep = ledger(d, &["report", "campaign.json", "ledger.json", "--json"]);
    rep.ok();
    let rv = rep.json();
    assert_eq!(
        rv["sections"]["live"]["outcomes"]["verified_delivery"]["count"],
        1
    );
    assert_eq!(rv["sections"]["live"]["cost"]["known_usd"], json!(1.0));
    assert_eq!(
        rv["sections"]["live"]["comparison"]["blocked"],
        json!(false),
        "{rv}"
    );
    // A run with a reasoning effort the profile does not declare is not.
    let h = Harness::with_profile(popularity(&[1]), 2, MODEL, Value::Null);
    let mut e = eval_spec(MODEL, Value::Null);
    e["model_generate_config"] = json!({"reasoning_effort": "high"});
    let log = eval_log(
        h.path(),
        "logs/w.eval",
        &e,
        &[sample(1, 1, "U1", json!("C"))],
        true,
    );
    let r = h.import(&["--inspect", &log, "--json"]);
    r.ok();
    assert!(r.json()["imported"][0]["gaps"]
        .as_array()
        .unwrap()
        .contains(&json!("profile differs")));
}

/// Compare (or, with `UPDATE_SNAPSHOTS=1`, write) `tests/snapshots/inspect/<name>.txt`: the exact
/// output a user sees for `git ledger <shown>`.
#[track_caller]
fn snapshot(name: &str, shown: &str, r: &Run) {
    let text = format!(
        "$ git ledger {shown}\n--- exit status {}\n--- stdout\n{}--- stderr\n{}",
        r.code, r.stdout, r.stderr
    );
    let path = project_root()
        .join("tests/snapshots/inspect")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| !v.is_empty()) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot {} (UPDATE_SNAPSHOTS=1 cargo test inspect)\n{text}",
            path.display()
        )
    });
    assert!(
        want == text,
        "output {name} changed (UPDATE_SNAPSHOTS=1 cargo test inspect rewrites it)\n--- snapshot\n{want}--- now\n{text}"
    );
}

#[test]
fn what_a_user_sees() {
    let h = Harness::new(popularity(&[1]), 2);
    let log = h.log("log_streaming.eval");
    let args = ["--inspect", log.as_str()];
    snapshot(
        "import-undeclared-refused",
        "import campaign.json ledger.json --inspect logs/log_streaming.eval",
        &h.import(&args),
    );
    snapshot(
        "import-skip-undeclared",
        "import campaign.json ledger.json --inspect logs/log_streaming.eval --skip-undeclared",
        &h.import(&["--inspect", &log, "--skip-undeclared"]),
    );
    snapshot(
        "import-again-json",
        "import campaign.json ledger.json --inspect logs/log_streaming.eval --skip-undeclared --json",
        &h.import(&["--inspect", &log, "--skip-undeclared", "--json"]),
    );
    // A retried sample and an edited score, as a current Inspect writes them.
    let h = Harness::new(popularity(&[1]), 2);
    let mut retried = sample(1, 1, "U1", json!("C"));
    retried["error_retries"] = json!([{"message": "RuntimeError('flaky')", "traceback": "…"}]);
    let mut edited = sample(1, 2, "U2", json!("C"));
    edited["scores"]["match"]["history"] = json!([
        {"value": "I", "explanation": "wrong", "provenance": null},
        {"value": "C", "provenance": {"author": "alice", "reason": "regrade", "timestamp": "2026-01-01T00:00:00"}}
    ]);
    let log = eval_log(
        h.path(),
        "logs/r.eval",
        &eval_spec(MODEL, Value::Null),
        &[retried, edited],
        true,
    );
    snapshot(
        "import-retried-and-edited",
        "import campaign.json ledger.json --inspect logs/r.eval",
        &h.import(&["--inspect", &log]),
    );
}

/// Truncated and bit-flipped copies of every shared log through the real binary: each import
/// ends in a result or a refusal (exit 0 or 2, never a panic's 101), and a refusal leaves the
/// ledger as it was.
#[test]
fn damaged_copies_of_every_shared_log_never_crash_the_import() {
    let h = Harness::with_model(popularity(&[1, 2, 3]), 2, "openai/gpt-4o-mini");
    let d = h.path();
    let mut n = 0;
    for entry in std::fs::read_dir(shared("")).unwrap() {
        let p = entry.unwrap().path();
        let ext = match p.extension().and_then(|e| e.to_str()) {
            Some(e @ ("eval" | "json")) => e.to_owned(),
            _ => continue,
        };
        let bytes = std::fs::read(&p).unwrap();
        for k in 1..=6u64 {
            let mut b = bytes.clone();
            if k % 2 == 0 {
                b.truncate(bytes.len() * k as usize / 7);
            } else {
                let at = (bytes.len() as u64 * k / 7) as usize;
                b[at] ^= 0x08;
            }
            let rel = format!("logs/v{n}.{ext}");
            n += 1;
            write(d, &rel, &b);
            std::fs::copy(d.join("ledger.json"), d.join("before.json")).unwrap();
            let r = h.import(&["--inspect", &rel, "--skip-undeclared"]);
            assert!(r.code == 0 || r.code == 2, "{}: {r:?}", p.display());
            if r.code == 2 {
                assert_eq!(
                    h.ledger_bytes(),
                    std::fs::read(d.join("before.json")).unwrap()
                );
            }
            // Start each variant from the template again.
            let t = ledger(d, &["template", "campaign.json"]);
            write(d, "ledger.json", &t.stdout);
        }
    }
    assert_eq!(n, 17 * 6);
}

mod bounds;

crate::common::under_both_prefixes!(
    ref_mode_one_commit_records_hold_the_samples_bytes_and_the_message_names_an_edit
);
