//! Issue 15, inputs and outputs: reproductions of the attacks on pre-commit (escaped format,
//! declaration changed with the ledger, format flips), unbounded record refusals, the Arena
//! store written to, symlinked ledger files, late size refusals, tree entries with `/` in their
//! names, and `cite` on many incomplete rows — each with real Git, real hooks, real files.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{git, git_hooked, ledger, write, Run};
use crate::gitstore::{declaration_value, pretty, ID};

// ---------------------------------------------------------------------------------------------
// Item 6: pre-commit bypasses.

const FILLED: &str = "scenario/bugfix-iso-weeks/01";
const OTHER: &str = "scenario/bugfix-iso-weeks/02";

/// A work tree with the pre-commit hook installed and `eval/campaign.json` +
/// `eval/<name>` committed, one row filled through the tool and committed.
struct Branch {
    repo: tempfile::TempDir,
    name: String,
}

impl Branch {
    fn new(name: &str) -> Branch {
        let b = Branch {
            repo: crate::common::new_repo(),
            name: name.to_owned(),
        };
        let dir = b.dir();
        ledger(dir, &["hooks", "install"]).ok();
        write(dir, "eval/campaign.json", pretty(&declaration_value(ID, 2)));
        let template = ledger(dir, &["template", "eval/campaign.json"])
            .ok()
            .stdout
            .clone();
        write(dir, &format!("eval/{name}"), &template);
        git(dir, &["add", "-A"]);
        git_hooked(dir, &["commit", "-q", "-m", "declare"], None).ok();
        b.fill(FILLED, "eval/campaign.json", &format!("eval/{name}"));
        git(dir, &["add", "-A"]);
        git_hooked(dir, &["commit", "-q", "-m", "fill"], None).ok();
        b
    }
    fn dir(&self) -> &Path {
        self.repo.path()
    }
    fn path(&self) -> String {
        format!("eval/{}", self.name)
    }
    /// Fill `sid` through the tool (file mode).
    fn fill(&self, sid: &str, decl: &str, file: &str) {
        let dir = self.dir();
        let l: Value = serde_json::from_slice(&std::fs::read(dir.join(file)).unwrap()).unwrap();
        let mut row = l["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["schedule_id"] == sid)
            .unwrap()
            .clone();
        row["native_outcome"] = json!("INTERRUPTED_UNGRADED");
        row["native_status"] = json!("INCOMPLETE");
        row["reason"] = json!("by hand");
        write(dir, "row.json", pretty(&row));
        ledger(dir, &["put", sid, "row.json", decl, file]).ok();
        std::fs::remove_file(dir.join("row.json")).unwrap();
    }
    fn ledger_value(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.dir().join(self.path())).unwrap()).unwrap()
    }
    /// The ledger with the filled row's reason rewritten (an inadmissible edit).
    fn edited(&self) -> Value {
        let mut l = self.ledger_value();
        let row = l["rows"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|r| r["schedule_id"] == FILLED)
            .unwrap();
        row["reason"] = json!("rewritten");
        l
    }
    fn commit(&self, msg: &str) -> Run {
        git(self.dir(), &["add", "-A"]);
        git_hooked(self.dir(), &["commit", "-q", "-m", msg], None)
    }
    /// The commit is refused with every needle in its output, and HEAD did not move.
    #[track_caller]
    fn refused(&self, msg: &str, needles: &[&str]) {
        let head = git(self.dir(), &["rev-parse", "HEAD"]);
        let r = self.commit(msg);
        assert_ne!(r.code, 0, "{msg}: the commit must be refused\n{}", r.stderr);
        for n in needles {
            assert!(r.stderr.contains(n), "{msg}: no {n:?} in\n{}", r.stderr);
        }
        assert_eq!(
            git(self.dir(), &["rev-parse", "HEAD"]),
            head,
            "{msg}: HEAD moved"
        );
    }
    fn reset(&self) {
        git(self.dir(), &["reset", "-q", "--hard"]);
        git(self.dir(), &["clean", "-q", "-fd"]);
    }
}

/// Pretty JSON with the format string spelled with a JSON escape (`\u002d` for `-`).
fn escaped_format(l: &Value) -> Vec<u8> {
    let text = String::from_utf8(pretty(l)).unwrap();
    let spelled = text.replace("\"campaign-ledger/1\"", "\"campaign\\u002dledger/1\"");
    assert_ne!(spelled, text);
    spelled.into_bytes()
}

#[test]
fn pre_commit_judges_an_escaped_format_as_a_ledger_file() {
    let b = Branch::new("ledger.json");
    // The attack: the edited filled row, with the format spelled with an escape.
    write(b.dir(), &b.path(), escaped_format(&b.edited()));
    // `report` reads it as a ledger file, so the hook must too.
    ledger(b.dir(), &["report", "eval/campaign.json", &b.path()]).ok();
    b.refused(
        "escaped format",
        &["eval/ledger.json (against HEAD): rule 4: row scenario/bugfix-iso-weeks/01: reason"],
    );
    b.reset();
    // The other side: an admissible fill, written with the escaped format, commits.
    b.fill(OTHER, "eval/campaign.json", &b.path());
    let l = b.ledger_value();
    write(b.dir(), &b.path(), escaped_format(&l));
    b.commit("fill escaped").ok();
}

#[test]
fn pre_commit_judges_a_ledger_file_by_content_not_name() {
    let b = Branch::new("ledger.txt");
    write(b.dir(), &b.path(), pretty(&b.edited()));
    b.refused(
        "edit of ledger.txt",
        &["eval/ledger.txt (against HEAD): rule 4: row scenario/bugfix-iso-weeks/01: reason"],
    );
    b.reset();
    b.fill(OTHER, "eval/campaign.json", &b.path());
    b.commit("fill ledger.txt").ok();
}

