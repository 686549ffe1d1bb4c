//! Living in a shell: completions loaded into bash, the manual installed and shown by
//! `git ledger --help`, clap's own `-h`/`--help`, colour only on a terminal without
//! `NO_COLOR`, and quiet exits when the reader of stdout goes away.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::common::{bin, ledger, pin_env, project_root, require_tool, which, write, Run};

const DECL: &str = "arena/campaign.json";

fn run(cmd: &mut Command) -> Run {
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("spawn");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A directory holding the embedded campaign's template ledger as `ledger.json`.
fn template() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let r = ledger(&project_root(), &["template", DECL]);
    r.ok();
    write(dir.path(), "ledger.json", &r.stdout);
    let p = dir.path().join("ledger.json").to_str().unwrap().to_owned();
    (dir, p)
}

/// bash with the completion script loaded, running `body`; prints what `body` echoes.
fn bash_with_completions(body: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let r = ledger(dir.path(), &["completions", "bash"]);
    r.ok();
    write(dir.path(), "git-ledger.bash", &r.stdout);
    let script = format!("source ./git-ledger.bash || exit 9\n{body}");
    let mut cmd = Command::new("bash");
    pin_env(&mut cmd)
        .current_dir(dir.path())
        .args(["--norc", "--noprofile", "-c", &script]);
    run(&mut cmd)
}

#[test]
fn bash_completion_registers_and_completes() {
    let r = bash_with_completions(
        r#"
complete -p git-ledger
ask() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _git__ledger git-ledger "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; echo "[${COMPREPLY[*]}]"; }
ask git-ledger rep
ask git-ledger report --for
ask git-ledger report --format ""
ask git-ledger completions ""
gask() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
         _git_ledger; echo "git: [${COMPREPLY[*]}]"; }
gask git ledger inst
gask git ledger report --format m
"#,
    );
    r.ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("complete ") && lines[0].ends_with(" -F _git__ledger git-ledger"),
        "{}",
        r.stdout
    );
    assert_eq!(
        &lines[1..],
        [
            "[report repair]",
            "[--format]",
            "[text json markdown html]",
            "[-h --help bash elvish fish powershell zsh]",
            "git: [install-man]",
            "git: [markdown]",
        ],
        "{}",
        r.stderr
    );
}

#[test]
fn zsh_and_fish_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let z = ledger(dir.path(), &["completions", "zsh"]);
    z.ok();
    assert!(z.stdout.starts_with("#compdef git-ledger"));
    assert!(z.stdout.contains("markdown"));
    let f = ledger(dir.path(), &["completions", "fish"]);
    f.ok();
    assert!(f.stdout.contains("complete -c git-ledger"));
    let bad = ledger(dir.path(), &["completions", "tcsh"]);
    bad.expect_code(64);
}

#[test]
fn clap_help_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["-h", "--help"] {
        let r = ledger(dir.path(), &[flag]);
        r.ok();
        assert!(
            r.stdout.contains("Usage: git-ledger"),
            "{flag}: {}",
            r.stdout
        );
        assert!(r.stdout.contains("install-man"));
    }
    let r = ledger(dir.path(), &["report", "--help"]);
    r.ok();
    assert!(r.stdout.contains("--format <FORMAT>"));
    assert!(r.stdout.contains("markdown"));
}

#[test]
fn install_man_writes_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("share/man/man1");
    let r = ledger(
        dir.path(),
        &["install-man", "--prefix", dir.path().to_str().unwrap()],
    );
    r.ok();
    assert!(
        r.stdout
            .starts_with(&format!("wrote 22 manual pages to {}\n", target.display())),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("MANPATH") || r.stdout.contains("man already searches"));
    let mut names: Vec<String> = std::fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "git-ledger-audit.1",
            "git-ledger-check.1",
            "git-ledger-cite.1",
            "git-ledger-completions.1",
            "git-ledger-diff.1",
            "git-ledger-hook.1",
            "git-ledger-hooks.1",
            "git-ledger-import.1",
            "git-ledger-init.1",
            "git-ledger-install-man.1",
            "git-ledger-log.1",
            "git-ledger-pin.1",
            "git-ledger-put.1",
            "git-ledger-repair.1",
            "git-ledger-report.1",
            "git-ledger-runtime-identity.1",
            "git-ledger-show.1",
            "git-ledger-sync.1",
            "git-ledger-template.1",
            "git-ledger-verify.1",
            "git-ledger-witness.1",
            "git-ledger.1",
        ]
    );
    // Installing again replaces the pages.
    ledger(
        dir.path(),
        &["install-man", "--dir", target.to_str().unwrap()],
    )
    .ok();
    let top = std::fs::read_to_string(target.join("git-ledger.1")).unwrap();
    assert!(top.contains(".TH git-ledger 1"));
    // Without HOME, and without --dir or --prefix, there is nowhere to go.
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd).env_remove("HOME").arg("install-man");
    run(&mut cmd).expect_code(64);
}

