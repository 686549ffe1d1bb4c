//! `report --format markdown`: a compact summary for a pull-request or issue comment, in
//! GitHub-flavoured Markdown. Per section: the outcomes with counts, decisions and repairs,
//! cost, elapsed time, limits, deviations, the blocked reasons grouped by reason, and the
//! quotable sentence when the section is not blocked; then every row in a collapsed table.
//!
//! Every string from the report is escaped: ASCII punctuation that Markdown or GitHub give a
//! meaning to is backslash-escaped, `|` is escaped inside tables (code spans included), and
//! line breaks become spaces, so no value can end a cell, open a link, emphasis or HTML.

use std::io::{self, Write};

use super::{cost_per_verified, group_blockers, label, plural, present, total_cost, SECTION_ORDER};
use crate::report::{Ids, Report, Section};

/// How many schedule ids an outcome cell lists before "and N more" (every row is listed in
/// the rows table at the end).
const IDS_PER_CELL: usize = 5;

/// Render the report as GitHub-flavoured Markdown.
pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    if let Some(banner) = super::not_admitted(report) {
        writeln!(out, "> [!CAUTION]")?;
        writeln!(out, "> {}", text(&banner))?;
        writeln!(out)?;
    }
    writeln!(
        out,
        "## Ledger report: {}",
        code(&report.declaration.id, false)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "Declaration sha256 {}. Counts of one finite campaign as its ledger records them: not a reliability estimate or a model ranking.",
        code(&report.declaration.sha256, false)
    )?;
    writeln!(out)?;
    for (name, value) in super::state_lines(&report.ledger) {
        writeln!(out, "- {name}: {}", code(&value, false))?;
    }
    for name in SECTION_ORDER {
        if let Some(s) = report.sections.get(name) {
            section(out, name, s)?;
        }
    }
    rows(out, report)
}

