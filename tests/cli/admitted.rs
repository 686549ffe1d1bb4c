//! What a reviewer is shown (review §2 and §5 of the issue 26 work: docs/reference/cli.md,
//! docs/messages.md): `report` and `show` refuse a ledger state `verify` refuses unless
//! `--unverified` (a banner first in every format), `log` and `diff` mark it, JSON says
//! `admitted`; messages that claim more than the change did, an author who is not the
//! committer and a backdated commit are each caught with their reason; the honest ledger passes.

use std::path::Path;

use serde_json::Value;

use crate::common::{git, git_run, ledger, Run};
use crate::gitstore::{read_files, regular, state_commit, Fixture, REF};

const FILLED: &str = "arena/sympy-matrix/01";

/// The honest ledger: one hand row filled as FAIL (`put`).
fn honest() -> Fixture {
    let f = Fixture::new(1);
    f.put(FILLED, "FAIL").ok();
    f
}

/// Edit the filled row FAIL -> PASS with plain Git, as a commit on the tip that keeps the
/// tip's message (no hooks: a plain repository); returns the new tip.
fn plain_edit(f: &Fixture) -> String {
    let tip = f.tip();
    let mut files = read_files(f.dir(), &tip);
    let path = format!("rows/{FILLED}.json");
    let text = String::from_utf8(files[&path].bytes.clone()).unwrap();
    files.insert(
        path,
        regular(
            text.replace("\"FAIL\"", "\"PASS\"")
                .replace("\"INCOMPLETE\"", "\"COMPLETED\"")
                .into_bytes(),
        ),
    );
    let message = git(f.dir(), &["log", "-1", "--format=%B", &tip]);
    let edited = state_commit(f.dir(), &files, &[&tip], &message);
    git(f.dir(), &["update-ref", REF, &edited, &tip]);
    edited
}

/// A mirror clone of `from` (the reviewer's copy: refs as the server has them, no hooks).
fn mirror(from: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = git_run(
        dir.path(),
        &["clone", "-q", "--mirror", from.to_str().unwrap(), "m.git"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    dir
}

fn at(dir: &Path, args: &[&str]) -> Run {
    ledger(dir, args)
}

#[test]
fn an_edited_row_reached_by_a_mirror_clone_is_refused_unless_unverified() {
    let f = honest();
    let honest_tip = f.tip();
    let edited = plain_edit(&f);
    let m = mirror(f.dir());
    let dir = m.path().join("m.git");
    let dir = dir.as_path();

    let r = at(dir, &["report"]);
    r.expect_code(2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .contains(&format!("ledger state {edited} is not admitted"))
            && r.stderr.contains("rule 4")
            && r.stderr.contains("--unverified"),
        "{}",
        r.stderr
    );
    for args in [
        vec!["show"],
        vec!["show", "--row", FILLED],
        vec!["show", "--declaration"],
    ] {
        let r = at(dir, &args);
        r.expect_code(2);
        assert!(
            r.stdout.is_empty() && r.stderr.contains("rule 4"),
            "{args:?}: {}",
            r.stderr
        );
    }

    // --unverified: the banner first, in every format.
    let text = at(dir, &["report", "--unverified"]).ok().stdout.clone();
    assert!(
        text.starts_with("NOT ADMITTED: verify refuses this ledger state (commit "),
        "{text}"
    );
    assert!(text.lines().next().unwrap().contains("rule 4"), "{text}");
    let md = at(dir, &["report", "--unverified", "--format", "markdown"])
        .ok()
        .stdout
        .clone();
    assert!(
        md.starts_with("> [!CAUTION]\n> NOT ADMITTED: verify refuses"),
        "{md}"
    );
    let html = at(dir, &["report", "--unverified", "--format", "html"])
        .ok()
        .stdout
        .clone();
    let body = &html[html.find("<body").unwrap()..];
    let first = body.lines().nth(1).unwrap();
    assert!(
        first.starts_with("<p id=\"not-admitted\" role=\"alert\""),
        "{first}"
    );
    assert!(first.contains("NOT ADMITTED"), "{first}");
    let j = at(dir, &["report", "--unverified", "--json"])
        .ok()
        .stdout
        .clone();
    assert!(j.starts_with("{\n  \"admitted\": false,"), "{j}");
    let v: Value = serde_json::from_str(&j).unwrap();
    assert!(v["refused"].as_str().unwrap().contains("rule 4"), "{v}");
    let s = at(dir, &["show", "--unverified"]);
    s.ok();
    assert!(
        s.stderr.starts_with("NOT ADMITTED: verify refuses"),
        "{}",
        s.stderr
    );
    assert!(
        s.stdout.contains("\"PASS\""),
        "the document itself, unchanged"
    );

    // log marks the edit; diff says which side is not admitted; verify refuses.
    let log = at(dir, &["log"]);
    log.expect_code(2);
    let first = log.stdout.lines().next().unwrap();
    assert!(
        first.starts_with(&edited[..7]) && first.contains("verify refuses it"),
        "{}",
        log.stdout
    );
    let d = at(dir, &["diff", &honest_tip, &edited]);
    d.ok();
    assert!(
        d.stdout.contains(&format!(
            "NOT ADMITTED: B ({edited}) is not admitted: commit {edited}: rule 4"
        )),
        "{}",
        d.stdout
    );
    let dj = at(dir, &["diff", &honest_tip, &edited, "--json"])
        .ok()
        .json();
    assert_eq!(dj["admitted"]["a"], true);
    assert_eq!(dj["admitted"]["b"], false);
    at(dir, &["verify"]).expect_code(2);

    // The honest state in the same clone is shown as admitted.
    let ok = at(dir, &["report", "--at", &honest_tip, "--json"])
        .ok()
        .json();
    assert_eq!(ok["admitted"], true);
    assert_eq!(ok["refused"], Value::Null);
    let t = at(dir, &["report", "--at", &honest_tip])
        .ok()
        .stdout
        .clone();
    assert!(!t.contains("NOT ADMITTED"), "{t}");
    at(dir, &["show", "--at", &honest_tip]).ok();
    let d = at(dir, &["diff", &format!("{honest_tip}~1"), &honest_tip])
        .ok()
        .stdout
        .clone();
    assert!(!d.contains("NOT ADMITTED"), "{d}");
}
