//! The report: every row classified, live and fixture sections never pooled, and whether each
//! section's comparison is blocked. Built once as a serde structure; `--json` serialises it and
//! the renderings (`crate::render`: text, Markdown, HTML) show the same data.
//!
//! This file owns the report model (the types `--json` prints and one row's summary); the
//! aggregation per section is in `report/build.rs`, the JSON writer in `report/json_writer.rs`.
//! The report knows no rendering.

mod build;
mod file;
mod ids;
pub mod json_writer;

use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::declaration::{Declaration, Evidence};
use crate::json::Obj;
use crate::ledger::{Keep, Row, RowView};
use crate::portfolio::{classify_view, Classification, LimitState, LimitStates, Outcome};

pub use build::{build, build_from};
pub use file::from_files;
pub use ids::{Blocker, Blockers, Deviation, Deviations, Ids, RowReport, Rows, ScheduleIds};
pub use json_writer::write_json;

/// The whole report (`--json` prints exactly this). Rows are named by their schedule
/// position and each distinct row shape is kept once ([`Rows`], [`Ids`]): a report of
/// 1,000,000 rows keeps a few bytes per row, and its ids are made from the declaration's
/// task ids when shown.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Whether the ledger state is admitted (in ref mode: `verify` admits the chain from its
    /// root to the commit read; a ledger file that parses is). A report of a state that is not
    /// is only written under `--unverified`, with a banner first in every format.
    pub admitted: bool,
    pub declaration: DeclarationRef,
    /// The ledger state the report describes (docs/reference/workflow.md, rule 6).
    pub ledger: LedgerState,
    /// When not admitted: every reason `verify` gives, as values (`null` when admitted).
    pub refused: Option<Vec<crate::refusal::Reason>>,
    pub sections: BTreeMap<&'static str, Section>,
    pub rows: Rows,
}

/// The declaration a report is about.
#[derive(Debug, Clone, Serialize)]
pub struct DeclarationRef {
    pub id: String,
    pub sha256: String,
}

/// The ledger state a report describes, so that a reader handed the report can find it: in
/// ref mode the ledger ref, the commit read, its `Ledger-Filled` count and the citation
/// `<declaration id>@<commit>`; in file mode the SHA-256 of the ledger file's bytes.
/// Fields are declared in key order (the canonical writer's), `mode` says which.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LedgerState {
    Ref {
        /// `<declaration id>@<full commit id>`: what a paper cites (docs/reference/workflow.md,
        /// "The tip is the citation").
        citation: String,
        /// The full id of the ledger commit read.
        commit: String,
        /// The `k` of the commit's `Ledger-Filled: k/n` trailer (`None` when it has none).
        filled: Option<usize>,
        mode: &'static str,
        /// The ledger ref (`refs/ledgers/<id>`) whose first-parent chain holds the commit;
        /// `None` when none does (a commit `--at` named elsewhere).
        #[serde(rename = "ref")]
        ledger_ref: Option<String>,
    },
    File {
        mode: &'static str,
        /// SHA-256 of the ledger file's exact bytes.
        sha256: String,
    },
}

impl LedgerState {
    /// The state of a ledger commit `commit` (on `ledger_ref`'s chain, when that is `Some`),
    /// for declaration `id`.
    pub fn at_ref(id: &str, ledger_ref: Option<&str>, commit: &str, filled: Option<usize>) -> Self {
        LedgerState::Ref {
            citation: format!("{id}@{commit}"),
            commit: commit.to_owned(),
            filled,
            mode: "ref",
            ledger_ref: ledger_ref.map(str::to_owned),
        }
    }

    /// The state of a ledger file whose bytes hash to `sha256`.
    pub fn file(sha256: String) -> Self {
        LedgerState::File {
            mode: "file",
            sha256,
        }
    }

    /// The citation (`<id>@<commit>`), in ref mode.
    pub fn citation(&self) -> Option<&str> {
        match self {
            LedgerState::Ref { citation, .. } => Some(citation),
            LedgerState::File { .. } => None,
        }
    }
}

/// One outcome's count and rows.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeCount {
    pub count: usize,
    pub rows: Ids,
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

/// Whether the section's attempts may be compared. Serialised with `blocked_by`, what blocks
/// it counted in both units (`{"reasons": 20, "rows": 17}`), as every format counts it.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub blocked: bool,
    pub blockers: Blockers,
    pub sentence: Option<String>,
}

impl Comparison {
    /// How many rows block the comparison (each schedule id once; a row may block for several
    /// reasons, each one of `blockers`).
    pub fn blocked_rows(&self) -> usize {
        self.blockers.rows()
    }
}

impl Serialize for Comparison {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        #[derive(Serialize)]
        struct BlockedBy {
            reasons: usize,
            rows: usize,
        }
        // In key order, as the canonical writer orders them.
        let mut m = s.serialize_struct("Comparison", 4)?;
        m.serialize_field("blocked", &self.blocked)?;
        m.serialize_field(
            "blocked_by",
            &BlockedBy {
                reasons: self.blockers.len(),
                rows: self.blocked_rows(),
            },
        )?;
        m.serialize_field("blockers", &self.blockers)?;
        m.serialize_field("sentence", &self.sentence)?;
        m.end()
    }
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
    pub decision_rows: Ids,
    pub decisions: usize,
    pub deviations: Deviations,
    pub elapsed: Elapsed,
    pub limits: Limits,
    pub outcomes: BTreeMap<&'static str, OutcomeCount>,
    pub repair_rows: Ids,
    pub repairs: usize,
    pub scheduled: usize,
}

