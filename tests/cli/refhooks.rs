//! Refs the hooks guard, reproduced with real Git (issue 15, items 2, 3, 4, 5, 7 and 13): ledger
//! refs spelled in another case on a case-insensitive server, replace refs that make `git log`
//! lie about ledger objects, deletion of a packed ledger ref, reftable repositories, a forged
//! declaration-cache entry, and a pre-receive killed with SIGKILL.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{git, git_hooked, git_run, hooked_server, ledger, Run};
use crate::gitstore::{canonical_row, read_files, regular, state_commit, Files, Fixture, ID};

const FILLED: &str = "scenario/bugfix-iso-weeks/01";
const DEFERRED: &str = "scenario/bugfix-iso-weeks/02";

/// A clone with a ledger (init + one put) and a hooked bare server holding it.
struct Setup {
    f: Fixture,
    tip: String,
    files: Files,
    _servers: tempfile::TempDir,
    server: PathBuf,
}

impl Setup {
    /// With the ledgers under `prefix`, in the clone and on the server.
    fn under(prefix: &str) -> Self {
        let f = Fixture::under(2, prefix);
        f.put(FILLED, "INTERRUPTED_UNGRADED").ok();
        let tip = f.tip();
        let files = read_files(f.dir(), &tip);
        let servers = tempfile::tempdir().unwrap();
        let server = hooked_server(servers.path(), "server.git");
        crate::common::use_prefix(&server, prefix);
        let s = Setup {
            f,
            tip,
            files,
            _servers: servers,
            server,
        };
        s.push(&format!("{0}:{0}", s.f.refname)).ok();
        s
    }

    fn dir(&self) -> &Path {
        self.f.dir()
    }

    fn url(&self) -> &str {
        self.server.to_str().unwrap()
    }

    fn push(&self, spec: &str) -> Run {
        git_hooked(self.dir(), &["push", "--porcelain", self.url(), spec], None)
    }

    fn server_refs(&self) -> String {
        git(&self.server, &["for-each-ref"])
    }

    fn row(&self, sid: &str) -> Value {
        serde_json::from_slice(&self.files[&format!("rows/{sid}.json")].bytes).unwrap()
    }

    /// A commit on the tip that edits the filled row (rule 4 refuses it).
    fn tampered(&self) -> String {
        let mut row = self.row(FILLED);
        row["reason"] = json!("edited later");
        let mut files = self.files.clone();
        files.insert(format!("rows/{FILLED}.json"), regular(canonical_row(&row)));
        state_commit(self.dir(), &files, &[&self.tip], "edit")
    }

    /// Fill the deferred row with `put` (a writer's commit, message and all); returns it.
    fn put_fill(&self) -> String {
        self.f.put(DEFERRED, "ERROR").ok();
        self.f.tip()
    }

    /// A commit on the tip that fills the deferred row with `outcome` (a hand record), made
    /// with plumbing.
    fn fill(&self, outcome: &str) -> String {
        let mut fill = self.row(DEFERRED);
        fill["native_outcome"] = json!(outcome);
        fill["reason"] = json!("crashed");
        let rec = b"record bytes".to_vec();
        fill["native_record"] =
            json!({"kind": "hand", "id": DEFERRED, "sha256": git_ledger::sha256_hex(&rec)});
        let mut files = self.files.clone();
        files.insert(
            format!("rows/{DEFERRED}.json"),
            regular(canonical_row(&fill)),
        );
        let key = format!("hand:{DEFERRED}");
        files.insert(git_ledger::git::layout::record_path(&key), regular(rec));
        let message = format!(
            "put {DEFERRED}: {outcome}\n\nLedger-Attempt: {DEFERRED}\nLedger-Filled: 2/6\n"
        );
        state_commit(self.dir(), &files, &[&self.tip], &message)
    }
}

#[track_caller]
fn refused(r: &Run, needles: &[&str]) {
    assert_ne!(r.code, 0, "must fail:\n{}\n{}", r.stdout, r.stderr);
    for n in needles {
        assert!(r.stderr.contains(n), "no {n:?} in:\n{}", r.stderr);
    }
}

