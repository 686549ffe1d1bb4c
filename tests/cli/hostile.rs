//! The hostile input catalogue, for the commands that exist now (`pin`, `check`, `template`,
//! `report`, `put`, `repair`, `cite`): every input slot of every command gets oversized,
//! deeply nested, duplicate-key, NaN, huge-number, non-UTF-8 and empty JSON, and paths that are
//! a directory, a symlink loop, `/dev/zero` or a FIFO fed without end. Each must end with a
//! clear message and a defined exit status, without a panic or a hang, and leave every file
//! exactly as it was (the whole working directory is compared byte for byte).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::common::{bin, commit_all, git, pin_env, project_root, write, Run};

/// Longest a command may take on any hostile input before it counts as a hang.
const HANG: Duration = Duration::from_secs(60);

/// A small input bound for the oversized cases (above every fixture file, which are ~20 KB).
const SMALL_BOUND: &str = "65536";

/// Run the binary in `dir`, killing it (and failing) if it runs longer than [`HANG`].
fn run(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut b).ok();
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut b).ok();
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("git-ledger {args:?} hung (killed after {HANG:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&t_out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().unwrap()).into_owned(),
    };
    crate::schemas::check_output(args, &run);
    run
}

/// Every regular file under `dir` (symlinks and special files not followed) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                if e.file_name() != ".git" {
                    stack.push(e.path());
                }
            } else if t.is_file() {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            } else {
                out.insert(e.path(), Vec::new());
            }
        }
    }
    out
}

/// A working directory: the embedded campaign, its template ledger, a ledger with one filled
/// row, a row file `put` accepts, the seed's `ok.jsonl` and a card, in a Git repository.
struct Fixture {
    dir: tempfile::TempDir,
    /// The schedule id the row file fills.
    sid: String,
}

const OK_RUN: &str = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"queue_wait_ms":840,"stop_reason":"pass","patch_sha256":"bb10"}"#;

const CARD: &str = r#"{"tasks": [{"task_id": "calc-parse-017", "repo_revision": "9f3c1ab", "prompt_sha256": "6d2ec1aa", "hidden_tests_sha256": "a91b0440", "allowed_files": ["src/parse.py"], "timeout_s": 180, "token_budget": 12000}]}"#;

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        let campaign = std::fs::read(project_root().join("arena/campaign.json")).unwrap();
        write(d, "decl.json", &campaign);
        write(
            d,
            "draft.json",
            std::fs::read(project_root().join("arena/campaign.draft.json")).unwrap(),
        );
        let t = run(d, &["template", "decl.json"]);
        t.ok();
        write(d, "template.json", &t.stdout);
        write(d, "ledger.json", &t.stdout);
        let doc: serde_json::Value = serde_json::from_str(&t.stdout).unwrap();
        let mut row = doc["rows"][0].clone();
        let sid = row["schedule_id"].as_str().unwrap().to_owned();
        row["native_outcome"] = "FAIL".into();
        row["reason"] = "the oracle failed".into();
        write(d, "row.json", serde_json::to_vec_pretty(&row).unwrap());
        // A second ledger with the row filled, for repair.
        write(d, "filled.json", &t.stdout);
        run(d, &["put", &sid, "row.json", "decl.json", "filled.json"]).ok();
        write(d, "ok.jsonl", format!("{OK_RUN}\n"));
        write(d, "card.json", CARD);
        commit_all(d, "fixture");
        Fixture { dir, sid }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// One command line with `{}` where the hostile input goes.
struct Slot {
    name: &'static str,
    args: Vec<&'static str>,
}

