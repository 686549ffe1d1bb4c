//! Crash safety: `import`, `put` and `repair`, in file mode and in ref mode, killed with SIGKILL
//! at random moments (before, during and after their write). After every kill the ledger file
//! is the old or the new one byte for byte, the ledger ref points at the old or the new commit
//! and `verify` admits it; `git fsck --full --strict` finds nothing broken at the end.
//!
//! What a kill may leave behind, by design: a `.git-ledger-*` temporary file beside a ledger
//! file (written and synced before the rename; never read by the tool), unreferenced loose
//! objects and temporary object files in `.git/objects` (garbage for `git gc`), and, if the
//! kill lands while the ref is locked, `refs/ledgers/<id>.lock` (the next write names it and
//! exits 1 with Git's hint; see `a_stale_ref_lock_is_named_not_reported_as_contention`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{bin, git, git_run, ledger, pin_env};
use crate::gitstore::{hand_row_value, pretty};
use crate::import::Campaign;
use crate::make_examples;

/// SplitMix64: a seeded, dependency-free generator (the seed is printed, and `CRASH_SEED`
/// replays a run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const PUT_ID: &str = "scenario/bugfix-iso-weeks/02";

/// One command in one mode, with the state it starts from and the state it must produce.
struct Op {
    name: &'static str,
    args: Vec<String>,
    /// File mode: the ledger file's bytes before and after. Ref mode: the commit ids (as bytes).
    old: Vec<u8>,
    new: Vec<u8>,
    ref_mode: bool,
    /// How long an unkilled run takes; kills land in 0..=1.4×this.
    took: Duration,
    old_seen: usize,
    new_seen: usize,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Run the binary to completion, timed.
fn timed(dir: &Path, args: &[String]) -> Duration {
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = Instant::now();
    ledger(dir, &argv).ok();
    start.elapsed()
}

fn ref_tip(dir: &Path, refname: &str) -> Vec<u8> {
    git(dir, &["rev-parse", refname]).into_bytes()
}

fn killed_writers_leave_the_old_or_the_new_state(prefix: &str) {
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6c65_6467_6572);
    let mut rng = Rng(seed);
    let c = Campaign::new();
    let dir = c.root();
    crate::common::use_prefix(dir, prefix);
    let refname = format!("{prefix}{}", c.decl.id);
    ledger(dir, &["init", "campaign.json"]).ok();

