//! Synthetic campaigns of any size, for the benchmarks (`bench/run`).
//!
//! ```text
//! cargo run --release --example synth -- --tasks 1000 --repetitions 100 --out DIR \
//!     [--history 10000] [--fill 0.95] [--spare 8] [--blob-mb 200 --files 20000] [--seed N]
//!     [--ledger-only [--sample 256] [--thirds]]
//! ```
//!
//! Writes, under `DIR` (which must not exist or be empty):
//!
//! - `harness/`: a Git repository (one commit) holding a profile, policy files, runner tools,
//!   one definition directory per scenario task (`tasks/scenario/tNNNN/`), and with `--blob-mb`
//!   a `corpus/` of `--files` files of incompressible bytes (for the definition-hash bench);
//! - `harness/campaign.draft.json` and `harness/campaign.json`: the draft and the declaration
//!   pinned from it by the library's `pin` (`--tasks` scenario tasks × `--repetitions`);
//! - `harness/.scenario-runs/<run id>/result.json`: a graded scenario record for every row that
//!   a ledger below fills, plus `--spare` records for rows left DEFERRED everywhere (listed in
//!   `spare.txt` as `<schedule id> <path>`, for timing an import), and `runtime.json`, the
//!   runtime identity every row is imported with (`--runtime-identity`);
//! - `ledger.json`: the file-mode ledger with a share `--fill` of the rows filled from those
//!   records (a realistic mix of outcomes), the rest DEFERRED;
//! - the ledger ref `refs/ledgers/<id>` in `harness/`: the root commit `init` writes, then
//!   `--history` import commits of one row each, built in one `git fast-import` stream (a pack,
//!   not 10,000 loose trees) from rows, records and messages the library computes exactly as
//!   `git ledger import` does; `tips.txt` lists the commit after each import.
//!
//! With `--ledger-only` it writes the harness, the declaration and `ledger.json` only (no ref,
//! no spare records): `--sample` rows (default 256) are converted from records exactly as
//! above, and every other filled row is a copy of one of them with its schedule id, task,
//! repetition and record id replaced, written as it is made (a 1,000,000-row ledger in
//! seconds, without 1,000,000 record files or rows in memory). With `--thirds` (ledger only)
//! the rows are not drawn but dealt in turn, as issue 30's ledger was made: a verified PASS
//! (hidden tests all passing), an ERROR, a DEFERRED row, and again (`--fill` is not used).
//!
//! Everything is deterministic for a seed (fixed identities and dates, no network).

#[path = "common/profile_argv.rs"]
mod profile_argv;
use profile_argv::declared_argv;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

use git_ledger::declaration::Declaration;
use git_ledger::git::{layout, message};
use git_ledger::import::batch::{self, Record, Source};
use git_ledger::import::rows::{scenario_row, Context};
use git_ledger::store::{Change, ChangeKind, RowWrite};

const MAX_INPUT: u64 = 1 << 30;

struct Args {
    tasks: usize,
    repetitions: usize,
    out: PathBuf,
    history: usize,
    fill: f64,
    spare: usize,
    blob_mb: usize,
    files: usize,
    seed: u64,
    /// An OpenSSH private key (unencrypted): the ledger declares it as its one writer
    /// (`synth@example.com`) and every commit is signed with it.
    writers: Option<PathBuf>,
    /// Only the harness, the declaration and a templated `ledger.json` (see the module doc).
    ledger_only: bool,
    /// With `--ledger-only`: how many rows are converted from records.
    sample: usize,
    /// With `--ledger-only`: rows dealt a verified PASS, an ERROR and a DEFERRED in turn.
    thirds: bool,
}

