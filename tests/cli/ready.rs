//! `check --ready` (docs/reference/workflow.md, rule 1) with the real binary against real working
//! trees: ready at the revision, refused for a modified, staged or untracked file under a pinned
//! path and for a `HEAD` moved off the revision, ready again in a worktree at the revision.

use std::path::Path;

use crate::common::{commit_all, git, ledger, write};
use crate::pin::harness;

/// The harness repository, its declaration pinned to `campaign.json` at the root (untracked, not
/// under a pinned path); returns (dir, source revision).
fn pinned() -> (tempfile::TempDir, String) {
    let (dir, commit) = harness();
    ledger(dir.path(), &["pin", "draft.json", "-o", "campaign.json"]).ok();
    (dir, commit)
}

fn ready(d: &Path, extra: &[&str]) -> crate::common::Run {
    let mut args = vec!["check", "campaign.json", "--ready"];
    args.extend_from_slice(extra);
    ledger(d, &args)
}

/// The refusal's readiness reasons (rule workflow 1) as (field, sentence).
fn reasons(run: &crate::common::Run) -> Vec<(String, String)> {
    run.expect_code(2);
    let v = run.json();
    assert_eq!(v["refused"], true, "{v}");
    v["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == serde_json::json!({"spec": "workflow", "number": 1}))
        .map(|d| {
            (
                d["field"].as_str().unwrap().to_owned(),
                d["sentence"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn clean_at_the_revision_is_ready_and_an_unrelated_untracked_file_is_ignored() {
    let (dir, commit) = pinned();
    let d = dir.path();
    // Untracked, but under no pinned path: a harness does not read it.
    write(d, "notes/todo.md", "later\n");
    write(
        d,
        "h/tasks/notes.txt",
        "beside the tasks, in none of them\n",
    );
    let r = ready(d, &[]);
    r.ok();
    assert!(
        r.stdout.contains(&format!(
            "ready: HEAD is {commit} (branch main) in {}",
            d.canonicalize().unwrap().display()
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("under 6 pinned paths"), "{}", r.stdout);
    let v = ready(d, &["--json"]).ok().json();
    assert_eq!(v["ready"]["head"], commit.as_str());
    assert_eq!(v["ready"]["branch"], "refs/heads/main");
    assert_eq!(
        v["ready"]["pinned_paths"],
        serde_json::json!([
            "h/policy.md",
            "h/profile.json",
            "h/tasks/case-a",
            "h/tasks/case-a/oracle.py",
            "h/tasks/s-b",
            "h/tools"
        ])
    );
    // Detached at the revision is ready too; plain check still does not look at the tree.
    git(d, &["switch", "-q", "--detach", &commit]);
    let v = ready(d, &["--json"]).ok().json();
    assert_eq!(v["ready"]["branch"], serde_json::Value::Null);
    write(d, "h/tools/new.py", "print('new')\n");
    ledger(d, &["check", "campaign.json"]).ok();
}

#[test]
fn an_ignored_file_under_a_pinned_path_is_not_untracked() {
    let (dir, _) = pinned();
    let d = dir.path();
    write(d, ".git/info/exclude", "__pycache__/\n");
    write(d, "h/tools/__pycache__/run.cpython-312.pyc", "bytecode");
    ready(d, &[]).ok();
}

#[test]
fn a_modified_task_file_is_refused_with_the_worktree_command() {
    let (dir, commit) = pinned();
    let d = dir.path();
    write(d, "h/tasks/case-a/brief.md", "Fix it differently.\n");
    let r = ready(d, &[]);
    r.expect_code(2);
    let fix = format!("git worktree add ../run-small {commit}");
    assert!(
        r.stderr.contains(&format!(
            "campaign.json: tasks[0].definition: h/tasks/case-a/brief.md differs from the source revision (working tree: modified); keep it aside with `git stash push --include-untracked -- h/tasks/case-a/brief.md` (or run in a clean worktree: {fix})"
        )),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "");
    let got = reasons(&ready(d, &["--json"]));
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "tasks[0].definition");
    // A deleted oracle is named under the member that pins it first: its task's definition.
    std::fs::remove_file(d.join("h/tasks/case-a/oracle.py")).unwrap();
    let got = reasons(&ready(d, &["--json"]));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[1].1.starts_with(
        "h/tasks/case-a/oracle.py differs from the source revision (working tree: deleted)"
    ));
}

#[test]
fn an_untracked_file_in_runner_tools_is_refused() {
    let (dir, commit) = pinned();
    let d = dir.path();
    write(d, "h/tools/helper.py", "print('helper')\n");
    let r = ready(d, &[]);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!(
            "campaign.json: runner_tools: h/tools/helper.py is untracked and not ignored, under a pinned path; keep it aside with `git stash push --include-untracked -- h/tools/helper.py` (or run in a clean worktree: git worktree add ../run-small {commit})"
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("hint: HEAD is the declared revision: once nothing differs under a pinned path, the run may start here"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_staged_but_uncommitted_change_is_refused() {
    let (dir, _) = pinned();
    let d = dir.path();
    // Staged, then put back in the working tree: only the index differs.
    write(d, "h/policy.md", "Any spend is fine.\n");
    git(d, &["add", "h/policy.md"]);
    write(d, "h/policy.md", "Live spend needs approval.\n");
    let got = reasons(&ready(d, &["--json"]));
    assert_eq!(
        got,
        vec![(
            "policy_files[0]".to_owned(),
            format!(
                "h/policy.md differs from the source revision (staged: modified); keep it aside with `git stash push --include-untracked -- h/policy.md` (or run in a clean worktree: {})",
                fix(d)
            )
        )]
    );
    // A new file staged under the profile's directory is not the profile: it is not pinned.
    write(d, "h/profile.json.bak", "{}\n");
    git(d, &["add", "h/profile.json.bak"]);
    assert_eq!(reasons(&ready(d, &["--json"])).len(), 1);
}

/// The command the refusals name, read back from the declaration.
pub fn fix(d: &Path) -> String {
    let decl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("campaign.json")).unwrap()).unwrap();
    format!(
        "git worktree add ../run-{} {}",
        decl["id"].as_str().unwrap(),
        decl["source_revision"].as_str().unwrap()
    )
}

#[test]
fn the_declaration_committed_on_the_evaluated_branch_is_refused_and_a_worktree_at_the_revision_is_ready(
) {
    let (dir, commit) = pinned();
    let d = dir.path();
    let moved = commit_all(d, "the pinned declaration");
    let r = ready(d, &[]);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!(
            "campaign.json: source_revision: HEAD is {moved} (branch main), not the declared source_revision {commit}; run at the declared revision: git worktree add ../run-small {commit}"
        )),
        "{}",
        r.stderr
    );
    // The fix the message names, run as it says: the declaration stays where it is.
    git(d, &["worktree", "add", "-q", "../run-small", &commit]);
    let run = d.parent().unwrap().join("run-small");
    let cleanup = scopeguard(&run);
    let decl = d.join("campaign.json");
    let r = ledger(
        &run,
        &["check", decl.to_str().unwrap(), "--ready", "--json"],
    );
    let v = r.ok().json();
    assert_eq!(v["ready"]["head"], commit.as_str());
    assert_eq!(v["ready"]["branch"], serde_json::Value::Null);
    // --repo names the working tree from anywhere.
    ledger(
        d,
        &[
            "check",
            "campaign.json",
            "--ready",
            "--repo",
            run.to_str().unwrap(),
        ],
    )
    .ok();
    drop(cleanup);
}

/// Removes a directory made beside a temporary one when the test ends.
fn scopeguard(path: &Path) -> impl Drop + '_ {
    struct Guard<'a>(&'a Path);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0);
        }
    }
    Guard(path)
}

