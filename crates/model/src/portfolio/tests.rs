//! The portfolio rules of `ledger.md` from both sides: every outcome reached by a row built for
//! it, every gap of the closed vocabulary alone and in order, runtime and profile matching,
//! limit states, and the blockers each kind of row contributes.

use serde_json::{json, Value};

use super::*;
use crate::testutil::{
    attempted, checked, complete_pass, declaration, declaration_value, hex, matching_profile,
    matching_runtime, parse, set, stop_declaration, template_row, STOP_TASK,
};

const ARENA: &str = "arena/sympy-matrix/01";
const SCENARIO: &str = "scenario/bugfix-iso-weeks/01";
const FIXTURE: &str = "scenario/interrupted-reuse/01";
const STOP: &str = "scenario/ask-before-deleting/01";

/// Classify a row value (checked first, like every row the report sees).
#[track_caller]
fn classify_value(decl: &Declaration, row: &Value) -> Classification {
    classify(decl, &checked(decl, row))
}

/// A complete PASS of `id` changed by `fields`.
fn pass_with(decl: &Declaration, id: &str, fields: Value) -> Value {
    let mut row = complete_pass(decl, id);
    set(&mut row, fields);
    row
}

/// The gaps of a complete PASS of `id` changed by `fields`; asserts the outcome they imply.
#[track_caller]
fn gaps(decl: &Declaration, id: &str, fields: Value) -> Vec<String> {
    let c = classify_value(decl, &pass_with(decl, id, fields));
    if c.gaps.is_empty() {
        assert_ne!(c.outcome, Outcome::PassWithoutCompleteEvidence);
    } else {
        assert_eq!(c.outcome, Outcome::PassWithoutCompleteEvidence, "{c:?}");
    }
    c.gaps
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// --- outcomes -------------------------------------------------------------------------------

#[test]
fn every_outcome_is_reached_by_a_row_built_for_it() {
    let d = stop_declaration();
    let repaired = pass_with(
        &d,
        SCENARIO,
        json!({"interventions_decision_or_repair": [{"kind": "repair", "note": "fixed the import"}]}),
    );
    let cases: Vec<(Value, Outcome)> = vec![
        (complete_pass(&d, ARENA), Outcome::VerifiedDelivery),
        (complete_pass(&d, SCENARIO), Outcome::VerifiedDelivery),
        (complete_pass(&d, FIXTURE), Outcome::VerifiedDelivery),
        (repaired, Outcome::VerifiedAfterRepair),
        (complete_pass(&d, STOP), Outcome::AppropriateStop),
        (
            pass_with(&d, ARENA, json!({"evidence_refs": []})),
            Outcome::PassWithoutCompleteEvidence,
        ),
        (
            attempted(&d, SCENARIO, "FALSE_COMPLETE", Some("COMPLETE")),
            Outcome::FalseCompletion,
        ),
        (
            attempted(&d, ARENA, "STOPPED", Some("STOPPED")),
            Outcome::StoppedUnestablished,
        ),
        (
            attempted(&d, SCENARIO, "HONEST_BLOCKER", Some("BLOCKED")),
            Outcome::StoppedUnestablished,
        ),
        (
            attempted(&d, STOP, "HONEST_BLOCKER", Some("BLOCKED")),
            Outcome::StoppedUnestablished,
        ),
        (
            attempted(&d, ARENA, "FAIL", Some("COMPLETED")),
            Outcome::EndedWithoutCompleting,
        ),
        (attempted(&d, ARENA, "ERROR", Some("ERROR")), Outcome::Error),
        (attempted(&d, SCENARIO, "ERROR", None), Outcome::Error),
        (
            attempted(&d, ARENA, "SKIPPED", Some("SKIPPED")),
            Outcome::Skipped,
        ),
        (
            attempted(&d, SCENARIO, "NOT_EXERCISED", None),
            Outcome::Skipped,
        ),
        (
            attempted(&d, SCENARIO, "RUNNING", Some("RUNNING")),
            Outcome::Ungraded,
        ),
        (
            attempted(&d, SCENARIO, "INTERRUPTED_UNGRADED", None),
            Outcome::Ungraded,
        ),
        (
            attempted(&d, FIXTURE, "INTERRUPTED_UNGRADED", None),
            Outcome::Ungraded,
        ),
        (
            attempted(&d, SCENARIO, "PENDING_UNGRADED", Some("RUNNING")),
            Outcome::Ungraded,
        ),
        (template_row(&d, ARENA), Outcome::NotAttempted),
        (template_row(&d, FIXTURE), Outcome::NotAttempted),
    ];
    let mut reached = std::collections::BTreeSet::new();
    for (row, want) in &cases {
        let c = classify_value(&d, row);
        assert_eq!(c.outcome, *want, "{}", row);
        reached.insert(c.outcome);
    }
    assert_eq!(reached.len(), Outcome::ALL.len(), "every outcome reached");
}

#[test]
fn outcome_keys_and_labels_follow_the_table() {
    let keys: Vec<&str> = Outcome::ALL.iter().map(|o| o.key()).collect();
    assert_eq!(
        keys,
        [
            "verified_delivery",
            "verified_after_repair",
            "appropriate_stop",
            "pass_without_complete_evidence",
            "false_completion",
            "stopped_unestablished",
            "ended_without_completing",
            "error",
            "skipped",
            "ungraded",
            "not_attempted"
        ]
    );
    assert_eq!(
        Outcome::VerifiedAfterRepair.label(),
        "Verified delivery after a human repair"
    );
    assert_eq!(
        Outcome::PassWithoutCompleteEvidence.label(),
        "Native PASS without complete evidence"
    );
    assert_eq!(
        Outcome::StoppedUnestablished.label(),
        "Stopped (appropriateness not established)"
    );
    assert_eq!(
        Outcome::EndedWithoutCompleting.label(),
        "Ended without completing or stopping"
    );
    assert_eq!(Outcome::Skipped.label(), "Skipped or never reached");
}

#[test]
fn a_complete_pass_has_no_gap_deviation_or_blocker_and_is_within_every_limit() {
    let d = declaration();
    for id in [ARENA, SCENARIO, FIXTURE] {
        let c = classify_value(&d, &complete_pass(&d, id));
        assert_eq!(c.outcome, Outcome::VerifiedDelivery, "{id}");
        assert!(c.gaps.is_empty() && c.deviations.is_empty() && c.blockers.is_empty());
        let task = d.task_of(id).unwrap();
        assert_eq!(
            c.limits.keys().collect::<Vec<_>>(),
            task.limits.keys().collect::<Vec<_>>()
        );
        assert!(c.limits.values().all(|s| *s == LimitState::Within));
    }
}

#[test]
fn a_repair_turns_verified_into_verified_after_repair_and_a_decision_does_not() {
    let d = declaration();
    let decision = json!({"kind": "decision", "note": "gate plan-approval: approved"});
    let repair = json!({"kind": "repair", "note": "fixed a typo in the migration"});
    for id in [ARENA, SCENARIO, FIXTURE] {
        let c = classify_value(
            &d,
            &pass_with(
                &d,
                id,
                json!({"interventions_decision_or_repair": [decision.clone()]}),
            ),
        );
        assert_eq!(c.outcome, Outcome::VerifiedDelivery, "{id}");
        let c = classify_value(
            &d,
            &pass_with(
                &d,
                id,
                json!({"interventions_decision_or_repair": [decision.clone(), repair.clone()]}),
            ),
        );
        assert_eq!(c.outcome, Outcome::VerifiedAfterRepair, "{id}");
        assert!(c.gaps.is_empty() && c.blockers.is_empty());
    }
    // A repaired PASS with a gap is still without complete evidence.
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            ARENA,
            json!({"interventions_decision_or_repair": [repair], "evidence_refs": []}),
        ),
    );
    assert_eq!(c.outcome, Outcome::PassWithoutCompleteEvidence);
    assert_eq!(c.gaps, ["no evidence refs"]);
}

