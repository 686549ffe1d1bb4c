//! The Inspect reader and mapping, rule by rule, from both sides: logs built here (as Inspect
//! writes them) and Inspect's own test logs (`tests/data/inspect-logs/`).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use super::zip::{write_archive, Archive};
use super::*;
use crate::refusal::{Reason, Rule};
use crate::testutil::{assert_only_reason, assert_reason, inspect_declaration_value, parse};

/// JSON text of `v`, with the string `"NaN!"` written as the bare token `NaN` (as Inspect does).
fn text(v: &Value) -> Vec<u8> {
    serde_json::to_string(v)
        .unwrap()
        .replace("\"NaN!\"", "NaN")
        .replace("\"Inf!\"", "Infinity")
        .into_bytes()
}

fn eval_spec(model: &str) -> Value {
    json!({
        "eval_id": "EVAL1", "run_id": "RUN1", "task": "arith", "task_id": "T1",
        "model": model,
        "model_roles": {"reviewer": {"model": "acme/m-small", "config": {"reasoning_effort": "medium"}}},
        "model_generate_config": {"reasoning_effort": "high"},
        "config": {"epochs": 2, "message_limit": 10, "token_limit": 200000},
        "task_args": {},
        "revision": {"type": "git", "origin": "o", "commit": "abc1234", "dirty": false},
        "packages": {"inspect_ai": "0.3.285"}
    })
}

fn sample(id: Value, epoch: u64, value: Value) -> Value {
    json!({
        "id": id, "epoch": epoch, "uuid": format!("U-{id}-{epoch}"),
        "input": "1+1?", "target": "2",
        "messages": [{"role": "user", "content": "1+1?"}, {"role": "assistant", "content": "2"}],
        "scores": {"match": {"value": value, "answer": "2", "explanation": "the answer\nsecond line"}},
        "model_usage": {"acme/m-large": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "total_cost": 0.25}},
        "total_time": 3.5, "working_time": 2.0,
        "events": [],
        "error": null, "limit": null, "error_retries": []
    })
}

/// An `.eval` with a header (status `status`, or none), the journal start and `samples`.
fn eval_file(
    dir: &Path,
    name: &str,
    status: Option<&str>,
    eval: &Value,
    samples: &[Value],
    method: u16,
) -> PathBuf {
    let start = text(&json!({"version": 2, "eval": eval}));
    let mut bodies: Vec<(String, Vec<u8>)> = vec![("_journal/start.json".into(), start)];
    for s in samples {
        bodies.push((
            format!(
                "samples/{}_epoch_{}.json",
                s["id"].as_str().map_or(s["id"].to_string(), str::to_owned),
                s["epoch"]
            ),
            text(s),
        ));
    }
    if let Some(st) = status {
        bodies.push((
            "header.json".into(),
            text(&json!({"version": 2, "status": st, "eval": eval})),
        ));
    }
    let members: Vec<(&str, &[u8], u16)> = bodies
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice(), method))
        .collect();
    let p = dir.join(name);
    std::fs::write(&p, write_archive(&members)).unwrap();
    p
}

fn no_lookup(_: &str) -> Resolved {
    Resolved::Not("no repository".into())
}

/// Convert sample `i` of a log for the test declaration.
fn convert(log: &InspectLog, i: usize) -> std::result::Result<Built, Vec<Reason>> {
    convert_with(log, i, &|p| {
        Resolved::Commit(format!("{p}{}", "0".repeat(40 - p.len())))
    })
}

fn convert_with(
    log: &InspectLog,
    i: usize,
    lookup: &dyn Fn(&str) -> Resolved,
) -> std::result::Result<Built, Vec<Reason>> {
    let decl = parse(&inspect_declaration_value());
    let s = &log.samples[i];
    let index = SampleIndex::new(&decl);
    let Target::Scheduled { task, schedule_id } = index.target(&decl, log, s) else {
        panic!("sample {i} is not scheduled");
    };
    let env = Env {
        repo_root: None,
        runtime_identity: None,
        lookup,
    };
    let b = sample_row(&decl, &env, task, &schedule_id, log, s)?;
    crate::ledger::Row::check(&decl, &b.row, "row")?;
    Ok(b)
}

/// The evidence hint of sample `i`'s row, before the row check.
fn sample_hint(log: &InspectLog, i: usize) -> Option<String> {
    let decl = parse(&inspect_declaration_value());
    let s = &log.samples[i];
    let index = SampleIndex::new(&decl);
    let Target::Scheduled { task, schedule_id } = index.target(&decl, log, s) else {
        panic!("sample {i} is not scheduled");
    };
    let lookup = |p: &str| Resolved::Commit(format!("{p}{}", "0".repeat(40 - p.len())));
    let env = Env {
        repo_root: None,
        runtime_identity: None,
        lookup: &lookup,
    };
    sample_row(&decl, &env, task, &schedule_id, log, s)
        .unwrap()
        .evidence_hint
}

fn one(dir: &Path, s: Value) -> InspectLog {
    let p = eval_file(
        dir,
        "a.eval",
        Some("success"),
        &eval_spec("acme/m-large"),
        &[s],
        8,
    );
    read_log(&p, 1 << 20).unwrap()
}

fn row_of(dir: &Path, s: Value) -> Value {
    convert(&one(dir, s), 0)
        .unwrap_or_else(|r| panic!("{r:?}"))
        .row
}

// --- the archive ----------------------------------------------------------------------------