fn parse_args() -> Args {
    let mut a = Args {
        tasks: 1000,
        repetitions: 100,
        out: PathBuf::new(),
        history: 0,
        fill: 0.95,
        spare: 8,
        blob_mb: 0,
        files: 20_000,
        seed: 0x5eed,
        writers: None,
        ledger_only: false,
        sample: 256,
        thirds: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--tasks" => a.tasks = value().parse().unwrap_or_else(|_| usage("--tasks N")),
            "--repetitions" => {
                a.repetitions = value().parse().unwrap_or_else(|_| usage("--repetitions N"))
            }
            "--out" => a.out = PathBuf::from(value()),
            "--history" => a.history = value().parse().unwrap_or_else(|_| usage("--history N")),
            "--fill" => a.fill = value().parse().unwrap_or_else(|_| usage("--fill 0..1")),
            "--spare" => a.spare = value().parse().unwrap_or_else(|_| usage("--spare N")),
            "--blob-mb" => a.blob_mb = value().parse().unwrap_or_else(|_| usage("--blob-mb N")),
            "--files" => a.files = value().parse().unwrap_or_else(|_| usage("--files N")),
            "--seed" => a.seed = value().parse().unwrap_or_else(|_| usage("--seed N")),
            "--writers" => a.writers = Some(PathBuf::from(value())),
            "--ledger-only" => a.ledger_only = true,
            "--sample" => a.sample = value().parse().unwrap_or_else(|_| usage("--sample N")),
            "--thirds" => a.thirds = true,
            _ => usage(&format!("unknown argument {flag}")),
        }
    }
    if a.out.as_os_str().is_empty() {
        usage("--out DIR is required");
    }
    if a.tasks == 0 || a.repetitions == 0 || a.tasks > 9999 {
        usage("--tasks 1..=9999 and --repetitions ≥ 1");
    }
    if a.thirds && !a.ledger_only {
        usage("--thirds is for --ledger-only");
    }
    if a.history + a.spare > a.tasks * a.repetitions {
        usage("--history + --spare exceeds the rows scheduled");
    }
    a
}

fn usage(msg: &str) -> ! {
    eprintln!("synth: {msg}\nusage: synth --tasks N --repetitions N --out DIR [--history N] [--fill F] [--spare N] [--blob-mb N --files N] [--seed N] [--writers KEY] [--ledger-only [--sample N] [--thirds]]");
    std::process::exit(64)
}

/// xorshift64*: deterministic and fast.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// `git` with a pinned environment (no user or system config, fixed identity and dates).
pub fn git_cmd(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Synth")
        .env("GIT_AUTHOR_EMAIL", "synth@example.com")
        .env("GIT_COMMITTER_NAME", "Synth")
        .env("GIT_COMMITTER_EMAIL", "synth@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-01T00:00:00Z")
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    cmd
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir).args(args).output().expect("run git");
    if !out.status.success() {
        panic!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim_end()
        .to_owned()
}

fn write(path: &Path, bytes: &[u8]) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The harness files: profile, policies, runner tools (copied from the embedded campaign), a
/// small definition per task, and the optional corpus.
fn write_harness(a: &Args, repo: &Path) -> u64 {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("arena");
    let copy = |from: &str, to: &str| {
        let bytes = std::fs::read(root.join(from)).unwrap_or_else(|e| panic!("{from}: {e}"));
        write(&repo.join(to), &bytes);
    };
    copy(
        "profiles/build-comparison.json",
        "profiles/build-comparison.json",
    );
    copy("policy/approval.md", "policy/approval.md");
    copy("policy/live-spend.md", "policy/live-spend.md");
    for f in [
        "README.md",
        "collect_evidence.py",
        "oracle_runner.py",
        "run_case.py",
    ] {
        copy(&format!("runner-tools/{f}"), &format!("runner-tools/{f}"));
    }
    for t in 0..a.tasks {
        let dir = repo.join(format!("tasks/scenario/t{t:04}"));
        write(
            &dir.join("brief.md"),
            format!("# Task t{t:04}\n\nA synthetic scenario task of the benchmark campaign.\n")
                .as_bytes(),
        );
        let tests: String = (0..4)
            .map(|k| format!("def test_{k}():\n    assert {t} + {k} == {}\n\n", t + k))
            .collect();
        write(
            &dir.join(format!("hidden_tests/test_t{t:04}.py")),
            tests.as_bytes(),
        );
    }
    let mut total = 0u64;
    if a.blob_mb > 0 {
        let mut rng = Rng(a.seed ^ 0x9e37_79b9_7f4a_7c15);
        let mean = a.blob_mb * 1_000_000 / a.files.max(1);
        let mut bytes = Vec::new();
        for i in 0..a.files {
            let size = mean / 5 + (rng.next() as usize) % (mean * 8 / 5 + 1);
            bytes.clear();
            while bytes.len() < size {
                bytes.extend_from_slice(&rng.next().to_le_bytes());
            }
            bytes.truncate(size);
            total += size as u64;
            write(
                &repo.join(format!(
                    "corpus/d{:02}/e{:02}/f{i:06}.bin",
                    i % 50,
                    (i / 50) % 20
                )),
                &bytes,
            );
        }
    }
    total
}

