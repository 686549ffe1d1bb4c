//! One test per rule of `declaration.md`, from both sides: the valid declaration parses, and
//! each change that breaks exactly one rule is refused with a reason naming it.

use serde_json::{json, Value};

use super::*;
use crate::json::DEFAULT_MAX_INPUT_BYTES;
use crate::refusal::Reason;
use crate::testutil::{
    assert_only_reason, assert_reason, bytes, declaration_value, hex, parse, refusal, schedule_for,
};

/// The reasons a declaration value is refused for. The same value written in the written key
/// order (schedule last: the fast path) is refused for the same reasons.
fn reasons(v: &Value) -> Vec<Reason> {
    let r = refusal(Declaration::parse(&bytes(v), DEFAULT_MAX_INPUT_BYTES));
    let w = refusal(Declaration::parse(&written(v), DEFAULT_MAX_INPUT_BYTES));
    // (The one JSON syntax error a value can make, nesting too deep, names its line, which
    // differs between the two layouts.)
    if depth(v) <= 64 {
        assert_eq!(r, w, "sorted and written key orders disagree");
    }
    assert!(r.iter().all(|x| x.place == ["declaration"]), "{r:?}");
    r
}

/// How deeply a value nests (a scalar is 0).
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The bytes of a declaration value in the order `pin` writes (`TOP_KEYS`, then any other key).
fn written(v: &Value) -> Vec<u8> {
    let Some(top) = v.as_object() else {
        return bytes(v);
    };
    let mut fields: Vec<(&str, &Value)> = TOP_KEYS
        .iter()
        .filter_map(|k| top.get(*k).map(|x| (*k, x)))
        .collect();
    for (k, x) in top {
        if !TOP_KEYS.contains(&k.as_str()) {
            fields.push((k.as_str(), x));
        }
    }
    json::canonical_ordered(fields)
}

/// Assert that the value is refused for exactly one reason, about the member `field`, and, when
/// the words matter, saying `sentence` (whole); returns it.
#[track_caller]
fn refused_once(v: &Value, field: &str, sentence: Option<&str>) -> Reason {
    let r = reasons(v);
    let found = assert_only_reason!(
        r,
        place = ["declaration"],
        row = None,
        field = field,
        rule = None
    );
    if let Some(s) = sentence {
        assert_eq!(found.sentence, s, "{found:?}");
    }
    found.clone()
}

/// Change the declaration with `f`, then recompute its schedule (so only `f`'s rule breaks).
fn with(f: impl FnOnce(&mut Value)) -> Value {
    let mut v = declaration_value();
    f(&mut v);
    v["schedule"] = schedule_for(&v);
    v
}

/// Change the declaration with `f`, leaving the schedule as it was.
fn with_raw(f: impl FnOnce(&mut Value)) -> Value {
    let mut v = declaration_value();
    f(&mut v);
    v
}

fn obj(v: &mut Value) -> &mut serde_json::Map<String, Value> {
    v.as_object_mut().expect("object")
}

// --- the valid declaration -----------------------------------------------------------------

#[test]
fn valid_declaration_parses() {
    let v = declaration_value();
    let b = bytes(&v);
    let d = Declaration::parse(&b, DEFAULT_MAX_INPUT_BYTES).expect("valid");
    assert_eq!(d.id, "reliability-slice-1");
    assert_eq!(d.sha256, crate::sha256_hex(&b));
    assert_eq!(d.bytes(), Some(&b[..]));
    assert_eq!(d.repetitions, 2);
    assert_eq!(d.tasks.len(), 3);
    assert_eq!(d.schedule_len(), 6);
    assert_eq!(d.attempt_fields, STANDARD_FIELDS);
    assert_eq!(d.source_revision.as_deref(), Some(hex('c', 40).as_str()));
    let arena = d.task("arena/sympy-matrix").expect("arena task");
    assert_eq!(arena.kind, Kind::Arena);
    assert_eq!(arena.limits["max_iterations"], 3.0);
    assert!(arena.oracle.is_some() && arena.upstream.is_some());
    let fixture = d.task("scenario/interrupted-reuse").expect("fixture task");
    assert_eq!(fixture.evidence, Evidence::Fixture);
    assert!(fixture.oracle.is_none() && fixture.upstream.is_none());
    assert_eq!(
        d.task_of("scenario/interrupted-reuse/02")
            .map(|t| t.id.as_str()),
        Some("scenario/interrupted-reuse")
    );
    assert_eq!(d.schedule_position("scenario/bugfix-iso-weeks/01"), Some(2));
    assert!(d.schedule_entry("scenario/bugfix-iso-weeks/03").is_none());
}

#[test]
fn a_64_hex_source_revision_is_a_full_commit() {
    parse(&with(|v| v["source_revision"] = json!(hex('a', 64))));
}

#[test]
fn same_bytes_same_identity_other_bytes_other_identity() {
    let v = declaration_value();
    let pretty = bytes(&v);
    let compact = serde_json::to_vec(&v).unwrap();
    let a = Declaration::parse(&pretty, DEFAULT_MAX_INPUT_BYTES).unwrap();
    let b = Declaration::parse(&compact, DEFAULT_MAX_INPUT_BYTES).unwrap();
    assert_ne!(
        a.sha256, b.sha256,
        "identity is the exact bytes, not the value"
    );
    assert_eq!(a.short_hash(), &a.sha256[..12]);
}

// --- JSON and the top level ----------------------------------------------------------------

#[test]
fn not_an_object_is_refused() {
    for (v, kind) in [
        (json!([]), "a list"),
        (json!("x"), "a string"),
        (json!(1), "an integer"),
        (json!(null), "null"),
    ] {
        let s = format!("must be an object, not {kind}");
        refused_once(&v, "(top level)", Some(&s));
    }
}

#[test]
fn wrong_format_is_refused() {
    refused_once(
        &with(|v| v["format"] = json!("campaign-declaration/2")),
        "format",
        Some("must be \"campaign-declaration/1\", not \"campaign-declaration/2\""),
    );
    refused_once(
        &with(|v| _ = obj(v).remove("format")),
        "format",
        Some("missing"),
    );
}

#[test]
fn unknown_top_level_key_is_refused() {
    refused_once(
        &with(|v| v["results"] = json!([])),
        "results",
        Some("unknown key"),
    );
}

#[test]
fn a_declaration_reason_names_the_member_as_its_field() {
    let v = with(|v| v["tasks"][1]["limits"] = json!([]));
    let Err(crate::error::Error::Refused(r)) =
        Declaration::parse(&bytes(&v), DEFAULT_MAX_INPUT_BYTES)
    else {
        panic!("refused");
    };
    let r = &r.reasons()[0];
    assert_eq!(r.place, ["declaration"]);
    assert_eq!(
        r.field.as_deref(),
        Some("tasks[1] (scenario/bugfix-iso-weeks).limits")
    );
    assert_eq!(
        r.to_string(),
        format!(
            "declaration: {}: {}",
            r.field.as_deref().unwrap(),
            r.sentence
        )
    );
    // An unknown key with an empty name is named so, not as an empty member.
    let v = with(|v| v[""] = json!(1));
    assert_reason!(
        reasons(&v),
        field = None,
        sentence = "unknown key \"\" (an empty name)"
    );
}

#[test]
fn title_and_status_are_accepted_as_free_strings() {
    parse(&with(|v| {
        v["title"] = json!("Pinned reliability campaign");
        v["status"] = json!("PLANNED");
    }));
    refused_once(
        &with(|v| v["status"] = json!(3)),
        "status",
        Some("must be a string, not an integer"),
    );
}

#[test]
fn duplicate_keys_nan_trailing_data_deep_nesting_are_refused() {
    let good = String::from_utf8(bytes(&declaration_value())).unwrap();
    let dup = good.replacen(
        "\"repetitions\": 2",
        "\"repetitions\": 2, \"repetitions\": 2",
        1,
    );
    assert_ne!(dup, good);
    let r = refusal(Declaration::parse(dup.as_bytes(), DEFAULT_MAX_INPUT_BYTES));
    assert_reason!(
        r,
        field = None,
        sentence = "not valid JSON: duplicate key \"repetitions\" at line 66 column 33"
    );
    let nan = good.replacen("\"repetitions\": 2", "\"repetitions\": NaN", 1);
    refusal(Declaration::parse(nan.as_bytes(), DEFAULT_MAX_INPUT_BYTES));
    let inf = good.replacen("\"repetitions\": 2", "\"repetitions\": 1e999", 1);
    refusal(Declaration::parse(inf.as_bytes(), DEFAULT_MAX_INPUT_BYTES));
    let trailing = format!("{good}{{}}");
    let r = refusal(Declaration::parse(
        trailing.as_bytes(),
        DEFAULT_MAX_INPUT_BYTES,
    ));
    assert_reason!(
        r,
        field = None,
        sentence = "not valid JSON: trailing characters at line 198 column 1"
    );
    let deep = with(|v| {
        let mut nested = json!(1);
        for _ in 0..70 {
            nested = json!([nested]);
        }
        v["title"] = nested;
    });
    let r = reasons(&deep);
    assert_reason!(
        r,
        field = None,
        sentence = "not valid JSON: nesting deeper than 64 levels at line 261 column 130"
    );
    refusal(Declaration::parse(b"", DEFAULT_MAX_INPUT_BYTES));
    refusal(Declaration::parse(b"\xff\xfe", DEFAULT_MAX_INPUT_BYTES));
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    let b = bytes(&declaration_value());
    let r = refusal(Declaration::parse(&b, b.len() as u64 - 1));
    assert_reason!(
        r,
        field = None,
        sentence = "4950 bytes is over the input bound of 4949 bytes (--max-input-bytes)"
    );
    Declaration::parse(&b, b.len() as u64).expect("exactly at the bound is accepted");
}

// --- id ------------------------------------------------------------------------------------

#[test]
fn id_rules() {
    for bad in [
        "has space",
        "slash/inside",
        "ümlaut",
        "colon:x",
        ".hidden",
        "-dash",
        "a..b",
        "x.lock",
        "",
        "trailing.",
    ] {
        assert!(!is_valid_id(bad), "{bad:?} must be invalid");
        refused_once(&with(|v| v["id"] = json!(bad)), "id", None);
    }
    let long = "a".repeat(101);
    assert!(!is_valid_id(&long));
    let s = format!("{long:?} is not a valid ref name component (ASCII letters, digits, '.', '_', '-'; not starting with '.' or '-', no '..', not ending in '.' or '.lock', at most 100 characters)");
    refused_once(&with(|v| v["id"] = json!(long)), "id", Some(&s));
    let max = "a".repeat(100);
    assert!(is_valid_id(&max));
    parse(&with(|v| v["id"] = json!(max)));
    for good in ["a", "A_b-c.d", "0x", "lock", "x.locked", "x_"] {
        assert!(is_valid_id(good), "{good:?} must be valid");
    }
    refused_once(
        &with(|v| v["id"] = json!(7)),
        "id",
        Some("must be a string, not an integer"),
    );
}

