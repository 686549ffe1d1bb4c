//! `audit` (docs/reference/witness.md) as a reviewer runs it against a remote served by `git
//! daemon`: the honest repository passes, and the audit leaves the server's refs, objects and
//! reflogs and every local ledger ref as they were (the local hooks installed, never judging the
//! audit's refs); the tips seen are remembered, so a later audit says what the tip extends. Then
//! the reviewer's trial (issue 26 item 6): a ledger rewritten from a reproduced root with a
//! doctored row (re-signed, force-pushed, garbage-collected), a plain-Git edit, replace refs and
//! notes, a deleted ledger, a backdated commit, each caught with its reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{git, git_hooked, git_run, ledger, ledger_hooked, new_repo, Daemon, Run};
use crate::signing::Signed;

pub(crate) const ROW_A: &str = "scenario/s-b/01";
pub(crate) const ROW_B: &str = "arena/case-a/01";

/// Every file under `dir` with its bytes' SHA-256: what a read-only client must not change
/// (refs, packed-refs, objects, reflogs, config).
pub(crate) fn tree_state(dir: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().display().to_string();
                out.insert(rel, git_ledger::sha256_hex(&std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A hand row for `sid` written to `path`: `outcome`, with a status that admits it (a hand PASS
/// must say its run completed).
pub(crate) fn hand_row(s: &Signed, sid: &str, outcome: &str, path: &Path) {
    let mut row =
        crate::gitstore::hand_row_value(&s.run(&["show", "--row", sid]).ok().stdout, outcome);
    if outcome == "PASS" {
        // Each harness has its own completion status.
        let done = if sid == ROW_B {
            "COMPLETED"
        } else {
            "COMPLETE"
        };
        row["native_status"] = serde_json::json!(done);
    }
    std::fs::write(path, serde_json::to_vec_pretty(&row).unwrap()).unwrap();
}

/// Put a hand row on the authors' ledger.
pub(crate) fn put(s: &Signed, sid: &str, outcome: &str) {
    let p = s.keys.path().join("row.json");
    hand_row(s, sid, outcome, &p);
    s.run(&["put", sid, p.to_str().unwrap()]).ok();
}

/// The authors' repository (a signed ledger), their bare server behind `git daemon`.
pub(crate) struct Trial {
    pub(crate) s: Signed,
    _base: tempfile::TempDir,
    pub(crate) server: PathBuf,
    daemon: Daemon,
}

impl Trial {
    /// The authors' ledgers under the default prefix.
    #[allow(dead_code)] // the ref-mode tests take a prefix; kept for tests to come
    pub(crate) fn new() -> Trial {
        Self::under(crate::common::PREFIXES[0])
    }
    /// The authors' ledgers under `prefix`.
    pub(crate) fn under(prefix: &str) -> Trial {
        let s = Signed::under(prefix);
        put(&s, ROW_A, "ERROR");
        let base = tempfile::tempdir().unwrap();
        git(
            base.path(),
            &["init", "-q", "--bare", "-b", "main", "server.git"],
        );
        let server = base.path().join("server.git");
        // Reflogs on the server too: the audit must not add to them.
        git(&server, &["config", "core.logAllRefUpdates", "always"]);
        let daemon = Daemon::start(base.path());
        let t = Trial {
            s,
            _base: base,
            server,
            daemon,
        };
        t.publish();
        t
    }
    pub(crate) fn url(&self) -> String {
        self.daemon.url("server.git")
    }
    /// The authors push their branch and ledger (forced: they control the server).
    pub(crate) fn publish(&self) {
        let server = self.server.to_str().unwrap();
        git(
            self.s.dir(),
            &[
                "push",
                "-q",
                "-f",
                server,
                "HEAD:refs/heads/main",
                &format!("+{0}:{0}", self.s.refname),
            ],
        );
    }
    pub(crate) fn tip(&self) -> String {
        git(&self.server, &["rev-parse", &self.s.refname])
    }
}

/// A reviewer: an empty repository with the git-ledger hooks installed.
#[allow(dead_code)] // the ref-mode tests take a prefix; kept for tests to come
pub(crate) fn reviewer() -> tempfile::TempDir {
    reviewer_under(crate::common::PREFIXES[0])
}

/// A reviewer: an empty repository with the git-ledger hooks installed, reading ledgers under
/// `prefix` (as the authors keep them).
pub(crate) fn reviewer_under(prefix: &str) -> tempfile::TempDir {
    let dir = new_repo();
    crate::common::use_prefix(dir.path(), prefix);
    ledger(dir.path(), &["hooks", "install"]).ok();
    dir
}

pub(crate) fn audit(dir: &Path, args: &[&str]) -> Run {
    let mut all = vec!["audit"];
    all.extend_from_slice(args);
    ledger_hooked(dir, &all)
}

/// The declaration's hash and pinned commit, as the audit line names them.
fn declaration(t: &Trial) -> (String, String) {
    let d: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.s.dir().join("campaign.json")).unwrap()).unwrap();
    let bytes = std::fs::read(t.s.dir().join("campaign.json")).unwrap();
    (
        git_ledger::sha256_hex(&bytes)[..12].to_owned(),
        d["source_revision"].as_str().unwrap().to_owned(),
    )
}

fn the_honest_repository_passes_and_the_audit_writes_nothing_but_its_own_refs(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    let t = Trial::under(prefix);
    let r = reviewer_under(prefix);
    let url = t.url();
    let tip1 = t.tip();
    // The reviewer holds the ledger locally already (a plain fetch), at the first tip.
    let f = git_hooked(
        r.path(),
        &["fetch", "-q", &url, &format!("{rf}:{rf}")],
        None,
    );
    assert_eq!(f.code, 0, "{}", f.stderr);
    let local = || git(r.path(), &["for-each-ref", prefix, "refs/remotes/"]);
    let local_before = local();
    let served = tree_state(&t.server);
    let first = audit(r.path(), &[&url]);
    first.ok();
    let (hash, rev) = declaration(&t);
    assert_eq!(
        first.stdout,
        format!(
            "small@{tip1}: 2 commits admitted; signed by declared writers committer@example.com; declaration {hash} matches commit {rev}; new (first seen from this URL)\n"
        )
    );
    assert_eq!(
        tree_state(&t.server),
        served,
        "the audit changed the server"
    );
    assert_eq!(local(), local_before, "the audit moved a local ledger ref");
    let audit_refs = git(
        r.path(),
        &["for-each-ref", "--format=%(refname)", "refs/ledger-audit/"],
    );
    let key = &git_ledger::sha256_hex(url.as_bytes())[..16];
    assert!(
        audit_refs.contains(&format!("refs/ledger-audit/{key}/ledgers/small")),
        "{audit_refs}"
    );
    assert!(audit_refs.contains(&format!("refs/ledger-audit/{key}/pinned/{rev}")));
    // The memory is per URL.
    let seen = r
        .path()
        .join(".git/git-ledger/audit")
        .join(format!("{}.json", git_ledger::sha256_hex(url.as_bytes())));
    assert!(std::fs::read_to_string(&seen).unwrap().contains(&tip1));

    // The authors add an attempt; the next audit says what the new tip extends.
    put(&t.s, ROW_B, "PASS");
    t.publish();
    let tip2 = t.tip();
    let served = tree_state(&t.server);
    let again = audit(r.path(), &[&url, "--expect-tip", &format!("small@{tip1}")]);
    again.ok();
    assert_eq!(
        again.stdout,
        format!(
            "small@{tip2}: 3 commits admitted; signed by declared writers committer@example.com; declaration {hash} matches commit {rev}; extends {tip1} by 1 commit\n"
        )
    );
    let j = audit(r.path(), &[&url, "--json"]);
    j.ok();
    let v = j.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["ledgers"][0]["citation"], format!("small@{tip2}"));
    assert_eq!(v["ledgers"][0]["history"], "extends");
    assert_eq!(v["ledgers"][0]["declaration"]["status"], "matches");
    assert_eq!(
        tree_state(&t.server),
        served,
        "the audit changed the server"
    );
    assert_eq!(local(), local_before, "the audit moved a local ledger ref");
    // A path works as well as a URL, and is remembered separately (a first use).
    let by_path = audit(r.path(), &[t.server.to_str().unwrap()]);
    by_path.ok();
    assert!(
        by_path.stdout.ends_with("new (first seen from this URL)\n"),
        "{}",
        by_path.stdout
    );
}

/// Rewrite the ledger from a reproduced root: delete it, `init` again with the original dates
/// (the same signed root), fill the row with another outcome, force-push, gc the server.
pub(crate) fn rewrite_from_the_root(t: &Trial, outcome: &str) -> String {
    let rf = t.s.refname.as_str();
    let root = git(t.s.dir(), &["rev-list", "--max-parents=0", rf]);
    git(t.s.dir(), &["update-ref", "-d", rf]);
    t.s.run(&["init", "campaign.json"]).ok();
    assert_eq!(
        git(t.s.dir(), &["rev-parse", rf]),
        root,
        "init reproduces the root"
    );
    put(&t.s, ROW_A, outcome);
    t.publish();
    git(&t.server, &["reflog", "expire", "--expire=now", "--all"]);
    git(&t.server, &["gc", "-q", "--prune=now"]);
    t.tip()
}

fn a_rewrite_from_a_reproduced_root_is_caught_by_audit_and_by_verify_expect_tip(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    let t = Trial::under(prefix);
    let url = t.url();
    let honest = t.tip();
    let r = reviewer_under(prefix);
    audit(r.path(), &[&url]).ok();
    let doctored = rewrite_from_the_root(&t, "PASS");
    assert_ne!(doctored, honest);
    // The reviewer who audited before: the tip seen is gone.
    let a = audit(r.path(), &[&url]);
    a.expect_code(2);
    assert!(
        a.stdout
            .contains(&format!("small@{doctored}: 2 commits admitted")),
        "{}",
        a.stdout
    );
    assert!(
        a.stdout.contains(&format!("REWRITTEN since {honest}")),
        "{}",
        a.stdout
    );
    assert!(
        a.stderr.contains(&format!(
            "{rf} on {url}: rewritten since {honest}: commit {honest} is not on the ledger's first-parent chain"
        )) || a.stderr.contains(&format!(
            "{rf} on {url}: rewritten since {honest}: commit {honest} is not in the served history: the ledger may have been rewritten"
        )),
        "{}",
        a.stderr
    );
    assert!(a.stderr.contains("an earlier audit of"), "{}", a.stderr);
    // Once rewritten, always reported.
    audit(r.path(), &[&url]).expect_code(2);
    // A fresh reviewer holding the paper's citation.
    let fresh = reviewer_under(prefix);
    audit(fresh.path(), &[&url]).ok();
    let cited = audit(
        fresh.path(),
        &[&url, "--expect-tip", &format!("small@{honest}")],
    );
    cited.expect_code(2);
    assert!(
        cited.stderr.contains(&format!(
            "rewritten since {honest}: commit {honest} is not in the served history: the ledger may have been rewritten"
        )),
        "{}",
        cited.stderr
    );
    // verify --expect-tip in a plain clone says the same.
    let clone = new_repo();
    crate::common::use_prefix(clone.path(), prefix);
    git(clone.path(), &["fetch", "-q", &url, &format!("{rf}:{rf}")]);
    let v = ledger(
        clone.path(),
        &["verify", "--expect-tip", &format!("small@{honest}")],
    );
    v.expect_code(2);
    assert!(
        v.stderr.contains(&format!("rewritten since {honest}")),
        "{}",
        v.stderr
    );
}

/// A plain-Git commit on the server's ledger: one row's outcome edited.
fn plain_edit(t: &Trial) -> String {
    let rf = t.s.refname.as_str();
    let d = t.s.dir();
    let tip = git(d, &["rev-parse", rf]);
    let path = git(d, &["ls-tree", "-r", "--name-only", rf])
        .lines()
        .find(|p| p.contains("s-b/01"))
        .unwrap()
        .to_owned();
    let row = git(d, &["show", &format!("{rf}:{path}")]).replace("\"ERROR\"", "\"PASS\"");
    let blob = git_run(
        d,
        &["hash-object", "-w", "--stdin"],
        Some(format!("{row}\n").as_bytes()),
    );
    let blob = blob.stdout.trim().to_owned();
    let index = d.join(".git/plain-index");
    let env_git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(d)
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    env_git(&["read-tree", rf]);
    env_git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{blob},{path}"),
    ]);
    let tree = env_git(&["write-tree"]);
    let commit = git(d, &["commit-tree", &tree, "-p", &tip, "-m", "Fix a typo"]);
    git(
        d,
        &[
            "push",
            "-q",
            "-f",
            t.server.to_str().unwrap(),
            &format!("+{commit}:{rf}"),
        ],
    );
    commit
}