/// The draft: the embedded campaign's draft with this campaign's id, repetitions, paths and
/// `--tasks` scenario tasks.
fn draft(a: &Args) -> Value {
    let base: Value = serde_json::from_str(include_str!("../arena/campaign.draft.json"))
        .expect("the embedded draft parses");
    let mut d = base;
    d["id"] = json!(format!("synth-{}x{}", a.tasks, a.repetitions));
    d["title"] = json!(format!(
        "Synthetic benchmark campaign: {} scenario tasks x {} repetitions",
        a.tasks, a.repetitions
    ));
    d["repetitions"] = json!(a.repetitions);
    d["profile"] = json!({"source": {"path": "profiles/build-comparison.json"}});
    d["policy_files"] = json!([{"path": "policy/approval.md"}, {"path": "policy/live-spend.md"}]);
    d["runner_tools"] = json!({"path": "runner-tools"});
    let tasks: Vec<Value> = (0..a.tasks)
        .map(|t| {
            json!({
                "id": format!("scenario/t{t:04}"),
                "kind": "scenario",
                "evidence": "live",
                "expects": "completion",
                "definition": {"path": format!("tasks/scenario/t{t:04}")},
                "limits": {"harness_minutes": 90, "max_steps": 400},
                "native_outcomes": ["PASS", "FALSE_COMPLETE", "HONEST_BLOCKER", "ERROR", "SKIPPED",
                    "NOT_EXERCISED", "RUNNING", "INTERRUPTED_UNGRADED", "PENDING_UNGRADED"],
            })
        })
        .collect();
    d["tasks"] = Value::Array(tasks);
    d
}

/// The `result.json` of the run filling schedule entry `index` (task `t`), with an outcome
/// drawn from a realistic mix: verified passes, passes without oracle evidence, false
/// completions, honest blockers, errors and skips; or, with `draw` given, the outcome of that
/// draw (0: a verified PASS, 90: an ERROR).
fn result_json(
    decl: &Declaration,
    argv: &[String],
    index: usize,
    t: usize,
    rng: &mut Rng,
    draw: Option<u64>,
) -> Value {
    let run_id = format!("20261101T{:06}Z-s{index:06}", index % 240000);
    let checks = |failing: u64| -> Value {
        Value::Array(
            (0..4)
                .map(|k| {
                    json!({"name": format!("hidden_tests/test_t{t:04}.py::test_{k}"),
                           "ok": failing & (1 << k) == 0})
                })
                .collect(),
        )
    };
    let r = rng.next();
    let spent = ((r >> 8) % 900) as f64 / 100.0;
    let input = 100_000 + (r >> 20) % 900_000;
    let output = 5_000 + (r >> 40) % 60_000;
    let wall = 300.0 + ((r >> 12) % 5000) as f64;
    let mut v = json!({
        "format": "scenario-result/1",
        "run_id": run_id,
        "scenario": format!("t{t:04}"),
        "mode": "live",
        "commit": decl.source_revision,
        "tools_dirty": false,
        "profile": {"name": decl.profile.name, "argv": argv},
        "harness": {"wall_seconds": wall, "cli_calls": 20 + (r >> 30) % 300},
        "status_view": {"complete": true, "spent_usd": spent,
            "usage": {"input_tokens": input, "output_tokens": output}},
        "elapsed_seconds": wall + 12.5,
    });
    let (verdict, status, reason, oracle) = match draw.unwrap_or(r % 100) {
        0..=49 => (
            "PASS",
            json!("COMPLETE"),
            Value::Null,
            json!({"checks": checks(0)}),
        ),
        50..=59 => ("PASS", json!("COMPLETE"), Value::Null, Value::Null),
        60..=74 => (
            "FALSE_COMPLETE",
            json!("COMPLETE"),
            json!("the agent reported completion, but hidden tests fail"),
            json!({"checks": checks(1 + (r >> 50) % 15)}),
        ),
        75..=86 => (
            "HONEST_BLOCKER",
            json!("BLOCKED"),
            json!("the agent stopped: the brief contradicts the fixture, and it asked"),
            Value::Null,
        ),
        87..=94 => (
            "ERROR",
            json!("FAILED"),
            json!("the harness lost the agent process"),
            Value::Null,
        ),
        _ => (
            "SKIPPED",
            Value::Null,
            json!("skipped: the provider quota was exhausted"),
            Value::Null,
        ),
    };
    v["verdict"] = json!(verdict);
    v["autocode_status"] = status;
    v["reason"] = reason;
    v["oracle"] = oracle;
    v
}

