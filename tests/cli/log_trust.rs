//! `git ledger log` is never more trusting than `verify` (issue 25): a signer is named only
//! after its signature verified; the writers are the declared ones (the root's, checked against
//! the declaration), never a later tree's; a commit `verify` refuses is marked so, in the text
//! and in `--json`, with the reason.

use serde_json::Value;

use crate::common::{git, git_run, Run};
use crate::signature_diff::{armour, string, Fields, Parts};
use crate::signing::{
    fingerprint, forge_with, git_ledger_hash_object, have_ssh_keygen, keygen, Signed, COMMITTER,
};

/// `raw` with its signature bytes replaced by zeros (the real public key kept).
fn garbage_signature(raw: &str) -> String {
    let p = Parts::of(raw);
    let mut f = Fields::of(&p.blob());
    let mut sig = &f.sig[..];
    let n = u32::from_be_bytes(sig[..4].try_into().unwrap()) as usize;
    let stype = sig[4..4 + n].to_vec();
    sig = &sig[4 + n..];
    let m = u32::from_be_bytes(sig[..4].try_into().unwrap()) as usize;
    f.sig = [string(&stype), string(&vec![0; m])].concat();
    p.with_armour(&armour(&f.bytes(), 70))
}

fn json(r: &Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap()
}

fn without_writers_a_garbage_signature_with_a_real_key_names_no_signer(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    if !have_ssh_keygen("the log trust tests") {
        return;
    }
    let f = crate::gitstore::Fixture::under(1, prefix);
    let keys = tempfile::tempdir().unwrap();
    let alice = keygen(keys.path(), "alice", "ed25519");
    let d = f.dir();
    git(d, &["config", "commit.gpgSign", "true"]);
    git(d, &["config", "gpg.format", "ssh"]);
    git(
        d,
        &["config", "user.signingKey", alice.path.to_str().unwrap()],
    );
    f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
        .ok();
    // The good signature: the key is named.
    let r = f.run(&["log"]);
    r.expect_code(0);
    let fpr = fingerprint(&alice);
    assert!(
        r.stdout
            .lines()
            .next()
            .unwrap()
            .ends_with(&format!("signed by key {fpr}")),
        "{}",
        r.stdout
    );
    // The same commit with zeros for signature bytes: verify admits the ledger (it has no
    // writers), log names no signer and says why.
    let raw = git(d, &["cat-file", "commit", rf]) + "\n";
    let forged = git_ledger_hash_object(d, garbage_signature(&raw).as_bytes());
    git(d, &["update-ref", rf, &forged]);
    f.run(&["verify"]).expect_code(0);
    let r = f.run(&["log"]);
    r.expect_code(0);
    let first = r.stdout.lines().next().unwrap();
    assert!(!first.contains("signed by"), "{first}");
    assert!(
        first.contains(&format!(
            "signature not verified: its signature by key {fpr} does not verify"
        )),
        "{first}"
    );
    let r = f.run(&["log", "--json"]);
    r.expect_code(0);
    let v = json(&r);
    assert_eq!(v[0]["signer"], Value::Null);
    let why = &v[0]["signature_refused"][0];
    assert!(
        why["sentence"]
            .as_str()
            .unwrap()
            .contains("does not verify"),
        "{why}"
    );
    assert_eq!(why.get("rule"), None, "no writers: no rule 8, {why}");
    assert_eq!(v[0]["admitted"], true);
    // Git agrees that the signature is bad.
    let allowed = keys.path().join("allowed");
    std::fs::write(&allowed, format!("{COMMITTER} {}\n", alice.public)).unwrap();
    let g = git_run(
        d,
        &[
            "-c",
            &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
            "verify-commit",
            &forged,
        ],
        None,
    );
    assert_ne!(g.code, 0, "{}", g.stderr);
}