fn section(out: &mut dyn Write, name: &str, s: &Section) -> io::Result<()> {
    writeln!(out)?;
    let verdict = if s.comparison.blocked {
        format!("comparison **blocked** ({})", super::blocked_counts(s))
    } else {
        "comparison not blocked".to_owned()
    };
    writeln!(
        out,
        "### {} section: {} scheduled, {} attempted; {verdict}",
        capitalised(name),
        s.scheduled,
        s.attempted
    )?;
    writeln!(out)?;
    writeln!(out, "| Outcome | Count | Rows |")?;
    writeln!(out, "| --- | ---: | --- |")?;
    let mut any = false;
    for (o, n) in present(s) {
        any = true;
        let ids: Vec<String> = s.outcomes[o.key()].rows.iter().collect();
        writeln!(
            out,
            "| {} | {n} | {} |",
            text(o.label()),
            id_list(&ids, true)
        )?;
    }
    if !any {
        writeln!(out, "| (none) | 0 | |")?;
    }
    writeln!(out, "| **Scheduled** | **{}** | |", s.scheduled)?;
    writeln!(out)?;
    writeln!(
        out,
        "- Decisions: {}; repairs: {}",
        counted(s.decisions, &s.decision_rows),
        counted(s.repairs, &s.repair_rows)
    )?;
    writeln!(
        out,
        "- Cost: total {}; per verified delivery: {}",
        text(&total_cost(s)),
        text(&cost_per_verified(s))
    )?;
    writeln!(
        out,
        "- Elapsed: {:.1} s known, {} unknown",
        s.elapsed.known_seconds,
        plural(s.elapsed.unknown, "attempt")
    )?;
    writeln!(
        out,
        "- Limits: {} within every limit, {} over a limit, {} spend unknown",
        s.limits.within, s.limits.over, s.limits.unknown
    )?;
    if s.deviations.is_empty() {
        writeln!(out, "- Deviations: none")?;
    } else {
        let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
        for d in s.deviations.iter() {
            match groups.iter_mut().find(|(w, _)| *w == d.what) {
                Some((_, ids)) => ids.push(d.schedule_id.clone()),
                None => groups.push((d.what, vec![d.schedule_id.clone()])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(what, ids)| format!("{} ({})", text(what), id_list(ids, false)))
            .collect();
        writeln!(out, "- Deviations: {}", parts.join("; "))?;
    }
    writeln!(out)?;
    if s.comparison.blocked {
        writeln!(out, "**Blocked** while these rows stand:")?;
        writeln!(out)?;
        writeln!(out, "| Reason | Rows | Schedule ids |")?;
        writeln!(out, "| --- | ---: | --- |")?;
        for (why, ids) in group_blockers(&s.comparison.blockers) {
            let all: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
            writeln!(
                out,
                "| {} | {} | {} |",
                text(why),
                ids.len(),
                id_list(&all, true)
            )?;
        }
    } else if let Some(sentence) = &s.comparison.sentence {
        writeln!(out, "> {}", text(sentence))?;
    }
    Ok(())
}

fn rows(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "<details><summary>All {}</summary>",
        plural(report.rows.len(), "row")
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "| Schedule id | Section | Native outcome | Outcome | Gaps |"
    )?;
    writeln!(out, "| --- | --- | --- | --- | --- |")?;
    for r in report.rows.iter() {
        let native = match &r.native_status {
            Some(st) => format!("{} ({st})", r.native_outcome),
            None => r.native_outcome.to_string(),
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            code(&r.schedule_id, true),
            text(r.section),
            text(&native),
            text(label(r.outcome)),
            cell(&r.gaps.join("; "))
        )?;
    }
    writeln!(out)?;
    writeln!(out, "</details>")
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn counted(n: usize, ids: &Ids) -> String {
    if ids.is_empty() {
        super::interventions(n, ids)
    } else {
        let listed: Vec<String> = ids.iter().collect();
        format!(
            "{} ({})",
            super::interventions(n, ids),
            id_list(&listed, false)
        )
    }
}

/// Schedule ids as code spans, at most [`IDS_PER_CELL`] in a table cell.
fn id_list(ids: &[String], in_table: bool) -> String {
    let cap = if in_table { IDS_PER_CELL } else { usize::MAX };
    let mut parts: Vec<String> = ids.iter().take(cap).map(|i| code(i, in_table)).collect();
    if ids.len() > cap {
        parts.push(format!("and {} more", ids.len() - cap));
    }
    parts.join(", ")
}

/// Escape text for a table cell (empty stays empty).
fn cell(s: &str) -> String {
    text(s)
}

/// Escape text so that Markdown shows it literally, in a paragraph or a table cell.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '&'
            | '$' | '!' | '@' => {
                out.push('\\');
                out.push(ch);
            }
            '\r' | '\n' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

/// A code span that shows `s` literally (a fence longer than any backtick run inside; `|`
/// escaped in a table, where GitHub splits cells before it parses code spans).
pub fn code(s: &str, in_table: bool) -> String {
    let s = s.replace(['\r', '\n'], " ");
    let s = if in_table { s.replace('|', "\\|") } else { s };
    let mut longest = 0;
    let mut run = 0;
    for ch in s.chars() {
        if ch == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn render(r: &Report) -> String {
        let mut out = Vec::new();
        write(r, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The cells of a table line, split at unescaped `|` as GitHub does.
    fn cells(line: &str) -> Vec<String> {
        let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
        let mut cells = vec![String::new()];
        let mut escaped = false;
        for ch in inner.chars() {
            if ch == '|' && !escaped {
                cells.push(String::new());
            } else {
                cells.last_mut().unwrap().push(ch);
            }
            escaped = ch == '\\' && !escaped;
        }
        cells.into_iter().map(|c| c.trim().to_owned()).collect()
    }

    #[test]
    fn sections_tables_blockers_sentence() {
        let md = render(&fixture::mixed());
        assert!(md.starts_with("## Ledger report: `camp|<b>_x_</b>`\n"));
        let live = md
            .find("### Live section: 6 scheduled, 4 attempted; comparison **blocked** (4 rows, 5 reasons)")
            .unwrap();
        let fixture = md
            .find("### Fixture section: 1 scheduled, 1 attempted; comparison not blocked")
            .unwrap();
        assert!(live < fixture);
        assert!(md.contains("| Verified delivery | 2 | `t/a\\|1`, `t/b` |\n"));
        assert!(md.contains("| False completion | 1 | `t/d` |\n"));
        assert!(md.contains("| **Scheduled** | **6** | |\n"));
        // Zero counts are left out of the compact table.
        assert!(!md.contains("| Error |"));
        assert!(md.contains("| not attempted | 2 | `t/e`, `t/f` |\n"));
        assert!(md.contains("- Decisions: 1 in 1 row (`t/b`); repairs: 0\n"));
        assert!(md.contains("- Cost: total unknown (1 attempt unpriced; 3.50 USD known); per verified delivery: not established\n"));
        assert!(md.contains("- Deviations: runtime not recorded (`t/c_x`)\n"));
        assert!(md.contains("> In the fixture section of campaign \\<x\\> \\& \\*y\\*, 1 scheduled attempt: 1 verified delivery.\n"));
        // The blocked live section has no sentence.
        assert_eq!(md.matches("\n> ").count(), 1);
        assert!(md.contains("<details><summary>All 7 rows</summary>\n\n| Schedule id |"));
        assert!(md.trim_end().ends_with("</details>"));
    }

    #[test]
    fn every_table_line_has_its_header_s_cell_count() {
        let md = render(&fixture::mixed());
        let mut width = None;
        for line in md.lines() {
            if !line.starts_with('|') {
                width = None;
                continue;
            }
            let n = cells(line).len();
            match width {
                None => width = Some(n),
                Some(w) => assert_eq!(n, w, "cell count of {line:?}"),
            }
        }
        let gaps = md.lines().find(|l| l.starts_with("| `t/c_x` |")).unwrap();
        assert_eq!(
            cells(gaps)[4],
            "missing upstream check tests/x.py::test\\_\\*a\\*\\|b; runtime not recorded"
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(text("a|b"), "a\\|b");
        assert_eq!(text("<script>"), "\\<script\\>");
        assert_eq!(text("*_[x](y)_*"), "\\*\\_\\[x\\](y)\\_\\*");
        assert_eq!(text("two\nlines"), "two lines");
        assert_eq!(text("$x$ @me &amp;"), "\\$x\\$ \\@me \\&amp;");
        assert_eq!(code("a`b", false), "``a`b``");
        assert_eq!(code("`a", false), "`` `a ``");
        assert_eq!(code("a|b", true), "`a\\|b`");
        assert_eq!(code("a|b", false), "`a|b`");
        let many: Vec<String> = (0..8).map(|i| format!("r{i}")).collect();
        assert_eq!(
            id_list(&many, true),
            "`r0`, `r1`, `r2`, `r3`, `r4`, and 3 more"
        );
    }

    #[test]
    fn deterministic() {
        let r = fixture::mixed();
        assert_eq!(render(&r), render(&r.clone()));
    }
}
