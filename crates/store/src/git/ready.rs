//! `check --ready` (docs/reference/workflow.md, rule 1): the working tree a run will use is the
//! declared revision, and nothing a harness reads under a pinned path differs from it.
//!
//! Refused, each as its own [`Reason`] (field: the pinned member; rule: workflow 1) with the
//! command that fixes it: a `HEAD` other than `source_revision`, and every path under a pinned
//! path (each task's definition and oracle, `runner_tools`, every policy file, the profile
//! source, `writers`) that differs from the source revision in the index or the working tree,
//! or is untracked and not ignored. The working tree is read by [`super::worktree`].

use serde::Serialize;

use crate::declaration::Declaration;
use crate::error::{Error, Reason, Reasons, Result};
use crate::git::worktree::{self, PathState};
use crate::refusal::Rule;

/// The rule every readiness reason breaks: docs/reference/workflow.md, rule 1.
pub const RULE: Rule = Rule::Workflow(1);

/// What `check --ready` found when the working tree is ready.
#[derive(Debug, Clone, Serialize)]
pub struct ReadyReport {
    /// The commit `HEAD` names (the declared `source_revision`).
    pub head: String,
    /// The branch `HEAD` is on (a full ref name), or null when it is detached.
    pub branch: Option<String>,
    /// The working tree's root.
    pub worktree: String,
    /// Every pinned path looked under, each once, sorted.
    pub pinned_paths: Vec<String>,
}

/// Every pinned path of a declaration with the member that pins it (`runner_tools`,
/// `tasks[2].definition`), in declaration order.
pub fn pinned_paths(decl: &Declaration) -> Vec<(String, &str)> {
    let mut out = vec![(
        "profile.source".to_owned(),
        decl.profile.source.path.as_str(),
    )];
    for (i, p) in decl.policy_files.iter().enumerate() {
        out.push((format!("policy_files[{i}]"), &p.path));
    }
    out.push(("runner_tools".to_owned(), &decl.runner_tools.path));
    if let Some(w) = &decl.writers {
        out.push(("writers".to_owned(), &w.path));
    }
    for (i, t) in decl.tasks.iter().enumerate() {
        out.push((format!("tasks[{i}].definition"), &t.definition.path));
        if let Some(o) = &t.oracle {
            out.push((format!("tasks[{i}].oracle"), &o.path));
        }
    }
    out
}

/// The command that makes a working tree ready without moving the declaration or the ledger.
pub fn fix_command(decl: &Declaration, rev: &str) -> String {
    format!("git worktree add ../run-{} {rev}", decl.id)
}

/// `git ledger check [--ready]`: read the declaration at `declaration` and recompute every
/// pinned hash from the repository at `repo` (default: discovered); with `ready`, also check
/// the working tree ([`check_ready`]). The pinned commit is named by its id: no ref is read,
/// so any ref backend will do; `ready` reads HEAD, which only the files backend keeps where
/// gix reads it.
pub fn check_file(
    repo: Option<&std::path::Path>,
    declaration: &std::path::Path,
    max_input_bytes: u64,
    ready: bool,
) -> Result<(crate::git::pin::CheckReport, Option<ReadyReport>)> {
    let decl = Declaration::read(declaration, max_input_bytes)?;
    let repo = if ready {
        crate::git::open(repo)?
    } else {
        crate::git::open_any_ref_storage(repo)?
    };
    let checked = if ready {
        check_ready(&repo, &decl, max_input_bytes).map(|(c, r)| (c, Some(r)))
    } else {
        crate::git::pin::check(&repo, &decl, max_input_bytes).map(|c| (c, None))
    };
    checked.map_err(|e| e.context(declaration.display()))
}

/// `check --ready`: the declaration checked against its pinned commit ([`crate::git::pin::check`])
/// and the working tree of `repo` judged ([`ready`]), both verdicts at once: a declaration that
/// does not match and a working tree that is not ready are refused together.
pub fn check_ready(
    repo: &gix::Repository,
    decl: &Declaration,
    max_input_bytes: u64,
) -> Result<(crate::git::pin::CheckReport, ReadyReport)> {
    match (
        crate::git::pin::check(repo, decl, max_input_bytes),
        ready(repo, decl),
    ) {
        (Ok(c), Ok(r)) => Ok((c, r)),
        (Err(Error::Refused(mut a)), Err(Error::Refused(b))) => {
            a.absorb(b);
            Err(Error::Refused(a))
        }
        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
    }
}

