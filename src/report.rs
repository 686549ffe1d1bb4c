//! The report: every row classified, live and fixture sections never pooled, and whether each
//! section's comparison is blocked. Built once as a serde structure; `--json` serialises it and
//! the text form renders the same data.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::declaration::{Declaration, Evidence};
use crate::ledger::Ledger;
use crate::portfolio::{classify, Classification, LimitState, Outcome};

/// The whole report (`--json` prints exactly this).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub declaration: DeclarationRef,
    pub sections: BTreeMap<&'static str, Section>,
    pub rows: Vec<RowReport>,
}

/// The declaration a report is about.
#[derive(Debug, Clone, Serialize)]
pub struct DeclarationRef {
    pub id: String,
    pub sha256: String,
}

/// One outcome's count and rows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OutcomeCount {
    pub count: usize,
    pub rows: Vec<String>,
}

/// Cost across every attempt of a section.
#[derive(Debug, Clone, Serialize)]
pub struct Cost {
    pub known_usd: f64,
    pub unpriced: usize,
    pub total_usd: Option<f64>,
}

/// Elapsed time across the attempted rows of a section.
#[derive(Debug, Clone, Serialize)]
pub struct Elapsed {
    pub known_seconds: f64,
    pub unknown: usize,
}

/// How many attempted rows are within every limit, over at least one, or of unknown spend.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Limits {
    pub within: usize,
    pub over: usize,
    pub unknown: usize,
}

/// A deviation of one row.
#[derive(Debug, Clone, Serialize)]
pub struct Deviation {
    pub schedule_id: String,
    pub what: String,
}

/// Why one row blocks the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Blocker {
    pub schedule_id: String,
    pub why: String,
}

/// Whether the section's attempts may be compared.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub blocked: bool,
    pub blockers: Vec<Blocker>,
    pub sentence: Option<String>,
}

/// One section (live or fixture).
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub scheduled: usize,
    pub attempted: usize,
    pub outcomes: BTreeMap<&'static str, OutcomeCount>,
    pub decisions: usize,
    pub repairs: usize,
    pub decision_rows: Vec<String>,
    pub repair_rows: Vec<String>,
    pub cost: Cost,
    pub cost_per_verified_delivery_usd: Option<f64>,
    pub elapsed: Elapsed,
    pub limits: Limits,
    pub deviations: Vec<Deviation>,
    pub comparison: Comparison,
}

/// One row's classification.
#[derive(Debug, Clone, Serialize)]
pub struct RowReport {
    pub schedule_id: String,
    pub section: &'static str,
    pub native_outcome: String,
    pub native_status: Option<String>,
    pub outcome: &'static str,
    pub gaps: Vec<String>,
    pub limits: BTreeMap<String, LimitState>,
}

