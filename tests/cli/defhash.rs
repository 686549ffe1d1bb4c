//! The Git reading layer against real repositories made with the real `git`: the definition
//! hash cross-checked against an independent Python computation (`defhash_reference.py`),
//! refusals on both sides, revisions, and missing commits.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use git_ledger::git::{self, DefinitionHash};
use git_ledger::Error;

use crate::common::{commit_all, git, git_run, new_repo, pin_env, write};

/// The independent computation: `Ok((sha256, files))`, or `Err(reason)` when it refuses.
fn reference(dir: &Path, commit: &str, path: &str) -> Result<(String, u64), String> {
    let script = crate::common::project_root().join("tests/cli/defhash_reference.py");
    let mut cmd = Command::new("python3");
    pin_env(&mut cmd)
        .current_dir(dir)
        .arg(script)
        .args([commit, path]);
    let out = cmd.output().expect("run python3");
    let stdout = String::from_utf8(out.stdout).unwrap();
    match out.status.code() {
        Some(0) => {
            let (sha, files) = stdout.trim().split_once(' ').expect("sha files");
            Ok((sha.to_owned(), files.parse().unwrap()))
        }
        Some(2) => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        other => panic!(
            "reference script failed ({other:?}): {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn ours(dir: &Path, commit: &str, path: &str) -> git_ledger::Result<DefinitionHash> {
    let repo = git::open(Some(dir))?;
    let id = git::require_commit(&repo, commit)?;
    let one = git::definition_hash_with(&repo, id, path, 1);
    let two = git::definition_hash_with(&repo, id, path, 2);
    assert_eq!(one, two, "the thread count changed the result for {path}");
    git::definition_hash(&repo, id, path)
}

/// Run git with byte arguments (paths that are not UTF-8).
fn git_bytes(dir: &Path, args: &[&[u8]]) -> String {
    let mut cmd = Command::new("git");
    pin_env(&mut cmd)
        .current_dir(dir)
        .args(args.iter().map(|a| OsStr::from_bytes(a)));
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
}

fn refusal(e: Error) -> String {
    assert_eq!(e.exit_code(), 2, "expected a refusal, got {e}");
    (e.refusal_reasons().iter().map(ToString::to_string))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A harness-like tree with every kind of entry the hash must handle.
fn rich_repo() -> (tempfile::TempDir, String) {
    let repo = new_repo();
    let d = repo.path();
    write(d, "task/brief.md", "# Brief\n");
    write(d, "task/run.sh", "#!/bin/sh\necho run\n");
    let mut perms = std::fs::metadata(d.join("task/run.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(d.join("task/run.sh"), perms).unwrap();
    std::os::unix::fs::symlink("brief.md", d.join("task/link")).unwrap();
    write(d, "task/é/日本.txt", "nihon\n");
    write(d, "task/😀.txt", "smile\n");
    write(d, "task/𝔘/x", "fraktur\n");
    write(d, "task/a/b/c/deep.txt", "deep\n");
    write(d, "task/a/dup.txt", "same bytes\n");
    write(d, "task/dup.txt", "same bytes\n");
    write(d, "task/a-b", "sorts before a/ in bytes\n");
    write(d, "task/a0", "sorts after a/ in bytes\n");
    write(d, "task/we\"ird\\name.txt", "quote and backslash\n");
    write(d, "task/ctl\u{1}\u{7f}\ttab.txt", "controls\n");
    write(d, "task/line\nbreak.txt", "newline\n");
    write(d, "task/bin.dat", (0u8..=255).collect::<Vec<u8>>());
    write(d, "task/empty.txt", "");
    write(d, "task2/other.txt", "not under task\n");
    write(d, "task-x", "not under task either\n");
    std::os::unix::fs::symlink("../../elsewhere/ünïcode", d.join("task/a/dangling")).unwrap();
    let head = commit_all(d, "rich");
    (repo, head)
}

#[test]
fn matches_an_independent_python_computation() {
    let (repo, head) = rich_repo();
    let d = repo.path();
    assert_eq!(
        git(d, &["ls-files", "-s", "task/link"]).split(' ').next(),
        Some("120000")
    );
    assert_eq!(
        git(d, &["ls-files", "-s", "task/run.sh"]).split(' ').next(),
        Some("100755")
    );
    for path in [
        "task",
        "task/a",
        "task/é",
        "task/𝔘",
        "task/run.sh",
        "task/link",
        "task/😀.txt",
        "task/ctl\u{1}\u{7f}\ttab.txt",
        "task/empty.txt",
        "task-x",
    ] {
        let expected = reference(d, &head, path).unwrap();
        let got = ours(d, &head, path).unwrap();
        assert_eq!((got.sha256, got.files), expected, "path {path:?}");
    }
    // Duplicate blobs are one row per path; the dangling symlink is a row like any other.
    assert_eq!(ours(d, &head, "task").unwrap().files, 17);
}

#[test]
fn the_hash_reads_objects_not_the_work_tree() {
    let (repo, head) = rich_repo();
    let before = ours(repo.path(), &head, "task").unwrap();
    write(
        repo.path(),
        "task/brief.md",
        "changed in the work tree only\n",
    );
    std::fs::remove_file(repo.path().join("task/run.sh")).unwrap();
    assert_eq!(ours(repo.path(), &head, "task").unwrap(), before);
}

#[test]
fn missing_paths_are_refused_by_both() {
    let (repo, head) = rich_repo();
    let d = repo.path();
    for path in [
        "nope",
        "task/nope",
        "task/run.sh/x",
        "tas",
        "task/a/b/c/deep",
    ] {
        assert!(reference(d, &head, path).is_err(), "{path}");
        let why = refusal(ours(d, &head, path).unwrap_err());
        assert!(
            why.contains("does not exist") && why.contains(path),
            "{why}"
        );
    }
    for path in ["", "/task", "task/", "./task", "task/../task", "task//a"] {
        let why = refusal(ours(d, &head, path).unwrap_err());
        assert!(why.contains("not a repository-relative path"), "{why}");
    }
}

#[test]
fn a_submodule_is_refused_by_both() {
    let (repo, _) = rich_repo();
    let d = repo.path();
    let some_commit = git(d, &["rev-parse", "HEAD"]);
    git(
        d,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{some_commit},task/sub"),
        ],
    );
    git(d, &["commit", "-q", "-m", "gitlink"]);
    let head = git(d, &["rev-parse", "HEAD"]);
    for path in ["task", "task/sub"] {
        assert!(reference(d, &head, path).unwrap_err().contains("submodule"));
        let why = refusal(ours(d, &head, path).unwrap_err());
        assert!(
            why.contains("task/sub") && why.contains("submodule"),
            "{why}"
        );
    }
    // A sibling directory without the gitlink is still fine.
    assert!(ours(d, &head, "task/a").is_ok());
}

#[test]
fn a_path_that_is_not_utf8_is_refused_by_both() {
    let (repo, _) = rich_repo();
    let d = repo.path();
    let blob = git(d, &["rev-parse", "HEAD:task/brief.md"]);
    let mut info = format!("100644,{blob},task/bad").into_bytes();
    info.extend_from_slice(b"\xff.txt");
    git_bytes(d, &[b"update-index", b"--add", b"--cacheinfo", &info]);
    git(d, &["commit", "-q", "-m", "bad name"]);
    let head = git(d, &["rev-parse", "HEAD"]);
    assert!(reference(d, &head, "task")
        .unwrap_err()
        .contains("not UTF-8"));
    let why = refusal(ours(d, &head, "task").unwrap_err());
    assert!(
        why.contains("task/bad\\xff.txt") && why.contains("UTF-8"),
        "{why}"
    );
}

#[test]
fn an_empty_tree_is_refused_by_both() {
    let repo = new_repo();
    let d = repo.path();
    let empty = git_run(d, &["mktree"], Some(b"")).stdout.trim().to_owned();
    assert_eq!(empty, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
    let blob = git_run(d, &["hash-object", "-w", "--stdin"], Some(b"x\n"))
        .stdout
        .trim()
        .to_owned();
    let inner = format!("040000 tree {empty}\tempty\n100644 blob {blob}\tf.txt\n");
    let task = git_run(d, &["mktree"], Some(inner.as_bytes()))
        .stdout
        .trim()
        .to_owned();
    let root = git_run(
        d,
        &["mktree"],
        Some(format!("040000 tree {task}\ttask\n").as_bytes()),
    )
    .stdout
    .trim()
    .to_owned();
    let commit = git(d, &["commit-tree", &root, "-m", "empty tree inside"]);
    for path in ["task", "task/empty"] {
        assert!(reference(d, &commit, path)
            .unwrap_err()
            .contains("empty tree"));
        let why = refusal(ours(d, &commit, path).unwrap_err());
        assert!(
            why.contains("task/empty") && why.contains("empty tree"),
            "{why}"
        );
    }
    assert_eq!(reference(d, &commit, "task/f.txt").unwrap().1, 1);
    assert_eq!(ours(d, &commit, "task/f.txt").unwrap().files, 1);
}

#[test]
fn blob_reads_refuse_directories_and_missing_paths() {
    let (repo, head) = rich_repo();
    let r = git::open(Some(repo.path())).unwrap();
    let id = git::require_commit(&r, &head).unwrap();
    assert_eq!(git::read_blob(&r, id, "task/link").unwrap(), b"brief.md");
    let sha = git::blob_sha256(&r, id, "task/bin.dat").unwrap();
    assert_eq!(
        sha,
        "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880"
    );
    assert!(refusal(git::blob_sha256(&r, id, "task/a").unwrap_err()).contains("is a directory"));
    assert!(refusal(git::read_blob(&r, id, "task/zzz").unwrap_err()).contains("does not exist"));
    let why = refusal(git::read_blob_bounded(&r, id, "task/bin.dat", 255).unwrap_err());
    assert!(why.contains("256 bytes"), "{why}");
    assert_eq!(
        git::read_blob_bounded(&r, id, "task/bin.dat", 256)
            .unwrap()
            .len(),
        256
    );
}

#[test]
fn a_missing_commit_fails_with_the_fetch_hint() {
    let (src, _) = rich_repo();
    let first = commit_all(src.path(), "second commit, same tree");
    write(src.path(), "later.txt", "later\n");
    let tip = commit_all(src.path(), "third");
    let clones = tempfile::tempdir().unwrap();
    let url = format!("file://{}", src.path().display());
    git(
        clones.path(),
        &["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let shallow = clones.path().join("shallow");
    let r = git::open(Some(&shallow)).unwrap();
    assert_eq!(git::require_commit(&r, &tip).unwrap().to_string(), tip);
    for missing in [first.as_str(), "0123456789abcdef0123456789abcdef01234567"] {
        let e = git::require_commit(&r, missing).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        let shown = e.to_string();
        assert!(
            shown.contains(&format!("commit {missing} is not in this repository")),
            "{shown}"
        );
        assert!(
            shown.contains("hint: ") && shown.contains("git fetch --unshallow"),
            "{shown}"
        );
    }
    let e = git::resolve_commit(&r, "HEAD~1").unwrap_err();
    assert_eq!(e.exit_code(), 1);
    assert!(e.to_string().contains("git fetch --unshallow"), "{e}");
    let e = git::definition_hash(&r, first.parse().unwrap(), "task").unwrap_err();
    assert_eq!(e.exit_code(), 1);
    assert!(e.to_string().contains("git fetch --unshallow"), "{e}");
}

#[test]
fn source_revision_must_be_a_full_commit_id() {
    let (repo, head) = rich_repo();
    let r = git::open(Some(repo.path())).unwrap();
    for bad in [&head[..12], "HEAD", "main", &head.to_uppercase(), ""] {
        let why = refusal(git::require_commit(&r, bad).unwrap_err());
        assert!(why.contains("not a full commit id"), "{why}");
    }
    let tree = git(repo.path(), &["rev-parse", "HEAD^{tree}"]);
    assert!(
        refusal(git::require_commit(&r, &tree).unwrap_err()).contains("is a tree, not a commit")
    );
    let e = git::require_commit(&r, &"a".repeat(64)).unwrap_err();
    assert_eq!(e.exit_code(), 1, "{e}");
}

#[test]
fn revisions_resolve_like_git() {
    let (repo, first) = rich_repo();
    let d = repo.path();
    git(d, &["tag", "-a", "-m", "annotated", "v1"]);
    git(d, &["tag", "light"]);
    write(d, "more.txt", "more\n");
    let second = commit_all(d, "second");
    git(d, &["checkout", "-q", "-b", "side", &first]);
    write(d, "side.txt", "side\n");
    let side = commit_all(d, "side");
    git(d, &["checkout", "-q", "main"]);
    git(d, &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
    let merge = git(d, &["rev-parse", "HEAD"]);
    let r = git::open(Some(d)).unwrap();
    let resolve = |rev: &str| git::resolve_commit(&r, rev).map(|id| id.to_string());
    for (rev, want) in [
        ("HEAD", &merge),
        ("@", &merge),
        ("main", &merge),
        ("refs/heads/main", &merge),
        ("side", &side),
        ("v1", &first),
        ("v1^{}", &first),
        ("light", &first),
        ("HEAD~1", &second),
        ("HEAD^", &second),
        ("HEAD^2", &side),
        ("HEAD^2~1", &first),
        ("main~2", &first),
        ("HEAD^0", &merge),
        (&merge[..], &merge),
        (&second[..10], &second),
    ] {
        assert_eq!(resolve(rev).as_ref(), Ok(want), "{rev}");
        assert_eq!(
            &git(d, &["rev-parse", &format!("{rev}^{{commit}}")]),
            want,
            "git agrees on {rev}"
        );
    }
    for rev in [
        "nope",
        "HEAD~9",
        "HEAD^3",
        "HEAD:task",
        "HEAD@{1}",
        "main..side",
        "HEAD^{tree}",
        "",
        "^",
        "~",
        "é",
        "HEAD^{",
        "HEAD^{}é",
        "a\0b",
        "-x",
        "refs/heads/",
        "....",
        "0000",
    ] {
        let e = resolve(rev).unwrap_err();
        assert_eq!(e.exit_code(), 1, "{rev}: {e}");
    }
    let tree = git(d, &["rev-parse", "HEAD^{tree}"]);
    assert!(resolve(&tree)
        .unwrap_err()
        .to_string()
        .contains("not a commit"));
}

#[test]
fn open_discovers_like_git_and_fails_outside_a_repository() {
    let (repo, head) = rich_repo();
    let sub = repo.path().join("task/a");
    let r = git::open(Some(&sub)).unwrap();
    assert_eq!(git::resolve_commit(&r, "HEAD").unwrap().to_string(), head);
    let bare_parent = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    git(
        bare_parent.path(),
        &["clone", "-q", "--bare", &url, "b.git"],
    );
    let r = git::open(Some(&bare_parent.path().join("b.git/refs"))).unwrap();
    assert_eq!(git::resolve_commit(&r, "main").unwrap().to_string(), head);
    let nowhere = tempfile::tempdir().unwrap();
    let e = git::open(Some(nowhere.path())).unwrap_err();
    assert_eq!(e.exit_code(), 1);
    assert!(e.to_string().contains("not a Git repository"), "{e}");
}

#[test]
fn many_blobs_loose_and_packed_match_the_reference() {
    // Enough distinct blobs for the hash to use several threads; similar contents so that a
    // repack stores most of them as deltas.
    let repo = new_repo();
    let d = repo.path();
    let base: String = (0..400)
        .map(|i| format!("line {i} of a shared text\n"))
        .collect();
    for i in 0..300 {
        write(
            d,
            &format!("seed/m{}/f{i:03}.txt", i % 7),
            format!("{base}variant {i}\n"),
        );
        if i % 10 == 0 {
            write(
                d,
                &format!("seed/copies/c{i:03}.txt"),
                format!("{base}variant {i}\n"),
            );
        }
    }
    let head = commit_all(d, "many");
    let loose = ours(d, &head, "seed").unwrap();
    assert_eq!(loose.files, 330);
    assert_eq!(
        Ok((loose.sha256.clone(), loose.files)),
        reference(d, &head, "seed")
    );
    git(d, &["repack", "-adq", "--depth=50"]);
    git(d, &["prune-packed"]);
    assert_eq!(ours(d, &head, "seed").unwrap(), loose);
}
