//! The campaign declaration (`campaign-declaration/1`): strict parsing, every validation rule
//! of `declaration.md`, and the typed view the rest of the tool reads.
//!
//! A [`Declaration`] can only be built from bytes that pass every rule, so code holding one
//! never re-checks it. Its identity is the SHA-256 of those exact bytes. Drafts (the same
//! format without the computed fields) are parsed by the same code in [`Mode::Draft`].

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::{Error, Reasons, Result};
use crate::json;

mod canonical;
mod fast;

pub use canonical::canonical;

/// The format string of a declaration.
pub const FORMAT: &str = "campaign-declaration/1";

/// The acceptance rules the tool applies; a declaration must state each as `true`.
pub const ACCEPTANCE_RULES: [&str; 10] = [
    "one_row_per_schedule_id",
    "retry_needs_new_schedule",
    "unknown_is_null",
    "fixture_is_never_live",
    "pass_requires_passing_oracle",
    "verified_requires_evidence",
    "over_limit_is_not_verified",
    "stop_is_appropriate_only_when_expected",
    "non_pass_requires_reason",
    "deferred_carries_nothing",
];

/// The row fields `ledger.md` defines, in order. A declaration's `attempt_fields` starts with
/// exactly these and may append its own.
pub const STANDARD_FIELDS: [&str; 20] = [
    "schedule_id",
    "task_id",
    "repetition",
    "evidence",
    "native_outcome",
    "native_status",
    "reason",
    "source_revision",
    "runtime_identity",
    "actual_models_and_efforts",
    "runner_options",
    "option_deviations",
    "oracle_checks",
    "evidence_refs",
    "elapsed_seconds",
    "usage",
    "estimated_usd",
    "spent_budget",
    "interventions_decision_or_repair",
    "native_record",
];

/// Native outcomes an Arena task may declare.
pub const ARENA_OUTCOMES: [&str; 6] = ["PASS", "FAIL", "STOPPED", "ERROR", "SKIPPED", "RUNNING"];
/// Native outcomes a scenario task may declare.
pub const SCENARIO_OUTCOMES: [&str; 9] = [
    "PASS",
    "FALSE_COMPLETE",
    "HONEST_BLOCKER",
    "ERROR",
    "SKIPPED",
    "NOT_EXERCISED",
    "RUNNING",
    "INTERRUPTED_UNGRADED",
    "PENDING_UNGRADED",
];

/// Native outcomes an Inspect task may declare (`inspect.md`).
pub const INSPECT_OUTCOMES: [&str; 4] = ["PASS", "FAIL", "ERROR", "UNSCORED"];

/// The limits each kind declares, exactly.
pub const ARENA_LIMITS: [&str; 3] = ["cli_invocation_seconds", "oracle_seconds", "max_iterations"];
pub const SCENARIO_LIMITS: [&str; 2] = ["harness_minutes", "max_steps"];
/// The limits an Inspect task may declare: at least one of them, nothing else.
pub const INSPECT_LIMITS: [&str; 5] = [
    "message_limit",
    "token_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
];
/// Limits that are counts (integers).
pub const COUNT_LIMITS: [&str; 4] = [
    "max_steps",
    "max_iterations",
    "message_limit",
    "token_limit",
];

/// Top-level keys of a declaration, in the order they are written.
pub const TOP_KEYS: [&str; 15] = [
    "format",
    "id",
    "title",
    "status",
    "source_revision",
    "repetitions",
    "profile",
    "policy_files",
    "runner_tools",
    "writers",
    "runtime_requirements",
    "acceptance",
    "attempt_fields",
    "tasks",
    "schedule",
];
/// Task keys, in the order they are written.
pub const TASK_KEYS: [&str; 10] = [
    "id",
    "kind",
    "evidence",
    "expects",
    "definition",
    "inspect",
    "oracle",
    "upstream",
    "limits",
    "native_outcomes",
];

/// The most scheduled attempts (tasks × repetitions) a declaration may have. Without a bound, a
/// declaration well under the input bound could make every reader build a schedule of hundreds
/// of millions of rows (20,000 tasks × 999 repetitions fit in 9 MB).
pub const MAX_SCHEDULE: u64 = 1_000_000;

/// Whether bytes are a pinned declaration or a draft (computed fields left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Declaration,
    Draft,
}

/// A task's harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    Arena,
    Scenario,
    Inspect,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Arena => "arena",
            Kind::Scenario => "scenario",
            Kind::Inspect => "inspect",
        }
    }
    /// The status at which a PASS is a completion (for Inspect, the plain one: a PASS at
    /// `limit:<type>` is a completion too, see [`Kind::is_completion_status`]).
    pub fn completion_status(self) -> &'static str {
        match self {
            Kind::Arena => "COMPLETED",
            Kind::Scenario => "COMPLETE",
            Kind::Inspect => "completed",
        }
    }
    /// Whether a PASS at this status is a completion. Inspect scores a sample that hit a
    /// limit, so `limit:<type>` is one too (the spend against the declared limit decides
    /// whether it counts).
    pub fn is_completion_status(self, status: &str) -> bool {
        match self {
            Kind::Inspect => {
                status == "completed"
                    || status.strip_prefix("limit:").is_some_and(|t| !t.is_empty())
            }
            _ => status == self.completion_status(),
        }
    }
    /// The status at which a PASS is a stop; Inspect has none (an Inspect task expects
    /// completion).
    pub fn stop_status(self) -> Option<&'static str> {
        match self {
            Kind::Arena => Some("STOPPED"),
            Kind::Scenario => Some("BLOCKED"),
            Kind::Inspect => None,
        }
    }
    /// Whether a PASS at this status is a stop.
    pub fn is_stop_status(self, status: &str) -> bool {
        self.stop_status() == Some(status)
    }
    /// The native outcomes this kind may declare.
    pub fn allowed_outcomes(self) -> &'static [&'static str] {
        match self {
            Kind::Arena => &ARENA_OUTCOMES,
            Kind::Scenario => &SCENARIO_OUTCOMES,
            Kind::Inspect => &INSPECT_OUTCOMES,
        }
    }
    /// The limits this kind declares (for Inspect: may declare, at least one).
    pub fn limit_names(self) -> &'static [&'static str] {
        match self {
            Kind::Arena => &ARENA_LIMITS,
            Kind::Scenario => &SCENARIO_LIMITS,
            Kind::Inspect => &INSPECT_LIMITS,
        }
    }
}

/// Live or fixture evidence.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Evidence {
    Live,
    Fixture,
}

impl Evidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Live => "live",
            Evidence::Fixture => "fixture",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "live" => Some(Evidence::Live),
            "fixture" => Some(Evidence::Fixture),
            _ => None,
        }
    }
}

/// What a task expects of a well-behaved agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Expects {
    Completion,
    Stop,
}

/// A path pinned by a definition hash (`{"path", "sha256", "files"}`); hash and count are
/// `None` in a draft.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TreePin {
    pub path: String,
    pub sha256: Option<String>,
    pub files: Option<u64>,
}

/// A single file pinned by the SHA-256 of its bytes; the hash is `None` in a draft.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FilePin {
    pub path: String,
    pub sha256: Option<String>,
}

/// One role of the profile.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Role {
    pub model: String,
    /// `None` (JSON null) only in a declaration of Inspect tasks alone: a model run without a
    /// `reasoning_effort` (the harnesses' effort flags need a value).
    pub effort: Option<String>,
}

