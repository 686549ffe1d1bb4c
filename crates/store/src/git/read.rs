//! Reading a ledger commit as a reviewer does (`show`, `report --at`, `diff`): the commit a
//! revision or a ledger ref names, the declaration's exact bytes, one row's canonical bytes.
//! The declaration is read from its blob, never from the cache.

use gix::ObjectId;
use std::rc::Rc;

use super::known::Known;

use crate::error::{Error, Result};

/// The commit `--at REV` names, or the tip of the ledger ref `--ref` names (default the only
/// one). A bare declaration id is accepted for REV too (`refs/ledgers/<id>`).
pub fn ledger_commit(
    repo: &gix::Repository,
    at: Option<&str>,
    ledger_ref: Option<&str>,
) -> Result<ObjectId> {
    match at {
        Some(rev) => match super::resolve_commit(repo, rev) {
            Ok(id) => Ok(id),
            Err(e) if names_a_missing_commit(repo, rev) => Err(not_served(rev, e)),
            Err(e) => {
                let (base, rest) = rev.split_at(rev.find(['~', '^']).unwrap_or(rev.len()));
                let name = super::layout::LedgerRefs::of(repo)?.name(base);
                match super::store::ref_target(repo, &name) {
                    Ok(Some(_)) => super::resolve_commit(repo, &format!("{name}{rest}")),
                    _ => Err(e),
                }
            }
        },
        None => Ok(super::store::resolve_ref(repo, ledger_ref)?.1),
    }
}

/// The full name of the ledger ref `--ref` names (default: the only one), which must exist.
pub fn ledger_ref(repo: &gix::Repository, ledger_ref: Option<&str>) -> Result<String> {
    Ok(super::store::resolve_ref(repo, ledger_ref)?.0)
}

/// An `--expect-tip` argument: the declaration id (when given as `ID@TIP`) and the commit.
pub struct ExpectTip {
    pub id: Option<String>,
    pub tip: ObjectId,
}

/// Read `--expect-tip ID@TIP | TIP`: TIP is a full commit id, as a citation names it.
pub fn parse_expect_tip(repo: &gix::Repository, arg: &str) -> Result<ExpectTip> {
    let hex_len = repo.object_hash().len_in_hex();
    let (id, tip) = match arg.rsplit_once('@') {
        Some((id, tip)) => (Some(id.to_owned()), tip),
        None => (None, arg),
    };
    if id
        .as_deref()
        .is_some_and(|id| !crate::declaration::is_valid_id(id))
    {
        return Err(Error::Usage(format!(
            "--expect-tip {arg}: {:?} is not a declaration id; give <declaration id>@<full commit id>, as a report's citation says",
            id.unwrap_or_default()
        )));
    }
    if tip.len() != hex_len || !tip.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::Usage(format!(
            "--expect-tip {arg}: give the full commit id ({hex_len} hex digits), as a report's citation names it"
        )));
    }
    let tip = ObjectId::from_hex(tip.to_ascii_lowercase().as_bytes())
        .map_err(|e| Error::Usage(format!("--expect-tip {arg}: {e}")))?;
    Ok(ExpectTip { id, tip })
}

/// How many first-parent steps `expected` is behind `tip` (0: it is the tip), or the reason
/// the chain does not contain it, found at `rewritten since <expected>`: the commit is missing
/// from the served history, or it is another commit than any on the chain.
pub fn behind(
    repo: &gix::Repository,
    tip: gix::ObjectId,
    expected: gix::ObjectId,
) -> Result<std::result::Result<usize, crate::refusal::Reason>> {
    let mut at = tip;
    let mut steps = 0;
    loop {
        if at == expected {
            return Ok(Ok(steps));
        }
        match super::objects::read_commit(repo, at)?.parents.first() {
            Some(parent) if repo.has_object(*parent) => at = *parent,
            _ => break,
        }
        steps += 1;
    }
    let what = if repo.has_object(expected) {
        format!(
            "commit {expected} is not on the ledger's first-parent chain from {tip} to its root"
        )
    } else {
        format!(
            "commit {expected} is not in the served history: the ledger may have been rewritten"
        )
    };
    Ok(Err(
        crate::refusal::Reason::new(what).at(format!("rewritten since {expected}"))
    ))
}

