//! The ledger rules of `ledger.md` from both sides: the template and its canonical bytes, and
//! refusal groups 1–7, each broken on its own and named in the reason.

use serde_json::{json, Value};

use super::view::Field;
use super::*;
use crate::declaration::{Declaration, STANDARD_FIELDS};
use crate::json::DEFAULT_MAX_INPUT_BYTES;
use crate::json::{self, Obj, View, J};
use crate::refusal::{Reason, Rule};
use crate::testutil::{
    assert_only_reason, assert_reason, declaration, declaration_value, hex, parse, revision,
    schedule_for,
};

const ARENA_1: &str = "arena/sympy-matrix/01";
const SCENARIO_1: &str = "scenario/bugfix-iso-weeks/01";
const FIXTURE_1: &str = "scenario/interrupted-reuse/01";

/// Rows of the template, by position: 0–1 arena (live), 2–3 scenario (live), 4–5 fixture.
const ARENA_ROW: usize = 0;
const SCENARIO_ROW: usize = 2;
const FIXTURE_ROW: usize = 4;

/// The template ledger of `decl` as a JSON value, for mutation.
fn template_value(decl: &Declaration) -> Value {
    serde_json::from_slice(&Ledger::template(decl).canonical(decl)).expect("canonical JSON")
}

/// Parse a ledger value against `decl`. The fast path and the ordinary one agree.
fn parse_ledger(decl: &Declaration, v: &Value) -> crate::Result<Ledger> {
    let b = crate::testutil::bytes(v);
    let parsed = Ledger::parse(decl, &b, DEFAULT_MAX_INPUT_BYTES);
    let ordinary = crate::json::parse_document(&b, "ledger", DEFAULT_MAX_INPUT_BYTES)
        .and_then(|v| Ledger::from_owned_value(decl, v));
    match (&parsed, &ordinary) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => assert_eq!(a.refusal_reasons(), b.refusal_reasons()),
        _ => panic!("fast and ordinary paths disagree: {parsed:?} / {ordinary:?}"),
    }
    // The rows parsed as `Node`s and checked through their view: the same rows or refusal.
    let kept = Ledger::parse_kept(decl, &b, DEFAULT_MAX_INPUT_BYTES, &AsValue);
    match (&parsed, &kept) {
        (Ok(a), Ok(k)) => assert_eq!(
            (a.rows.iter())
                .map(|r| (r.to_value(), crate::report::RowSummary::of(decl, r)))
                .collect::<Vec<_>>(),
            k.iter().cloned().collect::<Vec<_>>()
        ),
        (Err(a), Err(b)) => assert_eq!(a.refusal_reasons(), b.refusal_reasons()),
        _ => panic!("parse and parse_kept disagree: {parsed:?} / {kept:?}"),
    }
    // The fast paths say yes to every ledger the rules admit (else a fault in them would only
    // show as a slow report) and to nothing else.
    assert_eq!(super::fast::parse(decl, &b).is_some(), parsed.is_ok());
    assert_eq!(
        super::fast::parse_kept(decl, &b, &AsValue, &|_| {}).is_some(),
        parsed.is_ok()
    );
    parsed
}

/// Keeps each row whole, as a `Value`, and what the report reads of it through its view (to
/// compare `parse_kept` with `parse`).
struct AsValue;

impl Keep for AsValue {
    type Kept = (Value, crate::report::RowSummary);
    fn keep<O: Obj>(&self, decl: &Declaration, row: RowView<'_, O>) -> Self::Kept {
        (
            J::<O::V>::Object(row.obj).to_value(),
            crate::report::RowSummary::of_view(decl, row),
        )
    }
}

/// [`Row::check`] of `row` parsed as a [`json::Node`] and checked through its view by
/// [`check_members`]: must agree with the `Value` path, reason for reason.
#[track_caller]
fn check_both_ways(decl: &Declaration, row: &Value) -> std::result::Result<Row, Vec<Reason>> {
    let checked = Row::check(decl, row, "row");
    let text = row.to_string();
    let node = json::parse_node(&text, 2).unwrap();
    let by_node = match &node {
        json::Node::Object(m) => check_members(decl, m, &"row"),
        other => Err(vec![Reason::new(format!(
            "a row must be an object, not {}",
            other.view().type_name()
        ))
        .at("row")]),
    };
    assert_eq!(
        checked.as_ref().map(|_| ()).map_err(Clone::clone),
        by_node.as_ref().map(|_| ()).map_err(Clone::clone)
    );
    if let (Ok(r), Ok((pos, b))) = (&checked, by_node) {
        assert_eq!(Some(pos), decl.schedule_position(r.schedule_id()));
        // The accessors read the same through either view: by name from the `Map`, by the
        // positions the key check found from the `Members`.
        let a = r.view();
        assert!(a.at.is_none() && b.at.is_some());
        assert_eq!(
            crate::portfolio::classify_view(decl, a),
            crate::portfolio::classify_view(decl, b)
        );
        assert_eq!(
            crate::report::RowSummary::of_view(decl, a),
            crate::report::RowSummary::of_view(decl, b)
        );
    }
    checked
}

#[test]
fn a_large_ledger_is_checked_on_every_core_as_by_the_ordinary_path() {
    let d = parse(&{
        let mut v = declaration_value();
        v["repetitions"] = json!(999);
        v["schedule"] = schedule_for(&v);
        v
    });
    assert!(d.schedule_len() > fast_rows_threshold());
    let l = ledger_ok(&d, |_| {});
    assert_eq!(l.rows.len(), d.schedule_len());
    // Faults late in the document (a duplicate, a wrong task id) are named as before.
    let r = ledger_reasons(&d, |v| {
        let rows = v["rows"].as_array_mut().unwrap();
        let n = rows.len();
        rows[n - 1]["task_id"] = json!("scenario/other");
        rows[n - 2] = rows[n - 3].clone();
    });
    assert_eq!(r.len(), 3, "{r:?}");
}

fn fast_rows_threshold() -> usize {
    2_000
}