/// The selected profile as declared (absent content in a draft).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Profile {
    pub source: FilePin,
    pub name: Option<String>,
    pub provider: Option<String>,
    pub joint_planning: bool,
    pub roles: BTreeMap<String, Role>,
    pub extra_options: Vec<String>,
}

/// An Arena task's upstream pin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Upstream {
    pub repository: String,
    pub base_commit: String,
    pub reference_commit: String,
    pub checks: Vec<String>,
}

/// An Inspect task's `inspect` block: which sample of which Inspect task, and which score of
/// which scorer is its verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InspectSpec {
    /// The task name as the log records it (`eval.task`).
    pub task: String,
    /// The dataset sample's id: a string or an integer, compared by JSON value.
    pub sample_id: Value,
    /// The score that is the verdict.
    pub scorer: String,
    /// The score values that are a PASS (strings or numbers, compared by value).
    pub pass: Vec<Value>,
    /// The declared task arguments (`{}` when not declared).
    pub task_args: Map<String, Value>,
}

/// One declared task.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Task {
    pub id: String,
    pub kind: Kind,
    pub evidence: Evidence,
    pub expects: Expects,
    pub definition: TreePin,
    /// An Inspect task's sample, scorer and pass values.
    #[serde(default)]
    pub inspect: Option<InspectSpec>,
    pub oracle: Option<FilePin>,
    pub upstream: Option<Upstream>,
    /// Declared limits by name (finite, nonnegative).
    pub limits: BTreeMap<String, f64>,
    pub native_outcomes: Vec<String>,
}

impl Task {
    /// Whether the task's harness can produce this native outcome (`DEFERRED` always).
    pub fn allows_outcome(&self, outcome: &str) -> bool {
        outcome == "DEFERRED" || self.native_outcomes.iter().any(|o| o == outcome)
    }
}

/// One scheduled attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleEntry {
    pub id: String,
    pub task: String,
    pub repetition: u64,
}

/// Declarations at least this large are hashed on another core while they are parsed.
const PARALLEL_HASH_BYTES: usize = 1 << 20;

/// A validated declaration (or draft).
#[derive(Debug, Clone)]
pub struct Declaration {
    /// The exact bytes it was parsed from; `None` when it was rebuilt from its cached form
    /// ([`Declaration::from_cached_form`]), whose bytes are elsewhere (a Git blob).
    bytes: Option<Vec<u8>>,
    /// SHA-256 of its bytes, lowercase hex (its identity).
    pub sha256: String,
    /// The parsed document, without its `schedule` ([`Declaration::value`]); parsed from
    /// `value_json` when first asked for, in a declaration rebuilt from its cached form.
    value: std::sync::OnceLock<Value>,
    /// The document's JSON (checked as JSON when the cached form was read), if `value` is
    /// parsed only when asked for.
    value_json: Option<Box<[u8]>>,
    pub id: String,
    pub source_revision: Option<String>,
    pub repetitions: u64,
    pub profile: Profile,
    pub policy_files: Vec<FilePin>,
    pub runner_tools: TreePin,
    /// The allowed-signers file of the ledger's writers (`signing.md`), if declared.
    pub writers: Option<FilePin>,
    pub runtime_requirements: Map<String, Value>,
    pub attempt_fields: Vec<String>,
    pub tasks: Vec<Task>,
    task_index: HashMap<String, usize>,
    /// `attempt_fields` in key order (a row's members iterate so): a row has exactly the
    /// declared fields when its keys are these, in one pass without a lookup.
    attempt_keys: Vec<String>,
    /// Where each of [`STANDARD_FIELDS`] is in `attempt_keys`.
    standard_at: StandardAt,
}

/// Where each of [`STANDARD_FIELDS`] is among the members (in key order) of a row whose keys
/// are exactly a declaration's `attempt_fields`: `STANDARD_FIELDS[f]` is member `at[f]`.
pub type StandardAt = [usize; STANDARD_FIELDS.len()];

/// A declaration's parts, borrowed to be written or owned when read back
/// ([`Declaration::cached_form`]).
#[derive(serde::Serialize, serde::Deserialize)]
struct CachedForm<'a> {
    sha256: Cow<'a, str>,
    id: Cow<'a, str>,
    source_revision: Cow<'a, Option<String>>,
    repetitions: u64,
    profile: Cow<'a, Profile>,
    policy_files: Cow<'a, [FilePin]>,
    runner_tools: Cow<'a, TreePin>,
    #[serde(default)]
    writers: Cow<'a, Option<FilePin>>,
    runtime_requirements: Cow<'a, Map<String, Value>>,
    attempt_fields: Cow<'a, [String]>,
    tasks: Cow<'a, [Task]>,
}

impl Declaration {
    /// Parse and validate a pinned declaration from its exact bytes.
    pub fn parse(bytes: &[u8], max_input_bytes: u64) -> Result<Self> {
        Self::parse_mode(bytes, Mode::Declaration, max_input_bytes)
    }

    /// [`Declaration::parse`] of bytes the caller gives up: they become the declaration's
    /// [`bytes`](Declaration::bytes) without a copy (10.8 MB for a 100,000-row schedule).
    pub fn parse_vec(bytes: Vec<u8>, max_input_bytes: u64) -> Result<Self> {
        Self::parse_cow(Cow::Owned(bytes), Mode::Declaration, max_input_bytes)
    }

    /// Parse and validate bytes in the given mode.
    pub fn parse_mode(bytes: &[u8], mode: Mode, max_input_bytes: u64) -> Result<Self> {
        Self::parse_cow(Cow::Borrowed(bytes), mode, max_input_bytes)
    }

    fn parse_cow(input: Cow<'_, [u8]>, mode: Mode, max_input_bytes: u64) -> Result<Self> {
        // A large declaration's SHA-256 (its identity) is computed on another core while it is
        // parsed: 10.8 MB for a 100,000-row schedule, about as long as the parse itself.
        let (parsed, sha256) = std::thread::scope(|s| {
            let bytes: &[u8] = &input;
            let sha256 = (bytes.len() >= PARALLEL_HASH_BYTES)
                .then(|| s.spawn(move || crate::sha256_hex(bytes)));
            let parsed = Self::parse_value(bytes, mode, max_input_bytes);
            (
                parsed,
                sha256.map(|h| h.join().expect("hashing does not panic")),
            )
        });
        let (d, value) = parsed?;
        let sha256 = sha256.unwrap_or_else(|| crate::sha256_hex(&input));
        Ok(Declaration {
            bytes: Some(input.into_owned()),
            sha256,
            value: value.into(),
            ..d
        })
    }