// --- source_revision and repetitions --------------------------------------------------------

#[test]
fn source_revision_must_be_a_full_commit() {
    for bad in [
        hex('c', 7),
        hex('c', 39),
        hex('c', 41),
        "main".into(),
        "v1.0".into(),
        hex('C', 40),
    ] {
        let s = format!(
            "{bad:?} is not a full commit id (a branch, tag or abbreviation is never pinned)"
        );
        refused_once(
            &with(|v| v["source_revision"] = json!(bad)),
            "source_revision",
            Some(&s),
        );
    }
    refused_once(
        &with(|v| _ = obj(v).remove("source_revision")),
        "source_revision",
        Some("missing"),
    );
}

#[test]
fn repetitions_are_an_integer_from_1_to_999() {
    for (n, said) in [
        (json!(0), "must be from 1 to 999, not 0"),
        (json!(1000), "must be from 1 to 999, not 1000"),
        (json!(1.5), "must be a nonnegative integer, not 1.5"),
        (json!(2.0), "must be a nonnegative integer, not 2.0"),
        (json!(-1), "must be a nonnegative integer, not -1"),
        (json!("2"), "must be a nonnegative integer, not \"2\""),
    ] {
        // (The schedule is left as it was, so only `repetitions` is named.)
        refused_once(
            &with_raw(|v| v["repetitions"] = n.clone()),
            "repetitions",
            Some(said),
        );
    }
    parse(&with(|v| v["repetitions"] = json!(1)));
}

#[test]
fn the_schedule_is_bounded_before_it_is_built() {
    // 1002 tasks × 999 repetitions (1,000,998): over MAX_SCHEDULE, refused before the expected
    // schedule is built (a draft goes through the same check).
    let v = with_raw(|v| {
        let task = v["tasks"][1].clone();
        let id = task["id"].as_str().unwrap().to_owned();
        v["tasks"] = Value::Array(
            (0..1002)
                .map(|i| {
                    let mut t = task.clone();
                    t["id"] = json!(format!("{id}-{i}"));
                    t
                })
                .collect(),
        );
        v["repetitions"] = json!(999);
        v["schedule"] = json!([]);
    });
    let r = reasons(&v);
    assert_reason!(
        r,
        field = "schedule",
        sentence =
            "tasks × repetitions is 1000998 scheduled attempts; at most 1000000 are accepted"
    );
}

// --- acceptance ----------------------------------------------------------------------------

#[test]
fn acceptance_omitted_rule_weakens() {
    for rule in ACCEPTANCE_RULES {
        refused_once(
            &with(|v| _ = v["acceptance"].as_object_mut().unwrap().remove(rule)),
            &format!("acceptance.{rule}"),
            Some("weakens the acceptance rules: the rule is omitted (state it as true)"),
        );
    }
}

#[test]
fn acceptance_rule_not_true_weakens() {
    for bad in [json!(false), json!("yes"), json!(1), json!(null), json!({})] {
        let s = format!("weakens the acceptance rules: must be true, not {bad}");
        refused_once(
            &with(|v| v["acceptance"]["unknown_is_null"] = bad.clone()),
            "acceptance.unknown_is_null",
            Some(&s),
        );
    }
}

#[test]
fn acceptance_missing_or_not_an_object_weakens() {
    refused_once(
        &with(|v| _ = obj(v).remove("acceptance")),
        "acceptance",
        Some("missing: weakens the acceptance rules (state every rule as true)"),
    );
    for (bad, kind) in [
        (json!(true), "a boolean"),
        (json!([]), "a list"),
        (json!(null), "null"),
    ] {
        let s = format!(
            "weakens the acceptance rules: must be an object stating every rule as true, not {kind}"
        );
        refused_once(
            &with(|v| v["acceptance"] = bad.clone()),
            "acceptance",
            Some(&s),
        );
    }
    let r = reasons(&with(|v| v["acceptance"] = json!({})));
    assert_eq!(
        r.len(),
        ACCEPTANCE_RULES.len(),
        "one reason per omitted rule: {r:?}"
    );
    for rule in ACCEPTANCE_RULES {
        assert_reason!(
            r,
            field = format!("acceptance.{rule}"),
            sentence = "weakens the acceptance rules: the rule is omitted (state it as true)"
        );
    }
}

#[test]
fn acceptance_unknown_rule_weakens() {
    refused_once(
        &with(|v| v["acceptance"]["zero_is_unknown"] = json!(true)),
        "acceptance.zero_is_unknown",
        Some("weakens the acceptance rules: the tool does not know this rule"),
    );
}

// --- attempt_fields ------------------------------------------------------------------------

fn fields_with(f: impl FnOnce(&mut Vec<Value>)) -> Value {
    with(|v| f(v["attempt_fields"].as_array_mut().unwrap()))
}

#[test]
fn attempt_fields_missing_a_standard_field_is_refused() {
    refused_once(
        &fields_with(|a| _ = a.pop()),
        "attempt_fields",
        Some("lacks \"native_record\" (every field of ledger.md, in order)"),
    );
    refused_once(&fields_with(|a| _ = a.remove(5)), "attempt_fields[5]", Some("must be \"native_status\" (the fields of ledger.md in order, then added fields), not \"reason\""));
}

#[test]
fn attempt_fields_out_of_order_is_refused() {
    refused_once(&fields_with(|a| a.swap(0, 1)), "attempt_fields[0]", Some("must be \"schedule_id\" (the fields of ledger.md in order, then added fields), not \"task_id\""));
}

#[test]
fn attempt_fields_duplicate_is_refused() {
    refused_once(
        &fields_with(|a| a.push(json!("reason"))),
        "attempt_fields[20]",
        Some("\"reason\" is listed twice"),
    );
    refused_once(
        &fields_with(|a| {
            a.push(json!("reviewer_note"));
            a.push(json!("reviewer_note"));
        }),
        "attempt_fields[21]",
        Some("\"reviewer_note\" is listed twice"),
    );
}

#[test]
fn attempt_fields_extra_field_is_accepted() {
    let d = parse(&fields_with(|a| a.push(json!("reviewer_note"))));
    assert_eq!(d.attempt_fields.len(), 21);
    assert_eq!(d.attempt_fields[20], "reviewer_note");
    refused_once(
        &fields_with(|a| a.push(json!(""))),
        "attempt_fields[20]",
        Some("must not be empty"),
    );
    refused_once(
        &fields_with(|a| a.push(json!(3))),
        "attempt_fields[20]",
        Some("must be a string, not an integer"),
    );
}

// --- tasks ---------------------------------------------------------------------------------

fn task_with(i: usize, f: impl FnOnce(&mut Value)) -> Value {
    with(|v| f(&mut v["tasks"][i]))
}

fn task_raw(i: usize, f: impl FnOnce(&mut Value)) -> Value {
    with_raw(|v| f(&mut v["tasks"][i]))
}

#[test]
fn task_kind_evidence_expects_are_closed() {
    refused_once(
        &task_raw(1, |t| t["kind"] = json!("bench")),
        "tasks[1] (scenario/bugfix-iso-weeks).kind",
        Some("must be \"arena\", \"scenario\", \"inspect\" or \"harbor\", not \"bench\""),
    );
    refused_once(
        &task_with(1, |t| t["evidence"] = json!("replay")),
        "tasks[1] (scenario/bugfix-iso-weeks).evidence",
        Some("must be \"live\" or \"fixture\", not \"replay\""),
    );
    refused_once(
        &task_with(1, |t| t["expects"] = json!("success")),
        "tasks[1] (scenario/bugfix-iso-weeks).expects",
        Some("must be \"completion\" or \"stop\", not \"success\""),
    );
    refused_once(
        &task_with(1, |t| t["notes"] = json!("x")),
        "tasks[1] (scenario/bugfix-iso-weeks).notes",
        Some("unknown key"),
    );
    parse(&task_with(1, |t| t["expects"] = json!("stop")));
}

#[test]
fn task_id_is_kind_slash_name() {
    for bad in [
        "bugfix-iso-weeks",
        "arena/bugfix-iso-weeks",
        "scenario/",
        "scenario/a..b",
        "scenario/.hidden",
        "scenario/-dash",
        "scenario/sp ace",
        "scenario/a/b",
        "scenario/ümlaut",
    ] {
        let s = format!("{bad:?} must be \"scenario/<name>\", the name matching [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 characters, no '..')");
        refused_once(
            &task_with(1, |t| t["id"] = json!(bad)),
            &format!("tasks[1] ({bad}).id"),
            Some(&s),
        );
    }
    let long = format!("scenario/{}", "n".repeat(101));
    refused_once(
        &task_with(1, |t| t["id"] = json!(long)),
        &format!("tasks[1] ({long}).id"),
        None,
    );
    let max = format!("scenario/{}", "n".repeat(100));
    parse(&task_with(1, |t| t["id"] = json!(max)));
    parse(&task_with(1, |t| t["id"] = json!("scenario/A0.b_c-d")));
}

#[test]
fn duplicate_task_id_is_refused() {
    let v = with(|v| {
        let copy = v["tasks"][1].clone();
        v["tasks"].as_array_mut().unwrap().push(copy);
    });
    // The schedule then repeats the copy's ids too: each is named.
    let r = reasons(&v);
    assert_reason!(
        r,
        field = "tasks[3].id",
        sentence = "\"scenario/bugfix-iso-weeks\" repeats an id"
    );
    assert_reason!(
        r,
        field = "schedule[6].id",
        sentence = "\"scenario/bugfix-iso-weeks/01\" repeats an id"
    );
}

#[test]
fn no_tasks_is_refused() {
    refused_once(
        &with(|v| v["tasks"] = json!([])),
        "tasks",
        Some("must declare at least one task"),
    );
}

#[test]
fn task_without_limits_is_refused() {
    refused_once(
        &task_with(0, |t| _ = obj(t).remove("limits")),
        "tasks[0] (arena/sympy-matrix).limits",
        Some("missing: every task declares its limits (spend is compared with them)"),
    );
    refused_once(
        &task_with(1, |t| t["limits"] = json!(null)),
        "tasks[1] (scenario/bugfix-iso-weeks).limits",
        Some("must be an object, not null"),
    );
}

