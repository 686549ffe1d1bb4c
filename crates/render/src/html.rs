//! `report --format html`: one self-contained page for a reviewer. Inline CSS and inline SVG
//! only: no script, no network, no external font, image or style sheet; it reads the same
//! with JavaScript off and prints on paper.
//!
//! Per section: a stacked bar of the portfolio (inline SVG with a title, a description and a
//! `<title>` per segment) and its legend, the outcome table, decisions, repairs, cost, elapsed
//! time, limits, deviations, the blocked reasons grouped by reason, and the quotable sentence
//! when the section is not blocked. Then every row: schedule id, section, native outcome and
//! status, portfolio outcome, gaps and limits.
//!
//! Every string from the report is HTML-escaped. The key numbers carry stable ids and `data-`
//! attributes (`id="live-count-verified_delivery" data-outcome="verified_delivery"
//! data-count="3"`, `data-blocked`, `data-scheduled`, …) so tests and scripts can read the DOM.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{
    colour, cost_per_verified, group_blockers, label, meaning, outcome, plural, present,
    total_cost, usd, SECTION_ORDER,
};
use crate::portfolio::{LimitState, Outcome};
use crate::report::{Ids, Report, Section};

/// Outcome-table cells list this many schedule ids openly; more go into a `<details>`.
const OPEN_IDS: usize = 6;
/// The chart's width in SVG user units.
const CHART_W: f64 = 1000.0;
const CHART_H: f64 = 44.0;

