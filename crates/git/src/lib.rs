//! Reading Git objects: opening the repository, resolving revisions to commits, reading blobs
//! at a commit, and the definition hash that pins a tree of files (`declaration.md`).
//!
//! Everything here reads objects only (never the work tree), through gix. Object lookups go
//! through `repo.objects`; worker threads open their own object store from the path of that
//! store, so a repository whose store was swapped (e.g. for a pre-receive quarantine whose
//! private `info/alternates` lists the quarantine and the main store) is read the same way by
//! every thread.

// The base's modules, named as the crate's own (`crate::error`, …).
#[cfg(test)]
use git_ledger_base::testutil;
use git_ledger_base::{error, hex, refusal, sha256_hex};

pub mod defhash;
pub mod objects;
pub mod params;
pub mod quarantine;
pub mod revision;
pub mod transport;
pub mod tree;
pub mod worktree;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

pub use defhash::{definition_hash, definition_hash_with, DefinitionHash, MAX_THREADS};
pub use revision::{require_commit, resolve_commit};
pub use tree::{blob_sha256, read_blob, read_blob_bounded};

/// Re-exported so callers need not depend on gix directly for the id type.
pub use gix::ObjectId;

/// The hint given when the commit a declaration is pinned to is not in the local store.
pub const FETCH_HINT: &str =
    "the declaration is pinned to it; fetch it, e.g. `git fetch --unshallow` or `git fetch origin <id>`";

/// The hint given when any other commit or object is not in the local store.
pub const FETCH_OBJECT_HINT: &str =
    "fetch it: `git fetch --unshallow` in a shallow clone, `git ledger sync` for a ledger's history, or `git fetch origin <id>`";

/// Open the repository containing `repo_dir` (default: the current directory), discovering it
/// upwards like Git does: bare or not, `GIT_DIR` honoured (it wins over `repo_dir`, as with
/// `git -C`). Replace objects (`refs/replace/*`) are ignored: a pinned hash must not depend on
/// local refs that clones do not share. A repository whose refs are not kept as files
/// (`extensions.refStorage = reftable`) is refused before anything is read or written
/// ([`refuse_ref_storage`]).
pub fn open(repo_dir: Option<&Path>) -> Result<gix::Repository> {
    let repo = open_any_ref_storage(repo_dir)?;
    refuse_ref_storage(&repo)?;
    Ok(repo)
}

/// The `git config` key naming a repository's ref backend.
pub const KEY_REF_STORAGE: &str = "extensions.refStorage";

/// The ref backend `extensions.refStorage` names, when it is not the files backend (`files`, or
/// unset) this tool reads and writes refs through.
///
/// Read as Git reads a repository's format: from the repository's own `config` file in the
/// common Git directory, without its includes, and from nowhere else. The merged configuration
/// would let a worktree's `config.worktree`, an include, `GIT_CONFIG_COUNT`/`-c`, or a global
/// file say `files` for a repository Git keeps in reftable (red-team review of issue 15). A
/// common directory holding `reftable/` is taken as reftable whatever the file says, and a
/// config file that cannot be read as the merged one says: both fail closed.
pub fn other_ref_storage(repo: &gix::Repository) -> Option<String> {
    let common = repo.common_dir();
    let own =
        gix::config::File::from_path_no_includes(common.join("config"), gix::config::Source::Local);
    let v = match own {
        Ok(file) => file.string(KEY_REF_STORAGE).map(|v| v.to_string()),
        Err(_) => repo
            .config_snapshot()
            .string(KEY_REF_STORAGE)
            .map(|v| v.to_string()),
    };
    match v {
        Some(v) if !v.eq_ignore_ascii_case("files") => Some(v),
        _ if common.join("reftable").is_dir() => Some("reftable".to_owned()),
        _ => None,
    }
}

/// Refuse (exit 1) a repository whose refs live in another backend than files: gix reads and
/// writes loose and packed refs only, so in a reftable repository (`git init
/// --ref-format=reftable`, the default from Git 3.0) a ledger ref it wrote would be invisible
/// to Git (and lost by `git gc`), and the refs Git wrote invisible to it.
pub fn refuse_ref_storage(repo: &gix::Repository) -> Result<()> {
    match other_ref_storage(repo) {
        None => Ok(()),
        Some(v) => Err(ref_storage_error(&v)),
    }
}

