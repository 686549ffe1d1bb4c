//! Real Harbor runs imported with the real binary: each test runs `harbor run` (from the venv
//! `.ci/harbor-venv.sh` builds, with git-ledger's plugin installed) on the tasks of
//! tests/data/harbor-jobs/tasks inside a scratch Git repository, offline, with Harbor's
//! `oracle` agent and the tests' own environment (tests/harbor/chroot_env.py: a private mount
//! namespace and a chroot per trial, so it needs root and `unshare`); imports what Harbor wrote
//! and checks every row against Harbor's own models reading the same files
//! (tests/harbor/read_trials.py), and the rules of harbor.md.
//!
//! Without the venv (or without root and unshare) the tests skip loudly; under CI they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{bin, commit_all, git, ledger, project_root, which};
use crate::harbor::{check_rows_against_results, task, trials, Harness};

/// The venv with harbor and the plugin: `$GIT_LEDGER_HARBOR_VENV`, else
/// `<target dir>/harbor-venv`. None (skipped loudly, or a failure under CI) when it, root or
/// `unshare` is missing.
fn venv() -> Option<PathBuf> {
    let dir = match std::env::var_os("GIT_LEDGER_HARBOR_VENV") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => bin()
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .join("harbor-venv"),
    };
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let problem = if !(dir.join("bin/harbor").is_file()
        && dir.join("bin/git-ledger-harbor").is_file())
    {
        Some(format!(
            "harbor is not installed: no venv with harbor and git-ledger-harbor at {} (build it with .ci/harbor-venv.sh)",
            dir.display()
        ))
    } else if !root || which("unshare").is_none() || which("chroot").is_none() {
        Some("the tests' Harbor environment needs root, unshare and chroot".to_owned())
    } else {
        None
    };
    match problem {
        None => Some(dir),
        Some(msg) => {
            let msg = format!("{msg}; the real Harbor runs cannot run");
            if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
                panic!("{msg}");
            }
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
            None
        }
    }
}

macro_rules! need_venv {
    () => {
        match venv() {
            Some(v) => v,
            None => return,
        }
    };
}