const CSS: &str = r#"
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg-soft: #f6f8fa; }
* { box-sizing: border-box; }
.not-admitted { margin: 0 0 16px; padding: 12px 16px; border: 2px solid #cf222e; background: #ffebe9; color: #82071e; font-weight: 600; }
body { margin: 0; padding: 24px 32px 48px; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: #fff; max-width: 1200px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 8px; padding-top: 12px; border-top: 2px solid var(--line); display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
h3 { font-size: 16px; margin: 18px 0 6px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; }
.muted { color: var(--muted); }
.hash { word-break: break-all; }
.badge { font-size: 13px; font-weight: 600; padding: 2px 10px; border-radius: 12px; border: 1px solid; }
.badge.blocked { color: #82071e; background: #ffebe9; border-color: #ff8182; }
.badge.open { color: #116329; background: #dafbe1; border-color: #4ac26b; }
figure { margin: 8px 0 4px; }
svg.bar { width: 100%; height: auto; display: block; }
figcaption { font-size: 13px; color: var(--muted); }
ul.legend { list-style: none; padding: 0; margin: 6px 0 12px; display: flex; flex-wrap: wrap; gap: 6px 18px; font-size: 14px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; border: 1px solid rgba(0,0,0,.15); }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: var(--bg-soft); font-weight: 600; }
table.outcomes { width: 100%; }
table.outcomes th:first-child { width: 24em; }
table.outcomes th:nth-child(2) { width: 5em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.zero td { color: #8c959f; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 12px; font-size: 14px; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
blockquote.sentence { margin: 12px 0; padding: 10px 16px; border-left: 4px solid #1a7f37; background: #f6fff8; font-size: 15px; }
.blockers { border-left: 4px solid #cf222e; padding: 2px 0 2px 14px; margin: 12px 0; }
details > summary { cursor: pointer; color: var(--muted); }
.limit-over { color: #cf222e; font-weight: 600; }
.limit-unknown { color: #9a6700; }
.limit-within { color: #1a7f37; }
ul.gaps { margin: 0; padding-left: 18px; }
table.rows td:first-child { white-space: nowrap; }
footer { margin-top: 40px; font-size: 13px; color: var(--muted); }
@media print { body { padding: 0; } details { display: block; } }
"#;

/// Render the report as one self-contained HTML page.
pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut h = String::with_capacity(32 * 1024);
    page(&mut h, report).expect("writing to a String cannot fail");
    out.write_all(h.as_bytes())
}

/// The document's start up to `</head>`: charset, viewport, generator, the (escaped) title and
/// the page's inline styles plus `extra_css`.
pub(crate) fn head(h: &mut String, title: &str, extra_css: &str) -> std::fmt::Result {
    writeln!(h, "<!DOCTYPE html>")?;
    writeln!(h, "<html lang=\"en\">")?;
    writeln!(h, "<head>")?;
    writeln!(h, "<meta charset=\"utf-8\">")?;
    writeln!(
        h,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(
        h,
        "<meta name=\"generator\" content=\"git-ledger {}\">",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(h, "<title>{title}</title>")?;
    writeln!(h, "<style>{CSS}{extra_css}</style>")?;
    writeln!(h, "</head>")
}

fn page(h: &mut String, report: &Report) -> std::fmt::Result {
    let id = esc(&report.declaration.id);
    head(h, &format!("Ledger report: {id}"), "")?;
    writeln!(
        h,
        "<body data-declaration-id=\"{id}\" data-declaration-sha256=\"{}\"{}>",
        esc(&report.declaration.sha256),
        match report.ledger.citation() {
            Some(c) => format!(" data-citation=\"{}\"", esc(c)),
            None => String::new(),
        }
    )?;
    if let Some(banner) = super::not_admitted(report) {
        writeln!(
            h,
            "<p id=\"not-admitted\" role=\"alert\" class=\"not-admitted\">{}</p>",
            esc(&banner)
        )?;
    }
    writeln!(h, "<header>")?;
    writeln!(
        h,
        "<h1>Ledger report: <code id=\"declaration-id\">{id}</code></h1>"
    )?;
    writeln!(
        h,
        "<p class=\"muted\">Declaration sha256 <code class=\"hash\" id=\"declaration-sha256\">{}</code></p>",
        esc(&report.declaration.sha256)
    )?;
    writeln!(h, "<dl class=\"facts\" id=\"ledger-state\">")?;
    for (name, value) in super::state_lines(&report.ledger) {
        let id = name.to_ascii_lowercase().replace([' ', '-'], "-");
        writeln!(
            h,
            "<dt>{}</dt><dd><code class=\"hash\" id=\"{id}\">{}</code></dd>",
            esc(name),
            esc(&value)
        )?;
    }
    writeln!(h, "</dl>")?;
    writeln!(
        h,
        "<p>Every scheduled attempt of the campaign has exactly one row; each row lands in one portfolio outcome. Live and fixture attempts are separate sections and never pooled. A section's comparison is <strong>blocked</strong> while any row is not attempted or ungraded, ran on another revision, runtime or (live) profile, or spent more than a declared limit. These are counts of one finite campaign, not a reliability estimate or a model ranking.</p>"
    )?;
    writeln!(h, "<nav><p>")?;
    for name in SECTION_ORDER {
        if let Some(s) = report.sections.get(name) {
            writeln!(
                h,
                "<a href=\"#section-{name}\">{} section</a> ({}) &middot;",
                capitalised(name),
                if s.comparison.blocked {
                    "blocked"
                } else {
                    "not blocked"
                }
            )?;
        }
    }
    writeln!(
        h,
        "<a href=\"#rows\">All {}</a> &middot; <a href=\"#outcomes-explained\">What the outcomes mean</a>",
        plural(report.rows.len(), "row")
    )?;
    writeln!(h, "</p></nav>")?;
    writeln!(h, "</header>")?;
    writeln!(h, "<main>")?;
    for name in SECTION_ORDER {
        if let Some(s) = report.sections.get(name) {
            section(h, name, s)?;
        }
    }
    rows(h, report)?;
    glossary(h)?;
    writeln!(h, "</main>")?;
    writeln!(
        h,
        "<footer>Written by <code>git ledger report --format html</code> (git-ledger {}). The report reads the ledger only: it runs no harness, oracle or model, never rescores a native outcome and never promotes one. Evidence references are checked for presence, not authenticity.</footer>",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(h, "</body>")?;
    writeln!(h, "</html>")
}

fn section(h: &mut String, name: &str, s: &Section) -> std::fmt::Result {
    let title = format!("{} section", capitalised(name));
    writeln!(
        h,
        "<section id=\"section-{name}\" data-section=\"{name}\" data-scheduled=\"{}\" data-attempted=\"{}\" data-blocked=\"{}\">",
        s.scheduled, s.attempted, s.comparison.blocked
    )?;
    let badge = if s.comparison.blocked {
        format!(
            "<span class=\"badge blocked\" id=\"{name}-comparison\" data-blocked=\"true\" data-rows=\"{}\" data-reasons=\"{}\">comparison blocked: {}</span>",
            super::blocked_rows(s),
            s.comparison.blockers.len(),
            super::blocked_counts(s)
        )
    } else {
        format!("<span class=\"badge open\" id=\"{name}-comparison\" data-blocked=\"false\">comparison not blocked</span>")
    };
    writeln!(h, "<h2>{title} {badge}</h2>")?;
    writeln!(
        h,
        "<p><strong id=\"{name}-scheduled\" data-count=\"{}\">{}</strong> scheduled, <strong id=\"{name}-attempted\" data-count=\"{}\">{}</strong> attempted.</p>",
        s.scheduled, s.scheduled, s.attempted, s.attempted
    )?;
    chart(h, name, s)?;

    writeln!(h, "<h3>Outcomes</h3>")?;
    writeln!(
        h,
        "<table class=\"outcomes\" id=\"{name}-outcomes\"><thead><tr><th>Outcome</th><th>Count</th><th>Rows</th></tr></thead><tbody>"
    )?;
    for o in Outcome::ALL {
        let c = &s.outcomes[o.key()];
        let class = if c.count == 0 { " class=\"zero\"" } else { "" };
        write!(
            h,
            "<tr{class} data-outcome=\"{k}\"><td>{sw}{}</td><td class=\"num\" id=\"{name}-count-{k}\" data-outcome=\"{k}\" data-count=\"{n}\">{n}</td><td>",
            esc(o.label()),
            k = o.key(),
            n = c.count,
            sw = swatch(o),
        )?;
        id_list(h, &ids(&c.rows))?;
        writeln!(h, "</td></tr>")?;
    }
    writeln!(
        h,
        "</tbody><tfoot><tr><th>Scheduled</th><td class=\"num\"><strong>{}</strong></td><td></td></tr></tfoot></table>",
        s.scheduled
    )?;

    writeln!(h, "<h3>Interventions, cost, time and limits</h3>")?;
    writeln!(h, "<dl class=\"facts\">")?;
    write!(
        h,
        "<dt>Decisions</dt><dd id=\"{name}-decisions\" data-count=\"{}\" data-rows=\"{}\">{}",
        s.decisions,
        s.decision_rows.len(),
        super::interventions(s.decisions, &s.decision_rows)
    )?;
    if !s.decision_rows.is_empty() {
        h.push_str(" &mdash; ");
        id_list(h, &ids(&s.decision_rows))?;
    }
    writeln!(h, "</dd>")?;
    write!(
        h,
        "<dt>Repairs</dt><dd id=\"{name}-repairs\" data-count=\"{}\" data-rows=\"{}\">{}",
        s.repairs,
        s.repair_rows.len(),
        super::interventions(s.repairs, &s.repair_rows)
    )?;
    if !s.repair_rows.is_empty() {
        h.push_str(" &mdash; ");
        id_list(h, &ids(&s.repair_rows))?;
    }
    writeln!(h, "</dd>")?;
    writeln!(
        h,
        "<dt>Cost</dt><dd id=\"{name}-cost\" data-known-usd=\"{}\" data-unpriced=\"{}\" data-total-usd=\"{}\">total {}, across every attempt, failures included</dd>",
        usd(s.cost.known_usd),
        s.cost.unpriced,
        s.cost.total_usd.map_or("unknown".to_owned(), usd),
        esc(&total_cost(s))
    )?;
    writeln!(
        h,
        "<dt>Cost per verified delivery</dt><dd id=\"{name}-cost-per-verified\">{}</dd>",
        esc(&cost_per_verified(s))
    )?;
    writeln!(
        h,
        "<dt>Elapsed</dt><dd id=\"{name}-elapsed\">{:.1} s known; {} unknown</dd>",
        s.elapsed.known_seconds,
        plural(s.elapsed.unknown, "attempt")
    )?;
    writeln!(
        h,
        "<dt>Limits</dt><dd id=\"{name}-limits\"><span data-limit=\"within\" data-count=\"{w}\">{w} within every limit</span>, <span class=\"{oc}\" data-limit=\"over\" data-count=\"{o}\">{o} over a limit</span>, <span data-limit=\"unknown\" data-count=\"{u}\">{u} spend unknown</span></dd>",
        w = s.limits.within,
        o = s.limits.over,
        u = s.limits.unknown,
        oc = if s.limits.over > 0 { "limit-over" } else { "" }
    )?;
    writeln!(h, "</dl>")?;

    writeln!(h, "<h3>Deviations</h3>")?;
    if s.deviations.is_empty() {
        writeln!(h, "<p id=\"{name}-deviations\" data-count=\"0\">None: every attempted row ran on the declared revision, runtime and profile.</p>")?;
    } else {
        writeln!(
            h,
            "<table id=\"{name}-deviations\" data-count=\"{}\"><thead><tr><th>Schedule id</th><th>Deviation</th></tr></thead><tbody>",
            s.deviations.len()
        )?;
        for d in s.deviations.iter() {
            writeln!(
                h,
                "<tr><td><code>{}</code></td><td>{}</td></tr>",
                esc(&d.schedule_id),
                esc(d.what)
            )?;
        }
        writeln!(h, "</tbody></table>")?;
    }

    writeln!(h, "<h3>Comparison</h3>")?;
    if s.comparison.blocked {
        writeln!(
            h,
            "<div class=\"blockers\" id=\"{name}-blockers\" data-count=\"{}\">",
            s.comparison.blockers.len()
        )?;
        writeln!(
            h,
            "<p><strong>Blocked.</strong> No sentence may be quoted from this section while these rows stand:</p>"
        )?;
        writeln!(
            h,
            "<table><thead><tr><th>Reason</th><th>Rows</th><th>Schedule ids</th></tr></thead><tbody>"
        )?;
        for (why, ids) in group_blockers(&s.comparison.blockers) {
            let owned: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
            write!(
                h,
                "<tr data-blocker=\"{w}\" data-count=\"{n}\"><td>{w}</td><td class=\"num\">{n}</td><td>",
                w = esc(why),
                n = ids.len()
            )?;
            id_list(h, &owned)?;
            writeln!(h, "</td></tr>")?;
        }
        writeln!(h, "</tbody></table>")?;
        writeln!(h, "</div>")?;
    } else if let Some(sentence) = &s.comparison.sentence {
        writeln!(
            h,
            "<p>Not blocked. The sentence a person may quote:</p>\n<blockquote class=\"sentence\" id=\"{name}-sentence\">{}</blockquote>",
            esc(sentence)
        )?;
    }
    writeln!(h, "</section>")
}

/// The stacked bar: one `<rect>` per outcome with a non-zero count, widths proportional to the
/// count, each with a `<title>`; the whole chart has a title and a description listing counts.
fn chart(h: &mut String, name: &str, s: &Section) -> std::fmt::Result {
    let parts: Vec<(Outcome, usize)> = present(s).collect();
    let desc = if parts.is_empty() {
        "no scheduled attempts".to_owned()
    } else {
        parts
            .iter()
            .map(|(o, n)| format!("{n} {}", o.label().to_lowercase()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(h, "<figure>")?;
    writeln!(
        h,
        "<svg class=\"bar\" id=\"{name}-chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {CHART_W} {CHART_H}\" role=\"img\" aria-labelledby=\"{name}-chart-title {name}-chart-desc\">"
    )?;
    writeln!(
        h,
        "<title id=\"{name}-chart-title\">{} section portfolio, {} scheduled</title>",
        capitalised(name),
        s.scheduled
    )?;
    writeln!(h, "<desc id=\"{name}-chart-desc\">{}</desc>", esc(&desc))?;
    if s.scheduled == 0 {
        writeln!(
            h,
            "<rect x=\"0\" y=\"0\" width=\"{CHART_W}\" height=\"{CHART_H}\" fill=\"#f6f8fa\" stroke=\"#d1d9e0\"/>"
        )?;
    }
    let mut done = 0usize;
    for (o, n) in &parts {
        let x0 = done as f64 * CHART_W / s.scheduled as f64;
        done += n;
        let x1 = done as f64 * CHART_W / s.scheduled as f64;
        let w = x1 - x0;
        writeln!(
            h,
            "<rect class=\"segment\" data-outcome=\"{k}\" data-count=\"{n}\" x=\"{x0:.1}\" y=\"0\" width=\"{w:.1}\" height=\"{CHART_H}\" fill=\"{c}\" stroke=\"#fff\" stroke-width=\"1\"><title>{l}: {n}</title></rect>",
            k = o.key(),
            c = colour(*o),
            l = esc(o.label()),
        )?;
        if w >= 28.0 {
            writeln!(
                h,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"18\" font-family=\"system-ui, sans-serif\" font-weight=\"600\" fill=\"{}\" aria-hidden=\"true\">{n}</text>",
                x0 + w / 2.0,
                CHART_H / 2.0 + 6.0,
                ink(*o)
            )?;
        }
    }
    writeln!(h, "</svg>")?;
    write!(h, "<figcaption><ul class=\"legend\" id=\"{name}-legend\">")?;
    for (o, n) in &parts {
        write!(
            h,
            "<li data-outcome=\"{}\" data-count=\"{n}\">{}{} <strong>{n}</strong></li>",
            o.key(),
            swatch(*o),
            esc(o.label())
        )?;
    }
    writeln!(h, "</ul></figcaption>")?;
    writeln!(h, "</figure>")
}

fn rows(h: &mut String, report: &Report) -> std::fmt::Result {
    writeln!(
        h,
        "<section id=\"rows\" data-count=\"{}\">",
        report.rows.len()
    )?;
    writeln!(h, "<h2>All {}</h2>", plural(report.rows.len(), "row"))?;
    writeln!(h, "<p class=\"muted\">In schedule order. Gaps are what keeps a native PASS from being a verified delivery; limits are each declared limit's state (within, over, or unknown when the spend was not recorded).</p>")?;
    writeln!(h, "<table class=\"rows\"><thead><tr><th>Schedule id</th><th>Section</th><th>Native outcome (status)</th><th>Portfolio outcome</th><th>Gaps</th><th>Limits</th></tr></thead><tbody>")?;
    for r in report.rows.iter() {
        let native = match &r.native_status {
            Some(st) => format!("{} ({st})", r.native_outcome),
            None => r.native_outcome.to_string(),
        };
        let sw = outcome(r.outcome).map(swatch).unwrap_or_default();
        write!(
            h,
            "<tr data-schedule-id=\"{id}\" data-section=\"{sec}\" data-outcome=\"{k}\"><td><code>{id}</code></td><td>{sec}</td><td class=\"mono\">{}</td><td>{sw}{}</td><td>",
            esc(&native),
            esc(label(r.outcome)),
            id = esc(&r.schedule_id),
            sec = esc(r.section),
            k = esc(r.outcome),
        )?;
        if !r.gaps.is_empty() {
            h.push_str("<ul class=\"gaps\">");
            for g in r.gaps {
                write!(h, "<li>{}</li>", esc(g))?;
            }
            h.push_str("</ul>");
        }
        h.push_str("</td><td>");
        let limits: Vec<String> = r
            .limits
            .iter()
            .map(|(n, st)| {
                let (class, word) = match st {
                    LimitState::Within => ("limit-within", "within"),
                    LimitState::Over => ("limit-over", "over"),
                    LimitState::Unknown => ("limit-unknown", "unknown"),
                };
                format!("{}: <span class=\"{class}\">{word}</span>", esc(n))
            })
            .collect();
        h.push_str(&limits.join("<br>"));
        writeln!(h, "</td></tr>")?;
    }
    writeln!(h, "</tbody></table>")?;
    writeln!(h, "</section>")
}

fn glossary(h: &mut String) -> std::fmt::Result {
    writeln!(h, "<section id=\"outcomes-explained\">")?;
    writeln!(h, "<h2>What the outcomes mean</h2>")?;
    writeln!(
        h,
        "<table><thead><tr><th>Outcome</th><th>Key (JSON)</th><th>Meaning</th></tr></thead><tbody>"
    )?;
    for o in Outcome::ALL {
        writeln!(
            h,
            "<tr><td>{}{}</td><td><code>{}</code></td><td>{}</td></tr>",
            swatch(o),
            esc(o.label()),
            o.key(),
            esc(meaning(o))
        )?;
    }
    writeln!(h, "</tbody></table>")?;
    writeln!(h, "</section>")
}

/// The schedule ids of `rows`.
fn ids(rows: &Ids) -> Vec<String> {
    rows.iter().collect()
}

/// Schedule ids as `<code>`, the first few open and the rest in a `<details>`.
fn id_list(h: &mut String, ids: &[String]) -> std::fmt::Result {
    let code = |ids: &[String]| {
        ids.iter()
            .map(|i| format!("<code>{}</code>", esc(i)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if ids.len() <= OPEN_IDS {
        h.push_str(&code(ids));
    } else {
        write!(
            h,
            "<details><summary>{}</summary>{}</details>",
            plural(ids.len(), "row"),
            code(ids)
        )?;
    }
    Ok(())
}

fn swatch(o: Outcome) -> String {
    format!(
        "<span class=\"swatch\" style=\"background:{}\" aria-hidden=\"true\"></span>",
        colour(o)
    )
}

/// Text colour on a segment of outcome `o`.
fn ink(o: Outcome) -> &'static str {
    match o {
        Outcome::NotAttempted | Outcome::PassWithoutCompleteEvidence | Outcome::Skipped => {
            "#1f2328"
        }
        Outcome::VerifiedAfterRepair => "#1f2328",
        _ => "#ffffff",
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Escape text for HTML element content and double- or single-quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
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

    #[test]
    fn self_contained() {
        let html = render(&fixture::mixed());
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(html.trim_end().ends_with("</html>"));
        let lower = html.to_lowercase();
        for banned in [
            "<script", "<link", "@import", "url(", "src=", "http://", "https://",
        ] {
            let hits: Vec<_> = lower.match_indices(banned).collect();
            // The SVG namespace is an identifier, not a fetch.
            let hits = hits
                .iter()
                .filter(|(i, _)| !lower[..*i].ends_with("xmlns=\""))
                .count();
            assert_eq!(hits, 0, "{banned} in the page");
        }
    }

    #[test]
    fn counts_are_addressable() {
        let html = render(&fixture::mixed());
        assert!(html.contains("id=\"live-count-verified_delivery\" data-outcome=\"verified_delivery\" data-count=\"2\""));
        assert!(html.contains(
            "id=\"live-count-not_attempted\" data-outcome=\"not_attempted\" data-count=\"2\""
        ));
        assert!(html.contains("id=\"live-count-error\" data-outcome=\"error\" data-count=\"0\""));
        assert!(html.contains("id=\"fixture-count-verified_delivery\" data-outcome=\"verified_delivery\" data-count=\"1\""));
        assert!(html.contains("<section id=\"section-live\" data-section=\"live\" data-scheduled=\"6\" data-attempted=\"4\" data-blocked=\"true\">"));
        assert!(html.contains("data-blocked=\"false\">comparison not blocked</span>"));
        assert!(html.contains("<tr data-blocker=\"not attempted\" data-count=\"2\">"));
        assert!(html.contains("<span class=\"limit-over\" data-limit=\"over\" data-count=\"1\">"));
        // Chart: one segment per present outcome, widths summing to the bar.
        let segs = html.matches("<rect class=\"segment\"").count();
        assert_eq!(segs, 4 + 1);
        assert!(html.contains("<rect class=\"segment\" data-outcome=\"verified_delivery\" data-count=\"2\" x=\"0.0\" y=\"0\" width=\"333.3\""));
        assert!(html.contains("<desc id=\"live-chart-desc\">2 verified delivery, 1 native pass without complete evidence, 1 false completion, 2 not attempted</desc>"));
        assert!(html.contains("id=\"fixture-sentence\""));
        assert!(!html.contains("id=\"live-sentence\""));
        assert_eq!(html.matches("<tr data-schedule-id=").count(), 7);
    }

    #[test]
    fn a_state_not_admitted_opens_with_its_banner_escaped_in_every_format() {
        let mut r = fixture::mixed();
        assert!(!render(&r).contains("NOT ADMITTED"));
        r.admitted = false;
        r.refused = Some(vec![git_ledger_base::refusal::Reason::new("<b>*x*</b>")
            .rule(git_ledger_base::refusal::Rule::Admission(4))
            .at("commit c")]);
        let html = render(&r);
        let body = &html[html.find("<body").unwrap()..];
        let first = body.lines().nth(1).unwrap();
        assert!(first.starts_with("<p id=\"not-admitted\""), "{first}");
        assert!(first.contains("rule 4: &lt;b&gt;*x*&lt;/b&gt;"), "{first}");
        let mut md = Vec::new();
        crate::markdown::write(&r, &mut md).unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(md.starts_with("> [!CAUTION]\n> NOT ADMITTED"), "{md}");
        assert!(!md.lines().nth(1).unwrap().contains("<b>"), "{md}");
        let mut text = Vec::new();
        crate::text::write_text_color(&r, &mut text, false).unwrap();
        assert!(String::from_utf8(text)
            .unwrap()
            .starts_with("NOT ADMITTED: verify refuses"));
    }

    #[test]
    fn escapes_everything() {
        let html = render(&fixture::mixed());
        assert!(!html.contains("<b>"));
        assert!(html.contains("<code id=\"declaration-id\">camp|&lt;b&gt;_x_&lt;/b&gt;</code>"));
        assert!(html.contains("campaign &lt;x&gt; &amp; *y*"));
        assert_eq!(esc("\"'<>&"), "&quot;&#39;&lt;&gt;&amp;");
    }

    #[test]
    fn deterministic() {
        let r = fixture::mixed();
        assert_eq!(render(&r), render(&r.clone()));
    }
}
