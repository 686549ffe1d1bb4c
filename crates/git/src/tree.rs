//! Finding one path in a commit's tree and reading blobs: the shared lookup under the
//! definition hash, `blob_sha256` (oracle, policy and profile files) and `read_blob` (the
//! profile's content at a revision).

use gix::objs::{Find, Kind, TreeRefIter};
use gix::ObjectId;
use std::rc::Rc;

use super::show_str;
use crate::error::{Error, Result};

/// What a repository-relative path names in a commit's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A file or symlink: its Git mode as Git writes it, and its blob id.
    Blob { mode: BlobMode, id: ObjectId },
    /// A directory.
    Tree(ObjectId),
}

/// The three blob modes, canonical as Git writes them (any other regular-file mode is read as
/// 100644 or 100755 by its executable bit, like Git's `canon_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlobMode {
    Regular,
    Executable,
    Symlink,
}

impl BlobMode {
    /// The octal mode string, e.g. `"100644"`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BlobMode::Regular => "100644",
            BlobMode::Executable => "100755",
            BlobMode::Symlink => "120000",
        }
    }
}

/// A tree entry classified, or the reason it cannot be pinned.
pub(crate) enum Classified {
    Blob(BlobMode),
    Tree,
    Submodule,
    Unknown(u16),
}

/// Classify a raw tree-entry mode (checked on the raw value: gix's `kind()` calls every
/// unknown mode a commit).
pub(crate) fn classify(mode: gix::objs::tree::EntryMode) -> Classified {
    let value = mode.value();
    match value & 0o170000 {
        0o100000 if value & 0o100 != 0 => Classified::Blob(BlobMode::Executable),
        0o100000 => Classified::Blob(BlobMode::Regular),
        0o120000 => Classified::Blob(BlobMode::Symlink),
        0o040000 => Classified::Tree,
        0o160000 => Classified::Submodule,
        _ => Classified::Unknown(value),
    }
}

/// Check a declared path: repository-relative, `/`-separated, no empty, `.` or `..` component.
pub(crate) fn check_path(path: &str) -> Result<()> {
    let bad = path.is_empty()
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(Error::refused(format!(
            "path \"{}\" is not a repository-relative path (no leading or trailing `/`, no empty, `.` or `..` component)",
            show_str(path)
        )));
    }
    if path.contains('\0') {
        return Err(Error::refused(format!(
            "path \"{}\" contains a NUL byte",
            show_str(path)
        )));
    }
    Ok(())
}

/// Read an object of the expected kind into `buf`; a missing object is a failure with the
/// fetch hint, a wrong kind is a failure naming both kinds.
pub fn read_object<'a>(
    objects: &impl Find,
    id: &gix::oid,
    kind: Kind,
    what: impl FnOnce() -> String,
    buf: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    match objects.try_find(id, buf) {
        Ok(Some(data)) if data.kind == kind => Ok(data.data),
        Ok(Some(data)) => Err(Error::failed(format!(
            "{} {id} is a {}, not a {kind}",
            what(),
            data.kind
        ))),
        Ok(None) => Err(Error::failed_with_hint(
            format!("{} {id} is not in this repository", what()),
            super::FETCH_OBJECT_HINT,
        )),
        Err(e) => Err(Error::failed(format!("cannot read {} {id}: {e}", what()))),
    }
}

/// The root tree of `commit`.
pub(crate) fn commit_tree(repo: &gix::Repository, commit: ObjectId) -> Result<ObjectId> {
    let mut buf = Vec::new();
    let data = read_object(
        &repo.objects,
        &commit,
        Kind::Commit,
        || "commit".into(),
        &mut buf,
    )?;
    gix::objs::CommitRefIter::from_bytes(data, repo.object_hash())
        .tree_id()
        .map_err(|e| Error::failed(format!("commit {commit} is corrupt: {e}")))
}

/// The entries of a tree object, owned: `(name, mode, id)`.
pub fn tree_entries(
    objects: &impl Find,
    hash: gix::hash::Kind,
    tree: &gix::oid,
    shown: &str,
    buf: &mut Vec<u8>,
) -> Result<Vec<(Vec<u8>, gix::objs::tree::EntryMode, ObjectId)>> {
    let data = read_object(
        objects,
        tree,
        Kind::Tree,
        || format!("tree for \"{shown}\""),
        buf,
    )?;
    TreeRefIter::from_bytes(data, hash)
        .map(|entry| {
            entry
                .map(|e| (e.filename.to_vec(), e.mode, e.oid.to_owned()))
                .map_err(|e| Error::failed(format!("tree {tree} (\"{shown}\") is corrupt: {e}")))
        })
        .collect()
}

