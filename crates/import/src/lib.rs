//! Native harness records, read strictly, before they become ledger rows.
//!
//! [`scenario`] reads a scenario run's `result.json`, [`arena`] reads one attempt from an Arena
//! store, and [`options`] derives the models, efforts and option deviations from the options a
//! harness forwarded. This module holds what they share: the evidence class a mode implies, the
//! oracle check shape, the reason rule and how evidence paths are written.

// The lower crates' modules, named as the crate's own (`crate::declaration`, `crate::store`, …).
use git_ledger_base::{civil, error, json, refusal};
#[cfg(test)]
use git_ledger_model::testutil;
use git_ledger_model::{declaration, ledger, portfolio};
use git_ledger_store::{git, store, write};

pub mod arena;
pub mod batch;
pub mod call;
pub mod harbor;
pub mod inspect;
pub mod options;
pub mod rows;
pub mod runtime;
pub mod scenario;
mod sniff;
pub mod store_builder;

pub use arena::{open_store, open_store_with, read_attempt, ArenaAttempt, ArenaCase, ArenaStore};
pub use options::{analyse, parse_flags, DeclaredProfile, Flag, OptionsAnalysis, RoleSpec};
pub use scenario::{load, ScenarioRecord};
pub use store_builder::build_store_from_sql;

use serde::Serialize;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

pub use crate::declaration::Evidence;

/// The evidence class a harness mode implies: `live` is live; `fake` or any mode containing
/// `-hybrid` is fixture; every other mode is refused.
pub fn evidence_for_mode(mode: &str) -> Result<Evidence> {
    if mode == "live" {
        Ok(Evidence::Live)
    } else if mode == "fake" || mode.contains("-hybrid") {
        Ok(Evidence::Fixture)
    } else {
        Err(Error::refused(format!(
            "mode {mode:?} is not one the import knows (live, fake, or a mode containing -hybrid)"
        )))
    }
}

/// One oracle check as a record lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// The check's name (e.g. a test id).
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
}

impl Check {
    /// The check as the row writes it: `{"name": …, "ok": …}`.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::json!({ "name": self.name, "ok": self.ok })
    }
}

/// Refuse a non-PASS record that carries no reason (null, empty or only whitespace): the import
/// never invents one, the evaluator writes such a row with `put`.
pub fn check_reason(record: &str, verdict: &str, reason: Option<&str>) -> Result<()> {
    if verdict == "PASS" || reason.is_some_and(|r| !r.trim().is_empty()) {
        return Ok(());
    }
    Err(Error::refused_with_hint(
        crate::refusal::Reason::new(format!(
            "native outcome {verdict} has no reason; the import never invents one"
        ))
        .at(record),
        "write this row by hand with `git ledger put <ID> <ROW.json>`, stating the reason",
    ))
}

pub use crate::declaration::is_full_commit as is_full_commit_id;
pub use git_ledger_base::sha256_hex;

/// Write an evidence path for a row: repository-relative with `/` separators when it lies inside
/// `repo_root`, else exactly as given. "Inside" is decided first on the lexically normalised
/// absolute paths (so a symlink inside the repository stays a repository path), then on the
/// canonical paths (so a root reached through a symlink still matches). The path itself never
/// needs to exist.
pub fn relative_to_repo(path: &Path, repo_root: Option<&Path>) -> String {
    let as_given = || path.to_string_lossy().into_owned();
    let Some(root) = repo_root else {
        return as_given();
    };
    let cwd = std::env::current_dir().ok();
    let lexical = |p: &Path| -> Option<PathBuf> {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.as_ref()?.join(p)
        };
        Some(normalise(&abs))
    };
    let candidates = [
        (lexical(path), lexical(root)),
        (path.canonicalize().ok(), root.canonicalize().ok()),
    ];
    for (p, r) in candidates {
        if let (Some(p), Some(r)) = (p, r) {
            if let Ok(rel) = p.strip_prefix(&r) {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                return if parts.is_empty() {
                    ".".to_owned()
                } else {
                    parts.join("/")
                };
            }
        }
    }
    as_given()
}

/// Drop `.` components and resolve `..` lexically (never above the root).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Test helpers shared by the readers' tests.
#[cfg(test)]
pub(crate) mod test_support {
    use std::path::Path;

