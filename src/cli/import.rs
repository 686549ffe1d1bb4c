//! `git-ledger import`: fill DEFERRED rows from native harness records.

use clap::{Arg, ArgAction, ArgMatches, FromArgMatches};
use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::error::{Error, Result};
use crate::import::batch::Source;
use crate::import::call::{self, Imported, Options, Outcome, Summary};

/// Fill DEFERRED rows from native records: scenario runs (`result.json` or its evidence
/// directory), Arena attempts (a store directory holding `results.sqlite3`, and an attempt
/// id), Inspect AI logs (`.eval`, `.json`, or a directory of them) and Harbor jobs (a job
/// directory or a trial directory). A scenario or Arena record names the schedule id it
/// fills; an Inspect sample fills the row its declared task and epoch fix; a Harbor trial the
/// lowest DEFERRED repetition of the task that declares its Harbor task; nothing is matched by
/// guessing. All or nothing: any refusal leaves the ledger
/// unchanged (exit 2).
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub target: super::LedgerTarget,
    #[command(flatten)]
    pub records: Records,
    /// The evaluator's admission record (pinned runtime keys and `dependencies`), added to
    /// every row this call imports.
    #[arg(long, value_name = "FILE")]
    pub runtime_identity: Option<PathBuf>,
    /// Skip (and list) Inspect samples and Harbor trials that no declared task names, instead
    /// of refusing them.
    #[arg(long)]
    pub skip_undeclared: bool,
    /// The commit the Harbor trials ran from (Harbor records none): the evaluator's statement,
    /// written as every Harbor row's source_revision (without it: null, with a note).
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,
    /// Check everything the import would write and print it (rows, outcomes, gaps, the commit
    /// message), writing nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

/// The records, in the order given on the command line (`--scenario` and `--arena` mixed).
#[derive(Debug, Clone, Default)]
pub struct Records(pub Vec<Source>);

