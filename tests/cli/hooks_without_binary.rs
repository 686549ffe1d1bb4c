//! The shipped hooks without the binary (docs/reference/workflow.md, rule 8): with a `PATH` that
//! holds Git but not `git-ledger` (and `GIT_LEDGER` unset, or naming no executable), a commit that
//! changes no ledger file passes and one that does is refused naming `GIT_LEDGER`; `pre-receive`
//! and `reference-transaction` refuse every update of a ledger ref, in any spelling, and let every
//! other ref through. Real `git commit`, `git merge`, `git push` and `git update-ref`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{bin, ledger, new_repo, pin_env, write, Run};

/// A `PATH` with Git and the system's tools, without `git-ledger`.
fn bare_path() -> String {
    let git = crate::common::which("git").expect("git on PATH");
    let dir = git.parent().unwrap().display().to_string();
    let path = format!("{dir}:/usr/bin:/bin");
    for d in path.split(':') {
        assert!(
            !Path::new(d).join("git-ledger").exists(),
            "{d} holds a git-ledger"
        );
    }
    path
}

/// `git` with the bare `PATH`, `GIT_LEDGER` set to `ledger_env` (or unset).
fn git_without(dir: &Path, args: &[&str], ledger_env: Option<&str>) -> Run {
    let mut cmd = Command::new("git");
    pin_env(&mut cmd)
        .env("PATH", bare_path())
        .env_remove("GIT_LEDGER")
        .current_dir(dir)
        .args(args);
    if let Some(v) = ledger_env {
        cmd.env("GIT_LEDGER", v);
    }
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(r: &Run) {
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}

fn refused(r: &Run) {
    assert_ne!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}

const LEDGER: &str =
    "{\n  \"format\": \"campaign-ledger/1\",\n  \"declaration\": {},\n  \"rows\": []\n}\n";
const HINT: &str = "hint: install git-ledger on PATH, or point GIT_LEDGER at it (export GIT_LEDGER=/path/to/git-ledger in the environment Git runs hooks in)";

/// A repository with every local hook installed.
fn hooked_repo() -> tempfile::TempDir {
    let dir = new_repo();
    ledger(dir.path(), &["hooks", "install"]).ok();
    dir
}

#[test]
fn pre_commit_without_the_binary_passes_commits_that_change_no_ledger_file() {
    let d = hooked_repo();
    let p = d.path();
    // The first commit (no HEAD yet), then another; prose that names the format is no ledger.
    write(
        p,
        "README.md",
        "a ledger file says \"campaign-ledger/1\" in its format\n",
    );
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "readme"], None));
    write(
        p,
        "notes.json",
        "{\"format\": \"campaign-declaration/1\"}\n",
    );
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "notes"], None));
    // A merge of a branch that changes no ledger file (pre-merge-commit).
    ok(&git_without(p, &["checkout", "-q", "-b", "side"], None));
    write(p, "side.txt", "side\n");
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "side"], None));
    ok(&git_without(p, &["checkout", "-q", "-"], None));
    write(p, "main.txt", "main\n");
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "main"], None));
    ok(&git_without(
        p,
        &["merge", "-q", "--no-ff", "-m", "merge", "side"],
        None,
    ));
}