/// The ledger state a report of commit `commit` names: the ledger ref (`ledger_ref`'s, else
/// the declaration's) when the commit is on its first-parent chain, the commit and its
/// `Ledger-Filled` count.
pub fn state_at(
    repo: &gix::Repository,
    decl: &crate::declaration::Declaration,
    commit: ObjectId,
    ledger_ref: Option<&str>,
) -> Result<crate::report::LedgerState> {
    let (name, tip) = match ledger_ref {
        Some(arg) => {
            let (name, tip) = super::store::resolve_ref(repo, Some(arg))?;
            (name, Some(tip))
        }
        None => {
            let name = super::layout::LedgerRefs::checked(repo)?.name(&decl.id);
            let tip = super::store::ref_target(repo, &name)?;
            (name, tip)
        }
    };
    // The ref is named only when the commit is on its first-parent chain (a commit `--at`
    // names elsewhere, say a refused attempt kept aside, is no state of the ledger ref).
    let on_ref = match tip {
        Some(tip) => behind(repo, tip, commit)?.is_ok(),
        None => false,
    };
    let info = super::objects::read_commit(repo, commit)?;
    let filled = super::message::filled_of(&info.message, decl.schedule_len());
    Ok(crate::report::LedgerState::at_ref(
        &decl.id,
        on_ref.then_some(name.as_str()),
        &commit.to_string(),
        filled,
    ))
}

/// Whether `rev` names a commit by its full id (as a citation does) that this repository
/// does not hold.
fn names_a_missing_commit(repo: &gix::Repository, rev: &str) -> bool {
    let base = &rev[..rev.find(['~', '^']).unwrap_or(rev.len())];
    base.len() == repo.object_hash().len_in_hex()
        && gix::ObjectId::from_hex(base.as_bytes()).is_ok_and(|id| !repo.has_object(id))
}

/// The error for a named commit the served history does not hold (docs/reference/workflow.md, "The
/// tip is the citation"): the ledger may have been rewritten; fetching is only the second line,
/// since a commit that was rewritten away cannot be fetched from the server that rewrote it.
fn not_served(rev: &str, e: Error) -> Error {
    let hint = e
        .hints()
        .into_iter()
        .next()
        .unwrap_or_else(|| super::FETCH_OBJECT_HINT.to_owned());
    Error::failed_with_hint(
        format!(
            "commit {} is not in the served history: the ledger may have been rewritten",
            super::show_str(rev)
        ),
        format!("if it was only never fetched here: {hint}"),
    )
}

/// The exact bytes of the declaration (`campaign.json`) of ledger commit `commit`.
pub fn declaration_bytes_at(repo: &gix::Repository, commit: ObjectId, max: u64) -> Result<Vec<u8>> {
    let info = super::objects::read_commit(repo, commit)?;
    let at = format!("commit {commit}");
    // What a reviewer reads: the declaration from its blob, never from the cache.
    let mut admission = super::admit::Admission::new(repo, max).without_cache();
    let known = super::store::declaration_at(&mut admission, repo, info.tree, &at)?;
    // A parse from the blob keeps its exact bytes: the blob is not read again.
    match known.decl.bytes() {
        Some(bytes) => Ok(bytes.to_vec()),
        None => {
            let campaign = super::layout::CAMPAIGN;
            super::objects::read_blob_bounded_at(repo, known.blob, max, &at, campaign)
        }
    }
}

/// The canonical bytes of row `id` at ledger commit `commit`: scheduled by its declaration, a
/// regular file at its path, and every row check passed.
pub fn row_at(repo: &gix::Repository, commit: ObjectId, id: &str, max: u64) -> Result<Vec<u8>> {
    let info = super::objects::read_commit(repo, commit)?;
    let at = format!("commit {commit}");
    // What a reviewer reads: the declaration from its blob, never from the cache.
    let mut admission = super::admit::Admission::new(repo, max).without_cache();
    let known = super::store::declaration_at(&mut admission, repo, info.tree, &at)?;
    let decl = &known.decl;
    if decl.schedule_position(id).is_none() {
        return Err(Error::refused(
            crate::refusal::Reason::new(format!("is not scheduled by declaration {}", decl.id))
                .row(id),
        ));
    }
    let path = super::layout::row_path(id);
    let Some((mode, blob)) = super::objects::find_in_tree(repo, info.tree, &path)? else {
        return Err(Error::refused(
            crate::refusal::Reason::new(format!("is missing ({path})"))
                .row(id)
                .at(&at),
        ));
    };
    // Never print a symlink's target text or read a submodule's commit as the row.
    if !super::objects::is_regular(mode) {
        return Err(Error::refused(
            crate::refusal::Reason::new(super::objects::not_regular(&path, mode))
                .row(id)
                .at(&at),
        ));
    }
    let row = super::admit::read_row(repo, decl, blob, id, max, &at)?.map_err(Error::refusal)?;
    Ok(row.canonical(decl))
}

