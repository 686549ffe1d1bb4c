//! `import --harbor` with the real binary: real Harbor 0.25 jobs (tests/data/harbor-jobs,
//! provenance in SOURCE.txt) and copies of them changed as damage would, against declarations
//! pinned in a real repository; file mode and ref mode; every refusal leaves the ledger as it
//! was. `harbor_runs.rs` runs Harbor itself.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::common::{commit_all, git, ledger, new_repo, project_root, write, Run};
use crate::schemas::assert_valid;

/// The shared Harbor test data.
pub fn shared() -> PathBuf {
    project_root().join("tests/data/harbor-jobs")
}

fn rules() -> serde_json::Map<String, Value> {
    git_ledger::declaration::ACCEPTANCE_RULES
        .iter()
        .map(|r| (r.to_string(), true.into()))
        .collect()
}

/// Harbor's digest of a task as a trial lock of the shared jobs records it.
fn digest_of(task: &str) -> String {
    let job = shared().join("j1");
    for e in std::fs::read_dir(&job).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("{task}__"))
        {
            let lock: Value =
                serde_json::from_slice(&std::fs::read(p.join("lock.json")).unwrap()).unwrap();
            return lock["task"]["digest"].as_str().unwrap().to_owned();
        }
    }
    panic!("no trial of {task} in {}", job.display())
}

/// A draft task for Harbor task `name`, run by `agent` (the shared jobs ran `oracle`: fixture).
pub fn task(name: &str, digest: &str, agent: &str, evidence: &str) -> Value {
    json!({
        "id": format!("harbor/{name}"),
        "kind": "harbor",
        "evidence": evidence,
        "expects": "completion",
        "definition": {"path": format!("tasks/{name}")},
        "harbor": {"task": name, "digest": digest, "agent": agent, "reward": "reward", "pass_at_least": 1.0},
        "limits": {"agent_seconds": 60, "verifier_seconds": 30},
        "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"]
    })
}

/// The three shared tasks, as the shared jobs ran them.
fn shared_tasks() -> Vec<Value> {
    ["hello-file", "wrong-answer", "slow-verifier"]
        .iter()
        .map(|t| task(t, &digest_of(t), "oracle", "fixture"))
        .collect()
}

/// A harness repository holding Harbor tasks, a profile whose one role is `agent`, a policy
/// and tools, and a declaration pinned from a draft of `tasks` × `repetitions`.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub head: String,
}

impl Harness {
    pub fn new(tasks: Vec<Value>, repetitions: u64) -> Harness {
        Self::with_tasks_dir(&shared().join("tasks"), tasks, repetitions)
    }