impl Section {
    /// A section with nothing scheduled: every outcome present with count 0, totals unknown
    /// until rows are added; its rows are named in the schedule `ids`.
    pub fn empty(ids: &ScheduleIds) -> Section {
        Section {
            scheduled: 0,
            attempted: 0,
            outcomes: Outcome::ALL
                .iter()
                .map(|o| {
                    let rows = Ids::new(ids);
                    (o.key(), OutcomeCount { count: 0, rows })
                })
                .collect(),
            decisions: 0,
            repairs: 0,
            decision_rows: Ids::new(ids),
            repair_rows: Ids::new(ids),
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
            deviations: Deviations::new(ids),
            comparison: Comparison {
                blocked: false,
                blockers: Blockers::new(ids),
                sentence: None,
            },
        }
    }
}

/// What a row shows and what its section adds up, but its id and its two numbers: the shape
/// rows share. A report keeps each distinct shape once ([`Summarise`]) and a row as a pointer
/// to its shape (at its schedule position, [`Rows`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    evidence: Evidence,
    native_outcome: Cow<'static, str>,
    native_status: Option<String>,
    deferred: bool,
    decisions: usize,
    repairs: usize,
    /// Whether the row states its cost (`estimated_usd`), and its elapsed time.
    priced: bool,
    timed: bool,
    /// Where the row stands against its limits taken together: over one, else unknown for
    /// one, else within all (decided on the core that classified the row).
    limits: LimitState,
    classification: Classification,
}

impl Shape {
    /// The shape of a row as a report shows it, for a report built by hand (the renderers'
    /// tests): what its section adds up is left out (an attempted row without interventions,
    /// cost or time).
    pub fn shown(
        evidence: Evidence,
        native_outcome: &str,
        native_status: Option<&str>,
        outcome: Outcome,
        gaps: Vec<String>,
        limits: LimitStates,
    ) -> Shape {
        Shape {
            evidence,
            native_outcome: Cow::Owned(native_outcome.to_owned()),
            native_status: native_status.map(str::to_owned),
            deferred: outcome == Outcome::NotAttempted,
            decisions: 0,
            repairs: 0,
            priced: false,
            timed: false,
            limits: LimitState::Within,
            classification: Classification {
                outcome,
                gaps,
                limits,
                deviations: Vec::new(),
                blockers: Vec::new(),
            },
        }
    }
}

/// What the report needs of one checked row: its shape and the two numbers the sections total.
/// [`RowSummary::of`] takes it from a row, which can then be dropped (`report` of a 100,000-row
/// ledger keeps these instead of the rows: [`Ledger::parse_kept`](crate::ledger::Ledger::parse_kept)).
#[derive(Debug, Clone, PartialEq)]
pub struct RowSummary {
    shape: Arc<Shape>,
    /// `estimated_usd` and `elapsed_seconds` (0 when the shape says the row has none).
    estimated_usd: f64,
    elapsed_seconds: f64,
}

impl RowSummary {
    /// The summary of a checked row.
    pub fn of(decl: &Declaration, row: &Row) -> RowSummary {
        Self::of_view(decl, row.view())
    }

    /// [`RowSummary::of`] a checked row seen through any JSON view (the fast path's rows).
    pub fn of_view<O: Obj>(decl: &Declaration, row: RowView<'_, O>) -> RowSummary {
        let (shape, usd, secs) = shape(decl, row);
        RowSummary {
            shape: Arc::new(shape),
            estimated_usd: usd,
            elapsed_seconds: secs,
        }
    }
}

/// The shape of a checked row, its cost and its elapsed time (0 for none).
fn shape<O: Obj>(decl: &Declaration, row: RowView<'_, O>) -> (Shape, f64, f64) {
    let (mut decisions, mut repairs) = (0, 0);
    for (kind, _) in row.interventions() {
        match kind {
            "decision" => decisions += 1,
            _ => repairs += 1,
        }
    }
    let c = classify_view(decl, row);
    let (usd, secs) = (row.estimated_usd(), row.elapsed_seconds());
    let shape = Shape {
        evidence: row.evidence(),
        native_outcome: native_outcome(row.native_outcome()),
        native_status: row.native_status().map(str::to_owned),
        deferred: row.is_deferred(),
        decisions,
        repairs,
        priced: usd.is_some(),
        timed: secs.is_some(),
        limits: if c.limits.values().any(|l| *l == LimitState::Over) {
            LimitState::Over
        } else if c.limits.values().any(|l| *l == LimitState::Unknown) {
            LimitState::Unknown
        } else {
            LimitState::Within
        },
        classification: c,
    };
    (shape, usd.unwrap_or(0.0), secs.unwrap_or(0.0))
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

/// Keeps a [`RowSummary`] of each row ([`Ledger::parse_kept`](crate::ledger::Ledger::parse_kept)): what `report` reads a ledger
/// file with. Rows of one shape share it: each distinct shape is kept once, for the report
/// this reads (one `Summarise` per report).
#[derive(Default)]
pub struct Summarise {
    /// Hashed with foldhash, not SipHash: a row's shape was hashed at 2.5% of a 100,000-row
    /// report's CPU time, and a collision costs only a comparison.
    shapes: Mutex<HashSet<Arc<Shape>, foldhash::fast::RandomState>>,
}

impl Summarise {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Keep for Summarise {
    type Kept = RowSummary;
    fn keep<O: Obj>(&self, decl: &Declaration, row: RowView<'_, O>) -> RowSummary {
        let (shape, usd, secs) = shape(decl, row);
        let mut shapes = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
        let shape = match shapes.get(&shape) {
            Some(known) => known.clone(),
            None => {
                let new = Arc::new(shape);
                shapes.insert(new.clone());
                new
            }
        };
        drop(shapes);
        RowSummary {
            shape,
            estimated_usd: usd,
            elapsed_seconds: secs,
        }
    }
}
