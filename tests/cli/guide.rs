//! The guide (`docs/guide/*.md`) is a test: every ```` ```console ```` block in it is run, and
//! what it shows must be what the commands print.
//!
//! The format of a block (the same as a terminal shows it):
//!
//! ```text
//! $ git ledger put scenario/ladder-2-ledger/01 row.json     <- a command, run by `bash -c`
//! scenario/ladder-2-ledger/01  INTERRUPTED_UNGRADED  ...    <- what it prints (stdout + stderr)
//! $ cat > card.json <<'EOF'                                 <- a command may go on over
//! > {"tasks": []}                                              `> ` lines (a heredoc, a `\`)
//! > EOF
//! $ git ledger put scenario/ladder-2-ledger/01 row.json
//! refused (2 reasons):
//! ...
//! ? 2                                                       <- a non-zero exit status
//! ```
//!
//! A command without a `? N` line must exit 0. Standard output and standard error go to one
//! pipe, in the order they are written. Trailing blanks of each line and trailing empty lines
//! are not compared.
//!
//! The pages run in name order in one scratch directory, as a reader who follows the guide
//! runs them: a page starts where the page before it ended (the directory a `cd` moved to, the
//! variables an `export` set, the files and refs it made). The first page starts in `[TMP]/git-ledger`, a fresh clone of this
//! repository (with its `origin` remote removed, so that nothing is ever pushed to it). The
//! environment is pinned: no user or system Git configuration, one identity (Ada Evaluator),
//! fixed author and committer dates, `TZ=UTC`, `LC_ALL=C`, `NO_COLOR=1`, `HOME` inside the
//! scratch directory, and the built `git-ledger` first on `PATH`, so `git ledger` runs it.
//!
//! Before comparing, both sides are masked the same way: the scratch directory's path becomes
//! `[TMP]`; a run of 7 or more hexadecimal digits with at least one decimal digit (a commit id,
//! a hash) becomes `[HASH]`; a date `YYYY-MM-DD` becomes `[DATE]`. An expected line may also
//! hold `[..]`, which matches any text within that line. So the guide shows real ids and
//! hashes, and a changed commit id alone never fails it.
//!
//! A page that needs a venv (the Inspect page, the Harbor page) is skipped without it, loudly
//! (under `CI` that is a failure); the Harbor page's blocks before its line
//! `<!-- guide: the blocks below need the Harbor venv and root -->` run without Harbor.
//!
//! A mismatch fails the test naming the page, the block's line, the command and a diff; every
//! mismatch of the whole guide is reported at once. `GUIDE_BLESS=1 cargo test --test cli guide`
//! rewrites, in place, the output shown for every command whose output no longer matches
//! (lines that still match, wildcards included, are kept), and the exit status line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{bin, project_root, require_tool};

/// The line of the Harbor page from which on its blocks need the Harbor venv and root: without
/// them, the blocks before it still run.
const NEEDS_HARBOR: &str = "<!-- guide: the blocks below need the Harbor venv and root -->";

/// The identity every guide command commits as.
const NAME: &str = "Ada Evaluator";
const EMAIL: &str = "ada@example.com";
/// The date every guide commit carries.
const DATE: &str = "2026-11-29T10:00:00Z";

/// One `$` command of a block, with what it must print.
#[derive(Debug, Clone, PartialEq)]
struct Cmd {
    /// The command text (continuation lines joined with newlines).
    text: String,
    /// The 1-based line of its `$` line in the page.
    line: usize,
    /// The expected output lines.
    expected: Vec<String>,
    /// The expected exit status.
    status: i32,
    /// The 0-based range of page lines holding the expected output and the `? N` line.
    span: std::ops::Range<usize>,
}

/// One ```` ```console ```` block.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    /// The 1-based line of its opening fence.
    line: usize,
    cmds: Vec<Cmd>,
}

/// The console blocks of a page, or why the page cannot be read as a guide page.
fn parse(text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim_start();
        if !fence.starts_with("```") {
            i += 1;
            continue;
        }
        let info = fence.trim_start_matches('`').trim();
        let open = i;
        // Find the closing fence.
        let mut end = i + 1;
        while end < lines.len() && lines[end].trim() != "```" {
            end += 1;
        }
        if end == lines.len() {
            return Err(format!(
                "line {}: a code block that is never closed",
                open + 1
            ));
        }
        if info == "console" {
            blocks.push(parse_block(&lines, open, end)?);
        }
        i = end + 1;
    }
    Ok(blocks)
}

