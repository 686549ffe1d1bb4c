//! `--dry-run` of `import`, `put` and `repair` (nothing written: no ref moved, no object in the
//! object database, no byte of a ledger file changed), its output against what the real command
//! then writes, and its refusals against the real command's.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{git, ledger, Run};
use crate::gitstore::Fixture;
use crate::import::Campaign;

/// Every object and ref of a repository, its loose-object and pack counts, and every byte of
/// every file under it (`.git` included): what a dry run must leave exactly as it was.
fn snapshot(dir: &Path) -> (String, String, String, BTreeMap<String, Vec<u8>>) {
    (
        git(
            dir,
            &[
                "cat-file",
                "--batch-all-objects",
                "--batch-check",
                "--unordered",
            ],
        ),
        git(dir, &["for-each-ref", "--format=%(refname) %(objectname)"]),
        git(dir, &["count-objects", "-v"]),
        every_byte(dir),
    )
}

/// Panic, naming what changed, unless `after` is `before` (two [`snapshot`]s).
#[track_caller]
fn unchanged(
    before: &(String, String, String, BTreeMap<String, Vec<u8>>),
    after: &(String, String, String, BTreeMap<String, Vec<u8>>),
    what: &str,
) {
    assert_eq!(before.0, after.0, "{what}: objects differ");
    assert_eq!(before.1, after.1, "{what}: refs differ");
    assert_eq!(before.2, after.2, "{what}: object counts differ");
    let changed: Vec<&String> = before
        .3
        .keys()
        .chain(after.3.keys())
        .filter(|k| before.3.get(*k) != after.3.get(*k))
        .collect();
    assert!(changed.is_empty(), "{what}: files changed: {changed:?}");
}

