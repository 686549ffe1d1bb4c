//! A hand-built report for the renderers' unit tests: a mix of outcomes, a blocked and an
//! unblocked section, and strings that need escaping in Markdown and HTML.

use std::collections::BTreeMap;

use crate::portfolio::{LimitState, LimitStates, Outcome};
use crate::report::*;

fn section(outcomes: &[(Outcome, &[&str])]) -> Section {
    let mut s = Section::empty();
    for (o, rows) in outcomes {
        let c = s.outcomes.get_mut(o.key()).unwrap();
        c.count = rows.len();
        c.rows = rows.iter().map(|r| r.to_string()).collect();
        s.scheduled += rows.len();
    }
    s.attempted = s.scheduled;
    s.cost.total_usd = Some(0.0);
    s
}

fn row(
    id: &str,
    section: &'static str,
    native: &str,
    outcome: Outcome,
    gaps: &[&str],
) -> RowReport {
    RowReport {
        schedule_id: id.to_owned(),
        section,
        native_outcome: native.to_owned().into(),
        native_status: None,
        outcome: outcome.key(),
        gaps: gaps.iter().map(|g| g.to_string()).collect(),
        limits: LimitStates::from([("max_steps".into(), LimitState::Within)]),
    }
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
    live.decision_rows = vec!["t/b".into()];
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
    live.deviations = vec![Deviation {
        schedule_id: "t/c_x".into(),
        what: "runtime not recorded".into(),
    }];
    live.comparison = Comparison {
        blocked: true,
        blockers: vec![
            Blocker {
                schedule_id: "t/c_x".into(),
                why: "runtime not recorded".into(),
            },
            Blocker {
                schedule_id: "t/e".into(),
                why: "not attempted".into(),
            },
            Blocker {
                schedule_id: "t/e".into(),
                why: "revision differs".into(),
            },
            Blocker {
                schedule_id: "t/f".into(),
                why: "not attempted".into(),
            },
            Blocker {
                schedule_id: "t/d".into(),
                why: "over limit max_steps".into(),
            },
        ],
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
        rows: vec![
            row("t/a|1", "live", "PASS", Outcome::VerifiedDelivery, &[]),
            row("t/b", "live", "PASS", Outcome::VerifiedDelivery, &[]),
            row(
                "t/c_x",
                "live",
                "PASS",
                Outcome::PassWithoutCompleteEvidence,
                &[
                    "missing upstream check tests/x.py::test_*a*|b",
                    "runtime not recorded",
                ],
            ),
            row(
                "t/d",
                "live",
                "FALSE_COMPLETE",
                Outcome::FalseCompletion,
                &[],
            ),
            row("t/e", "live", "DEFERRED", Outcome::NotAttempted, &[]),
            row("t/f", "live", "DEFERRED", Outcome::NotAttempted, &[]),
            row("fx/1", "fixture", "PASS", Outcome::VerifiedDelivery, &[]),
        ],
    }
}