    // The records: every example the import accepts (nine attempts, scenario and Arena), and a
    // hand row for a DEFERRED slot.
    let records = make_examples::import_args(&c.examples(), false);
    let template: Value = serde_json::from_slice(&c.ledger_bytes()).unwrap();
    let slot = template["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["schedule_id"] == PUT_ID)
        .unwrap();
    let row = hand_row_value(&slot.to_string(), "ERROR");
    std::fs::write(dir.join("hand-row.json"), pretty(&row)).unwrap();

    let mut import_file = strings(&["import", "campaign.json", "ledger.json"]);
    import_file.extend(records.iter().cloned());
    let mut import_ref = strings(&["import"]);
    import_ref.extend(records.iter().cloned());
    let put_file = strings(&[
        "put",
        PUT_ID,
        "hand-row.json",
        "campaign.json",
        "ledger.json",
    ]);
    let put_ref = strings(&["put", PUT_ID, "hand-row.json"]);
    let note = "the harness lost the evidence directory";
    let repair_file = strings(&[
        "repair",
        PUT_ID,
        "--note",
        note,
        "campaign.json",
        "ledger.json",
    ]);
    let repair_ref = strings(&["repair", PUT_ID, "--note", note]);

    // The expected states, from unkilled runs: file F0 → F1 → F2 → F3, ref R0 → R1 → R2 → R3.
    let mut ops = Vec::new();
    let mut file_state = c.ledger_bytes();
    let mut ref_state = ref_tip(dir, &refname);
    for (name, file_args, ref_args) in [
        ("import", import_file, import_ref),
        ("put", put_file, put_ref),
        ("repair", repair_file, repair_ref),
    ] {
        let took = timed(dir, &file_args);
        let after = c.ledger_bytes();
        assert_ne!(after, file_state, "{name} changed the file");
        ops.push(Op {
            name,
            args: file_args,
            old: std::mem::replace(&mut file_state, after.clone()),
            new: after,
            ref_mode: false,
            took,
            old_seen: 0,
            new_seen: 0,
        });
        let took = timed(dir, &ref_args);
        let after = ref_tip(dir, &refname);
        assert_ne!(after, ref_state, "{name} moved the ref");
        ops.push(Op {
            name,
            args: ref_args,
            old: std::mem::replace(&mut ref_state, after.clone()),
            new: after,
            ref_mode: true,
            took,
            old_seen: 0,
            new_seen: 0,
        });
    }
    // File mode and ref mode hold the same ledger (`show` is byte-identical to the file).
    assert_eq!(
        ledger(dir, &["show"]).ok().stdout.as_bytes(),
        file_state.as_slice()
    );

    // 240 kills of the six operations under the default prefix. Under the branch prefix a
    // fixed sample: 48 kills (the same seed) of the three ref-mode operations only, which the
    // prefix is about (file mode does not read it), so that this test's CI time does not
    // double: where a kill lands does not depend on the ref's name.
    let (kills, order): (usize, Vec<usize>) = if prefix == crate::common::PREFIXES[0] {
        (240, (0..6).collect())
    } else {
        (48, vec![1, 3, 5])
    };
    let start = Instant::now();
    let mut exited_first = 0;
    let mut temp_files = 0;
    let mut locks = 0;
    let mut verified = 0;
    for i in 0..kills {
        let op = &mut ops[order[i % order.len()]];
        // Reset to the op's old state.
        if op.ref_mode {
            git(
                dir,
                &[
                    "update-ref",
                    &refname,
                    std::str::from_utf8(&op.old).unwrap(),
                ],
            );
        } else {
            std::fs::write(c.ledger_path(), &op.old).unwrap();
        }
        let window = (op.took.as_micros() as u64 * 14 / 10).max(1000);
        let delay = Duration::from_micros(rng.below(window + 1));
        let mut cmd = Command::new(bin());
        pin_env(&mut cmd)
            .current_dir(dir)
            .args(&op.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL; fails harmlessly when it already exited
        let status = child.wait().unwrap();
        if status.code().is_some() {
            assert_eq!(status.code(), Some(0), "{} ({i}) exited {status}", op.name);
            exited_first += 1;
        }
        // The state is the old or the new one, exactly.
        let now = if op.ref_mode {
            let lock = dir.join(".git").join(format!("{refname}.lock"));
            if lock.exists() {
                // Killed while holding the ref lock: the ref itself is intact; a user removes
                // the lock as Git's hint says.
                locks += 1;
                std::fs::remove_file(&lock).unwrap();
            }
            ref_tip(dir, &refname)
        } else {
            let lock = c.ledger_path().with_file_name("ledger.json.lock");
            if lock.exists() {
                // Killed between taking the file's lock and releasing it: the file is intact
                // (checked below); a user removes the lock as the message's hint says.
                locks += 1;
                std::fs::remove_file(&lock).unwrap();
            }
            c.ledger_bytes()
        };
        if now == op.old {
            op.old_seen += 1;
        } else if now == op.new {
            op.new_seen += 1;
        } else {
            panic!(
                "{} ({}) killed after {delay:?} left a state that is neither old nor new:\n{}",
                op.name,
                if op.ref_mode { "ref" } else { "file" },
                String::from_utf8_lossy(&now)
            );
        }
        if op.ref_mode {
            // The ref points at a commit verify admits.
            let v = ledger(dir, &["verify"]);
            assert_eq!(v.code, 0, "verify after kill {i}: {}", v.stderr);
            verified += 1;
        }
        if i % 60 == 59 {
            fsck(dir);
        }
    }
    let fsck_out = fsck(dir);
    // Temporary files left beside the ledger file: only ours (`.git-ledger-*`), and the later
    // writes above ran with them present, so nothing reads them. Safe to delete.
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with(".git-ledger-") {
            temp_files += 1;
            std::fs::remove_file(dir.join(&name)).unwrap();
        }
    }
    let stray_objects = stray_object_files(&dir.join(".git/objects"));
    let mut total_old = 0;
    let mut total_new = 0;
    for op in &ops {
        eprintln!(
            "crash: {:6} {:4}: old {:3} new {:3} (unkilled run {:?})",
            op.name,
            if op.ref_mode { "ref" } else { "file" },
            op.old_seen,
            op.new_seen,
            op.took
        );
        total_old += op.old_seen;
        total_new += op.new_seen;
    }
    eprintln!(
        "crash: seed {seed}: {kills} kills in {:?}: {total_old} old, {total_new} new; {exited_first} had exited before the kill; {temp_files} temporary files, {stray_objects} temporary object files and {locks} ref or file locks left behind; verify admitted the ref {verified} times; fsck: {} dangling, nothing broken",
        start.elapsed(),
        fsck_out.lines().filter(|l| l.starts_with("dangling")).count()
    );
    assert!(
        total_old > 0 && total_new > 0,
        "kills landed both before and after the write"
    );
    let modes: &[bool] = if order.len() == 6 {
        &[false, true]
    } else {
        &[true]
    };
    for &mode in modes {
        let (o, n) = ops
            .iter()
            .filter(|op| op.ref_mode == mode)
            .fold((0, 0), |(o, n), op| (o + op.old_seen, n + op.new_seen));
        assert!(o > 0 && n > 0, "ref mode {mode}: old {o}, new {n}");
    }
    // After all of it, every write still works from the last state (nothing left behind is in
    // the way): the ref verifies from its root.
    ledger(dir, &["verify", "--all"]).ok();
}

/// `git fsck --full --strict`: must succeed and report nothing but dangling objects. Returns its
/// output.
fn fsck(dir: &Path) -> String {
    let r = git_run(dir, &["fsck", "--full", "--strict", "--no-progress"], None);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert_eq!(r.code, 0, "git fsck failed:\n{all}");
    for line in all.lines() {
        assert!(
            line.starts_with("dangling ") || line.starts_with("Checking"),
            "git fsck: {line}\n{all}"
        );
    }
    all
}

/// Files under `.git/objects` that are not objects, packs or Git's own bookkeeping: the
/// temporary files of object writes that a kill interrupted (Git ignores them; `git gc` removes
/// them once they are old).
fn stray_object_files(objects: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(objects).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "pack" || name == "info" {
            continue;
        }
        if e.file_type().unwrap().is_dir() && name.len() == 2 {
            for o in std::fs::read_dir(e.path()).unwrap() {
                let o = o.unwrap().file_name().to_string_lossy().into_owned();
                if o.len() != 38 || !o.bytes().all(|b| b.is_ascii_hexdigit()) {
                    n += 1;
                }
            }
        } else {
            n += 1;
        }
    }
    n
}