/// The error for a repository whose refs are kept in `backend`.
pub fn ref_storage_error(backend: &str) -> Error {
    Error::failed_with_hint(
        format!(
            "this repository keeps its refs in {backend} ({KEY_REF_STORAGE} = {backend}); git-ledger reads and writes ledger refs only in Git's files backend (loose refs and packed-refs), so it refuses to read or write them here"
        ),
        "convert the repository with `git refs migrate --ref-format=files` (Git 2.46 or later), or keep the ledger in a repository made with `git init --ref-format=files`",
    )
}

/// [`open`] without refusing another ref backend (the hooks, which decide per update).
pub fn open_any_ref_storage(repo_dir: Option<&Path>) -> Result<gix::Repository> {
    let start = absolute_start(repo_dir)?;
    // `git -c …` settings first (Git hands them over in GIT_CONFIG_PARAMETERS), this tool's own
    // last, so that they win.
    let mut overrides = params::overrides().map_err(Error::failed)?;
    overrides.push("core.useReplaceRefs=false".to_owned());
    let options = gix::open::Options::default().config_overrides(overrides);
    let trust = gix::sec::trust::Mapping {
        full: options.clone().with(gix::sec::Trust::Full),
        reduced: options.with(gix::sec::Trust::Reduced),
    };
    let repo = gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
        &start,
        Default::default(),
        trust,
    )
    .map_err(|e| {
        use gix::discover::upwards::Error as Upwards;
        let detail = e.to_string();
        let none_found = e.downcast_any_ref::<Upwards>().is_some_and(|u| {
            matches!(
                u,
                Upwards::NoGitRepository { .. }
                    | Upwards::NoGitRepositoryWithinCeiling { .. }
                    | Upwards::NoGitRepositoryWithinFs { .. }
            )
        });
        let message = if none_found {
            format!(
                "not a Git repository: no repository at {} or any of its parent directories",
                start.display()
            )
        } else {
            format!("not a Git repository: {} ({detail})", start.display())
        };
        Error::failed_with_hint(
            message,
            "run the command inside a repository, or pass --repo <DIR>",
        )
    })?;
    let mut repo = repo.to_thread_local();
    set_caches(&mut repo);
    Ok(repo)
}

/// Bytes of delta bases kept per object-store handle. A ledger ref's trees that each commit
/// rewrites (`rows/` directories, `records/` and its fan-out directories) are stored in a pack
/// as delta chains; without a cache every read of one inflates the whole chain again (`verify`
/// of 10,000 commits with the flat `records/` of layout version 1: 73 s without, 9.5 s with). A general cache of decoded objects was measured
/// too and left out: copying each 1 MB tree in and out of it cost more than it saved. What
/// admission keeps instead is the last few large trees, shared rather than copied
/// (`tree::RecentTrees::tree`).
const PACK_CACHE_BYTES: usize = 64 << 20;

/// Give a repository handle the delta-base cache gix leaves off without its `max-performance`
/// feature (which also pulls in threads and C code this crate does not need).
pub fn set_caches(repo: &mut gix::Repository) {
    set_pack_cache_bytes(repo, PACK_CACHE_BYTES);
}

/// Keep at most `bytes` of delta bases per object-store handle of `repo` (none for 0). The
/// cache is per handle: a handle cloned from `repo` afterwards starts empty with this size.
pub fn set_pack_cache_bytes(repo: &mut gix::Repository, bytes: usize) {
    if bytes == 0 {
        repo.objects.unset_pack_cache();
    } else {
        repo.objects.set_pack_cache(move || {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(bytes))
        });
    }
}

/// A handle on the same repository (and object store) as `repo`, with its own, empty
/// delta-base cache of at most `bytes` ([`set_pack_cache_bytes`]); `repo`'s cache is left as
/// it is. For a read that uses each object about once, where a large cache only costs memory.
pub fn with_pack_cache_bytes(repo: &gix::Repository, bytes: usize) -> gix::Repository {
    let mut other = repo.clone();
    set_pack_cache_bytes(&mut other, bytes);
    other
}

/// Discovery needs an absolute start: from `"."` inside a bare repository's subdirectory
/// gix fails to find it.
fn absolute_start(repo_dir: Option<&Path>) -> Result<PathBuf> {
    let cwd = || {
        std::env::current_dir()
            .map_err(|e| Error::failed(format!("cannot read the current directory: {e}")))
    };
    match repo_dir {
        None => cwd(),
        Some(dir) if dir.is_absolute() => Ok(dir.to_path_buf()),
        Some(dir) => Ok(cwd()?.join(dir)),
    }
}

/// Render a Git path for messages: valid UTF-8 as is (control characters escaped), any other
/// byte as `\xNN`.
pub fn show_path(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// [`show_path`] for a path already known to be UTF-8.
pub fn show_str(path: &str) -> String {
    show_path(path.as_bytes())
}
