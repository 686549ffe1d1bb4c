//! Replace refs (`refs/replace/<id>`, `git replace`) that cover ledger objects.
//!
//! git-ledger reads objects with replacement off ([`super::open`]), so its own commands stay
//! truthful; but `git log`, `git show` and every `--mirror` clone follow replace refs, so a
//! replace ref for a ledger commit, tree or row blob makes what a reviewer reads differ from
//! what was admitted. The hooks refuse such a ref, and `verify` names one that exists. An
//! object is covered when it is reachable from a ledger ref: its commits (every parent), their
//! trees and every blob below them.

use std::collections::{BTreeMap, HashSet};

use gix::ObjectId;

use super::admit::tree_changes;
use super::layout::{folds_to_replace_ref, NOTES_PREFIX, REPLACE_PREFIX};
use super::objects::read_commit;
use crate::error::{Error, Result};

/// `git config` key: refuse every new or moved replace ref, whatever it replaces.
pub const KEY_REFUSE: &str = "ledger.refuseReplaceRefs";

/// The object a replace ref replaces, read as Git reads it (`register_replace_ref` in Git's
/// `replace-object.c`): the last `/`-separated component of the name, of which the first
/// `hash.len_in_hex()` characters are the object id in hex of either case; whatever follows
/// is ignored. So `refs/replace/<id>`, `refs/replace/<ID>`, `refs/replace/<id>x` and
/// `refs/replace/any/<id>.y` all replace `<id>` in `git log`. `None` when that component does
/// not start with a full object id (Git warns "bad replace ref name" and ignores the ref).
pub fn replaced(name: &str, hash: gix::hash::Kind) -> Option<ObjectId> {
    if !folds_to_replace_ref(name) {
        return None;
    }
    let rest = &name[REPLACE_PREFIX.len()..];
    let last = rest.rsplit('/').next().unwrap_or(rest);
    let hex = last.as_bytes().get(..hash.len_in_hex())?;
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    ObjectId::from_hex(&hex.to_ascii_lowercase()).ok()
}

/// Every replace ref of the repository (name, replaced object).
pub fn existing(repo: &gix::Repository) -> Result<Vec<(String, ObjectId)>> {
    let fail = |e: &dyn std::fmt::Display| Error::failed(format!("cannot list replace refs: {e}"));
    let platform = repo.references().map_err(|e| fail(&e))?;
    let mut out = Vec::new();
    for r in platform.prefixed(REPLACE_PREFIX).map_err(|e| fail(&e))? {
        let r = r.map_err(|e| fail(&e))?;
        let name = r.name().as_bstr().to_string();
        if let Some(id) = replaced(&name, repo.object_hash()) {
            out.push((name, id));
        }
    }
    Ok(out)
}

/// The objects the notes commit `notes` annotates (`git notes`): the names of the blobs of its
/// tree, each path's components put together (`ab/cdef…` is fan-out) being a full object id in
/// hex, as Git reads a notes tree. `git log` shows a commit's note below its message, so a note
/// on a ledger commit is text a reviewer reads as part of it.
pub fn noted(repo: &gix::Repository, notes: ObjectId) -> Result<Vec<ObjectId>> {
    let hash = repo.object_hash();
    let tree = match super::objects::read_commit(repo, notes) {
        Ok(c) => c.tree,
        Err(_) => return Ok(Vec::new()), // not a commit: Git shows no note from it
    };
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut stack = vec![(tree, String::new())];
    while let Some((t, prefix)) = stack.pop() {
        let entries = super::tree::tree_entries(&repo.objects, hash, &t, "", &mut buf)?;
        for (name, mode, id) in entries {
            let path = format!("{prefix}{}", String::from_utf8_lossy(&name));
            if !path.bytes().all(|b| b.is_ascii_hexdigit()) || path.len() > hash.len_in_hex() {
                continue;
            }
            if mode.is_tree() {
                stack.push((id, path));
            } else if path.len() == hash.len_in_hex() {
                if let Ok(noted) = ObjectId::from_hex(path.to_ascii_lowercase().as_bytes()) {
                    out.push(noted);
                }
            }
        }
    }
    Ok(out)
}

