//! `git-ledger log [REF]`: one line per ledger commit, newest first, from commit messages and
//! trailers only (no tree is read), so its cost follows the number of commits.

use std::path::PathBuf;

use serde::Serialize;

use super::Io;
use crate::error::Result;
use crate::git::allowed_signers::AllowedSigners;
use crate::git::layout::{parse_trailers, Attempt};
use crate::git::objects::read_commit;
use crate::git::signature;

/// The writers file at the tip of a ledger, parsed (`None` when it holds none, or they do not
/// parse: `verify` says why).
fn tip_writers(repo: &gix::Repository, tip: gix::ObjectId) -> Result<Option<AllowedSigners>> {
    let tree = read_commit(repo, tip)?.tree;
    let Some((_, blob)) =
        crate::git::objects::find_in_tree(repo, tree, crate::git::layout::WRITERS)?
    else {
        return Ok(None);
    };
    let bytes = crate::git::objects::read_blob_bounded_id(repo, blob, 1 << 20, "writers")?;
    Ok(AllowedSigners::parse(&bytes).ok())
}

/// One line per ledger commit: short id, date, author, and each attempt it filled with its
/// native and portfolio outcome.
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// The ledger ref: a full ref name or a declaration id (default the only one).
    #[arg(value_name = "REF")]
    pub ledger_ref: Option<String>,
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

/// One commit of the log.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub commit: String,
    /// Author date, ISO 8601 with offset.
    pub date: String,
    pub author: String,
    pub email: String,
    pub subject: String,
    pub attempts: Vec<Attempt>,
    pub repairs: Vec<String>,
    /// `k/n` from `Ledger-Filled`, when the commit carries it.
    pub filled: Option<String>,
    /// Who signed it: on a ledger with writers, the writers line's principal and the key's
    /// fingerprint when rule 8 holds; elsewhere the key's fingerprint (principal null).
    pub signer: Option<Signer>,
    /// On a ledger with writers, why rule 8 does not hold for this commit.
    pub signature_refused: Option<String>,
}

/// A commit's signer, as `log` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Signer {
    pub principal: Option<String>,
    pub fingerprint: String,
}

pub fn run(args: LogArgs, io: &mut Io) -> Result<i32> {
    let repo = crate::git::open(args.repo.as_deref())?;
    let (_, tip) =
        crate::git::store::resolve_ref(&repo, args.ledger_ref.as_deref()).map_err(|e| {
            super::name_a_ledger(e, Some("as an argument:"), |id| {
                format!("git ledger log {id}")
            })
        })?;
    let writers = tip_writers(&repo, tip)?;
    let mut entries = Vec::new();
    let mut next = Some(tip);
    let mut buf = Vec::new();
    while let Some(id) = next {
        let info = read_commit(&repo, id)?;
        let raw = gix::objs::Find::try_find(&repo.objects, &id, &mut buf)
            .map_err(|e| crate::Error::failed(format!("cannot read commit {id}: {e}")))?
            .map(|d| d.data)
            .unwrap_or_default();
        let hash = repo.object_hash();
        let (signer, signature_refused) = match &writers {
            Some(w) => match signature::check(raw, hash, w) {
                Ok(s) => (
                    Some(Signer {
                        principal: Some(s.principal),
                        fingerprint: s.fingerprint,
                    }),
                    None,
                ),
                Err(why) => (None, Some(why)),
            },
            None => (
                signature::signature_key(raw, hash).map(|fingerprint| Signer {
                    principal: None,
                    fingerprint,
                }),
                None,
            ),
        };
        let t = parse_trailers(&info.message);
        let time = gix::date::Time::new(info.author_time.0, info.author_time.1);
        entries.push(Entry {
            commit: id.to_string(),
            date: time.format_or_unix(gix::date::time::format::ISO8601_STRICT),
            author: info.author_name.clone(),
            email: info.author_email.clone(),
            subject: info.message.lines().next().unwrap_or_default().to_owned(),
            attempts: t.attempts,
            repairs: t.repairs,
            filled: t.filled.map(|(k, n)| format!("{k}/{n}")),
            signer,
            signature_refused,
        });
        next = info.parents.first().copied();
    }
    if args.reverse {
        entries.reverse();
    }
    if args.json {
        io.out.write_all(&crate::json::canonical(&entries))?;
        return Ok(0);
    }
    for e in &entries {
        let what = if !e.attempts.is_empty() {
            e.attempts
                .iter()
                .map(|a| format!("{} {} -> {}", a.schedule_id, a.native_outcome, a.label()))
                .collect::<Vec<_>>()
                .join("; ")
        } else if !e.repairs.is_empty() {
            e.repairs
                .iter()
                .map(|r| format!("repair {r}"))
                .collect::<Vec<_>>()
                .join("; ")
        } else {
            e.subject.clone()
        };
        let filled = e
            .filled
            .as_ref()
            .map(|f| format!("  [{f}]"))
            .unwrap_or_default();
        let signed = match (&e.signer, &e.signature_refused) {
            (Some(s), _) => match &s.principal {
                Some(p) => format!("  signed by {p} {}", s.fingerprint),
                None => format!("  signed by key {}", s.fingerprint),
            },
            (None, Some(why)) => format!("  rule 8: {why}"),
            (None, None) => String::new(),
        };
        writeln!(
            io.out,
            "{} {} {}  {what}{filled}{signed}",
            &e.commit[..7],
            &e.date[..10.min(e.date.len())],
            e.author
        )?;
    }
    Ok(0)
}