/// Every file under `dir`, by path, with its bytes (a symbolic link: its target).
fn every_byte(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let t = e.file_type().unwrap();
            let name = p.strip_prefix(root).unwrap().display().to_string();
            if t.is_dir() {
                walk(root, &p, out);
            } else if t.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(name, target.display().to_string().into_bytes());
            } else {
                out.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn example_import_args(c: &Campaign) -> Vec<String> {
    let mut args = crate::make_examples::import_args(&c.examples(), false);
    args.extend(crate::make_examples::runtime_args(&c.examples()));
    args
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn import_dry_run_in_file_mode_shows_the_rows_and_leaves_the_file() {
    let c = Campaign::new();
    let args = example_import_args(&c);
    let before = c.ledger_bytes();
    let repo = snapshot(c.root());
    let mut dry = strs(&args);
    dry.push("--dry-run");
    let r = c.import(&dry);
    r.ok();
    unchanged(&repo, &snapshot(c.root()), "a dry run in file mode");
    assert_eq!(
        c.ledger_bytes(),
        before,
        "a dry run changed the ledger file"
    );
    assert!(
        r.stdout
            .contains("would import 9 attempts (9/26 rows filled)\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(
        "scenario/feature-csv-export/01  PASS (COMPLETE)  native pass without complete evidence\n"
    ), "{}", r.stdout);
    assert!(
        r.stdout.contains("  gaps: no oracle checks\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with(
            "dry run: nothing written; admitted on ledger.json; after the write 9/26 rows would be filled\n"
        ),
        "{}",
        r.stdout
    );
    dry.push("--json");
    let v = c.import(&dry).ok().json();
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["command"], "import");
    assert_eq!(v["message"], serde_json::Value::Null);
    assert_eq!(v["filled"], 9);
    assert_eq!(c.ledger_bytes(), before);
    unchanged(&repo, &snapshot(c.root()), "a dry run in file mode");
    // The real import writes exactly the rows the dry run showed, with the same outcomes.
    let mut real = strs(&args);
    real.push("--json");
    let done = c.import(&real).ok().json();
    let shown: Vec<(String, String, String)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["schedule_id"].as_str().unwrap().to_owned(),
                r["native_outcome"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut written: Vec<(String, String, String)> = done["imported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["schedule_id"].as_str().unwrap().to_owned(),
                r["native_outcome"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let position = |id: &str| c.decl.schedule_position(id).unwrap();
    written.sort_by_key(|(id, _, _)| position(id));
    assert_eq!(shown, written);
    assert_ne!(c.ledger_bytes(), before);
}

#[test]
fn a_refused_dry_run_is_the_real_commands_refusal() {
    let c = Campaign::new();
    let run = c.run_dir("20261129T101500Z-a001");
    let args = ["--scenario", "scenario/feature-csv-export/01", run.as_str()];
    let before = c.ledger_bytes();
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let d = c.import(&dry);
    d.expect_code(2);
    assert!(
        d.stderr.contains("a record of another task or kind"),
        "{}",
        d.stderr
    );
    let real = c.import(&args);
    real.expect_code(2);
    assert_eq!(d.stderr, real.stderr);
    assert_eq!(c.ledger_bytes(), before);
    // Under --json the refusal is the refusal document.
    dry.push("--json");
    let v = c.import(&dry);
    v.expect_code(2);
    assert_eq!(v.json()["refused"], true);
}

/// The commit message a dry run printed, read back from its indented lines.
fn shown_message(stdout: &str) -> String {
    let (_, after) = stdout
        .split_once("its message:\n")
        .unwrap_or_else(|| panic!("no message in:\n{stdout}"));
    let mut out = String::new();
    for line in after.lines() {
        out.push_str(line.strip_prefix("    ").unwrap_or(line));
        out.push('\n');
    }
    out
}

fn last_message(dir: &Path) -> String {
    let r = crate::common::ledger_ref(dir, crate::gitstore::ID);
    format!("{}\n", git(dir, &["log", "-1", "--format=%B", &r]))
}

fn put_and_repair_dry_runs_write_no_object_and_name_the_commit_the_real_write_makes(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let sid = "scenario/bugfix-iso-weeks/01";
    let row = f.hand_row(sid, "INTERRUPTED_UNGRADED");
    let row = row.to_str().unwrap();
    let before = snapshot(f.dir());
    let tip = f.tip();
    let d = f.run(&["put", sid, row, "--dry-run"]);
    d.ok();
    unchanged(
        &before,
        &snapshot(f.dir()),
        "a dry run wrote an object or moved a ref",
    );
    assert!(
        d.stdout.starts_with(&format!(
            "{sid}  INTERRUPTED_UNGRADED (INCOMPLETE)  ungraded  [revision null; runtime not recorded; profile differs]\n"
        )),
        "{}",
        d.stdout
    );
    assert!(
        d.stdout.contains(&format!(
            "dry run: nothing written; admitted on {rf} {tip} (0/6 filled); after the commit 1/6 rows would be filled; its message:\n    put {sid}: INTERRUPTED_UNGRADED -> ungraded\n"
        )),
        "{}",
        d.stdout
    );
    let v = f.run(&["put", sid, row, "--dry-run", "--json"]).ok().json();
    unchanged(&before, &snapshot(f.dir()), "a dry run");
    assert_eq!(v["rows"][0]["schedule_id"], sid);
    assert_eq!(v["rows"][0]["outcome"], "ungraded");
    assert_eq!(v["rows"][0]["repair"], false);
    let message = v["message"].as_str().unwrap().to_owned();
    assert!(message.contains("Ledger-Filled: 1/6"), "{message}");
    // The real put writes the commit the dry run described, message and all.
    f.run(&["put", sid, row]).ok();
    assert_eq!(last_message(f.dir()), message);
    assert_eq!(shown_message(&d.stdout).trim_end(), message.trim_end());

    // repair: the same.
    let before = snapshot(f.dir());
    let d = f.run(&[
        "repair",
        sid,
        "--note",
        "fixed by hand",
        "--dry-run",
        "--json",
    ]);
    let v = d.ok().json();
    unchanged(&before, &snapshot(f.dir()), "a dry run");
    assert_eq!(v["command"], "repair");
    assert_eq!(v["rows"][0]["repair"], true);
    assert_eq!(v["filled"], 1);
    let message = v["message"].as_str().unwrap().to_owned();
    f.run(&["repair", sid, "--note", "fixed by hand"]).ok();
    assert_eq!(last_message(f.dir()), message);
}

fn dry_runs_refuse_what_the_real_write_refuses_and_write_nothing(prefix: &str) {
    let f = Fixture::under(2, prefix);
    let sid = "scenario/bugfix-iso-weeks/01";
    // The real commands first (a refused real command may still keep derived data, the
    // declaration it parsed, under .git/git-ledger/; a dry run keeps nothing).
    // A repair of a DEFERRED row.
    let real = f.run(&["repair", sid, "--note", "n"]);
    real.expect_code(2);
    // A put of an outcome the task does not declare.
    let bad = f.hand_row(sid, "STOPPED");
    let bad = bad.to_str().unwrap();
    let real_put = f.run(&["put", sid, bad]);
    real_put.expect_code(2);
    let before = snapshot(f.dir());
    let d = f.run(&["repair", sid, "--note", "n", "--dry-run"]);
    d.expect_code(2);
    assert_eq!(d.stderr, real.stderr);
    let d = f.run(&["put", sid, bad, "--dry-run"]);
    d.expect_code(2);
    assert_eq!(d.stderr, real_put.stderr);
    let d = f.run(&["put", sid, bad, "--dry-run", "--json"]);
    d.expect_code(2);
    assert_eq!(d.json()["refused"], true);
    unchanged(&before, &snapshot(f.dir()), "a dry run");
    // A retry: the row is filled, the second put is refused in the dry run too.
    let row = f.hand_row(sid, "INTERRUPTED_UNGRADED");
    f.run(&["put", sid, row.to_str().unwrap()]).ok();
    let again = f.hand_row(sid, "ERROR");
    let before = snapshot(f.dir());
    let d: Run = f.run(&["put", sid, again.to_str().unwrap(), "--dry-run"]);
    d.expect_code(2);
    unchanged(&before, &snapshot(f.dir()), "a dry run");
    // --json without --dry-run is a usage error for put and repair.
    f.run(&["repair", sid, "--note", "n", "--json"])
        .expect_code(64);
}

fn import_dry_run_in_ref_mode_gives_the_commit_message_and_writes_no_object(prefix: &str) {
    let c = Campaign::new();
    let root = c.root();
    crate::common::use_prefix(root, prefix);
    ledger(root, &["init", "campaign.json"]).ok();
    let args = example_import_args(&c);
    let before = snapshot(root);
    let mut dry = strs(&args);
    dry.insert(0, "import");
    dry.extend(["--dry-run", "--json"]);
    let v = ledger(root, &dry).ok().json();
    unchanged(
        &before,
        &snapshot(root),
        "a dry run wrote an object or moved a ref",
    );
    let message = v["message"].as_str().unwrap().to_owned();
    assert!(message.contains("Ledger-Filled: 9/26"), "{message}");
    let mut real = strs(&args);
    real.insert(0, "import");
    ledger(root, &real).ok();
    let r = format!("{prefix}{}", c.decl.id);
    assert_eq!(
        format!("{}\n", git(root, &["log", "-1", "--format=%B", &r])),
        message
    );
    // The same records again: nothing to write, and nothing written.
    let before = snapshot(root);
    let mut again = strs(&args);
    again.insert(0, "import");
    again.push("--dry-run");
    let d = ledger(root, &again);
    d.expect_code(2);
    assert!(d.stderr.contains("already filled"), "{}", d.stderr);
    unchanged(&before, &snapshot(root), "a dry run");
}

fn a_dry_run_on_a_ledger_with_writers_signs_and_admits_in_memory_and_refuses_another_key(
    prefix: &str,
) {
    use crate::signing::{have_ssh_keygen, keygen, Signed};
    if !have_ssh_keygen("a dry run on a signed ledger") {
        return;
    }
    let s = Signed::under(prefix);
    let sid = "scenario/s-b/01";
    let row = crate::gitstore::hand_row_value(&s.run(&["show", "--row", sid]).ok().stdout, "ERROR");
    let path = s.keys.path().join("row.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&row).unwrap()).unwrap();
    let path = path.to_str().unwrap();
    let before = snapshot(s.dir());
    // Signed by alice, a declared writer: rule 8 admits it, and nothing is stored.
    let v = s
        .run(&["put", sid, path, "--dry-run", "--json"])
        .ok()
        .json();
    unchanged(&before, &snapshot(s.dir()), "a dry run");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Ledger-Filled: 1/4"),
        "{v}"
    );
    // Signed by a key that is not a writer: refused by rule 8, as the real put is.
    let mallory = keygen(s.keys.path(), "mallory", "ed25519");
    s.sign_with(&mallory);
    // (sign_with set user.signingKey in .git/config.)
    let before = snapshot(s.dir());
    let d = s.run(&["put", sid, path, "--dry-run"]);
    d.expect_code(2);
    assert!(
        d.stderr.contains("rule 8") && d.stderr.contains("not a declared writer"),
        "{}",
        d.stderr
    );
    unchanged(&before, &snapshot(s.dir()), "a dry run");
}

/// The hand row of the example scenario run that was admitted but never graded, from the
/// ledger file's DEFERRED row, written to `hand-row.json`; returns its schedule id.
fn hand_row_in_file_mode(c: &Campaign) -> &'static str {
    let hand = crate::make_examples::SCENARIO_RUNS
        .iter()
        .find(|s| s.outcome.is_none())
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&c.ledger_bytes()).unwrap();
    let mut row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["schedule_id"] == hand.schedule_id)
        .unwrap()
        .clone();
    row["native_outcome"] = "INTERRUPTED_UNGRADED".into();
    row["reason"] = "the run was interrupted before grading".into();
    row["evidence_refs"] =
        serde_json::json!([format!("arena/examples/scenario-runs/{}", hand.run_id)]);
    crate::common::write(
        c.root(),
        "hand-row.json",
        serde_json::to_vec_pretty(&row).unwrap(),
    );
    hand.schedule_id
}

#[test]
fn put_and_repair_dry_runs_in_file_mode_change_no_byte_and_show_what_the_write_does() {
    let c = Campaign::new();
    let root = c.root();
    c.import(&strs(&example_import_args(&c))).ok();
    let sid = hand_row_in_file_mode(&c);
    let file = ["campaign.json", "ledger.json"];
    let before = snapshot(root);
    let d = ledger(
        root,
        &["put", sid, "hand-row.json", file[0], file[1], "--dry-run"],
    );
    d.ok();
    unchanged(&before, &snapshot(root), "a dry run changed a byte");
    assert!(
        d.stdout.starts_with(&format!(
            "{sid}  INTERRUPTED_UNGRADED  ungraded  [revision null; runtime not recorded; profile differs]\n"
        )),
        "{}",
        d.stdout
    );
    assert!(
        d.stdout.ends_with(
            "dry run: nothing written; admitted on ledger.json; after the write 10/26 rows would be filled\n"
        ),
        "{}",
        d.stdout
    );
    let v = ledger(
        root,
        &[
            "put",
            sid,
            "hand-row.json",
            file[0],
            file[1],
            "--dry-run",
            "--json",
        ],
    )
    .ok()
    .json();
    unchanged(&before, &snapshot(root), "a dry run");
    assert_eq!(v["command"], "put");
    assert_eq!(v["ledger"], "ledger.json");
    assert_eq!(
        v["message"],
        serde_json::Value::Null,
        "a file has no commit"
    );
    assert_eq!(v["rows"][0]["schedule_id"], sid);
    assert_eq!(v["rows"][0]["outcome"], "ungraded");
    assert_eq!(v["filled"], 10);
    // The real put writes the row the dry run showed.
    ledger(root, &["put", sid, "hand-row.json", file[0], file[1]]).ok();
    let doc: serde_json::Value = serde_json::from_slice(&c.ledger_bytes()).unwrap();
    let written = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["schedule_id"] == sid)
        .unwrap();
    assert_eq!(written["native_outcome"], v["rows"][0]["native_outcome"]);

    // repair: of a filled row, then of a DEFERRED one (refused as the real repair is).
    let verified = crate::make_examples::SCENARIO_RUNS[0].schedule_id;
    let before = snapshot(root);
    let args = [
        "repair",
        verified,
        "--note",
        "fixed by hand",
        file[0],
        file[1],
    ];
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let d = ledger(root, &dry);
    d.ok();
    assert!(
        d.stdout.starts_with(&format!(
            "{verified}  PASS (COMPLETE)  verified delivery after a human repair  + repair\n"
        )),
        "{}",
        d.stdout
    );
    dry.push("--json");
    let v = ledger(root, &dry).ok().json();
    assert_eq!(v["rows"][0]["repair"], true);
    unchanged(&before, &snapshot(root), "a dry run changed a byte");
    let deferred = "scenario/bugfix-iso-weeks/02";
    let real = ledger(root, &["repair", deferred, "--note", "n", file[0], file[1]]);
    real.expect_code(2);
    let d = ledger(
        root,
        &[
            "repair",
            deferred,
            "--note",
            "n",
            file[0],
            file[1],
            "--dry-run",
        ],
    );
    d.expect_code(2);
    assert_eq!(d.stderr, real.stderr);
    unchanged(&before, &snapshot(root), "a dry run");
    ledger(root, &args).ok();
    assert_ne!(
        snapshot(root).3,
        before.3,
        "the real repair writes the file"
    );
}

crate::common::under_both_prefixes!(
    put_and_repair_dry_runs_write_no_object_and_name_the_commit_the_real_write_makes,
    dry_runs_refuse_what_the_real_write_refuses_and_write_nothing,
    import_dry_run_in_ref_mode_gives_the_commit_message_and_writes_no_object,
    a_dry_run_on_a_ledger_with_writers_signs_and_admits_in_memory_and_refuses_another_key,
);