/// Whether the ledger state at `commit` is one `verify` admits (the first-parent chain from
/// its root to `commit`, rules 1-8, and no replace ref or note changing what Git shows of it):
/// `None` when it is, else `verify`'s reasons (the first refused commit's, then the replace
/// refs and notes). `name` names the ledger in those reasons (a ref, or the commit).
///
/// The chain is checked from the root once: a commit admitted so is listed
/// ([`super::store::admitted`]), and a later state that extends a listed one has only the
/// steps after it checked, so a report of the same tip checks nothing twice. The replace refs
/// and notes are looked for every time (they can appear without the chain changing).
///
/// `known` is the declaration the caller already parsed from a blob (never from the cache),
/// if it did: the admission takes it where the chain holds the same blob, instead of holding
/// a second copy (10.8 MB and its parse at 100,000 rows).
pub fn admitted(
    repo: &gix::Repository,
    commit: ObjectId,
    name: &str,
    max: u64,
    known: Option<Rc<Known>>,
) -> Result<Option<crate::error::Reasons>> {
    let listed: std::collections::HashSet<ObjectId> =
        super::store::admitted::listed(repo).into_iter().collect();
    let mut reasons = crate::error::Reasons::new();
    if !listed.contains(&commit) {
        // The nearest listed commit below, if any: only the steps after it are checked.
        let mut base = None;
        let mut at = commit;
        while let Some(&parent) = super::objects::read_commit(repo, at)?.parents.first() {
            if listed.contains(&parent) {
                base = Some(parent);
                break;
            }
            at = parent;
        }
        // What a reviewer is shown: declarations from their blobs, never from the cache.
        let mut admission = super::admit::Admission::new(repo, max).without_cache();
        if let Some(known) = known {
            admission = admission.with_known(known);
        }
        let verdict = match base {
            Some(base) => admission.follows(base, commit)?.map(|_| ()),
            None => match admission.chain(None, commit, &mut |_, _| {}) {
                Ok(_) => Ok(()),
                Err(Error::Refused(r)) => Err(r.into_vec()),
                Err(e) => return Err(e),
            },
        };
        match verdict {
            Ok(()) => super::store::admitted::add(repo, commit),
            Err(r) => reasons.extend(r),
        }
    }
    reasons.extend(super::replace::shown_otherwise(
        repo,
        &[(name.to_owned(), commit)],
    )?);
    Ok((!reasons.is_empty()).then_some(reasons))
}

/// Whether the ledger state at `commit` may be shown as admitted (`report`, `show`): `Ok(None)`
/// when `verify` admits it ([`admitted`]). When it does not: under `unverified`, `verify`'s
/// reasons as they are (for the banner and the report's `refused`); else the refusal, every
/// reason found at the state (`ledger state <commit>`) and the next steps. `name` names the
/// ledger (its ref, when the commit is on one) and `command` the command, for the hints;
/// `known` is as for [`admitted`].
pub fn admitted_state(
    repo: &gix::Repository,
    commit: ObjectId,
    name: Option<&str>,
    max: u64,
    unverified: bool,
    command: &str,
    known: Option<Rc<Known>>,
) -> Result<Option<Vec<crate::refusal::Reason>>> {
    let at = format!("commit {commit}");
    let Some(reasons) = admitted(repo, commit, name.unwrap_or(&at), max, known)? else {
        return Ok(None);
    };
    if unverified {
        return Ok(Some(reasons.into_vec()));
    }
    let mut r = reasons.at(format!("ledger state {commit}"));
    r.hint(match name {
        Some(name) => format!(
            "`git ledger verify {name}` gives every reason, and `git ledger log {name}` marks each commit it refuses"
        ),
        None => "it is on no ledger ref's history here; `git ledger verify <REF>` gives every reason for the ref that holds it".to_owned(),
    });
    r.hint(format!(
        "to read it anyway, under a banner saying it is not admitted: `git ledger {command} --unverified …`"
    ));
    Err(Error::Refused(r))
}

