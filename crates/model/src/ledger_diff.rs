//! What changed between two ledger states (`docs/guide/06-history.md`): the rows that differ with
//! their native and portfolio outcome before and after and a unified diff of the row JSON, the
//! change of every portfolio count per section (computed from the changed rows only), and whether B
//! follows A by admitted steps. Built as one serde structure; the text form renders the same data,
//! readable at any size (docs/reference/workflow.md, rule 9): a summary first (the counts, one line
//! per changed row), then per-field diffs only with `--full` or for at most [`DETAIL_ROWS`] rows, a
//! field changed the same way in every changed row shown once.

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
    /// The row's fields that differ, in `attempt_fields` order (what the text and HTML forms
    /// show; `diff` has it all for `--json`).
    #[serde(skip)]
    pub fields: Vec<FieldChange>,
}

/// One field of a row that differs: its value before and after.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    pub field: String,
    pub before: serde_json::Value,
    pub after: serde_json::Value,
}

impl FieldChange {
    /// Whether the value is a list or an object on either side (shown as a diff of its
    /// lines, and shown once when every changed row changes it the same way).
    fn is_structured(&self) -> bool {
        [&self.before, &self.after]
            .iter()
            .any(|v| v.is_array() || v.is_object())
    }

    /// The change as lines for a person: `field: before -> after` for two scalars, else
    /// `field:` and the unified diff of the two values' JSON lines (hunks only, no file
    /// headers), each line indented by two spaces.
    pub fn lines(&self) -> Vec<String> {
        let json = |v: &serde_json::Value| {
            String::from_utf8_lossy(&crate::json::canonical(v)).into_owned()
        };
        if !self.is_structured() {
            let one = |v: &serde_json::Value| json(v).trim_end().to_owned();
            return vec![format!(
                "{}: {} -> {}",
                self.field,
                one(&self.before),
                one(&self.after)
            )];
        }
        let (a, b) = (json(&self.before), json(&self.after));
        let mut out = vec![format!("{}:", self.field)];
        let diff = similar::TextDiff::from_lines(&a, &b);
        for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
            out.push(format!("  {}", hunk.header()));
            for change in hunk.iter_changes() {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                out.push(format!("  {sign}{}", change.value().trim_end_matches('\n')));
            }
        }
        out
    }
}

/// Above this many changed rows the text and HTML forms show the summary alone, unless
/// `--full` (docs/reference/workflow.md, rule 9).
pub const DETAIL_ROWS: usize = 20;

/// What the text and HTML forms show below the summary: whether the per-field diffs are shown,
/// and the fields changed identically in every changed row (a list or an object, such as a
/// dependency freeze), each shown once instead of per row.
pub struct Details<'a> {
    pub shown: bool,
    pub shared: Vec<&'a FieldChange>,
}

impl Details<'_> {
    /// Whether `field` of a row is shown once, above the rows.
    pub fn is_shared(&self, field: &str) -> bool {
        self.shared.iter().any(|f| f.field == field)
    }
}

/// The details of `d` a person sees: every row's per-field diff with `full`, or when at most
/// [`DETAIL_ROWS`] rows differ.
pub fn details(d: &LedgerDiff, full: bool) -> Details<'_> {
    let shown = full || d.rows.len() <= DETAIL_ROWS;
    let mut shared = Vec::new();
    if let [first, rest @ ..] = d.rows.as_slice() {
        if !rest.is_empty() {
            for f in first.fields.iter().filter(|f| f.is_structured()) {
                if rest.iter().all(|r| r.fields.contains(f)) {
                    shared.push(f);
                }
            }
        }
    }
    Details { shown, shared }
}

/// Whether B follows A by admitted steps.
#[derive(Debug, Clone, Serialize)]
pub struct Follows {
    pub follows: bool,
    /// How many admitted commits lead from A to B (when it follows; 1 for two files).
    pub steps: Option<usize>,
    /// Why not (when it does not): every reason, as a value.
    pub why_not: Vec<crate::refusal::Reason>,
}

/// Whether each side is a ledger state `verify` admits (two ledger files: both are, judged by
/// their own checks when read).
#[derive(Debug, Clone, Serialize)]
pub struct SidesAdmitted {
    pub a: bool,
    pub b: bool,
    /// For each side that is not: the side, its revision and `verify`'s reasons.
    pub refused: Vec<SideRefused>,
}

/// One side of a diff that `verify` does not admit.
#[derive(Debug, Clone, Serialize)]
pub struct SideRefused {
    /// `A` or `B`.
    pub side: &'static str,
    /// The revision the side was named by.
    pub rev: String,
    /// Every reason `verify` gives, as values.
    pub reasons: Vec<crate::refusal::Reason>,
}

