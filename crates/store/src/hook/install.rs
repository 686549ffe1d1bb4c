//! `git ledger hooks install [--server] [--force]`: copy the shipped hook scripts (`hooks/*` in
//! this repository, embedded in the binary) into a repository's hooks directory.
//!
//! The directory is `core.hooksPath` when set (relative to the top of the work tree, or to the
//! Git directory of a bare repository, as Git resolves it), else `hooks/` in the common Git
//! directory (shared by linked worktrees). An existing hook with other content is never
//! overwritten without `--force`; with it, the old hook is renamed `<name>.local`, which our
//! script runs after its own check (that is also how to chain one by hand).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The shipped scripts.
pub const PRE_RECEIVE: &str = include_str!("../../../../hooks/pre-receive");
pub const REFERENCE_TRANSACTION: &str = include_str!("../../../../hooks/reference-transaction");
pub const PRE_COMMIT: &str = include_str!("../../../../hooks/pre-commit");
/// `git merge` runs pre-merge-commit instead of pre-commit; it runs the same check.
pub const PRE_MERGE_COMMIT: &str = include_str!("../../../../hooks/pre-merge-commit");
/// `git am` runs pre-applypatch instead of pre-commit; it runs the same check.
pub const PRE_APPLYPATCH: &str = include_str!("../../../../hooks/pre-applypatch");

/// SHA-256 of each earlier shipped version of a script: an installed hook that is one of them
/// is ours, and `install` replaces it without `--force` (an upgrade, not a foreign hook).
const EARLIER: &[(&str, &str)] = &[
    // Before every spelling of refs/ledgers/ and refs/replace/ were passed to the binary.
    (
        "pre-receive",
        "8270eba9e1e32aeb5d79d330f8ec828a0c7d20832594b653ec47e44d910d67b5",
    ),
    (
        "reference-transaction",
        "4f6c919e2cbed756394b1c7b052e11cdd590632df2d8884e0040d6aa2cc2cdba",
    ),
    // Before refs/notes/ was passed to the binary (red-team review of issue 15).
    (
        "pre-receive",
        "2a7ab4e74f4ff4418e4b366d0e15b6cec56165908b278834860e5a7c743160fa",
    ),
    (
        "reference-transaction",
        "272fb0b6599eff4ae01d03398eb9da20ce60253abda40cfb77dbcf4da8c79b74",
    ),
    // Before the scripts decided without the binary (docs/reference/workflow.md, rule 8): every
    // hook failed when git-ledger was missing.
    (
        "pre-receive",
        "f06e7f3ef6887b51b9d3a2fcee52e21d5bb9b407717ffad1748cbf9f5cf8f236",
    ),
    (
        "reference-transaction",
        "d1e5a05e51941319ef8da7aebc7551e30d51939ce8c9464da2f13f97ee57c207",
    ),
    (
        "pre-commit",
        "0becf377f7476f23e81612a889e15db660141dde9ebaafcf03bd1f6e13bdebd8",
    ),
    (
        "pre-merge-commit",
        "d4aa1d254fd91dcccfddc12ae27604341e17d702b52c2d252f715658b326214e",
    ),
    (
        "pre-applypatch",
        "ef9b4b8333fd7171a93a327fb8899e3c472a4a106b9a8bdcab65ad6780aa439c",
    ),
    // Before the scripts read ledger.refPrefix (issue 27: ledgers on branches for a forge).
    (
        "pre-receive",
        "785baef8f3278323bc33bc2ed3bed45ac549a619e9ed39dbc350bb952ff2f67d",
    ),
    (
        "reference-transaction",
        "f30784c557966747ae35d8334154e97fd74221d1d972dd4e7c804a2547d22618",
    ),
];

/// Whether `bytes` are an earlier shipped version of the hook `name`.
fn is_earlier(name: &str, bytes: &[u8]) -> bool {
    let sha = crate::sha256_hex(bytes);
    EARLIER.iter().any(|(n, s)| *n == name && *s == sha)
}

/// The hooks `install` writes: only `pre-receive` for a server.
pub fn scripts(server: bool) -> Vec<(&'static str, &'static str)> {
    if server {
        vec![("pre-receive", PRE_RECEIVE)]
    } else {
        vec![
            ("pre-receive", PRE_RECEIVE),
            ("reference-transaction", REFERENCE_TRANSACTION),
            ("pre-commit", PRE_COMMIT),
            ("pre-merge-commit", PRE_MERGE_COMMIT),
            ("pre-applypatch", PRE_APPLYPATCH),
        ]
    }
}

