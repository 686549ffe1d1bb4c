//! Small object readers the ledger store, the admission validator and the history commands
//! share: a commit's header fields, one path in a tree (one tree object per path component,
//! never the whole tree), a blob read under a size bound checked from its header first, and
//! the one object writer (hashed first, written only when missing).

use gix::objs::tree::EntryMode;
use gix::objs::Kind;
use gix::ObjectId;

use super::tree::read_object;
use crate::error::{Error, Result};
use crate::refusal::Reason;

/// What the ledger commands need from a commit.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    pub message: String,
    pub author_name: String,
    pub author_email: String,
    /// Author time, seconds since the epoch, and the offset in seconds.
    pub author_time: (i64, i32),
    pub committer_name: String,
    pub committer_email: String,
    /// Committer time, seconds since the epoch, and the offset in seconds.
    pub committer_time: (i64, i32),
    /// The `encoding` header, when the commit has one (Git re-encodes such a message to show
    /// it).
    pub encoding: Option<String>,
}

/// Read a commit's tree, parents, message, author and committer.
pub fn read_commit(repo: &gix::Repository, id: ObjectId) -> Result<CommitInfo> {
    let mut buf = Vec::new();
    let data = read_object(
        &repo.objects,
        &id,
        Kind::Commit,
        || "commit".into(),
        &mut buf,
    )?;
    let corrupt = |e: &dyn std::fmt::Display| Error::failed(format!("commit {id} is corrupt: {e}"));
    let data = parseable(data);
    let c = gix::objs::CommitRef::from_bytes(&data, repo.object_hash()).map_err(|e| corrupt(&e))?;
    let tree = c.tree();
    let parents = c.parents().collect();
    let author = c.author().map_err(|e| corrupt(&e))?;
    let time = author.time().map_err(|e| corrupt(&e))?;
    let committer = c.committer().map_err(|e| corrupt(&e))?;
    let ctime = committer.time().map_err(|e| corrupt(&e))?;
    Ok(CommitInfo {
        id,
        tree,
        parents,
        message: String::from_utf8_lossy(c.message).into_owned(),
        author_name: String::from_utf8_lossy(author.name).trim().to_owned(),
        author_email: String::from_utf8_lossy(author.email).trim().to_owned(),
        author_time: (time.seconds, time.offset),
        committer_name: String::from_utf8_lossy(committer.name).trim().to_owned(),
        committer_email: String::from_utf8_lossy(committer.email).trim().to_owned(),
        committer_time: (ctime.seconds, ctime.offset),
        encoding: c.encoding.map(|e| String::from_utf8_lossy(e).into_owned()),
    })
}

/// A commit's bytes as gix's parser can read them: each header line after `committer` that
/// starts with `gpgsig` and carries no value (a bare `gpgsig` line, `gpgsigx`), with its
/// continuation lines, left out; every other byte kept. gix refuses a header line without a
/// space; Git reads such a commit (`git fsck` accepts it) and leaves every `gpgsig*` header out
/// of the payload it verifies, as rule 8 does (`signature::split`), and nothing git-ledger reads
/// from a commit comes from those lines. Before `committer` nothing is left out: there Git's
/// fsck refuses such a line (`missingAuthor`, `missingCommitter`), and so does git-ledger.
fn parseable(data: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let (mut after_committer, mut dropping) = (false, false);
    let mut at = 0;
    while at < data.len() {
        let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |i| at + i + 1);
        let line = &data[at..end];
        if line[0] == b'\n' {
            // The end of the headers: the rest is the message.
            if let Some(out) = out.as_mut() {
                out.extend_from_slice(&data[at..]);
            }
            break;
        }
        let value_less = after_committer
            && line.starts_with(b"gpgsig")
            && !line.trim_ascii_end().contains(&b' ');
        if value_less || (dropping && line[0] == b' ') {
            dropping = true;
            out.get_or_insert_with(|| data[..at].to_vec());
        } else {
            dropping = false;
            if line.starts_with(b"committer ") {
                after_committer = true;
            }
            if let Some(out) = out.as_mut() {
                out.extend_from_slice(line);
            }
        }
        at = end;
    }
    match out {
        Some(out) => std::borrow::Cow::Owned(out),
        None => std::borrow::Cow::Borrowed(data),
    }
}

/// The entry at `path` (`/`-separated) below `tree`, or `None` when it is not there (or a
/// component on the way is not a tree).
pub fn find_in_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    path: &str,
) -> Result<Option<(EntryMode, ObjectId)>> {
    find_in_tree_of(&repo.objects, repo.object_hash(), tree, path)
}

/// [`find_in_tree`] reading trees from `objects` (e.g. a [`super::tree::RecentTrees`]). Each
/// tree's entries are scanned where they lie, none copied.
pub fn find_in_tree_of(
    objects: &impl gix::objs::Find,
    hash: gix::hash::Kind,
    tree: ObjectId,
    path: &str,
) -> Result<Option<(EntryMode, ObjectId)>> {
    let mut buf = Vec::new();
    let mut current = tree;
    let mut parts = path.split('/').peekable();
    while let Some(name) = parts.next() {
        let data = read_object(
            objects,
            &current,
            Kind::Tree,
            || format!("tree for \"{path}\""),
            &mut buf,
        )?;
        let mut found = None;
        for entry in gix::objs::TreeRefIter::from_bytes(data, hash) {
            let e = entry.map_err(|e| {
                Error::failed(format!("tree {current} (\"{path}\") is corrupt: {e}"))
            })?;
            if e.filename == name.as_bytes() {
                found = Some((e.mode, e.oid.to_owned()));
                break;
            }
        }
        let Some((mode, id)) = found else {
            return Ok(None);
        };
        if parts.peek().is_none() {
            return Ok(Some((mode, id)));
        }
        if !mode.is_tree() {
            return Ok(None);
        }
        current = id;
    }
    Ok(None)
}

