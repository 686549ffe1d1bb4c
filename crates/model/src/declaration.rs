//! The campaign declaration (`campaign-declaration/1`): strict parsing, every validation rule
//! of `declaration.md`, and the typed view the rest of the tool reads.
//!
//! A [`Declaration`] can only be built from bytes that pass every rule, so code holding one
//! never re-checks it. Its identity is the SHA-256 of those exact bytes. Drafts (the same
//! format without the computed fields) are parsed by the same code in [`Mode::Draft`].
//!
//! This file owns the [`Declaration`] type and its parse paths (strict bytes, the fast path of
//! `declaration/fast.rs`, the cached form); the vocabulary and the typed parts are in
//! `declaration/vocabulary.rs`, the validation rules in `declaration/validation.rs`, the
//! canonical writer in `declaration/canonical.rs`.

use serde_json::{Map, Value};
use std::borrow::Cow;

use crate::error::{Error, Reasons, Result};
use crate::json;

mod canonical;
pub(crate) mod fast;
mod tasks;
mod validation;
mod vocabulary;

pub use canonical::canonical;
pub use tasks::{Iter as TaskIter, Tasks};
use validation::validate;
pub use validation::validate_profile_file;
pub use vocabulary::*;

/// Declarations at least this large are hashed on another core while they are parsed.
const PARALLEL_HASH_BYTES: usize = 1 << 20;

/// A validated declaration (or draft).
#[derive(Debug, Clone)]
pub struct Declaration {
    /// The exact bytes it was parsed from; `None` when it was rebuilt from its cached form
    /// ([`Declaration::from_cached_form`]), whose bytes are elsewhere (a Git blob), or read
    /// by [`Declaration::read_released`], which does not keep them.
    bytes: Option<Vec<u8>>,
    /// SHA-256 of its bytes, lowercase hex (its identity).
    pub sha256: String,
    /// The parsed document, without its `schedule` ([`Declaration::value`]); `None` in a
    /// declaration rebuilt from its cached form (no command that reads one needs it).
    value: Option<Value>,
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
    /// The tasks, in declared order (in a declaration rebuilt from its cached form, each read
    /// when first asked for).
    pub tasks: Tasks,
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
}

/// The cached form's parts: the declaration's parts, its task ids, and where each task's JSON
/// ends in the tasks' JSON that follows them ([`Tasks::cached`]).
#[derive(serde::Serialize, serde::Deserialize)]
struct CachedParts<'a> {
    parts: CachedForm<'a>,
    task_ids: Cow<'a, [String]>,
    task_ends: Vec<usize>,
}

impl Declaration {
    /// Parse and validate a pinned declaration from its exact bytes.
    pub fn parse(bytes: &[u8], max_input_bytes: u64) -> Result<Self> {
        Self::parse_mode(bytes, Mode::Declaration, max_input_bytes)
    }

    /// [`Declaration::parse`] of bytes the caller gives up: they become the declaration's
    /// [`bytes`](Declaration::bytes) without a copy (10.8 MB for a 100,000-row schedule).
    pub fn parse_vec(bytes: Vec<u8>, max_input_bytes: u64) -> Result<Self> {
        Self::parse_cow(Cow::Owned(bytes), Mode::Declaration, max_input_bytes, true)
    }

    /// Parse and validate bytes in the given mode.
    pub fn parse_mode(bytes: &[u8], mode: Mode, max_input_bytes: u64) -> Result<Self> {
        Self::parse_cow(Cow::Borrowed(bytes), mode, max_input_bytes, true)
    }

    /// [`Declaration::parse_mode`] by the ordinary path alone: the whole document parsed into
    /// a `Value` and validated, the fast path ([`fast`]) never tried. Every command parses with
    /// the fast path first; this is what it is measured against (`examples/fast_gain.rs`) and
    /// proved equal to (the `declaration` fuzz target: the same verdict, the same declaration).
    pub fn parse_ordinary(bytes: &[u8], mode: Mode, max_input_bytes: u64) -> Result<Self> {
        Self::parse_cow(Cow::Borrowed(bytes), mode, max_input_bytes, false)
    }

    fn parse_cow(
        input: Cow<'_, [u8]>,
        mode: Mode,
        max_input_bytes: u64,
        fast_path: bool,
    ) -> Result<Self> {
        let d = Self::parse_hashed(&input, None, mode, max_input_bytes, fast_path)?;
        Ok(Declaration {
            bytes: Some(input.into_owned()),
            ..d
        })
    }

    /// The declaration parsed and validated from `bytes`, with its hash and without its bytes.
    /// When `bytes` is a mapped file (`input`), the hash and the fast path's schedule give
    /// back each stretch of it once read.
    fn parse_hashed(
        bytes: &[u8],
        input: Option<&json::Input>,
        mode: Mode,
        max_input_bytes: u64,
        fast_path: bool,
    ) -> Result<Self> {
        // A large declaration's SHA-256 (its identity) is computed on another core while it is
        // parsed: 10.8 MB for a 100,000-row schedule, about as long as the parse itself.
        let (parsed, sha256) = std::thread::scope(|s| {
            let sha256 = (bytes.len() >= PARALLEL_HASH_BYTES).then(|| {
                s.spawn(move || match input {
                    Some(input) => input.sha256_released(),
                    None => crate::sha256_hex(bytes),
                })
            });
            let release = |r| {
                if let Some(input) = input {
                    input.release(r)
                }
            };
            let parsed = Self::parse_value(bytes, mode, max_input_bytes, fast_path, &release);
            (
                parsed,
                sha256.map(|h| h.join().expect("hashing does not panic")),
            )
        });
        let (d, value) = parsed?;
        let sha256 = sha256.unwrap_or_else(|| crate::sha256_hex(bytes));
        Ok(Declaration {
            bytes: None,
            sha256,
            value: Some(value),
            ..d
        })
    }