/// The reasons of a refusal, as values (panics on success or another kind of error).
#[track_caller]
fn refusal<T: std::fmt::Debug>(r: crate::Result<T>) -> Vec<Reason> {
    match r {
        Err(crate::error::Error::Refused(r)) => {
            assert!(!r.is_empty(), "a refusal lists at least one reason");
            r.into_vec()
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Assert that some reason is about `row` and `field`, breaks refusal group `group` of
/// `ledger.md`, and says `sentence` (whole).
#[track_caller]
fn assert_named(reasons: &[Reason], row: Option<&str>, field: &str, group: u8, sentence: &str) {
    assert_reason!(
        reasons,
        row = row,
        field = field,
        rule = Rule::Ledger(group),
        sentence = sentence
    );
}

/// The reasons a ledger (the template changed by `f`) is refused for.
fn ledger_reasons(decl: &Declaration, f: impl FnOnce(&mut Value)) -> Vec<Reason> {
    let mut v = template_value(decl);
    f(&mut v);
    refusal(parse_ledger(decl, &v))
}

/// The ledger (the template changed by `f`), which must be accepted.
fn ledger_ok(decl: &Declaration, f: impl FnOnce(&mut Value)) -> Ledger {
    let mut v = template_value(decl);
    f(&mut v);
    match parse_ledger(decl, &v) {
        Ok(l) => l,
        Err(e) => panic!("ledger refused: {e}"),
    }
}

/// The reasons a row is refused for (panics when it is accepted).
fn row_reasons(decl: &Declaration, row: &Value) -> Vec<Reason> {
    match check_both_ways(decl, row) {
        Ok(r) => panic!("row accepted: {r:?}"),
        Err(reasons) => {
            assert!(!reasons.is_empty());
            reasons
        }
    }
}

/// Assert that the row is refused for exactly one reason, about its `field`, breaking refusal
/// group `group`, whose sentence says every one of `words`.
#[track_caller]
fn row_refused_once(decl: &Declaration, row: &Value, field: &str, group: u8, sentence: &str) {
    let r = row_reasons(decl, row);
    assert_only_reason!(
        r,
        row = row["schedule_id"].as_str(),
        field = field,
        rule = Rule::Ledger(group),
        sentence = sentence
    );
}

#[track_caller]
fn row_ok(decl: &Declaration, row: &Value) -> Row {
    match check_both_ways(decl, row) {
        Ok(r) => r,
        Err(reasons) => panic!("row refused:\n  {reasons:#?}"),
    }
}

fn template_row(decl: &Declaration, id: &str) -> Value {
    Row::template(decl, id).expect("scheduled").to_value()
}

/// A live Arena PASS at its completion status with complete evidence.
fn arena_pass(decl: &Declaration) -> Value {
    let mut r = template_row(decl, ARENA_1);
    let fields = json!({
        "native_outcome": "PASS",
        "native_status": "COMPLETED",
        "reason": null,
        "source_revision": revision(),
        "runtime_identity": {
            "python": "3.12.7", "psutil": "6.1.0", "native_provider": "acme 1.2",
            "packages": { "numpy": "2.1.0" },
            "dependencies": ["numpy==2.1.0", "psutil==6.1.0"]
        },
        "actual_models_and_efforts": {
            "provider": "acme",
            "roles": {
                "builder": { "model": "m-large", "effort": "high" },
                "reviewer": { "model": "m-small", "effort": "medium" }
            }
        },
        "runner_options": ["--no-telemetry"],
        "option_deviations": [],
        "oracle_checks": [ { "name": "test_a", "ok": true }, { "name": "test_b", "ok": true } ],
        "evidence_refs": ["runs/arena-01/log.txt", "runs/arena-01/diff.patch"],
        "elapsed_seconds": 1200.5,
        "usage": { "output_tokens": 2000, "input_tokens": 150000, "calls": null },
        "estimated_usd": 1.25,
        "spent_budget": { "cli_invocation_seconds": 1200.5, "oracle_seconds": 30, "max_iterations": 1 },
        "interventions_decision_or_repair": [ { "kind": "decision", "note": "approved the plan" } ],
        "native_record": { "kind": "arena", "id": "results.sqlite3#run-1", "sha256": hex('9', 64) }
    });
    merge(&mut r, fields);
    r
}

/// A live scenario row that ended without passing.
fn scenario_fail(decl: &Declaration, id: &str) -> Value {
    let mut r = template_row(decl, id);
    merge(
        &mut r,
        json!({
            "native_outcome": "ERROR",
            "native_status": "ERROR",
            "reason": "the harness crashed after 12 steps",
            "elapsed_seconds": 300,
            "spent_budget": { "harness_minutes": 5, "max_steps": 12 },
            "native_record": { "kind": "scenario", "id": format!("{id}/result.json"), "sha256": hex('8', 64) }
        }),
    );
    r
}

fn merge(row: &mut Value, fields: Value) {
    for (k, v) in fields.as_object().expect("object") {
        row[k.as_str()] = v.clone();
    }
}

/// The declaration with a fourth task, a live scenario that expects a stop.
fn stop_declaration() -> Declaration {
    let mut v = declaration_value();
    v["tasks"].as_array_mut().unwrap().push(json!({
        "id": "scenario/ask-before-deleting",
        "kind": "scenario",
        "evidence": "live",
        "expects": "stop",
        "definition": { "path": "arena/tasks/scenario/ask-before-deleting", "sha256": hex('5', 64), "files": 2 },
        "limits": { "harness_minutes": 30, "max_steps": 50 },
        "native_outcomes": ["PASS", "HONEST_BLOCKER", "ERROR"]
    }));
    v["schedule"] = schedule_for(&v);
    parse(&v)
}

// --- the template --------------------------------------------------------------------------

#[test]
fn template_rows_are_deferred_not_attempted_lists_empty_rest_null() {
    let d = declaration();
    let l = Ledger::template(&d);
    assert_eq!(l.rows.len(), 6);
    assert_eq!(l.filled(), 0);
    for (row, entry) in l.rows.iter().zip(d.schedule()) {
        assert_eq!(row.schedule_id(), entry.id);
        assert_eq!(row.task_id(), entry.task);
        assert_eq!(row.get("repetition"), &json!(entry.repetition));
        assert!(row.is_deferred());
        assert_eq!(row.reason(), Some(NOT_ATTEMPTED));
        let evidence = d.task(&entry.task).unwrap().evidence;
        assert_eq!(row.evidence(), evidence);
        for f in STANDARD_FIELDS {
            let want = match f {
                "schedule_id" | "task_id" | "repetition" | "evidence" | "native_outcome"
                | "reason" => continue,
                "option_deviations" | "evidence_refs" | "interventions_decision_or_repair" => {
                    json!([])
                }
                _ => Value::Null,
            };
            assert_eq!(row.get(f), &want, "{} {f}", entry.id);
        }
        assert_eq!(row.fields().len(), 20);
    }
    assert_eq!(l.rows[FIXTURE_ROW].get("evidence"), "fixture");
    assert_eq!(l.rows[ARENA_ROW].get("evidence"), "live");
}

#[test]
fn template_canonical_bytes() {
    let d = declaration();
    let l = Ledger::template(&d);
    let text = String::from_utf8(l.canonical(&d)).unwrap();
    let head = format!(
        "{{\n  \"format\": \"campaign-ledger/1\",\n  \"declaration\": {{\n    \"id\": \"reliability-slice-1\",\n    \"sha256\": \"{}\"\n  }},\n  \"rows\": [\n    {{\n",
        d.sha256
    );
    assert!(text.starts_with(&head), "{text}");
    assert!(
        text.ends_with("\n    }\n  ]\n}\n"),
        "trailing newline after the document"
    );
    let first_row = r#"    {
      "schedule_id": "arena/sympy-matrix/01",
      "task_id": "arena/sympy-matrix",
      "repetition": 1,
      "evidence": "live",
      "native_outcome": "DEFERRED",
      "native_status": null,
      "reason": "not attempted",
      "source_revision": null,
      "runtime_identity": null,
      "actual_models_and_efforts": null,
      "runner_options": null,
      "option_deviations": [],
      "oracle_checks": null,
      "evidence_refs": [],
      "elapsed_seconds": null,
      "usage": null,
      "estimated_usd": null,
      "spent_budget": null,
      "interventions_decision_or_repair": [],
      "native_record": null
    },
"#;
    assert!(text.contains(first_row), "{text}");
    // A row file: the same fields at the top level, with a trailing newline.
    let row = String::from_utf8(l.rows[0].canonical(&d)).unwrap();
    let unindented: String = first_row
        .trim_end_matches(",\n")
        .lines()
        .map(|line| format!("{}\n", line.strip_prefix("    ").unwrap()))
        .collect();
    assert_eq!(row, unindented);
}

#[test]
fn canonical_rows_follow_attempt_fields_and_sort_nested_keys() {
    let mut v = declaration_value();
    v["attempt_fields"]
        .as_array_mut()
        .unwrap()
        .push(json!("a_reviewer_note"));
    v["schedule"] = schedule_for(&v);
    let d = parse(&v);
    let mut row = arena_pass(&d);
    row["a_reviewer_note"] = json!({ "z": 1, "a": 2 });
    let l = ledger_ok(&d, |l| l["rows"][ARENA_ROW] = row);
    let text = String::from_utf8(l.rows[ARENA_ROW].canonical(&d)).unwrap();
    // Declared order: the added field comes last, although it sorts first.
    let pos = |k: &str| {
        text.find(&format!("\"{k}\":"))
            .unwrap_or_else(|| panic!("{k}"))
    };
    assert!(pos("native_record") < pos("a_reviewer_note"));
    assert!(pos("schedule_id") < pos("task_id") && pos("task_id") < pos("repetition"));
    // Nested keys sorted.
    assert!(pos("calls") < pos("input_tokens") && pos("input_tokens") < pos("output_tokens"));
    assert!(pos("cli_invocation_seconds") < pos("max_iterations"));
    assert!(pos("max_iterations") < pos("oracle_seconds"));
    assert!(text.contains("\"a\": 2,\n    \"z\": 1"), "{text}");
    assert!(text.contains("\"elapsed_seconds\": 1200.5,"));
    assert!(text.ends_with("}\n"));
}

#[test]
fn template_round_trips() {
    let d = declaration();
    let l = Ledger::template(&d);
    let bytes = l.canonical(&d);
    let back = Ledger::parse(&d, &bytes, DEFAULT_MAX_INPUT_BYTES).expect("template passes");
    assert_eq!(back, l);
    assert_eq!(back.canonical(&d), bytes);
}

#[test]
fn filled_ledger_round_trips_byte_for_byte() {
    let d = declaration();
    let l = ledger_ok(&d, |l| {
        l["rows"][ARENA_ROW] = arena_pass(&d);
        l["rows"][SCENARIO_ROW] = scenario_fail(&d, SCENARIO_1);
    });
    assert_eq!(l.filled(), 2);
    let bytes = l.canonical(&d);
    let back = Ledger::parse(&d, &bytes, DEFAULT_MAX_INPUT_BYTES).unwrap();
    assert_eq!(back, l);
    assert_eq!(back.canonical(&d), bytes);
}

#[test]
fn template_row_of_an_unscheduled_id_is_none() {
    assert!(Row::template(&declaration(), "arena/sympy-matrix/03").is_none());
}

// --- group 1: one row per scheduled attempt ------------------------------------------------

#[test]
fn missing_row_is_refused() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| {
        _ = l["rows"].as_array_mut().unwrap().remove(SCENARIO_ROW)
    });
    assert_reason!(
        r,
        place = ["ledger"],
        row = "scenario/bugfix-iso-weeks/01",
        field = None,
        rule = Rule::Ledger(1),
        sentence = "is missing (every schedule id appears exactly once, DEFERRED if not attempted)"
    );
    assert_eq!(r.len(), 1, "{r:?}");
    let r = ledger_reasons(&d, |l| l["rows"] = json!([]));
    assert_eq!(r.len(), 6, "{r:?}");
}

