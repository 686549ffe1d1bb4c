//! Ledgers on a branch prefix for a hosted forge that runs no hook (`docs/forges.md`), tested
//! without the forge: a bare repository whose pre-receive hook does only what the forge's
//! protection does (refuses non-fast-forwards and deletions of refs/heads/ledgers/*, runs no
//! git-ledger check), the shipped CI script run with what each forge passes it, the CI files
//! checked against the forges' schemas, and a ledger id under both prefixes refused.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common::{bin, git, git_run, ledger, new_repo, pin_env, project_root, Run};
use crate::gitstore::{
    canonical_row, declaration_value, pretty, read_files, regular, state_commit, Fixture, ID,
};

const BRANCH: &str = "refs/heads/ledgers/reliability-slice-1";

/// What GitHub's ruleset ("Restrict deletions", "Block force pushes") and GitLab's protected
/// branch do to a push of `ledgers/*`, and nothing more.
const PROTECTION: &str = r#"#!/bin/sh
status=0
while read -r old new ref; do
	case $ref in
	refs/heads/ledgers/*)
		case $new in
		*[!0]*) ;;
		*) echo "protected branch $ref: deletion refused" >&2; status=1; continue ;;
		esac
		case $old in
		*[!0]*)
			git merge-base --is-ancestor "$old" "$new" || {
				echo "protected branch $ref: force push refused" >&2
				status=1
			}
			;;
		esac
		;;
	esac
done
exit $status
"#;

fn forge_server(base: &Path) -> std::path::PathBuf {
    git(base, &["init", "-q", "--bare", "-b", "main", "forge.git"]);
    let server = base.join("forge.git");
    let hook = server.join("hooks/pre-receive");
    std::fs::write(&hook, PROTECTION).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    server
}

/// Run the shipped `forge/verify-push.sh` in `dir` (a CI clone) with `env`.
fn ci_script(dir: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new("sh");
    pin_env(&mut cmd)
        .current_dir(dir)
        .arg(project_root().join("forge/verify-push.sh"))
        .env("GIT_LEDGER", bin())
        .env_remove("GITHUB_EVENT_PATH")
        .env_remove("CI_COMMIT_REF_NAME");
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("sh"))
}

/// A CI clone of the forge's repository, as the job's checkout makes it (whole history).
fn ci_clone(base: &Path, server: &Path, name: &str) -> std::path::PathBuf {
    let dir = base.join(name);
    git(
        base,
        &[
            "clone",
            "-q",
            "--no-checkout",
            server.to_str().unwrap(),
            name,
        ],
    );
    git(
        &dir,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
        ],
    );
    dir
}

#[test]
fn on_a_protected_branch_the_ci_job_passes_admitted_pushes_and_fails_inadmissible_ones() {
    let base = tempfile::tempdir().unwrap();
    let server = forge_server(base.path());
    let f = Fixture::under(2, crate::common::PREFIXES[1]);
    assert_eq!(f.refname, BRANCH);
    git(
        f.dir(),
        &["remote", "add", "origin", server.to_str().unwrap()],
    );
    ledger(f.dir(), &["sync"]).ok();
    let first = f.tip();
    f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
        .ok();
    let admitted = f.tip();
    ledger(f.dir(), &["sync"]).ok();
    assert_eq!(git(&server, &["rev-parse", BRANCH]), admitted);

    // The job, with what each forge passes it, on the admitted push.
    let ci = ci_clone(base.path(), &server, "ci");
    let event = base.path().join("event.json");
    std::fs::write(
        &event,
        serde_json::to_vec_pretty(&json!({"ref": BRANCH, "before": first, "after": admitted}))
            .unwrap(),
    )
    .unwrap();
    let gh = ci_script(&ci, &[("GITHUB_EVENT_PATH", event.to_str().unwrap())]);
    gh.ok();
    assert!(
        gh.stdout.contains(&format!("{first} -> {admitted}")),
        "{}",
        gh.stdout
    );
    let branch = BRANCH.trim_start_matches("refs/heads/");
    let gl = ci_script(
        &ci,
        &[
            ("CI_COMMIT_REF_NAME", branch),
            ("CI_COMMIT_BEFORE_SHA", &first),
            ("CI_COMMIT_SHA", &admitted),
        ],
    );
    gl.ok();
    // A new branch (old value all zeros) is checked from its root.
    let zeros = "0".repeat(40);
    ci_script(
        &ci,
        &[
            ("CI_COMMIT_REF_NAME", branch),
            ("CI_COMMIT_BEFORE_SHA", &zeros),
            ("CI_COMMIT_SHA", &first),
        ],
    )
    .ok();

    // The protection refuses a force push and a deletion (no git-ledger check runs there).
    let force = git_run(
        f.dir(),
        &["push", "origin", &format!("+{first}:{BRANCH}")],
        None,
    );
    assert_ne!(force.code, 0);
    assert!(
        force.stderr.contains("force push refused"),
        "{}",
        force.stderr
    );
    let delete = git_run(f.dir(), &["push", "origin", &format!(":{BRANCH}")], None);
    assert!(
        delete.stderr.contains("deletion refused"),
        "{}",
        delete.stderr
    );
    assert_eq!(git(&server, &["rev-parse", BRANCH]), admitted);

    // An inadmissible fast-forward (a filled row edited afterwards) reaches the branch: the
    // forge has no hook. The job fails with the reason.
    let mut files = read_files(f.dir(), &admitted);
    let path = "rows/scenario/bugfix-iso-weeks/01.json";
    let mut row: serde_json::Value = serde_json::from_slice(&files[path].bytes).unwrap();
    row["reason"] = json!("edited after the fact");
    files.insert(path.to_owned(), regular(canonical_row(&row)));
    let bad = state_commit(f.dir(), &files, &[&admitted], "tamper");
    git(
        f.dir(),
        &["push", "-q", "origin", &format!("{bad}:{BRANCH}")],
    );
    assert_eq!(
        git(&server, &["rev-parse", BRANCH]),
        bad,
        "the forge let it in"
    );
    let ci = ci_clone(base.path(), &server, "ci2");
    std::fs::write(
        &event,
        serde_json::to_vec(&json!({"ref": BRANCH, "before": admitted, "after": bad})).unwrap(),
    )
    .unwrap();
    let gh = ci_script(&ci, &[("GITHUB_EVENT_PATH", event.to_str().unwrap())]);
    gh.expect_code(2);
    assert!(gh.stderr.contains("rule 4"), "{}", gh.stderr);
    let gl = ci_script(
        &ci,
        &[
            ("CI_COMMIT_REF_NAME", branch),
            ("CI_COMMIT_BEFORE_SHA", &admitted),
            ("CI_COMMIT_SHA", &bad),
        ],
    );
    gl.expect_code(2);
    assert!(gl.stderr.contains("rule 4"), "{}", gl.stderr);
    // An old value that is not on the pushed tip's chain (what a force push would leave, had
    // the protection been off): the job fails naming it.
    let elsewhere = state_commit(f.dir(), &read_files(f.dir(), &first), &[], "elsewhere");
    git(
        f.dir(),
        &[
            "push",
            "-q",
            "origin",
            &format!("{elsewhere}:refs/heads/scratch"),
        ],
    );
    let ci = ci_clone(base.path(), &server, "ci3");
    let gl = ci_script(
        &ci,
        &[
            ("CI_COMMIT_REF_NAME", branch),
            ("CI_COMMIT_BEFORE_SHA", &elsewhere),
            ("CI_COMMIT_SHA", &admitted),
        ],
    );
    assert_ne!(gl.code, 0, "{}", gl.stdout);
    assert!(gl.stderr.contains("rewritten since"), "{}", gl.stderr);
    // Not a ledger branch: nothing to check.
    let other = ci_script(&ci, &[("CI_COMMIT_REF_NAME", "main")]);
    other.ok();
    assert!(
        other.stdout.contains("nothing to check"),
        "{}",
        other.stdout
    );
}

#[test]
fn init_forge_sets_the_prefix_prints_the_protections_and_refuses_to_mix() {
    let repo = new_repo();
    let files = tempfile::tempdir().unwrap();
    let decl = files.path().join("decl.json");
    std::fs::write(&decl, pretty(&declaration_value(ID, 1))).unwrap();
    let d = decl.to_str().unwrap();
    let r = ledger(repo.path(), &["init", d, "--forge", "github"]);
    r.ok();
    assert!(r.stdout.starts_with(BRANCH), "{}", r.stdout);
    for setting in [
        "Restrict deletions",
        "Block force pushes",
        "Require signed commits",
        "ledgers/*",
    ] {
        assert!(r.stdout.contains(setting), "{setting}: {}", r.stdout);
    }
    assert_eq!(
        git(repo.path(), &["config", "ledger.refPrefix"]),
        "refs/heads/ledgers/"
    );
    // GitLab's names.
    let gl = new_repo();
    let r = ledger(gl.path(), &["init", d, "--forge", "gitlab"]);
    r.ok();
    for setting in [
        "Protected branches",
        "Allowed to push and merge",
        "Allowed to force push",
    ] {
        assert!(r.stdout.contains(setting), "{setting}: {}", r.stdout);
    }
    // A repository with ledgers under refs/ledgers/ is not switched.
    let old = Fixture::new(1);
    let r = old.run(&["init", d, "--forge", "github"]);
    r.expect_code(2);
    assert!(r.stderr.contains("never mixes"), "{}", r.stderr);
    assert!(git_run(old.dir(), &["config", "ledger.refPrefix"], None).code != 0);
    // Its hint moves them, as docs/forges.md shows: the same commits under the branch prefix,
    // the old name deleted with the hooks off (they refuse it otherwise), then verified.
    for step in [
        "update-ref",
        "hooksPath=/dev/null update-ref -d",
        "ledger.refPrefix",
    ] {
        assert!(r.stderr.contains(step), "{step}: {}", r.stderr);
    }
    old.run(&["hooks", "install"]).ok();
    let name = git(
        old.dir(),
        &["for-each-ref", "--format=%(refname)", "refs/ledgers/"],
    );
    let id = name.strip_prefix("refs/ledgers/").unwrap();
    let moved = format!("refs/heads/ledgers/{id}");
    git(old.dir(), &["update-ref", &moved, &name]);
    assert_ne!(
        git_run(old.dir(), &["update-ref", "-d", &name], None).code,
        0,
        "the hook refuses the deletion"
    );
    git(
        old.dir(),
        &["-c", "core.hooksPath=/dev/null", "update-ref", "-d", &name],
    );
    git(
        old.dir(),
        &["config", "ledger.refPrefix", "refs/heads/ledgers/"],
    );
    let v = old.run(&["verify"]);
    v.ok();
    assert!(v.stdout.contains(&moved), "{}", v.stdout);
    // A bad prefix is a usage error naming the setting.
    git(gl.path(), &["config", "ledger.refPrefix", "refs/tags/l/"]);
    let r = ledger(gl.path(), &["verify"]);
    r.expect_code(64);
    assert!(r.stderr.contains("ledger.refPrefix"), "{}", r.stderr);
}

fn a_ledger_id_under_both_prefixes_is_refused_by_every_command_naming_both_refs(prefix: &str) {
    let f = Fixture::under(1, prefix);
    let other = if prefix == crate::common::PREFIXES[0] {
        crate::common::PREFIXES[1]
    } else {
        crate::common::PREFIXES[0]
    };
    let twin = format!("{other}{ID}");
    let row = f.hand_row("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED");
    git(f.dir(), &["update-ref", &twin, &f.tip()]);
    let tip = f.tip();
    for args in [
        vec!["verify"],
        vec!["show"],
        vec!["log"],
        vec!["verify", &twin],
        vec!["put", "scenario/bugfix-iso-weeks/01", row.to_str().unwrap()],
        vec!["init", f.decl().to_str().unwrap()],
    ] {
        let r = f.run(&args);
        assert_ne!(r.code, 0, "{args:?} under {prefix}");
        assert!(
            r.stderr.contains(&f.refname) && r.stderr.contains(&twin),
            "{args:?} under {prefix}: {}",
            r.stderr
        );
    }
    assert_eq!(f.tip(), tip, "nothing moved");
}

#[test]
fn hooks_install_forge_writes_the_shipped_ci_files_which_the_forges_schemas_accept() {
    let repo = new_repo();
    let r = ledger(repo.path(), &["hooks", "install", "--forge", "github"]);
    r.ok();
    let wf = repo.path().join(".github/workflows/git-ledger.yml");
    let text = std::fs::read_to_string(&wf).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(text.contains(&format!("--version '={version}'")) && !text.contains("@VERSION@"));
    assert_eq!(
        std::fs::read(repo.path().join(".github/git-ledger/verify-push.sh")).unwrap(),
        std::fs::read(project_root().join("forge/verify-push.sh")).unwrap()
    );
    assert_eq!(
        std::fs::read(repo.path().join(".github/git-ledger/witness.sh")).unwrap(),
        std::fs::read(project_root().join("forge/witness.sh")).unwrap()
    );
    // Least permissions, pinned action; verification uses no secret, and the optional witness
    // job one (its signing key), only when the witness's repository is configured.
    assert!(text.contains("permissions:\n  contents: read\n"), "{text}");
    let (verify_job, witness_job) = text.split_once("\n  witness:\n").unwrap();
    assert!(!verify_job.contains("secrets."), "{verify_job}");
    let secrets: Vec<&str> = witness_job.matches("secrets.").collect();
    assert_eq!(secrets.len(), 1, "{witness_job}");
    assert!(witness_job.contains("${{ secrets.GIT_LEDGER_WITNESS_KEY }}"));
    assert!(witness_job.contains("if: ${{ vars.GIT_LEDGER_WITNESS_REPO != '' }}"));
    assert!(witness_job.contains("permissions:\n      contents: read\n"));
    for line in text.lines().filter(|l| l.trim_start().starts_with("uses:")) {
        let at = line.split('@').nth(1).unwrap_or_default();
        assert!(
            at.len() >= 40 && at[..40].bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
    }
    // Again: already there. Edited: refused without --force.
    let again = ledger(repo.path(), &["hooks", "install", "--forge", "github"]);
    assert!(
        again.ok().stdout.contains("already there"),
        "{}",
        again.stdout
    );
    std::fs::write(&wf, "edited\n").unwrap();
    ledger(repo.path(), &["hooks", "install", "--forge", "github"]).expect_code(2);
    assert_eq!(std::fs::read_to_string(&wf).unwrap(), "edited\n");
    ledger(
        repo.path(),
        &["hooks", "install", "--forge", "github", "--force"],
    )
    .ok();
    ledger(repo.path(), &["hooks", "install", "--forge", "gitlab"]).ok();
    let job = repo.path().join(".gitlab/git-ledger.gitlab-ci.yml");
    let gitlab = std::fs::read_to_string(&job).unwrap();
    assert!(gitlab.contains("verify-push.sh") && gitlab.contains("witness.sh"));
    assert!(repo.path().join(".gitlab/git-ledger/witness.sh").is_file());

    // The forges' syntax: SchemaStore's schemas as check-jsonschema vendors them (actionlint's
    // PyPI wrapper downloads its binary from GitHub at install time, which CI cannot reach).
    let Some(tool) = crate::common::which("check-jsonschema") else {
        crate::common::require_tool("check-jsonschema", "the CI files' schema check");
        return;
    };
    for (schema, file) in [
        ("vendor.github-workflows", wf.clone()),
        ("vendor.gitlab-ci", job.clone()),
    ] {
        let out = Command::new(&tool)
            .args(["--builtin-schema", schema])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}{}",
            file.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // And the check can fail: a workflow with an unknown key is refused.
    let broken = repo.path().join("broken.yml");
    std::fs::write(&broken, text.replace("runs-on:", "runs_on:")).unwrap();
    let out = Command::new(&tool)
        .args(["--builtin-schema", "vendor.github-workflows"])
        .arg(&broken)
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// Run the shipped `forge/witness.sh` in `dir` (the witness job's clone) with `env`.
fn witness_script(dir: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new("sh");
    pin_env(&mut cmd)
        .current_dir(dir)
        .arg(project_root().join("forge/witness.sh"))
        .env("GIT_LEDGER", bin());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("sh"))
}

/// The optional witness job: its script, run as the job runs it (a clone with the ledger
/// branches fetched, the witness's key and repository), checkpoints each ledger branch the
/// forge serves into the witness's bare repository, extends the chain on the next run, and
/// refuses — pushing nothing — a branch rewritten while the protection was off; a reader's
/// `verify --witness` then refuses the rewritten ledger.
#[test]
fn the_witness_job_checkpoints_what_the_forge_serves_and_refuses_a_rewrite() {
    if !crate::signing::have_ssh_keygen("the witness job") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let server = forge_server(base.path());
    // A signed ledger whose declaration pins the default branch's commit, which the forge
    // serves (the audit checks the pins against it).
    let f = crate::signing::Signed::under(crate::common::PREFIXES[1]);
    let branch = f.refname.clone();
    git(
        f.dir(),
        &["remote", "add", "origin", server.to_str().unwrap()],
    );
    git(f.dir(), &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    crate::audit::put(&f, crate::audit::ROW_A, "ERROR");
    ledger(f.dir(), &["sync"]).ok();
    let checked = f.tip();

    // The witness: a key, its published signers file, and a bare repository of its own.
    let keys = tempfile::tempdir().unwrap();
    let key = crate::signing::keygen(keys.path(), "witness", "ed25519");
    let email = "witness@example.org";
    let signers = keys.path().join("witness-signers");
    std::fs::write(&signers, format!("{email} {}\n", key.public)).unwrap();
    git(base.path(), &["init", "-q", "--bare", "witness.git"]);
    let wrepo = base.path().join("witness.git");
    let wref = "refs/ledger-witness/small";
    let job = |name: &str| {
        let ci = ci_clone(base.path(), &server, name);
        git(
            &ci,
            &[
                "fetch",
                "-q",
                "origin",
                "+refs/heads/ledgers/*:refs/heads/ledgers/*",
            ],
        );
        witness_script(
            &ci,
            &[
                // A path relative to the job's clone, as a local path may be given.
                ("WITNESS_REPO", "../witness.git"),
                ("WITNESS_KEY_FILE", key.path.to_str().unwrap()),
                ("WITNESS_EMAIL", email),
                ("LEDGER_REMOTE", "."),
            ],
        )
    };
    let witnessed = |dir: &Path| {
        ledger(
            dir,
            &[
                "verify",
                "--witness",
                wrepo.to_str().unwrap(),
                "--witness-signers",
                signers.to_str().unwrap(),
            ],
        )
    };

    // First run: one checkpoint of the served tip, signed by the witness, pushed.
    job("ci1").ok();
    let c1 = git(&wrepo, &["rev-parse", wref]);
    let checkpoint: serde_json::Value =
        serde_json::from_str(&git(&wrepo, &["show", &format!("{c1}:checkpoint.json")])).unwrap();
    assert_eq!(checkpoint["tip"], checked.as_str(), "{checkpoint}");
    let r = witnessed(f.dir());
    r.ok();
    assert!(r.stdout.contains("witnessed by"), "{}", r.stdout);

    // The ledger grows; the next run extends the witness's chain (a fast-forward push).
    crate::audit::put(&f, crate::audit::ROW_B, "FAIL");
    ledger(f.dir(), &["sync"]).ok();
    job("ci2").ok();
    let c2 = git(&wrepo, &["rev-parse", wref]);
    assert_eq!(git(&wrepo, &["rev-parse", &format!("{c2}~1")]), c1);

    // Someone switches the protection off, rewrites the branch and switches it back on.
    let hook = server.join("hooks/pre-receive");
    std::fs::rename(&hook, server.join("hooks/off")).unwrap();
    git(f.dir(), &["update-ref", &f.refname, &checked]);
    crate::audit::put(&f, crate::audit::ROW_B, "PASS");
    let rewritten = f.tip();
    git(
        f.dir(),
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{rewritten}:{branch}"),
        ],
    );
    std::fs::rename(server.join("hooks/off"), &hook).unwrap();
    assert_eq!(git(&server, &["rev-parse", &branch]), rewritten);
    // The job refuses it, naming the rewrite, and the witness's chain stays where it was.
    let r = job("ci3");
    r.expect_code(2);
    assert!(
        r.stderr.contains("rewritten") && r.stderr.contains(&branch),
        "{}",
        r.stderr
    );
    assert_eq!(git(&wrepo, &["rev-parse", wref]), c2);
    // A reader holding the rewritten ledger is refused against the checkpoints.
    let reader = new_repo();
    crate::common::use_prefix(reader.path(), crate::common::PREFIXES[1]);
    git(
        reader.path(),
        &[
            "fetch",
            "-q",
            server.to_str().unwrap(),
            &format!("{branch}:{branch}"),
        ],
    );
    let r = witnessed(reader.path());
    r.expect_code(2);
    assert!(
        r.stderr.contains(&c2[..7]) || r.stderr.contains("checkpoint"),
        "{}",
        r.stderr
    );
    // Without the witness's repository the script says what is missing and writes nothing.
    let r = witness_script(
        f.dir(),
        &[("WITNESS_KEY_FILE", "k"), ("WITNESS_EMAIL", email)],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("WITNESS_REPO"), "{}", r.stderr);
}

crate::common::under_both_prefixes!(
    a_ledger_id_under_both_prefixes_is_refused_by_every_command_naming_both_refs
);

/// A reviewer (or witness) whose repository reads the other prefix is told where the remote's
/// ledgers are, instead of reading "serves no ledger" as a pass; a remote with no ledger under
/// either prefix gets no hint, and with the prefix set the ledger is audited.
#[test]
fn audit_and_witness_say_when_the_ledgers_are_under_the_other_prefix() {
    for prefix in crate::common::PREFIXES {
        let f = Fixture::under(1, prefix);
        let other = if prefix == crate::common::PREFIXES[0] {
            crate::common::PREFIXES[1]
        } else {
            crate::common::PREFIXES[0]
        };
        let url = f.dir().to_str().unwrap();
        let reviewer = new_repo();
        crate::common::use_prefix(reviewer.path(), other);
        for command in ["audit", "witness"] {
            let r = ledger(reviewer.path(), &[command, url]);
            r.ok();
            assert!(r.stdout.contains("serves no ledger"), "{}", r.stdout);
            assert!(
                r.stderr.contains(&f.refname)
                    && r.stderr
                        .contains(&format!("git config ledger.refPrefix {prefix}")),
                "{command} reading {other}: {}",
                r.stderr
            );
        }
        // The prefix set: the ledger is audited (refused here: its pinned commit is not served).
        crate::common::use_prefix(reviewer.path(), prefix);
        if prefix == crate::common::PREFIXES[0] {
            git(reviewer.path(), &["config", "--unset", "ledger.refPrefix"]);
        }
        let r = ledger(reviewer.path(), &["audit", url]);
        r.expect_code(2);
        assert!(r.stdout.contains(&format!("{ID}@")), "{}", r.stdout);
        assert!(!r.stdout.contains("serves no ledger"), "{}", r.stdout);
    }
    // A remote that serves no ledger at all: no hint.
    let empty = new_repo();
    let reviewer = new_repo();
    let r = ledger(reviewer.path(), &["audit", empty.path().to_str().unwrap()]);
    r.ok();
    assert!(r.stdout.contains("serves no ledger"), "{}", r.stdout);
    assert!(!r.stderr.contains("hint"), "{}", r.stderr);
}