#[test]
fn stored_deflate_and_zstd_members_read_back() {
    let data = b"{\"a\": [1, 2, 3], \"b\": \"x\"}".repeat(50);
    for method in [0, 8, 93] {
        let z = write_archive(&[("m.json", &data, method)]);
        let a = Archive::open(&z).unwrap();
        assert_eq!(a.entries[0].method, method);
        assert_eq!(a.read(0, 1 << 20).unwrap(), data, "method {method}");
    }
}

#[test]
fn the_last_of_a_repeated_member_counts() {
    let z = write_archive(&[
        ("x.json", b"1", 8),
        ("y.json", b"2", 8),
        ("x.json", b"3", 93),
    ]);
    let a = Archive::open(&z).unwrap();
    assert_eq!(a.read(a.last("x.json").unwrap(), 10).unwrap(), b"3");
    let dir = tempfile::tempdir().unwrap();
    let e = eval_spec("acme/m-large");
    let first = sample(json!("add-1"), 1, json!("I"));
    let second = sample(json!("add-1"), 1, json!("C"));
    let p = dir.path().join("r.eval");
    let members = [
        ("_journal/start.json", text(&json!({"eval": e}))),
        ("samples/add-1_epoch_1.json", text(&first)),
        ("samples/add-1_epoch_1.json", text(&second)),
        (
            "header.json",
            text(&json!({"status": "success", "eval": e})),
        ),
    ];
    let m: Vec<(&str, &[u8], u16)> = members.iter().map(|(n, b)| (*n, b.as_slice(), 8)).collect();
    std::fs::write(&p, write_archive(&m)).unwrap();
    let log = read_log(&p, 1 << 20).unwrap();
    assert_eq!(log.samples.len(), 1);
    assert_eq!(
        convert(&log, 0).unwrap().row["native_outcome"],
        json!("PASS")
    );
}

#[test]
fn a_zip_bomb_is_refused_at_the_bound() {
    let data = vec![b' '; 200_000];
    for method in [8, 93] {
        let z = write_archive(&[("m.json", &data, method)]);
        let a = Archive::open(&z).unwrap();
        let e = a.read(0, 1000).unwrap_err();
        assert!(
            e.contains("over the bound") || e.contains("more than the bound"),
            "{e}"
        );
        // The header lying about the size does not help: patch the recorded size down.
        let mut lying = z.clone();
        let cd = Archive::open(&z).unwrap();
        drop(cd);
        let pos = lying.len() - 22 - (46 + 6);
        lying[pos + 24..pos + 28].copy_from_slice(&10u32.to_le_bytes());
        let a = Archive::open(&lying).unwrap();
        let e = a.read(0, 1000).unwrap_err();
        assert!(
            e.contains("decompresses to more than the 10 bytes its header records"),
            "{e}"
        );
    }
}

#[test]
fn damaged_archives_are_refused_never_a_panic() {
    let data = b"{\"a\": 1}".repeat(20);
    let z = write_archive(&[("a.json", &data, 8), ("b.json", &data, 93)]);
    for cut in 0..z.len() {
        if let Ok(a) = Archive::open(&z[..cut]) {
            for i in 0..a.entries.len() {
                let _ = a.read(i, 1 << 20);
            }
        }
    }
    for i in 0..z.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = z.clone();
            b[i] ^= bit;
            if let Ok(a) = Archive::open(&b) {
                for j in 0..a.entries.len() {
                    if let Ok(out) = a.read(j, 1 << 20) {
                        // Whatever reads back passed its CRC: it is what was written.
                        assert_eq!(out, data);
                    }
                }
            }
        }
    }
    assert!(Archive::open(b"not a zip at all, just text of some length").is_err());
}

// --- reading logs ---------------------------------------------------------------------------

fn shared(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/data/inspect-logs")
        .join(name)
}

#[test]
fn ids_and_epochs_come_from_the_json() {
    let log = read_log(&shared("log_streaming.eval"), 1 << 20).unwrap();
    assert_eq!(log.samples.len(), 4);
    let mut got: Vec<(String, String)> = log
        .samples
        .iter()
        .map(|s| (s.id.display(), s.epoch.display()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")].map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert!(log.ended());
    // A member whose name disagrees with its JSON: the JSON counts.
    let dir = tempfile::tempdir().unwrap();
    let e = eval_spec("acme/m-large");
    let s = sample(json!("add-1"), 2, json!("C"));
    let members = [
        ("_journal/start.json", text(&json!({"eval": e}))),
        ("samples/whatever_epoch_1.json", text(&s)),
    ];
    let m: Vec<(&str, &[u8], u16)> = members
        .iter()
        .map(|(n, b)| (*n, b.as_slice(), 93))
        .collect();
    let p = dir.path().join("w.eval");
    std::fs::write(&p, write_archive(&m)).unwrap();
    let log = read_log(&p, 1 << 20).unwrap();
    let b = convert(&log, 0).unwrap();
    assert_eq!(b.row["schedule_id"], json!("inspect/arith-add-1/02"));
}

#[test]
fn a_log_still_being_written_reads_its_spec_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let p = eval_file(
        dir.path(),
        "a.eval",
        None,
        &eval_spec("acme/m-large"),
        &[sample(json!("add-1"), 1, json!("C"))],
        93,
    );
    let log = read_log(&p, 1 << 20).unwrap();
    assert!(!log.has_header && !log.ended());
    let b = convert(&log, 0).unwrap();
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("had not ended") && n.contains("no header")),
        "{:?}",
        b.notes
    );
    let p = eval_file(
        dir.path(),
        "b.eval",
        Some("started"),
        &eval_spec("acme/m-large"),
        &[sample(json!("add-1"), 1, json!("C"))],
        8,
    );
    let log = read_log(&p, 1 << 20).unwrap();
    let b = convert(&log, 0).unwrap();
    assert!(
        b.notes.iter().any(|n| n.contains("status started")),
        "{:?}",
        b.notes
    );
    // Neither header nor journal: not an Inspect log.
    let p = dir.path().join("c.eval");
    std::fs::write(&p, write_archive(&[("samples/x.json", b"{}", 8)])).unwrap();
    assert_only_reason!(
        crate::testutil::refusal(read_log(&p, 1 << 20)),
        place = [p.display().to_string()],
        field = None,
        sentence = "not an Inspect log: neither header.json nor _journal/start.json"
    );
}