#[test]
fn each_missing_limit_is_refused() {
    for name in ARENA_LIMITS {
        refused_once(
            &task_with(0, |t| _ = t["limits"].as_object_mut().unwrap().remove(name)),
            &format!("tasks[0] (arena/sympy-matrix).limits.{name}"),
            Some("missing limit"),
        );
    }
    for name in SCENARIO_LIMITS {
        refused_once(
            &task_with(2, |t| _ = t["limits"].as_object_mut().unwrap().remove(name)),
            &format!("tasks[2] (scenario/interrupted-reuse).limits.{name}"),
            Some("missing limit"),
        );
    }
}

#[test]
fn negative_non_numeric_and_fractional_limits_are_refused() {
    for (name, bad) in [
        ("harness_minutes", json!(-1)),
        ("harness_minutes", json!(-0.5)),
        ("harness_minutes", json!("90")),
        ("harness_minutes", json!(null)),
        ("max_steps", json!(1.5)),
        ("max_steps", json!(-3)),
        ("max_steps", json!(true)),
    ] {
        refused_once(
            &task_with(1, |t| t["limits"][name] = bad.clone()),
            &format!("tasks[1] (scenario/bugfix-iso-weeks).limits.{name}"),
            None,
        );
    }
    refused_once(
        &task_with(0, |t| t["limits"]["max_iterations"] = json!(2.5)),
        "tasks[0] (arena/sympy-matrix).limits.max_iterations",
        Some("must be a nonnegative integer (a count), not 2.5"),
    );
    refused_once(
        &task_with(0, |t| t["limits"]["oracle_seconds"] = json!(-120)),
        "tasks[0] (arena/sympy-matrix).limits.oracle_seconds",
        Some("must be a finite nonnegative number, not -120"),
    );
    // Zero and fractional durations are finite nonnegative numbers.
    parse(&task_with(1, |t| t["limits"]["harness_minutes"] = json!(0)));
    parse(&task_with(1, |t| {
        t["limits"]["harness_minutes"] = json!(7.5)
    }));
}

#[test]
fn an_extra_limit_key_is_refused() {
    refused_once(
        &task_with(1, |t| t["limits"]["max_tokens"] = json!(100)),
        "tasks[1] (scenario/bugfix-iso-weeks).limits.max_tokens",
        Some("a scenario task declares exactly harness_minutes, max_steps"),
    );
}

#[test]
fn a_scenario_with_arena_limits_is_refused() {
    let r = reasons(&task_with(
        1,
        |t| {
            t["limits"] = json!({ "cli_invocation_seconds": 3600, "oracle_seconds": 120, "max_iterations": 3 })
        },
    ));
    for name in ["cli_invocation_seconds", "harness_minutes", "max_steps"] {
        assert_reason!(
            r,
            field = format!("tasks[1] (scenario/bugfix-iso-weeks).limits.{name}")
        );
    }
}

#[test]
fn native_outcomes_must_map_to_the_portfolio() {
    refused_once(&task_with(1, |t| {
            t["native_outcomes"]
                .as_array_mut()
                .unwrap()
                .push(json!("TIMEOUT"))
        }), "tasks[1] (scenario/bugfix-iso-weeks).native_outcomes", Some("\"TIMEOUT\" has no portfolio outcome for a scenario task (allowed: PASS FALSE_COMPLETE HONEST_BLOCKER ERROR SKIPPED NOT_EXERCISED RUNNING INTERRUPTED_UNGRADED PENDING_UNGRADED)"));
    refused_once(&task_with(0, |t| {
            t["native_outcomes"]
                .as_array_mut()
                .unwrap()
                .push(json!("FALSE_COMPLETE"))
        }), "tasks[0] (arena/sympy-matrix).native_outcomes", Some("\"FALSE_COMPLETE\" has no portfolio outcome for an arena task (allowed: PASS FAIL STOPPED ERROR SKIPPED RUNNING)"));
    refused_once(&task_with(1, |t| {
            t["native_outcomes"]
                .as_array_mut()
                .unwrap()
                .push(json!("FAIL"))
        }), "tasks[1] (scenario/bugfix-iso-weeks).native_outcomes", Some("\"FAIL\" has no portfolio outcome for a scenario task (allowed: PASS FALSE_COMPLETE HONEST_BLOCKER ERROR SKIPPED NOT_EXERCISED RUNNING INTERRUPTED_UNGRADED PENDING_UNGRADED)"));
    refused_once(
        &task_with(1, |t| {
            t["native_outcomes"]
                .as_array_mut()
                .unwrap()
                .push(json!("DEFERRED"))
        }),
        "tasks[1] (scenario/bugfix-iso-weeks).native_outcomes",
        Some("DEFERRED is implied and is not listed"),
    );
    refused_once(
        &task_with(1, |t| {
            t["native_outcomes"]
                .as_array_mut()
                .unwrap()
                .push(json!("PASS"))
        }),
        "tasks[1] (scenario/bugfix-iso-weeks).native_outcomes",
        Some("\"PASS\" is listed twice"),
    );
    parse(&task_with(0, |t| {
        t["native_outcomes"] = json!(ARENA_OUTCOMES)
    }));
    parse(&task_with(1, |t| {
        t["native_outcomes"] = json!(SCENARIO_OUTCOMES)
    }));
}

#[test]
fn arena_needs_upstream_and_oracle_scenario_carries_neither() {
    refused_once(
        &task_with(0, |t| _ = obj(t).remove("oracle")),
        "tasks[0] (arena/sympy-matrix).oracle",
        Some("missing"),
    );
    refused_once(
        &task_with(0, |t| _ = obj(t).remove("upstream")),
        "tasks[0] (arena/sympy-matrix).upstream",
        Some("missing"),
    );
    let oracle = json!({ "path": "arena/tasks/scenario/bugfix-iso-weeks/oracle.py", "sha256": hex('f', 64) });
    refused_once(
        &task_with(1, |t| t["oracle"] = oracle.clone()),
        "tasks[1] (scenario/bugfix-iso-weeks).oracle",
        None,
    );
    let upstream = declaration_value()["tasks"][0]["upstream"].clone();
    refused_once(
        &task_with(1, |t| t["upstream"] = upstream.clone()),
        "tasks[1] (scenario/bugfix-iso-weeks).upstream",
        None,
    );
}

#[test]
fn upstream_commits_must_be_full() {
    for k in ["base_commit", "reference_commit"] {
        refused_once(
            &task_with(0, |t| t["upstream"][k] = json!("abc1234")),
            &format!("tasks[0] (arena/sympy-matrix).upstream.{k}"),
            Some("\"abc1234\" is not a full commit id"),
        );
    }
    refused_once(
        &task_with(0, |t| t["upstream"]["checks"] = json!(["a", 1])),
        "tasks[0] (arena/sympy-matrix).upstream.checks[1]",
        Some("must be a string, not an integer"),
    );
}

#[test]
fn pins_must_be_paths_and_hashes() {
    refused_once(
        &task_with(1, |t| t["definition"]["sha256"] = json!("abc")),
        "tasks[1] (scenario/bugfix-iso-weeks).definition.sha256",
        Some("\"abc\" is not a lowercase hex SHA-256"),
    );
    refused_once(
        &task_with(1, |t| t["definition"]["files"] = json!(0)),
        "tasks[1] (scenario/bugfix-iso-weeks).definition.files",
        Some("must be at least 1 (an empty tree cannot be pinned)"),
    );
    refused_once(
        &task_with(1, |t| t["definition"]["path"] = json!("../x")),
        "tasks[1] (scenario/bugfix-iso-weeks).definition.path",
        Some("\"../x\" is not a repository-relative path"),
    );
    refused_once(
        &with(|v| v["policy_files"][0]["sha256"] = json!(hex('A', 64))),
        "policy_files[0].sha256",
        None,
    );
    refused_once(
        &with(|v| v["runner_tools"]["files"] = json!(4.0)),
        "runner_tools.files",
        Some("must be a nonnegative integer, not 4.0"),
    );
}

// --- schedule ------------------------------------------------------------------------------

fn schedule_with(f: impl FnOnce(&mut Vec<Value>)) -> Value {
    with_raw(|v| f(v["schedule"].as_array_mut().unwrap()))
}

#[test]
fn schedule_helpers() {
    assert_eq!(repetition_width(1), 2);
    assert_eq!(repetition_width(99), 2);
    assert_eq!(repetition_width(100), 3);
    assert_eq!(repetition_width(999), 3);
    assert_eq!(schedule_id("arena/x", 1, 2), "arena/x/01");
    assert_eq!(schedule_id("arena/x", 7, 100), "arena/x/007");
    let d = parse(&declaration_value());
    let ids: Vec<_> = expected_schedule(d.tasks.ids(), 2)
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(
        ids,
        [
            "arena/sympy-matrix/01",
            "arena/sympy-matrix/02",
            "scenario/bugfix-iso-weeks/01",
            "scenario/bugfix-iso-weeks/02",
            "scenario/interrupted-reuse/01",
            "scenario/interrupted-reuse/02"
        ]
    );
}

#[test]
fn schedule_missing_entry_is_refused() {
    refused_once(&schedule_with(|s| _ = s.pop()), "schedule", Some("is not exactly tasks × repetitions in task then repetition order (5 entries, expected 6)"));
    refused_once(
        &with_raw(|v| _ = obj(v).remove("schedule")),
        "schedule",
        Some("missing"),
    );
}

#[test]
fn schedule_extra_entry_is_refused() {
    refused_once(&schedule_with(|s| {
            s.push(json!({ "id": "arena/sympy-matrix/03", "task": "arena/sympy-matrix", "repetition": 3 }))
        }), "schedule", Some("is not exactly tasks × repetitions in task then repetition order (7 entries, expected 6)"));
}

#[test]
fn schedule_wrong_order_is_refused() {
    refused_once(&schedule_with(|s| s.swap(0, 1)), "schedule", Some("is not exactly tasks × repetitions in task then repetition order (6 entries, expected 6): schedule[0] is {\"arena/sympy-matrix/02\", \"arena/sympy-matrix\", 2}, expected {\"arena/sympy-matrix/01\", \"arena/sympy-matrix\", 1}; schedule[1] is {\"arena/sympy-matrix/01\", \"arena/sympy-matrix\", 1}, expected {\"arena/sympy-matrix/02\", \"arena/sympy-matrix\", 2}"));
    refused_once(&schedule_with(|s| s.swap(1, 2)), "schedule", Some("is not exactly tasks × repetitions in task then repetition order (6 entries, expected 6): schedule[1] is {\"scenario/bugfix-iso-weeks/01\", \"scenario/bugfix-iso-weeks\", 1}, expected {\"arena/sympy-matrix/02\", \"arena/sympy-matrix\", 2}; schedule[2] is {\"arena/sympy-matrix/02\", \"arena/sympy-matrix\", 2}, expected {\"scenario/bugfix-iso-weeks/01\", \"scenario/bugfix-iso-weeks\", 1}"));
}

