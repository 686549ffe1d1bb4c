//! The report rules of `ledger.md` from both sides: sections never pooled, cost and elapsed
//! totals that stay unknown while anything is unknown, limits buckets, decisions and repairs,
//! deviations, the comparison and its sentence, the JSON contract's keys, and determinism. They
//! read the report through both its renderings, JSON (the model's) and text (this crate's), so
//! they live here, above both.

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io;

use crate::text::write_text;
use git_ledger_model::declaration::{Declaration, Evidence};
use git_ledger_model::ledger::{KeptRows, Ledger};
use git_ledger_model::portfolio::{LimitState, Outcome};
use git_ledger_model::report::json_writer::{json_str, row_json, BLOCK_ROWS, PARALLEL_JSON_ROWS};
use git_ledger_model::report::*;
use git_ledger_model::testutil::{
    attempted, complete_pass, declaration, declaration_value, hex, ledger_with, parse, set,
    stop_declaration,
};
use serde::Serialize;

const ARENA_1: &str = "arena/sympy-matrix/01";
const ARENA_2: &str = "arena/sympy-matrix/02";
const SCENARIO_1: &str = "scenario/bugfix-iso-weeks/01";
const SCENARIO_2: &str = "scenario/bugfix-iso-weeks/02";
const FIXTURE_1: &str = "scenario/interrupted-reuse/01";
const FIXTURE_2: &str = "scenario/interrupted-reuse/02";

fn with(mut row: Value, fields: Value) -> Value {
    set(&mut row, fields);
    row
}

/// The ledger state the tests' reports name (a file's).
fn state() -> LedgerState {
    LedgerState::file("0".repeat(64))
}

fn report_of(decl: &Declaration, rows: &[Value]) -> Report {
    build(decl, &ledger_with(decl, rows), state())
}

fn json_of(report: &Report) -> Value {
    let mut out = Vec::new();
    write_json(report, &mut out).unwrap();
    serde_json::from_slice(&out).expect("the JSON report parses")
}

fn text_of(report: &Report) -> String {
    let mut out = Vec::new();
    write_text(report, &mut out).unwrap();
    String::from_utf8(out).expect("UTF-8")
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set_of<'a>(v: &[&'a str]) -> BTreeSet<&'a str> {
    v.iter().copied().collect()
}

/// Every row of the declaration filled: all live rows verified, all fixture rows verified.
fn all_verified(decl: &Declaration) -> Vec<Value> {
    decl.schedule()
        .map(|e| complete_pass(decl, &e.id))
        .collect()
}

// --- sections -------------------------------------------------------------------------------

#[test]
fn live_and_fixture_are_separate_sections_never_pooled() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            complete_pass(&d, ARENA_1),
            complete_pass(&d, FIXTURE_1),
            attempted(&d, FIXTURE_2, "ERROR", Some("ERROR")),
        ],
    );
    let live = &r.sections["live"];
    let fixture = &r.sections["fixture"];
    assert_eq!((live.scheduled, live.attempted), (4, 1));
    assert_eq!((fixture.scheduled, fixture.attempted), (2, 2));
    assert_eq!(live.outcomes["verified_delivery"].rows, [ARENA_1]);
    assert_eq!(fixture.outcomes["verified_delivery"].rows, [FIXTURE_1]);
    assert_eq!(fixture.outcomes["error"].rows, [FIXTURE_2]);
    assert_eq!(live.outcomes["error"].count, 0);
    assert_eq!(
        live.outcomes["not_attempted"].rows,
        [ARENA_2, SCENARIO_1, SCENARIO_2]
    );
    assert_eq!(fixture.outcomes["not_attempted"].count, 0);
    assert_eq!(live.cost.known_usd, 1.5);
    assert_eq!(fixture.cost.known_usd, 3.0);
    assert_eq!(live.elapsed.known_seconds, 600.0);
    assert_eq!(fixture.elapsed.known_seconds, 1200.0);
    // Each row is in its own section only.
    for s in [live, fixture] {
        let total: usize = s.outcomes.values().map(|o| o.count).sum();
        assert_eq!(total, s.scheduled);
        let rows: usize = s.outcomes.values().map(|o| o.rows.len()).sum();
        assert_eq!(rows, s.scheduled);
    }
    let sections: Vec<_> = r.rows.iter().map(|x| x.section).collect();
    assert_eq!(
        sections,
        ["live", "live", "live", "live", "fixture", "fixture"]
    );
}