/// Read blob `id`, refusing it (before reading it) when it is larger than `max_bytes`. `what`
/// names it in messages.
pub fn read_blob_bounded_id(
    repo: &gix::Repository,
    id: ObjectId,
    max_bytes: u64,
    what: &str,
) -> Result<Vec<u8>> {
    read_blob_bounded_at(repo, id, max_bytes, "", what)
}

/// [`read_blob_bounded_id`] of the file `what` found at `at` (a commit): a refusal's place,
/// named in front of `what` in a failure's message.
pub fn read_blob_bounded_at(
    repo: &gix::Repository,
    id: ObjectId,
    max_bytes: u64,
    at: &str,
    what: &str,
) -> Result<Vec<u8>> {
    let shown = || match at {
        "" => what.to_owned(),
        at => format!("{at}: {what}"),
    };
    let header = repo
        .find_header(id)
        .map_err(|e| Error::failed(format!("cannot read {} (blob {id}): {e}", shown())))?;
    if header.kind() != Kind::Blob {
        return Err(Error::refused(
            Reason::new(format!("is a {}, not a file", header.kind()))
                .at(what)
                .at(at),
        ));
    }
    if header.size() > max_bytes {
        return Err(Error::refused_with_hint(
            Reason::new(format!(
                "{} bytes is over the input bound of {max_bytes} bytes (--max-input-bytes)",
                header.size()
            ))
            .at(what)
            .at(at),
            crate::error::MAX_INPUT_HINT,
        ));
    }
    let mut buf = Vec::new();
    read_object(&repo.objects, &id, Kind::Blob, shown, &mut buf)?;
    Ok(buf)
}

/// Whether a tree entry is a regular, non-executable file (mode 100644 exactly).
pub fn is_regular(mode: EntryMode) -> bool {
    mode.value() == 0o100644
}

/// Rule 3's sentence for an entry at `path` whose mode is not a regular file's: the one
/// check every reader of a ledger tree makes before it reads a blob as a row, a record or a
/// declaration.
pub fn not_regular(path: &str, mode: EntryMode) -> String {
    format!(
        "{path} has mode {}; every entry is a regular file (100644)",
        describe_mode(mode)
    )
}

/// A mode for messages: `100644`, `120000 (symlink)`, `160000 (submodule)`, `40000 (tree)`.
pub fn describe_mode(mode: EntryMode) -> String {
    let v = mode.value();
    let what = match v & 0o170000 {
        0o120000 => " (a symlink)",
        0o160000 => " (a submodule)",
        0o040000 => " (a directory)",
        0o100000 if v & 0o111 != 0 => " (an executable file)",
        _ => "",
    };
    format!("{v:o}{what}")
}

/// The first 12 hex digits of an id, for messages that also name the full id elsewhere.
pub fn short(id: &gix::oid) -> String {
    id.to_hex_with_len(12).to_string()
}

/// Write an object's bytes to the repository, unless it is there already (hashed first, once,
/// as Git and `gix::Repository::write_object` do: compressing a 1 MB `records/` tree costs more
/// than hashing it).
pub fn write_object(repo: &gix::Repository, kind: Kind, data: &[u8]) -> Result<ObjectId> {
    use gix::objs::Write;
    let fail =
        |e: &dyn std::fmt::Display| Error::failed(format!("cannot write a {kind} object: {e}"));
    let id = gix::objs::compute_hash(repo.object_hash(), kind, data).map_err(|e| fail(&e))?;
    if repo.has_object(id) {
        return Ok(id);
    }
    (repo.objects)
        .write_buf_with_known_id(kind, data, id)
        .map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::parseable;

    const HEAD: &str = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n";

    #[test]
    fn a_value_less_gpgsig_line_after_committer_is_left_out_with_its_continuation_lines() {
        let raw = format!("{HEAD}gpgsig\n z\n more\ngpgsigx\nencoding x\n\nmessage\n gpgsig\n");
        let got = parseable(raw.as_bytes());
        assert_eq!(
            std::str::from_utf8(&got).unwrap(),
            format!("{HEAD}encoding x\n\nmessage\n gpgsig\n")
        );
        let c = gix::objs::CommitRef::from_bytes(&got, gix::hash::Kind::Sha1).unwrap();
        assert_eq!(c.message, "message\n gpgsig\n");
    }

    #[test]
    fn every_other_commit_is_read_as_it_is() {
        for raw in [
            format!("{HEAD}gpgsig value\n z\n\nm\n"),
            format!("{HEAD}gpgsigx value\n\nm\n"),
            format!("{HEAD}\ngpgsig\n"),
            // Before the committer Git's fsck refuses the line: it stays, and gix refuses it.
            "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nm\n".into(),
        ] {
            assert!(matches!(parseable(raw.as_bytes()), std::borrow::Cow::Borrowed(_)), "{raw}");
        }
    }
}