#[test]
fn duplicated_row_is_refused() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| {
        let copy = l["rows"][ARENA_ROW].clone();
        l["rows"].as_array_mut().unwrap().insert(1, copy);
    });
    assert_reason!(
        r,
        place = ["ledger", "rows[1]"],
        row = "arena/sympy-matrix/01",
        field = None,
        rule = Rule::Ledger(1),
        sentence = "appears twice (also rows[0]); one row per schedule id, the original row stays"
    );
    assert_eq!(r.len(), 1, "{r:?}");
    // A retry beside the original row is refused as well, whatever it carries.
    let r = ledger_reasons(&d, |l| {
        let retry = arena_pass(&d);
        l["rows"].as_array_mut().unwrap().push(retry);
    });
    assert_reason!(
        r,
        place = ["ledger", "rows[6]"],
        row = "arena/sympy-matrix/01",
        field = None,
        rule = Rule::Ledger(1),
        sentence = "appears twice (also rows[0]); one row per schedule id, the original row stays"
    );
}

#[test]
fn unscheduled_row_is_refused() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| {
        let mut extra = l["rows"][1].clone();
        extra["schedule_id"] = json!("arena/sympy-matrix/03");
        extra["repetition"] = json!(3);
        l["rows"].as_array_mut().unwrap().push(extra);
    });
    assert_reason!(r, row = "arena/sympy-matrix/03", field = "schedule_id", rule = Rule::Ledger(1), sentence = "\"arena/sympy-matrix/03\" is not scheduled by the declaration (a retry needs a new declared schedule)");
    assert_eq!(r.len(), 1, "{r:?}");
}

#[test]
fn rows_out_of_schedule_order_are_refused() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| l["rows"].as_array_mut().unwrap().swap(0, 1));
    assert_reason!(r, place = ["ledger", "rows[1]"], row = "arena/sympy-matrix/01", field = None, rule = Rule::Ledger(1), sentence = "is out of schedule order (it comes before arena/sympy-matrix/02; rows are in schedule order)");
    assert_eq!(r.len(), 1, "{r:?}");
    let r = ledger_reasons(&d, |l| {
        let last = l["rows"].as_array_mut().unwrap().pop().unwrap();
        l["rows"].as_array_mut().unwrap().insert(0, last);
    });
    assert_eq!(
        r.len(),
        5,
        "each row after the moved one is out of order: {r:?}"
    );
    // A gap (a missing row) is not an order problem.
    let r = ledger_reasons(&d, |l| _ = l["rows"].as_array_mut().unwrap().remove(1));
    assert_eq!(r.len(), 1, "{r:?}");
}

#[test]
fn every_reason_of_one_row_is_reported_together() {
    let d = declaration();
    // Relabeled and without a reason: both are named.
    let mut row = scenario_fail(&d, FIXTURE_1);
    row["evidence"] = json!("live");
    row["reason"] = json!(null);
    let r = row_reasons(&d, &row);
    assert_reason!(r, row = "scenario/interrupted-reuse/01", field = "evidence", rule = Rule::Ledger(4), sentence = "is \"live\" but task scenario/interrupted-reuse is declared fixture (a fixture row is never relabeled live, nor the reverse)");
    assert_reason!(
        r,
        row = "scenario/interrupted-reuse/01",
        field = "reason",
        rule = Rule::Ledger(6),
        sentence = "every row that is not a PASS states a reason"
    );
    assert_eq!(r.len(), 2, "{r:?}");
    // Relabeled and a contradicting PASS.
    let mut row = arena_pass(&d);
    row["evidence"] = json!("fixture");
    row["native_status"] = json!("STOPPED");
    let r = row_reasons(&d, &row);
    assert_reason!(r, row = "arena/sympy-matrix/01", field = "evidence", rule = Rule::Ledger(4), sentence = "is \"fixture\" but task arena/sympy-matrix is declared live (a fixture row is never relabeled live, nor the reverse)");
    assert_reason!(r, row = "arena/sympy-matrix/01", field = "native_status", rule = Rule::Ledger(5), sentence = "a native PASS contradicts its own status: a stop (STOPPED) on a task that expects completion (expected COMPLETED)");
    // A relabeled DEFERRED row that also carries spend: the relabel is named once.
    let mut row = template_row(&d, FIXTURE_1);
    row["evidence"] = json!("live");
    row["elapsed_seconds"] = json!(3);
    let r = row_reasons(&d, &row);
    assert_reason!(r, row = "scenario/interrupted-reuse/01", field = "evidence", rule = Rule::Ledger(4), sentence = "is \"live\" but task scenario/interrupted-reuse is declared fixture (a fixture row is never relabeled live, nor the reverse)");
    assert_reason!(r, row = "scenario/interrupted-reuse/01", field = "elapsed_seconds", rule = Rule::Ledger(6), sentence = "a DEFERRED row carries no time, usage, cost or spend (an attempt that spent anything ran, and keeps its native outcome): expected null, found 3");
    assert_eq!(r.len(), 2, "{r:?}");
}

// --- group 2: the declaration named ---------------------------------------------------------

#[test]
fn wrong_declaration_id_is_refused() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| l["declaration"]["id"] = json!("other-campaign"));
    assert_reason!(r, row = None, field = None, rule = None, sentence = "ledger: declaration.id: names \"other-campaign\", but the declaration is \"reliability-slice-1\"");
    assert_eq!(r.len(), 1, "{r:?}");
}

#[test]
fn wrong_declaration_sha256_is_refused() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| l["declaration"]["sha256"] = json!(hex('0', 64)));
    assert_reason!(r, row = None, field = None, rule = None, sentence = "ledger: declaration.sha256: names \"0000000000000000000000000000000000000000000000000000000000000000\", but the declaration's bytes hash to e4fe8355a4c8dcf63269372858757bef4aa7a7cbf063aa305f452feb0046cd2c (its bytes changed after admission, or it is another declaration)");
    assert_eq!(r.len(), 1, "{r:?}");
    // The same declaration value written with other bytes is another declaration.
    let other = Declaration::parse(
        &serde_json::to_vec(&declaration_value()).unwrap(),
        DEFAULT_MAX_INPUT_BYTES,
    )
    .unwrap();
    let bytes = Ledger::template(&d).canonical(&d);
    let r = refusal(Ledger::parse(&other, &bytes, DEFAULT_MAX_INPUT_BYTES));
    assert_reason!(r, row = None, field = None, rule = None, sentence = "ledger: declaration.sha256: names \"e4fe8355a4c8dcf63269372858757bef4aa7a7cbf063aa305f452feb0046cd2c\", but the declaration's bytes hash to 59f799833416a541e544370d3e1e291610ff0aaf602f85d7b9cfeb5b8407f020 (its bytes changed after admission, or it is another declaration)");
}

