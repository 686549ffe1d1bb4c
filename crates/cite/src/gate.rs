//! The streaming gate: each run line checked and folded into small per-task state (hashes
//! packed, attempt numbers as bits), then dropped; the card compared; the problems counted and
//! listed; and at the end the verdict, with the three metrics and the sentence when citeable.

use serde_json::{Number, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::values::{check_budget, check_hex, check_string, check_timeout, is_missing, show};
use super::verdict::printable;
use super::{
    lines, rate, round4, Card, Citation, Counts, Envelope, EnvelopeGroup, FieldCount, Problem,
    Reason, Refusal, StopReason, Verdict, MAX_GROUPS, MAX_LISTED_PER_REASON, RUN_FIELDS,
};

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
///
/// Packed and shown by hand, a digit (nibble) at a time, not through faster-hex: the digests
/// are 1 to 64 digits, an odd count included, and faster-hex reads and writes whole bytes.
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
        // Grouped by reason in cite.md's order; within a reason, in the order found.
        missing.sort_by_key(|p| p.reason);
        let total: u64 = self.problems.counts.iter().sum();
        let omitted = total - missing.len() as u64;
        let mut fields = self.fields;
        // By reason, then cite.md's field order; unknown fields after, in the order found.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EMPTY_PATCH_SHA256;

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
}
