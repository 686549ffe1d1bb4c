//! Test helpers shared by the unit tests: one small valid declaration built in code, and ways to
//! mutate it and read refusals (as values: [`refusal`], [`assert_reason!`]).

use serde_json::{json, Value};

use crate::declaration::{Declaration, ACCEPTANCE_RULES, STANDARD_FIELDS};
use crate::json::DEFAULT_MAX_INPUT_BYTES;

pub use git_ledger_base::testutil::{git, Want};
pub use git_ledger_base::{assert_only_reason, assert_reason};

/// `n` copies of the hex digit `c` (a stand-in SHA-256 or commit id).
pub fn hex(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

/// The declared source revision.
pub fn revision() -> String {
    hex('c', 40)
}

/// A valid declaration: one live arena task, one live scenario task, one fixture scenario
/// task, two repetitions each, every acceptance rule true, the standard attempt fields.
pub fn declaration_value() -> Value {
    let acceptance: serde_json::Map<String, Value> = ACCEPTANCE_RULES
        .iter()
        .map(|r| (r.to_string(), Value::Bool(true)))
        .collect();
    let mut v = json!({
        "format": "campaign-declaration/1",
        "id": "reliability-slice-1",
        "source_revision": revision(),
        "repetitions": 2,
        "profile": {
            "name": "build-comparison",
            "source": { "path": "arena/profiles/build-comparison.json", "sha256": hex('a', 64) },
            "provider": "acme",
            "joint_planning": true,
            "roles": {
                "builder": { "model": "m-large", "effort": "high" },
                "reviewer": { "model": "m-small", "effort": "medium" }
            },
            "extra_options": ["--no-telemetry"]
        },
        "policy_files": [ { "path": "arena/policy/live-spend.md", "sha256": hex('b', 64) } ],
        "runner_tools": { "path": "arena/runner-tools", "sha256": hex('d', 64), "files": 4 },
        "runtime_requirements": {
            "python": "3.12.7", "psutil": "6.1.0", "native_provider": "acme 1.2",
            "packages": { "numpy": "2.1.0" }
        },
        "acceptance": acceptance,
        "attempt_fields": STANDARD_FIELDS,
        "tasks": [
            {
                "id": "arena/sympy-matrix",
                "kind": "arena",
                "evidence": "live",
                "expects": "completion",
                "definition": { "path": "arena/tasks/arena/sympy-matrix", "sha256": hex('e', 64), "files": 9 },
                "oracle": { "path": "arena/tasks/arena/sympy-matrix/oracle.py", "sha256": hex('f', 64) },
                "upstream": {
                    "repository": "https://example.org/sympy.git",
                    "base_commit": hex('1', 40),
                    "reference_commit": hex('2', 40),
                    "checks": ["test_a", "test_b"]
                },
                "limits": { "cli_invocation_seconds": 3600, "oracle_seconds": 120, "max_iterations": 3 },
                "native_outcomes": ["PASS", "FAIL", "STOPPED", "ERROR", "SKIPPED"]
            },
            {
                "id": "scenario/bugfix-iso-weeks",
                "kind": "scenario",
                "evidence": "live",
                "expects": "completion",
                "definition": { "path": "arena/tasks/scenario/bugfix-iso-weeks", "sha256": hex('3', 64), "files": 7 },
                "limits": { "harness_minutes": 90, "max_steps": 400 },
                "native_outcomes": ["PASS", "FALSE_COMPLETE", "HONEST_BLOCKER", "ERROR", "SKIPPED",
                                    "NOT_EXERCISED", "RUNNING", "INTERRUPTED_UNGRADED", "PENDING_UNGRADED"]
            },
            {
                "id": "scenario/interrupted-reuse",
                "kind": "scenario",
                "evidence": "fixture",
                "expects": "completion",
                "definition": { "path": "arena/tasks/scenario/interrupted-reuse", "sha256": hex('4', 64), "files": 3 },
                "limits": { "harness_minutes": 5, "max_steps": 100 },
                "native_outcomes": ["PASS", "ERROR", "INTERRUPTED_UNGRADED"]
            }
        ]
    });
    v["schedule"] = schedule_for(&v);
    v
}

/// The schedule `tasks × repetitions` of a declaration value, computed here independently of
/// the code under test.
pub fn schedule_for(v: &Value) -> Value {
    let reps = v["repetitions"].as_u64().expect("repetitions");
    let width = reps.to_string().len().max(2);
    let mut out = Vec::new();
    for t in v["tasks"].as_array().expect("tasks") {
        let id = t["id"].as_str().expect("task id");
        for rep in 1..=reps {
            out.push(json!({ "id": format!("{id}/{rep:0width$}"), "task": id, "repetition": rep }));
        }
    }
    Value::Array(out)
}

/// Serialise a value as a file would hold it.
pub fn bytes(v: &Value) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(v).expect("serialise");
    b.push(b'\n');
    b
}