#[test]
fn a_json_log_keeps_each_samples_exact_bytes() {
    for name in [
        "log_formats.json",
        "log_read_sample.json",
        "2025-05-12T20-28-26-04-00_security-guide.json",
    ] {
        let path = shared(name);
        let bytes = std::fs::read(&path).unwrap();
        let log = read_log(&path, 1 << 24).unwrap();
        assert!(!log.samples.is_empty(), "{name}");
        for (i, s) in log.samples.iter().enumerate() {
            assert_eq!(s.member, format!("samples[{i}]"));
            assert_eq!(s.bytes[0], b'{');
            assert_eq!(*s.bytes.last().unwrap(), b'}');
            // The exact bytes are a substring of the file, and parse as the same sample.
            let at = bytes
                .windows(s.bytes.len())
                .position(|w| w == s.bytes.as_slice());
            assert!(at.is_some(), "{name} sample {i}");
            let again = json::parse(&s.bytes).unwrap();
            assert_eq!(again.get("id"), &s.id);
        }
    }
}

#[test]
fn header_only_and_cancelled_logs_read() {
    for (name, status, n) in [
        (
            "2024-08-29T15-11-17+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json",
            "success",
            0,
        ),
        (
            "2024-08-29T15-11-18+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json",
            "error",
            0,
        ),
        ("2025-05-12T20-28-13-04-00_no-samples.json", "cancelled", 0),
        ("2025-05-12T20-28-13-04-00_popularity.json", "cancelled", 3),
    ] {
        let log = read_log(&shared(name), 1 << 24).unwrap();
        assert_eq!(log.status.as_deref(), Some(status), "{name}");
        assert_eq!(log.samples.len(), n, "{name}");
        assert!(log.ended());
    }
}

/// Convert every sample of a log as the row of the test declaration's live task (whatever
/// its id): the mapping must refuse or convert, never panic.
fn map_all(log: &InspectLog) {
    let decl = parse(&inspect_declaration_value());
    let task = decl.task("inspect/arith-add-1").unwrap();
    let env = Env {
        repo_root: None,
        runtime_identity: None,
        lookup: &no_lookup,
    };
    let index = SampleIndex::new(&decl);
    for s in &log.samples {
        let _ = index.target(&decl, log, s);
        let _ = record_id(log, s);
        if let Ok(b) = sample_row(&decl, &env, task, "inspect/arith-add-1/01", log, s) {
            let _ = crate::ledger::Row::check(&decl, &b.row, "row");
        }
    }
}

#[test]
fn every_shared_log_reads_and_its_variants_never_panic() {
    let dir = std::fs::read_dir(shared("")).unwrap();
    let mut n = 0;
    for entry in dir {
        let path = entry.unwrap().path();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default()
            .to_owned();
        if ext != "eval" && ext != "json" {
            continue;
        }
        n += 1;
        let bytes = std::fs::read(&path).unwrap();
        let log = match ext.as_str() {
            "eval" => read_eval(&path, &bytes, 1 << 24),
            _ => read_json(&path, &bytes),
        };
        let log = log.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(log.eval.as_object().is_some());
        map_all(&log);
        // Truncations and bit flips: refused or read, never a panic.
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            let _ = match ext.as_str() {
                "eval" => read_eval(&path, &bytes[..cut], 1 << 24).map(|_| ()),
                _ => read_json(&path, &bytes[..cut]).map(|_| ()),
            };
        }
        for i in (0..bytes.len()).step_by(step) {
            for bit in [0x20u8, 0x01] {
                let mut b = bytes.clone();
                b[i] ^= bit;
                let read = match ext.as_str() {
                    "eval" => read_eval(&path, &b, 1 << 24),
                    _ => read_json(&path, &b),
                };
                if let Ok(log) = read {
                    map_all(&log);
                }
            }
        }
    }
    assert_eq!(n, 17);
}

#[test]
fn json_logs_share_the_imports_bound_and_the_refusals_name_its_factors() {
    // The refusals say "4 × --max-input-bytes" and "2 × --max-input-bytes".
    assert_eq!((IMPORT_FACTOR, read::KEPT_FACTOR), (4, 2));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("l.json");
    // Mostly bytes that are skipped, not built (the values kept stay under their bound).
    let log = text(&json!({"eval": eval_spec("acme/m-large"), "pad": "x".repeat(9000)}));
    std::fs::write(&p, &log).unwrap();
    // A budget of 4 × 10,000 bytes holds this log (charged its size) some times, not more.
    let fits = 40_000 / log.len() as u64;
    assert!(fits >= 2);
    let mut budget = import_budget(10_000);
    for _ in 0..fits {
        read_log_within(&p, 10_000, &mut budget).unwrap();
    }
    let e = read_log_within(&p, 10_000, &mut budget)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("is over its bound of 40000 bytes (4 × --max-input-bytes)"),
        "{e}"
    );
}