/// The commands of the block between the fence at `open` and the one at `end`.
fn parse_block(lines: &[&str], open: usize, end: usize) -> Result<Block, String> {
    let mut cmds: Vec<Cmd> = Vec::new();
    let mut j = open + 1;
    while j < end {
        let l = lines[j];
        let Some(first) = l.strip_prefix("$ ") else {
            if cmds.is_empty() && !l.trim().is_empty() {
                return Err(format!(
                    "line {}: a console block must start with a `$ ` command, not {l:?}",
                    j + 1
                ));
            }
            j += 1;
            continue;
        };
        let line = j + 1;
        let mut text = first.to_owned();
        j += 1;
        while j < end {
            match lines[j]
                .strip_prefix("> ")
                .or(if lines[j] == ">" { Some("") } else { None })
            {
                Some(more) => {
                    text.push('\n');
                    text.push_str(more);
                    j += 1;
                }
                None => break,
            }
        }
        let start = j;
        while j < end && !lines[j].starts_with("$ ") {
            j += 1;
        }
        let mut expected: Vec<String> = lines[start..j].iter().map(|s| s.to_string()).collect();
        while expected.last().is_some_and(|l| l.trim().is_empty()) {
            expected.pop();
        }
        let mut status = 0;
        if let Some(last) = expected.last() {
            if let Some(n) = last.strip_prefix("? ") {
                status = n
                    .trim()
                    .parse()
                    .map_err(|_| format!("line {}: `? {n}` is not an exit status", j))?;
                expected.pop();
            }
        }
        cmds.push(Cmd {
            text,
            line,
            span: start..j,
            expected,
            status,
        });
    }
    if cmds.is_empty() {
        return Err(format!(
            "line {}: a console block without a command",
            open + 1
        ));
    }
    Ok(Block {
        line: open + 1,
        cmds,
    })
}

