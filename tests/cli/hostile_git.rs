//! Hostile input for `import` and the Git commands: Arena stores that are not SQLite, empty,
//! of the wrong schema or locked by a writer; scenario evidence that is a symlink loop, a
//! result.json that is a directory, a FIFO or oversized; ledger commits with a symlink, a
//! submodule or a tree where a row or record file should be, or a row at another schedule
//! id's path (through `show`, `report --at` and `diff`; `verify` is covered in `gitstore.rs`);
//! `--ref` naming a non-ledger or missing ref; `show --at` a commit that is no ledger; `diff`
//! across campaigns. Each ends with its message and exit status, within a time bound, and
//! leaves the ledger file, the store and every ref exactly as they were.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{bin, git, ledger, pin_env, write, Run};
use crate::gitstore::{
    declaration_value, pretty, read_files, regular, state_commit, Entry, Fixture, ID,
};
use crate::import::Campaign;

/// Longest any of these may take (the locked store waits for its 10 s busy timeout).
const HANG: Duration = Duration::from_secs(40);

/// Run the binary in `dir`, failing (after killing it) if it runs longer than [`HANG`].
fn run(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} hung (killed after {HANG:?})");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = child.wait_with_output().unwrap();
    let run = Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    crate::schemas::check_output(args, &run);
    run
}

/// What must not change: every ref with its target, and the listed files' bytes (None when
/// absent).
fn snapshot(dir: &Path, files: &[&str]) -> (String, Vec<Option<Vec<u8>>>) {
    (
        git(dir, &["for-each-ref", "--format=%(refname) %(objectname)"]),
        files
            .iter()
            .map(|f| std::fs::read(dir.join(f)).ok())
            .collect(),
    )
}

/// Run `args`, expect exit `code` with every needle in stderr, no panic, and nothing changed.
#[track_caller]
fn expect(dir: &Path, files: &[&str], args: &[&str], code: i32, needles: &[&str]) -> Run {
    let before = snapshot(dir, files);
    let r = run(dir, args);
    assert_eq!(
        r.code, code,
        "{args:?}: exit {} (wanted {code})\n{}{}",
        r.code, r.stdout, r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    for n in needles {
        assert!(r.stderr.contains(n), "{args:?}: no {n:?} in:\n{}", r.stderr);
    }
    assert!(
        before == snapshot(dir, files),
        "{args:?} changed a ref or a file"
    );
    if std::env::var_os("SHOW_REFUSALS").is_some() {
        eprintln!("== {args:?} → {}\n{}", r.code, r.stderr);
    }
    r
}

/// A campaign with its ledger file and its ledger ref under `prefix` (after `init`).
fn campaign(prefix: &str) -> Campaign {
    let c = Campaign::new();
    crate::common::use_prefix(c.root(), prefix);
    ledger(c.root(), &["init", "campaign.json"]).ok();
    c
}

const ARENA_ID: &str = "arena/sympy-matrix-derivatives/01";
const SCENARIO_ID: &str = "scenario/bugfix-iso-weeks/01";

/// `import` of `records` in file mode and in ref mode: the same exit and message in both.
#[track_caller]
fn import_both(c: &Campaign, extra_files: &[&str], records: &[&str], code: i32, needles: &[&str]) {
    let mut files = vec!["ledger.json"];
    files.extend_from_slice(extra_files);
    let mut file_mode = vec!["import", "campaign.json", "ledger.json"];
    file_mode.extend_from_slice(records);
    expect(c.root(), &files, &file_mode, code, needles);
    let mut ref_mode = vec!["import"];
    ref_mode.extend_from_slice(records);
    expect(c.root(), &files, &ref_mode, code, needles);
}

fn arena_stores_that_are_not_arena_stores(prefix: &str) {
    let c = campaign(prefix);
    let root = c.root();
    // Not SQLite.
    write(
        root,
        "stores/text/results.sqlite3",
        "this is not a database\n".repeat(100),
    );
    import_both(
        &c,
        &["stores/text/results.sqlite3"],
        &["--arena", ARENA_ID, "stores/text", "att-0001"],
        1,
        &["not an SQLite database"],
    );
    // Empty.
    write(root, "stores/empty/results.sqlite3", "");
    import_both(
        &c,
        &["stores/empty/results.sqlite3"],
        &["--arena", ARENA_ID, "stores/empty", "att-0001"],
        2,
        &["empty file, not an Arena store"],
    );
    // SQLite, wrong schema.
    std::fs::create_dir_all(root.join("stores/other")).unwrap();
    let db = rusqlite::Connection::open(root.join("stores/other/results.sqlite3")).unwrap();
    db.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('hello');")
        .unwrap();
    drop(db);
    import_both(
        &c,
        &["stores/other/results.sqlite3"],
        &["--arena", ARENA_ID, "stores/other", "att-0001"],
        2,
        &["not an Arena store", "table store is missing"],
    );
    // Right tables, a column missing (an older or newer Arena).
    let s = c.store("stores/old", &c.arena_sql());
    let db = rusqlite::Connection::open(root.join(&s).join("results.sqlite3")).unwrap();
    db.execute_batch("ALTER TABLE attempts DROP COLUMN plan_approval;")
        .unwrap();
    drop(db);
    import_both(
        &c,
        &["stores/old/results.sqlite3"],
        &["--arena", ARENA_ID, "stores/old", "att-0001"],
        2,
        &["table attempts lacks column plan_approval"],
    );
    // The store is a file, not a directory; the directory holds no database.
    write(root, "stores/file", "x");
    import_both(
        &c,
        &[],
        &["--arena", ARENA_ID, "stores/file", "att-0001"],
        1,
        &["not a directory"],
    );
    std::fs::create_dir_all(root.join("stores/nodb")).unwrap();
    import_both(
        &c,
        &[],
        &["--arena", ARENA_ID, "stores/nodb", "att-0001"],
        1,
        &["not an Arena store"],
    );
    // Nothing was created beside the stores (read-only: no journal, no WAL).
    for d in ["text", "empty", "other"] {
        let names: Vec<String> = std::fs::read_dir(root.join("stores").join(d))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["results.sqlite3"], "{d}: {names:?}");
    }
}

