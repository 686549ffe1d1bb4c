//! The benchmarks at scale (`bench/run`, which builds this and runs it): every figure next to
//! the alternative a user has, measured in the same run, on synthetic campaigns generated into a
//! fresh temporary directory by `examples/synth.rs` (nothing is reused from an earlier run).
//!
//! ```text
//! bench/run            # full size: 100,000 rows, 10,000-commit history, 200 MB / 20,000 files
//! bench/run --quick    # 10,000 rows, 1,000 commits, 20 MB / 2,000 files
//! bench/run --keep DIR # build the campaigns in DIR and leave them there
//! bench/run --inspect  # only the Inspect import (1,000 samples × 2 epochs) beside read_eval_log
//! bench/run --harbor   # only the Harbor import (a job of 1,000 trials) beside Harbor's models
//! bench/run --signing  # only the signed-ledger figures (hook per push size, verify signed)
//! bench/run --report   # only the report figures: 100,000 rows (file, ref, show), issue 30's
//!                      # mix and 1,000,000
//! ```
//!
//! Times are the best of several runs (the machine is shared); memory is the maximum resident
//! set size that `/usr/bin/time -v` reports.

#[path = "common/bench_campaign.rs"]
mod bench_campaign;
#[path = "common/cat_file.rs"]
mod cat_file;
#[path = "common/harbor_bench.rs"]
mod harbor_bench;
#[path = "common/inspect_bench.rs"]
mod inspect_bench;
#[path = "common/rusage.rs"]
mod rusage;
#[path = "common/venv.rs"]
mod venv;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Sizes {
    tasks: usize,
    repetitions: usize,
    history: usize,
    blob_mb: usize,
    files: usize,
}

const FULL: Sizes = Sizes {
    tasks: 1000,
    repetitions: 100,
    history: 10_000,
    blob_mb: 200,
    files: 20_000,
};
const QUICK: Sizes = Sizes {
    tasks: 100,
    repetitions: 100,
    history: 1000,
    blob_mb: 20,
    files: 2000,
};
/// The small campaign the import is compared with: 1,000 rows.
const SMALL: Sizes = Sizes {
    tasks: 10,
    repetitions: 100,
    history: 100,
    blob_mb: 0,
    files: 0,
};

const BIG_INPUT: &str = "4000000000";

fn release_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/release/examples/bench -> target/release
    exe.parent()
        .and_then(Path::parent)
        .expect("target/release")
        .to_path_buf()
}

/// A command with a pinned Git environment (no user or system config, fixed identity).
fn cmd(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    c
}

fn run(mut c: Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{c:?} exited with {}:\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let mut c = cmd("git", dir);
    c.args(args);
    run(c)
}

/// Run a command quietly (stdout to /dev/null), panicking on failure; returns its wall time.
fn timed(mut c: Command) -> Duration {
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    let start = Instant::now();
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let d = start.elapsed();
    if !out.status.success() {
        panic!(
            "{c:?} exited with {}:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    d
}

/// The best of `runs` timings of `f`.
fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().expect("one run")
}

/// Wall time and maximum RSS (KB) of one run under `/usr/bin/time -v`.
fn time_v(c: &Command) -> (Duration, u64) {
    let mut t = Command::new("/usr/bin/time");
    t.arg("-v").arg(c.get_program()).args(c.get_args());
    if let Some(d) = c.get_current_dir() {
        t.current_dir(d);
    }
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    t.stdout(Stdio::null()).stderr(Stdio::piped());
    let start = Instant::now();
    let out = t
        .output()
        .expect("run /usr/bin/time (apt-get install time)");
    let d = start.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{c:?}: {err}");
    let rss = err
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .expect("max RSS in /usr/bin/time -v output");
    (d, rss)
}

/// Wall time, maximum RSS (KB) and CPU time (user + system) of one run under
/// `/usr/bin/time -v`.
fn time_cpu(c: &Command) -> (Duration, u64, Duration) {
    let mut t = Command::new("/usr/bin/time");
    t.arg("-v").arg(c.get_program()).args(c.get_args());
    if let Some(d) = c.get_current_dir() {
        t.current_dir(d);
    }
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    t.stdout(Stdio::null()).stderr(Stdio::piped());
    let start = Instant::now();
    let out = t
        .output()
        .expect("run /usr/bin/time (apt-get install time)");
    let d = start.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{c:?}: {err}");
    let field = |name: &str| -> &str {
        err.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("{name} in /usr/bin/time -v output"))
            .trim()
    };
    let rss = field("Maximum resident set size (kbytes): ")
        .parse()
        .expect("max RSS");
    let cpu: f64 = ["User time (seconds): ", "System time (seconds): "]
        .iter()
        .map(|f| field(f).parse::<f64>().expect("seconds"))
        .sum();
    (d, rss, Duration::from_secs_f64(cpu))
}

/// One line of the table.
struct Line {
    what: String,
    ours: String,
    other: String,
    ratio: String,
    target: String,
}

#[derive(Default)]
struct Table {
    lines: Vec<Line>,
    verdicts: Vec<(String, bool)>,
}

impl Table {
    fn add(&mut self, what: &str, ours: String, other: String, ratio: String, target: &str) {
        let l = Line {
            what: what.to_owned(),
            ours,
            other,
            ratio,
            target: target.to_owned(),
        };
        println!(
            "  {:<58} {:>12} {:>14} {:>9}  {}",
            l.what, l.ours, l.other, l.ratio, l.target
        );
        self.lines.push(l);
    }
    fn verdict(&mut self, what: &str, met: bool) {
        self.verdicts.push((what.to_owned(), met));
    }
    fn print(&self) {
        println!();
        println!(
            "  {:<58} {:>12} {:>14} {:>9}  target",
            "figure", "git-ledger", "alternative", "ratio"
        );
        println!("  {}", "-".repeat(120));
        for l in &self.lines {
            println!(
                "  {:<58} {:>12} {:>14} {:>9}  {}",
                l.what, l.ours, l.other, l.ratio, l.target
            );
        }
        println!();
        for (what, met) in &self.verdicts {
            println!("  {} {what}", if *met { "MET   " } else { "MISSED" });
        }
    }
}

