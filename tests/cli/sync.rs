//! `sync` across machines: a bare repository with the pre-receive hook served by `git daemon`,
//! several clones putting disjoint rows and syncing concurrently, a clone re-sending an attempt
//! the server already holds, a clone filling a row another already filled; `--setup`; a
//! rewritten remote ledger reported, not followed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{git, hooked_server, ledger, ledger_hooked, new_repo, Daemon, Run};
use crate::gitstore::{declaration_value, hand_row_value, pretty, ID};

/// A clone: an empty repository with `origin` pointing at the server, its ledgers under
/// `prefix`.
fn machine(url: &str, prefix: &str) -> tempfile::TempDir {
    let dir = new_repo();
    crate::common::use_prefix(dir.path(), prefix);
    git(dir.path(), &["remote", "add", "origin", url]);
    dir
}

fn sync(dir: &Path) -> Run {
    ledger_hooked(dir, &["sync"])
}

/// A hand row file for `sid` (from the clone's template row) with `outcome`.
fn row_file(dir: &Path, files: &Path, sid: &str, outcome: &str) -> PathBuf {
    let template = ledger(dir, &["show", "--row", sid]).ok().stdout.clone();
    let row = hand_row_value(&template, outcome);
    let p = files.join(format!("{}-{outcome}.json", sid.replace('/', "_")));
    std::fs::write(&p, pretty(&row)).unwrap();
    p
}