// --- stops ----------------------------------------------------------------------------------

#[test]
fn a_pass_at_the_stop_status_of_a_stop_task_is_an_appropriate_stop_with_or_without_checks() {
    let d = stop_declaration();
    for checks in [
        Value::Null,
        json!([]),
        json!([{"name": "asked before deleting", "ok": true}]),
    ] {
        let c = classify_value(&d, &pass_with(&d, STOP, json!({"oracle_checks": checks})));
        assert_eq!(c.outcome, Outcome::AppropriateStop, "{checks}");
        assert!(c.gaps.is_empty() && c.blockers.is_empty());
    }
    // A repair does not change an appropriate stop.
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            STOP,
            json!({"interventions_decision_or_repair": [{"kind": "repair", "note": "n"}]}),
        ),
    );
    assert_eq!(c.outcome, Outcome::AppropriateStop);
}

#[test]
fn an_arena_task_that_expects_a_stop_stops_appropriately_at_stopped() {
    let mut v = declaration_value();
    v["tasks"][0]["expects"] = json!("stop");
    let d = parse(&v);
    let c = classify_value(&d, &pass_with(&d, ARENA, json!({"oracle_checks": null})));
    assert_eq!(c.outcome, Outcome::AppropriateStop);
    // No upstream check is required at a stop.
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            ARENA,
            json!({"oracle_checks": [{"name": "test_a", "ok": true}]}),
        ),
    );
    assert_eq!(c.outcome, Outcome::AppropriateStop);
}

