//! `sync` never strands a clone and is for writers (docs/reference/workflow.md, rule 7), over
//! `git daemon` with the server's hook: a local attempt the remote already filled differently
//! is kept on `refs/ledger-conflicts/<id>/<n>` while the rest is replayed and pushed, with two
//! and three clones, a clone whose every local commit conflicts, and a signed ledger; the hooks
//! leave the conflict refs alone; a ledger the remote deleted is reported, not pushed back
//! unless `--restore`.

use std::path::Path;

use serde_json::Value;

use crate::common::{
    git, git_hooked, git_run, hooked_server, ledger, ledger_hooked, new_repo, Daemon, Run,
};
use crate::gitstore::{declaration_value, hand_row_value, pretty, ID};

const X: &str = "scenario/bugfix-iso-weeks/01";
const Y: &str = "arena/sympy-matrix/01";
const Z: &str = "scenario/bugfix-iso-weeks/02";

/// A server behind `git daemon` with the hook, and a declaration file.
struct World {
    _base: tempfile::TempDir,
    server: std::path::PathBuf,
    daemon: Daemon,
    files: tempfile::TempDir,
    decl: std::path::PathBuf,
    /// Where the clones and the server keep the ledger (`ledger.refPrefix`).
    prefix: String,
}

impl World {
    fn under(prefix: &str) -> World {
        let base = tempfile::tempdir().unwrap();
        let server = hooked_server(base.path(), "ledger.git");
        crate::common::use_prefix(&server, prefix);
        let daemon = Daemon::start(base.path());
        let files = tempfile::tempdir().unwrap();
        let decl = files.path().join("decl.json");
        std::fs::write(&decl, pretty(&declaration_value(ID, 2))).unwrap();
        World {
            _base: base,
            server,
            daemon,
            files,
            decl,
            prefix: prefix.to_owned(),
        }
    }
    /// A clone with `origin` at the daemon's URL, synced (the first one declares the ledger).
    fn clone(&self) -> tempfile::TempDir {
        let rf = &format!("{}{ID}", self.prefix);
        let dir = new_repo();
        crate::common::use_prefix(dir.path(), &self.prefix);
        git(
            dir.path(),
            &["remote", "add", "origin", &self.daemon.url("ledger.git")],
        );
        if git_run(&self.server, &["rev-parse", "--verify", "-q", rf], None).code != 0 {
            ledger(dir.path(), &["init", self.decl.to_str().unwrap()]).ok();
        }
        sync(dir.path()).ok();
        dir
    }
    fn tip(&self) -> String {
        let rf = &format!("{}{ID}", self.prefix);
        git(&self.server, &["rev-parse", rf])
    }
    /// Put a hand row for `sid` with `outcome` (its reason says `why`).
    fn put(&self, dir: &Path, sid: &str, outcome: &str, why: &str) -> String {
        let rf = &format!("{}{ID}", self.prefix);
        let template = ledger(dir, &["show", "--row", sid]).ok().stdout.clone();
        let mut row = hand_row_value(&template, outcome);
        row["reason"] = Value::from(why);
        let p = self.files.path().join("row.json");
        std::fs::write(&p, pretty(&row)).unwrap();
        ledger(dir, &["put", sid, p.to_str().unwrap()]).ok();
        git(dir, &["rev-parse", rf])
    }
}

fn sync(dir: &Path) -> Run {
    ledger_hooked(dir, &["sync"])
}

