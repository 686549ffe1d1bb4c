//! Hosted forges that run no hook (GitHub.com, GitLab.com; `docs/forges.md`): the protections
//! `init --forge` names, and the CI files `hooks install --forge` writes in the hook's place
//! (shipped in this repository under `forge/`, embedded in the binary). Putting a repository's
//! ledgers on branches is [`crate::git::store::use_branch_prefix`].

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Which forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forge {
    Github,
    Gitlab,
}

/// The script each forge's CI job runs for one push (`forge/verify-push.sh`).
pub const VERIFY_PUSH: &str = include_str!("../../../../forge/verify-push.sh");
/// The script of the optional scheduled witness job (`forge/witness.sh`).
pub const WITNESS: &str = include_str!("../../../../forge/witness.sh");
/// The GitHub Actions workflow (`forge/github/git-ledger.yml`).
pub const GITHUB_WORKFLOW: &str = include_str!("../../../../forge/github/git-ledger.yml");
/// The GitLab CI job (`forge/gitlab/git-ledger.gitlab-ci.yml`).
pub const GITLAB_JOB: &str = include_str!("../../../../forge/gitlab/git-ledger.gitlab-ci.yml");

impl Forge {
    /// The protections to switch on for `ledgers/*`, each setting named as the forge names it
    /// (`docs/forges.md` says what each guarantees).
    pub fn protections(self) -> &'static str {
        match self {
            Forge::Github => "on GitHub, Settings > Rules > Rulesets > New branch ruleset:\n  Enforcement status: Active; Target branches: Include by pattern `ledgers/*`\n  Restrict deletions: on\n  Block force pushes: on\n  Require signed commits: on (for a ledger whose declaration names writers)\n  Bypass list: empty\nthen `git ledger hooks install --forge github` and commit the workflow to the default branch",
            Forge::Gitlab => "on GitLab, Settings > Repository > Protected branches > Add protected branch:\n  Branch: `ledgers/*`\n  Allowed to merge: Maintainers\n  Allowed to push and merge: Developers + Maintainers (whoever writes the ledger)\n  Allowed to force push: off\n(a protected branch cannot be deleted from a push; only a maintainer, in the UI or API, can delete it)\nthen `git ledger hooks install --forge gitlab`, include the job from the default branch's .gitlab-ci.yml, and set Settings > CI/CD > General pipelines > CI/CD configuration file to `.gitlab-ci.yml@<group>/<project>:<default branch>`",
        }
    }

    /// The files `hooks install --forge` writes, relative to the top of the work tree, with
    /// `@VERSION@` replaced by this binary's version (the one the job installs, pinned).
    pub fn files(self) -> Vec<(&'static str, String)> {
        let v = env!("CARGO_PKG_VERSION");
        match self {
            Forge::Github => vec![
                (
                    ".github/workflows/git-ledger.yml",
                    GITHUB_WORKFLOW.replace("@VERSION@", v),
                ),
                (".github/git-ledger/verify-push.sh", VERIFY_PUSH.to_owned()),
                (".github/git-ledger/witness.sh", WITNESS.to_owned()),
            ],
            Forge::Gitlab => vec![
                (
                    ".gitlab/git-ledger.gitlab-ci.yml",
                    GITLAB_JOB.replace("@VERSION@", v),
                ),
                (".gitlab/git-ledger/verify-push.sh", VERIFY_PUSH.to_owned()),
                (".gitlab/git-ledger/witness.sh", WITNESS.to_owned()),
            ],
        }
    }
}

/// What installing one file did.
#[derive(Debug, PartialEq, Eq)]
pub enum Installed {
    Written(PathBuf),
    AlreadyThere(PathBuf),
}

/// `hooks install --forge`: write `forge`'s CI files into the work tree of the repository at
/// `repo` (default: discovered); a bare repository has none to write them into.
pub fn install_in(repo: Option<&Path>, forge: Forge, force: bool) -> Result<Vec<Installed>> {
    let repo = crate::git::open(repo)?;
    let top = repo.workdir().ok_or_else(|| {
        Error::failed("--forge writes CI files into a work tree; this repository is bare")
    })?;
    install(top, forge, force)
}

/// Write `forge`'s CI files under `top` (the work tree). A file there with other content is
/// refused unless `force` (it is a file the team may have edited, and lives in their history).
pub fn install(top: &Path, forge: Forge, force: bool) -> Result<Vec<Installed>> {
    let files = forge.files();
    for (rel, text) in &files {
        let path = top.join(rel);
        if let Ok(old) = std::fs::read(&path) {
            if old != text.as_bytes() && !force {
                return Err(Error::refused_with_hint(
                    format!("{} exists with other content; nothing was written", path.display()),
                    "compare it with the shipped file, or replace it with --force (it is in your history either way)",
                ));
            }
        }
    }
    let mut out = Vec::new();
    for (rel, text) in files {
        let path = top.join(rel);
        if std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
            out.push(Installed::AlreadyThere(path));
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::failed(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| Error::failed(format!("cannot write {}: {e}", path.display())))?;
        out.push(Installed::Written(path));
    }
    Ok(out)
}
