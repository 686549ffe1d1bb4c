//! The declaration's vocabulary and types: the closed lists `declaration.md` fixes (formats,
//! acceptance rules, standard row fields, native outcomes, limits, key orders, the schedule
//! bound), the typed parts a [`Declaration`](super::Declaration) holds (mode, kind, evidence,
//! pins, profile, tasks, schedule entries), and the small predicates on ids, paths and
//! schedule ids every reader shares.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

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
/// Native outcomes a Harbor task may declare (`harbor.md`).
pub const HARBOR_OUTCOMES: [&str; 4] = ["PASS", "FAIL", "ERROR", "UNSCORED"];
/// The limits a Harbor task may declare: at least one of them, nothing else.
pub const HARBOR_LIMITS: [&str; 5] = [
    "agent_seconds",
    "verifier_seconds",
    "cost_usd",
    "input_tokens",
    "output_tokens",
];
/// Limits that are counts (integers).
pub const COUNT_LIMITS: [&str; 6] = [
    "max_steps",
    "max_iterations",
    "message_limit",
    "token_limit",
    "input_tokens",
    "output_tokens",
];

/// The exception types whose reward Harbor's error policy counts as a valid measurement
/// (`harbor/models/trial/error_policy.py` of Harbor 0.25: the causes `AGENT_EXHAUSTED_BUDGET`
/// and `AGENT_REFUSED_TASK`); for every other type, known or not, it does not.
pub const HARBOR_REWARD_VALID_EXCEPTIONS: [&str; 7] = [
    "AgentTimeoutError",
    "ContextWindowExceededError",
    "OutputTokenExceededError",
    "ContextLengthExceededError",
    "OutputLengthExceededError",
    "AgentSafetyRefusalError",
    "ContentPolicyViolationError",
];

/// Whether Harbor's error policy counts the reward of a trial that raised this exception type.
pub fn harbor_reward_valid(exception_type: &str) -> bool {
    HARBOR_REWARD_VALID_EXCEPTIONS.contains(&exception_type)
}

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
pub const TASK_KEYS: [&str; 11] = [
    "id",
    "kind",
    "evidence",
    "expects",
    "definition",
    "inspect",
    "harbor",
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
    Harbor,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Arena => "arena",
            Kind::Scenario => "scenario",
            Kind::Inspect => "inspect",
            Kind::Harbor => "harbor",
        }
    }
    /// The status at which a PASS is a completion (for Inspect, the plain one: a PASS at
    /// `limit:<type>` is a completion too, see [`Kind::is_completion_status`]).
    pub fn completion_status(self) -> &'static str {
        match self {
            Kind::Arena => "COMPLETED",
            Kind::Scenario => "COMPLETE",
            Kind::Inspect | Kind::Harbor => "completed",
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
            // A trial whose exception Harbor's policy grades (the agent's budget ran out, it
            // refused) was measured: its reward counts, against the declared limits.
            Kind::Harbor => {
                status == "completed"
                    || status
                        .strip_prefix("exception:")
                        .is_some_and(harbor_reward_valid)
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
            Kind::Inspect | Kind::Harbor => None,
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
            Kind::Harbor => &HARBOR_OUTCOMES,
        }
    }
    /// Whether the kind's tasks may declare any non-empty subset of [`Kind::limit_names`]
    /// (Inspect, Harbor) rather than exactly all of them.
    pub fn limits_are_optional(self) -> bool {
        matches!(self, Kind::Inspect | Kind::Harbor)
    }
    /// The limits this kind declares (for Inspect and Harbor: may declare, at least one).
    pub fn limit_names(self) -> &'static [&'static str] {
        match self {
            Kind::Arena => &ARENA_LIMITS,
            Kind::Scenario => &SCENARIO_LIMITS,
            Kind::Inspect => &INSPECT_LIMITS,
            Kind::Harbor => &HARBOR_LIMITS,
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

/// A Harbor task's `harbor` block: which Harbor task, its content digest as Harbor computes
/// it, the agent its trials must run, and which reward decides.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HarborSpec {
    /// The Harbor task name as a trial's `result.json` records it (`task_name`).
    pub task: String,
    /// Harbor's content hash of the task directory, `sha256:<hex>` (a trial lock's
    /// `task.digest`).
    pub digest: String,
    /// The Harbor agent name the trials must run (`config.agent.name`).
    pub agent: String,
    /// The reward key that decides (`verifier_result.rewards`).
    pub reward: String,
    /// A trial passes when that reward is at least this.
    pub pass_at_least: f64,
}

/// Whether `s` is a Harbor content digest: `sha256:` and 64 lowercase hex digits.
pub fn is_harbor_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(is_sha256)
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
    /// A Harbor task's task name, digest, agent and deciding reward.
    #[serde(default)]
    pub harbor: Option<HarborSpec>,
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
pub(super) fn is_valid_task_name(name: &str) -> bool {
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

/// The schedule `tasks × repetitions` implies (the tasks given by their ids), in task order
/// then repetition order.
pub fn expected_schedule<'a>(
    task_ids: impl ExactSizeIterator<Item = &'a str>,
    repetitions: u64,
) -> Vec<ScheduleEntry> {
    let mut out = Vec::with_capacity(task_ids.len() * repetitions as usize);
    for id in task_ids {
        for rep in 1..=repetitions {
            out.push(ScheduleEntry {
                id: schedule_id(id, rep, repetitions),
                task: id.to_owned(),
                repetition: rep,
            });
        }
    }
    out
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