fn secs(d: Duration) -> String {
    if d < Duration::from_millis(100) {
        format!("{:.1} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}

fn x(r: f64) -> String {
    format!("{r:.2}x")
}

fn mb(kb: u64) -> String {
    format!("{:.0} MB", kb as f64 / 1024.0)
}

/// Generate a campaign with `examples/synth.rs`.
fn synth(dir: &Path, s: &Sizes) -> Campaign {
    let mut c = cmd(
        release_dir().join("examples/synth"),
        dir.parent().expect("a parent"),
    );
    c.args([
        "--tasks",
        &s.tasks.to_string(),
        "--repetitions",
        &s.repetitions.to_string(),
        "--history",
        &s.history.to_string(),
        "--out",
    ])
    .arg(dir);
    if s.blob_mb > 0 {
        c.args([
            "--blob-mb",
            &s.blob_mb.to_string(),
            "--files",
            &s.files.to_string(),
        ]);
    }
    let start = Instant::now();
    c.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    let status = c.status().expect("run synth");
    assert!(status.success(), "synth failed");
    println!(
        "  generated {} ({} rows) in {:.1} s",
        dir.display(),
        s.tasks * s.repetitions,
        start.elapsed().as_secs_f64()
    );
    let id = format!("synth-{}x{}", s.tasks, s.repetitions);
    let tips: Vec<String> = std::fs::read_to_string(dir.join("tips.txt"))
        .expect("tips.txt")
        .lines()
        .map(str::to_owned)
        .collect();
    let spare: Vec<(String, String)> = std::fs::read_to_string(dir.join("spare.txt"))
        .expect("spare.txt")
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').expect("spare line");
            (a.to_owned(), b.to_owned())
        })
        .collect();
    Campaign {
        dir: dir.to_owned(),
        repo: dir.join("harness"),
        refname: format!("refs/ledgers/{id}"),
        tips,
        spare,
    }
}

struct Campaign {
    dir: PathBuf,
    repo: PathBuf,
    refname: String,
    tips: Vec<String>,
    spare: Vec<(String, String)>,
}

impl Campaign {
    fn ledger(&self, args: &[&str]) -> Command {
        let mut c = cmd(release_dir().join("git-ledger"), &self.repo);
        c.args(args);
        c
    }
}

// --- pin ---------------------------------------------------------------------------------

fn bench_pin(t: &mut Table, label: &str, repo_dir: &Path, path: &str) {
    let repo = git_ledger::git::open(Some(repo_dir)).expect("open");
    let commit = git_ledger::git::resolve_commit(&repo, "HEAD").expect("HEAD");
    let listing = git(repo_dir, &["ls-tree", "-r", "-l", "HEAD", "--", path]);
    let mut ids = String::new();
    let mut bytes = 0u64;
    let mut files = 0;
    for l in listing.lines() {
        let mut f = l.split_whitespace();
        let (_, kind, id, size) = (f.next(), f.next(), f.next(), f.next());
        if kind == Some("blob") {
            ids.push_str(id.expect("id"));
            ids.push('\n');
            bytes += size.and_then(|s| s.parse().ok()).unwrap_or(0);
            files += 1;
        }
    }
    let what = format!("pin: {label} ({files} files, {:.1} MB)", bytes as f64 / 1e6);
    let mut hash = None;
    let ours = best(5, || {
        let s = Instant::now();
        hash = Some(git_ledger::git::definition_hash(&repo, commit, path).expect("hash"));
        s.elapsed()
    });
    let hash = hash.expect("hashed");
    let one = best(3, || {
        let s = Instant::now();
        let h = git_ledger::git::definition_hash_with(&repo, commit, path, 1).expect("hash");
        assert_eq!(h, hash);
        s.elapsed()
    });
    let cat = best(5, || {
        let s = Instant::now();
        assert!(cat_file::stream(cmd("git", repo_dir), &ids) >= bytes);
        s.elapsed()
    });
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cli/defhash_reference.py"
    );
    let mut py_out = String::new();
    let py = best(2, || {
        let mut c = cmd("python3", repo_dir);
        c.args([script, &commit.to_string(), path]);
        let s = Instant::now();
        py_out = run(c);
        s.elapsed()
    });
    assert_eq!(
        py_out,
        format!("{} {}", hash.sha256, hash.files),
        "the Python baseline disagrees"
    );
    let rate = |d: Duration| format!("{:.0} MB/s", bytes as f64 / 1e6 / d.as_secs_f64());
    t.add(
        &format!("{what}, all cores vs git cat-file --batch"),
        secs(ours),
        secs(cat),
        x(cat.as_secs_f64() / ours.as_secs_f64()),
        &format!("≥ 1x ({} vs {})", rate(ours), rate(cat)),
    );
    t.add(
        &format!("{what}, all cores vs Python hashlib"),
        secs(ours),
        secs(py),
        x(py.as_secs_f64() / ours.as_secs_f64()),
        "≥ 5x",
    );
    t.add(
        &format!("{what}, one thread vs git cat-file --batch"),
        secs(one),
        secs(cat),
        x(cat.as_secs_f64() / one.as_secs_f64()),
        "(for reference)",
    );
    t.verdict(
        &format!("{label}: pin at least as fast as git cat-file --batch"),
        ours <= cat,
    );
    t.verdict(
        &format!("{label}: pin ≥ 5x the Python baseline"),
        py >= ours * 5,
    );
}

// --- report ------------------------------------------------------------------------------

