//! `report --format markdown|html` with the real binary on the embedded campaign: a ledger with
//! a mix of outcomes built from its template, the Markdown summary, and the HTML page rendered
//! in headless Chromium (screenshot and DOM checked against `--json`).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ledger, pin_env, project_root, require_tool, write};

const DECL: &str = "arena/campaign.json";

/// The embedded campaign's ledger with a mix of outcomes: in the live section verified
/// deliveries (one after a repair), a pass without complete evidence, a false completion, a
/// stop, a failure, an error, a skip, an ungraded run and DEFERRED rows (blocked); in the
/// fixture section two verified deliveries (not blocked, so it has its sentence).
pub fn mixed_ledger() -> Value {
    let root = project_root();
    let decl: Value = serde_json::from_slice(&std::fs::read(root.join(DECL)).unwrap()).unwrap();
    let r = ledger(&root, &["template", DECL]);
    r.ok();
    let mut doc = r.json();
    let tasks: Vec<Value> = decl["tasks"].as_array().unwrap().clone();
    let task = |id: &str| tasks.iter().find(|t| t["id"] == id).unwrap().clone();
    let mut runtime = decl["runtime_requirements"].clone();
    let deps: Vec<String> = runtime["packages"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(n, v)| format!("{n}=={}", v.as_str().unwrap()))
        .collect();
    runtime["dependencies"] = json!(deps);
    let roles: serde_json::Map<String, Value> = decl["profile"]["roles"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(n, r)| {
            (
                n.clone(),
                json!({"model": r["model"], "effort": r["effort"]}),
            )
        })
        .collect();
    let models = json!({"provider": decl["profile"]["provider"], "roles": roles});

    let rows = doc["rows"].as_array_mut().unwrap();
    for (i, row) in rows.iter_mut().enumerate() {
        let sid = row["schedule_id"].as_str().unwrap().to_owned();
        let t = task(row["task_id"].as_str().unwrap());
        let arena = t["kind"] == "arena";
        let plan: Option<(&str, Option<&str>)> = match sid.as_str() {
            "arena/sympy-matrix-derivatives/01" => Some(("PASS", None)),
            "arena/sympy-matrix-derivatives/02" => Some(("PASS", Some("repair"))),
            "arena/networkx-shortest-path-weights/01" => Some(("PASS", Some("decision"))),
            "arena/networkx-shortest-path-weights/02" => Some(("FAIL", None)),
            "arena/astropy-units-roundtrip/01" => Some(("STOPPED", None)),
            "arena/astropy-units-roundtrip/02" => Some(("ERROR", None)),
            "scenario/bugfix-iso-weeks/01" => Some(("PASS", None)),
            "scenario/bugfix-iso-weeks/02" => Some(("FALSE_COMPLETE", None)),
            "scenario/feature-csv-export/01" => Some(("PASS", Some("no-runtime"))),
            "scenario/feature-csv-export/02" => Some(("PASS", None)),
            "scenario/greenfield-rate-limiter/01" => Some(("RUNNING", None)),
            "scenario/greenfield-rate-limiter/02" => Some(("SKIPPED", None)),
            s if s.starts_with("scenario/interrupted-verification-reuse/") => Some(("PASS", None)),
            _ => None,
        };
        let Some((outcome, twist)) = plan else {
            continue;
        };
        let status = match (outcome, arena) {
            ("PASS", true) => "COMPLETED",
            ("PASS", false) => "COMPLETE",
            ("STOPPED", _) => "STOPPED",
            ("RUNNING", _) => "RUNNING",
            (_, true) => "FAILED",
            (_, false) => "INCOMPLETE",
        };
        row["native_outcome"] = json!(outcome);
        row["native_status"] = json!(status);
        row["reason"] = if outcome == "PASS" {
            Value::Null
        } else {
            json!(match outcome {
                "FAIL" => "hidden test test_negative_weight_rejected failed after 3 iterations",
                "STOPPED" => "the agent stopped: <units> spec is ambiguous | asked for a decision",
                "ERROR" => "the provider returned HTTP 529 (overloaded) twice",
                "FALSE_COMPLETE" => "claimed done; the oracle found week 53 still wrong",
                "SKIPPED" => "never reached: the campaign's budget window closed",
                _ => "still running when the ledger was read",
            })
        };
        row["source_revision"] = decl["source_revision"].clone();
        if twist != Some("no-runtime") {
            row["runtime_identity"] = runtime.clone();
        }
        if t["evidence"] == "live" {
            row["actual_models_and_efforts"] = models.clone();
        }
        if outcome == "PASS" {
            row["oracle_checks"] = if arena {
                json!(t["upstream"]["checks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| json!({"name": c, "ok": true}))
                    .collect::<Vec<_>>())
            } else {
                json!([{"name": "oracle/acceptance", "ok": true}])
            };
        }
        if outcome != "RUNNING" {
            row["evidence_refs"] = json!([format!("runs/{sid}/transcript.jsonl")]);
            row["elapsed_seconds"] = json!(600 + 37 * i);
            row["estimated_usd"] = json!(0.75 + 0.25 * i as f64);
            let limits = t["limits"].as_object().unwrap();
            let spent: serde_json::Map<String, Value> = limits
                .iter()
                .map(|(n, l)| (n.clone(), json!(l.as_u64().unwrap() / 2)))
                .collect();
            row["spent_budget"] = json!(spent);
            row["usage"] = json!({"input_tokens": 120000 + i, "output_tokens": 9000 + i});
        }
        match twist {
            Some("repair") => {
                row["interventions_decision_or_repair"] =
                    json!([{"kind": "repair", "note": "fixed an import the agent broke"}])
            }
            Some("decision") => {
                row["interventions_decision_or_repair"] =
                    json!([{"kind": "decision", "note": "approved the plan"}])
            }
            _ => {}
        }
        row["native_record"] = json!({
            "kind": t["kind"],
            "id": format!("run-{i:02}"),
            "sha256": format!("{:064x}", i + 1),
        });
    }
    doc
}

/// A temporary directory holding the mixed ledger as `ledger.json`.
fn mixed_ledger_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = serde_json::to_vec_pretty(&mixed_ledger()).unwrap();
    bytes.push(b'\n');
    write(dir.path(), "ledger.json", bytes);
    let path = dir.path().join("ledger.json");
    (dir, path)
}