#[test]
fn pre_commit_judges_a_changed_declaration_as_another_ledger() {
    let b = Branch::new("ledger.json");
    let dir = b.dir();
    // The attack: a new declaration and, with it, a ledger of it holding the edited row.
    write(
        dir,
        "eval/campaign.json",
        pretty(&declaration_value("other-campaign", 2)),
    );
    let template = ledger(dir, &["template", "eval/campaign.json"])
        .ok()
        .stdout
        .clone();
    write(dir, &b.path(), &template);
    let l: Value = serde_json::from_str(&template).unwrap();
    let mut row = l["rows"][2].clone();
    assert_eq!(row["schedule_id"], FILLED);
    row["native_outcome"] = json!("INTERRUPTED_UNGRADED");
    row["native_status"] = json!("INCOMPLETE");
    row["reason"] = json!("rewritten");
    write(dir, "row.json", pretty(&row));
    ledger(
        dir,
        &["put", FILLED, "row.json", "eval/campaign.json", &b.path()],
    )
    .ok();
    std::fs::remove_file(dir.join("row.json")).unwrap();
    ledger(dir, &["report", "eval/campaign.json", &b.path()]).ok();
    b.refused(
        "declaration and ledger changed together",
        &[
            "eval/ledger.json (against HEAD): the declaration changed",
            "1 filled row",
        ],
    );
    // Even as a fresh template: the filled row of HEAD's ledger would be lost.
    write(dir, &b.path(), &template);
    b.refused(
        "filled ledger replaced by a template",
        &["the declaration changed"],
    );
    b.reset();
    // Changing the declaration alone, under a ledger with a filled row, is refused too.
    write(
        dir,
        "eval/campaign.json",
        pretty(&declaration_value("other-campaign", 2)),
    );
    b.refused("declaration changed alone", &["eval/ledger.json"]);
    b.reset();

    // The other side: a ledger without filled rows follows its changed declaration.
    let fresh = Branch::new("ledger.json");
    let dir = fresh.dir();
    git(dir, &["reset", "-q", "--hard", "HEAD~1"]); // back to the template
    write(
        dir,
        "eval/campaign.json",
        pretty(&declaration_value("other-campaign", 2)),
    );
    let template = ledger(dir, &["template", "eval/campaign.json"])
        .ok()
        .stdout
        .clone();
    write(dir, &fresh.path(), &template);
    fresh.commit("redeclare").ok();
}

#[test]
fn pre_commit_refuses_a_ledger_file_that_stops_being_one() {
    let b = Branch::new("ledger.json");
    let dir = b.dir();
    // The attack, first commit: the edited row under another format.
    let mut l = b.edited();
    l["format"] = json!("campaign-ledger/2");
    write(dir, &b.path(), pretty(&l));
    b.refused(
        "format flipped away",
        &["eval/ledger.json: HEAD's version is a ledger file"],
    );
    // Broken JSON and a file over the bound are not ledger files either.
    write(
        dir,
        &b.path(),
        b"{\"format\": \"campaign-ledger/1\", \"rows\": [",
    );
    b.refused("broken JSON", &["no longer is"]);
    b.reset();
    // The second commit of the attack, had the first been made with --no-verify: HEAD's
    // version is not a ledger file, the staged one is (treated as new, checked in full).
    write(dir, &b.path(), pretty(&l));
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--no-verify", "-m", "flip"]);
    l["format"] = json!("campaign-ledger/1");
    write(dir, &b.path(), pretty(&l));
    b.commit("flip back").ok();
}