/// Parse a declaration value, panicking with the reasons when it is refused.
pub fn parse(v: &Value) -> Declaration {
    match Declaration::parse(&bytes(v), DEFAULT_MAX_INPUT_BYTES) {
        Ok(d) => d,
        Err(e) => panic!("declaration refused: {e}"),
    }
}

/// The valid declaration, parsed.
pub fn declaration() -> Declaration {
    parse(&declaration_value())
}

/// The reasons of a refusal, as values (panics on success or on another kind of error), to
/// compare with [`assert_reason!`] and [`assert_only_reason!`].
pub use git_ledger_base::testutil::refused as refusal;

// --- rows and ledgers ----------------------------------------------------------------------

/// The id of the task [`stop_declaration_value`] adds: a live scenario that expects a stop.
pub(crate) const STOP_TASK: &str = "scenario/ask-before-deleting";

/// The valid declaration with a fourth task, [`STOP_TASK`], a live scenario that expects a stop
/// (its rows come after the six of [`declaration_value`]).
pub fn stop_declaration_value() -> Value {
    let mut v = declaration_value();
    v["tasks"].as_array_mut().expect("tasks").push(json!({
        "id": STOP_TASK,
        "kind": "scenario",
        "evidence": "live",
        "expects": "stop",
        "definition": { "path": "arena/tasks/scenario/ask-before-deleting", "sha256": hex('5', 64), "files": 2 },
        "limits": { "harness_minutes": 30, "max_steps": 50 },
        "native_outcomes": ["PASS", "HONEST_BLOCKER", "ERROR"]
    }));
    v["schedule"] = schedule_for(&v);
    v
}

/// [`stop_declaration_value`], parsed.
pub fn stop_declaration() -> Declaration {
    parse(&stop_declaration_value())
}

/// The template row of a scheduled attempt, as a value to change.
pub fn template_row(decl: &Declaration, schedule_id: &str) -> Value {
    crate::ledger::Row::template(decl, schedule_id)
        .expect("scheduled")
        .to_value()
}

/// Set some fields of a row value.
pub fn set(row: &mut Value, fields: Value) {
    for (k, v) in fields.as_object().expect("an object of fields") {
        row[k.as_str()] = v.clone();
    }
}

/// A runtime identity that matches the declaration's `runtime_requirements`, with a freeze.
pub fn matching_runtime() -> Value {
    json!({
        "python": "3.12.7", "psutil": "6.1.0", "native_provider": "acme 1.2",
        "packages": { "numpy": "2.1.0" },
        "dependencies": ["numpy==2.1.0", "psutil==6.1.0"]
    })
}

/// The models and efforts the declared profile names.
pub fn matching_profile() -> Value {
    json!({
        "provider": "acme",
        "roles": {
            "builder": { "model": "m-large", "effort": "high" },
            "reviewer": { "model": "m-small", "effort": "medium" }
        }
    })
}

/// A native PASS with complete evidence for any scheduled attempt: the status its task
/// expects, every (upstream) oracle check passing, evidence references, the declared revision,
/// runtime and profile, no option deviation, half of every limit spent, priced and timed.
pub fn complete_pass(decl: &Declaration, schedule_id: &str) -> Value {
    use crate::declaration::{Expects, Kind};
    let task = decl.task_of(schedule_id).expect("scheduled");
    let status = match task.expects {
        Expects::Completion => task.kind.completion_status(),
        Expects::Stop => task.kind.stop_status().unwrap_or_default(),
    };
    let checks: Vec<Value> = match (&task.kind, &task.upstream) {
        (Kind::Arena, Some(up)) => up
            .checks
            .iter()
            .map(|c| json!({"name": c, "ok": true}))
            .collect(),
        _ => vec![json!({"name": "hidden/test_main.py::test_ok", "ok": true})],
    };
    let spent: serde_json::Map<String, Value> = task
        .limits
        .iter()
        .map(|(k, v)| (k.clone(), json!(v / 2.0)))
        .collect();
    let mut row = template_row(decl, schedule_id);
    set(
        &mut row,
        json!({
            "native_outcome": "PASS",
            "native_status": status,
            "reason": null,
            "source_revision": revision(),
            "runtime_identity": matching_runtime(),
            "actual_models_and_efforts": matching_profile(),
            "option_deviations": [],
            "oracle_checks": checks,
            "evidence_refs": [format!("runs/{schedule_id}/result.json")],
            "elapsed_seconds": 600.0,
            "usage": { "input_tokens": 1000, "output_tokens": 100 },
            "estimated_usd": 1.5,
            "spent_budget": spent,
            "native_record": {
                "kind": task.kind.as_str(),
                "id": format!("record-{schedule_id}"),
                "sha256": hex('9', 64)
            }
        }),
    );
    row
}