/// Replace every run of 7+ hex digits holding a decimal digit by `[HASH]`, and every date
/// `YYYY-MM-DD` by `[DATE]` (each only as a whole word).
fn mask(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let at_start = i == 0 || !word(b[i - 1]);
        if at_start && b[i].is_ascii_hexdigit() {
            let mut k = i;
            while k < b.len() && b[k].is_ascii_hexdigit() && !b[k].is_ascii_uppercase() {
                k += 1;
            }
            let ends = k == b.len() || !word(b[k]);
            // A date: 4 digits, '-', 2 digits, '-', 2 digits.
            if k == i + 4
                && b[i..k].iter().all(u8::is_ascii_digit)
                && b.len() >= i + 10
                && b[i + 4] == b'-'
                && b[i + 7] == b'-'
                && b[i + 5..i + 7].iter().all(u8::is_ascii_digit)
                && b[i + 8..i + 10].iter().all(u8::is_ascii_digit)
                && (b.len() == i + 10 || !b[i + 10].is_ascii_digit())
            {
                out.push_str("[DATE]");
                i += 10;
                continue;
            }
            if ends && k - i >= 7 && b[i..k].iter().any(u8::is_ascii_digit) {
                out.push_str("[HASH]");
                i = k;
                continue;
            }
            out.push_str(&line[i..k.max(i + 1)]);
            i = k.max(i + 1);
            continue;
        }
        let c = line[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Whether `actual` matches `expected` once masked, `[..]` matching any text in a line.
fn line_matches(expected: &str, actual: &str) -> bool {
    let (e, a) = (mask(expected.trim_end()), mask(actual.trim_end()));
    if !e.contains("[..]") {
        return e == a;
    }
    let parts: Vec<&str> = e.split("[..]").collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !a.starts_with(first) || a.len() < first.len() + last.len() || !a.ends_with(last) {
        return false;
    }
    let mut rest = &a[first.len()..a.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether every line matches.
fn output_matches(expected: &[String], actual: &[String]) -> bool {
    expected.len() == actual.len() && expected.iter().zip(actual).all(|(e, a)| line_matches(e, a))
}

/// The shell the guide's commands run in: one scratch directory, a current directory that
/// `cd` moves, and a pinned environment.
struct Shell {
    /// The scratch directory (removed on drop).
    scratch: tempfile::TempDir,
    /// Where the next command starts.
    cwd: PathBuf,
    /// How long one command may run before it is killed (and fails).
    timeout: std::time::Duration,
    /// Variables given to every command beyond the pinned ones (the Inspect venv).
    env: Vec<(String, String)>,
}

impl Shell {
    fn new() -> Shell {
        let scratch = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(scratch.path().join("home")).unwrap();
        let cwd = scratch.path().to_path_buf();
        Shell {
            scratch,
            cwd,
            timeout: std::time::Duration::from_secs(120),
            env: Vec::new(),
        }
    }

    fn root(&self) -> &Path {
        self.scratch.path()
    }

    /// Run `text` with `bash -c` in the current directory; returns the output lines (stdout
    /// and stderr as written, the scratch path replaced by `[TMP]`, trailing blanks and
    /// trailing empty lines removed) and the exit status. The directory the command ends in
    /// becomes the current directory.
    fn run(&mut self, text: &str) -> (Vec<String>, i32) {
        let cwd_file = self.root().join(".guide-cwd");
        let env_file = self.root().join(".guide-env");
        let (cwd_q, env_q) = (
            shell_quote(&cwd_file.display().to_string()),
            shell_quote(&env_file.display().to_string()),
        );
        let script = format!(
            "exec 2>&1\n[ -f {env_q} ] && . {env_q}\n{text}\n__guide_status=$?\n\
             pwd > {cwd_q}\n\
             export -p | grep -Ev '^declare -x (OLDPWD|PWD|SHLVL|_)(=|$)' > {env_q}\n\
             exit $__guide_status\n"
        );
        let bin_dir = bin().parent().unwrap().to_path_buf();
        let mut paths = vec![bin_dir];
        if let Some(p) = std::env::var_os("PATH") {
            paths.extend(std::env::split_paths(&p));
        }
        let mut cmd = Command::new("bash");
        cmd.arg("--noprofile")
            .arg("--norc")
            .arg("-c")
            .arg(&script)
            .current_dir(&self.cwd)
            .env_clear()
            .env("PATH", std::env::join_paths(paths).unwrap())
            .env("HOME", self.root().join("home"))
            .env("TERM", "dumb")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", NAME)
            .env("GIT_AUTHOR_EMAIL", EMAIL)
            .env("GIT_COMMITTER_NAME", NAME)
            .env("GIT_COMMITTER_EMAIL", EMAIL)
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE)
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .stdout(Stdio::piped());
        // Its own process group, so that a command that hangs is killed with its children.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().expect("run bash");
        let mut pipe = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            bytes
        });
        let deadline = std::time::Instant::now() + self.timeout;
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for bash") {
                break status.code().unwrap_or(-1);
            }
            if std::time::Instant::now() > deadline {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.wait();
                timed_out = true;
                break -1;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let mut stdout = reader.join().unwrap();
        if timed_out {
            stdout.extend_from_slice(
                format!("\n[killed: still running after {:?}]\n", self.timeout).as_bytes(),
            );
        }
        if let Ok(dir) = std::fs::read_to_string(&cwd_file) {
            let dir = PathBuf::from(dir.trim_end_matches('\n'));
            if dir.is_dir() {
                self.cwd = dir;
            }
        }
        let _ = std::fs::remove_file(&cwd_file);
        let mut text = String::from_utf8_lossy(&stdout).into_owned();
        let root = self.root().display().to_string();
        if let Ok(canon) = self.root().canonicalize() {
            let canon = canon.display().to_string();
            if canon != root {
                text = text.replace(&canon, "[TMP]");
            }
        }
        text = text.replace(&root, "[TMP]");
        let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        (lines, status)
    }
}

/// `s` quoted for the shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A command whose output did not match.
struct Mismatch {
    page: String,
    block_line: usize,
    cmd: Cmd,
    actual: Vec<String>,
    status: i32,
}

impl Mismatch {
    fn describe(&self) -> String {
        let shown = |lines: &[String], status: i32| {
            let mut s = lines.join("\n");
            if status != 0 {
                let _ = write!(s, "\n? {status}");
            }
            s.push('\n');
            s
        };
        let want = shown(&self.cmd.expected, self.cmd.status);
        let got = shown(&self.actual, self.status);
        let diff = similar::TextDiff::from_lines(&want, &got)
            .unified_diff()
            .header("shown in the guide", "printed")
            .to_string();
        format!(
            "{}:{}: block at line {}: `{}` does not print what the guide shows\n{diff}",
            self.page, self.cmd.line, self.block_line, self.cmd.text
        )
    }

    /// The page lines that replace the command's expected output: lines that still match are
    /// kept as written (wildcards included), others become what was printed.
    fn blessed(&self) -> Vec<String> {
        let mut out: Vec<String> = if self.actual.len() == self.cmd.expected.len() {
            self.cmd
                .expected
                .iter()
                .zip(&self.actual)
                .map(|(e, a)| {
                    if line_matches(e, a) {
                        e.clone()
                    } else {
                        a.clone()
                    }
                })
                .collect()
        } else {
            self.actual.clone()
        };
        if self.status != 0 {
            out.push(format!("? {}", self.status));
        }
        out
    }
}

/// Run every block of one page in `shell` (with `before`, only the blocks that open before that
/// 1-based line); returns the commands whose output did not match.
fn run_page(
    shell: &mut Shell,
    page: &str,
    text: &str,
    before: Option<usize>,
) -> Result<Vec<Mismatch>, String> {
    let blocks = parse(text).map_err(|e| format!("{page}: {e}"))?;
    let mut mismatches = Vec::new();
    for block in blocks {
        if before.is_some_and(|line| block.line >= line) {
            break;
        }
        for cmd in block.cmds {
            let (actual, status) = shell.run(&cmd.text);
            if status != cmd.status || !output_matches(&cmd.expected, &actual) {
                if actual.first().is_some_and(|l| l.starts_with("> ")) {
                    return Err(format!(
                        "{page}:{}: the output starts with `> `, which reads as a continuation \
                         of the command; print something before it",
                        cmd.line
                    ));
                }
                mismatches.push(Mismatch {
                    page: page.to_owned(),
                    block_line: block.line,
                    cmd,
                    actual,
                    status,
                });
            }
        }
    }
    Ok(mismatches)
}

/// `text` with the expected output of every mismatched command replaced by what it printed.
fn bless(text: &str, mismatches: &[Mismatch]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut edits: Vec<&Mismatch> = mismatches.iter().collect();
    edits.sort_by_key(|m| std::cmp::Reverse(m.cmd.span.start));
    for m in edits {
        // Keep the blank lines that separated the output from the next command.
        let span = m.cmd.span.clone();
        let kept_blank = lines[span.clone()]
            .iter()
            .rev()
            .take_while(|l| l.trim().is_empty())
            .count();
        let mut new = m.blessed();
        new.extend(std::iter::repeat_n(String::new(), kept_blank));
        lines.splice(span, new);
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The guide's pages, in the order a reader follows them.
fn pages() -> Vec<PathBuf> {
    let dir = project_root().join("docs/guide");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages
}

/// The Inspect venv the guide's Inspect page uses: `$GIT_LEDGER_INSPECT_VENV`, else
/// `<target dir>/inspect-venv`, when `.ci/inspect-venv.sh --check` of the clone says it is
/// built from the clone's `inspect-hook/` (so the page's `inspect-venv.sh` builds nothing).
/// Without it the Inspect page is skipped loudly; under CI that is a failure.
fn inspect_venv(clone: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("GIT_LEDGER_INSPECT_VENV") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => bin()
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .join("inspect-venv"),
    };
    let check = Command::new("bash")
        .arg(clone.join(".ci/inspect-venv.sh"))
        .arg("--check")
        .env("GIT_LEDGER_INSPECT_VENV", &dir)
        .output()
        .expect("run bash");
    if check.status.success() {
        return Some(dir);
    }
    let msg = format!(
        "the guide's Inspect page needs the Inspect venv built from this commit at {} \
         (bash .ci/inspect-venv.sh): {}",
        dir.display(),
        String::from_utf8_lossy(&check.stderr).trim()
    );
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{msg}");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
    None
}

/// The Harbor venv the guide's Harbor page uses: `$GIT_LEDGER_HARBOR_VENV`, else
/// `<target dir>/harbor-venv`, when `.ci/harbor-venv.sh --check` of the clone says it is built
/// from the clone's `harbor-plugin/` (so the page's `harbor-venv.sh` builds nothing), and the
/// page's environment can run (root, `unshare`, `chroot`). Without them the Harbor page is
/// skipped loudly; under CI that is a failure.
fn harbor_venv(clone: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("GIT_LEDGER_HARBOR_VENV") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => bin()
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .join("harbor-venv"),
    };
    let check = Command::new("bash")
        .arg(clone.join(".ci/harbor-venv.sh"))
        .arg("--check")
        .env("GIT_LEDGER_HARBOR_VENV", &dir)
        .output()
        .expect("run bash");
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let problem = if !check.status.success() {
        format!(
            "the guide's Harbor page needs the Harbor venv built from this commit at {} \
             (bash .ci/harbor-venv.sh): {}",
            dir.display(),
            String::from_utf8_lossy(&check.stderr).trim()
        )
    } else if !root
        || crate::common::which("unshare").is_none()
        || crate::common::which("chroot").is_none()
    {
        "the guide's Harbor page runs trials in a chroot per trial: it needs root, unshare and chroot"
            .to_owned()
    } else {
        return Some(dir);
    };
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{problem}");
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "\n!!!!!!!! SKIPPED: {problem} (its blocks before its NEEDS_HARBOR line still run) !!!!!!!!\n"
    );
    None
}