#[test]
fn ledger_document_is_closed() {
    let d = declaration();
    assert_reason!(
        &ledger_reasons(&d, |l| l["format"] = json!("campaign-ledger/2")),
        row = None,
        field = None,
        rule = None,
        sentence = "ledger: format: must be \"campaign-ledger/1\", not \"campaign-ledger/2\""
    );
    assert_reason!(
        &ledger_reasons(&d, |l| l["notes"] = json!("x")),
        row = None,
        field = None,
        rule = None,
        sentence = "ledger: notes: unknown key"
    );
    assert_reason!(
        &ledger_reasons(&d, |l| l["declaration"]["title"] = json!("x")),
        row = None,
        field = None,
        rule = None,
        sentence = "ledger: declaration.title: unknown key"
    );
    assert_reason!(
        &ledger_reasons(&d, |l| _ = l.as_object_mut().unwrap().remove("declaration")),
        row = None,
        field = None,
        rule = None,
        sentence = "ledger: declaration: missing"
    );
    assert_reason!(
        &ledger_reasons(&d, |l| l["rows"] = json!({})),
        row = None,
        field = None,
        rule = None,
        sentence = "ledger: rows: must be a list, not an object"
    );
    assert_reason!(
        &ledger_reasons(&d, |l| *l = json!([])),
        row = None,
        field = None,
        rule = None,
        sentence = "ledger: must be an object, not a list"
    );
}

// --- group 3: fields and types --------------------------------------------------------------

#[test]
fn missing_field_is_refused() {
    let d = declaration();
    for f in STANDARD_FIELDS {
        let mut row = arena_pass(&d);
        row.as_object_mut().unwrap().remove(f);
        let r = row_reasons(&d, &row);
        // A row without its schedule id names no row.
        let row = (f != "schedule_id").then_some(ARENA_1);
        assert_named(&r, row, f, 3, "missing declared attempt field");
    }
}

#[test]
fn undeclared_field_is_refused() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["notes"] = json!("x");
    row_refused_once(&d, &row, "notes", 3, "undeclared attempt field");
    let mut row = template_row(&d, ARENA_1);
    row["notes"] = json!(null);
    row_refused_once(&d, &row, "notes", 3, "undeclared attempt field");
}

#[test]
fn each_field_of_the_wrong_type_is_refused() {
    let d = declaration();
    let cases: Vec<(&str, Value)> = vec![
        ("task_id", json!("arena/other")),
        ("task_id", json!(null)),
        ("repetition", json!(2)),
        ("repetition", json!("1")),
        ("repetition", json!(1.5)),
        ("evidence", json!("remote")),
        ("native_outcome", json!(3)),
        ("native_status", json!(3)),
        ("reason", json!(["x"])),
        ("source_revision", json!("abc1234")),
        ("source_revision", json!("main")),
        ("source_revision", json!(hex('C', 40))),
        ("runtime_identity", json!("python 3.12")),
        (
            "runtime_identity.dependencies",
            json!({ "dependencies": 3 }),
        ),
        ("actual_models_and_efforts", json!([])),
        (
            "actual_models_and_efforts.roles",
            json!({ "provider": "acme" }),
        ),
        ("runner_options", json!(["--a", 1])),
        ("runner_options", json!("--a")),
        ("option_deviations", json!(null)),
        ("option_deviations", json!(["x", 2])),
        ("oracle_checks[0]", json!([{ "name": "test_a" }])),
        (
            "oracle_checks[0]",
            json!([{ "name": "test_a", "ok": "yes" }]),
        ),
        ("oracle_checks", json!("passed")),
        ("evidence_refs", json!(["a", 1])),
        ("evidence_refs", json!(null)),
        ("elapsed_seconds", json!(-1)),
        ("elapsed_seconds", json!("5")),
        ("usage.input_tokens", json!({ "input_tokens": -1 })),
        ("usage.input_tokens", json!({ "input_tokens": "many" })),
        ("usage", json!([])),
        ("estimated_usd", json!(-0.5)),
        ("estimated_usd", json!("1.25")),
        (
            "spent_budget.harness_minutes",
            json!({ "harness_minutes": 3 }),
        ),
        (
            "spent_budget.max_iterations",
            json!({ "max_iterations": -1 }),
        ),
        ("spent_budget", json!([])),
        (
            "interventions_decision_or_repair[0]",
            json!([{ "kind": "fix", "note": "x" }]),
        ),
        (
            "interventions_decision_or_repair[0]",
            json!([{ "kind": "repair" }]),
        ),
        ("interventions_decision_or_repair", json!(null)),
        (
            "native_record",
            json!({ "kind": "arena", "id": "r", "sha256": "abc" }),
        ),
        (
            "native_record",
            json!({ "kind": "bench", "id": "r", "sha256": hex('9', 64) }),
        ),
        (
            "native_record",
            json!({ "kind": "arena", "id": "", "sha256": hex('9', 64) }),
        ),
        (
            "native_record.kind",
            json!({ "kind": "scenario", "id": "r", "sha256": hex('9', 64) }),
        ),
        ("native_record", json!("results.sqlite3")),
    ];
    // Each case names the field of its reason, a path into the row field it sets.
    for (field, bad) in cases {
        let mut row = arena_pass(&d);
        let top = field.split(['.', '[']).next().unwrap();
        row[top] = bad.clone();
        let r = row_reasons(&d, &row);
        assert_only_reason!(r, row = ARENA_1, field = field);
    }
}

#[test]
fn schedule_id_of_the_wrong_type_is_refused() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["schedule_id"] = json!(1);
    assert_reason!(
        &row_reasons(&d, &row),
        place = ["row"],
        row = None,
        field = "schedule_id",
        rule = Rule::Ledger(3),
        sentence = "must be a string"
    );
    row["schedule_id"] = json!("arena/sympy-matrix/1");
    assert_reason!(&row_reasons(&d, &row), row = "arena/sympy-matrix/1", field = "schedule_id", rule = Rule::Ledger(1), sentence = "\"arena/sympy-matrix/1\" is not scheduled by the declaration (a retry needs a new declared schedule)");
    assert_reason!(
        &row_reasons(&d, &json!([])),
        place = ["row"],
        row = None,
        field = None,
        rule = None,
        sentence = "a row must be an object, not a list"
    );
}

#[test]
fn good_values_of_each_type_are_accepted() {
    let d = declaration();
    let cases: Vec<(&str, Value)> = vec![
        ("source_revision", json!(null)),
        ("source_revision", json!(hex('a', 64))),
        ("source_revision", json!(hex('a', 40))),
        ("runtime_identity", json!(null)),
        (
            "runtime_identity",
            json!({ "python": "3.12.7", "dependencies": { "sha256": hex('7', 64) } }),
        ),
        ("actual_models_and_efforts", json!(null)),
        ("runner_options", json!(null)),
        ("oracle_checks", json!(null)),
        ("oracle_checks", json!([])),
        ("elapsed_seconds", json!(null)),
        ("elapsed_seconds", json!(0)),
        ("usage", json!(null)),
        ("usage", json!({})),
        ("estimated_usd", json!(null)),
        ("spent_budget", json!(null)),
        ("spent_budget", json!({})),
        ("spent_budget", json!({ "oracle_seconds": null })),
        (
            "interventions_decision_or_repair",
            json!([{ "kind": "repair", "note": "fixed the import" }]),
        ),
        ("native_record", json!(null)),
        (
            "native_record",
            json!({ "kind": "hand", "id": "notebook p. 3", "sha256": hex('6', 64) }),
        ),
    ];
    for (field, good) in cases {
        let mut row = arena_pass(&d);
        row[field] = good;
        row_ok(&d, &row);
    }
}

// --- group 4: evidence and declared outcomes ------------------------------------------------