    /// The validated declaration (without its bytes and hash) and its document without the
    /// schedule.
    fn parse_value(bytes: &[u8], mode: Mode, max_input_bytes: u64) -> Result<(Self, Value)> {
        // The fast path first (a schedule compared as it streams); anything it does not accept
        // is parsed and validated again by the ordinary path, which names the fault.
        if mode == Mode::Declaration && bytes.len() as u64 <= max_input_bytes {
            let checked = match fast::parse_canonical(bytes) {
                Some(top) => Some((top, true)),
                None => fast::parse(bytes),
            };
            if let Some((top, true)) = checked {
                // The key is there (a computed field); its entries were checked as they streamed.
                if let Some(checked) = Self::validate_without_schedule(top) {
                    return Ok(checked);
                }
            }
        }
        let mut value = json::parse_document(bytes, "declaration", max_input_bytes)?;
        let mut r = Reasons::new();
        let parsed = validate(&value, mode, &mut r, false);
        match parsed {
            Some(d) if r.is_empty() => {
                if let Value::Object(top) = &mut value {
                    top.remove("schedule");
                }
                Ok((d, value))
            }
            _ => {
                if r.is_empty() {
                    r.push("declaration is not valid");
                }
                Err(Error::Refused(r.into_vec()))
            }
        }
    }

    /// Validate a declaration's document whose `schedule` member was already found to be
    /// `tasks × repetitions` (and removed): everything but the schedule is checked.
    fn validate_without_schedule(mut top: Map<String, Value>) -> Option<(Self, Value)> {
        top.insert("schedule".to_owned(), Value::Null);
        let mut value = Value::Object(top);
        let mut r = Reasons::new();
        let d = validate(&value, Mode::Declaration, &mut r, true).filter(|_| r.is_empty())?;
        if let Value::Object(top) = &mut value {
            top.remove("schedule");
        }
        Some((d, value))
    }

    /// The declaration as the cache of checked declarations keeps it (`git::decl_cache`): its
    /// parts (everything but its bytes, its document and the indexes computed from the rest)
    /// and its document, each as JSON.
    pub(crate) fn cached_form(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let parts = CachedForm {
            sha256: Cow::Borrowed(&self.sha256),
            id: Cow::Borrowed(&self.id),
            source_revision: Cow::Borrowed(&self.source_revision),
            repetitions: self.repetitions,
            profile: Cow::Borrowed(&self.profile),
            policy_files: Cow::Borrowed(&self.policy_files),
            runner_tools: Cow::Borrowed(&self.runner_tools),
            writers: Cow::Borrowed(&self.writers),
            runtime_requirements: Cow::Borrowed(&self.runtime_requirements),
            attempt_fields: Cow::Borrowed(&self.attempt_fields),
            tasks: Cow::Borrowed(&self.tasks),
        };
        let parts = serde_json::to_vec(&parts).ok()?;
        Some((parts, serde_json::to_vec(self.value()).ok()?))
    }

    /// Rebuild a declaration from its [`cached form`](Declaration::cached_form). Nothing is
    /// validated again: the caller vouches that the form was made by this version of
    /// git-ledger from a declaration that parsed (the cache checks the version, the blob and a
    /// checksum). The document is only checked to be JSON; it is parsed when first asked for
    /// ([`Declaration::value`]). `None` if the parts are not that form.
    pub(crate) fn from_cached_form(parts: &[u8], document: &[u8]) -> Option<Self> {
        let form: CachedForm = serde_json::from_slice(parts).ok()?;
        serde_json::from_slice::<serde::de::IgnoredAny>(document).ok()?;
        if !is_sha256(&form.sha256) {
            return None;
        }
        let mut d = Self::assemble(form.sha256.to_string(), form)?;
        d.value_json = Some(document.into());
        Some(d)
    }

    /// A declaration of these parts, its indexes computed (no bytes, no document yet); `None`
    /// if `attempt_fields` lacks a standard field.
    fn assemble(sha256: String, form: CachedForm<'_>) -> Option<Self> {
        let tasks = form.tasks.into_owned();
        let task_index = (tasks.iter().enumerate())
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        let attempt_fields = form.attempt_fields.into_owned();
        let mut attempt_keys = attempt_fields.clone();
        attempt_keys.sort_unstable();
        let mut standard_at = StandardAt::default();
        for (at, f) in standard_at.iter_mut().zip(STANDARD_FIELDS) {
            *at = attempt_keys.binary_search_by(|k| k.as_str().cmp(f)).ok()?;
        }
        Some(Declaration {
            bytes: None,
            sha256,
            value: std::sync::OnceLock::new(),
            value_json: None,
            id: form.id.into_owned(),
            source_revision: form.source_revision.into_owned(),
            repetitions: form.repetitions,
            profile: form.profile.into_owned(),
            policy_files: form.policy_files.into_owned(),
            runner_tools: form.runner_tools.into_owned(),
            writers: form.writers.into_owned(),
            runtime_requirements: form.runtime_requirements.into_owned(),
            attempt_fields,
            tasks,
            task_index,
            attempt_keys,
            standard_at,
        })
    }

    /// The parsed document, without its `schedule` (which [`Declaration::schedule`] gives).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            let json = (self.value_json.as_deref())
                .expect("a declaration without its document was rebuilt with the document's JSON");
            serde_json::from_slice(json).expect("the cached document was checked to be JSON")
        })
    }

    /// The exact bytes the declaration was parsed from; `None` when it was rebuilt from its
    /// cached form (its bytes are then the Git blob it was cached under).
    pub fn bytes(&self) -> Option<&[u8]> {
        self.bytes.as_deref()
    }

    /// Read and validate a declaration file.
    pub fn read(path: &std::path::Path, max_input_bytes: u64) -> Result<Self> {
        let bytes = json::read_bounded(path, max_input_bytes)?;
        Self::parse_vec(bytes, max_input_bytes).map_err(|e| e.context(path.display()))
    }

    /// The task with this id.
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.task_index.get(id).map(|&i| &self.tasks[i])
    }

    /// The position of a schedule id in the schedule: `<task id>/<repetition>`, the repetition
    /// zero-padded to [`repetition_width`] (the schedule is exactly tasks × repetitions, so the
    /// position is computed, not looked up).
    pub fn schedule_position(&self, id: &str) -> Option<usize> {
        let (task, rep) = id.rsplit_once('/')?;
        let t = *self.task_index.get(task)?;
        if rep.len() != repetition_width(self.repetitions) {
            return None;
        }
        let rep = fast::digits_value(rep).filter(|r| (1..=self.repetitions).contains(r))?;
        Some(t * self.repetitions as usize + (rep - 1) as usize)
    }

    /// The number of scheduled attempts (tasks × repetitions).
    pub fn schedule_len(&self) -> usize {
        self.tasks.len() * self.repetitions as usize
    }

    /// The schedule (in a draft: the one it implies), in order: task order, then repetition
    /// order. Entries are made as they are read; the schedule is not held in memory.
    pub fn schedule(&self) -> impl ExactSizeIterator<Item = ScheduleEntry> + '_ {
        (0..self.schedule_len()).map(|i| self.schedule_at(i))
    }

    /// The entry at a position of the schedule (below [`Declaration::schedule_len`]).
    pub fn schedule_at(&self, position: usize) -> ScheduleEntry {
        let reps = self.repetitions as usize;
        let task = &self.tasks[position / reps].id;
        let repetition = (position % reps) as u64 + 1;
        ScheduleEntry {
            id: schedule_id(task, repetition, self.repetitions),
            task: task.clone(),
            repetition,
        }
    }

    /// The schedule entry with this id.
    pub fn schedule_entry(&self, id: &str) -> Option<ScheduleEntry> {
        self.schedule_position(id).map(|i| self.schedule_at(i))
    }

    /// The schedule position, task and repetition of a scheduled attempt, without building
    /// its entry.
    pub fn scheduled(&self, schedule_id: &str) -> Option<(usize, &Task, u64)> {
        let pos = self.schedule_position(schedule_id)?;
        let reps = self.repetitions as usize;
        Some((pos, &self.tasks[pos / reps], (pos % reps) as u64 + 1))
    }

    /// Whether an object's keys are exactly the declared `attempt_fields`: if so, where each
    /// standard field is among its members.
    pub fn attempt_positions<O: crate::json::Obj>(&self, row: &O) -> Option<&StandardAt> {
        (row.len() == self.attempt_keys.len()
            && (row.iter().zip(&self.attempt_keys))
                .all(|((k, _), f)| crate::json::same_key(k.as_bytes(), f.as_bytes())))
        .then_some(&self.standard_at)
    }

    /// The task of a scheduled attempt.
    pub fn task_of(&self, schedule_id: &str) -> Option<&Task> {
        self.schedule_entry(schedule_id)
            .and_then(|e| self.task(&e.task))
    }

    /// The first characters of the declaration's hash, for sentences and headings.
    pub fn short_hash(&self) -> &str {
        &self.sha256[..12]
    }
}