#[test]
fn both_sections_are_always_present_with_every_outcome_key() {
    // A declaration without a fixture task still reports an (empty) fixture section.
    let mut v = declaration_value();
    v["tasks"].as_array_mut().unwrap().remove(2);
    v["schedule"] = git_ledger_model::testutil::schedule_for(&v);
    let d = parse(&v);
    let r = report_of(&d, &[]);
    let j = json_of(&r);
    assert_eq!(keys(&j["sections"]), set_of(&["fixture", "live"]));
    let all: BTreeSet<&str> = Outcome::ALL.iter().map(|o| o.key()).collect();
    for name in ["live", "fixture"] {
        let s = &j["sections"][name];
        assert_eq!(keys(&s["outcomes"]), all, "{name}");
    }
    let f = &j["sections"]["fixture"];
    assert_eq!(f["scheduled"], 0);
    for o in Outcome::ALL {
        assert_eq!(f["outcomes"][o.key()], json!({"count": 0, "rows": []}));
    }
    assert_eq!(
        j["sections"]["live"]["outcomes"]["not_attempted"]["count"],
        4
    );
    assert_eq!(
        j["sections"]["live"]["outcomes"]["verified_delivery"],
        json!({"count": 0, "rows": []})
    );
}

// --- cost -----------------------------------------------------------------------------------

#[test]
fn cost_total_is_unknown_while_any_attempted_row_is_unpriced() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            complete_pass(&d, ARENA_1),
            with(
                attempted(&d, ARENA_2, "ERROR", Some("ERROR")),
                json!({"estimated_usd": null}),
            ),
            with(
                attempted(&d, SCENARIO_1, "FALSE_COMPLETE", Some("COMPLETE")),
                json!({"estimated_usd": 2.25}),
            ),
        ],
    );
    let c = &r.sections["live"].cost;
    assert_eq!(c.known_usd, 3.75);
    assert_eq!(c.unpriced, 1);
    assert_eq!(c.total_usd, None);
    assert_eq!(r.sections["live"].cost_per_verified_delivery_usd, None);
    let j = json_of(&r);
    assert_eq!(
        j["sections"]["live"]["cost"],
        json!({"known_usd": 3.75, "unpriced": 1, "total_usd": null})
    );
    assert_eq!(
        j["sections"]["live"]["cost_per_verified_delivery_usd"],
        Value::Null
    );
}

#[test]
fn cost_counts_failures_and_deferred_rows_are_not_unpriced() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            complete_pass(&d, ARENA_1),
            with(
                attempted(&d, SCENARIO_1, "ERROR", Some("ERROR")),
                json!({"estimated_usd": 0.5}),
            ),
        ],
    );
    // ARENA_2 and SCENARIO_2 are DEFERRED: they spent nothing and are no attempt.
    let c = &r.sections["live"].cost;
    assert_eq!((c.known_usd, c.unpriced, c.total_usd), (2.0, 0, Some(2.0)));
    // The template: nothing attempted, a known total of zero, no verified delivery.
    let r = report_of(&d, &[]);
    for s in r.sections.values() {
        assert_eq!(
            (s.cost.known_usd, s.cost.unpriced, s.cost.total_usd),
            (0.0, 0, Some(0.0))
        );
        assert_eq!(s.cost_per_verified_delivery_usd, None);
    }
}

#[test]
fn cost_per_verified_delivery_divides_the_total_by_verified_deliveries_without_repair() {
    let d = declaration();
    let repaired = with(
        complete_pass(&d, SCENARIO_1),
        json!({"interventions_decision_or_repair": [{"kind": "repair", "note": "n"}], "estimated_usd": 3.0}),
    );
    let r = report_of(
        &d,
        &[
            complete_pass(&d, ARENA_1),
            complete_pass(&d, ARENA_2),
            repaired,
            with(
                attempted(&d, SCENARIO_2, "FALSE_COMPLETE", Some("COMPLETE")),
                json!({"estimated_usd": 1.0}),
            ),
        ],
    );
    let s = &r.sections["live"];
    assert_eq!(s.outcomes["verified_delivery"].count, 2);
    assert_eq!(s.outcomes["verified_after_repair"].count, 1);
    assert_eq!(s.cost.total_usd, Some(7.0));
    assert_eq!(s.cost_per_verified_delivery_usd, Some(3.5));
    // Only repaired deliveries: none without repair, so null (the key stays).
    let r = report_of(
        &d,
        &[with(
            complete_pass(&d, SCENARIO_1),
            json!({"interventions_decision_or_repair": [{"kind": "repair", "note": "n"}]}),
        )],
    );
    assert_eq!(r.sections["live"].cost.total_usd, Some(1.5));
    assert_eq!(r.sections["live"].cost_per_verified_delivery_usd, None);
    assert!(json_of(&r)["sections"]["live"]
        .as_object()
        .unwrap()
        .contains_key("cost_per_verified_delivery_usd"));
    // A verified delivery but one unpriced attempt: unknown.
    let r = report_of(
        &d,
        &[
            complete_pass(&d, ARENA_1),
            with(complete_pass(&d, ARENA_2), json!({"estimated_usd": null})),
        ],
    );
    assert_eq!(r.sections["live"].cost_per_verified_delivery_usd, None);
}

// --- elapsed and limits ---------------------------------------------------------------------

