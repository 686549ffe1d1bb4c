//! Hosted forges that run no hook (GitHub.com, GitLab.com; `docs/forges.md`): the settings
//! `init --forge` prints, and the CI files `hooks install --forge` writes in the hook's place
//! (shipped in this repository under `forge/`, embedded in the binary).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Which forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Forge {
    Github,
    Gitlab,
}

/// The script each forge's CI job runs for one push (`forge/verify-push.sh`).
pub const VERIFY_PUSH: &str = include_str!("../../forge/verify-push.sh");
/// The script of the optional scheduled witness job (`forge/witness.sh`).
pub const WITNESS: &str = include_str!("../../forge/witness.sh");
/// The GitHub Actions workflow (`forge/github/git-ledger.yml`).
pub const GITHUB_WORKFLOW: &str = include_str!("../../forge/github/git-ledger.yml");
/// The GitLab CI job (`forge/gitlab/git-ledger.gitlab-ci.yml`).
pub const GITLAB_JOB: &str = include_str!("../../forge/gitlab/git-ledger.gitlab-ci.yml");

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

/// Put `repo`'s ledgers on branches: `git config ledger.refPrefix refs/heads/ledgers/`, then
/// the repository reopened (its configuration read anew). Refused when it has ledgers under
/// another prefix (a repository never mixes them) or another prefix is configured.
pub fn use_branch_prefix(repo: gix::Repository) -> Result<gix::Repository> {
    use crate::git::layout::{LedgerRefs, DEFAULT_PREFIX, FORGE_PREFIX, KEY_PREFIX};
    let refs = LedgerRefs::checked(&repo)?;
    if refs.prefix() == FORGE_PREFIX {
        return Ok(repo);
    }
    let existing = crate::git::store::ledger_refs(&repo)?;
    if !existing.is_empty() || refs.prefix() != DEFAULT_PREFIX {
        let names: Vec<String> = existing.into_iter().map(|(n, _)| n).collect();
        return Err(Error::refused_with_hint(
            format!(
                "this repository keeps its ledgers under {} (git config {KEY_PREFIX}){}; --forge would put new ones under {FORGE_PREFIX}, and a repository never mixes the two",
                refs.prefix(),
                if names.is_empty() { String::new() } else { format!(": {}", names.join(", ")) }
            ),
            "start the forge's ledgers in a new repository, or move these (the same commits under a new name; docs/forges.md, \"Moving ledgers to the branch prefix\"): for each <id>, `git update-ref refs/heads/ledgers/<id> refs/ledgers/<id>` and `git -c core.hooksPath=/dev/null update-ref -d refs/ledgers/<id>` (the hooks refuse any deletion of a ledger ref), then `git config ledger.refPrefix refs/heads/ledgers/` and `git ledger verify`",
        ));
    }
    let dir = repo.workdir().unwrap_or(repo.git_dir()).to_owned();
    let out = crate::git::transport::git(&dir, &["config", KEY_PREFIX, FORGE_PREFIX])?;
    if !out.ok {
        return Err(Error::failed(format!(
            "git config {KEY_PREFIX} {FORGE_PREFIX} failed:\n{}",
            out.stderr.trim_end()
        )));
    }
    crate::git::open(Some(&dir))
}

/// What installing one file did.
#[derive(Debug, PartialEq, Eq)]
pub enum Installed {
    Written(PathBuf),
    AlreadyThere(PathBuf),
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
