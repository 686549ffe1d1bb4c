//! Harbor trials (`harbor.md`): a job directory (every trial directory in it) or one trial
//! directory, each trial's `result.json` read strictly, matched to the declared task whose
//! `harbor.task` is its `task_name`, and converted into a row over the same row model as the
//! other kinds. The record id is `<job id>/<trial name>`; Harbor keeps the trial name when it
//! retries, so a retry's result is a second record for a row already filled, which the one
//! write path refuses as every retry. This module adds no admission rule of its own.
//!
//! By job: this file (the trial as read, its directory's job, `job.log`'s retried trials),
//! `row.rs` (a trial converted into a row), `time.rs` (Harbor's UTC timestamps).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::declaration::{Declaration, Task};
use crate::error::{Error, Reasons, Result};
use crate::json::{View, J};

mod read;
mod result;
mod row;
mod time;

use result::check_result;
pub use result::TrialResult;
pub use row::{trial_row, Env};
pub use time::parse_utc;

/// The agents that run no model: Harbor's `oracle` (the task's reference solution) and `nop`.
/// Their trials are fixture evidence, as `mockllm` runs are for Inspect.
pub const SCRIPTED_AGENTS: [&str; 2] = ["oracle", "nop"];

/// One trial as read.
#[derive(Debug, Clone)]
pub struct HarborTrial {
    /// The trial directory.
    pub dir: PathBuf,
    /// `result.json`'s exact bytes and their SHA-256 (the record; the row's
    /// `native_record.sha256`).
    pub record: crate::store::Record,
    /// What the row is built from, read from `result.json` (parsed strictly, checked).
    pub result: TrialResult,
    pub task_name: String,
    pub trial_name: String,
    /// `config.job_id`.
    pub job_id: String,
    /// The trial lock's `task.digest`; `None` when the trial has no `lock.json`.
    pub digest: Option<String>,
    /// The job's `n_attempts` (its `config.json`, 1 when omitted); `None` when the trial's
    /// job directory holds no `config.json`.
    pub n_attempts: Option<u64>,
    /// The first exception type the job's `job.log` names for this trial in a `Retrying` line.
    pub retried: Option<String>,
    /// Whether the trial was read from a job directory given (not a trial directory given).
    pub from_job_dir: bool,
    /// `result.json` relative to the job directory's parent (the row's evidence reference).
    pub evidence: String,
}

impl HarborTrial {
    /// The record id: `<job id>/<trial name>`.
    pub fn record_id(&self) -> String {
        format!("{}/{}", self.job_id, self.trial_name)
    }
    /// The record key: `harbor:<job id>/<trial name>`.
    pub fn key(&self) -> String {
        format!("harbor:{}", self.record_id())
    }
    /// How the trial is named in messages: its `result.json` as given.
    pub fn label(&self) -> String {
        self.dir.join("result.json").display().to_string()
    }
}

