//! The definition hash (`declaration.md`, "The definition hash"): every blob under a path at a
//! commit, as rows `[path, mode, sha256]` sorted by path bytes, serialised as Python's
//! `json.dumps(rows, separators=(",", ":"), ensure_ascii=True)` writes them, then SHA-256.
//!
//! Speed: the tree is listed once, each distinct blob id is read and hashed once however many
//! paths share it, one reusable buffer per worker, and the distinct blobs are shared out in
//! chunks between worker threads (one per core, up to [`MAX_THREADS`]). Workers other than the
//! caller's thread open their own handle on the same object store (gix repositories are not
//! `Send` without gix's `parallel` feature, and a store handle is cheap to open).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use gix::objs::{Find, Kind};
use gix::ObjectId;
use sha2::{Digest, Sha256};

use super::tree::{self, read_object, tree_entries, BlobMode, Classified, Entry};
use super::{show_path, show_str};
use crate::error::{Error, Result};

/// The most worker threads one hash uses.
pub const MAX_THREADS: usize = 8;

/// Distinct blobs handed to a worker at a time: large enough to amortise the shared counter,
/// small enough to balance the load at the end.
const CHUNK: usize = 32;

/// Below this many distinct blobs one thread does the work (opening a store costs more).
const PARALLEL_MIN_BLOBS: usize = 64;

/// A definition hash and the number of files (rows) it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionHash {
    /// Lowercase hex SHA-256 of the serialised rows.
    pub sha256: String,
    /// The number of rows.
    pub files: u64,
}

/// Digests a worker computed, by index into the distinct-blob list.
type Digests = Vec<(usize, [u8; 32])>;

/// One row before hashing: the path's bytes, its mode, and which distinct blob it holds.
struct Row {
    path: String,
    mode: BlobMode,
    blob: usize,
}

/// The definition hash of `path` (a directory or a single file) at `commit`, using every core
/// (up to [`MAX_THREADS`]).
pub fn definition_hash(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
) -> Result<DefinitionHash> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    definition_hash_with(repo, commit, path, threads)
}

/// [`definition_hash`] with an explicit number of worker threads (clamped to
/// `1..=MAX_THREADS`); the result does not depend on it.
pub fn definition_hash_with(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
    threads: usize,
) -> Result<DefinitionHash> {
    let (rows, blobs) = list_rows(repo, commit, path)?;
    let digests = hash_blobs(repo, &blobs, threads.clamp(1, MAX_THREADS))?;
    let json = rows_json(rows.iter().map(|r| {
        (
            r.path.as_str(),
            r.mode.as_str(),
            crate::hex(&digests[r.blob]),
        )
    }));
    Ok(DefinitionHash {
        sha256: crate::sha256_hex(&json),
        files: rows.len() as u64,
    })
}