fn machines_sync_concurrently_through_a_hooked_git_daemon(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let base = tempfile::tempdir().unwrap();
    let server = hooked_server(base.path(), "ledger.git");
    crate::common::use_prefix(&server, prefix);
    git(&server, &["config", "receive.denyNonFastForwards", "true"]);
    let daemon = Daemon::start(base.path());
    let url = daemon.url("ledger.git");
    let files = tempfile::tempdir().unwrap();
    let decl_path = files.path().join("decl.json");
    std::fs::write(&decl_path, pretty(&declaration_value(ID, 4))).unwrap();
    let decl: Value = serde_json::from_slice(&std::fs::read(&decl_path).unwrap()).unwrap();
    let ids: Vec<String> = decl["schedule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 12);

    // One machine declares the ledger and pushes it (a creation, checked from the root).
    let seed = machine(&url, prefix);
    ledger(seed.path(), &["init", decl_path.to_str().unwrap()]).ok();
    let r = sync(seed.path());
    r.ok();
    assert!(
        r.stdout.contains("pushed to origin (new there)"),
        "{}",
        r.stdout
    );

    // Three machines fetch it, plus a late one that will re-send an attempt and one that will
    // try to fill a row another machine fills.
    let machines: Vec<_> = (0..3).map(|_| machine(&url, prefix)).collect();
    let echo = machine(&url, prefix);
    let rival = machine(&url, prefix);
    for m in machines.iter().chain([&echo, &rival]) {
        let r = sync(m.path());
        r.ok();
        assert!(r.stdout.contains("created from origin"), "{}", r.stdout);
    }
    // Row files prepared up front (the echo's row 0 has the same bytes as machine 0's).
    let mut plans: Vec<Vec<(String, PathBuf)>> = Vec::new();
    for (i, m) in machines.iter().enumerate() {
        let mine = &ids[i * 4..i * 4 + 4];
        plans.push(
            mine.iter()
                .map(|sid| (sid.clone(), row_file(m.path(), files.path(), sid, "ERROR")))
                .collect(),
        );
    }
    let echo_row = plans[0][0].clone();
    let rival_sid = ids[5].clone(); // machine 1's second row
    let rival_row = row_file(
        rival.path(),
        files.path(),
        &rival_sid,
        "INTERRUPTED_UNGRADED",
    );
    // Another day, so its commit differs from machine 0's even with the same row bytes.
    let mut put = std::process::Command::new(crate::common::bin());
    crate::common::pin_env(&mut put)
        .env("GIT_COMMITTER_DATE", "2026-11-30T10:00:00Z")
        .env("GIT_AUTHOR_DATE", "2026-11-30T10:00:00Z")
        .current_dir(echo.path())
        .args(["put", &echo_row.0, echo_row.1.to_str().unwrap()]);
    assert!(put.status().unwrap().success());
    ledger(
        rival.path(),
        &["put", &rival_sid, rival_row.to_str().unwrap()],
    )
    .ok();

    // Concurrently: each machine puts its rows one by one and syncs after each.
    let outcomes: Vec<Vec<Run>> = std::thread::scope(|s| {
        let handles: Vec<_> = machines
            .iter()
            .zip(&plans)
            .map(|(m, plan)| {
                s.spawn(move || {
                    let mut runs = Vec::new();
                    for (sid, path) in plan {
                        ledger(m.path(), &["put", sid, path.to_str().unwrap()]).ok();
                        runs.push(sync(m.path()));
                    }
                    runs
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut replays = 0;
    for run in outcomes.iter().flatten() {
        run.ok();
        replays += run.stdout.matches("replayed").count();
    }
    eprintln!("{replays} of 12 concurrent syncs replayed local commits on a moved remote tip");

    // Every row landed exactly once on the server; verify passes there.
    let attempts = git(
        &server,
        &[
            "log",
            "--format=%(trailers:key=Ledger-Attempt,valueonly)",
            rf,
        ],
    );
    let mut seen: Vec<&str> = attempts
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    seen.sort();
    let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(seen, want, "every row exactly once");
    assert_eq!(git(&server, &["rev-list", "--count", rf]), "13");
    let filled = git(
        &server,
        &[
            "log",
            "-1",
            "--format=%(trailers:key=Ledger-Filled,valueonly)",
            rf,
        ],
    );
    assert_eq!(
        filled.trim(),
        "12/12",
        "Ledger-Filled counted anew on replay"
    );
    ledger(&server, &["verify", rf]).ok();

    // The echo re-sends the same attempt (same row bytes): skipped, nothing pushed.
    let r = sync(echo.path());
    r.ok();
    assert!(r.stdout.contains("already on origin"), "{}", r.stdout);
    assert_eq!(git(&server, &["rev-list", "--count", rf]), "13");
    assert_eq!(
        git(echo.path(), &["rev-parse", rf]),
        git(&server, &["rev-parse", rf])
    );

    // The rival filled a row another machine filled: refused naming the row, the remote
    // commit and the ref that keeps its attempt; its local ledger follows the server's, which
    // is unchanged.
    let rival_tip = git(rival.path(), &["rev-parse", rf]);
    let r = sync(rival.path());
    r.expect_code(2);
    let filler = git(
        &server,
        &[
            "log",
            "--format=%H",
            &format!("--grep=Ledger-Attempt: {rival_sid} "),
            rf,
        ],
    );
    assert_eq!(filler.lines().count(), 1, "{filler}");
    let kept = format!("refs/ledger-conflicts/{ID}/1");
    assert!(
        // The reason names the row and, from admission, the field and the rule (rule 4).
        r.stderr.contains(&format!("rule 4: row {rival_sid}: "))
            && r.stderr.contains(&format!(
                "origin filled this row first at commit {filler}: local commit {rival_tip} is not replayed, and its attempt is kept, unchanged, on {kept}"
            )),
        "{}",
        r.stderr
    );
    assert_eq!(
        git(rival.path(), &["rev-parse", rf]),
        git(&server, &["rev-parse", rf])
    );
    assert_eq!(
        git(
            rival.path(),
            &["rev-parse", &format!("{kept}:rows/{rival_sid}.json")]
        ),
        git(
            rival.path(),
            &["rev-parse", &format!("{rival_tip}:rows/{rival_sid}.json")]
        )
    );
    assert_eq!(git(&server, &["rev-list", "--count", rf]), "13");
    sync(rival.path()).ok();

    // Everyone else converges on the server's tip (behind: fast-forward).
    let tip = git(&server, &["rev-parse", rf]);
    for m in &machines {
        sync(m.path()).ok();
        assert_eq!(git(m.path(), &["rev-parse", rf]), tip);
        ledger(m.path(), &["verify"]).ok();
    }
    drop(daemon);
}

/// Under either prefix; under the branch prefix a plain `git fetch` (the default refspec
/// `+refs/heads/*:refs/remotes/origin/*`) force-updates `refs/remotes/origin/ledgers/<id>`, and
/// sync still reports the rewrite, since it never judges by that ref.
fn setup_adds_the_fetch_refspec_once_and_rewritten_remotes_are_reported(prefix: &str) {
    let base = tempfile::tempdir().unwrap();
    // A plain server without the hook, so that a rewrite can reach it.
    git(base.path(), &["init", "-q", "--bare", "plain.git"]);
    let url = base.path().join("plain.git");
    let url = url.to_str().unwrap();
    let a = machine(url, prefix);
    let r = format!("{prefix}{ID}");
    let r = r.as_str();
    let spec = if prefix == crate::common::PREFIXES[0] {
        "refs/ledgers/*:refs/remotes/origin/ledgers/*"
    } else {
        "refs/heads/ledgers/*:refs/ledger-remotes/origin/*"
    };
    let files = tempfile::tempdir().unwrap();
    let decl_path = files.path().join("decl.json");
    std::fs::write(&decl_path, pretty(&declaration_value(ID, 1))).unwrap();
    ledger(a.path(), &["init", decl_path.to_str().unwrap()]).ok();
    let root = git(a.path(), &["rev-parse", r]);
    let sid = "scenario/bugfix-iso-weeks/01";
    let p = row_file(a.path(), files.path(), sid, "ERROR");
    ledger(a.path(), &["put", sid, p.to_str().unwrap()]).ok();
    sync(a.path()).ok();

    // --setup: once, not forced, no push refspec.
    ledger(a.path(), &["sync", "--setup", "origin"]).ok();
    let r2 = ledger(a.path(), &["sync", "--setup", "origin"]);
    r2.ok();
    assert!(r2.stdout.contains("already"), "{}", r2.stdout);
    let fetch = git(a.path(), &["config", "--get-all", "remote.origin.fetch"]);
    assert_eq!(fetch.lines().filter(|l| *l == spec).count(), 1, "{fetch}");
    assert_ne!(
        crate::common::git_run(a.path(), &["config", "--get", "remote.origin.push"], None).code,
        0
    );
    ledger(a.path(), &["sync", "--setup", "nowhere"]).expect_code(1);

    // Someone rewinds the server's ledger: sync reports it and does not follow.
    let b = machine(url, prefix);
    sync(b.path()).ok();
    git(
        base.path().join("plain.git").as_path(),
        &["update-ref", r, &root],
    );
    let out = sync(a.path());
    out.expect_code(2);
    assert!(out.stderr.contains("was rewritten"), "{}", out.stderr);
    assert_ne!(git(a.path(), &["rev-parse", r]), root, "not followed");
    // A plain `git fetch` with the refspec refuses it too (never forced).
    let f = crate::common::git_run(a.path(), &["fetch", "origin"], None);
    assert_ne!(f.code, 0);
    assert!(f.stderr.contains("rejected"), "{}", f.stderr);
    // And sync, after that plain fetch, still reports it and stays.
    let out = sync(a.path());
    out.expect_code(2);
    assert!(out.stderr.contains("was rewritten"), "{}", out.stderr);
    assert_ne!(git(a.path(), &["rev-parse", r]), root, "not followed");
}

/// Issue 15, attack 12: a forced fetch of a rewritten remote ledger into
/// `refs/remotes/origin/ledgers/*` (plain Git, outside sync) must not make sync move the local
/// ledger off its own history: reported (exit 2), the local ref and the server left alone. A
/// replay of commits that were never on the remote still happens.
fn a_force_fetched_rewritten_remote_is_reported_and_the_local_ledger_stays(prefix: &str) {
    force_fetched_rewrite(prefix, true);
}

/// The same where Git keeps no reflog for remote-tracking refs: sync keeps one for the refs it
/// moves, and Git appends to it.
fn a_force_fetched_rewrite_is_seen_without_core_log_all_ref_updates(prefix: &str) {
    force_fetched_rewrite(prefix, false);
}

fn force_fetched_rewrite(prefix: &str, log_all: bool) {
    let rf = &format!("{prefix}{ID}");
    let base = tempfile::tempdir().unwrap();
    // A plain server without the hook, so that a rewrite can reach it.
    git(base.path(), &["init", "-q", "--bare", "plain.git"]);
    let server = base.path().join("plain.git");
    let url = server.to_str().unwrap();
    let files = tempfile::tempdir().unwrap();
    let decl_path = files.path().join("decl.json");
    std::fs::write(&decl_path, pretty(&declaration_value(ID, 2))).unwrap();
    let [x, y, w, v] = [
        "scenario/bugfix-iso-weeks/01",
        "scenario/bugfix-iso-weeks/02",
        "arena/sympy-matrix/01",
        "arena/sympy-matrix/02",
    ];

    // Machine a fills x, then y, syncing after each: both are on the server.
    let a = machine(url, prefix);
    if !log_all {
        git(a.path(), &["config", "core.logAllRefUpdates", "false"]);
    }
    ledger(a.path(), &["init", decl_path.to_str().unwrap()]).ok();
    let px = row_file(a.path(), files.path(), x, "ERROR");
    ledger(a.path(), &["put", x, px.to_str().unwrap()]).ok();
    sync(a.path()).ok();
    let at_x = git(a.path(), &["rev-parse", rf]);
    let py = row_file(a.path(), files.path(), y, "ERROR");
    ledger(a.path(), &["put", y, py.to_str().unwrap()]).ok();
    sync(a.path()).ok();
    let at_y = git(a.path(), &["rev-parse", rf]);
    assert_eq!(git(&server, &["rev-parse", rf]), at_y);

    // Someone rewrites the server's ledger: back to x, then another fill on top (y is gone).
    let c = machine(url, prefix);
    sync(c.path()).ok();
    git(c.path(), &["update-ref", rf, &at_x]);
    let pw = row_file(c.path(), files.path(), w, "ERROR");
    ledger(c.path(), &["put", w, pw.to_str().unwrap()]).ok();
    let rewritten = git(c.path(), &["rev-parse", rf]);
    let r = crate::common::git_run(
        c.path(),
        &["push", "-f", "origin", &format!("{rf}:{rf}")],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);

    // Machine a force-fetches it into its remote-tracking ref, then syncs.
    let tracking = format!("refs/remotes/origin/ledgers/{ID}");
    let r = crate::common::git_run(
        a.path(),
        &[
            "fetch",
            "origin",
            // Under the branch prefix, what the default refspec does.
            &format!("+{prefix}*:refs/remotes/origin/ledgers/*"),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(git(a.path(), &["rev-parse", &tracking]), rewritten);
    let r = sync(a.path());
    r.expect_code(2);
    assert!(
        r.stderr
            .contains(&format!("{rf}: the ledger on origin was rewritten")),
        "{}",
        r.stderr
    );
    if prefix == crate::common::PREFIXES[0] {
        // The forced fetch moved the very ref sync tracks: its reflog names both tips.
        assert!(
            r.stderr.contains(&at_y) && r.stderr.contains(&rewritten),
            "{}",
            r.stderr
        );
    } else {
        // It moved a ref sync never judges by; sync's own copy refused the rewrite.
        assert!(
            r.stderr
                .contains(&format!("does not follow refs/ledger-remotes/origin/{ID}")),
            "{}",
            r.stderr
        );
    }
    assert_eq!(
        git(a.path(), &["rev-parse", rf]),
        at_y,
        "the local ledger stays"
    );
    assert_eq!(
        git(&server, &["rev-parse", rf]),
        rewritten,
        "nothing pushed"
    );
    ledger(a.path(), &["verify"]).ok();
    // Again: still reported, still not followed.
    sync(a.path()).expect_code(2);
    assert_eq!(git(a.path(), &["rev-parse", rf]), at_y);
    if !log_all {
        return;
    }

    // A replay of commits never published is not a rewrite: machine d syncs the rewritten
    // ledger, fills v locally while e pushes another row, and its sync replays v on top.
    let d = machine(url, prefix);
    sync(d.path()).ok();
    let e = machine(url, prefix);
    sync(e.path()).ok();
    let pv = row_file(d.path(), files.path(), v, "ERROR");
    ledger(d.path(), &["put", v, pv.to_str().unwrap()]).ok();
    let py2 = row_file(e.path(), files.path(), y, "ERROR");
    ledger(e.path(), &["put", y, py2.to_str().unwrap()]).ok();
    sync(e.path()).ok();
    let r = sync(d.path());
    r.ok();
    assert!(r.stdout.contains("replayed 1 local commit"), "{}", r.stdout);
    assert_eq!(
        git(d.path(), &["rev-parse", rf]),
        git(&server, &["rev-parse", rf])
    );
    // The replayed message says what the trees say: the row filled from its record file
    // (not the local path `put` was given, which only the local commit's message held).
    let body = git(d.path(), &["log", "-1", "--format=%b", rf]);
    assert!(body.contains("  from "), "{body}");
    let record = git_ledger::git::layout::record_path(&format!("hand:{v}"));
    assert!(
        body.contains(&format!("  from {record}")),
        "{body} (want {record})"
    );
    ledger(d.path(), &["verify"]).ok();
}

/// A replayed repair gets the message rule 7 wants (`repair <id>`, `Ledger-Repair`, the count
/// of the remote tip), and the hooked server admits it.
fn a_replayed_repair_is_admitted_with_a_regenerated_message(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let base = tempfile::tempdir().unwrap();
    let server = hooked_server(base.path(), "ledger.git");
    crate::common::use_prefix(&server, prefix);
    let url = server.to_str().unwrap();
    let files = tempfile::tempdir().unwrap();
    let decl_path = files.path().join("decl.json");
    std::fs::write(&decl_path, pretty(&declaration_value(ID, 2))).unwrap();
    let (x, y) = ("scenario/bugfix-iso-weeks/01", "arena/sympy-matrix/01");
    let p = machine(url, prefix);
    ledger(p.path(), &["init", decl_path.to_str().unwrap()]).ok();
    let px = row_file(p.path(), files.path(), x, "ERROR");
    ledger(p.path(), &["put", x, px.to_str().unwrap()]).ok();
    sync(p.path()).ok();
    let q = machine(url, prefix);
    sync(q.path()).ok();
    // p repairs x locally while q fills y and pushes.
    ledger(p.path(), &["repair", x, "--note", "fixed the fixture"]).ok();
    let py = row_file(q.path(), files.path(), y, "ERROR");
    ledger(q.path(), &["put", y, py.to_str().unwrap()]).ok();
    sync(q.path()).ok();
    let r = sync(p.path());
    r.ok();
    assert!(r.stdout.contains("replayed 1 local commit"), "{}", r.stdout);
    let msg = git(&server, &["log", "-1", "--format=%B", rf]);
    assert!(
        msg.starts_with(&format!("repair {x}\n"))
            && msg.contains(&format!("Ledger-Repair: {x}\n"))
            && msg.contains("Ledger-Filled: 2/6"),
        "{msg}"
    );
    ledger(&server, &["verify", rf]).ok();
}

/// A ref moves only to an admitted commit: when both sides moved, `sync` admits the remote's
/// commits since the common base before it replays local commits on them. A server without
/// the hook holds a commit that changes `ledger.json` (rule 2); the machine that also filled a
/// row refuses to sync, naming that commit and the rule, and its ledger ref stays where it was
/// (before, the local commits were replayed on it and the ref moved there).
fn sync_does_not_replay_onto_remote_commits_admission_refuses(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let base = tempfile::tempdir().unwrap();
    git(base.path(), &["init", "-q", "--bare", "plain.git"]);
    let url = base.path().join("plain.git");
    let url = url.to_str().unwrap();
    let files = tempfile::tempdir().unwrap();
    let decl_path = files.path().join("decl.json");
    std::fs::write(&decl_path, pretty(&declaration_value(ID, 1))).unwrap();
    let a = machine(url, prefix);
    ledger(a.path(), &["init", decl_path.to_str().unwrap()]).ok();
    sync(a.path()).ok();
    let b = machine(url, prefix);
    sync(b.path()).ok();

    // On A, by plumbing (no hook here, none on the server): a commit that changes the header.
    let tip = git(a.path(), &["rev-parse", rf]);
    let tampered = crate::gitstore::read_files(a.path(), &tip);
    let mut tampered = tampered.clone();
    tampered.insert(
        "ledger.json".into(),
        crate::gitstore::regular(b"{}\n".to_vec()),
    );
    let bad = crate::gitstore::state_commit(a.path(), &tampered, &[&tip], "edit the header");
    git(a.path(), &["update-ref", rf, &bad]);
    git(a.path(), &["push", "-q", "origin", &format!("{rf}:{rf}")]);

    // B filled a row meanwhile; its sync must not build on the refused commit.
    let sid = "scenario/bugfix-iso-weeks/01";
    let p = row_file(b.path(), files.path(), sid, "ERROR");
    ledger(b.path(), &["put", sid, p.to_str().unwrap()]).ok();
    let before = git(b.path(), &["rev-parse", rf]);
    let r = sync(b.path());
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!("commit {bad}")) && r.stderr.contains("rule 2"),
        "{}",
        r.stderr
    );
    assert_eq!(git(b.path(), &["rev-parse", rf]), before, "nothing moved");
    ledger(b.path(), &["verify"]).ok();
    let server = base.path().join("plain.git");
    assert_eq!(git(&server, &["rev-parse", rf]), bad, "nothing pushed");
}

crate::common::under_both_prefixes!(
    setup_adds_the_fetch_refspec_once_and_rewritten_remotes_are_reported,
    machines_sync_concurrently_through_a_hooked_git_daemon,
    a_replayed_repair_is_admitted_with_a_regenerated_message,
    sync_does_not_replay_onto_remote_commits_admission_refuses,
    a_force_fetched_rewritten_remote_is_reported_and_the_local_ledger_stays,
    a_force_fetched_rewrite_is_seen_without_core_log_all_ref_updates,
);
