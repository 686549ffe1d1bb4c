//! The citeability gate (`cite.md`): read a runs file (JSON Lines, one attempt per line) and an
//! optional dataset card, and either refuse with the list of what is missing or compute the three
//! metrics and the one sentence that may be shipped.
//!
//! The runs are streamed: each line is read (bounded), checked and folded into small per-task
//! state, then dropped. Nothing here knows about the command line or the terminal; the result is
//! a [`Verdict`] that renders as text or serialises as JSON from the same data.

mod card;
mod lines;
mod round;

pub use card::{Card, CARD_FIELDS};
pub use round::{round4, round_to};

use serde::Serialize;
use serde_json::{Number, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufRead;

use crate::error::{Error, Result};

/// Text a run line supplied (a field name, an envelope value), made safe for one line of the
/// text output: control characters (newlines, the ESC of terminal escape sequences) and the
/// Unicode marks that reorder a line (bidirectional overrides and isolates) are shown escaped,
/// so a hostile run line cannot start a line of its own, fake a verdict or drive the terminal.
/// `--json` keeps the text as it was.
fn printable(text: impl std::fmt::Display) -> String {
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

/// The twelve fields every run line carries, in the seed's order.
pub const RUN_FIELDS: [&str; 12] = [
    "task_id",
    "prompt_sha256",
    "hidden_tests_sha256",
    "access_class",
    "server_class",
    "timeout_s",
    "token_budget",
    "attempt",
    "cold_start",
    "queue_wait_ms",
    "stop_reason",
    "patch_sha256",
];

/// The SHA-256 of the empty patch, recorded by an attempt that produced no patch.
pub const EMPTY_PATCH_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// How many problems of one reason are listed; the rest are counted (`omitted`).
pub const MAX_LISTED_PER_REASON: usize = 1000;

/// How many rows of one field's problem the text lists without `--verbose` (the summary line
/// before them counts them all).
pub const SHOWN_ROWS_PER_FIELD: usize = 3;

/// How many fields the text's summary counts without `--verbose`.
pub const SHOWN_FIELDS: usize = 50;

/// How many distinct envelopes a mixed-envelope refusal names; rows in further envelopes are
/// counted.
pub const MAX_GROUPS: usize = 100;

/// Why the gate refuses, in the order the spec fixes (`reason` is the first that applies).
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
    fn same(&self, access: &str, server: &str, timeout: &Number, budget: u64) -> bool {
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
        for p in &self.missing {
            let Some(g) = group_of(p) else {
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

/// Options of the gate.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Longest accepted runs line, in bytes (`--max-input-bytes`).
    pub max_line_bytes: u64,
}

/// Run the gate over a runs reader (JSON Lines) and an optional checked card. Only an I/O error
/// reading the runs is an `Err`; every problem with the content is in the [`Verdict`].
pub fn cite<R: BufRead>(mut runs: R, card: Option<&Card>, options: Options) -> Result<Verdict> {
    let mut gate = Gate::new(card);
    let mut buf = Vec::new();
    let mut line_no: u64 = 0;
    loop {
        let read = lines::read_line(&mut runs, &mut buf, options.max_line_bytes)
            .map_err(|e| Error::failed(format!("cannot read the runs: {e}")))?;
        let Some(read) = read else { break };
        line_no += 1;
        match read {
            lines::Line::Complete => gate.push_line(line_no, &buf),
            lines::Line::TooLong { bytes, ended } => {
                gate.push_too_long(line_no, bytes, options.max_line_bytes);
                if !ended {
                    gate.push_unread(line_no, bytes);
                    break;
                }
            }
        }
    }
    Ok(gate.finish())
}

/// A stop reason's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Pass,
    Fail,
    Timeout,
    Budget,
    Transport,
    ApplyError,
}

impl StopReason {
    fn parse(s: &str) -> Option<StopReason> {
        Some(match s {
            "pass" => StopReason::Pass,
            "fail" => StopReason::Fail,
            "timeout" => StopReason::Timeout,
            "budget" => StopReason::Budget,
            "transport" => StopReason::Transport,
            "apply_error" => StopReason::ApplyError,
            _ => return None,
        })
    }
}

/// Collected problems: every one counted, at most [`MAX_LISTED_PER_REASON`] of each kept.
#[derive(Debug, Default)]
struct Problems {
    listed: Vec<Problem>,
    counts: [u64; 6],
}

impl Problems {
    fn push(&mut self, p: Problem) {
        let i = p.reason as usize;
        self.counts[i] += 1;
        if self.counts[i] <= MAX_LISTED_PER_REASON as u64 {
            self.listed.push(p);
        }
    }
    fn is_empty(&self) -> bool {
        self.counts.iter().all(|&c| c == 0)
    }
}

/// What is kept per task while streaming: a few numbers and the task's hashes, never its rows.
#[derive(Debug)]
struct TaskState {
    first_row: u64,
    first_line: u64,
    /// The task's `prompt_sha256` and `hidden_tests_sha256` as first seen.
    hashes: [Option<Hex>; 2],
    /// The attempt numbers seen.
    attempts: AttemptSet,
    /// A row of this task had no usable attempt number (already refused): skip the sequence check.
    attempt_unusable: bool,
    /// Lowest attempt that completed (not `transport`), and how it stopped.
    first_completed: Option<(u64, StopReason)>,
    /// How attempt 1 stopped.
    first_attempt: Option<StopReason>,
    retried: bool,
    /// Card fields already reported as differing for this task (one bit per field).
    card_reported: u8,
}

/// A hex digest of up to 64 digits, packed into 33 bytes (no allocation per task).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hex {
    digits: u8,
    packed: [u8; 32],
}

impl Hex {
    /// From a checked lowercase hex string of 1 to 64 digits.
    fn new(s: &str) -> Option<Hex> {
        if s.is_empty() || s.len() > 64 {
            return None;
        }
        let mut packed = [0u8; 32];
        for (i, c) in s.bytes().enumerate() {
            let v = (c as char).to_digit(16)? as u8;
            packed[i / 2] |= if i % 2 == 0 { v << 4 } else { v };
        }
        Some(Hex {
            digits: s.len() as u8,
            packed,
        })
    }
}

impl std::fmt::Display for Hex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for i in 0..self.digits as usize {
            let b = self.packed[i / 2];
            let v = if i % 2 == 0 { b >> 4 } else { b & 0xf };
            write!(f, "{v:x}")?;
        }
        Ok(())
    }
}

/// A set of attempt numbers: 1 to 64 as bits, larger ones (rare) in a set that allocates only
/// when used.
#[derive(Debug, Default)]
struct AttemptSet {
    low: u64,
    high: std::collections::BTreeSet<u64>,
}