#[test]
fn a_stop_with_incomplete_evidence_names_its_gaps() {
    let d = stop_declaration();
    assert_eq!(
        gaps(
            &d,
            STOP,
            json!({"oracle_checks": null, "evidence_refs": [], "runtime_identity": null})
        ),
        ["no evidence refs", "runtime not recorded"]
    );
    assert_eq!(
        gaps(&d, STOP, json!({"source_revision": null})),
        ["revision null"]
    );
    assert_eq!(
        gaps(&d, STOP, json!({"option_deviations": ["added --yolo"]})),
        ["option deviations"]
    );
    assert_eq!(
        gaps(
            &d,
            STOP,
            json!({"spent_budget": {"harness_minutes": 31, "max_steps": 1}})
        ),
        ["over limit harness_minutes"]
    );
    assert!(STOP.starts_with(STOP_TASK));
}

// --- gaps, each alone -----------------------------------------------------------------------

#[test]
fn gap_no_oracle_checks() {
    let d = declaration();
    for id in [ARENA, SCENARIO, FIXTURE] {
        assert_eq!(
            gaps(&d, id, json!({"oracle_checks": null})),
            ["no oracle checks"],
            "{id}"
        );
        assert_eq!(
            gaps(&d, id, json!({"oracle_checks": []})),
            ["no oracle checks"],
            "{id}"
        );
    }
    // One passing check is enough for a scenario task (it declares no upstream checks).
    assert!(gaps(
        &d,
        SCENARIO,
        json!({"oracle_checks": [{"name": "anything", "ok": true}]})
    )
    .is_empty());
}

#[test]
fn gap_missing_upstream_check_names_each_missing_check() {
    let d = declaration();
    assert_eq!(
        gaps(
            &d,
            ARENA,
            json!({"oracle_checks": [{"name": "test_a", "ok": true}]})
        ),
        ["missing upstream check test_b"]
    );
    assert_eq!(
        gaps(
            &d,
            ARENA,
            json!({"oracle_checks": [{"name": "test_other", "ok": true}]})
        ),
        [
            "missing upstream check test_a",
            "missing upstream check test_b"
        ]
    );
    // Every upstream check present, in any order, plus others: complete.
    assert!(gaps(
        &d,
        ARENA,
        json!({"oracle_checks": [
            {"name": "test_extra", "ok": true},
            {"name": "test_b", "ok": true},
            {"name": "test_a", "ok": true}
        ]})
    )
    .is_empty());
}