#[test]
fn pre_commit_without_the_binary_refuses_a_commit_that_changes_a_ledger_file() {
    let d = hooked_repo();
    let p = d.path();
    write(p, "README.md", "hello\n");
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "readme"], None));
    let head = crate::common::git(p, &["rev-parse", "HEAD"]);
    // A new ledger file, whatever its name, staged with an unrelated change.
    write(p, "runs/results.txt", LEDGER);
    write(p, "README.md", "hello again\n");
    ok(&git_without(p, &["add", "-A"], None));
    let r = git_without(p, &["commit", "-q", "-m", "a ledger"], None);
    refused(&r);
    assert_eq!(
        r.stderr,
        format!(
            "git-ledger pre-commit: the git-ledger binary was not found (git-ledger is not on PATH and GIT_LEDGER is unset); refused, since only it can judge the staged ledger files:\n  runs/results.txt\n{HINT}; commits that change no ledger file pass without it\n"
        )
    );
    assert_eq!(
        crate::common::git(p, &["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );
    // GIT_LEDGER naming no executable: the same refusal, naming it.
    let r = git_without(
        p,
        &["commit", "-q", "-m", "a ledger"],
        Some("/nowhere/git-ledger"),
    );
    refused(&r);
    assert!(
        r.stderr
            .contains("(GIT_LEDGER is /nowhere/git-ledger, which is not an executable file)"),
        "{}",
        r.stderr
    );
    // Committed past the hook, the ledger file may not be removed or edited without the
    // binary either: the HEAD version is a ledger file.
    ok(&git_without(
        p,
        &["commit", "-q", "--no-verify", "-m", "a ledger"],
        None,
    ));
    ok(&git_without(p, &["rm", "-q", "runs/results.txt"], None));
    let r = git_without(p, &["commit", "-q", "-m", "remove it"], None);
    refused(&r);
    assert!(r.stderr.contains("  runs/results.txt\n"), "{}", r.stderr);
    ok(&git_without(p, &["reset", "-q", "--hard"], None));
    // A merge that brings a ledger file (pre-merge-commit runs the same check).
    ok(&git_without(p, &["checkout", "-q", "-b", "side"], None));
    write(
        p,
        "other/ledger.json",
        LEDGER.replace("\"rows\": []", "\"rows\": [ ]"),
    );
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(
        p,
        &["commit", "-q", "--no-verify", "-m", "side"],
        None,
    ));
    ok(&git_without(p, &["checkout", "-q", "-"], None));
    write(p, "main.txt", "main\n");
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "main"], None));
    let r = git_without(p, &["merge", "-q", "--no-ff", "-m", "merge", "side"], None);
    refused(&r);
    assert!(
        r.stderr
            .starts_with("git-ledger pre-merge-commit: the git-ledger binary was not found")
            && r.stderr.contains("  other/ledger.json\n"),
        "{}",
        r.stderr
    );
    // With the binary, the same hooks judge the file instead (here: not a ledger it can read).
    let mut cmd = Command::new("git");
    pin_env(&mut cmd)
        .env("PATH", bare_path())
        .env("GIT_LEDGER", bin())
        .current_dir(p)
        .args(["commit", "-q", "-m", "merge"]);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && !stderr.contains("binary was not found"),
        "{stderr}"
    );
}

/// A bare server with `hooks install --server`, and a clone with a commit to push.
fn server_and_clone() -> (tempfile::TempDir, PathBuf, tempfile::TempDir) {
    let base = tempfile::tempdir().unwrap();
    let server = crate::common::hooked_server(base.path(), "server.git");
    let c = hooked_repo();
    write(c.path(), "README.md", "hello\n");
    ok(&git_without(c.path(), &["add", "-A"], None));
    ok(&git_without(
        c.path(),
        &["commit", "-q", "-m", "readme"],
        None,
    ));
    ok(&git_without(
        c.path(),
        &["remote", "add", "origin", server.to_str().unwrap()],
        None,
    ));
    (base, server, c)
}

/// The ledger ref names the fallback must refuse under `prefix`: every spelling of
/// `refs/ledgers/` always, and of the configured prefix.
fn ledger_names(prefix: &str) -> Vec<String> {
    let mut names = vec!["refs/ledgers/x".to_owned(), "refs/LEDGERS/x".to_owned()];
    if prefix != crate::common::PREFIXES[0] {
        names.push(format!("{prefix}x"));
        names.push(prefix.to_uppercase().replace("REFS/", "refs/") + "w");
    }
    names
}