#[test]
fn elapsed_is_the_known_sum_and_the_unknown_count_of_attempted_rows() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            with(
                complete_pass(&d, ARENA_1),
                json!({"elapsed_seconds": 100.5}),
            ),
            with(
                attempted(&d, ARENA_2, "ERROR", Some("ERROR")),
                json!({"elapsed_seconds": null}),
            ),
            with(
                attempted(&d, SCENARIO_1, "ERROR", None),
                json!({"elapsed_seconds": 20}),
            ),
        ],
    );
    let e = &r.sections["live"].elapsed;
    assert_eq!((e.known_seconds, e.unknown), (120.5, 1));
    let e = &r.sections["fixture"].elapsed;
    assert_eq!((e.known_seconds, e.unknown), (0.0, 0));
}

#[test]
fn limits_count_each_attempted_row_once_over_wins_over_unknown() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            // within every limit (equal is within)
            with(
                complete_pass(&d, ARENA_1),
                json!({"spent_budget": {"cli_invocation_seconds": 3600, "oracle_seconds": 120, "max_iterations": 3}}),
            ),
            // one over, one unknown: over
            with(
                attempted(&d, ARENA_2, "FAIL", Some("COMPLETED")),
                json!({"spent_budget": {"cli_invocation_seconds": 4000, "oracle_seconds": null, "max_iterations": 1}}),
            ),
            // one unknown (missing key): unknown
            with(
                attempted(&d, SCENARIO_1, "ERROR", None),
                json!({"spent_budget": {"harness_minutes": 1}}),
            ),
            // a null object: unknown
            with(
                attempted(&d, SCENARIO_2, "ERROR", None),
                json!({"spent_budget": null}),
            ),
        ],
    );
    let l = &r.sections["live"].limits;
    assert_eq!((l.within, l.over, l.unknown), (1, 1, 2));
    // DEFERRED rows are in no bucket.
    let l = &r.sections["fixture"].limits;
    assert_eq!((l.within, l.over, l.unknown), (0, 0, 0));
    let j = json_of(&r);
    assert_eq!(
        j["rows"][1]["limits"],
        json!({"cli_invocation_seconds": "over", "max_iterations": "within", "oracle_seconds": "unknown"})
    );
    assert_eq!(j["rows"][4]["limits"], json!({}));
}

// --- decisions, repairs, deviations ---------------------------------------------------------

#[test]
fn decisions_and_repairs_count_interventions_and_name_their_rows() {
    let d = declaration();
    let decision = json!({"kind": "decision", "note": "answer from scenario-script"});
    let repair = json!({"kind": "repair", "note": "fixed the test command"});
    let r = report_of(
        &d,
        &[
            with(
                complete_pass(&d, ARENA_1),
                json!({"interventions_decision_or_repair": [decision.clone(), decision.clone(), repair.clone()]}),
            ),
            with(
                attempted(&d, SCENARIO_2, "ERROR", None),
                json!({"interventions_decision_or_repair": [decision.clone()]}),
            ),
            with(
                complete_pass(&d, FIXTURE_1),
                json!({"interventions_decision_or_repair": [repair.clone()]}),
            ),
        ],
    );
    let live = &r.sections["live"];
    assert_eq!((live.decisions, live.repairs), (3, 1));
    assert_eq!(live.decision_rows, [ARENA_1, SCENARIO_2]);
    assert_eq!(live.repair_rows, [ARENA_1]);
    let fixture = &r.sections["fixture"];
    assert_eq!((fixture.decisions, fixture.repairs), (0, 1));
    assert!(fixture.decision_rows.is_empty());
    assert_eq!(fixture.repair_rows, [FIXTURE_1]);
    let r = report_of(&d, &[complete_pass(&d, ARENA_1)]);
    assert_eq!(
        (r.sections["live"].decisions, r.sections["live"].repairs),
        (0, 0)
    );
}

#[test]
fn deviations_list_each_deviating_row_with_what_in_schedule_order() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            with(
                complete_pass(&d, ARENA_1),
                json!({"source_revision": null, "option_deviations": ["added --x"]}),
            ),
            complete_pass(&d, ARENA_2),
            with(
                attempted(&d, SCENARIO_1, "ERROR", None),
                json!({"runtime_identity": null, "actual_models_and_efforts": null}),
            ),
            with(
                complete_pass(&d, FIXTURE_1),
                json!({"source_revision": hex('d', 40), "actual_models_and_efforts": null, "option_deviations": ["added --fake"]}),
            ),
        ],
    );
    let j = json_of(&r);
    assert_eq!(
        j["sections"]["live"]["deviations"],
        json!([
            {"schedule_id": ARENA_1, "what": "revision null"},
            {"schedule_id": ARENA_1, "what": "option deviations"},
            {"schedule_id": SCENARIO_1, "what": "runtime not recorded"},
            {"schedule_id": SCENARIO_1, "what": "profile differs"}
        ])
    );
    // Fixture rows: revision and runtime only, never profile or options.
    assert_eq!(
        j["sections"]["fixture"]["deviations"],
        json!([{"schedule_id": FIXTURE_1, "what": "revision differs"}])
    );
    // No deviation: an empty list.
    let j = json_of(&report_of(&d, &all_verified(&d)));
    assert_eq!(j["sections"]["live"]["deviations"], json!([]));
}

// --- the comparison -------------------------------------------------------------------------