    pub fn with_tasks_dir(tasks_dir: &Path, tasks: Vec<Value>, repetitions: u64) -> Harness {
        let dir = new_repo();
        let d = dir.path();
        copy_dir(tasks_dir, &d.join("tasks"));
        write(
            d,
            "h/profile.json",
            serde_json::to_string_pretty(&json!({
                "name": "harbor-oracle", "provider": "none", "joint_planning": false,
                "roles": {"agent": {"model": "oracle", "effort": null}},
                "extra_options": []
            }))
            .unwrap(),
        );
        write(d, "h/policy.md", "spend nothing\n");
        write(d, "h/tools/run.sh", "#!/bin/sh\n");
        write(
            d,
            ".gitignore",
            "/ledger.json\n/campaign.json\n/jobs/\n/draft.json\n",
        );
        let head = commit_all(d, "harness");
        let draft = json!({
            "format": "campaign-declaration/1",
            "id": "harbor-small",
            "repetitions": repetitions,
            "profile": {"source": {"path": "h/profile.json"}},
            "policy_files": [{"path": "h/policy.md"}],
            "runner_tools": {"path": "h/tools"},
            "runtime_requirements": {"python": "3.12.1"},
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
        assert_valid("campaign-draft", &draft, "harbor draft");
        ledger(d, &["pin", "draft.json", "-o", "campaign.json"]).ok();
        let t = ledger(d, &["template", "campaign.json"]);
        t.ok();
        write(d, "ledger.json", &t.stdout);
        Harness { dir, head }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copy a shared job into `jobs/<name>` and return that path (relative).
    pub fn job(&self, name: &str) -> String {
        let rel = format!("jobs/{name}");
        copy_dir(&shared().join(name), &self.path().join(&rel));
        rel
    }

    pub fn import(&self, args: &[&str]) -> Run {
        let mut all = vec!["import", "campaign.json", "ledger.json"];
        all.extend_from_slice(args);
        ledger(self.path(), &all)
    }

    pub fn ledger_bytes(&self) -> Vec<u8> {
        std::fs::read(self.path().join("ledger.json")).unwrap()
    }

    pub fn rows(&self) -> Vec<Value> {
        let l: Value = serde_json::from_slice(&self.ledger_bytes()).unwrap();
        l["rows"].as_array().unwrap().clone()
    }

    pub fn row(&self, id: &str) -> Value {
        self.rows()
            .into_iter()
            .find(|r| r["schedule_id"] == id)
            .unwrap_or_else(|| panic!("no row {id}"))
    }

    pub fn declaration(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.path().join("campaign.json")).unwrap()).unwrap()
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The trial directories of a job, by task name, in name order.
pub fn trials(job: &Path, task: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(job)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{task}__"))
        })
        .collect();
    out.sort();
    out
}

fn result_of(trial: &Path) -> (Vec<u8>, Value) {
    let bytes = std::fs::read(trial.join("result.json")).unwrap();
    let v = serde_json::from_slice(&bytes).unwrap();
    (bytes, v)
}

fn sha256(bytes: &[u8]) -> String {
    git_ledger::sha256_hex(bytes)
}

/// Seconds between two of Harbor's timestamps, read here on their own (the fraction as
/// microseconds).
fn seconds(a: &str, b: &str) -> f64 {
    let micros = |s: &str| -> i64 {
        let (hms, frac) = s.trim_end_matches('Z')[11..].split_once('.').unwrap();
        let p: Vec<i64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
        let f: i64 = format!("{frac:0<6}")[..6].parse().unwrap();
        ((p[0] * 60 + p[1]) * 60 + p[2]) * 1_000_000 + f
    };
    assert_eq!(
        a[..10],
        b[..10],
        "the test data's trials end the day they start"
    );
    (micros(b) - micros(a)) as f64 / 1e6
}

/// Every row of a job checked against its trial's own `result.json`, field by field as
/// `harbor.md`'s table says: shared with the real runs (`harbor_runs.rs`).
pub fn check_rows_against_results(h: &Harness, job: &Path, repetitions: u64) {
    let decl = h.declaration();
    let job_name = job.file_name().unwrap().to_string_lossy().into_owned();
    for t in decl["tasks"].as_array().unwrap() {
        let name = t["harbor"]["task"].as_str().unwrap();
        let tid = t["id"].as_str().unwrap();
        let trials = trials(job, name);
        for rep in 1..=repetitions {
            let row = h.row(&format!("{tid}/{rep:02}"));
            if row["native_outcome"] == "DEFERRED" {
                continue;
            }
            let trial = trials
                .iter()
                .find(|p| {
                    row["native_record"]["id"]
                        .as_str()
                        .unwrap()
                        .ends_with(&format!("/{}", p.file_name().unwrap().to_string_lossy()))
                })
                .unwrap_or_else(|| panic!("row {tid}/{rep:02}: no trial {}", row["native_record"]));
            let (bytes, r) = result_of(trial);
            let tname = r["trial_name"].as_str().unwrap();
            assert_eq!(
                row["native_record"],
                json!({"kind": "harbor", "id": format!("{}/{tname}", r["config"]["job_id"].as_str().unwrap()), "sha256": sha256(&bytes)})
            );
            assert_eq!(
                row["evidence_refs"],
                json!([format!("{job_name}/{tname}/result.json")])
            );
            let retried = std::fs::read_to_string(job.join("job.log"))
                .unwrap_or_default()
                .contains(&format!("Trial {tname} failed with exception"));
            let exc = &r["exception_info"];
            let reward = &r["verifier_result"]["rewards"]["reward"];
            let (outcome, status) = if retried {
                let line = std::fs::read_to_string(job.join("job.log")).unwrap();
                let kind = line
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix(&format!("Trial {tname} failed with exception "))
                            .and_then(|x| x.split_once(". Retrying"))
                            .map(|(k, _)| k.to_owned())
                    })
                    .unwrap();
                ("ERROR", format!("exception:{kind}"))
            } else if !exc.is_null() {
                let k = exc["exception_type"].as_str().unwrap();
                let valid = git_ledger::declaration::harbor_reward_valid(k);
                let o = if !valid {
                    "ERROR"
                } else if reward.is_null() {
                    "UNSCORED"
                } else if reward.as_f64().unwrap() >= 1.0 {
                    "PASS"
                } else {
                    "FAIL"
                };
                (o, format!("exception:{k}"))
            } else if reward.is_null() {
                ("UNSCORED", "completed".into())
            } else if reward.as_f64().unwrap() >= 1.0 {
                ("PASS", "completed".into())
            } else {
                ("FAIL", "completed".into())
            };
            let what = format!("row {tid}/{rep:02} from {}", trial.display());
            assert_eq!(row["native_outcome"], outcome, "{what}");
            assert_eq!(row["native_status"], status, "{what}");
            match outcome {
                "PASS" => {
                    assert!(row["reason"].is_null(), "{what}");
                    assert_eq!(
                        row["oracle_checks"],
                        json!([{"name": "reward", "ok": true}])
                    );
                }
                "FAIL" => {
                    assert_eq!(row["reason"], format!("reward = {reward}"), "{what}");
                    assert_eq!(
                        row["oracle_checks"],
                        json!([{"name": "reward", "ok": false}])
                    );
                }
                _ => assert!(row["oracle_checks"].is_null(), "{what}"),
            }
            if retried {
                assert!(row["elapsed_seconds"].is_null(), "{what}");
                assert!(row["spent_budget"]["agent_seconds"].is_null(), "{what}");
            } else {
                let e = seconds(
                    r["started_at"].as_str().unwrap(),
                    r["finished_at"].as_str().unwrap(),
                );
                assert_eq!(row["elapsed_seconds"].as_f64(), Some(e), "{what}");
                for (limit, phase) in [
                    ("agent_seconds", "agent_execution"),
                    ("verifier_seconds", "verifier"),
                ] {
                    let p = &r[phase];
                    let want = if p.is_null() || p["finished_at"].is_null() {
                        Value::Null
                    } else {
                        json!(seconds(
                            p["started_at"].as_str().unwrap(),
                            p["finished_at"].as_str().unwrap()
                        ))
                    };
                    assert_eq!(row["spent_budget"][limit], want, "{what}: {limit}");
                }
            }
            // The oracle and nop agents run no model: fixture evidence, no model, no usage.
            assert_eq!(row["evidence"], "fixture", "{what}");
            assert_eq!(
                row["actual_models_and_efforts"],
                json!({"provider": null, "roles": {"agent": {"model": null, "effort": null}}})
            );
            assert!(
                row["usage"].is_null() && row["estimated_usd"].is_null(),
                "{what}"
            );
            assert_valid("row", &row, &what);
        }
    }
}