/// Every input slot of every command that exists now. `@` stands for the fixture's schedule id.
fn slots() -> Vec<Slot> {
    let s = |name, args: &[&'static str]| Slot {
        name,
        args: args.to_vec(),
    };
    vec![
        s("template DECLARATION", &["template", "{}"]),
        s("check DECLARATION", &["check", "{}"]),
        s("pin DRAFT", &["pin", "{}", "-o", "pinned.json"]),
        s("report DECLARATION", &["report", "{}", "ledger.json"]),
        s("report LEDGER", &["report", "decl.json", "{}"]),
        s(
            "report --json LEDGER",
            &["report", "--json", "decl.json", "{}"],
        ),
        s("put ROW", &["put", "@", "{}", "decl.json", "ledger.json"]),
        s(
            "put DECLARATION",
            &["put", "@", "row.json", "{}", "ledger.json"],
        ),
        s("put LEDGER", &["put", "@", "row.json", "decl.json", "{}"]),
        s(
            "repair DECLARATION",
            &["repair", "@", "--note", "fixed", "{}", "filled.json"],
        ),
        s(
            "repair LEDGER",
            &["repair", "@", "--note", "fixed", "decl.json", "{}"],
        ),
        s("cite RUNS", &["cite", "{}"]),
        s("cite --card CARD", &["cite", "ok.jsonl", "--card", "{}"]),
    ]
}

/// Run every slot with `input` (a path relative to the fixture, or absolute) and `extra`
/// arguments; each must exit `code` with a message containing one of `needles` (and naming the
/// input, except in `cite`'s verdict, which names the runs line or the card), no panic, and no
/// file changed.
#[track_caller]
fn every_slot(fx: &Fixture, input: &str, extra: &[&str], code: i32, needles: &[&str]) {
    for slot in slots() {
        let mut args: Vec<String> = slot
            .args
            .iter()
            .map(|a| match *a {
                "{}" => input.to_owned(),
                "@" => fx.sid.clone(),
                a => a.to_owned(),
            })
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let before = snapshot(fx.path());
        let r = run(fx.path(), &argv);
        let after = snapshot(fx.path());
        let what = format!(
            "{} with {input}: exit {}\n--- stdout\n{}\n--- stderr\n{}",
            slot.name, r.code, r.stdout, r.stderr
        );
        assert!(!r.stderr.contains("panicked"), "panic: {what}");
        // cite reports a content problem as a verdict: "not citeable" on stdout, exit 2.
        let text = format!("{}{}", r.stderr, r.stdout);
        assert_eq!(r.code, code, "{what}");
        assert!(
            needles.iter().any(|n| text.contains(n)),
            "message lacks {needles:?}: {what}"
        );
        // cite's verdict names the runs line or "card", not the path.
        if !slot.name.starts_with("cite") || code != 2 {
            assert!(
                text.contains(input),
                "message does not name {input}: {what}"
            );
        }
        assert!(
            before == after,
            "files changed: {what}\nchanged: {:?}",
            after
                .iter()
                .filter(|(k, v)| before.get(*k) != Some(*v))
                .map(|(k, _)| k)
                .chain(before.keys().filter(|k| !after.contains_key(*k)))
                .collect::<Vec<_>>()
        );
    }
}

/// Write a hostile file into the fixture and run every slot on it.
#[track_caller]
fn hostile_file(name: &str, bytes: &[u8], extra: &[&str], code: i32, needles: &[&str]) {
    let fx = Fixture::new();
    write(fx.path(), name, bytes);
    commit_all(fx.path(), "hostile input");
    every_slot(&fx, name, extra, code, needles);
}

/// What an input that is not strict JSON is refused with: "not valid JSON" for a document,
/// "not a JSON object" for a runs line.
const NOT_JSON: &[&str] = &["not valid JSON", "not a JSON object"];

#[test]
fn oversized_files_are_refused_before_parsing() {
    // Valid JSON, 70000 bytes: over the bound of 65536 (a runs line, a card or a document).
    let big = format!("{{\"pad\": \"{}\"}}", "x".repeat(69990));
    hostile_file(
        "big.json",
        big.as_bytes(),
        &["--max-input-bytes", SMALL_BOUND],
        2,
        &["over the input bound", "over the line bound"],
    );
}

#[test]
fn deeply_nested_json_is_refused() {
    let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
    hostile_file(
        "deep.json",
        deep.as_bytes(),
        &[],
        2,
        &["nesting deeper than 64"],
    );
    // Far deeper than any stack: still a refusal, not a stack overflow.
    let abyss = format!("{{\"a\": {}", "[".repeat(1_000_000));
    hostile_file(
        "abyss.json",
        abyss.as_bytes(),
        &[],
        2,
        &["nesting deeper than 64"],
    );
}