fn pre_receive_without_the_binary_refuses_ledger_refs_only(prefix: &str) {
    let (_base, server, c) = server_and_clone();
    crate::common::use_prefix(&server, prefix);
    let p = c.path();
    // A branch, a tag and a conflict ref pass.
    ok(&git_without(
        p,
        &["push", "-q", "origin", "HEAD:refs/heads/main"],
        None,
    ));
    ok(&git_without(
        p,
        &["push", "-q", "origin", "HEAD:refs/tags/v1"],
        None,
    ));
    ok(&git_without(
        p,
        &["push", "-q", "origin", "HEAD:refs/ledger-conflicts/x/1"],
        None,
    ));
    // A ledger ref, in any spelling, is refused, and the server holds none.
    let mut names = ledger_names(prefix);
    names.push("refs/Ledgers/y/z".to_owned());
    for name in names {
        let r = git_without(p, &["push", "origin", &format!("HEAD:{name}")], None);
        refused(&r);
        assert!(
            r.stderr.contains("remote: git-ledger pre-receive: the git-ledger binary was not found (git-ledger is not on PATH and GIT_LEDGER is unset); refused, since only it can judge these ledger ref updates:")
                && r.stderr.contains(&format!("remote:   {name}"))
                && r.stderr.contains(&format!("remote: {HINT}; other refs pass without it")),
            "{}",
            r.stderr
        );
    }
    // One push of a branch and a ledger ref: the whole push is refused, as Git does.
    let r = git_without(
        p,
        &[
            "push",
            "--atomic",
            "origin",
            "HEAD:refs/heads/b",
            &format!("HEAD:{prefix}x"),
        ],
        None,
    );
    refused(&r);
    let refs = crate::common::git(&server, &["for-each-ref", "--format=%(refname)"]);
    assert_eq!(
        refs, "refs/heads/main\nrefs/ledger-conflicts/x/1\nrefs/tags/v1",
        "{refs}"
    );
}

fn reference_transaction_without_the_binary_refuses_ledger_refs_only(prefix: &str) {
    let (_base, _server, c) = server_and_clone();
    let p = c.path();
    crate::common::use_prefix(p, prefix);
    let head = crate::common::git(p, &["rev-parse", "HEAD"]);
    for name in [
        "refs/heads/b",
        "refs/tags/t",
        "refs/remotes/origin/ledgers/x",
        "refs/ledger-conflicts/x/1",
    ] {
        ok(&git_without(p, &["update-ref", name, &head], None));
    }
    ok(&git_without(
        p,
        &["update-ref", "-d", "refs/ledger-conflicts/x/1"],
        None,
    ));
    for name in ledger_names(prefix) {
        let name = name.as_str();
        let r = git_without(p, &["update-ref", name, &head], None);
        refused(&r);
        assert!(
            r.stderr.starts_with(
                "git-ledger reference-transaction: the git-ledger binary was not found"
            ) && r.stderr.contains(&format!("  {name}\n")),
            "{}",
            r.stderr
        );
        assert!(crate::common::git_run(p, &["rev-parse", "--verify", "-q", name], None).code != 0);
    }
}

/// `git am` runs pre-applypatch, which runs the same check: an unrelated patch applies, one
/// that adds a ledger file is refused.
#[test]
fn pre_applypatch_without_the_binary_judges_a_patch_as_pre_commit_does() {
    let d = hooked_repo();
    let p = d.path();
    write(p, "README.md", "hello\n");
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "readme"], None));
    ok(&git_without(p, &["checkout", "-q", "-b", "patches"], None));
    write(p, "docs.txt", "docs\n");
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(p, &["commit", "-q", "-m", "docs"], None));
    write(p, "ledger.json", LEDGER);
    ok(&git_without(p, &["add", "-A"], None));
    ok(&git_without(
        p,
        &["commit", "-q", "--no-verify", "-m", "ledger"],
        None,
    ));
    let patches = tempfile::tempdir().unwrap();
    let out = patches.path().to_str().unwrap();
    ok(&git_without(
        p,
        &["format-patch", "-q", "-o", out, "HEAD~2"],
        None,
    ));
    ok(&git_without(p, &["checkout", "-q", "-"], None));
    let mut files: Vec<_> = std::fs::read_dir(patches.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    ok(&git_without(
        p,
        &["am", "-q", files[0].to_str().unwrap()],
        None,
    ));
    let r = git_without(p, &["am", "-q", files[1].to_str().unwrap()], None);
    refused(&r);
    assert!(
        r.stderr
            .starts_with("git-ledger pre-applypatch: the git-ledger binary was not found")
            && r.stderr.contains("  ledger.json\n"),
        "{}",
        r.stderr
    );
    ok(&git_without(p, &["am", "--abort"], None));
    assert!(!p.join("ledger.json").exists());
}

crate::common::under_both_prefixes!(pre_receive_without_the_binary_refuses_ledger_refs_only);

crate::common::under_both_prefixes!(
    reference_transaction_without_the_binary_refuses_ledger_refs_only
);