impl AttemptSet {
    /// Add `n` (at least 1); false when it was already there.
    fn insert(&mut self, n: u64) -> bool {
        if (1..=64).contains(&n) {
            let bit = 1u64 << (n - 1);
            let fresh = self.low & bit == 0;
            self.low |= bit;
            fresh
        } else {
            self.high.insert(n)
        }
    }
    fn contains(&self, n: u64) -> bool {
        if (1..=64).contains(&n) {
            self.low & (1u64 << (n - 1)) != 0
        } else {
            self.high.contains(&n)
        }
    }
    fn len(&self) -> u64 {
        self.low.count_ones() as u64 + self.high.len() as u64
    }
    fn min(&self) -> Option<u64> {
        if self.low != 0 {
            Some(self.low.trailing_zeros() as u64 + 1)
        } else {
            self.high.first().copied()
        }
    }
    fn max(&self) -> Option<u64> {
        match self.high.last().copied() {
            Some(n) => Some(n),
            None if self.low != 0 => Some(64 - self.low.leading_zeros() as u64),
            None => None,
        }
    }
}

/// A run's value and the card's, as printed, and whether they differ by value.
type Compared = (String, String, bool);

/// The typed fields of one row (each `None` when missing or invalid, already a problem).
#[derive(Debug, Default)]
struct RowFields {
    task_id: Option<String>,
    prompt_sha256: Option<String>,
    hidden_tests_sha256: Option<String>,
    access_class: Option<String>,
    server_class: Option<String>,
    timeout_s: Option<Number>,
    token_budget: Option<u64>,
    attempt: Option<u64>,
    cold_start: Option<bool>,
    stop_reason: Option<StopReason>,
}

/// The streaming gate: feed it lines, then [`Gate::finish`].
pub struct Gate<'c> {
    card: Option<&'c Card>,
    problems: Problems,
    rows: u64,
    tasks: BTreeMap<Box<str>, TaskState>,
    groups: Vec<EnvelopeGroup>,
    unlisted_rows: u64,
    /// Row problems per reason and field (every one, listed or not), and where each is.
    fields: Vec<FieldCount>,
    field_index: std::collections::HashMap<(Reason, Box<str>), usize>,
}

impl<'c> Gate<'c> {
    pub fn new(card: Option<&'c Card>) -> Self {
        let mut problems = Problems::default();
        if let Some(card) = card {
            for p in &card.problems {
                problems.push(p.clone());
            }
        }
        Gate {
            card,
            problems,
            rows: 0,
            tasks: BTreeMap::new(),
            groups: Vec::new(),
            unlisted_rows: 0,
            fields: Vec::new(),
            field_index: std::collections::HashMap::new(),
        }
    }

    /// A line longer than the bound: refused with its line number, reading goes on.
    pub fn push_too_long(&mut self, line: u64, bytes: u64, max: u64) {
        let row = self.rows;
        self.rows += 1;
        self.problems.push(Problem {
            reason: Reason::IncompleteEnvelope,
            source: "runs",
            message: format!(
                "row {row} (line {line}): {bytes} bytes is over the line bound of {max} bytes (--max-input-bytes); not read as a JSON object"
            ),
            row: Some(row),
            line: Some(line),
            task_id: Some(Value::Null),
            ..Problem::default()
        });
    }

    /// The reading stopped inside an over-long line that had no end (a stream without
    /// newlines): what follows it was not read.
    pub fn push_unread(&mut self, line: u64, bytes: u64) {
        self.problems.push(Problem {
            reason: Reason::IncompleteEnvelope,
            source: "runs",
            message: format!(
                "line {line}: no end of line within {bytes} bytes; reading stopped there, the rest of the runs was not read"
            ),
            line: Some(line),
            ..Problem::default()
        });
    }

