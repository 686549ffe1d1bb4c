//! Real Inspect AI runs imported with the real binary: each test runs `inspect eval` (from the
//! venv `.ci/inspect-venv.sh` builds) on the tasks of tests/inspect/ inside a scratch Git
//! repository, offline, with Inspect's scripted `mockllm/model`; declares the campaign (a draft
//! for the scenario's samples × epochs, pinned with `git ledger pin`), imports what Inspect
//! wrote and checks every row and every refusal as inspect.md says. What the tests know about
//! each log (sample uuids, members, the SHA-256 of each sample's bytes) is read by Python
//! (tests/inspect/samples.py), not by git-ledger's own reader.
//!
//! Without the venv the tests skip loudly; under CI they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::{bin, commit_all, git, ledger, pin_env, project_root, write};

/// The venv with inspect-ai: `$GIT_LEDGER_INSPECT_VENV`, else `<target dir>/inspect-venv`
/// (the target dir is the one the binary under test was built in). None (skipped loudly, or a
/// failure under CI) when it is missing.
fn venv() -> Option<PathBuf> {
    let dir = match std::env::var_os("GIT_LEDGER_INSPECT_VENV") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => bin()
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .join("inspect-venv"),
    };
    if dir.join("bin/inspect").is_file() && dir.join("bin/python").is_file() {
        Some(dir)
    } else {
        let msg = format!(
            "inspect-ai is not installed: no venv at {} (build it with .ci/inspect-venv.sh); the real Inspect runs cannot run",
            dir.display()
        );
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
            panic!("{msg}");
        }
        // Straight to the process's stderr: the harness captures a passing test's eprintln!.
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
        None
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

const SAMPLES: [&str; 3] = ["a", "b", "7"];

/// The dataset id of a sample name (`7` is an integer id).
fn sample_id(name: &str) -> Value {
    name.parse::<u64>()
        .map_or_else(|_| json!(name), |n| json!(n))
}

/// A scratch harness repository holding tests/inspect/ as `evals/`, and a ledger directory
/// outside it for the declaration and ledger files (so that they never make the tree dirty).
struct Scratch {
    repo: tempfile::TempDir,
    files: tempfile::TempDir,
    venv: PathBuf,
}

/// A finished Inspect run: its exit status and what it printed.
struct Ran {
    code: i32,
    /// Standard error, then standard output.
    stderr: String,
    /// Standard output alone.
    stdout: String,
}

impl Scratch {
    fn new(venv: PathBuf) -> Scratch {
        let repo = crate::common::new_repo();
        let d = repo.path();
        let src = project_root().join("tests/inspect");
        for f in ["tasks.py", "samples.jsonl"] {
            write(
                d,
                &format!("evals/{f}"),
                std::fs::read(src.join(f)).unwrap(),
            );
        }
        write(d, ".gitignore", "logs/\n__pycache__/\n");
        write(
            d,
            "h/profile.json",
            r#"{"name": "scripted", "provider": "mockllm", "joint_planning": false,
 "roles": {"default": {"model": "mockllm/model", "effort": null}}, "extra_options": []}
"#,
        );
        write(d, "h/policy.md", "Scripted models only: no live spend.\n");
        write(d, "h/tools/README.md", "The runner is `inspect eval`.\n");
        commit_all(d, "harness");
        Scratch {
            repo,
            files: tempfile::tempdir().unwrap(),
            venv,
        }
    }

    fn dir(&self) -> &Path {
        self.repo.path()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.files.path().join(name)
    }

    fn s(&self, name: &str) -> String {
        self.file(name).to_str().unwrap().to_owned()
    }

    /// The venv's Python version (the runtime identity's `python`).
    fn python_version(&self) -> String {
        let out = Command::new(self.venv.join("bin/python"))
            .args(["-c", "import platform; print(platform.python_version())"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// What the declarations require of the runtime: the venv's Python and psutil, and
    /// inspect_ai 0.3.285 (as the native provider and as a package).
    fn runtime_requirements(&self) -> Value {
        let out = Command::new(self.venv.join("bin/python"))
            .args(["-c", "import psutil; print(psutil.__version__)"])
            .output()
            .unwrap();
        let psutil = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        json!({
            "python": self.python_version(),
            "psutil": psutil,
            "native_provider": "inspect_ai 0.3.285",
            "packages": {"inspect_ai": "0.3.285"},
        })
    }

    /// A runtime identity of the venv: its Python, inspect_ai and its `pip freeze`.
    fn runtime_identity(&self) -> PathBuf {
        let out = Command::new(self.venv.join("bin/python"))
            .args(["-m", "pip", "freeze", "--exclude-editable"])
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .output()
            .unwrap();
        let deps: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.contains("=="))
            .map(str::to_owned)
            .collect();
        assert!(deps.iter().any(|d| d == "inspect_ai==0.3.285"), "{deps:?}");
        let path = self.file("runtime.json");
        let mut v = self.runtime_requirements();
        v["dependencies"] = json!(deps);
        std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        path
    }

    /// Write the draft declaring `samples` of Inspect task `task` × `repetitions`, pin it to
    /// HEAD and write the template ledger; returns the pinned declaration's path.
    fn declare(
        &self,
        name: &str,
        task: &str,
        samples: &[&str],
        repetitions: u32,
        limits: Value,
    ) -> PathBuf {
        self.declare_scored(name, task, "includes", samples, repetitions, limits)
    }

    /// [`Scratch::declare`] with another verdict scorer.
    fn declare_scored(
        &self,
        name: &str,
        task: &str,
        scorer: &str,
        samples: &[&str],
        repetitions: u32,
        limits: Value,
    ) -> PathBuf {
        self.declare_full(name, task, scorer, "fixture", samples, repetitions, limits)
    }

    /// [`Scratch::declare`] with a scorer and an evidence kind.
    #[allow(clippy::too_many_arguments)]
    fn declare_full(
        &self,
        name: &str,
        task: &str,
        scorer: &str,
        evidence: &str,
        samples: &[&str],
        repetitions: u32,
        limits: Value,
    ) -> PathBuf {
        let rules = git_ledger::declaration::ACCEPTANCE_RULES;
        let acceptance: serde_json::Map<String, Value> =
            rules.iter().map(|r| (r.to_string(), true.into())).collect();
        let tasks: Vec<Value> = samples
            .iter()
            .map(|s| {
                json!({
                    "id": format!("inspect/{name}-{s}"),
                    "kind": "inspect",
                    "evidence": evidence,
                    "expects": "completion",
                    "definition": {"path": "evals"},
                    "inspect": {"task": task, "sample_id": sample_id(s), "scorer": scorer, "pass": ["C"]},
                    "limits": limits,
                    "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"],
                })
            })
            .collect();
        let draft = json!({
            "format": "campaign-declaration/1",
            "id": name,
            "repetitions": repetitions,
            "profile": {"source": {"path": "h/profile.json"}},
            "policy_files": [{"path": "h/policy.md"}],
            "runner_tools": {"path": "h/tools"},
            "runtime_requirements": self.runtime_requirements(),
            "acceptance": acceptance,
            "attempt_fields": git_ledger::declaration::STANDARD_FIELDS,
            "tasks": tasks,
        });
        let draft_path = self.file(&format!("{name}.draft.json"));
        std::fs::write(&draft_path, serde_json::to_vec_pretty(&draft).unwrap()).unwrap();
        let decl = self.file(&format!("{name}.json"));
        ledger(
            self.dir(),
            &[
                "pin",
                draft_path.to_str().unwrap(),
                "-o",
                decl.to_str().unwrap(),
            ],
        )
        .ok();
        let t = ledger(self.dir(), &["template", decl.to_str().unwrap()]);
        t.ok();
        std::fs::write(self.file(&format!("{name}.ledger.json")), &t.stdout).unwrap();
        decl
    }

    /// Run `inspect <args>` in the repository, offline; the hook stays off unless `env` sets it.
    fn inspect(&self, args: &[&str], env: &[(&str, &str)]) -> Ran {
        self.program("bin/inspect", args, env)
    }

    /// Run the venv's `program` in the repository, offline, without the caller's GIT_LEDGER_*
    /// and INSPECT_* variables; `env` adds some.
    fn program(&self, program: &str, args: &[&str], env: &[(&str, &str)]) -> Ran {
        self.program_in(self.dir(), program, args, env)
    }

    /// [`Scratch::program`] in another directory (a worktree of the repository).
    fn program_in(&self, dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut cmd = Command::new(self.venv.join(program));
        pin_env(&mut cmd);
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("GIT_LEDGER")
                || k.to_string_lossy().starts_with("INSPECT_")
            {
                cmd.env_remove(k);
            }
        }
        cmd.env("HF_HUB_OFFLINE", "1")
            .env("INSPECT_DISPLAY", "none")
            .env("INSPECT_LOG_LEVEL", "warning")
            .env("COLUMNS", "200")
            .env_remove("PYTEST_CURRENT_TEST")
            .current_dir(dir)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        let out = cmd.output().expect("run inspect");
        Ran {
            code: out.status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        }
    }

    /// Run `git-ledger-inspect <args>` (the package's command, from the venv) in the
    /// repository, offline, with `GIT_LEDGER` naming the binary under test.
    fn tool(&self, args: &[&str]) -> Ran {
        self.program(
            "bin/git-ledger-inspect",
            args,
            &[("GIT_LEDGER", bin().to_str().unwrap())],
        )
    }

    /// `inspect eval evals/tasks.py@<task> --log-dir <logs> <extra>`; must succeed.
    fn eval(&self, task: &str, logs: &str, extra: &[&str]) -> PathBuf {
        let before = self.logs(logs);
        let spec = format!("evals/tasks.py@{task}");
        let mut args = vec!["eval", spec.as_str(), "--log-dir", logs];
        args.extend_from_slice(extra);
        let r = self.inspect(&args, &[]);
        assert_eq!(r.code, 0, "inspect {args:?} failed:\n{}", r.stderr);
        self.new_log(logs, &before)
    }

    /// The log files in `logs` (relative to the repository), sorted.
    fn logs(&self, logs: &str) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.dir().join(logs))
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        // eval-set also writes its manifests (eval-set.json, logs.json) beside the logs.
        v.retain(|p| {
            p.extension().is_some_and(|e| e == "eval" || e == "json")
                && !p.ends_with("eval-set.json")
                && !p.ends_with("logs.json")
        });
        v.sort();
        v
    }

    /// The one log in `logs` that is not in `before`.
    fn new_log(&self, logs: &str, before: &[PathBuf]) -> PathBuf {
        let now: Vec<PathBuf> = self
            .logs(logs)
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        assert_eq!(now.len(), 1, "wanted one new log in {logs}: {now:?}");
        now.into_iter().next().unwrap()
    }

    /// What Python reads in a log: one {id, epoch, uuid, member, sha256} per sample.
    fn samples(&self, log: &Path) -> Vec<Value> {
        self.try_samples(log)
            .unwrap_or_else(|e| panic!("Python cannot read {}: {e}", log.display()))
    }

    fn try_samples(&self, log: &Path) -> Result<Vec<Value>, String> {
        let out = Command::new(self.venv.join("bin/python"))
            .arg(project_root().join("tests/inspect/samples.py"))
            .arg(log)
            .output()
            .unwrap();
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        Ok(v.as_array().cloned().unwrap_or_default())
    }

    /// File-mode import of `logs` into the `name` campaign's ledger file.
    fn import(&self, name: &str, logs: &[&Path], extra: &[&str]) -> crate::common::Run {
        let decl = self.s(&format!("{name}.json"));
        let led = self.s(&format!("{name}.ledger.json"));
        let mut args = vec!["import", decl.as_str(), led.as_str()];
        for l in logs {
            args.push("--inspect");
            args.push(l.to_str().unwrap());
        }
        args.extend_from_slice(extra);
        ledger(self.dir(), &args)
    }

    fn ledger_bytes(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.file(&format!("{name}.ledger.json"))).unwrap()
    }

    /// The `name` campaign's rows by schedule id.
    fn rows(&self, name: &str) -> serde_json::Map<String, Value> {
        let v: Value = serde_json::from_slice(&self.ledger_bytes(name)).unwrap();
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["schedule_id"].as_str().unwrap().to_owned(), r.clone()))
            .collect()
    }

    /// Relative path of a log inside the repository, as evidence refs name it.
    fn rel(&self, log: &Path) -> String {
        log.strip_prefix(self.dir())
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned()
    }
}

