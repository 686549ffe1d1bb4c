//! Witnesses (`docs/reference/witness.md`): `witness` appends signed checkpoints to the
//! witness's own repository and never checkpoints a rewrite; `verify --witness` and
//! `audit --witness` refuse a ledger whose chain lacks the last checkpointed tip, or whose
//! checkpoints are unsigned, signed by another key or not one chain, and flag a commit dated
//! before a checkpoint it follows. The authors' server is served by `git daemon`; Git's own
//! `verify-commit` agrees that a checkpoint is signed by the witness.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::audit::{
    audit, hand_row, put, reviewer_under, rewrite_from_the_root, tree_state, Trial, ROW_B,
};
use crate::common::{bin, git, git_hooked, git_run, ledger, new_repo, path_with_bin, pin_env, Run};
use crate::signing::{keygen, Key};

const WITNESS_EMAIL: &str = "witness@example.org";
const WREF: &str = "refs/ledger-witness/small";

/// The witness's repository, its key and its published signers file.
struct Witness {
    repo: tempfile::TempDir,
    keys: tempfile::TempDir,
    key: Key,
    signers: PathBuf,
}

impl Witness {
    /// The witness, reading ledgers under `prefix` (as the authors keep them).
    fn under(prefix: &str) -> Witness {
        let repo = new_repo();
        crate::common::use_prefix(repo.path(), prefix);
        let keys = tempfile::tempdir().unwrap();
        let key = keygen(keys.path(), "witness", "ed25519");
        git(repo.path(), &["config", "gpg.format", "ssh"]);
        git(
            repo.path(),
            &["config", "user.signingKey", key.path.to_str().unwrap()],
        );
        let signers = keys.path().join("witness-signers");
        std::fs::write(&signers, format!("{WITNESS_EMAIL} {}\n", key.public)).unwrap();
        Witness {
            repo,
            keys,
            key,
            signers,
        }
    }
    fn dir(&self) -> &Path {
        self.repo.path()
    }
    fn path(&self) -> String {
        self.dir().display().to_string()
    }
    /// `git ledger witness URL` as the witness, at `date`.
    fn run(&self, url: &str, date: &str) -> Run {
        as_witness(self.dir(), &["witness", url], date)
    }
    fn flags(&self) -> Vec<String> {
        vec![
            "--witness".into(),
            self.path(),
            "--witness-signers".into(),
            self.signers.display().to_string(),
        ]
    }
}