/// What `show` prints of a ledger commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    /// The ledger document, byte-identical to the file-mode ledger of the same state.
    Document,
    /// One row's canonical bytes.
    Row(&'a str),
    /// The declaration's exact bytes.
    Declaration,
}

/// A ledger state `show` may print ([`show_at`]): the commit, and `verify`'s reasons when it
/// refuses the state (only under `--unverified`; the banner's). What is printed is read when
/// it is written ([`Shown::write`]), after the banner.
pub struct Shown<'a> {
    repo: gix::Repository,
    pub commit: ObjectId,
    pub refused: Option<Vec<crate::refusal::Reason>>,
    part: Part<'a>,
    max: u64,
}

impl Shown<'_> {
    /// Write the part asked for: the document a row at a time, every row checked first, then
    /// written (nothing for a refused state); or one row, or the declaration.
    pub fn write(&self, out: &mut dyn std::io::Write) -> Result<()> {
        let (repo, commit, max) = (&self.repo, self.commit, self.max);
        match self.part {
            Part::Declaration => out.write_all(&declaration_bytes_at(repo, commit, max)?)?,
            Part::Row(id) => out.write_all(&row_at(repo, commit, id, max)?)?,
            Part::Document => super::store::write_ledger_at(repo, commit, max, false, out)?,
        }
        Ok(())
    }
}

/// `show`: the ledger commit `--at REV` names in the repository at `repo` (default:
/// discovered), else the tip of the ledger ref `ledger_ref` names (default: the only one), if
/// `verify` admits its state ([`admitted_state`]; under `unverified`, with the reasons it
/// does not). Several ledger refs and none named is `Error::SeveralLedgers`, for the caller to
/// finish with the line to type.
pub fn show_at<'a>(
    repo: Option<&std::path::Path>,
    at: Option<&str>,
    ledger_ref: Option<&str>,
    part: Part<'a>,
    max: u64,
    unverified: bool,
) -> Result<Shown<'a>> {
    let repo = super::open(repo)?;
    let commit = ledger_commit(&repo, at, ledger_ref)?;
    let name = match ledger_ref {
        Some(r) => Some(super::store::resolve_ref(&repo, Some(r))?.0),
        None => None,
    };
    let refused = admitted_state(
        &repo,
        commit,
        name.as_deref(),
        max,
        unverified,
        "show",
        None,
    )?;
    Ok(Shown {
        repo,
        commit,
        refused,
        part,
        max,
    })
}

/// `report` in ref mode: the report of the ledger commit `--at REV` names in the repository
/// at `repo` (default: discovered), else of the tip of the ledger ref `ledger_ref` names
/// (default: the only one), each row file read, checked, summarised and dropped in turn. The
/// state is named by its ref when the commit is on the ref's first-parent chain
/// ([`state_at`]); `admitted` and `refused` say whether `verify` admits it
/// ([`admitted_state`]: a refused state is an error unless `unverified`).
pub fn report_at(
    repo: Option<&std::path::Path>,
    at: Option<&str>,
    ledger_ref: Option<&str>,
    max: u64,
    unverified: bool,
) -> Result<crate::report::Report> {
    let repo = super::open(repo)?;
    let commit = ledger_commit(&repo, at, ledger_ref)?;
    let summarise = crate::report::Summarise::new();
    let (known, rows) = super::store::kept_at(&repo, commit, max, false, &summarise)?;
    let state = state_at(&repo, &known.decl, commit, ledger_ref)?;
    let on_ref = match &state {
        crate::report::LedgerState::Ref { ledger_ref, .. } => ledger_ref.clone(),
        crate::report::LedgerState::File { .. } => None,
    };
    // The chain's admission takes the declaration the rows were read with (from its blob).
    let refused = admitted_state(
        &repo,
        commit,
        on_ref.as_deref(),
        max,
        unverified,
        "report",
        Some(known.clone()),
    )?;
    let mut report = crate::report::build_from(&known.decl, rows, state);
    report.admitted = refused.is_none();
    report.refused = refused;
    Ok(report)
}