impl clap::Args for Records {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            Arg::new("scenario")
                .long("scenario")
                .num_args(2)
                .value_names(["ID", "PATH"])
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill schedule id ID from a scenario run's result.json or evidence directory (repeatable)"),
        )
        .arg(
            Arg::new("arena")
                .long("arena")
                .num_args(3)
                .value_names(["ID", "STORE", "ATTEMPT"])
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill schedule id ID from attempt ATTEMPT of the Arena store directory STORE (repeatable)"),
        )
        .arg(
            Arg::new("inspect")
                .long("inspect")
                .num_args(1..)
                .value_name("LOG.eval|LOG.json|DIR")
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill the rows the declaration fixes for each sample of these Inspect logs (a directory: every .eval and .json log directly in it, in name order; repeatable)"),
        )
        .arg(
            Arg::new("harbor")
                .long("harbor")
                .num_args(1..)
                .value_name("JOB-DIR|TRIAL-DIR")
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill a row of the declared task for each trial of these Harbor job directories (every trial directory in it, in name order) or trial directories (repeatable)"),
        )
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for Records {
    fn from_arg_matches(m: &ArgMatches) -> std::result::Result<Self, clap::Error> {
        let mut out: Vec<(usize, Source)> = Vec::new();
        if let (Some(values), Some(indices)) =
            (m.get_many::<String>("harbor"), m.indices_of("harbor"))
        {
            for (v, i) in values.zip(indices) {
                out.push((
                    i,
                    Source::Harbor {
                        path: PathBuf::from(v),
                    },
                ));
            }
        }
        if let (Some(values), Some(indices)) =
            (m.get_many::<String>("inspect"), m.indices_of("inspect"))
        {
            for (v, i) in values.zip(indices) {
                out.push((
                    i,
                    Source::Inspect {
                        path: PathBuf::from(v),
                    },
                ));
            }
        }
        for name in ["scenario", "arena"] {
            let (Some(occurrences), Some(indices)) = (
                m.get_occurrences::<String>(name),
                m.indices_of(name).map(|i| i.collect::<Vec<_>>()),
            ) else {
                continue;
            };
            let mut at = 0;
            for occ in occurrences {
                let values: Vec<String> = occ.cloned().collect();
                let index = indices.get(at).copied().unwrap_or(usize::MAX);
                at += values.len();
                let source = match (name, values.as_slice()) {
                    ("scenario", [id, path]) => Source::Scenario {
                        schedule_id: id.clone(),
                        path: PathBuf::from(path),
                    },
                    ("arena", [id, store, attempt]) => Source::Arena {
                        schedule_id: id.clone(),
                        store: PathBuf::from(store),
                        attempt: attempt.clone(),
                    },
                    _ => {
                        return Err(clap::Error::raw(
                            clap::error::ErrorKind::WrongNumberOfValues,
                            format!(
                                "--{name} takes {} values\n",
                                if name == "arena" { 3 } else { 2 }
                            ),
                        ))
                    }
                };
                out.push((index, source));
            }
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(Records(out.into_iter().map(|(_, s)| s).collect()))
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// Imports of at most this many records show no progress.
const PROGRESS_FROM: usize = 8;

pub fn run(args: ImportArgs, io: &mut Io) -> Result<i32> {
    let sources = &args.records.0;
    if sources.is_empty() {
        return Err(Error::Usage(
            "import needs at least one record: --scenario <ID> <RUN-DIR|result.json>, --arena <ID> <STORE> <ATTEMPT>, --inspect <LOG.eval|LOG.json|DIR> or --harbor <JOB-DIR|TRIAL-DIR> (repeatable), e.g. `git ledger import --scenario scenario/x/01 runs/<run id>`".into(),
        ));
    }
    // What an import allocates (its rows, records, the declaration and the ledger as read)
    // faulted in by huge pages, not 4 KB at a time: 64 MB of address space, about twice what
    // a 1,000-trial Harbor import holds at its peak.
    super::heap::huge_pages_for_the_heap(64 << 20);
    let options = Options {
        runtime_identity: args.runtime_identity.as_deref(),
        skip_undeclared: args.skip_undeclared,
        revision: args.revision.as_deref(),
        dry_run: args.dry_run,
        repo: args.target.repo.as_deref(),
        max_input_bytes: args.input.max_input_bytes,
    };
    let mut bar = (sources.len() > PROGRESS_FROM)
        .then(|| super::term::Progress::new("reading records", sources.len() as u64));
    let imported = call::import_into(
        &args.target.to_target(),
        sources,
        &options,
        &mut |done, total| {
            if let Some(b) = bar.as_mut() {
                b.set(done as u64)
            }
            if done == total {
                bar = None; // every record read: the line is cleared
            }
        },
    );
    drop(bar);
    let Imported {
        store,
        outcome: Outcome { summary, kept, .. },
        dry_run,
    } = imported.map_err(|e| args.target.name_a_ledger(e, "import"))?;
    match &dry_run {
        Some(dry) => {
            if !args.json {
                print(&summary, false, "would import", io)?;
            }
            super::dry_run::print(dry, args.json, true, io)?;
        }
        None => print(&summary, args.json, "imported", io)?,
    }
    // The records read, the rows built and the change are plain data that the process's end
    // frees at once; dropping them one allocation at a time cost a tenth of an import of 2,000
    // Inspect samples (`docs/benchmarks.md`). A ref-mode store is dropped as usual (it holds
    // a repository and files); a file-mode store holds only the declaration and the ledger
    // (its lock is released when it writes), plain data too.
    std::mem::forget((kept, summary));
    if args.target.declaration.is_some() && args.target.ledger.is_some() {
        std::mem::forget(store);
    }
    Ok(0)
}

fn print(summary: &Summary, json: bool, verb: &str, io: &mut Io) -> Result<()> {
    if json {
        io.out.write_all(&crate::json::canonical(summary))?;
        return Ok(());
    }
    for r in &summary.imported {
        let status = r
            .native_status
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        writeln!(
            io.out,
            "{}  {}{}  {}",
            r.schedule_id,
            r.native_outcome,
            status,
            r.label.to_lowercase()
        )?;
        writeln!(io.out, "  from {}", r.source)?;
        if let Some(reason) = &r.reason {
            writeln!(io.out, "  reason: {reason}")?;
        }
        if let Some(d) = r.option_deviations.as_ref().filter(|d| !d.is_empty()) {
            writeln!(io.out, "  option deviations: {}", d.join("; "))?;
        }
        if !r.gaps.is_empty() {
            writeln!(io.out, "  gaps: {}", r.gaps.join("; "))?;
        } else {
            if !r.deviations.is_empty() {
                writeln!(io.out, "  deviations: {}", r.deviations.join("; "))?;
            }
            if !r.over_limits.is_empty() {
                writeln!(io.out, "  overruns: {}", r.over_limits.join("; "))?;
            }
        }
        for n in &r.notes {
            writeln!(io.out, "  note: {n}")?;
        }
    }
    writeln!(
        io.out,
        "{verb} {} attempt{} ({}/{} rows filled)",
        summary.imported.len(),
        if summary.imported.len() == 1 { "" } else { "s" },
        summary.filled,
        summary.scheduled
    )?;
    if let Some(skipped) = &summary.skipped {
        // Many of one kind: the first SHOWN_REASONS and a count (--json lists them all).
        let cap = crate::error::SHOWN_REASONS;
        for s in skipped.already_in_ledger.iter().take(cap) {
            writeln!(io.out, "skipped {s}")?;
        }
        if let Some(more) = skipped
            .already_in_ledger
            .len()
            .checked_sub(cap)
            .filter(|n| *n > 0)
        {
            writeln!(
                io.out,
                "… and {more} more skipped, already in the ledger (--json lists every one)"
            )?;
        }
        for s in skipped.undeclared.iter().take(cap) {
            writeln!(io.out, "skipped {s}: undeclared (--skip-undeclared)")?;
        }
        if let Some(more) = skipped.undeclared.len().checked_sub(cap).filter(|n| *n > 0) {
            writeln!(
                io.out,
                "… and {more} more skipped, undeclared (--json lists every one)"
            )?;
        }
    }
    if let Some(n) = summary.deferred {
        writeln!(
            io.out,
            "{n} row{} still DEFERRED (not in any log imported)",
            if n == 1 { "" } else { "s" }
        )?;
    }
    for n in &summary.notes {
        writeln!(io.out, "note: {n}")?;
    }
    Ok(())
}