#[test]
fn a_job_imports_every_trial_as_the_spec_table_says() {
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j1");
    let before = h.ledger_bytes();
    let out = h.import(&["--harbor", &job, "--revision", "HEAD", "--json"]);
    out.ok();
    assert_ne!(before, h.ledger_bytes());
    let summary = out.json();
    assert_valid("import-summary", &summary, "import --harbor --json");
    assert_eq!(summary["filled"], 6);
    assert_eq!(summary["deferred"], 0);
    check_rows_against_results(&h, &h.path().join(&job), 2);
    // The three verdicts: a pass, a fail with its reward, a verifier timeout (Harbor's policy:
    // the reward of a VerifierTimeoutError is not a measurement).
    assert_eq!(h.row("harbor/hello-file/01")["native_outcome"], "PASS");
    assert_eq!(h.row("harbor/wrong-answer/02")["reason"], "reward = 0.0");
    let slow = h.row("harbor/slow-verifier/01");
    assert_eq!(slow["native_status"], "exception:VerifierTimeoutError");
    assert_eq!(
        slow["reason"],
        "VerifierTimeoutError: Verifier execution timed out after 2.0 seconds"
    );
    for r in h.rows() {
        assert_eq!(r["source_revision"], h.head, "--revision HEAD, resolved");
        assert_eq!(r["option_deviations"], json!([]), "{}", r["schedule_id"]);
    }
    // Trials fill repetitions in trial-name order.
    let first = &trials(&h.path().join(&job), "hello-file")[0];
    assert!(h.row("harbor/hello-file/01")["native_record"]["id"]
        .as_str()
        .unwrap()
        .ends_with(&*first.file_name().unwrap().to_string_lossy()));
    assert_valid(
        "campaign-declaration",
        &h.declaration(),
        "harbor declaration",
    );
    assert_eq!(
        h.declaration()["tasks"][0]["harbor"]["digest"],
        json!(digest_of("hello-file")),
        "pin keeps the digest as given"
    );
}