/// Whether `s` is a full commit id (40 or 64 lowercase hex digits).
pub fn is_full_commit(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && is_lower_hex(s)
}

/// Whether `s` is a lowercase hex SHA-256.
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && is_lower_hex(s)
}

/// Whether every byte of `s` is a lowercase hex digit: every byte is looked at, without a
/// branch each (the compiler checks many at once; every row carries two such ids).
fn is_lower_hex(s: &str) -> bool {
    s.bytes().fold(true, |ok, b| {
        ok & (b.is_ascii_digit() | (b'a'..=b'f').contains(&b))
    })
}

/// Whether `s` may be a declaration id (a ref name component). Besides the rules of
/// `declaration.md`, an id may not end in `.`: Git refuses such a ref name, so the ledger
/// `refs/ledgers/<id>` could never be created.
pub fn is_valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !s.starts_with('.')
        && !s.starts_with('-')
        && !s.contains("..")
        && !s.ends_with(".lock")
        && !s.ends_with('.')
}

/// Whether `name` may be a task name (`[A-Za-z0-9][A-Za-z0-9._-]*`, at most 100, no `..`).
fn is_valid_task_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphanumeric())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && name.len() <= 100
        && !name.contains("..")
}

/// Whether `p` is a clean repository-relative path.
pub fn is_repo_path(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.ends_with('/')
        && p.split('/').all(|c| {
            !c.is_empty() && c != "." && c != ".." && !c.contains('\\') && !c.contains('\0')
        })
}

/// The zero-padded width of repetition numbers in schedule ids.
pub fn repetition_width(repetitions: u64) -> usize {
    repetitions.to_string().len().max(2)
}

/// The schedule id of a task's repetition.
pub fn schedule_id(task: &str, repetition: u64, repetitions: u64) -> String {
    format!(
        "{task}/{repetition:0width$}",
        width = repetition_width(repetitions)
    )
}

