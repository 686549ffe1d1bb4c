//! The hooks with real Git: hostile pushes refused by pre-receive (reasons as `remote:` lines),
//! admissible pushes passing; reference-transaction refusing `git update-ref` and `git fetch`
//! into a ledger ref; pre-commit on a ledger file kept on a branch; hooks install.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{git, git_hooked, hooked_server, ledger, Daemon, Run};
use crate::gitstore::{
    canonical_row, read_files, regular, state_commit, Entry, Files, Fixture, ID,
};

/// A clone-like repository with a ledger (init + one put) and a hooked bare server.
struct Push {
    f: Fixture,
    root: String,
    tip: String,
    files: Files,
    servers: tempfile::TempDir,
    server: std::path::PathBuf,
}

impl Push {
    /// With the ledgers under `prefix`, in the clone and on the server.
    fn under(prefix: &str) -> Self {
        let f = Fixture::under(2, prefix);
        let root = f.tip();
        f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
            .ok();
        let tip = f.tip();
        let files = read_files(f.dir(), &tip);
        let servers = tempfile::tempdir().unwrap();
        let server = hooked_server(servers.path(), "server.git");
        crate::common::use_prefix(&server, prefix);
        Push {
            f,
            root,
            tip,
            files,
            servers,
            server,
        }
    }

    fn push(&self, url: &str, spec: &str, extra: &[&str]) -> Run {
        let mut args = vec!["push", "--porcelain"];
        args.extend_from_slice(extra);
        args.push(url);
        args.push(spec);
        git_hooked(self.f.dir(), &args, None)
    }

    fn server_tip(&self) -> String {
        git(&self.server, &["rev-parse", &self.f.refname])
    }

    /// Push `commit` to the ledger ref and expect the hook to refuse it with every needle on a
    /// `remote:` line; the server's ref does not move.
    fn refused(&self, what: &str, commit: &str, needles: &[&str]) {
        let before = self.server_tip();
        let url = self.server.to_str().unwrap();
        let r = self.push(url, &format!("{commit}:{}", self.f.refname), &[]);
        assert_ne!(r.code, 0, "{what}: push must fail\n{}", r.stderr);
        assert!(
            r.stdout.contains("pre-receive hook declined"),
            "{what}: {}",
            r.stdout
        );
        let remote: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("remote:"))
            .collect();
        let remote = remote.join("\n");
        for n in needles {
            assert!(
                remote.contains(n),
                "{what}: no {n:?} in remote lines:\n{}",
                r.stderr
            );
        }
        assert_eq!(self.server_tip(), before, "{what}: the server ref moved");
        if std::env::var_os("SHOW_REFUSALS").is_some() {
            eprintln!("== {what}\n{remote}");
        }
    }

    fn with(&self, path: &str, bytes: Vec<u8>) -> Files {
        let mut files = self.files.clone();
        files.insert(path.to_owned(), regular(bytes));
        files
    }

    fn row(&self, sid: &str) -> Value {
        serde_json::from_slice(&self.files[&format!("rows/{sid}.json")].bytes).unwrap()
    }

    fn commit(&self, files: &Files, parents: &[&str], msg: &str) -> String {
        state_commit(self.f.dir(), files, parents, msg)
    }
}

fn row_path(sid: &str) -> String {
    format!("rows/{sid}.json")
}

fn record_path(key: &str) -> String {
    let hex = git_ledger::sha256_hex(key.as_bytes());
    format!("records/{}/{}.json", &hex[..2], &hex[2..])
}

const FILLED: &str = "scenario/bugfix-iso-weeks/01";
const DEFERRED: &str = "scenario/bugfix-iso-weeks/02";