    /// Create `<dir>/results.sqlite3` by running `sql` (an Arena store built from SQL text).
    pub fn store_from_sql(dir: &Path, sql: &str) -> rusqlite::Connection {
        std::fs::create_dir_all(dir).unwrap();
        let conn = rusqlite::Connection::open(dir.join("results.sqlite3")).unwrap();
        conn.execute_batch(sql).unwrap();
        conn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_mode_is_live() {
        assert_eq!(evidence_for_mode("live").unwrap(), Evidence::Live);
    }

    #[test]
    fn fake_and_hybrid_modes_are_fixture() {
        for m in ["fake", "live-hybrid", "fake-hybrid", "skipped-hybrid-setup"] {
            assert_eq!(evidence_for_mode(m).unwrap(), Evidence::Fixture, "{m}");
        }
    }

    #[test]
    fn other_modes_are_refused() {
        for m in ["", "Live", "hybrid", "scripted", "live "] {
            let e = evidence_for_mode(m).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{m}");
            crate::testutil::assert_only_reason!(
                crate::testutil::refusal(Err::<(), _>(e)),
                place = [] as [&str; 0],
                row = None,
                field = None,
                rule = None,
                sentence = format!(
                    "mode {m:?} is not one the import knows (live, fake, or a mode containing -hybrid)"
                )
            );
        }
    }

    #[test]
    fn pass_needs_no_reason_other_outcomes_do() {
        assert!(check_reason("r", "PASS", None).is_ok());
        assert!(check_reason("r", "FAIL", Some("tests failed")).is_ok());
        for reason in [None, Some(""), Some("  \n")] {
            let e = check_reason("r", "FALSE_COMPLETE", reason).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert_eq!(
                e.hints(),
                ["write this row by hand with `git ledger put <ID> <ROW.json>`, stating the reason"]
            );
            crate::testutil::assert_only_reason!(
                crate::testutil::refusal(Err::<(), _>(e)),
                place = ["r"],
                row = None,
                field = None,
                rule = None,
                sentence =
                    "native outcome FALSE_COMPLETE has no reason; the import never invents one"
            );
        }
    }

    #[test]
    fn sha256_is_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"hi\n"),
            "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4"
        );
    }

    #[test]
    fn full_commit_ids() {
        assert!(is_full_commit_id(&"a".repeat(40)));
        assert!(is_full_commit_id(&"0".repeat(64)));
        assert!(!is_full_commit_id(&"a".repeat(39)));
        assert!(!is_full_commit_id(&"A".repeat(40)));
        assert!(!is_full_commit_id(&"g".repeat(40)));
        assert!(!is_full_commit_id("HEAD"));
    }

    #[test]
    fn path_inside_repo_becomes_relative() {
        let root = tempfile::tempdir().unwrap();
        let p = root
            .path()
            .join(".scenario-runs")
            .join("R1")
            .join("result.json");
        assert_eq!(
            relative_to_repo(&p, Some(root.path())),
            ".scenario-runs/R1/result.json"
        );
        let dotted = root.path().join("a/./b/../c");
        assert_eq!(relative_to_repo(&dotted, Some(root.path())), "a/c");
        assert_eq!(relative_to_repo(root.path(), Some(root.path())), ".");
    }

    #[test]
    fn path_outside_repo_or_without_root_stays_as_given() {
        let root = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let p = other.path().join("store");
        assert_eq!(relative_to_repo(&p, Some(root.path())), p.to_string_lossy());
        assert_eq!(relative_to_repo(Path::new("x/y"), None), "x/y");
        // A sibling whose name merely starts with the root's name is outside.
        let sibling = PathBuf::from(format!("{}-other/x", root.path().display()));
        assert_eq!(
            relative_to_repo(&sibling, Some(root.path())),
            sibling.to_string_lossy()
        );
    }

    #[test]
    #[cfg(unix)]
    fn root_reached_through_a_symlink_still_matches() {
        let base = tempfile::tempdir().unwrap();
        let real = base.path().join("real");
        std::fs::create_dir_all(real.join("runs")).unwrap();
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(relative_to_repo(&real.join("runs"), Some(&link)), "runs");
    }

    #[test]
    fn check_serialises_as_name_ok() {
        let c = Check {
            name: "t".into(),
            ok: true,
        };
        assert_eq!(c.to_value(), serde_json::json!({"name": "t", "ok": true}));
    }
}