#[test]
fn an_inspect_log_that_is_not_strict_json_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.json");
    std::fs::write(&p, br#"{"eval": {"task": "arith"}, "eval": {}}"#).unwrap();
    assert_only_reason!(
        crate::testutil::refusal(read_log(&p, 1 << 20)),
        place = [p.display().to_string()],
        field = None,
        sentence = "not a valid Inspect log: duplicate key \"eval\" at line 1 column 29"
    );
    std::fs::write(&p, br#"{"eval": {"task": "arith", "x": nan}}"#).unwrap();
    assert!(read_log(&p, 1 << 20).is_err());
    std::fs::write(&p, br#"{"eval": {"task": "arith", "x": NaN}} x"#).unwrap();
    assert_only_reason!(
        crate::testutil::refusal(read_log(&p, 1 << 20)),
        place = [p.display().to_string()],
        field = None,
        sentence = "not a valid Inspect log: trailing characters at line 1 column 39"
    );
    std::fs::write(&p, br#"{"eval": {"task": "arith", "x": NaN}}"#).unwrap();
    assert!(read_log(&p, 1 << 20).is_ok());
    // Over the input bound before parsing.
    assert_only_reason!(
        crate::testutil::refusal(read_log(&p, 10)),
        place = [p.display().to_string()],
        field = None,
        sentence = "37 bytes is over the input bound of 10 bytes (--max-input-bytes)"
    );
    let q = dir.path().join("d.txt");
    std::fs::write(&q, b"{}").unwrap();
    assert_only_reason!(
        crate::testutil::refusal(read_log(&q, 1 << 20)),
        place = [q.display().to_string()],
        field = None,
        sentence =
            "not an Inspect log: --inspect takes .eval or .json logs, or a directory of them"
    );
}

// --- the mapping ----------------------------------------------------------------------------

#[test]
fn pass_fail_and_the_row_fields() {
    let dir = tempfile::tempdir().unwrap();
    let r = row_of(dir.path(), sample(json!("add-1"), 1, json!("C")));
    assert_eq!(r["native_outcome"], json!("PASS"));
    assert_eq!(r["native_status"], json!("completed"));
    assert_eq!(r["reason"], json!(null));
    assert_eq!(r["oracle_checks"], json!([{"name": "match", "ok": true}]));
    assert_eq!(r["elapsed_seconds"], json!(3.5));
    assert_eq!(
        r["usage"],
        json!({"acme/m-large": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "total_cost": 0.25}})
    );
    assert_eq!(r["estimated_usd"], json!(0.25));
    assert_eq!(
        r["spent_budget"],
        json!({"message_limit": 2, "token_limit": 15})
    );
    assert_eq!(r["runner_options"], json!(null));
    assert_eq!(r["option_deviations"], json!([]));
    assert_eq!(
        r["evidence_refs"],
        json!([format!(
            "{}#samples/add-1_epoch_1.json",
            dir.path().join("a.eval").display()
        )])
    );
    assert_eq!(r["native_record"]["kind"], json!("inspect"));
    assert_eq!(r["native_record"]["id"], json!("U-\"add-1\"-1"));
    assert_eq!(
        r["actual_models_and_efforts"],
        json!({"provider": "acme", "roles": {
            "builder": {"model": null, "effort": null},
            "reviewer": {"model": "acme/m-small", "effort": "medium"}}})
    );
    assert_eq!(
        r["source_revision"],
        json!(format!("abc1234{}", "0".repeat(33)))
    );
    let r = row_of(dir.path(), sample(json!("add-1"), 1, json!("I")));
    assert_eq!(r["native_outcome"], json!("FAIL"));
    assert_eq!(r["reason"], json!("match scored I: the answer"));
    assert_eq!(r["oracle_checks"], json!([{"name": "match", "ok": false}]));
}

#[test]
fn pass_values_are_compared_by_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = inspect_declaration_value();
    v["tasks"][3]["inspect"]["pass"] = json!([1]);
    v["schedule"] = crate::testutil::schedule_for(&v);
    let decl = parse(&v);
    for (value, want) in [
        (json!(1.0), "PASS"),
        (json!(1), "PASS"),
        (json!("1"), "FAIL"),
        (json!(0), "FAIL"),
        (json!(true), "FAIL"),
    ] {
        let log = one(dir.path(), sample(json!("add-1"), 1, value.clone()));
        let s = &log.samples[0];
        let env = Env {
            repo_root: None,
            runtime_identity: None,
            lookup: &no_lookup,
        };
        let task = decl.task("inspect/arith-add-1").unwrap();
        let b = sample_row(&decl, &env, task, "inspect/arith-add-1/01", &log, s).unwrap();
        assert_eq!(b.row["native_outcome"], json!(want), "{value}");
    }
}

#[test]
fn a_nan_or_missing_score_is_unscored() {
    let dir = tempfile::tempdir().unwrap();
    let r = row_of(dir.path(), sample(json!("add-1"), 1, json!("NaN!")));
    assert_eq!(r["native_outcome"], json!("UNSCORED"));
    assert_eq!(r["reason"], json!("match scored NaN (unscored)"));
    assert_eq!(r["oracle_checks"], json!(null));
    let mut s = sample(json!("add-1"), 1, json!("NaN!"));
    s["scores"]["match"]["reason"] = json!("no answer found\nmore");
    let r = row_of(dir.path(), s);
    assert_eq!(
        r["reason"],
        json!("match scored NaN (unscored): no answer found")
    );
    // No score at all (an empty or absent scores object): UNSCORED.
    for scores in [json!({}), json!(null)] {
        let mut s = sample(json!("add-1"), 1, json!("C"));
        s["scores"] = scores;
        let r = row_of(dir.path(), s);
        assert_eq!(r["native_outcome"], json!("UNSCORED"));
        assert_eq!(r["reason"], json!("no match score from the scorer"));
    }
    // Infinity is a value, not "unscored": a FAIL.
    let r = row_of(dir.path(), sample(json!("add-1"), 1, json!("Inf!")));
    assert_eq!(r["native_outcome"], json!("FAIL"));
}

#[test]
fn scores_but_none_from_the_declared_scorer_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["scores"] = json!({"includes": {"value": "C"}, "exact": {"value": "I"}});
    let r = convert(&one(dir.path(), s), 0).map(|b| b.row).unwrap_err();
    let found = assert_only_reason!(
        r,
        row = "inspect/arith-add-1/01",
        field = None,
        rule = None,
        sentence = "the sample has no score from the declared scorer match but has scores from \
                    exact, includes: the declaration (task inspect/arith-add-1, inspect.scorer) \
                    and the log disagree"
    );
    assert_eq!(found.place.len(), 1, "at the sample: {found:?}");
    // An errored sample is an ERROR whatever it was scored by.
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["scores"] = json!({"includes": {"value": "C"}});
    s["error"] = json!({"message": "boom", "traceback": ""});
    assert_eq!(row_of(dir.path(), s)["native_outcome"], json!("ERROR"));
}