fn report(ledger_path: &Path, format: &str) -> String {
    let r = ledger(
        &project_root(),
        &[
            "report",
            "--format",
            format,
            DECL,
            ledger_path.to_str().unwrap(),
        ],
    );
    r.ok();
    r.stdout.clone()
}

#[test]
fn mixed_ledger_passes_the_row_checks_and_lands_everywhere() {
    let (_d, path) = mixed_ledger_file();
    let v: Value = serde_json::from_str(&report(&path, "json")).unwrap();
    let live = &v["sections"]["live"]["outcomes"];
    let count = |k: &str| live[k]["count"].as_u64().unwrap();
    assert_eq!(count("verified_delivery"), 4);
    assert_eq!(count("verified_after_repair"), 1);
    assert_eq!(count("pass_without_complete_evidence"), 1);
    assert_eq!(count("false_completion"), 1);
    assert_eq!(count("stopped_unestablished"), 1);
    assert_eq!(count("ended_without_completing"), 1);
    assert_eq!(count("error"), 1);
    assert_eq!(count("skipped"), 1);
    assert_eq!(count("ungraded"), 1);
    assert_eq!(count("not_attempted"), 12);
    assert_eq!(v["sections"]["live"]["comparison"]["blocked"], true);
    assert_eq!(v["sections"]["fixture"]["comparison"]["blocked"], false);
    assert_eq!(
        v["sections"]["fixture"]["outcomes"]["verified_delivery"]["count"],
        2
    );
}

#[test]
fn json_flag_is_format_json_and_conflicts_with_format() {
    let (_d, path) = mixed_ledger_file();
    let p = path.to_str().unwrap();
    let root = project_root();
    let a = ledger(&root, &["report", "--json", DECL, p]);
    a.ok();
    assert_eq!(a.stdout, report(&path, "json"));
    let r = ledger(&root, &["report", "--json", "--format", "html", DECL, p]);
    r.expect_code(64);
    assert!(r.stderr.contains("cannot be used with"), "{}", r.stderr);
    // Text stays the default, and never carries colour when not on a terminal.
    let t = ledger(&root, &["report", DECL, p]);
    t.ok();
    assert!(t.stdout.starts_with("Campaign reliability-634-slice-1"));
    assert!(!t.stdout.contains('\x1b'));
}