/// Every blob under `path` at `commit` as rows sorted by path bytes, and the distinct blob ids
/// (in first-seen order, which follows the tree and so roughly the pack order).
fn list_rows(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
) -> Result<(Vec<Row>, Vec<ObjectId>)> {
    let mut blobs: Vec<ObjectId> = Vec::new();
    let mut index: HashMap<ObjectId, usize> = HashMap::new();
    let mut intern = |id: ObjectId| {
        *index.entry(id).or_insert_with(|| {
            blobs.push(id);
            blobs.len() - 1
        })
    };
    let mut rows = Vec::new();
    match tree::lookup(repo, commit, path)? {
        Entry::Blob { mode, id } => rows.push(Row {
            path: path.to_owned(),
            mode,
            blob: intern(id),
        }),
        Entry::Tree(root) => {
            let hash = repo.object_hash();
            let mut buf = Vec::new();
            let mut stack: Vec<(ObjectId, Vec<u8>)> = vec![(root, path.as_bytes().to_vec())];
            while let Some((tree_id, dir)) = stack.pop() {
                let shown = show_path(&dir);
                let entries = tree_entries(&repo.objects, hash, &tree_id, &shown, &mut buf)?;
                if entries.is_empty() {
                    return Err(Error::refused(format!(
                        "\"{shown}\" is an empty tree at commit {commit}: a definition hash cannot pin an empty directory"
                    )));
                }
                // Push subtrees in reverse so they pop in tree order (keeps reads near pack order).
                let mut subtrees = Vec::new();
                for (name, mode, id) in entries {
                    let mut full = Vec::with_capacity(dir.len() + 1 + name.len());
                    full.extend_from_slice(&dir);
                    full.push(b'/');
                    full.extend_from_slice(&name);
                    match tree::classify(mode) {
                        Classified::Tree => subtrees.push((id, full)),
                        Classified::Blob(mode) => {
                            let path = String::from_utf8(full).map_err(|e| {
                                Error::refused(format!(
                                    "path \"{}\" at commit {commit} is not valid UTF-8: a definition hash needs UTF-8 paths",
                                    show_path(e.as_bytes())
                                ))
                            })?;
                            rows.push(Row { path, mode, blob: intern(id) });
                        }
                        Classified::Submodule => {
                            return Err(Error::refused(format!(
                                "\"{}\" is a submodule (mode 160000) at commit {commit}: a declaration cannot pin what the repository does not hold",
                                show_path(&full)
                            )))
                        }
                        Classified::Unknown(m) => {
                            return Err(Error::refused(format!(
                                "\"{}\" has an unknown Git mode {m:o} at commit {commit}",
                                show_path(&full)
                            )))
                        }
                    }
                }
                stack.extend(subtrees.into_iter().rev());
            }
        }
    }
    rows.sort_unstable_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    if let Some(w) = rows.windows(2).find(|w| w[0].path == w[1].path) {
        return Err(Error::refused(format!(
            "\"{}\" appears twice at commit {commit} (a malformed tree)",
            show_str(&w[0].path)
        )));
    }
    Ok((rows, blobs))
}

/// SHA-256 of every blob in `blobs`, in the same order, using up to `threads` threads.
fn hash_blobs(repo: &gix::Repository, blobs: &[ObjectId], threads: usize) -> Result<Vec<[u8; 32]>> {
    // Objects held only in memory (not yet written) are invisible to other handles.
    let threads = if blobs.len() < PARALLEL_MIN_BLOBS || repo.objects.num_objects_in_memory() > 0 {
        1
    } else {
        threads.min(blobs.len().div_ceil(CHUNK))
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    if threads <= 1 {
        let mut out = Vec::with_capacity(blobs.len());
        let mut buf = Vec::new();
        for id in blobs {
            out.push(hash_blob(&repo.objects, id, &mut buf)?);
        }
        return Ok(out);
    }
    let store = repo.objects.store_ref();
    let (dir, hash) = (store.path().to_path_buf(), store.object_hash());
    let replacements: Vec<_> = store.replacements().collect();
    let mut digests = vec![[0u8; 32]; blobs.len()];
    let results: Vec<Result<Digests>> =
        std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads)
                .map(|_| {
                    let (dir, replacements) = (&dir, &replacements);
                    let (next, stop) = (&next, &stop);
                    scope.spawn(move || {
                        let odb = gix::odb::at_opts(
                            dir.clone(),
                            hash,
                            replacements.iter().copied(),
                            Default::default(),
                        )
                        .map_err(|e| {
                            Error::failed(format!(
                                "cannot open the object store {}: {e}",
                                dir.display()
                            ))
                        })?;
                        work(&odb, blobs, next, stop)
                    })
                })
                .collect();
            let mut results = vec![work(&repo.objects, blobs, &next, &stop)];
            for w in workers {
                results.push(w.join().unwrap_or_else(|_| {
                    Err(Error::failed("a hashing thread stopped unexpectedly"))
                }));
            }
            results
        });
    for result in results {
        for (i, digest) in result? {
            digests[i] = digest;
        }
    }
    Ok(digests)
}

/// Take chunks of `blobs` until none are left (or another worker failed), hashing each.
fn work(
    objects: &impl Find,
    blobs: &[ObjectId],
    next: &AtomicUsize,
    stop: &AtomicBool,
) -> Result<Digests> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
        if start >= blobs.len() || stop.load(Ordering::Relaxed) {
            return Ok(out);
        }
        for (i, id) in blobs.iter().enumerate().skip(start).take(CHUNK) {
            match hash_blob(objects, id, &mut buf) {
                Ok(d) => out.push((i, d)),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
    }
}