impl std::fmt::Display for SideRefused {
    /// The line the text and HTML forms show: `<side> (<rev>) is not admitted: <verify's first
    /// reason>` (every reason is in the JSON).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}) is not admitted", self.side, self.rev)?;
        match self.reasons.first() {
            Some(first) => write!(f, ": {first}"),
            None => Ok(()),
        }
    }
}

impl SidesAdmitted {
    /// Both sides admitted.
    pub fn both() -> Self {
        SidesAdmitted {
            a: true,
            b: true,
            refused: Vec::new(),
        }
    }
}

/// The whole diff (`--json` prints exactly this).
#[derive(Debug, Clone, Serialize)]
pub struct LedgerDiff {
    /// Whether A and B are admitted states: a diff is shown either way, and says so.
    pub admitted: SidesAdmitted,
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
    use crate::admission::{admit, Kind, LedgerChange, RowsState};
    let whole = LedgerChange::between(decl, a, b);
    let mut state = a.rows.clone();
    let (mut steps, mut reasons) = (0, Vec::new());
    // Each row's step is the kind admission gives its change.
    for k in [Kind::Repairs, Kind::Hand, Kind::Imported] {
        let rows: Vec<_> = whole
            .rows
            .iter()
            .filter(|e| Kind::of(&e.before, &e.after) == k)
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
    let (va, vb) = (before.to_value(), after.to_value());
    let fields = decl
        .attempt_fields
        .iter()
        .filter_map(|f| {
            let (x, y) = (
                va.get(f).cloned().unwrap_or_default(),
                vb.get(f).cloned().unwrap_or_default(),
            );
            (x != y).then(|| FieldChange {
                field: f.clone(),
                before: x,
                after: y,
            })
        })
        .collect();
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
        fields,
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

/// The diff as text for a terminal: the summary (the counts per section, one line per
/// changed row, other changed paths, whether B follows A), then the per-field diffs when
/// [`details`] shows them (`full`, or at most [`DETAIL_ROWS`] rows).
pub fn write_text(d: &LedgerDiff, full: bool, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "ledger {} (sha256 {}): {} -> {}",
        d.declaration.id,
        &d.declaration.sha256[..d.declaration.sha256.len().min(12)],
        d.a,
        d.b
    )?;
    for why in &d.admitted.refused {
        writeln!(out, "NOT ADMITTED: {why}")?;
    }
    if d.rows.is_empty() {
        writeln!(out, "no row differs")?;
    } else {
        writeln!(out, "{}", rows_differ(d))?;
    }
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
    let width = d
        .rows
        .iter()
        .map(|r| r.schedule_id.len())
        .max()
        .unwrap_or(0);
    for r in &d.rows {
        writeln!(out, "  {:<width$}  {}", r.schedule_id, before_after(r))?;
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
    let details = details(d, full);
    if !details.shown {
        writeln!(
            out,
            "\n(per-field diffs of the {} rows: git ledger diff --full; every line: --json)",
            d.rows.len()
        )?;
        return Ok(());
    }
    if !details.shared.is_empty() {
        writeln!(
            out,
            "\nthe same change in all {} rows (shown once):",
            d.rows.len()
        )?;
        for f in &details.shared {
            for line in f.lines() {
                writeln!(out, "  {line}")?;
            }
        }
    }
    for r in &d.rows {
        writeln!(
            out,
            "\nrow {} ({}): {}",
            r.schedule_id,
            r.section,
            before_after(r)
        )?;
        for f in r.fields.iter().filter(|f| !details.is_shared(&f.field)) {
            for line in f.lines() {
                writeln!(out, "  {line}")?;
            }
        }
        if !details.shared.is_empty() {
            let names: Vec<&str> = details.shared.iter().map(|f| f.field.as_str()).collect();
            writeln!(out, "  ({}: as above)", names.join(", "))?;
        }
    }
    Ok(())
}

/// `N rows differ (live n, fixture m)`: how many rows changed, per section.
pub fn rows_differ(d: &LedgerDiff) -> String {
    let n = d.rows.len();
    let per: Vec<String> = ["live", "fixture"]
        .iter()
        .map(|s| (s, d.rows.iter().filter(|r| r.section == *s).count()))
        .filter(|(_, k)| *k > 0)
        .map(|(s, k)| format!("{s} {k}"))
        .collect();
    format!(
        "{n} row{} differ{} ({})",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
        per.join(", ")
    )
}

/// `DEFERRED (not attempted) -> PASS (verified delivery)`.
pub fn before_after(r: &RowDiff) -> String {
    format!(
        "{} ({}) -> {} ({})",
        r.before.native_outcome,
        label(r.before.outcome),
        r.after.native_outcome,
        label(r.after.outcome)
    )
}