#[test]
fn markdown_summary() {
    let (_d, path) = mixed_ledger_file();
    let md = report(&path, "markdown");
    assert_eq!(md, report(&path, "markdown"), "deterministic");
    assert!(md.starts_with("## Ledger report: `reliability-634-slice-1`\n"));
    assert!(
        md.contains(
            "### Live section: 24 scheduled, 12 attempted; comparison **blocked** (14 rows, 14 reasons)\n"
        ),
        "{md}"
    );
    assert!(md.contains("### Fixture section: 2 scheduled, 2 attempted; comparison not blocked\n"));
    assert!(md.contains("| Verified delivery | 4 | `arena/sympy-matrix-derivatives/01`, `arena/networkx-shortest-path-weights/01`, `scenario/bugfix-iso-weeks/01`, `scenario/feature-csv-export/02` |\n"));
    assert!(md.contains(
        "| Verified delivery after a human repair | 1 | `arena/sympy-matrix-derivatives/02` |\n"
    ));
    assert!(md.contains("| not attempted | 12 |"));
    assert!(md.contains("| ungraded | 1 | `scenario/greenfield-rate-limiter/01` |\n"));
    assert!(md.contains("| runtime not recorded | 1 | `scenario/feature-csv-export/01` |\n"));
    assert!(md.contains("- Decisions: 1 in 1 row (`arena/networkx-shortest-path-weights/01`); repairs: 1 in 1 row (`arena/sympy-matrix-derivatives/02`)\n"));
    // Only the unblocked fixture section has a sentence, escaped for Markdown.
    let quotes: Vec<&str> = md.lines().filter(|l| l.starts_with("> ")).collect();
    assert_eq!(quotes.len(), 1);
    assert!(quotes[0].starts_with("> In the fixture section of campaign reliability-634-slice-1"));
    assert!(md.contains("<details><summary>All 26 rows</summary>"));
    // The hidden check names carry `_` and `::`: escaped in the rows table, never emphasis.
    assert!(!md.contains("test_"), "unescaped underscores");
}

#[test]
fn html_page_is_deterministic_and_self_contained() {
    let (_d, path) = mixed_ledger_file();
    let html = report(&path, "html");
    assert_eq!(html, report(&path, "html"));
    let lower = html.to_lowercase();
    for banned in ["<script", "<link", "@import", "url(", " src=", "https://"] {
        assert!(!lower.contains(banned), "{banned} in the page");
    }
    assert!(html
        .contains("<blockquote class=\"sentence\" id=\"fixture-sentence\">In the fixture section"));
}

/// The first of these found on PATH.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| crate::common::which(n))
}

/// The DOM headless Chromium builds for `url`. A loaded machine sometimes makes Chromium exit
/// before it prints the document; that is retried (fresh profile each time) a few times.
fn dump_dom(browser: &Path, url: &str) -> String {
    let mut last = String::new();
    for _ in 0..4 {
        let profile = tempfile::tempdir().unwrap();
        last = run_chromium(browser, profile.path(), &["--dump-dom"], url);
        if last.contains("</body>") {
            return last;
        }
    }
    panic!("chromium printed no document for {url} in 4 tries; last output:\n{last}");
}

/// A screenshot of `url` at `shot`, retried like [`dump_dom`] when Chromium wrote none.
fn screenshot(browser: &Path, url: &str, shot: &Path) {
    for _ in 0..4 {
        let profile = tempfile::tempdir().unwrap();
        let arg = format!("--screenshot={}", shot.display());
        run_chromium(browser, profile.path(), &[&arg], url);
        if std::fs::metadata(shot).is_ok_and(|m| m.len() > 0) {
            return;
        }
    }
    panic!("chromium wrote no screenshot of {url} in 4 tries");
}