fn pre_receive_refuses_hostile_pushes_with_reasons_and_admits_good_ones(prefix: &str) {
    let p = Push::under(prefix);
    let reference = p.f.refname.clone();
    let rf = reference.as_str();
    let url = p.server.to_str().unwrap().to_owned();
    let tip = p.tip.as_str();

    // An admissible creation: the whole chain from the root, read from the quarantine.
    let r = p.push(&url, &format!("{rf}:{rf}"), &[]);
    r.ok();
    assert!(
        r.stderr
            .contains(&format!("remote: git-ledger: {rf}: 2 commits admitted")),
        "{}",
        r.stderr
    );
    assert_eq!(p.server_tip(), p.tip);
    // Other refs pass untouched.
    crate::common::write(p.f.dir(), "README", "hello\n");
    crate::common::commit_all(p.f.dir(), "a branch commit");
    p.push(&url, "main:refs/heads/main", &[]).ok();

    // Force push (a rewind to the root) and deletion.
    let r = p.push(&url, &format!("+{}:{rf}", p.root), &[]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("remote:") && r.stderr.contains("not an ancestor"),
        "{}",
        r.stderr
    );
    let r = p.push(&url, &format!(":{rf}"), &[]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("remote:") && r.stderr.contains("deleting a ledger ref is refused"),
        "{}",
        r.stderr
    );
    assert_eq!(p.server_tip(), p.tip);

    // Rewritten campaign.json.
    let mut decl = p.files["campaign.json"].bytes.clone();
    decl.push(b'\n');
    let c = p.commit(&p.with("campaign.json", decl), &[tip], "rewrite campaign");
    p.refused(
        "campaign.json",
        &c,
        &["rule 2", "campaign.json changed", &format!("commit {c}")],
    );

    // An edited filled row.
    let mut row = p.row(FILLED);
    row["reason"] = json!("edited later");
    let c = p.commit(
        &p.with(&row_path(FILLED), canonical_row(&row)),
        &[tip],
        "edit",
    );
    p.refused(
        "edited row",
        &c,
        &["rule 4", &format!("row {FILLED}"), "reason"],
    );

    // A retry: the filled row replaced, with its own record.
    let mut retry = p.row(FILLED);
    retry["native_outcome"] = json!("ERROR");
    let rec = b"another record".to_vec();
    retry["native_record"] =
        json!({"kind": "hand", "id": "second-try", "sha256": git_ledger::sha256_hex(&rec)});
    let mut files = p.with(&row_path(FILLED), canonical_row(&retry));
    files.insert(record_path("hand:second-try"), regular(rec));
    let c = p.commit(&files, &[tip], "retry");
    p.refused(
        "retry",
        &c,
        &[
            "rule 4",
            &format!("row {FILLED}"),
            "native_outcome",
            "never replaced",
        ],
    );

    // A row file added, and one removed.
    let c = p.commit(
        &p.with(
            "rows/scenario/bugfix-iso-weeks/03.json",
            canonical_row(&p.row(DEFERRED)),
        ),
        &[tip],
        "add a row",
    );
    p.refused(
        "row added",
        &c,
        &["rule 3", "rows/scenario/bugfix-iso-weeks/03.json"],
    );
    let mut files = p.files.clone();
    files.remove(&row_path(DEFERRED));
    let c = p.commit(&files, &[tip], "remove a row");
    p.refused(
        "row removed",
        &c,
        &["rule 3", &format!("row {DEFERRED} was removed")],
    );

    // A symlink and a submodule where a row should be.
    let mut files = p.files.clone();
    files.insert(
        row_path(DEFERRED),
        Entry {
            mode: "120000".into(),
            bytes: b"../01.json".to_vec(),
        },
    );
    let c = p.commit(&files, &[tip], "symlink");
    p.refused(
        "symlink",
        &c,
        &["rule 3", &format!("row {DEFERRED}"), "120000"],
    );
    let mut files = p.files.clone();
    files.insert(
        row_path(DEFERRED),
        Entry {
            mode: "160000".into(),
            bytes: p.root.clone().into_bytes(),
        },
    );
    let c = p.commit(&files, &[tip], "submodule");
    p.refused("submodule", &c, &["rule 3", "160000"]);

    // A merge commit.
    let c = p.commit(&p.files, &[tip, &p.root], "merge");
    p.refused("merge", &c, &["rule 1", "merge commit"]);

    // A DEFERRED row with spend.
    let mut spend = p.row(DEFERRED);
    spend["elapsed_seconds"] = json!(30);
    let c = p.commit(
        &p.with(&row_path(DEFERRED), canonical_row(&spend)),
        &[tip],
        "spend",
    );
    p.refused(
        "deferred with spend",
        &c,
        &["rule 4", &format!("row {DEFERRED}"), "elapsed_seconds"],
    );

    // Non-canonical bytes of an otherwise valid fill.
    let mut fill = p.row(DEFERRED);
    fill["native_outcome"] = json!("ERROR");
    fill["reason"] = json!("crashed");
    let rec = b"record bytes".to_vec();
    fill["native_record"] =
        json!({"kind": "hand", "id": DEFERRED, "sha256": git_ledger::sha256_hex(&rec)});
    let with_record = |row_bytes: Vec<u8>| {
        let mut files = p.with(&row_path(DEFERRED), row_bytes);
        files.insert(
            record_path(&format!("hand:{DEFERRED}")),
            regular(rec.clone()),
        );
        files
    };
    let c = p.commit(
        &with_record(serde_json::to_vec(&fill).unwrap()),
        &[tip],
        "compact",
    );
    p.refused(
        "non-canonical",
        &c,
        &["rule 4", &format!("row {DEFERRED}"), "canonical bytes"],
    );

    // Deeply nested JSON and duplicate keys in a row file.
    let deep = format!("{}{}\n", "[".repeat(200), "]".repeat(200));
    let c = p.commit(&with_record(deep.into_bytes()), &[tip], "deep");
    p.refused("deep", &c, &[&format!("row {DEFERRED}"), "not valid JSON"]);
    let mut dup = String::from_utf8(canonical_row(&fill)).unwrap();
    dup = dup.replacen("{\n", "{\n  \"reason\": \"x\",\n", 1);
    let c = p.commit(&with_record(dup.into_bytes()), &[tip], "dup");
    p.refused(
        "duplicate keys",
        &c,
        &[&format!("row {DEFERRED}"), "not valid JSON", "duplicate"],
    );

    // A huge blob, over the server's configured bound.
    git(&p.server, &["config", "ledger.maxBlobBytes", "8192"]);
    let mut huge = fill.clone();
    huge["reason"] = json!("x".repeat(20_000));
    let c = p.commit(&with_record(canonical_row(&huge)), &[tip], "huge");
    p.refused(
        "huge blob",
        &c,
        &[&row_path(DEFERRED), "over the input bound of 8192 bytes"],
    );
    git(&p.server, &["config", "--unset", "ledger.maxBlobBytes"]);

    // The admissible fill passes, and the server's chain verifies.
    let good = p.commit(
        &with_record(canonical_row(&fill)),
        &[tip],
        &crate::gitstore::error_fill_message(p.f.dir(), tip, DEFERRED),
    );
    let r = p.push(&url, &format!("{good}:{rf}"), &[]);
    r.ok();
    assert!(r.stderr.contains("1 commit admitted"), "{}", r.stderr);
    assert_eq!(p.server_tip(), good);
    ledger(&p.server, &["verify", rf]).ok();

    // Creation cases on a fresh server: a non-template root, a misnamed ref, the commit bound.
    let fresh = hooked_server(p.servers.path(), "fresh.git");
    crate::common::use_prefix(&fresh, prefix);
    let furl = fresh.to_str().unwrap();
    let bad_root = p.commit(&p.files, &[], "declare by hand");
    let r = p.push(furl, &format!("{bad_root}:{rf}"), &[]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(&format!("commit {bad_root}: rule 1"))
            && r.stderr.contains("differs from its template row"),
        "{}",
        r.stderr
    );
    let r = p.push(furl, &format!("{tip}:{prefix}elsewhere"), &[]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("belongs on"), "{}", r.stderr);
    git(&fresh, &["config", "ledger.maxCommitsPerPush", "1"]);
    let r = p.push(furl, &format!("{tip}:{rf}"), &[]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("ledger.maxCommitsPerPush"),
        "{}",
        r.stderr
    );
    git(&fresh, &["config", "ledger.maxRowsPerPush", "0k"]);
    let r = p.push(furl, &format!("{tip}:{rf}"), &[]);
    assert_ne!(r.code, 0, "a bad bound is an error, never a pass");
    git(&fresh, &["config", "--unset", "ledger.maxRowsPerPush"]);
    git(&fresh, &["config", "--unset", "ledger.maxCommitsPerPush"]);
    p.push(furl, &format!("{tip}:{rf}"), &[]).ok();
    assert!(git(&fresh, &["for-each-ref", &format!("{prefix}elsewhere")]).is_empty());
}

