//! Concurrency on one ledger ref: eight `put` processes writing ten rows each at once (local
//! compare-and-swap), and four on one ledger file (its lock); `put` racing writers that bypass the tool (plumbing commits moved with
//! `git update-ref`, checked by the installed reference-transaction hook) for the same rows;
//! and the retry bound, reached deterministically through a real store whose writes always lose.
//! Every row lands exactly once, none is filled twice, the ref verifies throughout, and exit 3
//! happens only at the bound.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::{bin, git, git_run, ledger, path_with_bin, pin_env, Run};
use crate::gitstore::{canonical_row, hand_row_value, pretty, Fixture, ID};

/// Every schedule id of the fixture's declaration, in schedule order.
fn schedule(f: &Fixture) -> Vec<String> {
    let decl: Value = serde_json::from_slice(&std::fs::read(f.decl()).unwrap()).unwrap();
    decl["schedule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The template rows by schedule id.
fn template_rows(f: &Fixture) -> BTreeMap<String, Value> {
    let t = f.run(&["template", f.decl().to_str().unwrap()]).ok().json();
    t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["schedule_id"].as_str().unwrap().to_owned(), r.clone()))
        .collect()
}

/// Write a hand row for `sid` (outcome ERROR, `reason` as given) to the fixture's files
/// directory; returns its path.
fn hand_row_file(
    f: &Fixture,
    templates: &BTreeMap<String, Value>,
    sid: &str,
    reason: &str,
) -> PathBuf {
    let mut row = hand_row_value(&templates[sid].to_string(), "ERROR");
    row["reason"] = json!(reason);
    let p = f.file(&format!("{}.{}.json", sid.replace('/', "_"), reason.len()));
    std::fs::write(&p, pretty(&row)).unwrap();
    p
}

/// Run the binary with the binary's directory on PATH, output captured.
fn run_put(dir: &Path, sid: &str, row: &Path) -> Run {
    ledger_on_path(dir, &["put", sid, row.to_str().unwrap()])
}

fn ledger_on_path(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .env("PATH", path_with_bin())
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null());
    let o = cmd.output().unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Row paths modified (not added) by the commits of the ledger ref, with how often: a row
/// filled once is modified by exactly one commit.
fn fills_per_row(dir: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in git(
        dir,
        &[
            "log",
            "--format=",
            "--name-only",
            "--diff-filter=M",
            &crate::common::ledger_ref(dir, ID),
        ],
    )
    .lines()
    .filter(|l| !l.is_empty())
    {
        *out.entry(line.to_owned()).or_insert(0) += 1;
    }
    out
}

/// A thread that runs `verify` on the ledger ref until stopped; returns how many times it
/// verified (every run must admit the ref).
/// `writers` lists of `rows` hand-written rows each (their schedule ids and row files), dealt
/// round-robin over the schedule's first rows.
fn deal(f: &Fixture, writers: usize, rows: usize, reason: &str) -> Vec<Vec<(String, PathBuf)>> {
    let templates = template_rows(f);
    let mut jobs = vec![Vec::new(); writers];
    for (i, sid) in schedule(f).iter().take(writers * rows).enumerate() {
        let p = hand_row_file(f, &templates, sid, reason);
        jobs[i % writers].push((sid.clone(), p));
    }
    jobs
}

/// Run one `put` until it lands, running it again after exit 3 (nothing written, the retry
/// bound reached) as a user would, at most [`MAX_RERUNS`] times: the run that landed, and how
/// many runs hit the bound. Any other exit fails the test.
fn put_until_landed(sid: &str, put: impl Fn() -> Run) -> (Run, usize) {
    for reruns in 0..MAX_RERUNS {
        let r = put();
        match r.code {
            0 => return (r, reruns),
            3 => assert!(r.stderr.contains("nothing was written"), "{}", r.stderr),
            _ => panic!("put {sid}: exit {}\n{}{}", r.code, r.stdout, r.stderr),
        }
    }
    panic!("put {sid}: exit 3 on each of {MAX_RERUNS} runs");
}

/// Reruns of one `put` after exit 3 before a test gives up (the writers would be livelocked).
const MAX_RERUNS: usize = 50;

fn verifier(dir: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) {
            let v = ledger(&dir, &["verify"]);
            assert_eq!(
                v.code, 0,
                "verify during the race: {}{}",
                v.stdout, v.stderr
            );
            n += 1;
        }
        n
    })
}