/// The evaluator's runtime identity: the declared requirements and a dependency freeze (as
/// `make_examples` writes it), passed to every import with `--runtime-identity`.
fn runtime(decl: &Declaration) -> Value {
    let mut v = Value::Object(decl.runtime_requirements.clone());
    let req = &decl.runtime_requirements;
    let mut deps: Vec<String> = req
        .get("packages")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(n, v)| format!("{n}=={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    if let Some(psutil) = req.get("psutil").and_then(Value::as_str) {
        deps.push(format!("psutil=={psutil}"));
    }
    deps.sort();
    v["dependencies"] = json!(deps);
    v
}

/// Schedule positions in the order the ledger ref fills them: repetition 1 of every task, then
/// repetition 2, … (spread over the tasks, like a campaign running).
fn fill_order(a: &Args) -> impl Iterator<Item = usize> + '_ {
    (0..a.tasks * a.repetitions).map(|k| (k % a.tasks) * a.repetitions + k / a.tasks)
}

fn main() {
    let a = parse_args();
    let start = Instant::now();
    if a.out.exists()
        && std::fs::read_dir(&a.out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        usage(&format!("{} exists and is not empty", a.out.display()));
    }
    let out = std::path::absolute(&a.out).expect("absolute --out");
    let repo_dir = out.join("harness");
    std::fs::create_dir_all(&repo_dir).expect("mkdir");
    git(&repo_dir, &["init", "-q", "-b", "main"]);
    let corpus = write_harness(&a, &repo_dir);
    let mut draft = draft(&a);
    let key = a.writers.as_ref().map(|path| {
        let key = ssh_key::PrivateKey::read_openssh_file(path).expect("read the --writers key");
        let public = key
            .public_key()
            .to_openssh()
            .expect("encode the public key");
        write(
            &repo_dir.join(WRITERS_PATH),
            format!("synth@example.com {public}\n").as_bytes(),
        );
        draft["writers"] = json!({"path": WRITERS_PATH});
        key
    });
    let draft_bytes = git_ledger::json::canonical(&draft);
    write(&repo_dir.join("campaign.draft.json"), &draft_bytes);
    git(&repo_dir, &["add", "-A"]);
    git(&repo_dir, &["commit", "-q", "-m", "harness"]);
    if corpus > 0 {
        // The corpus as Git would ship it: one pack.
        git(&repo_dir, &["repack", "-adq"]);
        git(&repo_dir, &["prune-packed"]);
    }
    let repo = git_ledger::git::open(Some(&repo_dir)).expect("open harness");
    let pinned =
        git_ledger::git::pin::pin(&repo, &draft_bytes, "HEAD", MAX_INPUT).expect("pin the draft");
    write(&repo_dir.join("campaign.json"), &pinned);
    let decl = Declaration::parse(&pinned, MAX_INPUT).expect("the pinned declaration parses");
    eprintln!(
        "synth: harness and declaration {} ({} rows, {:.1} MB campaign.json, corpus {:.1} MB) in {:.1} s",
        decl.id,
        decl.schedule_len(),
        pinned.len() as f64 / 1e6,
        corpus as f64 / 1e6,
        start.elapsed().as_secs_f64()
    );

    if a.ledger_only {
        templated_ledger(&a, &decl, &repo_dir, &out);
        eprintln!(
            "synth: ledger.json ({n} rows, templated) in {:.1} s",
            start.elapsed().as_secs_f64(),
            n = decl.schedule_len()
        );
        return;
    }

    // Which rows get a record: the file ledger's share, the ref's history, and the spares.
    let n = decl.schedule_len();
    let mut in_file = vec![false; n];
    let mut rng = Rng(a.seed);
    for slot in in_file.iter_mut() {
        *slot = (rng.next() % 10_000) as f64 / 10_000.0 < a.fill;
    }
    let order: Vec<usize> = fill_order(&a).collect();
    let history: Vec<usize> = order[..a.history].to_vec();
    let spare: Vec<usize> = order[a.history..a.history + a.spare].to_vec();
    for &i in &spare {
        in_file[i] = false;
    }
    let mut needed = vec![false; n];
    for (i, f) in in_file.iter().enumerate() {
        needed[i] = *f;
    }
    for &i in history.iter().chain(&spare) {
        needed[i] = true;
    }

    // Records on disk, converted into rows exactly as `import` converts them.
    let argv = declared_argv(&decl, &[]);
    let runtime_bytes = git_ledger::json::canonical(&runtime(&decl));
    write(&out.join("runtime.json"), &runtime_bytes);
    let runtime =
        git_ledger::import::rows::parse_runtime_identity(&runtime_bytes, "runtime.json", MAX_INPUT)
            .expect("a valid runtime identity");
    let ctx = Context {
        repo_root: Some(&repo_dir),
        runtime_identity: Some(&runtime),
        pins: None,
        ..Context::default()
    };
    let mut converted: Vec<Option<git_ledger::import::rows::Converted>> = vec![None; n];
    let mut spare_list = String::new();
    for (i, e) in decl.schedule().enumerate() {
        if !needed[i] {
            continue;
        }
        let t = i / a.repetitions;
        let mut rng = Rng(a.seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let v = result_json(&decl, &argv, i, t, &mut rng, None);
        let run_id = v["run_id"].as_str().expect("run id").to_owned();
        let rel = format!(".scenario-runs/{run_id}/result.json");
        let path = repo_dir.join(&rel);
        write(&path, &git_ledger::json::canonical(&v));
        let loaded = batch::load(
            &[Source::Scenario {
                schedule_id: e.id.clone(),
                path: path.clone(),
            }],
            MAX_INPUT,
        )
        .expect("load a record");
        assert!(loaded.refused.is_empty(), "{:?}", loaded.refused);
        let Record::Scenario(rec) = &loaded.requests[0].record else {
            unreachable!()
        };
        let c = scenario_row(&decl, &ctx, &e.id, rec)
            .unwrap_or_else(|err| panic!("record for {} is refused: {err}", e.id));
        if spare.contains(&i) {
            spare_list.push_str(&format!("{} {}\n", e.id, path.display()));
        }
        converted[i] = Some(c);
    }
    write(&out.join("spare.txt"), spare_list.as_bytes());
    eprintln!(
        "synth: {} records written and converted in {:.1} s",
        needed.iter().filter(|x| **x).count(),
        start.elapsed().as_secs_f64()
    );

    // The file-mode ledger.
    let rows: Vec<Value> = decl
        .schedule()
        .enumerate()
        .map(|(i, e)| match (&converted[i], in_file[i]) {
            (Some(c), true) => c.row.to_value(),
            _ => git_ledger::ledger::Row::template(&decl, &e.id)
                .expect("template row")
                .to_value(),
        })
        .collect();
    let value = json!({
        "format": git_ledger::ledger::FORMAT,
        "declaration": {"id": decl.id, "sha256": decl.sha256},
        "rows": rows,
    });
    let ledger = git_ledger::ledger::Ledger::from_value(&decl, &value).expect("a valid ledger");
    write(&out.join("ledger.json"), &ledger.canonical(&decl));
    eprintln!(
        "synth: ledger.json ({} of {n} rows filled) in {:.1} s",
        in_file.iter().filter(|x| **x).count(),
        start.elapsed().as_secs_f64()
    );

    // The ledger ref: root + one import commit per history row, through git fast-import.
    let mut tips = fast_import(&repo_dir, &decl, &history, &converted);
    if let Some(key) = &key {
        tips = sign_chain(&repo_dir, &decl, &tips, key);
    }
    write(&out.join("tips.txt"), tips.join("\n").as_bytes());
    eprintln!(
        "synth: {} with {} commits in {:.1} s",
        layout::LedgerRefs::default().name(&decl.id),
        tips.len(),
        start.elapsed().as_secs_f64()
    );
}

/// `--ledger-only`: `ledger.json` written row by row. The first `--sample` schedule positions
/// are converted from records (written under `.scenario-runs/`) as `import` converts them;
/// every other row the fill draws is a copy of sample `i % sample` with its schedule id, task
/// id, repetition and record id (the run id, also in `evidence_refs`) replaced by its own; the
/// rest are template rows.
fn templated_ledger(a: &Args, decl: &Declaration, repo_dir: &Path, out: &Path) {
    let argv = declared_argv(decl, &[]);
    let runtime_bytes = git_ledger::json::canonical(&runtime(decl));
    write(&out.join("runtime.json"), &runtime_bytes);
    let runtime =
        git_ledger::import::rows::parse_runtime_identity(&runtime_bytes, "runtime.json", MAX_INPUT)
            .expect("a valid runtime identity");
    let ctx = Context {
        repo_root: Some(repo_dir),
        runtime_identity: Some(&runtime),
        pins: None,
        ..Context::default()
    };
    let run_id = |index: usize| format!("20261101T{:06}Z-s{index:06}", index % 240000);
    let n = decl.schedule_len();
    assert!(n <= 1_000_000, "run ids have six digits");
    // With `--thirds`, sample `k` stands for rows of its own kind: `i % sample` keeps `i % 3`.
    let sample = if a.thirds {
        a.sample.clamp(1, n).div_ceil(3) * 3
    } else {
        a.sample.clamp(1, n)
    };
    let dealt = |i: usize| [Some(0), Some(90), None][i % 3];
    assert!(
        !a.thirds || sample <= n,
        "--thirds needs at least {sample} rows"
    );
    // Each sample row's canonical bytes as the ledger document holds them (two levels deep).
    let indent = |bytes: Vec<u8>| -> String {
        String::from_utf8(bytes)
            .expect("utf-8")
            .trim_end()
            .replace('\n', "\n    ")
    };
    let samples: Vec<String> = (0..sample)
        .map(|i| {
            let e = decl.schedule_at(i);
            let mut rng = Rng(a.seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let draw = if a.thirds { dealt(i).or(Some(0)) } else { None };
            let v = result_json(decl, &argv, i, i / a.repetitions, &mut rng, draw);
            let path = repo_dir.join(format!(".scenario-runs/{}/result.json", run_id(i)));
            write(&path, &git_ledger::json::canonical(&v));
            let loaded = batch::load(
                &[Source::Scenario {
                    schedule_id: e.id.clone(),
                    path,
                }],
                MAX_INPUT,
            )
            .expect("load a record");
            let Record::Scenario(rec) = &loaded.requests[0].record else {
                unreachable!()
            };
            let c = scenario_row(decl, &ctx, &e.id, rec)
                .unwrap_or_else(|err| panic!("record for {} is refused: {err}", e.id));
            indent(c.row.canonical(decl))
        })
        .collect();
    let empty = git_ledger::ledger::Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows: Vec::new(),
    }
    .canonical(decl);
    let open = b"\"rows\": [";
    let at = empty
        .windows(open.len())
        .position(|w| w == open)
        .expect("rows")
        + open.len();
    let file = std::fs::File::create(out.join("ledger.json")).expect("create ledger.json");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    w.write_all(&empty[..at]).unwrap();
    let mut rng = Rng(a.seed);
    let mut filled = 0;
    for (i, e) in decl.schedule().enumerate() {
        w.write_all(if i == 0 { b"\n    " } else { b",\n    " })
            .unwrap();
        let fill = (rng.next() % 10_000) as f64 / 10_000.0 < a.fill;
        let fill = if a.thirds { dealt(i).is_some() } else { fill };
        let row = if i < sample && (!a.thirds || fill) {
            samples[i].clone()
        } else if fill {
            let k = i % sample;
            let s = decl.schedule_at(k);
            filled += 1;
            samples[k]
                .replace(&format!("\"{}\"", s.id), &format!("\"{}\"", e.id))
                .replace(&format!("\"{}\"", s.task), &format!("\"{}\"", e.task))
                .replace(
                    &format!("\"repetition\": {},", s.repetition),
                    &format!("\"repetition\": {},", e.repetition),
                )
                .replace(&run_id(k), &run_id(i))
        } else {
            let t = git_ledger::ledger::Row::template(decl, &e.id).expect("template row");
            indent(t.canonical(decl))
        };
        w.write_all(row.as_bytes()).unwrap();
    }
    if n > 0 {
        w.write_all(b"\n  ").unwrap();
    }
    w.write_all(&empty[at..]).unwrap();
    w.flush().unwrap();
    let sampled = if a.thirds {
        (0..sample).filter(|&i| dealt(i).is_some()).count()
    } else {
        sample
    };
    eprintln!("synth: {} of {n} rows filled", filled + sampled);
}

/// Write the root commit and one import commit per history row with `git fast-import`; returns
/// every commit id, root first.
fn fast_import(
    repo_dir: &Path,
    decl: &Declaration,
    history: &[usize],
    converted: &[Option<git_ledger::import::rows::Converted>],
) -> Vec<String> {
    let refname = layout::LedgerRefs::default().name(&decl.id);
    let mut child = git_cmd(repo_dir)
        .args([
            "fast-import",
            "--quiet",
            "--done",
            "--export-marks=.git/synth-marks",
        ])
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn git fast-import");
    let stdin = child.stdin.take().expect("stdin");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, stdin);
    let epoch = 1_793_491_200u64; // 2026-11-01T00:00:00Z
    let data = |w: &mut dyn Write, bytes: &[u8]| {
        writeln!(w, "data {}", bytes.len()).unwrap();
        w.write_all(bytes).unwrap();
        writeln!(w).unwrap();
    };
    let mut mark = 0usize;
    let mut commit = |w: &mut std::io::BufWriter<_>,
                      message: &str,
                      files: &[(String, Vec<u8>)],
                      root: bool,
                      k: usize| {
        mark += 1;
        writeln!(w, "commit {refname}").unwrap();
        writeln!(w, "mark :{mark}").unwrap();
        let when = epoch + 60 * k as u64;
        writeln!(w, "author Synth <synth@example.com> {when} +0000").unwrap();
        writeln!(w, "committer Synth <synth@example.com> {when} +0000").unwrap();
        data(w, message.as_bytes());
        if !root {
            writeln!(w, "from :{}", mark - 1).unwrap();
        }
        for (path, bytes) in files {
            writeln!(w, "M 100644 inline {path}").unwrap();
            data(w, bytes);
        }
        writeln!(w).unwrap();
    };
    let mut root_files = layout::template_files(decl);
    if decl.writers.is_some() {
        let bytes = std::fs::read(repo_dir.join(WRITERS_PATH)).expect("the writers file");
        root_files.push((layout::WRITERS.to_owned(), bytes));
    }
    let bytes = decl
        .bytes()
        .expect("synth parsed the declaration from its bytes");
    root_files.push((layout::CAMPAIGN.to_owned(), bytes.to_vec()));
    commit(&mut w, &message::root_message(decl), &root_files, true, 0);
    for (k, &i) in history.iter().enumerate() {
        let c = converted[i].as_ref().expect("a history row has a record");
        let change = Change {
            kind: ChangeKind::Import,
            rows: vec![RowWrite {
                row: c.row.clone(),
                record: Some(c.record.clone()),
                source: c.source.clone(),
            }],
        };
        let (message, _) = message::change_message(decl, &change, k)
            .expect("one row filled on a parent with k filled");
        let files = vec![
            (layout::row_path(c.row.schedule_id()), c.row.canonical(decl)),
            (layout::record_path(&c.key), c.record.bytes().to_vec()),
        ];
        commit(&mut w, &message, &files, false, k + 1);
    }
    writeln!(w, "done").unwrap();
    drop(w);
    assert!(
        child.wait().expect("wait").success(),
        "git fast-import failed"
    );
    let marks = std::fs::read_to_string(repo_dir.join(".git/synth-marks")).expect("marks");
    let _ = std::fs::remove_file(repo_dir.join(".git/synth-marks"));
    let mut ids = vec![String::new(); history.len() + 1];
    for line in marks.lines() {
        let (m, id) = line.split_once(' ').expect("mark line");
        let m: usize = m.trim_start_matches(':').parse().expect("mark");
        ids[m - 1] = id.to_owned();
    }
    ids
}

