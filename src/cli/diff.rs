//! `git-ledger diff <REV-A> <REV-B>` (and `--files A.json B.json DECLARATION`): the rows that
//! differ, the change of every portfolio count per section, and whether B follows A. In ref
//! mode the trees are compared skipping unchanged subtrees, so the cost follows the changed
//! rows.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::git::layout;
use crate::git::objects::is_regular;
use crate::ledger::Ledger;
use crate::ledger_diff::{self, Follows, LedgerDiff};
use crate::report::DeclarationRef;

/// How `diff` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// Readable text with a unified diff per changed row.
    Text,
    /// One JSON object (the same as --json).
    Json,
    /// One self-contained HTML page (inline CSS, no scripts, no network).
    Html,
}

/// What changed between two ledger states, and whether B follows A by admitted steps.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// Ledger state A: a revision (ref, commit id, REF~N), or a ledger file with --files.
    pub a: String,
    /// Ledger state B.
    pub b: String,
    /// With --files: the declaration both ledger files follow.
    pub declaration: Option<PathBuf>,
    /// Compare two ledger files instead of two commits.
    #[arg(long)]
    pub files: bool,
    /// Print the diff as one JSON object (same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format: text, json, or html (one self-contained page: `> diff.html`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputOpts,
}

impl DiffArgs {
    /// The format asked for (`--json` is `--format json`).
    pub fn format(&self) -> DiffFormat {
        if self.json {
            DiffFormat::Json
        } else {
            self.format
        }
    }
}

pub fn run(args: DiffArgs, io: &mut Io) -> Result<i32> {
    let d = match (args.files, &args.declaration) {
        (true, Some(decl)) => files(&args, decl)?,
        (true, None) => {
            return Err(Error::Usage(
                "diff --files needs <A.json> <B.json> <DECLARATION>".into(),
            ))
        }
        (false, Some(_)) => {
            return Err(Error::Usage(
                "diff takes two revisions (or --files A.json B.json DECLARATION)".into(),
            ))
        }
        (false, None) => commits(&args)?,
    };
    match args.format() {
        DiffFormat::Json => ledger_diff::write_json(&d, io.out)?,
        DiffFormat::Text => ledger_diff::write_text(&d, io.out)?,
        DiffFormat::Html => crate::render::html_diff::write(&d, io.out)?,
    }
    Ok(0)
}

fn files(args: &DiffArgs, decl_path: &std::path::Path) -> Result<LedgerDiff> {
    let max = args.input.max_input_bytes;
    let decl = Declaration::read(decl_path, max)?;
    let a = Ledger::read(&decl, std::path::Path::new(&args.a), max)?;
    // B may break "one record, one row" only as a change of A (rule 5, in why_not).
    let b = Ledger::read_for_change(&decl, std::path::Path::new(&args.b), max)?;
    let (steps, why_not) = match ledger_diff::files_verdict(&decl, &a, &b)? {
        Ok(n) => (n, Vec::new()),
        Err(r) => (
            0,
            r.into_iter().map(|r| r.at(&args.b).to_string()).collect(),
        ),
    };
    let mut rows = Vec::new();
    for e in crate::admission::LedgerChange::between(&decl, &a, &b).rows {
        let path = layout::row_path(e.before.schedule_id());
        rows.push(ledger_diff::row_diff(
            &decl,
            &e.before,
            &e.after,
            &format!("a/{path}"),
            &format!("b/{path}"),
        ));
    }
    Ok(LedgerDiff {
        declaration: DeclarationRef {
            id: decl.id.clone(),
            sha256: decl.sha256.clone(),
        },
        a: args.a.clone(),
        b: args.b.clone(),
        counts: ledger_diff::count_changes(&rows),
        rows,
        other_paths: Vec::new(),
        follows: Follows {
            follows: why_not.is_empty(),
            steps: why_not.is_empty().then_some(steps),
            why_not,
        },
    })
}

