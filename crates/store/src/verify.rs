//! `verify` as one operation: which ledger refs a call names, each chain re-checked from its
//! root by the admission validator ([`crate::git::admit::Admission::chain`]), the tip a
//! reviewer holds (`--expect-tip`), the replace refs and notes that change what Git shows of
//! them, and a witness's checkpoints ([`crate::witness::check`]). What it finds is a value
//! ([`Verified`], serialised for `--json`); progress and each ref's outcome reach the caller
//! as [`Event`]s as they happen, so nothing here writes to a terminal.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::Serialize;

use crate::error::{Error, Reasons, Result};
use crate::git::layout::LedgerRefs;

/// What `verify` is asked.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The ledger refs named (full names or declaration ids), in order; none: the only one
    /// (or, with `expect_tip`'s id, that ledger).
    pub refs: Vec<String>,
    /// Every ledger ref (`refs` is then empty).
    pub all: bool,
    /// `--expect-tip ID@TIP | TIP`, as given.
    pub expect_tip: Option<String>,
    /// `--witness W --witness-signers FILE`.
    pub witness: Option<(String, PathBuf)>,
    pub max_bytes: u64,
}

/// What happened, as it happens (the caller draws progress and prints each line).
pub enum Event<'a> {
    /// `done` of `total` commits of `refname`'s chain checked.
    Progress {
        refname: &'a str,
        done: usize,
        total: usize,
    },
    /// `refname`'s chain has been checked, admitted or not: its progress is over.
    Checked { refname: &'a str },
    /// `refname`'s chain is admitted (and holds the expected tip, when one is about it).
    Admitted(&'a RefVerified),
    /// What the witness's checkpoints say of `refname` (every ref verified, in order).
    Witnessed {
        refname: &'a str,
        check: &'a crate::witness::WitnessCheck,
    },
}

/// One admitted chain (`verify --json`'s `refs[]`, `docs/schemas/verify.schema.json`).
#[derive(Debug, Serialize)]
pub struct RefVerified {
    #[serde(rename = "ref")]
    pub refname: String,
    pub tip: String,
    /// Always true: a chain that is not admitted makes the call a refusal.
    pub admitted: bool,
    /// How many commits were admitted, root to tip.
    pub commits: usize,
    /// With `--expect-tip` about this ref: the tip expected and how far past it the ref is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_tip: Option<ExpectedTip>,
    /// With `--witness`: what the witness's checkpoints say of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<crate::witness::WitnessCheck>,
}

/// The tip a reviewer holds, found on the chain.
#[derive(Debug, Serialize)]
pub struct ExpectedTip {
    pub commit: String,
    /// First-parent commits the ref's tip is past it (0: it is the tip).
    pub behind: usize,
}

/// What `verify` found: the chains admitted, and every reason the call is refused (none: exit
/// 0; the JSON document is `{"refs": [...]}` of [`Verified::refs`]).
#[derive(Debug, Serialize)]
pub struct Verified {
    pub refs: Vec<RefVerified>,
    #[serde(skip)]
    pub reasons: Reasons,
}

/// Verify the ledgers of the repository at `repo` (default: discovered) that `options` names.
/// An error is returned for what is not a verdict (a usage error, an unreadable object, several
/// ledgers and none named: `Error::SeveralLedgers`); a chain refused, a tip not held, a replace
/// ref or a witness that does not vouch are [`Verified::reasons`].
pub fn verify(
    repo: Option<&Path>,
    options: &Options,
    on: &mut dyn FnMut(Event) -> Result<()>,
) -> Result<Verified> {
    let repo = crate::git::open(repo)?;
    let expect = (options.expect_tip.as_deref())
        .map(|a| crate::git::read::parse_expect_tip(&repo, a))
        .transpose()?;
    let refs = named_refs(&repo, options, expect.as_ref())?;
    let expect = match expect {
        None => None,
        Some(e) => Some((expected_ref(&repo, &refs, &e, options)?, e.tip)),
    };
    let mut reasons = Reasons::new();
    // A cited tip the chain no longer holds: the server serves another history, which no
    // local hook would have stopped (so no hint about hooks for these).
    let mut tip_reasons = Reasons::new();
    let mut verified = Vec::new();
    for (name, tip) in &refs {
        let expected = (expect.as_ref())
            .filter(|(n, _)| n == name)
            .map(|(_, t)| *t);
        match chain(&repo, name, *tip, expected, options.max_bytes, on)? {
            Chain::Admitted(v) => {
                on(Event::Admitted(&v))?;
                verified.push(v);
            }
            Chain::TipNotHeld(why) => tip_reasons.absorb(why),
            Chain::Refused { reasons: r, tip } => {
                tip_reasons.absorb(tip);
                reasons.absorb(r);
            }
        }
    }
    reasons.extend(crate::git::replace::shown_otherwise(&repo, &refs)?);
    if !reasons.is_empty() && !crate::hook::install::guards_local_refs(&repo) {
        reasons.hint(
            "a local ledger ref holds a commit git ledger would not write: plain Git put it there (commit, update-ref, a forced fetch); `git ledger hooks install` makes this repository refuse such updates",
        );
    }
    reasons.absorb(tip_reasons);
    if let Some((witness, signers)) = &options.witness {
        reasons.absorb(witnessed(
            &repo,
            &refs,
            witness,
            signers,
            options.max_bytes,
            &mut verified,
            on,
        )?);
    }
    Ok(Verified {
        refs: verified,
        reasons,
    })
}

/// The refs to verify: every ledger ref (`all`), the ones named, else the expected tip's
/// ledger, else the only one.
fn named_refs(
    repo: &gix::Repository,
    options: &Options,
    expect: Option<&crate::git::read::ExpectTip>,
) -> Result<Vec<(String, ObjectId)>> {
    let mut named = options.refs.clone();
    if named.is_empty() && !options.all {
        if let Some(id) = expect.and_then(|e| e.id.clone()) {
            named.push(id);
        }
    }
    if options.all {
        crate::git::store::ledger_refs(repo)
    } else if named.is_empty() {
        Ok(vec![crate::git::store::resolve_ref(repo, None)?])
    } else {
        (named.iter())
            .map(|r| crate::git::store::resolve_ref(repo, Some(r)))
            .collect()
    }
}

/// The ref the expected tip is about: ID's, else the only one verified.
fn expected_ref(
    repo: &gix::Repository,
    refs: &[(String, ObjectId)],
    e: &crate::git::read::ExpectTip,
    options: &Options,
) -> Result<String> {
    let name = match &e.id {
        Some(id) => LedgerRefs::of(repo)?.name(id),
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
            options.expect_tip.as_deref().unwrap_or_default()
        )));
    }
    Ok(name)
}