#[test]
fn duplicate_keys_are_refused() {
    hostile_file(
        "dup.json",
        br#"{"format": "campaign-ledger/1", "format": "campaign-ledger/1"}"#,
        &[],
        2,
        &["duplicate key \"format\""],
    );
    // Deep inside a valid-looking document too.
    hostile_file(
        "dup-deep.json",
        br#"{"rows": [{"schedule_id": "a", "x": {"k": 1, "k": 1}}]}"#,
        &[],
        2,
        &["duplicate key \"k\""],
    );
}

#[test]
fn nan_and_infinity_are_refused() {
    for (name, bytes) in [
        ("nan.json", &br#"{"repetitions": NaN}"#[..]),
        ("inf.json", br#"{"repetitions": Infinity}"#),
        ("neg-inf.json", br#"[-Infinity]"#),
    ] {
        hostile_file(name, bytes, &[], 2, NOT_JSON);
    }
}

#[test]
fn a_number_too_large_for_a_float_is_refused() {
    hostile_file(
        "1e400.json",
        br#"{"elapsed_seconds": 1e400}"#,
        &[],
        2,
        NOT_JSON,
    );
}

#[test]
fn non_utf8_bytes_are_refused() {
    hostile_file("latin1.json", b"{\"id\": \"caf\xe9\"}", &[], 2, NOT_JSON);
    hostile_file("binary.json", b"\xff\xfe\x00\x00", &[], 2, NOT_JSON);
}

#[test]
fn an_empty_file_is_refused() {
    // A document is refused; empty runs are "no runs" (cite.md).
    let empty = &["EOF while parsing", "there are no runs"];
    hostile_file("empty.json", b"", &[], 2, empty);
    hostile_file("blank.json", b" \n\t\n", &[], 2, empty);
}

#[test]
fn a_directory_where_a_file_should_be_fails_clearly() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.path().join("adir")).unwrap();
    every_slot(&fx, "adir", &[], 1, &["is a directory"]);
}

#[test]
fn a_missing_file_fails_clearly() {
    let fx = Fixture::new();
    every_slot(&fx, "no-such.json", &[], 1, &["No such file or directory"]);
}

#[test]
fn a_symlink_loop_fails_clearly() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink("loop-b", fx.path().join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", fx.path().join("loop-b")).unwrap();
    every_slot(&fx, "loop-a", &[], 1, &["symbolic links"]);
}

#[test]
fn dev_zero_is_refused_at_the_bound_while_reading() {
    let fx = Fixture::new();
    // With the default bound (64 MiB) the reading stops there; with a small one, sooner.
    let over = &["over the input bound", "over the line bound"];
    every_slot(&fx, "/dev/zero", &[], 2, over);
    every_slot(
        &fx,
        "/dev/zero",
        &["--max-input-bytes", SMALL_BOUND],
        2,
        over,
    );
}

/// A FIFO fed without end by a writer that stops only when the reader goes away: the bound
/// applies while reading, so every command ends with a refusal.
#[test]
fn an_endless_fifo_is_refused_at_the_bound_while_reading() {
    let fx = Fixture::new();
    let fifo = fx.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for slot in slots() {
        // One writer per reader: it blocks in open until the command opens the FIFO, writes
        // until the command closes it (EPIPE), then ends.
        let path = fifo.clone();
        let writer = std::thread::spawn(move || {
            let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&path) else {
                return;
            };
            let chunk = [b'['; 65536];
            while f.write_all(&chunk).is_ok() {}
        });
        let mut args: Vec<String> = slot
            .args
            .iter()
            .map(|a| match *a {
                "{}" => "fifo".to_owned(),
                "@" => fx.sid.clone(),
                a => a.to_owned(),
            })
            .collect();
        args.extend(["--max-input-bytes".to_owned(), SMALL_BOUND.to_owned()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let before = snapshot(fx.path());
        let r = run(fx.path(), &argv);
        let what = format!("{}: {}{}", slot.name, r.stdout, r.stderr);
        assert_eq!(r.code, 2, "{what}");
        assert!(
            format!("{}{}", r.stdout, r.stderr).contains("over the"),
            "{what}"
        );
        assert!(!r.stderr.contains("panicked"), "{what}");
        assert!(before == snapshot(fx.path()), "files changed: {what}");
        release(&fifo);
        writer.join().unwrap();
    }
}

/// Open a FIFO for reading without blocking and close it again, so a writer still waiting in
/// `open` (the command never opened the FIFO) gets a reader, then a broken pipe, and ends.
fn release(fifo: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000; // Linux
    let _ = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(fifo);
}

#[test]
fn huge_counts_are_refused_as_counts() {
    // 2^64 does not fit a count: read as a float, which is no count.
    let fx = Fixture::new();
    let d = fx.path();
    let decl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("decl.json")).unwrap()).unwrap();
    let text = serde_json::to_string_pretty(&decl).unwrap();
    let huge = text.replacen(
        "\"repetitions\": 2",
        "\"repetitions\": 18446744073709551616",
        1,
    );
    assert_ne!(huge, text);
    write(d, "huge-decl.json", &huge);
    let r = run(d, &["template", "huge-decl.json"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("repetitions: must be a nonnegative integer"),
        "{}",
        r.stderr
    );
    // u64::MAX is a count, but not a number of repetitions.
    write(
        d,
        "max-decl.json",
        text.replacen(
            "\"repetitions\": 2",
            "\"repetitions\": 18446744073709551615",
            1,
        ),
    );
    let r = run(d, &["template", "max-decl.json"]);
    r.expect_code(2);
    assert!(r.stderr.contains("must be from 1 to 999"), "{}", r.stderr);

    // A row's repetition.
    let row: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("row.json")).unwrap()).unwrap();
    let text = serde_json::to_string_pretty(&row).unwrap();
    write(
        d,
        "huge-row.json",
        text.replacen(
            "\"repetition\": 1",
            "\"repetition\": 18446744073709551616",
            1,
        ),
    );
    let before = snapshot(d);
    let r = run(
        d,
        &["put", &fx.sid, "huge-row.json", "decl.json", "ledger.json"],
    );
    r.expect_code(2);
    assert!(r.stderr.contains("repetition: must be 1"), "{}", r.stderr);
    assert!(before == snapshot(d));

    // The cite gate's attempt number and token budget.
    for (field, value) in [
        ("attempt", "18446744073709551616"),
        ("token_budget", "1e400"),
    ] {
        let line = OK_RUN.replacen(
            &format!("\"{field}\":"),
            &format!("\"{field}\":{value},\"_\":"),
            1,
        );
        write(d, "huge.jsonl", format!("{line}\n"));
        let r = run(d, &["cite", "huge.jsonl"]);
        r.expect_code(2);
        assert!(r.stdout.contains("not citeable"), "{}", r.stdout);
    }
}