#[test]
fn the_comparison_is_blocked_naming_every_blocking_row_and_why() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            complete_pass(&d, ARENA_1),
            with(
                attempted(&d, ARENA_2, "FAIL", Some("COMPLETED")),
                json!({"source_revision": null, "spent_budget": {"cli_invocation_seconds": 1, "oracle_seconds": 500, "max_iterations": 4}}),
            ),
            attempted(&d, SCENARIO_1, "PENDING_UNGRADED", None),
            with(
                complete_pass(&d, SCENARIO_2),
                json!({"evidence_refs": [], "actual_models_and_efforts": null}),
            ),
        ],
    );
    let j = json_of(&r);
    assert_eq!(
        j["sections"]["live"]["comparison"],
        json!({
            "blocked": true,
            // 5 reasons in 3 rows, as the text counts them (BLOCKED (3 rows, 5 reasons)).
            "blocked_by": {"reasons": 5, "rows": 3},
            "blockers": [
                {"schedule_id": ARENA_2, "why": "revision null"},
                {"schedule_id": ARENA_2, "why": "over limit max_iterations"},
                {"schedule_id": ARENA_2, "why": "over limit oracle_seconds"},
                {"schedule_id": SCENARIO_1, "why": "ungraded"},
                {"schedule_id": SCENARIO_2, "why": "profile differs"}
            ],
            "sentence": null
        })
    );
    // The fixture section, all DEFERRED, is blocked on its own.
    assert_eq!(
        j["sections"]["fixture"]["comparison"]["blockers"],
        json!([
            {"schedule_id": FIXTURE_1, "why": "not attempted"},
            {"schedule_id": FIXTURE_2, "why": "not attempted"}
        ])
    );
    let text = text_of(&r);
    assert!(text.contains("BLOCKED"), "{text}");
    for id in [ARENA_2, SCENARIO_1, SCENARIO_2, FIXTURE_1] {
        assert!(text.contains(id), "{text}");
    }
}

#[test]
fn a_section_blocks_or_not_independently_of_the_other() {
    let d = declaration();
    let r = report_of(
        &d,
        &[complete_pass(&d, FIXTURE_1), complete_pass(&d, FIXTURE_2)],
    );
    assert!(r.sections["live"].comparison.blocked);
    assert!(!r.sections["fixture"].comparison.blocked);
    assert!(r.sections["fixture"].comparison.sentence.is_some());
    assert!(r.sections["live"].comparison.sentence.is_none());
}

#[test]
fn not_blocked_gives_one_quotable_sentence_without_a_statistical_claim() {
    let d = declaration();
    let mut rows = all_verified(&d);
    rows[1] = attempted(&d, ARENA_2, "FAIL", Some("COMPLETED"));
    rows[2] = with(complete_pass(&d, SCENARIO_1), json!({"evidence_refs": []}));
    let r = report_of(&d, &rows);
    let live = &r.sections["live"];
    assert!(!live.comparison.blocked);
    assert!(live.comparison.blockers.is_empty());
    let s = live.comparison.sentence.as_deref().expect("a sentence");
    // Section, declaration id and hash prefix, counts per outcome, cost per verified delivery.
    assert!(s.contains("live"), "{s}");
    assert!(s.contains(&d.id), "{s}");
    assert!(s.contains(d.short_hash()), "{s}");
    assert!(s.contains("4 scheduled attempts"), "{s}");
    assert!(s.contains("verified delivery 2"), "{s}");
    assert!(s.contains("ended without completing or stopping 1"), "{s}");
    assert!(s.contains("native PASS without complete evidence 1"), "{s}");
    // 1.5 * 3 + 1.5 = 6.0 over 2 verified deliveries.
    assert!(s.contains("cost per verified delivery 3.00 USD"), "{s}");
    // No rate, percentage, estimate or ranking is claimed.
    assert!(s.contains("not a reliability estimate"), "{s}");
    for claim in [
        "%",
        "rate",
        "probab",
        "confiden",
        "better",
        "worse",
        "significan",
    ] {
        assert!(!s.to_lowercase().contains(claim), "{claim} in {s}");
    }
    // One sentence: one full stop, at the end.
    assert_eq!(s.matches(". ").count(), 0, "{s}");
    assert!(s.ends_with('.'));
    let text = text_of(&r);
    assert!(text.contains("not blocked"), "{text}");
    assert!(text.contains(s), "{text}");
    // Its cost is "not established" when unknown.
    let mut rows = all_verified(&d);
    rows[0] = with(complete_pass(&d, ARENA_1), json!({"estimated_usd": null}));
    let r = report_of(&d, &rows);
    let s = r.sections["live"].comparison.sentence.clone().unwrap();
    assert!(
        s.contains("cost per verified delivery not established"),
        "{s}"
    );
}

#[test]
fn an_appropriate_stop_section_is_not_blocked() {
    let d = stop_declaration();
    let r = report_of(&d, &all_verified(&d));
    let live = &r.sections["live"];
    assert_eq!(live.outcomes["appropriate_stop"].count, 2);
    assert_eq!(live.outcomes["verified_delivery"].count, 4);
    assert!(!live.comparison.blocked);
}