/// Run headless Chromium on `url` with `extra` arguments; stdout, with a time limit.
fn run_chromium(browser: &Path, profile: &Path, extra: &[&str], url: &str) -> String {
    let mut cmd = Command::new(browser);
    pin_env(&mut cmd)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--window-size=1280,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn chromium");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let started = Instant::now();
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => {
            let out = out.expect("chromium output");
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
        Err(_) => {
            let _ = Command::new("kill").arg(id.to_string()).status();
            panic!("chromium did not finish in {:?}", started.elapsed());
        }
    }
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// The HTML report rendered by a real browser: it loads from a file with no network, the
/// screenshot is a real picture, and the DOM the browser built carries every count of the
/// JSON report. With `UPDATE_SCREENSHOT=1`, also writes `docs/report.png` (shown in docs/guide/05-report.md).
#[test]
fn html_report_in_headless_chromium() {
    let Some(browser) = chromium() else {
        require_tool("chromium", "the HTML report's browser test");
        return;
    };
    let (dir, path) = mixed_ledger_file();
    let html_path = dir.path().join("report.html");
    std::fs::write(&html_path, report(&path, "html")).unwrap();
    let url = format!("file://{}", html_path.display());
    let json: Value = serde_json::from_str(&report(&path, "json")).unwrap();

    let dom = dump_dom(&browser, &url);
    assert!(
        dom.contains(
            "<h1>Ledger report: <code id=\"declaration-id\">reliability-634-slice-1</code></h1>"
        ),
        "DOM:\n{dom}"
    );
    for (name, section) in json["sections"].as_object().unwrap() {
        let scheduled = section["scheduled"].as_u64().unwrap();
        let blocked = section["comparison"]["blocked"].as_bool().unwrap();
        assert!(
            dom.contains(&format!("<section id=\"section-{name}\" data-section=\"{name}\" data-scheduled=\"{scheduled}\"")),
            "section {name}"
        );
        assert!(dom.contains(&format!(
            "id=\"{name}-comparison\" data-blocked=\"{blocked}\""
        )));
        let mut segments = 0;
        for (key, c) in section["outcomes"].as_object().unwrap() {
            let n = c["count"].as_u64().unwrap();
            let cell =
                format!("id=\"{name}-count-{key}\" data-outcome=\"{key}\" data-count=\"{n}\"");
            assert!(dom.contains(&cell), "{cell} in the DOM");
            if n > 0 {
                segments += 1;
            }
        }
        let chart_start = dom.find(&format!("id=\"{name}-chart\"")).unwrap();
        let chart = &dom[chart_start..chart_start + dom[chart_start..].find("</svg>").unwrap()];
        assert_eq!(
            chart.matches("class=\"segment\"").count(),
            segments,
            "{name} chart"
        );
        let blockers = section["comparison"]["blockers"].as_array().unwrap().len();
        if blocked {
            assert!(dom.contains(&format!("id=\"{name}-blockers\" data-count=\"{blockers}\"")));
        } else {
            assert!(dom.contains(&format!("id=\"{name}-sentence\"")));
        }
    }
    assert_eq!(dom.matches("<tr data-schedule-id=").count(), 26);

    let shot = dir.path().join("report.png");
    screenshot(&browser, &url, &shot);
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert_eq!(png_size(&png), (1280, 2000));
    assert!(
        png.len() > 20_000,
        "a {} byte screenshot is blank",
        png.len()
    );
    if std::env::var_os("UPDATE_SCREENSHOT").is_some() {
        let docs = project_root().join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(&shot, docs.join("report.png")).unwrap();
    }
}

/// `diff --format html` rendered by a real browser: the template against the mixed ledger;
/// the DOM carries every changed row and count change of `diff --json`.
#[test]
fn html_diff_in_headless_chromium() {
    let Some(browser) = chromium() else {
        require_tool("chromium", "the HTML diff's browser test");
        return;
    };
    let (dir, mixed) = mixed_ledger_file();
    let template = ledger(&project_root(), &["template", DECL]);
    template.ok();
    let template_path = dir.path().join("template.json");
    std::fs::write(&template_path, &template.stdout).unwrap();
    let diff = |format: &str| {
        let r = ledger(
            &project_root(),
            &[
                "diff",
                "--files",
                template_path.to_str().unwrap(),
                mixed.to_str().unwrap(),
                DECL,
                "--format",
                format,
            ],
        );
        r.ok();
        r.stdout.clone()
    };
    let json: Value = serde_json::from_str(&diff("json")).unwrap();
    let html_path = dir.path().join("diff.html");
    std::fs::write(&html_path, diff("html")).unwrap();
    let url = format!("file://{}", html_path.display());
    let dom = dump_dom(&browser, &url);
    let rows = json["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(dom.contains(&format!(
        "data-follows=\"{}\" data-changed-rows=\"{}\"",
        json["follows"]["follows"],
        rows.len()
    )));
    for r in rows {
        assert!(
            dom.contains(&format!(
                "data-schedule-id=\"{}\" data-before=\"{}\" data-after=\"{}\"",
                r["schedule_id"].as_str().unwrap(),
                r["before"]["outcome"].as_str().unwrap(),
                r["after"]["outcome"].as_str().unwrap()
            )),
            "row {}",
            r["schedule_id"]
        );
    }
    for (section, counts) in json["counts"].as_object().unwrap() {
        for (key, delta) in counts.as_object().unwrap() {
            let cell = format!("data-outcome=\"{key}\" data-delta=\"{delta}\"");
            assert_eq!(dom.contains(&cell), delta != 0, "{section} {cell}");
        }
    }
    let shot = dir.path().join("diff.png");
    screenshot(&browser, &url, &shot);
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "a real picture"
    );
}

