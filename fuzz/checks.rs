//! What each fuzz target does with its input, shared by the cargo-fuzz targets in
//! `fuzz/fuzz_targets/` and by the regression test `tests/cli/fuzz_regressions.rs`, which feeds
//! every committed corpus file through the same functions (so CI needs no fuzzer).
//!
//! Each function takes arbitrary bytes. It must return normally for every input: a panic here
//! is a finding (a panic in the library, or a broken property asserted below). It returns its
//! verdict, one line saying what the library decided (see `verdict.rs`); the fuzz targets drop
//! it, the regression test compares it with the committed one.
#![allow(dead_code)]

#[path = "verdict.rs"]
pub mod verdict;

use git_ledger::admission::{self, RowChange};
use git_ledger::cite::{self, Card, Options};
use git_ledger::declaration::{self, Declaration, Mode};
use git_ledger::import::options::{DeclaredProfile, RoleSpec};
use git_ledger::import::scenario;
use git_ledger::json::{self, DEFAULT_MAX_INPUT_BYTES};
use git_ledger::ledger::{Ledger, Row};
use git_ledger::report;
use verdict::{count, line, Refusal};

/// The embedded campaign: the fixed declaration the ledger and row targets check against.
pub const CAMPAIGN: &[u8] = include_bytes!("../arena/campaign.json");

/// A small dataset card (the shape of `cite.md`'s example) for the cite target.
pub const CARD: &[u8] = br#"{"tasks": [{"task_id": "calc-parse-017", "repo_revision": "9f3c1ab", "prompt_sha256": "6d2ec1aa", "hidden_tests_sha256": "a91b0440", "allowed_files": ["src/parse.py"], "timeout_s": 180, "token_budget": 12000}]}"#;

/// The embedded campaign, parsed (it is valid: a failure here is a broken build, not a finding).
pub fn campaign() -> Declaration {
    Declaration::parse(CAMPAIGN, DEFAULT_MAX_INPUT_BYTES).expect("the embedded campaign parses")
}

/// Bytes → `Declaration::parse` in both modes; what parses must be self-consistent.
/// Verdict: `declaration: <admitted (<t> tasks, <n> rows) or refusal>; draft: <same>`.
pub fn declaration(data: &[u8]) -> String {
    let mut verdicts = Vec::new();
    for mode in [Mode::Declaration, Mode::Draft] {
        let name = match mode {
            Mode::Declaration => "declaration",
            Mode::Draft => "draft",
        };
        // The fast paths (`declaration/fast.rs`) only say yes: the ordinary path alone gives
        // the same verdict, and what both accept is the same declaration.
        let parsed = Declaration::parse_mode(data, mode, DEFAULT_MAX_INPUT_BYTES);
        let ordinary = Declaration::parse_ordinary(data, mode, DEFAULT_MAX_INPUT_BYTES);
        match (&parsed, &ordinary) {
            (Ok(a), Ok(b)) => assert_eq!(
                format!("{a:?}"),
                format!("{b:?}"),
                "the fast and ordinary paths read another declaration"
            ),
            (Err(a), Err(b)) => assert_eq!(a.verdict(), b.verdict()),
            _ => panic!(
                "fast and ordinary declaration parse disagree: {} / {}",
                parsed.is_ok(),
                ordinary.is_ok()
            ),
        }
        let d = match parsed {
            Ok(d) => d,
            Err(e) => {
                verdicts.push(format!("{name}: {}", e.verdict()));
                continue;
            }
        };
        // The schedule is exactly tasks × repetitions, in task then repetition order.
        assert!((1..=999).contains(&d.repetitions));
        assert_eq!(d.schedule_len(), d.tasks.len() * d.repetitions as usize);
        assert_eq!(
            d.schedule().collect::<Vec<_>>(),
            declaration::expected_schedule(d.tasks.ids(), d.repetitions)
        );
        assert_eq!(d.bytes(), Some(data));
        assert_eq!(d.sha256, git_ledger::sha256_hex(data));
        // The fast paths only say yes: an accepted declaration is strict JSON whose `schedule`
        // is exactly the one computed (or, for a draft, absent).
        let v = json::parse_strict(data).expect("an accepted declaration is strict JSON");
        let computed: Vec<serde_json::Value> = d
            .schedule()
            .map(|e| serde_json::json!({"id": e.id, "task": e.task, "repetition": e.repetition}))
            .collect();
        match mode {
            Mode::Declaration => assert_eq!(v.get("schedule"), Some(&computed.into())),
            Mode::Draft => assert_eq!(v.get("schedule"), None),
        }
        assert!(declaration::is_valid_id(&d.id));
        let _ = d.short_hash();
        for (i, e) in d.schedule().enumerate() {
            assert_eq!(d.schedule_position(&e.id), Some(i));
            assert_eq!(
                d.task_of(&e.id).map(|t| t.id.as_str()),
                Some(e.task.as_str())
            );
        }
        for t in &d.tasks {
            assert!(declaration::is_repo_path(&t.definition.path));
            assert!(!t.native_outcomes.iter().any(|o| o == "DEFERRED"));
        }
        if mode == Mode::Declaration {
            assert!(d.source_revision.is_some());
            // Its template ledger is a valid ledger of it, and a stable one.
            let template = Ledger::template(&d);
            let bytes = template.canonical(&d);
            let again = Ledger::parse(&d, &bytes, u64::MAX).expect("the template ledger parses");
            assert_eq!(again, template);
            assert_eq!(again.canonical(&d), bytes);
            render(&d, &template);
        }
        verdicts.push(format!(
            "{name}: admitted ({}, {})",
            count(d.tasks.len(), "task"),
            count(d.schedule_len(), "row")
        ));
    }
    verdicts.join("; ")
}