/// SHA-256 of one blob's bytes, reading it into the reused `buf`.
fn hash_blob(objects: &impl Find, id: &ObjectId, buf: &mut Vec<u8>) -> Result<[u8; 32]> {
    let data = read_object(objects, id, Kind::Blob, || "blob".into(), buf)?;
    Ok(Sha256::digest(data).into())
}

/// Serialise rows exactly as Python's `json.dumps(rows, separators=(",", ":"),
/// ensure_ascii=True)` does.
fn rows_json<'a>(rows: impl Iterator<Item = (&'a str, &'a str, String)>) -> Vec<u8> {
    let mut out = Vec::new();
    out.push(b'[');
    for (i, (path, mode, sha)) in rows.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        py_ascii_string(&mut out, path);
        out.push(b',');
        py_ascii_string(&mut out, mode);
        out.push(b',');
        py_ascii_string(&mut out, &sha);
        out.push(b']');
    }
    out.push(b']');
    out
}

/// A JSON string as Python's `ensure_ascii=True` encoder writes it: `\"`, `\\`, `\n`, `\r`,
/// `\t`, `\b`, `\f`; every other character outside `' '..='~'` as `\uXXXX` (lowercase hex),
/// characters above U+FFFF as a UTF-16 surrogate pair.
fn py_ascii_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            ' '..='~' => out.push(c as u8),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let mut digits = [0u8; 4];
                    faster_hex::hex_encode_fallback(&unit.to_be_bytes(), &mut digits);
                    out.extend_from_slice(b"\\u");
                    out.extend_from_slice(&digits);
                }
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;

    fn escaped(s: &str) -> String {
        let mut out = Vec::new();
        py_ascii_string(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn worked_example_from_the_spec() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::create_dir(dir.path().join("t")).unwrap();
        std::fs::write(dir.path().join("t/a.txt"), "hi\n").unwrap();
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-q", "-m", "example"]);
        let repo = crate::open(Some(dir.path())).unwrap();
        let head = crate::resolve_commit(&repo, "HEAD").unwrap();
        let (rows, blobs) = list_rows(&repo, head, "t").unwrap();
        let digests = hash_blobs(&repo, &blobs, 1).unwrap();
        let json = rows_json(rows.iter().map(|r| {
            (
                r.path.as_str(),
                r.mode.as_str(),
                crate::hex(&digests[r.blob]),
            )
        }));
        assert_eq!(
            String::from_utf8(json).unwrap(),
            r#"[["t/a.txt","100644","98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4"]]"#
        );
        let expected = DefinitionHash {
            sha256: "d73cfee416a56f2939a20f59a3b941a5a3f7e025400bb0fb97040a5d1d1ebe99".into(),
            files: 1,
        };
        assert_eq!(definition_hash(&repo, head, "t").unwrap(), expected);
        for threads in [1, 2, 8] {
            assert_eq!(
                definition_hash_with(&repo, head, "t", threads).unwrap(),
                expected
            );
        }
        // The file itself is one row under the same path, so the same hash.
        assert_eq!(definition_hash(&repo, head, "t/a.txt").unwrap(), expected);
        assert_eq!(
            crate::blob_sha256(&repo, head, "t/a.txt").unwrap(),
            "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4"
        );
        assert_eq!(crate::read_blob(&repo, head, "t/a.txt").unwrap(), b"hi\n");
    }

    #[test]
    fn strings_are_escaped_like_python_ensure_ascii() {
        // Expected values printed by python3: json.dumps(s, ensure_ascii=True).
        assert_eq!(escaped("a/b.txt"), r#""a/b.txt""#);
        assert_eq!(escaped("q\"b\\s"), r#""q\"b\\s""#);
        assert_eq!(escaped("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(
            escaped("\u{0}\u{1}\u{1f}\u{7f}"),
            r#""\u0000\u0001\u001f\u007f""#
        );
        assert_eq!(escaped("é日本"), r#""\u00e9\u65e5\u672c""#);
        assert_eq!(escaped("😀𝔘"), r#""\ud83d\ude00\ud835\udd18""#);
        assert_eq!(
            escaped("\u{ffff}\u{10000}\u{10ffff}"),
            r#""\uffff\ud800\udc00\udbff\udfff""#
        );
        assert_eq!(escaped("~ <>&'/"), r#""~ <>&'/""#);
    }
}
