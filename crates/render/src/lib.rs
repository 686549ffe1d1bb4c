//! Renderings of a [`Report`](crate::report::Report): text for a terminal, Markdown for a
//! pull-request or issue comment, one self-contained HTML page for a reviewer.
//! Every renderer takes the report as built by [`report::build`](crate::report::build) and
//! recomputes nothing; the same report gives the same bytes.

// The model's modules, named as the crate's own (`crate::report`, …).
use git_ledger_model::{ledger_diff, portfolio, report};

pub mod html;
pub mod html_diff;
pub mod markdown;
pub mod text;

use crate::portfolio::Outcome;
use crate::report::{Blockers, Ids, LedgerState, Report, Section};

/// The banner a report of a ledger state that is not admitted opens with (only under
/// `--unverified`), the same words in every format; `None` for an admitted state.
pub fn not_admitted(report: &Report) -> Option<String> {
    (!report.admitted).then(|| {
        format!(
            "NOT ADMITTED: verify refuses this ledger state ({}); it is shown only because --unverified was given, and nothing below is an admitted result",
            (report.refused.as_deref().and_then(<[_]>::first))
                .map_or_else(|| "no reason recorded".to_owned(), ToString::to_string)
        )
    })
}

/// The order sections are shown in (live first; never pooled).
pub const SECTION_ORDER: [&str; 2] = ["live", "fixture"];

/// How an outcome reads to a reviewer, for colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// A verified delivery or an appropriate stop.
    Good,
    /// Not judged or not complete: needs a look, not a failure.
    Open,
    /// A failure of the attempt.
    Bad,
}

/// The outcome whose JSON key is `key`.
pub fn outcome(key: &str) -> Option<Outcome> {
    Outcome::from_key(key)
}

/// The label of an outcome key (the key itself if it is unknown).
pub fn label(key: &'static str) -> &'static str {
    outcome(key).map_or(key, Outcome::label)
}

/// How an outcome reads.
pub fn tone(o: Outcome) -> Tone {
    match o {
        Outcome::VerifiedDelivery | Outcome::VerifiedAfterRepair | Outcome::AppropriateStop => {
            Tone::Good
        }
        Outcome::FalseCompletion | Outcome::EndedWithoutCompleting | Outcome::Error => Tone::Bad,
        _ => Tone::Open,
    }
}

/// A chart colour per outcome (distinct hues, dark enough for white text where it matters).
pub fn colour(o: Outcome) -> &'static str {
    match o {
        Outcome::VerifiedDelivery => "#1a7f37",
        Outcome::VerifiedAfterRepair => "#4ac26b",
        Outcome::AppropriateStop => "#0969da",
        Outcome::PassWithoutCompleteEvidence => "#d4a72c",
        Outcome::FalseCompletion => "#cf222e",
        Outcome::StoppedUnestablished => "#8250df",
        Outcome::EndedWithoutCompleting => "#e16f24",
        Outcome::Error => "#82071e",
        Outcome::Skipped => "#8c959f",
        Outcome::Ungraded => "#bf3989",
        Outcome::NotAttempted => "#d0d7de",
    }
}

/// Blockers grouped by reason, reasons in order of first appearance, rows in report order.
pub fn group_blockers(blockers: &Blockers) -> Vec<(&str, Vec<String>)> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for b in blockers.iter() {
        match groups.iter_mut().find(|(why, _)| *why == b.why) {
            Some((_, rows)) => rows.push(b.schedule_id),
            None => groups.push((b.why, vec![b.schedule_id])),
        }
    }
    groups
}

/// The outcomes of a section with a non-zero count, in the table's order.
pub fn present(s: &Section) -> impl Iterator<Item = (Outcome, usize)> + '_ {
    Outcome::ALL
        .iter()
        .map(|o| (*o, s.outcomes.get(o.key()).map_or(0, |c| c.count)))
        .filter(|(_, n)| *n > 0)
}

/// The lines that name a report's ledger state, as `(name, value)`, the same in every format:
/// in ref mode the ref, the commit and its `Ledger-Filled` count, then the citation; in file
/// mode the ledger file's SHA-256.
pub fn state_lines(state: &LedgerState) -> Vec<(&'static str, String)> {
    match state {
        LedgerState::Ref {
            citation,
            commit,
            filled,
            ledger_ref,
            ..
        } => vec![
            (
                "Ledger ref",
                ledger_ref
                    .clone()
                    .unwrap_or_else(|| "none: the commit is on no ledger ref's history".to_owned()),
            ),
            ("Ledger commit", commit.clone()),
            (
                "Ledger-Filled",
                filled.map_or("not stated by the commit".to_owned(), |k| k.to_string()),
            ),
            ("Cite as", citation.clone()),
        ],
        LedgerState::File { sha256, .. } => vec![("Ledger file sha256", sha256.clone())],
    }
}

/// An amount in USD with two decimals.
pub fn usd(v: f64) -> String {
    format!("{v:.2}")
}