/// Judge the working tree of `repo` (the one `--repo` or discovery found) against `decl`'s
/// `source_revision`. Every difference is one reason; a bare repository cannot be judged (it has
/// no working tree: exit 1).
pub fn ready(repo: &gix::Repository, decl: &Declaration) -> Result<ReadyReport> {
    let rev = decl
        .source_revision
        .as_deref()
        .expect("a pinned declaration has a source_revision");
    let Some(workdir) = repo.workdir() else {
        return Err(Error::failed_with_hint(
            format!(
                "check --ready: {} is a bare repository: there is no working tree to run in",
                repo.git_dir().display()
            ),
            "pass --repo <DIR>, the working tree the run will use",
        ));
    };
    let fix = fix_command(decl, rev);
    let mut r = Reasons::new();
    let head = repo
        .head()
        .map_err(|e| Error::failed(format!("cannot read HEAD: {e}")))?;
    let branch = head.referent_name().map(|n| n.as_bstr().to_string());
    let head_id = head.id().map(|id| id.detach().to_string());
    let on = match &branch {
        Some(b) => format!("branch {}", b.strip_prefix("refs/heads/").unwrap_or(b)),
        None => "detached".to_owned(),
    };
    let at_rev = head_id.as_deref() == Some(rev);
    match &head_id {
        Some(id) if id == rev => {}
        Some(id) => r.push(
            Reason::new(format!(
                "HEAD is {id} ({on}), not the declared source_revision {rev}; run at the declared revision: {fix}"
            ))
            .field("source_revision")
            .rule(RULE),
        ),
        None => r.push(
            Reason::new(format!(
                "HEAD names no commit ({on}, unborn), not the declared source_revision {rev}; run at the declared revision: {fix}"
            ))
            .field("source_revision")
            .rule(RULE),
        ),
    }
    let members = pinned_paths(decl);
    let mut paths: Vec<&str> = members.iter().map(|(_, p)| *p).collect();
    paths.sort_unstable();
    paths.dedup();
    for (path, state) in worktree::differences(workdir, rev, &paths)? {
        let member = members
            .iter()
            .find(|(_, p)| under(&path, p))
            .map_or("pinned path", |(m, _)| m.as_str());
        // At the declared revision already, the change itself is what to move aside (a new
        // worktree would do too, but the user is where the run belongs); elsewhere, the run
        // belongs in a worktree at the revision.
        let remedy = if at_rev {
            format!("keep it aside with `git stash push --include-untracked -- {path}` (or run in a clean worktree: {fix})")
        } else {
            format!("run at the declared revision: {fix}")
        };
        r.push(
            Reason::new(format!("{path} {}; {remedy}", describe(&state)))
                .field(member)
                .rule(RULE),
        );
    }
    if !r.is_empty() {
        if at_rev {
            r.hint(
                "HEAD is the declared revision: once nothing differs under a pinned path, the run may start here",
            );
        } else {
            r.hint(format!(
                "a worktree at the declared revision leaves the declaration and the ledger where they are: {fix}"
            ));
        }
        return Err(Error::Refused(r));
    }
    Ok(ReadyReport {
        head: rev.to_owned(),
        branch,
        worktree: workdir.display().to_string(),
        pinned_paths: paths.iter().map(|p| (*p).to_owned()).collect(),
    })
}

/// Whether `path` is `pinned` or lies under it.
fn under(path: &str, pinned: &str) -> bool {
    path == pinned
        || path
            .strip_prefix(pinned)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// How a path differs, in words.
fn describe(s: &PathState) -> String {
    fn word(c: char) -> String {
        match c {
            'M' => "modified".into(),
            'A' => "added".into(),
            'D' => "deleted".into(),
            'T' => "type changed".into(),
            other => format!("changed ({other})"),
        }
    }
    if s.untracked {
        return "is untracked and not ignored, under a pinned path".into();
    }
    let mut parts = Vec::new();
    if let Some(c) = s.index {
        parts.push(format!("staged: {}", word(c)));
    }
    if let Some(c) = s.worktree {
        parts.push(format!("working tree: {}", word(c)));
    }
    format!("differs from the source revision ({})", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_means_the_path_or_below_it() {
        assert!(under("h/tools", "h/tools"));
        assert!(under("h/tools/run.py", "h/tools"));
        assert!(!under("h/toolsx/run.py", "h/tools"));
        assert!(!under("h", "h/tools"));
    }

    #[test]
    fn a_difference_says_where_it_is() {
        let staged = PathState {
            index: Some('M'),
            worktree: None,
            untracked: false,
        };
        assert_eq!(
            describe(&staged),
            "differs from the source revision (staged: modified)"
        );
        let both = PathState {
            index: Some('A'),
            worktree: Some('D'),
            untracked: false,
        };
        assert_eq!(
            describe(&both),
            "differs from the source revision (staged: added; working tree: deleted)"
        );
    }
}