fn pre_receive_over_git_daemon_relays_reasons(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let p = Push::under(prefix);
    let daemon = Daemon::start(p.servers.path());
    let url = daemon.url("server.git");
    p.push(&url, &format!("{rf}:{rf}"), &[]).ok();
    let mut row = p.row(FILLED);
    row["reason"] = json!("edited over the wire");
    let c = p.commit(
        &p.with(&row_path(FILLED), canonical_row(&row)),
        &[&p.tip],
        "edit",
    );
    let r = p.push(&url, &format!("{c}:{rf}"), &[]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains(&format!("commit {c}: rule 4: row {FILLED}: reason"))
            && r.stderr.contains("remote: "),
        "{}",
        r.stderr
    );
    assert_eq!(p.server_tip(), p.tip);
    // Objects of a refused push never reach the server's store.
    assert_ne!(git_run_code(&p.server, &["cat-file", "-e", &c]), 0);
}

fn git_run_code(dir: &Path, args: &[&str]) -> i32 {
    crate::common::git_run(dir, args, None).code
}

fn reference_transaction_refuses_update_ref_and_fetch_into_a_ledger_ref(prefix: &str) {
    let p = Push::under(prefix);
    let reference = p.f.refname.clone();
    let rf = reference.as_str();
    let dir = p.f.dir();
    ledger(dir, &["hooks", "install"]).ok();
    let mut row = p.row(FILLED);
    row["reason"] = json!("edited later");
    let bad = p.commit(
        &p.with(&row_path(FILLED), canonical_row(&row)),
        &[&p.tip],
        "edit",
    );

    // Forced update (no expectation): the current value is read, and the step is refused.
    let r = git_hooked(dir, &["update-ref", rf, &bad], None);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("rule 4") && r.stderr.contains(&format!("row {FILLED}")),
        "{}",
        r.stderr
    );
    assert_eq!(p.f.tip(), p.tip);
    // Rewind, deletion, a misnamed creation.
    assert_ne!(git_hooked(dir, &["update-ref", rf, &p.root], None).code, 0);
    let r = git_hooked(dir, &["update-ref", "-d", rf], None);
    assert!(r.code != 0 && r.stderr.contains("deleting"), "{}", r.stderr);
    assert_ne!(
        git_hooked(dir, &["update-ref", "refs/ledgers/other", &p.tip], None).code,
        0
    );
    // With an explicit old value too.
    assert_ne!(
        git_hooked(dir, &["update-ref", rf, &bad, &p.tip], None).code,
        0
    );

    // A good step is accepted; so are other refs, and the tool's own writes (gix runs no hooks).
    let mut fill = p.row(DEFERRED);
    fill["native_outcome"] = json!("ERROR");
    fill["reason"] = json!("crashed");
    let rec = b"record bytes".to_vec();
    fill["native_record"] =
        json!({"kind": "hand", "id": DEFERRED, "sha256": git_ledger::sha256_hex(&rec)});
    let mut files = p.with(&row_path(DEFERRED), canonical_row(&fill));
    files.insert(record_path(&format!("hand:{DEFERRED}")), regular(rec));
    let good = p.commit(
        &files,
        &[&p.tip],
        &crate::gitstore::error_fill_message(p.f.dir(), &p.tip, DEFERRED),
    );
    git_hooked(dir, &["update-ref", rf, &good], None).ok();
    assert_eq!(p.f.tip(), good);
    git_hooked(dir, &["update-ref", "refs/heads/scratch", &good], None).ok();
    p.f.put("arena/sympy-matrix/01", "ERROR").ok();
    // pack-refs moves ledger refs without tripping the hook.
    git_hooked(dir, &["pack-refs", "--all"], None).ok();
    p.f.run(&["verify"]).ok();

    // git fetch into the ledger ref from a repository holding a tampered ledger: refused.
    let other = crate::common::new_repo();
    git(
        other.path(),
        &["fetch", "-q", dir.to_str().unwrap(), &format!("{rf}:{rf}")],
    );
    let mut row = p.row(FILLED);
    row["reason"] = json!("edited in another clone");
    let mut files = read_files(dir, rf);
    files.insert(row_path(FILLED), regular(canonical_row(&row)));
    let tampered = state_commit(other.path(), &files, &[&p.f.tip()], "tamper");
    git(other.path(), &["update-ref", rf, &tampered]);
    let before = p.f.tip();
    let r = git_hooked(
        dir,
        &[
            "fetch",
            other.path().to_str().unwrap(),
            &format!("+{rf}:{rf}"),
        ],
        None,
    );
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("rule 4"), "{}", r.stderr);
    assert_eq!(p.f.tip(), before);
    // Fetching into a remote-tracking name is not a ledger ref: it passes (verify reads it).
    git_hooked(
        dir,
        &[
            "fetch",
            other.path().to_str().unwrap(),
            &format!("+{rf}:refs/remotes/other/ledgers/{ID}"),
        ],
        None,
    )
    .ok();
}