/// A writer holding the store's EXCLUSIVE lock (a rollback-journal store in the middle of a
/// commit): the import waits for the busy timeout, then fails with "store is locked" (exit 1),
/// in both modes at once; the writer's transaction is unharmed and commits afterwards.
fn an_arena_store_locked_by_a_writer(prefix: &str) {
    let c = campaign(prefix);
    let s = c.store("stores/locked", &c.arena_sql());
    let db_path = c.root().join(&s).join("results.sqlite3");
    let writer = rusqlite::Connection::open(&db_path).unwrap();
    let mode: String = writer
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    writer
        .execute_batch(
            "BEGIN EXCLUSIVE; INSERT INTO evidence VALUES ('att-0001', 'written while locked');",
        )
        .unwrap();
    let root = c.root().to_path_buf();
    let store = s.clone();
    let files = ["ledger.json"];
    let file_mode = std::thread::spawn(move || {
        let args = [
            "import",
            "campaign.json",
            "ledger.json",
            "--arena",
            ARENA_ID,
            &store,
            "att-0001",
        ];
        let start = Instant::now();
        let r = expect(
            &root,
            &files,
            &args,
            1,
            &["store is locked by another process", "hint:"],
        );
        (r, start.elapsed())
    });
    let (r, took) = {
        let args = ["import", "--arena", ARENA_ID, &s, "att-0001"];
        let start = Instant::now();
        let r = expect(
            c.root(),
            &files,
            &args,
            1,
            &["store is locked by another process"],
        );
        (r, start.elapsed())
    };
    let (_, took_file) = file_mode.join().unwrap();
    assert!(
        took >= Duration::from_secs(9) && took_file >= Duration::from_secs(9),
        "{took:?} {took_file:?}"
    );
    assert!(!r.stderr.contains("panicked"));
    writer.execute_batch("COMMIT;").unwrap();
    // Once the writer committed, the same import works and sees its row.
    run(c.root(), &["import", "--arena", ARENA_ID, &s, "att-0001"]).ok();
    let row = run(c.root(), &["show", "--row", ARENA_ID]).ok().json();
    assert!(
        row["evidence_refs"]
            .to_string()
            .contains("written while locked"),
        "{row}"
    );
}

