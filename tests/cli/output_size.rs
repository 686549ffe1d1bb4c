//! Output a person can read at any size (docs/reference/workflow.md, rule 9): `diff` leads with a
//! summary, shows per-field diffs only with `--full` or for at most 20 rows, a field changed the
//! same way in every changed row once; `--json` stays complete.

use crate::common::*;
use crate::gitstore::Fixture;

/// A template ledger file and one with the first `n` rows of a 30-row schedule put by hand.
fn hand_ledgers(f: &Fixture, n: usize) -> (String, String) {
    let template = f.file("template.json");
    let out = f.run(&["template", f.decl().to_str().unwrap()]);
    std::fs::write(&template, &out.ok().stdout).unwrap();
    let filled = f.file(&format!("filled-{n}.json"));
    std::fs::copy(&template, &filled).unwrap();
    let ids: Vec<String> = serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["schedule_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 30);
    for sid in ids.iter().take(n) {
        let row = f.hand_row(sid, "ERROR");
        f.run(&[
            "put",
            sid,
            row.to_str().unwrap(),
            f.decl().to_str().unwrap(),
            filled.to_str().unwrap(),
        ])
        .ok();
    }
    (
        template.to_str().unwrap().to_owned(),
        filled.to_str().unwrap().to_owned(),
    )
}

#[test]
fn diff_of_many_rows_is_a_summary_unless_full() {
    let f = Fixture::new(10);
    let (template, filled) = hand_ledgers(&f, 30);
    let decl = f.decl();
    let decl = decl.to_str().unwrap();
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", "--files", &template, &filled, decl];
        args.extend_from_slice(extra);
        let out = f.run(&args);
        out.ok();
        out.stdout.clone()
    };
    let summary = diff(&[]);
    let lines: Vec<&str> = summary.lines().collect();
    assert!(
        lines[1] == "30 rows differ (live 20, fixture 10)",
        "{summary}"
    );
    assert!(
        lines[2].starts_with("counts (fixture): error +10, not_attempted -10"),
        "{summary}"
    );
    assert!(
        lines[3].starts_with("counts (live): error +20, not_attempted -20"),
        "{summary}"
    );
    assert_eq!(
        lines[4],
        "  arena/sympy-matrix/01          DEFERRED (not attempted) -> ERROR (error)"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains(" -> ERROR (error)"))
            .count(),
        30
    );
    assert!(summary.ends_with(
        "B follows A by 1 admitted step\n\n(per-field diffs of the 30 rows: git ledger diff --full; every line: --json)\n"
    ), "{summary}");
    assert!(!summary.contains("\nrow "), "{summary}");
    assert_eq!(lines.len(), 4 + 30 + 1 + 2);
    // --full: every row's per-field diff.
    let full = diff(&["--full"]);
    assert!(full.starts_with(
        &summary
            .lines()
            .take(35)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    ));
    assert_eq!(full.matches("\nrow ").count(), 30, "{full}");
    assert!(full.contains(
        "\nrow arena/sympy-matrix/01 (live): DEFERRED (not attempted) -> ERROR (error)\n  native_outcome: \"DEFERRED\" -> \"ERROR\"\n  native_status: null -> \"INCOMPLETE\"\n"
    ), "{full}");
    // --json is complete either way: every row with its whole unified diff.
    let json: serde_json::Value = serde_json::from_str(&diff(&["--json"])).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 30);
    assert!(rows
        .iter()
        .all(|r| r["diff"].as_str().unwrap().starts_with("--- a/rows/")));
    crate::schemas::assert_valid("diff", &json, "diff --json of 30 rows");
    // At most 20 rows: the details without --full.
    let (template, twenty) = hand_ledgers(&f, 20);
    let out = f.run(&["diff", "--files", &template, &twenty, decl]);
    out.ok();
    assert!(
        out.stdout.contains("20 rows differ (live 20)\n"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("\nrow ").count(), 20);
    assert!(!out.stdout.contains("diff --full"));
}

#[test]
fn a_field_changed_the_same_way_in_every_row_is_shown_once() {
    let root = project_root();
    let decl = root.join("inspect-example/campaign.json");
    let ledger_file = root.join("inspect-example/ledger.json");
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template.json");
    let t = ledger(&root, &["template", decl.to_str().unwrap()]);
    std::fs::write(&template, &t.ok().stdout).unwrap();
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "diff".to_owned(),
            "--files".to_owned(),
            template.to_str().unwrap().to_owned(),
            ledger_file.to_str().unwrap().to_owned(),
            decl.to_str().unwrap().to_owned(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&'static str]| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = ledger(&root, &a);
        out.ok();
        out.stdout.clone()
    };
    let text = run(&[]);
    let rows = text.matches("\nrow ").count();
    assert!(rows >= 2, "{text}");
    // The dependency freeze: once in the text, once per row in the JSON.
    assert_eq!(text.matches("\"dependencies\": [").count(), 1, "{text}");
    assert!(text.contains(&format!(
        "\nthe same change in all {rows} rows (shown once):\n  runtime_identity:\n"
    )));
    assert_eq!(
        text.matches("  (runtime_identity, actual_models_and_efforts")
            .count(),
        rows,
        "{text}"
    );
    let json = run(&["--json"]);
    assert_eq!(json.matches("\\\"dependencies\\\": [").count(), rows);
    let html = run(&["--format", "html"]);
    assert_eq!(html.matches("&quot;dependencies&quot;: [").count(), 1);
    assert!(html.contains("id=\"shared-fields\""));
    // The same bytes every time.
    assert_eq!(run(&[]), text);
}

#[test]
fn cite_given_a_ledger_says_it_reads_json_lines_runs() {
    let root = project_root();
    let out = ledger(&root, &["cite", "inspect-example/ledger.json"]);
    out.expect_code(2);
    assert_eq!(
        out.stderr,
        "refused (1 reason):\n  inspect-example/ledger.json: a ledger document (campaign-ledger/1), not JSON Lines runs: cite reads JSON Lines runs, one attempt per line (each line one JSON object); nothing was judged\nhint: a ledger's outcomes are read with `git ledger report <DECLARATION> <LEDGER>`\n"
    );
    assert!(out.stdout.is_empty());
    let out = ledger(&root, &["cite", "--json", "inspect-example/ledger.json"]);
    out.expect_code(2);
    assert_eq!(out.json()["refused"], serde_json::json!(true));
    // A runs file is still judged line by line.
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs.jsonl");
    std::fs::write(&runs, "x\n".repeat(50)).unwrap();
    let out = ledger(&root, &["cite", runs.to_str().unwrap()]);
    out.expect_code(2);
    assert!(
        out.stdout.starts_with("not citeable: incomplete_envelope"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  ... and 30 more lines that are not a JSON object"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.lines().count() < 30, "{}", out.stdout);
}
