//! A ledger's history as `log` shows it: one entry per commit, with what each commit filled or
//! repaired and the filled count read from its rows (only `rows/` is compared, and only
//! changed rows are read), never from its message: a message is compared with them (rule 7 of
//! admission), and one that says something else is reported. Each entry names its signer
//! (rule 8 on a ledger with writers).

use serde::Serialize;

use crate::admission::{self, Did, RowEdit};
use crate::error::{Error, Result};
use crate::git::admit::{read_row, tree_changes, Admission};
use crate::git::allowed_signers::AllowedSigners;
use crate::git::layout::{self, Attempt, ROWS};
use crate::git::message;
use crate::git::objects::{find_in_tree, read_commit, CommitInfo};
use crate::git::signature;
use crate::ledger::Row;
use crate::portfolio::classify;
use crate::refusal::{Reason, Rule};

/// Who signed commit `id`, and on a ledger with writers why rule 8 does not hold for it.
fn signer_of(
    repo: &gix::Repository,
    id: gix::ObjectId,
    writers: Option<&AllowedSigners>,
    buf: &mut Vec<u8>,
) -> Result<(Option<Signer>, Option<Vec<Reason>>)> {
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
            // Rule 8 is broken at the commit the caller places it at, around the writers line
            // the reason may name (`commit X: rule 8: writers line 2: …`).
            Err(why) => (None, Some(vec![why.within_around(Rule::Admission(8))])),
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
            Some(Err(why)) => (None, Some(vec![Reason::new(why)])),
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
    /// Whether the commit is dated before its parent (its author or committer time earlier
    /// than the parent's): flagged, not refused (clocks differ), since a backdated commit
    /// claims an order of events its chain does not have.
    pub dated_before_parent: bool,
    /// Whether the commit's message says exactly what its tree did (rule 7); when not, the
    /// subject is shown as written but the attempts, repairs and count are the trees'.
    pub message_admitted: bool,
    /// Who signed it, named only once the signature verified: on a ledger with writers (the
    /// root's `writers`, checked against the declaration's hash), the writers line's principal
    /// and the key's fingerprint when rule 8 holds; elsewhere the key's fingerprint (principal
    /// null) when the signature verifies with the key it carries.
    pub signer: Option<Signer>,
    /// Why the signature is not good, as values: on a ledger with writers, why rule 8 does
    /// not hold for this commit; elsewhere, why a signature the commit carries does not verify.
    pub signature_refused: Option<Vec<Reason>>,
    /// Whether `verify` admits the chain from the root up to this commit.
    pub admitted: bool,
    /// When it does not: the reasons `verify` gives for the first commit it refuses, or, for
    /// the commits after it, one reason at the refused commit they follow.
    pub refused: Option<Vec<Reason>>,
    /// What the text form shows of `refused`: the rules broken (`rule 7`, `rule 8`, …), or
    /// the short id of the refused commit this one follows (the reasons themselves go to
    /// stderr, as `verify` prints them).
    #[serde(skip)]
    pub refused_short: Option<String>,
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
        dated_before_parent: false,
        message_admitted: true,
        signer: None,
        signature_refused: None,
        admitted: true,
        refused: None,
        refused_short: None,
    }
}

/// The rows `c` fills and repairs after `p`, read from their trees (`rows/` compared, each
/// changed row read and checked on both sides), as admission classifies each change
/// ([`admission::did`]): the rows it gave an attempt (a fill, or a retry on a refused chain),
/// the rows it changed otherwise (a repair, when admitted), and how many DEFERRED rows it
/// filled.
fn what_changed(
    repo: &gix::Repository,
    decl: &crate::declaration::Declaration,
    state: &mut gix::diff::tree::State,
    p: &CommitInfo,
    c: &CommitInfo,
) -> Result<(Vec<Row>, Vec<Row>, usize)> {
    let rows_of = |info: &CommitInfo| -> Result<gix::ObjectId> {
        find_in_tree(repo, info.tree, ROWS)?
            .filter(|(m, _)| m.is_tree())
            .map(|(_, id)| id)
            .ok_or_else(|| {
                Error::refused(Reason::new("rows/ is missing").at(format!("commit {}", info.id)))
            })
    };
    let (a, b) = (rows_of(p)?, rows_of(c)?);
    let (mut filled, mut repaired, mut newly) = (Vec::new(), Vec::new(), 0);
    if a == b {
        return Ok((filled, repaired, newly));
    }
    let (at, parent_at) = (format!("commit {}", c.id), format!("commit {}", p.id));
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
        if decl.schedule_position(sid).is_none() {
            continue; // not scheduled
        }
        let max = crate::json::DEFAULT_MAX_INPUT_BYTES;
        let before = read_row(repo, decl, old, sid, max, &parent_at)?.map_err(Error::refusal)?;
        let after = read_row(repo, decl, new, sid, max, &at)?.map_err(Error::refusal)?;
        let e = RowEdit {
            before,
            after,
            from: String::new(),
        };
        match admission::did(decl, &e) {
            Did::Filled => {
                newly += 1;
                filled.push(e.after);
            }
            Did::Retried => filled.push(e.after),
            Did::Changed => repaired.push(e.after),
            Did::Nothing => {}
        }
    }
    Ok((filled, repaired, newly))
}