#[test]
fn pre_commit_checks_ledger_files_on_a_branch() {
    let repo = crate::common::new_repo();
    let dir = repo.path();
    ledger(dir, &["hooks", "install"]).ok();
    let decl = crate::gitstore::pretty(&crate::gitstore::declaration_value(ID, 2));
    crate::common::write(dir, "eval/campaign.json", &decl);
    let template = ledger(dir, &["template", "eval/campaign.json"])
        .ok()
        .stdout
        .clone();
    crate::common::write(dir, "eval/ledger.json", &template);
    crate::common::write(dir, "other.json", "{\"format\": \"something-else\"}\n");
    git(dir, &["add", "-A"]);
    git_hooked(dir, &["commit", "-q", "-m", "declare"], None).ok();

    // A fill through the tool (file mode) commits.
    let t: Value = serde_json::from_str(&template).unwrap();
    let sid = FILLED;
    let mut row = t["rows"][2].clone();
    assert_eq!(row["schedule_id"], sid);
    row["native_outcome"] = json!("INTERRUPTED_UNGRADED");
    row["native_status"] = json!("INCOMPLETE");
    row["reason"] = json!("by hand");
    crate::common::write(dir, "row.json", crate::gitstore::pretty(&row));
    ledger(
        dir,
        &[
            "put",
            sid,
            "row.json",
            "eval/campaign.json",
            "eval/ledger.json",
        ],
    )
    .ok();
    std::fs::remove_file(dir.join("row.json")).unwrap();
    git(dir, &["add", "-A"]);
    git_hooked(dir, &["commit", "-q", "-m", "fill"], None).ok();

    // Editing the filled row is refused, naming file, row and field.
    let mut l: Value =
        serde_json::from_slice(&std::fs::read(dir.join("eval/ledger.json")).unwrap()).unwrap();
    l["rows"][2]["reason"] = json!("rewritten");
    crate::common::write(dir, "eval/ledger.json", crate::gitstore::pretty(&l));
    git(dir, &["add", "-A"]);
    let r = git_hooked(dir, &["commit", "-q", "-m", "edit"], None);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(
            "eval/ledger.json (against HEAD): rule 4: row scenario/bugfix-iso-weeks/01: reason"
        ),
        "{}",
        r.stderr
    );
    // `git commit -a` (a temporary index) is checked too.
    let r = git_hooked(dir, &["commit", "-q", "-a", "-m", "edit"], None);
    assert_ne!(r.code, 0, "{}", r.stderr);
    git(dir, &["checkout", "-q", "HEAD", "--", "eval/ledger.json"]);

    // A broken new ledger file, and removing the ledger, are refused.
    crate::common::write(
        dir,
        "eval/copy.json",
        "{\"format\": \"campaign-ledger/1\", \"rows\": []}\n",
    );
    git(dir, &["add", "-A"]);
    let r = git_hooked(dir, &["commit", "-q", "-m", "copy"], None);
    assert!(
        r.code != 0 && r.stderr.contains("eval/copy.json"),
        "{}",
        r.stderr
    );
    git(dir, &["rm", "-q", "--cached", "eval/copy.json"]);
    std::fs::remove_file(dir.join("eval/copy.json")).unwrap();
    git(dir, &["rm", "-q", "eval/ledger.json"]);
    let r = git_hooked(dir, &["commit", "-q", "-m", "remove"], None);
    assert!(r.code != 0 && r.stderr.contains("removed"), "{}", r.stderr);
    git(dir, &["reset", "-q", "--hard"]);
    // Unrelated commits pass.
    crate::common::write(dir, "notes.txt", "hi\n");
    git(dir, &["add", "-A"]);
    git_hooked(dir, &["commit", "-q", "-m", "notes"], None).ok();
}