#[test]
fn fixture_row_relabeled_live_is_refused() {
    let d = declaration();
    let mut row = template_row(&d, FIXTURE_1);
    row["evidence"] = json!("live");
    row_refused_once(&d, &row, "evidence", 4, "is \"live\" but task scenario/interrupted-reuse is declared fixture (a fixture row is never relabeled live, nor the reverse)");
    // The same holds for a filled row.
    let mut row = scenario_fail(&d, FIXTURE_1);
    row["evidence"] = json!("live");
    row_refused_once(&d, &row, "evidence", 4, "is \"live\" but task scenario/interrupted-reuse is declared fixture (a fixture row is never relabeled live, nor the reverse)");
}

#[test]
fn live_row_relabeled_fixture_is_refused() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["evidence"] = json!("fixture");
    row_refused_once(&d, &row, "evidence", 4, "is \"fixture\" but task arena/sympy-matrix is declared live (a fixture row is never relabeled live, nor the reverse)");
}

#[test]
fn native_outcome_not_declared_for_the_task_is_refused() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["native_outcome"] = json!("FALSE_COMPLETE");
    row_refused_once(
        &d,
        &row,
        "native_outcome",
        4, "\"FALSE_COMPLETE\" is not DEFERRED nor a native outcome task arena/sympy-matrix declares (PASS, FAIL, STOPPED, ERROR, SKIPPED)",
    );
    // Allowed for scenario tasks, but not declared by this one.
    let mut row = scenario_fail(&d, FIXTURE_1);
    row["native_outcome"] = json!("HONEST_BLOCKER");
    row_refused_once(&d, &row, "native_outcome", 4, "\"HONEST_BLOCKER\" is not DEFERRED nor a native outcome task scenario/interrupted-reuse declares (PASS, ERROR, INTERRUPTED_UNGRADED)");
    let mut row = scenario_fail(&d, SCENARIO_1);
    row["native_outcome"] = json!("pass");
    row_refused_once(&d, &row, "native_outcome", 4, "\"pass\" is not DEFERRED nor a native outcome task scenario/bugfix-iso-weeks declares (PASS, FALSE_COMPLETE, HONEST_BLOCKER, ERROR, SKIPPED, NOT_EXERCISED, RUNNING, INTERRUPTED_UNGRADED, PENDING_UNGRADED)");
}

// --- group 5: a PASS agrees with its status and its checks ----------------------------------

#[test]
fn pass_at_stop_status_on_a_completion_task_is_refused() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["native_status"] = json!("STOPPED");
    row_refused_once(
        &d,
        &row,
        "native_status",
        5, "a native PASS contradicts its own status: a stop (STOPPED) on a task that expects completion (expected COMPLETED)",
    );
    let mut row = scenario_fail(&d, SCENARIO_1);
    row["native_outcome"] = json!("PASS");
    row["native_status"] = json!("BLOCKED");
    row_refused_once(
        &d,
        &row,
        "native_status",
        5, "a native PASS contradicts its own status: a stop (BLOCKED) on a task that expects completion (expected COMPLETE)",
    );
}

#[test]
fn pass_at_completion_status_on_a_stop_task_is_refused() {
    let d = stop_declaration();
    let id = "scenario/ask-before-deleting/01";
    let mut row = scenario_fail(&d, id);
    row["native_outcome"] = json!("PASS");
    row["native_status"] = json!("COMPLETE");
    row_refused_once(
        &d,
        &row,
        "native_status",
        5, "a native PASS contradicts its own status: a completion (COMPLETE) on a task that expects a stop (expected BLOCKED)",
    );
    // Its own stop status is right; a stop carries no oracle checks or only passing ones.
    row["native_status"] = json!("BLOCKED");
    row_ok(&d, &row);
    row["oracle_checks"] = json!([{ "name": "asked first", "ok": true }]);
    row_ok(&d, &row);
    row["oracle_checks"] = json!([{ "name": "asked first", "ok": false }]);
    row_refused_once(
        &d,
        &row,
        "oracle_checks",
        5,
        "a PASS carries a failing oracle check \"asked first\"",
    );
}

#[test]
fn pass_with_a_status_that_is_neither_is_refused() {
    let d = declaration();
    for status in [
        json!("FAILED"),
        json!("INCOMPLETE"),
        json!("completed"),
        json!("COMPLETE"),
    ] {
        let mut row = arena_pass(&d);
        row["native_status"] = status.clone();
        let s = format!(
            "a native PASS contradicts its own status: status {status} is neither completion nor stop (expected COMPLETED)"
        );
        row_refused_once(&d, &row, "native_status", 5, &s);
    }
    let mut row = arena_pass(&d);
    row["native_status"] = json!(null);
    row_refused_once(
        &d,
        &row,
        "native_status",
        5,
        "a native PASS contradicts its own status: no status (expected COMPLETED)",
    );
}

#[test]
fn pass_with_a_failing_check_is_refused() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["oracle_checks"][1]["ok"] = json!(false);
    row_refused_once(
        &d,
        &row,
        "oracle_checks",
        5,
        "a PASS carries a failing oracle check \"test_b\"",
    );
    // A non-PASS may carry failing checks.
    row["native_outcome"] = json!("FAIL");
    row["reason"] = json!("oracle check test_b failed");
    row_ok(&d, &row);
}

#[test]
fn pass_without_checks_or_with_a_reason_is_not_refused() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["oracle_checks"] = json!(null);
    row["reason"] = json!("graded by hand");
    row_ok(&d, &row);
}

// --- group 6: reasons, and DEFERRED carries nothing -----------------------------------------

#[test]
fn non_pass_without_a_reason_is_refused() {
    let d = declaration();
    for reason in [json!(null), json!(""), json!("  \n")] {
        let mut row = scenario_fail(&d, SCENARIO_1);
        row["reason"] = reason.clone();
        row_refused_once(
            &d,
            &row,
            "reason",
            6,
            "every row that is not a PASS states a reason",
        );
        let mut row = arena_pass(&d);
        row["native_outcome"] = json!("STOPPED");
        row["native_status"] = json!("STOPPED");
        row["reason"] = reason;
        row_refused_once(
            &d,
            &row,
            "reason",
            6,
            "every row that is not a PASS states a reason",
        );
    }
}

#[test]
fn deferred_carrying_anything_is_refused_naming_the_field() {
    let d = declaration();
    let cases: Vec<(&str, Value)> = vec![
        ("native_status", json!("RUNNING")),
        ("reason", json!("skipped by hand")),
        ("reason", json!(null)),
        ("source_revision", json!(revision())),
        ("runtime_identity", json!({ "python": "3.12.7" })),
        (
            "actual_models_and_efforts",
            json!({ "provider": "acme", "roles": {} }),
        ),
        ("runner_options", json!([])),
        ("option_deviations", json!(["--x added"])),
        ("oracle_checks", json!([])),
        ("oracle_checks", json!([{ "name": "t", "ok": true }])),
        ("evidence_refs", json!(["log"])),
        ("elapsed_seconds", json!(0)),
        ("elapsed_seconds", json!(12.5)),
        ("usage", json!({})),
        ("usage", json!({ "input_tokens": 10 })),
        ("estimated_usd", json!(0.0)),
        ("spent_budget", json!({})),
        ("spent_budget", json!({ "harness_minutes": 1 })),
        (
            "interventions_decision_or_repair",
            json!([{ "kind": "decision", "note": "ok" }]),
        ),
        (
            "native_record",
            json!({ "kind": "scenario", "id": "r", "sha256": hex('9', 64) }),
        ),
    ];
    for (field, value) in cases {
        let mut row = template_row(&d, SCENARIO_1);
        row[field] = value.clone();
        let r = row_reasons(&d, &row);
        // (The two sentences of this rule are pinned below and in
        // `an_added_field_is_checked_like_the_others`.)
        assert_only_reason!(r, row = SCENARIO_1, field = field, rule = Rule::Ledger(6));
    }
    // Time, usage, cost and spend say why: an attempt that spent anything ran.
    let mut row = template_row(&d, SCENARIO_1);
    row["estimated_usd"] = json!(0.4);
    row_refused_once(
        &d,
        &row,
        "estimated_usd",
        6, "a DEFERRED row carries no time, usage, cost or spend (an attempt that spent anything ran, and keeps its native outcome): expected null, found 0.4",
    );
}

#[test]
fn deferred_equal_to_its_template_by_value_is_accepted() {
    let d = declaration();
    let row = template_row(&d, SCENARIO_1);
    let checked = row_ok(&d, &row);
    assert!(checked.is_deferred());
}