/// What happened to one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Installed(PathBuf),
    AlreadyInstalled(PathBuf),
    /// Installed; the hook that was there moved to the second path (run by ours).
    Chained(PathBuf, PathBuf),
}

/// The repository's hooks directory (see the module documentation).
pub fn hooks_dir(repo: &gix::Repository) -> Result<PathBuf> {
    let configured = repo
        .config_snapshot()
        .trusted_path("core.hooksPath")
        .map_err(|e| Error::failed(format!("git config core.hooksPath: {e}")))?;
    Ok(match configured {
        Some(p) if p.is_absolute() => p,
        Some(p) => match repo.workdir() {
            Some(w) => w.join(p),
            None => repo.git_dir().join(p),
        },
        None => repo.common_dir().join("hooks"),
    })
}

/// What `hooks install` did in a repository.
#[derive(Debug)]
pub struct InstalledIn {
    /// One outcome per script, in install order.
    pub outcomes: Vec<Outcome>,
    /// Whether `git-ledger` is on `PATH`, where the scripts call it by name.
    pub on_path: bool,
}

/// `git ledger hooks install`: the hooks (only pre-receive with `server`) into the hooks
/// directory of the repository at `repo` (default: discovered), honouring `core.hooksPath`.
pub fn install_in(repo: Option<&Path>, server: bool, force: bool) -> Result<InstalledIn> {
    let repo = crate::git::open(repo)?;
    let outcomes = install(&hooks_dir(&repo)?, server, force)?;
    Ok(InstalledIn {
        outcomes,
        on_path: crate::git::transport::which("git-ledger").is_some(),
    })
}

/// Install the hooks into `dir`. Refuses (before writing anything) when a hook with other
/// content exists and `force` is not given, or when its `.local` name is taken too.
pub fn install(dir: &Path, server: bool, force: bool) -> Result<Vec<Outcome>> {
    let mut reasons = Vec::new();
    let mut plan = Vec::new();
    for (name, script) in scripts(server) {
        let path = dir.join(name);
        let local = dir.join(format!("{name}.local"));
        match std::fs::read(&path) {
            Ok(existing) if existing == script.as_bytes() => {
                plan.push((path, script, None, true));
            }
            Ok(existing) if is_earlier(name, &existing) => plan.push((path, script, None, false)),
            Ok(_) if !force => reasons.push(
                crate::refusal::Reason::new(format!(
                    "a different {name} hook is installed; not overwritten. To keep it and run it after git-ledger's check, rename it to {name}.local (our script runs an executable {name}.local with the same input), or pass --force to do that rename"
                ))
                .at(path.display())
            ),
            Ok(_) if local.exists() => reasons.push(
                crate::refusal::Reason::new(format!(
                    "a different {name} hook is installed and {} exists too; move one of them away first",
                    local.display()
                ))
                .at(path.display())
            ),
            Ok(_) => plan.push((path, script, Some(local), false)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                plan.push((path, script, None, false))
            }
            Err(e) => {
                return Err(Error::failed(format!(
                    "cannot read {}: {e}",
                    path.display()
                )))
            }
        }
    }
    if !reasons.is_empty() {
        return Err(Error::refusal(reasons));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::failed(format!("cannot create {}: {e}", dir.display())))?;
    let mut out = Vec::new();
    for (path, script, local, already) in plan {
        if already {
            set_executable(&path)?;
            out.push(Outcome::AlreadyInstalled(path));
            continue;
        }
        if let Some(local) = &local {
            std::fs::rename(&path, local).map_err(|e| {
                Error::failed(format!(
                    "cannot move {} to {}: {e}",
                    path.display(),
                    local.display()
                ))
            })?;
        }
        // Write beside, then rename: a concurrent push never runs half a script.
        let tmp = path.with_extension("git-ledger-tmp");
        std::fs::write(&tmp, script)
            .and_then(|()| set_executable(&tmp).map_err(std::io::Error::other))
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| Error::failed(format!("cannot write {}: {e}", path.display())))?;
        out.push(match local {
            Some(l) => Outcome::Chained(path, l),
            None => Outcome::Installed(path),
        });
    }
    Ok(out)
}