/// Bytes as the ledger of the embedded campaign → `Ledger::parse`; an admitted ledger renders
/// without panicking and its canonical bytes re-parse to an equal ledger.
/// Verdict: `admitted (<n> rows, <f> filled)` or the refusal.
pub fn ledger(decl: &Declaration, data: &[u8]) -> String {
    // A ledger is also a JSON document for the hand parser its rows go through (its verdict is
    // the node_parser target's).
    let _ = node_parser(data);
    // The fast path only says yes: whatever `parse` accepts, the ordinary path (a `Value`
    // document, every row checked as a `Map`) accepts too, as the same ledger; and so does the
    // report's path (rows checked as borrowed nodes), giving the same report.
    let ordinary = json::parse_document(data, "ledger", DEFAULT_MAX_INPUT_BYTES)
        .and_then(|v| Ledger::from_owned_value(decl, v));
    let parsed = Ledger::parse(decl, data, DEFAULT_MAX_INPUT_BYTES);
    match (&parsed, &ordinary) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!("fast and ordinary parse disagree: {parsed:?} / {ordinary:?}"),
    }
    let summarised = Ledger::parse_kept(
        decl,
        data,
        DEFAULT_MAX_INPUT_BYTES,
        &report::Summarise::new(),
    )
    .map(|rows| {
        report_json(&report::build_from(
            decl,
            rows,
            report::LedgerState::file(git_ledger::sha256_hex(data)),
        ))
    });
    let ledger = match parsed {
        Ok(ledger) => ledger,
        Err(e) => {
            assert!(
                summarised.is_err(),
                "the report's path accepted a refused ledger"
            );
            return e.verdict();
        }
    };
    let whole = report_json(&report::build(
        decl,
        &ledger,
        report::LedgerState::file(git_ledger::sha256_hex(data)),
    ));
    assert_eq!(
        summarised.expect("the report's path accepts a ledger parse accepts"),
        whole
    );
    assert_eq!(ledger.rows.len(), decl.schedule_len());
    for (row, entry) in ledger.rows.iter().zip(decl.schedule()) {
        assert_eq!(row.schedule_id(), entry.id);
        // A checked row checks again.
        let again = Row::check(decl, &row.to_value(), "again").expect("a checked row re-checks");
        assert_eq!(&again, row);
    }
    render(decl, &ledger);
    let bytes = ledger.canonical(decl);
    let again = Ledger::parse(decl, &bytes, u64::MAX).expect("canonical bytes re-parse");
    assert_eq!(again, ledger);
    assert_eq!(again.canonical(decl), bytes);
    let filled = ledger.rows.iter().filter(|r| !r.is_deferred()).count();
    format!(
        "admitted ({}, {filled} filled)",
        count(ledger.rows.len(), "row")
    )
}

