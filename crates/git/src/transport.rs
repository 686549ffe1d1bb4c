//! Transport through the `git` executable: the user's remotes, credentials and ssh
//! configuration apply. Only fetch, push and the remote's configuration go through `git`; all
//! object and ref work stays in gix.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// The directory `git` runs in for `repo` (its work tree, else its git dir), absolute.
pub fn repo_dir(repo: &gix::Repository) -> Result<PathBuf> {
    let dir = repo
        .workdir()
        .map(|w| w.to_path_buf())
        .unwrap_or_else(|| repo.git_dir().to_path_buf());
    Ok(if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir()?.join(dir)
    })
}

/// The oldest Git `sync` runs with (the reference-transaction hook appeared in 2.28; `push
/// --porcelain` and non-forced refspecs are older).
pub const MIN_GIT: (u32, u32) = (2, 28);

/// What a `git` run printed and how it ended.
#[derive(Debug)]
pub struct Output {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// The path of `name` on PATH, if it is there.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Run `git` in `dir` with `args` (no terminal prompts from inside the tool's own parsing).
pub fn git(dir: &Path, args: &[&str]) -> Result<Output> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Error::failed_with_hint(
                format!("cannot run git: {e}"),
                "fetch and push go through the git executable; install Git and put it on PATH",
            )
        })?;
    Ok(Output {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Parse `git version 2.47.3` (vendor suffixes allowed).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.trim().strip_prefix("git version ")?;
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Refuse to run with a Git older than [`MIN_GIT`].
pub fn check_version(dir: &Path) -> Result<()> {
    let out = git(dir, &["version"])?;
    match parse_version(&out.stdout) {
        Some(v) if v >= MIN_GIT => Ok(()),
        Some((a, b)) => Err(Error::failed(format!(
            "git {a}.{b} is too old: sync needs Git {}.{} or later",
            MIN_GIT.0, MIN_GIT.1
        ))),
        None => Err(Error::failed(format!(
            "cannot read the Git version from {:?}",
            out.stdout.trim()
        ))),
    }
}

/// The outcome of pushing one ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    Done,
    /// The remote moved (non-fast-forward, fetch first, stale info): fetch and try again.
    Raced(String),
    /// The remote refused it (a hook, a protected ref): the reason and the `remote:` lines.
    Refused(String),
}

/// Read `git push --porcelain` output for `dst`: `<flag>\t<from>:<to>\t<summary> (<reason>)`.
pub fn parse_push(stdout: &str, stderr: &str, dst: &str) -> Option<Pushed> {
    for line in stdout.lines() {
        let mut parts = line.split('\t');
        let (Some(flag), Some(refs), summary) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if !refs.ends_with(&format!(":{dst}")) {
            continue;
        }
        let summary = summary.unwrap_or("").to_owned();
        return Some(match flag {
            " " | "+" | "*" | "=" | "-" => Pushed::Done,
            // The server's ref moved between its hook and its ref update (another push won).
            _ if summary.contains("failed to update ref")
                || summary.contains("failed to lock")
                || summary.contains("incorrect old value") =>
            {
                Pushed::Raced(summary)
            }
            _ if summary.contains("remote rejected") => {
                let remote: Vec<&str> = stderr
                    .lines()
                    .filter(|l| l.starts_with("remote:"))
                    .collect();
                Pushed::Refused(format!("{summary}\n{}", remote.join("\n")))
            }
            _ if summary.contains("non-fast-forward")
                || summary.contains("fetch first")
                || summary.contains("stale info")
                || summary.contains("rejected") =>
            {
                Pushed::Raced(summary)
            }
            _ => Pushed::Refused(summary),
        });
    }
    None
}

/// Fetch `spec` (one refspec, never forced) from `remote`: a destination ref whose remote ref
/// was rewritten is rejected by Git, not followed. Returns the rejected destinations as Git
/// names them (a ref under `refs/remotes/` without that prefix); a fetch that fails otherwise
/// is an error.
pub fn fetch_unforced(dir: &Path, remote: &str, spec: &str) -> Result<Vec<String>> {
    let out = git(dir, &["fetch", "--no-tags", remote, spec])?;
    if out.ok {
        return Ok(Vec::new());
    }
    let rejected: Vec<String> = (out.stderr.lines())
        .filter(|line| line.contains("[rejected]"))
        .filter_map(|line| line.split_once("->"))
        .filter_map(|(_, to)| to.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    if rejected.is_empty() {
        return Err(Error::failed(format!(
            "git fetch {remote} {spec} failed:\n{}",
            out.stderr.trim_end()
        )));
    }
    Ok(rejected)
}

/// Fetch `specs` from `url` for a reviewer, writing only the destinations the refspecs name:
/// by URL (no remote's configured refspecs, so no remote-tracking ref moves), no tags, the
/// repository's hooks off (`core.hooksPath` pointing nowhere: no hook judges, blocks or writes
/// on these refs), replace refs not followed, `--prune` when asked (a destination whose source
/// is gone is deleted). Nothing is pushed.
pub fn fetch_read_only(dir: &Path, url: &str, specs: &[&str], prune: bool) -> Result<()> {
    let mut args = vec![
        "--no-replace-objects",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "fetch.recurseSubmodules=false",
        "fetch",
        "--no-tags",
        "--no-auto-gc",
    ];
    if prune {
        args.push("--prune");
    }
    args.push(url);
    args.extend_from_slice(specs);
    let out = git(dir, &args)?;
    if out.ok {
        return Ok(());
    }
    Err(Error::failed(format!(
        "git fetch {url} {} failed:\n{}",
        specs.join(" "),
        out.stderr.trim_end()
    )))
}

/// The refs `remote` serves now under `prefix` (`refs/ledgers/`, or one ref's full name), as
/// `(name, object id)` in the order Git lists them: what a fetch cannot say, since a ref the
/// remote deleted leaves its remote-tracking copy behind.
pub fn served(dir: &Path, remote: &str, prefix: &str) -> Result<Vec<(String, String)>> {
    let pattern = if prefix.ends_with('/') {
        format!("{prefix}*")
    } else {
        prefix.to_owned()
    };
    let out = git(dir, &["ls-remote", "--refs", remote, &pattern])?;
    if !out.ok {
        return Err(Error::failed(format!(
            "git ls-remote {remote} {pattern} failed:\n{}",
            out.stderr.trim_end()
        )));
    }
    Ok(parse_ls_remote(&out.stdout, prefix))
}

/// Read `git ls-remote` output (`<id>\t<ref>` lines), keeping the refs `prefix` names: a
/// pattern matches the end of a ref name, so `refs/heads/refs/ledgers/x` is listed too and
/// dropped here.
pub fn parse_ls_remote(stdout: &str, prefix: &str) -> Vec<(String, String)> {
    (stdout.lines())
        .filter_map(|l| l.split_once('\t'))
        .filter(|(_, name)| {
            if prefix.ends_with('/') {
                name.starts_with(prefix)
            } else {
                *name == prefix
            }
        })
        .map(|(id, name)| (name.to_owned(), id.trim().to_owned()))
        .collect()
}

/// Push `commit` to the ref `refname` on `remote`, never forced.
pub fn push_unforced(dir: &Path, remote: &str, commit: &str, refname: &str) -> Result<Pushed> {
    let spec = format!("{commit}:{refname}");
    let out = git(dir, &["push", "--porcelain", remote, &spec])?;
    match parse_push(&out.stdout, &out.stderr, refname) {
        Some(p) => Ok(p),
        None if out.ok => Ok(Pushed::Done),
        None => Err(Error::failed(format!(
            "git push {remote} {spec} failed:\n{}",
            out.stderr.trim_end()
        ))),
    }
}

/// Whether `remote` is configured in the repository at `dir`.
pub fn remote_exists(dir: &Path, remote: &str) -> Result<bool> {
    Ok(git(dir, &["config", "--get", &format!("remote.{remote}.url")])?.ok)
}

/// The URL `remote` names: a configured remote's (as Git rewrites it), else the argument
/// itself, a path made absolute.
pub fn url_of(dir: &Path, remote: &str) -> Result<String> {
    if remote_exists(dir, remote)? {
        let out = git(dir, &["remote", "get-url", remote])?;
        if out.ok {
            return Ok(out.stdout.trim().to_owned());
        }
    }
    let p = Path::new(remote);
    if !remote.contains("://") && p.exists() {
        if let Ok(abs) = std::fs::canonicalize(p) {
            return Ok(abs.display().to_string());
        }
    }
    Ok(remote.to_owned())
}

/// The namespace key of a URL: the first 16 hex digits of its SHA-256.
pub fn key_of(url: &str) -> String {
    crate::sha256_hex(url.as_bytes())[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_with_vendor_suffixes() {
        assert_eq!(parse_version("git version 2.47.3\n"), Some((2, 47)));
        assert_eq!(
            parse_version("git version 2.39.5 (Apple Git-154)"),
            Some((2, 39))
        );
        assert_eq!(parse_version("git version 2.45.1.windows.1"), Some((2, 45)));
        assert_eq!(parse_version("nope"), None);
        assert!((2, 27) < MIN_GIT && (2, 28) >= MIN_GIT && (3, 0) > MIN_GIT);
    }

    #[test]
    fn ls_remote_keeps_only_the_refs_under_the_prefix() {
        let out = "abc\trefs/ledgers/x\nbcd\trefs/heads/refs/ledgers/y\ncde\trefs/ledgers/a/b\n";
        assert_eq!(
            parse_ls_remote(out, "refs/ledgers/"),
            vec![
                ("refs/ledgers/x".to_owned(), "abc".to_owned()),
                ("refs/ledgers/a/b".to_owned(), "cde".to_owned())
            ]
        );
        assert_eq!(
            parse_ls_remote(out, "refs/ledgers/x"),
            vec![("refs/ledgers/x".to_owned(), "abc".to_owned())]
        );
        assert!(parse_ls_remote("", "refs/ledgers/").is_empty());
    }

    #[test]
    fn push_porcelain_is_read_per_ref() {
        let r = "refs/ledgers/x";
        let ok = "To /srv/r.git\n \tabc:refs/ledgers/x\t[new reference]\nDone\n";
        assert_eq!(parse_push(ok, "", r), Some(Pushed::Done));
        let raced = "To /srv/r.git\n!\tabc:refs/ledgers/x\t[rejected] (fetch first)\nDone\n";
        assert!(matches!(parse_push(raced, "", r), Some(Pushed::Raced(_))));
        let nff = "!\tabc:refs/ledgers/x\t[rejected] (non-fast-forward)\n";
        assert!(matches!(parse_push(nff, "", r), Some(Pushed::Raced(_))));
        let hook = "!\tabc:refs/ledgers/x\t[remote rejected] (pre-receive hook declined)\n";
        match parse_push(
            hook,
            "remote: git-ledger pre-receive: push refused\nerror: x",
            r,
        ) {
            Some(Pushed::Refused(s)) => assert!(s.contains("remote: git-ledger"), "{s}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(parse_push(ok, "", "refs/ledgers/y"), None);
        let lock = "!\tabc:refs/ledgers/x\t[remote rejected] (failed to update ref)\n";
        assert!(matches!(parse_push(lock, "", r), Some(Pushed::Raced(_))));
    }
}