/// The refs under `refs/ledger-conflicts/` of `dir`, as `name id` lines.
fn conflict_refs(dir: &Path) -> Vec<String> {
    git(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/ledger-conflicts/",
        ],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// The `reason` of row `sid` at revision `at`, as `show` prints it.
fn reason_at(dir: &Path, at: &str, sid: &str) -> String {
    // A refused attempt kept aside is no admitted state: shown only with --unverified.
    let mut args = vec!["show", "--at", at, "--row", sid];
    if at != crate::common::ledger_ref(dir, ID) {
        args.push("--unverified");
    }
    let row: Value = serde_json::from_str(&ledger(dir, &args).ok().stdout).unwrap();
    row["reason"].as_str().unwrap_or("").to_owned()
}

/// The commit of the server's ledger that filled `sid`.
fn filler(server: &Path, sid: &str) -> String {
    let out = git(
        server,
        &[
            "log",
            "--format=%H",
            &format!("--grep=Ledger-Attempt: {sid} "),
            &crate::common::ledger_ref(server, ID),
        ],
    );
    assert_eq!(out.lines().count(), 1, "{out}");
    out
}

fn two_clones_the_conflicting_attempt_is_kept_aside_and_the_rest_is_pushed(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let w = World::under(prefix);
    let a = w.clone();
    let b = w.clone();
    let base = w.tip();
    w.put(a.path(), X, "ERROR", "a's attempt");
    sync(a.path()).ok();
    let a_tip = w.tip();
    // B fills another row, then the row A filled, with other bytes (admitted locally).
    w.put(b.path(), Y, "ERROR", "b's other row");
    let b_retry = w.put(b.path(), X, "INTERRUPTED_UNGRADED", "b's attempt");
    let r = sync(b.path());
    r.expect_code(2);
    let tip = w.tip();
    assert_ne!(tip, a_tip, "B's other row was pushed");
    let kept = format!("refs/ledger-conflicts/{ID}/1");
    let by = filler(&w.server, X);
    assert_eq!(by, a_tip);
    assert_eq!(
        r.stdout,
        format!(
            "{rf}: replayed 1 local commit on origin's tip {}, pushed; 1 refused attempt kept on {kept} ({tip})\n",
            &a_tip[..12]
        )
    );
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines[0], "refused (3 reasons):", "{}", r.stderr);
    assert_eq!(
        lines[1],
        format!(
            "  {rf}: rule 4: row {X}: native_outcome: already holds an attempt (ERROR, from hand:{X}); the new row: INTERRUPTED_UNGRADED, from hand:{X}; a filled row is never replaced (a retry needs a new declared schedule, and the original row stays); origin filled this row first at commit {by}: local commit {b_retry} is not replayed, and its attempt is kept, unchanged, on {kept} (never pushed)"
        ),
        "{}",
        r.stderr
    );
    // Admission's other reasons for the same attempt (its record, rule 5) follow.
    assert!(
        lines[2].starts_with(&format!("  {rf}: rule 5: ")),
        "{}",
        r.stderr
    );
    assert!(
        lines[3].starts_with(&format!("  {rf}: rule 5: ")),
        "{}",
        r.stderr
    );
    assert_eq!(
        lines[4],
        format!(
            "hint: each refused attempt is kept on a commit on origin's tip: read it with `git ledger show --unverified --at {kept} --row {X}` (it is not an admitted state) and `git ledger diff {tip} {kept}`; sync never pushes it, the local ledger now follows origin, and the next sync has nothing to refuse"
        )
    );
    assert!(
        lines[5].starts_with("hint: running an attempt again needs a new declared schedule"),
        "{}",
        r.stderr
    );
    assert_eq!(lines.len(), 6, "{}", r.stderr);

    // The local ledger is the synced tip; the server holds A's X and B's Y, admitted.
    assert_eq!(git(b.path(), &["rev-parse", rf]), tip);
    assert_eq!(reason_at(&w.server, rf, X), "a's attempt");
    assert_eq!(reason_at(&w.server, rf, Y), "b's other row");
    ledger(&w.server, &["verify", rf]).ok();
    ledger(b.path(), &["verify"]).ok();
    // The attempt is kept unchanged on a commit on the remote tip: show and diff read it.
    let refs = conflict_refs(b.path());
    assert_eq!(refs.len(), 1, "{refs:?}");
    assert_eq!(
        git(b.path(), &["rev-parse", &format!("{kept}^")]),
        tip,
        "on the synced tip"
    );
    assert_eq!(
        git(b.path(), &["rev-parse", &format!("{kept}:rows/{X}.json")]),
        git(
            b.path(),
            &["rev-parse", &format!("{b_retry}:rows/{X}.json")]
        ),
        "the row's bytes are the local attempt's"
    );
    assert_eq!(reason_at(b.path(), &kept, X), "b's attempt");
    let changed = git(b.path(), &["diff", "--name-only", &tip, &kept]);
    assert_eq!(
        changed.lines().count(),
        2,
        "its row and its record: {changed}"
    );
    let d = ledger(b.path(), &["diff", &tip, &kept]);
    d.ok();
    assert!(
        d.stdout.contains(X) && !d.stdout.contains(Y),
        "{}",
        d.stdout
    );
    // Never pushed, and not a ledger ref: the server has none.
    assert!(git(&w.server, &["for-each-ref", "refs/ledger-conflicts/"]).is_empty());
    assert_eq!(git(&w.server, &["for-each-ref", "--format=%(refname)"]), rf);
    // The next sync has nothing to refuse, and keeps the same ref.
    let again = sync(b.path());
    again.ok();
    assert_eq!(again.stdout, format!("{rf}: up to date ({tip})\n"));
    assert_eq!(conflict_refs(b.path()), refs);
    // A converges; the base is where both started.
    sync(a.path()).ok();
    assert_eq!(git(a.path(), &["rev-parse", rf]), tip);
    assert_eq!(
        git(
            &w.server,
            &["rev-list", "--count", &format!("{base}..{rf}")]
        ),
        "2"
    );
}