/// The schedule id of sample `s` of campaign `name` at `epoch`.
fn sid(name: &str, s: &str, epoch: u32) -> String {
    format!("inspect/{name}-{s}/{epoch:02}")
}

/// The Python-read entry of sample `s` at `epoch`.
fn entry<'a>(samples: &'a [Value], s: &str, epoch: u32) -> &'a Value {
    samples
        .iter()
        .find(|e| e["id"] == sample_id(s) && e["epoch"] == epoch)
        .unwrap_or_else(|| panic!("no sample {s} epoch {epoch} in {samples:?}"))
}

/// The imported rows of an `import --json` output, by schedule id.
fn imported(run: &crate::common::Run) -> serde_json::Map<String, Value> {
    run.json()["imported"]
        .as_array()
        .unwrap_or_else(|| panic!("no imported list: {}", run.stdout))
        .iter()
        .map(|r| (r["schedule_id"].as_str().unwrap().to_owned(), r.clone()))
        .collect()
}

/// The usage one scripted generate call records (tests/inspect/tasks.py `echo`) × `calls`.
fn usage(calls: u64) -> Value {
    json!({"mockllm/model": {
        "input_tokens": 3 * calls, "output_tokens": calls,
        "total_tokens": 4 * calls, "total_cost": 0.002 * calls as f64,
    }})
}

/// The columns every imported row of these scripted runs shares.
#[track_caller]
fn assert_common(row: &Value, log_ref: &str, e: &Value) {
    assert_eq!(row["evidence"], "fixture");
    assert_eq!(row["runner_options"], Value::Null);
    assert_eq!(
        row["actual_models_and_efforts"],
        json!({"provider": "mockllm", "roles": {"default": {"model": "mockllm/model", "effort": null}}})
    );
    assert_eq!(
        row["evidence_refs"],
        json!([format!("{log_ref}#{}", e["member"].as_str().unwrap())])
    );
    assert_eq!(
        row["native_record"],
        json!({"kind": "inspect", "id": e["uuid"], "sha256": e["sha256"]})
    );
    assert_eq!(row["interventions_decision_or_repair"], json!([]));
}

/// A PASS or FAIL row of one scripted generate call.
#[track_caller]
fn assert_scored(row: &Value, outcome: &str, reason: Value) {
    assert_eq!(row["native_outcome"], outcome, "{row:#}");
    assert_eq!(row["native_status"], "completed");
    assert_eq!(row["reason"], reason);
    assert_eq!(
        row["oracle_checks"],
        json!([{"name": "includes", "ok": outcome == "PASS"}])
    );
    assert_eq!(row["usage"], usage(1));
    assert_eq!(row["estimated_usd"], json!(0.002));
    assert!(row["elapsed_seconds"].as_f64().unwrap() > 0.0, "{row:#}");
}

/// An ERROR row: no verdict, no checks, no spend but the messages.
#[track_caller]
fn assert_error(row: &Value, reason: &str) {
    assert_eq!(row["native_outcome"], "ERROR", "{row:#}");
    assert_eq!(row["native_status"], "error");
    assert_eq!(row["reason"], reason);
    assert_eq!(row["oracle_checks"], Value::Null);
    assert_eq!(row["usage"], Value::Null);
    assert_eq!(row["estimated_usd"], Value::Null);
}

const B_ERROR: &str = r"RuntimeError('scripted failure of sample b\nsecond line')";

