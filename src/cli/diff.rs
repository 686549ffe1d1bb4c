//! `git-ledger diff <REV-A> <REV-B>` (and `--files A.json B.json DECLARATION`): the rows that
//! differ, the change of every portfolio count per section, and whether B follows A. The diff
//! itself is `git::diff`'s; this parses the arguments, calls it and prints.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::error::{Error, Result};
use crate::ledger_diff;

/// How `diff` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// Readable text: a summary, then per-field diffs (all with --full).
    Text,
    /// One JSON object (the same as --json).
    Json,
    /// One self-contained HTML page (inline CSS, no scripts, no network).
    Html,
}

/// What changed between two ledger states, and whether B follows A by admitted steps.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// Ledger state A: a revision (ref, commit id, REF~N), or a ledger file with --files.
    pub a: String,
    /// Ledger state B (default: the tip of the ledger ref --ref names, or of the only one).
    pub b: Option<String>,
    /// With --files: the declaration both ledger files follow.
    pub declaration: Option<PathBuf>,
    /// Compare two ledger files instead of two commits.
    #[arg(long)]
    pub files: bool,
    /// Show every changed row's per-field diff (text and HTML show them by default only when
    /// at most 20 rows changed; --json is always complete).
    #[arg(long)]
    pub full: bool,
    /// Print the diff as one JSON object (same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format: text, json, or html (one self-contained page: `> diff.html`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// The ledger ref whose tip is state B when B is not given (a full ref name or a
    /// declaration id; default the only one), as with every other command.
    #[arg(long = "ref", value_name = "REF")]
    pub ledger_ref: Option<String>,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputOpts,
}

impl DiffArgs {
    /// The format asked for (`--json` is `--format json`).
    pub fn format(&self) -> DiffFormat {
        if self.json {
            DiffFormat::Json
        } else {
            self.format
        }
    }
}

pub fn run(args: DiffArgs, io: &mut Io) -> Result<i32> {
    let max = args.input.max_input_bytes;
    let d = match (args.files, &args.b, &args.declaration) {
        (true, Some(b), Some(decl)) if args.ledger_ref.is_none() => {
            crate::git::diff::files(decl, &args.a, b, max)?
        }
        (true, ..) => {
            return Err(Error::Usage(
                "diff --files needs <A.json> <B.json> <DECLARATION> (and no --ref)".into(),
            ))
        }
        (false, _, Some(_)) => {
            return Err(Error::Usage(
                "diff takes two revisions (or --files A.json B.json DECLARATION)".into(),
            ))
        }
        (false, Some(_), None) if args.ledger_ref.is_some() => {
            return Err(Error::Usage(format!(
                "diff: B and --ref both name state B; give `git ledger diff {} <B>` or `git ledger diff {} --ref <REF>` (B: the ref's tip)",
                args.a, args.a
            )))
        }
        (false, b, None) => crate::git::diff::commits_in(
            args.repo.as_deref(),
            &args.a,
            b.as_deref(),
            args.ledger_ref.as_deref(),
            max,
        )
        .map_err(|e| {
            super::name_a_ledger(e, None, |id| {
                format!("git ledger diff {} --ref {id}", args.a)
            })
        })?,
    };
    match args.format() {
        DiffFormat::Json => ledger_diff::write_json(&d, io.out)?,
        DiffFormat::Text => ledger_diff::write_text(&d, args.full, io.out)?,
        DiffFormat::Html => crate::render::html_diff::write(&d, args.full, io.out)?,
    }
    Ok(0)
}