#[test]
fn a_declaration_that_does_not_match_and_a_tree_that_is_not_ready_are_reported_together() {
    let (dir, _) = pinned();
    let d = dir.path();
    let mut decl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("campaign.json")).unwrap()).unwrap();
    decl["runner_tools"]["sha256"] = "f".repeat(64).into();
    write(
        d,
        "campaign.json",
        serde_json::to_vec_pretty(&decl).unwrap(),
    );
    write(d, "h/tools/run.py", "print('changed')\n");
    let moved = commit_all(d, "tools changed after pinning");
    let r = ready(d, &["--json"]);
    r.expect_code(2);
    let v = r.json();
    let text: Vec<&str> = v["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert!(
        text[0].contains("runner_tools (h/tools): declared"),
        "{text:?}"
    );
    assert!(
        text[1].contains(&format!("source_revision: HEAD is {moved}")),
        "{text:?}"
    );
    // Committed, the change is no longer only in the tree, but it still differs from the
    // declared revision, in the index and the working tree alike.
    assert!(
        text[2].contains(
            "runner_tools: h/tools/run.py differs from the source revision (staged: modified; working tree: modified)"
        ),
        "{text:?}"
    );
}

#[test]
fn a_bare_repository_has_no_working_tree_to_be_ready() {
    let (dir, _) = pinned();
    let d = dir.path();
    let bare = d.join("bare.git");
    git(d, &["clone", "-q", "--bare", ".", bare.to_str().unwrap()]);
    let r = ledger(
        d,
        &[
            "check",
            "campaign.json",
            "--ready",
            "--repo",
            bare.to_str().unwrap(),
        ],
    );
    r.expect_code(1);
    assert!(
        r.stderr
            .contains("is a bare repository: there is no working tree to run in"),
        "{}",
        r.stderr
    );
    // Without --ready the bare repository checks as before.
    ledger(
        d,
        &["check", "campaign.json", "--repo", bare.to_str().unwrap()],
    )
    .ok();
}
