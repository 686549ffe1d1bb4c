//! The exact messages a person sees when a command refuses or fails: stdout, stderr and the
//! exit status of the real binary on ~30 representative failures across commands, compared
//! with the snapshot files under `tests/snapshots/messages/<name>.txt`.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test messages` rewrites the snapshots; review the diff as a new
//! user would read the messages. Only what varies between runs is normalised: temporary paths
//! become `<TMP>`, and the commits of the copied catalogue (which change whenever `arena/`
//! does) become `<COMMIT>`. Every other commit id is deterministic (pinned dates and
//! identities) and kept.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::common::{
    bin, commit_all, git, git_hooked, git_run, hooked_server, new_repo, path_with_bin, pin_env,
    write, Run,
};
use crate::gitstore::{canonical_row, declaration_value, pretty, read_files, regular, Fixture, ID};

thread_local! {
    /// The ledger ref prefix of the ref-mode test running on this thread ([`Prefixed`]).
    static PREFIX: std::cell::RefCell<String> =
        std::cell::RefCell::new(crate::common::PREFIXES[0].to_owned());
}

/// While alive, [`snapshot`] reads the messages of a ledger under `prefix`; dropped, the
/// default prefix again (a test thread may run another test after this one).
struct Prefixed;

impl Prefixed {
    fn set(prefix: &str) -> Prefixed {
        PREFIX.with(|p| *p.borrow_mut() = prefix.to_owned());
        Prefixed
    }
}

impl Drop for Prefixed {
    fn drop(&mut self) {
        PREFIX.with(|p| *p.borrow_mut() = crate::common::PREFIXES[0].to_owned());
    }
}

/// Compare (or, with `UPDATE_SNAPSHOTS=1`, write) the snapshot `name` of a run of
/// `git ledger <shown>`.
///
/// Under the branch prefix (a [`Prefixed`] test) the messages must be the default prefix's
/// with `refs/heads/ledgers/` for `refs/ledgers/`: the text may not name `refs/ledgers/`
/// itself, and read with the prefix swapped it must equal `<name>.txt`. Where the messages
/// differ by more than the name (Git abbreviates a branch to `ledgers/<id>` in its push
/// report), `<name>@heads.txt` holds them,
/// compared as they are.
#[track_caller]
fn snapshot(name: &str, shown: &str, r: &Run, replace: &[(&str, &str)]) {
    let mut text = format!(
        "$ git ledger {shown}\n--- exit status {}\n--- stdout\n{}--- stderr\n{}",
        r.code, r.stdout, r.stderr
    );
    for (from, to) in replace {
        if !from.is_empty() {
            text = text.replace(from, to);
        }
    }
    compare(name, normalise_tmp(&text));
}

/// Compare `text` with the snapshot `name` (or write it), as [`snapshot`] says.
#[track_caller]
fn compare(name: &str, mut text: String) {
    let dir = crate::common::project_root().join("tests/snapshots/messages");
    let mut path = dir.join(format!("{name}.txt"));
    let prefix = PREFIX.with(|p| p.borrow().clone());
    if prefix != crate::common::PREFIXES[0] {
        let own = dir.join(format!("{name}@heads.txt"));
        let names_default = text
            .replace(&prefix, "")
            .contains(crate::common::PREFIXES[0]);
        let swapped = text.replace(&prefix, crate::common::PREFIXES[0]);
        let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| !v.is_empty());
        let same = std::fs::read_to_string(&path).is_ok_and(|want| want == swapped);
        if own.exists() || (update && (names_default || !same)) {
            path = own;
        } else {
            assert!(
                !names_default,
                "message {name} under {prefix} names {}:\n{text}",
                crate::common::PREFIXES[0]
            );
            text = swapped;
            if update {
                return;
            }
        }
    }
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| !v.is_empty()) {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot {} (run `UPDATE_SNAPSHOTS=1 cargo test messages`)\n{text}",
            path.display()
        )
    });
    assert!(
        want == text,
        "message {name} changed (UPDATE_SNAPSHOTS=1 cargo test messages rewrites it)\n--- snapshot\n{want}--- now\n{text}"
    );
}