#[test]
fn pre_commit_keeps_the_reasons_of_a_staged_ledger_over_the_bound() {
    let b = Branch::new("ledger.json");
    let dir = b.dir();
    let len = |p: &str| std::fs::metadata(dir.join(p)).unwrap().len();
    let head_len = len(&b.path());
    // Room for the declaration and a filled row more; the padding goes past it.
    let bound = head_len.max(len("eval/campaign.json")) + 600;
    git(dir, &["config", "ledger.maxBlobBytes", &bound.to_string()]);
    // The staged version, padded past the bound: it cannot be read as a ledger file.
    let mut padded = std::fs::read(dir.join(b.path())).unwrap();
    padded.extend(std::iter::repeat_n(b' ', (bound - head_len + 100) as usize));
    write(dir, &b.path(), &padded);
    let r = b.commit("padded");
    assert_ne!(r.code, 0, "{}", r.stderr);
    let lead = "\n  eval/ledger.json: HEAD's version is a ledger file and the staged one cannot be read as one\n  eval/ledger.json";
    assert!(r.stderr.contains(lead), "{}", r.stderr);
    // The bound's own reason follows on a line of its own, with its hint.
    let after = &r.stderr[r.stderr.find(lead).unwrap() + lead.len()..];
    let line = after.lines().next().unwrap_or_default();
    assert!(
        line.contains(&format!("over the input bound of {bound} bytes")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("\nhint: "), "{}", r.stderr);
    b.reset();
    // The other side: padded within the bound, with an admissible fill, it commits.
    b.fill(OTHER, "eval/campaign.json", &b.path());
    let mut within = std::fs::read(dir.join(b.path())).unwrap();
    within.extend(std::iter::repeat_n(b' ', 10));
    assert!((within.len() as u64) < bound, "{} {bound}", within.len());
    write(dir, &b.path(), &within);
    b.commit("fill, padded a little").ok();
}

#[test]
fn pre_commit_after_an_invalid_head_keeps_each_reason_head_gives() {
    let b = Branch::new("ledger.json");
    let dir = b.dir();
    let good = b.ledger_value();
    // HEAD's version, committed past the hook: a ledger file, but not a valid ledger.
    let mut bad = good.clone();
    let row = bad["rows"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["schedule_id"] == FILLED)
        .unwrap();
    row["native_outcome"] = json!("NOT_AN_OUTCOME");
    write(dir, &b.path(), pretty(&bad));
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--no-verify", "-m", "broken"]);
    // A filled ledger cannot follow it: the refusal says so, then gives HEAD's own reasons,
    // each kept with its row and field, at HEAD's version.
    write(dir, &b.path(), pretty(&good));
    b.refused(
        "filled ledger after an invalid HEAD",
        &[
            "\n  eval/ledger.json (against HEAD): HEAD's version is a ledger file but not a valid ledger of HEAD's declaration",
            &format!("\n  eval/ledger.json (HEAD): row {FILLED}: native_outcome: "),
        ],
    );
    // The other side: a ledger without filled rows may follow it.
    let template = ledger(dir, &["template", "eval/campaign.json"])
        .ok()
        .stdout
        .clone();
    write(dir, &b.path(), &template);
    b.commit("start again").ok();
}

// ---------------------------------------------------------------------------------------------
// Item 8: unbounded refusal output.

/// A ledger (one row filled, so `records/` exists) and a commit on it that adds `n` record
/// files no row claims, made by plumbing: one blob, `n` names, `git mktree`.
fn unclaimed_records(f: &crate::gitstore::Fixture, n: usize) -> String {
    let dir = f.dir();
    let tip = f.tip();
    let blob = crate::common::git_run(dir, &["hash-object", "-w", "--stdin"], Some(b"{}\n"));
    let blob = blob.stdout.trim().to_owned();
    // Fanned out as the layout says (`records/<hh>/<rest>.json`), merged into the fan-out
    // directories the tip already has.
    let mut dirs: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in git(dir, &["ls-tree", &format!("{tip}:records")]).lines() {
        let (_, name) = line.split_once('\t').unwrap();
        let listing = git(dir, &["ls-tree", &format!("{tip}:records/{name}")]);
        dirs.entry(name.to_owned())
            .or_default()
            .extend(listing.lines().map(str::to_owned));
    }
    for i in 0..n {
        let h = git_ledger::sha256_hex(format!("unclaimed {i}").as_bytes());
        dirs.entry(h[..2].to_owned())
            .or_default()
            .push(format!("100644 blob {blob}\t{}.json", &h[2..]));
    }
    let mut top = String::new();
    for (name, mut entries) in dirs {
        entries.sort_by(|x, y| x.split('\t').nth(1).cmp(&y.split('\t').nth(1)));
        let listing = entries.join("\n") + "\n";
        let sub = crate::common::git_run(dir, &["mktree"], Some(listing.as_bytes()));
        top.push_str(&format!("040000 tree {}\t{name}\n", sub.stdout.trim()));
    }
    let records = crate::common::git_run(dir, &["mktree"], Some(top.as_bytes()));
    let records = records.stdout.trim().to_owned();
    let mut root = String::new();
    for line in git(dir, &["ls-tree", &tip]).lines() {
        if line.ends_with("\trecords") {
            root.push_str(&format!("040000 tree {records}\trecords\n"));
        } else {
            root.push_str(line);
            root.push('\n');
        }
    }
    let root = crate::common::git_run(dir, &["mktree"], Some(root.as_bytes()));
    let root = root.stdout.trim().to_owned();
    git(dir, &["commit-tree", &root, "-p", &tip, "-m", "records"])
}

/// A fixture with one filled row and a hooked bare server holding its ledger, under `prefix`.
fn pushed_fixture(
    prefix: &str,
) -> (
    crate::gitstore::Fixture,
    tempfile::TempDir,
    std::path::PathBuf,
) {
    let f = crate::gitstore::Fixture::under(2, prefix);
    f.put(FILLED, "INTERRUPTED_UNGRADED").ok();
    let servers = tempfile::tempdir().unwrap();
    let server = crate::common::hooked_server(servers.path(), "server.git");
    crate::common::use_prefix(&server, prefix);
    let url = server.to_str().unwrap().to_owned();
    let spec = format!("{0}:{0}", f.refname);
    let r = git_hooked(f.dir(), &["push", "-q", &url, &spec], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (f, servers, server)
}

fn push_refused(f: &crate::gitstore::Fixture, server: &Path, commit: &str) -> Vec<String> {
    let before = git(server, &["rev-parse", &f.refname]);
    let spec = format!("{commit}:{}", f.refname);
    let r = git_hooked(f.dir(), &["push", server.to_str().unwrap(), &spec], None);
    assert_ne!(r.code, 0, "the push must be refused\n{}", r.stderr);
    assert!(
        r.stderr.contains("pre-receive hook declined"),
        "{}",
        r.stderr
    );
    assert_eq!(
        git(server, &["rev-parse", &f.refname]),
        before,
        "the ref moved"
    );
    r.stderr
        .lines()
        .filter(|l| l.starts_with("remote:"))
        .map(str::to_owned)
        .collect()
}

fn pushed_records_count_towards_the_push_bound(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let (f, _servers, server) = pushed_fixture(prefix);
    git(&server, &["config", "ledger.maxRowsPerPush", "1000"]);
    let commit = unclaimed_records(&f, 5_000);
    let remote = push_refused(&f, &server, &commit);
    let text = remote.join("\n");
    assert!(
        text.contains("bound: this update adds more than 1000 record files")
            && text.contains("ledger.maxRowsPerPush"),
        "{text}"
    );
    assert!(remote.len() < 10, "{} remote lines:\n{text}", remote.len());
    // The other side: within the bound, a record a filled row claims is admitted (the
    // ordinary put of a second row, pushed under the same bound).
    f.put(OTHER, "INTERRUPTED_UNGRADED").ok();
    let spec = format!("{}:{}", rf, rf);
    let r = git_hooked(
        f.dir(),
        &["push", "-q", server.to_str().unwrap(), &spec],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn refusal_reasons_are_capped_with_the_count_of_the_rest(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let (f, _servers, server) = pushed_fixture(prefix);
    let commit = unclaimed_records(&f, 5_000);
    let remote = push_refused(&f, &server, &commit);
    let text = remote.join("\n");
    assert!(
        remote.len() < 40,
        "{} remote lines:\n{}",
        remote.len(),
        &text[..4000.min(text.len())]
    );
    assert!(text.contains("no row this commit fills names it"), "{text}");
    assert!(text.contains("more reasons"), "{text}");
    let more = remote.iter().find(|l| l.contains("more reasons")).unwrap();
    let n: usize = more
        .split_whitespace()
        .find_map(|w| w.replace(',', "").parse().ok())
        .unwrap();
    assert!(n > 4_900, "{more}");

    let small = unclaimed_records(&f, 3);
    // verify (text and --json) on a clone-like repository holding the commit.
    git(f.dir(), &["update-ref", rf, &commit]);
    let r = ledger(f.dir(), &["verify"]);
    r.expect_code(2);
    let lines = r.stderr.lines().count();
    assert!(lines < 40, "{lines} lines of verify output");
    assert!(r.stderr.contains("more reasons"), "{}", r.stderr);
    let r = ledger(f.dir(), &["verify", "--json"]);
    r.expect_code(2);
    let v = r.json();
    // --json is complete while the text is capped: every reason, text and value.
    assert_eq!(v["reasons"].as_array().unwrap().len(), 5_000);
    assert_eq!(v["details"].as_array().unwrap().len(), 5_000);
    assert!(v.get("reasons_total").is_none(), "{}", v["reasons_total"]);
    crate::schemas::assert_valid("refusal", &v, "verify --json of 5,000 reasons");
    // A refusal with few reasons is shown in full, with no count of more.
    let remote = push_refused(&f, &server, &small);
    let text = remote.join("\n");
    assert_eq!(
        text.matches("no row this commit fills names it").count(),
        3,
        "{text}"
    );
    assert!(!text.contains("more reasons"), "{text}");
}

#[test]
fn the_default_push_bound_holds_for_records() {
    // 100,001 unclaimed record files against the default bound of 100,000 (ledger.maxRowsPerPush
    // unset): one bound reason, a handful of lines. Under the default prefix only: the heaviest
    // push of the suite, and the bound it checks counts files, whatever the ref's name (under
    // the branch prefix the bound is exercised by pushed_records_count_towards_the_push_bound,
    // with a configured bound of 1,000).
    let (f, _servers, server) = pushed_fixture(crate::common::PREFIXES[0]);
    let commit = unclaimed_records(&f, 100_001);
    let remote = push_refused(&f, &server, &commit);
    let text = remote.join("\n");
    assert!(
        text.contains("bound: this update adds more than 100000 record files"),
        "{}",
        &text[..4000.min(text.len())]
    );
    assert!(remote.len() < 10, "{} remote lines", remote.len());
}

// ---------------------------------------------------------------------------------------------
// Item 9: the Arena store is never written to.

pub const ARENA_ROW: &str = "arena/sympy-matrix-derivatives/01";

/// Every file of a directory: name, size, modification time and content hash.
pub fn dir_state(dir: &Path) -> Vec<(String, u64, std::time::SystemTime, String)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            let bytes = std::fs::read(e.path()).unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                m.len(),
                m.modified().unwrap(),
                git_ledger::sha256_hex(&bytes),
            )
        })
        .collect();
    out.sort();
    out
}

