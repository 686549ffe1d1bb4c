//! Definition-hash throughput on a synthetic repository made with the real `git`.
//!
//! Builds `--files` files totalling about `--mb` MB of incompressible bytes (`--text`: text-like
//! bytes that compress about 2:1) under `seed/`,
//! commits them (loose objects), then times, on the loose store and again after
//! `git repack -ad`:
//! - git-ledger's definition hash with every core and with one thread,
//! - `git cat-file --batch` streaming the same blobs (reading only, no hashing),
//! - the Python baseline (`git ls-tree -r` + `git cat-file --batch` + hashlib + json.dumps),
//!   which also checks that both hashes agree.
//!
//! Run: `cargo run --release --example defhash_bench -- --files 5000 --mb 50`
//! (defaults 20000 files / 200 MB; `--keep DIR` builds in DIR and leaves it there).

#[path = "common/cat_file.rs"]
mod cat_file;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = pinned(Command::new("git"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim_end()
        .to_owned()
}

fn pinned(mut cmd: Command) -> Command {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-29T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-29T10:00:00Z")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    cmd
}

/// xorshift64*: deterministic, fast, incompressible enough for zlib.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The bytes of one file: incompressible random bytes, or text-like lines of random words
/// (compresses about 2:1 with zlib, like source code does, so inflating costs something).
fn content(rng: &mut Rng, size: usize, text: bool, bytes: &mut Vec<u8>) {
    const WORDS: [&str; 16] = [
        "fn", "let", "self", "return", "match", "value", "error", "result", "config", "(", ")",
        "{", "}", ";", "index", "0x2a",
    ];
    bytes.clear();
    while bytes.len() < size {
        let r = rng.next();
        if text {
            for k in 0..8 {
                bytes.extend_from_slice(WORDS[((r >> (k * 4)) & 15) as usize].as_bytes());
                bytes.push(if (r >> (32 + k)) & 7 == 0 {
                    b'\n'
                } else {
                    b' '
                });
            }
        } else {
            bytes.extend_from_slice(&r.to_le_bytes());
        }
    }
    bytes.truncate(size);
}

fn build(dir: &Path, files: usize, mb: usize, text: bool) -> u64 {
    git(dir, &["init", "-q", "-b", "main"]);
    let mean = mb * 1_000_000 / files.max(1);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut total = 0u64;
    let mut bytes = Vec::new();
    for i in 0..files {
        let size = mean / 5 + (rng.next() as usize) % (mean * 8 / 5 + 1);
        content(&mut rng, size, text, &mut bytes);
        let path = dir.join(format!(
            "seed/d{:02}/e{:02}/f{i:06}.bin",
            i % 50,
            (i / 50) % 20
        ));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &bytes).expect("write");
        total += size as u64;
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "bench"]);
    total
}

/// The best of `runs` timings of `f`, and its last result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = None;
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed());
        out = Some(r);
    }
    (best, out.expect("at least one run"))
}

fn python(dir: &Path, commit: &str) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cli/defhash_reference.py"
    );
    let out = pinned(Command::new("python3"))
        .current_dir(dir)
        .args([script, commit, "seed"])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

fn measure(dir: &Path, label: &str, total: u64) {
    let repo = git_ledger::git::open(Some(dir)).expect("open");
    let commit = git_ledger::git::resolve_commit(&repo, "HEAD").expect("HEAD");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mbs = |d: Duration| total as f64 / 1e6 / d.as_secs_f64();
    let line = |what: &str, d: Duration| {
        println!(
            "{label:7} {what:40} {:8.3} s {:8.1} MB/s",
            d.as_secs_f64(),
            mbs(d)
        )
    };
    let (d, ours) = best(5, || {
        git_ledger::git::definition_hash(&repo, commit, "seed").expect("definition hash")
    });
    line(&format!("git-ledger definition hash ({cores} threads)"), d);
    let (d, one) = best(5, || {
        git_ledger::git::definition_hash_with(&repo, commit, "seed", 1).expect("definition hash")
    });
    line("git-ledger definition hash (1 thread)", d);
    assert_eq!(ours, one);
    let ids: String = git(dir, &["ls-tree", "-r", "--object-only", "HEAD", "seed"]) + "\n";
    let (d, n) = best(3, || {
        let mut git = pinned(Command::new("git"));
        git.current_dir(dir);
        cat_file::stream(git, &ids)
    });
    assert!(n >= total);
    line("git cat-file --batch (read only)", d);
    let (d, py) = best(1, || python(dir, &commit.to_string()));
    line("python: ls-tree + cat-file + hashlib", d);
    assert_eq!(
        py,
        format!("{} {}", ours.sha256, ours.files),
        "Python disagrees"
    );
}

fn main() {
    let mut files = 20_000usize;
    let mut mb = 200usize;
    let mut keep: Option<PathBuf> = None;
    let mut text = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--files" => files = value().parse().expect("--files N"),
            "--mb" => mb = value().parse().expect("--mb N"),
            "--keep" => keep = Some(PathBuf::from(value())),
            "--text" => text = true,
            _ => panic!("usage: defhash_bench [--files N] [--mb N] [--text] [--keep DIR]"),
        }
    }
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = keep.unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&dir).expect("mkdir");
    let start = Instant::now();
    let total = build(&dir, files, mb, text);
    println!(
        "built {files} files, {:.1} MB of blobs in {:.1} s ({})",
        total as f64 / 1e6,
        start.elapsed().as_secs_f64(),
        dir.display()
    );
    measure(&dir, "loose", total);
    git(&dir, &["repack", "-adq"]);
    git(&dir, &["prune-packed"]);
    measure(&dir, "packed", total);
}