fn commits(args: &DiffArgs) -> Result<LedgerDiff> {
    let max = args.input.max_input_bytes;
    let repo = crate::git::open(args.repo.as_deref())?;
    let a = super::show::ledger_commit(&repo, Some(&args.a), None)?;
    let b = super::show::ledger_commit(&repo, Some(&args.b), None)?;
    let ia = crate::git::objects::read_commit(&repo, a)?;
    let ib = crate::git::objects::read_commit(&repo, b)?;
    // A verdict (whether B follows A): the declaration from its blob, never from the cache.
    let mut admission = crate::git::admit::Admission::new(&repo, max).without_cache();
    let ka =
        crate::git::store::declaration_at(&mut admission, &repo, ia.tree, &format!("commit {a}"))?;
    let kb =
        crate::git::store::declaration_at(&mut admission, &repo, ib.tree, &format!("commit {b}"))?;
    if ka.blob != kb.blob {
        return Err(Error::refused(format!(
            "{} and {} hold different declarations ({} and {}); diff compares states of one ledger",
            args.a, args.b, ka.decl.id, kb.decl.id
        )));
    }
    let decl = &ka.decl;
    let mut state = Default::default();
    let changes = crate::git::admit::tree_changes(&repo, &mut state, ia.tree, ib.tree)?;
    let mut rows = Vec::new();
    let mut other = Vec::new();
    let mut reasons = Vec::new();
    for crate::git::admit::TreeChange { path, old, new } in changes {
        let path = String::from_utf8_lossy(&path).into_owned();
        if old.is_some_and(|(m, _)| m.is_tree()) || new.is_some_and(|(m, _)| m.is_tree()) {
            continue;
        }
        let sid = layout::schedule_id_of(&path).filter(|s| decl.schedule_position(s).is_some());
        match (sid, old, new) {
            // A row file must be a regular file: never read a symlink's target text or a
            // submodule's commit id as the row.
            (Some(sid), Some((ma, _)), Some((mb, _))) if !is_regular(ma) || !is_regular(mb) => {
                for (m, at) in [(ma, a), (mb, b)] {
                    if !is_regular(m) {
                        reasons.push(format!(
                            "commit {at}: row {sid}: {path} has mode {}; every entry is a regular file (100644)",
                            crate::git::objects::describe_mode(m)
                        ));
                    }
                }
            }
            (Some(sid), Some((_, oa)), Some((_, ob))) => {
                let ra =
                    crate::git::admit::read_row(&repo, decl, oa, sid, max, &format!("commit {a}"));
                let rb =
                    crate::git::admit::read_row(&repo, decl, ob, sid, max, &format!("commit {b}"));
                match (ra, rb) {
                    (Ok(ra), Ok(rb)) => rows.push(ledger_diff::row_diff(
                        decl,
                        &ra,
                        &rb,
                        &format!("a/{path}"),
                        &format!("b/{path}"),
                    )),
                    (ra, rb) => {
                        reasons.extend(ra.err().unwrap_or_default());
                        reasons.extend(rb.err().unwrap_or_default());
                    }
                }
            }
            // A scheduled row missing on one side (removed, or a tree in its place): that
            // side is not a ledger state; say so rather than report "no row differs".
            (Some(sid), None, Some(_)) | (Some(sid), Some(_), None) => {
                let at = if old.is_none() { a } else { b };
                reasons.push(format!(
                    "commit {at}: row {sid} is missing ({path} is not a file there)"
                ));
            }
            _ if old.is_none() && layout::is_record_path(&path) => {}
            _ => other.push(format!(
                "{path} {}",
                match (old, new) {
                    (None, _) => "added",
                    (_, None) => "removed",
                    _ => "changed",
                }
            )),
        }
    }
    if !reasons.is_empty() {
        return Err(Error::refusal(reasons));
    }
    rows.sort_by_key(|r| decl.schedule_position(&r.schedule_id));
    let follows = match admission.follows(a, b)? {
        Ok(n) => Follows {
            follows: true,
            steps: Some(n),
            why_not: Vec::new(),
        },
        Err(why) => Follows {
            follows: false,
            steps: None,
            why_not: why,
        },
    };
    Ok(LedgerDiff {
        declaration: DeclarationRef {
            id: decl.id.clone(),
            sha256: decl.sha256.clone(),
        },
        a: args.a.clone(),
        b: args.b.clone(),
        counts: ledger_diff::count_changes(&rows),
        rows,
        other_paths: other,
        follows,
    })
}