/// Make the example store at `rel` a WAL store whose attempt att-0001 is committed only in the
/// WAL (not checkpointed), with a transaction still open that rewrites att-0001 as FAIL and
/// has spilled uncommitted frames into the WAL. Returns the writer, which holds the store.
pub fn wal_store(c: &crate::import::Campaign, rel: &str) -> rusqlite::Connection {
    c.store(rel, &c.arena_sql());
    let db = c.root().join(rel).join("results.sqlite3");
    let w = rusqlite::Connection::open(&db).unwrap();
    let mode: String = w
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    w.execute_batch(
        "PRAGMA wal_autocheckpoint = 0;
         CREATE TEMP TABLE a AS SELECT * FROM attempts WHERE attempt_id = 'att-0001';
         CREATE TEMP TABLE c AS SELECT * FROM checks WHERE attempt_id = 'att-0001';
         CREATE TEMP TABLE e AS SELECT * FROM evidence WHERE attempt_id = 'att-0001';
         DELETE FROM attempts WHERE attempt_id = 'att-0001';
         DELETE FROM checks WHERE attempt_id = 'att-0001';
         DELETE FROM evidence WHERE attempt_id = 'att-0001';",
    )
    .unwrap();
    w.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    w.execute_batch(
        "INSERT INTO attempts SELECT * FROM temp.a;
         INSERT INTO checks SELECT * FROM temp.c;
         INSERT INTO evidence SELECT * FROM temp.e;",
    )
    .unwrap();
    let wal = db.with_file_name("results.sqlite3-wal");
    let committed = std::fs::metadata(&wal).unwrap().len();
    assert!(committed > 0, "the committed attempt is in the WAL");
    w.execute_batch(
        "PRAGMA cache_size = 2;
         BEGIN;
         UPDATE attempts SET verdict = 'FAIL', reason = 'uncommitted' WHERE attempt_id = 'att-0001';
         CREATE TABLE junk (x BLOB);
         INSERT INTO junk WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
             SELECT randomblob(2000) FROM n;",
    )
    .unwrap();
    assert!(
        std::fs::metadata(&wal).unwrap().len() > committed,
        "the open transaction spilled uncommitted frames into the WAL"
    );
    w
}