fn a_plain_edit_replace_refs_notes_and_a_deletion_are_each_caught_with_their_reason(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    let t = Trial::under(prefix);
    let url = t.url();
    let honest = t.tip();
    let r = reviewer_under(prefix);
    audit(r.path(), &[&url]).ok();

    // Replace refs and notes on the server: `git log` of a mirror clone would show them.
    let other = git(
        t.s.dir(),
        &[
            "commit-tree",
            "-m",
            "other",
            &git(t.s.dir(), &["rev-parse", &format!("{honest}^{{tree}}")]),
        ],
    );
    git(
        t.s.dir(),
        &[
            "push",
            "-q",
            t.server.to_str().unwrap(),
            &format!("{other}:refs/heads/other"),
        ],
    );
    git(&t.server, &["replace", &honest, &other]);
    git(
        &t.server,
        &[
            "notes",
            "add",
            "-m",
            "Independently re-run and audited by the maintainers",
            &honest,
        ],
    );
    let a = audit(r.path(), &[&url]);
    a.expect_code(2);
    assert!(
        a.stderr.contains(&format!(
            "refs/replace/{honest} on {url}: it replaces commit {honest} of {rf}"
        )),
        "{}",
        a.stderr
    );
    assert!(
        a.stderr.contains(&format!(
            "refs/notes/commits on {url}: it holds a note on commit {honest} of {rf}"
        )),
        "{}",
        a.stderr
    );
    let j = audit(r.path(), &[&url, "--json"]);
    j.expect_code(2);
    assert_eq!(j.json()["ok"], false);
    assert_eq!(j.json()["shown_otherwise"].as_array().unwrap().len(), 2);
    git(&t.server, &["replace", "-d", &honest]);
    git(&t.server, &["update-ref", "-d", "refs/notes/commits"]);
    audit(r.path(), &[&url]).ok();

    // A plain edit (FAIL -> PASS by hand), which a mirror clone would show as the ledger.
    let edited = plain_edit(&t);
    let a = audit(r.path(), &[&url]);
    a.expect_code(2);
    assert!(
        a.stdout
            .starts_with(&format!("small@{edited}: NOT ADMITTED;")),
        "{}",
        a.stdout
    );
    assert!(
        a.stderr
            .contains(&format!("{rf} on {url}: commit {edited}: rule")),
        "{}",
        a.stderr
    );
    // The tip seen before is still on the chain: not a rewrite, only not admitted.
    assert!(
        a.stdout.contains(&format!("extends {honest} by 1 commit")),
        "{}",
        a.stdout
    );

    // A deleted ledger.
    git(&t.server, &["update-ref", "-d", rf]);
    let a = audit(r.path(), &[&url]);
    a.expect_code(2);
    assert!(
        a.stdout
            .contains(&format!("small: DELETED (last seen at {edited})")),
        "{}",
        a.stdout
    );
    assert!(
        a.stderr.contains(&format!(
            "{rf} on {url}: deleted: {url} no longer serves {rf}"
        )),
        "{}",
        a.stderr
    );
    // The audit's copy is pruned with it; no local ledger ref was ever created.
    assert!(git(r.path(), &["for-each-ref", prefix]).is_empty());
}