/// The shared tasks' Harbor digests, computed by the plugin's draft generator (Harbor's own
/// packager over the committed tree).
fn drafted_tasks(venv: &Path, h: &Harness, names: &[&str]) -> Vec<Value> {
    let out = Command::new(venv.join("bin/git-ledger-harbor"))
        .args([
            "draft",
            "tasks",
            "--agent",
            "oracle",
            "--limits",
            r#"{"agent_seconds": null, "verifier_seconds": null}"#,
        ])
        .current_dir(h.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    all.into_iter()
        .filter(|t| names.contains(&t["harbor"]["task"].as_str().unwrap()))
        .collect()
}

/// A scratch harness whose declaration's tasks come from the draft generator.
fn harness(venv: &Path, names: &[&str], repetitions: u64) -> Harness {
    // First a harness to run the draft generator in, then the real one from its tasks (the
    // tasks' trees are the same, so are the digests).
    let probe = Harness::new(
        vec![task(
            "hello-file",
            &format!("sha256:{}", "0".repeat(64)),
            "oracle",
            "fixture",
        )],
        1,
    );
    let tasks = drafted_tasks(venv, &probe, names);
    assert_eq!(tasks.len(), names.len(), "{tasks:?}");
    Harness::new(tasks, repetitions)
}

/// Run Harbor in the harness (`harbor <args>`), offline.
fn harbor(
    venv: &Path,
    h: &Harness,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut cmd = Command::new(venv.join("bin").join(program));
    crate::common::pin_env(&mut cmd);
    cmd.args(args)
        .current_dir(h.path())
        .env("PYTHONPATH", project_root().join("tests/harbor"))
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("GIT_LEDGER", bin())
        .env("PATH", path_with(venv))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run harbor")
}

fn path_with(venv: &Path) -> std::ffi::OsString {
    let mut p = std::ffi::OsString::from(venv.join("bin"));
    p.push(":");
    p.push(std::env::var_os("PATH").unwrap_or_default());
    p
}

fn run_ok(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} exited {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Harbor's own models reading a job (tests/harbor/read_trials.py).
fn harbors_reading(venv: &Path, job: &Path) -> Value {
    let out = Command::new(venv.join("bin/python"))
        .arg(project_root().join("tests/harbor/read_trials.py"))
        .arg(job)
        .output()
        .unwrap();
    run_ok(&out, "read_trials.py");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every filled row against Harbor's reading of its trial: the record, the digest, the agent,
/// the outcome by Harbor's error policy, the durations by Python's datetime.
fn check_against_harbor(h: &Harness, reading: &Value, job_log_retried: &[&str]) {
    let decl = h.declaration();
    for row in h.rows() {
        if row["native_outcome"] == "DEFERRED" {
            continue;
        }
        let id = row["native_record"]["id"].as_str().unwrap();
        let (job_id, trial) = id.split_once('/').unwrap();
        let t = &reading["trials"][trial];
        let what = format!("row {} (trial {trial})", row["schedule_id"]);
        assert_eq!(t["job_id"], job_id, "{what}");
        assert_eq!(row["native_record"]["sha256"], t["sha256"], "{what}");
        let task = decl["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == row["task_id"])
            .unwrap();
        assert_eq!(task["harbor"]["task"], t["task_name"], "{what}");
        assert_eq!(
            task["harbor"]["digest"], t["digest"],
            "{what}: the draft generator's digest is the lock's"
        );
        assert_eq!(row["option_deviations"], json!([]), "{what}");
        let want = if job_log_retried.contains(&trial)
            || (t["exception_type"].is_string() && t["policy_reward_valid"] == false)
        {
            "ERROR"
        } else {
            match t["rewards"]["reward"].as_f64() {
                None => "UNSCORED",
                Some(x) if x >= 1.0 => "PASS",
                Some(_) => "FAIL",
            }
        };
        assert_eq!(row["native_outcome"], want, "{what}");
        if want != "ERROR" || !job_log_retried.contains(&trial) {
            let close = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() < 1e-6,
                _ => a.is_null() && b.is_null(),
            };
            assert!(
                close(&row["elapsed_seconds"], &t["elapsed"]),
                "{what}: {} vs {}",
                row["elapsed_seconds"],
                t["elapsed"]
            );
            if let Some(s) = row["spent_budget"].get("agent_seconds") {
                assert!(close(s, &t["agent_seconds"]), "{what}");
            }
            if let Some(s) = row["spent_budget"].get("verifier_seconds") {
                assert!(close(s, &t["verifier_seconds"]), "{what}");
            }
        }
    }
}

#[test]
fn passing_failing_and_timed_out_trials_of_a_k2_job_import_as_harbor_reads_them() {
    let venv = need_venv!();
    let h = harness(&venv, &["hello-file", "wrong-answer", "slow-verifier"], 2);
    let ran = harbor(
        &venv,
        &h,
        "harbor",
        &[
            "run",
            "-p",
            "tasks",
            "-a",
            "oracle",
            "-e",
            "chroot_env:ChrootEnvironment",
            "-k",
            "2",
            "-o",
            "jobs",
            "--job-name",
            "k2",
            "-q",
            "-y",
        ],
        &[],
    );
    run_ok(&ran, "harbor run");
    let job = h.path().join("jobs/k2");
    let out = h.import(&["--harbor", "jobs/k2", "--revision", "HEAD"]);
    out.ok();
    assert!(out.stdout.contains("imported 6 attempts"), "{}", out.stdout);
    let reading = harbors_reading(&venv, &job);
    assert_eq!(reading["n_attempts"], 2);
    check_against_harbor(&h, &reading, &[]);
    check_rows_against_results(&h, &job, 2);
    let outcomes: Vec<String> = h
        .rows()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["schedule_id"].as_str().unwrap(),
                r["native_status"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        outcomes.contains(&"harbor/slow-verifier/01 exception:VerifierTimeoutError".to_owned()),
        "{outcomes:?}"
    );
    assert_eq!(h.row("harbor/hello-file/02")["native_outcome"], "PASS");
    assert_eq!(h.row("harbor/wrong-answer/01")["native_outcome"], "FAIL");
    // Again: nothing new.
    let again = h.import(&["--harbor", "jobs/k2"]);
    again.ok();
    assert!(
        again.stdout.contains("imported 0 attempts"),
        "{}",
        again.stdout
    );
}

fn a_retried_trial_through_the_plugin_keeps_its_first_attempt_and_the_job_imports_after(
    prefix: &str,
) {
    let venv = need_venv!();
    let h = harness(&venv, &["hello-file", "wrong-answer"], 2);
    let d = h.path();
    crate::common::use_prefix(d, prefix);
    ledger(d, &["init", "campaign.json"]).ok();
    let marks = tempfile::tempdir().unwrap();
    let ran = harbor(
        &venv,
        &h,
        "git-ledger-harbor",
        &[
            "run",
            "campaign.json",
            "--ref",
            "harbor-small",
            "--",
            "-p",
            "tasks",
            "-i",
            "hello-file",
            "-i",
            "wrong-answer",
            "-a",
            "oracle",
            "-e",
            "chroot_env:FlakyChrootEnvironment",
            "-k",
            "2",
            "-r",
            "1",
            "-o",
            "jobs",
            "--job-name",
            "flaky",
            "-q",
            "-y",
        ],
        &[
            ("GIT_LEDGER_TEST_FLAKY", "hello-file"),
            ("GIT_LEDGER_TEST_FLAKY_DIR", marks.path().to_str().unwrap()),
        ],
    );
    let err = String::from_utf8_lossy(&ran.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
    run_ok(&ran, "git-ledger-harbor run");
    // Harbor deleted both first attempts of hello-file and says nothing failed.
    let job = d.join("jobs/flaky");
    let jr: Value =
        serde_json::from_slice(&std::fs::read(job.join("result.json")).unwrap()).unwrap();
    assert_eq!(jr["stats"]["n_errored_trials"], 0);
    assert_eq!(jr["stats"]["n_retries"], 2);
    // The plugin imported each first attempt before the deletion; the retries were refused.
    assert_eq!(err.matches(": refused (exit 2)").count(), 2, "{err}");
    assert!(err.contains("already holds an attempt"), "{err}");
    assert!(
        stdout.contains("the ledger holds this trial's first attempt"),
        "{stdout}"
    );
    let show = |sid: &str| -> Value {
        let r = ledger(d, &["show", "--row", sid]);
        r.ok();
        serde_json::from_str(&r.stdout).unwrap()
    };
    let hello_trials = trials(&job, "hello-file");
    assert_eq!(hello_trials.len(), 2);
    for rep in ["01", "02"] {
        let r = show(&format!("harbor/hello-file/{rep}"));
        assert_eq!(r["native_outcome"], "ERROR", "{r}");
        assert_eq!(r["native_status"], "exception:EnvironmentStartTimeoutError");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .starts_with("EnvironmentStartTimeoutError: "),
            "{r}"
        );
        assert_eq!(r["source_revision"], h.head, "HEAD at job start");
        // The ledger holds the deleted first attempt: its record is not the surviving file.
        let trial = r["native_record"]["id"]
            .as_str()
            .unwrap()
            .split_once('/')
            .unwrap()
            .1
            .to_owned();
        let surviving = std::fs::read(job.join(&trial).join("result.json")).unwrap();
        assert_ne!(
            r["native_record"]["sha256"],
            git_ledger::sha256_hex(&surviving)
        );
    }
    for rep in ["01", "02"] {
        let r = show(&format!("harbor/wrong-answer/{rep}"));
        assert_eq!(r["native_outcome"], "FAIL", "{r}");
    }
    ledger(d, &["verify"]).ok();
    git(
        d,
        &["rev-parse", "--verify", &format!("{prefix}harbor-small")],
    );
    // The same job imported afterwards without the plugin, into a new ledger: job.log's rule.
    let fresh = Harness::new(
        h.declaration()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t["definition"] = json!({"path": t["definition"]["path"]});
                t
            })
            .collect(),
        2,
    );
    crate::common::use_prefix(fresh.path(), prefix);
    crate::harbor::copy_dir(&job, &fresh.path().join("jobs/flaky"));
    fresh.import(&["--harbor", "jobs/flaky"]).ok();
    let reading = harbors_reading(&venv, &fresh.path().join("jobs/flaky"));
    let names: Vec<String> = hello_trials
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    check_against_harbor(&fresh, &reading, &names);
    check_rows_against_results(&fresh, &fresh.path().join("jobs/flaky"), 2);
    assert!(fresh.row("harbor/hello-file/01")["reason"]
        .as_str()
        .unwrap()
        .contains("Harbor deleted the first attempt"));
}

/// Wait until `pred` holds, or panic after `secs`.
fn wait_for(secs: u64, what: &str, mut pred: impl FnMut() -> bool) {
    let start = Instant::now();
    while !pred() {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_interrupted_job_resumed_imports_once_and_its_rerun_is_refused_as_a_retry() {
    let venv = need_venv!();
    // A task whose oracle takes a while, beside a quick one.
    let tasks = tempfile::tempdir().unwrap();
    crate::harbor::copy_dir(
        &crate::harbor::shared().join("tasks/hello-file"),
        &tasks.path().join("hello-file"),
    );
    crate::harbor::copy_dir(
        &crate::harbor::shared().join("tasks/hello-file"),
        &tasks.path().join("sleeper"),
    );
    std::fs::write(
        tasks.path().join("sleeper/solution/solve.sh"),
        "#!/bin/bash\nsleep 8\necho hello > /app/hello.txt\n",
    )
    .unwrap();
    let probe = Harness::with_tasks_dir(
        tasks.path(),
        vec![task(
            "hello-file",
            &format!("sha256:{}", "0".repeat(64)),
            "oracle",
            "fixture",
        )],
        1,
    );
    let drafted = drafted_tasks(&venv, &probe, &["hello-file", "sleeper"]);
    let h = Harness::with_tasks_dir(tasks.path(), drafted, 2);
    let d = h.path().to_path_buf();
    let mut cmd = Command::new(venv.join("bin/harbor"));
    cmd.args([
        "run",
        "-p",
        "tasks",
        "-a",
        "oracle",
        "-e",
        "chroot_env:ChrootEnvironment",
        "-k",
        "2",
        "-o",
        "jobs",
        "--job-name",
        "resumed",
        "-q",
        "-y",
    ])
    .current_dir(&d)
    .env("PYTHONPATH", project_root().join("tests/harbor"))
    .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let job = d.join("jobs/resumed");
    wait_for(120, "the quick trials' results", || {
        job.is_dir()
            && trials(&job, "hello-file")
                .iter()
                .filter(|t| t.join("result.json").is_file())
                .count()
                == 2
    });
    // Interrupt the job while the sleepers run.
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let before = h.import(&["--harbor", "jobs/resumed"]);
    before.ok();
    let hello = h.row("harbor/hello-file/01");
    assert_eq!(hello["native_outcome"], "PASS");
    // What Harbor wrote of the interrupted sleepers (a CancelledError result, or none).
    let cancelled = trials(&job, "sleeper")
        .iter()
        .filter(|t| t.join("result.json").is_file())
        .count();
    let resumed = harbor(
        &venv,
        &h,
        "harbor",
        &["job", "resume", "-p", "jobs/resumed", "-y"],
        &[],
    );
    run_ok(&resumed, "harbor job resume");
    let reading = harbors_reading(&venv, &job);
    assert_eq!(reading["trials"].as_object().unwrap().len(), 4);
    let after = h.import(&["--harbor", "jobs/resumed"]);
    if cancelled > 0 {
        // The cancelled attempts were rows; Harbor's rerun of them (new trials of the same
        // task) is an attempt beyond the schedule: a retry needs a new declared schedule.
        after.expect_code(2);
        assert!(
            after.stderr.contains("an unscheduled attempt"),
            "{}",
            after.stderr
        );
        assert_eq!(
            h.row("harbor/sleeper/01")["native_status"],
            "exception:CancelledError"
        );
    } else {
        after.ok();
        check_against_harbor(&h, &reading, &[]);
    }
    assert_eq!(
        h.row("harbor/hello-file/01"),
        hello,
        "the resumed job's finished trials are skipped"
    );
    // A new ledger of the resumed job: every trial once, as Harbor reads them.
    let fresh = Harness::with_tasks_dir(
        tasks.path(),
        h.declaration()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t["definition"] = json!({"path": t["definition"]["path"]});
                t
            })
            .collect(),
        2,
    );
    crate::harbor::copy_dir(&job, &fresh.path().join("jobs/resumed"));
    fresh.import(&["--harbor", "jobs/resumed"]).ok();
    check_against_harbor(
        &fresh,
        &harbors_reading(&venv, &fresh.path().join("jobs/resumed")),
        &[],
    );
    assert!(fresh.rows().iter().all(|r| r["native_outcome"] == "PASS"));
}

#[test]
fn the_plugin_command_refuses_to_run_when_not_ready() {
    let venv = need_venv!();
    let h = harness(&venv, &["hello-file"], 1);
    let d = h.path();
    // A modified task file: the working tree is not the declared revision's.
    std::fs::write(d.join("tasks/hello-file/instruction.md"), "changed\n").unwrap();
    let before = h.ledger_bytes();
    let ran = harbor(
        &venv,
        &h,
        "git-ledger-harbor",
        &[
            "run",
            "campaign.json",
            "--ledger",
            "ledger.json",
            "--",
            "-p",
            "tasks",
            "-a",
            "oracle",
            "-e",
            "chroot_env:ChrootEnvironment",
            "-o",
            "jobs",
            "--job-name",
            "never",
            "-q",
            "-y",
        ],
        &[],
    );
    assert_eq!(
        ran.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(String::from_utf8_lossy(&ran.stderr).contains("not ready"));
    assert!(!d.join("jobs/never").exists(), "harbor never ran");
    assert_eq!(before, h.ledger_bytes());
    // Committed, but not the declared revision: still refused.
    commit_all(d, "change the task");
    let ran = harbor(
        &venv,
        &h,
        "git-ledger-harbor",
        &[
            "run",
            "campaign.json",
            "--ledger",
            "ledger.json",
            "--",
            "-p",
            "tasks",
            "-a",
            "oracle",
            "-e",
            "chroot_env:ChrootEnvironment",
            "-o",
            "jobs",
            "--job-name",
            "never",
            "-q",
            "-y",
        ],
        &[],
    );
    assert_ne!(ran.status.code(), Some(0));
    assert!(!d.join("jobs/never").exists());
}

/// Six trials (2 tasks × `-k 3`) run at once (`-n 6`) and held at a barrier in the
/// environment's `stop()`, so that Harbor calls the plugin's six `TrialEvent.END` hooks at the
/// same moment: six imports race for one ledger, in file mode (its lock file) and in ref mode
/// (the ref's compare-and-swap). Every trial lands in its own row, none is lost or doubled.
/// File mode runs under the default prefix only: a ledger file does not depend on the prefix,
/// and each run of this test is a Harbor job of its own.
fn concurrent_trials_through_the_plugin_each_land_once(prefix: &str) {
    let venv = need_venv!();
    let modes: &[&str] = if prefix == crate::common::PREFIXES[0] {
        &["file", "ref"]
    } else {
        &["ref"]
    };
    for &mode in modes {
        let h = harness(&venv, &["hello-file", "wrong-answer"], 3);
        let d = h.path();
        crate::common::use_prefix(d, prefix);
        let target: Vec<&str> = if mode == "ref" {
            ledger(d, &["init", "campaign.json"]).ok();
            vec!["--ref", "harbor-small"]
        } else {
            vec!["--ledger", "ledger.json"]
        };
        let marks = tempfile::tempdir().unwrap();
        let mut args = vec!["run", "campaign.json"];
        args.extend(&target);
        args.extend([
            "--",
            "-p",
            "tasks",
            "-i",
            "hello-file",
            "-i",
            "wrong-answer",
            "-a",
            "oracle",
            "-e",
            "chroot_env:BarrierChrootEnvironment",
            "-k",
            "3",
            "-n",
            "6",
            "-o",
            "jobs",
            "--job-name",
            "wide",
            "-q",
            "-y",
        ]);
        let ran = harbor(
            &venv,
            &h,
            "git-ledger-harbor",
            &args,
            &[
                ("GIT_LEDGER_TEST_BARRIER", "6"),
                (
                    "GIT_LEDGER_TEST_BARRIER_DIR",
                    marks.path().to_str().unwrap(),
                ),
            ],
        );
        run_ok(&ran, &format!("git-ledger-harbor run ({mode} mode)"));
        let err = String::from_utf8_lossy(&ran.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
        // All six reached the barrier together; each hook's import succeeded on its own.
        assert_eq!(std::fs::read_dir(marks.path()).unwrap().count(), 6);
        assert_eq!(
            err.matches(": imported (exit 0)").count(),
            6,
            "{mode}: {err}"
        );
        assert!(!err.contains("FAILED"), "{mode}: {err}");
        // The job import afterwards finds every trial already there.
        assert!(stdout.contains("imported 0 attempts"), "{mode}: {stdout}");
        let rows: Vec<Value> = if mode == "ref" {
            ledger(d, &["verify"]).ok();
            git(
                d,
                &["rev-parse", "--verify", &format!("{prefix}harbor-small")],
            );
            let r = ledger(d, &["show"]);
            r.ok();
            serde_json::from_str::<Value>(&r.stdout).unwrap()["rows"]
                .as_array()
                .unwrap()
                .clone()
        } else {
            h.rows()
        };
        let mut records: Vec<String> = rows
            .iter()
            .map(|r| {
                assert_ne!(r["native_outcome"], "DEFERRED", "{mode}: {r}");
                r["native_record"]["id"].as_str().unwrap().to_owned()
            })
            .collect();
        records.sort();
        records.dedup();
        assert_eq!(records.len(), 6, "{mode}: six trials, six records");
        let job = d.join("jobs/wide");
        assert_eq!(
            trials(&job, "hello-file").len() + trials(&job, "wrong-answer").len(),
            6
        );
        if mode == "file" {
            check_against_harbor(&h, &harbors_reading(&venv, &job), &[]);
            check_rows_against_results(&h, &job, 3);
            assert!(!d.join("ledger.json.lock").exists());
        }
    }
}

/// `git-ledger-harbor draft` on a dataset (`dataset.toml` and its task directories) and on one
/// task directory: the digests are the ones Harbor's own `harbor sync` writes into the
/// manifest, of the committed tree (a change not committed does not count); a stale manifest,
/// a registry task with no directory here and a path that holds no task are refused.
#[test]
fn the_draft_generator_writes_harbors_own_digests_for_a_dataset_and_a_task() {
    let venv = need_venv!();
    let dir = crate::common::new_repo();
    let d = dir.path();
    for t in ["hello-file", "wrong-answer"] {
        crate::harbor::copy_dir(
            &crate::harbor::shared().join("tasks").join(t),
            &d.join("ds").join(t),
        );
        let toml = d.join("ds").join(t).join("task.toml");
        let mut text = std::fs::read_to_string(&toml).unwrap();
        text.push_str(&format!("\n[task]\nname = \"gl/{t}\"\n"));
        std::fs::write(&toml, text).unwrap();
    }
    let zero = format!("sha256:{}", "0".repeat(64));
    let manifest = format!(
        "[dataset]\nname = \"gl/small\"\n\n[[tasks]]\nname = \"gl/hello-file\"\ndigest = \"{zero}\"\n\n[[tasks]]\nname = \"gl/wrong-answer\"\ndigest = \"{zero}\"\n"
    );
    crate::common::write(d, "ds/dataset.toml", &manifest);
    commit_all(d, "a dataset, its digests not synced");
    let draft = |path: &str| {
        let mut c = Command::new(venv.join("bin/git-ledger-harbor"));
        c.args(["draft", path, "--agent", "oracle"])
            .current_dir(d)
            .env("PATH", path_with(&venv))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    // Refused: the manifest's digests are not the committed tasks'.
    let out = draft("ds");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("ds/dataset.toml pins gl/hello-file at {zero}"))
            && err.contains("run `harbor sync`"),
        "{err}"
    );
    assert!(!err.contains("Traceback"), "{err}");
    // Harbor's own sync writes the digests; the draft's are the same.
    let synced = Command::new(venv.join("bin/harbor"))
        .args(["sync", "ds"])
        .current_dir(d)
        .env("PATH", path_with(&venv))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    run_ok(&synced, "harbor sync");
    commit_all(d, "harbor sync");
    let text = std::fs::read_to_string(d.join("ds/dataset.toml")).unwrap();
    let out = draft("ds");
    run_ok(&out, "draft ds");
    let tasks: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tasks.len(), 2);
    for (t, name) in tasks.iter().zip(["hello-file", "wrong-answer"]) {
        assert_eq!(t["id"], format!("harbor/{name}"));
        assert_eq!(t["harbor"]["task"], format!("gl/{name}"));
        assert_eq!(t["definition"]["path"], format!("ds/{name}"));
        let digest = t["harbor"]["digest"].as_str().unwrap();
        assert_ne!(digest, zero);
        assert!(
            text.contains(&format!("name = \"gl/{name}\"\ndigest = \"{digest}\"")),
            "harbor sync's {name}: {text}"
        );
        assert_eq!(t["limits"], json!({"agent_seconds": 60.0}));
    }
    // One task directory: the same block.
    let out = draft("ds/hello-file");
    run_ok(&out, "draft ds/hello-file");
    let one: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(one, tasks[..1]);
    // A change not committed does not count: HEAD's tree is hashed.
    std::fs::write(d.join("ds/hello-file/instruction.md"), "changed\n").unwrap();
    let out = draft("ds/hello-file");
    run_ok(&out, "draft of a changed work tree");
    assert_eq!(
        serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap(),
        one
    );
    git(d, &["checkout", "--", "ds/hello-file/instruction.md"]);
    // A registry task, with no directory in the dataset: refused.
    std::fs::write(
        d.join("ds/dataset.toml"),
        format!("{text}\n[[tasks]]\nname = \"gl/elsewhere\"\ndigest = \"{zero}\"\n"),
    )
    .unwrap();
    commit_all(d, "a registry task");
    let out = draft("ds");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("task gl/elsewhere is not one of the dataset's task directories"),
        "{err}"
    );
    // Nothing Harbor would run: refused.
    crate::common::write(d, "empty/README", "nothing\n");
    commit_all(d, "empty");
    let out = draft("empty");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither a Harbor task directory"));
}

crate::common::under_both_prefixes!(
    a_retried_trial_through_the_plugin_keeps_its_first_attempt_and_the_job_imports_after,
    concurrent_trials_through_the_plugin_each_land_once,
);