// --- the JSON contract ----------------------------------------------------------------------

#[test]
fn json_keys_are_exactly_the_contract_plus_documented_additions() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            with(complete_pass(&d, ARENA_1), json!({"source_revision": null})),
            complete_pass(&d, FIXTURE_1),
        ],
    );
    let j = json_of(&r);
    // `ledger` (docs/reference/workflow.md, rule 6), `admitted` and `refused` (whether the state
    // is admitted, and verify's first reason when not) are additions, documented in
    // docs/reference/report-json.md.
    assert_eq!(
        keys(&j),
        set_of(&[
            "admitted",
            "declaration",
            "ledger",
            "refused",
            "sections",
            "rows"
        ])
    );
    assert_eq!(
        j["declaration"],
        json!({"id": "reliability-slice-1", "sha256": d.sha256})
    );
    assert_eq!(
        j["ledger"],
        json!({"mode": "file", "sha256": "0".repeat(64)})
    );
    let at_ref = LedgerState::at_ref("c", Some("refs/ledgers/c"), &"ab".repeat(20), Some(3));
    assert_eq!(
        serde_json::to_value(&at_ref).unwrap(),
        json!({"citation": format!("c@{}", "ab".repeat(20)), "commit": "ab".repeat(20),
               "filled": 3, "mode": "ref", "ref": "refs/ledgers/c"})
    );
    for name in ["live", "fixture"] {
        let s = &j["sections"][name];
        assert_eq!(
            keys(s),
            set_of(&[
                // the contract
                "scheduled",
                "outcomes",
                "decisions",
                "repairs",
                "cost",
                "cost_per_verified_delivery_usd",
                "elapsed",
                "limits",
                "deviations",
                "comparison",
                // additions (documented in docs/reference/report-json.md)
                "attempted",
                "decision_rows",
                "repair_rows",
            ]),
            "{name}"
        );
        for o in s["outcomes"].as_object().unwrap().values() {
            assert_eq!(keys(o), set_of(&["count", "rows"]));
        }
        assert_eq!(
            keys(&s["cost"]),
            set_of(&["known_usd", "unpriced", "total_usd"])
        );
        assert_eq!(keys(&s["elapsed"]), set_of(&["known_seconds", "unknown"]));
        assert_eq!(keys(&s["limits"]), set_of(&["within", "over", "unknown"]));
        assert_eq!(
            keys(&s["comparison"]),
            set_of(&["blocked", "blocked_by", "blockers", "sentence"])
        );
        for b in s["comparison"]["blockers"].as_array().unwrap() {
            assert_eq!(keys(b), set_of(&["schedule_id", "why"]));
        }
        assert!(s["scheduled"].is_u64() && s["decisions"].is_u64() && s["repairs"].is_u64());
    }
    let dev = &j["sections"]["live"]["deviations"][0];
    assert_eq!(keys(dev), set_of(&["schedule_id", "what"]));
    assert_eq!(j["rows"].as_array().unwrap().len(), 6);
    for row in j["rows"].as_array().unwrap() {
        assert_eq!(
            keys(row),
            set_of(&[
                "schedule_id",
                "section",
                "outcome",
                "gaps",
                "limits",
                "native_outcome",
                "native_status",
            ])
        );
    }
    assert_eq!(
        j["rows"][0],
        json!({
            "schedule_id": ARENA_1,
            "section": "live",
            "native_outcome": "PASS",
            "native_status": "COMPLETED",
            "outcome": "pass_without_complete_evidence",
            "gaps": ["revision null"],
            "limits": {"cli_invocation_seconds": "within", "max_iterations": "within", "oracle_seconds": "within"}
        })
    );
    assert_eq!(
        j["rows"][1],
        json!({
            "schedule_id": ARENA_2,
            "section": "live",
            "native_outcome": "DEFERRED",
            "native_status": null,
            "outcome": "not_attempted",
            "gaps": [],
            "limits": {}
        })
    );
}