/// Run `git-ledger <args>` in `cwd` with `dir` read-only. Not as root: the directory's write
/// permission is taken away (and given back). As root, who ignores permissions: `dir` is
/// mounted read-only over itself in a private mount namespace (`unshare -m`; nothing is seen
/// outside it). `None` when this machine can do neither.
fn in_read_only_mount(cwd: &Path, dir: &Path, args: &[&str]) -> Option<Run> {
    use std::os::unix::fs::PermissionsExt;
    let uid = std::process::Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        assert!(
            std::fs::write(dir.join("probe"), "").is_err(),
            "the directory is writable"
        );
        let r = ledger(cwd, args);
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
        return Some(r);
    }
    let probe = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg("mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" \"$0\"")
        .arg(dir)
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return None;
    }
    let mut cmd = std::process::Command::new("unshare");
    crate::common::pin_env(&mut cmd)
        .current_dir(cwd)
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(
            "d=$1; shift; mount --bind \"$d\" \"$d\" && mount -o remount,bind,ro \"$d\" \"$d\" \
             && touch \"$d/probe\" 2>/dev/null && { echo 'the mount is writable' >&2; exit 99; }; \
             exec \"$0\" \"$@\"",
        )
        .arg(crate::common::bin())
        .arg(dir)
        .args(args);
    let o = cmd.output().unwrap();
    Some(Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    })
}

#[test]
fn a_wal_store_is_read_without_creating_or_changing_a_file_beside_it() {
    let c = crate::import::Campaign::new();
    let writer = wal_store(&c, "live-store");
    // A crashed writer's store: the database and its WAL (committed and uncommitted frames),
    // no -shm, nobody holding it.
    let live = c.root().join("live-store");
    let crashed = c.root().join("crashed-store");
    std::fs::create_dir(&crashed).unwrap();
    for f in ["results.sqlite3", "results.sqlite3-wal"] {
        std::fs::copy(live.join(f), crashed.join(f)).unwrap();
    }

    for (rel, dir) in [("live-store", &live), ("crashed-store", &crashed)] {
        c.reset_ledger();
        let before = dir_state(dir);
        let r = c.import(&["--arena", ARENA_ROW, rel, "att-0001"]);
        assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        assert_eq!(
            dir_state(dir),
            before,
            "{rel}: the import changed the store directory"
        );
        // The committed attempt (only in the WAL), never the open transaction's rewrite.
        let row = c.row(ARENA_ROW);
        assert_eq!(row["native_outcome"], "PASS", "{rel}: {row}");
    }

    // A read-only store directory (a read-only bind mount: root ignores file permissions).
    c.reset_ledger();
    let args = [
        "import",
        "campaign.json",
        "ledger.json",
        "--arena",
        ARENA_ROW,
        "crashed-store",
        "att-0001",
    ];
    match in_read_only_mount(c.root(), &crashed, &args) {
        Some(r) => {
            assert_eq!(r.code, 0, "read-only store: {}", r.stderr);
            assert_eq!(c.row(ARENA_ROW)["native_outcome"], "PASS");
        }
        None => crate::common::require_tool(
            "unshare (util-linux) and mount, as root with CAP_SYS_ADMIN,",
            "the read-only bind mount of an Arena store",
        ),
    }
    drop(writer);
}

// ---------------------------------------------------------------------------------------------
// Item 10: a symlinked ledger file is written through, never forked.

/// A directory with a declaration, a template ledger at `real/ledger.json` and a row file for
/// `sid` ready to put.
fn file_mode_ledger() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "campaign.json", pretty(&declaration_value(ID, 2)));
    let template = ledger(d, &["template", "campaign.json"])
        .ok()
        .stdout
        .clone();
    write(d, "real/ledger.json", &template);
    dir
}