#[test]
fn hooks_install_honours_core_hooks_path_and_never_clobbers() {
    let repo = crate::common::new_repo();
    let dir = repo.path();
    git(dir, &["config", "core.hooksPath", ".githooks"]);
    crate::common::write(dir, ".githooks/pre-commit", "#!/bin/sh\necho team hook\n");
    {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(".githooks/pre-commit");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let r = ledger(dir, &["hooks", "install"]);
    r.expect_code(2);
    assert!(r.stderr.contains("pre-commit.local"), "{}", r.stderr);
    assert!(
        !dir.join(".githooks/pre-receive").exists(),
        "nothing written on refusal"
    );
    let r = ledger(dir, &["hooks", "install", "--force"]);
    r.ok();
    assert!(r.stdout.contains("pre-commit.local"), "{}", r.stdout);
    for h in [
        "pre-receive",
        "reference-transaction",
        "pre-commit",
        "pre-commit.local",
    ] {
        assert!(dir.join(".githooks").join(h).is_file(), "{h}");
    }
    // The chained hook still runs.
    crate::common::write(dir, "a.txt", "a\n");
    git(dir, &["add", "-A"]);
    let r = git_hooked(dir, &["commit", "-m", "a"], None);
    r.ok();
    assert!(
        r.stderr.contains("team hook") || r.stdout.contains("team hook"),
        "{r:?}"
    );
    let again = ledger(dir, &["hooks", "install"]);
    again.ok();
    assert!(again.stdout.contains("already installed"));
}

crate::common::under_both_prefixes!(
    pre_receive_over_git_daemon_relays_reasons,
    pre_receive_refuses_hostile_pushes_with_reasons_and_admits_good_ones
);

crate::common::under_both_prefixes!(
    reference_transaction_refuses_update_ref_and_fetch_into_a_ledger_ref
);