/// The binary in `dir` as the witness (its identity, at `date`).
fn as_witness(dir: &Path, args: &[&str], date: &str) -> Run {
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .env("PATH", path_with_bin())
        .env("GIT_COMMITTER_NAME", "Benchmark Witness")
        .env("GIT_COMMITTER_EMAIL", WITNESS_EMAIL)
        .env("GIT_COMMITTER_DATE", date)
        .current_dir(dir)
        .args(args);
    let o = cmd.output().unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn with(args: &[&str], extra: &[String]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    v.extend_from_slice(extra);
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A plain clone of the served ledger (the reviewer's `verify` works on local refs).
fn clone_of(url: &str, prefix: &str) -> tempfile::TempDir {
    let c = new_repo();
    crate::common::use_prefix(c.path(), prefix);
    let f = git_hooked(
        c.path(),
        &["fetch", "-q", url, &format!("+{prefix}small:{prefix}small")],
        None,
    );
    assert_eq!(f.code, 0, "{}", f.stderr);
    c
}

fn the_witness_checkpoints_the_honest_ledger_and_a_rewrite_is_refused_by_witness_verify_and_audit(
    prefix: &str,
) {
    let rf: &str = &format!("{prefix}small");
    let t = Trial::under(prefix);
    let url = t.url();
    let w = Witness::under(prefix);
    let tip1 = t.tip();
    let served = tree_state(&t.server);
    let first = w.run(&url, "2026-11-29T10:00:00Z");
    first.ok();
    assert_eq!(
        tree_state(&t.server),
        served,
        "the witness changed the server"
    );
    assert!(
        first
            .stdout
            .contains(&format!("checkpointed small@{tip1} as ")),
        "{}",
        first.stdout
    );
    let c1 = git(w.dir(), &["rev-parse", WREF]);
    // The checkpoint: its one file, its signature as Git verifies it.
    let cp: serde_json::Value =
        serde_json::from_str(&git(w.dir(), &["show", &format!("{WREF}:checkpoint.json")])).unwrap();
    let root = git(t.s.dir(), &["rev-list", "--max-parents=0", rf]);
    assert_eq!(cp["format"], "ledger-checkpoint/1");
    assert_eq!(cp["ledger"], "small");
    assert_eq!(cp["tip"], tip1.as_str());
    assert_eq!(cp["root"], root.as_str());
    assert!(cp["filled"].as_str().unwrap().starts_with("1/"), "{cp}");
    let signers = w.signers.to_str().unwrap();
    let v = git_run(
        w.dir(),
        &[
            "-c",
            &format!("gpg.ssh.allowedSignersFile={signers}"),
            "verify-commit",
            &c1,
        ],
        None,
    );
    assert_eq!(v.code, 0, "git verify-commit: {}", v.stderr);
    // Nothing new: no second checkpoint.
    let same = w.run(&url, "2026-11-29T10:30:00Z");
    same.ok();
    assert!(same.stdout.contains("unchanged: small@"), "{}", same.stdout);
    assert_eq!(git(w.dir(), &["rev-parse", WREF]), c1);

    // The authors add an attempt; the witness checkpoints the new tip on top.
    put(&t.s, ROW_B, "PASS");
    t.publish();
    let tip2 = t.tip();
    w.run(&url, "2026-11-29T11:00:00Z").ok();
    let c2 = git(w.dir(), &["rev-parse", WREF]);
    assert_eq!(git(w.dir(), &["rev-parse", &format!("{c2}^")]), c1);

    // A reviewer: audit and verify with the witness pass.
    let r = reviewer_under(prefix);
    let a = audit(r.path(), &strs(&with(&[&url], &w.flags())));
    a.ok();
    assert!(
        a.stdout.contains(&format!(
            "witnessed by {}: 2 checkpoints signed by {WITNESS_EMAIL}; the last, of {tip2} at 2026-11-29T11:00:00Z, is on its chain (its tip)",
            w.path()
        )),
        "{}",
        a.stdout
    );
    let j = audit(r.path(), &strs(&with(&[&url, "--json"], &w.flags())));
    j.ok();
    assert_eq!(j.json()["ledgers"][0]["witness"]["ok"], true);
    let clone = clone_of(&url, prefix);
    let witnessed = tree_state(w.dir());
    let v = ledger(clone.path(), &strs(&with(&["verify"], &w.flags())));
    v.ok();
    assert_eq!(
        tree_state(w.dir()),
        witnessed,
        "verify --witness changed the witness"
    );
    assert!(
        v.stdout
            .contains(&format!("{rf}: witnessed by {}: 2 checkpoints", w.path())),
        "{}",
        v.stdout
    );

    // The rewrite from a reproduced root: admitted in a fresh clone, refused with the witness.
    let doctored = rewrite_from_the_root(&t, "PASS");
    let refused = w.run(&url, "2026-11-29T12:00:00Z");
    refused.expect_code(2);
    assert!(
        refused.stderr.contains(&format!("rewritten since {tip2}")),
        "{}",
        refused.stderr
    );
    assert_eq!(
        git(w.dir(), &["rev-parse", WREF]),
        c2,
        "a rewrite was checkpointed"
    );
    let fresh = reviewer_under(prefix);
    audit(fresh.path(), &[&url]).ok();
    let fresh = reviewer_under(prefix);
    let a = audit(fresh.path(), &strs(&with(&[&url], &w.flags())));
    a.expect_code(2);
    assert!(
        a.stdout
            .contains(&format!("small@{doctored}: 2 commits admitted")),
        "{}",
        a.stdout
    );
    assert!(
        a.stdout
            .contains(&format!("NOT VOUCHED FOR by the witness {}", w.path())),
        "{}",
        a.stdout
    );
    let why = format!(
        "rewritten since {tip2}: the witness {} checkpointed it at 2026-11-29T11:00:00Z (checkpoint {c2})",
        w.path()
    );
    assert!(a.stderr.contains(&why), "{}", a.stderr);
    let clone = clone_of(&url, prefix);
    ledger(clone.path(), &["verify"]).ok();
    let v = ledger(clone.path(), &strs(&with(&["verify"], &w.flags())));
    v.expect_code(2);
    assert!(v.stderr.contains(&why), "{}", v.stderr);
    let j = ledger(
        clone.path(),
        &strs(&with(&["verify", "--json"], &w.flags())),
    );
    j.expect_code(2);

    // The ledger deleted: a fresh reviewer's audit has no memory of it, the witness does.
    git(&t.server, &["update-ref", "-d", rf]);
    let fresh = reviewer_under(prefix);
    let a = audit(fresh.path(), &strs(&with(&[&url], &w.flags())));
    a.ok();
    assert!(
        a.stdout.contains(&format!(
            "small: checkpointed by the witness at {tip2}, but not served by {url}"
        )),
        "{}",
        a.stdout
    );
    let j = audit(fresh.path(), &strs(&with(&[&url, "--json"], &w.flags())));
    assert_eq!(
        j.json()["witnessed_not_served"][0]["last_tip"],
        tip2.as_str()
    );
}

/// A checkpoint commit written by hand in the witness's repository: `checkpoint.json` with
/// `tip`, parents `parents`, signed with `key` (or unsigned).
fn forge_checkpoint(w: &Witness, tip: &str, parents: &[&str], key: Option<&Key>) -> String {
    let last = git(w.dir(), &["show", &format!("{WREF}:checkpoint.json")]);
    let mut cp: serde_json::Value = serde_json::from_str(&last).unwrap();
    cp["tip"] = tip.into();
    let bytes = format!("{}\n", serde_json::to_string_pretty(&cp).unwrap());
    let blob = git_run(
        w.dir(),
        &["hash-object", "-w", "--stdin"],
        Some(bytes.as_bytes()),
    );
    let blob = blob.stdout.trim();
    let tree = git_run(
        w.dir(),
        &["mktree"],
        Some(format!("100644 blob {blob}\tcheckpoint.json\n").as_bytes()),
    );
    let mut args: Vec<String> = Vec::new();
    if let Some(k) = key {
        args.extend(["-c".into(), format!("user.signingKey={}", k.path.display())]);
    }
    args.push("commit-tree".into());
    if key.is_some() {
        args.push("-S".into());
    }
    for p in parents {
        args.extend(["-p".into(), p.to_string()]);
    }
    args.extend([
        "-m".into(),
        "Checkpoint".into(),
        tree.stdout.trim().to_owned(),
    ]);
    let mut cmd = Command::new("git");
    pin_env(&mut cmd)
        .env("GIT_COMMITTER_EMAIL", WITNESS_EMAIL)
        .env("GIT_COMMITTER_DATE", "2026-11-29T13:00:00Z")
        .current_dir(w.dir())
        .args(&args);
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn checkpoints_unsigned_by_another_key_or_not_one_chain_are_refused_and_a_backdated_commit_flagged(
    prefix: &str,
) {
    let rf: &str = &format!("{prefix}small");
    let t = Trial::under(prefix);
    let url = t.url();
    let w = Witness::under(prefix);
    let tip1 = t.tip();
    w.run(&url, "2026-11-29T12:00:00Z").ok();
    let c1 = git(w.dir(), &["rev-parse", WREF]);
    let root = git(t.s.dir(), &["rev-list", "--max-parents=0", rf]);

    // A commit after the checkpointed tip, dated after its parent but before the checkpoint.
    let p = t.s.keys.path().join("row.json");
    hand_row(&t.s, ROW_B, "PASS", &p);
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .current_dir(t.s.dir())
        .env("GIT_AUTHOR_DATE", "2026-11-29T11:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-29T11:00:00Z")
        .args(["put", ROW_B, p.to_str().unwrap()]);
    assert!(cmd.status().unwrap().success());
    t.publish();
    let late = t.tip();
    let clone = clone_of(&url, prefix);
    let v = ledger(clone.path(), &strs(&with(&["verify"], &w.flags())));
    v.ok();
    assert!(
        v.stdout.contains(&format!(
            "; commit {} dated 2026-11-29T11:00:00Z follows checkpoint {} of 2026-11-29T12:00:00Z yet is dated before it (backdated)",
            &late[..12],
            &c1[..12]
        )),
        "{}",
        v.stdout
    );
    let j = ledger(
        clone.path(),
        &strs(&with(&["verify", "--json"], &w.flags())),
    );
    j.ok();
    assert_eq!(
        j.json()["refs"][0]["witness"]["backdated"][0]["commit"],
        late.as_str()
    );

    // Signed by another key than the witness-signers file names.
    let other = keygen(w.keys.path(), "mallory", "ed25519");
    let wrong = w.keys.path().join("wrong-signers");
    std::fs::write(&wrong, format!("{WITNESS_EMAIL} {}\n", other.public)).unwrap();
    let flags = [
        "--witness".to_owned(),
        w.path(),
        "--witness-signers".to_owned(),
        wrong.display().to_string(),
    ];
    let v = ledger(clone.path(), &strs(&with(&["verify"], &flags)));
    v.expect_code(2);
    assert!(
        v.stderr.contains(&format!(
            "checkpoint {c1}: judged against the witness-signers file as rule 8 judges a ledger commit against its writers: it is signed with key"
        )),
        "{}",
        v.stderr
    );

    // An unsigned checkpoint on top of the witness's chain.
    let unsigned = forge_checkpoint(&w, &late, &[&c1], None);
    git(w.dir(), &["update-ref", WREF, &unsigned]);
    let r = reviewer_under(prefix);
    let a = audit(r.path(), &strs(&with(&[&url], &w.flags())));
    a.expect_code(2);
    assert!(
        a.stderr
            .contains(&format!("checkpoint {unsigned} is not signed")),
        "{}",
        a.stderr
    );

    // Signed by the witness, but its tip goes back to the root: not one chain.
    let back = forge_checkpoint(&w, &root, &[&c1], Some(&w.key));
    git(w.dir(), &["update-ref", WREF, &back]);
    let v = ledger(clone.path(), &strs(&with(&["verify"], &w.flags())));
    v.expect_code(2);
    assert!(
        v.stderr.contains(&format!(
            "the checkpoints are not one chain: checkpoint {back}'s tip {root} does not extend the tip of checkpoint {c1} before it"
        )),
        "{}",
        v.stderr
    );

    // Two parents: not one chain.
    let merge = forge_checkpoint(&w, &late, &[&c1, &unsigned], Some(&w.key));
    git(w.dir(), &["update-ref", WREF, &merge]);
    let v = ledger(clone.path(), &strs(&with(&["verify"], &w.flags())));
    v.expect_code(2);
    assert!(
        v.stderr.contains(&format!(
            "the checkpoints are not one chain: checkpoint {merge} has 2 parents"
        )),
        "{}",
        v.stderr
    );

    // The witness ref restored: it vouches again; and a witness without a checkpoint of the
    // ledger vouches for nothing.
    git(w.dir(), &["update-ref", WREF, &c1]);
    ledger(clone.path(), &strs(&with(&["verify"], &w.flags()))).ok();
    let empty = Witness::under(prefix);
    let v = ledger(clone.path(), &strs(&with(&["verify"], &empty.flags())));
    v.expect_code(2);
    assert!(
        v.stderr.contains("holds no checkpoint of small"),
        "{}",
        v.stderr
    );
    let _ = tip1;
}

fn witness_arguments_are_checked(prefix: &str) {
    let t = Trial::under(prefix);
    let w = Witness::under(prefix);
    let r = as_witness(
        w.dir(),
        &["witness", &t.url(), "--ref", &format!("{prefix}x")],
        "2026-11-29T12:00:00Z",
    );
    r.expect_code(64);
    assert!(r.stderr.contains("outside refs/ledgers/"), "{}", r.stderr);
    // Without a signing key the witness writes nothing.
    let unsigned = new_repo();
    crate::common::use_prefix(unsigned.path(), prefix);
    let r = as_witness(
        unsigned.path(),
        &["witness", &t.url()],
        "2026-11-29T12:00:00Z",
    );
    r.expect_code(2);
    assert!(
        r.stderr.contains("signed with the witness's SSH key"),
        "{}",
        r.stderr
    );
    assert!(git(unsigned.path(), &["for-each-ref", "refs/ledger-witness/"]).is_empty());
    // --witness needs --witness-signers.
    let clone = clone_of(&t.url(), prefix);
    ledger(clone.path(), &["verify", "--witness", &w.path()]).expect_code(64);
    let v = ledger(
        clone.path(),
        &[
            "verify",
            "--witness",
            &w.path(),
            "--witness-signers",
            "/nonexistent",
        ],
    );
    v.expect_code(64);
    assert!(
        v.stderr.contains("--witness-signers /nonexistent"),
        "{}",
        v.stderr
    );
}

crate::common::under_both_prefixes!(
    checkpoints_unsigned_by_another_key_or_not_one_chain_are_refused_and_a_backdated_commit_flagged,
    the_witness_checkpoints_the_honest_ledger_and_a_rewrite_is_refused_by_witness_verify_and_audit,
    witness_arguments_are_checked,
);