/// Find `path` in `commit`'s tree. A path that is not there, or that runs through a file or a
/// submodule, is refused naming it.
pub(crate) fn lookup(repo: &gix::Repository, commit: ObjectId, path: &str) -> Result<Entry> {
    check_path(path)?;
    let hash = repo.object_hash();
    let missing = || {
        Error::refused(format!(
            "path \"{}\" does not exist at commit {commit}",
            show_str(path)
        ))
    };
    let mut buf = Vec::new();
    let mut tree = commit_tree(repo, commit)?;
    let mut walked = String::new();
    let mut components = path.split('/').peekable();
    while let Some(name) = components.next() {
        let shown = if walked.is_empty() {
            ""
        } else {
            walked.as_str()
        };
        let entries = tree_entries(&repo.objects, hash, &tree, shown, &mut buf)?;
        let Some((_, mode, id)) = entries.into_iter().find(|(n, _, _)| n == name.as_bytes()) else {
            return Err(missing());
        };
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(name);
        let last = components.peek().is_none();
        match classify(mode) {
            Classified::Tree if last => return Ok(Entry::Tree(id)),
            Classified::Tree => tree = id,
            Classified::Blob(mode) if last => return Ok(Entry::Blob { mode, id }),
            Classified::Blob(_) => return Err(missing()),
            Classified::Submodule => {
                return Err(Error::refused(format!(
                    "path \"{}\" is a submodule (mode 160000) at commit {commit}: a declaration cannot pin what the repository does not hold",
                    show_str(&walked)
                )))
            }
            Classified::Unknown(m) => {
                return Err(Error::refused(format!(
                    "path \"{}\" has an unknown Git mode {m:o} at commit {commit}",
                    show_str(&walked)
                )))
            }
        }
    }
    Err(missing())
}

/// The blob at `path` in `commit`, refusing a directory or a missing path.
fn blob_at(repo: &gix::Repository, commit: ObjectId, path: &str) -> Result<ObjectId> {
    match lookup(repo, commit, path)? {
        Entry::Blob { id, .. } => Ok(id),
        Entry::Tree(_) => Err(Error::refused(format!(
            "path \"{}\" is a directory at commit {commit}, not a file",
            show_str(path)
        ))),
    }
}

/// The bytes of the file (or symlink target) at `path` in `commit`.
pub fn read_blob(repo: &gix::Repository, commit: ObjectId, path: &str) -> Result<Vec<u8>> {
    read_blob_bounded(repo, commit, path, u64::MAX)
}

/// Like [`read_blob`], but refuse a blob larger than `max_bytes` before reading it.
pub fn read_blob_bounded(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
    max_bytes: u64,
) -> Result<Vec<u8>> {
    let id = blob_at(repo, commit, path)?;
    if max_bytes != u64::MAX {
        let header = repo.find_header(id).map_err(|e| {
            Error::failed(format!(
                "cannot read blob {id} (\"{}\"): {e}",
                show_str(path)
            ))
        })?;
        if header.size() > max_bytes {
            return Err(Error::refused(format!(
                "\"{}\" at commit {commit} is {} bytes, over the bound of {max_bytes} bytes",
                show_str(path),
                header.size()
            )));
        }
    }
    let mut buf = Vec::new();
    read_object(
        &repo.objects,
        &id,
        Kind::Blob,
        || format!("blob for \"{}\"", show_str(path)),
        &mut buf,
    )?;
    Ok(buf)
}

/// The lowercase hex SHA-256 of the bytes of the file (or symlink target) at `path` in
/// `commit`: the plain hash that `oracle`, `policy_files` and `profile.source` pin.
pub fn blob_sha256(repo: &gix::Repository, commit: ObjectId, path: &str) -> Result<String> {
    let id = blob_at(repo, commit, path)?;
    let mut buf = Vec::new();
    let data = read_object(
        &repo.objects,
        &id,
        Kind::Blob,
        || format!("blob for \"{}\"", show_str(path)),
        &mut buf,
    )?;
    Ok(crate::sha256_hex(data))
}

/// An object store that keeps the last few large trees it read. One admission step reads its
/// parent's and its child's changed trees (the diff) and the child's again (the canonical-tree
/// check), and the next step's parent is this step's child: without it each version of the
/// flat `records/` tree of layout version 1 (~100 bytes per filled row) was inflated three
/// times by `verify`. A writer shares what it keeps with the admission of its write ([`RecentTrees::sharing`]):
/// the trees it read to edit, and the ones it wrote, are then not read again.
pub struct RecentTrees<'r> {
    objects: &'r gix::OdbHandle,
    kept: KeptTrees,
}

/// The trees a [`RecentTrees`] keeps, which several readers of one repository may share.
pub type KeptTrees = Rc<std::cell::RefCell<std::collections::VecDeque<(ObjectId, Rc<Vec<u8>>)>>>;

impl<'r> RecentTrees<'r> {
    /// Trees smaller than this are cheap to read again and are not kept.
    const MIN_BYTES: usize = 16 << 10;
    /// How many trees are kept (a step's parent and child `records/` and `rows/` directories,
    /// with room to spare).
    const KEEP: usize = 8;

    pub fn new(objects: &'r gix::OdbHandle) -> Self {
        Self::sharing(objects, KeptTrees::default())
    }

