//! The gate's verdict: why it refuses (the reasons and their order), each problem, the
//! envelope and the citation, and how a verdict reads, as canonical JSON and as text (every
//! value a run line supplied made safe for one line of a terminal).

use serde::Serialize;
use serde_json::{Number, Value};
use std::fmt::Write as _;

use super::{MAX_LISTED_PER_REASON, SHOWN_FIELDS, SHOWN_ROWS_PER_FIELD};

/// Why the gate refuses, in the order cite.md fixes (`reason` is the first that applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A required field is missing, null or empty, or a line is not a JSON object.
    #[default]
    IncompleteEnvelope,
    /// A run differs from its card, its task is not on the card, or the card is incomplete.
    EnvelopeMismatch,
    /// Rows of different envelopes, or one task's rows with different hashes.
    MixedEnvelopes,
    /// A repeated attempt number, or attempts that do not run 1, 2, … without a gap.
    AttemptSequence,
    /// A value of the wrong type or outside its vocabulary.
    InvalidValue,
    /// No runs at all, or a task on the card without a run.
    NoRuns,
}

impl Reason {
    pub const ALL: [Reason; 6] = [
        Reason::IncompleteEnvelope,
        Reason::EnvelopeMismatch,
        Reason::MixedEnvelopes,
        Reason::AttemptSequence,
        Reason::InvalidValue,
        Reason::NoRuns,
    ];

    /// The reason code as printed.
    pub fn code(self) -> &'static str {
        match self {
            Reason::IncompleteEnvelope => "incomplete_envelope",
            Reason::EnvelopeMismatch => "envelope_mismatch",
            Reason::MixedEnvelopes => "mixed_envelopes",
            Reason::AttemptSequence => "attempt_sequence",
            Reason::InvalidValue => "invalid_value",
            Reason::NoRuns => "no_runs",
        }
    }
}

/// One thing that keeps the runs from being citeable. Every entry has `reason`, `source` and
/// `message`; the other keys appear where they apply (`task_id` is always present for a row,
/// `null` when the row has none, as in the seed's gate).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Problem {
    pub reason: Reason,
    /// `"runs"` or `"card"`.
    pub source: &'static str,
    /// One line, naming the place.
    pub message: String,
    /// Index of the row among the non-blank lines, from 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    /// 1-based line number in the runs file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Index of the task card in the card's `tasks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_task: Option<usize>,
    /// The envelopes a `mixed_envelopes` refusal found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<EnvelopeGroup>>,
    /// Rows in envelopes beyond the [`MAX_GROUPS`] named ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlisted_rows: Option<u64>,
}

/// The run envelope: what must be equal across every row for rates to be pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    pub access_class: String,
    pub server_class: String,
    pub timeout_s: Number,
    pub token_budget: u64,
    /// SHA-256 of the card file (`null` without a card).
    pub card_sha256: Option<String>,
}

/// One envelope found in the runs, with where it starts and how many rows it has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvelopeGroup {
    pub access_class: String,
    pub server_class: String,
    pub timeout_s: Number,
    pub token_budget: u64,
    pub rows: u64,
    pub first_row: u64,
    pub first_line: u64,
}

impl EnvelopeGroup {
    pub(super) fn same(&self, access: &str, server: &str, timeout: &Number, budget: u64) -> bool {
        self.access_class == access
            && self.server_class == server
            && self.token_budget == budget
            && crate::json::value_eq(
                &Value::Number(self.timeout_s.clone()),
                &Value::Number(timeout.clone()),
            )
    }
}

/// The numerators behind the rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counts {
    pub passed: u64,
    pub retried: u64,
    pub truncated: u64,
    pub patch_apply_failed: u64,
    pub rows: u64,
}

/// A citeable result: the metrics, always together, and the sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Citation {
    pub citeable: bool,
    pub n_tasks: u64,
    pub first_complete_pass_rate: f64,
    pub retry_rate: f64,
    pub truncation_rate: f64,
    /// Harness loss: first completed attempts whose patch the harness could not apply.
    pub patch_apply_fail_rate: f64,
    pub counts: Counts,
    pub envelope: Envelope,
    pub question: Option<String>,
    pub warnings: Vec<String>,
    pub sentence: String,
}