fn a_backdated_commit_is_flagged_and_an_unserved_pinned_commit_is_said(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    let t = Trial::under(prefix);
    // The next commit dated a month before its parent.
    let p = t.s.keys.path().join("row.json");
    hand_row(&t.s, ROW_B, "PASS", &p);
    let mut cmd = std::process::Command::new(crate::common::bin());
    crate::common::pin_env(&mut cmd)
        .current_dir(t.s.dir())
        .env("GIT_AUTHOR_DATE", "2026-10-29T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-10-29T10:00:00Z")
        .args(["put", ROW_B, p.to_str().unwrap()]);
    assert!(cmd.status().unwrap().success());
    // Published without the branch that holds the pinned commit.
    let server = t.server.to_str().unwrap();
    git(
        t.s.dir(),
        &["push", "-q", "-f", server, &format!("+{rf}:{rf}")],
    );
    git(&t.server, &["update-ref", "-d", "refs/heads/main"]);
    git(&t.server, &["reflog", "expire", "--expire=now", "--all"]);
    git(&t.server, &["gc", "-q", "--prune=now"]);
    let tip = t.tip();
    let r = reviewer_under(prefix);
    let a = audit(r.path(), &[&t.url()]);
    a.expect_code(2);
    let (_, rev) = declaration(&t);
    assert!(
        a.stdout.contains(&format!(
            "declaration not checked: commit {rev} is not served; new (first seen from this URL); 1 commit dated before its parent ({})",
            &tip[..12]
        )),
        "{}",
        a.stdout
    );
    assert!(
        a.stderr
            .contains(&format!("its pinned commit {rev} is not served by")),
        "{}",
        a.stderr
    );
    let v = audit(r.path(), &[&t.url(), "--json"]).json();
    assert_eq!(v["ledgers"][0]["dated_before_parent"][0], tip.as_str());
    assert_eq!(v["ledgers"][0]["declaration"]["status"], "not served");
}

