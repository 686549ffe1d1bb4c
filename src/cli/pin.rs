//! `git-ledger pin` and `git-ledger check`: build a declaration from a draft and Git objects,
//! and recompute every pinned hash of a declaration from local Git objects.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::error::Result;
use crate::git::pin;

/// Build a declaration from a draft and Git objects at a revision.
#[derive(Debug, clap::Args)]
pub struct PinArgs {
    /// The draft: the declaration format without the computed fields.
    pub draft: PathBuf,
    /// The revision to pin (resolved to a full commit id).
    #[arg(long, default_value = "HEAD")]
    pub revision: String,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Write the declaration to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputOpts,
}

/// Validate a declaration and recompute every pinned hash from local Git objects; with
/// --ready, also refuse a working tree that is not the declared revision.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The pinned declaration.
    pub declaration: PathBuf,
    /// The repository (default: discovered from the current directory); with --ready, the
    /// working tree the run will use.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Also refuse unless HEAD is the declared source_revision and nothing under a pinned path
    /// is modified, staged or untracked (run it before any harness).
    #[arg(long)]
    pub ready: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run_pin(args: PinArgs, io: &mut Io) -> Result<i32> {
    let mut bar: Option<super::term::Progress> = None;
    let pinned = pin::pin_file(
        args.repo.as_deref(),
        &args.draft,
        &args.revision,
        args.input.max_input_bytes,
        args.output.as_deref(),
        &mut |done, total| {
            bar.get_or_insert_with(|| {
                super::term::Progress::new("hashing pinned items", total as u64)
            })
            .set(done as u64)
        },
    );
    drop(bar);
    match pinned? {
        pin::Pinned::Written(d) => writeln!(
            io.err,
            "pinned {} to {}: {} tasks, {} scheduled attempts; sha256 {}",
            d.id, d.source_revision, d.tasks, d.scheduled, d.sha256
        )?,
        pin::Pinned::Bytes(bytes) => io.out.write_all(&bytes)?,
    }
    Ok(0)
}

pub fn run_check(args: CheckArgs, io: &mut Io) -> Result<i32> {
    let (report, ready) = crate::git::ready::check_file(
        args.repo.as_deref(),
        &args.declaration,
        args.input.max_input_bytes,
        args.ready,
    )?;
    if args.json {
        let mut v = serde_json::to_value(&report).expect("serialisable");
        v["ok"] = true.into();
        if let Some(r) = &ready {
            v["ready"] = serde_json::to_value(r).expect("serialisable");
        }
        io.out.write_all(&crate::json::canonical(&v))?;
    } else {
        writeln!(
            io.out,
            "{}: declaration {} (sha256 {}) matches commit {}: {} tasks, {} scheduled attempts, {} pinned items ({} files hashed)",
            args.declaration.display(),
            report.id,
            &report.sha256[..12],
            report.source_revision,
            report.tasks,
            report.scheduled,
            report.checked.len(),
            report.files
        )?;
        if let Some(r) = &ready {
            writeln!(
                io.out,
                "ready: HEAD is {} ({}) in {}; nothing modified, staged or untracked under {} pinned paths",
                r.head,
                r.branch
                    .as_deref()
                    .map_or("detached".to_owned(), |b| format!(
                        "branch {}",
                        b.strip_prefix("refs/heads/").unwrap_or(b)
                    )),
                r.worktree,
                r.pinned_paths.len()
            )?;
        }
    }
    Ok(0)
}
