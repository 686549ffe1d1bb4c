//! The report: every row classified, live and fixture sections never pooled, and whether each
//! section's comparison is blocked. Built once as a serde structure; `--json` serialises it and
//! the text form renders the same data.

use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::declaration::{Declaration, Evidence};
use crate::json::Obj;
use crate::ledger::{Keep, KeptRows, Ledger, Row, RowView};
use crate::portfolio::{classify_view, Classification, LimitState, Outcome};

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
    pub total_usd: Option<f64>,
    pub unpriced: usize,
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
    pub over: usize,
    pub unknown: usize,
    pub within: usize,
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

/// One section (live or fixture). The report's types declare their fields in key order, so
/// they serialise as the canonical writer orders them (a test compares the two), without a
/// `Value` of every row id in the section's lists.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub attempted: usize,
    pub comparison: Comparison,
    pub cost: Cost,
    pub cost_per_verified_delivery_usd: Option<f64>,
    pub decision_rows: Vec<String>,
    pub decisions: usize,
    pub deviations: Vec<Deviation>,
    pub elapsed: Elapsed,
    pub limits: Limits,
    pub outcomes: BTreeMap<&'static str, OutcomeCount>,
    pub repair_rows: Vec<String>,
    pub repairs: usize,
    pub scheduled: usize,
}

impl Section {
    /// A section with nothing scheduled: every outcome present with count 0, totals unknown
    /// until rows are added.
    pub fn empty() -> Section {
        Section {
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
        }
    }
}

/// One row's classification.
#[derive(Debug, Clone, Serialize)]
pub struct RowReport {
    pub schedule_id: String,
    pub section: &'static str,
    pub native_outcome: Cow<'static, str>,
    pub native_status: Option<String>,
    pub outcome: &'static str,
    pub gaps: Vec<String>,
    pub limits: BTreeMap<Cow<'static, str>, LimitState>,
}

/// What the report needs of one checked row: its classification and the few fields the
/// sections total. [`RowSummary::of`] takes it from a row, which can then be dropped (`report`
/// of a 100,000-row ledger keeps these instead of the rows: [`Ledger::parse_kept`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RowSummary {
    schedule_id: String,
    evidence: Evidence,
    native_outcome: Cow<'static, str>,
    native_status: Option<String>,
    deferred: bool,
    decisions: usize,
    repairs: usize,
    estimated_usd: Option<f64>,
    elapsed_seconds: Option<f64>,
    /// Where the row stands against its limits taken together: over one, else unknown for
    /// one, else within all (decided on the core that classified the row).
    limits: LimitState,
    classification: Classification,
}

impl RowSummary {
    /// The summary of a checked row.
    pub fn of(decl: &Declaration, row: &Row) -> RowSummary {
        Self::of_view(decl, row.view())
    }

    /// [`RowSummary::of`] a checked row seen through any JSON view (the fast path's rows).
    pub fn of_view<O: Obj>(decl: &Declaration, row: RowView<'_, O>) -> RowSummary {
        let (mut decisions, mut repairs) = (0, 0);
        for (kind, _) in row.interventions() {
            match kind {
                "decision" => decisions += 1,
                _ => repairs += 1,
            }
        }
        let c = classify_view(decl, row);
        RowSummary {
            schedule_id: row.schedule_id().to_owned(),
            evidence: row.evidence(),
            native_outcome: native_outcome(row.native_outcome()),
            native_status: row.native_status().map(str::to_owned),
            deferred: row.is_deferred(),
            decisions,
            repairs,
            estimated_usd: row.estimated_usd(),
            elapsed_seconds: row.elapsed_seconds(),
            limits: if c.limits.values().any(|l| *l == LimitState::Over) {
                LimitState::Over
            } else if c.limits.values().any(|l| *l == LimitState::Unknown) {
                LimitState::Unknown
            } else {
                LimitState::Within
            },
            classification: c,
        }
    }
}

/// A native outcome, borrowed from the vocabulary when it is one of it (every checked row's).
fn native_outcome(outcome: &str) -> Cow<'static, str> {
    use crate::declaration::{ARENA_OUTCOMES, SCENARIO_OUTCOMES};
    use crate::portfolio::known;
    if outcome == "DEFERRED" {
        return Cow::Borrowed("DEFERRED");
    }
    match known(outcome, &SCENARIO_OUTCOMES) {
        Cow::Owned(_) => known(outcome, &ARENA_OUTCOMES),
        scenario => scenario,
    }
}

/// Keeps a [`RowSummary`] of each row ([`Ledger::parse_kept`]): what `report` reads a ledger
/// file with.
pub struct Summarise;

