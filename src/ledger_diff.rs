//! What changed between two ledger states (`docs/guide/06-history.md`): the rows that
//! differ with their native and portfolio outcome before and after and a unified diff of the
//! row JSON, the change of every portfolio count per section (computed from the changed rows
//! only), and whether B follows A by admitted steps. Built as one serde structure; the text
//! form renders the same data.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::declaration::Declaration;
use crate::ledger::Row;
use crate::portfolio::{classify, Outcome};

/// One side of a changed row.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub native_outcome: String,
    /// Portfolio outcome key.
    pub outcome: &'static str,
}

/// One row that differs.
#[derive(Debug, Clone, Serialize)]
pub struct RowDiff {
    pub schedule_id: String,
    pub section: &'static str,
    pub before: Side,
    pub after: Side,
    /// Unified diff of the row files.
    pub diff: String,
}

/// Whether B follows A by admitted steps.
#[derive(Debug, Clone, Serialize)]
pub struct Follows {
    pub follows: bool,
    /// How many admitted commits lead from A to B (when it follows; 1 for two files).
    pub steps: Option<usize>,
    /// Why not (when it does not).
    pub why_not: Vec<String>,
}

/// The whole diff (`--json` prints exactly this).
#[derive(Debug, Clone, Serialize)]
pub struct LedgerDiff {
    pub declaration: crate::report::DeclarationRef,
    pub a: String,
    pub b: String,
    pub rows: Vec<RowDiff>,
    /// Per section, every outcome key with the change of its count (0 where none).
    pub counts: BTreeMap<&'static str, BTreeMap<&'static str, i64>>,
    /// Changed paths that are not rows or new record files (a ledger tampered with).
    pub other_paths: Vec<String>,
    pub follows: Follows,
}

/// Whether ledger file B follows ledger file A by admitted steps: the rows that differ reduced
/// to changes (as `pre-commit` reduces them), one per kind of step (repairs, hand-written
/// fills, imported fills, in that order), each decided by [`crate::admission::admit`] against
/// the state before it. `Ok` with the number of steps; the reasons as values, before they
/// become text.
pub fn files_verdict(
    decl: &Declaration,
    a: &crate::ledger::Ledger,
    b: &crate::ledger::Ledger,
) -> crate::Result<Result<usize, Vec<crate::refusal::Reason>>> {
    use crate::admission::{admit, LedgerChange, RowsState};
    let whole = LedgerChange::between(decl, a, b);
    let kind = |e: &crate::admission::RowEdit| match e.after.native_record() {
        _ if !e.before.is_deferred() => 0,
        Some(r) if r.kind == "hand" => 1,
        _ => 2,
    };
    let mut state = a.rows.clone();
    let (mut steps, mut reasons) = (0, Vec::new());
    for k in 0..3 {
        let rows: Vec<_> = whole
            .rows
            .iter()
            .filter(|e| kind(e) == k)
            .cloned()
            .collect();
        if rows.is_empty() {
            continue;
        }
        let step = LedgerChange {
            rows,
            ..whole.clone()
        };
        match admit(decl, &step, &mut RowsState(&state))? {
            Ok(_) => steps += 1,
            Err(r) => {
                reasons.extend(r.into_vec());
                continue; // the next step follows the state before a refused one
            }
        }
        for e in &step.rows {
            if let Some(i) = decl.schedule_position(e.after.schedule_id()) {
                state[i] = e.after.clone();
            }
        }
    }
    Ok(if reasons.is_empty() {
        Ok(steps)
    } else {
        Err(reasons)
    })
}

/// The diff of one row, `before` → `after`, with the row files named `a_name` and `b_name`.
pub fn row_diff(
    decl: &Declaration,
    before: &Row,
    after: &Row,
    a_name: &str,
    b_name: &str,
) -> RowDiff {
    let (ba, bb) = (before.canonical(decl), after.canonical(decl));
    let (ta, tb) = (
        String::from_utf8_lossy(&ba).into_owned(),
        String::from_utf8_lossy(&bb).into_owned(),
    );
    let diff = similar::TextDiff::from_lines(&ta, &tb)
        .unified_diff()
        .context_radius(3)
        .header(a_name, b_name)
        .to_string();
    RowDiff {
        schedule_id: after.schedule_id().to_owned(),
        section: after.evidence().as_str(),
        before: Side {
            native_outcome: before.native_outcome().to_owned(),
            outcome: classify(decl, before).outcome.key(),
        },
        after: Side {
            native_outcome: after.native_outcome().to_owned(),
            outcome: classify(decl, after).outcome.key(),
        },
        diff,
    }
}

/// The change of every portfolio count per section, from the changed rows only.
pub fn count_changes(rows: &[RowDiff]) -> BTreeMap<&'static str, BTreeMap<&'static str, i64>> {
    let mut out: BTreeMap<&'static str, BTreeMap<&'static str, i64>> = BTreeMap::new();
    for section in ["live", "fixture"] {
        out.insert(section, Outcome::ALL.iter().map(|o| (o.key(), 0)).collect());
    }
    for r in rows {
        let s = out.entry(r.section).or_default();
        *s.entry(r.before.outcome).or_default() -= 1;
        *s.entry(r.after.outcome).or_default() += 1;
    }
    out
}

fn label(key: &str) -> String {
    Outcome::ALL
        .iter()
        .find(|o| o.key() == key)
        .map(|o| o.label().to_lowercase())
        .unwrap_or_else(|| key.to_owned())
}

/// The diff as JSON (canonical bytes).
pub fn write_json(d: &LedgerDiff, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(&crate::json::canonical(d))
}

/// The diff as text for a terminal.
pub fn write_text(d: &LedgerDiff, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "ledger {} (sha256 {}): {} -> {}",
        d.declaration.id,
        &d.declaration.sha256[..d.declaration.sha256.len().min(12)],
        d.a,
        d.b
    )?;
    if d.rows.is_empty() {
        writeln!(out, "no row differs")?;
    }
    for r in &d.rows {
        writeln!(
            out,
            "\nrow {} ({}): {} ({}) -> {} ({})",
            r.schedule_id,
            r.section,
            r.before.native_outcome,
            label(r.before.outcome),
            r.after.native_outcome,
            label(r.after.outcome)
        )?;
        out.write_all(r.diff.as_bytes())?;
    }
    writeln!(out)?;
    for (section, counts) in &d.counts {
        let changed: Vec<String> = counts
            .iter()
            .filter(|(_, v)| **v != 0)
            .map(|(k, v)| format!("{k} {v:+}"))
            .collect();
        if changed.is_empty() {
            writeln!(out, "counts ({section}): no change")?;
        } else {
            writeln!(out, "counts ({section}): {}", changed.join(", "))?;
        }
    }
    for p in &d.other_paths {
        writeln!(out, "other change: {p}")?;
    }
    match (&d.follows.follows, d.follows.steps) {
        (true, Some(n)) => writeln!(
            out,
            "B follows A by {n} admitted step{}",
            if n == 1 { "" } else { "s" }
        )?,
        (true, None) => writeln!(out, "B follows A by admitted steps")?,
        (false, _) => {
            writeln!(out, "B does not follow A by admitted steps:")?;
            for w in &d.follows.why_not {
                writeln!(out, "  {w}")?;
            }
        }
    }
    Ok(())
}
