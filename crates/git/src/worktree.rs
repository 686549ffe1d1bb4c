//! A working tree measured against a commit under some paths: which tracked files differ in the
//! index or in the working tree, and which untracked files Git does not ignore.
//!
//! This reads the working tree, not objects, so it goes through the `git` executable (`git diff`
//! and `git ls-files`), as `git status` would: the user's filters, `core.autocrlf`, sparse
//! checkout, the fsmonitor and the index's stat cache apply exactly as they do for Git itself
//! (the decision and gix's cost are in docs/decisions.md, "check --ready"). Optional locks are
//! off, so the index is never rewritten.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// How one path differs from the commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathState {
    /// The index against the commit (`git diff --cached`): `A`dded, `D`eleted, `M`odified,
    /// `T`ype changed.
    pub index: Option<char>,
    /// The working tree against the commit (`git diff`), the same letters.
    pub worktree: Option<char>,
    /// Untracked and not ignored.
    pub untracked: bool,
}

/// Every path under `paths` (each a file or a directory, relative to the working tree's root)
/// whose index entry or working-tree file differs from `commit`, or that is untracked and not
/// ignored; sorted by path. `workdir` is the working tree's root.
pub fn differences(
    workdir: &Path,
    commit: &str,
    paths: &[&str],
) -> Result<BTreeMap<String, PathState>> {
    let mut out: BTreeMap<String, PathState> = BTreeMap::new();
    if paths.is_empty() {
        return Ok(out);
    }
    let specs: Vec<String> = paths.iter().map(|p| format!(":(literal){p}")).collect();
    let diff = |cached: bool| -> Result<Vec<(char, String)>> {
        let mut args = vec![
            "diff",
            "--no-ext-diff",
            "--no-renames",
            "--name-status",
            "-z",
        ];
        if cached {
            args.push("--cached");
        }
        args.extend([commit, "--"]);
        args.extend(specs.iter().map(String::as_str));
        Ok(name_status(&run(workdir, &args)?))
    };
    for (status, path) in diff(true)? {
        out.entry(path).or_default().index = Some(status);
    }
    for (status, path) in diff(false)? {
        out.entry(path).or_default().worktree = Some(status);
    }
    let mut args = vec!["ls-files", "-z", "--others", "--exclude-standard", "--"];
    args.extend(specs.iter().map(String::as_str));
    for path in run(workdir, &args)?
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
    {
        out.entry(super::show_path(path)).or_default().untracked = true;
    }
    Ok(out)
}

/// `<status>\0<path>\0…` as `git diff --name-status -z` prints it (no renames).
fn name_status(bytes: &[u8]) -> Vec<(char, String)> {
    let mut fields = bytes.split(|b| *b == 0);
    let mut out = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let (Some(&s), false) = (status.first(), path.is_empty()) else {
            break;
        };
        out.push((s as char, super::show_path(path)));
    }
    out
}

/// Run `git` in `dir`; its standard output, or a failure naming what Git said.
fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .current_dir(dir)
        .arg("--no-optional-locks")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Error::failed_with_hint(
                format!("cannot run git: {e}"),
                "the working tree's state is read through the git executable; install Git and put it on PATH",
            )
        })?;
    if !out.status.success() {
        return Err(Error::failed(format!(
            "git {} failed in {}: {}",
            args.first().copied().unwrap_or_default(),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_reads_pairs_and_stops_at_a_short_tail() {
        let got = name_status(b"M\0a/b.py\0D\0c\0A\0");
        assert_eq!(got, vec![('M', "a/b.py".into()), ('D', "c".into())]);
        assert!(name_status(b"").is_empty());
    }
}