fn bench_report(t: &mut Table, big: &Campaign, rows: usize, root: &Path, million: bool) {
    let campaign = big.repo.join("campaign.json");
    let ledger = big.dir.join("ledger.json");
    let size = std::fs::metadata(&ledger).expect("ledger.json").len();
    let report = |campaign: &Path, ledger: &Path| {
        let mut c = big.ledger(&["report", "--json", "--max-input-bytes", BIG_INPUT]);
        c.arg(campaign).arg(ledger);
        c
    };
    let ours = best(3, || timed(report(&campaign, &ledger)));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/report_baseline.py");
    let py_cmd = || {
        let mut c = cmd("python3", &big.repo);
        c.arg(script).arg(&campaign).arg(&ledger);
        c
    };
    let py = best(2, || timed(py_cmd()));
    let floor_cmd = |ledger: &Path| {
        let mut c = cmd(release_dir().join("examples/parse_floor"), &big.repo);
        c.arg(ledger);
        c
    };
    let floor = best(3, || timed(floor_cmd(&ledger)));
    let hash = hash_floor(&big.repo, &ledger);
    let (_, rss, cpu) = time_cpu(&report(&campaign, &ledger));
    let (_, py_rss, py_cpu) = time_cpu(&py_cmd());
    let what = format!(
        "report: {rows} rows ({:.0} MB ledger.json) vs Python json.load",
        size as f64 / 1e6
    );
    t.add(
        &what,
        secs(ours),
        secs(py),
        x(py.as_secs_f64() / ours.as_secs_f64()),
        ">= 5x, >= 1 M rows/s",
    );
    t.add(
        "report: CPU time (user + sys) vs Python",
        secs(cpu),
        secs(py_cpu),
        x(py_cpu.as_secs_f64() / cpu.as_secs_f64()),
        "(reported)",
    );
    t.add(
        "report: vs a bare parse of the same bytes (examples/parse_floor)",
        secs(ours),
        secs(floor),
        x(ours.as_secs_f64() / floor.as_secs_f64()),
        "<= 2x",
    );
    t.add(
        "report: peak memory (max RSS) vs Python",
        mb(rss),
        mb(py_rss),
        x(py_rss as f64 / rss as f64),
        "< 64 MB",
    );
    two_core_floor(t, rows, ours, floor, hash);
    t.verdict(
        &format!(
            "report on {rows} rows at >= 1 M rows/s ({:.2} M rows/s)",
            rows as f64 / ours.as_secs_f64() / 1e6
        ),
        rows as f64 / ours.as_secs_f64() >= 1e6,
    );
    t.verdict(
        &format!("report on {rows} rows <= 2x the bare parse"),
        ours <= floor * 2,
    );
    t.verdict(
        &format!("report on {rows} rows >= 5x Python"),
        py >= ours * 5,
    );
    t.verdict(
        &format!("report on {rows} rows in < 64 MB"),
        rss < 64 * 1024,
    );
    // The ledger's fast path (json/direct.rs, ledger/fast.rs) against the ordinary path it
    // falls back to, in one process on the same bytes (examples/fast_gain.rs).
    let mut gain = cmd(release_dir().join("examples/fast_gain"), &big.repo);
    gain.arg(&campaign).arg(&ledger);
    // And the declaration's (declaration/fast.rs) against its ordinary parse.
    let out = run(gain);
    for line in out.lines() {
        let seconds: Vec<f64> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let what = match line.split_whitespace().next() {
            Some("ledger") => "report's reading: the fast path vs the ordinary path".to_owned(),
            Some("declaration") => format!(
                "declaration's parse ({:.1} MB): the fast path vs the ordinary path",
                std::fs::metadata(&campaign).map_or(0, |m| m.len()) as f64 / 1e6
            ),
            _ => continue,
        };
        if let [fast, ordinary] = seconds[..] {
            t.add(
                &what,
                format!("{fast:.3} s"),
                format!("{ordinary:.3} s"),
                x(ordinary / fast),
                "(the fast path's gain)",
            );
        }
    }
    // Ref mode: the same kind of report of the ledger ref's tip (its rows one file each), after
    // an untimed report has established the tip admitted; and `show` of it.
    let at_ref = || big.ledger(&["report", "--json", "--max-input-bytes", BIG_INPUT]);
    timed(at_ref());
    let ref_time = best(2, || timed(at_ref()));
    let (_, ref_rss, _) = time_cpu(&at_ref());
    t.add(
        &format!("report of the ledger ref ({rows} row files), admitted tip"),
        secs(ref_time),
        mb(ref_rss),
        String::new(),
        "(reported: time, max RSS)",
    );
    let show = || big.ledger(&["show", "--max-input-bytes", BIG_INPUT]);
    let show_time = best(2, || timed(show()));
    let (_, show_rss, _) = time_cpu(&show());
    t.add(
        &format!("show of the ledger ref ({rows} row files)"),
        secs(show_time),
        mb(show_rss),
        String::new(),
        "(reported: time, max RSS)",
    );
    if million {
        bench_report_thirds(t, big, root);
        bench_report_million(t, big, root);
    }
}

/// `report --json` of a ledger file.
fn file_report(big: &Campaign, campaign: &Path, ledger: &Path) -> Command {
    let mut c = big.ledger(&["report", "--json", "--max-input-bytes", BIG_INPUT]);
    c.arg(campaign).arg(ledger);
    c
}

/// The bare parse of a ledger file (`parse_floor`), best of `runs`.
fn parse_floor(dir: &Path, ledger: &Path, runs: usize) -> Duration {
    best(runs, || {
        let mut c = cmd(release_dir().join("examples/parse_floor"), dir);
        c.arg(ledger);
        timed(c)
    })
}

/// The file's SHA-256 alone, one core (`parse_floor --sha256`): the report names the ledger by
/// it, so no report is cheaper.
fn hash_floor(dir: &Path, ledger: &Path) -> Duration {
    best(3, || {
        let mut c = cmd(release_dir().join("examples/parse_floor"), dir);
        c.arg("--sha256").arg(ledger);
        timed(c)
    })
}