/// One chain's verdict.
enum Chain {
    /// Admitted, and holding the expected tip when one is about it.
    Admitted(RefVerified),
    /// Admitted, but the expected tip is not on it.
    TipNotHeld(Reasons),
    /// Refused (the refusal's reasons at the ref), and the expected tip's reason if it is not
    /// on it either.
    Refused { reasons: Reasons, tip: Reasons },
}

/// Admit `name`'s chain from its root to `tip`, and find `expected` on it.
fn chain(
    repo: &gix::Repository,
    name: &str,
    tip: ObjectId,
    expected: Option<ObjectId>,
    max_bytes: u64,
    on: &mut dyn FnMut(Event) -> Result<()>,
) -> Result<Chain> {
    let mut admission = crate::git::admit::Admission::new(repo, max_bytes).without_cache();
    // The caller's error while drawing progress is kept for after the chain.
    let mut drawn: Result<()> = Ok(());
    let result = admission.chain(Some(name), tip, &mut |done, total| {
        if drawn.is_ok() {
            drawn = on(Event::Progress {
                refname: name,
                done,
                total,
            });
        }
    });
    drawn?;
    on(Event::Checked { refname: name })?;
    let not_held = |why: crate::refusal::Reason| Reasons::one(why).at(name);
    match result {
        Ok(n) => {
            // Listed for the reviewer's commands (`report`, `show`, …), which then check only
            // what follows it; `verify` itself never reads the list.
            crate::git::store::admitted::add(repo, tip);
            let expected_tip = match expected {
                None => None,
                Some(expected) => match crate::git::read::behind(repo, tip, expected)? {
                    Ok(behind) => Some(ExpectedTip {
                        commit: expected.to_string(),
                        behind,
                    }),
                    Err(why) => return Ok(Chain::TipNotHeld(not_held(why))),
                },
            };
            Ok(Chain::Admitted(RefVerified {
                refname: name.to_owned(),
                tip: tip.to_string(),
                admitted: true,
                commits: n,
                expected_tip,
                witness: None,
            }))
        }
        Err(e @ Error::Refused(_)) => {
            let mut tip_reasons = Reasons::new();
            if let Some(expected) = expected {
                if let Err(why) = crate::git::read::behind(repo, tip, expected)? {
                    tip_reasons.absorb(not_held(why));
                }
            }
            // Its reasons are the refusal's (printed whole under --json): nothing to add here.
            Ok(Chain::Refused {
                reasons: e.context(name).into_reasons(),
                tip: tip_reasons,
            })
        }
        Err(e) => Err(e.context(name)),
    }
}

/// Check every ref against the witness's checkpoints: each check goes to `on`, and onto the
/// ref's entry of `verified` when it was admitted. Returns the witness's reasons.
fn witnessed(
    repo: &gix::Repository,
    refs: &[(String, ObjectId)],
    witness: &str,
    signers: &Path,
    max_bytes: u64,
    verified: &mut [RefVerified],
    on: &mut dyn FnMut(Event) -> Result<()>,
) -> Result<Reasons> {
    let dir = crate::git::transport::repo_dir(repo)?;
    let ledger_refs = LedgerRefs::of(repo)?;
    let ledgers: Vec<(String, ObjectId)> = (refs.iter())
        .map(|(n, t)| (ledger_refs.id_of(n).unwrap_or(n).to_owned(), *t))
        .collect();
    let (checks, why, _) = crate::witness::check(&dir, witness, signers, &ledgers, max_bytes)?;
    for ((name, _), check) in refs.iter().zip(checks) {
        on(Event::Witnessed {
            refname: name,
            check: &check,
        })?;
        if let Some(v) = verified.iter_mut().find(|v| v.refname == *name) {
            v.witness = Some(check);
        }
    }
    Ok(why)
}