#[test]
fn an_error_is_an_error_with_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["error"] = json!({"message": "RuntimeError: boom\nTraceback …", "traceback": "…"});
    s.as_object_mut().unwrap().remove("scores");
    let r = row_of(dir.path(), s);
    assert_eq!(r["native_outcome"], json!("ERROR"));
    assert_eq!(r["native_status"], json!("error"));
    assert_eq!(r["reason"], json!("RuntimeError: boom"));
    assert_eq!(r["oracle_checks"], json!(null));
}

#[test]
fn a_retried_sample_is_the_first_trys_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["error_retries"] =
        json!([{"message": "ValueError: first\nmore", "traceback": "t"}, {"message": "second"}]);
    let log = one(dir.path(), s);
    let b = convert(&log, 0).unwrap();
    let r = &b.row;
    assert_eq!(r["native_outcome"], json!("ERROR"));
    assert_eq!(r["native_status"], json!("error"));
    assert_eq!(r["reason"], json!("ValueError: first"));
    for f in ["oracle_checks", "usage", "estimated_usd", "elapsed_seconds"] {
        assert_eq!(r[f], json!(null), "{f}");
    }
    assert_eq!(
        r["spent_budget"],
        json!({"message_limit": null, "token_limit": null})
    );
    assert!(
        b.notes.iter().any(|n| n.contains("retried")
            && n.contains("2 retries")
            && n.contains("not this attempt's")),
        "{:?}",
        b.notes
    );
}

#[test]
fn a_limit_is_the_status_and_the_sample_is_still_scored() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["limit"] = json!({"type": "message", "limit": 2});
    let r = row_of(dir.path(), s);
    assert_eq!(r["native_outcome"], json!("PASS"));
    assert_eq!(r["native_status"], json!("limit:message"));
}

#[test]
fn an_edited_score_keeps_the_scorers_first_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["scores"]["match"]["history"] = json!([
        {"value": "I", "answer": "3", "explanation": "wrong", "provenance": null},
        {"value": "C", "provenance": {"timestamp": "2026-01-01T00:00:00", "author": "alice", "reason": "regrade"}}
    ]);
    let b = convert(&one(dir.path(), s), 0).unwrap();
    assert_eq!(b.row["native_outcome"], json!("FAIL"));
    assert_eq!(b.row["reason"], json!("match scored I: wrong"));
    let edit = b
        .notes
        .iter()
        .find(|n| n.contains("edited"))
        .expect("an edit note");
    assert!(
        edit.contains("by alice") && edit.contains("the scorer's I counts, not the edited C"),
        "{edit}"
    );
    // A score that an edit created: the scorer recorded none.
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["scores"]["match"]["history"] = json!([{"value": "C", "provenance": {"author": "bob"}}]);
    let b = convert(&one(dir.path(), s), 0).unwrap();
    assert_eq!(b.row["native_outcome"], json!("UNSCORED"));
    assert!(
        b.notes.iter().any(|n| n.contains("added by an edit")),
        "{:?}",
        b.notes
    );
    // An empty history is no edit.
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["scores"]["match"]["history"] = json!([]);
    let b = convert(&one(dir.path(), s), 0).unwrap();
    assert!(!b.notes.iter().any(|n| n.contains("edit")), "{:?}", b.notes);
    assert_eq!(b.row["native_outcome"], json!("PASS"));
}

#[test]
fn an_invalidated_sample_keeps_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["invalidation"] = json!({"reason": "leaked answer", "author": "x"});
    let b = convert(&one(dir.path(), s), 0).unwrap();
    assert_eq!(b.row["native_outcome"], json!("PASS"));
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("invalidated") && n.contains("leaked answer")),
        "{:?}",
        b.notes
    );
}