fn eight_writers_times_ten_rows_each_land_exactly_once(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(27, prefix); // 81 rows
    const WRITERS: usize = 8;
    const ROWS: usize = 10;
    let jobs = deal(&f, WRITERS, ROWS, "crashed under load");
    let stop = Arc::new(AtomicBool::new(false));
    let verify = verifier(f.dir().to_path_buf(), stop.clone());
    // Eight writers at once, each putting its ten rows one after the other. A writer that hits
    // the retry bound (exit 3: nothing written) runs the same put again, as a user would.
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|rows| {
            let dir = f.dir().to_path_buf();
            std::thread::spawn(move || {
                let (mut rebuilt, mut contended) = (0, 0);
                for (sid, p) in rows {
                    let (r, reruns) = put_until_landed(&sid, || run_put(&dir, &sid, &p));
                    rebuilt += r.stdout.matches("rebuilt").count();
                    contended += reruns;
                }
                (rebuilt, contended)
            })
        })
        .collect();
    let (mut rebuilt, mut contended) = (0, 0);
    for h in handles {
        let (r, c) = h.join().unwrap();
        rebuilt += r;
        contended += c;
    }
    stop.store(true, Ordering::Relaxed);
    let verified = verify.join().unwrap();
    // Every row once: one commit per row, each row path modified by exactly one commit.
    assert_eq!(
        git(f.dir(), &["rev-list", "--count", rf]),
        (WRITERS * ROWS + 1).to_string()
    );
    let fills = fills_per_row(f.dir());
    assert_eq!(fills.len(), WRITERS * ROWS, "{fills:?}");
    assert!(fills.values().all(|&n| n == 1), "{fills:?}");
    let shown = f.run(&["show"]).ok().json();
    let filled = shown["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["native_outcome"] == "ERROR")
        .count();
    assert_eq!(filled, WRITERS * ROWS);
    f.run(&["verify"]).ok();
    eprintln!(
        "concurrency: {WRITERS} writers x {ROWS} rows: {} rows landed once each; {rebuilt} rebuilds after a lost race; {contended} runs hit the retry bound (exit 3, rerun); verify admitted the ref {verified} times during the race",
        WRITERS * ROWS
    );
}