fn three_clones_each_conflict_on_its_own_ref_and_every_clone_syncs_again(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let w = World::under(prefix);
    let (a, b, c) = (w.clone(), w.clone(), w.clone());
    w.put(a.path(), X, "ERROR", "a");
    sync(a.path()).ok();
    // B: X again (a conflict), then Y.
    w.put(b.path(), X, "INTERRUPTED_UNGRADED", "b");
    w.put(b.path(), Y, "ERROR", "b");
    // C: X and Y again (two conflicts), and Z, all in separate commits.
    w.put(c.path(), Y, "ERROR", "c");
    w.put(c.path(), X, "INTERRUPTED_UNGRADED", "c");
    w.put(c.path(), Z, "ERROR", "c");
    let rb = sync(b.path());
    rb.expect_code(2);
    assert!(
        rb.stdout.contains("replayed 1 local commit"),
        "{}",
        rb.stdout
    );
    let rc = sync(c.path());
    rc.expect_code(2);
    assert!(
        rc.stdout.contains("replayed 1 local commit") && rc.stdout.contains("2 refused attempts"),
        "{}",
        rc.stdout
    );
    let x_by = filler(&w.server, X);
    let y_by = filler(&w.server, Y);
    let one = format!("refs/ledger-conflicts/{ID}/1");
    let two = format!("refs/ledger-conflicts/{ID}/2");
    // Each conflict names its row, the remote commit that filled it first, and its own ref.
    assert!(
        rc.stderr.contains(&format!("row {Y}: native_record: "))
            && rc
                .stderr
                .contains(&format!("origin filled this row first at commit {y_by}"))
            && rc.stderr.contains(&format!("kept, unchanged, on {one} ")),
        "{}",
        rc.stderr
    );
    assert!(
        rc.stderr
            .contains(&format!("origin filled this row first at commit {x_by}"))
            && rc.stderr.contains(&format!("kept, unchanged, on {two} ")),
        "{}",
        rc.stderr
    );
    assert_eq!(reason_at(c.path(), &one, Y), "c");
    assert_eq!(reason_at(c.path(), &two, X), "c");
    // The server: X from A, Y from B, Z from C, every commit admitted.
    assert_eq!(reason_at(&w.server, rf, X), "a");
    assert_eq!(reason_at(&w.server, rf, Y), "b");
    assert_eq!(reason_at(&w.server, rf, Z), "c");
    ledger(&w.server, &["verify", rf]).ok();
    let tip = w.tip();
    for m in [&a, &b, &c] {
        let r = sync(m.path());
        r.ok();
        assert_eq!(git(m.path(), &["rev-parse", rf]), tip);
        ledger(m.path(), &["verify"]).ok();
    }
    assert_eq!(conflict_refs(b.path()).len(), 1);
    assert_eq!(conflict_refs(c.path()).len(), 2);
}

