//! The diff of two ledger states (`git ledger diff`): two commits of a ledger ref, or two ledger
//! files of one declaration. The rows that differ with their before and after, every other path
//! that differs, the change of every portfolio count, and whether B follows A; built as a
//! [`LedgerDiff`] that the CLI prints (`ledger_diff` renders it as text and JSON).

use std::path::Path;

use super::layout;
use super::objects::is_regular;
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::ledger_diff::{self, Follows, LedgerDiff};
use crate::report::DeclarationRef;

/// Two ledger files that follow the declaration at `decl_path`: the rows that differ (named by
/// their paths on a ref, `a/rows/…` and `b/rows/…`), the counts, and whether B follows A
/// (through [`ledger_diff::files_verdict`], the one admission function).
pub fn files(decl_path: &Path, a_file: &str, b_file: &str, max: u64) -> Result<LedgerDiff> {
    let decl = Declaration::read(decl_path, max)?;
    let a = Ledger::read(&decl, Path::new(a_file), max)?;
    // B may break "one record, one row" only as a change of A (rule 5, in why_not).
    let b = Ledger::read_for_change(&decl, Path::new(b_file), max)?;
    let (steps, why_not) = match ledger_diff::files_verdict(&decl, &a, &b)? {
        Ok(n) => (n, Vec::new()),
        Err(r) => (0, r.into_iter().map(|r| r.at(b_file)).collect()),
    };
    let mut rows = Vec::new();
    for e in crate::admission::LedgerChange::between(&decl, &a, &b).rows {
        let path = layout::row_path(e.before.schedule_id());
        rows.push(ledger_diff::row_diff(
            &decl,
            &e.before,
            &e.after,
            &format!("a/{path}"),
            &format!("b/{path}"),
        ));
    }
    Ok(LedgerDiff {
        admitted: ledger_diff::SidesAdmitted::both(),
        declaration: DeclarationRef {
            id: decl.id.clone(),
            sha256: decl.sha256.clone(),
        },
        a: a_file.to_owned(),
        b: b_file.to_owned(),
        counts: ledger_diff::count_changes(&rows),
        rows,
        other_paths: Vec::new(),
        follows: Follows {
            follows: why_not.is_empty(),
            steps: why_not.is_empty().then_some(steps),
            why_not,
        },
    })
}

/// `diff A [B]`: two commits of one ledger in the repository at `repo` (default: discovered);
/// B defaults to the tip of the ledger ref `ledger_ref` names (default: the only one), as
/// `git diff A` compares A with the state one works on.
pub fn commits_in(
    repo: Option<&Path>,
    a_rev: &str,
    b_rev: Option<&str>,
    ledger_ref: Option<&str>,
    max: u64,
) -> Result<LedgerDiff> {
    let repo = crate::git::open(repo)?;
    let b = match b_rev {
        Some(b) => b.to_owned(),
        None => super::read::ledger_ref(&repo, ledger_ref)?,
    };
    commits(&repo, a_rev, &b, max)
}

