//! Who wrote each row (`signing.md`): declared writers pinned, copied into the root and kept;
//! rule 8 (every commit signed by a declared writer, for the committer, at the committer time)
//! in the writers and in `verify`; the tool signing its own commits from Git's configuration;
//! and Git's own verdict (`git verify-commit`) agreeing with git-ledger's on every case built.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{
    commit_all, git, git_run, ledger, ledger_ref, require_tool, which, write, Run,
};
use crate::gitstore::hand_row_value;

/// The ledger ref under the default prefix (`Signed::refname` names it under any prefix).
#[allow(dead_code)] // the ref-mode tests take a prefix; kept for tests to come
pub const REF: &str = "refs/ledgers/small";
pub const WRITERS_PATH: &str = "h/allowed_signers";
/// The committer the pinned environment sets (`common::pin_env`).
pub const COMMITTER: &str = "committer@example.com";

/// Whether ssh-keygen is here (a loud skip outside CI, a failure under CI when not).
pub fn have_ssh_keygen(what: &str) -> bool {
    if which("ssh-keygen").is_some() {
        return true;
    }
    require_tool("ssh-keygen", what);
    false
}

/// A key made with ssh-keygen: the private key's path and the public key (`type base64`).
#[derive(Debug, Clone)]
pub struct Key {
    pub path: PathBuf,
    pub public: String,
}