impl Keep for Summarise {
    type Kept = RowSummary;
    fn keep<O: Obj>(&self, decl: &Declaration, row: RowView<'_, O>) -> RowSummary {
        RowSummary::of_view(decl, row)
    }
}

/// Build the report of a checked ledger.
pub fn build(decl: &Declaration, ledger: &Ledger) -> Report {
    let summaries: Vec<RowSummary> = ledger
        .rows
        .iter()
        .map(|r| RowSummary::of(decl, r))
        .collect();
    build_from(decl, summaries.into())
}

/// Build the report from the summaries of a checked ledger's rows, in schedule order: the two
/// halves of the rows on two cores, each summary read once and moved into its report row.
pub fn build_from(decl: &Declaration, summaries: KeptRows<RowSummary>) -> Report {
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
        declaration: DeclarationRef {
            id: decl.id.clone(),
            sha256: decl.sha256.clone(),
        },
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

/// Render the report as JSON (the contract of `ledger.md`), as the canonical writer writes it:
/// every object's keys sorted, two-space indent, trailing newline. The rows (nearly all of a
/// large report) are written directly (`row_json`), in shares on every core
/// (`rows_json`); the rest is serialised by serde, the report's types declaring their fields
/// in key order (tests compare the bytes with the canonical writer over a `Value`).
pub fn write_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let text = without_rows(&report.declaration, &report.sections)?;
    let per = share_len(report.rows.len());
    let shares = rows_json(report.rows.chunks(per).collect())?;
    splice_rows(&text, shares, out)
}

/// [`write_json`] of a report that is not needed afterwards: each share of rows is freed by
/// the core that wrote it, and the sections are written and freed on another (freeing a
/// 100,000-row report's strings one by one took ~50 ms on one core after it was written).
/// The same bytes.
pub fn write_json_owned(report: Report, out: &mut dyn Write) -> io::Result<()> {
    let Report {
        declaration,
        sections,
        mut rows,
    } = report;
    let per = share_len(rows.len());
    let mut owned = Vec::new();
    while rows.len() > per {
        owned.push(rows.split_off(rows.len() - (rows.len() - 1) % per - 1));
    }
    owned.push(rows);
    owned.reverse();
    // The rest of the document (its sections list every row id) is written, and freed, beside
    // the rows rather than before them.
    let (text, shares) = std::thread::scope(|s| {
        let text = s.spawn(move || {
            let text = without_rows(&declaration, &sections);
            drop((declaration, sections));
            text
        });
        let shares = rows_json(owned);
        let text = text.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (text, shares)
    });
    splice_rows(&text?, shares?, out)
}

/// The canonical report document with `"rows": []`.
fn without_rows(
    declaration: &DeclarationRef,
    sections: &BTreeMap<&'static str, Section>,
) -> io::Result<Vec<u8>> {
    let doc = ReportJson {
        declaration,
        rows: [],
        sections,
    };
    Ok(crate::json::canonical(&doc))
}

/// Write the document `text` (from [`without_rows`]) with the written rows between the
/// brackets of its `"rows": []`, as the pretty printer writes a list: each row on a new line,
/// then the `]` on its own.
fn splice_rows(text: &[u8], shares: Vec<Vec<u8>>, out: &mut dyn Write) -> io::Result<()> {
    if shares.iter().all(Vec::is_empty) {
        return out.write_all(text);
    }
    let open = b"\n  \"rows\": [";
    let at = text
        .windows(open.len())
        .position(|w| w == open)
        .expect("the report document has rows")
        + open.len();
    out.write_all(&text[..at])?;
    for share in shares {
        out.write_all(&share)?;
    }
    out.write_all(b"\n  ")?;
    out.write_all(&text[at..])
}

/// Below this many rows one thread writes them all.
const PARALLEL_JSON_ROWS: usize = 4096;

/// How many rows each core writes.
fn share_len(rows: usize) -> usize {
    let n = if rows < PARALLEL_JSON_ROWS {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    };
    rows.div_ceil(n).max(1)
}

/// The rows as the canonical writer puts them in the report's `rows` list (each after a `,`
/// but the first, on a new line, two levels deep): each share (in order) written, and then
/// dropped, on its own core.
fn rows_json<R: AsRef<[RowReport]> + Send>(shares: Vec<R>) -> io::Result<Vec<Vec<u8>>> {
    let write = |first: bool, share: R| -> io::Result<Vec<u8>> {
        let rows = share.as_ref();
        let mut out = Vec::with_capacity(rows.len() * 400);
        for (i, row) in rows.iter().enumerate() {
            out.extend_from_slice(if first && i == 0 {
                b"\n    "
            } else {
                b",\n    "
            });
            row_json(&mut out, row);
        }
        drop(share);
        Ok(out)
    };
    let mut shares = shares.into_iter();
    let Some(first) = shares.next() else {
        return Ok(Vec::new());
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .map(|share| s.spawn(move || write(false, share)))
            .collect();
        let mut out = vec![write(true, first)?];
        for h in handles {
            out.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))?);
        }
        Ok(out)
    })
}