/// Where the writers file of a `--writers` campaign is.
const WRITERS_PATH: &str = "policy/allowed_signers";

/// Rewrite the chain `tips` (root first) with every commit signed by `key` as `git commit -S`
/// signs (namespace git, SHA-512, the signature in the `gpgsig` header), in process; moves the
/// ledger ref to the new tip, packs, and returns the new ids.
fn sign_chain(
    repo_dir: &Path,
    decl: &Declaration,
    tips: &[String],
    key: &ssh_key::PrivateKey,
) -> Vec<String> {
    use gix::objs::{Find, Write as _};
    let repo = git_ledger::git::open(Some(repo_dir)).expect("open harness");
    let hash = repo.object_hash();
    let mut out: Vec<String> = Vec::with_capacity(tips.len());
    let mut buf = Vec::new();
    for (k, id) in tips.iter().enumerate() {
        let id: gix::ObjectId = id.parse().expect("an id");
        let raw = repo
            .objects
            .try_find(&id, &mut buf)
            .expect("read a commit")
            .expect("the commit is there")
            .data
            .to_vec();
        let mut payload = raw;
        if k > 0 {
            let old = format!("parent {}\n", tips[k - 1]);
            let new = format!("parent {}\n", out[k - 1]);
            let at = memchr::memmem::find(&payload, old.as_bytes()).expect("a parent line");
            payload.splice(at..at + old.len(), new.bytes());
        }
        let sig = key
            .sign("git", ssh_key::HashAlg::Sha512, &payload)
            .expect("sign")
            .to_pem(ssh_key::LineEnding::LF)
            .expect("armor");
        let signed = git_ledger::git::sign::with_signature(&payload, hash, &sig);
        let new = repo
            .objects
            .write_buf(gix::objs::Kind::Commit, &signed)
            .expect("write a commit");
        out.push(new.to_string());
    }
    let refname = layout::LedgerRefs::default().name(&decl.id);
    git(
        repo_dir,
        &["update-ref", &refname, out.last().expect("a tip")],
    );
    git(repo_dir, &["repack", "-adq"]);
    git(repo_dir, &["prune-packed"]);
    out
}