/// Read a `--harbor` argument: a job directory (it holds `job.log`, or no `result.json`:
/// every directory in it that holds a `result.json`, in name order) or a trial directory.
/// Returns the trials and notes for the output (trial directories without a result). A file
/// that cannot be read ends the call (exit 1); a result that breaks Harbor's format is
/// refused, with every other.
pub fn load(path: &Path, max_bytes: u64) -> Result<(Vec<HarborTrial>, Vec<String>)> {
    let meta =
        std::fs::metadata(path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    if !meta.is_dir() {
        return Err(Error::failed(format!(
            "{}: is not a directory (--harbor takes a Harbor job directory or a trial directory)",
            path.display()
        )));
    }
    let is_job = path.join("job.log").is_file() || !path.join("result.json").is_file();
    let mut reasons = Reasons::new();
    let mut trials = Vec::new();
    let mut notes = Vec::new();
    if is_job {
        let job = Job::read(path, max_bytes)?;
        // A directory entry's type is read from the listing; only a symbolic link is followed
        // (`is_dir`) to see whether it names a directory.
        let mut dirs: Vec<(std::ffi::OsString, PathBuf)> = std::fs::read_dir(path)
            .map_err(|e| Error::failed(format!("{}: {e}", path.display())))?
            .filter_map(|e| e.ok())
            .filter(|e| match e.file_type() {
                Ok(t) if t.is_dir() => true,
                Ok(t) if !t.is_symlink() => false,
                _ => e.path().is_dir(),
            })
            .map(|e| (e.file_name(), e.path()))
            .collect();
        // In name order: the paths' order (they differ only in their last component, one
        // name each, which paths compare as bytes), without comparing them component by
        // component.
        dirs.sort_unstable_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        let dirs: Vec<PathBuf> = dirs.into_iter().map(|(_, p)| p).collect();
        trials.reserve(dirs.len());
        // Every result.json is read by one parser, its containers given back after each (a
        // trial's 40-odd objects and lists are not allocated again for the next): the records
        // it borrows from are kept for the loop, each in its slot. The same for every
        // lock.json, by a parser of its own (its objects are of other shapes): a lock read by
        // a new parser each cost twice what a result did, per byte.
        let slots: Vec<std::cell::OnceCell<crate::store::Record>> =
            dirs.iter().map(|_| std::cell::OnceCell::new()).collect();
        let locks: Vec<std::cell::OnceCell<Vec<u8>>> =
            dirs.iter().map(|_| std::cell::OnceCell::new()).collect();
        let mut parser = crate::json::NodeParser::new();
        let mut lock_parser = crate::json::NodeParser::new();
        for ((dir, slot), lock) in dirs.iter().zip(&slots).zip(&locks) {
            let Some(bytes) = read::read_if_file(&dir.join("result.json"), max_bytes)? else {
                notes.push(format!(
                    "{}: no result.json (a trial not finished, or not a trial): not imported",
                    dir.display()
                ));
                continue;
            };
            let record = slot.get_or_init(|| crate::store::Record::new(bytes));
            let lock = Lock {
                slot: lock,
                parser: &mut lock_parser,
            };
            match read_trial(dir, record, &mut parser, lock, &job, max_bytes) {
                Ok(t) => trials.push(t),
                Err(Error::Refused(r)) => reasons.absorb(r),
                Err(e) => return Err(e),
            }
        }
        if trials.is_empty() && reasons.is_empty() {
            return Err(Error::refused(
                crate::refusal::Reason::new(
                    "no trial directory with a result.json: not a Harbor job directory, or a job no trial of which has finished"
                )
                .at(path.display())
            ));
        }
    } else {
        // A trial directory: its job is its parent (its config.json and job.log).
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let job = Job::read(parent, max_bytes)?;
        let record = crate::store::Record::new(crate::json::read_bounded(
            &path.join("result.json"),
            max_bytes,
        )?);
        let slot = std::cell::OnceCell::new();
        let lock = Lock {
            slot: &slot,
            parser: &mut crate::json::NodeParser::new(),
        };
        match read_trial(
            path,
            &record,
            &mut crate::json::NodeParser::new(),
            lock,
            &job,
            max_bytes,
        ) {
            Ok(mut t) => {
                t.from_job_dir = false;
                trials.push(t)
            }
            Err(Error::Refused(r)) => reasons.absorb(r),
            Err(e) => return Err(e),
        }
    }
    reasons.into_result()?;
    Ok((trials, notes))
}

/// What a job directory says about all its trials.
struct Job {
    dir: PathBuf,
    n_attempts: Option<u64>,
    /// Trial name → the first exception type of its `Retrying` lines in `job.log`.
    retried: HashMap<String, String>,
}

impl Job {
    fn read(dir: &Path, max_bytes: u64) -> Result<Job> {
        let config = dir.join("config.json");
        let n_attempts = if config.is_file() {
            let (_, v) = crate::json::read_document(&config, max_bytes)?;
            if !v.is_object() {
                return Err(Error::refused(format!(
                    "{}: not a Harbor job configuration (a JSON object)",
                    config.display()
                )));
            }
            match v.get("n_attempts") {
                None => Some(1),
                Some(n) => match crate::json::count(n).filter(|n| *n >= 1) {
                    Some(n) => Some(n),
                    None => {
                        return Err(Error::refused(format!(
                            "{}: n_attempts must be a positive integer, not {n}",
                            config.display()
                        )))
                    }
                },
            }
        } else {
            None
        };
        let log = dir.join("job.log");
        let retried = if log.is_file() {
            let bytes = crate::json::read_bounded(&log, max_bytes)?;
            retried_trials(&String::from_utf8_lossy(&bytes))
        } else {
            HashMap::new()
        };
        Ok(Job {
            dir: dir.to_path_buf(),
            n_attempts,
            retried,
        })
    }
}

/// The trials `job.log` says Harbor retried: each line `Trial <name> failed with exception
/// <type>. Retrying …` (`harbor/trial/queue.py`), the first line of a trial giving the first
/// try's exception.
pub fn retried_trials(log: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in log.lines() {
        let Some(at) = line.find("Trial ") else {
            continue;
        };
        let rest = &line[at + "Trial ".len()..];
        let Some((name, rest)) = rest.split_once(" failed with exception ") else {
            continue;
        };
        let Some((kind, _)) = rest.split_once(". Retrying") else {
            continue;
        };
        let plain = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
        if plain(name) && plain(kind) {
            out.entry(name.to_owned())
                .or_insert_with(|| kind.to_owned());
        }
    }
    out
}

/// Where a trial's `lock.json` is read: the slot that keeps its bytes for as long as the parser
/// that reads it (kept across trials, as the results' is) may borrow from them.
struct Lock<'l, 'a> {
    slot: &'a std::cell::OnceCell<Vec<u8>>,
    parser: &'l mut crate::json::NodeParser<'a>,
}

/// One trial from its `result.json` (`record`): read by the fast strict reader (`parser`, kept
/// across trials) straight into the fields a row needs when it takes the document and the
/// document passes every check;
/// otherwise parsed again by the ordinary strict parse, which names the fault (a truncated
/// file, a duplicate key, another harness's record, each field that breaks Harbor's format).
/// A document with a top-level `format` always takes the ordinary path (it may be another
/// harness's record, which is named as such).
fn read_trial<'a>(
    dir: &Path,
    record: &'a crate::store::Record,
    parser: &mut crate::json::NodeParser<'a>,
    lock_at: Lock<'_, 'a>,
    job: &Job,
    max_bytes: u64,
) -> Result<HarborTrial> {
    let path = dir.join("result.json");
    let bytes = record.bytes();
    let fast = read::parse_fast_with(parser, bytes).and_then(|n| {
        let taken = (n.view().get("format").is_none() && check_result(&n).is_empty())
            .then(|| TrialResult::read(&n));
        parser.recycle(n);
        taken
    });
    let result = match fast {
        Some(r) => r,
        None => {
            let label = path.display().to_string();
            let result = crate::json::parse_strict(bytes).map_err(|e| {
                Error::refused(
                    crate::refusal::Reason::new(format!(
                        "not strict JSON ({e}): a truncated or damaged Harbor result"
                    ))
                    .at(&label),
                )
            })?;
            // Another harness's record (or a ledger, a declaration): one reason that says what
            // it is.
            if let Some(other) =
                super::sniff::recognise(&result).filter(|s| s.reader != Some("--harbor"))
            {
                return Err(Error::refused(
                    crate::refusal::Reason::new(format!(
                        "not a Harbor trial result: it is {other}"
                    ))
                    .at(&label),
                ));
            }
            let problems = check_result(&result);
            if !problems.is_empty() {
                let mut r = Reasons::new();
                for p in problems {
                    r.push(crate::refusal::Reason::new(p.to_string()).at(&label));
                }
                return Err(r.into());
            }
            TrialResult::read(&result)
        }
    };
    let lock = dir.join("lock.json");
    let digest = match read::read_if_file(&lock, max_bytes)? {
        Some(b) => read_lock(
            lock_at.slot.get_or_init(|| b),
            lock_at.parser,
            &lock,
            max_bytes,
        )?,
        None => None,
    };
    let base = job.dir.parent().unwrap_or(Path::new(""));
    let evidence = match path.strip_prefix(base) {
        Ok(rel) if !base.as_os_str().is_empty() => rel.to_path_buf(),
        _ => path.clone(),
    };
    let evidence = evidence
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok(HarborTrial {
        dir: dir.to_path_buf(),
        retried: job.retried.get(&result.trial_name).cloned(),
        from_job_dir: true,
        record: record.clone(),
        task_name: result.task_name.clone(),
        trial_name: result.trial_name.clone(),
        job_id: result.job_id.clone(),
        result,
        digest,
        n_attempts: job.n_attempts,
        evidence,
    })
}

