//! The Inspect import benchmark: one `.eval` log of 1,000 samples × 2 epochs (zstd members, as
//! a current Inspect writes), built from a real sample of Inspect's own test logs
//! (`tests/data/inspect-logs/log_streaming.eval`, MIT) with each id, epoch and uuid replaced;
//! imported into a file-mode ledger by the release binary, beside Inspect's own
//! `read_eval_log` on the same file when an Inspect venv is there
//! (`GIT_LEDGER_INSPECT_VENV`, or `target/inspect-venv`, which `.ci/inspect-venv.sh` builds).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use git_ledger::import::inspect::zip::{write_archive, Archive};

use crate::bench_campaign;

pub const SAMPLES: usize = 1000;
pub const EPOCHS: u64 = 2;

fn member(a: &Archive<'_>, name: &str) -> Value {
    let i = a.last(name).expect("member");
    serde_json::from_slice(&a.read(i, 1 << 26).expect("read")).expect("json")
}

/// Write the log and a declaration of its samples (fixture tasks: the model is replaced by
/// `mockllm/model`) into `dir`; returns (log, declaration, ledger template) paths.
pub fn generate(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/inspect-logs/log_streaming.eval");
    let bytes = std::fs::read(src).unwrap();
    let a = Archive::open(&bytes).unwrap();
    let mut header = member(&a, "header.json");
    let mut start = member(&a, "_journal/start.json");
    let template = member(&a, "samples/1_epoch_1.json");
    let ids: Vec<u64> = (1..=SAMPLES as u64).collect();
    for doc in [&mut header, &mut start] {
        let e = &mut doc["eval"];
        e["model"] = json!("mockllm/model");
        e["config"]["epochs"] = json!(EPOCHS);
        e["config"]["message_limit"] = json!(10);
        e["config"].as_object_mut().unwrap().remove("limit");
        e["dataset"]["samples"] = json!(SAMPLES);
        e["dataset"]["sample_ids"] = json!(ids);
    }
    let mut members: Vec<(String, Vec<u8>)> = vec![(
        "_journal/start.json".into(),
        serde_json::to_vec(&start).unwrap(),
    )];
    for epoch in 1..=EPOCHS {
        for id in &ids {
            let mut s = template.clone();
            s["id"] = json!(id);
            s["epoch"] = json!(epoch);
            s["uuid"] = json!(format!("bench-{id}-{epoch}"));
            let usage = s["model_usage"]
                .as_object()
                .unwrap()
                .values()
                .next()
                .cloned()
                .unwrap();
            s["model_usage"] = json!({"mockllm/model": usage});
            members.push((
                format!("samples/{id}_epoch_{epoch}.json"),
                serde_json::to_vec(&s).unwrap(),
            ));
        }
    }
    members.push(("header.json".into(), serde_json::to_vec(&header).unwrap()));
    let m: Vec<(&str, &[u8], u16)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice(), 93))
        .collect();
    let log = dir.join("bench.eval");
    std::fs::write(&log, write_archive(&m)).unwrap();

    let rules = git_ledger::declaration::ACCEPTANCE_RULES;
    let tasks: Vec<Value> = ids
        .iter()
        .map(|id| json!({
            "id": format!("inspect/popularity-{id}"), "kind": "inspect", "evidence": "fixture",
            "expects": "completion",
            "definition": {"path": "evals/popularity", "sha256": "5".repeat(64), "files": 1},
            "inspect": {"task": "popularity", "sample_id": id, "scorer": "match", "pass": ["C"], "task_args": {}},
            "limits": {"message_limit": 10},
            "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"]
        }))
        .collect();
    let schedule: Vec<Value> = tasks
        .iter()
        .flat_map(|t| (1..=EPOCHS).map(move |r| json!({
            "id": format!("{}/{r:02}", t["id"].as_str().unwrap()), "task": t["id"], "repetition": r})))
        .collect();
    let decl = json!({
        "format": "campaign-declaration/1", "id": "inspect-bench", "source_revision": "c".repeat(40),
        "repetitions": EPOCHS,
        "profile": {"name": "p", "source": {"path": "p.json", "sha256": "a".repeat(64)}, "provider": "mockllm",
                    "joint_planning": false, "roles": {"default": {"model": "mockllm/model", "effort": "high"}},
                    "extra_options": []},
        "policy_files": [], "runner_tools": {"path": "tools", "sha256": "d".repeat(64), "files": 1},
        "runtime_requirements": {"python": "3.11"},
        "acceptance": rules.iter().map(|r| (r.to_string(), Value::Bool(true))).collect::<serde_json::Map<_, _>>(),
        "attempt_fields": git_ledger::declaration::STANDARD_FIELDS,
        "tasks": tasks, "schedule": schedule
    });
    let (decl_path, template) = bench_campaign::write_campaign(dir, &decl);
    (log, decl_path, template)
}

