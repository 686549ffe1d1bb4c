//! `git-ledger verify [REF…] [--all]`: re-check whole ledger chains from their roots with the
//! admission validator; exit 2 naming the first inadmissible commit.

use std::path::PathBuf;

use super::Io;
use crate::error::{Error, Result};

/// Re-check whole ledger chains from their roots (after a fetch, or for an auditor).
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Ledger refs (full names or declaration ids); default the only one.
    #[arg(value_name = "REF", conflicts_with = "all")]
    pub refs: Vec<String>,
    /// Every refs/ledgers/* ref.
    #[arg(long)]
    pub all: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub input: super::InputOpts,
}

/// Chains shorter than this show no progress.
const PROGRESS_FROM: usize = 50;

pub fn run(args: VerifyArgs, io: &mut Io) -> Result<i32> {
    let repo = crate::git::open(args.repo.as_deref())?;
    let refs = if args.all {
        crate::git::store::ledger_refs(&repo)?
    } else if args.refs.is_empty() {
        vec![crate::git::store::resolve_ref(&repo, None).map_err(|e| {
            super::name_a_ledger(
                e,
                Some("as an argument, or verify them all with --all:"),
                |id| format!("git ledger verify {id}"),
            )
        })?]
    } else {
        args.refs
            .iter()
            .map(|r| crate::git::store::resolve_ref(&repo, Some(r)))
            .collect::<Result<Vec<_>>>()?
    };
    let mut reasons = crate::error::Reasons::new();
    let mut results = Vec::new();
    for (name, tip) in &refs {
        let mut admission =
            crate::git::admit::Admission::new(&repo, args.input.max_input_bytes).without_cache();
        let mut bar: Option<super::term::Progress> = None;
        let mut progress = |done: usize, total: usize| {
            if total >= PROGRESS_FROM {
                bar.get_or_insert_with(|| {
                    super::term::Progress::new(format!("verifying {name} (commits)"), total as u64)
                })
                .set(done as u64);
            }
        };
        let result = admission.chain(Some(name), *tip, &mut progress);
        drop(bar);
        match result {
            Ok(n) => {
                if !args.json {
                    writeln!(
                        io.out,
                        "{name}: {n} commit{} admitted, root to {tip}",
                        if n == 1 { "" } else { "s" }
                    )?;
                }
                results.push(serde_json::json!({"ref": name, "tip": tip.to_string(), "admitted": true, "commits": n}));
            }
            Err(e @ Error::Refused(_)) => {
                let mut result = super::reasons_json(&e);
                result["ref"] = name.as_str().into();
                result["tip"] = tip.to_string().into();
                result["admitted"] = false.into();
                results.push(result);
                reasons.absorb(e.context(name).into_reasons());
            }
            Err(e) => return Err(e.context(name)),
        }
    }
    reasons.extend(crate::git::replace::shown_otherwise(&repo, &refs)?);
    if !reasons.is_empty() && !crate::hook::install::guards_local_refs(&repo) {
        reasons.hint(
            "a local ledger ref holds a commit git ledger would not write: plain Git put it there (commit, update-ref, a forced fetch); `git ledger hooks install` makes this repository refuse such updates",
        );
    }
    if reasons.is_empty() {
        if args.json {
            io.out.write_all(&crate::json::canonical(
                &serde_json::json!({"refs": results}),
            ))?;
        }
        Ok(0)
    } else {
        Err(Error::Refused(reasons))
    }
}