/// Bytes, where they are UTF-8, → the hand parser of the fast path's rows
/// (`json::NodeParser`) and serde_json with `NodeSeed` (`json::stream_node_prefix`, as the fast
/// path read rows before), at the top of a document and at a row's depth. The hand parser only
/// ever says yes: whatever it reads, serde_json reads too, as the same value down to the bits
/// of each number (`Debug` tells `-0.0` from `0.0` and `1` from `1.0`), ending at the same byte.
/// Verdict, per depth: `read <kind>, <len> of <total> bytes`, or `gave up` and what serde_json
/// then decides (`serde_json reads …` or `serde_json refuses: …`); `not UTF-8`.
pub fn node_parser(data: &[u8]) -> String {
    let Ok(text) = std::str::from_utf8(data) else {
        return "not UTF-8".to_owned();
    };
    // One parser, as a share uses it: each value given back before the next is read. The same
    // text three times at a depth (from the third, a container member that repeats is the
    // second's value, not read again), then at the other depth, and back.
    let depths = [0, 0, 0, 2, 2, 2, 0, 2];
    let mut parser = json::NodeParser::new();
    let mut verdicts = Vec::new();
    for depth in depths {
        let Some((node, len)) = parser.parse(text, depth) else {
            verdicts.push(match json::stream_node_prefix(text, depth) {
                Ok((want, want_len)) => format!(
                    "depth {depth}: gave up; serde_json reads {}, {want_len} of {} bytes",
                    kind(&want),
                    text.len()
                ),
                Err(e) => format!(
                    "depth {depth}: gave up; serde_json refuses: {}",
                    line(&e.to_string())
                ),
            });
            continue;
        };
        let (want, want_len) = json::stream_node_prefix(text, depth)
            .unwrap_or_else(|e| panic!("the hand parser read what serde_json refuses: {e}"));
        assert_eq!(format!("{node:?}"), format!("{want:?}"), "at depth {depth}");
        assert_eq!(len, want_len, "at depth {depth}");
        verdicts.push(format!(
            "depth {depth}: read {}, {len} of {} bytes",
            kind(&node),
            text.len()
        ));
        parser.recycle(node);
    }
    let values = values_in_a_row(text);
    // Each depth's first verdict; the rest are shown only where the reused parser decided
    // otherwise.
    let first = |d| &verdicts[depths.iter().position(|&e| e == d).expect("both depths")];
    if !(depths.iter().zip(&verdicts)).all(|(&d, v)| v == first(d)) {
        verdicts.push(values);
        return verdicts.join("; ");
    }
    format!("{}; {}; {values}", first(0), first(2))
}

/// The values of `text` one after another (each after the last one's end, whitespace and an
/// optional `,`), read by one parser at a row's depth as a share reads rows: a container
/// member of one may repeat the text of the one before it, or differ from it anywhere, and
/// each must still be serde_json's value. Verdict: how many were read before the parser gave
/// up or the text ended.
fn values_in_a_row(text: &str) -> String {
    let mut parser = json::NodeParser::new();
    let (mut at, mut values) = (0, 0);
    while at < text.len() {
        let rest = &text[at..];
        let Some((node, len)) = parser.parse(rest, 2) else {
            break;
        };
        let (want, want_len) = json::stream_node_prefix(rest, 2).unwrap_or_else(|e| {
            panic!("value {values}: the hand parser read what serde_json refuses: {e}")
        });
        assert_eq!(format!("{node:?}"), format!("{want:?}"), "value {values}");
        assert_eq!(len, want_len, "value {values}");
        parser.recycle(node);
        values += 1;
        at = json::skip_ws(text.as_bytes(), at + len);
        if text.as_bytes().get(at) == Some(&b',') {
            at = json::skip_ws(text.as_bytes(), at + 1);
        }
    }
    format!("{values} in a row")
}

