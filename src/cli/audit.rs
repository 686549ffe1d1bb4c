//! `git-ledger audit <REMOTE | URL> [--expect-tip ID@TIP]…`: a reviewer's read-only check of
//! every ledger a remote serves (`docs/reference/witness.md`); exit 2 unless every ledger verifies, every
//! declaration checks against its pinned commit and nothing seen before was rewritten or
//! deleted.

use std::path::PathBuf;

use super::Io;
use crate::error::{Error, Result};

/// A reviewer's read-only check of every ledger a remote serves: fetched into
/// refs/ledger-audit/<key>/, verified root to tip, declarations checked, tips remembered.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// The remote: a configured remote's name, a URL or a path.
    #[arg(value_name = "REMOTE | URL")]
    pub remote: String,
    /// A tip a reviewer holds (a paper's citation `<declaration id>@<full commit id>`; the id
    /// may be left out when the remote serves one ledger): refuse unless the ledger's chain
    /// contains it (repeatable).
    #[arg(long, value_name = "ID@TIP")]
    pub expect_tip: Vec<String>,
    /// A witness (a remote, URL or path): refuse a ledger unless the witness's signed
    /// checkpoints of it form one chain whose last tip its chain contains.
    #[arg(long, value_name = "REMOTE | URL | PATH", requires = "witness_signers")]
    pub witness: Option<String>,
    /// The allowed-signers file of the witness's keys (as `gpg.ssh.allowedSignersFile`).
    #[arg(long, value_name = "ALLOWED_SIGNERS", requires = "witness")]
    pub witness_signers: Option<PathBuf>,
    /// Print the audit as JSON.
    #[arg(long)]
    pub json: bool,
    /// The repository that keeps the fetched refs and the tips seen (default: discovered from
    /// the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub input: super::InputOpts,
}

pub fn run(args: AuditArgs, io: &mut Io) -> Result<i32> {
    let (dir, audit) = crate::audit::audit_in(
        args.repo.as_deref(),
        &args.remote,
        &args.expect_tip,
        args.witness.clone().zip(args.witness_signers.clone()),
        args.input.max_input_bytes,
    )?;
    if args.json {
        io.out.write_all(&crate::json::canonical(&audit))?;
    } else {
        if audit.ledgers.is_empty() {
            writeln!(io.out, "{} serves no ledger", audit.remote)?;
            if let Some(hint) = crate::audit::other_prefix_hint(&dir, &audit.remote)? {
                writeln!(io.err, "hint: {hint}")?;
            }
        }
        for l in &audit.ledgers {
            writeln!(io.out, "{}", l.line())?;
        }
        for d in &audit.witnessed_not_served {
            writeln!(
                io.out,
                "{}: checkpointed by the witness at {}, but not served by {}",
                d.id, d.last_tip, audit.remote
            )?;
        }
        for d in &audit.deleted {
            writeln!(io.out, "{}: DELETED (last seen at {})", d.id, d.last_tip)?;
        }
    }
    if audit.ok {
        return Ok(0);
    }
    let mut reasons = audit.reasons;
    reasons.hint(format!(
        "the served refs are kept under {} for a closer look (`git ledger log {}ledgers/<id>` does not read them: use `git log`)",
        audit.namespace, audit.namespace
    ));
    let e = Error::Refused(reasons);
    if args.json {
        // One JSON document on stdout (the audit, `ok` false); the reasons on stderr.
        io.out.flush()?;
        return Ok(super::report_error(&e, false, &mut std::io::sink(), io.err));
    }
    io.out.flush()?;
    Err(e)
}
