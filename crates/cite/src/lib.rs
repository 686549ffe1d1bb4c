//! The citeability gate (`cite.md`): read a runs file (JSON Lines, one attempt per line) and an
//! optional dataset card, and either refuse with the list of what is missing or compute the three
//! metrics and the one sentence that may be shipped.
//!
//! The runs are streamed: each line is read (bounded), checked and folded into small per-task
//! state, then dropped. Nothing here knows about the command line or the terminal; the result is
//! a [`Verdict`] that renders as text or serialises as JSON from the same data.
//!
//! This file owns the gate's vocabulary (the run fields, the bounds on what is listed, the stop
//! reasons) and [`cite`], the one entry point; the verdict and its renderings are in
//! `cite/verdict.rs`, the streaming checks in `cite/gate.rs`, the shared value checks in
//! `cite/values.rs`, the card in `cite/card.rs`.

// The base's modules, named as the crate's own (`crate::error`, `crate::json`).
use git_ledger_base::{error, json, sha256_hex};

mod card;
mod gate;
mod lines;
mod round;
mod values;
mod verdict;

pub use card::{Card, CARD_FIELDS};
pub use gate::Gate;
pub use round::{round4, round_to};
pub(crate) use values::{check_budget, check_hex, check_timeout, is_missing, show};
pub use verdict::{
    rate, Citation, Counts, Envelope, EnvelopeGroup, FieldCount, Problem, Reason, Refusal, Verdict,
};

use std::io::BufRead;

use crate::error::{Error, Result};

/// The twelve fields every run line carries, in the seed's order.
pub const RUN_FIELDS: [&str; 12] = [
    "task_id",
    "prompt_sha256",
    "hidden_tests_sha256",
    "access_class",
    "server_class",
    "timeout_s",
    "token_budget",
    "attempt",
    "cold_start",
    "queue_wait_ms",
    "stop_reason",
    "patch_sha256",
];

/// The SHA-256 of the empty patch, recorded by an attempt that produced no patch.
pub const EMPTY_PATCH_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// How many problems of one reason are listed; the rest are counted (`omitted`).
pub const MAX_LISTED_PER_REASON: usize = 1000;

/// How many rows of one field's problem the text lists without `--verbose` (the summary line
/// before them counts them all).
pub const SHOWN_ROWS_PER_FIELD: usize = 3;

/// How many fields the text's summary counts without `--verbose`.
pub const SHOWN_FIELDS: usize = 50;

/// How many distinct envelopes a mixed-envelope refusal names; rows in further envelopes are
/// counted.
pub const MAX_GROUPS: usize = 100;

/// Options of the gate.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Longest accepted runs line, in bytes (`--max-input-bytes`).
    pub max_line_bytes: u64,
}

/// Run the gate over a runs reader (JSON Lines) and an optional checked card. Only an I/O error
/// reading the runs is an `Err`; every problem with the content is in the [`Verdict`].
pub fn cite<R: BufRead>(mut runs: R, card: Option<&Card>, options: Options) -> Result<Verdict> {
    let head = runs
        .fill_buf()
        .map_err(|e| Error::failed(format!("cannot read the runs: {e}")))?;
    if let Some(what) = a_json_document(head) {
        let reason = format!(
            "{what}, not JSON Lines runs: cite reads JSON Lines runs, one attempt per line (each line one JSON object); nothing was judged"
        );
        return Err(if what.starts_with("a ledger") {
            Error::refused_with_hint(
                reason,
                "a ledger's outcomes are read with `git ledger report <DECLARATION> <LEDGER>`",
            )
        } else {
            Error::refused(reason)
        });
    }
    let mut gate = Gate::new(card);
    let mut buf = Vec::new();
    let mut line_no: u64 = 0;
    loop {
        let read = lines::read_line(&mut runs, &mut buf, options.max_line_bytes)
            .map_err(|e| Error::failed(format!("cannot read the runs: {e}")))?;
        let Some(read) = read else { break };
        line_no += 1;
        match read {
            lines::Line::Complete => gate.push_line(line_no, &buf),
            lines::Line::TooLong { bytes, ended } => {
                gate.push_too_long(line_no, bytes, options.max_line_bytes);
                if !ended {
                    gate.push_unread(line_no, bytes);
                    break;
                }
            }
        }
    }
    Ok(gate.finish())
}