/// Every notes ref of the repository (name, tip).
pub fn notes_refs(repo: &gix::Repository) -> Result<Vec<(String, ObjectId)>> {
    let fail = |e: &dyn std::fmt::Display| Error::failed(format!("cannot list notes refs: {e}"));
    let platform = repo.references().map_err(|e| fail(&e))?;
    let mut out = Vec::new();
    for r in platform.prefixed(NOTES_PREFIX).map_err(|e| fail(&e))? {
        let mut r = r.map_err(|e| fail(&e))?;
        let name = r.name().as_bstr().to_string();
        if let Ok(id) = r.peel_to_id() {
            out.push((name, id.detach()));
        }
    }
    Ok(out)
}

/// Whether `git config ledger.refuseReplaceRefs` is true (unset: false). A value that is not a
/// boolean is a usage error: a hook that guessed would either refuse what the server allows or
/// admit what it refuses.
pub fn refuse_all(repo: &gix::Repository) -> Result<bool> {
    match repo.config_snapshot().try_boolean(KEY_REFUSE) {
        Ok(v) => Ok(v.unwrap_or(false)),
        Err(e) => Err(Error::Usage(format!(
            "git config {KEY_REFUSE}: {e} (use true or false)"
        ))),
    }
}

/// Which of `wanted` are reachable from `tips` (`(ledger ref, commit, stop)`) without going
/// through `stop` (the tip before an update: what it reaches was there already): each found id
/// with the first ledger ref it was found under and its kind (`commit`, `tree`, `blob`). Walks
/// every commit once; each commit's tree is compared with its first parent's (so only what
/// changed is read), the root's is read whole.
pub fn covered<'a>(
    repo: &gix::Repository,
    tips: impl IntoIterator<Item = (&'a str, ObjectId, Option<ObjectId>)>,
    wanted: &HashSet<ObjectId>,
) -> Result<BTreeMap<ObjectId, (String, &'static str)>> {
    let mut found = BTreeMap::new();
    if wanted.is_empty() {
        return Ok(found);
    }
    let mut seen = HashSet::new();
    let mut state = Default::default();
    for (name, tip, stop) in tips {
        let mut hit = |id: ObjectId, kind: &'static str| {
            if wanted.contains(&id) {
                found.entry(id).or_insert_with(|| (name.to_owned(), kind));
            }
        };
        let mut stack = vec![tip];
        while let Some(commit) = stack.pop() {
            if Some(commit) == stop || !seen.insert(commit) {
                continue;
            }
            hit(commit, "commit");
            let info = read_commit(repo, commit)?;
            hit(info.tree, "tree");
            match info.parents.first() {
                Some(&p) => {
                    let parent_tree = read_commit(repo, p)?.tree;
                    for ch in tree_changes(repo, &mut state, parent_tree, info.tree)? {
                        if let Some((mode, id)) = ch.new {
                            hit(id, if mode.is_tree() { "tree" } else { "blob" });
                        }
                    }
                }
                None => whole_tree(repo, info.tree, &mut hit)?,
            }
            stack.extend(info.parents.iter().copied());
        }
    }
    Ok(found)
}

/// Every object below `tree`, passed to `hit`.
fn whole_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    hit: &mut dyn FnMut(ObjectId, &'static str),
) -> Result<()> {
    let mut buf = Vec::new();
    let mut stack = vec![tree];
    while let Some(t) = stack.pop() {
        let entries =
            super::tree::tree_entries(&repo.objects, repo.object_hash(), &t, "", &mut buf)?;
        for (_, mode, id) in entries {
            if mode.is_tree() {
                hit(id, "tree");
                stack.push(id);
            } else {
                hit(id, "blob");
            }
        }
    }
    Ok(())
}

/// An object of a ledger that a replace ref or a note makes `git log` show otherwise.
#[derive(Debug, Clone)]
pub struct ShownOtherwise {
    /// The replace or notes ref, as the repository that holds it names it.
    pub name: String,
    /// `commit`, `tree` or `blob`.
    pub kind: &'static str,
    pub id: ObjectId,
    /// The ledger ref the object was found under.
    pub ledger: String,
    /// A note (`git log` shows it under the message), not a replacement.
    pub note: bool,
}