#[test]
fn schedule_wrong_padding_is_refused() {
    refused_once(&schedule_with(|s| s[0]["id"] = json!("arena/sympy-matrix/1")), "schedule", Some("is not exactly tasks × repetitions in task then repetition order (6 entries, expected 6): schedule[0] is {\"arena/sympy-matrix/1\", \"arena/sympy-matrix\", 1}, expected {\"arena/sympy-matrix/01\", \"arena/sympy-matrix\", 1}"));
}

#[test]
fn schedule_repeated_id_is_refused() {
    refused_once(
        &schedule_with(|s| s[1]["id"] = json!("arena/sympy-matrix/01")),
        "schedule[1].id",
        Some("\"arena/sympy-matrix/01\" repeats an id"),
    );
}

#[test]
fn schedule_entries_are_closed_objects() {
    refused_once(
        &schedule_with(|s| s[0]["note"] = json!("x")),
        "schedule[0].note",
        Some("unknown key"),
    );
    refused_once(
        &schedule_with(|s| s[0]["repetition"] = json!(1.0)),
        "schedule[0].repetition",
        Some("must be a nonnegative integer, not 1.0"),
    );
}

#[test]
fn three_digit_padding_from_100_repetitions() {
    let v = with(|v| v["repetitions"] = json!(100));
    assert_eq!(v["schedule"][0]["id"], "arena/sympy-matrix/001");
    assert_eq!(v["schedule"][99]["id"], "arena/sympy-matrix/100");
    let d = parse(&v);
    assert_eq!(d.schedule_len(), 300);
    let mut two = v.clone();
    two["schedule"][0]["id"] = json!("arena/sympy-matrix/01");
    refused_once(&two, "schedule", Some("is not exactly tasks × repetitions in task then repetition order (300 entries, expected 300): schedule[0] is {\"arena/sympy-matrix/01\", \"arena/sympy-matrix\", 1}, expected {\"arena/sympy-matrix/001\", \"arena/sympy-matrix\", 1}"));
    // With 99 repetitions two digits remain right.
    let v = with(|v| v["repetitions"] = json!(99));
    assert_eq!(v["schedule"][0]["id"], "arena/sympy-matrix/01");
    parse(&v);
}

// --- profile -------------------------------------------------------------------------------

#[test]
fn profile_is_closed_and_typed() {
    refused_once(
        &with(|v| v["profile"]["temperature"] = json!(0)),
        "profile.temperature",
        Some("unknown key"),
    );
    refused_once(
        &with(|v| v["profile"]["roles"]["builder"]["seed"] = json!(1)),
        "profile.roles.builder.seed",
        None,
    );
    refused_once(
        &with(|v| v["profile"]["extra_options"] = json!("--x")),
        "profile.extra_options",
        Some("must be a list of strings, not a string"),
    );
    refused_once(
        &with(|v| _ = obj(&mut v["profile"]).remove("name")),
        "profile.name",
        Some("missing"),
    );
}

// --- drafts --------------------------------------------------------------------------------

/// A valid draft: the declaration with every computed field left out.
fn draft_value() -> Value {
    let mut v = declaration_value();
    let top = obj(&mut v);
    top.remove("source_revision");
    top.remove("schedule");
    top["profile"] = json!({ "source": { "path": "arena/profiles/build-comparison.json" } });
    top["policy_files"] = json!([{ "path": "arena/policy/live-spend.md" }]);
    top["runner_tools"] = json!({ "path": "arena/runner-tools" });
    for t in top["tasks"].as_array_mut().unwrap() {
        let d = obj(&mut t["definition"]);
        d.remove("sha256");
        d.remove("files");
        if let Some(o) = t.get_mut("oracle") {
            obj(o).remove("sha256");
        }
    }
    v
}

fn draft_reasons(v: &Value) -> Vec<Reason> {
    refusal(Declaration::parse_mode(
        &bytes(v),
        Mode::Draft,
        DEFAULT_MAX_INPUT_BYTES,
    ))
}

#[test]
fn a_valid_draft_is_accepted_and_implies_its_schedule() {
    let d = Declaration::parse_mode(&bytes(&draft_value()), Mode::Draft, DEFAULT_MAX_INPUT_BYTES)
        .expect("valid draft");
    assert_eq!(d.source_revision, None);
    assert_eq!(d.schedule_len(), 6);
    assert_eq!(d.tasks[0].definition.sha256, None);
    // A draft is not a declaration.
    refusal(Declaration::parse(
        &bytes(&draft_value()),
        DEFAULT_MAX_INPUT_BYTES,
    ));
}

/// A change to a declaration value.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn a_draft_carrying_a_computed_field_is_refused() {
    let cases: Vec<(&str, Edit)> = vec![
        (
            "source_revision",
            Box::new(|v| v["source_revision"] = json!(hex('c', 40))),
        ),
        ("schedule", Box::new(|v| v["schedule"] = json!([]))),
        (
            "profile.name",
            Box::new(|v| v["profile"]["name"] = json!("x")),
        ),
        (
            "profile.roles",
            Box::new(|v| v["profile"]["roles"] = json!({})),
        ),
        (
            "profile.source.sha256",
            Box::new(|v| v["profile"]["source"]["sha256"] = json!(hex('a', 64))),
        ),
        (
            "runner_tools.files",
            Box::new(|v| v["runner_tools"]["files"] = json!(4)),
        ),
        (
            "policy_files[0].sha256",
            Box::new(|v| v["policy_files"][0]["sha256"] = json!(hex('b', 64))),
        ),
        (
            "tasks[1] (scenario/bugfix-iso-weeks).definition.sha256",
            Box::new(|v| v["tasks"][1]["definition"]["sha256"] = json!(hex('3', 64))),
        ),
        (
            "tasks[0] (arena/sympy-matrix).oracle.sha256",
            Box::new(|v| v["tasks"][0]["oracle"]["sha256"] = json!(hex('f', 64))),
        ),
    ];
    for (field, f) in cases {
        let mut v = draft_value();
        f(&mut v);
        let r = draft_reasons(&v);
        assert_only_reason!(
            r,
            field = field,
            sentence = "a draft carries no computed field (pin computes it)"
        );
    }
}

#[test]
fn a_draft_obeys_the_other_rules() {
    let mut v = draft_value();
    v["acceptance"]["unknown_is_null"] = json!(false);
    v["id"] = json!("..");
    let r = draft_reasons(&v);
    assert_reason!(
        r,
        field = "acceptance.unknown_is_null",
        sentence = "weakens the acceptance rules: must be true, not false"
    );
    assert_reason!(r, field = "id");
}

// --- every reason at once ------------------------------------------------------------------

#[test]
fn every_reason_is_reported_together() {
    let v = with_raw(|v| {
        v["id"] = json!("bad id");
        v["source_revision"] = json!("main");
        v["acceptance"]["unknown_is_null"] = json!(false);
        v["attempt_fields"].as_array_mut().unwrap().swap(2, 3);
        v["tasks"][0]["limits"]["oracle_seconds"] = json!(-1);
        v["tasks"][1]["native_outcomes"]
            .as_array_mut()
            .unwrap()
            .push(json!("TIMEOUT"));
        v["tasks"][2]["kind"] = json!("bench");
        v["schedule"].as_array_mut().unwrap().pop();
        v["surprise"] = json!(1);
    });
    let r = reasons(&v);
    assert_reason!(r, field = "id", sentence = "\"bad id\" is not a valid ref name component (ASCII letters, digits, '.', '_', '-'; not starting with '.' or '-', no '..', not ending in '.' or '.lock', at most 100 characters)");
    assert_reason!(r, field = "source_revision");
    assert_reason!(
        r,
        field = "acceptance.unknown_is_null",
        sentence = "weakens the acceptance rules: must be true, not false"
    );
    assert_reason!(r, field = "attempt_fields[2]");
    assert_reason!(
        r,
        field = "tasks[0] (arena/sympy-matrix).limits.oracle_seconds"
    );
    assert_reason!(r, field = "tasks[1] (scenario/bugfix-iso-weeks).native_outcomes", sentence = "\"TIMEOUT\" has no portfolio outcome for a scenario task (allowed: PASS FALSE_COMPLETE HONEST_BLOCKER ERROR SKIPPED NOT_EXERCISED RUNNING INTERRUPTED_UNGRADED PENDING_UNGRADED)");
    assert_reason!(r, field = "tasks[2] (scenario/interrupted-reuse).kind");
    assert_reason!(r, field = "surprise", sentence = "unknown key");
    assert!(r.len() >= 8, "{r:?}");
    assert!(r.iter().all(|x| x.place == ["declaration"]), "{r:?}");
}

#[test]
fn every_schedule_and_task_reason_is_reported_together() {
    // The schedule is still compared when tasks and repetitions are valid, beside other reasons.
    let v = with_raw(|v| {
        v["acceptance"]["unknown_is_null"] = json!(false);
        v["schedule"].as_array_mut().unwrap().pop();
    });
    let r = reasons(&v);
    assert_reason!(
        r,
        field = "acceptance.unknown_is_null",
        sentence = "weakens the acceptance rules: must be true, not false"
    );
    assert_reason!(r, field = "schedule", sentence = "is not exactly tasks × repetitions in task then repetition order (5 entries, expected 6)");
    assert_eq!(r.len(), 2, "{r:?}");
}

#[test]
fn no_panic_on_wrongly_shaped_values() {
    // Every top-level key given every JSON type: refused, never a panic.
    let shapes = [
        json!(null),
        json!(true),
        json!(1),
        json!(-1.5),
        json!("s"),
        json!([]),
        json!({}),
        json!([1, "a", null]),
    ];
    let keys: Vec<String> = obj(&mut declaration_value()).keys().cloned().collect();
    for k in &keys {
        for s in &shapes {
            let _ = Declaration::parse(
                &bytes(&with_raw(|v| v[k.as_str()] = s.clone())),
                DEFAULT_MAX_INPUT_BYTES,
            );
        }
    }
    for k in [
        "id",
        "kind",
        "evidence",
        "expects",
        "definition",
        "oracle",
        "upstream",
        "limits",
        "native_outcomes",
    ] {
        for s in &shapes {
            for i in 0..3 {
                let _ = Declaration::parse(
                    &bytes(&task_raw(i, |t| t[k] = s.clone())),
                    DEFAULT_MAX_INPUT_BYTES,
                );
            }
        }
    }
    for s in &shapes {
        let _ = Declaration::parse(
            &bytes(&schedule_with(|e| e[0] = s.clone())),
            DEFAULT_MAX_INPUT_BYTES,
        );
        let _ = Declaration::parse(
            &bytes(&with_raw(|v| v["tasks"][0] = s.clone())),
            DEFAULT_MAX_INPUT_BYTES,
        );
    }
}