#[test]
fn a_partly_priced_sample_has_no_cost() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["model_usage"]["acme/m-small"] =
        json!({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2});
    let r = row_of(dir.path(), s);
    assert_eq!(r["estimated_usd"], json!(null));
    assert_eq!(r["spent_budget"]["token_limit"], json!(17));
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["model_usage"] = json!({});
    let r = row_of(dir.path(), s);
    assert_eq!(r["usage"], json!(null));
    assert_eq!(r["estimated_usd"], json!(null));
    assert_eq!(r["spent_budget"]["token_limit"], json!(null));
    // A NaN count is unknown, not a number.
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["model_usage"]["acme/m-large"]["total_cost"] = json!("NaN!");
    let r = row_of(dir.path(), s);
    assert_eq!(r["usage"]["acme/m-large"]["total_cost"], json!(null));
    assert_eq!(r["estimated_usd"], json!(null));
}

#[test]
fn a_mockllm_model_is_fixture_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let p = eval_file(
        dir.path(),
        "m.eval",
        Some("success"),
        &eval_spec("mockllm/model"),
        &[
            sample(json!("add-1"), 1, json!("C")),
            sample(json!(2), 1, json!("C")),
        ],
        8,
    );
    let log = read_log(&p, 1 << 20).unwrap();
    // The row says fixture, which the row check refuses for a live task (a relabeled row);
    // the hint says why the class is fixture.
    let e = convert(&log, 0).unwrap_err();
    assert_reason!(
        e,
        row = "inspect/arith-add-1/01",
        field = "evidence",
        rule = Rule::Ledger(4),
        sentence =
            "is \"fixture\" but task inspect/arith-add-1 is declared live (a fixture row is \
                    never relabeled live, nor the reverse)"
    );
    let hint = sample_hint(&log, 0).expect("a hint");
    assert!(
        hint.contains("mockllm") && hint.contains("is fixture evidence"),
        "{hint}"
    );
    // It fills the fixture task's row.
    let b = convert(&log, 1).unwrap();
    assert_eq!(b.row["evidence"], json!("fixture"));
    // A live model cannot fill a fixture row.
    let p = eval_file(
        dir.path(),
        "l.eval",
        Some("success"),
        &eval_spec("acme/m-large"),
        &[sample(json!(2), 1, json!("C"))],
        8,
    );
    let live = read_log(&p, 1 << 20).unwrap();
    let e = convert(&live, 0).unwrap_err();
    assert_reason!(
        e,
        row = "inspect/arith-2/01",
        field = "evidence",
        rule = Rule::Ledger(4),
        sentence = "is \"live\" but task inspect/arith-2 is declared fixture (a fixture row is \
                    never relabeled live, nor the reverse)"
    );
    let hint = sample_hint(&live, 0).expect("a hint");
    assert!(hint.contains("is live evidence"), "{hint}");
    // The same class as the task's: no hint.
    assert_eq!(sample_hint(&log, 1), None);
}

#[test]
fn option_deviations_name_each_difference() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = eval_spec("acme/m-large");
    e["config"] = json!({"epochs": 1, "message_limit": 12, "time_limit": 60});
    e["task_args"] = json!({"n": 3});
    let p = eval_file(
        dir.path(),
        "o.eval",
        Some("success"),
        &e,
        &[sample(json!("add-1"), 1, json!("C"))],
        8,
    );
    let b = convert(&read_log(&p, 1 << 20).unwrap(), 0).unwrap();
    assert_eq!(
        b.row["option_deviations"],
        json!([
            "epochs: declared 2 (repetitions), eval ran 1",
            "message_limit: declared 10, eval set 12",
            "token_limit: declared 200000, eval set none",
            "time_limit: not declared, eval set 60",
            "task_args.n: not declared, eval ran 3"
        ])
    );
    // Equal by value is no deviation.
    let mut e = eval_spec("acme/m-large");
    e["config"]["message_limit"] = json!(10.0);
    let p = eval_file(
        dir.path(),
        "q.eval",
        Some("success"),
        &e,
        &[sample(json!("add-1"), 1, json!("C"))],
        8,
    );
    let b = convert(&read_log(&p, 1 << 20).unwrap(), 0).unwrap();
    assert_eq!(b.row["option_deviations"], json!([]));
}

#[test]
fn the_revision_is_the_full_commit_only_when_clean_and_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let full = |p: &str| Resolved::Commit(format!("{p}{}", "0".repeat(40 - p.len())));
    for (rev, want_null, note) in [
        (
            json!({"type": "git", "commit": "abc1234", "dirty": true}),
            true,
            "was dirty",
        ),
        (
            json!({"type": "git", "commit": "abc1234"}),
            true,
            "does not say whether",
        ),
        (json!(null), true, "records no revision"),
        (
            json!({"type": "git", "dirty": false}),
            true,
            "names no commit",
        ),
        (
            json!({"type": "git", "commit": "abc1234", "dirty": false}),
            false,
            "",
        ),
    ] {
        let mut e = eval_spec("acme/m-large");
        e["revision"] = rev;
        let p = eval_file(
            dir.path(),
            "r.eval",
            Some("success"),
            &e,
            &[sample(json!("add-1"), 1, json!("C"))],
            8,
        );
        let b = convert_with(&read_log(&p, 1 << 20).unwrap(), 0, &full).unwrap();
        assert_eq!(b.row["source_revision"].is_null(), want_null);
        if want_null {
            assert!(
                b.notes.iter().any(|n| n.contains(note)),
                "{note}: {:?}",
                b.notes
            );
        }
    }
    let p = eval_file(
        dir.path(),
        "r.eval",
        Some("success"),
        &eval_spec("acme/m-large"),
        &[sample(json!("add-1"), 1, json!("C"))],
        8,
    );
    let b = convert_with(&read_log(&p, 1 << 20).unwrap(), 0, &|_| {
        Resolved::Not("abc1234 is ambiguous".into())
    })
    .unwrap();
    assert!(b.row["source_revision"].is_null());
    assert!(b.notes.iter().any(|n| n.contains("ambiguous")));
}

