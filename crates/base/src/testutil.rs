//! Helpers for the tests of every crate (the `test-support` feature): running `git` in a test
//! repository with a fixed identity and dates, and an error's reasons as text.

/// Run `git` in `dir` with a fixed identity and dates and no user or system configuration;
/// returns its standard output without the trailing newline.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "C")
        .env("GIT_COMMITTER_EMAIL", "c@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-29T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-29T10:00:00Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
}

/// Each reason of an error rendered as its text (or the one message of an error that is not a
/// refusal), for the tests that read the text.
pub fn texts(e: &crate::error::Error) -> Vec<String> {
    match e.message() {
        Some(m) => vec![m],
        None => e
            .refusal_reasons()
            .iter()
            .map(ToString::to_string)
            .collect(),
    }
}