/// A refusal: no rate, the list instead.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    pub citeable: bool,
    pub refused: bool,
    pub reason: Reason,
    pub reasons: Vec<Reason>,
    pub missing: Vec<Problem>,
    /// Problems found but not listed (beyond [`MAX_LISTED_PER_REASON`] of one reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<u64>,
    /// Row problems counted per reason and field, in the order first found (the text's
    /// summary; the JSON lists each problem in `missing` instead).
    #[serde(skip)]
    pub fields: Vec<FieldCount>,
    /// The rows read (non-blank lines).
    #[serde(skip)]
    pub rows: u64,
}

/// How many rows had one reason's problem with one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldCount {
    pub reason: Reason,
    pub field: String,
    pub rows: u64,
}

/// What the gate decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Citeable(Citation),
    Refused(Refusal),
}

impl Verdict {
    /// Exit status: 0 citeable, 2 not.
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Citeable(_) => crate::error::exit::OK,
            Verdict::Refused(_) => crate::error::exit::REFUSED,
        }
    }

    /// The canonical JSON document (sorted keys, trailing newline).
    pub fn to_json(&self) -> Vec<u8> {
        // Going through `Value` sorts every object's keys (serde_json's map is ordered).
        let value = match self {
            Verdict::Citeable(c) => serde_json::to_value(c),
            Verdict::Refused(r) => serde_json::to_value(r),
        };
        crate::json::canonical(&value.unwrap_or(Value::Null))
    }

    /// The human text (a refusal's rows shortened per field, see [`Refusal::to_text_with`]).
    pub fn to_text(&self) -> String {
        self.to_text_with(false)
    }

    /// The human text; `verbose` lists every row of a refusal.
    pub fn to_text_with(&self, verbose: bool) -> String {
        match self {
            Verdict::Citeable(c) => c.to_text(),
            Verdict::Refused(r) => r.to_text_with(verbose),
        }
    }
}

impl Citation {
    fn to_text(&self) -> String {
        let mut s = String::new();
        let e = &self.envelope;
        let _ = writeln!(s, "citeable: true");
        let _ = writeln!(s, "n_tasks: {}", self.n_tasks);
        let _ = writeln!(
            s,
            "first_complete_pass_rate: {}",
            rate(self.first_complete_pass_rate)
        );
        let _ = writeln!(
            s,
            "patch_apply_fail_rate: {} (harness loss, not the agent's: the harness could not apply the patch of {} of {} tasks' first completed attempt; those count as not passed)",
            rate(self.patch_apply_fail_rate),
            self.counts.patch_apply_failed,
            self.n_tasks
        );
        let _ = writeln!(s, "retry_rate: {}", rate(self.retry_rate));
        let _ = writeln!(s, "truncation_rate: {}", rate(self.truncation_rate));
        let _ = writeln!(
            s,
            "envelope: access {}, server {}, timeout {} s, budget {} tokens, {}",
            printable(&e.access_class),
            printable(&e.server_class),
            printable(&e.timeout_s),
            e.token_budget,
            e.card_sha256
                .as_ref()
                .map_or_else(|| "no card".to_string(), |h| format!("card sha256 {h}"))
        );
        if let Some(q) = &self.question {
            let _ = writeln!(s, "question: {}", printable(q));
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "{}", self.sentence);
        s
    }
}