#[test]
fn prefixes_resolve_among_the_commits_of_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::testutil::git(d, &["init", "-q"]);
    std::fs::write(d.join("f"), "x").unwrap();
    crate::testutil::git(d, &["add", "f"]);
    crate::testutil::git(
        d,
        &[
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@b",
            "commit",
            "-qm",
            "m",
        ],
    );
    let head = crate::testutil::git(d, &["rev-parse", "HEAD"]);
    let head = head.trim();
    let repo = gix::open(d).unwrap();
    assert_eq!(
        resolve_prefix(Some(&repo), &head[..7]),
        Resolved::Commit(head.to_owned())
    );
    assert_eq!(
        resolve_prefix(Some(&repo), &head[..9].to_uppercase()),
        Resolved::Commit(head.to_owned())
    );
    // The blob's id is not a commit.
    let blob = crate::testutil::git(d, &["rev-parse", "HEAD:f"]);
    assert!(
        matches!(resolve_prefix(Some(&repo), &blob.trim()[..7]), Resolved::Not(w) if w.contains("not in the local repository"))
    );
    assert!(matches!(
        resolve_prefix(Some(&repo), "zz12345"),
        Resolved::Not(_)
    ));
    assert!(matches!(resolve_prefix(None, &head[..7]), Resolved::Not(_)));
}

#[test]
fn human_approvals_become_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s["events"] = json!([
        {"event": "model", "input": [], "output": {}},
        {"event": "approval", "message": "m", "call": {"id": "call_1", "function": "bash", "arguments": {"cmd": "ls"}},
         "approver": "human", "decision": "approve", "explanation": "fine"},
        {"event": "approval", "message": "m", "call": {"id": "call_2", "function": "bash", "arguments": {}},
         "approver": "auto", "decision": "approve"},
        {"event": "subtask", "name": "s", "events": [
            {"event": "approval", "message": "m", "call": {"id": "call_3", "function": "python"},
             "approver": "human", "decision": "reject"}
        ]}
    ]);
    let r = row_of(dir.path(), s);
    assert_eq!(
        r["interventions_decision_or_repair"],
        json!([
            {"kind": "decision", "note": "human approval of tool call bash (call_1): approve: fine"},
            {"kind": "decision", "note": "human approval of tool call python (call_3): reject"}
        ])
    );
}

#[test]
fn where_each_sample_belongs() {
    let dir = tempfile::tempdir().unwrap();
    let decl = parse(&inspect_declaration_value());
    let index = SampleIndex::new(&decl);
    let p = eval_file(
        dir.path(),
        "t.eval",
        Some("success"),
        &eval_spec("acme/m-large"),
        &[
            sample(json!("add-1"), 2, json!("C")),
            sample(json!("add-1"), 3, json!("C")),
            sample(json!("add-2"), 1, json!("C")),
            // The string "2" is not the declared integer 2.
            sample(json!("2"), 2, json!("C")),
            sample(json!(2), 1, json!("C")),
        ],
        8,
    );
    let log = read_log(&p, 1 << 20).unwrap();
    let kinds: Vec<String> = log
        .samples
        .iter()
        .map(|s| match index.target(&decl, &log, s) {
            Target::Scheduled { schedule_id, .. } => schedule_id,
            Target::Undeclared => "undeclared".into(),
            Target::Unscheduled { epoch, .. } => format!("unscheduled {epoch}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "inspect/arith-add-1/02",
            "unscheduled 3",
            "undeclared",
            "undeclared",
            "inspect/arith-2/01"
        ]
    );
    // Another Inspect task's sample of the same id is undeclared.
    let mut e = eval_spec("acme/m-large");
    e["task"] = json!("other");
    let p = eval_file(
        dir.path(),
        "u.eval",
        Some("success"),
        &e,
        &[sample(json!("add-1"), 1, json!("C"))],
        8,
    );
    let log = read_log(&p, 1 << 20).unwrap();
    assert!(matches!(
        index.target(&decl, &log, &log.samples[0]),
        Target::Undeclared
    ));
}

#[test]
fn the_record_id_is_the_uuid_or_eval_id_sample_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = sample(json!("add-1"), 1, json!("C"));
    s.as_object_mut().unwrap().remove("uuid");
    let log = one(dir.path(), s);
    assert_eq!(record_id(&log, &log.samples[0]).unwrap(), "EVAL1/add-1/1");
    let log = read_log(&shared("log_streaming.eval"), 1 << 20).unwrap();
    assert!(record_id(&log, &log.samples[0])
        .unwrap()
        .starts_with("3RWm2YmdLiKCyQMzEcERin/"));
}