    /// Read through `objects`, keeping trees in `kept` (shared with other readers).
    pub fn sharing(objects: &'r gix::OdbHandle, kept: KeptTrees) -> Self {
        RecentTrees { objects, kept }
    }

    fn kept(&self, id: &gix::oid) -> Option<Rc<Vec<u8>>> {
        let kept = self.kept.borrow();
        kept.iter()
            .find(|(k, _)| k.as_ref() == id)
            .map(|(_, d)| d.clone())
    }

    /// Keep (a copy of) the tree `id` if it is large enough: one just read, or just written.
    pub fn keep(&self, id: &gix::oid, data: &[u8]) -> Option<Rc<Vec<u8>>> {
        (data.len() >= Self::MIN_BYTES).then(|| self.keep_owned(id, data.to_vec()))
    }

    /// Keep the tree `id`, whose bytes the caller gives up (no copy).
    fn keep_owned(&self, id: &gix::oid, data: Vec<u8>) -> Rc<Vec<u8>> {
        let data = Rc::new(data);
        let mut kept = self.kept.borrow_mut();
        if kept.len() == Self::KEEP {
            kept.pop_front();
        }
        kept.push_back((id.to_owned(), data.clone()));
        data
    }

    /// The bytes of the tree `id`, shared with the store when it keeps them (no copy); errors
    /// as [`read_object`]'s.
    pub fn tree(&self, id: &gix::oid, what: impl FnOnce() -> String) -> Result<Rc<Vec<u8>>> {
        if let Some(data) = self.kept(id) {
            return Ok(data);
        }
        let mut buf = Vec::new();
        let (at, len) = {
            let data = read_object(self.objects, id, Kind::Tree, what, &mut buf)?;
            (data.as_ptr() as usize, data.len())
        };
        // The object's bytes are in the buffer (at its start, in fact): keep them, no copy.
        let offset = at.wrapping_sub(buf.as_ptr() as usize);
        let buf = match buf.get(offset..offset.saturating_add(len)) {
            Some(_) => {
                buf.truncate(offset + len);
                buf.drain(..offset);
                buf
            }
            None => {
                return Err(Error::failed(format!(
                    "tree {id} was read outside its buffer"
                )))
            }
        };
        Ok(if len >= Self::MIN_BYTES {
            self.keep_owned(id, buf)
        } else {
            Rc::new(buf)
        })
    }
}

impl Find for RecentTrees<'_> {
    fn try_find<'a>(
        &self,
        id: &gix::oid,
        buffer: &'a mut Vec<u8>,
    ) -> gix::error::Result<Option<gix::objs::Data<'a>>> {
        if let Some(data) = self.kept(id) {
            buffer.clear();
            buffer.extend_from_slice(&data);
            return Ok(Some(gix::objs::Data::new(buffer, Kind::Tree, id.kind())));
        }
        let found = self.objects.try_find(id, buffer)?;
        if let Some(d) = &found {
            if d.kind == Kind::Tree {
                self.keep(id, d.data);
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;

    #[test]
    fn recent_trees_answer_as_the_store_does_and_keep_only_large_trees() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        git(p, &["init", "-q"]);
        std::fs::create_dir_all(p.join("big")).unwrap();
        std::fs::create_dir_all(p.join("small")).unwrap();
        for i in 0..400 {
            std::fs::write(p.join(format!("big/{i:060}.json")), "{}\n").unwrap();
        }
        std::fs::write(p.join("small/a.json"), "{}\n").unwrap();
        git(p, &["add", "-A"]);
        git(p, &["commit", "-q", "-m", "trees"]);
        let id = |rev: &str| ObjectId::from_hex(git(p, &["rev-parse", rev]).as_bytes()).unwrap();
        let (big, small, blob) = (id("HEAD:big"), id("HEAD:small"), id("HEAD:small/a.json"));
        let repo = crate::open(Some(p)).unwrap();
        let trees = RecentTrees::new(&repo.objects);
        for id in [big, small, blob, big, small, blob] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let got = trees.try_find(&id, &mut a).unwrap().unwrap();
            let want = repo.objects.try_find(&id, &mut b).unwrap().unwrap();
            assert_eq!((got.kind, got.data), (want.kind, want.data));
        }
        // The shared read gives the store's bytes, and keeps nothing twice.
        let mut want = Vec::new();
        let stored = repo.objects.try_find(&big, &mut want).unwrap().unwrap();
        assert_eq!(&*trees.tree(&big, || "big".into()).unwrap(), stored.data);
        let kept: Vec<ObjectId> = trees.kept.borrow().iter().map(|(k, _)| *k).collect();
        assert_eq!(kept, [big], "only the large tree is kept, once");
        let missing = ObjectId::from_hex(b"0123456789012345678901234567890123456789").unwrap();
        assert!(trees.try_find(&missing, &mut Vec::new()).unwrap().is_none());
    }
}
