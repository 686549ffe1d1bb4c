//! A hand-built report for the renderers' unit tests: a mix of outcomes, a blocked and an
//! unblocked section, and strings that need escaping in Markdown and HTML.

use std::collections::BTreeMap;

use std::sync::Arc;

use crate::portfolio::{LimitState, LimitStates, Outcome};
use crate::report::*;
use git_ledger_model::declaration::Evidence;

/// The fixture's schedule, in its rows' order.
const IDS: [&str; 7] = ["t/a|1", "t/b", "t/c_x", "t/d", "t/e", "t/f", "fx/1"];

fn ids(names: &[&str]) -> Ids {
    Ids::of(&schedule(), names.iter().copied()).expect("the fixture's ids are listed")
}

fn schedule() -> ScheduleIds {
    ScheduleIds::listed(IDS)
}

fn section(outcomes: &[(Outcome, &[&str])]) -> Section {
    let mut s = Section::empty(&schedule());
    for (o, rows) in outcomes {
        let c = s.outcomes.get_mut(o.key()).unwrap();
        c.count = rows.len();
        c.rows = ids(rows);
        s.scheduled += rows.len();
    }
    s.attempted = s.scheduled;
    s.cost.total_usd = Some(0.0);
    s
}

/// The shape of the next row (the fixture's rows are in the order of [`IDS`]).
fn row(section: Evidence, native: &str, outcome: Outcome, gaps: &[&str]) -> Arc<Shape> {
    Arc::new(Shape::shown(
        section,
        native,
        None,
        outcome,
        gaps.iter().map(|g| g.to_string()).collect(),
        LimitStates::from([("max_steps".into(), LimitState::Within)]),
    ))
}

/// Live: blocked (one not attempted, one over a limit); fixture: not blocked.
pub fn mixed() -> Report {
    let mut live = section(&[
        (Outcome::VerifiedDelivery, &["t/a|1", "t/b"]),
        (Outcome::PassWithoutCompleteEvidence, &["t/c_x"]),
        (Outcome::FalseCompletion, &["t/d"]),
        (Outcome::NotAttempted, &["t/e", "t/f"]),
    ]);
    live.attempted = 4;
    live.decisions = 1;
    live.decision_rows = ids(&["t/b"]);
    live.repairs = 0;
    live.cost = Cost {
        known_usd: 3.5,
        unpriced: 1,
        total_usd: None,
    };
    live.elapsed = Elapsed {
        known_seconds: 600.0,
        unknown: 1,
    };
    live.limits = Limits {
        within: 2,
        over: 1,
        unknown: 1,
    };
    live.deviations
        .push_id("t/c_x", "runtime not recorded")
        .unwrap();
    let mut blockers = Blockers::new(&schedule());
    for (id, why) in [
        ("t/c_x", "runtime not recorded"),
        ("t/e", "not attempted"),
        ("t/e", "revision differs"),
        ("t/f", "not attempted"),
        ("t/d", "over limit max_steps"),
    ] {
        blockers.push_id(id, why).unwrap();
    }
    live.comparison = Comparison {
        blocked: true,
        blockers,
        sentence: None,
    };
    let mut fixture = section(&[(Outcome::VerifiedDelivery, &["fx/1"])]);
    fixture.cost = Cost {
        known_usd: 1.25,
        unpriced: 0,
        total_usd: Some(1.25),
    };
    fixture.cost_per_verified_delivery_usd = Some(1.25);
    fixture.limits.within = 1;
    fixture.comparison.sentence = Some(
        "In the fixture section of campaign <x> & *y*, 1 scheduled attempt: 1 verified delivery."
            .into(),
    );
    Report {
        admitted: true,
        declaration: DeclarationRef {
            id: "camp|<b>_x_</b>".into(),
            sha256: "ab".repeat(32),
        },
        ledger: LedgerState::at_ref(
            "camp|<b>_x_</b>",
            Some("refs/ledgers/camp|<b>_x_</b>"),
            &"c0".repeat(20),
            Some(5),
        ),
        refused: None,
        sections: BTreeMap::from([("live", live), ("fixture", fixture)]),
        rows: {
            use Evidence::{Fixture, Live};
            let mut rows = Rows::new(&schedule());
            for shape in [
                row(Live, "PASS", Outcome::VerifiedDelivery, &[]),
                row(Live, "PASS", Outcome::VerifiedDelivery, &[]),
                row(
                    Live,
                    "PASS",
                    Outcome::PassWithoutCompleteEvidence,
                    &[
                        "missing upstream check tests/x.py::test_*a*|b",
                        "runtime not recorded",
                    ],
                ),
                row(Live, "FALSE_COMPLETE", Outcome::FalseCompletion, &[]),
                row(Live, "DEFERRED", Outcome::NotAttempted, &[]),
                row(Live, "DEFERRED", Outcome::NotAttempted, &[]),
                row(Fixture, "PASS", Outcome::VerifiedDelivery, &[]),
            ] {
                rows.push(shape);
            }
            rows
        },
    }
}