/// `git ledger --help` is `git help ledger`, which is `man git-ledger`: the installed page.
#[test]
fn git_ledger_help_shows_the_manual() {
    if which("man").is_none() {
        require_tool("man", "`git ledger --help`");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mandir = dir.path().join("man");
    ledger(
        dir.path(),
        &[
            "install-man",
            "--dir",
            mandir.join("man1").to_str().unwrap(),
        ],
    )
    .ok();
    let bin_dir = bin().parent().unwrap().to_owned();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let man_env = |cmd: &mut Command| {
        pin_env(cmd)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("MANPATH", &mandir)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("MANWIDTH", "100")
            .env_remove("MANOPT")
            .env_remove("GIT_MAN_VIEWER");
    };
    let mut cmd = Command::new("git");
    man_env(&mut cmd);
    cmd.args(["ledger", "--help"]);
    let r = run(&mut cmd);
    r.ok();
    let page = strip_overstrike(&r.stdout);
    for want in [
        "NAME",
        "git-ledger - Citeable AI coding-agent evaluation ledgers",
        "SYNOPSIS",
        "SUBCOMMANDS",
        "git-ledger-report(1)",
        "EXIT STATUS",
        "NO_COLOR",
    ] {
        assert!(page.contains(want), "{want:?} in:\n{page}\n{}", r.stderr);
    }
    // Each command has its page.
    let mut cmd = Command::new("man");
    man_env(&mut cmd);
    cmd.arg("git-ledger-report");
    let r = run(&mut cmd);
    r.ok();
    let page = strip_overstrike(&r.stdout);
    assert!(
        page.contains("git-ledger-report - Classify every attempt"),
        "{page}"
    );
    assert!(page.contains("--format"), "{page}");
}

/// Remove `x\bx` bold and `_\bx` underline overstrikes (man without a terminal may keep them).
fn strip_overstrike(s: &str) -> String {
    let mut out: Vec<char> = Vec::with_capacity(s.len());
    for ch in s.chars() {
        if ch == '\u{8}' {
            out.pop();
            continue;
        }
        out.push(ch);
    }
    out.into_iter()
        .collect::<String>()
        .replace(['\u{2010}', '\u{2212}'], "-")
}

/// The reader of stdout goes away at once: every write fails with EPIPE. The command ends with
/// status 0 and prints nothing on stderr.
#[test]
fn closed_stdout_is_not_an_error() {
    let (_d, ledger_path) = template();
    for args in [
        vec!["report", DECL, &ledger_path],
        vec!["report", "--format", "html", DECL, &ledger_path],
        vec!["report", "--json", DECL, &ledger_path],
        vec!["template", DECL],
        vec!["completions", "bash"],
    ] {
        let mut cmd = Command::new(bin());
        pin_env(&mut cmd)
            .current_dir(project_root())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}

/// As a user types it: `git-ledger report … | head -1`.
#[test]
fn report_piped_into_head() {
    let (_d, ledger_path) = template();
    let script = format!(
        "{} report {DECL} {ledger_path} | head -1; echo \"status=${{PIPESTATUS[0]}}\"",
        bin().display()
    );
    let mut cmd = Command::new("bash");
    pin_env(&mut cmd)
        .current_dir(project_root())
        .args(["--norc", "-c", &script]);
    let r = run(&mut cmd);
    assert_eq!(r.stdout, "Campaign reliability-634-slice-1\nstatus=0\n");
    assert_eq!(r.stderr, "");
}

/// Run the text report under a pseudo-terminal (`script`), with `no_color` as NO_COLOR.
fn report_on_a_terminal(ledger_path: &str, no_color: Option<&str>) -> String {
    let line = format!("{} report {DECL} {ledger_path}", bin().display());
    let mut cmd = Command::new("script");
    pin_env(&mut cmd)
        .current_dir(project_root())
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .args(["-qec", &line, "/dev/null"]);
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let r = run(&mut cmd);
    r.ok();
    r.stdout
}

#[test]
fn colour_only_on_a_terminal_without_no_color() {
    if which("script").is_none() {
        require_tool("script (util-linux)", "the colour test");
        return;
    }
    let (_d, ledger_path) = template();
    let coloured = report_on_a_terminal(&ledger_path, None);
    assert!(
        coloured.contains("\x1b[1;31mBLOCKED\x1b[0m"),
        "{coloured:?}"
    );
    assert!(coloured.contains("\x1b[33mNot attempted"));
    let plain = report_on_a_terminal(&ledger_path, Some("1"));
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(plain.contains("BLOCKED (24 rows, 24 reasons)"), "{plain}");
    // NO_COLOR set but empty does not disable colour (no-color.org).
    assert!(report_on_a_terminal(&ledger_path, Some("")).contains('\x1b'));
    // Not a terminal: no colour even without NO_COLOR.
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .current_dir(project_root())
        .env_remove("NO_COLOR")
        .args(["report", DECL, &ledger_path]);
    assert!(!run(&mut cmd).stdout.contains('\x1b'));
    // Never in JSON, Markdown or HTML, even on a terminal.
    for format in ["json", "markdown", "html"] {
        let line = format!(
            "{} report --format {format} {DECL} {ledger_path}",
            bin().display()
        );
        let mut cmd = Command::new("script");
        pin_env(&mut cmd)
            .current_dir(project_root())
            .env_remove("NO_COLOR")
            .args(["-qec", &line, "/dev/null"]);
        assert!(!run(&mut cmd).stdout.contains('\x1b'), "{format}");
    }
}