/// Build the report of a checked ledger.
pub fn build(decl: &Declaration, ledger: &Ledger) -> Report {
    let mut sections = BTreeMap::new();
    let mut rows = Vec::with_capacity(ledger.rows.len());
    let classified: Vec<(Evidence, Classification)> = ledger
        .rows
        .iter()
        .map(|r| (r.evidence(), classify(decl, r)))
        .collect();
    for evidence in [Evidence::Live, Evidence::Fixture] {
        let mut s = Section {
            scheduled: 0,
            attempted: 0,
            outcomes: Outcome::ALL
                .iter()
                .map(|o| (o.key(), OutcomeCount::default()))
                .collect(),
            decisions: 0,
            repairs: 0,
            decision_rows: Vec::new(),
            repair_rows: Vec::new(),
            cost: Cost {
                known_usd: 0.0,
                unpriced: 0,
                total_usd: None,
            },
            cost_per_verified_delivery_usd: None,
            elapsed: Elapsed {
                known_seconds: 0.0,
                unknown: 0,
            },
            limits: Limits::default(),
            deviations: Vec::new(),
            comparison: Comparison {
                blocked: false,
                blockers: Vec::new(),
                sentence: None,
            },
        };
        for (row, (ev, c)) in ledger.rows.iter().zip(&classified) {
            if *ev != evidence {
                continue;
            }
            let id = row.schedule_id().to_owned();
            s.scheduled += 1;
            let oc = s
                .outcomes
                .get_mut(c.outcome.key())
                .expect("every outcome present");
            oc.count += 1;
            oc.rows.push(id.clone());
            for b in &c.blockers {
                s.comparison.blockers.push(Blocker {
                    schedule_id: id.clone(),
                    why: b.clone(),
                });
            }
            if row.is_deferred() {
                continue;
            }
            s.attempted += 1;
            let (mut decisions, mut repairs) = (0, 0);
            for (kind, _) in row.interventions() {
                match kind {
                    "decision" => decisions += 1,
                    _ => repairs += 1,
                }
            }
            s.decisions += decisions;
            s.repairs += repairs;
            if decisions > 0 {
                s.decision_rows.push(id.clone());
            }
            if repairs > 0 {
                s.repair_rows.push(id.clone());
            }
            match row.estimated_usd() {
                Some(usd) => s.cost.known_usd += usd,
                None => s.cost.unpriced += 1,
            }
            match row.elapsed_seconds() {
                Some(secs) => s.elapsed.known_seconds += secs,
                None => s.elapsed.unknown += 1,
            }
            if c.limits.values().any(|l| *l == LimitState::Over) {
                s.limits.over += 1;
            } else if c.limits.values().any(|l| *l == LimitState::Unknown) {
                s.limits.unknown += 1;
            } else {
                s.limits.within += 1;
            }
            for d in &c.deviations {
                s.deviations.push(Deviation {
                    schedule_id: id.clone(),
                    what: d.clone(),
                });
            }
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
    for (row, (ev, c)) in ledger.rows.iter().zip(classified) {
        rows.push(RowReport {
            schedule_id: row.schedule_id().to_owned(),
            section: ev.as_str(),
            native_outcome: row.native_outcome().to_owned(),
            native_status: row.native_status().map(str::to_owned),
            outcome: c.outcome.key(),
            gaps: c.gaps,
            limits: c.limits,
        });
    }
    Report {
        declaration: DeclarationRef {
            id: decl.id.clone(),
            sha256: decl.sha256.clone(),
        },
        sections,
        rows,
    }
}

/// The quotable sentence of a section that is not blocked. It states counts only: no
/// statistical reliability or model-effectiveness claim.
fn sentence(decl: &Declaration, evidence: Evidence, s: &Section) -> String {
    let counts: Vec<String> = Outcome::ALL
        .iter()
        .filter(|o| s.outcomes[o.key()].count > 0)
        .map(|o| format!("{} {}", s.outcomes[o.key()].count, o.label().to_lowercase()))
        .collect();
    let cost = match s.cost_per_verified_delivery_usd {
        Some(c) => format!("cost per verified delivery {} USD", usd(c)),
        None => "cost per verified delivery not established".to_owned(),
    };
    format!(
        "In the {} section of campaign {} (declaration sha256 {}), {} scheduled attempt{}: {}; {}. These are counts of one finite campaign, not a reliability estimate or a model ranking.",
        evidence.as_str(),
        decl.id,
        decl.short_hash(),
        s.scheduled,
        if s.scheduled == 1 { "" } else { "s" },
        if counts.is_empty() { "none".to_owned() } else { counts.join(", ") },
        cost
    )
}

fn usd(v: f64) -> String {
    format!("{v:.2}")
}

/// Render the report as JSON (the contract of `ledger.md`).
pub fn write_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(&crate::json::canonical(report))
}

/// Render the report as a readable text table.
pub fn write_text(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    write_text_color(report, out, false)
}

/// ANSI colour for text output (a terminal only; the caller decides).
fn paint(text: &str, sgr: &str, on: bool) -> String {
    if on {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// The colour of an outcome's label: green when verified or an appropriate stop, red for a
/// failure, yellow for what is open.
fn outcome_sgr(o: Outcome) -> &'static str {
    match crate::render::tone(o) {
        crate::render::Tone::Good => "32",
        crate::render::Tone::Bad => "31",
        crate::render::Tone::Open => "33",
    }
}

/// [`write_text`], with outcome labels, BLOCKED and headings coloured when `color` is true.
pub fn write_text_color(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    writeln!(
        out,
        "Campaign {} (declaration sha256 {})",
        report.declaration.id, report.declaration.sha256
    )?;
    for name in ["live", "fixture"] {
        let Some(s) = report.sections.get(name) else {
            continue;
        };
        writeln!(out)?;
        let heading = format!(
            "== {} section: {} scheduled, {} attempted ==",
            name, s.scheduled, s.attempted
        );
        writeln!(out, "{}", paint(&heading, "1", color))?;
        for o in Outcome::ALL {
            let c = &s.outcomes[o.key()];
            let text = format!("{:<44}", o.label());
            writeln!(
                out,
                "  {} {:>5}",
                paint(&text, outcome_sgr(o), color && c.count > 0),
                c.count
            )?;
        }
        writeln!(
            out,
            "  decisions {} ({}), repairs {} ({})",
            s.decisions,
            list(&s.decision_rows),
            s.repairs,
            list(&s.repair_rows)
        )?;
        let total = match s.cost.total_usd {
            Some(t) => format!("{} USD", usd(t)),
            None => format!(
                "unknown ({} unpriced attempt{})",
                s.cost.unpriced,
                if s.cost.unpriced == 1 { "" } else { "s" }
            ),
        };
        writeln!(
            out,
            "  cost: known {} USD, total {}",
            usd(s.cost.known_usd),
            total
        )?;
        let per = s
            .cost_per_verified_delivery_usd
            .map_or("n/a".to_owned(), |c| format!("{} USD", usd(c)));
        writeln!(out, "  cost per verified delivery: {per}")?;
        writeln!(
            out,
            "  elapsed: {:.1} s known, {} unknown",
            s.elapsed.known_seconds, s.elapsed.unknown
        )?;
        writeln!(
            out,
            "  limits: {} within, {} over, {} spend unknown",
            s.limits.within, s.limits.over, s.limits.unknown
        )?;
        if !s.deviations.is_empty() {
            writeln!(out, "  deviations:")?;
            for d in &s.deviations {
                writeln!(out, "    {}  {}", d.schedule_id, d.what)?;
            }
        }
        if s.comparison.blocked {
            writeln!(
                out,
                "  comparison: {} ({} reason{})",
                paint("BLOCKED", "1;31", color),
                s.comparison.blockers.len(),
                if s.comparison.blockers.len() == 1 {
                    ""
                } else {
                    "s"
                }
            )?;
            for b in &s.comparison.blockers {
                writeln!(out, "    {}  {}", b.schedule_id, b.why)?;
            }
        } else {
            writeln!(out, "  comparison: {}", paint("not blocked", "32", color))?;
            if let Some(sentence) = &s.comparison.sentence {
                writeln!(out, "  {sentence}")?;
            }
        }
    }
    writeln!(out)?;
    writeln!(out, "== rows ==")?;
    let width = report
        .rows
        .iter()
        .map(|r| r.schedule_id.len())
        .max()
        .unwrap_or(0);
    for r in &report.rows {
        let status = r
            .native_status
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let found = Outcome::ALL.iter().find(|o| o.key() == r.outcome);
        let outcome = found.map_or(r.outcome, |o| o.label());
        let outcome = match found {
            Some(o) => paint(outcome, outcome_sgr(*o), color),
            None => outcome.to_owned(),
        };
        write!(
            out,
            "  {:<width$}  {:<8} {:<28} {}",
            r.schedule_id,
            r.section,
            format!("{}{}", r.native_outcome, status),
            outcome
        )?;
        if !r.gaps.is_empty() {
            write!(out, "  [{}]", r.gaps.join("; "))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn list(rows: &[String]) -> String {
    if rows.is_empty() {
        "none".to_owned()
    } else {
        rows.join(", ")
    }
}