#[test]
fn json_vocabularies_are_closed() {
    let gaps = [
        "no oracle checks",
        "missing upstream check ",
        "no evidence refs",
        "revision null",
        "revision differs",
        "runtime not recorded",
        "runtime differs",
        "profile differs",
        "option deviations",
        "over limit ",
    ];
    let blockers = [
        "not attempted",
        "ungraded",
        "revision null",
        "revision differs",
        "runtime not recorded",
        "runtime differs",
        "profile differs",
        "option deviations",
        "over limit ",
    ];
    let d = declaration();
    let mut profile = git_ledger_model::testutil::matching_profile();
    profile["provider"] = json!("x");
    let r = report_of(
        &d,
        &[
            with(
                complete_pass(&d, ARENA_1),
                json!({"oracle_checks": [{"name": "test_a", "ok": true}], "evidence_refs": [], "source_revision": null, "runtime_identity": null, "actual_models_and_efforts": profile, "option_deviations": ["added --x"], "spent_budget": {"cli_invocation_seconds": 9999, "oracle_seconds": 1, "max_iterations": 1}}),
            ),
            with(
                complete_pass(&d, ARENA_2),
                json!({"oracle_checks": null, "source_revision": hex('d', 40), "runtime_identity": {"python": "x", "dependencies": ["a==1"]}}),
            ),
            attempted(&d, SCENARIO_1, "RUNNING", Some("RUNNING")),
        ],
    );
    let j = json_of(&r);
    let matches = |vocab: &[&str], s: &str| {
        vocab
            .iter()
            .any(|v| s == *v || (v.ends_with(' ') && s.starts_with(v) && s.len() > v.len()))
    };
    let mut seen = BTreeSet::new();
    for row in j["rows"].as_array().unwrap() {
        for g in row["gaps"].as_array().unwrap() {
            let g = g.as_str().unwrap();
            assert!(matches(&gaps, g), "gap {g:?}");
            seen.insert(g.to_owned());
        }
    }
    for s in j["sections"].as_object().unwrap().values() {
        for dv in s["deviations"].as_array().unwrap() {
            assert!(matches(&gaps, dv["what"].as_str().unwrap()), "{dv}");
        }
        for b in s["comparison"]["blockers"].as_array().unwrap() {
            assert!(matches(&blockers, b["why"].as_str().unwrap()), "{b}");
        }
    }
    assert_eq!(seen.len(), 10, "every gap seen: {seen:?}");
}

#[test]
fn json_is_canonical_sorted_keys_two_space_indent_trailing_newline() {
    let d = declaration();
    let r = report_of(&d, &[complete_pass(&d, ARENA_1)]);
    let mut out = Vec::new();
    write_json(&r, &mut out).unwrap();
    let parsed: Value = serde_json::from_slice(&out).unwrap();
    // serde_json's map is sorted: re-serialising the parse gives the same bytes only when
    // every object's keys were already sorted.
    assert_eq!(
        String::from_utf8(git_ledger_base::json::canonical(&parsed)).unwrap(),
        String::from_utf8(out.clone()).unwrap()
    );
    assert!(out.starts_with(b"{\n  \"admitted\": true,\n  \"declaration\": {\n    \"id\": "));
    assert!(out.ends_with(b"}\n"));
    // Amounts are floats, counts integers.
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\"known_usd\": 1.5,"), "{text}");
    assert!(text.contains("\"known_usd\": 0.0,"), "{text}");
    assert!(text.contains("\"scheduled\": 4\n"), "{text}");
}

#[test]
fn the_same_input_gives_byte_identical_output() {
    let d = declaration();
    let rows = [
        with(
            complete_pass(&d, ARENA_1),
            json!({"estimated_usd": 0.1, "elapsed_seconds": 0.2}),
        ),
        with(
            complete_pass(&d, ARENA_2),
            json!({"estimated_usd": 0.2, "elapsed_seconds": 0.1}),
        ),
        attempted(&d, SCENARIO_1, "INTERRUPTED_UNGRADED", None),
    ];
    let render = || {
        let r = report_of(&d, &rows);
        let mut j = Vec::new();
        write_json(&r, &mut j).unwrap();
        (j, text_of(&r))
    };
    let (j1, t1) = render();
    let (j2, t2) = render();
    assert_eq!(j1, j2);
    assert_eq!(t1, t2);
    assert!(!t1.contains('\x1b'), "no colour codes in the text");
}

// --- the text form --------------------------------------------------------------------------

#[test]
fn text_shows_every_section_outcome_label_and_row() {
    let d = declaration();
    let r = report_of(
        &d,
        &[
            with(
                complete_pass(&d, ARENA_1),
                json!({"evidence_refs": [], "elapsed_seconds": 3725.0}),
            ),
            with(
                attempted(&d, SCENARIO_1, "ERROR", Some("ERROR")),
                json!({"estimated_usd": null, "elapsed_seconds": null}),
            ),
        ],
    );
    let text = text_of(&r);
    assert!(text.starts_with("Campaign reliability-slice-1\n"), "{text}");
    assert!(text.contains(&d.sha256), "{text}");
    assert!(text.contains("Live section"), "{text}");
    assert!(text.contains("Fixture section"), "{text}");
    for o in Outcome::ALL {
        assert!(
            text.matches(o.label()).count() >= 2,
            "{} in both sections:\n{text}",
            o.label()
        );
    }
    for e in d.schedule() {
        assert!(text.contains(&e.id), "{}:\n{text}", e.id);
    }
    assert!(text.contains("no evidence refs"), "{text}");
    assert!(text.contains("1h 02m 05s"), "{text}");
    assert!(text.contains("1 unpriced"), "{text}");
    assert!(text.contains("unknown"), "{text}");
}

// --- the summary path (`report` file mode) ---------------------------------------------------