/// A JSON value's kind, for a verdict.
fn kind(node: &json::Node<'_>) -> &'static str {
    match node {
        json::Node::Null => "null",
        json::Node::Bool(_) => "a boolean",
        json::Node::Number(_) => "a number",
        json::Node::String(_) => "a string",
        json::Node::Array(_) => "an array",
        json::Node::Object(_) => "an object",
        json::Node::Shared(_, n) => kind(n),
    }
}

/// A report's JSON bytes.
fn report_json(r: &report::Report) -> Vec<u8> {
    let mut out = Vec::new();
    report::write_json(r, &mut out).expect("writing to memory");
    out
}

/// The report of a checked ledger, as JSON (which must be strict JSON) and as text.
fn render(decl: &Declaration, ledger: &Ledger) {
    let r = report::build(decl, ledger, report::LedgerState::file("0".repeat(64)));
    let mut out = Vec::new();
    report::write_json(&r, &mut out).expect("writing to memory");
    json::parse_strict(&out).expect("the report is strict JSON");
    let mut text = Vec::new();
    git_ledger::render::text::write_text(&r, &mut text).expect("writing to memory");
}

/// Bytes as a scenario `result.json` → the record parser and every accessor import uses.
/// Verdict: `parsed (<task id>, verdict <v>); evidence <class or refusal>; reason <checked or
/// refusal>; <n> option deviations`, or the parser's refusal (import refuses a parsed record
/// whose evidence or reason is refused).
pub fn scenario_record(decl: &Declaration, data: &[u8]) -> String {
    let rec = match scenario::parse_bytes(data.to_vec(), "result.json", DEFAULT_MAX_INPUT_BYTES) {
        Ok(rec) => rec,
        Err(e) => return e.verdict(),
    };
    assert_eq!(rec.bytes, data);
    assert_eq!(rec.sha256, git_ledger::sha256_hex(data));
    assert!(!rec.run_id.is_empty());
    let task = rec.task_id();
    let evidence = match rec.evidence() {
        Ok(e) => e.as_str().to_owned(),
        Err(e) => e.verdict(),
    };
    let _ = rec.source_revision();
    let reason = match rec.check_reason() {
        Ok(()) => "checked".to_owned(),
        Err(e) => e.verdict(),
    };
    let _ = rec.decisions();
    let _ = rec.evidence_refs(None);
    for v in [
        rec.oracle_checks_value(),
        rec.spent_budget(),
        rec.estimated_usd(),
        rec.usage(),
        rec.elapsed_seconds_value(),
        rec.native_record(),
    ] {
        // What import copies into a row is JSON the strict parser reads back.
        let bytes = json::canonical(&v);
        json::parse_strict(&bytes).expect("a derived value is strict JSON");
    }
    let p = &decl.profile;
    let declared = DeclaredProfile {
        provider: p.provider.clone().unwrap_or_default(),
        joint_planning: p.joint_planning,
        roles: p
            .roles
            .iter()
            .map(|(k, r)| {
                (
                    k.clone(),
                    RoleSpec {
                        model: r.model.clone(),
                        effort: r.effort.clone().unwrap_or_default(),
                    },
                )
            })
            .collect(),
        extra_options: p.extra_options.clone(),
    };
    let deviations = rec.options(&declared).option_deviations.len();
    let _ = rec.options(&DeclaredProfile::default());
    format!(
        "parsed ({}, verdict {}); evidence {evidence}; reason {reason}; {}",
        line(&task),
        line(&rec.verdict),
        count(deviations, "option deviation")
    )
}

/// Bytes as a runs file (JSON Lines) → the cite gate, without a card and with one (and a small
/// line bound, so over-long lines are reached); the same bytes as a card.
/// Verdict: `runs: <v>; runs with card: <v>; as card: <v>`, each `citeable (<n> tasks)` or
/// `not citeable: <first reason> (<every reason>): <first problem>`.
pub fn cite_line(data: &[u8]) -> String {
    let card = Card::from_bytes(CARD);
    let mut verdicts = Vec::new();
    for (name, card, max) in [
        ("runs", None, 1 << 20),
        ("runs with card", Some(&card), 200),
    ] {
        let verdict = cite::cite(
            data,
            card,
            Options {
                max_line_bytes: max,
            },
        )
        .expect("reading from memory cannot fail");
        let bytes = verdict.to_json();
        json::parse_strict(&bytes).expect("the verdict is strict JSON");
        let _ = verdict.to_text();
        let _ = verdict.exit_code();
        verdicts.push(format!("{name}: {}", cite_verdict(&verdict)));
    }
    let as_card = Card::from_bytes(data);
    let verdict = cite::cite(
        &br"{}"[..],
        Some(&as_card),
        Options {
            max_line_bytes: 1 << 20,
        },
    )
    .expect("reading from memory cannot fail");
    json::parse_strict(&verdict.to_json()).expect("the verdict is strict JSON");
    let _ = verdict.to_text();
    verdicts.push(format!("as card: {}", cite_verdict(&verdict)));
    verdicts.join("; ")
}

/// One cite verdict, for a verdict line.
fn cite_verdict(v: &cite::Verdict) -> String {
    match v {
        cite::Verdict::Citeable(c) => format!("citeable ({})", count(c.n_tasks as usize, "task")),
        cite::Verdict::Refused(r) => {
            let codes: Vec<&str> = r.reasons.iter().map(|r| r.code()).collect();
            let first = r
                .missing
                .first()
                .map(|p| format!(": {}", line(&p.message)))
                .unwrap_or_default();
            format!(
                "not citeable: {} ({}){first}",
                r.reason.code(),
                codes.join(", ")
            )
        }
    }
}

/// Bytes split at the first NUL into a parent and a child row of the embedded campaign; both
/// must pass `Row::check`, then `admission::row_transition` decides, and what it admits obeys
/// the transition rules of `docs/reference/layout.md`.
/// Verdict: `admitted: filled`, `admitted: repaired (<n> repairs)` or the transition's refusal;
/// before it, `parent: <refusal>` or `child: <refusal>` (as JSON or as a row), `no NUL`.
pub fn row_transition(decl: &Declaration, data: &[u8]) -> String {
    let Some(nul) = data.iter().position(|&b| b == 0) else {
        return "no NUL: not a parent and a child".to_owned();
    };
    let (a, b) = (&data[..nul], &data[nul + 1..]);
    let pv = match json::parse_strict(a) {
        Ok(v) => v,
        Err(e) => return format!("parent: {}", e.verdict()),
    };
    let cv = match json::parse_strict(b) {
        Ok(v) => v,
        Err(e) => return format!("child: {}", e.verdict()),
    };
    let parent = match Row::check(decl, &pv, "parent") {
        Ok(r) => r,
        Err(e) => return format!("parent: {}", e.verdict()),
    };
    let child = match Row::check(decl, &cv, "child") {
        Ok(r) => r,
        Err(e) => return format!("child: {}", e.verdict()),
    };
    match admission::row_transition(decl, &parent, &child, "fuzz") {
        Ok(RowChange::Filled) => {
            assert!(parent.is_deferred(), "only a DEFERRED row is filled");
            assert!(!child.is_deferred(), "a filled row holds an attempt");
            assert!(
                child.native_record().is_some(),
                "a filled row names its record"
            );
            assert_eq!(parent.schedule_id(), child.schedule_id());
            "admitted: filled".to_owned()
        }
        Ok(RowChange::Repaired(n)) => {
            assert!(n > 0);
            assert!(!parent.is_deferred(), "only a filled row is repaired");
            for f in &decl.attempt_fields {
                if f != "interventions_decision_or_repair" {
                    assert!(
                        json::value_eq(parent.get(f), child.get(f)),
                        "a repair changed {f}"
                    );
                }
            }
            let before = parent.interventions().count();
            let after: Vec<_> = child.interventions().collect();
            assert_eq!(after.len(), before + n);
            assert!(parent.interventions().zip(&after).all(|(a, b)| a == *b));
            assert!(after[before..].iter().all(|(k, _)| *k == "repair"));
            format!("admitted: repaired ({})", count(n, "repair"))
        }
        Err(reasons) => {
            assert!(!reasons.is_empty());
            reasons.verdict()
        }
    }
}

/// The member bound of the `eval_container` target (its `--max-input-bytes`): 1 MiB, so the
/// corpus's attacks (16 entries sharing a member, members that add up past the import's bound)
/// stay small files.
pub const EVAL_MEMBER_BYTES: u64 = 1 << 20;

/// Bytes → the `.eval` container reader (`import::inspect::zip`) and the log reader over it.
/// The archive is opened; every entry is read under one import's budget (members of at most
/// [`EVAL_MEMBER_BYTES`], 4 × that in all, as `import` reads them); then the same bytes are read
/// as a log (`read_eval`). What is read must be what the central directory records, and never
/// more in all than the budget.
/// Verdict: `open: <refusal>`, or `<n> entries: read <k> (<bytes> bytes)[, refused <m>: <first>];
/// log: <k samples or refusal>`.
pub fn eval_container(data: &[u8]) -> String {
    use git_ledger::import::inspect::{self, zip};
    let a = match zip::Archive::open(data) {
        Ok(a) => a,
        Err(e) => return format!("open: {}", e.verdict()),
    };
    let mut budget = inspect::import_budget(EVAL_MEMBER_BYTES);
    let total = budget.left();
    let (mut read, mut bytes, mut refused) = (0usize, 0u64, Vec::new());
    for i in 0..a.entries.len() {
        match a.read_within(i, EVAL_MEMBER_BYTES, &mut budget) {
            Ok(out) => {
                read += 1;
                bytes += out.len() as u64;
                assert!(out.len() as u64 <= EVAL_MEMBER_BYTES);
            }
            Err(e) => refused.push(e.to_string()),
        }
        assert!(bytes <= total && total - budget.left() >= bytes);
    }
    let n = a.entries.len();
    let mut v = format!(
        "{n} entr{}: read {read} ({bytes} bytes)",
        if n == 1 { "y" } else { "ies" }
    );
    if !refused.is_empty() {
        v.push_str(&format!(", {}", refused.verdict()));
    }
    let log = match inspect::read_eval(std::path::Path::new("log.eval"), data, EVAL_MEMBER_BYTES) {
        Ok(log) => {
            assert!(log.samples.len() <= a.entries.len());
            let held: u64 = log.samples.iter().map(|s| s.bytes.len() as u64).sum();
            assert!(held <= total);
            count(log.samples.len(), "sample")
        }
        Err(e) => e.verdict(),
    };
    format!("{v}; log: {log}")
}
