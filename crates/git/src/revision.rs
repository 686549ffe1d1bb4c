//! Turning what a user or a declaration names into a full commit id: revisions for `pin`
//! (`HEAD`, branches, tags, full or abbreviated hex, with `~N` / `^N` ancestry) and the declared
//! `source_revision` for `check`, which must be a full id of a commit present locally.
//!
//! gix's `revision` feature (full `rev_parse_single`) would need crates outside the offline
//! registry here and ~5 s more build; this small parser covers what `pin --revision` needs and
//! points to `git rev-parse` for anything else.

use gix::objs::Kind;
use gix::ObjectId;

use super::{show_str, FETCH_HINT};
use crate::error::{Error, Result};

/// The ancestry steps a revision may end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `~N`: the N-th first-parent ancestor.
    Ancestor(u32),
    /// `^N`: the N-th parent (`^0` is the commit itself).
    Parent(u32),
}

/// Split `rev` into its base name and its `~N` / `^N` / `^{commit}` / `^{}` steps.
fn split_rev(rev: &str) -> std::result::Result<(&str, Vec<Step>), String> {
    let cut = rev.find(['~', '^']).unwrap_or(rev.len());
    let (base, mut rest) = rev.split_at(cut);
    let mut steps = Vec::new();
    while let Some(op) = rest.chars().next() {
        if op != '~' && op != '^' {
            return Err(format!("unexpected `{rest}`"));
        }
        rest = &rest[1..];
        if op == '^' {
            if let Some(after) = rest
                .strip_prefix("{commit}")
                .or_else(|| rest.strip_prefix("{}"))
            {
                rest = after;
                continue;
            }
        }
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let n = if digits == 0 {
            1
        } else {
            rest[..digits]
                .parse::<u32>()
                .map_err(|_| format!("the number after `{op}` is too large"))?
        };
        rest = &rest[digits..];
        steps.push(if op == '~' {
            Step::Ancestor(n)
        } else {
            Step::Parent(n)
        });
    }
    Ok((base, steps))
}

/// Resolve `rev` to a full commit id: `HEAD` (or `@`), a branch, tag or other ref name (as Git
/// looks names up), a full or abbreviated (≥ 4) hex id, each optionally followed by `~N`,
/// `^N`, `^{commit}` or `^{}`. Annotated tags are peeled. Anything else fails (exit 1) with
/// a hint to pass a full id from `git rev-parse`.
pub fn resolve_commit(repo: &gix::Repository, rev: &str) -> Result<ObjectId> {
    let unsupported = |why: &str| {
        Error::failed_with_hint(
            format!("cannot resolve revision \"{}\": {why}", show_str(rev)),
            "use a branch, tag or commit id, optionally with ~N or ^N; for anything else pass the full id from `git rev-parse <rev>`",
        )
    };
    let (base, steps) = split_rev(rev).map_err(|e| unsupported(&e))?;
    let base = if base == "@" { "HEAD" } else { base };
    if base.is_empty()
        || base.contains([':', ' ', '\t', '\n'])
        || base.contains("@{")
        || base.contains("..")
    {
        return Err(unsupported("not a supported revision syntax"));
    }
    let id = resolve_base(repo, base)?.ok_or_else(|| {
        Error::failed_with_hint(
            format!(
                "revision \"{}\" names no branch, tag or commit in this repository",
                show_str(base)
            ),
            "check the name with `git rev-parse --verify <rev>`, or fetch it",
        )
    })?;
    let mut commit = peel_to_commit(repo, id, base)?;
    let mut walked = base.to_owned();
    for step in steps {
        let (count, nth) = match step {
            Step::Ancestor(n) => (n, 1),
            Step::Parent(0) => continue,
            Step::Parent(n) => (1, n),
        };
        for _ in 0..count {
            let parents = parent_ids(repo, commit)?;
            let Some(parent) = parents.get(nth as usize - 1) else {
                return Err(Error::failed(format!(
                    "revision \"{}\": commit {commit} ({walked}) has no parent number {nth}",
                    show_str(rev)
                )));
            };
            if !repo.has_object(parent) {
                return Err(Error::failed_with_hint(
                    format!(
                        "revision \"{}\": commit {parent} is not in this repository (a shallow clone?)",
                        show_str(rev)
                    ),
                    "fetch it, e.g. `git fetch --unshallow`",
                ));
            }
            commit = *parent;
            walked = commit.to_string();
        }
    }
    Ok(commit)
}