/// Replace each temporary directory path (`<temp dir>/.tmpXXXXXX`) with `<TMP>`.
fn normalise_tmp(text: &str) -> String {
    let mut out = text.to_owned();
    for base in temp_bases() {
        let needle = format!("{base}/.tmp");
        while let Some(at) = out.find(&needle) {
            let rest = &out[at + needle.len()..];
            let len = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            out.replace_range(at..at + needle.len() + len, "<TMP>");
        }
    }
    out
}

fn temp_bases() -> Vec<String> {
    let t = std::env::temp_dir();
    let mut v = vec![t.to_string_lossy().trim_end_matches('/').to_owned()];
    if let Ok(c) = t.canonicalize() {
        let c = c.to_string_lossy().trim_end_matches('/').to_owned();
        if !v.contains(&c) {
            v.push(c);
        }
    }
    v
}

/// Run the binary in `dir` (pinned environment) with `args`.
fn run_in(dir: &Path, args: &[&str]) -> Run {
    crate::common::ledger(dir, args)
}

/// `args` as typed, for the snapshot's first line.
fn typed(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if a.is_empty() || a.contains([' ', '"', '{']) {
                format!("'{a}'")
            } else {
                (*a).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run and snapshot in one step.
#[track_caller]
fn check(name: &str, dir: &Path, args: &[&str], replace: &[(&str, &str)]) -> Run {
    let r = run_in(dir, args);
    snapshot(name, &typed(args), &r, replace);
    r
}

/// The commits of `dir` that are not deterministic: every non-root commit (a `put` names the
/// temporary path of its row file, so its commit id varies), each to be shown as `<COMMIT>`.
fn volatile(dir: &Path) -> Vec<(String, &'static str)> {
    git(dir, &["rev-list", "--all", "--min-parents=1"])
        .lines()
        .map(|l| (l.to_owned(), "<COMMIT>"))
        .collect()
}

/// Borrow a replacement list.
fn pairs<'a>(v: &'a [(String, &'static str)]) -> Vec<(&'a str, &'static str)> {
    v.iter().map(|(a, b)| (a.as_str(), *b)).collect()
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

// ---------------------------------------------------------------------------------------
// Ref mode: put, repair, init, show, log, verify on a small ledger.

/// A hand row file for `sid` with the fields `edit` sets; returns its path.
fn row_file(
    f: &Fixture,
    sid: &str,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> PathBuf {
    let mut row =
        crate::gitstore::hand_row_value(&f.run(&["show", "--row", sid]).ok().stdout, "ERROR");
    edit(&mut row);
    let p = f.file(name);
    std::fs::write(&p, pretty(&row)).unwrap();
    p
}

fn ref_mode_refusals(prefix: &str) {
    let _p = Prefixed::set(prefix);
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let d = f.dir();
    let sid = "scenario/bugfix-iso-weeks/01";
    f.put(sid, "ERROR").ok();
    let v = volatile(d);
    let v = pairs(&v);
    // A retry: the row already holds an attempt.
    let retry = row_file(&f, sid, "retry.json", |r| {
        r["reason"] = json!("second try");
        r["native_record"] = serde_json::Value::Null;
    });
    check("put-retry", d, &["put", sid, &s(&retry)], &v);
    // A row file for another schedule id.
    let again = row_file(&f, "scenario/bugfix-iso-weeks/02", "again.json", |_| {});
    let again_s = s(&again);
    check("put-wrong-schedule-id", d, &["put", sid, &again_s], &v);
    // DEFERRED with spend.
    let spend = row_file(&f, "scenario/bugfix-iso-weeks/02", "spend.json", |r| {
        r["native_outcome"] = json!("DEFERRED");
        r["native_status"] = serde_json::Value::Null;
        r["reason"] = serde_json::Value::Null;
    });
    check(
        "put-deferred-with-spend",
        d,
        &["put", "scenario/bugfix-iso-weeks/02", &s(&spend)],
        &v,
    );
    // A non-PASS outcome without a reason.
    let noreason = row_file(&f, "scenario/bugfix-iso-weeks/02", "noreason.json", |r| {
        r["reason"] = serde_json::Value::Null;
    });
    check(
        "put-non-pass-without-reason",
        d,
        &["put", "scenario/bugfix-iso-weeks/02", &s(&noreason)],
        &v,
    );
    // An outcome the task does not declare.
    let odd = row_file(&f, "arena/sympy-matrix/01", "odd.json", |r| {
        r["native_outcome"] = json!("INTERRUPTED_UNGRADED");
    });
    check(
        "put-undeclared-outcome",
        d,
        &["put", "arena/sympy-matrix/01", &s(&odd)],
        &v,
    );
    // A schedule id that is not scheduled.
    check(
        "put-unscheduled-id",
        d,
        &["put", "scenario/bugfix-iso-weeks/09", &s(&noreason)],
        &v,
    );
    // A row file that is not JSON.
    let broken = f.file("broken.json");
    std::fs::write(&broken, "{\"schedule_id\": \n").unwrap();
    check(
        "put-not-json",
        d,
        &["put", "scenario/bugfix-iso-weeks/02", &s(&broken)],
        &v,
    );
    // An oversized input.
    check(
        "put-oversized-input",
        d,
        &[
            "put",
            "scenario/bugfix-iso-weeks/02",
            &again_s,
            "--max-input-bytes",
            "64",
        ],
        &v,
    );
    // Repair of a row that holds no attempt.
    check(
        "repair-deferred-row",
        d,
        &[
            "repair",
            "arena/sympy-matrix/02",
            "--note",
            "re-ran the oracle",
        ],
        &v,
    );
    // init of a ledger that exists.
    check("init-exists", d, &["init", &s(&f.decl())], &v);
    // show --at a commit that is not here, and a name that is nothing.
    check(
        "show-at-missing-commit",
        d,
        &["show", "--at", "0123456789abcdef0123456789abcdef01234567"],
        &v,
    );
    // A cited tip the served ledger does not hold (docs/reference/workflow.md, "The tip is the
    // citation").
    check(
        "verify-expect-tip-not-served",
        d,
        &[
            "verify",
            "--expect-tip",
            &format!("{ID}@0123456789abcdef0123456789abcdef01234567"),
        ],
        &v,
    );
    // A misspelt flag: clap's suggestion after `usage error:`.
    check("usage-log-misspelt-ref", d, &["log", "--reff", ID], &v);
    // A ledger document given to cite, which reads JSON Lines runs.
    let ledger_doc = f.file("ledger-doc.json");
    std::fs::copy(
        crate::common::project_root().join("inspect-example/ledger.json"),
        &ledger_doc,
    )
    .unwrap();
    check("cite-ledger-document", d, &["cite", &s(&ledger_doc)], &v);
    check(
        "show-at-unknown-revision",
        d,
        &["show", "--at", "no-such-branch"],
        &v,
    );
    // A ledger ref that does not exist.
    check(
        "put-unknown-ref",
        d,
        &["put", sid, &again_s, "--ref", "other-campaign"],
        &v,
    );
    // A stale lock file.
    let lock = d.join(".git").join(format!("{rf}.lock"));
    std::fs::write(&lock, "").unwrap();
    check(
        "put-stale-lock",
        d,
        &["put", "scenario/bugfix-iso-weeks/02", &again_s],
        &v,
    );
    std::fs::remove_file(&lock).unwrap();
    // No identity.
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("EMAIL")
        .env("HOME", f.files.path())
        .current_dir(d)
        .args(["put", "scenario/bugfix-iso-weeks/02", &again_s]);
    let r = output(cmd);
    snapshot(
        "put-no-identity",
        &typed(&["put", "scenario/bugfix-iso-weeks/02", &again_s]),
        &r,
        &v,
    );
    // Several ledger refs and no --ref.
    let other = f.file("other.json");
    std::fs::write(&other, pretty(&declaration_value("other-campaign", 1))).unwrap();
    run_in(d, &["init", &s(&other)]).ok();
    check("show-several-refs", d, &["show"], &v);
    check("verify-several-refs", d, &["verify"], &v);
    check(
        "put-several-refs",
        d,
        &["put", "scenario/bugfix-iso-weeks/02", &again_s],
        &v,
    );
    // diff A: B is a ledger ref's tip, which --ref names when there are several.
    let a = format!("{rf}~1");
    check("diff-several-refs", d, &["diff", &a], &v);
    check("diff-b-and-ref", d, &["diff", &a, rf, "--ref", ID], &v);
    // ... and with --ref, B is its tip: the summary, then each changed row's fields.
    let r = check("diff-to-the-ref-tip", d, &["diff", &a, "--ref", ID], &v);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // sync --ref of a ledger neither here nor on the remote.
    let bare = f.file("server.git");
    git(f.files.path(), &["init", "-q", "--bare", "server.git"]);
    git(d, &["remote", "add", "origin", &s(&bare)]);
    check("sync-ref-unknown", d, &["sync", "--ref", "nope"], &v);
}

fn output(mut cmd: Command) -> Run {
    let o = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn no_repository_and_no_ledger(prefix: &str) {
    let _p = Prefixed::set(prefix);
    let empty = tempfile::tempdir().unwrap();
    check("not-a-repository", empty.path(), &["show"], &[]);
    let repo = new_repo();
    crate::common::use_prefix(repo.path(), prefix);
    check("no-ledger-ref", repo.path(), &["show"], &[]);
    check("log-no-ledger-ref", repo.path(), &["log"], &[]);
}

fn usage_errors(prefix: &str) {
    let _p = Prefixed::set(prefix);
    let f = Fixture::under(1, prefix);
    let d = f.dir();
    check("usage-unknown-flag", d, &["report", "--frobnicate"], &[]);
    check("usage-missing-argument", d, &["put"], &[]);
    check("usage-import-without-records", d, &["import"], &[]);
    check(
        "usage-half-file-mode",
        d,
        &[
            "put",
            "scenario/bugfix-iso-weeks/01",
            "row.json",
            &s(&f.decl()),
        ],
        &[],
    );
    check(
        "usage-not-a-ledger-ref",
        d,
        &["log", "refs/heads/main"],
        &[],
    );
}

// ---------------------------------------------------------------------------------------
// verify: an inadmissible commit that plain Git plumbing put on a local ledger ref.

fn verify_finds_an_inadmissible_commit(prefix: &str) {
    let _p = Prefixed::set(prefix);
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let d = f.dir();
    let sid = "scenario/bugfix-iso-weeks/01";
    f.put(sid, "ERROR").ok();
    let tip = f.tip();
    let mut files = read_files(d, &tip);
    let path = format!("rows/{sid}.json");
    let mut row: serde_json::Value = serde_json::from_slice(&files[&path].bytes).unwrap();
    row["reason"] = json!("edited later");
    files.insert(path, regular(canonical_row(&row)));
    let bad = crate::gitstore::state_commit(d, &files, &[&tip], "edit a filled row");
    git(d, &["update-ref", rf, &bad]);
    let v = volatile(d);
    let v = pairs(&v);
    check("verify-inadmissible-commit", d, &["verify"], &v);
    check(
        "verify-inadmissible-commit-json",
        d,
        &["verify", "--json"],
        &v,
    );
    // A commit of the chain whose objects are gone.
    let obj = d.join(".git/objects").join(&tip[..2]).join(&tip[2..]);
    std::fs::remove_file(&obj).unwrap();
    check("verify-missing-commit", d, &["verify"], &v);
}

// ---------------------------------------------------------------------------------------
// File mode: a declaration and a ledger as files.

#[test]
fn file_mode_refusals() {
    let f = Fixture::new(1);
    let d = f.files.path();
    // A ledger whose row breaks a rule.
    let template = run_in(d, &["template", "decl.json"]).ok().stdout.clone();
    let mut ledger: serde_json::Value = serde_json::from_str(&template).unwrap();
    ledger["rows"][1]["native_outcome"] = json!("PASS");
    ledger["rows"][1]["elapsed_seconds"] = json!(-3);
    std::fs::write(d.join("ledger.json"), pretty(&ledger)).unwrap();
    check(
        "report-ledger-refused",
        d,
        &["report", "decl.json", "ledger.json"],
        &[],
    );
    // A DEFERRED row that carries spend.
    let mut deferred: serde_json::Value = serde_json::from_str(&template).unwrap();
    deferred["rows"][1]["elapsed_seconds"] = json!(40.5);
    deferred["rows"][1]["reason"] = json!("not run yet");
    std::fs::write(d.join("deferred.json"), pretty(&deferred)).unwrap();
    check(
        "report-deferred-with-spend",
        d,
        &["report", "decl.json", "deferred.json"],
        &[],
    );
    check(
        "report-ledger-refused-json",
        d,
        &["report", "--format", "json", "decl.json", "ledger.json"],
        &[],
    );
    // A declaration that breaks its format.
    let mut decl = declaration_value(ID, 1);
    decl["repetitions"] = json!(0);
    decl["colour"] = json!("red");
    std::fs::write(d.join("bad-decl.json"), pretty(&decl)).unwrap();
    check(
        "template-declaration-refused",
        d,
        &["template", "bad-decl.json"],
        &[],
    );
    check(
        "report-missing-file",
        d,
        &["report", "decl.json", "nowhere.json"],
        &[],
    );
}

// ---------------------------------------------------------------------------------------
// pin and check against a small harness repository.

#[test]
fn pin_and_check() {
    let (dir, commit) = crate::pin::harness();
    let d = dir.path();
    let keep = [(commit.as_str(), "<COMMIT>")];
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("draft.json")).unwrap()).unwrap();
    v["tasks"][0]["definition"]["sha256"] = json!("a".repeat(64));
    v["tasks"][1]["definition"]["path"] = json!("h/tasks/nowhere");
    write(d, "bad-draft.json", pretty(&v));
    check("pin-draft-refused", d, &["pin", "bad-draft.json"], &keep);
    check(
        "pin-unknown-revision",
        d,
        &["pin", "draft.json", "--revision", "no-such-branch"],
        &keep,
    );
    run_in(d, &["pin", "draft.json", "-o", "campaign.json"]).ok();
    let mut decl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("campaign.json")).unwrap()).unwrap();
    decl["tasks"][0]["definition"]["sha256"] = json!("0".repeat(64));
    decl["policy_files"][0]["sha256"] = json!("e".repeat(64));
    write(d, "tampered.json", pretty(&decl));
    check("check-mismatch", d, &["check", "tampered.json"], &keep);
    // Not ready for a run: a modified task file, an untracked file in the runner tools, a
    // staged policy change.
    write(d, "h/tasks/case-a/brief.md", "Fix it another way.\n");
    write(d, "h/tools/helper.py", "print('helper')\n");
    write(d, "h/policy.md", "Anything goes.\n");
    git(d, &["add", "h/policy.md"]);
    check(
        "check-not-ready",
        d,
        &["check", "campaign.json", "--ready"],
        &keep,
    );
    git(d, &["checkout", "-q", "HEAD", "--", "h"]);
    std::fs::remove_file(d.join("h/tools/helper.py")).unwrap();
    // A shallow clone without the pinned commit.
    write(d, "later.txt", "later\n");
    let later = commit_all(d, "later");
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", d.display());
    git(clone.path(), &["clone", "-q", "--depth", "1", &url, "c"]);
    let c = clone.path().join("c");
    std::fs::copy(d.join("campaign.json"), c.join("campaign.json")).unwrap();
    check(
        "check-missing-commit",
        &c,
        &["check", "campaign.json"],
        &[keep[0], (later.as_str(), "<COMMIT>")],
    );
}

// ---------------------------------------------------------------------------------------
// import against the embedded catalogue.

#[test]
fn import_refusals() {
    let c = crate::import::Campaign::new();
    let d = c.root();
    let keep = [(c.revision.as_str(), "<COMMIT>")];
    let verified = c.run_dir("20261129T101500Z-a001");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a = vec![
            "import".to_owned(),
            "campaign.json".into(),
            "ledger.json".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let go = |name: &str, extra: &[&str]| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        check(name, d, &a, &keep)
    };
    go(
        "import-retry-setup",
        &["--scenario", "scenario/bugfix-iso-weeks/01", &verified],
    )
    .ok();
    go(
        "import-retry",
        &["--scenario", "scenario/bugfix-iso-weeks/01", &verified],
    );
    c.reset_ledger();
    // Fixture evidence for a live row.
    let mut fake = c.example_result("20261129T101500Z-a001");
    fake["run_id"] = json!("fake-1");
    fake["mode"] = json!("fake");
    let p = c.scenario_run("fake-1", &fake);
    go(
        "import-evidence-mismatch",
        &["--scenario", "scenario/bugfix-iso-weeks/02", &p],
    );
    // A non-PASS record without a reason.
    let mut v = c.example_result("20261129T124500Z-a003");
    v["run_id"] = json!("r-1");
    v["reason"] = serde_json::Value::Null;
    let p = c.scenario_run("r-1", &v);
    go(
        "import-non-pass-without-reason",
        &["--scenario", "scenario/greenfield-rate-limiter/01", &p],
    );
    // A record that is not there.
    go(
        "import-missing-record",
        &[
            "--scenario",
            "scenario/bugfix-iso-weeks/01",
            "runs/nope/result.json",
        ],
    );
    // Arena records need the pinned commit, which another repository does not hold.
    let other = new_repo();
    write(other.path(), "x", "x");
    commit_all(other.path(), "other");
    let o = s(other.path());
    go(
        "import-arena-missing-commit",
        &[
            "--arena",
            "arena/sympy-matrix-derivatives/01",
            "arena/examples/arena-store",
            "att-0001",
            "--repo",
            &o,
        ],
    );
}

// ---------------------------------------------------------------------------------------
// cite.

#[test]
fn cite_incomplete_envelope() {
    let d = tempfile::tempdir().unwrap();
    let gap = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"stop_reason":"pass","patch_sha256":"bb10"}"#;
    write(d.path(), "gap.jsonl", format!("{gap}\n"));
    check(
        "cite-incomplete-envelope",
        d.path(),
        &["cite", "gap.jsonl"],
        &[],
    );
    write(d.path(), "bad.jsonl", "{\"task_id\": 7}\nnot json\n");
    check("cite-bad-runs", d.path(), &["cite", "bad.jsonl"], &[]);
}

// ---------------------------------------------------------------------------------------
// The server's hook refusing a push, as `remote:` lines; sync.

/// `git <args>` with the binary on PATH, snapshotted as the user typed it.
#[track_caller]
fn check_git(name: &str, dir: &Path, args: &[&str], replace: &[(&str, &str)]) -> Run {
    let r = git_hooked(dir, args, None);
    let text = format!("git {}", typed(args));
    let mut r2 = Run {
        code: r.code,
        stdout: r.stdout.clone(),
        stderr: r.stderr.clone(),
    };
    // Git's own progress and timing lines vary; keep only what the hook and Git decided.
    r2.stderr = r2
        .stderr
        .lines()
        .filter(|l| !l.starts_with("remote: Resolving") && !l.contains("Counting objects"))
        .map(|l| format!("{l}\n"))
        .collect();
    for (from, to) in replace {
        r2.stderr = r2.stderr.replace(from, to);
        r2.stdout = r2.stdout.replace(from, to);
    }
    snapshot_raw(name, &text, &r2);
    r
}

#[track_caller]
fn snapshot_raw(name: &str, shown: &str, r: &Run) {
    // As `snapshot`, with the command shown as typed (not prefixed with `git ledger`).
    let shown = shown.strip_prefix("git ").unwrap_or(shown);
    let fake = Run {
        code: r.code,
        stdout: r.stdout.clone(),
        stderr: r.stderr.clone(),
    };
    snapshot_with_prefix(name, "git", shown, &fake);
}

#[track_caller]
fn snapshot_with_prefix(name: &str, prefix: &str, shown: &str, r: &Run) {
    let text = format!(
        "$ {prefix} {shown}\n--- exit status {}\n--- stdout\n{}--- stderr\n{}",
        r.code, r.stdout, r.stderr
    );
    compare(name, normalise_tmp(&text));
}

fn hook_refuses_a_push(prefix: &str) {
    let _p = Prefixed::set(prefix);
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let d = f.dir();
    let sid = "scenario/bugfix-iso-weeks/01";
    f.put(sid, "ERROR").ok();
    let tip = f.tip();
    let servers = tempfile::tempdir().unwrap();
    let server = hooked_server(servers.path(), "server.git");
    crate::common::use_prefix(&server, prefix);
    git(d, &["remote", "add", "origin", &s(&server)]);
    git_hooked(d, &["push", "-q", "origin", rf], None).ok();
    let mut files = read_files(d, &tip);
    let path = format!("rows/{sid}.json");
    let mut row: serde_json::Value = serde_json::from_slice(&files[&path].bytes).unwrap();
    row["reason"] = json!("edited later");
    files.insert(path, regular(canonical_row(&row)));
    let bad = crate::gitstore::state_commit(d, &files, &[&tip], "edit a filled row");
    git(d, &["update-ref", rf, &bad]);
    let v = volatile(d);
    let v = pairs(&v);
    check_git("hook-push-refused", d, &["push", "origin", rf], &v);
    // The local ref has an inadmissible commit: verify says so and how it got there.
    check("verify-after-refused-push", d, &["verify"], &v);
}

fn sync_refusals(prefix: &str) {
    let _p = Prefixed::set(prefix);
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let base = tempfile::tempdir().unwrap();
    let server = hooked_server(base.path(), "server.git");
    crate::common::use_prefix(&server, prefix);
    let url = s(&server);
    let machine = |name: &str| {
        let dir = base.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        crate::common::use_prefix(&dir, prefix);
        git(&dir, &["remote", "add", "origin", &url]);
        dir
    };
    let a = machine("a");
    let b = machine("b");
    let decl = base.path().join("decl.json");
    std::fs::write(&decl, pretty(&declaration_value(ID, 1))).unwrap();
    run_in(&a, &["init", &s(&decl)]).ok();
    crate::common::ledger_hooked(&a, &["sync"]).ok();
    crate::common::ledger_hooked(&b, &["sync"]).ok();
    let sid = "scenario/bugfix-iso-weeks/01";
    let put = |dir: &Path, outcome: &str, reason: &str| {
        let template = run_in(dir, &["show", "--row", sid]).ok().stdout.clone();
        let mut row = crate::gitstore::hand_row_value(&template, outcome);
        row["reason"] = json!(reason);
        let p = dir.join("row.json");
        std::fs::write(&p, pretty(&row)).unwrap();
        run_in(dir, &["put", sid, "row.json"]).ok();
    };
    put(&a, "ERROR", "the runner crashed");
    crate::common::ledger_hooked(&a, &["sync"]).ok();
    put(&b, "INTERRUPTED_UNGRADED", "stopped by the operator");
    let r = crate::common::ledger_hooked(&b, &["sync"]);
    snapshot("sync-conflict", "sync", &r, &[]);
    let nowhere = crate::common::ledger_hooked(&b, &["sync", "upstream"]);
    snapshot("sync-no-remote", "sync upstream", &nowhere, &[]);
    // A machine that fetched ledgers with plain Git but never synced: no local ledger ref.
    let c = machine("c");
    git(
        &c,
        &[
            "fetch",
            "-q",
            "origin",
            &format!("{prefix}*:refs/remotes/origin/ledgers/*"),
        ],
    );
    check("show-only-remote-ledgers", &c, &["show"], &[]);
    // A forced push that rewrites the server's ledger.
    let root = git(&a, &["rev-list", "--max-parents=0", rf]);
    check_git(
        "hook-forced-push-refused",
        &a,
        &["push", "--force", "origin", &format!("{root}:{rf}")],
        &[],
    );
    let _ = (git_run, path_with_bin);
}

crate::common::under_both_prefixes!(
    ref_mode_refusals,
    no_repository_and_no_ledger,
    usage_errors,
    verify_finds_an_inadmissible_commit,
    hook_refuses_a_push,
    sync_refusals,
);