// --- the schedule is computed, not held ----------------------------------------------------

/// A declaration whose scenario tasks are renamed (`names`), with `reps` repetitions.
fn renamed(names: &[&str], reps: u64) -> Declaration {
    parse(&with(|v| {
        v["repetitions"] = json!(reps);
        let tasks = v["tasks"].as_array_mut().unwrap();
        let scenario = tasks[1].clone();
        tasks.truncate(1);
        for n in names {
            let mut t = scenario.clone();
            t["id"] = json!(format!("scenario/{n}"));
            tasks.push(t);
        }
    }))
}

#[test]
fn computed_schedule_is_the_materialised_one() {
    for reps in [1, 2, 99, 100, 999] {
        let d = renamed(&["a", "ab", "a.b", "a-b_c.9"], reps);
        let want = expected_schedule(d.tasks.ids(), reps);
        assert_eq!(d.schedule_len(), want.len());
        assert_eq!(d.schedule().collect::<Vec<_>>(), want, "{reps} repetitions");
        for (i, e) in want.iter().enumerate() {
            assert_eq!(d.schedule_position(&e.id), Some(i), "{}", e.id);
            assert_eq!(d.schedule_entry(&e.id).as_ref(), Some(e));
            assert_eq!(d.schedule_at(i), *e);
        }
    }
}

#[test]
fn computed_schedule_refuses_ids_not_scheduled() {
    let d = renamed(&["a", "ab", "a.b"], 100);
    assert_eq!(d.schedule_position("scenario/a/001"), Some(100));
    assert_eq!(d.schedule_position("scenario/ab/001"), Some(200));
    assert_eq!(d.schedule_position("scenario/a.b/100"), Some(399));
    for bad in [
        "scenario/a/01",    // two digits where 100 repetitions need three
        "scenario/a/0001",  // four
        "scenario/a/1",     // none
        "scenario/a/000",   // repetition 0
        "scenario/a/101",   // past the repetitions
        "scenario/a/+01",   // a sign
        "scenario/a/ 01",   // a space
        "scenario/a/",      // nothing
        "scenario/a",       // no repetition
        "scenario/abc/001", // an undeclared task
        "scenario/a.c/001", // a dot where the task has none
        "scenario/a/b/001", // a task name with a slash
        "a/001",
        "",
        "/",
        "scenario/a/001/",
        "scenario/a/00１",
    ] {
        assert_eq!(d.schedule_position(bad), None, "{bad:?}");
        assert!(d.schedule_entry(bad).is_none(), "{bad:?}");
    }
    let d = renamed(&["a"], 1);
    assert_eq!(d.schedule_len(), 2);
    assert_eq!(d.schedule_position("scenario/a/01"), Some(1));
    assert_eq!(d.schedule_position("scenario/a/1"), None);
    assert_eq!(d.schedule_position("scenario/a/02"), None);
}

#[test]
fn fast_and_ordinary_parse_agree() {
    // The schedule before the tasks (not the written order) is parsed by the ordinary path.
    let v = with(|v| v["repetitions"] = json!(3));
    let w = written(&v);
    assert!(matches!(fast::parse(&w), Some((_, true))));
    assert!(matches!(fast::parse(&bytes(&v)), Some((_, false))));
    let fast = Declaration::parse(&w, DEFAULT_MAX_INPUT_BYTES).expect("valid");
    let ordinary = parse(&v);
    assert_eq!(fast.value(), ordinary.value());
    assert!(fast.value().unwrap().get("schedule").is_none());
    assert_eq!(
        fast.schedule().collect::<Vec<_>>(),
        ordinary.schedule().collect::<Vec<_>>()
    );
    // A duplicated schedule key after a valid one is refused, as by the ordinary parse.
    let mut text = String::from_utf8(bytes(&v)).unwrap();
    let at = text.rfind('}').unwrap();
    text.insert_str(at, ",\"schedule\": []");
    let r = refusal(Declaration::parse(text.as_bytes(), DEFAULT_MAX_INPUT_BYTES));
    assert_reason!(
        r,
        field = None,
        sentence = "not valid JSON: duplicate key \"schedule\" at line 212 column 11"
    );
}

#[test]
fn a_canonical_schedule_is_compared_as_bytes() {
    let v = with(|v| v["repetitions"] = json!(12));
    let w = written(&v);
    let canonical = fast::parse_canonical(&w).expect("pin's layout takes the byte comparison");
    let (streamed, true) = fast::parse(&w).expect("streamed") else {
        panic!("the streamed path checks the schedule too");
    };
    assert_eq!(canonical, streamed);
    assert_eq!(
        Declaration::parse(&w, DEFAULT_MAX_INPUT_BYTES)
            .expect("valid")
            .value()
            .clone(),
        parse(&v).value().clone()
    );

    let text = String::from_utf8(w.clone()).unwrap();
    let edits: [(&str, String); 7] = [
        // Other whitespace inside the schedule: valid, compared by the streaming path.
        (
            "compact entry",
            text.replacen("\"repetition\": 2,", "\"repetition\":2,", 1),
        ),
        // A key after the schedule.
        (
            "key after the schedule",
            text.trim_end()
                .strip_suffix('}')
                .map(|t| format!("{t},\n  \"title\": \"late\"\n}}\n"))
                .unwrap(),
        ),
        // A form feed (whitespace to `trim_ascii`, not to JSON) before or after the end.
        (
            "form feed before the end",
            text.trim_end()
                .strip_suffix('}')
                .map(|t| format!("{t}\u{c}}}\n"))
                .unwrap(),
        ),
        ("form feed after the end", format!("{text}\u{c}")),
        // Trailing data, a truncated document.
        ("trailing data", format!("{text}x")),
        (
            "truncated",
            text.trim_end().trim_end_matches('}').to_owned(),
        ),
        // One entry's repetition differs.
        (
            "wrong repetition",
            text.replacen("\"repetition\": 2,", "\"repetition\": 3,", 1),
        ),
    ];
    for (what, edited) in edits {
        assert!(
            fast::parse_canonical(edited.as_bytes()).is_none(),
            "{what}: not the canonical layout"
        );
        // Whatever path it takes, the result is the ordinary parse's.
        let ordinary = serde_json::from_str::<Value>(&edited)
            .map_err(|e| e.to_string())
            .map(|v| {
                Declaration::parse(&bytes(&v), DEFAULT_MAX_INPUT_BYTES).map(|d| d.value().cloned())
            });
        let got = Declaration::parse(edited.as_bytes(), DEFAULT_MAX_INPUT_BYTES)
            .map(|d| d.value().cloned());
        match ordinary {
            Ok(Ok(value)) => assert_eq!(got.expect(what), value, "{what}"),
            Ok(Err(_)) | Err(_) => assert!(got.is_err(), "{what}: refused"),
        }
    }

    // A string holding the key's text, and a `schedule` key deeper down, do not mislead the
    // scan: the first is accepted through the byte comparison, the second refused as before.
    let titled = with(|v| v["title"] = json!("see \"schedule\": [ below"));
    assert!(fast::parse_canonical(&written(&titled)).is_some());
    assert_eq!(
        Declaration::parse(&written(&titled), DEFAULT_MAX_INPUT_BYTES)
            .expect("valid")
            .value()
            .clone(),
        parse(&titled).value().clone()
    );
    let nested = with(|v| v["profile"]["schedule"] = json!([]));
    assert_reason!(reasons(&nested), field = "profile.schedule");
}

#[test]
fn decimals_are_zero_padded_to_their_width() {
    for (n, width, want) in [
        (0, 1, "0"),
        (7, 2, "07"),
        (12, 2, "12"),
        (5, 3, "005"),
        (1000, 2, "1000"),
    ] {
        let mut out = Vec::new();
        fast::push_decimal(&mut out, n, width);
        assert_eq!(String::from_utf8(out).unwrap(), want);
        assert_eq!(want, format!("{n:0width$}"));
    }
}

/// The declaration of an entry holding `parts` then `tasks`.
fn rebuild(parts: &[u8], tasks: &[u8]) -> Option<Declaration> {
    Declaration::from_cached_form([parts, tasks].concat(), 0..parts.len())
}

#[test]
fn a_declaration_is_rebuilt_from_its_cached_form_and_from_nothing_else() {
    let b = bytes(&declaration_value());
    let d = Declaration::parse(&b, DEFAULT_MAX_INPUT_BYTES).unwrap();
    let (parts, tasks) = d.cached_form().unwrap();
    let rebuilt = rebuild(&parts, &tasks).unwrap();
    assert_eq!(rebuilt.bytes(), None);
    assert_eq!(rebuilt.value(), None, "the document is not kept");
    assert_eq!(
        (&rebuilt.id, &rebuilt.sha256, rebuilt.schedule_len()),
        (&d.id, &d.sha256, d.schedule_len())
    );
    let parts_of = |d: &Declaration| {
        format!(
            "{:?}",
            (
                (
                    &d.source_revision,
                    d.repetitions,
                    &d.profile,
                    &d.policy_files
                ),
                (
                    &d.runner_tools,
                    &d.runtime_requirements,
                    &d.attempt_fields,
                    &d.tasks
                ),
                (d.schedule().collect::<Vec<_>>(), &d.attempt_keys),
            )
        )
    };
    assert_eq!(parts_of(&rebuilt), parts_of(&d));
    assert!(rebuilt.tasks == d.tasks);
    for e in d.schedule() {
        assert_eq!(rebuilt.schedule_position(&e.id), d.schedule_position(&e.id));
        assert_eq!(rebuilt.task_of(&e.id), d.task_of(&e.id));
    }
    // Parts that are not the form, a hash that is not one, task ids and ends that do not fit
    // the tasks' JSON, tasks' JSON of another length.
    let form: Value = serde_json::from_slice(&parts).unwrap();
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = form.clone();
        f(&mut v);
        v
    };
    let cases = [
        edit(&|v| drop(v.as_object_mut().unwrap().remove("task_ids"))),
        edit(&|v| v["task_ids"].as_array_mut().unwrap().truncate(1)),
        edit(&|v| v["task_ids"][1] = v["task_ids"][0].clone()),
        edit(&|v| v["task_ends"][0] = v["task_ends"][1].as_u64().map(|n| n + 1).into()),
        edit(&|v| v["parts"]["attempt_fields"] = Value::from(vec!["schedule_id"])),
        edit(&|v| v["parts"]["sha256"] = Value::from("abc")),
        Value::Null,
    ];
    for (i, parts) in cases.into_iter().enumerate() {
        let parts = serde_json::to_vec(&parts).unwrap();
        assert!(rebuild(&parts, &tasks).is_none(), "case {i}");
    }
    assert!(rebuild(&parts, b"{").is_none());
    assert!(rebuild(&parts, &tasks[1..]).is_none());
}