fn with_writers_a_garbage_signature_is_refused_and_marked_so(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the log trust tests") {
        return;
    }
    let s = Signed::under(prefix);
    s.put("scenario/s-b/01", "ERROR").ok();
    let good = s.tip();
    let raw = git(s.dir(), &["cat-file", "commit", &good]) + "\n";
    let forged = git_ledger_hash_object(s.dir(), garbage_signature(&raw).as_bytes());
    git(s.dir(), &["update-ref", rf, &forged]);
    let r = s.run(&["verify"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!("commit {forged}: rule 8: ")),
        "{}",
        r.stderr
    );
    let r = s.run(&["log"]);
    r.expect_code(2);
    let first = r.stdout.lines().next().unwrap();
    let fpr = fingerprint(&s.alice);
    assert!(!first.contains("signed by"), "{first}");
    assert!(
        first.contains(&format!(
            "rule 8: its signature by key {fpr} does not verify"
        )) && first.contains("(verify refuses it: "),
        "{first}"
    );
    assert!(
        r.stderr.contains(&format!("commit {forged}: rule 8: ")),
        "{}",
        r.stderr
    );
    let v = json(&s.run(&["log", "--json"]));
    assert_eq!(v[0]["signer"], Value::Null);
    assert_eq!(v[0]["admitted"], false);
    let rule8 = serde_json::json!({"spec": "admission", "number": 8});
    let why = &v[0]["refused"][0];
    assert_eq!(
        (&why["place"], &why["rule"]),
        (&serde_json::json!([format!("commit {forged}")]), &rule8),
        "{}",
        v[0]
    );
    assert_eq!(v[0]["signature_refused"][0]["rule"], rule8, "{}", v[0]);
    assert_eq!(v[1]["admitted"], true);
    assert_eq!(v[1]["refused"], Value::Null);
    assert_eq!(v[1]["signer"]["fingerprint"], fpr.as_str());
}

fn a_tip_that_swaps_the_writers_blob_does_not_change_who_log_calls_a_writer(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the log trust tests") {
        return;
    }
    let s = Signed::under(prefix);
    s.put("scenario/s-b/01", "ERROR").ok();
    let good = s.tip();
    let mallory = keygen(s.keys.path(), "mallory", "ed25519");
    // A tree whose writers name mallory, signed by mallory, on top of the real chain.
    let blob = git_run(
        s.dir(),
        &["hash-object", "-w", "--stdin"],
        Some(format!("{COMMITTER} {}\n", mallory.public).as_bytes()),
    )
    .stdout
    .trim()
    .to_owned();
    let index = s.keys.path().join("index");
    let with_index = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(s.dir())
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    with_index(&["read-tree", &good]);
    with_index(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{blob},writers"),
    ]);
    let tree = with_index(&["write-tree"]);
    let message = git(s.dir(), &["log", "-1", "--format=%B", &good]);
    let evil = forge_with(
        s.dir(),
        &tree,
        Some(&good),
        &message,
        Some((&mallory, "git")),
        false,
    );
    git(s.dir(), &["update-ref", rf, &evil]);
    s.run(&["verify"]).expect_code(2);
    let r = s.run(&["log"]);
    r.expect_code(2);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let alice = fingerprint(&s.alice);
    let mal = fingerprint(&mallory);
    // Mallory's commit is not "signed by" anyone: her key is not a declared writer.
    assert!(!lines[0].contains("signed by"), "{}", lines[0]);
    assert!(
        lines[0].contains(&format!(
            "rule 8: it is signed with key {mal}, which is not a declared writer"
        )) && lines[0].contains("(verify refuses it: "),
        "{}",
        lines[0]
    );
    // Alice's commits are still hers.
    for l in &lines[1..] {
        assert!(l.contains(&format!("signed by {COMMITTER} {alice}")), "{l}");
        assert!(!l.contains("verify refuses"), "{l}");
    }
    let v = json(&s.run(&["log", "--json"]));
    assert_eq!(v[0]["admitted"], false);
    assert_eq!(v[0]["signer"], Value::Null);
    let why = &v[0]["refused"][0];
    assert!(
        why["sentence"].as_str().unwrap().contains("writer"),
        "{}",
        v[0]
    );
    assert_eq!(
        why["rule"],
        serde_json::json!({"spec": "admission", "number": 8}),
        "{}",
        v[0]
    );
    assert_eq!(v[1]["signer"]["fingerprint"], alice.as_str());
    assert_eq!(v[1]["admitted"], true);
}

crate::common::under_both_prefixes!(
    without_writers_a_garbage_signature_with_a_real_key_names_no_signer,
    with_writers_a_garbage_signature_is_refused_and_marked_so,
    a_tip_that_swaps_the_writers_blob_does_not_change_who_log_calls_a_writer,
);