fn audit_bad_arguments_are_usage_errors_and_an_unreachable_remote_fails(prefix: &str) {
    let r = reviewer_under(prefix);
    let a = audit(r.path(), &["/nonexistent/server.git"]);
    a.expect_code(1);
    assert!(
        a.stderr.contains("git fetch /nonexistent/server.git"),
        "{}",
        a.stderr
    );
    let a = audit(r.path(), &["origin", "--expect-tip", "small@abc"]);
    a.expect_code(64);
    assert!(a.stderr.contains("give the full commit id"), "{}", a.stderr);
}

/// A message that claims more than the change did ("Independently re-run and audited…"),
/// signed with the writer's own key and force-pushed by the authors, who control the server:
/// rule 7 (the body is exactly the tool's) makes the audit refuse it, and the honest tip before
/// it still passes.
fn a_body_claim_signed_by_the_writer_is_caught_by_audit(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    use crate::signing::{forge_as, COMMITTER};
    let t = Trial::under(prefix);
    let r = reviewer_under(prefix);
    audit(r.path(), &[&t.url()]).ok();
    let d = t.s.dir();
    let tip = git(d, &["rev-parse", rf]);
    let parent = git(d, &["rev-parse", &format!("{tip}~1")]);
    let tree = git(d, &["rev-parse", &format!("{tip}^{{tree}}")]);
    let message = git(d, &["log", "-1", "--format=%B", &tip]);
    let (subject, rest) = message.trim_end().split_once("\n\n").unwrap();
    let claim = format!(
        "{subject}\n\nIndependently re-run and audited by the benchmark maintainers.\n\n{rest}"
    );
    let forged = forge_as(
        d,
        &tree,
        Some(&parent),
        &claim,
        Some((&t.s.alice, "git")),
        false,
        &format!("Test Committer <{COMMITTER}>"),
    );
    git(
        d,
        &[
            "push",
            "-q",
            "-f",
            t.server.to_str().unwrap(),
            &format!("+{forged}:{rf}"),
        ],
    );
    let a = audit(r.path(), &[&t.url()]);
    a.expect_code(2);
    assert!(a.stderr.contains("rule 7"), "{}", a.stderr);
    assert!(
        !a.stderr.contains("rule 8"),
        "the signature holds: {}",
        a.stderr
    );
    assert!(a.stderr.contains(&forged), "{}", a.stderr);
}

crate::common::under_both_prefixes!(
    the_honest_repository_passes_and_the_audit_writes_nothing_but_its_own_refs,
    a_rewrite_from_a_reproduced_root_is_caught_by_audit_and_by_verify_expect_tip,
    a_plain_edit_replace_refs_notes_and_a_deletion_are_each_caught_with_their_reason,
    a_backdated_commit_is_flagged_and_an_unserved_pinned_commit_is_said,
    audit_bad_arguments_are_usage_errors_and_an_unreachable_remote_fails,
    a_body_claim_signed_by_the_writer_is_caught_by_audit,
);