/// Which objects of the ledgers `refs` (name, tip) the replace refs `replace` (name, replaced
/// object) and the notes refs `notes` (name, notes commit) cover.
pub fn find_shown_otherwise(
    repo: &gix::Repository,
    refs: &[(String, ObjectId)],
    replace: Vec<(String, ObjectId)>,
    notes: Vec<(String, ObjectId)>,
) -> Result<Vec<ShownOtherwise>> {
    let mut existing: Vec<(String, ObjectId, bool)> =
        replace.into_iter().map(|(n, id)| (n, id, false)).collect();
    // Notes (`git notes`): `git log` shows a commit's note under its message.
    for (name, tip) in notes {
        for id in self::noted(repo, tip)? {
            existing.push((name.clone(), id, true));
        }
    }
    if existing.is_empty() {
        return Ok(Vec::new());
    }
    let wanted = existing.iter().map(|(_, id, _)| *id).collect();
    let found = covered(
        repo,
        refs.iter().map(|(n, t)| (n.as_str(), *t, None)),
        &wanted,
    )?;
    let mut out = Vec::new();
    for (id, (ledger, kind)) in found {
        for (name, _, note) in existing.iter().filter(|(_, i, _)| *i == id) {
            out.push(ShownOtherwise {
                name: name.clone(),
                kind,
                id,
                ledger: ledger.clone(),
                note: *note,
            });
        }
    }
    Ok(out)
}

/// `verify`'s reasons about the ledgers `refs` (name, tip): each replace ref
/// (`refs/replace/<id>`) that replaces one of their objects and each note (`refs/notes/*`) on
/// one. `git log` and `git show` follow them, so a reviewer reading those would see another
/// object than the one admitted (`git ledger` reads objects with replacement off).
pub fn shown_otherwise(
    repo: &gix::Repository,
    refs: &[(String, ObjectId)],
) -> Result<Vec<crate::refusal::Reason>> {
    let found = find_shown_otherwise(repo, refs, existing(repo)?, notes_refs(repo)?)?;
    Ok(found
        .into_iter()
        .map(|s| {
            let ShownOtherwise { name, kind, id, ledger, note } = s;
            let sentence = if note {
                format!(
                    "it holds a note on {kind} {id} of {ledger}, which `git log` shows under its message as if it were part of what was admitted; remove it with `git notes --ref {name} remove {id}`"
                )
            } else {
                format!(
                    "it replaces {kind} {id} of {ledger}, so `git log` and `git show` show another object there than the one admitted; remove it with `git replace -d {id}`"
                )
            };
            crate::refusal::Reason::new(sentence).at(name)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replace_ref_names_the_object_it_replaces() {
        let sha1 = gix::hash::Kind::Sha1;
        let hex = "1234567890abcdef1234567890abcdef12345678";
        let id = ObjectId::from_hex(hex.as_bytes()).unwrap();
        assert_eq!(replaced(&format!("refs/replace/{hex}"), sha1), Some(id));
        assert_eq!(replaced(&format!("refs/REPLACE/{hex}"), sha1), Some(id));
        assert_eq!(
            replaced(&format!("refs/replace/{}", &hex[..39]), sha1),
            None
        );
        assert_eq!(replaced("refs/replace/not-an-id", sha1), None);
        // Git reads the first 40 hex digits of the last component, of either case, and ignores
        // what follows (red-team review of issue 15).
        for name in [
            format!("refs/replace/{}", hex.to_uppercase()),
            format!("refs/replace/{hex}x"),
            format!("refs/replace/{hex}.lock2"),
            format!("refs/replace/a/{hex}"),
            format!("refs/replace/a/b/{hex}zz"),
        ] {
            assert_eq!(replaced(&name, sha1), Some(id), "{name}");
        }
        assert_eq!(replaced(&format!("refs/replace/{hex}/x"), sha1), None);
        assert_eq!(replaced(&format!("refs/heads/{hex}"), sha1), None);
    }
}