impl Refusal {
    /// The text: the verdict, one line per field with a row problem (how many rows have it;
    /// only when some field has one in more than one row), then the problems — without `verbose`, at most [`SHOWN_ROWS_PER_FIELD`] rows of each
    /// field's problem and a line saying how many more there are (the JSON lists them all).
    pub fn to_text_with(&self, verbose: bool) -> String {
        let mut s = String::new();
        let codes: Vec<&str> = self.reasons.iter().map(|r| r.code()).collect();
        let _ = writeln!(
            s,
            "not citeable: {} (reasons: {})",
            self.reason.code(),
            codes.join(", ")
        );
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        let verb = |r: Reason| match r {
            Reason::IncompleteEnvelope => "missing",
            Reason::InvalidValue => "invalid",
            Reason::EnvelopeMismatch => "not the card's",
            other => other.code(),
        };
        // The summary counts what a field's rows share; when no field has a problem in more
        // than one row, it would only repeat the list.
        let summarised = if !self.fields.iter().any(|f| f.rows > 1) {
            0
        } else if verbose {
            self.fields.len()
        } else {
            self.fields.len().min(SHOWN_FIELDS)
        };
        for f in &self.fields[..summarised] {
            let _ = writeln!(
                s,
                "  {}: {} in {} of {} row{}",
                printable(&f.field),
                verb(f.reason),
                f.rows,
                self.rows,
                plural(self.rows)
            );
        }
        if summarised > 0 && summarised < self.fields.len() {
            let more = (self.fields.len() - summarised) as u64;
            let _ = writeln!(
                s,
                "  ... and {more} more field{} with problems (--verbose counts each)",
                plural(more)
            );
        }
        // Without `verbose`, each field's row problems are one block where the first of them
        // is: its first rows, then how many more.
        let index: std::collections::HashMap<(Reason, &str), usize> = self
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| ((f.reason, f.field.as_str()), i))
            .collect();
        let group_of = |p: &Problem| -> Option<usize> {
            if verbose || p.source != "runs" || p.row.is_none() {
                return None;
            }
            index.get(&(p.reason, p.field.as_deref()?)).copied()
        };
        let mut blocks: Vec<Vec<&Problem>> = vec![Vec::new(); self.fields.len()];
        for p in &self.missing {
            if let Some(g) = group_of(p) {
                if blocks[g].len() < SHOWN_ROWS_PER_FIELD {
                    blocks[g].push(p);
                }
            }
        }
        let mut done = vec![false; self.fields.len()];
        // Lines that are not JSON objects (a row problem of no field): the first
        // SHOWN_REASONS, then how many more, as every command caps many inputs of one kind.
        let whole_line = |p: &Problem| p.source == "runs" && p.row.is_some() && p.field.is_none();
        let (mut lines_shown, mut lines_left) = (0usize, 0u64);
        for p in &self.missing {
            let Some(g) = group_of(p) else {
                if !verbose && whole_line(p) {
                    if lines_shown == crate::error::SHOWN_REASONS {
                        lines_left += 1;
                        continue;
                    }
                    lines_shown += 1;
                }
                let _ = writeln!(s, "  {}: {}", p.reason.code(), p.message);
                continue;
            };
            if std::mem::replace(&mut done[g], true) {
                continue;
            }
            for q in &blocks[g] {
                let _ = writeln!(s, "  {}: {}", q.reason.code(), q.message);
            }
            let group = &self.fields[g];
            let more = group.rows.saturating_sub(blocks[g].len() as u64);
            if more > 0 {
                let _ = writeln!(
                    s,
                    "  ... and {more} more row{} where {} is {} (--verbose lists every row)",
                    plural(more),
                    group.field,
                    verb(group.reason)
                );
            }
        }
        if lines_left > 0 {
            let _ = writeln!(
                s,
                "  ... and {lines_left} more line{} that {} not a JSON object (--verbose lists every line)",
                plural(lines_left),
                if lines_left == 1 { "is" } else { "are" }
            );
        }
        if let Some(n) = self.omitted {
            let _ = writeln!(
                s,
                "  ... and {n} more problem{} not listed (at most {MAX_LISTED_PER_REASON} per reason)",
                if n == 1 { "" } else { "s" }
            );
        }
        let _ = writeln!(
            s,
            "No rate is printed until the envelope is complete; publish this list instead."
        );
        s
    }
}

/// A rate as Python's `repr` and serde_json print it (`1.0`, `0.75`, `0.0833`).
pub fn rate(x: f64) -> String {
    Number::from_f64(x).map_or_else(|| "null".into(), |n| n.to_string())
}

/// Text a run line supplied (a field name, an envelope value), made safe for one line of the
/// text output: control characters (newlines, the ESC of terminal escape sequences) and the
/// Unicode marks that reorder a line (bidirectional overrides and isolates) are shown escaped,
/// so a hostile run line cannot start a line of its own, fake a verdict or drive the terminal.
/// `--json` keeps the text as it was.
pub(super) fn printable(text: impl std::fmt::Display) -> String {
    let text = text.to_string();
    let hostile = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hostile) {
        return text;
    }
    text.chars()
        .flat_map(|c| {
            if hostile(c) {
                c.escape_unicode().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}
