//! Checked declarations kept by blob id: `<git common dir>/git-ledger/declarations/<blob id>`.
//!
//! Every command that reads a ledger needs the declaration in its `campaign.json`: for a
//! 100,000-row campaign a 10.8 MB blob (its schedule), whose reading, hashing and parsing was
//! most of an import's time. A blob never changes, so what one parse found out about it can be
//! kept: the declaration in its cached form ([`Declaration::cached_form`]: its parts and task
//! ids, then each task's JSON; not the bytes, the schedule being `tasks × repetitions`, nor the
//! document, which no command reading a ledger needs). Reading that back costs what the parts
//! and the ids cost, not what the schedule costs; each task is deserialised when first read.
//!
//! The cache is derived data, like Git's index or commit-graph: nothing is lost when it is
//! deleted, and a clone starts without it. An entry is used only when it is whole (a CRC-32 of its
//! body, [`checksum`]) and was written by this version of git-ledger, built with the same rules, for the
//! same blob (same id, same size); it is then trusted as the parse it records, without
//! validating it again. "The same rules" is [`RULES`], a fingerprint of the source files that
//! hold the declaration and row rules (`crates/model/build.rs`): a build whose rules differ in any way
//! treats every entry an older build wrote as a miss, so stricter rules are never answered
//! with what laxer ones let through. Anything
//! else is a miss, and the blob is parsed as if there were no cache. Writing an entry is best
//! effort: a repository that cannot be written (read-only, another user's) is read as before.
//! Only repositories git-ledger fully trusts (owned by the current user, as Git's
//! `safe.directory` decides) use it: in another user's repository an entry could claim
//! anything about a blob.

use std::io::Write;
use std::path::PathBuf;

use gix::ObjectId;

use crate::declaration::Declaration;

/// The first line of an entry; a change of the entry's layout changes it.
const MAGIC: &str = "git-ledger declaration cache 4";

/// The rules fingerprint of this build: a SHA-256 over the source files that hold the
/// declaration and row rules (see `crates/model/build.rs`). An entry is trusted only when it
/// carries it.
pub use git_ledger_model::RULES;

/// Whether this process may write derived data (entries of this cache, the checked tips). A dry
/// run writes nothing, not even derived data: it reads what is there and keeps what it finds
/// to itself ([`write_no_derived_data`]).
static WRITES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// From now on, this process writes no derived data under `.git/git-ledger/` (`--dry-run`):
/// what it finds is used for this command only, and the next command finds it again.
pub fn write_no_derived_data() {
    WRITES.store(false, std::sync::atomic::Ordering::SeqCst);
}

/// `<git common dir>/git-ledger/`, where derived data is kept, if this repository may hold
/// any: only one git-ledger fully trusts (owned by the current user).
pub(super) fn dir(repo: &gix::Repository) -> Option<PathBuf> {
    (repo.git_dir_trust() == gix::sec::Trust::Full).then(|| repo.common_dir().join("git-ledger"))
}

/// Where the entry for `blob` lives, if this repository may have entries at all.
fn entry_path(repo: &gix::Repository, blob: ObjectId) -> Option<PathBuf> {
    Some(dir(repo)?.join("declarations").join(blob.to_string()))
}