#[test]
fn gap_no_evidence_refs() {
    let d = declaration();
    for id in [ARENA, SCENARIO, FIXTURE] {
        assert_eq!(
            gaps(&d, id, json!({"evidence_refs": []})),
            ["no evidence refs"]
        );
    }
}

#[test]
fn gap_revision_null_and_revision_differs() {
    let d = declaration();
    for id in [ARENA, SCENARIO, FIXTURE] {
        assert_eq!(
            gaps(&d, id, json!({"source_revision": null})),
            ["revision null"]
        );
        assert_eq!(
            gaps(&d, id, json!({"source_revision": hex('d', 40)})),
            ["revision differs"]
        );
        assert_eq!(
            gaps(&d, id, json!({"source_revision": hex('c', 64)})),
            ["revision differs"]
        );
    }
}

#[test]
fn gap_runtime_not_recorded_without_identity_or_freeze() {
    let d = declaration();
    let mut no_deps = matching_runtime();
    no_deps.as_object_mut().unwrap().remove("dependencies");
    let with_deps = |deps: Value| {
        let mut r = matching_runtime();
        r["dependencies"] = deps;
        r
    };
    for runtime in [
        Value::Null,
        no_deps,
        with_deps(json!([])),
        with_deps(json!({"sha256": ""})),
    ] {
        for id in [ARENA, SCENARIO, FIXTURE] {
            assert_eq!(
                gaps(&d, id, json!({"runtime_identity": runtime.clone()})),
                ["runtime not recorded"],
                "{id} {runtime}"
            );
        }
    }
    // A freeze given as an object with a sha256 is recorded.
    assert!(gaps(
        &d,
        ARENA,
        json!({"runtime_identity": with_deps(json!({"sha256": hex('7', 64)}))})
    )
    .is_empty());
    // A freeze that does not match the declared keys still differs (it is recorded).
    let mut other = with_deps(json!(["x==1"]));
    other["python"] = json!("3.11.0");
    assert_eq!(
        gaps(&d, ARENA, json!({"runtime_identity": other})),
        ["runtime differs"]
    );
}

#[test]
fn gap_runtime_differs_on_every_declared_key_packages_included() {
    let d = declaration();
    let changed = |f: &dyn Fn(&mut Value)| {
        let mut r = matching_runtime();
        f(&mut r);
        r
    };
    let differing = [
        changed(&|r| r["python"] = json!("3.12.8")),
        changed(&|r| r["psutil"] = json!("6.0.0")),
        changed(&|r| r["native_provider"] = json!("acme 1.3")),
        changed(&|r| {
            r.as_object_mut().unwrap().remove("native_provider");
        }),
        changed(&|r| r["packages"]["numpy"] = json!("2.0.0")),
        changed(&|r| r["packages"] = json!({"scipy": "1.0"})),
        changed(&|r| r["packages"] = json!({})),
        changed(&|r| {
            r.as_object_mut().unwrap().remove("packages");
        }),
        changed(&|r| r["packages"] = json!(["numpy==2.1.0"])),
        changed(&|r| r["python"] = json!(null)),
    ];
    for runtime in differing {
        for id in [ARENA, SCENARIO, FIXTURE] {
            assert_eq!(
                gaps(&d, id, json!({"runtime_identity": runtime.clone()})),
                ["runtime differs"],
                "{id} {runtime}"
            );
        }
    }
}

#[test]
fn runtime_keys_and_packages_the_declaration_does_not_name_are_ignored() {
    let d = declaration();
    let mut r = matching_runtime();
    r["os"] = json!("linux 6.1");
    r["packages"]["scipy"] = json!("1.14.0");
    assert!(gaps(&d, ARENA, json!({"runtime_identity": r})).is_empty());
    // A declaration without packages ignores the row's packages altogether.
    let mut v = declaration_value();
    v["runtime_requirements"]
        .as_object_mut()
        .unwrap()
        .remove("packages");
    let d = parse(&v);
    let mut r = matching_runtime();
    r["packages"] = json!({"numpy": "1.0"});
    assert!(gaps(&d, SCENARIO, json!({"runtime_identity": r})).is_empty());
}

