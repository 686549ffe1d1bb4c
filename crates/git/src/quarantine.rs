//! Opening the repository from inside a Git hook, with the objects Git has not yet moved into
//! the object store visible.
//!
//! During `pre-receive` Git keeps the pushed objects in a quarantine directory and tells hooks
//! where it is through `GIT_OBJECT_DIRECTORY` (the quarantine) and
//! `GIT_ALTERNATE_OBJECT_DIRECTORIES` (the real store, and any other alternates). gix ignores
//! both variables, so a plain open cannot see the new commits. [`open_for_hook`] makes a private
//! temporary directory whose `info/alternates` lists every one of those directories and swaps the
//! repository's object store for one rooted there. The temporary directory lives as long as the
//! returned [`HookRepo`] (alternates are read lazily) and is removed when it is dropped.
//!
//! Where it lives: inside Git's quarantine directory (`GIT_QUARANTINE_PATH`, set for
//! `pre-receive`) when there is one, else in the system's temporary directory. A hook killed
//! with SIGKILL cannot remove it; inside the quarantine it goes with the quarantine, which Git
//! removes when the hook fails (a killed hook fails). Only a directory named
//! `git-ledger-objects-*` holding `info/alternates` is written there, never an object; Git
//! ignores it as an object directory (loose objects live in two-hex-digit directories), and a
//! hook that exits removes it before Git can migrate the quarantine into the real store.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A repository opened for a hook, with the temporary object directory that must outlive it.
pub struct HookRepo {
    pub repo: gix::Repository,
    /// Dropped after `repo` (field order): the store reads `info/alternates` lazily.
    _objects: Option<tempfile::TempDir>,
}

/// Open the repository found from `repo_dir` (as [`super::open_any_ref_storage`]: the hooks
/// refuse another ref backend per update); when
/// `GIT_OBJECT_DIRECTORY` or `GIT_ALTERNATE_OBJECT_DIRECTORIES` is set, read objects from those
/// directories too (see the module documentation).
pub fn open_for_hook(repo_dir: Option<&Path>) -> Result<HookRepo> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let object_dir = env("GIT_OBJECT_DIRECTORY").map(PathBuf::from);
    let alternates = env("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .map(|v| split_alternates(&v.to_string_lossy()))
        .unwrap_or_default();
    let quarantine = env("GIT_QUARANTINE_PATH").map(PathBuf::from);
    open_with_objects(repo_dir, object_dir, alternates, quarantine.as_deref())
}

/// [`open_for_hook`] with the directories given instead of read from the environment; the
/// temporary object directory is made inside `quarantine` when given (and a directory).
pub fn open_with_objects(
    repo_dir: Option<&Path>,
    object_dir: Option<PathBuf>,
    alternates: Vec<PathBuf>,
    quarantine: Option<&Path>,
) -> Result<HookRepo> {
    let mut repo = super::open_any_ref_storage(repo_dir)?;
    if object_dir.is_none() && alternates.is_empty() {
        return Ok(HookRepo {
            repo,
            _objects: None,
        });
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Error::failed(format!("cannot read the current directory: {e}")))?;
    let absolute = |p: PathBuf| if p.is_absolute() { p } else { cwd.join(p) };
    // The repository's own store comes first only when no quarantine replaces it; Git lists
    // the real store among the alternates during quarantine anyway.
    let mut dirs: Vec<PathBuf> = Vec::new();
    dirs.extend(object_dir.map(absolute));
    dirs.extend(alternates.into_iter().map(absolute));
    dirs.push(repo.common_dir().join("objects"));
    let mut listed = String::new();
    let mut seen = std::collections::HashSet::new();
    for d in dirs {
        let d = d.canonicalize().unwrap_or(d);
        let text = d.to_str().ok_or_else(|| {
            Error::failed(format!("object directory {} is not UTF-8", d.display()))
        })?;
        if text.contains('\n') {
            return Err(Error::failed(format!(
                "object directory {text:?} holds a newline"
            )));
        }
        if seen.insert(d.clone()) {
            listed.push_str(text);
            listed.push('\n');
        }
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix("git-ledger-objects-");
    let tmp = match quarantine.filter(|q| q.is_dir()) {
        Some(q) => builder.tempdir_in(absolute(q.to_path_buf())),
        None => builder.tempdir(),
    }
    .map_err(|e| Error::failed(format!("cannot create a temporary directory: {e}")))?;
    let info = tmp.path().join("info");
    std::fs::create_dir_all(&info)
        .and_then(|()| std::fs::write(info.join("alternates"), listed))
        .map_err(|e| Error::failed(format!("cannot write {}: {e}", info.display())))?;
    let handle = gix::odb::at_opts(
        tmp.path(),
        repo.object_hash(),
        std::iter::empty(),
        gix::odb::store::init::Options {
            current_dir: Some(cwd),
            ..Default::default()
        },
    )
    .map_err(|e| Error::failed(format!("cannot open the quarantined objects: {e}")))?;
    repo.objects = gix::odb::memory::Proxy::from(handle).with_write_passthrough();
    // The new handle starts without the delta-base cache every other handle has.
    super::set_caches(&mut repo);
    Ok(HookRepo {
        repo,
        _objects: Some(tmp),
    })
}

/// Split `GIT_ALTERNATE_OBJECT_DIRECTORIES`: `:`-separated; an entry starting with `"` is a
/// C-quoted path (how Git writes one holding `:` or `"`).
pub fn split_alternates(value: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut path = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    '\\' => match chars.next() {
                        Some((_, 'n')) => path.push('\n'),
                        Some((_, 't')) => path.push('\t'),
                        Some((_, other)) => path.push(other),
                        None => {}
                    },
                    c => path.push(c),
                }
            }
            if !path.is_empty() {
                out.push(PathBuf::from(path));
            }
            rest = &quoted[end.min(quoted.len())..];
            rest = rest.strip_prefix(':').unwrap_or(rest);
        } else {
            let (item, tail) = rest.split_once(':').unwrap_or((rest, ""));
            if !item.is_empty() {
                out.push(PathBuf::from(item));
            }
            rest = tail;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternates_split_on_colons_and_unquote() {
        assert_eq!(
            split_alternates("/a/objects:/b/objects"),
            vec![PathBuf::from("/a/objects"), PathBuf::from("/b/objects")]
        );
        assert_eq!(
            split_alternates("\"/with:colon\":/plain::"),
            vec![PathBuf::from("/with:colon"), PathBuf::from("/plain")]
        );
        assert_eq!(
            split_alternates("\"/q\\\"uote\""),
            vec![PathBuf::from("/q\"uote")]
        );
        assert!(split_alternates("").is_empty());
    }
}