#[test]
fn the_guide_runs_as_written() {
    for tool in ["bash", "sqlite3", "ssh-keygen"] {
        if crate::common::which(tool).is_none() {
            require_tool(tool, "the guide test (docs/guide/)");
            return;
        }
    }
    let mut shell = Shell::new();
    // The reader's starting point: a clone of this repository, without a remote to push to.
    let clone = shell.root().join("git-ledger");
    let (out, status) = shell.run(&format!(
        "git clone -q {} {} && git -C {1} remote remove origin",
        shell_quote(&project_root().display().to_string()),
        shell_quote(&clone.display().to_string()),
    ));
    assert_eq!(
        status,
        0,
        "cloning the repository failed:\n{}",
        out.join("\n")
    );
    shell.cwd = clone.clone();
    let inspect_venv = inspect_venv(&clone);
    if let Some(v) = &inspect_venv {
        shell
            .env
            .push(("GIT_LEDGER_INSPECT_VENV".into(), v.display().to_string()));
    }
    let harbor_venv = harbor_venv(&clone);
    if let Some(v) = &harbor_venv {
        shell
            .env
            .push(("GIT_LEDGER_HARBOR_VENV".into(), v.display().to_string()));
    }

    let bless_mode = std::env::var_os("GUIDE_BLESS").is_some_and(|v| !v.is_empty());
    let mut report = String::new();
    let mut count = 0;
    let mut total_cmds = 0;
    for path in pages() {
        let name = path
            .strip_prefix(project_root())
            .unwrap()
            .display()
            .to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let cmds = parse(&text)
            .map(|b| b.iter().map(|b| b.cmds.len()).sum::<usize>())
            .unwrap_or(0);
        // A numbered page is a stage of the tutorial: it shows commands, and they run.
        let numbered = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.as_bytes()[0].is_ascii_digit());
        assert!(
            !numbered || cmds > 0,
            "{name}: a guide page without a console block"
        );
        total_cmds += cmds;
        // The Inspect page needs the Inspect venv (built by .ci/inspect-venv.sh).
        if name.contains("inspect") && inspect_venv.is_none() {
            continue;
        }
        // The Harbor page needs the Harbor venv (built by .ci/harbor-venv.sh) and root from
        // its `NEEDS_HARBOR` line on (the whole page without one); the blocks before it run
        // without them.
        let mut run_before = None;
        if name.contains("harbor") && harbor_venv.is_none() {
            match text.lines().position(|l| l.trim() == NEEDS_HARBOR) {
                Some(i) => run_before = Some(i + 1),
                None => continue,
            }
        }
        // A Harbor job starts Python and Harbor several times: on a loaded machine a command
        // may take minutes.
        shell.timeout =
            std::time::Duration::from_secs(if name.contains("harbor") { 600 } else { 120 });
        let mismatches =
            run_page(&mut shell, &name, &text, run_before).unwrap_or_else(|e| panic!("{e}"));
        if mismatches.is_empty() {
            continue;
        }
        count += mismatches.len();
        if bless_mode {
            std::fs::write(&path, bless(&text, &mismatches)).unwrap();
            let _ = writeln!(
                report,
                "{name}: rewrote {} command outputs",
                mismatches.len()
            );
        } else {
            for m in &mismatches {
                let _ = writeln!(report, "{}", m.describe());
            }
        }
    }
    assert!(
        total_cmds >= 40,
        "the guide runs only {total_cmds} commands"
    );
    // No page writes outside the directory it works in: nothing in HOME (no key under
    // `~/.ssh`, no global Git configuration in `~/.gitconfig` or `~/.config/git`). Inspect's
    // own data directory (`~/.local/share/inspect_ai`: its traces, sample buffer, last result),
    // which every `inspect eval` writes, is Inspect's, not the page's.
    let home = shell.root().join("home");
    let mut written: Vec<String> = Vec::new();
    let mut stack = vec![home.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = e.unwrap().path();
            let rel = path
                .strip_prefix(&home)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with(".local/share/inspect_ai") {
                continue;
            }
            if path.is_dir() && [".local", ".local/share"].contains(&rel.as_str()) {
                stack.push(path);
            } else {
                written.push(rel);
            }
        }
    }
    assert!(
        written.is_empty(),
        "the guide wrote into HOME ({}): {written:?}",
        home.display()
    );
    if bless_mode {
        eprintln!("{report}");
        return;
    }
    assert!(
        count == 0,
        "{count} guide commands do not print what the guide shows \
         (GUIDE_BLESS=1 cargo test --test cli guide rewrites them):\n\n{report}"
    );
}