#[test]
fn gap_profile_differs_for_live_rows() {
    let d = declaration();
    let changed = |f: &dyn Fn(&mut Value)| {
        let mut p = matching_profile();
        f(&mut p);
        p
    };
    let differing = [
        Value::Null,
        changed(&|p| p["provider"] = json!("other")),
        changed(&|p| p["provider"] = json!(null)),
        changed(&|p| p["roles"]["builder"]["model"] = json!("m-small")),
        changed(&|p| p["roles"]["reviewer"]["effort"] = json!("high")),
        changed(&|p| p["roles"]["reviewer"]["effort"] = json!(null)),
        changed(&|p| {
            p["roles"].as_object_mut().unwrap().remove("reviewer");
        }),
        changed(&|p| p["roles"]["planner"] = json!({"model": "m-small", "effort": "medium"})),
        changed(&|p| p["roles"] = json!({})),
    ];
    for profile in differing {
        for id in [ARENA, SCENARIO] {
            assert_eq!(
                gaps(
                    &d,
                    id,
                    json!({"actual_models_and_efforts": profile.clone()})
                ),
                ["profile differs"],
                "{id} {profile}"
            );
        }
    }
}

#[test]
fn gap_option_deviations_for_live_rows() {
    let d = declaration();
    for id in [ARENA, SCENARIO] {
        assert_eq!(
            gaps(
                &d,
                id,
                json!({"option_deviations": ["missing --no-telemetry"]})
            ),
            ["option deviations"]
        );
    }
}

#[test]
fn fixture_rows_never_get_profile_or_option_gaps() {
    let d = declaration();
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            FIXTURE,
            json!({
                "actual_models_and_efforts": null,
                "option_deviations": ["added --fake", "--provider: declared acme, forwarded fake"]
            }),
        ),
    );
    assert_eq!(c.outcome, Outcome::VerifiedDelivery);
    assert!(c.gaps.is_empty() && c.deviations.is_empty() && c.blockers.is_empty());
    // Nor does any other fixture row (they still get revision and runtime deviations).
    let mut row = attempted(&d, FIXTURE, "ERROR", Some("ERROR"));
    set(
        &mut row,
        json!({"actual_models_and_efforts": {"provider": "fake", "roles": {}}, "option_deviations": ["added --fake"], "source_revision": null}),
    );
    let c = classify_value(&d, &row);
    assert_eq!(c.deviations, ["revision null"]);
    assert_eq!(c.blockers, ["revision null"]);
}

#[test]
fn gap_over_limit_names_each_limit_over_and_equal_is_within() {
    let d = declaration();
    // Exactly at every limit: within, no gap.
    let at_limit = json!({"spent_budget": {"cli_invocation_seconds": 3600, "oracle_seconds": 120.0, "max_iterations": 3}});
    assert!(gaps(&d, ARENA, at_limit).is_empty());
    assert_eq!(
        gaps(
            &d,
            ARENA,
            json!({"spent_budget": {"cli_invocation_seconds": 3600.001, "oracle_seconds": 120, "max_iterations": 3}})
        ),
        ["over limit cli_invocation_seconds"]
    );
    assert_eq!(
        gaps(
            &d,
            SCENARIO,
            json!({"spent_budget": {"harness_minutes": 91, "max_steps": 401}})
        ),
        ["over limit harness_minutes", "over limit max_steps"]
    );
    assert_eq!(
        gaps(
            &d,
            FIXTURE,
            json!({"spent_budget": {"harness_minutes": 5.5, "max_steps": 1}})
        ),
        ["over limit harness_minutes"]
    );
}