/// The schedule `tasks × repetitions` implies, in task order then repetition order.
pub fn expected_schedule(tasks: &[Task], repetitions: u64) -> Vec<ScheduleEntry> {
    let mut out = Vec::with_capacity(tasks.len() * repetitions as usize);
    for t in tasks {
        for rep in 1..=repetitions {
            out.push(ScheduleEntry {
                id: schedule_id(&t.id, rep, repetitions),
                task: t.id.clone(),
                repetition: rep,
            });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Validation. Each helper records a reason naming the place and returns what it could read.

struct Ctx<'r> {
    r: &'r mut Reasons,
    mode: Mode,
}

impl Ctx<'_> {
    fn bad(&mut self, at: &str, msg: impl std::fmt::Display) {
        self.r.push(format!("declaration: {at}: {msg}"));
    }

    /// Check an object's keys: unknown keys refused, required keys present. In a draft the
    /// `computed` keys must be absent; in a declaration they are required.
    fn keys(
        &mut self,
        at: &str,
        m: &Map<String, Value>,
        required: &[&str],
        optional: &[&str],
        computed: &[&str],
    ) {
        for k in m.keys() {
            let known = required.contains(&k.as_str()) || optional.contains(&k.as_str());
            let is_computed = computed.contains(&k.as_str());
            if is_computed && self.mode == Mode::Draft {
                self.bad(
                    &join(at, k),
                    "a draft carries no computed field (pin computes it)",
                );
            } else if !known && !is_computed {
                self.bad(&join(at, k), "unknown key");
            }
        }
        for k in required {
            if !m.contains_key(*k) {
                self.bad(&join(at, k), "missing");
            }
        }
        if self.mode == Mode::Declaration {
            for k in computed {
                if !m.contains_key(*k) {
                    self.bad(&join(at, k), "missing");
                }
            }
        }
    }

    fn object<'v>(&mut self, at: &str, v: Option<&'v Value>) -> Option<&'v Map<String, Value>> {
        match v? {
            Value::Object(m) => Some(m),
            other => {
                self.bad(
                    at,
                    format!("must be an object, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn string<'v>(&mut self, at: &str, v: Option<&'v Value>) -> Option<&'v str> {
        match v? {
            Value::String(s) if !s.is_empty() => Some(s),
            Value::String(_) => {
                self.bad(at, "must not be empty");
                None
            }
            other => {
                self.bad(
                    at,
                    format!("must be a string, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn strings(&mut self, at: &str, v: Option<&Value>) -> Option<Vec<String>> {
        match v? {
            Value::Array(items) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        other => self.bad(
                            &format!("{at}[{i}]"),
                            format!("must be a string, not {}", json::type_name(other)),
                        ),
                    }
                }
                Some(out)
            }
            other => {
                self.bad(
                    at,
                    format!("must be a list of strings, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn repo_path(&mut self, at: &str, v: Option<&Value>) -> Option<String> {
        let s = self.string(at, v)?;
        if is_repo_path(s) {
            Some(s.to_owned())
        } else {
            self.bad(at, format!("{s:?} is not a repository-relative path"));
            None
        }
    }

    fn sha256(&mut self, at: &str, v: Option<&Value>) -> Option<String> {
        let v = v?;
        let s = self.string(at, Some(v))?;
        if is_sha256(s) {
            Some(s.to_owned())
        } else {
            self.bad(at, format!("{s:?} is not a lowercase hex SHA-256"));
            None
        }
    }

    fn count(&mut self, at: &str, v: Option<&Value>) -> Option<u64> {
        let v = v?;
        match json::count(v) {
            Some(n) => Some(n),
            None => {
                self.bad(at, format!("must be a nonnegative integer, not {v}"));
                None
            }
        }
    }

    fn boolean(&mut self, at: &str, v: Option<&Value>) -> Option<bool> {
        match v? {
            Value::Bool(b) => Some(*b),
            other => {
                self.bad(
                    at,
                    format!("must be a boolean, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn tree_pin(&mut self, at: &str, v: Option<&Value>) -> Option<TreePin> {
        let m = self.object(at, v)?;
        self.keys(at, m, &["path"], &[], &["sha256", "files"]);
        let path = self.repo_path(&join(at, "path"), m.get("path"));
        let sha256 = self.sha256(
            &join(at, "sha256"),
            m.get("sha256").filter(|_| self.mode == Mode::Declaration),
        );
        let files = self.count(
            &join(at, "files"),
            m.get("files").filter(|_| self.mode == Mode::Declaration),
        );
        if files == Some(0) {
            self.bad(
                &join(at, "files"),
                "must be at least 1 (an empty tree cannot be pinned)",
            );
        }
        Some(TreePin {
            path: path?,
            sha256,
            files,
        })
    }

    fn file_pin(&mut self, at: &str, v: Option<&Value>) -> Option<FilePin> {
        let m = self.object(at, v)?;
        self.keys(at, m, &["path"], &[], &["sha256"]);
        let path = self.repo_path(&join(at, "path"), m.get("path"));
        let sha256 = self.sha256(
            &join(at, "sha256"),
            m.get("sha256").filter(|_| self.mode == Mode::Declaration),
        );
        Some(FilePin {
            path: path?,
            sha256,
        })
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// Validate a parsed declaration. `schedule_checked`: the fast path already found the schedule
/// exactly `tasks × repetitions` (its value here is a placeholder).
fn validate(
    value: &Value,
    mode: Mode,
    r: &mut Reasons,
    schedule_checked: bool,
) -> Option<Declaration> {
    let mut c = Ctx { r, mode };
    let Value::Object(top) = value else {
        c.bad(
            "(top level)",
            format!("must be an object, not {}", json::type_name(value)),
        );
        return None;
    };
    c.keys(
        "",
        top,
        &[
            "format",
            "id",
            "repetitions",
            "profile",
            "policy_files",
            "runner_tools",
            "runtime_requirements",
            "attempt_fields",
            "tasks",
        ],
        // `acceptance` is required too; `validate_acceptance` reports its absence.
        &["title", "status", "acceptance", "writers"],
        &["source_revision", "schedule"],
    );
    match top.get("format") {
        Some(Value::String(s)) if s == FORMAT => {}
        Some(other) => c.bad("format", format!("must be {FORMAT:?}, not {other}")),
        None => {}
    }
    let id = c.string("id", top.get("id")).map(str::to_owned);
    if let Some(id) = &id {
        if !is_valid_id(id) {
            c.bad(
                "id",
                format!("{id:?} is not a valid ref name component (ASCII letters, digits, '.', '_', '-'; not starting with '.' or '-', no '..', not ending in '.' or '.lock', at most 100 characters)"),
            );
        }
    }
    for k in ["title", "status"] {
        if top.contains_key(k) {
            c.string(k, top.get(k));
        }
    }
    let source_revision = if mode == Mode::Declaration {
        let s = c.string("source_revision", top.get("source_revision"));
        match s {
            Some(s) if is_full_commit(s) => Some(s.to_owned()),
            Some(s) => {
                c.bad("source_revision", format!("{s:?} is not a full commit id (a branch, tag or abbreviation is never pinned)"));
                None
            }
            None => None,
        }
    } else {
        None
    };
    let repetitions = c.count("repetitions", top.get("repetitions"));
    if let Some(n) = repetitions {
        if !(1..=999).contains(&n) {
            c.bad("repetitions", format!("must be from 1 to 999, not {n}"));
        }
    }
    let profile = validate_profile(&mut c, top.get("profile"));
    let policy_files = match top.get("policy_files") {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| c.file_pin(&format!("policy_files[{i}]"), Some(v)))
            .collect(),
        Some(other) => {
            c.bad(
                "policy_files",
                format!("must be a list, not {}", json::type_name(other)),
            );
            Vec::new()
        }
        None => Vec::new(),
    };
    let runner_tools = c.tree_pin("runner_tools", top.get("runner_tools"));
    // `None`: not declared; `Some(None)`: declared but invalid (the reason is recorded).
    let writers = top.get("writers").map(|v| c.file_pin("writers", Some(v)));
    let runtime_requirements = validate_runtime(&mut c, top.get("runtime_requirements"));
    validate_acceptance(&mut c, top.get("acceptance"));
    let attempt_fields = validate_attempt_fields(&mut c, top.get("attempt_fields"));
    let tasks = validate_tasks(&mut c, top.get("tasks"));
    let implied = match (&tasks, repetitions) {
        (Some(tasks), Some(reps)) if (1..=999).contains(&reps) => {
            let n = tasks.len() as u64 * reps;
            if n > MAX_SCHEDULE {
                c.bad(
                    "schedule",
                    format!("tasks × repetitions is {n} scheduled attempts; at most {MAX_SCHEDULE} are accepted"),
                );
                false
            } else {
                true
            }
        }
        _ => false,
    };
    let schedule_ok = if mode == Mode::Declaration && !schedule_checked {
        let expected = match (&tasks, repetitions) {
            (Some(tasks), Some(reps)) if implied => Some(expected_schedule(tasks, reps)),
            _ => None,
        };
        validate_schedule(&mut c, top.get("schedule"), expected).is_some()
    } else {
        // A draft's schedule is the one it implies; the fast path checked a declaration's.
        implied
    };

    if let (Some(p), Some(tasks)) = (&profile, &tasks) {
        if let Some(t) = tasks.iter().find(|t| t.kind != Kind::Inspect) {
            for (name, _) in p.roles.iter().filter(|(_, r)| r.effort.is_none()) {
                c.bad(
                    &format!("profile.roles.{name}.effort"),
                    format!("null (no reasoning effort) is only for a declaration of inspect tasks; {} is an {} task, whose harness forwards an effort flag", t.id, t.kind.as_str()),
                );
            }
        }
    }
    let tasks = tasks?;
    if !schedule_ok {
        return None;
    }
    // Validated: `attempt_fields` holds every standard field, once.
    Declaration::assemble(
        String::new(),
        CachedForm {
            sha256: Cow::Borrowed(""),
            id: Cow::Owned(id?),
            source_revision: Cow::Owned(source_revision),
            repetitions: repetitions?,
            profile: Cow::Owned(profile?),
            policy_files: Cow::Owned(policy_files),
            runner_tools: Cow::Owned(runner_tools?),
            writers: Cow::Owned(match writers {
                None => None,
                Some(w) => Some(w?),
            }),
            runtime_requirements: Cow::Owned(runtime_requirements?),
            attempt_fields: Cow::Owned(attempt_fields?),
            tasks: Cow::Owned(tasks),
        },
    )
}

fn validate_profile(c: &mut Ctx, v: Option<&Value>) -> Option<Profile> {
    let m = c.object("profile", v)?;
    let content = [
        "name",
        "provider",
        "joint_planning",
        "roles",
        "extra_options",
    ];
    c.keys("profile", m, &["source"], &[], &content);
    let source = c.file_pin("profile.source", m.get("source"));
    if c.mode == Mode::Draft {
        return Some(Profile {
            source: source?,
            name: None,
            provider: None,
            joint_planning: false,
            roles: BTreeMap::new(),
            extra_options: Vec::new(),
        });
    }
    let name = c.string("profile.name", m.get("name")).map(str::to_owned);
    let provider = c
        .string("profile.provider", m.get("provider"))
        .map(str::to_owned);
    let joint_planning = c.boolean("profile.joint_planning", m.get("joint_planning"));
    let extra_options = c.strings("profile.extra_options", m.get("extra_options"));
    let roles = parse_roles(c, "profile.roles", m.get("roles"));
    Some(Profile {
        source: source?,
        name,
        provider,
        joint_planning: joint_planning?,
        roles: roles?,
        extra_options: extra_options?,
    })
}

/// Parse a profile's `roles` object (also used by `pin` on the profile file).
fn parse_roles(c: &mut Ctx, at: &str, v: Option<&Value>) -> Option<BTreeMap<String, Role>> {
    let m = c.object(at, v)?;
    if m.is_empty() {
        c.bad(at, "must declare at least one role");
    }
    let mut roles = BTreeMap::new();
    for (name, spec) in m {
        let rat = format!("{at}.{name}");
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            c.bad(
                &rat,
                "a role name is letters, digits, '-' or '_' (it names the --<role>-model flag)",
            );
        }
        let Some(spec) = c.object(&rat, Some(spec)) else {
            continue;
        };
        c.keys(&rat, spec, &["model", "effort"], &[], &[]);
        let model = c.string(&format!("{rat}.model"), spec.get("model"));
        // A null effort is a model run without one (Inspect); whether the declaration may say
        // so is checked against its tasks.
        let effort = match spec.get("effort") {
            Some(Value::Null) => Some(None),
            v => c
                .string(&format!("{rat}.effort"), v)
                .map(|e| Some(e.to_owned())),
        };
        if let (Some(model), Some(effort)) = (model, effort) {
            roles.insert(
                name.clone(),
                Role {
                    model: model.to_owned(),
                    effort,
                },
            );
        }
    }
    Some(roles)
}

/// Validate a profile file's content (what `pin` copies into the declaration).
pub fn validate_profile_file(value: &Value) -> Result<()> {
    let mut r = Reasons::new();
    let mut c = Ctx {
        r: &mut r,
        mode: Mode::Declaration,
    };
    if let Some(m) = c.object("profile file", Some(value)) {
        c.keys(
            "profile file",
            m,
            &[
                "name",
                "provider",
                "joint_planning",
                "roles",
                "extra_options",
            ],
            &[],
            &[],
        );
        c.string("profile file.name", m.get("name"));
        c.string("profile file.provider", m.get("provider"));
        c.boolean("profile file.joint_planning", m.get("joint_planning"));
        c.strings("profile file.extra_options", m.get("extra_options"));
        parse_roles(&mut c, "profile file.roles", m.get("roles"));
    }
    r.into_result()
}

fn validate_runtime(c: &mut Ctx, v: Option<&Value>) -> Option<Map<String, Value>> {
    let m = c.object("runtime_requirements", v)?;
    c.keys(
        "runtime_requirements",
        m,
        &[],
        &["python", "psutil", "native_provider", "packages"],
        &[],
    );
    for k in ["python", "psutil", "native_provider"] {
        if m.contains_key(k) {
            c.string(&format!("runtime_requirements.{k}"), m.get(k));
        }
    }
    if let Some(p) = m.get("packages") {
        if let Some(pm) = c.object("runtime_requirements.packages", Some(p)) {
            for (name, version) in pm {
                c.string(
                    &format!("runtime_requirements.packages.{name}"),
                    Some(version),
                );
            }
        }
    }
    Some(m.clone())
}

fn validate_acceptance(c: &mut Ctx, v: Option<&Value>) {
    let m = match v {
        Some(Value::Object(m)) => m,
        Some(other) => {
            c.bad(
                "acceptance",
                format!(
                    "weakens the acceptance rules: must be an object stating every rule as true, not {}",
                    json::type_name(other)
                ),
            );
            return;
        }
        None => {
            c.bad(
                "acceptance",
                "missing: weakens the acceptance rules (state every rule as true)",
            );
            return;
        }
    };
    for rule in ACCEPTANCE_RULES {
        match m.get(rule) {
            Some(Value::Bool(true)) => {}
            Some(other) => c.bad(
                &format!("acceptance.{rule}"),
                format!("weakens the acceptance rules: must be true, not {other}"),
            ),
            None => c.bad(
                &format!("acceptance.{rule}"),
                "weakens the acceptance rules: the rule is omitted (state it as true)",
            ),
        }
    }
    for k in m.keys() {
        if !ACCEPTANCE_RULES.contains(&k.as_str()) {
            c.bad(
                &format!("acceptance.{k}"),
                "weakens the acceptance rules: the tool does not know this rule",
            );
        }
    }
}

fn validate_attempt_fields(c: &mut Ctx, v: Option<&Value>) -> Option<Vec<String>> {
    let fields = c.strings("attempt_fields", v)?;
    let mut ok = true;
    for (i, std) in STANDARD_FIELDS.iter().enumerate() {
        match fields.get(i) {
            Some(f) if f == std => {}
            Some(f) => {
                c.bad(&format!("attempt_fields[{i}]"), format!("must be {std:?} (the fields of ledger.md in order, then added fields), not {f:?}"));
                ok = false;
                break;
            }
            None => {
                c.bad(
                    "attempt_fields",
                    format!("lacks {std:?} (every field of ledger.md, in order)"),
                );
                ok = false;
                break;
            }
        }
    }
    let mut seen = HashSet::new();
    for (i, f) in fields.iter().enumerate() {
        if f.is_empty() {
            c.bad(&format!("attempt_fields[{i}]"), "must not be empty");
            ok = false;
        }
        if !seen.insert(f.as_str()) {
            c.bad(
                &format!("attempt_fields[{i}]"),
                format!("{f:?} is listed twice"),
            );
            ok = false;
        }
    }
    ok.then_some(fields)
}

fn validate_tasks(c: &mut Ctx, v: Option<&Value>) -> Option<Vec<Task>> {
    let items = match v? {
        Value::Array(items) => items,
        other => {
            c.bad(
                "tasks",
                format!("must be a list, not {}", json::type_name(other)),
            );
            return None;
        }
    };
    if items.is_empty() {
        c.bad("tasks", "must declare at least one task");
    }
    let mut tasks = Vec::new();
    let mut ids = HashSet::new();
    // (Inspect task, sample id as JSON text) → the task that declares it: a sample fixes its
    // schedule id, so two tasks may not declare the same one.
    let mut samples: HashMap<(String, String), String> = HashMap::new();
    let mut all_ok = true;
    for (i, item) in items.iter().enumerate() {
        match validate_task(c, i, item) {
            Some(t) => {
                if !ids.insert(t.id.clone()) {
                    c.bad(
                        &format!("tasks[{i}].id"),
                        format!("{:?} repeats an id", t.id),
                    );
                    all_ok = false;
                }
                if let Some(spec) = &t.inspect {
                    let key = (spec.task.clone(), sample_key(&spec.sample_id));
                    if let Some(other) = samples.insert(key, t.id.clone()) {
                        c.bad(
                            &format!("tasks[{i}].inspect"),
                            format!(
                                "{} declares sample {} of Inspect task {:?} as {other} does: a sample fills one task's rows",
                                t.id, spec.sample_id, spec.task
                            ),
                        );
                        all_ok = false;
                    }
                }
                tasks.push(t);
            }
            None => all_ok = false,
        }
    }
    all_ok.then_some(tasks)
}

fn validate_task(c: &mut Ctx, i: usize, v: &Value) -> Option<Task> {
    let at0 = format!("tasks[{i}]");
    let m = c.object(&at0, Some(v))?;
    let label = m
        .get("id")
        .and_then(Value::as_str)
        .map(|id| format!("{at0} ({id})"))
        .unwrap_or(at0);
    let at = label.as_str();
    let before = c.r.len();
    let kind = match c.string(&join(at, "kind"), m.get("kind")) {
        Some("arena") => Some(Kind::Arena),
        Some("scenario") => Some(Kind::Scenario),
        Some("inspect") => Some(Kind::Inspect),
        Some(other) => {
            c.bad(
                &join(at, "kind"),
                format!("must be \"arena\", \"scenario\" or \"inspect\", not {other:?}"),
            );
            None
        }
        None => None,
    };
    // `limits` is required too; `validate_limits` reports its absence, once, with the reason.
    match kind {
        Some(Kind::Arena) => c.keys(
            at,
            m,
            &[
                "id",
                "kind",
                "evidence",
                "expects",
                "definition",
                "oracle",
                "upstream",
                "native_outcomes",
            ],
            &["limits"],
            &[],
        ),
        Some(Kind::Scenario) => {
            let common = [
                "id",
                "kind",
                "evidence",
                "expects",
                "definition",
                "native_outcomes",
            ];
            c.keys(at, m, &common, &["limits"], &[]);
        }
        Some(Kind::Inspect) => {
            let common = [
                "id",
                "kind",
                "evidence",
                "expects",
                "definition",
                "inspect",
                "native_outcomes",
            ];
            c.keys(at, m, &common, &["limits"], &[]);
        }
        None => {}
    }
    let id = c.string(&join(at, "id"), m.get("id")).map(str::to_owned);
    if let (Some(id), Some(kind)) = (&id, kind) {
        match id.split_once('/') {
            Some((k, name)) if k == kind.as_str() && is_valid_task_name(name) => {}
            _ => c.bad(
                &join(at, "id"),
                format!("{id:?} must be \"{}/<name>\", the name matching [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 characters, no '..')", kind.as_str()),
            ),
        }
    }
    let evidence = match c.string(&join(at, "evidence"), m.get("evidence")) {
        Some(s) => Evidence::parse(s).or_else(|| {
            c.bad(
                &join(at, "evidence"),
                format!("must be \"live\" or \"fixture\", not {s:?}"),
            );
            None
        }),
        None => None,
    };
    let expects = match c.string(&join(at, "expects"), m.get("expects")) {
        Some("completion") => Some(Expects::Completion),
        Some("stop") if kind == Some(Kind::Inspect) => {
            c.bad(
                &join(at, "expects"),
                "an inspect task expects \"completion\": Inspect has no stop status, so a PASS could never be a stop",
            );
            None
        }
        Some("stop") => Some(Expects::Stop),
        Some(s) => {
            c.bad(
                &join(at, "expects"),
                format!("must be \"completion\" or \"stop\", not {s:?}"),
            );
            None
        }
        None => None,
    };
    let definition = c.tree_pin(&join(at, "definition"), m.get("definition"));
    let (oracle, upstream) = if kind == Some(Kind::Arena) {
        let oracle = c.file_pin(&join(at, "oracle"), m.get("oracle"));
        (
            oracle,
            validate_upstream(c, &join(at, "upstream"), m.get("upstream")),
        )
    } else {
        (None, None)
    };
    let inspect = if kind == Some(Kind::Inspect) {
        validate_inspect(c, &join(at, "inspect"), m.get("inspect"))
    } else {
        None
    };
    let limits = kind.and_then(|k| validate_limits(c, &join(at, "limits"), m.get("limits"), k));
    let native_outcomes = c.strings(&join(at, "native_outcomes"), m.get("native_outcomes"));
    if let (Some(outcomes), Some(kind)) = (&native_outcomes, kind) {
        let mut seen = HashSet::new();
        for o in outcomes {
            if o == "DEFERRED" {
                c.bad(
                    &join(at, "native_outcomes"),
                    "DEFERRED is implied and is not listed",
                );
            } else if !kind.allowed_outcomes().contains(&o.as_str()) {
                c.bad(
                    &join(at, "native_outcomes"),
                    format!(
                        "{o:?} has no portfolio outcome for an {} task (allowed: {})",
                        kind.as_str(),
                        kind.allowed_outcomes().join(" ")
                    ),
                );
            }
            if !seen.insert(o) {
                c.bad(
                    &join(at, "native_outcomes"),
                    format!("{o:?} is listed twice"),
                );
            }
        }
    }
    if c.r.len() != before {
        return None;
    }
    Some(Task {
        id: id?,
        kind: kind?,
        evidence: evidence?,
        expects: expects?,
        definition: definition?,
        inspect,
        oracle,
        upstream,
        limits: limits?,
        native_outcomes: native_outcomes?,
    })
}

fn validate_upstream(c: &mut Ctx, at: &str, v: Option<&Value>) -> Option<Upstream> {
    let m = c.object(at, v)?;
    c.keys(
        at,
        m,
        &["repository", "base_commit", "reference_commit", "checks"],
        &[],
        &[],
    );
    let repository = c.string(&join(at, "repository"), m.get("repository"));
    let commit = |c: &mut Ctx, k: &str| {
        let s = c.string(&join(at, k), m.get(k))?;
        if is_full_commit(s) {
            Some(s.to_owned())
        } else {
            c.bad(&join(at, k), format!("{s:?} is not a full commit id"));
            None
        }
    };
    let base_commit = commit(c, "base_commit");
    let reference_commit = commit(c, "reference_commit");
    let checks = c.strings(&join(at, "checks"), m.get("checks"));
    Some(Upstream {
        repository: repository?.to_owned(),
        base_commit: base_commit?,
        reference_commit: reference_commit?,
        checks: checks?,
    })
}

fn validate_limits(
    c: &mut Ctx,
    at: &str,
    v: Option<&Value>,
    kind: Kind,
) -> Option<BTreeMap<String, f64>> {
    let Some(v) = v else {
        c.bad(
            at,
            "missing: every task declares its limits (spend is compared with them)",
        );
        return None;
    };
    let m = c.object(at, Some(v))?;
    let names = kind.limit_names();
    if kind == Kind::Inspect {
        return validate_inspect_limits(c, at, m);
    }
    let mut out = BTreeMap::new();
    for k in m.keys() {
        if !names.contains(&k.as_str()) {
            c.bad(
                &join(at, k),
                format!(
                    "an {} task declares exactly {}",
                    kind.as_str(),
                    names.join(", ")
                ),
            );
        }
    }
    for name in names {
        let lat = join(at, name);
        match m.get(*name) {
            None => c.bad(&lat, "missing limit"),
            Some(v) if COUNT_LIMITS.contains(name) => match json::count(v) {
                Some(n) => {
                    out.insert(name.to_string(), n as f64);
                }
                None => c.bad(
                    &lat,
                    format!("must be a nonnegative integer (a count), not {v}"),
                ),
            },
            Some(v) => match json::nonneg_number(v) {
                Some(f) => {
                    out.insert(name.to_string(), f);
                }
                None => c.bad(
                    &lat,
                    format!("must be a finite nonnegative number, not {v}"),
                ),
            },
        }
    }
    (out.len() == names.len()).then_some(out)
}

/// An Inspect task's limits: at least one of [`INSPECT_LIMITS`], nothing else; counts are
/// integers, seconds and USD finite nonnegative numbers.
fn validate_inspect_limits(
    c: &mut Ctx,
    at: &str,
    m: &Map<String, Value>,
) -> Option<BTreeMap<String, f64>> {
    let before = c.r.len();
    let mut out = BTreeMap::new();
    for (k, v) in m {
        let lat = join(at, k);
        if !INSPECT_LIMITS.contains(&k.as_str()) {
            c.bad(
                &lat,
                format!(
                    "an inspect task declares only {} (at least one)",
                    INSPECT_LIMITS.join(", ")
                ),
            );
        } else if COUNT_LIMITS.contains(&k.as_str()) {
            match json::count(v) {
                Some(n) => {
                    out.insert(k.clone(), n as f64);
                }
                None => c.bad(
                    &lat,
                    format!("must be a nonnegative integer (a count), not {v}"),
                ),
            }
        } else {
            match json::nonneg_number(v) {
                Some(f) => {
                    out.insert(k.clone(), f);
                }
                None => c.bad(
                    &lat,
                    format!("must be a finite nonnegative number, not {v}"),
                ),
            }
        }
    }
    if m.is_empty() {
        c.bad(
            at,
            format!(
                "an inspect task declares at least one of {} (spend is compared with them)",
                INSPECT_LIMITS.join(", ")
            ),
        );
    }
    (c.r.len() == before).then_some(out)
}

/// A sample id as a key compared by JSON value: a string and an integer differ, `1` and `1`
/// are the same.
pub fn sample_key(v: &Value) -> String {
    match v {
        Value::String(s) => format!("s:{s}"),
        other => format!("n:{other}"),
    }
}

/// Whether a JSON value may be an Inspect sample id: a string or an integer.
pub fn is_sample_id(v: &Value) -> bool {
    match v {
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// An Inspect task's `inspect` block.
fn validate_inspect(c: &mut Ctx, at: &str, v: Option<&Value>) -> Option<InspectSpec> {
    let m = c.object(at, v)?;
    let before = c.r.len();
    c.keys(
        at,
        m,
        &["task", "sample_id", "scorer", "pass"],
        &["task_args"],
        &[],
    );
    let task = c
        .string(&join(at, "task"), m.get("task"))
        .map(str::to_owned);
    let scorer = c
        .string(&join(at, "scorer"), m.get("scorer"))
        .map(str::to_owned);
    let sample_id = match m.get("sample_id") {
        Some(v) if is_sample_id(v) => Some(v.clone()),
        Some(v) => {
            c.bad(
                &join(at, "sample_id"),
                format!(
                    "must be a non-empty string or an integer (the dataset sample's id), not {v}"
                ),
            );
            None
        }
        None => None,
    };
    let pass = match m.get("pass") {
        Some(Value::Array(items)) => {
            let mut out: Vec<Value> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let ok =
                    matches!(item, Value::String(_)) || item.as_f64().is_some_and(f64::is_finite);
                if !ok {
                    c.bad(
                        &format!("{}[{i}]", join(at, "pass")),
                        format!("must be a string or a number (a score value), not {item}"),
                    );
                } else if out.iter().any(|o| json::value_eq(o, item)) {
                    c.bad(
                        &format!("{}[{i}]", join(at, "pass")),
                        format!("{item} is listed twice"),
                    );
                } else {
                    out.push(item.clone());
                }
            }
            if items.is_empty() {
                c.bad(
                    &join(at, "pass"),
                    "must list at least one score value that is a PASS",
                );
            }
            Some(out)
        }
        Some(other) => {
            c.bad(
                &join(at, "pass"),
                format!(
                    "must be a list of score values (strings or numbers), not {}",
                    json::type_name(other)
                ),
            );
            None
        }
        None => None,
    };
    let task_args = match m.get("task_args") {
        None => Some(Map::new()),
        Some(Value::Object(a)) => Some(a.clone()),
        Some(other) => {
            c.bad(
                &join(at, "task_args"),
                format!("must be an object, not {}", json::type_name(other)),
            );
            None
        }
    };
    if c.r.len() != before {
        return None;
    }
    Some(InspectSpec {
        task: task?,
        sample_id: sample_id?,
        scorer: scorer?,
        pass: pass?,
        task_args: task_args?,
    })
}

fn validate_schedule(
    c: &mut Ctx,
    v: Option<&Value>,
    expected: Option<Vec<ScheduleEntry>>,
) -> Option<Vec<ScheduleEntry>> {
    let items = match v? {
        Value::Array(items) => items,
        other => {
            c.bad(
                "schedule",
                format!("must be a list, not {}", json::type_name(other)),
            );
            return None;
        }
    };
    // The usual case first: every entry exactly the one expected. A large schedule (100,000
    // entries) is then checked without a message path, a copy or a set insert per entry; any
    // difference falls through to the entry-by-entry checks below, which name it.
    if let Some(exp) = &expected {
        if items.len() == exp.len() && items.iter().zip(exp).all(|(i, e)| is_entry(i, e)) {
            return expected;
        }
    }
    let expected = expected.as_deref();
    let mut entries = Vec::new();
    let mut ok = true;
    let mut seen = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("schedule[{i}]");
        let Some(m) = c.object(&at, Some(item)) else {
            ok = false;
            continue;
        };
        let before = c.r.len();
        c.keys(&at, m, &["id", "task", "repetition"], &[], &[]);
        let id = c.string(&join(&at, "id"), m.get("id"));
        let task = c.string(&join(&at, "task"), m.get("task"));
        let repetition = c.count(&join(&at, "repetition"), m.get("repetition"));
        if let Some(id) = id {
            if !seen.insert(id.to_owned()) {
                c.bad(&join(&at, "id"), format!("{id:?} repeats an id"));
            }
        }
        match (id, task, repetition) {
            (Some(id), Some(task), Some(repetition)) if c.r.len() == before => {
                entries.push(ScheduleEntry {
                    id: id.to_owned(),
                    task: task.to_owned(),
                    repetition,
                })
            }
            _ => ok = false,
        }
    }
    let expected = expected?;
    if !ok {
        return None;
    }
    if entries != expected {
        let mut diffs = Vec::new();
        for (i, (got, want)) in entries.iter().zip(expected).enumerate() {
            if got != want {
                diffs.push(format!(
                    "schedule[{i}] is {{{:?}, {:?}, {}}}, expected {{{:?}, {:?}, {}}}",
                    got.id, got.task, got.repetition, want.id, want.task, want.repetition
                ));
                if diffs.len() == 3 {
                    break;
                }
            }
        }
        c.bad(
            "schedule",
            format!(
                "is not exactly tasks × repetitions in task then repetition order ({} entries, expected {}){}{}",
                entries.len(),
                expected.len(),
                if diffs.is_empty() { "" } else { ": " },
                diffs.join("; ")
            ),
        );
        return None;
    }
    Some(entries)
}

/// Whether `item` is exactly the schedule entry `e`: `{"id", "task", "repetition"}` and nothing
/// else, with the same values.
fn is_entry(item: &Value, e: &ScheduleEntry) -> bool {
    let Value::Object(m) = item else {
        return false;
    };
    m.len() == 3
        && matches!(m.get("id"), Some(Value::String(s)) if *s == e.id)
        && matches!(m.get("task"), Some(Value::String(s)) if *s == e.task)
        && m.get("repetition").and_then(json::count) == Some(e.repetition)
}

#[cfg(test)]
mod tests;