#[cfg(test)]
mod runner {
    //! The runner itself, on pages written here: it must fail when a page no longer matches.
    use super::*;

    fn run(text: &str) -> Vec<Mismatch> {
        let mut shell = Shell::new();
        run_page(&mut shell, "page.md", text, None).unwrap()
    }

    #[test]
    fn a_matching_block_passes() {
        let page = "Text.\n\n```console\n$ echo hello\nhello\n$ printf 'a\\nb\\n'\na\nb\n```\n";
        assert!(run(page).is_empty());
    }

    #[test]
    fn a_block_whose_output_differs_fails_naming_page_block_and_line() {
        let page = "# Page\n\n```console\n$ echo hello\nhello\n```\n\n```console\n$ echo hello\ngoodbye\n```\n";
        let m = run(page);
        assert_eq!(m.len(), 1);
        let d = m[0].describe();
        assert!(
            d.starts_with("page.md:9: block at line 8: `echo hello`"),
            "{d}"
        );
        assert!(d.contains("-goodbye\n+hello\n"), "{d}");
    }

    #[test]
    fn a_missing_or_extra_line_fails() {
        assert_eq!(run("```console\n$ echo a; echo b\na\n```\n").len(), 1);
        assert_eq!(run("```console\n$ echo a\na\nb\n```\n").len(), 1);
    }

