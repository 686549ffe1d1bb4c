//! `git-ledger verify [REF…] [--all] [--expect-tip ID@TIP]`: re-check whole ledger chains from
//! their roots with the admission validator; exit 2 naming the first inadmissible commit, or a
//! tip a reviewer holds (a paper's citation) that the chain no longer contains.

use std::path::PathBuf;

use super::Io;
use crate::error::{Error, Result};

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
    let repo = crate::git::open(args.repo.as_deref())?;
    let expect = args
        .expect_tip
        .as_deref()
        .map(|a| crate::git::read::parse_expect_tip(&repo, a))
        .transpose()?;
    let mut named: Vec<String> = args.refs.clone();
    named.extend(args.ref_flags.iter().cloned());
    if named.is_empty() && !args.all {
        if let Some(id) = expect.as_ref().and_then(|e| e.id.clone()) {
            named.push(id);
        }
    }
    let refs = if args.all {
        crate::git::store::ledger_refs(&repo)?
    } else if named.is_empty() {
        vec![crate::git::store::resolve_ref(&repo, None).map_err(|e| {
            super::name_a_ledger(
                e,
                Some("as an argument, or verify them all with --all:"),
                |id| format!("git ledger verify {id}"),
            )
        })?]
    } else {
        named
            .iter()
            .map(|r| crate::git::store::resolve_ref(&repo, Some(r)))
            .collect::<Result<Vec<_>>>()?
    };
    // The ref the expected tip is about: ID's, else the only one verified.
    let expect = match expect {
        None => None,
        Some(e) => {
            let name = match &e.id {
                Some(id) => crate::git::layout::LedgerRefs::of(&repo)?.name(id),
                None if refs.len() == 1 => refs[0].0.clone(),
                None => {
                    return Err(Error::Usage(
                        "--expect-tip TIP with several ledgers: say which, as <declaration id>@<full commit id>".into(),
                    ))
                }
            };
            if !refs.iter().any(|(n, _)| *n == name) {
                return Err(Error::Usage(format!(
                    "--expect-tip {}: {name} is not among the ledgers verified",
                    args.expect_tip.as_deref().unwrap_or_default()
                )));
            }
            Some((name, e.tip))
        }
    };
    let mut reasons = crate::error::Reasons::new();
    // A cited tip the chain no longer holds: the server serves another history, which no
    // local hook would have stopped (so no hint about hooks for these).
    let mut tip_reasons = crate::error::Reasons::new();
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
                // Listed for the reviewer's commands (`report`, `show`, …), which then check only
                // what follows it; `verify` itself never reads the list.
                crate::git::store::admitted::add(&repo, *tip);
                let mut line = format!(
                    "{name}: {n} commit{} admitted, root to {tip}",
                    if n == 1 { "" } else { "s" }
                );
                let mut result = serde_json::json!({"ref": name, "tip": tip.to_string(), "admitted": true, "commits": n});
                if let Some((_, expected)) = expect.as_ref().filter(|(n, _)| n == name) {
                    match crate::git::read::behind(&repo, *tip, *expected)? {
                        Ok(k) => {
                            line.push_str(&match k {
                                0 => format!("; {expected} is its tip"),
                                k => format!(
                                    "; it extends {expected} by {k} commit{}",
                                    if k == 1 { "" } else { "s" }
                                ),
                            });
                            result["expected_tip"] =
                                serde_json::json!({"commit": expected.to_string(), "behind": k});
                        }
                        Err(why) => {
                            tip_reasons.absorb(crate::error::Reasons::one(why).at(name));
                            continue;
                        }
                    }
                }
                if !args.json {
                    writeln!(io.out, "{line}")?;
                }
                results.push(result);
            }
            Err(e @ Error::Refused(_)) => {
                if let Some((_, expected)) = expect.as_ref().filter(|(n, _)| n == name) {
                    if let Err(why) = crate::git::read::behind(&repo, *tip, *expected)? {
                        tip_reasons.absorb(crate::error::Reasons::one(why).at(name));
                    }
                }
                // Its reasons are the refusal's (printed whole under --json): nothing to add here.
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
    reasons.absorb(tip_reasons);
    if let (Some(witness), Some(signers)) = (&args.witness, &args.witness_signers) {
        let dir = crate::git::transport::repo_dir(&repo)?;
        let ledger_refs = crate::git::layout::LedgerRefs::of(&repo)?;
        let ledgers: Vec<(String, crate::git::ObjectId)> = (refs.iter())
            .map(|(n, t)| {
                let id = ledger_refs.id_of(n).unwrap_or(n);
                (id.to_owned(), *t)
            })
            .collect();
        let (checks, why, _) =
            crate::witness::check(&dir, witness, signers, &ledgers, args.input.max_input_bytes)?;
        for ((name, _), c) in refs.iter().zip(&checks) {
            if !args.json {
                writeln!(io.out, "{name}: {}", c.line())?;
            }
            if let Some(r) = results.iter_mut().find(|r| r["ref"] == name.as_str()) {
                r["witness"] = serde_json::to_value(c).unwrap_or_default();
            }
        }
        reasons.absorb(why);
    }
    if reasons.is_empty() {
        if args.json {
            io.out.write_all(&crate::json::canonical(
                &serde_json::json!({"refs": results}),
            ))?;
        }
        Ok(0)
    } else {
        // What was printed comes before the refusal.
        io.out.flush()?;
        Err(Error::Refused(reasons))
    }
}
