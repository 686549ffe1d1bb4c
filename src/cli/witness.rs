//! `git-ledger witness <REMOTE | URL> [--ref WITNESS_REF]`: audit a remote as `audit` does and
//! append a signed checkpoint of each ledger that passes to `refs/ledger-witness/<id>` in this
//! repository (the witness's own); a tip that does not extend the last checkpointed one is
//! never checkpointed (exit 2, the rewrite reported).

use std::path::PathBuf;

use super::Io;
use crate::error::{Error, Result};

/// Audit a remote and append a signed checkpoint of each ledger that passes to
/// refs/ledger-witness/<id> in this (the witness's) repository; never checkpoint a rewrite.
#[derive(Debug, clap::Args)]
pub struct WitnessArgs {
    /// The remote: a configured remote's name, a URL or a path.
    #[arg(value_name = "REMOTE | URL")]
    pub remote: String,
    /// The witness ref to append to (default refs/ledger-witness/<ledger id>; the remote must
    /// then serve one ledger).
    #[arg(long = "ref", value_name = "WITNESS_REF")]
    pub ref_name: Option<String>,
    /// The witness's repository (default: discovered from the current directory). Its Git
    /// configuration signs the checkpoints (gpg.format ssh, user.signingKey).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub input: super::InputOpts,
}

pub fn run(args: WitnessArgs, io: &mut Io) -> Result<i32> {
    let (written, reasons) = crate::audit::witness_in(
        args.repo.as_deref(),
        &args.remote,
        args.ref_name.as_deref(),
        args.input.max_input_bytes,
        &mut |dir, audit| {
            if audit.ledgers.is_empty() {
                writeln!(io.out, "{} serves no ledger", audit.remote)?;
                if let Some(hint) = crate::audit::other_prefix_hint(dir, &audit.remote)? {
                    writeln!(io.err, "hint: {hint}")?;
                }
            }
            for l in &audit.ledgers {
                writeln!(io.out, "{}", l.line())?;
            }
            Ok(())
        },
    )?;
    for w in &written {
        match w.status {
            "checkpointed" => writeln!(
                io.out,
                "checkpointed {}@{} as {} on {}",
                w.id,
                w.tip,
                w.checkpoint.as_deref().unwrap_or_default(),
                w.refname
            )?,
            "unchanged" => writeln!(
                io.out,
                "unchanged: {}@{} is the tip of the last checkpoint {} on {}",
                w.id,
                w.tip,
                w.checkpoint.as_deref().unwrap_or_default(),
                w.refname
            )?,
            _ => writeln!(
                io.out,
                "NOT checkpointed: {}",
                w.reason.as_deref().unwrap_or_default()
            )?,
        }
    }
    if reasons.is_empty() {
        return Ok(0);
    }
    io.out.flush()?;
    Err(Error::Refused(reasons))
}