    #[test]
    fn a_wrong_exit_status_fails() {
        // Non-zero without `? N`.
        let m = run("```console\n$ false\n```\n");
        assert_eq!(m.len(), 1);
        assert!(m[0].describe().contains("+? 1"), "{}", m[0].describe());
        // Another status than shown.
        assert_eq!(run("```console\n$ exit 3\n? 2\n```\n").len(), 1);
        // Zero where a failure is shown.
        assert_eq!(run("```console\n$ true\n? 2\n```\n").len(), 1);
        // The shown status.
        assert!(run("```console\n$ echo no >&2; exit 3\nno\n? 3\n```\n").is_empty());
    }

    #[test]
    fn a_command_that_hangs_is_killed_and_fails() {
        let mut shell = Shell::new();
        shell.timeout = std::time::Duration::from_millis(300);
        let started = std::time::Instant::now();
        let m = run_page(
            &mut shell,
            "page.md",
            "```console\n$ echo started; sleep 30 & wait\nstarted\n```\n",
            None,
        )
        .unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert_eq!(m.len(), 1);
        assert!(
            m[0].describe().contains("[killed: still running after"),
            "{}",
            m[0].describe()
        );
    }

    #[test]
    fn stderr_is_shown_in_order_with_stdout() {
        assert!(run("```console\n$ echo 1; echo 2 >&2; echo 3\n1\n2\n3\n```\n").is_empty());
        assert_eq!(
            run("```console\n$ echo 1; echo 2 >&2\n2\n1\n```\n").len(),
            1
        );
    }