/// A ledger's history as `log` shows it.
pub struct History {
    /// One entry per commit, oldest first.
    pub entries: Vec<Entry>,
    /// The rule 7 reasons of every commit whose message says something else, and `verify`'s
    /// reasons for the first commit it refuses (empty when the chain is admitted).
    pub reasons: Vec<Reason>,
    /// Whether the ledger's declaration names writers (rule 8 applies).
    pub writers: bool,
}

/// `log`: the history of the ledger ref `ledger_ref` names (default: the only one) in the
/// repository at `repo` (default: discovered), with the ref's full name.
pub fn of_ref(
    repo: Option<&std::path::Path>,
    ledger_ref: Option<&str>,
) -> Result<(String, History)> {
    let repo = crate::git::open(repo)?;
    let (name, tip) = crate::git::store::resolve_ref(&repo, ledger_ref)?;
    Ok((name, history(&repo, tip)?))
}

/// The history of the ledger whose tip is `tip`, oldest first: one entry per commit with what
/// its trees say it did, who signed it (named only after the signature verified, with the
/// declared writers), and whether `verify` admits it; never more trusting than `verify`.
pub fn history(repo: &gix::Repository, tip: gix::ObjectId) -> Result<History> {
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
    // The writers are the declared ones: the root's `writers`, checked against the
    // declaration's hash (rule 2 keeps every later tree's equal, and `verify` refuses a tree
    // whose are not), never a later tree's.
    let max = crate::json::DEFAULT_MAX_INPUT_BYTES;
    let (writers, writers_refused) = if known.decl.writers.is_some() {
        match signature::writers_of(repo, &known, root.tree, &format!("commit {}", root.id), max) {
            Ok(w) => (w.map(|(_, w)| w), None),
            // Rule 8 cannot hold for any commit: each reason, found by rule 8 around the
            // root's writers file.
            Err(Error::Refused(r)) => (
                None,
                Some(
                    r.into_vec()
                        .into_iter()
                        .map(|r| r.within_around(Rule::Admission(8)))
                        .collect::<Vec<_>>(),
                ),
            ),
            Err(e) => return Err(e),
        }
    } else {
        (None, None)
    };
    let mut buf = Vec::new();
    for (i, info) in chain.iter().enumerate() {
        let id = info.id;
        let at = format!("commit {id}");
        let expected = if i == 0 {
            Ok(message::root_expected(decl))
        } else {
            let (mut filled, mut repaired, newly) =
                what_changed(repo, decl, &mut state, &chain[i - 1], info)?;
            // Schedule order, as the trailers list them (the diff yields path order).
            filled.sort_by_key(|r| decl.schedule_position(r.schedule_id()));
            repaired.sort_by_key(|r| decl.schedule_position(r.schedule_id()));
            let f: Vec<&Row> = filled.iter().collect();
            let r: Vec<&Row> = repaired.iter().collect();
            // Counted from the trees: a lying parent message cannot move the count.
            let e = message::expected(decl, &f, &r, k);
            k += newly;
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
            if let Some(p) = i.checked_sub(1).map(|i| &chain[i]) {
                last.dated_before_parent = info.author_time.0 < p.author_time.0
                    || info.committer_time.0 < p.committer_time.0;
            }
            (last.signer, last.signature_refused) = match &writers_refused {
                // Declared writers that cannot be read name no signer.
                Some(why) => (None, Some(why.clone())),
                None => signer_of(repo, id, writers.as_deref(), &mut buf)?,
            };
        }
        lies.extend(why);
    }
    // What `verify` says of the chain: the first commit it refuses, and why; every commit
    // after it follows a refused one.
    let mut done = 0;
    let verdict = Admission::new(repo, max)
        .without_cache()
        .chain(None, tip, &mut |n, _| done = n);
    if let Err(e) = verdict {
        let Error::Refused(r) = e else {
            return Err(e);
        };
        let first = entries
            .get(done)
            .map(|e| e.commit.clone())
            .unwrap_or_default();
        let reasons = r.into_vec();
        let mut rules: Vec<String> = reasons
            .iter()
            .map(|r| match r.rule {
                Some(crate::refusal::Rule::Admission(n)) => format!("rule {n}"),
                _ => "its contents".to_owned(),
            })
            .collect();
        rules.sort();
        rules.dedup();
        for (i, e) in entries.iter_mut().enumerate().skip(done) {
            e.admitted = false;
            if i == done {
                e.refused = Some(reasons.clone());
                e.refused_short = Some(format!("{}; the reasons are below", rules.join(", ")));
            } else {
                e.refused = Some(vec![Reason::new(
                    "verify refuses this commit, and every commit after it follows it",
                )
                .at(format!("commit {first}"))]);
                e.refused_short = Some(format!(
                    "it follows {}, which verify refuses",
                    &first[..7.min(first.len())]
                ));
            }
        }
        for r in reasons {
            if !lies.contains(&r) {
                lies.push(r);
            }
        }
    }
    Ok(History {
        entries,
        reasons: lies,
        writers: known.decl.writers.is_some(),
    })
}