/// Every count names its unit, the same in every format: a row blocking for two reasons (17
/// rows, 20 reasons) and a row carrying two decisions (6 in 5 rows) are counted as rows and
/// reasons, interventions in rows, in text, Markdown, HTML and JSON alike.
#[test]
fn counts_name_their_unit_alike_in_every_format() {
    let mut doc = mixed_ledger();
    for row in doc["rows"].as_array_mut().unwrap() {
        match row["schedule_id"].as_str().unwrap() {
            // Already blocking (runtime not recorded): now for a second reason too.
            "scenario/feature-csv-export/01" => row["source_revision"] = Value::Null,
            // Two decisions in the one row that had one.
            "arena/networkx-shortest-path-weights/01" => {
                row["interventions_decision_or_repair"] = json!([
                    {"kind": "decision", "note": "approved the plan"},
                    {"kind": "decision", "note": "approved the retry"}
                ])
            }
            _ => {}
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = serde_json::to_vec_pretty(&doc).unwrap();
    bytes.push(b'\n');
    write(dir.path(), "ledger.json", bytes);
    let path = dir.path().join("ledger.json");
    let json: Value = serde_json::from_str(&report(&path, "json")).unwrap();
    let live = &json["sections"]["live"];
    let by = &live["comparison"]["blocked_by"];
    let (rows, reasons) = (
        by["rows"].as_u64().unwrap(),
        by["reasons"].as_u64().unwrap(),
    );
    assert_eq!(
        reasons,
        live["comparison"]["blockers"].as_array().unwrap().len() as u64
    );
    assert_eq!(reasons, rows + 1, "{by}");
    assert_eq!(live["decisions"], json!(2));
    assert_eq!(
        live["decision_rows"],
        json!(["arena/networkx-shortest-path-weights/01"])
    );
    let counts = format!("{rows} rows, {reasons} reasons");
    let text = report(&path, "text");
    assert!(
        text.contains(&format!(
            "  Comparison                  BLOCKED ({counts})\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "  Decisions                   2 in 1 row (arena/networkx-shortest-path-weights/01)\n"
        ),
        "{text}"
    );
    let md = report(&path, "markdown");
    assert!(
        md.contains(&format!("comparison **blocked** ({counts})\n")),
        "{md}"
    );
    assert!(
        md.contains("- Decisions: 2 in 1 row (`arena/networkx-shortest-path-weights/01`);"),
        "{md}"
    );
    let html = report(&path, "html");
    assert!(
        html.contains(&format!(
            "data-rows=\"{rows}\" data-reasons=\"{reasons}\">comparison blocked: {counts}</span>"
        )),
        "{html}"
    );
    assert!(
        html.contains("id=\"live-decisions\" data-count=\"2\" data-rows=\"1\">2 in 1 row"),
        "{html}"
    );
    crate::schemas::assert_valid("report", &json, "report --json, counts in two units");
}