/// A name as Git looks it up: a full id, then refs (`HEAD`, `refs/…`, tags, branches,
/// remotes), then an unambiguous abbreviated id (preferring the one candidate that is a commit
/// or a tag).
fn resolve_base(repo: &gix::Repository, base: &str) -> Result<Option<ObjectId>> {
    let hex_len = repo.object_hash().len_in_hex();
    let is_hex = base.bytes().all(|b| b.is_ascii_hexdigit());
    if is_hex && base.len() == hex_len {
        let id = ObjectId::from_hex(base.as_bytes())
            .map_err(|e| Error::failed(format!("invalid object id {base}: {e}")))?;
        if !repo.has_object(id) {
            return Err(Error::failed_with_hint(
                format!("commit {id} is not in this repository"),
                super::FETCH_OBJECT_HINT,
            ));
        }
        return Ok(Some(id));
    }
    if gix::validate::reference::name_partial(base.into()).is_ok() {
        match repo.try_find_reference(base) {
            Ok(Some(mut reference)) => {
                let id = reference.peel_to_id().map_err(|e| {
                    Error::failed(format!(
                        "cannot resolve ref {}: {e}",
                        reference.name().as_bstr()
                    ))
                })?;
                return Ok(Some(id.detach()));
            }
            Ok(None) => {}
            Err(e) => return Err(Error::failed(format!("cannot read ref \"{base}\": {e}"))),
        }
    }
    if is_hex && base.len() >= 4 && base.len() < hex_len {
        let prefix = gix::hash::Prefix::from_hex(base)
            .map_err(|e| Error::failed(format!("invalid abbreviated id {base}: {e}")))?;
        let mut candidates = std::collections::HashSet::new();
        repo.objects
            .lookup_prefix(prefix, Some(&mut candidates))
            .map_err(|e| Error::failed(format!("cannot look up abbreviated id {base}: {e}")))?;
        let mut committish: Vec<ObjectId> = candidates
            .iter()
            .copied()
            .filter(|id| {
                matches!(
                    repo.find_header(*id).map(|h| h.kind()),
                    Ok(Kind::Commit | Kind::Tag)
                )
            })
            .collect();
        committish.sort();
        return match (candidates.len(), committish.as_slice()) {
            (0, _) => Ok(None),
            (1, _) => Ok(candidates.into_iter().next()),
            (_, [one]) => Ok(Some(*one)),
            (n, _) => Err(Error::failed_with_hint(
                format!("abbreviated id {base} is ambiguous ({n} objects start with it)"),
                "use more hex digits or the full id",
            )),
        };
    }
    Ok(None)
}

/// Peel annotated tags until a commit; anything else is a failure naming what it is.
fn peel_to_commit(repo: &gix::Repository, id: ObjectId, name: &str) -> Result<ObjectId> {
    let object = repo.find_object(id).map_err(|e| {
        Error::failed(format!(
            "cannot read object {id} (\"{}\"): {e}",
            show_str(name)
        ))
    })?;
    let peeled = object.peel_tags_to_end().map_err(|e| {
        Error::failed(format!(
            "cannot peel tag {id} (\"{}\"): {e}",
            show_str(name)
        ))
    })?;
    if peeled.kind != Kind::Commit {
        return Err(Error::failed(format!(
            "\"{}\" names a {} ({}), not a commit",
            show_str(name),
            peeled.kind,
            peeled.id
        )));
    }
    Ok(peeled.id)
}

/// The parent ids of a commit, in order.
fn parent_ids(repo: &gix::Repository, commit: ObjectId) -> Result<Vec<ObjectId>> {
    let c = repo
        .find_commit(commit)
        .map_err(|e| Error::failed(format!("cannot read commit {commit}: {e}")))?;
    Ok(c.parent_ids().map(|p| p.detach()).collect())
}

/// Check a declared `source_revision`: a full, lowercase hex id of this repository's hash
/// (40 for SHA-1, 64 for SHA-256) naming a commit in the local object store. A malformed id or
/// a non-commit is refused (exit 2); a commit that is not here fails (exit 1) with the
/// `git fetch --unshallow` hint.
pub fn require_commit(repo: &gix::Repository, full_hex: &str) -> Result<ObjectId> {
    let well_formed = matches!(full_hex.len(), 40 | 64)
        && full_hex
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !well_formed {
        return Err(Error::refused(format!(
            "source_revision \"{}\" is not a full commit id (40 or 64 lowercase hex digits)",
            show_str(full_hex)
        )));
    }
    let hash = repo.object_hash();
    if full_hex.len() != hash.len_in_hex() {
        return Err(Error::failed(format!(
            "commit {full_hex} is not in this repository: it is a {}-hex id and this repository uses {hash}",
            full_hex.len()
        )));
    }
    let id = ObjectId::from_hex(full_hex.as_bytes())
        .map_err(|e| Error::failed(format!("invalid commit id {full_hex}: {e}")))?;
    match repo.try_find_header(id) {
        Ok(Some(h)) if h.kind() == Kind::Commit => Ok(id),
        Ok(Some(h)) => Err(Error::refused(format!(
            "source_revision {id} is a {}, not a commit",
            h.kind()
        ))),
        Ok(None) => Err(Error::failed_with_hint(
            format!("commit {id} is not in this repository (a shallow or partial clone?)"),
            FETCH_HINT,
        )),
        Err(e) => Err(Error::failed(format!("cannot read commit {id}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_rev_reads_ancestry_steps() {
        assert_eq!(split_rev("HEAD").unwrap(), ("HEAD", vec![]));
        assert_eq!(
            split_rev("main~2^2^").unwrap(),
            (
                "main",
                vec![Step::Ancestor(2), Step::Parent(2), Step::Parent(1)]
            )
        );
        assert_eq!(split_rev("v1^{}").unwrap(), ("v1", vec![]));
        assert_eq!(
            split_rev("v1^{commit}~").unwrap(),
            ("v1", vec![Step::Ancestor(1)])
        );
        assert!(split_rev("HEAD~x").is_err());
        assert!(split_rev("HEAD^{tree}").is_err());
        assert!(split_rev("HEAD~99999999999").is_err());
        assert!(split_rev("v1^{}é").is_err());
        assert!(split_rev("HEAD~1é").is_err());
        assert!(split_rev("HEAD^{}^{}~é~").is_err());
    }
}