/// What two cores allow at best: the hash and the bare parse, with nothing checked, shared
/// between them without loss (the larger of the hash and half their sum), and the rows a
/// second that allows.
fn two_core_floor(t: &mut Table, rows: usize, ours: Duration, parse: Duration, hash: Duration) {
    let bound = hash.max((hash + parse) / 2);
    t.add(
        &format!(
            "report: the file's SHA-256 alone; the floor on two cores ({:.2} M rows/s at most)",
            rows as f64 / bound.as_secs_f64() / 1e6
        ),
        secs(hash),
        secs(bound),
        x(ours.as_secs_f64() / bound.as_secs_f64()),
        "(reported: report / floor)",
    );
}

/// The report of a ledger made as issue 30's was: 100,000 rows dealt a verified PASS, an ERROR
/// and a DEFERRED row in turn (`synth --ledger-only --thirds`), beside the bare parse, the
/// hash and Python; the campaign is removed afterwards.
fn bench_report_thirds(t: &mut Table, big: &Campaign, root: &Path) {
    let dir = root.join("thirds");
    let mut c = cmd(release_dir().join("examples/synth"), root);
    c.args([
        "--tasks",
        "1000",
        "--repetitions",
        "100",
        "--ledger-only",
        "--thirds",
        "--out",
    ])
    .arg(&dir);
    c.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    assert!(c.status().expect("run synth").success(), "synth failed");
    let campaign = dir.join("harness/campaign.json");
    let ledger = dir.join("ledger.json");
    let size = std::fs::metadata(&ledger).expect("ledger.json").len();
    let report = || file_report(big, &campaign, &ledger);
    let ours = best(3, || timed(report()));
    let floor = parse_floor(root, &ledger, 3);
    let hash = hash_floor(root, &ledger);
    let py = best(2, || {
        let mut c = cmd("python3", root);
        c.arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/bench/report_baseline.py"
        ))
        .arg(&campaign)
        .arg(&ledger);
        timed(c)
    });
    let (_, rss, _) = time_cpu(&report());
    t.add(
        &format!(
            "report: issue 30's mix, 100,000 rows ({:.0} MB, a third each PASS, ERROR, DEFERRED) vs Python",
            size as f64 / 1e6
        ),
        secs(ours),
        secs(py),
        x(py.as_secs_f64() / ours.as_secs_f64()),
        ">= 5x, >= 1 M rows/s",
    );
    t.add(
        "report: issue 30's mix vs the bare parse; peak memory",
        secs(floor),
        mb(rss),
        x(ours.as_secs_f64() / floor.as_secs_f64()),
        "<= 2x, < 64 MB",
    );
    two_core_floor(t, 100_000, ours, floor, hash);
    t.verdict(
        &format!(
            "report on issue 30's mix at >= 1 M rows/s ({:.2} M rows/s)",
            1e5 / ours.as_secs_f64() / 1e6
        ),
        1e5 / ours.as_secs_f64() >= 1e6,
    );
    t.verdict(
        "report on issue 30's mix <= 2x the bare parse",
        ours <= floor * 2,
    );
    t.verdict("report on issue 30's mix >= 5x Python", py >= ours * 5);
    t.verdict("report on issue 30's mix in < 64 MB", rss < 64 * 1024);
    std::fs::remove_dir_all(&dir).expect("remove the thirds campaign");
}