/// With `lock` present, `args` exits 1 naming the lock (not 3, "other writers kept winning":
/// nothing moved the ledger) and leaves `state()` alone; once the lock is removed it writes.
fn a_stale_lock_is_named(dir: &Path, lock: &Path, args: &[&str], state: impl Fn() -> Vec<u8>) {
    let before = state();
    std::fs::write(lock, b"").unwrap();
    let r = ledger(dir, args);
    r.expect_code(1);
    let name = lock.file_name().unwrap().to_string_lossy();
    assert!(
        r.stderr.contains(&format!("{name} exists"))
            && r.stderr.contains("hint:")
            && r.stderr.contains("remove"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("kept winning"), "{}", r.stderr);
    assert_eq!(state(), before);
    std::fs::remove_file(lock).unwrap();
    ledger(dir, args).ok();
    assert_ne!(state(), before);
    assert!(!lock.exists(), "a writer removes its lock");
}

/// A killed file-mode writer can leave `ledger.json.lock`.
#[test]
fn a_stale_file_lock_is_named_not_reported_as_contention() {
    let c = Campaign::new();
    let lock = c.ledger_path().with_file_name("ledger.json.lock");
    let args = [
        "import",
        "campaign.json",
        "ledger.json",
        "--scenario",
        "scenario/bugfix-iso-weeks/01",
        "arena/examples/scenario-runs/20261129T101500Z-a001",
    ];
    a_stale_lock_is_named(c.root(), &lock, &args, || c.ledger_bytes());
}

/// A killed process can leave `<prefix><id>.lock` (Git's own lock of the ref).
fn a_stale_ref_lock_is_named_not_reported_as_contention(prefix: &str) {
    let c = Campaign::new();
    let dir = c.root();
    crate::common::use_prefix(dir, prefix);
    ledger(dir, &["init", "campaign.json"]).ok();
    let refname = format!("{prefix}{}", c.decl.id);
    let lock = dir.join(".git").join(format!("{refname}.lock"));
    let args = [
        "import",
        "--scenario",
        "scenario/bugfix-iso-weeks/01",
        "arena/examples/scenario-runs/20261129T101500Z-a001",
    ];
    a_stale_lock_is_named(dir, &lock, &args, || ref_tip(dir, &refname));
    ledger(dir, &["verify"]).ok();
}

crate::common::under_both_prefixes!(
    killed_writers_leave_the_old_or_the_new_state,
    a_stale_ref_lock_is_named_not_reported_as_contention,
);