fn a_clone_whose_every_local_commit_conflicts_moves_to_the_remote_tip_and_pushes_nothing(
    prefix: &str,
) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let w = World::under(prefix);
    let (a, b) = (w.clone(), w.clone());
    w.put(a.path(), X, "ERROR", "a");
    sync(a.path()).ok();
    let a_tip = w.tip();
    // B fills X and repairs it: both commits are that one attempt, kept once, repaired.
    w.put(b.path(), X, "INTERRUPTED_UNGRADED", "b");
    ledger(b.path(), &["repair", X, "--note", "b fixed the fixture"]).ok();
    let b_tip = git(b.path(), &["rev-parse", rf]);
    let r = sync(b.path());
    r.expect_code(2);
    let kept = format!("refs/ledger-conflicts/{ID}/1");
    assert_eq!(
        r.stdout,
        format!(
            "{rf}: moved to origin's tip {}; 1 refused attempt kept on {kept} ({a_tip})\n",
            &a_tip[..12]
        )
    );
    assert!(
        r.stderr
            .contains(&format!("local commit {b_tip} is not replayed")),
        "the newest local version of the attempt: {}",
        r.stderr
    );
    assert_eq!(w.tip(), a_tip, "nothing pushed");
    assert_eq!(git(b.path(), &["rev-parse", rf]), a_tip);
    assert_eq!(conflict_refs(b.path()).len(), 1);
    assert_eq!(
        git(b.path(), &["rev-parse", &format!("{kept}:rows/{X}.json")]),
        git(b.path(), &["rev-parse", &format!("{b_tip}:rows/{X}.json")]),
        "the repaired attempt is what is kept"
    );
    let again = sync(b.path());
    again.ok();
    assert_eq!(again.stdout, format!("{rf}: up to date ({a_tip})\n"));
    ledger(b.path(), &["verify"]).ok();
}