    /// One line of the runs file (without its newline). Blank lines are skipped.
    pub fn push_line(&mut self, line: u64, bytes: &[u8]) {
        if lines::is_blank(bytes) {
            return;
        }
        let row = self.rows;
        self.rows += 1;
        let object = match crate::json::parse_strict(bytes) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                self.row_problem(
                    Reason::IncompleteEnvelope,
                    row,
                    line,
                    Value::Null,
                    None,
                    format!(
                        "the line is {}, not a JSON object",
                        crate::json::type_name(&other)
                    ),
                );
                return;
            }
            Err(e) => {
                self.row_problem(
                    Reason::IncompleteEnvelope,
                    row,
                    line,
                    Value::Null,
                    None,
                    format!("the line is not a JSON object: {e}"),
                );
                return;
            }
        };
        let shown_id = match object.get("task_id") {
            Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => v.clone(),
            _ => Value::Null,
        };
        // Missing fields first (as the seed's gate lists them), then unknown ones, then values.
        for field in RUN_FIELDS {
            if object.get(field).is_none_or(is_missing) {
                self.row_problem(
                    Reason::IncompleteEnvelope,
                    row,
                    line,
                    shown_id.clone(),
                    Some(field),
                    format!("{field} is missing (absent, null or empty)"),
                );
            }
        }
        for key in object.keys() {
            if !RUN_FIELDS.contains(&key.as_str()) {
                self.row_problem(
                    Reason::InvalidValue,
                    row,
                    line,
                    shown_id.clone(),
                    Some(key),
                    format!("unknown field {key:?} (a run line holds exactly the twelve envelope fields)"),
                );
            }
        }
        let mut f = RowFields::default();
        for field in RUN_FIELDS {
            let Some(value) = object.get(field).filter(|v| !is_missing(v)) else {
                continue;
            };
            let checked: std::result::Result<(), String> = match field {
                "task_id" => check_string(value).map(|s| f.task_id = Some(s)),
                "prompt_sha256" => check_hex(value).map(|s| f.prompt_sha256 = Some(s)),
                "hidden_tests_sha256" => check_hex(value).map(|s| f.hidden_tests_sha256 = Some(s)),
                "access_class" => check_string(value).map(|s| f.access_class = Some(s)),
                "server_class" => check_string(value).map(|s| f.server_class = Some(s)),
                "timeout_s" => check_timeout(value).map(|n| f.timeout_s = Some(n)),
                "token_budget" => check_budget(value).map(|b| f.token_budget = Some(b)),
                "attempt" => match crate::json::count(value) {
                    Some(n) if n >= 1 => {
                        f.attempt = Some(n);
                        Ok(())
                    }
                    _ => Err(format!("must be an attempt number 1, 2, …, not {}", show(value))),
                },
                "cold_start" => match value {
                    Value::Bool(b) => {
                        f.cold_start = Some(*b);
                        Ok(())
                    }
                    v => Err(format!("must be true or false, not {}", show(v))),
                },
                "queue_wait_ms" => match crate::json::nonneg_number(value) {
                    Some(_) => Ok(()),
                    None => Err(format!("must be a number of milliseconds (0 or more), not {}", show(value))),
                },
                "stop_reason" => match value.as_str().and_then(StopReason::parse) {
                    Some(s) => {
                        f.stop_reason = Some(s);
                        Ok(())
                    }
                    None => Err(format!(
                        "must be one of pass, fail, timeout, budget, transport, apply_error, not {}",
                        show(value)
                    )),
                },
                "patch_sha256" => check_hex(value).map(|_| ()),
                _ => Ok(()),
            };
            if let Err(why) = checked {
                self.row_problem(
                    Reason::InvalidValue,
                    row,
                    line,
                    shown_id.clone(),
                    Some(field),
                    format!("{field} {why}"),
                );
            }
        }
        self.fold(row, line, f);
    }

    /// Fold a row's usable fields into the envelope groups and its task's state.
    fn fold(&mut self, row: u64, line: u64, f: RowFields) {
        if let (Some(a), Some(s), Some(t), Some(b)) = (
            &f.access_class,
            &f.server_class,
            &f.timeout_s,
            f.token_budget,
        ) {
            if let Some(g) = self.groups.iter_mut().find(|g| g.same(a, s, t, b)) {
                g.rows += 1;
            } else if self.groups.len() < MAX_GROUPS {
                self.groups.push(EnvelopeGroup {
                    access_class: a.clone(),
                    server_class: s.clone(),
                    timeout_s: t.clone(),
                    token_budget: b,
                    rows: 1,
                    first_row: row,
                    first_line: line,
                });
            } else {
                self.unlisted_rows += 1;
            }
        }
        let Some(id) = f.task_id.clone() else { return };
        if !self.tasks.contains_key(id.as_str()) {
            if let Some(card) = self.card.filter(|c| c.usable) {
                if !card.tasks.contains_key(&id) {
                    self.row_problem(
                        Reason::EnvelopeMismatch,
                        row,
                        line,
                        Value::String(id.clone()),
                        Some("task_id"),
                        "the task is not on the card".into(),
                    );
                }
            }
            self.tasks.insert(
                id.clone().into_boxed_str(),
                TaskState {
                    first_row: row,
                    first_line: line,
                    hashes: [None, None],
                    attempts: AttemptSet::default(),
                    attempt_unusable: false,
                    first_completed: None,
                    first_attempt: None,
                    retried: false,
                    card_reported: 0,
                },
            );
        }
        let mut found = Vec::new();
        let card_task = self.card.and_then(|c| c.tasks.get(&id));
        let Some(task) = self.tasks.get_mut(id.as_str()) else {
            return;
        };

        // One task's rows carry one pair of hashes.
        for (i, (field, value)) in [
            ("prompt_sha256", &f.prompt_sha256),
            ("hidden_tests_sha256", &f.hidden_tests_sha256),
        ]
        .into_iter()
        .enumerate()
        {
            let Some(value) = value.as_deref().and_then(Hex::new) else {
                continue;
            };
            match task.hashes[i] {
                None => task.hashes[i] = Some(value),
                Some(first) if first != value => found.push((
                    Reason::MixedEnvelopes,
                    field,
                    format!(
                        "{field} {value} differs from {first}, this task's earlier value (its rows start on line {}); different hashes are different experiments and are never pooled",
                        task.first_line
                    ),
                )),
                Some(_) => {}
            }
        }

        // The card's values, reported once per task and field.
        if let Some(ct) = card_task {
            let num = |n: &Number| Value::Number(n.clone());
            let checks: [(&str, Option<Compared>); 4] = [
                (
                    "prompt_sha256",
                    f.prompt_sha256
                        .as_ref()
                        .zip(ct.prompt_sha256.as_ref())
                        .map(|(r, c)| (r.clone(), c.clone(), r != c)),
                ),
                (
                    "hidden_tests_sha256",
                    f.hidden_tests_sha256
                        .as_ref()
                        .zip(ct.hidden_tests_sha256.as_ref())
                        .map(|(r, c)| (r.clone(), c.clone(), r != c)),
                ),
                (
                    "timeout_s",
                    f.timeout_s
                        .as_ref()
                        .zip(ct.timeout_s.as_ref())
                        .map(|(r, c)| {
                            (
                                r.to_string(),
                                c.to_string(),
                                !crate::json::value_eq(&num(r), &num(c)),
                            )
                        }),
                ),
                (
                    "token_budget",
                    f.token_budget
                        .zip(ct.token_budget)
                        .map(|(r, c)| (r.to_string(), c.to_string(), r != c)),
                ),
            ];
            for (bit, (field, compared)) in checks.into_iter().enumerate() {
                let Some((run, card, true)) = compared else {
                    continue;
                };
                if task.card_reported & (1 << bit) == 0 {
                    task.card_reported |= 1 << bit;
                    found.push((
                        Reason::EnvelopeMismatch,
                        field,
                        format!("{field} {run} differs from the card's {card} (first such row of this task)"),
                    ));
                }
            }
        }

        // Attempt numbers: each once per task.
        match f.attempt {
            None => task.attempt_unusable = true,
            Some(n) => {
                if !task.attempts.insert(n) {
                    found.push((
                        Reason::AttemptSequence,
                        "attempt",
                        format!(
                            "attempt {n} appears again (the task's rows start on line {}); each attempt has exactly one row",
                            task.first_line
                        ),
                    ));
                }
                if let Some(stop) = f.stop_reason {
                    if n == 1 {
                        task.first_attempt = Some(stop);
                    }
                    if stop != StopReason::Transport
                        && task.first_completed.is_none_or(|(m, _)| n < m)
                    {
                        task.first_completed = Some((n, stop));
                    }
                }
                if n > 1 {
                    task.retried = true;
                }
            }
        }
        if f.cold_start == Some(true) || f.stop_reason == Some(StopReason::Transport) {
            task.retried = true;
        }
        for (reason, field, message) in found {
            self.row_problem(
                reason,
                row,
                line,
                Value::String(id.clone()),
                Some(field),
                message,
            );
        }
    }

    fn row_problem(
        &mut self,
        reason: Reason,
        row: u64,
        line: u64,
        task_id: Value,
        field: Option<&str>,
        message: String,
    ) {
        let task = match &task_id {
            Value::Null => String::new(),
            v => format!(", task {}", show(v)),
        };
        if let Some(field) = field {
            match self.field_index.get(&(reason, field.into())) {
                Some(&i) => self.fields[i].rows += 1,
                None => {
                    self.field_index
                        .insert((reason, field.into()), self.fields.len());
                    self.fields.push(FieldCount {
                        reason,
                        field: field.to_owned(),
                        rows: 1,
                    });
                }
            }
        }
        self.problems.push(Problem {
            reason,
            source: "runs",
            message: format!("row {row} (line {line}{task}): {message}"),
            row: Some(row),
            line: Some(line),
            task_id: Some(task_id),
            field: field.map(str::to_owned),
            ..Problem::default()
        });
    }

    /// The checks that need every row, then the verdict.
    pub fn finish(mut self) -> Verdict {
        if self.groups.len() > 1 || (self.unlisted_rows > 0 && !self.groups.is_empty()) {
            self.mixed_groups();
        }
        let mut sequence = Vec::new();
        for (id, task) in &self.tasks {
            let (Some(lowest), Some(highest)) = (task.attempts.min(), task.attempts.max()) else {
                continue;
            };
            if task.attempt_unusable {
                continue;
            }
            let present = task.attempts.len();
            if lowest != 1 {
                sequence.push((
                    id.clone(),
                    task.first_row,
                    task.first_line,
                    format!("attempts start at {lowest}, not 1"),
                ));
            } else if highest != present {
                let gap = (1..=highest)
                    .find(|&n| !task.attempts.contains(n))
                    .unwrap_or(highest);
                sequence.push((
                    id.clone(),
                    task.first_row,
                    task.first_line,
                    format!("attempt {gap} is missing ({} of attempts 1..{highest} have no row); a dropped attempt is never silently skipped", highest - present),
                ));
            }
        }
        for (id, row, line, message) in sequence {
            self.row_problem(
                Reason::AttemptSequence,
                row,
                line,
                Value::String(id.into()),
                Some("attempt"),
                message,
            );
        }
        if self.rows == 0 {
            self.problems.push(Problem {
                reason: Reason::NoRuns,
                source: "runs",
                message: "there are no runs: the file holds no attempt".into(),
                ..Problem::default()
            });
        }
        if let Some(card) = self.card.filter(|c| c.usable) {
            for id in &card.order {
                if !self.tasks.contains_key(id.as_str()) {
                    let index = card.tasks.get(id).map(|t| t.index);
                    self.problems.push(Problem {
                        reason: Reason::NoRuns,
                        source: "card",
                        message: format!("card task {} ({id}) has no run", index.unwrap_or(0)),
                        task_id: Some(Value::String(id.clone())),
                        card_task: index,
                        ..Problem::default()
                    });
                }
            }
        }
        if !self.problems.is_empty() {
            return self.refusal();
        }
        self.citation()
    }

    fn mixed_groups(&mut self) {
        let Some(first) = self.groups.first() else {
            return;
        };
        let mut fields = Vec::new();
        if self
            .groups
            .iter()
            .any(|g| g.access_class != first.access_class)
        {
            fields.push("access_class");
        }
        if self
            .groups
            .iter()
            .any(|g| g.server_class != first.server_class)
        {
            fields.push("server_class");
        }
        if self.groups.iter().any(|g| {
            !crate::json::value_eq(
                &Value::Number(g.timeout_s.clone()),
                &Value::Number(first.timeout_s.clone()),
            )
        }) {
            fields.push("timeout_s");
        }
        if self
            .groups
            .iter()
            .any(|g| g.token_budget != first.token_budget)
        {
            fields.push("token_budget");
        }
        let named: Vec<String> = self
            .groups
            .iter()
            .map(|g| {
                format!(
                    "[access {}, server {}, timeout {} s, budget {} tokens: {} row{} from line {}]",
                    printable(&g.access_class),
                    printable(&g.server_class),
                    printable(&g.timeout_s),
                    g.token_budget,
                    g.rows,
                    if g.rows == 1 { "" } else { "s" },
                    g.first_line
                )
            })
            .collect();
        let mut message = format!(
            "the rows mix {} envelopes (differing in {}); different envelopes are different experiments and are never pooled: {}",
            self.groups.len(),
            if fields.is_empty() { "more envelopes than listed".to_string() } else { fields.join(", ") },
            named.join(" ")
        );
        if self.unlisted_rows > 0 {
            let _ = write!(
                message,
                " and {} rows in further envelopes",
                self.unlisted_rows
            );
        }
        self.problems.push(Problem {
            reason: Reason::MixedEnvelopes,
            source: "runs",
            message,
            field: fields.first().map(|f| f.to_string()),
            groups: Some(self.groups.clone()),
            unlisted_rows: (self.unlisted_rows > 0).then_some(self.unlisted_rows),
            ..Problem::default()
        });
    }

    fn refusal(self) -> Verdict {
        let reasons: Vec<Reason> = Reason::ALL
            .into_iter()
            .filter(|r| self.problems.counts[*r as usize] > 0)
            .collect();
        let mut missing = self.problems.listed;
        // Grouped by reason in the spec's order; within a reason, in the order found.
        missing.sort_by_key(|p| p.reason);
        let total: u64 = self.problems.counts.iter().sum();
        let omitted = total - missing.len() as u64;
        let mut fields = self.fields;
        // By reason, then the spec's field order; unknown fields after, in the order found.
        fields.sort_by_key(|f| {
            let at = RUN_FIELDS.iter().position(|r| *r == f.field);
            (f.reason, at.unwrap_or(usize::MAX))
        });
        Verdict::Refused(Refusal {
            citeable: false,
            refused: true,
            reason: reasons.first().copied().unwrap_or_default(),
            reasons,
            missing,
            omitted: (omitted > 0).then_some(omitted),
            fields,
            rows: self.rows,
        })
    }

    fn citation(self) -> Verdict {
        let n = self.tasks.len() as u64;
        let mut counts = Counts {
            passed: 0,
            retried: 0,
            truncated: 0,
            patch_apply_failed: 0,
            rows: self.rows,
        };
        for task in self.tasks.values() {
            match task.first_completed {
                Some((_, StopReason::Pass)) => counts.passed += 1,
                Some((_, StopReason::ApplyError)) => counts.patch_apply_failed += 1,
                _ => {}
            }
            if matches!(
                task.first_attempt,
                Some(StopReason::Timeout | StopReason::Budget)
            ) {
                counts.truncated += 1;
            }
            if task.retried {
                counts.retried += 1;
            }
        }
        let share = |k: u64| {
            if n == 0 {
                0.0
            } else {
                round4(k as f64 / n as f64)
            }
        };
        // Every row was valid, so there is exactly one envelope; without one there is no rate.
        let Some(g) = self.groups.first() else {
            let mut gate = self;
            gate.problems.push(Problem {
                reason: Reason::NoRuns,
                source: "runs",
                message: "there are no runs: the file holds no attempt".into(),
                ..Problem::default()
            });
            return gate.refusal();
        };
        let card = self.card;
        let envelope = Envelope {
            access_class: g.access_class.clone(),
            server_class: g.server_class.clone(),
            timeout_s: g.timeout_s.clone(),
            token_budget: g.token_budget,
            card_sha256: card.map(|c| c.sha256.clone()),
        };
        let pass = share(counts.passed);
        let retry = share(counts.retried);
        let trunc = share(counts.truncated);
        let mut warnings = Vec::new();
        let mut sentence = format!(
            "On {n} task{} ({}, access {}, server {}, timeout {} s, budget {} tokens): first completed attempt passed on {} ({}); retry rate {}; truncation rate {}. Single envelope; not a product ranking.",
            if n == 1 { "" } else { "s" },
            match card {
                Some(c) => format!("card sha256 {}", &c.sha256[..12.min(c.sha256.len())]),
                None => "no card".into(),
            },
            printable(&envelope.access_class),
            printable(&envelope.server_class),
            printable(&envelope.timeout_s),
            envelope.token_budget,
            counts.passed,
            rate(pass),
            rate(retry),
            rate(trunc),
        );
        if card.is_some_and(|c| c.public_tasks) {
            let w = "Public tasks: hidden tests do not detect training leakage, so this rate cannot be cited as generalisation.";
            warnings.push(w.to_string());
            sentence.push(' ');
            sentence.push_str(w);
        }
        Verdict::Citeable(Citation {
            citeable: true,
            n_tasks: n,
            first_complete_pass_rate: pass,
            retry_rate: retry,
            truncation_rate: trunc,
            patch_apply_fail_rate: share(counts.patch_apply_failed),
            counts,
            envelope,
            question: card.and_then(|c| c.question.clone()),
            warnings,
            sentence,
        })
    }
}