/// The Inspect venv's python, if there is one (`GIT_LEDGER_INSPECT_VENV`, else `inspect-venv`
/// where `.ci/inspect-venv.sh` puts it: see [`super::venv::python`]).
pub fn venv_python() -> Option<PathBuf> {
    super::venv::python("GIT_LEDGER_INSPECT_VENV", "inspect-venv")
}

/// Run `c` (it must succeed): its wall time, its CPU time (user + system, the child's own
/// `getrusage(RUSAGE_CHILDREN)` figures, to the microsecond: `/usr/bin/time` rounds to 10 ms,
/// a third of what a Harbor import of 1,000 trials is to take) and its stdout. The child is
/// waited for by this process, so the difference of the children's totals before and after
/// is its own CPU time (and its children's, if it starts any).
pub fn timed(mut c: Command) -> (Duration, Duration, Vec<u8>) {
    let before = children_cpu();
    let start = Instant::now();
    let out = c.output().expect("run the command");
    let wall = start.elapsed();
    let cpu = children_cpu().saturating_sub(before);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    (wall, cpu, out.stdout)
}

/// The CPU time (user + system) of every child this process has waited for.
fn children_cpu() -> Duration {
    let (user, system) = crate::rusage::cpu(libc::RUSAGE_CHILDREN);
    user + system
}

/// The best of `runs` imports of the log into a fresh copy of the template ledger: (wall, CPU).
pub fn import(
    bin: &Path,
    dir: &Path,
    log: &Path,
    decl: &Path,
    template: &Path,
    runs: usize,
) -> (Duration, Duration) {
    (0..runs)
        .map(|_| {
            let ledger = dir.join("ledger.json");
            std::fs::copy(template, &ledger).unwrap();
            let mut c = Command::new(bin);
            c.current_dir(dir)
                .arg("import")
                .arg(decl)
                .arg(&ledger)
                .arg("--inspect")
                .arg(log)
                .arg("--json");
            let (wall, cpu, stdout) = timed(c);
            let v: Value = serde_json::from_slice(&stdout).unwrap();
            assert_eq!(
                v["imported"].as_array().unwrap().len(),
                SAMPLES * EPOCHS as usize
            );
            (wall, cpu)
        })
        .min_by_key(|(_, cpu)| *cpu)
        .unwrap()
}

/// Inspect's `read_eval_log` of the log (best of `runs`): the call's wall and CPU time, and the
/// whole process's CPU time (Python's start and imports included).
pub fn read_eval_log(python: &Path, log: &Path, runs: usize) -> (Duration, Duration, Duration) {
    let script = "import sys, time\nfrom inspect_ai.log import read_eval_log\nt, c = time.perf_counter(), time.process_time()\nlog = read_eval_log(sys.argv[1])\nprint(time.perf_counter() - t, time.process_time() - c)\nassert len(log.samples) == int(sys.argv[2]), len(log.samples)\n";
    (0..runs)
        .map(|_| {
            let mut c = Command::new(python);
            c.arg("-c")
                .arg(script)
                .arg(log)
                .arg((SAMPLES * EPOCHS as usize).to_string());
            let (_, whole_cpu, stdout) = timed(c);
            let text = String::from_utf8_lossy(&stdout);
            let mut it = text.split_whitespace().map(|x| x.parse::<f64>().unwrap());
            let (wall, cpu) = (it.next().unwrap(), it.next().unwrap());
            (
                Duration::from_secs_f64(wall),
                Duration::from_secs_f64(cpu),
                whole_cpu,
            )
        })
        .min_by_key(|(_, c, _)| *c)
        .unwrap()
}