/// File mode: four writers of one ledger file at once, each putting five rows. Writers hold
/// `ledger.json.lock` from comparing the file to renaming the new one over it, so no write is
/// lost (without it two writers could both compare, then both rename, the second dropping the
/// first's row).
fn file_mode_writers_of_one_file_lose_no_row(prefix: &str) {
    let f = Fixture::under(27, prefix);
    let decl = f.decl();
    let file = f.file("ledger.json");
    let template = f.run(&["template", decl.to_str().unwrap()]);
    std::fs::write(&file, template.ok().stdout.as_bytes()).unwrap();
    const WRITERS: usize = 4;
    const ROWS: usize = 5;
    let jobs = deal(&f, WRITERS, ROWS, "crashed in file mode");
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|rows| {
            let (dir, decl, file) = (f.dir().to_path_buf(), decl.clone(), file.clone());
            std::thread::spawn(move || {
                for (sid, p) in rows {
                    let args = [
                        "put",
                        &sid,
                        p.to_str().unwrap(),
                        decl.to_str().unwrap(),
                        file.to_str().unwrap(),
                    ];
                    put_until_landed(&sid, || ledger_on_path(&dir, &args));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // The file passes every check of the report, and holds every row written.
    f.run(&["report", decl.to_str().unwrap(), file.to_str().unwrap()])
        .ok();
    let ledger: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let filled = ledger["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["native_outcome"] == "ERROR")
        .count();
    assert_eq!(filled, WRITERS * ROWS, "rows lost by racing writers");
    assert!(!f.file("ledger.json.lock").exists());
}

/// A writer that bypasses the tool: builds the commit filling `sid` on the current tip with
/// plumbing (its own index file) and moves the ref with `git update-ref REF NEW OLD`, which
/// runs the reference-transaction hook. It does not check whether the row is still DEFERRED:
/// the hook decides. Returns `Ok(commit)` when it landed, `Err(stderr)` when the hook refused.
fn plumbing_fill(dir: &Path, index: &Path, sid: &str, template: &Value) -> Result<String, String> {
    let rf = crate::common::ledger_ref(dir, ID);
    let record = pretty(&json!({"by": "plumbing", "row": sid}));
    let mut row = hand_row_value(&template.to_string(), "ERROR");
    row["reason"] = json!("filled by plumbing");
    row["native_record"] =
        json!({"kind": "hand", "id": sid, "sha256": git_ledger::sha256_hex(&record)});
    let row_bytes = canonical_row(&row);
    let hash = |bytes: &[u8]| {
        let r = git_run(dir, &["hash-object", "-w", "--stdin"], Some(bytes));
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout.trim().to_owned()
    };
    let row_blob = hash(&row_bytes);
    let rec_blob = hash(&record);
    let key_hash = git_ledger::sha256_hex(format!("hand:{sid}").as_bytes());
    let rec_path = format!("records/{}/{}.json", &key_hash[..2], &key_hash[2..]);
    let with_index = |args: &[&str]| {
        let mut cmd = Command::new("git");
        pin_env(&mut cmd)
            .env("GIT_INDEX_FILE", index)
            .current_dir(dir)
            .args(args);
        let o = cmd.output().unwrap();
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    };
    for _ in 0..200 {
        let tip = git(dir, &["rev-parse", &rf]);
        with_index(&["read-tree", &tip]);
        with_index(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{row_blob},rows/{sid}.json"),
            "--cacheinfo",
            &format!("100644,{rec_blob},{rec_path}"),
        ]);
        let tree = with_index(&["write-tree"]);
        let commit = git(
            dir,
            &[
                "commit-tree",
                &tree,
                "-p",
                &tip,
                "-m",
                &format!("fill {sid} by plumbing"),
            ],
        );
        let mut cmd = Command::new("git");
        pin_env(&mut cmd)
            .env("PATH", path_with_bin())
            .current_dir(dir)
            .args(["update-ref", &rf, &commit, &tip]);
        let o = cmd.output().unwrap();
        if o.status.success() {
            return Ok(commit);
        }
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        // Lost the compare-and-swap (or the lock) to another writer: rebuild on the new tip.
        if stderr.contains("rule") {
            return Err(stderr);
        }
        if stderr.contains("but expected") || stderr.contains("Unable to create") {
            continue;
        }
        panic!("update-ref failed for another reason: {stderr}");
    }
    panic!("plumbing writer for {sid} lost 200 races");
}

fn put_races_writers_that_go_through_the_reference_transaction_hook(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(8, prefix); // 24 rows
    let dir = f.dir();
    ledger(dir, &["hooks", "install"]).ok();
    let ids = schedule(&f);
    let templates = template_rows(&f);
    // Four `put` writers and four plumbing writers; every row is wanted by one of each, so for
    // every row exactly one must land and the other be refused.
    const PAIRS: usize = 4;
    let mut put_jobs: Vec<Vec<(String, PathBuf)>> = vec![Vec::new(); PAIRS];
    let mut plumbing_jobs: Vec<Vec<(String, Value)>> = vec![Vec::new(); PAIRS];
    for (i, sid) in ids.iter().enumerate() {
        let p = hand_row_file(&f, &templates, sid, "filled by put");
        put_jobs[i % PAIRS].push((sid.clone(), p));
        // The plumbing writers take the rows in the opposite order, so that both kinds win some.
        plumbing_jobs[(ids.len() - 1 - i) % PAIRS].push((sid.clone(), templates[sid].clone()));
    }
    for j in &mut plumbing_jobs {
        j.reverse();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let verify = verifier(dir.to_path_buf(), stop.clone());
    let mut handles = Vec::new();
    for rows in put_jobs {
        let dir = dir.to_path_buf();
        handles.push(std::thread::spawn(move || {
            let mut landed = Vec::new();
            let mut refused = 0;
            for (sid, p) in rows {
                loop {
                    let r = run_put(&dir, &sid, &p);
                    match r.code {
                        0 => landed.push(sid.clone()),
                        2 => {
                            assert!(
                                r.stderr.contains("already holds an attempt"),
                                "{}",
                                r.stderr
                            );
                            refused += 1;
                        }
                        3 => continue,
                        _ => panic!("put {sid}: exit {}\n{}{}", r.code, r.stdout, r.stderr),
                    }
                    break;
                }
            }
            (landed, refused)
        }));
    }
    for (n, rows) in plumbing_jobs.into_iter().enumerate() {
        let dir = dir.to_path_buf();
        let index = f.file(&format!("index-{n}"));
        handles.push(std::thread::spawn(move || {
            let mut landed = Vec::new();
            let mut refused = 0;
            for (sid, template) in rows {
                match plumbing_fill(&dir, &index, &sid, &template) {
                    Ok(_) => landed.push(sid),
                    Err(stderr) => {
                        // The hook refused a second fill of the row, naming the row and rule.
                        assert!(
                            stderr.contains("rule") && stderr.contains(&sid),
                            "{sid}: {stderr}"
                        );
                        refused += 1;
                    }
                }
            }
            (landed, refused)
        }));
    }
    let mut landed: Vec<String> = Vec::new();
    let (mut put_landed, mut refused) = (0, 0);
    for (i, h) in handles.into_iter().enumerate() {
        let (l, r) = h.join().unwrap();
        if i < PAIRS {
            put_landed += l.len();
        }
        landed.extend(l);
        refused += r;
    }
    stop.store(true, Ordering::Relaxed);
    let verified = verify.join().unwrap();
    landed.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(landed, want, "every row landed exactly once");
    assert_eq!(
        refused,
        ids.len(),
        "the other writer of each row was refused"
    );
    let fills = fills_per_row(dir);
    assert_eq!(fills.len(), ids.len(), "{fills:?}");
    assert!(fills.values().all(|&n| n == 1), "{fills:?}");
    assert_eq!(
        git(dir, &["rev-list", "--count", rf]),
        (ids.len() + 1).to_string()
    );
    f.run(&["verify"]).ok();
    eprintln!(
        "concurrency: put vs plumbing through the hook: {} rows, {put_landed} landed by put, {} by plumbing, {refused} second fills refused; verify admitted the ref {verified} times during the race",
        ids.len(),
        ids.len() - put_landed
    );
}

/// A real store (a ledger file) whose writes always lose the race, as if another writer moved
/// the ledger every time: the write path gives up after exactly `MAX_ATTEMPTS` tries with
/// exit 3 and leaves the file as it was; losing one time fewer still writes.
struct AlwaysMoved {
    inner: git_ledger::store::file::FileStore,
    lose: usize,
    writes: usize,
    reloads: usize,
}

impl git_ledger::store::Store for AlwaysMoved {
    fn declaration(&self) -> &git_ledger::declaration::Declaration {
        self.inner.declaration()
    }
    fn row(&mut self, id: &str) -> git_ledger::Result<git_ledger::ledger::Row> {
        self.inner.row(id)
    }
    fn record_owner(&mut self, key: &str) -> git_ledger::Result<Option<String>> {
        self.inner.record_owner(key)
    }
    fn write(
        &mut self,
        change: &git_ledger::store::Change,
    ) -> Result<(), git_ledger::store::WriteError> {
        self.writes += 1;
        if self.writes <= self.lose {
            return Err(git_ledger::store::WriteError::Moved);
        }
        self.inner.write(change)
    }
    fn rehearse(
        &mut self,
        change: &git_ledger::store::Change,
    ) -> git_ledger::Result<Option<String>> {
        self.inner.rehearse(change)
    }
    fn reload(&mut self) -> git_ledger::Result<()> {
        self.reloads += 1;
        self.inner.reload()
    }
}

fn exit_3_only_when_the_retry_bound_is_reached(prefix: &str) {
    use git_ledger::store::{apply, MAX_ATTEMPTS};
    let f = Fixture::under(1, prefix);
    let sid = "scenario/bugfix-iso-weeks/01";
    let ledger_file = f.file("ledger.json");
    let t = f.run(&["template", f.decl().to_str().unwrap()]);
    std::fs::write(&ledger_file, t.ok().stdout.as_bytes()).unwrap();
    let templates = template_rows(&f);
    let row_file = hand_row_file(&f, &templates, sid, "crashed");
    let row = std::fs::read(&row_file).unwrap();
    let open = |lose| AlwaysMoved {
        inner: git_ledger::store::file::FileStore::open(&f.decl(), &ledger_file, 1 << 26).unwrap(),
        lose,
        writes: 0,
        reloads: 0,
    };
    let before = std::fs::read(&ledger_file).unwrap();
    let mut s = open(usize::MAX);
    let e = apply(&mut s, |s| {
        git_ledger::hand::put(s, sid, &row, "row.json", 1 << 26)
    })
    .unwrap_err();
    assert_eq!(e.exit_code(), 3, "{e}");
    assert!(
        e.to_string()
            .contains(&format!("each of {MAX_ATTEMPTS} tries")),
        "{e}"
    );
    assert_eq!(s.writes, MAX_ATTEMPTS);
    assert_eq!(
        std::fs::read(&ledger_file).unwrap(),
        before,
        "nothing was written"
    );
    // Losing on every try but the last: the write lands.
    let mut s = open(MAX_ATTEMPTS - 1);
    apply(&mut s, |s| {
        git_ledger::hand::put(s, sid, &row, "row.json", 1 << 26)
    })
    .unwrap();
    assert_eq!(s.writes, MAX_ATTEMPTS);
    assert_eq!(s.reloads, MAX_ATTEMPTS - 1);
    assert_ne!(std::fs::read(&ledger_file).unwrap(), before);
    // The same ledger file through the command: the row is there once; putting it again is a
    // retry (exit 2), not contention.
    let r = ledger(
        f.dir(),
        &[
            "put",
            sid,
            row_file.to_str().unwrap(),
            f.decl().to_str().unwrap(),
            ledger_file.to_str().unwrap(),
        ],
    );
    r.expect_code(2);
}

crate::common::under_both_prefixes!(
    eight_writers_times_ten_rows_each_land_exactly_once,
    file_mode_writers_of_one_file_lose_no_row,
    put_races_writers_that_go_through_the_reference_transaction_hook,
    exit_3_only_when_the_retry_bound_is_reached,
);