// --- group 7: one record fills one row ------------------------------------------------------

#[test]
fn two_rows_naming_the_same_native_record_are_refused() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| {
        let a = scenario_fail(&d, SCENARIO_1);
        let mut b = scenario_fail(&d, "scenario/bugfix-iso-weeks/02");
        b["native_record"] = a["native_record"].clone();
        l["rows"][SCENARIO_ROW] = a;
        l["rows"][SCENARIO_ROW + 1] = b;
    });
    assert_reason!(r, row = "scenario/bugfix-iso-weeks/02", field = "native_record", rule = Rule::Ledger(7), sentence = "record scenario:scenario/bugfix-iso-weeks/01/result.json already filled row scenario/bugfix-iso-weeks/01 (one record cannot fill two rows)");
    assert_eq!(r.len(), 1, "{r:?}");
    // Distinct records are fine.
    ledger_ok(&d, |l| {
        l["rows"][SCENARIO_ROW] = scenario_fail(&d, SCENARIO_1);
        l["rows"][SCENARIO_ROW + 1] = scenario_fail(&d, "scenario/bugfix-iso-weeks/02");
    });
}

#[test]
fn a_row_missing_twice_or_out_of_order_is_named_by_its_row_and_group_1() {
    use crate::refusal::Rule;
    let d = declaration();
    let values = |f: &dyn Fn(&mut Value)| {
        let mut v = template_value(&d);
        f(&mut v);
        match parse_ledger(&d, &v) {
            Err(crate::error::Error::Refused(r)) => (r.into_vec().into_iter())
                .map(|r| (r.place, r.row, r.rule))
                .collect::<Vec<_>>(),
            other => panic!("refused, not {other:?}"),
        }
    };
    let ledger = || vec!["ledger".to_owned()];
    let group1 = Some(Rule::Ledger(1));
    // The arena row removed: missing.
    let missing = values(&|l| drop(l["rows"].as_array_mut().unwrap().remove(ARENA_ROW)));
    assert_eq!(missing, [(ledger(), Some(ARENA_1.to_owned()), group1)]);
    // Twice.
    let twice = values(&|l| {
        let copy = l["rows"][ARENA_ROW].clone();
        l["rows"].as_array_mut().unwrap().push(copy);
    });
    assert_eq!(
        twice,
        [(
            vec!["ledger".into(), "rows[6]".into()],
            Some(ARENA_1.to_owned()),
            group1
        )]
    );
    // The first two rows swapped: the second is out of order where the first was.
    let swapped = values(&|l| l["rows"].as_array_mut().unwrap().swap(0, 1));
    assert_eq!(swapped.len(), 1, "{swapped:?}");
    let first = d.schedule_at(0).id;
    assert_eq!(
        swapped[0],
        (vec!["ledger".into(), "rows[1]".into()], Some(first), group1)
    );
}

#[test]
fn a_row_or_record_three_times_names_the_one_before_each_time() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| {
        let copy = l["rows"][ARENA_ROW].clone();
        let rows = l["rows"].as_array_mut().unwrap();
        rows.push(copy.clone());
        rows.push(copy);
    });
    // The text each renders to, in full (the values are the row check's).
    let rendered = |r: &[Reason]| r.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(
        rendered(&r),
        [
            format!("ledger: rows[6]: row {ARENA_1}: appears twice (also rows[0]); one row per schedule id, the original row stays"),
            format!("ledger: rows[7]: row {ARENA_1}: appears twice (also rows[6]); one row per schedule id, the original row stays"),
        ]
    );
    let r = ledger_reasons(&d, |l| {
        let a = scenario_fail(&d, SCENARIO_1);
        let mut b = scenario_fail(&d, "scenario/bugfix-iso-weeks/02");
        let mut c = scenario_fail(&d, FIXTURE_1);
        b["native_record"] = a["native_record"].clone();
        c["native_record"] = a["native_record"].clone();
        l["rows"][SCENARIO_ROW] = a;
        l["rows"][SCENARIO_ROW + 1] = b;
        l["rows"][FIXTURE_ROW] = c;
    });
    // A record's key is its kind and id (`scenario_fail`'s record is the row's result.json).
    let key = format!("scenario:{SCENARIO_1}/result.json");
    assert_eq!(
        rendered(&r),
        [
            format!("row scenario/bugfix-iso-weeks/02: native_record: record {key} already filled row {SCENARIO_1} (one record cannot fill two rows)"),
            format!("row {FIXTURE_1}: native_record: record {key} already filled row scenario/bugfix-iso-weeks/02 (one record cannot fill two rows)"),
        ]
    );
}

// --- good rows ------------------------------------------------------------------------------

#[test]
fn live_pass_with_full_evidence_is_accepted() {
    let d = declaration();
    let l = ledger_ok(&d, |l| l["rows"][ARENA_ROW] = arena_pass(&d));
    let row = &l.rows[ARENA_ROW];
    assert_eq!(row.native_outcome(), "PASS");
    assert_eq!(row.native_status(), Some("COMPLETED"));
    assert_eq!(row.oracle_checks().unwrap().len(), 2);
    assert_eq!(row.evidence_refs().count(), 2);
    assert_eq!(row.spent("oracle_seconds"), Some(30.0));
    assert_eq!(row.spent("harness_minutes"), None);
    assert_eq!(
        row.interventions().collect::<Vec<_>>(),
        [("decision", "approved the plan")]
    );
    assert_eq!(
        row.native_record().unwrap().key(),
        "arena:results.sqlite3#run-1"
    );
    assert_eq!(l.filled(), 1);
    assert_eq!(l.row(&d, ARENA_1), Some(row));
}

#[test]
fn fail_with_a_reason_is_accepted() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["native_outcome"] = json!("FAIL");
    row["native_status"] = json!("FAILED");
    row["reason"] = json!("ended after 3 iterations without completing");
    row["oracle_checks"] = json!([{ "name": "test_a", "ok": false }]);
    row_ok(&d, &row);
    ledger_ok(&d, |l| {
        l["rows"][FIXTURE_ROW] = scenario_fail(&d, FIXTURE_1)
    });
}

#[test]
fn an_added_declared_field_is_carried() {
    let mut v = declaration_value();
    v["attempt_fields"]
        .as_array_mut()
        .unwrap()
        .push(json!("reviewer_note"));
    v["schedule"] = schedule_for(&v);
    let d = parse(&v);
    let template = Row::template(&d, ARENA_1).unwrap();
    assert_eq!(template.get("reviewer_note"), &Value::Null);
    let mut row = arena_pass(&d);
    row["reviewer_note"] = json!({ "anything": ["the tool", 1, null] });
    let checked = row_ok(&d, &row);
    assert_eq!(checked.get("reviewer_note"), &row["reviewer_note"]);
    // Rows must carry it (DEFERRED rows too), and a DEFERRED row leaves it null.
    row.as_object_mut().unwrap().remove("reviewer_note");
    row_refused_once(
        &d,
        &row,
        "reviewer_note",
        3,
        "missing declared attempt field",
    );
    let mut deferred = template_row(&d, ARENA_1);
    deferred["reviewer_note"] = json!("looked at it");
    row_refused_once(
        &d,
        &deferred,
        "reviewer_note",
        6,
        "a DEFERRED row must equal its template row: expected null, found \"looked at it\"",
    );
}

