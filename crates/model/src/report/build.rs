//! The report's aggregation: the rows' summaries added up per section in one pass, in
//! schedule order (each row's id kept as its position, its shape shared with the rows like it),
//! the blockers collected, and the quotable sentence of a section that is not blocked.

use std::collections::BTreeMap;

use super::ids::position;
use super::{
    DeclarationRef, LedgerState, OutcomeCount, Report, RowSummary, Rows, ScheduleIds, Section,
};
use crate::declaration::{Declaration, Evidence};
use crate::ledger::{KeptRows, Ledger};
use crate::portfolio::{LimitState, Outcome};

/// Build the report of a checked ledger, whose state is `state`.
pub fn build(decl: &Declaration, ledger: &Ledger, state: LedgerState) -> Report {
    let summaries: Vec<RowSummary> = ledger
        .rows
        .iter()
        .map(|r| RowSummary::of(decl, r))
        .collect();
    build_from(decl, summaries.into(), state)
}

/// Build the report from the summaries of a checked ledger's rows, in schedule order (the
/// `p`-th at position `p`), each summary read once, its shape moved into its report row and
/// its list of summaries given back as it is read. `state` names the ledger state the
/// summaries were read from.
pub fn build_from(
    decl: &Declaration,
    summaries: KeptRows<RowSummary>,
    state: LedgerState,
) -> Report {
    let ids = ScheduleIds::of(decl);
    let mut rows = Rows::with_capacity(&ids, summaries.len());
    let mut parts = [Part::new(&ids), Part::new(&ids)];
    for (p, row) in summaries.into_iter().enumerate() {
        add_row(&mut parts, position(p), &row);
        rows.push(row.shape);
    }
    let mut sections = BTreeMap::new();
    for (evidence, part) in [Evidence::Live, Evidence::Fixture].into_iter().zip(parts) {
        let Part { mut s, outcomes } = part;
        for (o, counted) in Outcome::ALL.iter().zip(outcomes) {
            s.outcomes.insert(o.key(), counted);
        }
        if s.cost.unpriced == 0 {
            s.cost.total_usd = Some(s.cost.known_usd);
        }
        let verified = s.outcomes[Outcome::VerifiedDelivery.key()].count;
        s.cost_per_verified_delivery_usd = match s.cost.total_usd {
            Some(total) if verified > 0 => Some(total / verified as f64),
            _ => None,
        };
        s.comparison.blocked = !s.comparison.blockers.is_empty();
        if !s.comparison.blocked {
            s.comparison.sentence = Some(sentence(decl, evidence, &s));
        }
        sections.insert(evidence.as_str(), s);
    }
    Report {
        admitted: true,
        declaration: DeclarationRef {
            id: decl.id.clone(),
            sha256: decl.sha256.clone(),
        },
        ledger: state,
        refused: None,
        sections,
        rows,
    }
}

/// A section as its rows are added: its counts and lists, and each outcome's count and rows
/// (by the outcome's place in `Outcome::ALL`). The known costs and durations are summed in
/// row order from zero, as they are added.
struct Part {
    s: Section,
    outcomes: Vec<OutcomeCount>,
}

impl Part {
    fn new(ids: &ScheduleIds) -> Part {
        Part {
            s: Section::empty(ids),
            outcomes: Outcome::ALL
                .iter()
                .map(|_| OutcomeCount {
                    count: 0,
                    rows: super::Ids::new(ids),
                })
                .collect(),
        }
    }
}

/// Add the row at position `p` to its section's part.
fn add_row(parts: &mut [Part; 2], p: u32, row: &RowSummary) {
    let shape = &*row.shape;
    let part = &mut parts[match shape.evidence {
        Evidence::Live => 0,
        Evidence::Fixture => 1,
    }];
    let s = &mut part.s;
    let c = &shape.classification;
    s.scheduled += 1;
    let oc = &mut part.outcomes[c.outcome as usize];
    oc.count += 1;
    oc.rows.push(p);
    for b in &c.blockers {
        s.comparison.blockers.push(p, b);
    }
    if !shape.deferred {
        s.attempted += 1;
        let (decisions, repairs) = (shape.decisions, shape.repairs);
        s.decisions += decisions;
        s.repairs += repairs;
        if decisions > 0 {
            s.decision_rows.push(p);
        }
        if repairs > 0 {
            s.repair_rows.push(p);
        }
        if shape.priced {
            s.cost.known_usd += row.estimated_usd;
        } else {
            s.cost.unpriced += 1;
        }
        if shape.timed {
            s.elapsed.known_seconds += row.elapsed_seconds;
        } else {
            s.elapsed.unknown += 1;
        }
        match shape.limits {
            LimitState::Over => s.limits.over += 1,
            LimitState::Unknown => s.limits.unknown += 1,
            LimitState::Within => s.limits.within += 1,
        }
        for d in &c.deviations {
            s.deviations.push(p, d);
        }
    }
}

/// The quotable sentence of a section that is not blocked: one plain sentence with the
/// section, the declaration id and hash prefix, the count of each outcome that occurred and the
/// cost per verified delivery. It states counts only, never a rate, an estimate or a ranking.
fn sentence(decl: &Declaration, evidence: Evidence, s: &Section) -> String {
    let head = format!(
        "In the {} section of campaign {} (declaration sha256 {})",
        evidence.as_str(),
        decl.id,
        decl.short_hash()
    );
    let counts: Vec<String> = Outcome::ALL
        .iter()
        .filter(|o| s.outcomes[o.key()].count > 0)
        .map(|o| format!("{} {}", lower_first(o.label()), s.outcomes[o.key()].count))
        .collect();
    let attempts = if s.scheduled == 0 {
        "no attempt was scheduled".to_owned()
    } else {
        format!(
            "the {} scheduled attempt{} were classified as {}",
            s.scheduled,
            plural(s.scheduled),
            counts.join(", ")
        )
    };
    let cost = match s.cost_per_verified_delivery_usd {
        Some(c) => format!("cost per verified delivery {} USD", usd(c)),
        None => "cost per verified delivery not established".to_owned(),
    };
    format!(
        "{head}, {attempts}; {cost}; these are counts from one finite campaign, not a reliability estimate or a model ranking."
    )
}

/// A label with its first letter in lower case (`Native PASS …` → `native PASS …`).
fn lower_first(label: &str) -> String {
    let mut chars = label.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// An amount in US dollars, to the cent (the JSON keeps the full value).
fn usd(v: f64) -> String {
    format!("{v:.2}")
}
