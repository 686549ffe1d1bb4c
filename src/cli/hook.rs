//! `git-ledger hook …` (the entry points the scripts in `hooks/` call) and `git-ledger hooks
//! install`.

use std::io::Read;
use std::path::PathBuf;

use super::Io;
use crate::error::{exit, Error, Result};
use crate::hook::{self, Bounds};

/// The hook entry points (called by the scripts `git ledger hooks install` writes).
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub which: HookKind,
    /// The repository (default: discovered from the current directory; Git sets GIT_DIR).
    #[arg(long, value_name = "DIR", global = true)]
    pub repo: Option<PathBuf>,
    /// Largest blob read (default: `git config ledger.maxBlobBytes`, else 64 MiB).
    #[arg(long, value_name = "BYTES", global = true)]
    pub max_blob_bytes: Option<u64>,
    /// Most commits walked per push (default: `git config ledger.maxCommitsPerPush`, else 10000).
    #[arg(long, value_name = "N", global = true)]
    pub max_commits: Option<usize>,
    /// Most changed row files read per push (default: `git config ledger.maxRowsPerPush`, else
    /// 100000).
    #[arg(long, value_name = "N", global = true)]
    pub max_rows: Option<usize>,
}

#[derive(Debug, clap::Subcommand)]
pub enum HookKind {
    /// Server side: check every pushed update of refs/ledgers/* (`<old> <new> <ref>` lines on
    /// standard input), reading the pushed objects from Git's quarantine; never writes refs.
    PreReceive,
    /// Local: in the `prepared` state, refuse any ref transaction that would move a
    /// refs/ledgers/* ref to an inadmissible state.
    ReferenceTransaction {
        /// prepared, committed or aborted (only prepared is checked).
        state: String,
    },
    /// Local: check every staged ledger file (`"format": "campaign-ledger/1"`) against HEAD.
    ///
    /// The pre-commit, pre-merge-commit (`git merge`) and pre-applypatch (`git am`) scripts
    /// all run this check on the index about to be committed.
    PreCommit,
}

/// Manage the hooks of this repository.
#[derive(Debug, clap::Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

#[derive(Debug, clap::Subcommand)]
pub enum HooksAction {
    /// Install the hooks into the hooks directory (honouring core.hooksPath).
    Install {
        /// Only pre-receive (for a bare repository on a server).
        #[arg(long)]
        server: bool,
        /// Replace a different existing hook; it is kept as <name>.local and run after ours.
        #[arg(long)]
        force: bool,
        /// The repository (default: discovered from the current directory).
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
        /// For a hosted forge that runs no hook: write its CI job into the work tree instead
        /// (GitHub: .github/workflows/git-ledger.yml; GitLab: .gitlab/git-ledger.gitlab-ci.yml),
        /// to commit on the default branch.
        #[arg(long, value_enum, value_name = "FORGE", conflicts_with = "server")]
        forge: Option<super::forge::Forge>,
    },
}

fn bounds(args: &HookArgs, repo: &gix::Repository) -> Result<Bounds> {
    let mut b = Bounds::from_config(repo)?;
    if let Some(v) = args.max_blob_bytes {
        b.max_blob_bytes = v;
    }
    if let Some(v) = args.max_commits {
        b.max_commits = v;
    }
    if let Some(v) = args.max_rows {
        b.max_rows = v;
    }
    Ok(b)
}

fn read_stdin() -> Result<String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| Error::failed(format!("cannot read the hook's standard input: {e}")))?;
    Ok(input)
}

pub fn run_hook(args: HookArgs, io: &mut Io) -> Result<i32> {
    let opened = crate::git::quarantine::open_for_hook(args.repo.as_deref())?;
    let repo = &opened.repo;
    let b = bounds(&args, repo)?;
    let (name, which) = match &args.which {
        HookKind::PreReceive => ("pre-receive", hook::Hook::PreReceive),
        HookKind::ReferenceTransaction { state } => (
            "reference-transaction",
            hook::Hook::ReferenceTransaction { state },
        ),
        HookKind::PreCommit => ("pre-commit", hook::Hook::PreCommit),
    };
    let result = hook::run(repo, which, read_stdin, &b)?;
    match result {
        Ok(admitted) => {
            if matches!(args.which, HookKind::PreReceive) {
                for (r, n) in admitted {
                    writeln!(
                        io.err,
                        "git-ledger: {r}: {n} commit{} admitted",
                        if n == 1 { "" } else { "s" }
                    )?;
                }
            }
            Ok(exit::OK)
        }
        Err(Error::Refused(reasons)) => {
            let what = match args.which {
                HookKind::PreReceive => "push refused",
                HookKind::ReferenceTransaction { .. } => "ref update refused",
                HookKind::PreCommit => "commit refused",
            };
            writeln!(
                io.err,
                "git-ledger {name}: {what} ({} reason{}):",
                reasons.len(),
                if reasons.len() == 1 { "" } else { "s" }
            )?;
            // Many of one kind: the first of each kind, then how many more.
            let (shown, omitted) = crate::error::shown_reasons(reasons.reasons());
            for r in shown {
                writeln!(io.err, "  {r}")?;
            }
            if omitted > 0 {
                writeln!(io.err, "  {}", crate::error::more_reasons(omitted))?;
            }
            let mut hints = reasons.hints().to_vec();
            if matches!(args.which, HookKind::PreReceive) {
                hints.push("find the commit locally with `git ledger verify`; ledgers written only by git ledger commands (put, import, repair, sync) pass this hook".into());
            }
            for h in hints {
                writeln!(io.err, "hint: {h}")?;
            }
            Ok(exit::REFUSED)
        }
        Err(e) => Err(e.context(format!("git-ledger {name}"))),
    }
}

pub fn run_hooks(args: HooksArgs, io: &mut Io) -> Result<i32> {
    match args.action {
        HooksAction::Install {
            server,
            force,
            repo,
            forge,
        } => {
            if let Some(forge) = forge {
                for o in hook::forge::install_in(repo.as_deref(), forge.into(), force)? {
                    match o {
                        hook::forge::Installed::Written(p) => {
                            writeln!(io.out, "wrote {}", p.display())?
                        }
                        hook::forge::Installed::AlreadyThere(p) => {
                            writeln!(io.out, "already there {}", p.display())?
                        }
                    }
                }
                writeln!(
                    io.out,
                    "commit them on the default branch, and switch on the protections of ledgers/* that `git ledger init --forge` printed (docs/forges.md)"
                )?;
                return Ok(0);
            }
            let installed = hook::install::install_in(repo.as_deref(), server, force)?;
            for o in installed.outcomes {
                match o {
                    hook::install::Outcome::Installed(p) => {
                        writeln!(io.out, "installed {}", p.display())?
                    }
                    hook::install::Outcome::AlreadyInstalled(p) => {
                        writeln!(io.out, "already installed {}", p.display())?
                    }
                    hook::install::Outcome::Chained(p, l) => writeln!(
                        io.out,
                        "installed {} (the hook that was there is now {}, run after ours)",
                        p.display(),
                        l.display()
                    )?,
                }
            }
            if !installed.on_path {
                writeln!(
                    io.err,
                    "warning: git-ledger is not on PATH; the hooks call it by name (or set GIT_LEDGER to its path in the hooks' environment), and without it they refuse every ledger file and ledger ref update"
                )?;
            }
            Ok(exit::OK)
        }
    }
}