#[test]
fn a_checked_row_reads_each_standard_field_at_its_position() {
    // Fields a declaration adds sort before, between and after the standard ones, moving them.
    let added = ["a_note", "reviewer_note", "zz_note"];
    let mut v = declaration_value();
    let fields = v["attempt_fields"].as_array_mut().unwrap();
    fields.extend(added.map(|f| json!(f)));
    v["schedule"] = schedule_for(&v);
    let d = parse(&v);
    let mut row = arena_pass(&d);
    for f in added {
        row[f] = json!(f);
    }
    let text = row.to_string();
    let node = json::parse_node(&text, 2).unwrap();
    let json::Node::Object(m) = &node else {
        panic!("{text}")
    };
    let (_, view) = check_members(&d, m, &"row").unwrap();
    let at = view.at.expect("exactly the declared keys");
    let keys: Vec<&str> = m.iter().map(|(k, _)| k).collect();
    use Field::*;
    let all = [
        ScheduleId,
        TaskId,
        Repetition,
        Evidence,
        NativeOutcome,
        NativeStatus,
        Reason,
        SourceRevision,
        RuntimeIdentity,
        ActualModelsAndEfforts,
        RunnerOptions,
        OptionDeviations,
        OracleChecks,
        EvidenceRefs,
        ElapsedSeconds,
        Usage,
        EstimatedUsd,
        SpentBudget,
        Interventions,
        NativeRecord,
    ];
    assert_eq!(all.map(Field::name), STANDARD_FIELDS);
    for f in all {
        // Each variant names its field, and the key check found where it is.
        let snake = format!("{f:?}")
            .chars()
            .flat_map(|c| match c.is_ascii_uppercase() {
                true => vec!['_', c.to_ascii_lowercase()],
                false => vec![c],
            })
            .skip(1)
            .collect::<String>();
        let shortened = f == Interventions && f.name() == "interventions_decision_or_repair";
        assert!(f.name() == snake || shortened, "{f:?}");
        assert_eq!(keys[at[f as usize]], f.name());
        assert_eq!(view.get(f).to_value(), row[f.name()]);
    }
    // A row with a key missing or added is read by name.
    row.as_object_mut().unwrap().remove("zz_note");
    let text = row.to_string();
    let node = json::parse_node(&text, 2).unwrap();
    let json::Node::Object(m) = &node else {
        panic!("{text}")
    };
    assert!(d.attempt_positions(m).is_none());
}

#[test]
fn numbers_compare_by_value_not_spelling() {
    let d = declaration();
    let mut row = arena_pass(&d);
    row["elapsed_seconds"] = json!(45.0);
    row["spent_budget"]["oracle_seconds"] = json!(45);
    row["estimated_usd"] = json!(0);
    row["usage"]["calls"] = json!(3.0);
    let checked = row_ok(&d, &row);
    assert_eq!(checked.elapsed_seconds(), Some(45.0));
    assert_eq!(checked.spent("oracle_seconds"), Some(45.0));
    // The spelling is kept: an integral float stays a float, an integer an integer.
    let text = String::from_utf8(checked.canonical(&d)).unwrap();
    assert!(text.contains("\"elapsed_seconds\": 45.0,"), "{text}");
    assert!(text.contains("\"oracle_seconds\": 45\n"), "{text}");
    // A DEFERRED row is compared with its template by value.
    let bytes = Ledger::template(&d).canonical(&d);
    let text =
        String::from_utf8(bytes)
            .unwrap()
            .replacen("\"repetition\": 1,", "\"repetition\": 1.0,", 1);
    let r = refusal(Ledger::parse(&d, text.as_bytes(), DEFAULT_MAX_INPUT_BYTES));
    assert_reason!(
        r,
        row = "arena/sympy-matrix/01",
        field = "repetition",
        rule = Rule::Ledger(3),
        sentence = "must be 1, not 1.0"
    );
}

// --- strict JSON, many reasons, no panics ---------------------------------------------------

#[test]
fn strict_json_is_required() {
    let d = declaration();
    let text = String::from_utf8(Ledger::template(&d).canonical(&d)).unwrap();
    let dup = text.replacen(
        "\"native_status\": null,",
        "\"native_status\": null, \"native_status\": null,",
        1,
    );
    assert_reason!(
        &refusal(Ledger::parse(&d, dup.as_bytes(), DEFAULT_MAX_INPUT_BYTES)),
        place = ["ledger"],
        row = None,
        field = None,
        rule = None,
        sentence = "not valid JSON: duplicate key \"native_status\" at line 14 column 44"
    );
    let nan = text.replacen("\"elapsed_seconds\": null,", "\"elapsed_seconds\": NaN,", 1);
    refusal(Ledger::parse(&d, nan.as_bytes(), DEFAULT_MAX_INPUT_BYTES));
    let trailing = format!("{text}[]");
    assert_reason!(
        &refusal(Ledger::parse(
            &d,
            trailing.as_bytes(),
            DEFAULT_MAX_INPUT_BYTES,
        )),
        place = ["ledger"],
        row = None,
        field = None,
        rule = None,
        sentence = "not valid JSON: trailing characters at line 142 column 1"
    );
    let r = refusal(Ledger::parse(&d, text.as_bytes(), text.len() as u64 - 1));
    assert_reason!(
        r,
        place = ["ledger"],
        row = None,
        field = None,
        rule = None,
        sentence = "4150 bytes is over the input bound of 4149 bytes (--max-input-bytes)"
    );
}

#[test]
fn every_reason_of_every_row_is_reported_together() {
    let d = declaration();
    let r = ledger_reasons(&d, |l| {
        l["declaration"]["sha256"] = json!(hex('0', 64));
        let mut pass = arena_pass(&d);
        pass["native_status"] = json!("STOPPED");
        l["rows"][ARENA_ROW] = pass;
        l["rows"][ARENA_ROW + 1]["elapsed_seconds"] = json!(3);
        l["rows"][FIXTURE_ROW]["evidence"] = json!("live");
        let mut fail = scenario_fail(&d, SCENARIO_1);
        fail["reason"] = json!(null);
        l["rows"][SCENARIO_ROW] = fail;
        l["rows"].as_array_mut().unwrap().remove(FIXTURE_ROW + 1);
    });
    assert_reason!(r, row = None, field = None, rule = None, sentence = "ledger: declaration.sha256: names \"0000000000000000000000000000000000000000000000000000000000000000\", but the declaration's bytes hash to e4fe8355a4c8dcf63269372858757bef4aa7a7cbf063aa305f452feb0046cd2c (its bytes changed after admission, or it is another declaration)");
    assert_reason!(
        r,
        row = "arena/sympy-matrix/01",
        field = "native_status",
        rule = Rule::Ledger(5)
    );
    assert_reason!(
        r,
        row = "arena/sympy-matrix/02",
        field = "elapsed_seconds",
        rule = Rule::Ledger(6)
    );
    assert_reason!(
        r,
        row = "scenario/interrupted-reuse/01",
        field = "evidence",
        rule = Rule::Ledger(4)
    );
    assert_reason!(
        r,
        row = "scenario/bugfix-iso-weeks/01",
        field = "reason",
        rule = Rule::Ledger(6)
    );
    assert_reason!(
        r,
        place = ["ledger"],
        row = "scenario/interrupted-reuse/02",
        field = None,
        rule = Rule::Ledger(1),
        sentence = "is missing (every schedule id appears exactly once, DEFERRED if not attempted)"
    );
    assert_eq!(r.len(), 6, "{r:?}");
}

#[test]
fn no_panic_on_wrongly_shaped_rows() {
    let d = declaration();
    let shapes = [
        json!(null),
        json!(true),
        json!(-1),
        json!(1.5),
        json!("s"),
        json!([]),
        json!({}),
        json!([{}]),
    ];
    for f in STANDARD_FIELDS {
        for s in &shapes {
            for base in [
                template_row(&d, ARENA_1),
                arena_pass(&d),
                scenario_fail(&d, SCENARIO_1),
            ] {
                let mut row = base;
                row[f] = s.clone();
                let _ = Row::check(&d, &row, "row");
                let mut l = template_value(&d);
                l["rows"][0] = row;
                let _ = parse_ledger(&d, &l);
            }
        }
    }
    for s in &shapes {
        let mut l = template_value(&d);
        l["rows"][0] = s.clone();
        let _ = parse_ledger(&d, &l);
        l["declaration"] = s.clone();
        let _ = parse_ledger(&d, &l);
    }
}

// --- inspect rows ----------------------------------------------------------------------------

mod inspect_rows {
    use super::*;
    use crate::testutil::{complete_pass, inspect_declaration_value, parse};

    const LIVE: &str = "inspect/arith-add-1/01";

    #[test]
    fn an_inspect_pass_is_a_completion_at_completed_or_at_a_limit() {
        let d = parse(&inspect_declaration_value());
        let mut row = complete_pass(&d, LIVE);
        assert_eq!(row["native_status"], json!("completed"));
        row_ok(&d, &row);
        for status in ["limit:message", "limit:token", "limit:time"] {
            row["native_status"] = json!(status);
            row_ok(&d, &row);
        }
        for status in ["error", "limit:", "COMPLETED", "started"] {
            row["native_status"] = json!(status);
            let s = format!(
                "a native PASS contradicts its own status: status {status:?} is neither completion nor stop (expected completed or limit:<type>)"
            );
            row_refused_once(&d, &row, "native_status", 5, &s);
        }
    }