/// Item 2: on a case-insensitive server `refs/LEDGERS/<id>` is the file of `refs/ledgers/<id>`
/// (and `refs/heads/LEDGERS/<id>` that of `refs/heads/ledgers/<id>`)
/// (simulated with a directory symlink, as the attacker did): every other spelling is refused,
/// by pre-receive, by reference-transaction and by the tool's own `--ref`.
fn ledger_refs_spelled_in_another_case_are_refused(prefix: &str) {
    // The prefix spelled in other cases: its last component in capitals and capitalised, its
    // first in capitals and capitalised.
    let up = prefix.replacen("ledgers/", "LEDGERS/", 1);
    let cap = prefix.replacen("ledgers/", "Ledgers/", 1);
    let big = prefix.replacen("refs/", "REFS/", 1);
    let title = prefix.replacen("refs/", "Refs/", 1);
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let s = Setup::under(prefix);
    std::os::unix::fs::symlink("ledgers", s.server.join(up.trim_end_matches('/'))).unwrap();
    let before = s.server_refs();
    let bad = s.tampered();
    for spelling in [
        format!("{up}{ID}"),
        format!("{cap}{ID}"),
        format!("{big}{ID}"),
    ] {
        let r = s.push(&format!("{bad}:{spelling}"));
        assert_ne!(r.code, 0, "{spelling}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(s.server_refs(), before, "{spelling}: the server moved");
    }
    let r = s.push(&format!("{bad}:{up}{ID}"));
    refused(&r, &[&format!("{up}{ID}"), "lowercase"]);
    // Even an admissible commit is refused under another spelling; the lowercase one passes.
    let good = s.put_fill();
    refused(&s.push(&format!("{good}:{up}{ID}")), &["lowercase"]);
    refused(&s.push(&format!(":{up}{ID}")), &["lowercase"]);
    assert_eq!(s.server_refs(), before);
    s.push(&format!("{good}:{rf}")).ok();

    // reference-transaction in a clone on such a file system.
    let dir = s.dir();
    ledger(dir, &["hooks", "install"]).ok();
    std::os::unix::fs::symlink("ledgers", dir.join(".git").join(up.trim_end_matches('/'))).unwrap();
    let tip = s.f.tip();
    let r = git_hooked(dir, &["update-ref", &format!("{up}{ID}"), &bad], None);
    refused(&r, &["lowercase"]);
    let r = git_hooked(dir, &["update-ref", "-d", &format!("{cap}{ID}")], None);
    refused(&r, &["lowercase"]);
    assert_eq!(s.f.tip(), tip);

    // The tool's --ref: every other spelling is a usage error naming the lowercase one.
    for spelling in [format!("{up}{ID}"), format!("{title}{ID}")] {
        let r = ledger(dir, &["show", "--ref", &spelling]);
        r.expect_code(64);
        assert!(r.stderr.contains(rf), "{}", r.stderr);
    }
    ledger(dir, &["show", "--ref", rf]).ok();
}

/// Item 3: a replace ref for a ledger commit, tree or row blob makes `git log` and `git show`
/// lie; pre-receive and reference-transaction refuse it, `verify` names one that exists.
fn replace_refs_covering_ledger_objects_are_refused(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let s = Setup::under(prefix);
    let before = s.server_refs();
    let dir = s.dir();
    // A forged commit with the tip's tree and a lying subject, and a forged row blob.
    let tree = git(dir, &["rev-parse", &format!("{}^{{tree}}", s.tip)]);
    let parent = git(dir, &["rev-parse", &format!("{}^", s.tip)]);
    let forged = git(
        dir,
        &[
            "commit-tree",
            &tree,
            "-p",
            &parent,
            "-m",
            "PASS -> verified delivery",
        ],
    );
    let row_blob = git(
        dir,
        &["rev-parse", &format!("{}:rows/{FILLED}.json", s.tip)],
    );
    let forged_blob = git_run(
        dir,
        &["hash-object", "-w", "--stdin"],
        Some(b"{\"native_outcome\": \"PASS\"}\n"),
    )
    .stdout
    .trim()
    .to_owned();
    let root_tree = tree.clone();
    let rows_tree = git(dir, &["rev-parse", &format!("{}:rows", s.tip)]);
    for (what, target, replacement) in [
        ("the tip commit", s.tip.as_str(), forged.as_str()),
        ("the root commit", parent.as_str(), forged.as_str()),
        ("a row blob", row_blob.as_str(), forged_blob.as_str()),
        ("the root tree", root_tree.as_str(), rows_tree.as_str()),
    ] {
        let r = s.push(&format!("{replacement}:refs/replace/{target}"));
        assert_ne!(r.code, 0, "{what}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("refs/replace/{target}")) && r.stderr.contains("replace"),
            "{what}: {}",
            r.stderr
        );
        assert_eq!(s.server_refs(), before, "{what}");
        // Another spelling of refs/replace/ is the same directory on such a server.
        let r = s.push(&format!("{replacement}:refs/REPLACE/{target}"));
        assert_ne!(r.code, 0, "{what}: {}", r.stderr);
    }
    assert_eq!(
        git(&s.server, &["log", "-1", "--format=%s", rf]),
        git(dir, &["log", "-1", "--format=%s", rf])
    );
    // A ledger update and a replace ref of one of its new objects in the same push.
    let good = s.put_fill();
    let r = git_hooked(
        dir,
        &[
            "push",
            "--porcelain",
            "--atomic",
            s.url(),
            &format!("{good}:{rf}"),
            &format!("{forged}:refs/replace/{good}"),
        ],
        None,
    );
    refused(&r, &[&format!("refs/replace/{good}")]);
    assert_eq!(s.server_refs(), before);

    // A replace ref pushed before the ledger object it replaces: the ledger push is refused.
    let r = s.push(&format!("{forged}:refs/replace/{good}"));
    r.ok();
    refused(
        &s.push(&format!("{good}:{rf}")),
        &[&format!(
            "{rf}: commit {good} of this ledger is replaced by the existing refs/replace/{good}"
        )],
    );
    s.push(&format!(":refs/replace/{good}")).ok();
    let before = s.server_refs();

    // A replace ref of an object no ledger holds passes, and can be deleted.
    git(dir, &["commit", "-q", "--allow-empty", "-m", "branch"]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    s.push(&format!("{forged}:refs/replace/{head}")).ok();
    s.push(&format!(":refs/replace/{head}")).ok();
    // Unless the server refuses every replace ref.
    git(&s.server, &["config", "ledger.refuseReplaceRefs", "true"]);
    refused(
        &s.push(&format!("{forged}:refs/replace/{head}")),
        &["ledger.refuseReplaceRefs"],
    );
    git(&s.server, &["config", "ledger.refuseReplaceRefs", "maybe"]);
    refused(
        &s.push(&format!("{forged}:refs/replace/{head}")),
        &["ledger.refuseReplaceRefs"],
    );
    git(&s.server, &["config", "ledger.refuseReplaceRefs", "false"]);
    assert_eq!(s.server_refs(), before);

    // reference-transaction in the clone: `git replace` and update-ref.
    ledger(dir, &["hooks", "install"]).ok();
    let r = git_hooked(dir, &["replace", &s.tip, &forged], None);
    refused(&r, &["replace"]);
    let r = git_hooked(
        dir,
        &[
            "update-ref",
            &format!("refs/replace/{row_blob}"),
            &forged_blob,
        ],
        None,
    );
    refused(&r, &["replace"]);
    assert!(git(dir, &["for-each-ref", "refs/replace/"]).is_empty());
    git_hooked(dir, &["replace", &head, &forged], None).ok();
    git_hooked(dir, &["replace", "-d", &head], None).ok();

    // verify names an existing replace ref that covers a ledger object (made without hooks).
    std::fs::remove_file(dir.join(".git/hooks/reference-transaction")).unwrap();
    ledger(dir, &["verify"]).ok();
    git(dir, &["replace", &row_blob, &forged_blob]);
    let r = ledger(dir, &["verify"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!("refs/replace/{row_blob}")),
        "{}",
        r.stderr
    );
    // With the hook back, packing refs (which writes the replace ref into packed-refs) still
    // works; deleting the replace ref passes.
    ledger(dir, &["hooks", "install"]).ok();
    git_hooked(dir, &["pack-refs", "--all"], None).ok();
    git_hooked(dir, &["gc", "-q"], None).ok();
    ledger(dir, &["verify"]).expect_code(2);
    git_hooked(dir, &["replace", "-d", &row_blob], None).ok();
    ledger(dir, &["verify"]).ok();
}

/// Item 4: a packed ledger ref cannot be deleted, by any of Git's ways of deleting a ref;
/// `git pack-refs` (which prunes the loose copies) still works.
fn packed_ledger_refs_cannot_be_deleted(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let s = Setup::under(prefix);
    let dir = s.dir();
    ledger(dir, &["hooks", "install"]).ok();
    let tip = s.tip.as_str();
    let zero = "0000000000000000000000000000000000000000";
    git_hooked(dir, &["pack-refs", "--all"], None).ok();
    assert!(!dir.join(".git").join(rf).exists(), "the ref is packed");
    let ways: Vec<(&str, Vec<String>, Option<String>)> = vec![
        (
            "update-ref -d",
            vec!["update-ref".into(), "-d".into(), rf.into()],
            None,
        ),
        (
            "update-ref -d with the old value",
            vec!["update-ref".into(), "-d".into(), rf.into(), tip.into()],
            None,
        ),
        (
            "--stdin delete",
            vec!["update-ref".into(), "--stdin".into()],
            Some(format!("delete {rf}\n")),
        ),
        (
            "--stdin delete with the old value",
            vec!["update-ref".into(), "--stdin".into()],
            Some(format!("delete {rf} {tip}\n")),
        ),
        (
            "--stdin -z delete",
            vec!["update-ref".into(), "--stdin".into(), "-z".into()],
            Some(format!("delete {rf}\0{tip}\0")),
        ),
        (
            "--stdin update to zero",
            vec!["update-ref".into(), "--stdin".into()],
            Some(format!("update {rf} {zero} {tip}\n")),
        ),
        (
            "a transaction",
            vec!["update-ref".into(), "--stdin".into()],
            Some(format!("start\ndelete {rf}\nprepare\ncommit\n")),
        ),
    ];
    let check = |state: &str| {
        for (what, args, stdin) in &ways {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = git_hooked(dir, &args, stdin.as_ref().map(|s| s.as_bytes()));
            assert_ne!(r.code, 0, "{state}: {what}: deleted\n{}", r.stderr);
            assert_eq!(
                git(dir, &["rev-parse", rf]),
                s.f.tip(),
                "{state}: {what}: the ref moved"
            );
        }
    };
    check("packed");
    // Loose and packed with the same value, loose only.
    git_hooked(dir, &["update-ref", rf, tip], None).ok();
    std::fs::write(dir.join(".git").join(rf), format!("{tip}\n")).unwrap();
    check("loose and packed");
    s.f.put(DEFERRED, "ERROR").ok();
    check("loose over an older packed value");
    // pack-refs with and without --prune still works, and keeps the ref.
    let now = s.f.tip();
    git_hooked(dir, &["pack-refs", "--all", "--no-prune"], None).ok();
    git_hooked(dir, &["pack-refs", "--all", "--prune"], None).ok();
    git_hooked(dir, &["pack-refs", "--all"], None).ok();
    git_hooked(dir, &["gc", "-q"], None).ok();
    assert_eq!(s.f.tip(), now);
    assert!(!dir.join(".git").join(rf).exists());
    s.f.run(&["verify"]).ok();
    // Deletion by push, into a server whose ledger ref is packed.
    git(&s.server, &["pack-refs", "--all"]);
    let r = s.push(&format!(":{rf}"));
    refused(&r, &["deleting a ledger ref is refused"]);
    git(&s.server, &["rev-parse", rf]);
}

/// The scripts a reftable server needs by hand (`hooks install` refuses a reftable repository).
fn install_scripts_by_hand(git_dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for name in ["pre-receive", "reference-transaction"] {
        let src = crate::common::project_root().join("hooks").join(name);
        let dst = git_dir.join("hooks").join(name);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(&src, &dst).unwrap();
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Item 5: in a reftable repository every command that reads or writes ledger refs refuses
/// before writing anything (exit 1, naming the extension), and the hooks fail closed.
fn reftable_repositories_are_refused_before_anything_is_written(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let base = tempfile::tempdir().unwrap();
    let decl = Fixture::under(2, prefix);
    let decl_path = decl.decl();
    let decl_path = decl_path.to_str().unwrap();
    let dir = base.path().join("r");
    git(
        base.path(),
        &["init", "-q", "--ref-format=reftable", "-b", "main", "r"],
    );
    crate::common::use_prefix(&dir, prefix);
    git(&dir, &["commit", "-q", "--allow-empty", "-m", "first"]);
    let listing = |d: &Path| {
        let mut out = Vec::new();
        for e in walk(&d.join(".git")) {
            out.push(e);
        }
        out.sort();
        out
    };
    let before = listing(&dir);
    let refs_before = git(&dir, &["for-each-ref"]);
    let row = decl.hand_row(DEFERRED, "ERROR");
    for args in [
        vec!["init", decl_path],
        vec!["show"],
        vec!["show", "--ref", ID],
        vec!["log"],
        vec!["verify"],
        vec!["report"],
        vec!["report", "--at", "HEAD"],
        vec!["diff", "HEAD", "HEAD"],
        vec!["sync"],
        vec!["put", DEFERRED, row.to_str().unwrap()],
        vec!["hooks", "install"],
    ] {
        let r = ledger(&dir, &args);
        r.expect_code(1);
        assert!(
            r.stderr.contains("extensions.refStorage") && r.stderr.contains("reftable"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("git refs migrate"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(listing(&dir), before, "{args:?} wrote something");
    }
    assert_eq!(git(&dir, &["for-each-ref"]), refs_before);
    // What reads no ref is not refused: `check` reads the pinned commit by its id (here one
    // that does not exist, so it fails for that reason instead).
    let r = ledger(&dir, &["check", decl_path]);
    assert_ne!(r.code, 0);
    assert!(!r.stderr.contains("extensions.refStorage"), "{}", r.stderr);

    // A bare reftable server with the scripts: a ledger push is refused, a branch push passes.
    let server = base.path().join("server.git");
    git(
        base.path(),
        &[
            "init",
            "-q",
            "--bare",
            "--ref-format=reftable",
            "-b",
            "main",
            "server.git",
        ],
    );
    install_scripts_by_hand(&server);
    crate::common::use_prefix(&server, prefix);
    let url = server.to_str().unwrap();
    let r = git_hooked(decl.dir(), &["push", url, &format!("{rf}:{rf}")], None);
    refused(&r, &["extensions.refStorage"]);
    assert!(git(&server, &["for-each-ref"]).is_empty());
    git(decl.dir(), &["commit", "-q", "--allow-empty", "-m", "b"]);
    git_hooked(decl.dir(), &["push", url, "HEAD:refs/heads/main"], None).ok();
    // reference-transaction in a reftable clone.
    install_scripts_by_hand(&dir.join(".git"));
    let r = git_hooked(&dir, &["update-ref", rf, "HEAD"], None);
    refused(&r, &["extensions.refStorage"]);
    git_hooked(&dir, &["update-ref", "refs/heads/other", "HEAD"], None).ok();
}

/// Every path below `dir` with its size (what `git ledger` must not have changed).
fn walk(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            out.push((
                p.display().to_string(),
                if m.is_dir() { 0 } else { m.len() },
            ));
            if m.is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

/// Forge the (only) declaration-cache entry of `git_dir`: add `outcome` to the native outcomes
/// of the scenario task, with the entry's checksum recomputed.
pub fn forge_cache(git_dir: &Path, outcome: &str) {
    let dir = git_dir.join("git-ledger/declarations");
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let text = std::fs::read(&entries[0]).unwrap();
    let at = text.windows(2).position(|w| w == b"\n\n").unwrap();
    let head = std::str::from_utf8(&text[..at]).unwrap();
    let body = &text[at + 2..];
    let parts_len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("parts "))
        .unwrap()
        .parse()
        .unwrap();
    // The body: the parts (with the task ids and where each task's JSON ends), then each
    // task's JSON back to back.
    let (parts, tasks) = body.split_at(parts_len);
    let mut parts: Value = serde_json::from_slice(parts).unwrap();
    let ends: Vec<usize> = serde_json::from_value(parts["task_ends"].clone()).unwrap();
    let mut starts = vec![0];
    starts.extend(&ends[..ends.len() - 1]);
    let mut tasks: Vec<Value> = (starts.iter().zip(&ends))
        .map(|(&a, &b)| serde_json::from_slice(&tasks[a..b]).unwrap())
        .collect();
    let task = tasks
        .iter_mut()
        .find(|t| t["id"] == "scenario/bugfix-iso-weeks")
        .unwrap();
    task["native_outcomes"]
        .as_array_mut()
        .unwrap()
        .push(json!(outcome));
    let mut tasks_json = Vec::new();
    let mut new_ends = Vec::new();
    for t in &tasks {
        tasks_json.extend(serde_json::to_vec(t).unwrap());
        new_ends.push(tasks_json.len());
    }
    parts["task_ends"] = json!(new_ends);
    let parts = serde_json::to_vec(&parts).unwrap();
    let mut body = parts.clone();
    body.extend_from_slice(&tasks_json);
    let mut lines: Vec<String> = Vec::new();
    for l in head.lines() {
        if l.starts_with("parts ") {
            lines.push(format!("parts {}", parts.len()));
        } else if l.starts_with("check ") {
            lines.push(format!("check {:08x}", crc32fast::hash(&body)));
        } else {
            lines.push(l.to_owned());
        }
    }
    let mut out = lines.join("\n").into_bytes();
    out.extend_from_slice(b"\n\n");
    out.extend_from_slice(&body);
    std::fs::write(&entries[0], out).unwrap();
}

/// Item 7: a forged declaration-cache entry on the server (or in a clone) changes neither
/// pre-receive's verdict nor `report --at`'s: both refuse what `verify` refuses.
fn a_forged_declaration_cache_entry_changes_no_verdict(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let s = Setup::under(prefix);
    // The hook parsed the declaration when it admitted the creation, and kept it.
    assert!(s.server.join("git-ledger/declarations").is_dir());
    forge_cache(&s.server, "VERIFIED");
    let bad = s.fill("VERIFIED");
    let before = s.server_refs();
    let r = s.push(&format!("{bad}:{rf}"));
    refused(&r, &["VERIFIED"]);
    assert_eq!(s.server_refs(), before);

    // report --at in a clone whose entry is forged the same way.
    let dir = s.dir();
    ledger(dir, &["report", "--json"]).ok();
    forge_cache(&dir.join(".git"), "VERIFIED");
    let r = ledger(dir, &["report", "--at", &bad]);
    r.expect_code(2);
    assert!(r.stderr.contains("VERIFIED"), "{}", r.stderr);
    // The good fill still passes both.
    let good = s.put_fill();
    ledger(dir, &["report", "--at", &good]).ok();
    s.push(&format!("{good}:{rf}")).ok();
}

/// Item 13: a pre-receive killed with SIGKILL leaves no `git-ledger-objects-*` directory
/// behind (it lives inside Git's quarantine, which Git removes when the hook fails).
fn a_killed_pre_receive_leaves_no_temporary_directory(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    use std::os::unix::fs::PermissionsExt;
    let s = Setup::under(prefix);
    let tmp = tempfile::tempdir().unwrap();
    // A wrapper in place of the binary: starts the real hook with a standard input that stays
    // open, waits until its object directory exists, and kills it with SIGKILL.
    let wrapper = tmp.path().join("killer");
    let script = format!(
        r#"#!/bin/sh
mkfifo "{fifo}"
sleep 60 > "{fifo}" 2>/dev/null &
holder=$!
"{bin}" hook pre-receive < "{fifo}" &
pid=$!
n=0
while [ $n -lt 400 ]; do
	for d in "$TMPDIR"/git-ledger-objects-* "$GIT_QUARANTINE_PATH"/git-ledger-objects-*; do
		if [ -d "$d" ]; then
			echo "$d" > "{seen}"; kill -9 $pid; wait $pid; kill $holder; exit 1
		fi
	done
	sleep 0.05; n=$((n+1))
done
kill -9 $pid; kill $holder
exit 1
"#,
        bin = crate::common::bin().display(),
        seen = tmp.path().join("seen").display(),
        fifo = tmp.path().join("stdin").display(),
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let good = s.put_fill();
    let mut cmd = std::process::Command::new("git");
    crate::common::pin_env(&mut cmd)
        .env("PATH", crate::common::path_with_bin())
        .env("GIT_LEDGER", &wrapper)
        .env("TMPDIR", &scratch)
        .current_dir(s.dir())
        .args(["push", s.url(), &format!("{good}:{rf}")]);
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let seen = std::fs::read_to_string(tmp.path().join("seen"))
        .expect("the hook's object directory was seen before the kill");
    assert!(seen.contains("git-ledger-objects-"), "{seen}");
    let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().collect();
    assert!(left.is_empty(), "left in the temporary directory: {left:?}");
    assert!(!Path::new(seen.trim()).exists(), "{seen} is still there");
    let incoming = std::fs::read_dir(s.server.join("objects"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("incoming") || n.contains("git-ledger"))
        .collect::<Vec<_>>();
    assert!(incoming.is_empty(), "{incoming:?}");
    // The next push (the real hook) is admitted.
    s.push(&format!("{good}:{rf}")).ok();
}

crate::common::under_both_prefixes!(
    ledger_refs_spelled_in_another_case_are_refused,
    replace_refs_covering_ledger_objects_are_refused,
    packed_ledger_refs_cannot_be_deleted,
    reftable_repositories_are_refused_before_anything_is_written,
    a_forged_declaration_cache_entry_changes_no_verdict,
    a_killed_pre_receive_leaves_no_temporary_directory,
);
