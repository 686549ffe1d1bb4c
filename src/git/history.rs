//! A ledger's history as `log` shows it: one entry per commit, with what each commit filled or
//! repaired and the filled count read from its rows (only `rows/` is compared, and only
//! changed rows are read), never from its message: a message is compared with them (rule 7 of
//! admission), and one that says something else is reported. Each entry names its signer
//! (rule 8 on a ledger with writers).

use serde::Serialize;

use crate::error::{Error, Result};
use crate::git::admit::{read_row, tree_changes, Admission};
use crate::git::allowed_signers::AllowedSigners;
use crate::git::layout::{self, Attempt, ROWS};
use crate::git::message;
use crate::git::objects::{find_in_tree, read_commit, CommitInfo};
use crate::git::signature;
use crate::ledger::Row;
use crate::portfolio::classify;
use crate::refusal::Reason;

/// The writers file at the tip of a ledger, parsed (`None` when it holds none, or they do not
/// parse: `verify` says why).
fn tip_writers(repo: &gix::Repository, tip: gix::ObjectId) -> Result<Option<AllowedSigners>> {
    let tree = read_commit(repo, tip)?.tree;
    let Some((_, blob)) = find_in_tree(repo, tree, crate::git::layout::WRITERS)? else {
        return Ok(None);
    };
    let bytes = crate::git::objects::read_blob_bounded_id(repo, blob, 1 << 20, "writers")?;
    Ok(AllowedSigners::parse(&bytes).ok())
}