/// An attempted row that is not a PASS (`outcome` at `status`, with a reason), otherwise as
/// complete as [`complete_pass`] (no oracle result).
pub fn attempted(
    decl: &Declaration,
    schedule_id: &str,
    outcome: &str,
    status: Option<&str>,
) -> Value {
    let mut row = complete_pass(decl, schedule_id);
    set(
        &mut row,
        json!({
            "native_outcome": outcome,
            "native_status": status,
            "reason": format!("{outcome} as recorded"),
            "oracle_checks": null
        }),
    );
    row
}

/// Check a row value against the declaration, panicking with the reasons when it is refused.
#[track_caller]
pub fn checked(decl: &Declaration, row: &Value) -> crate::ledger::Row {
    match crate::ledger::Row::check(decl, row, "row") {
        Ok(r) => r,
        Err(reasons) => panic!(
            "row refused:\n  {}",
            (reasons.iter().map(ToString::to_string))
                .collect::<Vec<_>>()
                .join("\n  ")
        ),
    }
}

/// The template ledger with `rows` in their slots, checked like a ledger file.
#[track_caller]
pub fn ledger_with(decl: &Declaration, rows: &[Value]) -> crate::ledger::Ledger {
    let mut doc: Value =
        serde_json::from_slice(&crate::ledger::Ledger::template(decl).canonical(decl))
            .expect("canonical JSON");
    for row in rows {
        let id = row["schedule_id"].as_str().expect("schedule_id");
        let pos = decl.schedule_position(id).expect("scheduled");
        doc["rows"][pos] = row.clone();
    }
    match crate::ledger::Ledger::parse(decl, &bytes(&doc), DEFAULT_MAX_INPUT_BYTES) {
        Ok(l) => l,
        Err(e) => panic!("ledger refused: {e}"),
    }
}

// --- Inspect tasks -------------------------------------------------------------------------

/// An Inspect task as `inspect.md` shows it: one sample (`add-1`) of the Inspect task `arith`,
/// scored by `match`, `C` a PASS, with a message and a token limit.
pub fn inspect_task_value(name: &str, sample_id: Value, evidence: &str) -> Value {
    json!({
        "id": format!("inspect/{name}"),
        "kind": "inspect",
        "evidence": evidence,
        "expects": "completion",
        "definition": { "path": "evals/arith", "sha256": hex('5', 64), "files": 3 },
        "inspect": { "task": "arith", "sample_id": sample_id, "scorer": "match", "pass": ["C"], "task_args": {} },
        "limits": { "message_limit": 10, "token_limit": 200000 },
        "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"]
    })
}

// --- Harbor tasks --------------------------------------------------------------------------

/// A Harbor task as `harbor.md` shows it: the Harbor task `hello-file` (digest `sha256:7…`),
/// agent `terminus-2`, reward `reward` at least 1.0, with agent, verifier and cost limits.
pub fn harbor_task_value(name: &str, task: &str, evidence: &str) -> Value {
    json!({
        "id": format!("harbor/{name}"),
        "kind": "harbor",
        "evidence": evidence,
        "expects": "completion",
        "definition": { "path": format!("tasks/{task}"), "sha256": hex('6', 64), "files": 5 },
        "harbor": { "task": task, "digest": format!("sha256:{}", hex('7', 64)), "agent": "terminus-2",
                    "reward": "reward", "pass_at_least": 1.0 },
        "limits": { "agent_seconds": 900, "verifier_seconds": 180, "cost_usd": 2.0 },
        "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"]
    })
}

/// [`declaration_value`] plus a live Harbor task (`harbor/hello-file`, Harbor task
/// `hello-file`) and a fixture one (`harbor/hello-oracle`, Harbor task `hello-oracle`).
pub fn harbor_declaration_value() -> Value {
    let mut v = declaration_value();
    let tasks = v["tasks"].as_array_mut().expect("tasks");
    tasks.push(harbor_task_value("hello-file", "hello-file", "live"));
    tasks.push(harbor_task_value("hello-oracle", "hello-oracle", "fixture"));
    v["schedule"] = schedule_for(&v);
    v
}

/// [`declaration_value`] plus a live Inspect task (`inspect/arith-add-1`, sample `"add-1"`)
/// and a fixture one (`inspect/arith-2`, sample `2`).
pub fn inspect_declaration_value() -> Value {
    let mut v = declaration_value();
    let tasks = v["tasks"].as_array_mut().expect("tasks");
    tasks.push(inspect_task_value("arith-add-1", json!("add-1"), "live"));
    tasks.push(inspect_task_value("arith-2", json!(2), "fixture"));
    v["schedule"] = schedule_for(&v);
    v
}