/// The hooks judge ledger refs only: a conflict ref is created and deleted with the local
/// reference-transaction hook installed, while another spelling of `refs/ledgers/` is still
/// refused.
fn the_hooks_leave_conflict_refs_alone_and_still_refuse_other_spellings_of_ledger_refs(
    prefix: &str,
) {
    let w = World::under(prefix);
    let (a, b) = (w.clone(), w.clone());
    ledger(b.path(), &["hooks", "install"]).ok();
    w.put(a.path(), X, "ERROR", "a");
    sync(a.path()).ok();
    w.put(b.path(), X, "INTERRUPTED_UNGRADED", "b");
    sync(b.path()).expect_code(2);
    let kept = format!("refs/ledger-conflicts/{ID}/1");
    let id = git(b.path(), &["rev-parse", &kept]);
    let copy = format!("refs/ledger-conflicts/{ID}/copy");
    let r = git_hooked(b.path(), &["update-ref", &copy, &id], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = git_hooked(b.path(), &["update-ref", "-d", &kept], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = git_hooked(
        b.path(),
        &[
            "update-ref",
            &format!("{}{ID}", prefix.replacen("ledgers/", "LEDGERS/", 1)),
            &id,
        ],
        None,
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("in lowercase"), "{}", r.stderr);
}

fn a_signed_ledger_replays_re_signed_and_keeps_the_conflict_signed(prefix: &str) {
    if !crate::signing::have_ssh_keygen("the signed sync test") {
        return;
    }
    let a = crate::signing::Signed::under(prefix);
    let base = tempfile::tempdir().unwrap();
    let server = hooked_server(base.path(), "server.git");
    crate::common::use_prefix(&server, prefix);
    let daemon = Daemon::start(base.path());
    let url = daemon.url("server.git");
    git(a.dir(), &["remote", "add", "origin", &url]);
    sync(a.dir()).ok();
    // A second clone of the same writer (same key), on another machine.
    let b = new_repo();
    crate::common::use_prefix(b.path(), prefix);
    git(b.path(), &["remote", "add", "origin", &url]);
    git(b.path(), &["config", "gpg.format", "ssh"]);
    git(
        b.path(),
        &["config", "user.signingKey", a.alice.path.to_str().unwrap()],
    );
    sync(b.path()).ok();
    let rows: Vec<String> = {
        let v: Value = serde_json::from_str(&ledger(b.path(), &["show"]).ok().stdout).unwrap();
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["schedule_id"].as_str().unwrap().to_owned())
            .filter(|s| s.starts_with("scenario/"))
            .collect()
    };
    let (x, y) = (rows[0].as_str(), rows[1].as_str());
    a.put(x, "ERROR").ok();
    sync(a.dir()).ok();
    let put = |sid: &str, outcome: &str| {
        let template = ledger(b.path(), &["show", "--row", sid])
            .ok()
            .stdout
            .clone();
        let p = b.path().join("row.json");
        let mut row = hand_row_value(&template, outcome);
        row["reason"] = Value::from("b's attempt");
        std::fs::write(&p, pretty(&row)).unwrap();
        ledger(b.path(), &["put", sid, p.to_str().unwrap()]).ok();
    };
    put(y, "ERROR");
    put(x, "ERROR");
    let r = sync(b.path());
    r.expect_code(2);
    assert!(r.stdout.contains("replayed 1 local commit"), "{}", r.stdout);
    let sref = a.refname.as_str();
    let tip = git(&server, &["rev-parse", sref]);
    assert_eq!(git(b.path(), &["rev-parse", sref]), tip);
    ledger(&server, &["verify", sref]).ok();
    let allowed = a.allowed_file();
    let kept = "refs/ledger-conflicts/small/1".to_owned();
    for c in [tip.as_str(), &git(b.path(), &["rev-parse", &kept])] {
        let v = git_run(
            b.path(),
            &[
                "-c",
                &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
                "verify-commit",
                c,
            ],
            None,
        );
        assert_eq!(v.code, 0, "{c} is signed by the writer: {}", v.stderr);
    }
    sync(b.path()).ok();
}

/// docs/reference/workflow.md, rule 7: a ledger the remote deleted is reported and not pushed back
/// without `--restore`; a stale remote-tracking ref never makes sync say "up to date"; a ledger the
/// remote never had is pushed as new, and one it still serves is up to date.
fn a_ledger_the_remote_deleted_is_reported_and_pushed_back_only_with_restore(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    // Where sync keeps what it last fetched: Git's remote-tracking ref under the default
    // prefix, its own ref under the branch prefix (which a plain fetch force-updates).
    let tracking = if prefix == crate::common::PREFIXES[0] {
        format!("refs/remotes/origin/ledgers/{ID}")
    } else {
        format!("refs/ledger-remotes/origin/{ID}")
    };
    let w = World::under(prefix);
    let (a, b) = (w.clone(), w.clone());
    let tip = w.tip();
    let up = sync(a.path());
    up.ok();
    assert_eq!(up.stdout, format!("{rf}: up to date ({tip})\n"));
    git(&w.server, &["update-ref", "-d", rf]);
    for _ in 0..2 {
        let r = sync(a.path());
        r.expect_code(2);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
        assert_eq!(
            r.stderr,
            format!(
                "refused (1 reason):\n  {rf}: origin no longer serves this ledger: it was deleted there (its tip was {tip} when sync last saw it, kept in {tracking}); nothing is pushed back\nhint: ask whoever deleted it; if the deletion was a mistake, `git ledger sync origin --restore` pushes the ledger back (the server's hook checks it from the root)\n"
            )
        );
        assert!(git(&w.server, &["for-each-ref", prefix]).is_empty());
    }
    // A clone without the local ledger is not re-created from the stale copy either.
    git(b.path(), &["update-ref", "-d", rf]);
    sync(b.path()).expect_code(2);
    assert!(git(b.path(), &["for-each-ref", prefix]).is_empty());
    // --restore pushes it back (the server's hook admits it from the root).
    let r = ledger_hooked(a.path(), &["sync", "--restore"]);
    r.ok();
    assert_eq!(
        r.stdout,
        format!(
            "{rf}: restored on origin, which had deleted it (pushed back, new there) ({tip})\n"
        )
    );
    assert_eq!(w.tip(), tip);
    sync(a.path()).ok();
    let r = sync(b.path());
    r.ok();
    assert!(r.stdout.contains("created from origin"), "{}", r.stdout);
    // A ledger the remote never had (no remote-tracking ref) is pushed without --restore.
    let c = new_repo();
    crate::common::use_prefix(c.path(), prefix);
    let other = w.files.path().join("other.json");
    std::fs::write(&other, pretty(&declaration_value("other-slice-1", 1))).unwrap();
    git(
        c.path(),
        &["remote", "add", "origin", &w.daemon.url("ledger.git")],
    );
    ledger(c.path(), &["init", other.to_str().unwrap()]).ok();
    let r = sync(c.path());
    r.ok();
    assert!(
        r.stdout.contains(&format!(
            "{prefix}other-slice-1: pushed to origin (new there)"
        )),
        "{}",
        r.stdout
    );
}

/// Two clones repair the same row with different notes: the second repair is kept aside
/// ("changed this row first"), with a hint to repair again on the synced ledger, which then
/// syncs.
fn a_repair_the_remote_made_differently_is_kept_aside_and_can_be_made_again(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let w = World::under(prefix);
    let a = w.clone();
    w.put(a.path(), X, "ERROR", "a");
    sync(a.path()).ok();
    let b = w.clone();
    ledger(a.path(), &["repair", X, "--note", "a fixed it"]).ok();
    sync(a.path()).ok();
    let a_repair = w.tip();
    ledger(b.path(), &["repair", X, "--note", "b fixed it"]).ok();
    let r = sync(b.path());
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!(
            "origin changed this row first at commit {a_repair}"
        )) && r.stderr.contains(&format!(
            "hint: a refused repair can be made again on the synced ledger: `git ledger repair {X} --note TEXT`"
        )),
        "{}",
        r.stderr
    );
    assert_eq!(git(b.path(), &["rev-parse", rf]), a_repair);
    ledger(b.path(), &["repair", X, "--note", "b fixed it"]).ok();
    let r = sync(b.path());
    r.ok();
    assert!(r.stdout.contains("pushed to origin"), "{}", r.stdout);
    ledger(&w.server, &["verify", rf]).ok();
}

crate::common::under_both_prefixes!(
    two_clones_the_conflicting_attempt_is_kept_aside_and_the_rest_is_pushed,
    three_clones_each_conflict_on_its_own_ref_and_every_clone_syncs_again,
    a_clone_whose_every_local_commit_conflicts_moves_to_the_remote_tip_and_pushes_nothing,
    the_hooks_leave_conflict_refs_alone_and_still_refuse_other_spellings_of_ledger_refs,
    a_signed_ledger_replays_re_signed_and_keeps_the_conflict_signed,
    a_ledger_the_remote_deleted_is_reported_and_pushed_back_only_with_restore,
    a_repair_the_remote_made_differently_is_kept_aside_and_can_be_made_again,
);