/// Whether this repository runs git-ledger's reference-transaction hook, as shipped (it refuses
/// an inadmissible update of a local ledger ref); `verify` hints at installing it otherwise.
pub fn guards_local_refs(repo: &gix::Repository) -> bool {
    hooks_dir(repo)
        .ok()
        .and_then(|d| std::fs::read(d.join("reference-transaction")).ok())
        .is_some_and(|b| b == REFERENCE_TRANSACTION.as_bytes())
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::failed(format!("cannot make {} executable: {e}", path.display())))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_once_refuses_a_different_hook_and_chains_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join("hooks");
        let out = install(&hooks, false, false).unwrap();
        assert_eq!(out.len(), 5);
        // Every hook of the list, written with its script's bytes, executable.
        for ((name, script), o) in scripts(false).into_iter().zip(&out) {
            assert_eq!(o, &Outcome::Installed(hooks.join(name)));
            assert_eq!(std::fs::read_to_string(hooks.join(name)).unwrap(), script);
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(hooks.join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111, "{name} is executable");
        }
        assert!(scripts(false).iter().any(|(n, _)| *n == "pre-applypatch"));
        let again = install(&hooks, false, false).unwrap();
        assert!(again
            .iter()
            .all(|o| matches!(o, Outcome::AlreadyInstalled(_))));
        std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\necho mine\n").unwrap();
        let refused = git_ledger_base::testutil::refused(install(&hooks, false, false));
        let pre_commit = hooks.join("pre-commit").display().to_string();
        git_ledger_base::assert_only_reason!(
            refused,
            place = [&pre_commit],
            sentence = "a different pre-commit hook is installed; not overwritten. To keep it and run it after git-ledger's check, rename it to pre-commit.local (our script runs an executable pre-commit.local with the same input), or pass --force to do that rename"
        );
        assert_eq!(
            std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
            "#!/bin/sh\necho mine\n"
        );
        let forced = install(&hooks, false, true).unwrap();
        assert!(forced.iter().any(|o| matches!(o, Outcome::Chained(..))));
        assert_eq!(
            std::fs::read_to_string(hooks.join("pre-commit.local")).unwrap(),
            "#!/bin/sh\necho mine\n"
        );
        assert_eq!(
            std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
            PRE_COMMIT
        );
        // A second different hook with .local taken: refused even with --force.
        std::fs::write(hooks.join("pre-commit"), "other\n").unwrap();
        let refused = git_ledger_base::testutil::refused(install(&hooks, false, true));
        let local = hooks.join("pre-commit.local").display().to_string();
        git_ledger_base::assert_only_reason!(
            refused,
            place = [&pre_commit],
            sentence = format!("a different pre-commit hook is installed and {local} exists too; move one of them away first")
        );
        assert_eq!(
            std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
            "other\n"
        );
    }

    #[test]
    fn an_earlier_version_of_our_script_is_upgraded_without_force() {
        let dir = tempfile::tempdir().unwrap();
        // The pre-receive script as shipped before replace refs and other spellings were passed.
        let earlier = "#!/bin/sh\n# git-ledger pre-receive hook: refuses every inadmissible update of refs/ledgers/* (the\n# pusher sees each reason as a `remote:` line); other refs pass. Installed by\n# `git ledger hooks install --server`. Set GIT_LEDGER to the binary's path if git-ledger is\n# not on the PATH the server gives hooks. Chaining: an executable `pre-receive.local` beside\n# this file runs after the check, with the same input.\ninput=$(cat)\ncase \"$input\" in\n*refs/ledgers/*) printf '%s\\n' \"$input\" | \"${GIT_LEDGER:-git-ledger}\" hook pre-receive || exit $? ;;\nesac\nlocal_hook=\"$(dirname \"$0\")/pre-receive.local\"\nif [ -x \"$local_hook\" ]; then printf '%s\\n' \"$input\" | \"$local_hook\" \"$@\" || exit $?; fi\nexit 0\n";
        assert!(is_earlier("pre-receive", earlier.as_bytes()));
        std::fs::write(dir.path().join("pre-receive"), earlier).unwrap();
        let out = install(dir.path(), true, false).unwrap();
        assert_eq!(
            out,
            vec![Outcome::Installed(dir.path().join("pre-receive"))]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("pre-receive")).unwrap(),
            PRE_RECEIVE
        );
        assert!(!dir.path().join("pre-receive.local").exists());
        // One byte changed is a foreign hook again.
        std::fs::write(dir.path().join("pre-receive"), format!("{earlier} ")).unwrap();
        assert!(install(dir.path(), true, false).is_err());
    }

    #[test]
    fn server_installs_only_pre_receive() {
        let dir = tempfile::tempdir().unwrap();
        let out = install(dir.path(), true, false).unwrap();
        assert_eq!(
            out,
            vec![Outcome::Installed(dir.path().join("pre-receive"))]
        );
        assert!(!dir.path().join("pre-commit").exists());
    }
}
