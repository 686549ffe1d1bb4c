//! `git-ledger verify [REF…] [--all] [--expect-tip ID@TIP]`: re-check whole ledger chains from
//! their roots with the admission validator; exit 2 naming the first inadmissible commit, or a
//! tip a reviewer holds (a paper's citation) that the chain no longer contains. The checks are
//! [`crate::verify::verify`]'s; this parses, draws its progress and prints what it found.

use std::path::PathBuf;

use super::Io;
use crate::error::{Error, Result};
use crate::verify::{Event, RefVerified};

/// Re-check whole ledger chains from their roots (after a fetch, or for an auditor).
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Ledger refs (full names or declaration ids); default the only one.
    #[arg(value_name = "REF", conflicts_with = "all")]
    pub refs: Vec<String>,
    /// A ledger ref, as with every other command (the same as the positional REF; repeatable).
    #[arg(long = "ref", value_name = "REF", conflicts_with = "all")]
    pub ref_flags: Vec<String>,
    /// Refuse (exit 2) unless TIP is the ref's tip or a first-parent ancestor of it: the
    /// citation `<declaration id>@<full commit id>` a report prints, or the commit id alone.
    #[arg(long, value_name = "ID@TIP | TIP")]
    pub expect_tip: Option<String>,
    /// A witness (a remote, URL or path): refuse unless its checkpoints of each ledger are
    /// signed by a key of --witness-signers, form one chain whose tips each extend the
    /// previous, and the ledger's chain contains the last checkpointed tip; flag a commit
    /// dated before a checkpoint it follows.
    #[arg(long, value_name = "REMOTE | URL | PATH", requires = "witness_signers")]
    pub witness: Option<String>,
    /// The allowed-signers file of the witness's keys (as `gpg.ssh.allowedSignersFile`).
    #[arg(long, value_name = "ALLOWED_SIGNERS", requires = "witness")]
    pub witness_signers: Option<PathBuf>,
    /// Every ledger ref (refs/ledgers/*, or under git config ledger.refPrefix).
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
    let mut refs = args.refs.clone();
    refs.extend(args.ref_flags.iter().cloned());
    let options = crate::verify::Options {
        refs,
        all: args.all,
        expect_tip: args.expect_tip.clone(),
        witness: args.witness.clone().zip(args.witness_signers.clone()),
        max_bytes: args.input.max_input_bytes,
    };
    let mut bar: Option<super::term::Progress> = None;
    let verified = crate::verify::verify(args.repo.as_deref(), &options, &mut |event| {
        match event {
            Event::Progress {
                refname,
                done,
                total,
            } => {
                if total >= PROGRESS_FROM {
                    bar.get_or_insert_with(|| {
                        super::term::Progress::new(
                            format!("verifying {refname} (commits)"),
                            total as u64,
                        )
                    })
                    .set(done as u64);
                }
            }
            Event::Checked { .. } => bar = None,
            Event::Admitted(v) if !args.json => writeln!(io.out, "{}", line(v))?,
            Event::Witnessed { refname, check } if !args.json => {
                writeln!(io.out, "{refname}: {}", check.line())?
            }
            Event::Admitted(_) | Event::Witnessed { .. } => {}
        }
        Ok(())
    });
    drop(bar);
    let verified = verified.map_err(|e| {
        super::name_a_ledger(
            e,
            Some("as an argument, or verify them all with --all:"),
            |id| format!("git ledger verify {id}"),
        )
    })?;
    if verified.reasons.is_empty() {
        if args.json {
            io.out.write_all(&crate::json::canonical(&verified))?;
        }
        Ok(0)
    } else {
        // What was printed comes before the refusal.
        io.out.flush()?;
        Err(Error::Refused(verified.reasons))
    }
}

/// `<ref>: N commits admitted, root to <tip>`, and where the expected tip is on it.
fn line(v: &RefVerified) -> String {
    let n = v.commits;
    let mut line = format!(
        "{}: {n} commit{} admitted, root to {}",
        v.refname,
        if n == 1 { "" } else { "s" },
        v.tip
    );
    if let Some(e) = &v.expected_tip {
        line.push_str(&match e.behind {
            0 => format!("; {} is its tip", e.commit),
            k => format!(
                "; it extends {} by {k} commit{}",
                e.commit,
                if k == 1 { "" } else { "s" }
            ),
        });
    }
    line
}