/// The report of a 1,000,000-row ledger file (2,000 tasks x 500 repetitions, made by
/// `synth --ledger-only`), beside the bare parse; the campaign is removed afterwards.
fn bench_report_million(t: &mut Table, big: &Campaign, root: &Path) {
    let dir = root.join("million");
    let mut c = cmd(release_dir().join("examples/synth"), root);
    c.args([
        "--tasks",
        "2000",
        "--repetitions",
        "500",
        "--ledger-only",
        "--out",
    ])
    .arg(&dir);
    c.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    let start = Instant::now();
    assert!(c.status().expect("run synth").success(), "synth failed");
    println!(
        "  generated {} (1,000,000 rows) in {:.1} s",
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    let campaign = dir.join("harness/campaign.json");
    let ledger = dir.join("ledger.json");
    let size = std::fs::metadata(&ledger).expect("ledger.json").len();
    let report = || file_report(big, &campaign, &ledger);
    let ours = best(2, || timed(report()));
    let floor = parse_floor(root, &ledger, 2);
    let (_, rss, cpu) = time_cpu(&report());
    t.add(
        &format!(
            "report: 1,000,000 rows ({:.0} MB) vs the bare parse",
            size as f64 / 1e6
        ),
        secs(ours),
        secs(floor),
        x(ours.as_secs_f64() / floor.as_secs_f64()),
        "<= 2x",
    );
    t.add(
        "report: 1,000,000 rows, CPU time and peak memory (max RSS)",
        secs(cpu),
        mb(rss),
        String::new(),
        "< 64 MB",
    );
    t.verdict(
        "report on 1,000,000 rows <= 2x the bare parse",
        ours <= floor * 2,
    );
    t.verdict("report on 1,000,000 rows in < 64 MB", rss < 64 * 1024);
    std::fs::remove_dir_all(&dir).expect("remove the 1,000,000-row campaign");
}

// --- import ------------------------------------------------------------------------------

/// Best time of importing a spare record into `c`'s ref at `at`, the ref reset to `at` after
/// each run. Each run imports another record (`records`, indexes into the spare ones), so each
/// writes new trees as a real import does. `cold`: the cache of checked declarations is
/// removed before each run, as in the first command after a clone; otherwise an untimed
/// import first fills it, and the other records are timed.
fn import_at(c: &Campaign, at: &str, records: std::ops::Range<usize>, cold: bool) -> Duration {
    let cache = c.repo.join(".git/git-ledger");
    let import = |i: usize| {
        let (id, path) = &c.spare[i % c.spare.len()];
        git(&c.repo, &["update-ref", &c.refname, at]);
        if cold {
            let _ = std::fs::remove_dir_all(&cache);
        }
        let mut cmd = c.ledger(&["import", "--scenario", id, path, "--runtime-identity"]);
        cmd.arg(c.dir.join("runtime.json"));
        timed(cmd)
    };
    let mut records = records.peekable();
    if !cold {
        import(*records.peek().expect("a record"));
        records.next();
    }
    let d = records.map(import).min().expect("a timed run");
    git(
        &c.repo,
        &["update-ref", &c.refname, c.tips.last().expect("tip")],
    );
    d
}

fn declaration_parse(c: &Campaign) -> Duration {
    let bytes = std::fs::read(c.repo.join("campaign.json")).expect("campaign.json");
    best(3, || {
        let s = Instant::now();
        let d = git_ledger::declaration::Declaration::parse(&bytes, u64::MAX).expect("parse");
        let e = s.elapsed();
        drop(d);
        e
    })
}

fn bench_import(t: &mut Table, big: &Campaign, small: &Campaign, rows: usize) {
    let tip = big.tips.last().expect("tip").clone();
    let root = big.tips[0].clone();
    let small_tip = small.tips.last().expect("tip").clone();
    let ours = import_at(big, &tip, 0..4, false);
    let at_root = import_at(big, &root, 0..4, false);
    let theirs = import_at(small, &small_tip, 0..4, false);
    let ours_cold = import_at(big, &tip, 4..8, true);
    let theirs_cold = import_at(small, &small_tip, 4..8, true);
    let parse_big = declaration_parse(big);
    let parse_small = declaration_parse(small);
    let filled = big.tips.len() - 1;
    t.add(
        &format!("import 1 attempt: {rows}-row ref ({filled} filled) vs 1,000-row ref"),
        secs(ours),
        secs(theirs),
        x(ours.as_secs_f64() / theirs.as_secs_f64()),
        "≤ 1.5x",
    );
    t.add(
        &format!("import 1 attempt: {rows}-row ref, {filled} filled vs 0 filled (root)"),
        secs(ours),
        secs(at_root),
        x(ours.as_secs_f64() / at_root.as_secs_f64()),
        "(ledger fill, history)",
    );
    t.add(
        &format!("import 1 attempt: {rows}-row ref at its root (0 filled) vs 1,000-row ref"),
        secs(at_root),
        secs(theirs),
        x(at_root.as_secs_f64() / theirs.as_secs_f64()),
        "(rows alone, records/ empty)",
    );
    t.add(
        &format!("import 1 attempt, declaration not cached (first command after a clone): {rows}-row ref vs 1,000-row ref"),
        secs(ours_cold),
        secs(theirs_cold),
        x(ours_cold.as_secs_f64() / theirs_cold.as_secs_f64()),
        "(reported)",
    );
    t.add(
        &format!("  of which: parse + check the declaration ({rows} vs 1,000 rows)"),
        secs(parse_big),
        secs(parse_small),
        x(parse_big.as_secs_f64() / parse_small.as_secs_f64()),
        "(size of campaign.json)",
    );
    t.add(
        "  cold import minus declaration parse, big vs small",
        secs(ours_cold.saturating_sub(parse_big)),
        secs(theirs_cold.saturating_sub(parse_small)),
        x(ours_cold.saturating_sub(parse_big).as_secs_f64()
            / theirs_cold.saturating_sub(parse_small).as_secs_f64()),
        "",
    );
    t.verdict(
        &format!("import into the {rows}-row ref within 1.5x of the 1,000-row ref"),
        ours.as_secs_f64() <= 1.5 * theirs.as_secs_f64(),
    );
    t.verdict(
        "import cost independent of rows filled and history (within 1.5x of the same ref at its root)",
        ours.as_secs_f64() <= 1.5 * at_root.as_secs_f64(),
    );
}

// --- admission ---------------------------------------------------------------------------

fn hook_exists() -> bool {
    Command::new(release_dir().join("git-ledger"))
        .args(["hook", "pre-receive", "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn bench_admission(t: &mut Table, big: &Campaign, scratch: &Path) {
    let n = big.tips.len();
    let (old, new) = (big.tips[n - 2].clone(), big.tips[n - 1].clone());
    let bare = scratch.join("server.git");
    // The server holds the ledger up to `old`; each timed push sends `new` (the server's ref
    // is reset to `old` between runs).
    git(scratch, &["init", "-q", "--bare", "server.git"]);
    let client = &big.repo;
    let mut c = cmd("git", client);
    c.args(["push", "-q"])
        .arg(&bare)
        .arg(format!("{old}:{}", big.refname));
    run(c);
    let push = || {
        git(&bare, &["update-ref", &big.refname, &old]);
        let mut c = cmd("git", client);
        c.args(["push", "-q"])
            .arg(&bare)
            .arg(format!("{new}:{}", big.refname));
        timed(c)
    };
    let plain = best(5, push);
    let hooks = bare.join("hooks");
    let (with, how) = if hook_exists() {
        let hook = hooks.join("pre-receive");
        std::fs::create_dir_all(&hooks).expect("hooks dir");
        std::fs::write(
            &hook,
            format!(
                "#!/bin/sh\nexec '{}' hook pre-receive\n",
                release_dir().join("git-ledger").display()
            ),
        )
        .expect("write hook");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let d = best(5, push);
        std::fs::remove_file(&hook).expect("remove hook");
        (
            d.saturating_sub(plain),
            "git push with hooks/pre-receive minus without",
        )
    } else {
        // The hook command is not in this build: time the library call it makes, in process,
        // opening the repository as the hook would.
        let oldid: git_ledger::git::ObjectId = old.parse().expect("id");
        let newid: git_ledger::git::ObjectId = new.parse().expect("id");
        let d = best(5, || {
            let s = Instant::now();
            let repo = git_ledger::git::open(Some(&bare)).expect("open");
            let k = git_ledger::git::admit::admit_update(
                &repo,
                &big.refname,
                Some(oldid),
                Some(newid),
                git_ledger::json::DEFAULT_MAX_INPUT_BYTES,
            )
            .expect("admitted");
            assert_eq!(k, 1);
            s.elapsed()
        });
        (d, "admit_update in process (no hook command yet)")
    };
    t.add(
        &format!("admission of 1 pushed import ({} commits): {how}", n),
        secs(with),
        secs(plain),
        x(with.as_secs_f64() / plain.as_secs_f64()),
        "≤ 0.5x of the push",
    );
    t.verdict(
        "the pre-receive admission adds at most half of a hook-less push",
        with.as_secs_f64() <= 0.5 * plain.as_secs_f64(),
    );
}

// --- signed ledgers (signing.md) ----------------------------------------------------------

/// Install the server hook into a bare repository (`hooks/pre-receive` running the release
/// binary, appending its own wall time in nanoseconds to `hook-ns`), or remove it.
fn set_hook(bare: &Path, on: bool) {
    let hook = bare.join("hooks/pre-receive");
    if on {
        std::fs::create_dir_all(bare.join("hooks")).expect("hooks dir");
        std::fs::write(
            &hook,
            format!(
                "#!/bin/sh\ns=$(date +%s%N)\n'{}' hook pre-receive\nrc=$?\ne=$(date +%s%N)\necho $((e - s)) >> '{}'\nexit $rc\n",
                release_dir().join("git-ledger").display(),
                bare.join("hook-ns").display()
            ),
        )
        .expect("write hook");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    } else {
        let _ = std::fs::remove_file(&hook);
    }
}

/// The hook's time for pushes of 1, 100 and every signed commit of a chain (the hook's own
/// wall time, measured by the hook script, beside the same push without the hook), and
/// `verify` of the signed chain against the same chain unsigned.
fn bench_signing(t: &mut Table, root: &Path, history: usize) {
    if Command::new("ssh-keygen").arg("-?").output().is_err() {
        println!("  (signed ledgers skipped: ssh-keygen is not installed)");
        return;
    }
    let keys = root.join("keys");
    std::fs::create_dir_all(&keys).expect("mkdir keys");
    let key = keys.join("writer");
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "writer", "-f"])
        .arg(&key)
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen failed");
    // Same rows, same seed: one chain signed, one not (10,000 rows scheduled for a 10,000-commit
    // history needs a few spare rows).
    let sizes = Sizes {
        tasks: history / 100 + 1,
        repetitions: 100,
        history,
        blob_mb: 0,
        files: 0,
    };
    let unsigned = synth(&root.join("chain"), &sizes);
    let signed = {
        let dir = root.join("chain-signed");
        let mut c = cmd(release_dir().join("examples/synth"), root);
        c.args([
            "--tasks",
            &sizes.tasks.to_string(),
            "--repetitions",
            "100",
            "--history",
            &history.to_string(),
            "--writers",
        ])
        .arg(&key)
        .arg("--out")
        .arg(&dir);
        c.stdout(Stdio::inherit()).stderr(Stdio::inherit());
        assert!(
            c.status().expect("run synth").success(),
            "synth --writers failed"
        );
        let tips: Vec<String> = std::fs::read_to_string(dir.join("tips.txt"))
            .expect("tips.txt")
            .lines()
            .map(str::to_owned)
            .collect();
        Campaign {
            repo: dir.join("harness"),
            refname: unsigned.refname.clone(),
            tips,
            spare: Vec::new(),
            dir,
        }
    };
    let n = signed.tips.len() - 1;
    let d_signed = best(3, || timed(signed.ledger(&["verify"])));
    let d_unsigned = best(3, || timed(unsigned.ledger(&["verify"])));
    let ratio = d_signed.as_secs_f64() / d_unsigned.as_secs_f64();
    t.add(
        &format!("verify: {n}-commit signed chain vs the same unsigned"),
        secs(d_signed),
        secs(d_unsigned),
        x(ratio),
        "≤ 1.5x",
    );
    t.verdict(
        &format!("verify of a {n}-commit signed chain within 1.5x of the unsigned"),
        ratio <= 1.5,
    );
    // The hook on a bare server: each push sends `tips[n - k]..tips[n]` (k commits).
    let bare = root.join("signed-server.git");
    git(root, &["init", "-q", "--bare", "signed-server.git"]);
    let refname = &signed.refname;
    for k in [1usize, 100, n] {
        if k > n || (k == 100 && n < 100) {
            continue;
        }
        let from = signed.tips[n - k].clone();
        let to = signed.tips[n].clone();
        let push = || {
            git(&bare, &["update-ref", refname, &from]);
            let mut c = cmd("git", &signed.repo);
            c.args(["push", "-q"])
                .arg(&bare)
                .arg(format!("{to}:{refname}"));
            timed(c)
        };
        set_hook(&bare, false);
        // The server holds the chain up to `from` first.
        let mut c = cmd("git", &signed.repo);
        c.args(["push", "-q", "--force"])
            .arg(&bare)
            .arg(format!("{from}:{refname}"));
        run(c);
        let runs = if k == n { 2 } else { 5 };
        let plain = best(runs, push);
        set_hook(&bare, true);
        let _ = std::fs::remove_file(bare.join("hook-ns"));
        best(runs, push);
        set_hook(&bare, false);
        let hook = std::fs::read_to_string(bare.join("hook-ns"))
            .expect("the hook recorded its time")
            .lines()
            .filter_map(|l| l.trim().parse::<u64>().ok())
            .min()
            .map(Duration::from_nanos)
            .expect("a hook time");
        t.add(
            &format!("pre-receive hook: a push of {k} signed commit(s) vs the push itself"),
            secs(hook),
            secs(plain),
            x(hook.as_secs_f64() / plain.as_secs_f64()),
            "< 5 s (GHES)",
        );
        t.verdict(
            &format!("the hook admits a push of {k} signed commits within GitHub Enterprise Server's 5 s"),
            hook < Duration::from_secs(5),
        );
    }
    // What rule 8 adds per commit, with the chains as generated and with both packed alike.
    // `git fast-import` stores the unsigned chain's commits whole, while the signed chain's,
    // rewritten as loose objects and repacked, are deltas of one another (as a repository's
    // commits are after `git gc`); `git repack -adf` gives both Git's own delta search. The
    // ratio above depends on how fast the rest of `verify` is; this difference does not.
    let per = |signed: Duration, unsigned: Duration| signed.saturating_sub(unsigned) / n as u32;
    let as_generated = per(d_signed, d_unsigned);
    for c in [&unsigned, &signed] {
        git(&c.repo, &["repack", "-adfq"]);
    }
    let d_signed = best(3, || timed(signed.ledger(&["verify"])));
    let d_unsigned = best(3, || timed(unsigned.ledger(&["verify"])));
    let alike = per(d_signed, d_unsigned);
    let us = |d: Duration| format!("{:.1} us", d.as_secs_f64() * 1e6);
    t.add(
        "verify: signed minus unsigned per commit, as generated vs both `git repack -adf`",
        us(as_generated),
        us(alike),
        x(as_generated.as_secs_f64() / alike.as_secs_f64()),
        &format!(
            "(repacked: {} vs {}, {})",
            secs(d_signed),
            secs(d_unsigned),
            x(d_signed.as_secs_f64() / d_unsigned.as_secs_f64())
        ),
    );
}

// --- diff and verify ---------------------------------------------------------------------

fn bench_history(t: &mut Table, big: &Campaign) {
    let n = big.tips.len();
    let far = big.ledger(&["diff", &big.tips[1], &big.tips[n - 1]]);
    let near = || big.ledger(&["diff", &big.tips[n - 2], &big.tips[n - 1]]);
    let (d_far, _) = time_v(&far);
    let d_near = best(5, || timed(near()));
    let rows_far = n - 2;
    t.add(
        &format!("diff: {rows_far} changed rows ({rows_far} commits apart) vs 1 (adjacent)"),
        secs(d_far),
        secs(d_near),
        x(d_far.as_secs_f64() / d_near.as_secs_f64()),
        "∝ changed rows",
    );
    let per_row_far = d_far / rows_far as u32;
    t.add(
        "diff: per changed row, far apart vs adjacent",
        secs(per_row_far),
        secs(d_near),
        x(per_row_far.as_secs_f64() / d_near.as_secs_f64()),
        "≤ 1x",
    );
    t.verdict(
        "diff cost proportional to the changed rows (per row far ≤ adjacent)",
        per_row_far <= d_near,
    );
    let (d_verify, rss) = time_v(&big.ledger(&["verify"]));
    let per = d_verify / (n as u32);
    t.add(
        &format!("verify: the whole chain ({n} commits)"),
        secs(d_verify),
        "-".into(),
        format!("{:.2} ms/commit", per.as_secs_f64() * 1e3),
        "< 10 s",
    );
    t.add(
        "verify: peak memory (max RSS)",
        mb(rss),
        "-".into(),
        "-".into(),
        "(reported)",
    );
    t.verdict(
        &format!("verify of {n} commits under 10 s"),
        d_verify < Duration::from_secs(10),
    );
}

/// Import one Inspect log of 1,000 samples × 2 epochs, beside Inspect's own `read_eval_log`.
fn bench_inspect(t: &mut Table, root: &Path) {
    let dir = root.join("inspect");
    let (log, decl, template) = inspect_bench::generate(&dir);
    let n = inspect_bench::SAMPLES * inspect_bench::EPOCHS as usize;
    let size = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let (ours, ours_cpu) = inspect_bench::import(
        &release_dir().join("git-ledger"),
        &dir,
        &log,
        &decl,
        &template,
        3,
    );
    let what = format!("{n} samples ({:.1} MB .eval)", size as f64 / 1e6);
    match inspect_bench::venv_python() {
        Some(py) => {
            let (call, call_cpu, whole_cpu) = inspect_bench::read_eval_log(&py, &log, 3);
            t.add(
                &format!("import an Inspect log of {what} vs read_eval_log, wall"),
                secs(ours),
                secs(call),
                x(ours.as_secs_f64() / call.as_secs_f64()),
                "well under 1x",
            );
            t.add(
                "  the same, CPU time (the whole import vs the read_eval_log call)",
                secs(ours_cpu),
                secs(call_cpu),
                x(ours_cpu.as_secs_f64() / call_cpu.as_secs_f64()),
                "well under 1x",
            );
            t.add(
                "  read_eval_log's whole process, CPU (Python start and imports included)",
                secs(ours_cpu),
                secs(whole_cpu),
                x(ours_cpu.as_secs_f64() / whole_cpu.as_secs_f64()),
                "(reported)",
            );
            t.verdict(
                &format!("importing {n} Inspect samples takes under a fifth of read_eval_log's CPU time on the same file"),
                ours_cpu.as_secs_f64() < 0.2 * call_cpu.as_secs_f64(),
            );
        }
        None => {
            println!("  (no Inspect venv: set GIT_LEDGER_INSPECT_VENV or run .ci/inspect-venv.sh to measure read_eval_log beside it)");
            t.add(
                &format!("import an Inspect log of {what}, wall / CPU"),
                secs(ours),
                secs(ours_cpu),
                "-".into(),
                "(no Inspect venv)",
            );
        }
    }
}

/// Import one Harbor job directory of 1,000 trials, beside Harbor's own reading of it
/// (`JobResult` and every `TrialResult` through its pydantic models).
fn bench_harbor(t: &mut Table, root: &Path) {
    let dir = root.join("harbor");
    std::fs::create_dir_all(&dir).unwrap();
    let (job, decl, template) = harbor_bench::generate(&dir);
    let n = harbor_bench::TASKS * harbor_bench::ATTEMPTS as usize;
    let bin = release_dir().join("git-ledger");
    let (ours, ours_cpu) = harbor_bench::import(&bin, &dir, &job, &decl, &template, 5, n);
    let (_, one_cpu) = harbor_bench::import(
        &bin,
        &dir,
        &job.with_file_name("one"),
        &decl,
        &template,
        5,
        1,
    );
    let floor_cpu = harbor_bench::floor(
        &release_dir().join("examples/harbor_floor"),
        &dir,
        &template,
        5,
    );
    let what = format!("a Harbor job of {n} trials");
    match harbor_bench::venv_python() {
        Some(py) => {
            let (call, call_cpu, whole_cpu) = harbor_bench::harbor_read(&py, &job, 5);
            t.add(
                &format!("import {what} vs Harbor's models reading it, wall"),
                secs(ours),
                secs(call),
                x(ours.as_secs_f64() / call.as_secs_f64()),
                "well under 1x",
            );
            t.add(
                "  the same, CPU time (the whole import vs JobResult + every TrialResult)",
                secs(ours_cpu),
                secs(call_cpu),
                x(ours_cpu.as_secs_f64() / call_cpu.as_secs_f64()),
                "<= 0.2x",
            );
            t.add(
                "  the fixed cost: importing 1 trial of the job (declaration, ledger read and written), CPU",
                secs(one_cpu),
                secs(call_cpu),
                x(one_cpu.as_secs_f64() / call_cpu.as_secs_f64()),
                "(reported)",
            );
            t.add(
                "  the floor: every file read, parsed for syntax alone, the ledger written and fsynced (examples/harbor_floor), CPU",
                secs(floor_cpu),
                secs(call_cpu),
                x(floor_cpu.as_secs_f64() / call_cpu.as_secs_f64()),
                "(reported)",
            );
            t.add(
                "  Harbor's whole process, CPU (Python start and imports included)",
                secs(ours_cpu),
                secs(whole_cpu),
                x(ours_cpu.as_secs_f64() / whole_cpu.as_secs_f64()),
                "(reported)",
            );
            t.verdict(
                &format!("importing {n} Harbor trials takes at most a fifth of the CPU time of Harbor's own models reading them"),
                ours_cpu.as_secs_f64() <= 0.2 * call_cpu.as_secs_f64(),
            );
        }
        None => {
            println!("  (no Harbor venv: set GIT_LEDGER_HARBOR_VENV or run .ci/harbor-venv.sh to measure Harbor's reading beside it)");
            t.add(
                &format!("import {what}, wall / CPU"),
                secs(ours),
                secs(ours_cpu),
                "-".into(),
                "(no Harbor venv)",
            );
            t.add(
                "  the floor (examples/harbor_floor) / the fixed cost (1 trial), CPU",
                secs(floor_cpu),
                secs(one_cpu),
                "-".into(),
                "(no Harbor venv)",
            );
        }
    }
}

fn main() {
    let mut quick = false;
    let mut harbor_only = false;
    let mut inspect_only = false;
    let mut signing_only = false;
    let mut report_only = false;
    let mut keep: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--inspect" => inspect_only = true,
            "--harbor" => harbor_only = true,
            "--signing" => signing_only = true,
            "--report" => report_only = true,
            "--keep" => keep = Some(PathBuf::from(args.next().expect("--keep DIR"))),
            _ => {
                eprintln!("usage: bench [--quick] [--keep DIR] [--inspect] [--harbor] [--signing] [--report]");
                std::process::exit(64);
            }
        }
    }
    let sizes = if quick { &QUICK } else { &FULL };
    let temp = tempfile::tempdir().expect("tempdir");
    let root = match &keep {
        Some(k) => {
            std::fs::create_dir_all(k).expect("mkdir --keep");
            std::path::absolute(k).expect("absolute")
        }
        None => temp.path().to_path_buf(),
    };
    let start = Instant::now();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "git-ledger benchmarks ({}; {cores} cores; git {})",
        if quick { "--quick" } else { "full size" },
        git(&root, &["version"]).trim_start_matches("git version ")
    );
    if inspect_only || harbor_only || signing_only {
        let mut t = Table::default();
        println!();
        if inspect_only {
            bench_inspect(&mut t, &root);
        }
        if harbor_only {
            bench_harbor(&mut t, &root);
        }
        if signing_only {
            bench_signing(&mut t, &root, sizes.history);
        }
        t.print();
        return;
    }
    let rows = sizes.tasks * sizes.repetitions;
    let big = synth(&root.join("big"), sizes);
    if report_only {
        let mut t = Table::default();
        println!();
        bench_report(&mut t, &big, rows, &root, !quick);
        t.print();
        return;
    }
    let small = synth(&root.join("small"), &SMALL);
    let mut t = Table::default();
    println!();
    bench_pin(&mut t, "synthetic corpus", &big.repo, "corpus");
    let own = Path::new(env!("CARGO_MANIFEST_DIR"));
    if Command::new("git")
        .current_dir(own)
        .args(["rev-parse", "--verify", "-q", "HEAD:src"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        bench_pin(&mut t, "this repository's src/ at HEAD", own, "src");
    }
    bench_report(&mut t, &big, rows, &root, !quick);
    bench_import(&mut t, &big, &small, rows);
    bench_admission(&mut t, &big, &root);
    bench_history(&mut t, &big);
    bench_inspect(&mut t, &root);
    bench_harbor(&mut t, &root);
    bench_signing(&mut t, &root, sizes.history);
    t.print();
    println!(
        "\n  total {:.0} s (generation included){}",
        start.elapsed().as_secs_f64(),
        keep.map(|k| format!("; campaigns kept in {}", k.display()))
            .unwrap_or_default()
    );
}