#[test]
fn unknown_spend_is_not_a_gap() {
    // "No declared limit is over": an unknown spend does not by itself leave the evidence
    // incomplete (it is counted as unknown in the section's limits).
    let d = declaration();
    let c = classify_value(&d, &pass_with(&d, SCENARIO, json!({"spent_budget": null})));
    assert_eq!(c.outcome, Outcome::VerifiedDelivery);
    assert!(c.limits.values().all(|s| *s == LimitState::Unknown));
}

#[test]
fn gaps_come_in_the_vocabulary_order() {
    let d = declaration();
    let mut profile = matching_profile();
    profile["provider"] = json!("other");
    assert_eq!(
        gaps(
            &d,
            ARENA,
            json!({
                "oracle_checks": [{"name": "test_b", "ok": true}],
                "evidence_refs": [],
                "source_revision": null,
                "runtime_identity": null,
                "actual_models_and_efforts": profile,
                "option_deviations": ["added --x"],
                "spent_budget": {"cli_invocation_seconds": 4000, "oracle_seconds": 121, "max_iterations": 3}
            })
        ),
        strings(&[
            "missing upstream check test_a",
            "no evidence refs",
            "revision null",
            "runtime not recorded",
            "profile differs",
            "option deviations",
            "over limit cli_invocation_seconds",
            "over limit oracle_seconds",
        ])
    );
    let mut runtime = matching_runtime();
    runtime["psutil"] = json!("5.0");
    assert_eq!(
        gaps(
            &d,
            SCENARIO,
            json!({
                "oracle_checks": null,
                "source_revision": hex('e', 40),
                "runtime_identity": runtime,
                "spent_budget": {"harness_minutes": 100, "max_steps": null}
            })
        ),
        strings(&[
            "no oracle checks",
            "revision differs",
            "runtime differs",
            "over limit harness_minutes",
        ])
    );
}

#[test]
fn only_a_pass_has_gaps() {
    let d = declaration();
    let mut row = attempted(&d, ARENA, "FAIL", Some("COMPLETED"));
    set(
        &mut row,
        json!({"evidence_refs": [], "source_revision": null}),
    );
    let c = classify_value(&d, &row);
    assert_eq!(c.outcome, Outcome::EndedWithoutCompleting);
    assert!(c.gaps.is_empty());
    assert_eq!(c.deviations, ["revision null"]);
}

// --- limits ---------------------------------------------------------------------------------

#[test]
fn limit_states_within_over_and_unknown() {
    let d = declaration();
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            ARENA,
            json!({"spent_budget": {"cli_invocation_seconds": 3600, "oracle_seconds": 120.5, "max_iterations": null}}),
        ),
    );
    assert_eq!(c.limits["cli_invocation_seconds"], LimitState::Within);
    assert_eq!(c.limits["oracle_seconds"], LimitState::Over);
    assert_eq!(c.limits["max_iterations"], LimitState::Unknown);
    // A missing key is unknown, never within.
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            SCENARIO,
            json!({"spent_budget": {"harness_minutes": 0}}),
        ),
    );
    assert_eq!(c.limits["harness_minutes"], LimitState::Within);
    assert_eq!(c.limits["max_steps"], LimitState::Unknown);
    // A null object: every limit unknown.
    let c = classify_value(&d, &pass_with(&d, SCENARIO, json!({"spent_budget": null})));
    assert_eq!(c.limits.len(), 2);
    assert!(c.limits.values().all(|s| *s == LimitState::Unknown));
    // A DEFERRED row has no limit states.
    let c = classify_value(&d, &template_row(&d, ARENA));
    assert!(c.limits.is_empty());
}

#[test]
fn limit_states_apply_to_every_attempted_row_not_only_passes() {
    let d = declaration();
    let mut row = attempted(&d, SCENARIO, "INTERRUPTED_UNGRADED", None);
    set(
        &mut row,
        json!({"spent_budget": {"harness_minutes": 95.25, "max_steps": null}}),
    );
    let c = classify_value(&d, &row);
    assert_eq!(c.limits["harness_minutes"], LimitState::Over);
    assert_eq!(c.limits["max_steps"], LimitState::Unknown);
}