    /// The validated declaration (without its bytes and hash) and its document without the
    /// schedule.
    fn parse_value(
        bytes: &[u8],
        mode: Mode,
        max_input_bytes: u64,
        fast_path: bool,
        release: fast::Release,
    ) -> Result<(Self, Value)> {
        // The fast path first (a schedule compared as it streams); anything it does not accept
        // is parsed and validated again by the ordinary path, which names the fault.
        if fast_path && mode == Mode::Declaration && bytes.len() as u64 <= max_input_bytes {
            let checked = match fast::parse_canonical_releasing(bytes, release) {
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
                Err(Error::Refused(r))
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
    /// parts (everything but its bytes, its document and the indexes computed from the rest,
    /// with its task ids) as JSON, and the JSON of each task back to back.
    pub fn cached_form(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let (task_ids, tasks, task_ends) = self.tasks.cached_form()?;
        let parts = CachedParts {
            parts: CachedForm {
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
            },
            task_ids: Cow::Borrowed(task_ids),
            task_ends,
        };
        Some((serde_json::to_vec(&parts).ok()?, tasks))
    }

    /// Rebuild a declaration from its [`cached form`](Declaration::cached_form). Nothing is
    /// validated again: the caller vouches that the form was made by this version of
    /// git-ledger, under the same rules, from a declaration that parsed (the cache checks the
    /// version, the rules fingerprint, the blob and a checksum). Each task is deserialised when
    /// first read ([`Tasks`]); the document is not kept ([`Declaration::value`] is `None`).
    /// `entry` holds the parts at `parts`, and the tasks' JSON after them to its end (kept in
    /// `entry`'s own buffer, moved to its start: no second allocation). `None` if the parts are not that form.
    pub fn from_cached_form(mut entry: Vec<u8>, parts: std::ops::Range<usize>) -> Option<Self> {
        let form: CachedParts = serde_json::from_slice(entry.get(parts.clone())?).ok()?;
        if !is_sha256(&form.parts.sha256) {
            return None;
        }
        entry.drain(..parts.end);
        let tasks = Tasks::cached(form.task_ids.into_owned(), entry, form.task_ends.into())?;
        Self::assemble(form.parts.sha256.to_string(), form.parts, tasks)
    }

    /// A declaration of these parts and tasks, its indexes computed (no bytes, no document
    /// yet); `None` if `attempt_fields` lacks a standard field.
    fn assemble(sha256: String, form: CachedForm<'_>, tasks: Tasks) -> Option<Self> {
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
            value: None,
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
            attempt_keys,
            standard_at,
        })
    }

    /// The parsed document, without its `schedule` (which [`Declaration::schedule`] gives);
    /// `None` in a declaration rebuilt from its cached form.
    pub fn value(&self) -> Option<&Value> {
        self.value.as_ref()
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

    /// [`Declaration::read`] for a command that needs only what is parsed from the file, never
    /// its bytes ([`Declaration::bytes`] is `None`): `report` of a ledger file. A large file is
    /// mapped, not copied, and its hash and the fast path's comparison of its schedule give
    /// back each stretch once read: the 104 MB of a 1,000,000-row declaration were all
    /// resident while it was parsed. (A declaration the fast path does not take is parsed
    /// whole by the ordinary path, as before.)
    pub fn read_released(path: &std::path::Path, max_input_bytes: u64) -> Result<Self> {
        let input = json::read_streamed(path, max_input_bytes)?;
        Self::parse_hashed(
            &input,
            Some(&input),
            Mode::Declaration,
            max_input_bytes,
            true,
        )
        .map_err(|e| e.context(path.display()))
    }

    /// The task with this id.
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.by_id(id)
    }

    /// The position of a schedule id in the schedule: `<task id>/<repetition>`, the repetition
    /// zero-padded to [`repetition_width`] (the schedule is exactly tasks × repetitions, so the
    /// position is computed, not looked up).
    pub fn schedule_position(&self, id: &str) -> Option<usize> {
        let (task, rep) = id.rsplit_once('/')?;
        let t = self.tasks.position(task)?;
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
        let task = self.tasks.id(position / reps);
        let repetition = (position % reps) as u64 + 1;
        ScheduleEntry {
            id: schedule_id(task, repetition, self.repetitions),
            task: task.to_owned(),
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
        Some((pos, self.tasks.get(pos / reps), (pos % reps) as u64 + 1))
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
        self.scheduled(schedule_id).map(|(_, task, _)| task)
    }

    /// The first characters of the declaration's hash, for sentences and headings.
    pub fn short_hash(&self) -> &str {
        &self.sha256[..12]
    }
}

#[cfg(test)]
mod tests;
