//! Helpers shared by the integration tests: pinned environment, temporary repositories made
//! with the real `git`, and running the built binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The built binary under test (`GIT_LEDGER_TEST_BIN` runs the tests against another build,
/// e.g. the one before a fix, to see a reproduction fail).
pub fn bin() -> PathBuf {
    std::env::var_os("GIT_LEDGER_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_git-ledger")))
}

/// The repository this test suite lives in (for the embedded campaign).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Apply the pinned environment to a command: no user or system Git config, fixed identities
/// and dates, UTC, C locale, no colour.
pub fn pin_env(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        // One identity as author and committer: a ledger commit is written by one (rule 7).
        .env("GIT_AUTHOR_NAME", "Test Committer")
        .env("GIT_AUTHOR_EMAIL", "committer@example.com")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-29T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-29T10:00:00Z")
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .env("NO_COLOR", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
}

/// What a process printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
    /// Panic with everything printed unless the exit status is `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit status {} (wanted {code})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
    #[track_caller]
    pub fn ok(&self) -> &Self {
        self.expect_code(0)
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Run the binary in `dir` with `args`.
pub fn ledger(dir: &Path, args: &[&str]) -> Run {
    ledger_stdin(dir, args, None)
}

/// Run the binary in `dir` with `args`, feeding `stdin`. Its JSON output, if any, must follow
/// its schema in docs/schemas/ (`schemas::check_output`).
pub fn ledger_stdin(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd).current_dir(dir).args(args);
    let run = run_with_stdin(cmd, stdin);
    crate::schemas::check_output(args, &run);
    run
}

/// Run `git` in `dir`, panicking on failure; returns stdout trimmed.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let r = git_run(dir, args, None);
    assert_eq!(r.code, 0, "git {args:?} failed:\n{}{}", r.stdout, r.stderr);
    r.stdout.trim_end().to_owned()
}

/// Run `git` in `dir` and return what happened.
pub fn git_run(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut cmd = Command::new("git");
    pin_env(&mut cmd).current_dir(dir).args(args);
    run_with_stdin(cmd, stdin)
}

fn run_with_stdin(mut cmd: Command, stdin: Option<&[u8]>) -> Run {
    use std::io::Write;
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(input).expect("write stdin");
    }
    Run::from(child.wait_with_output().expect("wait"))
}

/// A fresh, empty non-bare repository in a temporary directory.
pub fn new_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q", "-b", "main"]);
    dir
}

/// The ledger ref prefixes every ref-mode test that is parametrised runs under: the default,
/// and the branch prefix of a hosted forge (`git config ledger.refPrefix`, `docs/forges.md`).
pub const PREFIXES: [&str; 2] = ["refs/ledgers/", "refs/heads/ledgers/"];

/// One test body, two `#[test]` entry points: for each `name`, a `fn name(prefix: &str)` in
/// scope runs as `name::refs_ledgers` (the default prefix) and `name::refs_heads_ledgers` (the
/// branch prefix of a hosted forge), so that a ref-mode test is parametrised, not copied.
macro_rules! under_both_prefixes {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[test]
            fn refs_ledgers() {
                super::$name($crate::common::PREFIXES[0])
            }
            #[test]
            fn refs_heads_ledgers() {
                super::$name($crate::common::PREFIXES[1])
            }
        }
    )+};
}
pub(crate) use under_both_prefixes;

/// Put `dir`'s ledgers under `prefix` (`git config ledger.refPrefix`, as `init --forge` does);
/// the default prefix is left unset, as in a repository nobody configured.
pub fn use_prefix(dir: &Path, prefix: &str) {
    if prefix != PREFIXES[0] {
        git(dir, &["config", "ledger.refPrefix", prefix]);
    }
}

/// The ledger ref of `id` in `dir`: under its `ledger.refPrefix`, else the default prefix.
pub fn ledger_ref(dir: &Path, id: &str) -> String {
    let r = git_run(dir, &["config", "--get", "ledger.refPrefix"], None);
    let prefix = if r.code == 0 {
        r.stdout.trim().to_owned()
    } else {
        PREFIXES[0].to_owned()
    };
    format!("{prefix}{id}")
}

/// Write `content` at `rel` under `root`, creating directories.
pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// Stage everything and commit; returns the full commit id.
pub fn commit_all(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The path of `name` on PATH, if it is there.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A test that needs an external tool calls this when the tool is missing: under CI (`CI`
/// set) it fails, because `.ci/install-deps.sh` installs the tool; on a developer's machine the
/// test is skipped with a loud message on stderr.
#[track_caller]
pub fn require_tool(tool: &str, what: &str) {
    let msg =
        format!("{tool} is not installed: {what} cannot run (install it with .ci/install-deps.sh)");
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{msg}");
    }
    // Written to the process's stderr directly: the test harness captures eprintln! of a
    // passing test, and a skip must be seen.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
}

/// PATH with the directory of the built binary first, so that hooks (and `git ledger`) find
/// `git-ledger`.
pub fn path_with_bin() -> std::ffi::OsString {
    let dir = bin().parent().unwrap().to_path_buf();
    let mut paths = vec![dir];
    if let Some(p) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(paths).unwrap()
}

/// Run `git` in `dir` with the binary on PATH (for commands that run our hooks).
pub fn git_hooked(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut cmd = Command::new("git");
    pin_env(&mut cmd)
        .env("PATH", path_with_bin())
        .current_dir(dir)
        .args(args);
    run_with_stdin(cmd, stdin)
}

/// Run the binary in `dir` with the binary on PATH (sync runs `git push`, which runs hooks).
pub fn ledger_hooked(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(bin());
    pin_env(&mut cmd)
        .env("PATH", path_with_bin())
        .current_dir(dir)
        .args(args);
    let run = run_with_stdin(cmd, None);
    crate::schemas::check_output(args, &run);
    run
}

/// A bare repository with the server hook installed (`hooks install --server`).
pub fn hooked_server(parent: &Path, name: &str) -> PathBuf {
    let server = parent.join(name);
    git(parent, &["init", "-q", "--bare", "-b", "main", name]);
    ledger(
        parent,
        &[
            "hooks",
            "install",
            "--server",
            "--repo",
            server.to_str().unwrap(),
        ],
    )
    .ok();
    server
}

/// `git daemon` serving `base` on 127.0.0.1 (a free port, receive-pack enabled), killed on drop.
pub struct Daemon {
    child: std::process::Child,
    pub port: u16,
}

impl Daemon {
    pub fn start(base: &Path) -> Daemon {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        // The daemon binary itself, not `git daemon`: `git` would run it as a child, and killing
        // `git` would leave the daemon running.
        let exec_path = git(base, &["--exec-path"]);
        let mut cmd = Command::new(Path::new(&exec_path).join("git-daemon"));
        pin_env(&mut cmd)
            .env("PATH", path_with_bin())
            .args([
                "--reuseaddr",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={}", base.display()),
                "--export-all",
                "--enable=receive-pack",
                "--informative-errors",
                &base.display().to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().expect("start git daemon");
        let d = Daemon { child, port };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "git daemon did not accept on port {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        d
    }

    pub fn url(&self, repo: &str) -> String {
        format!("git://127.0.0.1:{}/{repo}", self.port)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