#[test]
fn limit_states_serialise_as_lowercase_words() {
    assert_eq!(
        serde_json::to_value([LimitState::Within, LimitState::Over, LimitState::Unknown]).unwrap(),
        json!(["within", "over", "unknown"])
    );
}

// --- blockers -------------------------------------------------------------------------------

#[test]
fn blockers_of_every_kind_of_row() {
    let d = declaration();
    let blockers = |row: &Value| classify_value(&d, row).blockers;
    // Not attempted.
    assert_eq!(blockers(&template_row(&d, ARENA)), ["not attempted"]);
    assert_eq!(blockers(&template_row(&d, FIXTURE)), ["not attempted"]);
    // Ungraded, live and fixture.
    for outcome in ["RUNNING", "INTERRUPTED_UNGRADED", "PENDING_UNGRADED"] {
        assert_eq!(
            blockers(&attempted(&d, SCENARIO, outcome, None)),
            ["ungraded"]
        );
    }
    assert_eq!(
        blockers(&attempted(&d, FIXTURE, "INTERRUPTED_UNGRADED", None)),
        ["ungraded"]
    );
    // Judged non-PASS rows with complete evidence do not block.
    for (id, outcome) in [
        (SCENARIO, "FALSE_COMPLETE"),
        (SCENARIO, "HONEST_BLOCKER"),
        (ARENA, "STOPPED"),
        (ARENA, "FAIL"),
        (ARENA, "ERROR"),
        (ARENA, "SKIPPED"),
        (SCENARIO, "NOT_EXERCISED"),
        (FIXTURE, "ERROR"),
    ] {
        assert!(
            blockers(&attempted(&d, id, outcome, None)).is_empty(),
            "{id} {outcome}"
        );
    }
    // Deviations and overruns block on every kind of row, PASS or not.
    let mut ungraded = attempted(&d, SCENARIO, "INTERRUPTED_UNGRADED", None);
    set(
        &mut ungraded,
        json!({"runtime_identity": null, "actual_models_and_efforts": null}),
    );
    assert_eq!(
        blockers(&ungraded),
        ["ungraded", "runtime not recorded", "profile differs"]
    );
    let mut error = attempted(&d, ARENA, "ERROR", Some("ERROR"));
    set(
        &mut error,
        json!({
            "source_revision": hex('d', 40),
            "option_deviations": ["added --x"],
            "spent_budget": {"cli_invocation_seconds": 3601, "oracle_seconds": null, "max_iterations": 3}
        }),
    );
    assert_eq!(
        blockers(&error),
        [
            "revision differs",
            "option deviations",
            "over limit cli_invocation_seconds"
        ]
    );
    let mut fixture = attempted(&d, FIXTURE, "ERROR", Some("ERROR"));
    set(
        &mut fixture,
        json!({"spent_budget": {"harness_minutes": 6, "max_steps": 0}}),
    );
    assert_eq!(blockers(&fixture), ["over limit harness_minutes"]);
    let mut runtime = matching_runtime();
    runtime["packages"]["numpy"] = json!("1.0");
    assert_eq!(
        blockers(&pass_with(
            &d,
            SCENARIO,
            json!({"runtime_identity": runtime})
        )),
        ["runtime differs"]
    );
}

#[test]
fn evidence_gaps_of_a_pass_do_not_block_the_comparison() {
    // The blocker vocabulary has no oracle or evidence-reference entries: such a PASS is
    // judged (as a PASS without complete evidence) and compared as that.
    let d = declaration();
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            ARENA,
            json!({"oracle_checks": [{"name": "test_a", "ok": true}], "evidence_refs": []}),
        ),
    );
    assert_eq!(c.outcome, Outcome::PassWithoutCompleteEvidence);
    assert!(c.blockers.is_empty());
    assert!(c.deviations.is_empty());
    // Unknown spend does not block either.
    let c = classify_value(&d, &pass_with(&d, ARENA, json!({"spent_budget": null})));
    assert!(c.blockers.is_empty());
}