#[test]
fn paths_that_leave_the_repository_are_refused_in_declarations_and_drafts() {
    let fx = Fixture::new();
    let d = fx.path();
    for file in ["decl.json", "draft.json"] {
        let text = std::fs::read_to_string(d.join(file)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let def = v["tasks"][0]["definition"]["path"]
            .as_str()
            .unwrap()
            .to_owned();
        let policy = v["policy_files"][0]["path"].as_str().unwrap().to_owned();
        for (from, to, needle) in [
            (
                def.clone(),
                format!("../{def}"),
                "is not a repository-relative path",
            ),
            (
                def.clone(),
                format!("{def}/../../.."),
                "is not a repository-relative path",
            ),
            (
                def.clone(),
                "/etc".to_owned(),
                "is not a repository-relative path",
            ),
            (
                policy.clone(),
                format!("arena/../{policy}"),
                "is not a repository-relative path",
            ),
            (
                policy.clone(),
                "./x".to_owned(),
                "is not a repository-relative path",
            ),
        ] {
            let bad = text.replacen(&format!("\"{from}\""), &format!("\"{to}\""), 1);
            assert_ne!(bad, text);
            write(d, "bad.json", &bad);
            let before = snapshot(d);
            let cmds: &[&[&str]] = if file == "decl.json" {
                &[
                    &["template", "bad.json"],
                    &["check", "bad.json"],
                    &["report", "bad.json", "ledger.json"],
                ]
            } else {
                &[&["pin", "bad.json", "-o", "pinned.json"]]
            };
            for args in cmds {
                let r = run(d, args);
                let what = format!("{args:?} with {to:?}: {}", r.stderr);
                r.expect_code(2);
                assert!(r.stderr.contains(needle), "{what}");
                assert!(r.stderr.contains(&format!("{to:?}")), "{what}");
            }
            assert!(before == snapshot(d));
            assert!(!d.join("pinned.json").exists());
        }
    }
}

#[test]
fn a_row_file_for_another_slot_or_with_extra_fields_is_refused_and_the_ledger_kept() {
    let fx = Fixture::new();
    let d = fx.path();
    let row: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("row.json")).unwrap()).unwrap();
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (
            serde_json::json!([row.clone()]),
            "a row must be a JSON object",
        ),
        (
            {
                let mut r = row.clone();
                r["surprise"] = 1.into();
                r
            },
            "undeclared attempt field",
        ),
        (
            {
                let mut r = row.clone();
                r["elapsed_seconds"] = (-1).into();
                r
            },
            "nonnegative",
        ),
        (
            {
                let mut r = row.clone();
                r["native_record"] = serde_json::json!({"kind": "hand", "id": "x", "sha256": "0"});
                r
            },
            "native_record must be null",
        ),
    ];
    for (v, needle) in cases {
        write(d, "bad-row.json", serde_json::to_vec(&v).unwrap());
        let before = snapshot(d);
        let r = run(
            d,
            &["put", &fx.sid, "bad-row.json", "decl.json", "ledger.json"],
        );
        r.expect_code(2);
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
        assert!(before == snapshot(d));
    }
    // Into another slot than the row names.
    let other = "scenario/no-such-task/01";
    let before = snapshot(d);
    let r = run(d, &["put", other, "row.json", "decl.json", "ledger.json"]);
    r.expect_code(2);
    assert!(r.stderr.contains("is not scheduled"), "{}", r.stderr);
    assert!(before == snapshot(d));
}