fn scenario_evidence_that_is_not_a_file(prefix: &str) {
    let c = campaign(prefix);
    let root = c.root();
    std::fs::create_dir_all(root.join("runs")).unwrap();
    // An evidence directory that is a symlink loop, and one whose result.json is.
    std::os::unix::fs::symlink("loop", root.join("runs/loop")).unwrap();
    import_both(
        &c,
        &[],
        &["--scenario", SCENARIO_ID, "runs/loop"],
        1,
        &["runs/loop", "symbolic links"],
    );
    std::fs::create_dir_all(root.join("runs/inner-loop")).unwrap();
    std::os::unix::fs::symlink("result.json", root.join("runs/inner-loop/result.json")).unwrap();
    import_both(
        &c,
        &[],
        &["--scenario", SCENARIO_ID, "runs/inner-loop"],
        1,
        &["result.json"],
    );
    // result.json is a directory: through the evidence directory, and named directly.
    std::fs::create_dir_all(root.join("runs/dir/result.json")).unwrap();
    import_both(
        &c,
        &[],
        &["--scenario", SCENARIO_ID, "runs/dir"],
        1,
        &["result.json: is not a regular file"],
    );
    import_both(
        &c,
        &[],
        &["--scenario", SCENARIO_ID, "runs/dir/result.json"],
        2,
        &["not a scenario evidence directory"],
    );
    // result.json is a FIFO nobody writes to: through the directory (not a regular file) and
    // named directly (given up after the FIFO timeout): no hang.
    std::fs::create_dir_all(root.join("runs/fifo")).unwrap();
    let made = Command::new("mkfifo")
        .arg(root.join("runs/fifo/result.json"))
        .status()
        .unwrap();
    assert!(made.success());
    import_both(
        &c,
        &[],
        &["--scenario", SCENARIO_ID, "runs/fifo"],
        1,
        &["is not a regular file"],
    );
    let start = Instant::now();
    expect(
        root,
        &["ledger.json"],
        &["import", "--scenario", SCENARIO_ID, "runs/fifo/result.json"],
        1,
        &["a FIFO that no process opened for writing"],
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    // Oversized: over --max-input-bytes, refused before parsing.
    let big = c.example_result("20261129T101500Z-a001");
    let mut bytes = serde_json::to_vec_pretty(&big).unwrap();
    bytes.extend(std::iter::repeat_n(b' ', 70_000));
    write(root, "runs/big/result.json", &bytes);
    import_both(
        &c,
        &[],
        &[
            "--scenario",
            SCENARIO_ID,
            "runs/big",
            "--max-input-bytes",
            "65536",
        ],
        2,
        &["over the input bound of 65536 bytes"],
    );
    // A result.json that is a symlink to a regular file is read (a harness may link the
    // latest run); the ledger then changes, so this is the control case.
    let good = c.run_dir("20261129T101500Z-a001");
    std::fs::create_dir_all(root.join("runs/link")).unwrap();
    std::os::unix::fs::symlink(
        root.join(&good).join("result.json"),
        root.join("runs/link/result.json"),
    )
    .unwrap();
    run(root, &["import", "--scenario", SCENARIO_ID, "runs/link"]).ok();
    run(root, &["verify"]).ok();
}

/// A ledger after `init` and one `put`, and tampered commits built on its tip with plumbing
/// (never pointed at by the ledger ref: `show --at`, `report --at` and `diff` read any commit).
fn tampered(prefix: &str) -> (Fixture, String, crate::gitstore::Files) {
    let f = Fixture::under(2, prefix);
    f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
        .ok();
    let tip = f.tip();
    let files = read_files(f.dir(), &tip);
    (f, tip, files)
}

fn ledger_commits_with_the_wrong_kind_of_entry_through_show_report_and_diff(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let (f, tip, files) = tampered(prefix);
    let dir = f.dir();
    let deferred = "scenario/bugfix-iso-weeks/02";
    let row_path = format!("rows/{deferred}.json");
    let record = files
        .keys()
        .find(|p| p.starts_with("records/"))
        .unwrap()
        .clone();
    // Rows that are not regular files, or at another schedule id's path: show, show --row,
    // report --at and diff (both ways) refuse, naming the commit and the row (exit 2).
    let mut rows: Vec<(&str, crate::gitstore::Files, Vec<String>)> = Vec::new();
    // A symlink whose target text is the row's exact canonical bytes: still not a row.
    let mut v = files.clone();
    v.insert(
        row_path.clone(),
        Entry {
            mode: "120000".into(),
            bytes: files[&row_path].bytes.clone(),
        },
    );
    rows.push((
        "row symlink",
        v,
        vec![format!("row {deferred}"), "120000 (a symlink)".into()],
    ));
    let mut v = files.clone();
    v.insert(
        row_path.clone(),
        Entry {
            mode: "160000".into(),
            bytes: tip.clone().into_bytes(),
        },
    );
    rows.push((
        "row submodule",
        v,
        vec![format!("row {deferred}"), "160000".into()],
    ));
    let mut v = files.clone();
    let e = v.remove(&row_path).unwrap();
    v.insert(format!("{row_path}/x.json"), e);
    rows.push(("row tree", v, vec![format!("row {deferred}")]));
    // The DEFERRED row of interrupted-reuse/02 at bugfix-iso-weeks/02's path.
    let mut v = files.clone();
    let other = files["rows/scenario/interrupted-reuse/02.json"]
        .bytes
        .clone();
    v.insert(row_path.clone(), regular(other));
    rows.push((
        "row path mismatch",
        v,
        vec![format!("row {deferred}"), "schedule_id".into()],
    ));
    for (what, files, needles) in rows {
        let commit = state_commit(dir, &files, &[&tip], what);
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        for args in [
            vec!["show", "--at", &commit],
            vec!["show", "--at", &commit, "--row", deferred],
            vec!["report", "--at", &commit],
            vec!["diff", &tip, &commit],
            vec!["diff", &commit, &tip],
        ] {
            let r = expect(dir, &[], &args, 2, &needles);
            assert!(
                r.stderr.contains(&format!("commit {commit}")),
                "{what} {args:?}: the commit is named:\n{}",
                r.stderr
            );
        }
        expect(dir, &[], &["verify"], 0, &[]);
        assert_eq!(f.tip(), tip, "{what}");
    }

    // Record files that are not regular files: show refuses the state verify refuses (exit 2)
    // and prints its rows only with --unverified; diff lists the path, marks B not
    // admitted and says B does not follow A by rule 5; verify refuses the chain (exit 2) once
    // the ref points there.
    let mut records: Vec<(&str, crate::gitstore::Files)> = Vec::new();
    let mut v = files.clone();
    v.insert(
        record.clone(),
        Entry {
            mode: "120000".into(),
            bytes: files[&record].bytes.clone(),
        },
    );
    records.push(("record symlink", v));
    let mut v = files.clone();
    let e = v.remove(&record).unwrap();
    v.insert(format!("{record}/x.json"), e);
    records.push(("record tree", v));
    for (what, files) in records {
        let commit = state_commit(dir, &files, &[&tip], what);
        expect(
            dir,
            &[],
            &["show", "--at", &commit],
            2,
            &["is not admitted", "--unverified"],
        );
        expect(dir, &[], &["show", "--unverified", "--at", &commit], 0, &[]);
        let d = expect(dir, &[], &["diff", &tip, &commit, "--json"], 0, &[]);
        let j = d.json();
        assert_eq!(j["admitted"]["b"], false, "{what}: {j}");
        assert_eq!(j["follows"]["follows"], false, "{what}: {j}");
        assert!(
            j["follows"]["why_not"].to_string().contains("rule"),
            "{what}: {j}"
        );
        assert!(
            j["other_paths"].to_string().contains(&record),
            "{what}: {j}"
        );
        git(dir, &["update-ref", rf, &commit]);
        let v = run(dir, &["verify"]);
        git(dir, &["update-ref", rf, &tip]);
        v.expect_code(2);
        assert!(
            v.stderr.contains(&record) && v.stderr.contains(&format!("commit {commit}")),
            "{what}: {}",
            v.stderr
        );
    }
    f.run(&["verify"]).ok();
}

fn refs_and_commits_that_are_not_ledgers(prefix: &str) {
    let rf: &str = &format!("{prefix}{ID}");
    let (f, tip, _) = tampered(prefix);
    let dir = f.dir();
    write(dir, "README", "hello\n");
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-q", "-m", "code"]);
    let row = f.hand_row("scenario/bugfix-iso-weeks/02", "ERROR");
    let row = row.to_str().unwrap();
    // --ref naming a branch: a usage error (64) that says what a ledger ref is.
    for args in [
        vec!["show", "--ref", "refs/heads/main"],
        vec!["verify", "refs/heads/main"],
        vec!["log", "refs/heads/main"],
        vec![
            "put",
            "scenario/bugfix-iso-weeks/02",
            row,
            "--ref",
            "refs/heads/main",
        ],
        vec![
            "repair",
            "scenario/bugfix-iso-weeks/01",
            "--note",
            "n",
            "--ref",
            "refs/heads/main",
        ],
        vec![
            "import",
            "--ref",
            "refs/heads/main",
            "--scenario",
            "scenario/bugfix-iso-weeks/02",
            "runs/x",
        ],
    ] {
        expect(
            dir,
            &[],
            &args,
            64,
            &[
                "refs/heads/main is not a ledger ref",
                &format!("{prefix}<declaration id>"),
            ],
        );
    }
    // --ref naming a ledger ref that does not exist (full name or declaration id): exit 1, hint.
    let nope = format!("{prefix}nope");
    for args in [
        vec!["show", "--ref", nope.as_str()],
        vec!["show", "--ref", "nope"],
        vec!["verify", nope.as_str()],
        vec!["put", "scenario/bugfix-iso-weeks/02", row, "--ref", "nope"],
        vec![
            "repair",
            "scenario/bugfix-iso-weeks/01",
            "--note",
            "n",
            "--ref",
            "nope",
        ],
    ] {
        expect(
            dir,
            &[],
            &args,
            1,
            &[&format!("ledger ref {nope} does not exist"), "hint:"],
        );
    }
    // A ledger ref pointing at a commit that is no ledger (a branch commit): refused by name.
    let code = format!("{prefix}code");
    git(dir, &["update-ref", &code, "refs/heads/main"]);
    for args in [
        vec!["show", "--ref", "code"],
        vec!["verify", code.as_str()],
        vec!["put", "scenario/bugfix-iso-weeks/02", row, "--ref", "code"],
    ] {
        expect(dir, &[], &args, 2, &["campaign.json is missing"]);
    }
    git(dir, &["update-ref", "-d", &code]);
    // show/report --at a commit that is no ledger; a tree or blob instead of a commit; a
    // revision that names nothing.
    let main = git(dir, &["rev-parse", "refs/heads/main"]);
    for args in [
        vec!["show", "--at", "main"],
        vec!["report", "--at", &main],
        vec!["diff", &tip, "main"],
    ] {
        expect(dir, &[], &args, 2, &["campaign.json is missing", &main]);
    }
    let tree = git(dir, &["rev-parse", &format!("{tip}^{{tree}}")]);
    let r = expect(dir, &[], &["show", "--at", &tree], 1, &[]);
    assert!(
        r.stderr.contains(&tree[..7]) || r.stderr.contains("tree"),
        "{}",
        r.stderr
    );
    expect(
        dir,
        &[],
        &["show", "--at", "no-such-rev"],
        1,
        &["no-such-rev"],
    );
    // diff between two campaigns: refused, naming both declarations.
    std::fs::write(
        f.file("other.json"),
        pretty(&declaration_value("other-campaign", 2)),
    )
    .unwrap();
    f.run(&["init", f.file("other.json").to_str().unwrap()])
        .ok();
    expect(
        dir,
        &[],
        &["diff", rf, &format!("{prefix}other-campaign")],
        2,
        &["different declarations", ID, "other-campaign"],
    );
    expect(
        dir,
        &[],
        &["diff", &tip, &format!("{prefix}other-campaign"), "--json"],
        2,
        &["different declarations"],
    );
}

crate::common::under_both_prefixes!(
    arena_stores_that_are_not_arena_stores,
    an_arena_store_locked_by_a_writer,
    scenario_evidence_that_is_not_a_file,
    ledger_commits_with_the_wrong_kind_of_entry_through_show_report_and_diff,
    refs_and_commits_that_are_not_ledgers,
);