/// What the start of a runs input is when it is one JSON document written over several lines
/// (its first line a lone `{` or `[`, which no JSON Lines line can be) rather than JSON Lines:
/// a ledger or a declaration named by its format, or any other document; `None` otherwise, so
/// that a stray line still reaches the gate as one row's problem.
pub fn a_json_document(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(&head[..head.len().min(64 * 1024)]);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if first != "{" && first != "[" {
        return None;
    }
    let named = |format: &str| {
        text.lines()
            .take(4)
            .any(|l| l.trim().trim_end_matches(',') == format!("\"format\": \"{format}\""))
    };
    Some(if named("campaign-ledger/1") {
        "a ledger document (campaign-ledger/1)".to_owned()
    } else if named("campaign-declaration/1") {
        "a campaign declaration (campaign-declaration/1)".to_owned()
    } else {
        format!(
            "one JSON {} written over several lines",
            if first == "{" { "object" } else { "list" }
        )
    })
}

/// A stop reason's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Pass,
    Fail,
    Timeout,
    Budget,
    Transport,
    ApplyError,
}

impl StopReason {
    fn parse(s: &str) -> Option<StopReason> {
        Some(match s {
            "pass" => StopReason::Pass,
            "fail" => StopReason::Fail,
            "timeout" => StopReason::Timeout,
            "budget" => StopReason::Budget,
            "transport" => StopReason::Transport,
            "apply_error" => StopReason::ApplyError,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map, Value};

    /// The seed's `ok.jsonl` row.
    const OK: &str = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"queue_wait_ms":840,"stop_reason":"pass","patch_sha256":"bb10"}"#;
    /// The seed's `gap.jsonl` row (no `queue_wait_ms`).
    const GAP: &str = r#"{"task_id":"calc-parse-017","prompt_sha256":"6d2ec1aa","hidden_tests_sha256":"a91b0440","access_class":"free_model","server_class":"free_server","timeout_s":180,"token_budget":12000,"attempt":1,"cold_start":false,"stop_reason":"pass","patch_sha256":"bb10"}"#;

    fn base() -> Map<String, Value> {
        match serde_json::from_str(OK).unwrap() {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    /// A row of `task` at `attempt` stopping on `stop`, with `changes` applied (`None` removes).
    fn row(task: &str, attempt: u64, stop: &str, changes: &[(&str, Option<Value>)]) -> String {
        let mut m = base();
        m.insert("task_id".into(), json!(task));
        m.insert("attempt".into(), json!(attempt));
        m.insert("stop_reason".into(), json!(stop));
        for (k, v) in changes {
            match v {
                Some(v) => m.insert((*k).into(), v.clone()),
                None => m.remove(*k),
            };
        }
        Value::Object(m).to_string()
    }

    fn run_with(lines: &[String], card: Option<&Card>, max: u64) -> Verdict {
        let input = lines.join("\n");
        cite(
            input.as_bytes(),
            card,
            Options {
                max_line_bytes: max,
            },
        )
        .unwrap()
    }

    fn run(lines: &[String], card: Option<&Card>) -> Verdict {
        run_with(lines, card, 1 << 20)
    }

    fn citation(v: Verdict) -> Citation {
        match v {
            Verdict::Citeable(c) => c,
            Verdict::Refused(r) => panic!("refused: {}", Verdict::Refused(r).to_text()),
        }
    }

    fn refusal(v: Verdict) -> Refusal {
        match v {
            Verdict::Refused(r) => r,
            Verdict::Citeable(c) => panic!("citeable: {}", c.sentence),
        }
    }

    /// The refusal's only problem, checked to have `reason`.
    #[track_caller]
    fn only(v: Verdict, reason: Reason) -> Problem {
        let r = refusal(v);
        assert_eq!(r.missing.len(), 1, "{:#?}", r.missing);
        assert_eq!(r.reason, reason, "{:#?}", r.missing);
        assert_eq!(r.reasons, vec![reason]);
        r.missing.into_iter().next().unwrap()
    }

    fn card_for(tasks: &[&str], extra: Value) -> Card {
        let mut top = json!({
            "tasks": tasks.iter().map(|t| json!({
                "task_id": t,
                "repo_revision": "9f3c1ab",
                "prompt_sha256": "6d2ec1aa",
                "hidden_tests_sha256": "a91b0440",
                "allowed_files": ["src/parse.py"],
                "timeout_s": 180,
                "token_budget": 12000
            })).collect::<Vec<_>>()
        });
        if let Value::Object(extra) = extra {
            for (k, v) in extra {
                top[k] = v;
            }
        }
        let c = Card::from_bytes(&crate::json::canonical(&top));
        assert!(c.problems.is_empty(), "{:#?}", c.problems);
        c
    }

    #[test]
    fn the_seed_ok_row_is_citeable_with_rates_one_zero_zero() {
        let c = citation(run(&[OK.into()], None));
        assert_eq!(c.n_tasks, 1);
        assert_eq!(
            (c.first_complete_pass_rate, c.retry_rate, c.truncation_rate),
            (1.0, 0.0, 0.0)
        );
        assert_eq!(c.patch_apply_fail_rate, 0.0);
        assert_eq!(
            c.sentence,
            "On 1 task (no card, access free_model, server free_server, timeout 180 s, budget 12000 tokens): \
             first completed attempt passed on 1 (1.0); retry rate 0.0; truncation rate 0.0. \
             Single envelope; not a product ranking."
        );
    }

    #[test]
    fn the_seed_gap_row_is_refused_naming_queue_wait_ms() {
        let p = only(run(&[GAP.into()], None), Reason::IncompleteEnvelope);
        assert_eq!(p.field.as_deref(), Some("queue_wait_ms"));
        assert_eq!((p.row, p.line), (Some(0), Some(1)));
        assert_eq!(p.task_id, Some(json!("calc-parse-017")));
    }

    #[test]
    fn every_required_field_missing_absent_null_or_empty() {
        for field in RUN_FIELDS {
            for missing in [None, Some(Value::Null), Some(json!(""))] {
                let r = refusal(run(
                    &[row("t", 1, "pass", &[(field, missing.clone())])],
                    None,
                ));
                assert_eq!(r.reason, Reason::IncompleteEnvelope, "{field} {missing:?}");
                let p = &r.missing[0];
                assert_eq!(p.field.as_deref(), Some(field));
                assert_eq!(p.line, Some(1));
                let want_id = if field == "task_id" {
                    json!(missing.clone().unwrap_or(Value::Null))
                } else {
                    json!("t")
                };
                assert_eq!(p.task_id, Some(want_id), "{field}");
            }
        }
    }

    #[test]
    fn zero_and_false_are_values() {
        let c = citation(run(
            &[row(
                "t",
                1,
                "fail",
                &[
                    ("queue_wait_ms", Some(json!(0))),
                    ("cold_start", Some(json!(false))),
                ],
            )],
            None,
        ));
        assert_eq!(c.first_complete_pass_rate, 0.0);
    }

    #[test]
    fn the_empty_patch_hash_lets_an_honest_timeout_be_cited() {
        let c = citation(run(
            &[row(
                "t",
                1,
                "timeout",
                &[("patch_sha256", Some(json!(EMPTY_PATCH_SHA256)))],
            )],
            None,
        ));
        assert_eq!(c.truncation_rate, 1.0);
    }

    #[test]
    fn a_line_that_is_not_a_json_object_is_refused_with_its_line_number() {
        for (bad, why) in [
            ("[1, 2]", "is a list, not a JSON object"),
            ("\"row\"", "is a string, not a JSON object"),
            ("17", "is an integer, not a JSON object"),
            (
                "not json",
                "is not a JSON object: expected ident at line 1 column 2",
            ),
            (
                "{\"task_id\": \"a\", \"task_id\": \"b\"}",
                "is not a JSON object: duplicate key \"task_id\" at line 1 column 26",
            ),
            (
                "{\"a\": NaN}",
                "is not a JSON object: expected value at line 1 column 7",
            ),
            (
                "{} {}",
                "is not a JSON object: trailing characters at line 1 column 4",
            ),
        ] {
            let lines = vec![OK.to_string(), String::new(), bad.to_string()];
            let p = only(run(&lines, None), Reason::IncompleteEnvelope);
            assert_eq!((p.row, p.line), (Some(1), Some(3)), "{bad}");
            assert_eq!(p.message, format!("row 1 (line 3): the line {why}"));
        }
    }

    #[test]
    fn blank_lines_are_skipped_and_rows_count_non_blank_lines() {
        let lines = vec![
            "".into(),
            "  \t".into(),
            OK.into(),
            "".into(),
            GAP.replace("calc-parse-017", "other"),
        ];
        let p = only(run(&lines, None), Reason::IncompleteEnvelope);
        assert_eq!((p.row, p.line), (Some(1), Some(5)));
        assert_eq!(
            p.message,
            "row 1 (line 5, task \"other\"): queue_wait_ms is missing (absent, null or empty)"
        );
    }

    #[test]
    fn a_line_over_the_bound_is_refused_with_its_line_number() {
        let lines = vec![
            OK.to_string(),
            format!("{{\"pad\": \"{}\"}}", "x".repeat(400)),
            OK.replace("calc", "more"),
        ];
        let r = refusal(run_with(&lines, None, OK.len() as u64 + 10));
        assert_eq!(r.reason, Reason::IncompleteEnvelope);
        assert_eq!(r.missing.len(), 1, "{:#?}", r.missing);
        assert_eq!(r.missing[0].line, Some(2));
        assert_eq!(r.missing[0].message, "row 1 (line 2): 411 bytes is over the line bound of 286 bytes (--max-input-bytes); not read as a JSON object");
    }

    #[test]
    fn values_of_the_wrong_type_or_outside_the_vocabulary() {
        let cases: &[(&str, Value)] = &[
            ("task_id", json!(17)),
            ("prompt_sha256", json!("not-hex")),
            ("hidden_tests_sha256", json!(["a91b"])),
            ("patch_sha256", json!("zz")),
            ("access_class", json!(1)),
            ("server_class", json!(true)),
            ("timeout_s", json!(0)),
            ("timeout_s", json!(-180)),
            ("timeout_s", json!("180")),
            ("token_budget", json!(0)),
            ("token_budget", json!(12000.5)),
            ("token_budget", json!(12000.0)),
            ("attempt", json!(0)),
            ("attempt", json!(-1)),
            ("attempt", json!(1.0)),
            ("attempt", json!("1")),
            ("cold_start", json!("no")),
            ("cold_start", json!(0)),
            ("queue_wait_ms", json!(-1)),
            ("queue_wait_ms", json!("840")),
            ("stop_reason", json!("crash")),
            ("stop_reason", json!("PASS")),
        ];
        for (field, value) in cases {
            let r = refusal(run(
                &[row("t", 1, "pass", &[(field, Some(value.clone()))])],
                None,
            ));
            assert_eq!(
                r.reason,
                Reason::InvalidValue,
                "{field} = {value}: {:#?}",
                r.missing
            );
            assert_eq!(
                r.reasons,
                vec![Reason::InvalidValue],
                "{field} = {value}: {:#?}",
                r.missing
            );
            assert_eq!(r.missing[0].field.as_deref(), Some(*field));
        }
        // The good side of the same rules.
        for (field, value) in [
            ("timeout_s", json!(180.5)),
            ("queue_wait_ms", json!(12.25)),
            ("prompt_sha256", json!("6D2EC1AA")),
            ("stop_reason", json!("apply_error")),
        ] {
            citation(run(&[row("t", 1, "pass", &[(field, Some(value))])], None));
        }
    }

    #[test]
    fn run_lines_are_a_closed_format() {
        let p = only(
            run(&[row("t", 1, "pass", &[("model", Some(json!("x")))])], None),
            Reason::InvalidValue,
        );
        assert_eq!(p.field.as_deref(), Some("model"));
        assert_eq!(p.message, "row 0 (line 1, task \"t\"): unknown field \"model\" (a run line holds exactly the twelve envelope fields)");
    }

    #[test]
    fn mixed_envelopes_are_never_pooled_and_the_groups_are_named() {
        for (field, other, group) in [
            (
                "access_class",
                json!("paid_model"),
                "access paid_model, server free_server, timeout 180 s, budget 12000 tokens",
            ),
            (
                "server_class",
                json!("dedicated"),
                "access free_model, server dedicated, timeout 180 s, budget 12000 tokens",
            ),
            (
                "timeout_s",
                json!(300),
                "access free_model, server free_server, timeout 300 s, budget 12000 tokens",
            ),
            (
                "token_budget",
                json!(8000),
                "access free_model, server free_server, timeout 180 s, budget 8000 tokens",
            ),
        ] {
            let lines = vec![
                row("a", 1, "pass", &[]),
                row("b", 1, "pass", &[]),
                row("c", 1, "fail", &[(field, Some(other.clone()))]),
            ];
            let p = only(run(&lines, None), Reason::MixedEnvelopes);
            assert_eq!(p.field.as_deref(), Some(field));
            let groups = p.groups.unwrap();
            assert_eq!(groups.len(), 2);
            assert_eq!((groups[0].rows, groups[0].first_line), (2, 1));
            assert_eq!((groups[1].rows, groups[1].first_line), (1, 3));
            assert_eq!(
                p.message,
                format!(
                    "the rows mix 2 envelopes (differing in {field}); different envelopes are \
                     different experiments and are never pooled: [access free_model, server \
                     free_server, timeout 180 s, budget 12000 tokens: 2 rows from line 1] \
                     [{group}: 1 row from line 3]"
                )
            );
        }
        // Numbers are compared by value: 180 and 180.0 are one envelope.
        citation(run(
            &[
                row("a", 1, "pass", &[]),
                row("b", 1, "pass", &[("timeout_s", Some(json!(180.0)))]),
            ],
            None,
        ));
    }

    #[test]
    fn one_task_with_two_hashes_is_a_mixed_envelope() {
        for field in ["prompt_sha256", "hidden_tests_sha256"] {
            let lines = vec![
                row("a", 1, "transport", &[]),
                row("a", 2, "pass", &[(field, Some(json!("ffff")))]),
            ];
            let p = only(run(&lines, None), Reason::MixedEnvelopes);
            assert_eq!((p.field.as_deref(), p.line), (Some(field), Some(2)));
        }
        // Different tasks may have different hashes; hex case does not matter.
        citation(run(
            &[
                row("a", 1, "pass", &[]),
                row("b", 1, "pass", &[("prompt_sha256", Some(json!("ffff")))]),
            ],
            None,
        ));
        citation(run(
            &[
                row("a", 1, "transport", &[]),
                row(
                    "a",
                    2,
                    "pass",
                    &[("prompt_sha256", Some(json!("6D2EC1AA")))],
                ),
            ],
            None,
        ));
    }

    #[test]
    fn attempts_start_at_one_run_without_gaps_and_never_repeat() {
        let dup = vec![row("a", 1, "transport", &[]), row("a", 1, "pass", &[])];
        let p = only(run(&dup, None), Reason::AttemptSequence);
        assert_eq!(p.line, Some(2));
        assert_eq!(p.message, "row 1 (line 2, task \"a\"): attempt 1 appears again (the task's rows start on line 1); each attempt has exactly one row");

        let late = vec![row("a", 2, "pass", &[])];
        let p = only(run(&late, None), Reason::AttemptSequence);
        assert_eq!(
            p.message,
            "row 0 (line 1, task \"a\"): attempts start at 2, not 1"
        );

        let gap = vec![row("a", 1, "transport", &[]), row("a", 3, "pass", &[])];
        let p = only(run(&gap, None), Reason::AttemptSequence);
        assert_eq!(p.message, "row 0 (line 1, task \"a\"): attempt 2 is missing (1 of attempts 1..3 have no row); a dropped attempt is never silently skipped");

        // Rows in any order are fine.
        let c = citation(run(
            &[
                row("a", 2, "pass", &[]),
                row("b", 1, "pass", &[]),
                row("a", 1, "transport", &[]),
            ],
            None,
        ));
        assert_eq!(c.first_complete_pass_rate, 1.0);
        assert_eq!(c.retry_rate, 0.5);
    }

    #[test]
    fn an_unusable_attempt_does_not_also_break_the_sequence() {
        let lines = vec![
            row("a", 1, "pass", &[("attempt", Some(json!("1")))]),
            row("a", 2, "pass", &[]),
        ];
        let r = refusal(run(&lines, None));
        assert_eq!(r.reasons, vec![Reason::InvalidValue]);
    }

    #[test]
    fn no_runs() {
        only(run(&[], None), Reason::NoRuns);
        only(run(&["".into(), "   ".into()], None), Reason::NoRuns);
        let card = card_for(&["a", "b"], json!({}));
        let p = only(
            run(&[row("a", 1, "pass", &[])], Some(&card)),
            Reason::NoRuns,
        );
        assert_eq!((p.task_id, p.card_task), (Some(json!("b")), Some(1)));
        assert_eq!(p.message, "card task 1 (b) has no run");
    }

    #[test]
    fn runs_that_match_their_card_are_citeable_and_name_its_hash() {
        let card = card_for(&["a", "b"], json!({"question": "How many pass?"}));
        let c = citation(run(
            &[row("a", 1, "pass", &[]), row("b", 1, "fail", &[])],
            Some(&card),
        ));
        assert_eq!(
            c.envelope.card_sha256.as_deref(),
            Some(card.sha256.as_str())
        );
        assert_eq!(c.sentence, "On 2 tasks (card sha256 3e17652d9056, access free_model, server free_server, timeout 180 s, budget 12000 tokens): first completed attempt passed on 1 (0.5); retry rate 0.0; truncation rate 0.0. Single envelope; not a product ranking.");
        assert_eq!(c.question.as_deref(), Some("How many pass?"));
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn runs_that_differ_from_their_card() {
        let card = card_for(&["a"], json!({}));
        let p = only(
            run(
                &[row("a", 1, "pass", &[]), row("x", 1, "pass", &[])],
                Some(&card),
            ),
            Reason::EnvelopeMismatch,
        );
        assert_eq!((p.task_id, p.line), (Some(json!("x")), Some(2)));
        assert_eq!(
            p.message,
            "row 1 (line 2, task \"x\"): the task is not on the card"
        );
        for (field, value, card_value) in [
            ("prompt_sha256", json!("ffff"), "6d2ec1aa"),
            ("hidden_tests_sha256", json!("eeee"), "a91b0440"),
            ("timeout_s", json!(120), "180"),
            ("token_budget", json!(9000), "12000"),
        ] {
            // Two rows of the task differ the same way: reported once for the task.
            let lines = vec![
                row("a", 1, "transport", &[(field, Some(value.clone()))]),
                row("a", 2, "pass", &[(field, Some(value.clone()))]),
            ];
            let p = only(run(&lines, Some(&card)), Reason::EnvelopeMismatch);
            assert_eq!((p.field.as_deref(), p.line), (Some(field), Some(1)));
            assert_eq!(
                p.message,
                format!(
                    "row 0 (line 1, task \"a\"): {field} {value} differs from the card's \
                     {card_value} (first such row of this task)",
                    value = value.to_string().trim_matches('"')
                )
            );
        }
        // By value: the card's 180 is the run's 180.0.
        citation(run(
            &[row("a", 1, "pass", &[("timeout_s", Some(json!(180.0)))])],
            Some(&card),
        ));
    }

    #[test]
    fn an_incomplete_card_refuses_the_runs() {
        let card = Card::from_bytes(br#"{"tasks": [{"task_id": "a", "repo_revision": "main"}]}"#);
        let r = refusal(run(&[row("a", 1, "pass", &[])], Some(&card)));
        assert_eq!(r.reason, Reason::EnvelopeMismatch);
        assert_eq!(
            r.reasons,
            vec![Reason::EnvelopeMismatch, Reason::InvalidValue]
        );
        assert!(
            r.missing.iter().all(|p| p.source == "card"),
            "{:#?}",
            r.missing
        );
    }

    #[test]
    fn public_tasks_add_the_generalisation_warning() {
        let card = card_for(&["a"], json!({"public_tasks": true}));
        let c = citation(run(&[row("a", 1, "pass", &[])], Some(&card)));
        assert_eq!(c.warnings.len(), 1);
        assert_eq!(c.sentence, "On 1 task (card sha256 ff2cba97bb9a, access free_model, server free_server, timeout 180 s, budget 12000 tokens): first completed attempt passed on 1 (1.0); retry rate 0.0; truncation rate 0.0. Single envelope; not a product ranking. Public tasks: hidden tests do not detect training leakage, so this rate cannot be cited as generalisation.");
        let card = card_for(&["a"], json!({"public_tasks": false}));
        assert!(citation(run(&[row("a", 1, "pass", &[])], Some(&card)))
            .warnings
            .is_empty());
    }

    #[test]
    fn reason_is_the_first_in_spec_order_and_reasons_lists_all() {
        let lines = vec![
            row("a", 1, "crash", &[]),
            row("b", 2, "pass", &[]),
            row("c", 1, "pass", &[("queue_wait_ms", None)]),
        ];
        let r = refusal(run(&lines, None));
        assert_eq!(r.reason, Reason::IncompleteEnvelope);
        assert_eq!(
            r.reasons,
            vec![
                Reason::IncompleteEnvelope,
                Reason::AttemptSequence,
                Reason::InvalidValue
            ]
        );
        let order: Vec<Reason> = r.missing.iter().map(|p| p.reason).collect();
        assert_eq!(order, r.reasons);
    }

    /// An example: 12 tasks, 9 passed, 2 retried, 1 truncated.
    #[test]
    fn the_metrics_and_the_sentence() {
        let mut lines = Vec::new();
        for i in 0..12 {
            let t = format!("t{i:02}");
            match i {
                // Cold start, then a pass: retried, passed.
                0 => lines.push(row(&t, 1, "pass", &[("cold_start", Some(json!(true)))])),
                // A transport error does not complete; the second attempt is the first completed.
                1 => {
                    lines.push(row(&t, 1, "transport", &[]));
                    lines.push(row(&t, 2, "pass", &[]));
                }
                // Timed out: truncated, not passed.
                2 => lines.push(row(
                    &t,
                    1,
                    "timeout",
                    &[("patch_sha256", Some(json!(EMPTY_PATCH_SHA256)))],
                )),
                3 => lines.push(row(&t, 1, "apply_error", &[])),
                4 => lines.push(row(&t, 1, "fail", &[])),
                _ => lines.push(row(&t, 1, "pass", &[])),
            }
        }
        let c = citation(run(&lines, None));
        assert_eq!(c.n_tasks, 12);
        assert_eq!(
            c.counts,
            Counts {
                passed: 9,
                retried: 2,
                truncated: 1,
                patch_apply_failed: 1,
                rows: 13
            }
        );
        assert_eq!(c.first_complete_pass_rate, 0.75);
        assert_eq!(c.retry_rate, 0.1667);
        assert_eq!(c.truncation_rate, 0.0833);
        assert_eq!(c.patch_apply_fail_rate, 0.0833);
        assert_eq!(
            c.sentence,
            "On 12 tasks (no card, access free_model, server free_server, timeout 180 s, budget 12000 tokens): \
             first completed attempt passed on 9 (0.75); retry rate 0.1667; truncation rate 0.0833. \
             Single envelope; not a product ranking."
        );
        let text = Verdict::Citeable(c).to_text();
        assert!(
            text.contains("patch_apply_fail_rate: 0.0833 (harness loss"),
            "{text}"
        );
    }

    #[test]
    fn a_task_with_no_completed_attempt_counts_as_not_passed() {
        let lines = vec![
            row("a", 1, "transport", &[]),
            row("a", 2, "transport", &[]),
            row("b", 1, "pass", &[]),
        ];
        let c = citation(run(&lines, None));
        assert_eq!((c.first_complete_pass_rate, c.retry_rate), (0.5, 0.5));
    }

    #[test]
    fn a_timeout_is_a_completed_attempt() {
        // The first completed attempt timed out; a later pass does not count.
        let lines = vec![row("a", 1, "timeout", &[]), row("a", 2, "pass", &[])];
        let c = citation(run(&lines, None));
        assert_eq!(
            (c.first_complete_pass_rate, c.truncation_rate, c.retry_rate),
            (0.0, 1.0, 1.0)
        );
    }

    #[test]
    fn truncation_counts_only_the_first_attempt() {
        let lines = vec![row("a", 1, "transport", &[]), row("a", 2, "budget", &[])];
        let c = citation(run(&lines, None));
        assert_eq!(c.truncation_rate, 0.0);
    }

    #[test]
    fn rates_round_as_python_does() {
        // 1 of 32 is an exact binary tie: Python gives 0.0312.
        let mut lines: Vec<String> = (0..32)
            .map(|i| row(&format!("t{i}"), 1, "fail", &[]))
            .collect();
        lines[0] = row("t0", 1, "pass", &[]);
        let c = citation(run(&lines, None));
        assert_eq!(c.first_complete_pass_rate, 0.0312);
        assert_eq!(c.sentence, "On 32 tasks (no card, access free_model, server free_server, timeout 180 s, budget 12000 tokens): first completed attempt passed on 1 (0.0312); retry rate 0.0; truncation rate 0.0. Single envelope; not a product ranking.");
    }

    #[test]
    fn problems_beyond_the_cap_are_counted_not_listed() {
        let lines: Vec<String> = (0..1500)
            .map(|i| row(&format!("t{i}"), 1, "pass", &[("queue_wait_ms", None)]))
            .collect();
        let r = refusal(run(&lines, None));
        assert_eq!(r.missing.len(), MAX_LISTED_PER_REASON);
        assert_eq!(r.omitted, Some(500));
        assert!(Verdict::Refused(r)
            .to_text()
            .contains("and 500 more problems not listed"));
    }

    #[test]
    fn a_json_document_is_told_from_json_lines() {
        let ledger = b"{\n  \"format\": \"campaign-ledger/1\",\n  \"rows\": []\n}\n";
        assert_eq!(
            a_json_document(ledger).as_deref(),
            Some("a ledger document (campaign-ledger/1)")
        );
        let decl = b"\n{\n  \"format\": \"campaign-declaration/1\",\n";
        assert_eq!(
            a_json_document(decl).as_deref(),
            Some("a campaign declaration (campaign-declaration/1)")
        );
        assert_eq!(
            a_json_document(b"[\n1\n]").as_deref(),
            Some("one JSON list written over several lines")
        );
        // JSON Lines, and a runs file whose first line is broken, reach the gate.
        assert_eq!(a_json_document(b"{\"task_id\": \"a\"}\n{}\n"), None);
        assert_eq!(a_json_document(b"not json\n{\n"), None);
        assert_eq!(a_json_document(b""), None);
        let e = cite(
            &ledger[..],
            None,
            Options {
                max_line_bytes: 1 << 20,
            },
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        git_ledger_base::assert_only_reason!(
            e.refusal_reasons(),
            place = [] as [&str; 0],
            field = None,
            sentence = "a ledger document (campaign-ledger/1), not JSON Lines runs: cite reads \
                        JSON Lines runs, one attempt per line (each line one JSON object); nothing \
                        was judged"
        );
    }

    #[test]
    fn many_lines_that_are_not_objects_show_the_first_twenty_and_a_count() {
        let runs = "not an object\n".repeat(300);
        let v = cite(
            runs.as_bytes(),
            None,
            Options {
                max_line_bytes: 1 << 20,
            },
        )
        .unwrap();
        let text = v.to_text_with(false);
        assert_eq!(text.matches("the line is not a JSON object").count(), 20);
        assert!(text.contains(
            "  ... and 280 more lines that are not a JSON object (--verbose lists every line)\n"
        ));
        let all = v.to_text_with(true);
        assert_eq!(all.matches("the line is not a JSON object").count(), 300);
        assert_eq!(
            String::from_utf8(v.to_json())
                .unwrap()
                .matches("not a JSON object")
                .count(),
            300
        );
    }

    #[test]
    fn json_shapes() {
        let v: Value = serde_json::from_slice(&run(&[OK.into()], None).to_json()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "citeable",
            "n_tasks",
            "first_complete_pass_rate",
            "retry_rate",
            "truncation_rate",
            "patch_apply_fail_rate",
            "envelope",
            "sentence",
        ] {
            assert!(keys.contains(&k), "{k} in {keys:?}");
        }
        assert_eq!(v["citeable"], json!(true));
        assert_eq!(v["first_complete_pass_rate"], json!(1.0));
        assert_eq!(v["envelope"]["timeout_s"], json!(180));

        let bytes = run(&[GAP.into()], None).to_json();
        assert!(bytes.ends_with(b"}\n"));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["citeable"], json!(false));
        assert_eq!(v["refused"], json!(true));
        assert_eq!(v["reason"], json!("incomplete_envelope"));
        assert_eq!(v["reasons"], json!(["incomplete_envelope"]));
        assert_eq!(v["missing"][0]["field"], json!("queue_wait_ms"));
        assert_eq!(v["missing"][0]["row"], json!(0));
        assert!(v.get("omitted").is_none());
    }
}