/// The `task.digest` of a trial lock's bytes (`lock`, its path): read by the fast strict reader
/// (`parser`, kept across trials) where it takes them, else by the ordinary strict parse, which
/// names the fault.
fn read_lock<'a>(
    bytes: &'a [u8],
    parser: &mut crate::json::NodeParser<'a>,
    lock: &Path,
    max_bytes: u64,
) -> Result<Option<String>> {
    match read::parse_fast_with(parser, bytes) {
        Some(v) => {
            let digest = lock_digest(&v, lock);
            parser.recycle(v);
            digest
        }
        None => lock_digest(
            &crate::json::parse_document(bytes, &lock.display().to_string(), max_bytes)?,
            lock,
        ),
    }
}

/// A trial lock's `task.digest` (`None` when null or absent), or why the lock is not one.
fn lock_digest<V: View>(v: &V, lock: &Path) -> Result<Option<String>> {
    let task = v.view().get("task");
    if !matches!(task, Some(J::Object(_))) {
        return Err(Error::refused(format!(
            "{}: not a Harbor trial lock (a JSON object whose task is an object)",
            lock.display()
        )));
    }
    match task.and_then(|t| t.get("digest")) {
        Some(J::String(d)) => Ok(Some(d.to_owned())),
        None | Some(J::Null) => Ok(None),
        Some(other) => Err(Error::refused(format!(
            "{}: task.digest must be a string, not {other}",
            lock.display()
        ))),
    }
}

/// The declared task of each Harbor task name.
pub struct TaskIndex<'d> {
    tasks: HashMap<&'d str, &'d Task>,
}

impl<'d> TaskIndex<'d> {
    pub fn new(decl: &'d Declaration) -> Self {
        let tasks = decl
            .tasks
            .iter()
            .filter_map(|t| Some((t.harbor.as_ref()?.task.as_str(), t)))
            .collect();
        TaskIndex { tasks }
    }
    /// The task whose `harbor.task` is `name`.
    pub fn task(&self, name: &str) -> Option<&'d Task> {
        self.tasks.get(name).copied()
    }
}

#[cfg(test)]
mod tests;