#[test]
fn fixture_profile_and_option_differences_do_not_block() {
    let d = declaration();
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            FIXTURE,
            json!({"actual_models_and_efforts": null, "option_deviations": ["added --fake"]}),
        ),
    );
    assert!(c.blockers.is_empty());
    // The same differences on a live row block.
    let c = classify_value(
        &d,
        &pass_with(
            &d,
            SCENARIO,
            json!({"actual_models_and_efforts": null, "option_deviations": ["added --fake"]}),
        ),
    );
    assert_eq!(c.blockers, ["profile differs", "option deviations"]);
}

#[test]
fn every_outcome_is_at_its_own_index() {
    for (i, o) in Outcome::ALL.iter().enumerate() {
        assert_eq!(*o as usize, i, "{o:?}");
    }
}

#[test]
fn limit_states_are_written_by_their_serialised_names() {
    for state in [LimitState::Within, LimitState::Over, LimitState::Unknown] {
        assert_eq!(serde_json::to_value(state).unwrap(), state.as_str());
    }
}

mod inspect_outcomes {
    use super::*;
    use crate::testutil::{attempted, checked, complete_pass, inspect_declaration_value, parse};

    const LIVE: &str = "inspect/arith-add-1/01";

    #[test]
    fn inspect_native_outcomes_land_in_their_portfolio_outcomes() {
        let d = parse(&inspect_declaration_value());
        for (native, status, outcome) in [
            ("FAIL", "completed", Outcome::EndedWithoutCompleting),
            ("ERROR", "error", Outcome::Error),
            ("UNSCORED", "completed", Outcome::Ungraded),
        ] {
            let row = checked(&d, &attempted(&d, LIVE, native, Some(status)));
            assert_eq!(classify(&d, &row).outcome, outcome, "{native}");
        }
        let row = checked(&d, &complete_pass(&d, LIVE));
        assert_eq!(classify(&d, &row).outcome, Outcome::VerifiedDelivery);
    }

    #[test]
    fn a_declared_null_effort_matches_a_run_without_one() {
        let mut v = inspect_declaration_value();
        let tasks: Vec<Value> = v["tasks"].as_array().unwrap()[3..].to_vec();
        v["tasks"] = Value::Array(tasks);
        v["profile"]["roles"]["builder"]["effort"] = json!(null);
        v["schedule"] = crate::testutil::schedule_for(&v);
        let d = parse(&v);
        let mut row = complete_pass(&d, LIVE);
        row["actual_models_and_efforts"]["roles"]["builder"]["effort"] = json!(null);
        assert_eq!(
            classify(&d, &checked(&d, &row)).outcome,
            Outcome::VerifiedDelivery
        );
        row["actual_models_and_efforts"]["roles"]["builder"]["effort"] = json!("high");
        let c = classify(&d, &checked(&d, &row));
        assert_eq!(c.gaps, vec!["profile differs".to_owned()]);
    }

    #[test]
    fn a_pass_at_a_limit_is_verified_within_the_limit_and_not_over_it() {
        let d = parse(&inspect_declaration_value());
        let mut v = complete_pass(&d, LIVE);
        v["native_status"] = json!("limit:message");
        v["spent_budget"] = json!({"message_limit": 10, "token_limit": 100});
        let c = classify(&d, &checked(&d, &v));
        assert_eq!(c.outcome, Outcome::VerifiedDelivery);
        v["spent_budget"] = json!({"message_limit": 11, "token_limit": 100});
        let c = classify(&d, &checked(&d, &v));
        assert_eq!(c.outcome, Outcome::PassWithoutCompleteEvidence);
        assert_eq!(c.gaps, vec!["over limit message_limit".to_owned()]);
    }
}
