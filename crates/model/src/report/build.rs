//! The report's aggregation: the rows' summaries added up per section (on two cores, summed
//! as one pass would), the blockers collected, and the quotable sentence of a section that is
//! not blocked.

use std::collections::BTreeMap;

use super::{
    Blocker, DeclarationRef, Deviation, LedgerState, OutcomeCount, Report, RowReport, RowSummary,
    Section,
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

/// Build the report from the summaries of a checked ledger's rows, in schedule order: the two
/// halves of the rows on two cores, each summary read once and moved into its report row.
/// `state` names the ledger state the summaries were read from.
pub fn build_from(
    decl: &Declaration,
    summaries: KeptRows<RowSummary>,
    state: LedgerState,
) -> Report {
    let mut rows = Vec::with_capacity(summaries.len());
    let (first, second) = summaries.halves();
    let (mut parts, second) = std::thread::scope(|s| {
        let second = (!second.is_empty()).then(|| {
            s.spawn(move || {
                let mut rows = Vec::with_capacity(second.len());
                (add_rows(second, &mut rows), rows)
            })
        });
        let parts = add_rows(first, &mut rows);
        let second = second.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        (parts, second)
    });
    if let Some((more, more_rows)) = second {
        for (part, more) in parts.iter_mut().zip(more) {
            part.append(more);
        }
        rows.extend(more_rows);
    }
    let mut sections = BTreeMap::new();
    for (evidence, part) in [Evidence::Live, Evidence::Fixture].into_iter().zip(parts) {
        let Part {
            mut s,
            outcomes,
            usd,
            secs,
        } = part;
        for (o, counted) in Outcome::ALL.iter().zip(outcomes) {
            s.outcomes.insert(o.key(), counted);
        }
        // Summed in row order from zero, as one pass over the rows would.
        s.cost.known_usd = usd.iter().fold(0.0, |sum, v| sum + v);
        s.elapsed.known_seconds = secs.iter().fold(0.0, |sum, v| sum + v);
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

/// A section built from some of the rows: its counts and lists, each outcome's count and rows
/// (by the outcome's place in `Outcome::ALL`), and the known costs and durations in row order,
/// summed only once every part is in, so that the totals are those of one pass, to the bit.
struct Part {
    s: Section,
    outcomes: Vec<OutcomeCount>,
    usd: Vec<f64>,
    secs: Vec<f64>,
}

impl Part {
    fn new() -> Part {
        Part {
            s: Section::empty(),
            outcomes: Outcome::ALL
                .iter()
                .map(|_| OutcomeCount::default())
                .collect(),
            usd: Vec::new(),
            secs: Vec::new(),
        }
    }

    /// Add the part built from the rows after this one's.
    fn append(&mut self, more: Part) {
        let (s, m) = (&mut self.s, more.s);
        s.scheduled += m.scheduled;
        s.attempted += m.attempted;
        s.decisions += m.decisions;
        s.repairs += m.repairs;
        s.decision_rows.extend(m.decision_rows);
        s.repair_rows.extend(m.repair_rows);
        s.cost.unpriced += m.cost.unpriced;
        s.elapsed.unknown += m.elapsed.unknown;
        s.limits.over += m.limits.over;
        s.limits.unknown += m.limits.unknown;
        s.limits.within += m.limits.within;
        s.deviations.extend(m.deviations);
        s.comparison.blockers.extend(m.comparison.blockers);
        for (o, more) in self.outcomes.iter_mut().zip(more.outcomes) {
            o.count += more.count;
            o.rows.extend(more.rows);
        }
        self.usd.extend(more.usd);
        self.secs.extend(more.secs);
    }
}

/// The live and fixture parts of `summaries`, each summary moved into its row of `rows`.
fn add_rows(summaries: KeptRows<RowSummary>, rows: &mut Vec<RowReport>) -> [Part; 2] {
    let mut parts = [Part::new(), Part::new()];
    for row in summaries {
        let part = &mut parts[match row.evidence {
            Evidence::Live => 0,
            Evidence::Fixture => 1,
        }];
        let s = &mut part.s;
        let c = &row.classification;
        let id = &row.schedule_id;
        s.scheduled += 1;
        let oc = &mut part.outcomes[c.outcome as usize];
        oc.count += 1;
        oc.rows.push(id.clone());
        for b in &c.blockers {
            s.comparison.blockers.push(Blocker {
                schedule_id: id.clone(),
                why: b.clone(),
            });
        }
        if !row.deferred {
            s.attempted += 1;
            let (decisions, repairs) = (row.decisions, row.repairs);
            s.decisions += decisions;
            s.repairs += repairs;
            if decisions > 0 {
                s.decision_rows.push(id.clone());
            }
            if repairs > 0 {
                s.repair_rows.push(id.clone());
            }
            match row.estimated_usd {
                Some(usd) => part.usd.push(usd),
                None => s.cost.unpriced += 1,
            }
            match row.elapsed_seconds {
                Some(secs) => part.secs.push(secs),
                None => s.elapsed.unknown += 1,
            }
            match row.limits {
                LimitState::Over => s.limits.over += 1,
                LimitState::Unknown => s.limits.unknown += 1,
                LimitState::Within => s.limits.within += 1,
            }
            for d in &c.deviations {
                s.deviations.push(Deviation {
                    schedule_id: id.clone(),
                    what: d.clone(),
                });
            }
        }
        let c = row.classification;
        rows.push(RowReport {
            schedule_id: row.schedule_id,
            section: row.evidence.as_str(),
            native_outcome: row.native_outcome,
            native_status: row.native_status,
            outcome: c.outcome.key(),
            gaps: c.gaps,
            limits: c.limits,
        });
    }
    parts
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