/// One row as the canonical writer puts it two levels deep (inside the report's object and
/// its `rows` list), keys sorted, written directly (the rows are nearly all of a large report;
/// tests compare it with the canonical writer).
fn row_json(out: &mut Vec<u8>, r: &RowReport) {
    out.extend_from_slice(b"{\n      \"gaps\": ");
    if r.gaps.is_empty() {
        out.extend_from_slice(b"[]");
    } else {
        for (i, gap) in r.gaps.iter().enumerate() {
            out.extend_from_slice(if i == 0 {
                b"[\n        "
            } else {
                b",\n        "
            });
            json_str(out, gap);
        }
        out.extend_from_slice(b"\n      ]");
    }
    out.extend_from_slice(b",\n      \"limits\": ");
    if r.limits.is_empty() {
        out.extend_from_slice(b"{}");
    } else {
        for (i, (name, state)) in r.limits.iter().enumerate() {
            out.extend_from_slice(if i == 0 {
                b"{\n        "
            } else {
                b",\n        "
            });
            json_str(out, name);
            out.extend_from_slice(b": ");
            json_str(out, state.as_str());
        }
        out.extend_from_slice(b"\n      }");
    }
    out.extend_from_slice(b",\n      \"native_outcome\": ");
    json_str(out, &r.native_outcome);
    out.extend_from_slice(b",\n      \"native_status\": ");
    match &r.native_status {
        Some(status) => json_str(out, status),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\n      \"outcome\": ");
    json_str(out, r.outcome);
    out.extend_from_slice(b",\n      \"schedule_id\": ");
    json_str(out, &r.schedule_id);
    out.extend_from_slice(b",\n      \"section\": ");
    json_str(out, r.section);
    out.extend_from_slice(b"\n    }");
}

/// A JSON string as serde_json writes it: quoted, with `"`, `\\` and control characters
/// escaped (by serde_json itself when there are any), everything else as it is.
fn json_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
    } else {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// The report document without its rows, keys in sorted order (the rows are spliced into its
/// empty `rows` list: [`splice_rows`]).
#[derive(Serialize)]
struct ReportJson<'a> {
    declaration: &'a DeclarationRef,
    rows: [(); 0],
    sections: &'a BTreeMap<&'static str, Section>,
}

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
    match crate::render::tone(o) {
        crate::render::Tone::Good => "32",
        crate::render::Tone::Bad => "31",
        crate::render::Tone::Open => "33",
    }
}

/// [`write_text`], with outcome labels and the comparison coloured when `color` is true.
pub fn write_text_color(report: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    writeln!(out, "Campaign {}", report.declaration.id)?;
    writeln!(out, "Declaration sha256 {}", report.declaration.sha256)?;
    for name in ["live", "fixture"] {
        let Some(s) = report.sections.get(name) else {
            continue;
        };
        let rows: Vec<&RowReport> = report.rows.iter().filter(|r| r.section == name).collect();
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
    rows: &[&RowReport],
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
        for (id, whats) in group(s.deviations.iter().map(|d| (&d.schedule_id, &d.what))) {
            writeln!(out, "    {id:<width$}  {}", whats.join("; "))?;
        }
    }
    if s.comparison.blocked {
        field(
            out,
            "Comparison",
            format!(
                "{} ({} row{})",
                paint("BLOCKED", "1;31", color),
                count_rows(&s.comparison.blockers),
                plural(count_rows(&s.comparison.blockers))
            ),
        )?;
        for (id, whys) in group(
            s.comparison
                .blockers
                .iter()
                .map(|b| (&b.schedule_id, &b.why)),
        ) {
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
fn group<'a>(
    entries: impl Iterator<Item = (&'a String, &'a String)>,
) -> Vec<(&'a str, Vec<&'a str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for (id, what) in entries {
        match out.last_mut() {
            Some((last, whats)) if *last == id.as_str() => whats.push(what),
            _ => out.push((id, vec![what])),
        }
    }
    out
}

fn count_rows(blockers: &[Blocker]) -> usize {
    group(blockers.iter().map(|b| (&b.schedule_id, &b.why))).len()
}

/// `n` and the rows, e.g. `3 (a/01, a/02)`, or `0`.
fn with_rows(n: usize, rows: &[String]) -> String {
    if rows.is_empty() {
        n.to_string()
    } else {
        format!("{n} ({})", rows.join(", "))
    }
}

#[cfg(test)]
mod tests;