#[test]
fn a_tampered_ledger_is_refused_by_every_reader_and_writer() {
    let fx = Fixture::new();
    let d = fx.path();
    let text = std::fs::read_to_string(d.join("filled.json")).unwrap();
    // The header names other declaration bytes.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let sha = v["declaration"]["sha256"].as_str().unwrap();
    write(d, "tampered.json", text.replace(sha, &"0".repeat(64)));
    let before = snapshot(d);
    for args in [
        vec!["report", "decl.json", "tampered.json"],
        vec!["put", "@", "row.json", "decl.json", "tampered.json"],
        vec!["repair", "@", "--note", "n", "decl.json", "tampered.json"],
    ] {
        let args: Vec<&str> = args
            .into_iter()
            .map(|a| if a == "@" { fx.sid.as_str() } else { a })
            .collect();
        let r = run(d, &args);
        r.expect_code(2);
        assert!(r.stderr.contains("declaration.sha256"), "{}", r.stderr);
    }
    assert!(before == snapshot(d));
}

#[test]
fn a_declaration_that_schedules_millions_of_attempts_is_refused_quickly() {
    // 20,000 tasks × 999 repetitions fit in ~9 MB, well under the input bound; building their
    // schedule took 2.7 GB and 25 s before the schedule was bounded.
    let fx = Fixture::new();
    let d = fx.path();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("decl.json")).unwrap()).unwrap();
    let task = v["tasks"][0].clone();
    let id = task["id"].as_str().unwrap().to_owned();
    v["tasks"] = (0..20_000)
        .map(|i| {
            let mut t = task.clone();
            t["id"] = format!("{id}-{i}").into();
            t
        })
        .collect();
    v["repetitions"] = 999.into();
    v["schedule"] = serde_json::json!([]);
    write(d, "huge-schedule.json", serde_json::to_vec(&v).unwrap());
    let before = snapshot(d);
    for args in [
        &["template", "huge-schedule.json"][..],
        &["check", "huge-schedule.json"],
        &["report", "huge-schedule.json", "ledger.json"],
    ] {
        let start = Instant::now();
        let r = run(d, args);
        r.expect_code(2);
        assert!(
            r.stderr
                .contains("19980000 scheduled attempts; at most 1000000"),
            "{}",
            r.stderr
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{args:?} took {:?}",
            start.elapsed()
        );
    }
    assert!(before == snapshot(d));
}
