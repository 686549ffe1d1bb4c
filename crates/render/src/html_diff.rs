//! `diff --format html`: what changed between two ledger states as one self-contained page
//! (the report page's inline CSS, no script, no network): whether B follows A by admitted
//! steps, the change of every portfolio count per section, a table of the changed rows with
//! their outcome before and after, then (with `--full`, or for at most 20 rows) each row's
//! per-field diffs, lines marked added or removed, a field changed the same way in every row
//! shown once.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::html::{esc, head};
use super::{label, SECTION_ORDER};
use crate::ledger_diff::{self, FieldChange, LedgerDiff};

/// Render a ledger diff as one self-contained HTML page (every row's per-field diffs with
/// `full`).
pub fn write(d: &LedgerDiff, full: bool, out: &mut dyn Write) -> io::Result<()> {
    let mut h = String::with_capacity(16 * 1024);
    page(&mut h, d, full).expect("writing to a String cannot fail");
    out.write_all(h.as_bytes())
}

const DIFF_CSS: &str = r#"
pre.diff { background: var(--bg-soft); border: 1px solid var(--line); padding: 8px 12px; overflow-x: auto; font-size: 13px; line-height: 1.4; }
pre.diff .add { background: #dafbe1; display: block; }
pre.diff .del { background: #ffebe9; display: block; }
pre.diff .hunk { color: var(--muted); display: block; }
td.up { color: #1a7f37; font-weight: 600; }
td.down { color: #cf222e; font-weight: 600; }
"#;

fn page(h: &mut String, d: &LedgerDiff, full: bool) -> std::fmt::Result {
    let id = esc(&d.declaration.id);
    head(
        h,
        &format!("Ledger diff: {id} {} → {}", esc(&d.a), esc(&d.b)),
        DIFF_CSS,
    )?;
    writeln!(
        h,
        "<body data-declaration-id=\"{id}\" data-follows=\"{}\" data-changed-rows=\"{}\">",
        d.follows.follows,
        d.rows.len()
    )?;
    writeln!(h, "<header>\n<h1>Ledger diff: <code>{id}</code></h1>")?;
    writeln!(
        h,
        "<p class=\"muted\">Declaration sha256 <code class=\"hash\">{}</code></p>",
        esc(&d.declaration.sha256)
    )?;
    writeln!(
        h,
        "<p>From <code id=\"rev-a\">{}</code> to <code id=\"rev-b\">{}</code>: {} row{} differ{}.</p>",
        esc(&d.a),
        esc(&d.b),
        d.rows.len(),
        if d.rows.len() == 1 { "" } else { "s" },
        if d.rows.len() == 1 { "s" } else { "" }
    )?;
    for why in &d.admitted.refused {
        writeln!(
            h,
            "<p class=\"not-admitted\" role=\"alert\">NOT ADMITTED: {}</p>",
            esc(&why.to_string())
        )?;
    }
    if d.follows.follows {
        let steps = d.follows.steps.map_or(String::new(), |n| {
            format!(" by {n} admitted step{}", if n == 1 { "" } else { "s" })
        });
        writeln!(
            h,
            "<p id=\"follows\"><span class=\"badge open\">B follows A</span>{steps}: every change on the way was admitted.</p>"
        )?;
    } else {
        writeln!(
            h,
            "<div class=\"blockers\" id=\"follows\"><p><span class=\"badge blocked\">B does not follow A</span> by admitted steps:</p><ul>"
        )?;
        for w in &d.follows.why_not {
            writeln!(h, "<li>{}</li>", esc(&w.to_string()))?;
        }
        writeln!(h, "</ul></div>")?;
    }
    writeln!(h, "</header>\n<main>")?;
    writeln!(h, "<h2>Portfolio counts</h2>")?;
    for name in SECTION_ORDER {
        let Some(counts) = d.counts.get(name) else {
            continue;
        };
        let changed: Vec<_> = counts.iter().filter(|(_, v)| **v != 0).collect();
        writeln!(
            h,
            "<h3>{} section</h3>",
            if name == "live" { "Live" } else { "Fixture" }
        )?;
        if changed.is_empty() {
            writeln!(
                h,
                "<p class=\"muted\" id=\"{name}-counts\">No count changed.</p>"
            )?;
            continue;
        }
        writeln!(
            h,
            "<table class=\"counts\" id=\"{name}-counts\"><tr><th>Outcome</th><th>Change</th></tr>"
        )?;
        for (key, delta) in changed {
            writeln!(
                h,
                "<tr data-outcome=\"{key}\" data-delta=\"{delta}\"><td>{}</td><td class=\"num {}\">{delta:+}</td></tr>",
                esc(label(key)),
                if *delta > 0 { "up" } else { "down" }
            )?;
        }
        writeln!(h, "</table>")?;
    }
    writeln!(h, "<h2>Changed rows</h2>")?;
    if d.rows.is_empty() {
        writeln!(h, "<p class=\"muted\">No row differs.</p>")?;
    } else {
        writeln!(h, "<p>{}</p>", esc(&ledger_diff::rows_differ(d)))?;
        writeln!(
            h,
            "<table class=\"counts\" id=\"changed-rows\"><tr><th>Schedule id</th><th>Section</th><th>Before</th><th>After</th></tr>"
        )?;
        for r in &d.rows {
            writeln!(
                h,
                "<tr data-schedule-id=\"{}\" data-before=\"{}\" data-after=\"{}\"><td><code>{}</code></td><td>{}</td><td>{} ({})</td><td>{} ({})</td></tr>",
                esc(&r.schedule_id),
                r.before.outcome,
                r.after.outcome,
                esc(&r.schedule_id),
                r.section,
                esc(&r.before.native_outcome),
                esc(label(r.before.outcome)),
                esc(&r.after.native_outcome),
                esc(label(r.after.outcome))
            )?;
        }
        writeln!(h, "</table>")?;
    }
    let details = ledger_diff::details(d, full);
    if !details.shown {
        writeln!(
            h,
            "<p class=\"muted\" id=\"details-left-out\">Per-field diffs of the {} rows: <code>git ledger diff --full</code>; every line: <code>--json</code>.</p>",
            d.rows.len()
        )?;
    } else {
        if !details.shared.is_empty() {
            writeln!(
                h,
                "<section class=\"row\" id=\"shared-fields\">\n<h3>The same change in all {} rows (shown once)</h3>",
                d.rows.len()
            )?;
            for f in &details.shared {
                field(h, f)?;
            }
            writeln!(h, "</section>")?;
        }
        for r in &d.rows {
            writeln!(
                h,
                "<section class=\"row\" data-row=\"{}\">",
                esc(&r.schedule_id)
            )?;
            writeln!(
                h,
                "<h3><code>{}</code> <span class=\"muted\">({})</span></h3>",
                esc(&r.schedule_id),
                r.section
            )?;
            writeln!(
                h,
                "<p>{} ({}) → <strong>{}</strong> ({})</p>",
                esc(&r.before.native_outcome),
                esc(label(r.before.outcome)),
                esc(&r.after.native_outcome),
                esc(label(r.after.outcome))
            )?;
            for f in r.fields.iter().filter(|f| !details.is_shared(&f.field)) {
                field(h, f)?;
            }
            if !details.shared.is_empty() {
                let names: Vec<String> = details.shared.iter().map(|f| esc(&f.field)).collect();
                writeln!(h, "<p class=\"muted\">{}: as above.</p>", names.join(", "))?;
            }
            writeln!(h, "</section>")?;
        }
    }
    if !d.other_paths.is_empty() {
        writeln!(h, "<h2>Other changes</h2><ul>")?;
        for p in &d.other_paths {
            writeln!(h, "<li><code>{}</code></li>", esc(p))?;
        }
        writeln!(h, "</ul>")?;
    }
    writeln!(h, "</main>\n</body>\n</html>")
}

/// One field's change: its lines as [`FieldChange::lines`] gives them, added and removed lines
/// marked.
fn field(h: &mut String, f: &FieldChange) -> std::fmt::Result {
    write!(h, "<pre class=\"diff\">")?;
    for line in f.lines() {
        let class = if line.starts_with("  @@") {
            "hunk"
        } else if line.starts_with("  +") {
            "add"
        } else if line.starts_with("  -") {
            "del"
        } else {
            ""
        };
        if class.is_empty() {
            writeln!(h, "{}", esc(&line))?;
        } else {
            write!(h, "<span class=\"{class}\">{}</span>", esc(&line))?;
        }
    }
    writeln!(h, "</pre>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger_diff::{FieldChange, Follows, RowDiff, Side};
    use crate::report::DeclarationRef;

    fn diff(follows: bool) -> LedgerDiff {
        let rows = vec![RowDiff {
            schedule_id: "scenario/a<b>/01".into(),
            section: "live",
            before: Side { native_outcome: "DEFERRED".into(), outcome: "not_attempted" },
            after: Side { native_outcome: "PASS".into(), outcome: "verified_delivery" },
            diff: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n {\n-  \"native_outcome\": \"DEFERRED\",\n+  \"native_outcome\": \"PASS\",\n".into(),
            fields: vec![
                FieldChange {
                    field: "native_outcome".into(),
                    before: "DEFERRED".into(),
                    after: "PASS".into(),
                },
                FieldChange {
                    field: "oracle_checks".into(),
                    before: serde_json::Value::Null,
                    after: serde_json::json!([{"name": "<t>", "ok": true}]),
                },
            ],
        }];
        LedgerDiff {
            admitted: crate::ledger_diff::SidesAdmitted::both(),
            declaration: DeclarationRef {
                id: "c".into(),
                sha256: "ab".repeat(32),
            },
            a: "A".into(),
            b: "B".into(),
            counts: crate::ledger_diff::count_changes(&rows),
            rows,
            other_paths: Vec::new(),
            follows: Follows {
                follows,
                steps: follows.then_some(1),
                why_not: if follows {
                    Vec::new()
                } else {
                    vec![git_ledger_base::refusal::Reason::new("<retry>").row("x")]
                },
            },
        }
    }

    fn render(d: &LedgerDiff) -> String {
        let mut out = Vec::new();
        write(d, false, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn marks_rows_counts_and_diff_lines() {
        let h = render(&diff(true));
        assert!(h.contains("data-follows=\"true\" data-changed-rows=\"1\""));
        assert!(h.contains("data-outcome=\"verified_delivery\" data-delta=\"1\""));
        assert!(h.contains("data-outcome=\"not_attempted\" data-delta=\"-1\""));
        assert!(h.contains("native_outcome: &quot;DEFERRED&quot; -&gt; &quot;PASS&quot;\n"));
        assert!(h.contains(
            "<span class=\"add\">  +    &quot;name&quot;: &quot;&lt;t&gt;&quot;,</span>"
        ));
        assert!(h.contains("<span class=\"del\">  -null</span>"));
        assert!(h.contains("scenario/a&lt;b&gt;/01"), "ids are escaped");
        assert!(
            !h.contains("<script") && !h.contains("http"),
            "self-contained"
        );
    }

    #[test]
    fn says_why_b_does_not_follow_a() {
        let h = render(&diff(false));
        assert!(h.contains("B does not follow A"));
        assert!(h.contains("row x: &lt;retry&gt;"));
        assert_eq!(render(&diff(false)), h, "deterministic");
    }
}