/// Make a key of `kind` (`ed25519`, `ecdsa`, `rsa`) named `name` in `dir`.
pub fn keygen(dir: &Path, name: &str, kind: &str) -> Key {
    let path = dir.join(name);
    let mut args = vec!["-q", "-t", kind, "-N", "", "-C", name, "-f"];
    let p = path.to_str().unwrap().to_owned();
    args.push(&p);
    if kind == "rsa" {
        args.extend(["-b", "3072"]);
    }
    if kind == "ecdsa" {
        args.extend(["-b", "256"]);
    }
    let out = std::process::Command::new("ssh-keygen")
        .args(&args)
        .output()
        .expect("run ssh-keygen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    let public = public.split(' ').take(2).collect::<Vec<_>>().join(" ");
    Key { path, public }
}

/// The ssh fingerprint ssh-keygen prints for a key.
pub fn fingerprint(key: &Key) -> String {
    let out = std::process::Command::new("ssh-keygen")
        .args(["-l", "-E", "sha256", "-f"])
        .arg(key.path.with_extension("pub"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split(' ')
        .nth(1)
        .unwrap()
        .to_owned()
}

/// A harness repository whose pinned declaration names writers, and the ledger `init` made
/// in it, signed with `alice` (declared for the pinned committer).
pub struct Signed {
    pub repo: tempfile::TempDir,
    pub keys: tempfile::TempDir,
    pub alice: Key,
    pub writers: String,
    /// The ledger ref (`REF` under the default prefix).
    pub refname: String,
}

impl Signed {
    /// The harness with `writers(alice)` as its allowed-signers file, pinned; not initialised.
    #[allow(dead_code)] // the ref-mode tests take a prefix; kept for tests to come
    pub fn pinned(writers: impl Fn(&Key) -> String) -> Signed {
        Self::pinned_under(crate::common::PREFIXES[0], writers)
    }

    /// [`Signed::pinned`] with the repository's ledgers under `prefix`.
    pub fn pinned_under(prefix: &str, writers: impl Fn(&Key) -> String) -> Signed {
        let (repo, _) = crate::pin::harness();
        crate::common::use_prefix(repo.path(), prefix);
        let keys = tempfile::tempdir().unwrap();
        let alice = keygen(keys.path(), "alice", "ed25519");
        let d = repo.path();
        let text = writers(&alice);
        write(d, WRITERS_PATH, &text);
        let mut draft: Value =
            serde_json::from_slice(&std::fs::read(d.join("draft.json")).unwrap()).unwrap();
        draft["writers"] = json!({ "path": WRITERS_PATH });
        write(d, "draft.json", serde_json::to_vec_pretty(&draft).unwrap());
        commit_all(d, "declare the writers");
        ledger(d, &["pin", "draft.json", "-o", "campaign.json"]).ok();
        let s = Signed {
            repo,
            keys,
            alice,
            writers: text,
            refname: format!("{prefix}small"),
        };
        s.sign_with(&s.alice.clone());
        s
    }

    /// [`Signed::pinned`] with alice as the one writer, and the ledger initialised.
    #[allow(dead_code)] // the ref-mode tests here take a prefix; kept for tests to come
    pub fn new() -> Signed {
        Self::under(crate::common::PREFIXES[0])
    }

    /// [`Signed::new`] with the repository's ledgers under `prefix`.
    pub fn under(prefix: &str) -> Signed {
        let s = Self::pinned_under(prefix, |k| format!("{COMMITTER} {}\n", k.public));
        s.run(&["init", "campaign.json"]).ok();
        s
    }

    pub fn dir(&self) -> &Path {
        self.repo.path()
    }
    pub fn run(&self, args: &[&str]) -> Run {
        ledger(self.dir(), args)
    }
    pub fn sign_with(&self, key: &Key) {
        git(self.dir(), &["config", "gpg.format", "ssh"]);
        git(
            self.dir(),
            &["config", "user.signingKey", key.path.to_str().unwrap()],
        );
    }
    pub fn tip(&self) -> String {
        git(self.dir(), &["rev-parse", &self.refname])
    }
    /// A hand row for `sid` put on the ledger.
    pub fn put(&self, sid: &str, outcome: &str) -> Run {
        let row = hand_row_value(&self.run(&["show", "--row", sid]).ok().stdout, outcome);
        let path = self.keys.path().join("row.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&row).unwrap()).unwrap();
        self.run(&["put", sid, path.to_str().unwrap()])
    }
    /// The allowed-signers file as Git reads it (`gpg.ssh.allowedSignersFile`).
    pub fn allowed_file(&self) -> PathBuf {
        self.dir().join(WRITERS_PATH)
    }
    /// `git verify-commit --raw` with the writers as Git's allowed signers: whether Git calls it
    /// good, and for which principal.
    pub fn git_verdict(&self, commit: &str) -> (bool, Option<String>) {
        let r = git_run(
            self.dir(),
            &[
                "-c",
                &format!(
                    "gpg.ssh.allowedSignersFile={}",
                    self.allowed_file().display()
                ),
                "verify-commit",
                "--raw",
                commit,
            ],
            None,
        );
        let principal = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("Good \"git\" signature for "))
            .and_then(|l| l.split(" with ").next())
            .map(str::to_owned);
        (r.code == 0 && principal.is_some(), principal)
    }
}

/// The ref's commits, oldest first.
fn chain(dir: &Path) -> Vec<String> {
    let out = git(dir, &["rev-list", "--reverse", &ledger_ref(dir, "small")]);
    out.lines().map(str::to_owned).collect()
}

fn pin_fills_the_writers_hash_check_recomputes_it_and_init_copies_the_bytes(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the writers tests") {
        return;
    }
    let s = Signed::under(prefix);
    let decl: Value =
        serde_json::from_slice(&std::fs::read(s.dir().join("campaign.json")).unwrap()).unwrap();
    let sha = git_ledger::sha256_hex(s.writers.as_bytes());
    assert_eq!(
        decl["writers"],
        json!({"path": WRITERS_PATH, "sha256": sha})
    );
    // `writers` follows `runner_tools` in the canonical key order.
    let keys: Vec<&String> = decl.as_object().unwrap().keys().collect();
    let text = std::fs::read_to_string(s.dir().join("campaign.json")).unwrap();
    assert!(
        text.find("\"runner_tools\"").unwrap() < text.find("\"writers\"").unwrap()
            && text.find("\"writers\"").unwrap() < text.find("\"runtime_requirements\"").unwrap(),
        "{keys:?}"
    );
    let r = s.run(&["check", "campaign.json", "--json"]);
    r.ok();
    assert!(
        r.stdout.contains("writers (h/allowed_signers)"),
        "{}",
        r.stdout
    );
    // The root holds the exact bytes as `writers`, beside campaign.json and ledger.json.
    assert_eq!(
        git(s.dir(), &["show", &format!("{rf}:writers")]) + "\n",
        s.writers
    );
    let top = git(s.dir(), &["ls-tree", "--name-only", rf]);
    assert_eq!(top, "campaign.json\nledger.json\nrows\nwriters");
    // A put keeps them; verify admits the signed chain.
    s.put("scenario/s-b/01", "ERROR").ok();
    s.run(&["verify"]).ok();
    // check refuses a declaration whose writers hash does not match.
    let tampered = text.replace(&sha, &"0".repeat(64));
    write(s.dir(), "bad.json", tampered);
    let r = s.run(&["check", "bad.json"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("writers (h/allowed_signers)"),
        "{}",
        r.stderr
    );
}

#[test]
fn pin_refuses_an_allowed_signers_file_with_what_it_does_not_implement() {
    if !have_ssh_keygen("the writers tests") {
        return;
    }
    for (line, why) in [
        ("cert-authority", "cert-authority is not supported"),
        ("no-touch-required", "is not supported"),
        ("valid-after=\"20260101\"", "has no time zone"),
    ] {
        let (repo, _) = crate::pin::harness();
        let keys = tempfile::tempdir().unwrap();
        let alice = keygen(keys.path(), "alice", "ed25519");
        let d = repo.path();
        write(
            d,
            WRITERS_PATH,
            format!("{COMMITTER} {line} {}\n", alice.public),
        );
        let mut draft: Value =
            serde_json::from_slice(&std::fs::read(d.join("draft.json")).unwrap()).unwrap();
        draft["writers"] = json!({ "path": WRITERS_PATH });
        write(d, "draft.json", serde_json::to_vec_pretty(&draft).unwrap());
        commit_all(d, "declare the writers");
        let r = ledger(d, &["pin", "draft.json"]);
        r.expect_code(2);
        assert!(
            r.stderr.contains("writers file h/allowed_signers")
                && r.stderr.contains("line 1")
                && r.stderr.contains(why),
            "{line}: {}",
            r.stderr
        );
    }
}

fn the_tools_commits_are_signed_and_git_verifies_them(prefix: &str) {
    if !have_ssh_keygen("the signing tests") {
        return;
    }
    let s = Signed::under(prefix);
    s.put("scenario/s-b/01", "ERROR").ok();
    for c in chain(s.dir()) {
        assert_eq!(
            s.git_verdict(&c),
            (true, Some(COMMITTER.to_owned())),
            "git verify-commit {c}"
        );
    }
    // log names the signer of each commit, in JSON too.
    let fpr = fingerprint(&s.alice);
    let r = s.run(&["log"]);
    r.ok();
    assert_eq!(
        r.stdout
            .matches(&format!("signed by {COMMITTER} {fpr}"))
            .count(),
        2,
        "{}",
        r.stdout
    );
    let v = s.run(&["log", "--json"]).ok().json();
    for c in v.as_array().unwrap() {
        assert_eq!(c["signer"]["principal"], COMMITTER, "{c}");
        assert_eq!(c["signer"]["fingerprint"], fpr.as_str(), "{c}");
    }
}

fn a_ledger_with_writers_refuses_to_write_unsigned_or_with_another_key(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the signing tests") {
        return;
    }
    let s = Signed::pinned_under(prefix, |k| format!("{COMMITTER} {}\n", k.public));
    // No key: refused before anything is written.
    git(s.dir(), &["config", "--unset", "user.signingKey"]);
    let r = s.run(&["init", "campaign.json"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("no signing key is configured"),
        "{}",
        r.stderr
    );
    assert!(git_run(s.dir(), &["rev-parse", "--verify", "-q", rf], None).code != 0);
    // openpgp is refused clearly.
    s.sign_with(&s.alice);
    git(s.dir(), &["config", "gpg.format", "openpgp"]);
    let r = s.run(&["init", "campaign.json"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("gpg.format is \"openpgp\""),
        "{}",
        r.stderr
    );
    // A key that is not a declared writer: the root is written but the ref does not move.
    let mallory = keygen(s.keys.path(), "mallory", "ed25519");
    s.sign_with(&mallory);
    let r = s.run(&["init", "campaign.json"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("rule 8")
            && r.stderr.contains(&fingerprint(&mallory))
            && r.stderr.contains("not a declared writer"),
        "{}",
        r.stderr
    );
    assert!(git_run(s.dir(), &["rev-parse", "--verify", "-q", rf], None).code != 0);
    // Alice's key for another committer: refused naming the principal.
    s.sign_with(&s.alice);
    s.run(&["init", "campaign.json"]).ok();
    let tip = s.tip();
    let mut cmd = std::process::Command::new(crate::common::bin());
    crate::common::pin_env(&mut cmd)
        .current_dir(s.dir())
        .env("GIT_COMMITTER_EMAIL", "bob@example.com");
    let row = hand_row_value(
        &s.run(&["show", "--row", "scenario/s-b/01"]).ok().stdout,
        "ERROR",
    );
    let path = s.keys.path().join("row.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&row).unwrap()).unwrap();
    let out = cmd
        .args(["put", "scenario/s-b/01", path.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "is declared for {COMMITTER}, not for the committer bob@example.com"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("rule 8: writers line 1: key "), "{stderr}");
    assert_eq!(s.tip(), tip, "nothing moved");
}

/// Write a commit with plumbing on top of `parent` with `tree` and the message of `parent` (of
/// the ledger's tip for a root), signed by `key` in a namespace; `tamper`: the author time is
/// changed after signing. Returns its id.
pub fn forge(
    dir: &Path,
    tree: &str,
    parent: Option<&str>,
    sign: Option<(&Key, &str)>,
    tamper: bool,
) -> String {
    let root_of = ledger_ref(dir, "small");
    let message = git(
        dir,
        &["log", "-1", "--format=%B", parent.unwrap_or(&root_of)],
    );
    forge_with(dir, tree, parent, &message, sign, tamper)
}

/// [`forge`] with a message of the caller's.
pub fn forge_with(
    dir: &Path,
    tree: &str,
    parent: Option<&str>,
    message: &str,
    sign: Option<(&Key, &str)>,
    tamper: bool,
) -> String {
    let author = format!("Test Committer <{COMMITTER}>");
    forge_as(dir, tree, parent, message, sign, tamper, &author)
}

/// [`forge_with`] with an author of the caller's (`Name <email>`); the committer stays.
pub fn forge_as(
    dir: &Path,
    tree: &str,
    parent: Option<&str>,
    message: &str,
    sign: Option<(&Key, &str)>,
    tamper: bool,
    author: &str,
) -> String {
    let mut body = format!("tree {tree}\n");
    if let Some(p) = parent {
        body.push_str(&format!("parent {p}\n"));
    }
    body.push_str(&format!("author {author} 1795946400 +0000\n"));
    body.push_str(&format!(
        "committer Test Committer <{COMMITTER}> 1795946400 +0000\n"
    ));
    let payload = format!("{body}\n{message}\n");
    let mut raw = payload.clone().into_bytes();
    if let Some((key, namespace)) = sign {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &payload).unwrap();
        let out = std::process::Command::new("ssh-keygen")
            .args(["-Y", "sign", "-n", namespace, "-f"])
            .arg(&key.path)
            .arg(f.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sig = std::fs::read_to_string(format!("{}.sig", f.path().display())).unwrap();
        let mut header = String::from("gpgsig");
        for line in sig.trim_end().lines() {
            header.push(' ');
            header.push_str(line);
            header.push('\n');
        }
        let signed_body = if tamper {
            body.replace("1795946400 +0000\ncommitter", "1795946401 +0000\ncommitter")
        } else {
            body.clone()
        };
        raw = format!("{signed_body}{header}\n{message}\n").into_bytes();
    }
    git_ledger_hash_object(dir, &raw)
}

pub fn git_ledger_hash_object(dir: &Path, raw: &[u8]) -> String {
    let r = git_run(
        dir,
        &[
            "hash-object",
            "-t",
            "commit",
            "-w",
            "--stdin",
            "--literally",
        ],
        Some(raw),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout.trim().to_owned()
}

/// git-ledger's verdict on one commit as the root of the ledger: admitted, or the rule-8
/// reason.
fn ledger_verdict(s: &Signed, commit: &str) -> Result<(), String> {
    git(s.dir(), &["update-ref", &s.refname, commit]);
    let r = s.run(&["verify"]);
    if r.code == 0 {
        Ok(())
    } else {
        assert_eq!(r.code, 2, "{}", r.stderr);
        Err(r.stderr)
    }
}

fn git_and_git_ledger_agree_on_every_signature_case(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the signature agreement test") {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let ecdsa = keygen(keys.path(), "ecdsa", "ecdsa");
    let rsa = keygen(keys.path(), "rsa", "rsa");
    let expired = keygen(keys.path(), "expired", "ed25519");
    let later = keygen(keys.path(), "later", "ed25519");
    let other_ns = keygen(keys.path(), "otherns", "ed25519");
    let outsider = keygen(keys.path(), "outsider", "ed25519");
    let wild = keygen(keys.path(), "wild", "ed25519");
    let bobs = keygen(keys.path(), "bobs", "ed25519");
    let (e, r, x, l, n) = (
        ecdsa.clone(),
        rsa.clone(),
        expired.clone(),
        later.clone(),
        other_ns.clone(),
    );
    let (w, b) = (wild.public.clone(), bobs.public.clone());
    // The committer time is 2026-11-29T10:00:00Z.
    let s = Signed::pinned_under(prefix, move |alice| {
        format!(
            "# the writers\n{COMMITTER} {}\n{COMMITTER} {}\n{COMMITTER} {}\n{COMMITTER} valid-before=\"20261101Z\" {}\n{COMMITTER} valid-after=\"20270101Z\" {}\n{COMMITTER} namespaces=\"file\" {}\n*@example.com {w}\nbob@example.com {b}\n",
            alice.public, e.public, r.public, x.public, l.public, n.public
        )
    });
    s.run(&["init", "campaign.json"]).ok();
    let root = s.tip();
    let tree = git(s.dir(), &["rev-parse", &format!("{root}^{{tree}}")]);
    let alice = s.alice.clone();
    type Case<'a> = (&'a str, Option<(&'a Key, &'a str)>, bool, &'a str);
    let cases: Vec<Case> = vec![
        ("ed25519", Some((&alice, "git")), false, ""),
        ("ecdsa p256", Some((&ecdsa, "git")), false, ""),
        ("rsa sha-512", Some((&rsa, "git")), false, ""),
        ("a wildcard principal", Some((&wild, "git")), false, ""),
        ("unsigned", None, false, "it is not signed"),
        (
            "changed after signing",
            Some((&alice, "git")),
            true,
            "changed after it was signed",
        ),
        (
            "another key",
            Some((&outsider, "git")),
            false,
            "not a declared writer",
        ),
        (
            "expired",
            Some((&expired, "git")),
            false,
            "has expired at the committer time 2026-11-29T10:00:00Z",
        ),
        (
            "not yet valid",
            Some((&later, "git")),
            false,
            "is not yet valid",
        ),
        (
            "another namespace",
            Some((&alice, "file")),
            false,
            "for namespace \"file\"",
        ),
        (
            "namespace not permitted",
            Some((&other_ns, "git")),
            false,
            "not permitted to sign in namespace git",
        ),
    ];
    for (name, sign, tamper, why) in cases {
        let c = forge(s.dir(), &tree, None, sign, tamper);
        let ours = ledger_verdict(&s, &c);
        let (good, principal) = s.git_verdict(&c);
        assert_eq!(
            ours.is_ok(),
            good,
            "{name}: git says good={good}, git-ledger says {ours:?}"
        );
        match ours {
            Ok(()) => {
                // The principal Git names is the one git-ledger names.
                let v = s.run(&["log", "--json"]).ok().json();
                let mine = v[0]["signer"]["principal"].as_str().map(str::to_owned);
                assert_eq!(principal, mine, "{name}");
                assert!(principal.is_some(), "{name}");
            }
            Err(e) => assert!(
                e.contains(&format!("commit {c}: rule 8: ")) && e.contains(why),
                "{name}: {e}"
            ),
        }
        if let Some((k, _)) = sign {
            if name != "changed after signing" && name != "another namespace" && !good {
                assert!(
                    ledger_verdict(&s, &c)
                        .unwrap_err()
                        .contains(&fingerprint(k)),
                    "{name}"
                );
            }
        }
    }
    // Git does not compare the principal with the committer; git-ledger does, on top.
    let c = forge(s.dir(), &tree, None, Some((&bobs, "git")), false);
    assert_eq!(
        s.git_verdict(&c),
        (true, Some("bob@example.com".to_owned()))
    );
    let e = ledger_verdict(&s, &c).unwrap_err();
    assert!(
        e.contains("writers line 9: key ")
            && e.contains(
                "is declared for bob@example.com, not for the committer committer@example.com"
            ),
        "{e}"
    );
    // A malformed signature block.
    let good = forge(s.dir(), &tree, None, Some((&alice, "git")), false);
    let raw = git(s.dir(), &["cat-file", "commit", &good]);
    let broken = raw.replacen(
        " -----END SSH SIGNATURE-----",
        " AAAA\n -----END SSH SIGNATURE-----",
        1,
    );
    let broken = broken.replacen(
        "gpgsig -----BEGIN SSH SIGNATURE-----\n ",
        "gpgsig -----BEGIN SSH SIGNATURE-----\n x",
        1,
    );
    let c = git_ledger_hash_object(s.dir(), format!("{broken}\n").as_bytes());
    let ours = ledger_verdict(&s, &c);
    assert!(!s.git_verdict(&c).0, "git calls the malformed block good");
    assert!(ours.unwrap_err().contains("rule 8"), "malformed");
    // A PGP block is not an SSH signature.
    let pgp = raw.replacen(
        "-----BEGIN SSH SIGNATURE-----",
        "-----BEGIN PGP SIGNATURE-----",
        1,
    );
    let c = git_ledger_hash_object(s.dir(), format!("{pgp}\n").as_bytes());
    assert!(ledger_verdict(&s, &c)
        .unwrap_err()
        .contains("not an SSH signature"));
    // Blocks ssh-keygen reads (so Git calls them good): a blank line inside, text after END.
    let end = " -----END SSH SIGNATURE-----\n";
    for (name, text) in [
        (
            "text after the END line",
            raw.replacen(end, &format!("{end} trailing words\n"), 1),
        ),
        (
            "the other hash's signature header beside it",
            raw.replacen(
                "gpgsig -----BEGIN",
                "gpgsig-sha256 other\n more\ngpgsig -----BEGIN",
                1,
            ),
        ),
        (
            "a blank line inside",
            raw.replacen(
                "-----BEGIN SSH SIGNATURE-----\n",
                "-----BEGIN SSH SIGNATURE-----\n \n",
                1,
            ),
        ),
    ] {
        let c = git_ledger_hash_object(s.dir(), format!("{text}\n").as_bytes());
        assert_ne!(c, good, "{name}: the variant is another object");
        let (git_good, _) = s.git_verdict(&c);
        assert_eq!(ledger_verdict(&s, &c).is_ok(), git_good, "{name}");
        assert!(git_good, "{name}: git calls it good");
    }
    git(s.dir(), &["update-ref", rf, &root]);
}

fn a_changed_writers_file_and_an_unsigned_step_are_refused_by_verify(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the writers tests") {
        return;
    }
    let s = Signed::under(prefix);
    let root = s.tip();
    // An unsigned commit on top (plain plumbing): verify names it and rule 8.
    let tree = git(s.dir(), &["rev-parse", &format!("{root}^{{tree}}")]);
    let c = forge(s.dir(), &tree, Some(&root), None, false);
    git(s.dir(), &["update-ref", rf, &c]);
    let r = s.run(&["verify"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains(&format!("commit {c}: rule 8: it is not signed")),
        "{}",
        r.stderr
    );
    // diff's "follows" runs the same rule: the unsigned commit does not follow the root.
    let v = s.run(&["diff", &root, &c, "--json"]).ok().json();
    assert_eq!(v["follows"]["follows"], false, "{v}");
    let why = &v["follows"]["why_not"][0];
    assert_eq!(
        (&why["place"], &why["rule"]),
        (
            &serde_json::json!([format!("commit {c}")]),
            &serde_json::json!({"spec": "admission", "number": 8})
        ),
        "{why}"
    );
    assert!(
        why["sentence"]
            .as_str()
            .unwrap()
            .starts_with("it is not signed"),
        "{why}"
    );
    // A signed commit that changes the writers file: rule 2.
    let blob = git_run(
        s.dir(),
        &["hash-object", "-w", "--stdin"],
        Some(b"anyone@example.com ssh-ed25519 AAAA\n"),
    );
    let blob = blob.stdout.trim();
    let listing = git(s.dir(), &["ls-tree", &root]);
    let listing: String = listing
        .lines()
        .map(|l| {
            if l.ends_with("\twriters") {
                format!("100644 blob {blob}\twriters\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let new_tree = git_run(s.dir(), &["mktree"], Some(listing.as_bytes()))
        .stdout
        .trim()
        .to_owned();
    let c = forge(
        s.dir(),
        &new_tree,
        Some(&root),
        Some((&s.alice, "git")),
        false,
    );
    git(s.dir(), &["update-ref", rf, &c]);
    let r = s.run(&["verify"]);
    r.expect_code(2);
    assert!(r.stderr.contains("rule 2: writers changed"), "{}", r.stderr);
}

/// Run the binary in `dir` with extra environment.
fn ledger_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = std::process::Command::new(crate::common::bin());
    crate::common::pin_env(&mut cmd)
        .env("PATH", crate::common::path_with_bin())
        .current_dir(dir)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn commit_gpgsign_signs_a_ledger_without_writers_and_other_formats_are_refused(prefix: &str) {
    if !have_ssh_keygen("the signing tests") {
        return;
    }
    let f = crate::gitstore::Fixture::under(1, prefix);
    let keys = tempfile::tempdir().unwrap();
    let alice = keygen(keys.path(), "alice", "ed25519");
    let d = f.dir();
    // Signed as soon as commit.gpgSign is true, in the SSH format only.
    git(d, &["config", "commit.gpgSign", "true"]);
    let tip = f.tip();
    let r = f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED");
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("commit.gpgSign is true, but gpg.format is \"openpgp\""),
        "{}",
        r.stderr
    );
    git(d, &["config", "gpg.format", "x509"]);
    let r = f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED");
    r.expect_code(2);
    assert!(r.stderr.contains("gpg.format is \"x509\""), "{}", r.stderr);
    git(d, &["config", "gpg.format", "ssh"]);
    git(d, &["config", "user.signingKey", "/nonexistent/key"]);
    let r = f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED");
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("the signing key /nonexistent/key (user.signingKey) does not exist"),
        "{}",
        r.stderr
    );
    assert_eq!(f.tip(), tip, "nothing moved");
    // gpg.ssh.program runs as Git runs it: -Y sign -n git -f <key> <file>.
    let wrapper = keys.path().join("sign-wrapper");
    let log = keys.path().join("args.log");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> {}\nexec ssh-keygen \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", wrapper.to_str().unwrap()])
        .status()
        .unwrap();
    git(d, &["config", "gpg.ssh.program", wrapper.to_str().unwrap()]);
    git(
        d,
        &["config", "user.signingKey", alice.path.to_str().unwrap()],
    );
    f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
        .ok();
    let args = std::fs::read_to_string(&log).unwrap();
    let want = format!("-Y sign -n git -f {} ", alice.path.display());
    assert!(
        args.starts_with(&want) && args.lines().count() == 1,
        "{args}"
    );
    // Git verifies it; log shows the key (no writers: no principal).
    let allowed = keys.path().join("allowed");
    std::fs::write(&allowed, format!("{COMMITTER} {}\n", alice.public)).unwrap();
    let r = git_run(
        d,
        &[
            "-c",
            &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
            "verify-commit",
            &f.refname,
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = f.run(&["log"]);
    assert!(
        r.stdout
            .lines()
            .next()
            .unwrap()
            .ends_with(&format!("signed by key {}", fingerprint(&alice))),
        "{}",
        r.stdout
    );
}

/// ssh-agent on a socket of the test's own, killed (by its id) on drop.
struct Agent {
    child: std::process::Child,
    sock: PathBuf,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn a_key_literal_signs_through_ssh_agent(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the signing tests") {
        return;
    }
    if which("ssh-agent").is_none() || which("ssh-add").is_none() {
        require_tool(
            "ssh-agent and ssh-add (openssh-client)",
            "the ssh-agent signing test",
        );
        return;
    }
    let s = Signed::pinned_under(prefix, |k| format!("{COMMITTER} {}\n", k.public));
    let sock = s.keys.path().join("agent.sock");
    let child = std::process::Command::new("ssh-agent")
        .args(["-D", "-a"])
        .arg(&sock)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let agent = Agent { child, sock };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !agent.sock.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "ssh-agent did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sock = agent.sock.to_str().unwrap();
    let added = std::process::Command::new("ssh-add")
        .arg(&s.alice.path)
        .env("SSH_AUTH_SOCK", sock)
        .output()
        .unwrap();
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    // The private key file is gone: only the agent holds it.
    std::fs::remove_file(&s.alice.path).unwrap();
    git(
        s.dir(),
        &[
            "config",
            "user.signingKey",
            &format!("key::{}", s.alice.public),
        ],
    );
    ledger_env(
        s.dir(),
        &["init", "campaign.json"],
        &[("SSH_AUTH_SOCK", sock)],
    )
    .ok();
    assert_eq!(s.git_verdict(rf), (true, Some(COMMITTER.to_owned())));
    // Without user.signingKey, the key gpg.ssh.defaultKeyCommand prints (as Git takes it).
    git(s.dir(), &["update-ref", "-d", rf]);
    git(s.dir(), &["config", "--unset", "user.signingKey"]);
    let command = format!("echo 'key::{}'", s.alice.public);
    git(s.dir(), &["config", "gpg.ssh.defaultKeyCommand", &command]);
    ledger_env(
        s.dir(),
        &["init", "campaign.json"],
        &[("SSH_AUTH_SOCK", sock)],
    )
    .ok();
    assert_eq!(s.git_verdict(rf), (true, Some(COMMITTER.to_owned())));
    git(s.dir(), &["config", "gpg.ssh.defaultKeyCommand", "true"]);
    git(s.dir(), &["update-ref", "-d", rf]);
    let r = ledger_env(
        s.dir(),
        &["init", "campaign.json"],
        &[("SSH_AUTH_SOCK", sock)],
    );
    r.expect_code(2);
    assert!(r.stderr.contains("printed no key"), "{}", r.stderr);
    git(s.dir(), &["config", "--unset", "gpg.ssh.defaultKeyCommand"]);
    let literal = format!("key::{}", s.alice.public);
    git(s.dir(), &["config", "user.signingKey", &literal]);
    ledger_env(
        s.dir(),
        &["init", "campaign.json"],
        &[("SSH_AUTH_SOCK", sock)],
    )
    .ok();
    // Without the agent the literal cannot sign: refused, nothing moved.
    let tip = s.tip();
    let r = ledger_env(s.dir(), &["verify"], &[]);
    r.ok();
    let row = hand_row_value(
        &s.run(&["show", "--row", "scenario/s-b/01"]).ok().stdout,
        "ERROR",
    );
    let path = s.keys.path().join("row.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&row).unwrap()).unwrap();
    let r = ledger_env(
        s.dir(),
        &["put", "scenario/s-b/01", path.to_str().unwrap()],
        &[("SSH_AUTH_SOCK", "/nonexistent/agent.sock")],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("-Y sign failed"), "{}", r.stderr);
    assert_eq!(s.tip(), tip);
}

fn sync_re_signs_the_commits_it_replays_with_the_local_writers_key(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the signing tests") {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let bob = keygen(keys.path(), "bob", "ed25519");
    let bob_public = bob.public.clone();
    let a = Signed::pinned_under(prefix, move |alice| {
        format!(
            "{COMMITTER} {}\nbob@example.com {bob_public}\n",
            alice.public
        )
    });
    a.run(&["init", "campaign.json"]).ok();
    let servers = tempfile::tempdir().unwrap();
    let server = crate::common::hooked_server(servers.path(), "server.git");
    crate::common::use_prefix(&server, prefix);
    git(
        a.dir(),
        &["remote", "add", "origin", server.to_str().unwrap()],
    );
    crate::common::ledger_hooked(a.dir(), &["sync"]).ok();
    // Bob's machine: a clone that signs with his key, as bob@example.com.
    let b = tempfile::tempdir().unwrap();
    git(b.path(), &["init", "-q"]);
    crate::common::use_prefix(b.path(), prefix);
    git(
        b.path(),
        &["remote", "add", "origin", server.to_str().unwrap()],
    );
    git(b.path(), &["config", "gpg.format", "ssh"]);
    git(
        b.path(),
        &["config", "user.signingKey", bob.path.to_str().unwrap()],
    );
    let as_bob = [("GIT_COMMITTER_EMAIL", "bob@example.com")];
    ledger_env(b.path(), &["sync"], &as_bob).ok();
    let row = hand_row_value(
        &ledger_env(b.path(), &["show", "--row", "scenario/s-b/02"], &[])
            .ok()
            .stdout,
        "ERROR",
    );
    let path = keys.path().join("row-b.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&row).unwrap()).unwrap();
    ledger_env(
        b.path(),
        &["put", "scenario/s-b/02", path.to_str().unwrap()],
        &as_bob,
    )
    .ok();
    let bobs = git(b.path(), &["rev-parse", rf]);
    // Alice moves the server first; Bob's sync replays his commit on top, signed again.
    a.put("scenario/s-b/01", "ERROR").ok();
    crate::common::ledger_hooked(a.dir(), &["sync"]).ok();
    let r = ledger_env(b.path(), &["sync"], &as_bob);
    r.ok();
    let tip = git(&server, &["rev-parse", rf]);
    assert_ne!(tip, bobs, "the commit was replayed, not pushed as it was");
    let allowed = a.allowed_file();
    for c in git(&server, &["rev-list", rf]).lines() {
        let r = git_run(
            &server,
            &[
                "-c",
                &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
                "verify-commit",
                "--raw",
                c,
            ],
            None,
        );
        assert_eq!(r.code, 0, "{c}: {}", r.stderr);
        let who = if c == tip {
            "bob@example.com"
        } else {
            COMMITTER
        };
        assert!(
            r.stderr
                .contains(&format!("Good \"git\" signature for {who}")),
            "{c}: {}",
            r.stderr
        );
    }
    ledger_env(&server, &["verify"], &[]).ok();
}

fn the_local_reference_transaction_hook_refuses_an_unsigned_commit_on_a_ledger_with_writers(
    prefix: &str,
) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the writers tests") {
        return;
    }
    let s = Signed::under(prefix);
    let root = s.tip();
    s.put("scenario/s-b/01", "ERROR").ok();
    let signed = s.tip();
    git(s.dir(), &["update-ref", rf, &root]);
    s.run(&["hooks", "install"]).ok();
    let tree = git(s.dir(), &["rev-parse", &format!("{signed}^{{tree}}")]);
    let message = git(s.dir(), &["log", "-1", "--format=%B", &signed]);
    let c = forge_with(s.dir(), &tree, Some(&root), &message, None, false);
    let r = crate::common::git_hooked(s.dir(), &["update-ref", rf, &c], None);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains(&format!("commit {c}: rule 8: it is not signed")),
        "{}",
        r.stderr
    );
    assert_eq!(s.tip(), root);
    // The same change, signed by the writer, passes the hook.
    let r = crate::common::git_hooked(s.dir(), &["update-ref", rf, &signed], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(s.tip(), signed);
}

fn the_tool_signs_with_ecdsa_and_rsa_keys_too_and_git_verifies_them(prefix: &str) {
    if !have_ssh_keygen("the signing tests") {
        return;
    }
    for kind in ["ecdsa", "rsa"] {
        let keys = tempfile::tempdir().unwrap();
        let key = keygen(keys.path(), kind, kind);
        let public = key.public.clone();
        let s = Signed::pinned_under(prefix, move |_| format!("{COMMITTER} {public}\n"));
        s.sign_with(&key);
        s.run(&["init", "campaign.json"]).ok();
        s.put("scenario/s-b/01", "ERROR").ok();
        s.run(&["verify"]).ok();
        for c in chain(s.dir()) {
            assert_eq!(
                s.git_verdict(&c),
                (true, Some(COMMITTER.to_owned())),
                "{kind}: {c}"
            );
        }
        let v = s.run(&["log", "--json"]).ok().json();
        assert_eq!(v[0]["signer"]["fingerprint"], fingerprint(&key).as_str());
    }
}

fn init_reads_the_writers_from_the_source_revision_and_checks_their_hash(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the writers tests") {
        return;
    }
    let s = Signed::pinned_under(prefix, |k| format!("{COMMITTER} {}\n", k.public));
    // Bytes that are not the pinned ones: refused, no ref.
    let text = std::fs::read_to_string(s.dir().join("campaign.json")).unwrap();
    let sha = git_ledger::sha256_hex(s.writers.as_bytes());
    write(s.dir(), "other.json", text.replace(&sha, &"1".repeat(64)));
    let r = s.run(&["init", "other.json"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("writers (h/allowed_signers) at ")
            && r.stderr.contains(&format!("the file hashes to {sha}")),
        "{}",
        r.stderr
    );
    assert!(git_run(s.dir(), &["rev-parse", "--verify", "-q", rf], None).code != 0);
    // A repository without the source revision cannot copy them: it says how to fetch it.
    let elsewhere = crate::common::new_repo();
    crate::common::use_prefix(elsewhere.path(), prefix);
    git(elsewhere.path(), &["config", "gpg.format", "ssh"]);
    let key = s.alice.path.to_str().unwrap().to_owned();
    git(elsewhere.path(), &["config", "user.signingKey", &key]);
    let decl = s.dir().join("campaign.json");
    let r = ledger(elsewhere.path(), &["init", decl.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("fetch"), "{}", r.stderr);
    assert!(git_run(elsewhere.path(), &["rev-parse", "--verify", "-q", rf], None).code != 0);
}

fn sync_refuses_to_follow_a_remote_ledger_with_an_unsigned_commit(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    if !have_ssh_keygen("the signing tests") {
        return;
    }
    let s = Signed::under(prefix);
    // A server without the hook, where plain Git put an unsigned commit on the ledger.
    let servers = tempfile::tempdir().unwrap();
    git(servers.path(), &["init", "-q", "--bare", "plain.git"]);
    let server = servers.path().join("plain.git");
    let root = s.tip();
    git(
        s.dir(),
        &["remote", "add", "origin", server.to_str().unwrap()],
    );
    crate::common::ledger_hooked(s.dir(), &["sync"]).ok();
    let tree = git(s.dir(), &["rev-parse", &format!("{root}^{{tree}}")]);
    let c = forge(s.dir(), &tree, Some(&root), None, false);
    git(
        s.dir(),
        &["push", "-q", server.to_str().unwrap(), &format!("{c}:{rf}")],
    );
    // A clone that follows the remote refuses the commit and keeps its ledger where it was.
    let other = crate::common::new_repo();
    crate::common::use_prefix(other.path(), prefix);
    git(
        other.path(),
        &["remote", "add", "origin", server.to_str().unwrap()],
    );
    git(
        other.path(),
        &["fetch", "-q", "origin", &format!("{root}:{rf}")],
    );
    let r = crate::common::ledger_hooked(other.path(), &["sync"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains(&format!("commit {c}: rule 8: it is not signed")),
        "{}",
        r.stderr
    );
    assert_eq!(git(other.path(), &["rev-parse", rf]), root);
}

crate::common::under_both_prefixes!(
    pin_fills_the_writers_hash_check_recomputes_it_and_init_copies_the_bytes,
    the_tools_commits_are_signed_and_git_verifies_them,
    a_ledger_with_writers_refuses_to_write_unsigned_or_with_another_key,
    git_and_git_ledger_agree_on_every_signature_case,
    a_changed_writers_file_and_an_unsigned_step_are_refused_by_verify,
    commit_gpgsign_signs_a_ledger_without_writers_and_other_formats_are_refused,
    a_key_literal_signs_through_ssh_agent,
    sync_re_signs_the_commits_it_replays_with_the_local_writers_key,
    the_local_reference_transaction_hook_refuses_an_unsigned_commit_on_a_ledger_with_writers,
    the_tool_signs_with_ecdsa_and_rsa_keys_too_and_git_verifies_them,
    init_reads_the_writers_from_the_source_revision_and_checks_their_hash,
    sync_refuses_to_follow_a_remote_ledger_with_an_unsigned_commit,
);