/// `n thing` or `n things`.
pub fn plural(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// How many rows block a section's comparison (each schedule id once).
pub fn blocked_rows(s: &Section) -> usize {
    s.comparison.blocked_rows()
}

/// What blocks a section, counted in both units, the same in every format: `17 rows, 20
/// reasons` (a row may block for several reasons).
pub fn blocked_counts(s: &Section) -> String {
    format!(
        "{}, {}",
        plural(blocked_rows(s), "row"),
        plural(s.comparison.blockers.len(), "reason")
    )
}

/// Interventions counted with the rows that carry them, the same in every format: `6 in 5
/// rows`, or `0`.
pub fn interventions(n: usize, rows: &Ids) -> String {
    if n == 0 {
        "0".to_owned()
    } else {
        format!("{n} in {}", plural(rows.len(), "row"))
    }
}

/// The section's total cost as a phrase: `12.30 USD`, or unknown with the known subtotal.
pub fn total_cost(s: &Section) -> String {
    match s.cost.total_usd {
        Some(t) => format!("{} USD", usd(t)),
        None => format!(
            "unknown ({} unpriced; {} USD known)",
            plural(s.cost.unpriced, "attempt"),
            usd(s.cost.known_usd)
        ),
    }
}

/// The cost per verified delivery as a phrase.
pub fn cost_per_verified(s: &Section) -> String {
    s.cost_per_verified_delivery_usd
        .map_or("not established".to_owned(), |c| format!("{} USD", usd(c)))
}

#[cfg(test)]
pub(crate) mod fixture;

/// What an outcome means, in one line (from `ledger.md`), for a reader new to the report.
pub fn meaning(o: Outcome) -> &'static str {
    match o {
        Outcome::VerifiedDelivery => {
            "native PASS at a completion status with complete evidence, no human repair"
        }
        Outcome::VerifiedAfterRepair => "the same, but a person repaired the work at least once",
        Outcome::AppropriateStop => {
            "native PASS at a stop status on a task that expects the agent to stop"
        }
        Outcome::PassWithoutCompleteEvidence => {
            "any other native PASS: each gap that keeps it from verified is named"
        }
        Outcome::FalseCompletion => {
            "the agent claimed completion that the oracle refuted (FALSE_COMPLETE)"
        }
        Outcome::StoppedUnestablished => {
            "the agent stopped, and whether stopping was right is not established"
        }
        Outcome::EndedWithoutCompleting => {
            "the attempt ended without completing or stopping (FAIL)"
        }
        Outcome::Error => "the harness reported an error (ERROR)",
        Outcome::Skipped => "the attempt was skipped or never reached",
        Outcome::Ungraded => "no verdict yet (running, interrupted or pending grading)",
        Outcome::NotAttempted => "the row is still DEFERRED: nothing ran",
    }
}

#[cfg(test)]
mod report_tests;

#[cfg(test)]
mod tests {
    use super::fixture;
    use crate::report::LedgerState;

    fn all_formats(r: &crate::report::Report) -> [String; 3] {
        let (mut t, mut m, mut h) = (Vec::new(), Vec::new(), Vec::new());
        super::text::write_text(r, &mut t).unwrap();
        super::markdown::write(r, &mut m).unwrap();
        super::html::write(r, &mut h).unwrap();
        [t, m, h].map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn every_format_names_the_ledger_state_and_the_citation() {
        let mut r = fixture::mixed();
        let commit = "c0".repeat(20);
        let [text, md, html] = all_formats(&r);
        assert!(text.contains("\nLedger ref refs/ledgers/camp|<b>_x_</b>\n"));
        assert!(text.contains(&format!("\nLedger commit {commit}\nLedger-Filled 5\n")));
        assert!(text.contains(&format!("\nCite as camp|<b>_x_</b>@{commit}\n")));
        assert!(md.contains(&format!("\n- Ledger commit: `{commit}`\n")));
        assert!(md.contains(&format!("\n- Cite as: `camp|<b>_x_</b>@{commit}`\n")));
        assert!(md.contains("\n- Ledger-Filled: `5`\n"));
        assert!(html.contains(&format!(
            "<dt>Cite as</dt><dd><code class=\"hash\" id=\"cite-as\">camp|&lt;b&gt;_x_&lt;/b&gt;@{commit}</code></dd>"
        )));
        assert!(html.contains(&format!(
            "data-citation=\"camp|&lt;b&gt;_x_&lt;/b&gt;@{commit}\""
        )));
        // Counts name their unit, the same in every format.
        assert!(text.contains("  Comparison                  BLOCKED (4 rows, 5 reasons)\n"));
        assert!(text.contains("  Decisions                   1 in 1 row (t/b)\n"));
        assert!(md.contains("comparison **blocked** (4 rows, 5 reasons)\n"));
        assert!(md.contains("- Decisions: 1 in 1 row (`t/b`); repairs: 0\n"));
        assert!(html.contains(
            "data-rows=\"4\" data-reasons=\"5\">comparison blocked: 4 rows, 5 reasons</span>"
        ));
        assert!(html.contains("data-count=\"1\" data-rows=\"1\">1 in 1 row"));
        // File mode: the file's SHA-256, and no citation.
        r.ledger = LedgerState::file("ef".repeat(32));
        let [text, md, html] = all_formats(&r);
        for out in [&text, &md, &html] {
            assert!(out.contains(&"ef".repeat(32)));
            assert!(!out.contains("Cite as"), "{out}");
        }
        assert!(text.contains(&format!("\nLedger file sha256 {}\n", "ef".repeat(32))));
        assert!(!html.contains("data-citation"));
    }
}