/// Passing and failing samples over 2 epochs, run at the pinned commit with a runtime
/// identity: every row as inspect.md maps it; the same log again is skipped; a second run of
/// the same samples is a retry and refused; an epoch beyond the repetitions is refused; an
/// undeclared sample is refused unless --skip-undeclared. Each refusal leaves the ledger file
/// byte-identical.
#[test]
fn two_epochs_of_passing_and_failing_samples() {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    let head = git(s.dir(), &["rev-parse", "HEAD"]);
    let limits = json!({"message_limit": 10, "token_limit": 1000});
    s.declare("echo", "echo_task", &SAMPLES, 2, limits);
    let log = s.eval(
        "echo_task",
        "logs",
        &[
            "--epochs",
            "2",
            "--message-limit",
            "10",
            "--token-limit",
            "1000",
        ],
    );
    let samples = s.samples(&log);
    assert_eq!(samples.len(), 6);
    let rt = s.runtime_identity();
    let r = s.import(
        "echo",
        &[&log],
        &["--runtime-identity", rt.to_str().unwrap(), "--json"],
    );
    r.ok();
    let out = imported(&r);
    assert_eq!(out.len(), 6, "{}", r.stdout);
    let rows = s.rows("echo");
    let log_ref = s.rel(&log);
    for epoch in [1, 2] {
        for name in SAMPLES {
            let id = sid("echo", name, epoch);
            let row = &rows[&id];
            assert_common(row, &log_ref, entry(&samples, name, epoch));
            assert_eq!(row["source_revision"], head.as_str(), "{row:#}");
            assert_eq!(row["option_deviations"], json!([]));
            assert_eq!(
                row["spent_budget"],
                json!({"message_limit": 2, "token_limit": 4})
            );
            assert_eq!(row["runtime_identity"]["packages"]["inspect_ai"], "0.3.285");
            let o = &out[&id];
            assert_eq!(o["native_status"], "completed");
            if name == "b" {
                assert_scored(row, "FAIL", json!("includes scored I: banana"));
                assert_eq!(o["outcome"], "ended_without_completing", "{o:#}");
            } else {
                assert_scored(row, "PASS", Value::Null);
                // Scripted, but every piece of evidence is complete: a verified fixture row.
                assert_eq!(o["outcome"], "verified_delivery", "{o:#}");
                assert_eq!(o["gaps"], json!([]));
            }
            assert!(
                o["notes"]
                    .to_string()
                    .contains("cannot prove that the pinned definition is what ran"),
                "{o:#}"
            );
        }
    }
    let filled = s.ledger_bytes("echo");

    // The same log again: every sample is already in the ledger from the same record.
    let again = s.import(
        "echo",
        &[&log],
        &["--runtime-identity", rt.to_str().unwrap(), "--json"],
    );
    again.ok();
    assert_eq!(again.json()["imported"], json!([]), "{}", again.stdout);
    let listed = again.json()["skipped"]["already_in_ledger"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(listed, 6, "{}", again.stdout);
    assert_eq!(s.ledger_bytes("echo"), filled);

    // A second run of the same samples: new records for filled rows, a retry. Refused.
    let rerun = s.eval(
        "echo_task",
        "logs",
        &[
            "--epochs",
            "2",
            "--message-limit",
            "10",
            "--token-limit",
            "1000",
        ],
    );
    let r = s.import("echo", &[&rerun], &[]);
    r.expect_code(2);
    assert!(r.stderr.contains("retry"), "{}", r.stderr);
    assert!(r.stderr.contains(&sid("echo", "a", 1)), "{}", r.stderr);
    assert_eq!(
        s.ledger_bytes("echo"),
        filled,
        "a refused import moved the ledger"
    );

    // Three epochs against 2 declared repetitions: epoch 3 is an unscheduled attempt.
    s.declare(
        "echo3",
        "echo_task",
        &SAMPLES,
        2,
        json!({"message_limit": 10}),
    );
    let three = s.eval(
        "echo_task",
        "logs3",
        &["--epochs", "3", "--message-limit", "10"],
    );
    let before = s.ledger_bytes("echo3");
    let r = s.import("echo3", &[&three], &[]);
    r.expect_code(2);
    assert!(r.stderr.contains("epoch 3"), "{}", r.stderr);
    assert_eq!(s.ledger_bytes("echo3"), before);

    // Declared live: a scripted (mockllm) model is fixture evidence and fills no live row.
    s.declare_full(
        "live",
        "echo_task",
        "includes",
        "live",
        &SAMPLES,
        2,
        json!({"message_limit": 10}),
    );
    let before = s.ledger_bytes("live");
    let r = s.import("live", &[&log], &[]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("mockllm (scripted) model is fixture evidence")
            && r.stderr
                .contains("row inspect/live-a/01: evidence: is \"fixture\""),
        "{}",
        r.stderr
    );
    assert_eq!(s.ledger_bytes("live"), before);

    // Sample "b" undeclared: refused, unless --skip-undeclared (then listed).
    s.declare(
        "ab",
        "echo_task",
        &["a", "7"],
        2,
        json!({"message_limit": 10}),
    );
    let before = s.ledger_bytes("ab");
    let r = s.import("ab", &[&log], &[]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("undeclared") || r.stderr.contains("no declared task"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("b_epoch_1"), "{}", r.stderr);
    assert_eq!(s.ledger_bytes("ab"), before);
    let r = s.import("ab", &[&log], &["--skip-undeclared", "--json"]);
    r.ok();
    assert_eq!(imported(&r).len(), 4);
    let undeclared = r.json()["skipped"]["undeclared"].clone();
    assert_eq!(undeclared.as_array().map_or(0, Vec::len), 2, "{}", r.stdout);
    assert!(undeclared.to_string().contains("b_epoch_2"), "{undeclared}");
}

/// A solver that raises: without retries the sample is ERROR with the error's first line; with
/// `--retry-on-error` the retry's result is not the attempt's: the row is the first try's
/// ERROR with no scores and no spend, and the output says the harness retried it.
#[test]
fn a_solver_that_raises_with_and_without_retry_on_error() {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    let limits = json!({"message_limit": 10, "token_limit": 1000});

    s.declare("raises", "raises", &SAMPLES, 2, limits.clone());
    let log = s.eval(
        "raises",
        "logs",
        &[
            "--epochs",
            "2",
            "--no-fail-on-error",
            "--message-limit",
            "10",
            "--token-limit",
            "1000",
        ],
    );
    let samples = s.samples(&log);
    let r = s.import("raises", &[&log], &["--json"]);
    r.ok();
    let out = imported(&r);
    let rows = s.rows("raises");
    for epoch in [1, 2] {
        let id = sid("raises", "b", epoch);
        let row = &rows[&id];
        assert_common(row, &s.rel(&log), entry(&samples, "b", epoch));
        assert_error(row, B_ERROR);
        // One message (the input); no usage, so no token spend.
        assert_eq!(
            row["spent_budget"],
            json!({"message_limit": 1, "token_limit": null})
        );
        assert!(row["elapsed_seconds"].as_f64().is_some());
        assert_eq!(out[&id]["outcome"], "error");
        for ok in ["a", "7"] {
            assert_scored(&rows[&sid("raises", ok, epoch)], "PASS", Value::Null);
        }
    }

    s.declare("once", "raises_once", &SAMPLES, 2, limits);
    let log = s.eval(
        "raises_once",
        "logs",
        &[
            "--epochs",
            "2",
            "--retry-on-error=2",
            "--message-limit",
            "10",
            "--token-limit",
            "1000",
        ],
    );
    let samples = s.samples(&log);
    let r = s.import("once", &[&log], &["--json"]);
    r.ok();
    let out = imported(&r);
    let rows = s.rows("once");
    for epoch in [1, 2] {
        let id = sid("once", "b", epoch);
        let row = &rows[&id];
        assert_common(row, &s.rel(&log), entry(&samples, "b", epoch));
        // The retry scored I ("banana"); the attempt is the first try's error.
        assert_error(row, B_ERROR);
        assert_eq!(row["elapsed_seconds"], Value::Null);
        assert_eq!(
            row["spent_budget"],
            json!({"message_limit": null, "token_limit": null})
        );
        assert_eq!(out[&id]["outcome"], "error");
        assert!(
            out[&id]["notes"]
                .to_string()
                .contains("the harness retried this sample"),
            "{:#}",
            out[&id]
        );
        assert_scored(&rows[&sid("once", "a", epoch)], "PASS", Value::Null);
        assert!(!out[&sid("once", "a", epoch)]["notes"]
            .to_string()
            .contains("retried"));
    }
    let text = s.import("once", &[&log], &[]);
    text.ok();
}

/// A message limit that fires: the sample is still scored, at `limit:message`, and its spend
/// (the number of messages) decides: within the declared limit it is verified; declared lower
/// than what the eval set, it is an option deviation and over the limit.
#[test]
fn a_message_limit_that_fires() {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    s.declare("lim", "limited", &SAMPLES, 1, json!({"message_limit": 4}));
    s.declare("tight", "limited", &SAMPLES, 1, json!({"message_limit": 3}));
    let log = s.eval("limited", "logs", &[]);
    let samples = s.samples(&log);
    let rt = s.runtime_identity();
    let rt = rt.to_str().unwrap();
    let r = s.import("lim", &[&log], &["--runtime-identity", rt, "--json"]);
    r.ok();
    let out = imported(&r);
    let rows = s.rows("lim");
    for name in SAMPLES {
        let id = sid("lim", name, 1);
        let row = &rows[&id];
        assert_common(row, &s.rel(&log), entry(&samples, name, 1));
        assert_eq!(row["native_status"], "limit:message", "{row:#}");
        assert_eq!(row["option_deviations"], json!([]));
        assert_eq!(row["spent_budget"], json!({"message_limit": 4}));
        assert_eq!(row["usage"], usage(2));
        assert_eq!(row["estimated_usd"], json!(0.004));
        if name == "b" {
            assert_eq!(row["native_outcome"], "FAIL");
            assert_eq!(row["reason"], "includes scored I: banana");
            assert_eq!(out[&id]["outcome"], "ended_without_completing");
        } else {
            assert_eq!(row["native_outcome"], "PASS");
            assert_eq!(out[&id]["outcome"], "verified_delivery", "{:#}", out[&id]);
        }
    }
    let r = s.import("tight", &[&log], &["--runtime-identity", rt, "--json"]);
    r.ok();
    let out = imported(&r);
    let rows = s.rows("tight");
    let a = &rows[&sid("tight", "a", 1)];
    assert_eq!(a["native_outcome"], "PASS");
    assert_eq!(
        a["option_deviations"],
        json!(["message_limit: declared 3, eval set 4"])
    );
    let o = &out[&sid("tight", "a", 1)];
    assert_eq!(o["outcome"], "pass_without_complete_evidence");
    assert!(
        o["gaps"].to_string().contains("over limit message_limit"),
        "{o:#}"
    );
}

/// A run that errors (fail_on_error) and its `eval-retry`: the first log's errored samples are
/// ERROR rows; the retry log's re-run of an imported sample is a retry and refused (nothing
/// written); the retry log alone still cannot turn the sample into a PASS: its re-run carries
/// the first run's error in `error_retries`, so the row is that ERROR.
#[test]
fn an_errored_run_and_its_eval_retry() {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    let limits = json!({"message_limit": 10});
    s.declare("flaky", "flaky", &SAMPLES, 2, limits.clone());
    s.declare("alone", "flaky", &SAMPLES, 2, limits);
    let spec = "evals/tasks.py@flaky";
    let r = s.inspect(
        &[
            "eval",
            spec,
            "--log-dir",
            "logs",
            "--epochs",
            "2",
            "--message-limit",
            "10",
        ],
        &[("FLAKY_FAIL", "1")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = s.new_log("logs", &[]);
    let r = s.inspect(
        &["eval-retry", first.to_str().unwrap(), "--log-dir", "logs"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let second = s.new_log("logs", std::slice::from_ref(&first));
    let (s1, s2) = (s.samples(&first), s.samples(&second));
    // eval-retry copies the completed samples with their uuid and re-runs "b" under a new one.
    assert_eq!(entry(&s1, "a", 1)["uuid"], entry(&s2, "a", 1)["uuid"]);
    assert_ne!(entry(&s1, "b", 1)["uuid"], entry(&s2, "b", 1)["uuid"]);

    let r = s.import("flaky", &[&first], &["--json"]);
    r.ok();
    let out = imported(&r);
    assert_eq!(out.len(), 6);
    let rows = s.rows("flaky");
    for epoch in [1, 2] {
        assert_error(&rows[&sid("flaky", "b", epoch)], B_ERROR);
        assert_common(
            &rows[&sid("flaky", "b", epoch)],
            &s.rel(&first),
            entry(&s1, "b", epoch),
        );
        assert_scored(&rows[&sid("flaky", "a", epoch)], "PASS", Value::Null);
    }
    let filled = s.ledger_bytes("flaky");
    let r = s.import("flaky", &[&second], &[]);
    r.expect_code(2);
    assert!(r.stderr.contains("retry"), "{}", r.stderr);
    assert!(r.stderr.contains(&sid("flaky", "b", 1)), "{}", r.stderr);
    assert_eq!(
        s.ledger_bytes("flaky"),
        filled,
        "a refused import moved the ledger"
    );
    // Both logs in one call (the directory, in name order): the same refusal.
    let dir = s.dir().join("logs");
    s.declare("both", "flaky", &SAMPLES, 2, json!({"message_limit": 10}));
    let before = s.ledger_bytes("both");
    s.import("both", &[&dir], &[]).expect_code(2);
    assert_eq!(s.ledger_bytes("both"), before);

    // Only the retry log (the first one deleted, as eval_set does): b is still the error.
    let r = s.import("alone", &[&second], &["--json"]);
    r.ok();
    let out = imported(&r);
    let rows = s.rows("alone");
    for epoch in [1, 2] {
        let id = sid("alone", "b", epoch);
        assert_error(&rows[&id], B_ERROR);
        assert_common(&rows[&id], &s.rel(&second), entry(&s2, "b", epoch));
        assert!(out[&id]["notes"]
            .to_string()
            .contains("the harness retried this sample"));
        assert_scored(&rows[&sid("alone", "7", epoch)], "PASS", Value::Null);
    }
}

/// A `.json` log (`--log-format json`): the same rows, evidence `<log>#samples[<i>]` and the
/// record's SHA-256 over the exact bytes of the sample object.
#[test]
fn a_json_log() {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    s.declare("js", "echo_task", &SAMPLES, 2, json!({"message_limit": 10}));
    let log = s.eval(
        "echo_task",
        "logs",
        &[
            "--epochs",
            "2",
            "--message-limit",
            "10",
            "--log-format",
            "json",
        ],
    );
    assert_eq!(log.extension().unwrap(), "json");
    let samples = s.samples(&log);
    let r = s.import("js", &[&log], &["--json"]);
    r.ok();
    let rows = s.rows("js");
    assert_eq!(imported(&r).len(), 6);
    for epoch in [1, 2] {
        for name in SAMPLES {
            let row = &rows[&sid("js", name, epoch)];
            let e = entry(&samples, name, epoch);
            assert!(e["member"].as_str().unwrap().starts_with("samples["));
            assert_common(row, &s.rel(&log), e);
            if name == "b" {
                assert_scored(row, "FAIL", json!("includes scored I: banana"));
            } else {
                assert_scored(row, "PASS", Value::Null);
            }
        }
    }
}

/// `eval.revision` is real: a clean tree at the pinned commit gives the full commit id; a
/// tracked edit (dirty) and an untracked file (Inspect counts it as dirty) give null with a
/// note; a run outside any repository records no revision. Ref mode: the ledger ref keeps each
/// sample's bytes under records/, and a refused import leaves the ref where it was.
fn the_revision_of_a_run_inside_a_git_repository(prefix: &str) {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    crate::common::use_prefix(s.dir(), prefix);
    let at = format!("{prefix}rev");
    let head = git(s.dir(), &["rev-parse", "HEAD"]);
    let decl = s.declare(
        "rev",
        "echo_task",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let clean = s.eval("echo_task", "logs", &["--message-limit", "10"]);
    let samples = s.samples(&clean);
    ledger(s.dir(), &["init", decl.to_str().unwrap()]).ok();
    let r = ledger(
        s.dir(),
        &[
            "import",
            "--ref",
            "rev",
            "--inspect",
            clean.to_str().unwrap(),
            "--json",
        ],
    );
    r.ok();
    let tip = git(s.dir(), &["rev-parse", &at]);
    let show = ledger(s.dir(), &["show", "--at", &at]);
    show.ok();
    let doc = show.json();
    let mut shas = Vec::new();
    for row in doc["rows"].as_array().unwrap() {
        assert_eq!(row["source_revision"], head.as_str(), "{row:#}");
        shas.push(row["native_record"]["sha256"].as_str().unwrap().to_owned());
    }
    // records/ holds each sample's bytes: their SHA-256s are the rows' (and Python's).
    let tree = git(s.dir(), &["ls-tree", "-r", "--name-only", &at, "records"]);
    let mut stored: Vec<String> = tree
        .lines()
        .map(|p| {
            let out = Command::new("git")
                .current_dir(s.dir())
                .args(["cat-file", "blob", &format!("{at}:{p}")])
                .output()
                .unwrap();
            git_ledger::sha256_hex(&out.stdout)
        })
        .collect();
    let mut python: Vec<String> = samples
        .iter()
        .map(|e| e["sha256"].as_str().unwrap().to_owned())
        .collect();
    stored.sort();
    shas.sort();
    python.sort();
    assert_eq!(stored, shas);
    assert_eq!(python, shas);

    // A re-run is a retry: refused, the ref does not move.
    let again = s.eval("echo_task", "logs", &["--message-limit", "10"]);
    let r = ledger(
        s.dir(),
        &[
            "import",
            "--ref",
            "rev",
            "--inspect",
            again.to_str().unwrap(),
        ],
    );
    r.expect_code(2);
    assert_eq!(git(s.dir(), &["rev-parse", &at]), tip);

    // Dirty: a tracked file edited.
    let tasks = s.dir().join("evals/tasks.py");
    let original = std::fs::read(&tasks).unwrap();
    let mut edited = original.clone();
    edited.extend_from_slice(b"\n# edited after pinning\n");
    std::fs::write(&tasks, &edited).unwrap();
    s.declare(
        "dirty",
        "echo_task",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let dirty = s.eval("echo_task", "logs", &["--message-limit", "10"]);
    std::fs::write(&tasks, &original).unwrap();
    // Untracked: Inspect 0.3.285 counts `git status --porcelain` lines, untracked ones too.
    write(s.dir(), "notes.txt", "scratch\n");
    s.declare(
        "untracked",
        "echo_task",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let untracked = s.eval("echo_task", "logs", &["--message-limit", "10"]);
    std::fs::remove_file(s.dir().join("notes.txt")).unwrap();
    for (name, log) in [("dirty", &dirty), ("untracked", &untracked)] {
        let r = s.import(name, &[log], &["--json"]);
        r.ok();
        let out = imported(&r);
        for (id, row) in s.rows(name) {
            assert_eq!(row["source_revision"], Value::Null, "{row:#}");
            let o = &out[&id];
            assert!(o["notes"].to_string().contains("dirty"), "{o:#}");
            if row["native_outcome"] == "PASS" {
                assert_eq!(o["outcome"], "pass_without_complete_evidence");
                assert!(o["gaps"].to_string().contains("revision null"), "{o:#}");
            }
        }
    }

    // A task outside any repository: no revision at all. (Inspect takes the revision in the
    // task file's directory, not in the working directory.)
    let outside = tempfile::tempdir().unwrap();
    for f in ["tasks.py", "samples.jsonl"] {
        std::fs::copy(s.dir().join("evals").join(f), outside.path().join(f)).unwrap();
    }
    let mut cmd = Command::new(s.venv.join("bin/inspect"));
    pin_env(&mut cmd)
        .env("HF_HUB_OFFLINE", "1")
        .env("INSPECT_DISPLAY", "none")
        .env_remove("GIT_LEDGER_REF")
        .env_remove("GIT_LEDGER_DECLARATION")
        .current_dir(s.dir())
        .arg("eval")
        .arg(format!(
            "{}@echo_task",
            outside.path().join("tasks.py").display()
        ))
        .args([
            "--log-dir",
            outside.path().join("logs").to_str().unwrap(),
            "--message-limit",
            "10",
        ]);
    assert!(cmd.status().unwrap().success());
    let log = std::fs::read_dir(outside.path().join("logs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    s.declare(
        "norev",
        "echo_task",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let r = s.import("norev", &[&log], &["--json"]);
    r.ok();
    let out = imported(&r);
    for (id, row) in s.rows("norev") {
        assert_eq!(row["source_revision"], Value::Null);
        assert!(
            out[&id]["notes"]
                .to_string()
                .contains("records no revision"),
            "{:#}",
            out[&id]
        );
    }
}

/// A cancelled run (SIGINT) and its eval-retry, and a killed run (SIGKILL, the log still being
/// written): the cancelled samples are ERROR rows and the retry's re-run of them is refused;
/// the killed log has no header, its flushed samples are imported with a note that the run had
/// not ended, the others stay DEFERRED.
#[test]
fn a_cancelled_and_a_killed_run() {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    s.declare(
        "cancel",
        "stalls",
        &SAMPLES,
        2,
        json!({"message_limit": 10}),
    );
    s.declare(
        "killed",
        "stalls",
        &SAMPLES,
        2,
        json!({"message_limit": 10}),
    );
    for (name, signal) in [("cancel", "INT"), ("killed", "KILL")] {
        let logs = format!("logs-{name}");
        let mut cmd = Command::new(s.venv.join("bin/inspect"));
        pin_env(&mut cmd)
            .env("HF_HUB_OFFLINE", "1")
            .env("INSPECT_DISPLAY", "none")
            .env_remove("GIT_LEDGER_REF")
            .env_remove("GIT_LEDGER_DECLARATION")
            .current_dir(s.dir())
            .args([
                "eval",
                "evals/tasks.py@stalls",
                "--epochs",
                "2",
                "--message-limit",
                "10",
            ])
            .args(["--log-buffer", "1", "--log-dir", &logs])
            .env("STALL", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        // Wait until a, 7 (both epochs) are flushed to the log: 4 sample members.
        let start = std::time::Instant::now();
        loop {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let flushed = s
                .logs(&logs)
                .first()
                .and_then(|l| s.try_samples(l).ok())
                .map_or(0, |v| v.len());
            if flushed >= 4 {
                break;
            }
            assert!(
                start.elapsed().as_secs() < 240,
                "the stalling run never flushed its samples"
            );
        }
        let kill = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        if name == "cancel" {
            assert_eq!(status.code(), Some(0), "a cancelled inspect eval exits 0");
        }
        let log = s.logs(&logs).pop().unwrap();
        let samples = s.samples(&log);
        let r = s.import(name, &[&log], &["--json"]);
        r.ok();
        let out = imported(&r);
        let rows = s.rows(name);
        for epoch in [1, 2] {
            for ok in ["a", "7"] {
                let id = sid(name, ok, epoch);
                assert_scored(&rows[&id], "PASS", Value::Null);
                assert_common(&rows[&id], &s.rel(&log), entry(&samples, ok, epoch));
            }
            let b = &rows[&sid(name, "b", epoch)];
            if name == "cancel" {
                assert_eq!(b["native_outcome"], "ERROR");
                assert!(
                    b["reason"].as_str().unwrap().starts_with("CancelledError("),
                    "{b:#}"
                );
                assert_eq!(out[&sid(name, "b", epoch)]["outcome"], "error");
            } else {
                assert_eq!(b["native_outcome"], "DEFERRED", "{b:#}");
                assert!(!out.contains_key(&sid(name, "b", epoch)));
                let a = &out[&sid(name, "a", epoch)];
                assert!(
                    a["notes"].to_string().contains("the run had not ended"),
                    "{a:#}"
                );
            }
        }
        if name == "cancel" {
            // eval-retry of the cancelled log (b no longer stalls): Inspect 0.3.285 records no
            // error_retries for a cancelled sample, so only the imported first log shows that
            // b's scheduled attempt was cancelled; the re-run is a retry and refused.
            let before = s.logs(&logs);
            let r = s.inspect(
                &["eval-retry", log.to_str().unwrap(), "--log-dir", &logs],
                &[],
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
            let retry = s.new_log(&logs, &before);
            let filled = s.ledger_bytes(name);
            let r = s.import(name, &[&retry], &[]);
            r.expect_code(2);
            assert!(r.stderr.contains("retry"), "{}", r.stderr);
            assert!(r.stderr.contains(&sid(name, "b", 1)), "{}", r.stderr);
            assert_eq!(
                s.ledger_bytes(name),
                filled,
                "a refused import moved the ledger"
            );
        }
        if name == "killed" {
            let text = s.import(name, &[&log], &[]);
            text.ok();
            assert!(
                text.stdout.contains("2 rows still DEFERRED"),
                "{}",
                text.stdout
            );
        }
    }
}

/// The example campaign (inspect-example/): its declaration is what `pin` makes of its draft at
/// its source revision and checks against this repository's objects; its committed ledger is
/// exactly what importing its committed log (with its runtime identity) produces; and `report`
/// works on it from a fresh clone. Needs no Python: the log is committed.
#[test]
fn the_example_campaign_reports_from_a_fresh_clone() {
    let root = project_root();
    let ex = "inspect-example";
    ledger(&root, &["check", &format!("{ex}/campaign.json")]).ok();
    let pinned = std::fs::read(root.join(ex).join("campaign.json")).unwrap();
    let decl: Value = serde_json::from_slice(&pinned).unwrap();
    let rev = decl["source_revision"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let draft = dir.path().join("draft.json");
    let at_rev = Command::new("git")
        .current_dir(&root)
        .args(["show", &format!("{rev}:{ex}/campaign.draft.json")])
        .output()
        .unwrap();
    assert!(at_rev.status.success());
    std::fs::write(&draft, &at_rev.stdout).unwrap();
    let r = ledger(&root, &["pin", draft.to_str().unwrap(), "--revision", rev]);
    r.ok();
    assert!(
        r.stdout.as_bytes() == &pinned[..],
        "{ex}/campaign.json is not what pin writes"
    );

    // The committed ledger is the import of the committed log.
    let work = dir.path().join("ledger.json");
    let t = ledger(&root, &["template", &format!("{ex}/campaign.json")]);
    t.ok();
    std::fs::write(&work, &t.stdout).unwrap();
    let r = ledger(
        &root,
        &[
            "import",
            &format!("{ex}/campaign.json"),
            work.to_str().unwrap(),
            "--inspect",
            &format!("{ex}/logs"),
            "--runtime-identity",
            &format!("{ex}/runtime.json"),
        ],
    );
    r.ok();
    assert!(
        std::fs::read(&work).unwrap() == std::fs::read(root.join(ex).join("ledger.json")).unwrap(),
        "{ex}/ledger.json is not what importing {ex}/logs produces: run {ex}/runner-tools/run.sh"
    );

    // A fresh clone has everything `report` needs.
    let clone = dir.path().join("clone");
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            "--no-hardlinks",
            root.to_str().unwrap(),
            "clone",
        ],
    );
    let r = ledger(
        &clone,
        &[
            "report",
            &format!("{ex}/campaign.json"),
            &format!("{ex}/ledger.json"),
            "--json",
        ],
    );
    r.ok();
    let v = r.json();
    let fixture = &v["sections"]["fixture"];
    assert_eq!(fixture["attempted"], 8);
    assert_eq!(fixture["outcomes"]["verified_delivery"]["count"], 6);
    assert_eq!(
        fixture["outcomes"]["ended_without_completing"]["rows"],
        json!(["inspect/arith-mul-1/01", "inspect/arith-mul-1/02"])
    );
    assert_eq!(
        fixture["limits"],
        json!({"over": 0, "unknown": 0, "within": 8})
    );
    assert_eq!(fixture["comparison"]["blocked"], false);
    ledger(&clone, &["check", &format!("{ex}/campaign.json")]).ok();
}

/// The hook (inspect-hook/, installed in the venv): with `GIT_LEDGER_REF` set, each log is in
/// the ledger as soon as Inspect has written it — the errored first log too (Inspect gives a
/// task that raised no `on_task_end`; the hook imports it at `on_run_end`), before `eval-retry`
/// runs. The retry log's re-run is refused: reported loudly, the evaluation still succeeds and
/// the ref does not move. File mode, a missing binary and a half-set configuration too.
/// Over a minute when the file's tests share the machine; run whole under both prefixes all the
/// same (with the next slow one, the branch prefix adds about two minutes to the file's run).
fn the_hook_imports_each_log_when_its_task_ends(prefix: &str) {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    crate::common::use_prefix(s.dir(), prefix);
    let at = format!("{prefix}hooked");
    let decl = s.declare("hooked", "flaky", &SAMPLES, 2, json!({"message_limit": 10}));
    ledger(s.dir(), &["init", decl.to_str().unwrap()]).ok();
    let bin_s = bin().to_str().unwrap().to_owned();
    let repo_s = s.dir().to_str().unwrap().to_owned();
    let hook = [
        ("GIT_LEDGER_REF", "hooked"),
        ("GIT_LEDGER", bin_s.as_str()),
        ("GIT_LEDGER_REPO", repo_s.as_str()),
    ];
    let rows_at = |rev: &str| -> serde_json::Map<String, Value> {
        let show = ledger(s.dir(), &["show", "--at", rev]);
        show.ok();
        show.json()["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["schedule_id"].as_str().unwrap().to_owned(), r.clone()))
            .collect()
    };

    let mut env = hook.to_vec();
    env.push(("FLAKY_FAIL", "1"));
    let r = s.inspect(
        &[
            "eval",
            "evals/tasks.py@flaky",
            "--log-dir",
            "logs",
            "--epochs",
            "2",
            "--message-limit",
            "10",
        ],
        &env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("hooks enabled: 1"), "{}", r.stderr);
    let first = s.new_log("logs", &[]);
    assert!(
        r.stderr
            .contains(&format!("git-ledger-inspect: imported {}", first.display())),
        "{}",
        r.stderr
    );
    let rows = rows_at(&at);
    let s1 = s.samples(&first);
    for epoch in [1, 2] {
        assert_error(&rows[&sid("hooked", "b", epoch)], B_ERROR);
        assert_common(
            &rows[&sid("hooked", "b", epoch)],
            &s.rel(&first),
            entry(&s1, "b", epoch),
        );
        assert_scored(&rows[&sid("hooked", "a", epoch)], "PASS", Value::Null);
    }
    let tip = git(s.dir(), &["rev-parse", &at]);

    // eval-retry with the hook on: its re-run of "b" is a retry, refused; the eval succeeds.
    let r = s.inspect(
        &["eval-retry", first.to_str().unwrap(), "--log-dir", "logs"],
        &hook,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let second = s.new_log("logs", std::slice::from_ref(&first));
    assert!(
        r.stderr.contains(&format!(
            "!!!!!!!! git-ledger-inspect: git-ledger refused to import {}; the log is NOT in the ledger !!!!!!!!",
            second.display()
        )),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("retry"), "{}", r.stderr);
    assert_eq!(git(s.dir(), &["rev-parse", &at]), tip);

    // File mode.
    s.declare(
        "filed",
        "echo_task",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let (d, l) = (s.s("filed.json"), s.s("filed.ledger.json"));
    // File mode, with the binary under its older name, still read.
    let file_env = [
        ("GIT_LEDGER_DECLARATION", d.as_str()),
        ("GIT_LEDGER_LEDGER", l.as_str()),
        ("GIT_LEDGER_BIN", bin_s.as_str()),
    ];
    let before = s.logs("logs");
    let r = s.inspect(
        &[
            "eval",
            "evals/tasks.py@echo_task",
            "--log-dir",
            "logs",
            "--message-limit",
            "10",
        ],
        &file_env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = s.new_log("logs", &before);
    let samples = s.samples(&log);
    let rows = s.rows("filed");
    for name in SAMPLES {
        assert_common(
            &rows[&sid("filed", name, 1)],
            &s.rel(&log),
            entry(&samples, name, 1),
        );
    }
    assert_eq!(rows[&sid("filed", "b", 1)]["native_outcome"], "FAIL");

    // A binary that is not there, and a file mode without its ledger: loud, never fatal.
    for (env, says) in [
        (
            vec![
                ("GIT_LEDGER_REF", "hooked"),
                ("GIT_LEDGER", "/nonexistent/git-ledger"),
            ],
            "could not run /nonexistent/git-ledger import",
        ),
        (
            vec![("GIT_LEDGER_DECLARATION", d.as_str())],
            "the hook's configuration is wrong",
        ),
    ] {
        let before = s.logs("logs");
        let r = s.inspect(
            &[
                "eval",
                "evals/tasks.py@echo_task",
                "--log-dir",
                "logs",
                "--message-limit",
                "10",
                // A display that shows Inspect's log messages (`none` hides them).
                "--display",
                "plain",
            ],
            &env,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        s.new_log("logs", &before);
        assert!(
            r.stderr.contains("!!!!!!!! git-ledger-inspect: "),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains(says), "{}", r.stderr);
        // And through Inspect's logger, as a warning.
        assert!(
            r.stderr
                .lines()
                .any(|l| l.contains("WARNING") && l.contains("git-ledger-inspect:")),
            "{}",
            r.stderr
        );
    }
    assert_eq!(git(s.dir(), &["rev-parse", &at]), tip);

    // Without any GIT_LEDGER_ variable the hook is off.
    let r = s.inspect(
        &["eval", "evals/tasks.py@echo_task", "--log-dir", "logs"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("git-ledger-inspect"), "{}", r.stderr);
}

/// A NaN score (Inspect's "unscored", the bare token `NaN` in both formats) is UNSCORED, not a
/// FAIL; a sample that used a priced and an unpriced model has its usage as recorded and its
/// cost null, never the partial sum.
#[test]
fn an_unscored_sample_and_a_partly_priced_one() {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    for (name, format) in [("nan", "eval"), ("nanjs", "json")] {
        s.declare_scored(
            name,
            "unscored",
            "nan_for_b",
            &SAMPLES,
            1,
            json!({"message_limit": 10}),
        );
        let log = s.eval(
            "unscored",
            name,
            &["--message-limit", "10", "--log-format", format],
        );
        assert!(std::fs::read_to_string(&log).map_or(true, |t| t.contains("NaN")));
        let samples = s.samples(&log);
        let r = s.import(name, &[&log], &["--json"]);
        r.ok();
        let out = imported(&r);
        let rows = s.rows(name);
        let id = sid(name, "b", 1);
        let b = &rows[&id];
        assert_common(b, &s.rel(&log), entry(&samples, "b", 1));
        assert_eq!(b["native_outcome"], "UNSCORED", "{b:#}");
        assert_eq!(b["native_status"], "completed");
        assert_eq!(b["reason"], "nan_for_b scored NaN (unscored)");
        assert_eq!(b["oracle_checks"], Value::Null);
        assert_eq!(b["usage"], usage(1));
        assert_eq!(b["estimated_usd"], json!(0.002));
        assert_eq!(out[&id]["outcome"], "ungraded");
        let a = &rows[&sid(name, "a", 1)];
        assert_eq!(a["native_outcome"], "PASS");
        assert_eq!(
            a["oracle_checks"],
            json!([{"name": "nan_for_b", "ok": true}])
        );
    }

    s.declare(
        "priced",
        "partly_priced",
        &SAMPLES,
        1,
        json!({"message_limit": 10, "cost_limit": 1}),
    );
    let log = s.eval("partly_priced", "logs", &["--message-limit", "10"]);
    let r = s.import("priced", &[&log], &["--json"]);
    r.ok();
    let rows = s.rows("priced");
    let a = &rows[&sid("priced", "a", 1)];
    assert_eq!(a["native_outcome"], "PASS");
    assert_eq!(
        a["usage"],
        json!({
            "mockllm/model": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4, "total_cost": 0.002},
            "mockllm/unpriced": {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6},
        })
    );
    assert_eq!(
        a["estimated_usd"],
        Value::Null,
        "a partial sum is not a cost"
    );
    assert_eq!(
        a["spent_budget"],
        json!({"message_limit": 2, "cost_limit": null})
    );
    assert_eq!(
        a["option_deviations"],
        json!(["cost_limit: declared 1, eval set none"])
    );
    let o = &imported(&r)[&sid("priced", "a", 1)];
    assert_eq!(o["outcome"], "pass_without_complete_evidence");
    let seven = &rows[&sid("priced", "7", 1)];
    assert_eq!(seven["estimated_usd"], json!(0.002));
    assert_eq!(
        seven["spent_budget"],
        json!({"message_limit": 2, "cost_limit": 0.002})
    );
}

/// A score edited after the run with Inspect's own `edit_score` (recorded in the score's
/// `history`): the row keeps the scorer's own value, and the import output and the ledger
/// commit's message name the edit.
fn an_edited_score_never_replaces_the_scorer_s_own(prefix: &str) {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    crate::common::use_prefix(s.dir(), prefix);
    let at = format!("{prefix}edited");
    let decl = s.declare(
        "edited",
        "echo_task",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let log = s.eval("echo_task", "logs", &["--message-limit", "10"]);
    let edited = s.dir().join("logs/edited.eval");
    let out = Command::new(s.venv.join("bin/python"))
        .arg(project_root().join("tests/inspect/edit_score.py"))
        .args([log.as_os_str(), edited.as_os_str()])
        .args(["b", "1", "includes", "C"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples = s.samples(&edited);
    ledger(s.dir(), &["init", decl.to_str().unwrap()]).ok();
    let r = ledger(
        s.dir(),
        &[
            "import",
            "--ref",
            "edited",
            "--inspect",
            edited.to_str().unwrap(),
            "--json",
        ],
    );
    r.ok();
    let show = ledger(
        s.dir(),
        &["show", "--at", &at, "--row", &sid("edited", "b", 1)],
    );
    show.ok();
    let b = show.json();
    assert_common(&b, &s.rel(&edited), entry(&samples, "b", 1));
    assert_eq!(b["native_outcome"], "FAIL", "{b:#}");
    assert_eq!(b["reason"], "includes scored I: banana");
    assert_eq!(
        b["oracle_checks"],
        json!([{"name": "includes", "ok": false}])
    );
    let o = &imported(&r)[&sid("edited", "b", 1)];
    let notes = o["notes"].to_string();
    assert!(
        notes.contains("edit") && notes.contains("reviewer"),
        "{o:#}"
    );
    // The message says only what the change did (docs/messages.md): the edit is in import's
    // output above and in the record, not in the message.
    let message = git(s.dir(), &["log", "-1", "--format=%B", &at]);
    assert!(
        !message.contains("note:") && !message.contains("reviewer"),
        "{message}"
    );
    assert!(!imported(&r)[&sid("edited", "a", 1)]["notes"]
        .to_string()
        .contains("edit"));
}

/// `inspect eval-set` with the hook: eval_set 0.3.285 retries the errored sample inside the
/// task (its failure goes to `error_retries`, the log says `success` and holds the retry's
/// score); the hook imports that log as soon as the task ends, and the row is still the first
/// try's ERROR.
fn an_eval_set_retry_is_the_first_try_s_error(prefix: &str) {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    crate::common::use_prefix(s.dir(), prefix);
    let at = format!("{prefix}set");
    let decl = s.declare(
        "set",
        "raises_once",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    ledger(s.dir(), &["init", decl.to_str().unwrap()]).ok();
    let bin_s = bin().to_str().unwrap().to_owned();
    let r = s.inspect(
        &[
            "eval-set",
            "evals/tasks.py@raises_once",
            "--log-dir",
            "logs",
            "--retry-attempts",
            "2",
            "--retry-wait",
            "0",
            "--message-limit",
            "10",
        ],
        &[("GIT_LEDGER_REF", "set"), ("GIT_LEDGER", bin_s.as_str())],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = s.new_log("logs", &[]);
    assert!(
        r.stderr.contains("git-ledger-inspect: imported"),
        "{}",
        r.stderr
    );
    let samples = s.samples(&log);
    let show = ledger(s.dir(), &["show", "--at", &at]);
    show.ok();
    let rows: serde_json::Map<String, Value> = show.json()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["schedule_id"].as_str().unwrap().to_owned(), r.clone()))
        .collect();
    let b = &rows[&sid("set", "b", 1)];
    assert_common(b, &s.rel(&log), entry(&samples, "b", 1));
    assert_error(b, B_ERROR);
    assert_scored(&rows[&sid("set", "a", 1)], "PASS", Value::Null);

    // The eval-set's log directory, manifests (eval-set.json, logs.json) and all, in file mode.
    s.declare(
        "setdir",
        "raises_once",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    assert!(
        s.dir().join("logs/eval-set.json").is_file() && s.dir().join("logs/logs.json").is_file()
    );
    let r = s.import("setdir", &[&s.dir().join("logs")], &["--json"]);
    r.ok();
    assert_eq!(imported(&r).len(), 3, "{}", r.stdout);
    assert_error(&s.rows("setdir")[&sid("setdir", "b", 1)], B_ERROR);
}

/// The hook's configuration rules, each from both sides (tests/inspect/test_hook.py, run with
/// the venv's Python against the installed hook).
#[test]
fn the_hook_s_configuration_rules() {
    let venv = need_venv!();
    let out = Command::new(venv.join("bin/python"))
        .current_dir(project_root().join("tests/inspect"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["-m", "unittest", "-v", "test_hook"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Ran 12 tests"), "{stderr}");
}

/// The arguments of one `inspect eval` of `echo_task` × 2 epochs with the declared limits.
const ECHO_RUN: [&str; 10] = [
    "eval",
    "evals/tasks.py@echo_task",
    "--log-dir",
    "logs",
    "--epochs",
    "2",
    "--message-limit",
    "10",
    "--token-limit",
    "1000",
];

/// `git-ledger-inspect run` (docs/reference/workflow.md, rule 1): readiness checked, Inspect run
/// with the hook, every log imported again to prove each sample is in the ledger, the runtime
/// identity written by the tool. A second run of the same samples (retries) fails, non-zero, the
/// ref unmoved; every readiness failure stops the run before Inspect starts (no log written).
/// Over a minute when the file's tests share the machine; run whole under both prefixes all the
/// same, every part of it being ref mode.
fn the_run_command_checks_runs_and_imports(prefix: &str) {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    crate::common::use_prefix(s.dir(), prefix);
    let at = format!("{prefix}cmd");
    let limits = json!({"message_limit": 10, "token_limit": 1000});
    let decl = s.declare("cmd", "echo_task", &SAMPLES, 2, limits.clone());
    ledger(s.dir(), &["init", decl.to_str().unwrap()]).ok();
    let mut args = vec!["run", "--ref", "cmd", "--"];
    args.extend_from_slice(&ECHO_RUN);

    let r = s.tool(&[
        "check",
        "--ref",
        "cmd",
        "--",
        "eval",
        "evals/tasks.py@echo_task",
        "--epochs",
        "2",
        "--message-limit",
        "10",
        "--token-limit",
        "1000",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("ready: echo_task as declared"),
        "{}",
        r.stderr
    );
    assert!(s.logs("logs").is_empty(), "check ran something");

    let r = s.tool(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = s.new_log("logs", &[]);
    assert!(
        r.stderr
            .contains("git-ledger-inspect: done: 1 log, every sample in the ledger"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("(6 imported by the hook, 0 now)"),
        "{}",
        r.stderr
    );
    let show = ledger(s.dir(), &["show", "--ref", "cmd"]);
    show.ok();
    let rows = show.json()["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 6);
    let deps_want = "inspect_ai==0.3.285";
    for row in &rows {
        assert_ne!(row["native_outcome"], "DEFERRED", "{row:#}");
        // The runtime identity the tool wrote: the shape import.md fixes, of the venv.
        let rt = &row["runtime_identity"];
        crate::schemas::assert_valid(
            "runtime-identity",
            rt,
            "the runtime identity git-ledger-inspect wrote",
        );
        let keys: Vec<&str> = rt.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "dependencies",
                "native_provider",
                "packages",
                "psutil",
                "python"
            ]
        );
        assert_eq!(rt["python"], s.python_version().as_str());
        assert_eq!(rt["native_provider"], "inspect_ai 0.3.285");
        assert_eq!(rt["packages"]["inspect_ai"], "0.3.285");
        assert!(rt["packages"]["git-ledger-inspect"].is_string(), "{rt:#}");
        let deps = rt["dependencies"].as_array().unwrap();
        assert!(deps.iter().any(|d| d == deps_want), "{rt:#}");
        let mut sorted = deps.clone();
        sorted.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        assert_eq!(&sorted, deps, "the freeze is sorted");
    }
    let rep = ledger(s.dir(), &["report", "--ref", "cmd", "--json"]);
    rep.ok();
    let fixture = &rep.json()["sections"]["fixture"];
    assert_eq!(
        fixture["outcomes"]["verified_delivery"]["count"], 4,
        "{fixture:#}"
    );
    let tip = git(s.dir(), &["rev-parse", &at]);

    // The same samples again: retries. The hook's import is refused (Inspect still exits 0),
    // the command's own import too: exit 2, the log named as not in the ledger.
    let r = s.tool(&args);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let second = s.new_log("logs", std::slice::from_ref(&log));
    assert!(
        r.stderr.contains(&format!(
            "{}: NOT in the ledger (git-ledger import exit 2)",
            second.display()
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("git-ledger-inspect: FAILED:"),
        "{}",
        r.stderr
    );
    assert_eq!(git(s.dir(), &["rev-parse", &at]), tip);

    // Readiness that knows Inspect: each failure refuses before Inspect starts.
    let typo = s.declare_scored("typo", "echo_task", "include", &SAMPLES, 2, limits.clone());
    let typo_s = typo.to_str().unwrap().to_owned();
    let typo_ledger = s.s("typo.ledger.json");
    let file_mode = [
        "run",
        "--declaration",
        typo_s.as_str(),
        "--ledger",
        typo_ledger.as_str(),
        "--",
    ];
    let other = s.declare("other", "raises", &SAMPLES, 2, limits.clone());
    let other_s = other.to_str().unwrap().to_owned();
    let live = s.declare_full(
        "live",
        "echo_task",
        "includes",
        "live",
        &SAMPLES,
        2,
        limits.clone(),
    );
    let live_s = live.to_str().unwrap().to_owned();
    let keyed = s.declare_scored(
        "keyed",
        "keyed",
        "two_keys",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let keyed_s = keyed.to_str().unwrap().to_owned();
    let part = s.declare("part", "echo_task", &["a", "b"], 2, limits.clone());
    let part_s = part.to_str().unwrap().to_owned();
    let part_file = ["--declaration", part_s.as_str(), "--ledger", "x.json", "--"];
    // The declared samples selected (--limit 2, --sample-id a,b): ready.
    for select in [["--limit", "2"], ["--sample-id", "a,b"]] {
        let argv = [
            &["check", "--declaration", part_s.as_str(), "--"][..],
            &ECHO_RUN[..],
            &select[..],
        ]
        .concat();
        let r = s.tool(&argv);
        assert_eq!(r.code, 0, "{argv:?}: {}", r.stderr);
    }
    let modelless = s.declare(
        "modelless",
        "modelless",
        &SAMPLES,
        1,
        json!({"message_limit": 10}),
    );
    let modelless_s = modelless.to_str().unwrap().to_owned();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&file_mode[..], &ECHO_RUN[..]].concat(),
            "the declared scorer 'include' is not a scorer of Inspect task echo_task (its scorers: includes); every sample would be refused at import",
        ),
        (
            vec!["run", "--ref", "cmd", "--", "eval", "evals/tasks.py@echo_task", "--log-dir", "logs", "--message-limit", "10", "--token-limit", "1000"],
            "task echo_task: the run would run 1 epoch(s), the declaration schedules 2 repetition(s): pass --epochs 2",
        ),
        (
            vec!["run", "--ref", "cmd", "--", "eval", "evals/tasks.py@echo_task", "--log-dir", "logs", "--epochs", "2", "--token-limit", "1000"],
            "message_limit is declared 10, the run sets none: pass --message-limit 10",
        ),
        (
            vec!["run", "--declaration", other_s.as_str(), "--ledger", "x.json", "--", "eval", "evals/tasks.py@echo_task", "--log-dir", "logs", "--epochs", "2", "--message-limit", "10", "--token-limit", "1000"],
            "the declared Inspect task raises (inspect/other-a, inspect/other-b, inspect/other-7) is not among the tasks this run loads (echo_task)",
        ),
        (
            vec!["run", "--ref", "cmd", "--", "eval", "evals/tasks.py@echo_task", "--log-dir", "runs", "--epochs", "2", "--message-limit", "10", "--token-limit", "1000"],
            "the log directory runs is inside the work tree",
        ),
        (
            vec!["run", "--declaration", live_s.as_str(), "--ledger", "x.json", "--", "eval", "evals/tasks.py@echo_task", "--log-dir", "logs", "--epochs", "2", "--message-limit", "10", "--token-limit", "1000"],
            "inspect/live-a, inspect/live-b, inspect/live-7: declared live evidence, but task echo_task would run with mockllm/model, Inspect's scripted model: every row would import as fixture and be refused",
        ),
        (
            vec!["run", "--declaration", keyed_s.as_str(), "--ledger", "x.json", "--", "eval", "evals/tasks.py@keyed", "--log-dir", "logs", "--message-limit", "10"],
            "inspect/keyed-a, inspect/keyed-b, inspect/keyed-7: task keyed: the scorer 'two_keys' gives one value per key (found, short)",
        ),
        (
            [&["run"][..], &part_file[..], &ECHO_RUN[..]].concat(),
            "task echo_task: the run would run 1 sample(s) the declaration does not declare (7): each would be refused at import after it ran; select the declared ones (--limit N, --sample-id ID,…) or pass --skip-undeclared",
        ),
        (
            [&["run"][..], &part_file[..], &ECHO_RUN[..], &["--limit", "2-3"][..]].concat(),
            "task echo_task: the run would run 1 sample(s) the declaration does not declare (7)",
        ),
        (
            vec!["run", "--declaration", modelless_s.as_str(), "--ledger", "x.json", "--", "eval", "evals/tasks.py@modelless", "--log-dir", "logs", "--message-limit", "10", "--model", "openai/gpt-4o"],
            "inspect/modelless-a, inspect/modelless-b, inspect/modelless-7: declared fixture evidence, but task modelless would run with openai/gpt-4o, not Inspect's scripted mockllm: every row would import as live and be refused",
        ),
    ];
    for (argv, says) in &cases {
        let before = s.logs("logs");
        let r = s.tool(argv);
        assert_eq!(r.code, 2, "{argv:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{argv:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("not ready; the run was not started"),
            "{}",
            r.stderr
        );
        assert_eq!(s.logs("logs"), before, "{argv:?} ran Inspect");
        assert!(s.logs("runs").is_empty());
    }
    // An untracked file outside every pinned path: Inspect would call the revision dirty.
    write(s.dir(), "notes.txt", "scratch\n");
    let r = s.tool(&args);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("Inspect would record this run's revision as dirty (git status --porcelain: ?? notes.txt)"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(s.dir().join("notes.txt")).unwrap();
    // A modified task file: `git ledger check --ready` refuses, and the run does not start.
    let tasks_py = std::fs::read(s.dir().join("evals/tasks.py")).unwrap();
    let mut edited = tasks_py.clone();
    edited.extend_from_slice(b"\n# edited after the pin\n");
    std::fs::write(s.dir().join("evals/tasks.py"), &edited).unwrap();
    let before = s.logs("logs");
    let r = s.tool(&args);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("evals/tasks.py"), "{}", r.stderr);
    assert!(
        r.stderr.contains("not ready; the run was not started"),
        "{}",
        r.stderr
    );
    assert_eq!(s.logs("logs"), before);
    std::fs::write(s.dir().join("evals/tasks.py"), &tasks_py).unwrap();
    // Usage errors: no mode, no Inspect command.
    for argv in [
        vec!["run", "--", "eval", "x.py"],
        vec!["run", "--ref", "cmd"],
    ] {
        let r = s.tool(&argv);
        assert_eq!(r.code, 64, "{argv:?}: {}", r.stderr);
        assert!(r.stderr.contains("usage error"), "{}", r.stderr);
    }
    assert_eq!(git(s.dir(), &["rev-parse", &at]), tip);
}

/// `git-ledger-inspect draft` (docs/reference/workflow.md, rule 5): the example's draft generated
/// from its task through Inspect's loading is the committed one; pinned, run with the command of
/// `the_run_command_checks_runs_and_imports` in a worktree at the declared revision (so the
/// declaration never touches the evaluated tree), its PASS rows are verified. Datasets with
/// repeated or missing ids, a task without limits, an unknown scorer: refused, nothing written.
fn a_generated_draft_pins_runs_and_verifies(prefix: &str) {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    crate::common::use_prefix(s.dir(), prefix);
    let root = project_root();
    let ex = "inspect-example";
    for f in [
        "task/arith.py",
        "task/arith.jsonl",
        "profile.json",
        "policy.md",
        "runner-tools/run.sh",
    ] {
        write(
            s.dir(),
            &format!("{ex}/{f}"),
            std::fs::read(root.join(ex).join(f)).unwrap(),
        );
    }
    commit_all(s.dir(), "the example");
    let committed: Value =
        serde_json::from_slice(&std::fs::read(root.join(ex).join("campaign.draft.json")).unwrap())
            .unwrap();
    let out = s.s("arith.draft.json");
    let r = s.tool(&[
        "draft",
        "inspect-example/task/arith.py@arith",
        "--id",
        "inspect-arith",
        "--title",
        committed["title"].as_str().unwrap(),
        "--epochs",
        "2",
        "--profile",
        "inspect-example/profile.json",
        "--policy",
        "inspect-example/policy.md",
        "--runner-tools",
        "inspect-example/runner-tools",
        "-o",
        &out,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("draft inspect-arith: 4 tasks (arith) x 2 repetitions"),
        "{}",
        r.stderr
    );
    let mut generated: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    crate::schemas::assert_valid("campaign-draft", &generated, "the generated draft");
    assert_eq!(generated["runtime_requirements"], s.runtime_requirements());
    generated["runtime_requirements"] = committed["runtime_requirements"].clone();
    assert_eq!(generated, committed);

    let decl = s.s("arith.json");
    ledger(s.dir(), &["pin", &out, "-o", &decl]).ok();
    ledger(s.dir(), &["init", &decl]).ok();
    let rev = serde_json::from_slice::<Value>(&std::fs::read(&decl).unwrap()).unwrap()
        ["source_revision"]
        .as_str()
        .unwrap()
        .to_owned();
    // The run happens in a worktree at the declared revision.
    let wt = s.files.path().join("run");
    git(
        s.dir(),
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            wt.to_str().unwrap(),
            &rev,
        ],
    );
    let run = s.program_in(
        &wt,
        "bin/git-ledger-inspect",
        &[
            "run",
            "--ref",
            "inspect-arith",
            "--",
            "eval",
            "inspect-example/task/arith.py@arith",
            "--epochs",
            "2",
            "--log-dir",
            "logs",
        ],
        &[("GIT_LEDGER", bin().to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The worktree shares the repository's configuration: the ledger is under its prefix.
    git(
        &wt,
        &["rev-parse", "--verify", &format!("{prefix}inspect-arith")],
    );
    let rep = ledger(&wt, &["report", "--ref", "inspect-arith", "--json"]);
    rep.ok();
    let fixture = &rep.json()["sections"]["fixture"];
    assert_eq!(fixture["attempted"], 8);
    assert_eq!(
        fixture["outcomes"]["verified_delivery"]["count"], 6,
        "{fixture:#}"
    );
    assert_eq!(
        fixture["outcomes"]["ended_without_completing"]["rows"],
        json!(["inspect/arith-mul-1/01", "inspect/arith-mul-1/02"])
    );
    assert_eq!(fixture["comparison"]["blocked"], false);

    // Refusals: nothing written.
    let bad = s.s("bad.draft.json");
    let base = [
        "--profile",
        "h/profile.json",
        "--runner-tools",
        "h/tools",
        "-o",
        bad.as_str(),
    ];
    for (task, extra, says) in [
        ("evals/tasks.py@repeated_ids", vec![], "task repeated_ids: sample id \"a\" is repeated (samples #1 and #3); every sample needs its own id"),
        ("evals/tasks.py@missing_ids", vec![], "task missing_ids: sample #2 has no id (None)"),
        ("evals/tasks.py@echo_task", vec![], "task echo_task sets no limit, and a declaration declares at least one"),
        ("evals/tasks.py@echo_task", vec!["--message-limit", "10", "--scorer", "include"], "task echo_task has no scorer 'include' (its scorers: includes)"),
        ("evals/tasks.py@keyed", vec![], "task keyed: the scorer 'two_keys' gives one value per key (found, short), and a declared pass value is one string or number, so every sample would import as FAIL; a verdict is one value (wrap the task with a scorer that gives one); declare another of its scorers (includes)"),
        ("evals/nothing.py@nothing", vec!["--message-limit", "10"], "Inspect cannot load the task evals/nothing.py@nothing"),
    ] {
        let mut argv = vec!["draft", task];
        argv.extend_from_slice(&base);
        argv.extend(extra);
        let r = s.tool(&argv);
        assert_eq!(r.code, 2, "{argv:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{argv:?}: {}", r.stderr);
        assert!(!Path::new(&bad).exists(), "{argv:?} wrote a draft");
    }
    // The task with a keyed scorer, its other scorer declared: a draft.
    let r = s.tool(&[
        "draft",
        "evals/tasks.py@keyed",
        "--scorer",
        "includes",
        "--profile",
        "h/profile.json",
        "--runner-tools",
        "h/tools",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["tasks"][0]["inspect"]["scorer"], "includes");
    // The same task with a declared limit: one block per sample, its limit, its arguments.
    let r = s.tool(&[
        "draft",
        "evals/tasks.py@echo_task",
        "--message-limit",
        "10",
        "--profile",
        "h/profile.json",
        "--runner-tools",
        "h/tools",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    crate::schemas::assert_valid("campaign-draft", &v, "the generated draft of echo_task");
    let ids: Vec<&Value> = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["inspect"]["sample_id"])
        .collect();
    assert_eq!(ids, [&json!("a"), &json!("b"), &json!(7)]);
    assert_eq!(v["tasks"][2]["id"], "inspect/echo_task-7");
    assert_eq!(v["tasks"][0]["limits"], json!({"message_limit": 10}));
    assert_eq!(v["tasks"][0]["definition"], json!({"path": "evals"}));
    assert_eq!(v["repetitions"], 1);
}

/// A package task with task arguments (docs/reference/workflow.md, rule 5), as `inspect_evals/<task>` is one: the
/// package `ledger_demo` (tests/inspect/pkg) installed outside the harness, its dataset inside
/// the package, `-T level=hard` choosing its samples. The draft holds the samples of that
/// level only, the arguments as the log records them (defaults included) and the package's
/// version among the runtime requirements; pinned and run through `git-ledger-inspect run`,
/// its PASS rows are verified. A run with other arguments, or a declared scorer the task does
/// not have, is refused before Inspect starts; a package task needs `--definition`.
fn a_package_task_with_task_arguments(prefix: &str) {
    let venv = need_venv!();
    let s = Scratch::new(venv);
    crate::common::use_prefix(s.dir(), prefix);
    // "Installed": a directory named site-packages on the path (Inspect namespaces a task as
    // `package/name` only when its module lives under site-packages).
    let site = s.files.path().join("site-packages");
    let src = project_root().join("tests/inspect/pkg");
    for f in [
        "ledger_demo/__init__.py",
        "ledger_demo/_registry.py",
        "ledger_demo/spell.py",
        "ledger_demo/data/words.jsonl",
        "ledger_demo-0.1.0.dist-info/METADATA",
        "ledger_demo-0.1.0.dist-info/entry_points.txt",
    ] {
        write(&site, f, std::fs::read(src.join(f)).unwrap());
    }
    write(s.dir(), "h/requirements.txt", "ledger-demo==0.1.0\n");
    commit_all(s.dir(), "the harness pins the task package");
    let site_s = site.to_str().unwrap().to_owned();
    let bin_s = bin().to_str().unwrap().to_owned();
    let env = [
        ("PYTHONPATH", site_s.as_str()),
        ("GIT_LEDGER", bin_s.as_str()),
    ];
    let tool = |args: &[&str]| s.program("bin/git-ledger-inspect", args, &env);
    let draft = s.s("spell.draft.json");
    let base = [
        "draft",
        "ledger_demo/spell",
        "-T",
        "level=hard",
        "--profile",
        "h/profile.json",
        "--runner-tools",
        "h/tools",
        "-o",
        draft.as_str(),
    ];
    // Without --definition: refused, nothing written.
    let r = tool(&base);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("task ledger_demo/spell comes from a package (ledger-demo), not from a file of this repository: pass --definition DIR"),
        "{}",
        r.stderr
    );
    assert!(!Path::new(&draft).exists());
    let r = tool(&[&base[..], &["--definition", "h"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("draft spell: 2 tasks (ledger_demo/spell) x 1 repetition"),
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&draft).unwrap()).unwrap();
    crate::schemas::assert_valid("campaign-draft", &v, "the draft of a package task");
    let mut want_rt = s.runtime_requirements();
    want_rt["packages"]["ledger-demo"] = json!("0.1.0");
    assert_eq!(v["runtime_requirements"], want_rt);
    let tasks = v["tasks"].as_array().unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["inspect/spell-hard-1", "inspect/spell-hard-2"]);
    for t in tasks {
        assert_eq!(t["inspect"]["task"], "ledger_demo/spell");
        assert_eq!(
            t["inspect"]["task_args"],
            json!({"level": "hard", "shout": false})
        );
        assert_eq!(t["limits"], json!({"message_limit": 10}), "the task's own");
        assert_eq!(t["definition"], json!({"path": "h"}));
        assert_eq!(t["evidence"], "fixture", "the task's model is mockllm");
    }
    let decl = s.s("spell.json");
    ledger(s.dir(), &["pin", &draft, "-o", &decl]).ok();
    ledger(s.dir(), &["init", &decl]).ok();

    let run = |extra: &[&str]| {
        let mut argv = vec![
            "run",
            "--ref",
            "spell",
            "--",
            "eval",
            "ledger_demo/spell",
            "--log-dir",
            "logs",
        ];
        argv.extend_from_slice(extra);
        tool(&argv)
    };
    // Other task arguments than declared: refused before the run.
    for (extra, says) in [
        (
            vec!["-T", "level=easy"],
            "task arguments declared {\"level\": \"hard\", \"shout\": false}, the run gives {\"level\": \"easy\", \"shout\": false}",
        ),
        (
            vec!["-T", "level=hard", "-T", "shout=true"],
            "the run gives {\"level\": \"hard\", \"shout\": true}",
        ),
        (vec![], "the run gives {\"level\": \"easy\", \"shout\": false}"),
    ] {
        let r = run(&extra);
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{extra:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("not ready; the run was not started"),
            "{}",
            r.stderr
        );
        assert!(s.logs("logs").is_empty(), "{extra:?} ran Inspect");
    }
    // A declared scorer the package task does not have: refused before the run.
    let mut typo = v.clone();
    typo["id"] = json!("spell-typo");
    for t in typo["tasks"].as_array_mut().unwrap() {
        t["inspect"]["scorer"] = json!("match");
    }
    let typo_draft = s.s("typo.draft.json");
    std::fs::write(&typo_draft, serde_json::to_vec_pretty(&typo).unwrap()).unwrap();
    let typo_decl = s.s("typo.json");
    ledger(s.dir(), &["pin", &typo_draft, "-o", &typo_decl]).ok();
    let r = tool(&[
        "check",
        "--declaration",
        &typo_decl,
        "--",
        "eval",
        "ledger_demo/spell",
        "-T",
        "level=hard",
        "--log-dir",
        "logs",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("inspect/spell-hard-1, inspect/spell-hard-2: the declared scorer 'match' is not a scorer of Inspect task ledger_demo/spell (its scorers: includes)"),
        "{}",
        r.stderr
    );

    let r = run(&["-T", "level=hard"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("git-ledger-inspect: done: 1 log, every sample in the ledger"),
        "{}",
        r.stderr
    );
    let show = ledger(s.dir(), &["show", "--ref", "spell"]);
    show.ok();
    for row in show.json()["rows"].as_array().unwrap() {
        assert_eq!(
            row["runtime_identity"]["packages"]["ledger-demo"], "0.1.0",
            "{row:#}"
        );
    }
    git(
        s.dir(),
        &["rev-parse", "--verify", &format!("{prefix}spell")],
    );
    let rep = ledger(s.dir(), &["report", "--ref", "spell", "--json"]);
    rep.ok();
    let fixture = &rep.json()["sections"]["fixture"];
    assert_eq!(fixture["attempted"], 2, "{fixture:#}");
    assert_eq!(
        fixture["outcomes"]["verified_delivery"]["rows"],
        json!(["inspect/spell-hard-1/01"]),
        "{fixture:#}"
    );
    assert_eq!(fixture["comparison"]["blocked"], false, "{fixture:#}");
}

crate::common::under_both_prefixes!(
    the_revision_of_a_run_inside_a_git_repository,
    the_hook_imports_each_log_when_its_task_ends,
    an_edited_score_never_replaces_the_scorer_s_own,
    an_eval_set_retry_is_the_first_try_s_error,
    the_run_command_checks_runs_and_imports,
    a_generated_draft_pins_runs_and_verifies,
    a_package_task_with_task_arguments,
);