    #[test]
    fn an_inspect_record_fills_only_an_inspect_row() {
        let d = parse(&inspect_declaration_value());
        let mut row = complete_pass(&d, LIVE);
        row["native_record"]["kind"] = json!("arena");
        row_refused_once(
            &d,
            &row,
            "native_record.kind",
            3,
            "a arena record cannot fill a row of inspect task inspect/arith-add-1",
        );
        let mut row = complete_pass(&d, "scenario/bugfix-iso-weeks/01");
        row["native_record"]["kind"] = json!("inspect");
        row_refused_once(
            &d,
            &row,
            "native_record.kind",
            3,
            "a inspect record cannot fill a row of scenario task scenario/bugfix-iso-weeks",
        );
    }

    #[test]
    fn unscored_is_an_inspect_outcome_with_a_reason() {
        let d = parse(&inspect_declaration_value());
        let mut row = complete_pass(&d, LIVE);
        row["native_outcome"] = json!("UNSCORED");
        row["oracle_checks"] = json!(null);
        row_refused_once(
            &d,
            &row,
            "reason",
            6,
            "every row that is not a PASS states a reason",
        );
        row["reason"] = json!("match: no score");
        row_ok(&d, &row);
    }
}

#[test]
fn a_rows_own_checks_name_the_row_the_field_and_the_refusal_group() {
    use crate::refusal::Rule;
    let decl = declaration();
    let sid = decl.schedule_at(0).id;
    let named = |v: &Value| -> Vec<(Option<String>, Option<String>, Option<Rule>)> {
        Row::check_reasons(&decl, v, "row")
            .unwrap_err()
            .into_iter()
            .map(|r| (r.row, r.field, r.rule))
            .collect()
    };
    // Group 6: a DEFERRED row carrying one field; the text is Row::check's.
    let mut v = template_row(&decl, &sid);
    v["elapsed_seconds"] = json!(3.0);
    assert_eq!(
        named(&v),
        [(
            Some(sid.clone()),
            Some("elapsed_seconds".into()),
            Some(Rule::Ledger(6))
        )]
    );
    assert_eq!(
        Row::check(&decl, &v, "row").unwrap_err(),
        Row::check_reasons(&decl, &v, "row").unwrap_err()
    );
    // Group 4: an outcome the task does not declare; group 3: a wrong type.
    let mut v = template_row(&decl, &sid);
    v["native_outcome"] = json!("MAYBE");
    assert_eq!(named(&v)[0].2, Some(Rule::Ledger(4)));
    let mut v = template_row(&decl, &sid);
    v["repetition"] = json!("one");
    assert_eq!(
        named(&v)[0],
        (
            Some(sid.clone()),
            Some("repetition".into()),
            Some(Rule::Ledger(3))
        )
    );
    // Admitted.
    assert!(Row::check_reasons(&decl, &template_row(&decl, &sid), "row").is_ok());
}

/// Rows read one after another by one parser, as a share reads them: the runtime and models
/// they repeat come as shared values (`json::Node::Shared`), whose comparisons with the
/// declaration the classification keeps per thread. Each row, against each of two
/// declarations in turn, must be classified as the same row read alone from its `Value`:
/// whatever rows, values and declarations came before it on the thread.
#[test]
fn rows_sharing_a_runtime_and_models_are_classified_as_each_read_alone() {
    use crate::testutil::{checked, complete_pass, matching_profile, matching_runtime, set};
    let d = declaration();
    // The same rows differ from this one in their runtime.
    let mut v = declaration_value();
    v["runtime_requirements"]["python"] = json!("3.99.0");
    let other = parse(&v);
    let mut runtime = matching_runtime();
    runtime["python"] = json!("3.12.8");
    let mut profile = matching_profile();
    profile["provider"] = json!("other");
    // Runs of three rows (a value is shared from its second row on): matching, another
    // runtime, another profile, both, and matching again.
    let changes = [
        json!({}),
        json!({"runtime_identity": runtime}),
        json!({"actual_models_and_efforts": profile}),
        json!({"runtime_identity": runtime, "actual_models_and_efforts": profile}),
        json!({}),
    ];
    let ids = [ARENA_1, SCENARIO_1, ARENA_1];
    let mut rows = Vec::new();
    for c in &changes {
        for id in ids {
            let mut row = complete_pass(&d, id);
            set(&mut row, c.clone());
            rows.push(row);
        }
    }
    let texts: Vec<String> = rows.iter().map(Value::to_string).collect();
    let mut parser = json::NodeParser::new();
    let mut shared = 0;
    for (row, text) in rows.iter().zip(&texts) {
        let (node, _) = parser.parse(text, 2).unwrap();
        let json::Node::Object(m) = &node else {
            panic!("a row is an object")
        };
        for decl in [&d, &other, &d] {
            let (_, view) = check_members(decl, m, &"row").unwrap();
            shared += usize::from(view.runtime_identity_repeat().is_some());
            assert_eq!(
                crate::portfolio::classify_view(decl, view),
                crate::portfolio::classify(decl, &checked(decl, row)),
                "{text}"
            );
        }
    }
    // Every run's second and third rows shared their runtime.
    assert_eq!(shared, 3 * 2 * changes.len());
}

/// A ledger's writer reads each row's members in one pass in key order (`RowSer` with the
/// fields' sorted positions); a row written so is the row written by looking each field up
/// by name, and a map that is not exactly the declared fields (no checked row is) is written
/// by the look-ups.
#[test]
fn rows_written_in_one_pass_are_the_rows_written_by_look_ups() {
    use super::row::{sorted_fields, RowSer};
    let decl = declaration();
    let fields = &decl.attempt_fields;
    let sorted = sorted_fields(fields);
    let write = |row: &Row, sorted: Option<&[usize]>| {
        json::canonical(&RowSer {
            row,
            fields,
            sorted,
        })
    };
    let mut rows = Ledger::template(&decl).rows;
    rows.push(crate::testutil::checked(
        &decl,
        &crate::testutil::complete_pass(&decl, SCENARIO_1),
    ));
    let mut short = rows[0].fields().clone();
    short.remove("usage");
    let mut extra = rows[0].fields().clone();
    extra.insert("zzz".into(), json!(1));
    let mut renamed = rows[0].fields().clone();
    let v = renamed.remove("usage").unwrap();
    renamed.insert("usagf".into(), v);
    for map in [short, extra, renamed] {
        rows.push(Row::new(map));
    }
    for row in &rows {
        assert_eq!(write(row, Some(&sorted)), write(row, None));
    }
    // The fields' sorted positions: their names in key order.
    let names: Vec<&str> = sorted.iter().map(|&i| fields[i].as_str()).collect();
    let mut by_name: Vec<&str> = fields.iter().map(String::as_str).collect();
    by_name.sort_unstable();
    assert_eq!(names, by_name);
}

/// What a row reads once when it is made (its schedule id, whether it is DEFERRED) is what its
/// fields say, on every path that makes a row: the template, the row check, the fast parse.
#[test]
fn a_rows_schedule_id_and_deferred_are_its_fields() {
    let decl = declaration();
    let mut value = template_value(&decl);
    value["rows"][SCENARIO_ROW] = crate::testutil::complete_pass(&decl, SCENARIO_1);
    let parsed = parse_ledger(&decl, &value).unwrap();
    let checked = crate::testutil::checked(&decl, &value["rows"][SCENARIO_ROW]);
    let rows = (Ledger::template(&decl).rows.into_iter())
        .chain(parsed.rows)
        .chain([checked]);
    let mut filled = 0;
    for row in rows {
        assert_eq!(row.schedule_id(), row.view().schedule_id());
        assert_eq!(row.is_deferred(), row.view().is_deferred());
        assert_eq!(row.is_deferred(), row.native_outcome() == DEFERRED);
        filled += usize::from(!row.is_deferred());
    }
    assert_eq!(filled, 2);
}