/// Two commits of one ledger, named by revisions `a_rev` and `b_rev`: the rows that differ
/// (their trees compared skipping unchanged subtrees, so the cost follows the changed rows),
/// every other path that differs, the counts, and whether B follows A by admitted steps (the
/// declaration read from its blob, never from the cache).
pub fn commits(repo: &gix::Repository, a_rev: &str, b_rev: &str, max: u64) -> Result<LedgerDiff> {
    let a = super::read::ledger_commit(repo, Some(a_rev), None)?;
    let b = super::read::ledger_commit(repo, Some(b_rev), None)?;
    let ia = super::objects::read_commit(repo, a)?;
    let ib = super::objects::read_commit(repo, b)?;
    // A verdict (whether B follows A): the declaration from its blob, never from the cache.
    let mut admission = super::admit::Admission::new(repo, max).without_cache();
    let ka = super::store::declaration_at(&mut admission, repo, ia.tree, &format!("commit {a}"))?;
    let kb = super::store::declaration_at(&mut admission, repo, ib.tree, &format!("commit {b}"))?;
    if ka.blob != kb.blob {
        return Err(Error::refused(format!(
            "{} and {} hold different declarations ({} and {}); diff compares states of one ledger",
            a_rev, b_rev, ka.decl.id, kb.decl.id
        )));
    }
    let decl = &ka.decl;
    let mut state = Default::default();
    let changes = super::admit::tree_changes(repo, &mut state, ia.tree, ib.tree)?;
    let mut rows = Vec::new();
    let mut other = Vec::new();
    let mut reasons = crate::error::Reasons::new();
    for super::admit::TreeChange { path, old, new } in changes {
        let path = String::from_utf8_lossy(&path).into_owned();
        if old.is_some_and(|(m, _)| m.is_tree()) || new.is_some_and(|(m, _)| m.is_tree()) {
            continue;
        }
        let sid = layout::schedule_id_of(&path).filter(|s| decl.schedule_position(s).is_some());
        match (sid, old, new) {
            // A row file must be a regular file: never read a symlink's target text or a
            // submodule's commit id as the row.
            (Some(sid), Some((ma, _)), Some((mb, _))) if !is_regular(ma) || !is_regular(mb) => {
                for (m, at) in [(ma, a), (mb, b)] {
                    if !is_regular(m) {
                        reasons.push(
                            crate::refusal::Reason::new(super::objects::not_regular(&path, m))
                                .row(sid)
                                .at(format!("commit {at}")),
                        );
                    }
                }
            }
            (Some(sid), Some((_, oa)), Some((_, ob))) => {
                let ra = super::admit::read_row(repo, decl, oa, sid, max, &format!("commit {a}"))?;
                let rb = super::admit::read_row(repo, decl, ob, sid, max, &format!("commit {b}"))?;
                match (ra, rb) {
                    (Ok(ra), Ok(rb)) => rows.push(ledger_diff::row_diff(
                        decl,
                        &ra,
                        &rb,
                        &format!("a/{path}"),
                        &format!("b/{path}"),
                    )),
                    (ra, rb) => {
                        reasons.extend(ra.err().unwrap_or_default());
                        reasons.extend(rb.err().unwrap_or_default());
                    }
                }
            }
            // A scheduled row missing on one side (removed, or a tree in its place): that
            // side is not a ledger state; say so rather than report "no row differs".
            (Some(sid), None, Some(_)) | (Some(sid), Some(_), None) => {
                let at = if old.is_none() { a } else { b };
                reasons.push(
                    crate::refusal::Reason::new(format!("is missing ({path} is not a file there)"))
                        .row(sid)
                        .at(format!("commit {at}")),
                );
            }
            _ if old.is_none() && layout::is_record_path(&path) => {}
            _ => other.push(format!(
                "{path} {}",
                match (old, new) {
                    (None, _) => "added",
                    (_, None) => "removed",
                    _ => "changed",
                }
            )),
        }
    }
    if !reasons.is_empty() {
        return Err(Error::Refused(reasons));
    }
    rows.sort_by_key(|r| decl.schedule_position(&r.schedule_id));
    let follows = match admission.follows(a, b)? {
        Ok(n) => Follows {
            follows: true,
            steps: Some(n),
            why_not: Vec::new(),
        },
        Err(why) => Follows {
            follows: false,
            steps: None,
            why_not: why,
        },
    };
    // Whether each side is an admitted state: shown either way, and said.
    let mut admitted = ledger_diff::SidesAdmitted::both();
    for (side, rev, commit) in [("A", a_rev, a), ("B", b_rev, b)] {
        let name = format!("commit {commit}");
        if let Some(r) = super::read::admitted(repo, commit, &name, max, None)? {
            admitted.refused.push(ledger_diff::SideRefused {
                side,
                rev: rev.to_owned(),
                reasons: r.into_vec(),
            });
            match side {
                "A" => admitted.a = false,
                _ => admitted.b = false,
            }
        }
    }
    Ok(LedgerDiff {
        admitted,
        declaration: DeclarationRef {
            id: decl.id.clone(),
            sha256: decl.sha256.clone(),
        },
        a: a_rev.to_owned(),
        b: b_rev.to_owned(),
        counts: ledger_diff::count_changes(&rows),
        rows,
        other_paths: other,
        follows,
    })
}