/// Random mutations (a fixed-seed generator, so a failure reproduces) of every shared log and
/// of built logs with each compression: every variant is refused or read and mapped, never a
/// panic, and none takes long (no hang).
#[test]
fn random_mutations_never_panic_or_hang() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let dir = tempfile::tempdir().unwrap();
    let mut inputs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for entry in std::fs::read_dir(shared("")).unwrap() {
        let p = entry.unwrap().path();
        if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("eval" | "json")
        ) {
            inputs.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    for method in [0, 8, 93] {
        let mut s = sample(json!("add-1"), 1, json!("NaN!"));
        s["scores"]["match"]["history"] = json!([{"value": "I", "provenance": null}, {"value": "C", "provenance": {"author": "a"}}]);
        s["error_retries"] = json!([{"message": "x"}]);
        let p = eval_file(
            dir.path(),
            &format!("m{method}.eval"),
            Some("success"),
            &eval_spec("acme/m-large"),
            &[s],
            method,
        );
        inputs.push((p.clone(), std::fs::read(&p).unwrap()));
    }
    let tokens: [&[u8]; 8] = [
        b"NaN",
        b"-Infinity",
        b"{",
        b"]",
        b"\"",
        b"\\u",
        b"PK\x05\x06",
        b"\xff",
    ];
    for (path, bytes) in &inputs {
        let is_eval = path.extension().and_then(|e| e.to_str()) == Some("eval");
        for _ in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..(1 + next() % 4) {
                let at = (next() as usize) % b.len().max(1);
                match next() % 4 {
                    0 => b[at] ^= 1 << (next() % 8),
                    1 => {
                        let t = tokens[(next() % tokens.len() as u64) as usize];
                        b.splice(at..at, t.iter().copied());
                    }
                    2 => b.truncate(at),
                    _ => {
                        let len = (next() as usize % 16).min(b.len() - at);
                        b.drain(at..at + len);
                    }
                }
                if b.is_empty() {
                    break;
                }
            }
            let start = std::time::Instant::now();
            let read = if is_eval {
                read_eval(path, &b, 1 << 24)
            } else {
                read_json(path, &b)
            };
            if let Ok(log) = read {
                map_all(&log);
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(5),
                "{} mutation took {:?}",
                path.display(),
                start.elapsed()
            );
        }
    }
}

#[test]
fn zip64_offsets_near_the_end_of_the_address_space_are_refused() {
    for rec in [u64::MAX, u64::MAX - 40, 1 << 40, 0] {
        let mut b = Vec::new();
        // ZIP64 end of central directory locator, then an end of central directory record
        // whose count says "see ZIP64".
        b.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&rec.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        b.extend_from_slice(&[0u8; 4]);
        b.extend_from_slice(&0xFFFFu16.to_le_bytes());
        b.extend_from_slice(&0xFFFFu16.to_le_bytes());
        b.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        b.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        assert!(Archive::open(&b).is_err(), "{rec}");
    }
    // A central directory entry whose local offset is huge (ZIP64 extra field).
    let z = write_archive(&[("a.json", b"{}", 0)]);
    let a = Archive::open(&z).unwrap();
    assert!(a.read(0, 100).is_ok());
    let mut bad = z.clone();
    let cd = bad.len() - 22 - (46 + 6);
    bad[cd + 42..cd + 46].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let e = Archive::open(&bad).err().unwrap();
    assert!(e.contains("local header is damaged"), "{e}");
}

#[test]
fn an_archive_of_many_members_reads_in_linear_time() {
    // 60,000 tiny samples, each name once: finding the last entry of each name is not a scan
    // of the directory per member (1.8e9 name comparisons).
    let names: Vec<String> = (0..60_000).map(|i| format!("samples/{i}.json")).collect();
    let mut members: Vec<(&str, &[u8], u16)> =
        names.iter().map(|n| (n.as_str(), &b"{}"[..], 0)).collect();
    let e = text(&json!({"eval": eval_spec("acme/m-large")}));
    members.push(("_journal/start.json", &e, 0));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.eval");
    std::fs::write(&p, write_archive(&members)).unwrap();
    // At 2 MiB the archive fits (4 × 2 MiB) but its directory does not fit what an import may
    // keep (2 × 2 MiB): refused before any member is read.
    let e = read_log(&p, 2 << 20).unwrap_err().to_string();
    assert!(e.contains("each sample and archive entry"), "{e}");
    let start = std::time::Instant::now();
    // 6.8 MB of headers for 120 KB of members, and 60,000 samples kept (36 MB of entries and
    // samples in memory): within 4 × and 2 × 32 MiB.
    let log = read_log(&p, 32 << 20).unwrap();
    assert_eq!(log.samples.len(), 60_000);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

/// An archive whose ZIP64 end of central directory claims `count` entries in an empty
/// directory (the count is checked before any entry is read).
fn claiming_entries(count: u64) -> Vec<u8> {
    let mut b = Vec::new();
    let z64 = b.len() as u64;
    b.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
    b.extend_from_slice(&44u64.to_le_bytes());
    b.extend_from_slice(&45u16.to_le_bytes());
    b.extend_from_slice(&45u16.to_le_bytes());
    b.extend_from_slice(&[0u8; 8]); // this disk, the directory's disk
    b.extend_from_slice(&count.to_le_bytes());
    b.extend_from_slice(&count.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes()); // directory size
    b.extend_from_slice(&0u64.to_le_bytes()); // directory offset
    b.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&z64.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    b.extend_from_slice(&[0u8; 4]);
    b.extend_from_slice(&[0xFF; 4]); // entry counts: see ZIP64
    b.extend_from_slice(&[0u8; 8]);
    b.extend_from_slice(&0u16.to_le_bytes());
    b
}

#[test]
fn an_archive_of_more_than_a_million_entries_is_refused_before_its_directory_is_read() {
    let over = super::zip::MAX_ENTRIES + 1;
    let e = Archive::open(&claiming_entries(over)).err().unwrap();
    assert_eq!(e, format!("{over} members: more than 1000000"));
    // At the bound the count passes and the directory itself is read (here: it is empty).
    let e = Archive::open(&claiming_entries(super::zip::MAX_ENTRIES))
        .err()
        .unwrap();
    assert_eq!(e, "central directory entry 0 is damaged");
}