/// The report of `bytes` both ways: the whole ledger parsed and built (`build`), and each row
/// summarised as it is checked (`Ledger::parse_kept` + `build_from`); JSON and text bytes.
fn both_ways(decl: &Declaration, bytes: &[u8]) -> [(Vec<u8>, String); 2] {
    let whole = build(
        decl,
        &Ledger::parse(decl, bytes, u64::MAX).unwrap(),
        state(),
    );
    let kept = Ledger::parse_kept(decl, bytes, u64::MAX, &Summarise::new());
    let summarised = build_from(decl, kept.unwrap(), state());
    [whole, summarised].map(|r| {
        let mut json = Vec::new();
        write_json(&r, &mut json).unwrap();
        // The rows are written directly: the same bytes as the whole report through a `Value`.
        let value = serde_json::to_value(&r).unwrap();
        assert_eq!(
            String::from_utf8(json.clone()).unwrap(),
            String::from_utf8(git_ledger_base::json::canonical(&value)).unwrap()
        );
        (json, text_of(&r))
    })
}

/// A ledger with every kind of row: verified, repaired, failed, stopped, deferred, unpriced,
/// over a limit, deviating.
fn mixed(d: &Declaration) -> Vec<Value> {
    let repair = json!({"kind": "repair", "note": "fixed the test command"});
    let decision = json!({"kind": "decision", "note": "answer from scenario-script"});
    vec![
        with(
            complete_pass(d, ARENA_1),
            json!({"interventions_decision_or_repair": [decision, repair.clone()]}),
        ),
        with(
            attempted(d, ARENA_2, "ERROR", None),
            json!({"estimated_usd": null, "elapsed_seconds": null, "source_revision": hex('e', 40)}),
        ),
        with(
            complete_pass(d, SCENARIO_1),
            json!({"option_deviations": ["--fast"], "evidence_refs": []}),
        ),
        with(
            complete_pass(d, FIXTURE_2),
            json!({"interventions_decision_or_repair": [repair]}),
        ),
    ]
}

#[test]
fn json_rows_written_in_shares_are_the_canonical_bytes() {
    let d = declaration();
    let one = report_of(&d, &mixed(&d));
    for n in [
        0,
        1,
        2,
        PARALLEL_JSON_ROWS - 1,
        PARALLEL_JSON_ROWS * 2 + 3,
        PARALLEL_JSON_ROWS * 4,
        // More than one block of the owned writer.
        BLOCK_ROWS * 2 + 5,
    ] {
        let mut r = one.clone();
        let len = one.rows.len();
        let first: Vec<String> = one.rows.iter().map(|row| row.schedule_id).collect();
        let ids = ScheduleIds::listed((0..n).map(|i| format!("{}/{i}", first[i % len])));
        r.rows = Rows::new(&ids);
        for i in 0..n {
            r.rows.push(one.rows.shapes()[i % len].clone());
        }
        let mut json = Vec::new();
        write_json(&r, &mut json).unwrap();
        let value = serde_json::to_value(&r).unwrap();
        assert!(json == git_ledger_base::json::canonical(&value), "{n} rows");
    }
}

#[test]
fn the_summary_path_reports_byte_identically_on_a_mixed_ledger() {
    for d in [declaration(), stop_declaration()] {
        let rows: Vec<Value> = if d.id == declaration().id {
            mixed(&d)
        } else {
            all_verified(&d)
        };
        let bytes = ledger_with(&d, &rows).canonical(&d);
        let [whole, summarised] = both_ways(&d, &bytes);
        assert_eq!(whole.0, summarised.0, "JSON differs");
        assert_eq!(whole.1, summarised.1, "text differs");
        // The template too (every row deferred).
        let [whole, summarised] = both_ways(&d, &Ledger::template(&d).canonical(&d));
        assert_eq!(whole, summarised);
    }
}

#[test]
fn a_report_built_on_two_cores_is_the_one_built_in_one_pass() {
    // Every cut of the mixed ledger's rows into lists: the halves are built apart and joined
    // (counts added, lists and sums kept in row order), and must give the same bytes.
    let d = declaration();
    // Costs whose total depends on the order they are added in: 1e16 first, then amounts of
    // 1.0, each too small to move it (1e16 + 1 rounds back to 1e16; summed apart and then
    // added, they would: 1e16 + 2).
    let mut rows = mixed(&d);
    rows.push(complete_pass(&d, SCENARIO_2));
    let mut first = true;
    for row in &mut rows {
        if row["estimated_usd"].is_number() {
            row["estimated_usd"] = json!(if first { 1e16 } else { 1.0 });
            first = false;
        }
    }
    let bytes = ledger_with(&d, &rows).canonical(&d);
    let ledger = Ledger::parse(&d, &bytes, u64::MAX).unwrap();
    let summaries =
        || -> Vec<RowSummary> { ledger.rows.iter().map(|r| RowSummary::of(&d, r)).collect() };
    let one = build(&d, &ledger, state());
    let n = ledger.rows.len();
    for cut in 0..=n {
        for second_cut in cut..=n {
            let mut rows = summaries();
            let third = rows.split_off(second_cut);
            let second = rows.split_off(cut);
            let lists = vec![rows, second, third];
            let (first, rest) = KeptRows::in_lists(lists.clone()).halves();
            assert_eq!(first.len() + rest.len(), n);
            let split = build_from(&d, KeptRows::in_lists(lists), state());
            assert_eq!(json_of(&split), json_of(&one), "cuts {cut}, {second_cut}");
            assert_eq!(text_of(&split), text_of(&one), "cuts {cut}, {second_cut}");
        }
    }
}