/// The declaration of `blob` (a blob of `size` bytes) as an earlier parse left it, if an entry
/// for it exists and checks out; `None` means: parse the blob.
pub fn load(repo: &gix::Repository, blob: ObjectId, size: u64) -> Option<Declaration> {
    let path = entry_path(repo, blob)?;
    // An entry holds less than the blob twice over (its parts and its tasks, both smaller than
    // the blob's text): anything much larger, or not a file, is not read.
    let bound = size.saturating_mul(3).saturating_add(64 << 10);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > bound {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let body_at = memchr::memmem::find(&bytes, b"\n\n")? + 2;
    let head = std::str::from_utf8(&bytes[..body_at - 2]).ok()?;
    let body = &bytes[body_at..];
    let mut lines = head.split('\n');
    let mut field = |name: &str| lines.next()?.strip_prefix(name);
    let (magic, version, rules) = (field("")?, field("version ")?, field("rules ")?);
    let (id, length) = field("blob ")?.split_once(' ')?;
    let (parts, check) = (field("parts ")?.parse::<usize>().ok()?, field("check ")?);
    if magic != MAGIC
        || version != env!("CARGO_PKG_VERSION")
        || rules != RULES
        || *id != blob
        || length != size.to_string()
        || parts > body.len()
        || check != checksum(&[body])
    {
        return None;
    }
    Declaration::from_cached_form(bytes, body_at..body_at + parts)
}

/// The check of an entry's body: a CRC-32 (of its parts, in order), in hex. It finds a damaged
/// or cut entry; no checksum could find a forged one (whoever writes the entry writes its
/// check), which is why only a repository of the current user's reads its entries. CRC-32
/// rather than SHA-256: the 480 KB entry of a 1,000-task declaration is checked in 0.05 ms
/// instead of 0.3 ms, on every command that reads it.
fn checksum(parts: &[&[u8]]) -> String {
    let mut crc = crc32fast::Hasher::new();
    for p in parts {
        crc.update(p);
    }
    format!("{:08x}", crc.finalize())
}

/// Keep what a parse of `blob` (`size` bytes) found, for the next command that reads it. Best
/// effort: an entry that cannot be written is not an error (the next command parses the blob).
pub fn store(repo: &gix::Repository, blob: ObjectId, size: u64, decl: &Declaration) {
    let Some(path) = entry_path(repo, blob) else {
        return;
    };
    let Some((parts, tasks)) = decl.cached_form() else {
        return;
    };
    let head = format!(
        "{MAGIC}\nversion {}\nrules {RULES}\nblob {blob} {size}\nparts {}\ncheck {}\n\n",
        env!("CARGO_PKG_VERSION"),
        parts.len(),
        checksum(&[&parts, &tasks])
    );
    let _ = write_atomically(&path, &[head.as_bytes(), &parts, &tasks]);
}

/// Write `parts` to `path` through a temporary file in the same directory, renamed over it: a
/// reader sees the whole entry or none.
pub(super) fn write_atomically(path: &std::path::Path, parts: &[&[u8]]) -> std::io::Result<()> {
    if !WRITES.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(());
    }
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        for p in parts {
            f.write_all(p)?;
        }
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{declaration_value, git};

    /// A repository holding the test declaration as a blob, its id and size.
    fn repo_with_declaration() -> (tempfile::TempDir, gix::Repository, ObjectId, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        let bytes = serde_json::to_vec_pretty(&declaration_value()).unwrap();
        std::fs::write(dir.path().join("campaign.json"), &bytes).unwrap();
        let id = git(dir.path(), &["hash-object", "-w", "campaign.json"]);
        let repo = crate::git::open(Some(dir.path())).unwrap();
        (dir, repo, ObjectId::from_hex(id.as_bytes()).unwrap(), bytes)
    }

    /// Keep the declaration `bytes` parse to, as the blob `blob`.
    fn store_parsed(repo: &gix::Repository, blob: ObjectId, bytes: &[u8]) {
        let size = bytes.len() as u64;
        store(
            repo,
            blob,
            size,
            &Declaration::parse(bytes, u64::MAX).unwrap(),
        );
    }

    fn entry(repo: &gix::Repository, blob: ObjectId) -> PathBuf {
        entry_path(repo, blob).expect("a repository of the current user")
    }

    #[test]
    fn an_entry_gives_back_the_declaration_it_was_written_from() {
        let (_dir, repo, blob, bytes) = repo_with_declaration();
        let size = bytes.len() as u64;
        assert!(load(&repo, blob, size).is_none(), "nothing is cached yet");
        let parsed = Declaration::parse(&bytes, u64::MAX).unwrap();
        store(&repo, blob, size, &parsed);
        let cached = load(&repo, blob, size).expect("the entry is used");
        assert_eq!(cached.bytes(), None);
        let parts = |d: &Declaration| {
            format!(
                "{:?}",
                (
                    (&d.sha256, &d.id, &d.source_revision, d.repetitions),
                    (&d.profile, &d.policy_files, &d.runner_tools),
                    (&d.runtime_requirements, &d.attempt_fields, &d.tasks),
                )
            )
        };
        assert_eq!(
            parts(&cached),
            parts(&parsed),
            "every part but the bytes is the parse's"
        );
        assert_eq!(
            cached.task("scenario/interrupted-reuse").map(|t| &t.id),
            parsed.task("scenario/interrupted-reuse").map(|t| &t.id)
        );
        // Only the entry and nothing else is left in the directory.
        let dir = entry(&repo, blob).parent().unwrap().to_owned();
        let names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(blob.to_string())]);
    }

    /// Any one byte of an entry changed, wherever it is (the head, the parts, a task's JSON),
    /// is a miss: the CRC-32 finds every change of up to 32 bits in a row, and the head is
    /// compared field by field. No change makes a load panic or read a task that is not the
    /// parse's.
    #[test]
    fn every_entry_with_one_byte_changed_is_a_miss() {
        let (_dir, repo, blob, bytes) = repo_with_declaration();
        let size = bytes.len() as u64;
        store_parsed(&repo, blob, &bytes);
        let path = entry(&repo, blob);
        let good = std::fs::read(&path).unwrap();
        for i in 0..good.len() {
            for flip in [0x01u8, 0x80] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                std::fs::write(&path, &bad).unwrap();
                assert!(
                    load(&repo, blob, size).is_none(),
                    "byte {i} ^ {flip:#x} of {} was not noticed",
                    good.len()
                );
            }
        }
        std::fs::write(&path, &good).unwrap();
        let cached = load(&repo, blob, size).expect("the entry as written is used");
        assert_eq!(
            cached.tasks.len(),
            crate::testutil::declaration().tasks.len()
        );
    }

    #[test]
    fn an_entry_that_does_not_check_out_is_a_miss() {
        let (_dir, repo, blob, bytes) = repo_with_declaration();
        let size = bytes.len() as u64;
        store_parsed(&repo, blob, &bytes);
        let path = entry(&repo, blob);
        let good = std::fs::read_to_string(&path).unwrap();
        assert!(load(&repo, blob, size).is_some());
        // The blob's size or id differs from the entry's.
        assert!(load(&repo, blob, size + 1).is_none());
        let other = ObjectId::from_hex(&[b'a'; 40]).unwrap();
        std::fs::copy(&path, entry(&repo, other)).unwrap();
        assert!(load(&repo, other, size).is_none());
        // What is not a regular file is not read (a pipe would never end).
        std::fs::remove_file(&path).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(load(&repo, blob, size).is_none());
            std::fs::remove_file(&path).unwrap();
        }
        // Each line of the head changed, the body cut or edited, a missing blank line.
        let parts_len = good
            .split("\nparts ")
            .nth(1)
            .unwrap()
            .split('\n')
            .next()
            .unwrap();
        let edits: Vec<String> = vec![
            good.replacen(MAGIC, "git-ledger declaration cache 3", 1),
            good.replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1),
            good.replacen("\nparts ", "\nparts 1", 1),
            good.replacen("\ncheck ", "\ncheck 0", 1),
            good[..good.len() - 1].to_owned(),
            good.replacen("\"repetitions\":2", "\"repetitions\":3", 1),
            good.replacen("\n\n", "\n", 1),
            String::new(),
        ];
        for (i, bad) in edits.iter().enumerate() {
            assert_ne!(bad, &good, "edit {i} changes the entry");
            std::fs::write(&path, bad).unwrap();
            assert!(load(&repo, blob, size).is_none(), "edit {i} is a miss");
        }
        // A body that passes its check but is not the cached form is a miss too: parts that
        // are not a declaration's, tasks' JSON that is not theirs.
        let body = good.split_once("\n\n").unwrap().1;
        let (parts, tasks) = body.split_at(parts_len.parse().unwrap());
        let head = good.split("\nparts ").next().unwrap();
        for (parts, tasks) in [("{}", tasks), (parts, "{")] {
            let body = format!("{parts}{tasks}");
            let forged = format!(
                "{head}\nparts {}\ncheck {}\n\n{body}",
                parts.len(),
                checksum(&[body.as_bytes()]),
            );
            std::fs::write(&path, forged).unwrap();
            assert!(load(&repo, blob, size).is_none());
        }
        std::fs::write(&path, &good).unwrap();
        assert!(
            load(&repo, blob, size).is_some(),
            "the forging keeps the layout"
        );
        // Rewriting the entry makes it usable again.
        store_parsed(&repo, blob, &bytes);
        assert!(load(&repo, blob, size).is_some());
    }

    /// The build script's own code, to recompute the fingerprint from the sources.
    #[allow(dead_code)]
    mod build_script {
        include!(concat!(env!("CARGO_MANIFEST_DIR"), "/../model/build.rs"));
    }

    #[test]
    fn the_rules_fingerprint_is_the_hash_of_the_rule_sources() {
        let root = &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert_eq!(RULES.len(), 64);
        assert_eq!(
            build_script::fingerprint(root),
            RULES,
            "this build's fingerprint is the hash of the rule sources it was built from"
        );
        let files: Vec<String> = build_script::rule_files(root)
            .into_iter()
            .map(|(rel, _)| rel)
            .collect();
        for f in [
            "model/src/declaration.rs",
            "model/src/ledger.rs",
            "model/src/admission.rs",
            "base/src/json.rs",
        ] {
            assert!(
                files.iter().any(|r| r == f),
                "{f} is a rule source: {files:?}"
            );
        }
        assert!(
            !files.iter().any(|r| r.ends_with("tests.rs")),
            "tests hold no rules: {files:?}"
        );
        // A change of any rule file, however small, is another fingerprint.
        let copy = tempfile::tempdir().unwrap();
        for (rel, path) in build_script::rule_files(root) {
            let to = copy.path().join(&rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(path, to).unwrap();
        }
        assert_eq!(build_script::fingerprint(copy.path()), RULES);
        let rule = copy.path().join("model/src/admission.rs");
        let mut bytes = std::fs::read(&rule).unwrap();
        bytes.push(b'\n');
        std::fs::write(&rule, bytes).unwrap();
        assert_ne!(build_script::fingerprint(copy.path()), RULES);
    }

    /// An entry written by a build with other rules (another fingerprint) is a miss, however
    /// whole it is; the same entry under this build's fingerprint is used.
    #[test]
    fn an_entry_written_under_other_rules_is_a_miss() {
        let (_dir, repo, blob, bytes) = repo_with_declaration();
        let size = bytes.len() as u64;
        store_parsed(&repo, blob, &bytes);
        let path = entry(&repo, blob);
        let good = std::fs::read_to_string(&path).unwrap();
        assert!(good.contains(&format!("\nrules {RULES}\n")), "{good}");
        assert!(load(&repo, blob, size).is_some(), "same rules: a hit");
        let older = good.replacen(
            &format!("\nrules {RULES}\n"),
            &format!("\nrules {}\n", "0".repeat(64)),
            1,
        );
        std::fs::write(&path, &older).unwrap();
        assert!(load(&repo, blob, size).is_none(), "other rules: a miss");
        // An entry from before the fingerprint (no rules line at all) is a miss too.
        let before = good
            .replacen(MAGIC, "git-ledger declaration cache 2", 1)
            .replacen(&format!("rules {RULES}\n"), "", 1);
        assert!(
            !before.contains(MAGIC) && !before.contains("\nrules "),
            "{before}"
        );
        std::fs::write(&path, &before).unwrap();
        assert!(
            load(&repo, blob, size).is_none(),
            "an entry without rules: a miss"
        );
        // The next parse writes an entry this build trusts.
        store_parsed(&repo, blob, &bytes);
        assert!(load(&repo, blob, size).is_some());
    }

    #[test]
    fn an_entry_that_cannot_be_written_is_not_an_error() {
        let (dir, repo, blob, bytes) = repo_with_declaration();
        // A file where the cache's directory would be.
        std::fs::write(dir.path().join(".git/git-ledger"), "").unwrap();
        let size = bytes.len() as u64;
        store_parsed(&repo, blob, &bytes);
        assert!(load(&repo, blob, size).is_none());
    }
}