/// *Missing* as the spec defines it: absent (checked by the caller), `null` or `""`.
pub(crate) fn is_missing(v: &Value) -> bool {
    matches!(v, Value::Null) || v.as_str() == Some("")
}

/// A value for a message: strings quoted, everything else as JSON, long values cut.
pub(crate) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn check_string(v: &Value) -> std::result::Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        v => Err(format!("must be a string, not {}", show(v))),
    }
}

/// A hash: 1 to 64 hex digits (either case; compared in lower case).
pub(crate) fn check_hex(v: &Value) -> std::result::Result<String, String> {
    match v {
        Value::String(s)
            if (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Ok(s.to_ascii_lowercase())
        }
        v => Err(format!(
            "must be a hex digest (1 to 64 hex digits), not {}",
            show(v)
        )),
    }
}

/// A positive finite number of seconds.
pub(crate) fn check_timeout(v: &Value) -> std::result::Result<Number, String> {
    match v {
        Value::Number(n) if n.as_f64().is_some_and(|f| f.is_finite() && f > 0.0) => Ok(n.clone()),
        v => Err(format!(
            "must be a positive number of seconds, not {}",
            show(v)
        )),
    }
}

/// A positive integer number of tokens.
pub(crate) fn check_budget(v: &Value) -> std::result::Result<u64, String> {
    match crate::json::count(v) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "must be a positive integer number of tokens, not {}",
            show(v)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    /// The seed's `ok.jsonl` row.
    const OK: &str = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"queue_wait_ms":840,"stop_reason":"pass","patch_sha256":"bb10"}"#;
    /// The seed's `gap.jsonl` row (no `queue_wait_ms`).
    const GAP: &str = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"stop_reason":"pass","patch_sha256":"bb10"}"#;

    fn base() -> Map<String, Value> {
        match serde_json::from_str(OK).unwrap() {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    /// A row of `task` at `attempt` stopping on `stop`, with `changes` applied (`None` removes).
    fn row(task: &str, attempt: u64, stop: &str, changes: &[(&str, Option<Value>)]) -> String {
        let mut m = base();
        m.insert("task_id".into(), json!(task));
        m.insert("attempt".into(), json!(attempt));
        m.insert("stop_reason".into(), json!(stop));
        for (k, v) in changes {
            match v {
                Some(v) => m.insert((*k).into(), v.clone()),
                None => m.remove(*k),
            };
        }
        Value::Object(m).to_string()
    }

    fn run_with(lines: &[String], card: Option<&Card>, max: u64) -> Verdict {
        let input = lines.join("\n");
        cite(
            input.as_bytes(),
            card,
            Options {
                max_line_bytes: max,
            },
        )
        .unwrap()
    }

    fn run(lines: &[String], card: Option<&Card>) -> Verdict {
        run_with(lines, card, 1 << 20)
    }

    fn citation(v: Verdict) -> Citation {
        match v {
            Verdict::Citeable(c) => c,
            Verdict::Refused(r) => panic!("refused: {}", Verdict::Refused(r).to_text()),
        }
    }

    fn refusal(v: Verdict) -> Refusal {
        match v {
            Verdict::Refused(r) => r,
            Verdict::Citeable(c) => panic!("citeable: {}", c.sentence),
        }
    }

    /// The refusal's only problem, checked to have `reason`.
    #[track_caller]
    fn only(v: Verdict, reason: Reason) -> Problem {
        let r = refusal(v);
        assert_eq!(r.missing.len(), 1, "{:#?}", r.missing);
        assert_eq!(r.reason, reason, "{:#?}", r.missing);
        assert_eq!(r.reasons, vec![reason]);
        r.missing.into_iter().next().unwrap()
    }

    fn card_for(tasks: &[&str], extra: Value) -> Card {
        let mut top = json!({
            "tasks": tasks.iter().map(|t| json!({
                "task_id": t,
                "repo_revision": "9f3c1ab",
                "prompt_sha256": "6d2ec1aa",
                "hidden_tests_sha256": "a91b0440",
                "allowed_files": ["src/parse.py"],
                "timeout_s": 180,
                "token_budget": 12000
            })).collect::<Vec<_>>()
        });
        if let Value::Object(extra) = extra {
            for (k, v) in extra {
                top[k] = v;
            }
        }
        let c = Card::from_bytes(&crate::json::canonical(&top));
        assert!(c.problems.is_empty(), "{:#?}", c.problems);
        c
    }

    #[test]
    fn the_seed_ok_row_is_citeable_with_rates_one_zero_zero() {
        let c = citation(run(&[OK.into()], None));
        assert_eq!(c.n_tasks, 1);
        assert_eq!(
            (c.first_complete_pass_rate, c.retry_rate, c.truncation_rate),
            (1.0, 0.0, 0.0)
        );
        assert_eq!(c.patch_apply_fail_rate, 0.0);
        assert_eq!(
            c.sentence,
            "On 1 task (no card, access free_model, server free_server, timeout 180 s, budget 12000 tokens): \
             first completed attempt passed on 1 (1.0); retry rate 0.0; truncation rate 0.0. \
             Single envelope; not a product ranking."
        );
    }

    #[test]
    fn the_seed_gap_row_is_refused_naming_queue_wait_ms() {
        let p = only(run(&[GAP.into()], None), Reason::IncompleteEnvelope);
        assert_eq!(p.field.as_deref(), Some("queue_wait_ms"));
        assert_eq!((p.row, p.line), (Some(0), Some(1)));
        assert_eq!(p.task_id, Some(json!("calc-parse-017")));
    }

    #[test]
    fn every_required_field_missing_absent_null_or_empty() {
        for field in RUN_FIELDS {
            for missing in [None, Some(Value::Null), Some(json!(""))] {
                let r = refusal(run(
                    &[row("t", 1, "pass", &[(field, missing.clone())])],
                    None,
                ));
                assert_eq!(r.reason, Reason::IncompleteEnvelope, "{field} {missing:?}");
                let p = &r.missing[0];
                assert_eq!(p.field.as_deref(), Some(field));
                assert_eq!(p.line, Some(1));
                let want_id = if field == "task_id" {
                    json!(missing.clone().unwrap_or(Value::Null))
                } else {
                    json!("t")
                };
                assert_eq!(p.task_id, Some(want_id), "{field}");
            }
        }
    }

    #[test]
    fn zero_and_false_are_values() {
        let c = citation(run(
            &[row(
                "t",
                1,
                "fail",
                &[
                    ("queue_wait_ms", Some(json!(0))),
                    ("cold_start", Some(json!(false))),
                ],
            )],
            None,
        ));
        assert_eq!(c.first_complete_pass_rate, 0.0);
    }

    #[test]
    fn the_empty_patch_hash_lets_an_honest_timeout_be_cited() {
        let c = citation(run(
            &[row(
                "t",
                1,
                "timeout",
                &[("patch_sha256", Some(json!(EMPTY_PATCH_SHA256)))],
            )],
            None,
        ));
        assert_eq!(c.truncation_rate, 1.0);
    }

    #[test]
    fn a_line_that_is_not_a_json_object_is_refused_with_its_line_number() {
        for bad in [
            "[1, 2]",
            "\"row\"",
            "17",
            "not json",
            "{\"task_id\": \"a\", \"task_id\": \"b\"}",
            "{\"a\": NaN}",
            "{} {}",
        ] {
            let lines = vec![OK.to_string(), String::new(), bad.to_string()];
            let p = only(run(&lines, None), Reason::IncompleteEnvelope);
            assert_eq!((p.row, p.line), (Some(1), Some(3)), "{bad}");
            assert!(
                p.message.contains("line 3") && p.message.contains("not a JSON object"),
                "{}",
                p.message
            );
        }
    }

    #[test]
    fn blank_lines_are_skipped_and_rows_count_non_blank_lines() {
        let lines = vec![
            "".into(),
            "  \t".into(),
            OK.into(),
            "".into(),
            GAP.replace("calc-parse-017", "other"),
        ];
        let p = only(run(&lines, None), Reason::IncompleteEnvelope);
        assert_eq!((p.row, p.line), (Some(1), Some(5)));
        assert!(
            p.message.starts_with("row 1 (line 5, task \"other\")"),
            "{}",
            p.message
        );
    }

    #[test]
    fn a_line_over_the_bound_is_refused_with_its_line_number() {
        let lines = vec![
            OK.to_string(),
            format!("{{\"pad\": \"{}\"}}", "x".repeat(400)),
            OK.replace("calc", "more"),
        ];
        let r = refusal(run_with(&lines, None, OK.len() as u64 + 10));
        assert_eq!(r.reason, Reason::IncompleteEnvelope);
        assert_eq!(r.missing.len(), 1, "{:#?}", r.missing);
        assert_eq!(r.missing[0].line, Some(2));
        assert!(
            r.missing[0].message.contains("line bound"),
            "{}",
            r.missing[0].message
        );
    }

    #[test]
    fn values_of_the_wrong_type_or_outside_the_vocabulary() {
        let cases: &[(&str, Value)] = &[
            ("task_id", json!(17)),
            ("prompt_sha256", json!("not-hex")),
            ("hidden_tests_sha256", json!(["a91b"])),
            ("patch_sha256", json!("zz")),
            ("access_class", json!(1)),
            ("server_class", json!(true)),
            ("timeout_s", json!(0)),
            ("timeout_s", json!(-180)),
            ("timeout_s", json!("180")),
            ("token_budget", json!(0)),
            ("token_budget", json!(12000.5)),
            ("token_budget", json!(12000.0)),
            ("attempt", json!(0)),
            ("attempt", json!(-1)),
            ("attempt", json!(1.0)),
            ("attempt", json!("1")),
            ("cold_start", json!("no")),
            ("cold_start", json!(0)),
            ("queue_wait_ms", json!(-1)),
            ("queue_wait_ms", json!("840")),
            ("stop_reason", json!("crash")),
            ("stop_reason", json!("PASS")),
        ];
        for (field, value) in cases {
            let r = refusal(run(
                &[row("t", 1, "pass", &[(field, Some(value.clone()))])],
                None,
            ));
            assert_eq!(
                r.reason,
                Reason::InvalidValue,
                "{field} = {value}: {:#?}",
                r.missing
            );
            assert_eq!(
                r.reasons,
                vec![Reason::InvalidValue],
                "{field} = {value}: {:#?}",
                r.missing
            );
            assert_eq!(r.missing[0].field.as_deref(), Some(*field));
        }
        // The good side of the same rules.
        for (field, value) in [
            ("timeout_s", json!(180.5)),
            ("queue_wait_ms", json!(12.25)),
            ("prompt_sha256", json!("6D2EC1AA")),
            ("stop_reason", json!("apply_error")),
        ] {
            citation(run(&[row("t", 1, "pass", &[(field, Some(value))])], None));
        }
    }

    #[test]
    fn run_lines_are_a_closed_format() {
        let p = only(
            run(&[row("t", 1, "pass", &[("model", Some(json!("x")))])], None),
            Reason::InvalidValue,
        );
        assert_eq!(p.field.as_deref(), Some("model"));
        assert!(p.message.contains("unknown field"), "{}", p.message);
    }

    #[test]
    fn mixed_envelopes_are_never_pooled_and_the_groups_are_named() {
        for (field, other) in [
            ("access_class", json!("paid_model")),
            ("server_class", json!("dedicated")),
            ("timeout_s", json!(300)),
            ("token_budget", json!(8000)),
        ] {
            let lines = vec![
                row("a", 1, "pass", &[]),
                row("b", 1, "pass", &[]),
                row("c", 1, "fail", &[(field, Some(other.clone()))]),
            ];
            let p = only(run(&lines, None), Reason::MixedEnvelopes);
            assert_eq!(p.field.as_deref(), Some(field));
            let groups = p.groups.unwrap();
            assert_eq!(groups.len(), 2);
            assert_eq!((groups[0].rows, groups[0].first_line), (2, 1));
            assert_eq!((groups[1].rows, groups[1].first_line), (1, 3));
            assert!(
                p.message.contains("2 envelopes") && p.message.contains(field),
                "{}",
                p.message
            );
        }
        // Numbers are compared by value: 180 and 180.0 are one envelope.
        citation(run(
            &[
                row("a", 1, "pass", &[]),
                row("b", 1, "pass", &[("timeout_s", Some(json!(180.0)))]),
            ],
            None,
        ));
    }

    #[test]
    fn one_task_with_two_hashes_is_a_mixed_envelope() {
        for field in ["prompt_sha256", "hidden_tests_sha256"] {
            let lines = vec![
                row("a", 1, "transport", &[]),
                row("a", 2, "pass", &[(field, Some(json!("ffff")))]),
            ];
            let p = only(run(&lines, None), Reason::MixedEnvelopes);
            assert_eq!((p.field.as_deref(), p.line), (Some(field), Some(2)));
        }
        // Different tasks may have different hashes; hex case does not matter.
        citation(run(
            &[
                row("a", 1, "pass", &[]),
                row("b", 1, "pass", &[("prompt_sha256", Some(json!("ffff")))]),
            ],
            None,
        ));
        citation(run(
            &[
                row("a", 1, "transport", &[]),
                row(
                    "a",
                    2,
                    "pass",
                    &[("prompt_sha256", Some(json!("6D2EC1AA")))],
                ),
            ],
            None,
        ));
    }

    #[test]
    fn attempts_start_at_one_run_without_gaps_and_never_repeat() {
        let dup = vec![row("a", 1, "transport", &[]), row("a", 1, "pass", &[])];
        let p = only(run(&dup, None), Reason::AttemptSequence);
        assert_eq!(p.line, Some(2));
        assert!(
            p.message
                .contains("attempt 1 appears again (the task's rows start on line 1)"),
            "{}",
            p.message
        );

        let late = vec![row("a", 2, "pass", &[])];
        let p = only(run(&late, None), Reason::AttemptSequence);
        assert!(p.message.contains("attempts start at 2"), "{}", p.message);

        let gap = vec![row("a", 1, "transport", &[]), row("a", 3, "pass", &[])];
        let p = only(run(&gap, None), Reason::AttemptSequence);
        assert!(p.message.contains("attempt 2 is missing"), "{}", p.message);

        // Rows in any order are fine.
        let c = citation(run(
            &[
                row("a", 2, "pass", &[]),
                row("b", 1, "pass", &[]),
                row("a", 1, "transport", &[]),
            ],
            None,
        ));
        assert_eq!(c.first_complete_pass_rate, 1.0);
        assert_eq!(c.retry_rate, 0.5);
    }

    #[test]
    fn an_unusable_attempt_does_not_also_break_the_sequence() {
        let lines = vec![
            row("a", 1, "pass", &[("attempt", Some(json!("1")))]),
            row("a", 2, "pass", &[]),
        ];
        let r = refusal(run(&lines, None));
        assert_eq!(r.reasons, vec![Reason::InvalidValue]);
    }

    #[test]
    fn no_runs() {
        only(run(&[], None), Reason::NoRuns);
        only(run(&["".into(), "   ".into()], None), Reason::NoRuns);
        let card = card_for(&["a", "b"], json!({}));
        let p = only(
            run(&[row("a", 1, "pass", &[])], Some(&card)),
            Reason::NoRuns,
        );
        assert_eq!((p.task_id, p.card_task), (Some(json!("b")), Some(1)));
        assert!(
            p.message.contains("card task 1 (b) has no run"),
            "{}",
            p.message
        );
    }

    #[test]
    fn runs_that_match_their_card_are_citeable_and_name_its_hash() {
        let card = card_for(&["a", "b"], json!({"question": "How many pass?"}));
        let c = citation(run(
            &[row("a", 1, "pass", &[]), row("b", 1, "fail", &[])],
            Some(&card),
        ));
        assert_eq!(
            c.envelope.card_sha256.as_deref(),
            Some(card.sha256.as_str())
        );
        assert!(
            c.sentence.starts_with(&format!(
                "On 2 tasks (card sha256 {}, access",
                &card.sha256[..12]
            )),
            "{}",
            c.sentence
        );
        assert_eq!(c.question.as_deref(), Some("How many pass?"));
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn runs_that_differ_from_their_card() {
        let card = card_for(&["a"], json!({}));
        let p = only(
            run(
                &[row("a", 1, "pass", &[]), row("x", 1, "pass", &[])],
                Some(&card),
            ),
            Reason::EnvelopeMismatch,
        );
        assert_eq!((p.task_id, p.line), (Some(json!("x")), Some(2)));
        assert!(p.message.contains("not on the card"), "{}", p.message);
        for (field, value) in [
            ("prompt_sha256", json!("ffff")),
            ("hidden_tests_sha256", json!("eeee")),
            ("timeout_s", json!(120)),
            ("token_budget", json!(9000)),
        ] {
            // Two rows of the task differ the same way: reported once for the task.
            let lines = vec![
                row("a", 1, "transport", &[(field, Some(value.clone()))]),
                row("a", 2, "pass", &[(field, Some(value.clone()))]),
            ];
            let p = only(run(&lines, Some(&card)), Reason::EnvelopeMismatch);
            assert_eq!((p.field.as_deref(), p.line), (Some(field), Some(1)));
            assert!(
                p.message.contains("differs from the card's"),
                "{}",
                p.message
            );
        }
        // By value: the card's 180 is the run's 180.0.
        citation(run(
            &[row("a", 1, "pass", &[("timeout_s", Some(json!(180.0)))])],
            Some(&card),
        ));
    }

    #[test]
    fn an_incomplete_card_refuses_the_runs() {
        let card = Card::from_bytes(br#"{"tasks": [{"task_id": "a", "repo_revision": "main"}]}"#);
        let r = refusal(run(&[row("a", 1, "pass", &[])], Some(&card)));
        assert_eq!(r.reason, Reason::EnvelopeMismatch);
        assert_eq!(
            r.reasons,
            vec![Reason::EnvelopeMismatch, Reason::InvalidValue]
        );
        assert!(
            r.missing.iter().all(|p| p.source == "card"),
            "{:#?}",
            r.missing
        );
    }

    #[test]
    fn public_tasks_add_the_generalisation_warning() {
        let card = card_for(&["a"], json!({"public_tasks": true}));
        let c = citation(run(&[row("a", 1, "pass", &[])], Some(&card)));
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.sentence.ends_with("cannot be cited as generalisation."),
            "{}",
            c.sentence
        );
        let card = card_for(&["a"], json!({"public_tasks": false}));
        assert!(citation(run(&[row("a", 1, "pass", &[])], Some(&card)))
            .warnings
            .is_empty());
    }

    #[test]
    fn reason_is_the_first_in_spec_order_and_reasons_lists_all() {
        let lines = vec![
            row("a", 1, "crash", &[]),
            row("b", 2, "pass", &[]),
            row("c", 1, "pass", &[("queue_wait_ms", None)]),
        ];
        let r = refusal(run(&lines, None));
        assert_eq!(r.reason, Reason::IncompleteEnvelope);
        assert_eq!(
            r.reasons,
            vec![
                Reason::IncompleteEnvelope,
                Reason::AttemptSequence,
                Reason::InvalidValue
            ]
        );
        let order: Vec<Reason> = r.missing.iter().map(|p| p.reason).collect();
        assert_eq!(order, r.reasons);
    }

    /// The spec's example: 12 tasks, 9 passed, 2 retried, 1 truncated.
    #[test]
    fn the_metrics_and_the_sentence() {
        let mut lines = Vec::new();
        for i in 0..12 {
            let t = format!("t{i:02}");
            match i {
                // Cold start, then a pass: retried, passed.
                0 => lines.push(row(&t, 1, "pass", &[("cold_start", Some(json!(true)))])),
                // A transport error does not complete; the second attempt is the first completed.
                1 => {
                    lines.push(row(&t, 1, "transport", &[]));
                    lines.push(row(&t, 2, "pass", &[]));
                }
                // Timed out: truncated, not passed.
                2 => lines.push(row(
                    &t,
                    1,
                    "timeout",
                    &[("patch_sha256", Some(json!(EMPTY_PATCH_SHA256)))],
                )),
                3 => lines.push(row(&t, 1, "apply_error", &[])),
                4 => lines.push(row(&t, 1, "fail", &[])),
                _ => lines.push(row(&t, 1, "pass", &[])),
            }
        }
        let c = citation(run(&lines, None));
        assert_eq!(c.n_tasks, 12);
        assert_eq!(
            c.counts,
            Counts {
                passed: 9,
                retried: 2,
                truncated: 1,
                patch_apply_failed: 1,
                rows: 13
            }
        );
        assert_eq!(c.first_complete_pass_rate, 0.75);
        assert_eq!(c.retry_rate, 0.1667);
        assert_eq!(c.truncation_rate, 0.0833);
        assert_eq!(c.patch_apply_fail_rate, 0.0833);
        assert_eq!(
            c.sentence,
            "On 12 tasks (no card, access free_model, server free_server, timeout 180 s, budget 12000 tokens): \
             first completed attempt passed on 9 (0.75); retry rate 0.1667; truncation rate 0.0833. \
             Single envelope; not a product ranking."
        );
        let text = Verdict::Citeable(c).to_text();
        assert!(
            text.contains("patch_apply_fail_rate: 0.0833 (harness loss"),
            "{text}"
        );
    }

    #[test]
    fn a_task_with_no_completed_attempt_counts_as_not_passed() {
        let lines = vec![
            row("a", 1, "transport", &[]),
            row("a", 2, "transport", &[]),
            row("b", 1, "pass", &[]),
        ];
        let c = citation(run(&lines, None));
        assert_eq!((c.first_complete_pass_rate, c.retry_rate), (0.5, 0.5));
    }

    #[test]
    fn a_timeout_is_a_completed_attempt() {
        // The first completed attempt timed out; a later pass does not count.
        let lines = vec![row("a", 1, "timeout", &[]), row("a", 2, "pass", &[])];
        let c = citation(run(&lines, None));
        assert_eq!(
            (c.first_complete_pass_rate, c.truncation_rate, c.retry_rate),
            (0.0, 1.0, 1.0)
        );
    }

    #[test]
    fn truncation_counts_only_the_first_attempt() {
        let lines = vec![row("a", 1, "transport", &[]), row("a", 2, "budget", &[])];
        let c = citation(run(&lines, None));
        assert_eq!(c.truncation_rate, 0.0);
    }

    #[test]
    fn rates_round_as_python_does() {
        // 1 of 32 is an exact binary tie: Python gives 0.0312.
        let mut lines: Vec<String> = (0..32)
            .map(|i| row(&format!("t{i}"), 1, "fail", &[]))
            .collect();
        lines[0] = row("t0", 1, "pass", &[]);
        let c = citation(run(&lines, None));
        assert_eq!(c.first_complete_pass_rate, 0.0312);
        assert!(
            c.sentence.contains("passed on 1 (0.0312)"),
            "{}",
            c.sentence
        );
    }

    #[test]
    fn problems_beyond_the_cap_are_counted_not_listed() {
        let lines: Vec<String> = (0..1500)
            .map(|i| row(&format!("t{i}"), 1, "pass", &[("queue_wait_ms", None)]))
            .collect();
        let r = refusal(run(&lines, None));
        assert_eq!(r.missing.len(), MAX_LISTED_PER_REASON);
        assert_eq!(r.omitted, Some(500));
        assert!(Verdict::Refused(r)
            .to_text()
            .contains("and 500 more problems not listed"));
    }

    #[test]
    fn packed_hex_round_trips_and_compares_exactly() {
        for h in ["a", "6d2ec1aa", "bb1", EMPTY_PATCH_SHA256] {
            assert_eq!(Hex::new(h).unwrap().to_string(), h);
        }
        assert_ne!(Hex::new("ab"), Hex::new("ab0"));
        assert_eq!(Hex::new(""), None);
        assert_eq!(Hex::new(&"a".repeat(65)), None);
    }

    #[test]
    fn attempt_sets_hold_small_and_large_numbers() {
        let mut a = AttemptSet::default();
        assert_eq!((a.min(), a.max(), a.len()), (None, None, 0));
        for n in [3, 1, 64, 65, 1_000_000] {
            assert!(a.insert(n), "{n}");
        }
        assert!(!a.insert(64) && !a.insert(65) && !a.insert(1));
        assert_eq!((a.min(), a.max(), a.len()), (Some(1), Some(1_000_000), 5));
        assert!(a.contains(3) && !a.contains(2) && a.contains(65) && !a.contains(66));
        let mut b = AttemptSet::default();
        b.insert(70);
        assert_eq!((b.min(), b.max()), (Some(70), Some(70)));
    }

    #[test]
    fn json_shapes() {
        let v: Value = serde_json::from_slice(&run(&[OK.into()], None).to_json()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "citeable",
            "n_tasks",
            "first_complete_pass_rate",
            "retry_rate",
            "truncation_rate",
            "patch_apply_fail_rate",
            "envelope",
            "sentence",
        ] {
            assert!(keys.contains(&k), "{k} in {keys:?}");
        }
        assert_eq!(v["citeable"], json!(true));
        assert_eq!(v["first_complete_pass_rate"], json!(1.0));
        assert_eq!(v["envelope"]["timeout_s"], json!(180));

        let bytes = run(&[GAP.into()], None).to_json();
        assert!(bytes.ends_with(b"}\n"));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["citeable"], json!(false));
        assert_eq!(v["refused"], json!(true));
        assert_eq!(v["reason"], json!("incomplete_envelope"));
        assert_eq!(v["reasons"], json!(["incomplete_envelope"]));
        assert_eq!(v["missing"][0]["field"], json!("queue_wait_ms"));
        assert_eq!(v["missing"][0]["row"], json!(0));
        assert!(v.get("omitted").is_none());
    }
}
