//! The manual, generated from the clap definitions (clap_mangen): `git-ledger.1` and one page
//! per command (`git-ledger-report.1`, …), and `git-ledger install-man`, which writes them
//! where `man` finds them. Git turns `git ledger --help` into `git help ledger`, which runs
//! `man git-ledger`: that is this page.

use clap::CommandFactory;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Cli, Io};
use crate::error::{Error, Result};

/// Install the manual pages (git-ledger.1 and git-ledger-<command>.1) so that `man git-ledger`
/// and `git ledger --help` show them.
///
/// Default directory: $HOME/.local/share/man/man1. With --prefix P the pages go to
/// P/share/man/man1; with --dir D exactly to D.
#[derive(Debug, clap::Args)]
pub struct InstallManArgs {
    /// Write the pages into exactly this directory [default: $HOME/.local/share/man/man1].
    #[arg(long, value_name = "DIR", conflicts_with = "prefix")]
    pub dir: Option<PathBuf>,
    /// Write the pages into PREFIX/share/man/man1 (e.g. --prefix ~/.cargo next to cargo
    /// install's bin, or --prefix /usr/local).
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<PathBuf>,
}

/// The top page's DESCRIPTION.
pub(super) const DESCRIPTION: &str = "git-ledger keeps the ledger of an AI coding-agent evaluation campaign: a frozen declaration of the campaign (every input pinned by hash) and exactly one row per scheduled attempt, failures, errors and never-attempted rows included. The report classifies every row into a portfolio outcome, keeps live and fixture attempts apart, and refuses to compare while evidence is incomplete.\n\nOn the PATH, Git runs it as git ledger <command>; git ledger --help shows this page, git-ledger --help and -h print the short help. Each command has its own page: man git-ledger-<command>.";

/// Extra sections of the top page, as (title, paragraphs of (tag, text)).
pub(super) const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "done (a report whose comparison is blocked is still done)"),
    ("1", "could not run: I/O error, Git error, missing commit, store unreadable"),
    ("2", "refused: the input, ledger, declaration, record or transition breaks a rule (each reason printed)"),
    ("3", "a concurrent writer kept winning: the ref moved on every try (nothing was written)"),
    ("64", "usage error (unknown flag, missing argument)"),
];

pub(super) const ENVIRONMENT: &[(&str, &str)] = &[
    ("NO_COLOR", "when set to a non-empty value, no colour is written. Colour is only ever written to a terminal, never in JSON, Markdown or HTML."),
    ("GIT_DIR", "as for Git: which repository to use (wins over --repo)."),
];

pub(super) const EXAMPLES: &[(&str, &str)] = &[
    (
        "git ledger template arena/campaign.json > ledger.json",
        "the ledger with every scheduled row DEFERRED",
    ),
    (
        "git ledger report arena/campaign.json ledger.json",
        "the report as a table; --json for scripts",
    ),
    (
        "git ledger report --format markdown arena/campaign.json ledger.json",
        "a summary to paste into a pull-request comment",
    ),
    (
        "git ledger report --format html arena/campaign.json ledger.json > report.html",
        "one self-contained page for a reviewer",
    ),
    (
        "git-ledger completions bash > ~/.local/share/bash-completion/completions/git-ledger",
        "completion for git-ledger and git ledger",
    ),
];

/// Where the rest of the documentation is, in the git-ledger repository.
const DOCS: &str = "In the git-ledger repository: docs/guide/README.md (a tutorial from a draft to a cited result), docs/reference/README.md (commands, exit codes, configuration, formats), docs/hooks.md (the server hook), docs/decisions.md.";

/// The command tree the pages are made from (with subcommand display names set).
pub(super) fn command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Every page as (file name, roff bytes): `git-ledger.1` first, then each command's.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let cmd = command();
    let version = cmd.get_version().unwrap_or_default().to_owned();
    let source = format!("git-ledger {version}");
    let mut out = Vec::new();

    let top = cmd.clone().long_about(DESCRIPTION);
    let man = clap_mangen::Man::new(top)
        .source(source.clone())
        .manual("Git Manual");
    let mut buf = Vec::new();
    man.render(&mut buf)?;
    section(&mut buf, "EXIT STATUS", EXIT_STATUS)?;
    section(&mut buf, "ENVIRONMENT", ENVIRONMENT)?;
    section(&mut buf, "EXAMPLES", EXAMPLES)?;
    let subs: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| format!("git-ledger-{}(1)", s.get_name()))
        .collect();
    see_also(
        &mut buf,
        &[
            subs.join(", "),
            "git(1), git-help(1)".to_owned(),
            DOCS.to_owned(),
        ],
    )?;
    out.push((man.get_filename(), buf));

    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let man = clap_mangen::Man::new(sub.clone())
            .source(source.clone())
            .manual("Git Manual");
        let mut buf = Vec::new();
        man.render(&mut buf)?;
        see_also(&mut buf, &["git-ledger(1)".to_owned(), DOCS.to_owned()])?;
        out.push((man.get_filename(), buf));
    }
    Ok(out)
}

