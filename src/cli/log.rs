//! `git-ledger log [REF]`: one line per ledger commit, newest first. What each commit filled or
//! repaired, and the filled count, are read from its rows, never from its message
//! ([`crate::git::history`]); a message that says something else is flagged and makes the exit
//! status 2.

use std::path::PathBuf;

use super::Io;
use crate::error::{Error, Result};
use crate::portfolio::Outcome;

/// One line per ledger commit: short id, date, author, and each attempt it filled with its
/// native and portfolio outcome.
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// The ledger ref: a full ref name or a declaration id (default the only one).
    #[arg(value_name = "REF")]
    pub ledger_ref: Option<String>,
    /// The ledger ref, as with every other command (the same as the positional REF).
    #[arg(long = "ref", value_name = "REF", conflicts_with = "ledger_ref")]
    pub ref_flag: Option<String>,
    /// Oldest first.
    #[arg(long)]
    pub reverse: bool,
    /// Print a JSON list instead.
    #[arg(long)]
    pub json: bool,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

pub fn run(args: LogArgs, io: &mut Io) -> Result<i32> {
    let (name, history) = crate::git::history::of_ref(
        args.repo.as_deref(),
        args.ledger_ref.as_deref().or(args.ref_flag.as_deref()),
    )
    .map_err(|e| {
        super::name_a_ledger(e, Some("as an argument:"), |id| {
            format!("git ledger log {id}")
        })
    })?;
    let (mut entries, lies) = (history.entries, history.reasons);
    entries.reverse();
    if args.reverse {
        entries.reverse();
    }
    if args.json {
        io.out.write_all(&crate::json::canonical(&entries))?;
        // One JSON document on stdout (the list, each entry saying whether its message was
        // admitted); the reasons on stderr, and exit status 2.
        return match refuse_lies(lies, &name) {
            Err(e) => Ok(super::report_error(&e, false, &mut std::io::sink(), io.err)),
            ok => ok,
        };
    }
    for e in &entries {
        let what = if !e.attempts.is_empty() {
            e.attempts
                .iter()
                .map(|a| {
                    format!(
                        "{} {} -> {}",
                        a.schedule_id,
                        a.native_outcome,
                        outcome_label(&a.outcome)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        } else if !e.repairs.is_empty() {
            e.repairs
                .iter()
                .map(|r| format!("repair {r}"))
                .collect::<Vec<_>>()
                .join("; ")
        } else if e.message_admitted {
            e.subject.clone()
        } else {
            "(changes no row)".to_owned()
        };
        let mut filled = e
            .filled
            .as_ref()
            .map(|f| format!("  [{f}]"))
            .unwrap_or_default();
        if !e.message_admitted {
            filled.push_str("  (its message says something else: not admitted, rule 7)");
        }
        if e.dated_before_parent {
            filled.push_str("  (dated before its parent)");
        }
        let signed = match (&e.signer, &e.signature_refused) {
            (Some(s), _) => match &s.principal {
                Some(p) => format!("  signed by {p} {}", s.fingerprint),
                None => format!("  signed by key {}", s.fingerprint),
            },
            // Each reason of rule 8 says so (`rule 8: …`).
            (None, Some(why)) if history.writers => format!("  {}", joined(why)),
            (None, Some(why)) => format!("  signature not verified: {}", joined(why)),
            (None, None) => String::new(),
        };
        let refused = e
            .refused_short
            .as_ref()
            .map(|why| format!("  (verify refuses it: {why})"))
            .unwrap_or_default();
        writeln!(
            io.out,
            "{} {} {}  {what}{filled}{signed}{refused}",
            &e.commit[..7],
            &e.date[..10.min(e.date.len())],
            e.author
        )?;
    }
    refuse_lies(lies, &name)
}

/// Reasons as the one line of text a log entry shows.
fn joined(reasons: &[crate::refusal::Reason]) -> String {
    (reasons.iter().map(ToString::to_string))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Exit 0 when every message said what its commit did; else a refusal listing each rule 7
/// reason (what was printed is the trees' account).
fn refuse_lies(lies: Vec<crate::refusal::Reason>, name: &str) -> Result<i32> {
    if lies.is_empty() {
        return Ok(0);
    }
    let mut r = crate::error::Reasons::from(lies);
    r.hint(format!(
        "log shows what each commit's rows say, not its message, and names a signer only when the signature verified; {name} holds commits that were not admitted: check it with `git ledger verify {name}`"
    ));
    Err(Error::Refused(r))
}

/// The portfolio label of an outcome key, lowercased (the key itself if unknown).
fn outcome_label(key: &str) -> String {
    Outcome::from_key(key).map_or_else(|| key.to_owned(), |o| o.label().to_lowercase())
}