#[test]
fn the_same_job_again_is_skipped_and_listed() {
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j1");
    h.import(&["--harbor", &job]).ok();
    let before = h.ledger_bytes();
    let again = h.import(&["--harbor", &job, "--json"]);
    again.ok();
    assert_eq!(before, h.ledger_bytes());
    let s = again.json();
    assert_eq!(s["imported"], json!([]));
    assert_eq!(
        s["skipped"]["already_in_ledger"].as_array().unwrap().len(),
        6
    );
    // A trial directory given beside its job: one copy is read, the other listed.
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j1");
    let t = trials(&h.path().join(&job), "hello-file")[0].clone();
    let out = h.import(&["--harbor", &job, t.to_str().unwrap()]);
    out.ok();
    assert!(
        out.stdout
            .contains("a copy of a trial this import already reads"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("imported 6 attempts"), "{}", out.stdout);
}

#[test]
fn a_second_result_of_a_trial_is_refused_as_a_retry() {
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j1");
    h.import(&["--harbor", &job]).ok();
    let before = h.ledger_bytes();
    // The same trial name in the same job, with another result: what Harbor's retry leaves.
    let t = trials(&h.path().join(&job), "hello-file")[0].clone();
    let text = std::fs::read_to_string(t.join("result.json")).unwrap();
    std::fs::write(
        t.join("result.json"),
        text.replace("\"reward\": 1.0", "\"reward\": 0.0"),
    )
    .unwrap();
    let out = h.import(&["--harbor", t.to_str().unwrap()]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("rule 4: row harbor/hello-file/01: native_outcome: already holds an attempt"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("a retry needs a new declared schedule"),
        "{}",
        out.stderr
    );
    assert_eq!(before, h.ledger_bytes());
    // The same from the job directory (no job.log line explains it): refused too.
    h.import(&["--harbor", &job]).expect_code(2);
    assert_eq!(before, h.ledger_bytes());
}

#[test]
fn a_trial_beyond_the_repetitions_is_an_unscheduled_attempt() {
    let h = Harness::new(shared_tasks(), 1);
    let job = h.job("j1");
    let out = h.import(&["--harbor", &job]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("of task harbor/hello-file is not scheduled: all 1 repetitions are filled by other trials (an unscheduled attempt"),
        "{}",
        out.stderr
    );
    // And the job's n_attempts (2) against repetitions (1) is a deviation of the row it fills.
    let t = trials(&h.path().join(&job), "hello-file")[0].clone();
    h.import(&["--harbor", t.to_str().unwrap()]).ok();
    assert_eq!(
        h.row("harbor/hello-file/01")["option_deviations"],
        json!(["n_attempts: declared 1 (repetitions), the job ran 2"])
    );
}

#[test]
fn job_log_says_which_first_attempts_harbor_deleted() {
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j2");
    let out = h.import(&["--harbor", &job, "--json"]);
    out.ok();
    check_rows_against_results(&h, &h.path().join(&job), 2);
    for rep in ["01", "02"] {
        let r = h.row(&format!("harbor/hello-file/{rep}"));
        assert_eq!(r["native_outcome"], "ERROR");
        assert_eq!(r["native_status"], "exception:EnvironmentStartTimeoutError");
        assert!(r["reason"]
            .as_str()
            .unwrap()
            .contains("Harbor deleted the first attempt"));
        assert!(r["usage"].is_null() && r["elapsed_seconds"].is_null());
    }
    // Harbor's own job result says 4 completed, 0 errors: the ledger keeps the two first tries.
    let jr: Value =
        serde_json::from_slice(&std::fs::read(h.path().join(&job).join("result.json")).unwrap())
            .unwrap();
    assert_eq!(jr["stats"]["n_errored_trials"], 0);
    assert_eq!(jr["stats"]["n_retries"], 2);
    // A retried trial's directory given alone reads its job's job.log too.
    let h2 = Harness::new(shared_tasks(), 2);
    let job2 = h2.job("j2");
    let t = trials(&h2.path().join(&job2), "hello-file")[0].clone();
    h2.import(&["--harbor", t.to_str().unwrap()]).ok();
    assert_eq!(h2.row("harbor/hello-file/01")["native_outcome"], "ERROR");
}

#[test]
fn after_the_plugin_imported_a_first_attempt_the_job_imports_and_lists_the_retry() {
    // What the plugin leaves: the first try's record under the trial's id (other bytes than the
    // surviving retry's), then the job imported after the run.
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j2");
    let t = trials(&h.path().join(&job), "hello-file")[0].clone();
    let surviving = std::fs::read(t.join("result.json")).unwrap();
    let first_try = String::from_utf8(surviving.clone())
        .unwrap()
        .replace("\"exception_info\": null", "\"exception_info\": {\"exception_type\": \"EnvironmentStartTimeoutError\", \"exception_message\": \"first start fails\", \"exception_traceback\": \"\", \"occurred_at\": \"2026-12-01T21:02:31.000000Z\"}")
        .replace("\"verifier_result\": {\n        \"rewards\": {\n            \"reward\": 1.0\n        }\n    }", "\"verifier_result\": null");
    assert_ne!(first_try.as_bytes(), &surviving[..]);
    std::fs::write(t.join("result.json"), &first_try).unwrap();
    // The hook's import of the first try, from the trial directory, before the job.log line.
    std::fs::rename(
        h.path().join(&job).join("job.log"),
        h.path().join("job.log.later"),
    )
    .unwrap();
    h.import(&["--harbor", t.to_str().unwrap()]).ok();
    std::fs::rename(
        h.path().join("job.log.later"),
        h.path().join(&job).join("job.log"),
    )
    .unwrap();
    let first = h.row("harbor/hello-file/01");
    assert_eq!(
        first["native_status"],
        "exception:EnvironmentStartTimeoutError"
    );
    assert_eq!(
        first["reason"],
        "EnvironmentStartTimeoutError: first start fails"
    );
    // Harbor deletes it and the retry writes the surviving result under the same name.
    std::fs::write(t.join("result.json"), &surviving).unwrap();
    // The hook's import of the retry: refused as a retry.
    let before = h.ledger_bytes();
    let out = h.import(&["--harbor", t.to_str().unwrap()]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("already holds an attempt"),
        "{}",
        out.stderr
    );
    assert_eq!(before, h.ledger_bytes());
    // The job afterwards: the retry listed, the rest imported.
    let out = h.import(&["--harbor", &job]);
    out.ok();
    assert!(
        out.stdout
            .contains("the ledger holds this trial's first attempt"),
        "{}",
        out.stdout
    );
    assert_eq!(h.row("harbor/hello-file/01"), first);
    assert_eq!(h.row("harbor/hello-file/02")["native_outcome"], "ERROR");
}

#[test]
fn undeclared_trials_are_refused_or_skipped_and_listed() {
    let h = Harness::new(
        vec![task(
            "hello-file",
            &digest_of("hello-file"),
            "oracle",
            "fixture",
        )],
        2,
    );
    let job = h.job("j1");
    let before = h.ledger_bytes();
    let out = h.import(&["--harbor", &job]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("of Harbor task \"wrong-answer\" is not declared"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--skip-undeclared skips it"));
    assert_eq!(before, h.ledger_bytes());
    let out = h.import(&["--harbor", &job, "--skip-undeclared", "--json"]);
    out.ok();
    let s = out.json();
    assert_eq!(s["skipped"]["undeclared"].as_array().unwrap().len(), 4);
    assert_eq!(s["filled"], 2);
}

#[test]
fn another_agent_or_digest_is_a_deviation_and_a_scripted_agent_never_fills_a_live_row() {
    let tasks = vec![
        task(
            "hello-file",
            &format!("sha256:{}", "0".repeat(64)),
            "terminus-2",
            "fixture",
        ),
        task("wrong-answer", &digest_of("wrong-answer"), "oracle", "live"),
    ];
    let h = Harness::new(tasks, 2);
    let job = h.job("j1");
    let t = trials(&h.path().join(&job), "hello-file")[0].clone();
    h.import(&["--harbor", t.to_str().unwrap()]).ok();
    let d = h.row("harbor/hello-file/01")["option_deviations"].clone();
    assert_eq!(d[0], "agent: declared terminus-2, the trial ran oracle");
    assert!(d[1]
        .as_str()
        .unwrap()
        .starts_with(&format!("task digest: declared sha256:{}", "0".repeat(64))));
    // The oracle agent's trial of a live task: refused, with the reason.
    let before = h.ledger_bytes();
    let w = trials(&h.path().join(&job), "wrong-answer")[0].clone();
    let out = h.import(&["--harbor", w.to_str().unwrap()]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("Harbor's scripted oracle agent is fixture evidence"),
        "{}",
        out.stderr
    );
    assert_eq!(before, h.ledger_bytes());
}

#[test]
fn damaged_results_are_refused_with_every_reason_and_nothing_written() {
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j1");
    let jp = h.path().join(&job);
    let before = h.ledger_bytes();
    let hello = trials(&jp, "hello-file");
    let wrong = trials(&jp, "wrong-answer");
    let slow = trials(&jp, "slow-verifier");
    // Truncated.
    let bytes = std::fs::read(hello[0].join("result.json")).unwrap();
    std::fs::write(hello[0].join("result.json"), &bytes[..bytes.len() / 2]).unwrap();
    // A reward of the wrong type.
    let text = std::fs::read_to_string(wrong[0].join("result.json")).unwrap();
    std::fs::write(
        wrong[0].join("result.json"),
        text.replace("\"reward\": 0.0", "\"reward\": \"0.0\""),
    )
    .unwrap();
    // A duplicate key (strict JSON).
    let text = std::fs::read_to_string(wrong[1].join("result.json")).unwrap();
    std::fs::write(
        wrong[1].join("result.json"),
        text.replacen(
            "\"task_name\": \"wrong-answer\",",
            "\"task_name\": \"wrong-answer\", \"task_name\": \"hello-file\",",
            1,
        ),
    )
    .unwrap();
    // A timestamp that is not UTC, an exception without a type.
    let text = std::fs::read_to_string(slow[0].join("result.json")).unwrap();
    let text = text.replacen("Z\",", "+02:00\",", 1);
    std::fs::write(
        slow[0].join("result.json"),
        text.replace(
            "\"exception_type\": \"VerifierTimeoutError\"",
            "\"exception_type\": 7",
        ),
    )
    .unwrap();
    let out = h.import(&["--harbor", &job]);
    out.expect_code(2);
    for needle in [
        "not strict JSON",
        "a truncated or damaged Harbor result",
        "verifier_result.rewards.reward must be a number",
        "duplicate",
        "must be a UTC timestamp",
        "exception_info.exception_type must be a non-empty string",
    ] {
        assert!(out.stderr.contains(needle), "{needle}: {}", out.stderr);
    }
    assert!(!out.stderr.contains("panicked"));
    assert_eq!(before, h.ledger_bytes());
    // Not a directory, a directory without trials: a failure and a refusal.
    h.import(&["--harbor", "draft.json"]).expect_code(1);
    std::fs::create_dir_all(h.path().join("empty")).unwrap();
    h.import(&["--harbor", "empty"]).expect_code(2);
    assert_eq!(before, h.ledger_bytes());
}

fn a_job_imports_into_a_ledger_ref_with_its_results_as_records(prefix: &str) {
    let h = Harness::new(shared_tasks(), 2);
    let d = h.path();
    crate::common::use_prefix(d, prefix);
    let job = h.job("j1");
    ledger(d, &["init", "campaign.json"]).ok();
    ledger(d, &["import", "--harbor", &job, "--revision", "HEAD"]).ok();
    let t = trials(&d.join(&job), "hello-file")[0].clone();
    let (bytes, r) = result_of(&t);
    let key = format!(
        "harbor:{}/{}",
        r["config"]["job_id"].as_str().unwrap(),
        r["trial_name"].as_str().unwrap()
    );
    let k = sha256(key.as_bytes());
    let path = format!("records/{}/{}.json", &k[..2], &k[2..]);
    let blob = std::process::Command::new("git")
        .args(["cat-file", "blob", &format!("{prefix}harbor-small:{path}")])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        blob.status.success(),
        "{}",
        String::from_utf8_lossy(&blob.stderr)
    );
    assert_eq!(blob.stdout, bytes, "records/ keeps result.json's bytes");
    ledger(d, &["verify"]).ok();
    let log = git(
        d,
        &["log", "-1", "--format=%B", &format!("{prefix}harbor-small")],
    );
    assert!(log.contains("Ledger-Filled: 6"), "{log}");
}

#[test]
fn damaged_job_files_are_refused_with_their_reason_never_a_panic() {
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j1");
    let jp = h.path().join(&job);
    let before = h.ledger_bytes();
    let hello = trials(&jp, "hello-file");
    let wrong = trials(&jp, "wrong-answer");
    // A truncated trial lock, a lock whose digest is not a string, one that is not an object.
    std::fs::write(hello[0].join("lock.json"), "{\n").unwrap();
    let text = std::fs::read_to_string(hello[1].join("lock.json")).unwrap();
    let mut lock: Value = serde_json::from_str(&text).unwrap();
    lock["task"]["digest"] = json!(42);
    std::fs::write(hello[1].join("lock.json"), lock.to_string()).unwrap();
    std::fs::write(wrong[1].join("lock.json"), "[]").unwrap();
    let out = h.import(&["--harbor", &job]);
    out.expect_code(2);
    for needle in [
        "hello-file__eD2pj5h/lock.json: not valid JSON",
        "hello-file__kFr96yx/lock.json: task.digest must be a string, not 42",
        "wrong-answer__qoA4gQe/lock.json: not a Harbor trial lock",
    ] {
        assert!(out.stderr.contains(needle), "{needle}: {}", out.stderr);
    }
    assert!(!out.stderr.contains("panicked"));
    assert_eq!(before, h.ledger_bytes());
    // A missing lock: imported, with the digest not compared as a deviation.
    std::fs::copy(wrong[0].join("lock.json"), wrong[1].join("lock.json")).unwrap();
    std::fs::remove_file(wrong[0].join("lock.json")).unwrap();
    h.import(&["--harbor", wrong[0].to_str().unwrap()]).ok();
    let d = h.row("harbor/wrong-answer/01")["option_deviations"].clone();
    assert!(
        d[0].as_str()
            .unwrap()
            .starts_with("task digest: the trial has no lock.json"),
        "{d}"
    );
    // The job's config.json not an object: refused, nothing written.
    let h = Harness::new(shared_tasks(), 2);
    let job = h.job("j1");
    let jp = h.path().join(&job);
    let before = h.ledger_bytes();
    std::fs::write(jp.join("config.json"), "[1, 2]\n").unwrap();
    let out = h.import(&["--harbor", &job]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("config.json: not a Harbor job configuration"),
        "{}",
        out.stderr
    );
    assert_eq!(before, h.ledger_bytes());
    // job.log with bytes that are not UTF-8 and a Retrying line of no trial of the job: read
    // as text, the line names nothing, the job imports.
    std::fs::write(jp.join("config.json"), "{}\n").unwrap();
    let mut log = std::fs::read(jp.join("job.log")).unwrap();
    log.extend_from_slice(b"\xff\xfe Trial nobody__x failed with exception E. Retrying\n");
    std::fs::write(jp.join("job.log"), log).unwrap();
    let out = h.import(&["--harbor", &job, "--json"]);
    out.ok();
    assert_eq!(out.json()["filled"], 6);
}

crate::common::under_both_prefixes!(a_job_imports_into_a_ledger_ref_with_its_results_as_records);

#[path = "../../examples/common/bench_campaign.rs"]
mod bench_campaign;
#[path = "../../examples/common/harbor_job.rs"]
mod harbor_job;

/// One import of `job` into a fresh copy of `template` (in `dir`), with transparent huge pages
/// allowed or not (`prctl(PR_SET_THP_DISABLE)`, kept across `exec`): (stdout, the ledger
/// written, the child's minor page faults).
// The child is reaped by `wait4` (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn import_faults(dir: &Path, template: &Path, job: &Path, huge: bool) -> (Vec<u8>, Vec<u8>, i64) {
    use std::os::unix::process::CommandExt;
    let ledger = dir.join("ledger.json");
    std::fs::copy(template, &ledger).unwrap();
    let mut cmd = std::process::Command::new(crate::common::bin());
    crate::common::pin_env(&mut cmd);
    cmd.current_dir(dir)
        .args(["import", "campaign.json", "ledger.json", "--harbor"])
        .arg(job)
        .arg("--json")
        .stdout(std::process::Stdio::piped());
    #[allow(unsafe_code)]
    // SAFETY: between fork and exec the closure calls only prctl, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if !huge && libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let (mut status, mut usage) = (0, std::mem::MaybeUninit::<libc::rusage>::zeroed());
    #[allow(unsafe_code)]
    // SAFETY: wait4 on the child's own pid, with valid pointers; `child` is not waited again.
    let usage = unsafe {
        assert_eq!(
            libc::wait4(child.id() as i32, &mut status, 0, usage.as_mut_ptr()),
            child.id() as i32
        );
        usage.assume_init()
    };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "import exited {status}"
    );
    (stdout, std::fs::read(&ledger).unwrap(), usage.ru_minflt)
}

/// The import's heap in huge pages (`src/cli/heap.rs`) writes what the same import writes
/// without them, and faults its memory in far fewer times: an import of 400 trials run with
/// huge pages refused to the process (`PR_SET_THP_DISABLE`) and allowed.
#[test]
fn an_import_faults_its_heap_in_huge_pages_and_writes_the_same() {
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
    if !thp.is_ok_and(|s| s.contains("[always]") || s.contains("[madvise]")) {
        eprintln!("skipped: transparent huge pages are off on this machine");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (job, _, template) = harbor_job::generate(dir.path(), 200, 2);
    let (out_small, ledger_small, faults_small) = import_faults(dir.path(), &template, &job, false);
    let (out_huge, ledger_huge, faults_huge) = import_faults(dir.path(), &template, &job, true);
    assert_eq!(out_huge, out_small, "the same --json output");
    assert_eq!(ledger_huge, ledger_small, "the same ledger");
    assert_ne!(ledger_huge, std::fs::read(&template).unwrap());
    assert!(
        faults_huge * 2 < faults_small,
        "minor faults: {faults_huge} with huge pages, {faults_small} without"
    );
}