fn put_row(d: &Path, sid: &str, file: &str) -> Run {
    let l: Value = serde_json::from_slice(&std::fs::read(d.join(file)).unwrap()).unwrap();
    let mut row = l["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["schedule_id"] == sid)
        .unwrap()
        .clone();
    row["native_outcome"] = json!("INTERRUPTED_UNGRADED");
    row["native_status"] = json!("INCOMPLETE");
    row["reason"] = json!("by hand");
    write(d, "row.json", pretty(&row));
    ledger(d, &["put", sid, "row.json", "campaign.json", file])
}

#[test]
fn a_symlinked_ledger_file_is_written_through_the_link() {
    let dir = file_mode_ledger();
    let d = dir.path();
    std::os::unix::fs::symlink("real/ledger.json", d.join("ledger.json")).unwrap();
    put_row(d, FILLED, "ledger.json").ok();
    // The link is still a link, and both paths show the new state.
    assert!(std::fs::symlink_metadata(d.join("ledger.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    let via_link = std::fs::read(d.join("ledger.json")).unwrap();
    assert_eq!(via_link, std::fs::read(d.join("real/ledger.json")).unwrap());
    let l: Value = serde_json::from_slice(&via_link).unwrap();
    assert_eq!(l["rows"][2]["native_outcome"], "INTERRUPTED_UNGRADED");
    // A put through the target sees the first, and the next through the link sees both.
    put_row(d, OTHER, "real/ledger.json").ok();
    let l: Value = serde_json::from_slice(&std::fs::read(d.join("ledger.json")).unwrap()).unwrap();
    assert_eq!(l["rows"][3]["native_outcome"], "INTERRUPTED_UNGRADED");
    assert_eq!(l["rows"][2]["native_outcome"], "INTERRUPTED_UNGRADED");
    // One lock for both paths: the target's lock held stops a writer through the link.
    write(d, "real/ledger.json.lock", "");
    let before = std::fs::read(d.join("real/ledger.json")).unwrap();
    let r = put_row(d, "scenario/interrupted-reuse/01", "ledger.json");
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("real/ledger.json.lock"), "{}", r.stderr);
    assert_eq!(std::fs::read(d.join("real/ledger.json")).unwrap(), before);
    assert!(!d.join("ledger.json.lock").exists());
    // A chain of links, relative and absolute, is followed to the file.
    std::fs::remove_file(d.join("real/ledger.json.lock")).unwrap();
    std::os::unix::fs::symlink(d.join("ledger.json"), d.join("chain.json")).unwrap();
    put_row(d, "scenario/interrupted-reuse/01", "chain.json").ok();
    assert!(std::fs::symlink_metadata(d.join("chain.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    let l: Value =
        serde_json::from_slice(&std::fs::read(d.join("real/ledger.json")).unwrap()).unwrap();
    assert_eq!(l["rows"][4]["native_outcome"], "INTERRUPTED_UNGRADED");
}

#[test]
fn a_hard_linked_ledger_file_is_refused_before_anything_is_written() {
    let dir = file_mode_ledger();
    let d = dir.path();
    std::fs::hard_link(d.join("real/ledger.json"), d.join("ledger.json")).unwrap();
    let before = std::fs::read(d.join("ledger.json")).unwrap();
    let r = put_row(d, FILLED, "ledger.json");
    r.expect_code(1);
    assert!(r.stderr.contains("hard link"), "{}", r.stderr);
    assert_eq!(std::fs::read(d.join("ledger.json")).unwrap(), before);
    assert_eq!(std::fs::read(d.join("real/ledger.json")).unwrap(), before);
    // The other side: one name, written as always.
    std::fs::remove_file(d.join("ledger.json")).unwrap();
    put_row(d, FILLED, "real/ledger.json").ok();
}

// ---------------------------------------------------------------------------------------------
// Item 13b: a record over the bound is refused before any object is written.

/// Every object file of a repository (loose objects and packs), by path.
fn object_files(repo: &Path) -> Vec<String> {
    fn walk(d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), out);
            } else {
                out.push(e.path().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo.join(".git/objects"), &mut out);
    out.sort();
    out
}

/// The example store at `rel` with `n` evidence references of `len` bytes added to att-0001.
fn big_record_store(c: &crate::import::Campaign, rel: &str, n: usize, len: usize) {
    c.store(rel, &c.arena_sql());
    let w = rusqlite::Connection::open(c.root().join(rel).join("results.sqlite3")).unwrap();
    w.execute(
        &format!(
            "INSERT INTO evidence WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})
             SELECT 'att-0001', printf('logs/%08d-', i) || substr(hex(zeroblob({len})), 1, {len}) FROM n"
        ),
        [],
    )
    .unwrap();
}

#[test]
fn a_record_over_the_bound_is_refused_before_any_object_is_written() {
    let c = crate::import::Campaign::new();
    ledger(c.root(), &["init", "campaign.json"]).ok();
    let refs = git(c.root(), &["for-each-ref"]);
    big_record_store(&c, "big-store", 200, 1_000); // a record of about 200 KB
    let before = object_files(c.root());
    let r = ledger(
        c.root(),
        &[
            "import",
            "--max-input-bytes",
            "100000",
            "--arena",
            ARENA_ROW,
            "big-store",
            "att-0001",
        ],
    );
    r.expect_code(2);
    assert!(
        r.stderr.contains("over the input bound of 100000 bytes"),
        "{}",
        r.stderr
    );
    let after = object_files(c.root());
    let new: Vec<&String> = after.iter().filter(|p| !before.contains(p)).collect();
    assert!(
        new.is_empty(),
        "the refused import wrote {} objects: {:?}",
        new.len(),
        &new[..new.len().min(3)]
    );
    assert_eq!(after.len(), before.len());
    assert_eq!(git(c.root(), &["for-each-ref"]), refs);
    // The other side: under the default bound the same record is imported.
    ledger(
        c.root(),
        &["import", "--arena", ARENA_ROW, "big-store", "att-0001"],
    )
    .ok();
    assert_ne!(git(c.root(), &["for-each-ref"]), refs);
}

#[test]
fn a_record_over_the_default_bound_is_refused_before_any_object_is_written() {
    // About 70 MB of evidence references: over the default 64 MiB bound.
    let c = crate::import::Campaign::new();
    ledger(c.root(), &["init", "campaign.json"]).ok();
    let refs = git(c.root(), &["for-each-ref"]);
    big_record_store(&c, "huge-store", 70_000, 1_000);
    let before = object_files(c.root());
    let r = ledger(
        c.root(),
        &["import", "--arena", ARENA_ROW, "huge-store", "att-0001"],
    );
    r.expect_code(2);
    assert!(r.stderr.contains("over the input bound"), "{}", r.stderr);
    let after = object_files(c.root());
    let new: Vec<&String> = after.iter().filter(|p| !before.contains(p)).collect();
    assert!(
        new.is_empty(),
        "the refused import wrote {} objects: {:?}",
        new.len(),
        &new[..new.len().min(3)]
    );
    assert_eq!(after.len(), before.len());
    assert_eq!(git(c.root(), &["for-each-ref"]), refs);
}

// ---------------------------------------------------------------------------------------------
// Item 14: tree entries whose names contain `/` are named as they are.

/// Raw tree bytes from `(mode, name, hex id)` entries, in the order given.
fn raw_tree(entries: &[(&str, &str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (mode, name, id) in entries {
        out.extend_from_slice(mode.as_bytes());
        out.push(b' ');
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        let id: Vec<u8> = (0..id.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&id[i..i + 2], 16).unwrap())
            .collect();
        out.extend_from_slice(&id);
    }
    out
}

/// Write raw tree bytes as they are (`git hash-object -t tree --literally`).
fn write_raw_tree(dir: &Path, bytes: &[u8]) -> String {
    let r = crate::common::git_run(
        dir,
        &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
        Some(bytes),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout.trim().to_owned()
}

/// `git ls-tree` of `rev` as `(mode, name, id)`.
fn ls_tree(dir: &Path, rev: &str) -> Vec<(String, String, String)> {
    git(dir, &["ls-tree", rev])
        .lines()
        .map(|l| {
            let (meta, name) = l.split_once('\t').unwrap();
            let p: Vec<&str> = meta.split(' ').collect();
            let mode = p[0].trim_start_matches('0').to_owned();
            (mode, name.to_owned(), p[2].to_owned())
        })
        .collect()
}

fn entries_named_with_a_slash_are_named_by_tree_and_entry(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let (f, _servers, server) = pushed_fixture(prefix);
    let dir = f.dir();
    let tip = f.tip();
    // The filled row's blob, as an entry named `scenario/bugfix-iso-weeks/02.json` directly in
    // `rows/` (after the directory `scenario`, as Git orders `scenario/`).
    let row = git(dir, &["rev-parse", &format!("{tip}:rows/{FILLED}.json")]);
    let mut rows: Vec<(String, String, String)> = ls_tree(dir, &format!("{tip}:rows"));
    rows.push(("100644".into(), format!("{OTHER}.json"), row.clone()));
    let rows_bytes = raw_tree(
        &rows
            .iter()
            .map(|(m, n, i)| (m.as_str(), n.as_str(), i.as_str()))
            .collect::<Vec<_>>(),
    );
    let rows_tree = write_raw_tree(dir, &rows_bytes);
    let root: Vec<(String, String, String)> = ls_tree(dir, &tip)
        .into_iter()
        .map(|(m, n, i)| {
            if n == "rows" {
                (m, n, rows_tree.clone())
            } else {
                (m, n, i)
            }
        })
        .collect();
    let root_bytes = raw_tree(
        &root
            .iter()
            .map(|(m, n, i)| (m.as_str(), n.as_str(), i.as_str()))
            .collect::<Vec<_>>(),
    );
    let root_tree = write_raw_tree(dir, &root_bytes);
    let commit = git(dir, &["commit-tree", &root_tree, "-p", &tip, "-m", "slash"]);
    let remote = push_refused(&f, &server, &commit);
    let text = remote.join("\n");
    if std::env::var_os("SHOW_REFUSALS").is_some() {
        eprintln!("{text}");
    }
    let wanted = format!(
        "rule 3: tree rows/ is not as Git writes it: it has an entry named \"{OTHER}.json\""
    );
    assert!(text.contains(&wanted), "{text}");
    // No reason names the path of the real row file the entry's name spells.
    assert!(
        !text.contains(&format!("rows/{OTHER}.json")),
        "a reason names rows/{OTHER}.json, a path that is not in the commit:\n{text}"
    );
    // The same entry in the root tree, named `rows/scenario/bugfix-iso-weeks/02.json`.
    let mut root2 = ls_tree(dir, &tip);
    root2.push(("100644".into(), format!("rows/{OTHER}.json"), row));
    let root2_bytes = raw_tree(
        &root2
            .iter()
            .map(|(m, n, i)| (m.as_str(), n.as_str(), i.as_str()))
            .collect::<Vec<_>>(),
    );
    let root2_tree = write_raw_tree(dir, &root2_bytes);
    let commit2 = git(
        dir,
        &[
            "commit-tree",
            &root2_tree,
            "-p",
            &tip,
            "-m",
            "slash at the root",
        ],
    );
    let text2 = push_refused(&f, &server, &commit2).join("\n");
    assert!(
        text2.contains(&format!(
            "rule 3: the root tree is not as Git writes it: it has an entry named \"rows/{OTHER}.json\""
        )),
        "{text2}"
    );
    assert!(!text2.contains("outside the ledger layout"), "{text2}");

    // verify names them the same way.
    for (c, needle) in [
        (&commit, wanted.clone()),
        (&commit2, "the root tree is not as Git writes it".into()),
    ] {
        git(dir, &["update-ref", rf, c]);
        let r = ledger(dir, &["verify"]);
        r.expect_code(2);
        assert!(r.stderr.contains(&needle), "{}", r.stderr);
        assert!(!r.stderr.contains("is not in the parent"), "{}", r.stderr);
    }
    // The other side: the same row change in trees Git writes is admitted (an ordinary put).
    git(dir, &["update-ref", rf, &tip]);
    f.put(OTHER, "INTERRUPTED_UNGRADED").ok();
    let spec = format!("{}:{}", rf, rf);
    let r = git_hooked(dir, &["push", "-q", server.to_str().unwrap(), &spec], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------------
// Item 15: cite on many incomplete rows leads with one line per field.

/// Fifteen run lines shaped as Terminal-Bench trials turn out (each trial one attempt; the
/// harness records neither a cold start nor a queue wait, and the last three trials have no
/// token budget).
fn terminal_bench_runs() -> String {
    let tasks = [
        "hello-world",
        "fix-git",
        "csv-to-parquet",
        "count-dataset-tokens",
        "crack-7z-hash",
        "fibonacci-server",
        "git-multibranch",
        "grid-pattern-transform",
        "heterogeneous-dates",
        "jupyter-notebook-server",
        "modernize-fortran-build",
        "nginx-request-logging",
        "openssl-selfsigned-cert",
        "password-recovery",
        "sqlite-with-gcov",
    ];
    let mut out = String::new();
    for (i, t) in tasks.iter().enumerate() {
        let mut row = json!({
            "task_id": t,
            "prompt_sha256": git_ledger::sha256_hex(format!("prompt {t}").as_bytes()),
            "hidden_tests_sha256": git_ledger::sha256_hex(format!("tests {t}").as_bytes()),
            "access_class": "api_model",
            "server_class": "docker_local",
            "timeout_s": 1800,
            "token_budget": 200000,
            "attempt": 1,
            "stop_reason": if i % 3 == 0 { "fail" } else { "pass" },
            "patch_sha256": git_ledger::sha256_hex(format!("patch {t}").as_bytes()),
        });
        if i >= 12 {
            row["token_budget"] = Value::Null;
        }
        out.push_str(&serde_json::to_string(&row).unwrap());
        out.push('\n');
    }
    out
}

#[test]
fn cite_leads_with_one_line_per_missing_field() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "runs.jsonl", terminal_bench_runs());
    let r = ledger(d.path(), &["cite", "runs.jsonl"]);
    r.expect_code(2);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        &lines[..4],
        &[
            "not citeable: incomplete_envelope (reasons: incomplete_envelope)",
            "  token_budget: missing in 3 of 15 rows",
            "  cold_start: missing in 15 of 15 rows",
            "  queue_wait_ms: missing in 15 of 15 rows",
        ],
        "{}",
        r.stdout
    );
    // At most three rows per field, then how many more.
    assert_eq!(
        r.stdout.matches("cold_start is missing (absent").count(),
        3,
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stdout.matches("queue_wait_ms is missing (absent").count(),
        3,
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stdout.matches("token_budget is missing (absent").count(),
        3,
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(
        "  ... and 12 more rows where queue_wait_ms is missing (--verbose lists every row)\n"
    ));
    assert!(
        !r.stdout.contains("more rows where token_budget"),
        "{}",
        r.stdout
    );
    assert!(lines.len() < 20, "{} lines:\n{}", lines.len(), r.stdout);
    assert!(!r.stdout.contains("rate:"));

    // --verbose lists every row.
    let r = ledger(d.path(), &["cite", "--verbose", "runs.jsonl"]);
    r.expect_code(2);
    assert_eq!(
        r.stdout.matches("queue_wait_ms is missing (absent").count(),
        15
    );
    assert_eq!(
        r.stdout.matches("cold_start is missing (absent").count(),
        15
    );
    assert!(!r.stdout.contains("more rows"), "{}", r.stdout);

    // --json keeps the full list, one entry per row and field, and its keys as cite.md says.
    let r = ledger(d.path(), &["cite", "--json", "runs.jsonl"]);
    r.expect_code(2);
    let v = r.json();
    assert_eq!(v["missing"].as_array().unwrap().len(), 33);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["citeable", "missing", "reason", "reasons", "refused"]
    );
    // ... and its text on stderr is the short one.
    assert_eq!(
        r.stderr.matches("queue_wait_ms is missing (absent").count(),
        3
    );

    // The other side: the same trials with every field are citeable.
    let complete: String = terminal_bench_runs()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["cold_start"] = json!(false);
            v["queue_wait_ms"] = json!(0);
            v["token_budget"] = json!(200000);
            format!("{}\n", serde_json::to_string(&v).unwrap())
        })
        .collect();
    write(d.path(), "complete.jsonl", complete);
    let r = ledger(d.path(), &["cite", "complete.jsonl"]);
    r.ok();
    assert!(r.stdout.contains("n_tasks: 15"), "{}", r.stdout);
}

/// A commit on the fixture's tip adding `n` files at the root, outside the ledger layout.
fn root_junk(f: &crate::gitstore::Fixture, n: usize) -> String {
    let dir = f.dir();
    let tip = f.tip();
    let blob = crate::common::git_run(dir, &["hash-object", "-w", "--stdin"], Some(b"{}\n"));
    let blob = blob.stdout.trim().to_owned();
    let mut root = git(dir, &["ls-tree", &tip]);
    let mut names: Vec<String> = (0..n).map(|i| format!("junk{i:07}.json")).collect();
    names.sort();
    for name in names {
        root.push_str(&format!("\n100644 blob {blob}\t{name}"));
    }
    root.push('\n');
    let root = crate::common::git_run(dir, &["mktree"], Some(root.as_bytes()));
    let root = root.stdout.trim().to_owned();
    git(dir, &["commit-tree", &root, "-p", &tip, "-m", "junk"])
}

fn files_outside_the_layout_stop_the_diff_early(prefix: &str) {
    let (f, _servers, server) = pushed_fixture(prefix);
    // A few are each named.
    let text = push_refused(&f, &server, &root_junk(&f, 3)).join("\n");
    assert_eq!(
        text.matches("is outside the ledger layout").count(),
        3,
        "{text}"
    );
    // Many: the diff stops after 64, one reason says so.
    let remote = push_refused(&f, &server, &root_junk(&f, 20_000));
    let text = remote.join("\n");
    assert!(
        text.contains("rule 3: more than 64 entries outside rows/ and records/ changed"),
        "{}",
        &text[..4000.min(text.len())]
    );
    assert!(remote.len() < 10, "{} remote lines", remote.len());
}

#[test]
fn a_file_mode_ledger_is_never_written_over_the_bound() {
    let dir = file_mode_ledger();
    let d = dir.path();
    // A compact declaration, smaller than the ledger.
    write(
        d,
        "campaign.json",
        serde_json::to_vec(&declaration_value(ID, 2)).unwrap(),
    );
    let template = ledger(d, &["template", "campaign.json"])
        .ok()
        .stdout
        .clone();
    write(d, "real/ledger.json", &template);
    let before = std::fs::read(d.join("real/ledger.json")).unwrap();
    // A bound the ledger meets now but would not after the put.
    let bound = (before.len() + 10).to_string();
    let r = put_row(d, FILLED, "real/ledger.json");
    assert_eq!(r.code, 0, "{}", r.stderr); // (the row file written; undo the put)
    std::fs::write(d.join("real/ledger.json"), &before).unwrap();
    let r = ledger(
        d,
        &[
            "put",
            "--max-input-bytes",
            &bound,
            FILLED,
            "row.json",
            "campaign.json",
            "real/ledger.json",
        ],
    );
    r.expect_code(2);
    assert!(r.stderr.contains("the resulting ledger"), "{}", r.stderr);
    assert!(r.stderr.contains("over the input bound"), "{}", r.stderr);
    assert_eq!(std::fs::read(d.join("real/ledger.json")).unwrap(), before);
}

crate::common::under_both_prefixes!(
    pushed_records_count_towards_the_push_bound,
    refusal_reasons_are_capped_with_the_count_of_the_rest,
    entries_named_with_a_slash_are_named_by_tree_and_entry,
    files_outside_the_layout_stop_the_diff_early,
);