/// Who signed commit `id`, and on a ledger with writers why rule 8 does not hold for it.
fn signer_of(
    repo: &gix::Repository,
    id: gix::ObjectId,
    writers: Option<&AllowedSigners>,
    buf: &mut Vec<u8>,
) -> Result<(Option<Signer>, Option<String>)> {
    let raw = gix::objs::Find::try_find(&repo.objects, &id, buf)
        .map_err(|e| Error::failed(format!("cannot read commit {id}: {e}")))?
        .map(|d| d.data)
        .unwrap_or_default();
    let hash = repo.object_hash();
    Ok(match writers {
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
        // No writers: a key is named only when the signature verifies with it.
        None => match signature::self_verified(raw, hash) {
            None => (None, None),
            Some(Ok(fingerprint)) => (
                Some(Signer {
                    principal: None,
                    fingerprint,
                }),
                None,
            ),
            Some(Err(why)) => (None, Some(why)),
        },
    })
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
    /// Whether the commit's message says exactly what its tree did (rule 7); when not, the
    /// subject is shown as written but the attempts, repairs and count are the trees'.
    pub message_admitted: bool,
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

/// A log entry for `info`, with what its trees say it did and `k` of `n` rows filled after it.
fn entry(
    info: &CommitInfo,
    attempts: Vec<Attempt>,
    repairs: Vec<String>,
    k: usize,
    n: usize,
) -> Entry {
    let time = gix::date::Time::new(info.author_time.0, info.author_time.1);
    Entry {
        commit: info.id.to_string(),
        date: time.format_or_unix(gix::date::time::format::ISO8601_STRICT),
        author: info.author_name.clone(),
        email: info.author_email.clone(),
        subject: info.message.lines().next().unwrap_or_default().to_owned(),
        attempts,
        repairs,
        filled: Some(format!("{k}/{n}")),
        message_admitted: true,
        signer: None,
        signature_refused: None,
    }
}

/// The rows `c` fills and repairs after `p`, read from their trees (`rows/` compared, each
/// changed row read and checked).
fn what_changed(
    repo: &gix::Repository,
    decl: &crate::declaration::Declaration,
    state: &mut gix::diff::tree::State,
    p: &CommitInfo,
    c: &CommitInfo,
) -> Result<(Vec<Row>, Vec<Row>)> {
    let rows_of = |info: &CommitInfo| -> Result<gix::ObjectId> {
        find_in_tree(repo, info.tree, ROWS)?
            .filter(|(m, _)| m.is_tree())
            .map(|(_, id)| id)
            .ok_or_else(|| Error::refused(format!("commit {}: rows/ is missing", info.id)))
    };
    let (a, b) = (rows_of(p)?, rows_of(c)?);
    let (mut filled, mut repaired) = (Vec::new(), Vec::new());
    if a == b {
        return Ok((filled, repaired));
    }
    let at = format!("commit {}", c.id);
    for ch in tree_changes(repo, state, a, b)? {
        let path = format!("{ROWS}/{}", crate::git::show_path(&ch.path));
        let (Some((om, old)), Some((nm, new))) = (ch.old, ch.new) else {
            continue;
        };
        if om.is_tree() || nm.is_tree() {
            continue;
        }
        let Some(sid) = layout::schedule_id_of(&path) else {
            continue;
        };
        let max = crate::json::DEFAULT_MAX_INPUT_BYTES;
        // A DEFERRED row is its template row byte for byte: the parent's row is compared by
        // blob id, not read.
        let Some(template) = Row::template(decl, sid) else {
            continue; // not scheduled
        };
        let template = gix::objs::compute_hash(
            repo.object_hash(),
            gix::objs::Kind::Blob,
            &template.canonical(decl),
        )
        .map_err(|e| Error::failed(format!("cannot hash a row: {e}")))?;
        let after = read_row(repo, decl, new, sid, max, &at)?.map_err(Error::refusal)?;
        if old == template {
            if !after.is_deferred() {
                filled.push(after);
            }
        } else {
            repaired.push(after);
        }
    }
    Ok((filled, repaired))
}

/// The history of the ledger whose tip is `tip`, oldest first: one entry per commit with what
/// its trees say it did, and the rule 7 reasons of every commit whose message says something
/// else (empty when each message was admitted).
pub fn history(repo: &gix::Repository, tip: gix::ObjectId) -> Result<(Vec<Entry>, Vec<Reason>)> {
    // Oldest first: what each commit did is read from its rows (fills and repairs, the count
    // from the root), never from its message; the message is only compared with it (rule 7).
    let mut chain = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        let info = read_commit(repo, id)?;
        next = info.parents.first().copied();
        chain.push(info);
    }
    chain.reverse();
    // A verdict (rule 7, exit 2): the declaration from its blob, never from the cache.
    let mut admission = Admission::new(repo, crate::json::DEFAULT_MAX_INPUT_BYTES).without_cache();
    let root = &chain[0];
    let known = admission.declaration_of_tree(root.tree, &format!("commit {}", root.id))?;
    let decl = &known.decl;
    let n = decl.schedule_len();
    let mut state = gix::diff::tree::State::default();
    let mut entries = Vec::new();
    let mut lies = Vec::new();
    let mut k = 0;
    let writers = tip_writers(repo, tip)?;
    let mut buf = Vec::new();
    for (i, info) in chain.iter().enumerate() {
        let id = info.id;
        let at = format!("commit {id}");
        let expected = if i == 0 {
            Ok(message::root_expected(decl))
        } else {
            let (mut filled, mut repaired) =
                what_changed(repo, decl, &mut state, &chain[i - 1], info)?;
            // Schedule order, as the trailers list them (the diff yields path order).
            filled.sort_by_key(|r| decl.schedule_position(r.schedule_id()));
            repaired.sort_by_key(|r| decl.schedule_position(r.schedule_id()));
            let f: Vec<&Row> = filled.iter().collect();
            let r: Vec<&Row> = repaired.iter().collect();
            // Counted from the trees: a lying parent message cannot move the count.
            let e = message::expected(decl, &f, &r, k);
            k += filled.len();
            let attempts = filled
                .iter()
                .map(|row| Attempt {
                    schedule_id: row.schedule_id().to_owned(),
                    native_outcome: row.native_outcome().to_owned(),
                    outcome: classify(decl, row).outcome.key().to_owned(),
                })
                .collect();
            let repairs = repaired
                .iter()
                .map(|r| r.schedule_id().to_owned())
                .collect();
            entries.push(entry(info, attempts, repairs, k, n));
            e
        };
        if i == 0 {
            entries.push(entry(info, Vec::new(), Vec::new(), 0, n));
        }
        // Rule 7 as the validator judges it (the encoding header included).
        let mut why = crate::error::Reasons::new();
        crate::git::admit::rule7(info, &expected, &at, &mut why);
        let why = why.into_vec();
        if let Some(last) = entries.last_mut() {
            last.message_admitted = why.is_empty();
            (last.signer, last.signature_refused) =
                signer_of(repo, id, writers.as_ref(), &mut buf)?;
        }
        lies.extend(why);
    }
    Ok((entries, lies))
}