#[test]
fn a_cached_declaration_reads_each_task_when_first_asked_for() {
    let d = Declaration::parse(&bytes(&declaration_value()), DEFAULT_MAX_INPUT_BYTES).unwrap();
    let (parts, tasks) = d.cached_form().unwrap();
    // The second task's JSON made unreadable, its length kept: the other tasks, the ids and
    // the schedule still read; reading that task stops the command (only an entry changed by
    // hand with its checksum recomputed gets this far).
    let second = d.tasks.get(1).id.clone();
    let text = String::from_utf8(tasks.clone()).unwrap();
    let start = text
        .find(&format!(
            "{{\"id\":{}",
            serde_json::to_string(&second).unwrap()
        ))
        .unwrap();
    let mut broken = tasks.clone();
    broken[start] = b'[';
    let rebuilt = rebuild(&parts, &broken).unwrap();
    assert_eq!(
        rebuilt.tasks.ids().collect::<Vec<_>>(),
        d.tasks.ids().collect::<Vec<_>>()
    );
    assert_eq!(rebuilt.tasks.get(0), d.tasks.get(0));
    assert_eq!(rebuilt.schedule().count(), d.schedule().count());
    let read = std::panic::catch_unwind(|| rebuilt.task(&second).map(|t| t.kind));
    let payload = read.expect_err("a task that does not read back is never taken for another");
    let said = (payload.downcast_ref::<String>().cloned())
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(said.contains("not what this build wrote"), "{said}");
    // Another task's JSON in its place (valid JSON, ends fixed up): not taken for it either.
    let ends: Vec<usize> = serde_json::from_slice::<Value>(&parts).unwrap()["task_ends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let first = tasks[..ends[0]].to_vec();
    let mut swapped = first.clone();
    swapped.extend_from_slice(&first);
    swapped.extend_from_slice(&tasks[ends[1]..]);
    let mut form: Value = serde_json::from_slice(&parts).unwrap();
    let shift = ends[0] as i64 - (ends[1] - ends[0]) as i64;
    for (i, e) in ends.iter().enumerate().skip(1) {
        form["task_ends"][i] = Value::from((*e as i64 + shift) as u64);
    }
    let other = rebuild(&serde_json::to_vec(&form).unwrap(), &swapped).unwrap();
    assert_eq!(other.tasks.get(0), d.tasks.get(0));
    let read = std::panic::catch_unwind(|| other.task(&second).map(|t| t.kind));
    assert!(read.is_err(), "task 0's JSON is never read as {second}");
}

#[test]
fn commit_ids_and_hashes_are_lowercase_hex_of_their_lengths() {
    for len in [0, 1, 39, 40, 41, 63, 64, 65] {
        let id = "0a".repeat(40)[..len].to_owned();
        assert_eq!(is_full_commit(&id), len == 40 || len == 64, "{len}");
        assert_eq!(is_sha256(&id), len == 64, "{len}");
    }
    // Any other byte, at either end or inside, is refused.
    for b in (0..128u8).map(char::from) {
        let hex = b.is_ascii_digit() || ('a'..='f').contains(&b);
        for at in [0, 31, 63] {
            let mut id = vec!['f'; 64];
            id[at] = b;
            let id: String = id.into_iter().collect();
            assert_eq!(is_sha256(&id), hex, "{b:?} at {at}");
            assert_eq!(is_full_commit(&id[24..]), hex || at < 24, "{b:?} at {at}");
        }
    }
    assert!(!is_sha256(&format!("{}é", "a".repeat(62))));
}

// --- inspect tasks ---------------------------------------------------------------------------

mod inspect {
    use super::*;
    use crate::testutil::inspect_declaration_value;

    /// The live Inspect task of [`inspect_declaration_value`] is task 3.
    const T: usize = 3;

    fn iwith(f: impl FnOnce(&mut Value)) -> Value {
        let mut v = inspect_declaration_value();
        f(&mut v["tasks"][T]);
        v["schedule"] = schedule_for(&v);
        v
    }

    #[test]
    fn an_inspect_task_parses_with_its_block() {
        let d = parse(&inspect_declaration_value());
        let t = d.task("inspect/arith-add-1").unwrap();
        assert_eq!(t.kind, Kind::Inspect);
        let spec = t.inspect.as_ref().unwrap();
        assert_eq!(spec.task, "arith");
        assert_eq!(spec.sample_id, json!("add-1"));
        assert_eq!(spec.scorer, "match");
        assert_eq!(spec.pass, vec![json!("C")]);
        assert!(spec.task_args.is_empty());
        assert_eq!(t.limits.len(), 2);
        let t2 = d.task("inspect/arith-2").unwrap();
        assert_eq!(t2.inspect.as_ref().unwrap().sample_id, json!(2));
        assert_eq!(d.schedule_len(), 10);
    }

    #[test]
    fn task_args_default_to_empty_and_pass_takes_numbers() {
        let d = parse(&iwith(|t| {
            t["inspect"].as_object_mut().unwrap().remove("task_args");
            t["inspect"]["pass"] = json!([1, 0.5, "C"]);
        }));
        let spec = d
            .task("inspect/arith-add-1")
            .unwrap()
            .inspect
            .clone()
            .unwrap();
        assert!(spec.task_args.is_empty());
        assert_eq!(spec.pass.len(), 3);
        let d = parse(&iwith(|t| t["inspect"]["task_args"] = json!({"n": 3})));
        let spec = d
            .task("inspect/arith-add-1")
            .unwrap()
            .inspect
            .clone()
            .unwrap();
        assert_eq!(spec.task_args["n"], json!(3));
    }

    #[test]
    fn the_inspect_block_is_required_and_closed() {
        refused_once(
            &iwith(|t| {
                t.as_object_mut().unwrap().remove("inspect");
            }),
            "tasks[3] (inspect/arith-add-1).inspect",
            Some("missing"),
        );
        refused_once(
            &iwith(|t| t["inspect"] = json!("arith")),
            "tasks[3] (inspect/arith-add-1).inspect",
            Some("must be an object, not a string"),
        );
        refused_once(
            &iwith(|t| t["inspect"]["epochs"] = json!(2)),
            "tasks[3] (inspect/arith-add-1).inspect.epochs",
            Some("unknown key"),
        );
        for k in ["task", "sample_id", "scorer", "pass"] {
            refused_once(
                &iwith(|t| {
                    t["inspect"].as_object_mut().unwrap().remove(k);
                }),
                &format!("tasks[3] (inspect/arith-add-1).inspect.{k}"),
                Some("missing"),
            );
        }
        refused_once(
            &iwith(|t| t["inspect"]["task"] = json!("")),
            "tasks[3] (inspect/arith-add-1).inspect.task",
            Some("must not be empty"),
        );
        refused_once(
            &iwith(|t| t["inspect"]["scorer"] = json!(3)),
            "tasks[3] (inspect/arith-add-1).inspect.scorer",
            Some("must be a string, not an integer"),
        );
        refused_once(
            &iwith(|t| t["inspect"]["task_args"] = json!([])),
            "tasks[3] (inspect/arith-add-1).inspect.task_args",
            Some("must be an object, not a list"),
        );
    }

    #[test]
    fn an_arena_or_scenario_task_carries_no_inspect_block() {
        refused_once(
            &task_with(1, |t| t["inspect"] = json!({"task": "x"})),
            "tasks[1] (scenario/bugfix-iso-weeks).inspect",
            Some("unknown key"),
        );
    }

    #[test]
    fn sample_id_is_a_string_or_an_integer() {
        for ok in [json!("a/b c"), json!(0), json!(-3), json!(12345678901u64)] {
            parse(&iwith(|t| t["inspect"]["sample_id"] = ok.clone()));
        }
        for bad in [
            json!(""),
            json!(1.5),
            json!(null),
            json!(true),
            json!([1]),
            json!({"id": 1}),
        ] {
            let s = format!(
                "must be a non-empty string or an integer (the dataset sample's id), not {bad}"
            );
            refused_once(
                &iwith(|t| t["inspect"]["sample_id"] = bad.clone()),
                "tasks[3] (inspect/arith-add-1).inspect.sample_id",
                Some(&s),
            );
        }
    }

    #[test]
    fn pass_lists_strings_or_numbers_once() {
        for bad in [json!(null), json!(true), json!([1]), json!({})] {
            let s = format!("must be a string or a number (a score value), not {bad}");
            refused_once(
                &iwith(|t| t["inspect"]["pass"] = json!([bad.clone()])),
                "tasks[3] (inspect/arith-add-1).inspect.pass[0]",
                Some(&s),
            );
        }
        refused_once(
            &iwith(|t| t["inspect"]["pass"] = json!([])),
            "tasks[3] (inspect/arith-add-1).inspect.pass",
            Some("must list at least one score value that is a PASS"),
        );
        refused_once(
            &iwith(|t| t["inspect"]["pass"] = json!("C")),
            "tasks[3] (inspect/arith-add-1).inspect.pass",
            Some("must be a list of score values (strings or numbers), not a string"),
        );
        // Compared by value: 1 and 1.0 are the same score value.
        refused_once(
            &iwith(|t| t["inspect"]["pass"] = json!([1, 1.0])),
            "tasks[3] (inspect/arith-add-1).inspect.pass[1]",
            Some("1.0 is listed twice"),
        );
    }

    #[test]
    fn inspect_limits_are_at_least_one_of_five_and_nothing_else() {
        for (k, v) in [
            ("message_limit", json!(10)),
            ("token_limit", json!(5000)),
            ("time_limit", json!(1.5)),
            ("working_limit", json!(60)),
            ("cost_limit", json!(0.25)),
        ] {
            let d = parse(&iwith(|t| t["limits"] = json!({ k: v })));
            assert_eq!(
                d.task("inspect/arith-add-1")
                    .unwrap()
                    .limits
                    .keys()
                    .collect::<Vec<_>>(),
                vec![k]
            );
        }
        refused_once(&iwith(|t| t["limits"] = json!({})), "tasks[3] (inspect/arith-add-1).limits", Some("an inspect task declares at least one of message_limit, token_limit, time_limit, working_limit, cost_limit (spend is compared with them)"));
        refused_once(&iwith(|t| t["limits"]["harness_minutes"] = json!(5)), "tasks[3] (inspect/arith-add-1).limits.harness_minutes", Some("an inspect task declares only message_limit, token_limit, time_limit, working_limit, cost_limit (at least one)"));
        refused_once(
            &iwith(|t| t["limits"]["message_limit"] = json!(2.5)),
            "tasks[3] (inspect/arith-add-1).limits.message_limit",
            Some("must be a nonnegative integer (a count), not 2.5"),
        );
        refused_once(
            &iwith(|t| t["limits"]["token_limit"] = json!(-1)),
            "tasks[3] (inspect/arith-add-1).limits.token_limit",
            Some("must be a nonnegative integer (a count), not -1"),
        );
        refused_once(
            &iwith(|t| t["limits"]["time_limit"] = json!("60")),
            "tasks[3] (inspect/arith-add-1).limits.time_limit",
            Some("must be a finite nonnegative number, not \"60\""),
        );
        refused_once(
            &iwith(|t| t["limits"]["cost_limit"] = json!(-0.5)),
            "tasks[3] (inspect/arith-add-1).limits.cost_limit",
            Some("must be a finite nonnegative number, not -0.5"),
        );
        refused_once(
            &iwith(|t| {
                t.as_object_mut().unwrap().remove("limits");
            }),
            "tasks[3] (inspect/arith-add-1).limits",
            Some("missing: every task declares its limits (spend is compared with them)"),
        );
    }

    #[test]
    fn inspect_native_outcomes_are_closed() {
        parse(&iwith(|t| t["native_outcomes"] = json!(["PASS", "FAIL"])));
        for bad in ["STOPPED", "FALSE_COMPLETE", "RUNNING", "SKIPPED"] {
            let s = format!("{bad:?} has no portfolio outcome for an inspect task (allowed: PASS FAIL ERROR UNSCORED)");
            refused_once(
                &iwith(|t| t["native_outcomes"] = json!(["PASS", bad])),
                "tasks[3] (inspect/arith-add-1).native_outcomes",
                Some(&s),
            );
        }
        // UNSCORED is an Inspect outcome only.
        refused_once(&task_with(1, |t| t["native_outcomes"] = json!(["PASS", "UNSCORED"])), "tasks[1] (scenario/bugfix-iso-weeks).native_outcomes", Some("\"UNSCORED\" has no portfolio outcome for a scenario task (allowed: PASS FALSE_COMPLETE HONEST_BLOCKER ERROR SKIPPED NOT_EXERCISED RUNNING INTERRUPTED_UNGRADED PENDING_UNGRADED)"));
    }

    #[test]
    fn two_tasks_may_not_declare_the_same_sample() {
        let mut v = inspect_declaration_value();
        let mut t = v["tasks"][T].clone();
        t["id"] = json!("inspect/arith-again");
        v["tasks"].as_array_mut().unwrap().push(t.clone());
        v["schedule"] = schedule_for(&v);
        refused_once(&v, "tasks[5] (inspect/arith-again).inspect", Some("declares sample \"add-1\" of Inspect task \"arith\" as inspect/arith-add-1 does: a sample fills one task's rows"));
        // Another Inspect task, or the same id as an integer rather than a string, is another
        // sample.
        for (task, id) in [("arith-2", json!("add-1")), ("arith", json!(7))] {
            let mut v = inspect_declaration_value();
            let mut t2 = t.clone();
            t2["inspect"]["task"] = json!(task);
            t2["inspect"]["sample_id"] = id;
            v["tasks"].as_array_mut().unwrap().push(t2);
            v["schedule"] = schedule_for(&v);
            parse(&v);
        }
        let mut v = inspect_declaration_value();
        v["tasks"][4]["inspect"]["sample_id"] = json!("2");
        v["schedule"] = schedule_for(&v);
        parse(&v);
    }

    #[test]
    fn a_null_effort_is_for_inspect_declarations_alone() {
        // Only inspect tasks: a role run without a reasoning effort may say so.
        let mut v = inspect_declaration_value();
        let tasks: Vec<Value> = v["tasks"].as_array().unwrap()[3..].to_vec();
        v["tasks"] = Value::Array(tasks);
        v["profile"]["roles"]["builder"]["effort"] = json!(null);
        v["schedule"] = schedule_for(&v);
        let d = parse(&v);
        assert_eq!(d.profile.roles["builder"].effort, None);
        assert_eq!(
            d.profile.roles["reviewer"].effort.as_deref(),
            Some("medium")
        );
        // Beside an arena or scenario task, whose harness forwards an effort flag: refused.
        let mut v = inspect_declaration_value();
        v["profile"]["roles"]["builder"]["effort"] = json!(null);
        v["schedule"] = schedule_for(&v);
        refused_once(&v, "profile.roles.builder.effort", Some("null (no reasoning effort) is only for a declaration of inspect or harbor tasks; arena/sympy-matrix is an arena task, whose harness forwards an effort flag"));
        // An empty or non-string effort is refused as before.
        let mut v = inspect_declaration_value();
        v["profile"]["roles"]["builder"]["effort"] = json!(3);
        v["schedule"] = schedule_for(&v);
        refused_once(
            &v,
            "profile.roles.builder.effort",
            Some("must be a string, not an integer"),
        );
    }

    #[test]
    fn an_inspect_task_expects_completion() {
        refused_once(&iwith(|t| t["expects"] = json!("stop")), "tasks[3] (inspect/arith-add-1).expects", Some("an inspect task expects \"completion\": Inspect has no stop status, so a PASS could never be a stop"));
    }

    #[test]
    fn an_inspect_id_is_inspect_slash_name() {
        refused_once(&iwith(|t| t["id"] = json!("scenario/arith")), "tasks[3] (scenario/arith).id", Some("\"scenario/arith\" must be \"inspect/<name>\", the name matching [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 characters, no '..')"));
    }

    #[test]
    fn inspect_follows_definition_in_the_canonical_order() {
        let v = inspect_declaration_value();
        let bytes = canonical(&v);
        let text = std::str::from_utf8(&bytes).unwrap();
        let task = &text[text.find("\"inspect/arith-add-1\"").unwrap()..];
        let def = task.find("\"definition\"").unwrap();
        let insp = task.find("\"inspect\":").unwrap();
        let lim = task.find("\"limits\"").unwrap();
        assert!(def < insp && insp < lim, "{task}");
        // The canonical bytes parse (the fast paths agree with the ordinary path).
        let d = Declaration::parse(&bytes, DEFAULT_MAX_INPUT_BYTES).unwrap();
        assert_eq!(d.task("inspect/arith-add-1").unwrap().kind, Kind::Inspect);
        let slow = parse(&v);
        assert_eq!(d.tasks, slow.tasks);
    }

    #[test]
    fn the_cached_form_keeps_the_inspect_block() {
        let d = parse(&inspect_declaration_value());
        let (parts, doc) = d.cached_form().unwrap();
        let back = rebuild(&parts, &doc).unwrap();
        assert_eq!(back.tasks, d.tasks);
    }
}

mod harbor {
    use super::*;
    use crate::testutil::harbor_declaration_value;

    /// The live Harbor task of [`harbor_declaration_value`] is task 3.
    const T: usize = 3;

    fn hwith(f: impl FnOnce(&mut Value)) -> Value {
        let mut v = harbor_declaration_value();
        f(&mut v["tasks"][T]);
        v["schedule"] = schedule_for(&v);
        v
    }

    #[test]
    fn a_harbor_task_parses_with_its_block() {
        let d = parse(&harbor_declaration_value());
        let t = d.task("harbor/hello-file").unwrap();
        assert_eq!(t.kind, Kind::Harbor);
        let spec = t.harbor.as_ref().unwrap();
        assert_eq!(spec.task, "hello-file");
        assert_eq!(spec.digest, format!("sha256:{}", "7".repeat(64)));
        assert_eq!(spec.agent, "terminus-2");
        assert_eq!(spec.reward, "reward");
        assert_eq!(spec.pass_at_least, 1.0);
        assert_eq!(t.limits.len(), 3);
        assert!(t.inspect.is_none());
        assert_eq!(d.schedule_len(), 10);
        // A threshold may be any finite number, an integer too.
        let d = parse(&hwith(|t| t["harbor"]["pass_at_least"] = json!(0)));
        let spec = d.task("harbor/hello-file").unwrap().harbor.clone().unwrap();
        assert_eq!(spec.pass_at_least, 0.0);
    }

    #[test]
    fn the_harbor_block_is_required_and_closed() {
        refused_once(
            &hwith(|t| {
                t.as_object_mut().unwrap().remove("harbor");
            }),
            "tasks[3] (harbor/hello-file).harbor",
            Some("missing"),
        );
        refused_once(
            &hwith(|t| t["harbor"] = json!("hello-file")),
            "tasks[3] (harbor/hello-file).harbor",
            Some("must be an object, not a string"),
        );
        refused_once(
            &hwith(|t| t["harbor"]["n_attempts"] = json!(2)),
            "tasks[3] (harbor/hello-file).harbor.n_attempts",
            Some("unknown key"),
        );
        for k in ["task", "digest", "agent", "reward", "pass_at_least"] {
            refused_once(
                &hwith(|t| {
                    t["harbor"].as_object_mut().unwrap().remove(k);
                }),
                &format!("tasks[3] (harbor/hello-file).harbor.{k}"),
                Some("missing"),
            );
        }
        for k in ["task", "agent", "reward"] {
            refused_once(
                &hwith(|t| t["harbor"][k] = json!("")),
                &format!("tasks[3] (harbor/hello-file).harbor.{k}"),
                Some("must not be empty"),
            );
            refused_once(
                &hwith(|t| t["harbor"][k] = json!(3)),
                &format!("tasks[3] (harbor/hello-file).harbor.{k}"),
                Some("must be a string, not an integer"),
            );
        }
        // An inspect block on a harbor task (and a harbor block on an inspect one) is unknown.
        refused_once(
            &hwith(|t| t["inspect"] = json!({})),
            "tasks[3] (harbor/hello-file).inspect",
            Some("unknown key"),
        );
    }

    #[test]
    fn the_digest_is_harbors_form() {
        for bad in [
            json!("7".repeat(64)),
            json!(format!("sha256:{}", "7".repeat(63))),
            json!(format!("sha256:{}", "A".repeat(64))),
            json!(format!("sha512:{}", "7".repeat(64))),
        ] {
            let s = format!("{bad} is not Harbor's content digest, \"sha256:<64 lowercase hex digits>\" (a trial lock's task.digest)");
            refused_once(
                &hwith(|t| t["harbor"]["digest"] = bad.clone()),
                "tasks[3] (harbor/hello-file).harbor.digest",
                Some(&s),
            );
        }
    }

    #[test]
    fn the_threshold_is_a_finite_number() {
        for bad in [json!("1.0"), json!(null), json!(true), json!([1])] {
            let s = format!("must be a finite number (the least reward that passes), not {bad}");
            refused_once(
                &hwith(|t| t["harbor"]["pass_at_least"] = bad.clone()),
                "tasks[3] (harbor/hello-file).harbor.pass_at_least",
                Some(&s),
            );
        }
    }

    #[test]
    fn harbor_limits_are_at_least_one_of_five_and_nothing_else() {
        for (k, v) in [
            ("agent_seconds", json!(900)),
            ("verifier_seconds", json!(1.5)),
            ("cost_usd", json!(0.25)),
            ("input_tokens", json!(100000)),
            ("output_tokens", json!(5000)),
        ] {
            let d = parse(&hwith(|t| t["limits"] = json!({ k: v })));
            assert_eq!(
                d.task("harbor/hello-file")
                    .unwrap()
                    .limits
                    .keys()
                    .collect::<Vec<_>>(),
                vec![k]
            );
        }
        refused_once(&hwith(|t| t["limits"] = json!({})), "tasks[3] (harbor/hello-file).limits", Some("a harbor task declares at least one of agent_seconds, verifier_seconds, cost_usd, input_tokens, output_tokens (spend is compared with them)"));
        refused_once(&hwith(|t| t["limits"]["time_limit"] = json!(5)), "tasks[3] (harbor/hello-file).limits.time_limit", Some("a harbor task declares only agent_seconds, verifier_seconds, cost_usd, input_tokens, output_tokens (at least one)"));
        refused_once(
            &hwith(|t| t["limits"]["input_tokens"] = json!(2.5)),
            "tasks[3] (harbor/hello-file).limits.input_tokens",
            Some("must be a nonnegative integer (a count), not 2.5"),
        );
        refused_once(
            &hwith(|t| t["limits"]["output_tokens"] = json!(-1)),
            "tasks[3] (harbor/hello-file).limits.output_tokens",
            Some("must be a nonnegative integer (a count), not -1"),
        );
        refused_once(
            &hwith(|t| t["limits"]["agent_seconds"] = json!("60")),
            "tasks[3] (harbor/hello-file).limits.agent_seconds",
            Some("must be a finite nonnegative number, not \"60\""),
        );
        refused_once(
            &hwith(|t| {
                t.as_object_mut().unwrap().remove("limits");
            }),
            "tasks[3] (harbor/hello-file).limits",
            Some("missing: every task declares its limits (spend is compared with them)"),
        );
    }

    #[test]
    fn harbor_native_outcomes_are_closed() {
        parse(&hwith(|t| {
            t["native_outcomes"] = json!(["PASS", "UNSCORED"])
        }));
        for bad in ["STOPPED", "FALSE_COMPLETE", "RUNNING", "SKIPPED"] {
            let s = format!("{bad:?} has no portfolio outcome for a harbor task (allowed: PASS FAIL ERROR UNSCORED)");
            refused_once(
                &hwith(|t| t["native_outcomes"] = json!(["PASS", bad])),
                "tasks[3] (harbor/hello-file).native_outcomes",
                Some(&s),
            );
        }
    }

    #[test]
    fn two_tasks_may_not_declare_the_same_harbor_task() {
        let mut v = harbor_declaration_value();
        let mut t = v["tasks"][T].clone();
        t["id"] = json!("harbor/hello-again");
        v["tasks"].as_array_mut().unwrap().push(t.clone());
        v["schedule"] = schedule_for(&v);
        refused_once(&v, "tasks[5] (harbor/hello-again).harbor.task", Some("declares Harbor task \"hello-file\" as harbor/hello-file does: a trial fills the rows of the one task that names its task"));
        // Another Harbor task name is another task.
        let mut v = harbor_declaration_value();
        t["harbor"]["task"] = json!("hello-again");
        v["tasks"].as_array_mut().unwrap().push(t);
        v["schedule"] = schedule_for(&v);
        parse(&v);
    }

    #[test]
    fn a_null_effort_is_allowed_for_harbor_declarations_alone() {
        let mut v = harbor_declaration_value();
        let tasks: Vec<Value> = v["tasks"].as_array().unwrap()[3..].to_vec();
        v["tasks"] = Value::Array(tasks);
        v["profile"]["roles"]["builder"]["effort"] = json!(null);
        v["schedule"] = schedule_for(&v);
        assert_eq!(parse(&v).profile.roles["builder"].effort, None);
        let mut v = harbor_declaration_value();
        v["profile"]["roles"]["builder"]["effort"] = json!(null);
        v["schedule"] = schedule_for(&v);
        refused_once(&v, "profile.roles.builder.effort", Some("null (no reasoning effort) is only for a declaration of inspect or harbor tasks; arena/sympy-matrix is an arena task, whose harness forwards an effort flag"));
    }

    #[test]
    fn a_harbor_task_expects_completion_and_its_id_is_harbor_slash_name() {
        refused_once(&hwith(|t| t["expects"] = json!("stop")), "tasks[3] (harbor/hello-file).expects", Some("a harbor task expects \"completion\": a Harbor trial has no stop status, so a PASS could never be a stop"));
        refused_once(&hwith(|t| t["id"] = json!("inspect/hello-file")), "tasks[3] (inspect/hello-file).id", Some("\"inspect/hello-file\" must be \"harbor/<name>\", the name matching [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 characters, no '..')"));
        refused_once(
            &hwith(|t| t["kind"] = json!("harbour")),
            "tasks[3] (harbor/hello-file).kind",
            Some("must be \"arena\", \"scenario\", \"inspect\" or \"harbor\", not \"harbour\""),
        );
    }

    #[test]
    fn harbor_follows_definition_in_the_canonical_order() {
        let v = harbor_declaration_value();
        let bytes = canonical(&v);
        let text = std::str::from_utf8(&bytes).unwrap();
        let task = &text[text.find("\"harbor/hello-file\"").unwrap()..];
        let def = task.find("\"definition\"").unwrap();
        let h = task.find("\"harbor\":").unwrap();
        let lim = task.find("\"limits\"").unwrap();
        assert!(def < h && h < lim, "{task}");
        let d = Declaration::parse(&bytes, DEFAULT_MAX_INPUT_BYTES).unwrap();
        assert_eq!(d.task("harbor/hello-file").unwrap().kind, Kind::Harbor);
        assert_eq!(d.tasks, parse(&v).tasks);
        // And the cached form keeps the block.
        let (parts, doc) = d.cached_form().unwrap();
        assert_eq!(rebuild(&parts, &doc).unwrap().tasks, d.tasks);
    }

    #[test]
    fn harbors_error_policy_decides_which_exception_statuses_are_completions() {
        assert!(Kind::Harbor.is_completion_status("completed"));
        assert!(Kind::Harbor.is_completion_status("exception:AgentTimeoutError"));
        assert!(Kind::Harbor.is_completion_status("exception:AgentSafetyRefusalError"));
        for s in [
            "exception:VerifierTimeoutError",
            "exception:EnvironmentStartTimeoutError",
            "exception:",
            "exception:SomethingNew",
            "COMPLETED",
        ] {
            assert!(!Kind::Harbor.is_completion_status(s), "{s}");
        }
        assert_eq!(Kind::Harbor.stop_status(), None);
    }
}

/// A declaration large enough to be mapped (`json::STREAM_MAP_BYTES`) and its schedule given
/// back in several stretches: the first task copied under 60 ids, 999 repetitions each.
fn large_declaration() -> Vec<u8> {
    let v = with(|v| {
        let first = v["tasks"][0].clone();
        let id = first["id"].as_str().unwrap().to_owned();
        v["tasks"] = (0..60)
            .map(|k| {
                let mut t = first.clone();
                t["id"] = json!(format!("{id}-{k:02}"));
                t
            })
            .collect();
        v["repetitions"] = json!(999);
    });
    written(&v)
}

/// `report`'s reading of a declaration file (`read_released`: mapped, hashed and compared a
/// stretch at a time) gives the declaration `read` gives, without its bytes; a file it refuses
/// is refused with the same reasons.
#[test]
fn a_declaration_read_released_is_the_one_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("campaign.json");
    let w = large_declaration();
    assert!(
        w.len() as u64 > crate::json::STREAM_MAP_BYTES,
        "{}",
        w.len()
    );
    std::fs::write(&path, &w).unwrap();
    let read = Declaration::read(&path, DEFAULT_MAX_INPUT_BYTES).expect("valid");
    let released = Declaration::read_released(&path, DEFAULT_MAX_INPUT_BYTES).expect("valid");
    assert_eq!(released.sha256, read.sha256);
    assert_eq!(released.sha256, crate::sha256_hex(&w));
    assert_eq!(released.value(), read.value());
    assert_eq!(released.schedule_len(), 60 * 999);
    assert!(released.schedule().eq(read.schedule()));
    assert_eq!(read.bytes(), Some(&w[..]));
    assert_eq!(released.bytes(), None);

    // One entry changed near the end: the fast path gives up, the ordinary path names it.
    let text = String::from_utf8(w).unwrap();
    let at = text.rfind("\"repetition\": 998").unwrap();
    let bad = format!("{}\"repetition\": 997{}", &text[..at], &text[at + 17..]);
    std::fs::write(&path, &bad).unwrap();
    let r = refusal(Declaration::read(&path, DEFAULT_MAX_INPUT_BYTES));
    assert!(!r.is_empty());
    assert_eq!(
        refusal(Declaration::read_released(&path, DEFAULT_MAX_INPUT_BYTES)),
        r
    );
}

/// The schedule's comparison gives back what it has compared, in order, every byte of the
/// schedule once, in stretches of at least 4 MB but the last.
#[test]
fn a_canonical_schedule_is_given_back_as_compared() {
    let w = large_declaration();
    let given = std::cell::RefCell::new(Vec::new());
    let top = fast::parse_canonical_releasing(&w, &|r| given.borrow_mut().push(r));
    assert_eq!(top, fast::parse_canonical(&w));
    assert!(top.is_some());
    let given = given.into_inner();
    assert!(given.len() >= 2, "{given:?}");
    let schedule = w.windows(12).position(|x| x == b"\"schedule\": ").unwrap() + 12;
    assert_eq!(given[0].start, schedule);
    for pair in given.windows(2) {
        assert_eq!(pair[0].end, pair[1].start, "{given:?}");
    }
    let (last, full) = given.split_last().unwrap();
    assert!(full.iter().all(|r| r.len() >= 4 << 20), "{given:?}");
    assert_eq!(last.end, w.iter().rposition(|&b| b == b']').unwrap() + 1);
}
