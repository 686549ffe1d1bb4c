//! Progress lines: drawn on stderr only when stderr is a terminal (`script` gives the binary a
//! pseudo-terminal), never in a piped or scripted run.

use std::process::{Command, Stdio};

use crate::common::{bin, ledger, pin_env, require_tool, which};
use crate::gitstore::Fixture;

/// A ledger ref under `prefix` whose chain is 60 commits long: the root and 59 puts.
fn sixty_commit_chain(prefix: &str) -> Fixture {
    let f = Fixture::under(20, prefix);
    let decl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(f.decl()).unwrap()).unwrap();
    for s in decl["schedule"].as_array().unwrap().iter().take(59) {
        f.put(s["id"].as_str().unwrap(), "ERROR").ok();
    }
    f
}

fn verify_draws_progress_on_a_terminal_only(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = sixty_commit_chain(prefix);
    // Not a terminal: the result on stdout, nothing on stderr.
    let r = f.run(&["verify"]);
    r.ok();
    assert_eq!(
        r.stdout,
        format!(
            "{rf}: 60 commits admitted, root to {}\n",
            crate::common::git(f.dir(), &["rev-parse", rf])
        )
    );
    assert_eq!(r.stderr, "", "no progress when stderr is not a terminal");
    if which("script").is_none() {
        require_tool("script (util-linux)", "the progress test");
        return;
    }
    // A terminal: the progress line is drawn (and erased), then the result.
    let line = format!("{} verify", bin().display());
    let mut cmd = Command::new("script");
    pin_env(&mut cmd)
        .current_dir(f.dir())
        .env("TERM", "xterm")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null());
    let out = cmd.output().expect("spawn script");
    assert_eq!(out.status.code(), Some(0));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains(&format!("\r\x1b[2Kverifying {rf} (commits)  60/60 (100%)")),
        "{shown:?}"
    );
    assert!(shown.contains("60 commits admitted"), "{shown:?}");
}

#[test]
fn pin_and_import_draw_no_progress_when_piped() {
    let (dir, _) = crate::pin::harness();
    let r = ledger(dir.path(), &["pin", "draft.json"]);
    r.ok();
    assert_eq!(r.stderr, "");
    assert!(r.stdout.starts_with('{'));
}

crate::common::under_both_prefixes!(verify_draws_progress_on_a_terminal_only,);
