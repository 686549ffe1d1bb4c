//! `git-ledger cite`: the citeability gate, run as a user runs it.

use crate::common::{ledger, ledger_stdin, write};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::Write as _;

/// The seed's `ok.jsonl`.
const OK: &str = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"queue_wait_ms":840,"stop_reason":"pass","patch_sha256":"bb10"}"#;
/// The seed's `gap.jsonl`: no `queue_wait_ms`.
const GAP: &str = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"stop_reason":"pass","patch_sha256":"bb10"}"#;

fn row(task: &str, attempt: u64, stop: &str, changes: Value) -> String {
    let mut v: Value = serde_json::from_str(OK).unwrap();
    v["task_id"] = json!(task);
    v["attempt"] = json!(attempt);
    v["stop_reason"] = json!(stop);
    for (k, val) in changes.as_object().unwrap() {
        v[k] = val.clone();
    }
    v.to_string()
}

fn lines(rows: &[String]) -> String {
    rows.iter().map(|r| format!("{r}\n")).collect()
}

const CARD: &str = r#"{
  "question": "On this frozen list, how many tasks pass on the first completed attempt?",
  "tasks": [
    {"task_id": "calc-parse-017", "repo_revision": "9f3c1ab", "prompt_sha256": "6d2ec1aa",
     "hidden_tests_sha256": "a91b0440", "allowed_files": ["src/parse.py"], "timeout_s": 180,
     "token_budget": 12000}
  ]
}
"#;

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn seed_ok_is_citeable_with_rates_one_zero_zero() {
    let d = dir();
    write(d.path(), "ok.jsonl", format!("{OK}\n"));
    let r = ledger(d.path(), &["cite", "ok.jsonl"]);
    r.ok();
    assert!(
        r.stdout
            .starts_with("citeable: true\nn_tasks: 1\nfirst_complete_pass_rate: 1.0\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("\nretry_rate: 0.0\ntruncation_rate: 0.0\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with(
        "On 1 task (no card, access free_model, server free_server, timeout 180 s, budget 12000 tokens): \
         first completed attempt passed on 1 (1.0); retry rate 0.0; truncation rate 0.0. \
         Single envelope; not a product ranking.\n"
    ), "{}", r.stdout);
    assert_eq!(r.stderr, "");

    let r = ledger(d.path(), &["cite", "ok.jsonl", "--json"]);
    r.ok();
    let v = r.json();
    assert_eq!(v["citeable"], json!(true));
    assert_eq!(v["n_tasks"], json!(1));
    assert_eq!(v["first_complete_pass_rate"], json!(1.0));
    assert_eq!(v["retry_rate"], json!(0.0));
    assert_eq!(v["truncation_rate"], json!(0.0));
    assert_eq!(v["patch_apply_fail_rate"], json!(0.0));
    assert_eq!(
        v["envelope"],
        json!({"access_class": "free_model", "server_class": "free_server", "timeout_s": 180,
               "token_budget": 12000, "card_sha256": null})
    );
    assert!(v["sentence"]
        .as_str()
        .unwrap()
        .starts_with("On 1 task (no card"));
    // Canonical: pretty, sorted keys, trailing newline.
    assert!(
        r.stdout
            .starts_with("{\n  \"citeable\": true,\n  \"counts\""),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with("}\n"));
}

#[test]
fn seed_gap_exits_2_naming_queue_wait_ms() {
    let d = dir();
    write(d.path(), "gap.jsonl", format!("{GAP}\n"));
    let r = ledger(d.path(), &["cite", "gap.jsonl"]);
    r.expect_code(2);
    assert_eq!(
        r.stdout,
        "not citeable: incomplete_envelope (reasons: incomplete_envelope)\n  \
         incomplete_envelope: row 0 (line 1, task \"calc-parse-017\"): queue_wait_ms is missing (absent, null or empty)\n\
         No rate is printed until the envelope is complete; publish this list instead.\n"
    );
    assert!(!r.stdout.contains("rate:"));

    let r = ledger(d.path(), &["cite", "--json", "gap.jsonl"]);
    r.expect_code(2);
    let v = r.json();
    assert_eq!(
        keys(&v),
        vec!["citeable", "missing", "reason", "reasons", "refused"]
    );
    assert_eq!(v["citeable"], json!(false));
    assert_eq!(v["refused"], json!(true));
    assert_eq!(v["reason"], json!("incomplete_envelope"));
    assert_eq!(v["reasons"], json!(["incomplete_envelope"]));
    let m = &v["missing"][0];
    assert_eq!((m["row"].clone(), m["line"].clone()), (json!(0), json!(1)));
    assert_eq!(
        (m["task_id"].clone(), m["field"].clone()),
        (json!("calc-parse-017"), json!("queue_wait_ms"))
    );
    // The human list goes to stderr under --json.
    assert!(
        r.stderr.contains("queue_wait_ms is missing"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_matching_card_is_named_by_its_hash() {
    let d = dir();
    write(d.path(), "ok.jsonl", format!("{OK}\n"));
    write(d.path(), "card.json", CARD);
    let hash = sha256_hex(CARD.as_bytes());
    let r = ledger(
        d.path(),
        &["cite", "ok.jsonl", "--card", "card.json", "--json"],
    );
    r.ok();
    let v = r.json();
    assert_eq!(v["envelope"]["card_sha256"], json!(hash));
    assert!(v["question"]
        .as_str()
        .unwrap()
        .starts_with("On this frozen list"));
    assert!(
        v["sentence"].as_str().unwrap().starts_with(&format!(
            "On 1 task (card sha256 {}, access free_model",
            &hash[..12]
        )),
        "{}",
        v["sentence"]
    );
    let r = ledger(d.path(), &["cite", "ok.jsonl", "--card", "card.json"]);
    r.ok();
    assert!(
        r.stdout.contains(&format!("card sha256 {hash}\n")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("question: On this frozen list"),
        "{}",
        r.stdout
    );
}

#[test]
fn public_tasks_say_the_rate_is_not_generalisation() {
    let d = dir();
    write(d.path(), "ok.jsonl", format!("{OK}\n"));
    write(
        d.path(),
        "card.json",
        CARD.replacen('{', "{\"public_tasks\": true,", 1),
    );
    let r = ledger(d.path(), &["cite", "ok.jsonl", "--card", "card.json"]);
    r.ok();
    assert!(
        r.stdout
            .contains("warning: Public tasks: hidden tests do not detect training leakage"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .trim_end()
            .ends_with("cannot be cited as generalisation."),
        "{}",
        r.stdout
    );
}

#[test]
fn card_mismatches_are_refused() {
    let d = dir();
    write(d.path(), "card.json", CARD);
    write(
        d.path(),
        "runs.jsonl",
        lines(&[
            row("calc-parse-017", 1, "pass", json!({"token_budget": 9000})),
            row("not-on-card", 1, "pass", json!({"token_budget": 9000})),
        ]),
    );
    let r = ledger(
        d.path(),
        &["cite", "runs.jsonl", "--card", "card.json", "--json"],
    );
    r.expect_code(2);
    let v = r.json();
    assert_eq!(v["reason"], json!("envelope_mismatch"));
    assert_eq!(v["reasons"], json!(["envelope_mismatch"]));
    let missing = v["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 2, "{missing:#?}");
    assert_eq!(missing[0]["field"], json!("token_budget"));
    assert!(missing[0]["message"]
        .as_str()
        .unwrap()
        .contains("9000 differs from the card's 12000"));
    assert_eq!(
        (missing[1]["task_id"].clone(), missing[1]["line"].clone()),
        (json!("not-on-card"), json!(2))
    );

    // An incomplete card refuses, and a card task without runs is named.
    write(
        d.path(),
        "thin.json",
        r#"{"tasks": [{"task_id": "calc-parse-017", "repo_revision": "main", "prompt_sha256": "6d2ec1aa", "hidden_tests_sha256": "a91b0440", "allowed_files": ["src/parse.py"], "timeout_s": 180}, {"task_id": "x", "repo_revision": "9f3c1ab", "prompt_sha256": "6d2ec1aa", "hidden_tests_sha256": "a91b0440", "allowed_files": ["src/parse.py"], "timeout_s": 180, "token_budget": 12000}]}"#,
    );
    write(d.path(), "ok.jsonl", format!("{OK}\n"));
    let r = ledger(d.path(), &["cite", "ok.jsonl", "--card", "thin.json"]);
    r.expect_code(2);
    assert!(r.stdout.starts_with("not citeable: envelope_mismatch (reasons: envelope_mismatch, invalid_value, no_runs)\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "card: card task 0 (calc-parse-017): the card is incomplete: token_budget is missing"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("never a branch or tag name"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("no_runs: card task 1 (x) has no run"),
        "{}",
        r.stdout
    );

    // A card that is not strict JSON is refused too (exit 2, not a crash).
    write(d.path(), "dup.json", r#"{"tasks": [], "tasks": []}"#);
    let r = ledger(
        d.path(),
        &["cite", "ok.jsonl", "--card", "dup.json", "--json"],
    );
    r.expect_code(2);
    assert_eq!(r.json()["reason"], json!("invalid_value"));
    assert!(r.stdout.contains("duplicate key"), "{}", r.stdout);
}

#[test]
fn mixed_envelopes_name_the_groups() {
    let d = dir();
    write(
        d.path(),
        "runs.jsonl",
        lines(&[
            row("a", 1, "pass", json!({})),
            row("b", 1, "pass", json!({"server_class": "paid_server"})),
            row("c", 1, "pass", json!({})),
        ]),
    );
    let r = ledger(d.path(), &["cite", "runs.jsonl", "--json"]);
    r.expect_code(2);
    let v = r.json();
    assert_eq!(v["reason"], json!("mixed_envelopes"));
    let groups = &v["missing"][0]["groups"];
    assert_eq!(groups[0]["server_class"], json!("free_server"));
    assert_eq!(groups[0]["rows"], json!(2));
    assert_eq!(groups[1]["server_class"], json!("paid_server"));
    assert_eq!(groups[1]["first_line"], json!(2));
    assert!(
        r.stderr.contains("server free_server") && r.stderr.contains("server paid_server"),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_attempt_numbering_is_refused() {
    let d = dir();
    write(
        d.path(),
        "runs.jsonl",
        lines(&[
            row("a", 1, "transport", json!({})),
            row("a", 1, "pass", json!({})),
            row("b", 2, "pass", json!({})),
        ]),
    );
    let r = ledger(d.path(), &["cite", "runs.jsonl"]);
    r.expect_code(2);
    assert!(r.stdout.contains("attempt_sequence: row 1 (line 2, task \"a\"): attempt 1 appears again (the task's rows start on line 1)"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("attempt_sequence: row 2 (line 3, task \"b\"): attempts start at 2, not 1"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_non_object_line_is_refused_with_its_line_number() {
    let d = dir();
    write(d.path(), "runs.jsonl", format!("{OK}\n\n[1, 2, 3]\n"));
    let r = ledger(d.path(), &["cite", "runs.jsonl", "--json"]);
    r.expect_code(2);
    let v = r.json();
    assert_eq!(v["reason"], json!("incomplete_envelope"));
    assert_eq!(v["missing"][0]["line"], json!(3));
    assert_eq!(v["missing"][0]["row"], json!(1));
    assert!(v["missing"][0]["message"]
        .as_str()
        .unwrap()
        .contains("not a JSON object"));
}

#[test]
fn no_runs_is_refused() {
    let d = dir();
    write(d.path(), "empty.jsonl", "\n\n");
    let r = ledger(d.path(), &["cite", "empty.jsonl", "--json"]);
    r.expect_code(2);
    assert_eq!(r.json()["reason"], json!("no_runs"));
}

#[test]
fn runs_can_come_from_standard_input() {
    let d = dir();
    let r = ledger_stdin(
        d.path(),
        &["cite", "-", "--json"],
        Some(format!("{OK}\n").as_bytes()),
    );
    r.ok();
    assert_eq!(r.json()["first_complete_pass_rate"], json!(1.0));
}

#[test]
fn unreadable_inputs_fail_with_exit_1_and_usage_errors_with_64() {
    let d = dir();
    write(d.path(), "ok.jsonl", format!("{OK}\n"));
    let r = ledger(d.path(), &["cite", "absent.jsonl"]);
    r.expect_code(1);
    assert!(
        r.stderr.contains("absent.jsonl: cannot open"),
        "{}",
        r.stderr
    );
    let r = ledger(
        d.path(),
        &["cite", "ok.jsonl", "--card", "absent.json", "--json"],
    );
    r.expect_code(1);
    assert_eq!(r.json()["refused"], json!(false));
    let r = ledger(d.path(), &["cite", "."]);
    r.expect_code(1);
    let r = ledger(d.path(), &["cite"]);
    r.expect_code(64);
    let r = ledger(d.path(), &["cite", "ok.jsonl", "--frobnicate"]);
    r.expect_code(64);
    let r = ledger(d.path(), &["cite", "--help"]);
    r.ok();
    assert!(r.stdout.contains("citeability gate"), "{}", r.stdout);
}

#[test]
fn a_line_over_the_input_bound_is_refused_with_its_line_number() {
    let d = dir();
    let long = row("b", 1, "pass", json!({"access_class": "x".repeat(2000)}));
    write(d.path(), "runs.jsonl", lines(&[OK.to_string(), long]));
    let r = ledger(
        d.path(),
        &["cite", "runs.jsonl", "--max-input-bytes", "1024", "--json"],
    );
    r.expect_code(2);
    let v = r.json();
    assert_eq!(v["reason"], json!("incomplete_envelope"));
    assert_eq!(v["missing"][0]["line"], json!(2));
    assert!(v["missing"][0]["message"]
        .as_str()
        .unwrap()
        .contains("over the line bound of 1024 bytes"));
}

/// 200,000 lines (about 50 MB) stream through a gate whose input bound is 4 KiB: the bound is
/// per line, and only per-task state is kept.
#[test]
fn a_large_runs_file_streams() {
    let d = dir();
    let path = d.path().join("big.jsonl");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let transport = row("TASK", 1, "transport", json!({}));
        let pass = row("TASK", 2, "pass", json!({}));
        let timeout = row("TASK", 1, "timeout", json!({}));
        for i in 0..100_000u32 {
            let id = format!("task-{i:06}");
            if i % 4 == 0 {
                writeln!(f, "{}", timeout.replace("TASK", &id)).unwrap();
                writeln!(f, "{}", pass.replace("TASK", &id)).unwrap();
            } else {
                writeln!(f, "{}", transport.replace("TASK", &id)).unwrap();
                writeln!(f, "{}", pass.replace("TASK", &id)).unwrap();
            }
        }
    }
    assert!(std::fs::metadata(&path).unwrap().len() > 4096 * 1000);
    let r = ledger(
        d.path(),
        &["cite", "big.jsonl", "--max-input-bytes", "4096", "--json"],
    );
    r.ok();
    let v = r.json();
    assert_eq!(v["n_tasks"], json!(100_000));
    assert_eq!(v["counts"]["rows"], json!(200_000));
    assert_eq!(v["first_complete_pass_rate"], json!(0.75));
    assert_eq!(v["retry_rate"], json!(1.0));
    assert_eq!(v["truncation_rate"], json!(0.25));
}