    #[test]
    fn state_carries_across_blocks_and_cd_moves() {
        let page = "```console\n$ mkdir sub && cd sub\n$ echo x > f\n```\nprose\n```console\n$ cat f\nx\n$ cd .. && ls sub\nf\n```\n";
        assert!(run(page).is_empty());
        // Exported variables carry over; plain shell variables do not; `unset` ends one.
        let page = "```console\n$ export A=1; B=2\n$ echo \"$A-$B\"\n1-\n$ unset A\n$ echo \"[$A]\"\n[]\n```\n";
        assert!(run(page).is_empty());
    }

    #[test]
    fn blocks_from_the_line_given_on_are_not_run() {
        // The page's second block opens at line 5: run before line 5, it does not run (its
        // wrong output is no mismatch); run before line 6, it does.
        let page = "```console\n$ echo a\na\n```\n```console\n$ echo b\nwrong\n```\n";
        let mut shell = Shell::new();
        assert!(run_page(&mut shell, "p.md", page, Some(5))
            .unwrap()
            .is_empty());
        let m = run_page(&mut shell, "p.md", page, Some(6)).unwrap();
        assert_eq!(m.len(), 1);
        assert!(m[0].describe().contains("+b\n"), "{}", m[0].describe());
        // The first block still runs, and fails when it no longer matches.
        let page = "```console\n$ echo a\nwrong\n```\n```console\n$ echo b\nb\n```\n";
        assert_eq!(
            run_page(&mut shell, "p.md", page, Some(5)).unwrap().len(),
            1
        );
    }

    #[test]
    fn continuation_lines_and_heredocs() {
        let page = "```console\n$ cat > f <<'EOF'\n> one\n> two\n> EOF\n$ cat f\none\ntwo\n```\n";
        assert!(run(page).is_empty());
    }

    #[test]
    fn ids_dates_and_the_scratch_path_are_masked() {
        let page = "```console\n$ echo 9eec09dbbc33 at 2026-11-29 in \"$PWD\"\n0123456789ab at 2025-01-31 in [TMP]\n```\n";
        assert!(run(page).is_empty());
        // Masking is of whole ids only: other text still counts.
        assert_eq!(
            run("```console\n$ echo abc 12345\nabc 12346\n```\n").len(),
            1
        );
        assert_eq!(
            run("```console\n$ echo 9eec09dbbc33 x\n0123456789ab y\n```\n").len(),
            1
        );
        assert_eq!(
            mask("att-0001 20261129T101500Z-a001"),
            "att-0001 20261129T101500Z-a001"
        );
        assert_eq!(mask("commit 7e2e1e2 (1/26)"), "commit [HASH] (1/26)");
        assert_eq!(mask("records/054a55e3c7b3.json"), "records/[HASH].json");
    }

    #[test]
    fn a_wildcard_matches_within_a_line_only() {
        assert!(run("```console\n$ echo took 12 ms\ntook [..] ms\n```\n").is_empty());
        assert_eq!(
            run("```console\n$ echo took 12 s\ntook [..] ms\n```\n").len(),
            1
        );
        assert_eq!(run("```console\n$ printf 'a\\nb\\n'\n[..]\n```\n").len(), 1);
    }

    #[test]
    fn malformed_pages_are_errors() {
        let e = parse("x\n```console\nno command\n```\n").unwrap_err();
        assert!(e.starts_with("line 3:"), "{e}");
        assert!(parse("```console\n$ echo\n").is_err());
        assert!(parse("```console\n```\n").is_err());
        // Other blocks are prose.
        assert!(parse("```sh\nnot run\n```\n").unwrap().is_empty());
    }

    #[test]
    fn bless_rewrites_what_differs_and_the_result_passes() {
        let page = "# P\n\n```console\n$ echo kept\nkept\n$ echo new; exit 4\nold\n\n$ echo took 9 ms; echo b\ntook [..] ms\nc\n```\n\nend\n";
        let mut shell = Shell::new();
        let m = run_page(&mut shell, "p.md", page, None).unwrap();
        assert_eq!(m.len(), 2);
        let blessed = bless(page, &m);
        assert_eq!(
            blessed,
            "# P\n\n```console\n$ echo kept\nkept\n$ echo new; exit 4\nnew\n? 4\n\n$ echo took 9 ms; echo b\ntook [..] ms\nb\n```\n\nend\n"
        );
        assert!(run(&blessed).is_empty());
    }
}
