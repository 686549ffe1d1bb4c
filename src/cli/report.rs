//! `git-ledger report`: classify every attempt of a ledger and say whether each section's
//! comparison is blocked. File mode reads `<DECLARATION> <LEDGER>`; ref mode (`--at REV`, or
//! no paths) reads the ledger commit directly, the same document `show` prints. Each mode is
//! one operation ([`crate::report::from_files`], [`crate::git::read::report_at`]); this parses,
//! calls it and prints.

use std::path::PathBuf;

use super::{term, InputOpts, Io};
use crate::error::{Error, Result};
use crate::{render, report};

/// How `report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// A readable table for a terminal (coloured on a terminal unless NO_COLOR is set).
    #[default]
    Text,
    /// One JSON object with stable keys (the same as --json).
    Json,
    /// A compact GitHub-flavoured Markdown summary for a pull-request or issue comment.
    Markdown,
    /// One self-contained HTML page (inline CSS and SVG, no scripts, no network).
    Html,
}

/// Classify every attempt; portfolio per section (live and fixture never pooled); blocked or not.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The pinned declaration (file mode).
    pub declaration: Option<PathBuf>,
    /// The ledger document (file mode).
    pub ledger: Option<PathBuf>,
    /// Report on this ledger commit (ref mode; default the ledger ref's tip).
    #[arg(long, value_name = "REV", conflicts_with_all = ["declaration", "ledger"])]
    pub at: Option<String>,
    /// The ledger ref (ref mode): a full ref name or a declaration id; default the only one.
    #[arg(long = "ref", value_name = "REF", conflicts_with_all = ["declaration", "ledger"])]
    pub ledger_ref: Option<String>,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Print the report as one JSON object (stable keys, each described in
    /// docs/reference/report-json.md); same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format: text, json, markdown (for a PR or issue comment) or html (one
    /// self-contained page: `> report.html`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text)]
    pub format: Format,
    /// Report on a ledger state `verify` refuses (ref mode), under a banner, first in every
    /// format, saying it is not admitted and why (without it such a state is refused, exit 2).
    #[arg(long)]
    pub unverified: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

impl ReportArgs {
    /// The format asked for (`--json` is `--format json`).
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }
}

pub fn run(args: ReportArgs, io: &mut Io) -> Result<i32> {
    let max = args.input.max_input_bytes;
    let report = match (&args.declaration, &args.ledger) {
        (Some(decl_path), Some(ledger_path)) => report::from_files(decl_path, ledger_path, max)?,
        (Some(_), None) => return Err(Error::Usage(
            "report needs <DECLARATION> <LEDGER> (file mode), or --at REV / --ref REF (ref mode)"
                .into(),
        )),
        _ => crate::git::read::report_at(
            args.repo.as_deref(),
            args.at.as_deref(),
            args.ledger_ref.as_deref(),
            max,
            args.unverified,
        )
        .map_err(|e| super::name_a_ledger(e, None, |id| format!("git ledger report --ref {id}")))?,
    };
    match args.format() {
        Format::Json => report::write_json(&report, io.out)?,
        format => write(&report, format, io)?,
    }
    Ok(0)
}

/// Print a built report in `format` (colour only for text on a terminal without NO_COLOR).
pub fn write(report: &report::Report, format: Format, io: &mut Io) -> Result<()> {
    match format {
        Format::Text => render::text::write_text_color(report, io.out, term::stdout_color())?,
        Format::Json => report::write_json(report, io.out)?,
        Format::Markdown => render::markdown::write(report, io.out)?,
        Format::Html => render::html::write(report, io.out)?,
    }
    Ok(())
}