#[test]
fn the_summary_path_reports_byte_identically_on_the_embedded_campaign() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let d = Declaration::read(&root.join("arena/campaign.json"), u64::MAX).unwrap();
    let bytes = std::fs::read(root.join("arena/examples/ledger.json")).unwrap();
    let [whole, summarised] = both_ways(&d, &bytes);
    assert_eq!(whole.0, summarised.0, "JSON differs");
    assert_eq!(whole.1, summarised.1, "text differs");
}

#[test]
fn the_summary_path_refuses_exactly_as_the_whole_parse() {
    let d = declaration();
    let good: Value = serde_json::from_slice(&ledger_with(&d, &mixed(&d)).canonical(&d)).unwrap();
    let faulty = |f: &dyn Fn(&mut Vec<Value>, &mut Value)| {
        let mut doc = good.clone();
        let mut rows = doc["rows"].as_array().unwrap().clone();
        f(&mut rows, &mut doc);
        if doc.get("rows").is_some() {
            doc["rows"] = Value::Array(rows);
        }
        serde_json::to_vec_pretty(&doc).unwrap()
    };
    let cases: Vec<Vec<u8>> = vec![
        // A row twice, two rows out of order, a row missing.
        faulty(&|rows, _| rows.push(rows[0].clone())),
        faulty(&|rows, _| rows.swap(0, 1)),
        faulty(&|rows, _| {
            rows.remove(2);
        }),
        // Two rows naming one record.
        faulty(&|rows, _| rows[1]["native_record"] = rows[0]["native_record"].clone()),
        // A refused row, a row that is not an object, a header naming another declaration.
        faulty(&|rows, _| rows[0]["estimated_usd"] = json!("cheap")),
        faulty(&|rows, _| rows[3] = json!(7)),
        faulty(&|_, doc| doc["declaration"]["sha256"] = json!(hex('0', 64))),
        faulty(&|_, doc| doc["format"] = json!("campaign-ledger/0")),
        faulty(&|_, doc| {
            doc.as_object_mut().unwrap().remove("rows");
        }),
        b"{\"format\": ".to_vec(),
        b"[]".to_vec(),
    ];
    for bytes in cases {
        let whole = Ledger::parse(&d, &bytes, u64::MAX).map(|_| ());
        let kept = Ledger::parse_kept(&d, &bytes, u64::MAX, &Summarise::new()).map(|_| ());
        let (whole, kept) = (whole.unwrap_err(), kept.unwrap_err());
        assert_eq!(whole.to_string(), kept.to_string());
        assert_eq!(format!("{whole:?}"), format!("{kept:?}"));
    }
}

#[test]
fn strings_are_written_as_serde_json_writes_them() {
    let samples = [
        "",
        "plain",
        "quote \" and backslash \\",
        "tab\tnewline\ncarriage\rnul\u{0}unit\u{1f}",
        "del \u{7f}, é, 𝄞, \u{2028}",
        "/slash",
    ];
    for s in samples {
        let mut out = Vec::new();
        json_str(&mut out, s);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(s).unwrap()
        );
    }
}

#[test]
fn a_row_is_written_as_the_pretty_printer_writes_it() {
    use serde_json::ser::Formatter;
    let mut limits = crate::portfolio::LimitStates::new();
    let rows = [
        (
            "scenario/a/01",
            Shape::shown(
                Evidence::Live,
                "PASS",
                None,
                Outcome::PassWithoutCompleteEvidence,
                vec!["no_oracle".into(), "odd \"gap\"\n".into()],
                limits.clone(),
            ),
        ),
        {
            limits.insert("max_steps".into(), LimitState::Over);
            limits.insert("harness_minutes".into(), LimitState::Unknown);
            (
                "arena/b/02",
                Shape::shown(
                    Evidence::Fixture,
                    "ERROR",
                    Some("crashed \\ hard"),
                    Outcome::Error,
                    vec![],
                    limits,
                ),
            )
        },
    ];
    for (id, shape) in &rows {
        let mut direct = Vec::new();
        row_json(&mut direct, id, shape);
        let row = shape.row(id.to_string());
        let mut pretty = Vec::new();
        let mut f = serde_json::ser::PrettyFormatter::new();
        f.begin_object(&mut io::sink()).unwrap();
        f.begin_array(&mut io::sink()).unwrap();
        // Through a `Value`, which sorts the keys, as the canonical writer does.
        serde_json::to_value(&row)
            .unwrap()
            .serialize(&mut serde_json::Serializer::with_formatter(&mut pretty, f))
            .unwrap();
        assert_eq!(
            String::from_utf8(direct).unwrap(),
            String::from_utf8(pretty).unwrap()
        );
    }
}
