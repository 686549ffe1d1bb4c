//! A Harbor job of many trials for the benchmark and the tests: each trial a copy of a real
//! Harbor 0.25 trial of the tests' data (`tests/data/harbor-jobs/j1`: a passing `hello-file`
//! trial for even tasks, a failing `wrong-answer` trial for odd ones) with its task name,
//! trial name and id replaced, a declaration of its tasks in canonical form and the ledger
//! template. `examples/common/harbor_bench.rs` and `tests/cli/harbor.rs` include it, each with
//! `bench_campaign.rs`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

// `bench_campaign.rs`, which the includer of this file provides beside it.
use super::bench_campaign;

/// (template trial directory name, its task name) in `tests/data/harbor-jobs/j1`.
const TEMPLATES: [(&str, &str); 2] = [
    ("hello-file__eD2pj5h", "hello-file"),
    ("wrong-answer__iXAkqa2", "wrong-answer"),
];

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/harbor-jobs/j1")
}

/// A 7-character trial suffix, as Harbor's (letters and digits), unique per (task, attempt).
fn suffix(task: usize, attempt: u64) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut n = (task as u64) * 16 + attempt + 1_000_003;
    (0..7)
        .map(|_| {
            let c = A[(n % 62) as usize] as char;
            n /= 62;
            c
        })
        .collect()
}

/// Write a job of `tasks` × `attempts` trials (`jobs/bench`), the same job with its first trial
/// only (`jobs/one`) and a declaration of its tasks (fixture tasks: Harbor's oracle agent) into
/// `dir`; returns (job directory, declaration, ledger template) paths.
pub fn generate(dir: &Path, tasks: usize, attempts: u64) -> (PathBuf, PathBuf, PathBuf) {
    let job = dir.join("jobs/bench");
    std::fs::create_dir_all(&job).unwrap();
    let src = shared();
    for f in ["config.json", "result.json", "job.log", "lock.json"] {
        std::fs::copy(src.join(f), job.join(f)).unwrap();
    }
    let templates: Vec<(String, String, String, String, String)> = TEMPLATES
        .iter()
        .map(|(trial, task)| {
            let result = std::fs::read_to_string(src.join(trial).join("result.json")).unwrap();
            let lock = std::fs::read_to_string(src.join(trial).join("lock.json")).unwrap();
            let id = serde_json::from_str::<Value>(&result).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned();
            (trial.to_string(), task.to_string(), result, lock, id)
        })
        .collect();
    let n_tasks = tasks;
    let mut tasks = Vec::new();
    for t in 0..n_tasks {
        let (trial, task, result, lock, id) = &templates[t % 2];
        let name = format!("task-{t:04}");
        let digest = serde_json::from_str::<Value>(lock).unwrap()["task"]["digest"]
            .as_str()
            .unwrap()
            .to_owned();
        for a in 0..attempts {
            let trial_name = format!("{name}__{}", suffix(t, a));
            let d = job.join(&trial_name);
            std::fs::create_dir_all(&d).unwrap();
            let uuid = format!("00000000-0000-4000-8000-{:012}", t * 16 + a as usize);
            let r = result
                .replace(trial.as_str(), &trial_name)
                .replace(&format!("\"{task}\""), &format!("\"{name}\""))
                .replace(&format!("tasks/{task}"), &format!("tasks/{name}"))
                .replace(id.as_str(), &uuid);
            std::fs::write(d.join("result.json"), r).unwrap();
            let l = lock
                .replace(&format!("\"{task}\""), &format!("\"{name}\""))
                .replace(&format!("tasks/{task}"), &format!("tasks/{name}"));
            std::fs::write(d.join("lock.json"), l).unwrap();
        }
        tasks.push(json!({
            "id": format!("harbor/{name}"), "kind": "harbor", "evidence": "fixture",
            "expects": "completion",
            "definition": {"path": format!("tasks/{name}"), "sha256": "5".repeat(64), "files": 5},
            "harbor": {"task": name, "digest": digest, "agent": "oracle", "reward": "reward",
                       "pass_at_least": 1.0},
            "limits": {"agent_seconds": 60.0},
            "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"]
        }));
    }
    let schedule: Vec<Value> = tasks
        .iter()
        .flat_map(|t| (1..=attempts).map(move |r| json!({
            "id": format!("{}/{r:02}", t["id"].as_str().unwrap()), "task": t["id"], "repetition": r})))
        .collect();
    // The same job with its first trial only: what an import costs whatever its size (the
    // declaration and the ledger read, the ledger written).
    let one = dir.join("jobs/one");
    std::fs::create_dir_all(&one).unwrap();
    for f in ["config.json", "result.json", "job.log", "lock.json"] {
        std::fs::copy(job.join(f), one.join(f)).unwrap();
    }
    let first = format!("task-0000__{}", suffix(0, 0));
    std::fs::create_dir_all(one.join(&first)).unwrap();
    for f in ["result.json", "lock.json"] {
        std::fs::copy(job.join(&first).join(f), one.join(&first).join(f)).unwrap();
    }
    let rules = git_ledger::declaration::ACCEPTANCE_RULES;
    let decl = json!({
        "format": "campaign-declaration/1", "id": "harbor-bench", "source_revision": "c".repeat(40),
        "repetitions": attempts,
        "profile": {"name": "harbor-oracle", "source": {"path": "p.json", "sha256": "a".repeat(64)},
                    "provider": "none", "joint_planning": false,
                    "roles": {"agent": {"model": "oracle", "effort": null}}, "extra_options": []},
        "policy_files": [], "runner_tools": {"path": "tools", "sha256": "d".repeat(64), "files": 1},
        "runtime_requirements": {"python": "3.12.1"},
        "acceptance": rules.iter().map(|r| (r.to_string(), Value::Bool(true))).collect::<serde_json::Map<_, _>>(),
        "attempt_fields": git_ledger::declaration::STANDARD_FIELDS,
        "tasks": tasks, "schedule": schedule
    });
    let (decl_path, template) = bench_campaign::write_campaign(dir, &decl);
    (job, decl_path, template)
}