fn section(w: &mut dyn Write, title: &str, items: &[(&str, &str)]) -> std::io::Result<()> {
    writeln!(w, ".SH \"{title}\"")?;
    for (tag, text) in items {
        writeln!(w, ".TP")?;
        writeln!(w, "\\fB{}\\fR", roff(tag))?;
        writeln!(w, "{}", roff(text))?;
    }
    Ok(())
}

fn see_also(w: &mut dyn Write, lines: &[String]) -> std::io::Result<()> {
    writeln!(w, ".SH \"SEE ALSO\"")?;
    for l in lines {
        writeln!(w, "{}", roff(l))?;
        writeln!(w, ".br")?;
    }
    Ok(())
}

/// Escape text for a roff line: backslashes, hyphens (so they stay ASCII when copied) and a
/// leading control character.
fn roff(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            '\n' => out.push('\n'),
            _ => out.push(ch),
        }
    }
    out.lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the pages go when neither --dir nor --prefix is given.
fn default_dir() -> Result<PathBuf> {
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local/share/man/man1")),
        None => Err(Error::Usage(
            "HOME is not set: pass --dir DIR or --prefix PREFIX".into(),
        )),
    }
}

pub fn install(args: InstallManArgs, io: &mut Io) -> Result<i32> {
    let dir = match (&args.dir, &args.prefix) {
        (Some(d), _) => d.clone(),
        (None, Some(p)) => p.join("share/man/man1"),
        (None, None) => default_dir()?,
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::failed(format!("cannot create {}: {e}", dir.display())))?;
    let pages = pages()?;
    for (name, bytes) in &pages {
        let path = dir.join(name);
        write_atomically(&path, bytes)
            .map_err(|e| Error::failed(format!("cannot write {}: {e}", path.display())))?;
    }
    writeln!(
        io.out,
        "wrote {} manual pages to {}",
        pages.len(),
        dir.display()
    )?;
    // The directory `man` searches is the parent of man1.
    let root = dir.parent().unwrap_or(&dir);
    if man_finds(root) {
        writeln!(
            io.out,
            "man already searches {}: try `man git-ledger` or `git ledger --help`",
            root.display()
        )?;
    } else {
        writeln!(
            io.out,
            "to let man find them, add this to your shell profile (the trailing colon keeps the system pages):"
        )?;
        writeln!(io.out, "  export MANPATH=\"{}:$MANPATH\"", root.display())?;
        writeln!(
            io.out,
            "then `man git-ledger` or `git ledger --help` shows the manual"
        )?;
    }
    Ok(0)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether `manpath` (man-db) already lists `root`.
fn man_finds(root: &Path) -> bool {
    let Ok(out) = std::process::Command::new("manpath")
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return false;
    };
    let want = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(':')
        .any(|p| std::fs::canonicalize(p).is_ok_and(|p| p == want))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_page_per_command_and_the_top_page() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names[0], "git-ledger.1");
        for sub in [
            "git-ledger-report.1",
            "git-ledger-completions.1",
            "git-ledger-install-man.1",
        ] {
            assert!(names.contains(&sub), "{sub} in {names:?}");
        }
        assert!(!names.iter().any(|n| n.contains("help")));
        let top = String::from_utf8(pages[0].1.clone()).unwrap();
        assert!(top.starts_with(".ie \\n(.g .ds Aq"), "{}", &top[..80]);
        assert!(top.contains(".TH git-ledger 1"));
        assert!(top.contains(".SH \"EXIT STATUS\""));
        assert!(top.contains("git\\-ledger\\-report(1)"));
        let report = &pages
            .iter()
            .find(|(n, _)| n == "git-ledger-report.1")
            .unwrap()
            .1;
        let report = String::from_utf8_lossy(report);
        assert!(report.contains("markdown"), "{report}");
    }

    #[test]
    fn roff_escapes() {
        assert_eq!(roff("a-b\\c"), "a\\-b\\ec");
        assert_eq!(roff(".x\n'y"), "\\&.x\n\\&'y");
    }
}
