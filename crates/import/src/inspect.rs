//! Inspect AI logs (`inspect.md`): `.eval` archives and `.json` logs read strictly, each
//! sample an attempt whose schedule id the declaration fixes (the task whose `inspect.task`
//! and `inspect.sample_id` match, repetition = epoch), converted into a row over the same row
//! model as the other kinds. This module adds no admission rule of its own: what the ledger
//! refuses (a row already filled, a record filling two rows, …) is the one write path's.
//!
//! [`json`](mod@json) is the reader that accepts `NaN`/`Infinity`/`-Infinity` (for Inspect logs only);
//! [`zip`] the bounded archive reader.
//!
//! By job: `read.rs` (a `--inspect` argument's logs read, samples and approvals), `index.rs`
//! (samples matched to declared rows, their names and record keys, the log's revision), `row.rs`
//! (a sample converted into a row).

use std::path::PathBuf;

pub mod json;
pub mod zip;

mod index;
mod read;
mod row;

pub use index::{
    label, record_id, resolve_prefix, revision_of, revision_prefixes, Resolved, SampleIndex, Target,
};
pub use read::{
    import_budget, load, read_eval, read_eval_within, read_json, read_log, read_log_within,
    MANIFESTS,
};
pub use row::{sample_row, Built, Env, Skipped};

use json::IVal;

/// One import's Inspect logs are bounded as a whole by this many times the input bound
/// (`--max-input-bytes`, which bounds each member's decompressed JSON and each `.json` log):
/// the bytes decompressed from every member of every `.eval` log read (a member counted each
/// time an entry names it) and the bytes of every `.json` log, together; and an `.eval`
/// archive's own size. See `docs/hardening.md` for the memory this gives.
pub const IMPORT_FACTOR: u64 = 4;

/// The note every Inspect row's output carries (`inspect.md`, `definition`).
pub const DEFINITION_NOTE: &str = "Inspect does not hash what a sample ran: the log cannot \
     prove that the pinned definition is what ran";

/// Which format a log is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Eval,
    Json,
}

/// One log as read: the eval spec, the run's status and its samples.
#[derive(Debug, Clone)]
pub struct InspectLog {
    /// The path as given (or found in the directory given).
    pub path: PathBuf,
    pub format: Format,
    /// The run's status; `None` when the log has no header yet (a run still being written).
    pub status: Option<String>,
    /// Whether the header (`header.json`, or a `.json` log's top level) was there.
    pub has_header: bool,
    /// The eval spec (`eval`).
    pub eval: IVal,
    pub samples: Vec<InspectSample>,
}

impl InspectLog {
    /// Whether the run had ended when the log was read.
    pub fn ended(&self) -> bool {
        self.has_header && self.status.as_deref().is_some_and(|s| s != "started")
    }
}

/// One human approval of a tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    pub function: String,
    pub call_id: String,
    pub decision: String,
    pub explanation: Option<String>,
}

/// One sample as read, with the exact bytes the log holds for it.
#[derive(Debug, Clone)]
pub struct InspectSample {
    /// `samples/<id>_epoch_<n>.json` (`.eval`) or `samples[<i>]` (`.json`).
    pub member: String,
    pub bytes: Vec<u8>,
    pub id: IVal,
    pub epoch: IVal,
    pub uuid: Option<String>,
    pub scores: IVal,
    pub error: IVal,
    pub error_retries: IVal,
    pub limit: IVal,
    pub model_usage: IVal,
    pub total_time: IVal,
    pub working_time: IVal,
    pub invalidation: IVal,
    /// The number of `messages`, when it is a list.
    pub messages: Option<usize>,
    /// Approvals whose approver is `human`.
    pub approvals: Vec<Approval>,
}

/// The fields of a sample that are built (the rest is checked, not built).
const SAMPLE_FIELDS: [&str; 11] = [
    "id",
    "epoch",
    "uuid",
    "scores",
    "error",
    "error_retries",
    "limit",
    "model_usage",
    "total_time",
    "working_time",
    "invalidation",
];

#[cfg(test)]
mod tests;
