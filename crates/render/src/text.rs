//! The report as text for a terminal (`git ledger report`'s default): a heading, then each
//! section with its outcome table, totals, deviations, comparison and rows, coloured only when
//! the caller asks.

use std::io::{self, Write};

use super::{tone, usd, Tone};
use crate::portfolio::Outcome;
use crate::report::{Ids, Report, RowReport, Section};

/// Render the report as text for a terminal: a heading, then each section on its own (outcome
/// table, totals, deviations, the comparison and its rows). Deterministic, no colour.
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
    match tone(o) {
        Tone::Good => "32",
        Tone::Bad => "31",
        Tone::Open => "33",
    }
}

/// [`write_text`], with outcome labels and the comparison coloured when `color` is true.
pub fn write_text_color(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    if let Some(banner) = super::not_admitted(report) {
        writeln!(out, "{banner}")?;
        writeln!(out)?;
    }
    writeln!(out, "Campaign {}", report.declaration.id)?;
    writeln!(out, "Declaration sha256 {}", report.declaration.sha256)?;
    for (name, value) in super::state_lines(&report.ledger) {
        writeln!(out, "{name} {value}")?;
    }
    for name in ["live", "fixture"] {
        let Some(s) = report.sections.get(name) else {
            continue;
        };
        let rows: Vec<RowReport> = report.rows.iter().filter(|r| r.section == name).collect();
        write_section(out, name, s, &rows, color)?;
    }
    Ok(())
}

/// Width of the label column (the longest outcome label).
const LABEL_WIDTH: usize = 42;

fn write_section(
    out: &mut dyn Write,
    name: &str,
    s: &Section,
    rows: &[RowReport],
    color: bool,
) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{} section: {} scheduled, {} attempted",
        if name == "live" { "Live" } else { "Fixture" },
        s.scheduled,
        s.attempted
    )?;
    writeln!(out)?;
    for o in Outcome::ALL {
        let count = s.outcomes[o.key()].count;
        let label = format!("{:<LABEL_WIDTH$}", o.label());
        writeln!(
            out,
            "  {} {count:>5}",
            paint(&label, outcome_sgr(o), color && count > 0)
        )?;
    }
    writeln!(out)?;
    let field = |out: &mut dyn Write, name: &str, value: String| {
        if value.is_empty() {
            writeln!(out, "  {name}:")
        } else {
            writeln!(out, "  {name:<28}{value}")
        }
    };
    field(out, "Decisions", with_rows(s.decisions, &s.decision_rows))?;
    field(out, "Repairs", with_rows(s.repairs, &s.repair_rows))?;
    let total = match s.cost.total_usd {
        Some(t) => format!("{} USD", usd(t)),
        None => format!(
            "unknown ({} unpriced attempt{})",
            s.cost.unpriced,
            plural(s.cost.unpriced)
        ),
    };
    field(
        out,
        "Cost",
        format!("{} USD known, total {total}", usd(s.cost.known_usd)),
    )?;
    field(
        out,
        "Cost per verified delivery",
        s.cost_per_verified_delivery_usd
            .map_or("not established".to_owned(), |c| format!("{} USD", usd(c))),
    )?;
    field(
        out,
        "Elapsed",
        format!(
            "{} known, {} attempt{} unknown",
            duration(s.elapsed.known_seconds),
            s.elapsed.unknown,
            plural(s.elapsed.unknown)
        ),
    )?;
    field(
        out,
        "Limits",
        format!(
            "{} within every limit, {} over at least one, {} spend unknown",
            s.limits.within, s.limits.over, s.limits.unknown
        ),
    )?;
    let width = rows.iter().map(|r| r.schedule_id.len()).max().unwrap_or(0);
    if s.deviations.is_empty() {
        field(out, "Deviations", "none".to_owned())?;
    } else {
        field(out, "Deviations", String::new())?;
        for (id, whats) in group(s.deviations.iter().map(|d| (d.schedule_id, d.what))) {
            writeln!(out, "    {id:<width$}  {}", whats.join("; "))?;
        }
    }
    if s.comparison.blocked {
        field(
            out,
            "Comparison",
            format!(
                "{} ({})",
                paint("BLOCKED", "1;31", color),
                super::blocked_counts(s)
            ),
        )?;
        for (id, whys) in group(s.comparison.blockers.iter().map(|b| (b.schedule_id, b.why))) {
            writeln!(out, "    {id:<width$}  {}", whys.join("; "))?;
        }
    } else {
        field(out, "Comparison", paint("not blocked", "32", color))?;
        if let Some(sentence) = &s.comparison.sentence {
            writeln!(out, "    {sentence}")?;
        }
    }
    if !rows.is_empty() {
        writeln!(out)?;
        writeln!(out, "  Rows:")?;
        let natives: Vec<String> = rows
            .iter()
            .map(|r| match &r.native_status {
                Some(st) => format!("{} ({st})", r.native_outcome),
                None => r.native_outcome.to_string(),
            })
            .collect();
        let native_width = natives.iter().map(String::len).max().unwrap_or(0);
        for (r, native) in rows.iter().zip(&natives) {
            let outcome = Outcome::ALL
                .iter()
                .find(|o| o.key() == r.outcome)
                .map_or(r.outcome, |o| o.label());
            write!(
                out,
                "    {:<width$}  {native:<native_width$}  {outcome}",
                r.schedule_id
            )?;
            if !r.gaps.is_empty() {
                write!(out, ": {}", r.gaps.join("; "))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// Consecutive entries of the same row, grouped (entries are in schedule order).
fn group<'a>(entries: impl Iterator<Item = (String, &'a str)>) -> Vec<(String, Vec<&'a str>)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    for (id, what) in entries {
        match out.last_mut() {
            Some((last, whats)) if *last == id => whats.push(what),
            _ => out.push((id, vec![what])),
        }
    }
    out
}

/// Interventions with their rows, e.g. `3 in 2 rows (a/01, a/02)`, or `0`.
fn with_rows(n: usize, rows: &Ids) -> String {
    if rows.is_empty() {
        super::interventions(n, rows)
    } else {
        format!("{} ({})", super::interventions(n, rows), rows.join(", "))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A duration for a person: the seconds as recorded, and hours, minutes and seconds beside
/// them from one minute on (`3725.0 s (1h 02m 05s)`).
fn duration(secs: f64) -> String {
    let whole = secs.round() as u64;
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60);
    if h > 0 {
        format!("{secs:.1} s ({h}h {m:02}m {s:02}s)")
    } else if m > 0 {
        format!("{secs:.1} s ({m}m {s:02}s)")
    } else {
        format!("{secs:.1} s")
    }
}
