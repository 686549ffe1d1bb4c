//! What a reviewer is shown (issue 26 items 2, 5 and 6; docs/reference/cli.md,
//! docs/messages.md): `report` and `show` refuse a ledger state `verify` refuses unless
//! `--unverified` (a banner first in every format), `log` and `diff` mark it, JSON says
//! `admitted`; messages that claim more than the change did, an author who is not the
//! committer and a backdated commit are each caught with their reason; the honest ledger passes.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{git, git_run, ledger, Run};
use crate::gitstore::{read_files, regular, state_commit, Fixture};

const FILLED: &str = "arena/sympy-matrix/01";

/// The honest ledger: one hand row filled as FAIL (`put`).
fn honest(prefix: &str) -> Fixture {
    let f = Fixture::under(1, prefix);
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
    git(f.dir(), &["update-ref", &f.refname, &edited, &tip]);
    edited
}

/// A mirror clone of `from` (the reviewer's copy: refs as the server has them, no hooks).
fn mirror(from: &Path, prefix: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = git_run(
        dir.path(),
        &["clone", "-q", "--mirror", from.to_str().unwrap(), "m.git"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    crate::common::use_prefix(&dir.path().join("m.git"), prefix);
    dir
}

fn at(dir: &Path, args: &[&str]) -> Run {
    ledger(dir, args)
}

fn an_edited_row_reached_by_a_mirror_clone_is_refused_unless_unverified(prefix: &str) {
    let f = honest(prefix);
    let honest_tip = f.tip();
    let edited = plain_edit(&f);
    let m = mirror(f.dir(), prefix);
    let dir = m.path().join("m.git");
    let dir = dir.as_path();

    let r = at(dir, &["report"]);
    r.expect_code(2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains(&format!(
            "\n  ledger state {edited}: commit {edited}: rule 4: "
        )) && r.stderr.contains("--unverified"),
        "{}",
        r.stderr
    );
    // As values: every reason verify gives, each at the state.
    let j = at(dir, &["report", "--json"]);
    j.expect_code(2);
    let details = j.json()["details"].clone();
    assert_eq!(
        details[0]["place"],
        json!([format!("ledger state {edited}"), format!("commit {edited}")]),
        "{details}"
    );
    assert_eq!(
        details[0]["rule"],
        json!({"spec": "admission", "number": 4}),
        "{details}"
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
    assert_eq!(
        v["refused"][0]["rule"],
        json!({"spec": "admission", "number": 4}),
        "{v}"
    );
    assert_eq!(
        v["refused"][0]["place"],
        json!([format!("commit {edited}")]),
        "{v}"
    );
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
    let side = &dj["admitted"]["refused"][0];
    assert_eq!(
        (&side["side"], &side["rev"]),
        (&json!("B"), &json!(edited)),
        "{dj}"
    );
    assert_eq!(
        (&side["reasons"][0]["place"], &side["reasons"][0]["rule"]),
        (
            &json!([format!("commit {edited}")]),
            &json!({"spec": "admission", "number": 4})
        ),
        "{dj}"
    );
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

/// `git ledger` in `dir` with extra environment (a clock set back, another author).
fn ledger_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = std::process::Command::new(crate::common::bin());
    crate::common::pin_env(&mut cmd).current_dir(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Put the tip's tree back on its parent with `message` (plain Git, no hooks); the new tip.
fn remessage(f: &Fixture, message: &str) -> String {
    let tip = f.tip();
    let files = read_files(f.dir(), &tip);
    let parent = git(f.dir(), &["rev-parse", &format!("{tip}~1")]);
    let c = state_commit(f.dir(), &files, &[&parent], message);
    git(f.dir(), &["update-ref", &f.refname, &c, &tip]);
    c
}

/// Each of `verify`, `report`, `show` and `log` refuses the tip (exit 2), naming `needle`.
#[track_caller]
fn caught_everywhere(f: &Fixture, what: &str, needle: &str) {
    for args in [vec!["verify"], vec!["report"], vec!["show"], vec!["log"]] {
        let r = f.run(&args);
        assert_eq!(r.code, 2, "{what}: {args:?}\n{}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(needle),
            "{what}: {args:?}: no {needle:?} in\n{}",
            r.stderr
        );
    }
    let log = f.run(&["log"]);
    let first = log.stdout.lines().next().unwrap_or_default().to_owned();
    assert!(
        first.contains("verify refuses it"),
        "{what}: {}",
        log.stdout
    );
}

fn a_body_claim_and_a_reviewed_by_trailer_are_caught_by_verify_report_show_and_log(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = honest(prefix);
    f.run(&["verify"]).ok();
    f.run(&["report"]).ok();
    let honest_tip = f.tip();
    let message = git(f.dir(), &["log", "-1", "--format=%B", &honest_tip]);
    let (head, trailers) = message.trim_end().rsplit_once("\n\n").unwrap();
    let claim = format!(
        "{head}\nIndependently re-run and audited by the benchmark maintainers.\n\n{trailers}\n"
    );
    remessage(&f, &claim);
    caught_everywhere(
        &f,
        "a body claim",
        "rule 7: line 5 of the body (\"Independently re-run",
    );
    let reviewed = format!(
        "{}\nReviewed-by: Benchmark Maintainers <m@bench.example>\n",
        message.trim_end()
    );
    remessage(&f, &reviewed);
    caught_everywhere(
        &f,
        "a Reviewed-by trailer",
        "trailer Reviewed-by is not one the tool writes",
    );
    // The honest message on the same tree is admitted again.
    git(f.dir(), &["update-ref", rf, &honest_tip]);
    f.run(&["verify"]).ok();
    assert!(!f.run(&["report"]).ok().stdout.contains("NOT ADMITTED"));
    f.run(&["log"]).ok();
}

fn a_backdated_commit_is_flagged_by_log_and_an_honest_one_is_not(prefix: &str) {
    let f = honest(prefix);
    let row = f.hand_row("scenario/bugfix-iso-weeks/01", "ERROR");
    ledger_env(
        f.dir(),
        &["put", "scenario/bugfix-iso-weeks/01", row.to_str().unwrap()],
        &[("GIT_COMMITTER_DATE", "2026-10-29T10:00:00Z")],
    )
    .ok();
    // Not a refusal (clocks differ): verify admits it, log says so.
    f.run(&["verify"]).ok();
    let log = f.run(&["log"]).ok().stdout.clone();
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].ends_with("(dated before its parent)"), "{log}");
    assert!(
        lines[1..].iter().all(|l| !l.contains("dated before")),
        "{log}"
    );
    let j = f.run(&["log", "--json"]).ok().json();
    assert_eq!(j[0]["dated_before_parent"], true);
    assert_eq!(j[1]["dated_before_parent"], false);
}

fn an_author_who_is_not_the_committer_is_refused_and_the_tool_writes_one_identity(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(1, prefix);
    let row = f.hand_row(FILLED, "FAIL");
    ledger_env(
        f.dir(),
        &["put", FILLED, row.to_str().unwrap()],
        &[
            ("GIT_AUTHOR_NAME", "Benchmark CI"),
            ("GIT_AUTHOR_EMAIL", "ci@bench.example"),
        ],
    )
    .ok();
    let who = git(
        f.dir(),
        &["log", "-1", "--format=%an <%ae> / %cn <%ce>", rf],
    );
    assert_eq!(
        who,
        "Test Committer <committer@example.com> / Test Committer <committer@example.com>"
    );
    f.run(&["verify"]).ok();
    // The same commit with the author field naming someone else: rule 7.
    let tip = f.tip();
    let message = git(f.dir(), &["log", "-1", "--format=%B", &tip]);
    let tree = git(f.dir(), &["rev-parse", &format!("{tip}^{{tree}}")]);
    let mut cmd = std::process::Command::new("git");
    crate::common::pin_env(&mut cmd)
        .current_dir(f.dir())
        .env("GIT_AUTHOR_NAME", "Benchmark CI")
        .env("GIT_AUTHOR_EMAIL", "ci@bench.example")
        .args([
            "commit-tree",
            &tree,
            "-p",
            &format!("{tip}~1"),
            "-m",
            message.trim_end(),
        ]);
    let out = cmd.output().unwrap();
    let forged = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    git(f.dir(), &["update-ref", rf, &forged, &tip]);
    caught_everywhere(
        &f,
        "another author",
        "rule 7: its author (Benchmark CI <ci@bench.example>) is not its committer (Test Committer <committer@example.com>)",
    );
}

fn an_author_naming_benchmark_ci_while_a_writers_key_signed_is_refused(prefix: &str) {
    let rf: &str = &format!("{prefix}small");
    use crate::signing::{forge_as, have_ssh_keygen, Signed};
    if !have_ssh_keygen("the writers tests") {
        return;
    }
    let s = Signed::under(prefix);
    s.put("scenario/s-b/01", "ERROR").ok();
    let tip = s.tip();
    let root = git(s.dir(), &["rev-parse", &format!("{tip}~1")]);
    let tree = git(s.dir(), &["rev-parse", &format!("{tip}^{{tree}}")]);
    let message = git(s.dir(), &["log", "-1", "--format=%B", &tip]);
    let forged = forge_as(
        s.dir(),
        &tree,
        Some(&root),
        message.trim_end(),
        Some((&s.alice, "git")),
        false,
        "Benchmark CI <ci@bench.example>",
    );
    git(s.dir(), &["update-ref", rf, &forged, &tip]);
    let needle = "rule 7: its author (Benchmark CI <ci@bench.example>) is not its committer";
    for args in [vec!["verify"], vec!["report"], vec!["show"], vec!["log"]] {
        let r = s.run(&args);
        assert_eq!(r.code, 2, "{args:?}\n{}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    }
    // Alice's key did sign it (rule 8 holds): the refusal is the author claim alone.
    let log = s.run(&["log", "--json"]).json();
    assert!(log[0]["signer"]["principal"].is_string(), "{log}");
    assert_eq!(log[0]["admitted"], false);
}

fn a_replace_ref_or_a_note_on_the_ledger_makes_report_and_show_refuse(prefix: &str) {
    let f = honest(prefix);
    let tip = f.tip();
    f.run(&["report"]).ok();
    let root = git(f.dir(), &["rev-parse", &format!("{tip}~1")]);
    git(f.dir(), &["replace", &tip, &root]);
    for args in [vec!["report"], vec!["show"]] {
        let r = f.run(&args);
        r.expect_code(2);
        assert!(
            r.stderr
                .contains(&format!("refs/replace/{tip}: it replaces commit {tip}")),
            "{}",
            r.stderr
        );
    }
    let u = f.run(&["report", "--unverified", "--json"]).ok().json();
    assert_eq!(u["admitted"], false);
    git(f.dir(), &["replace", "-d", &tip]);
    f.run(&["report"]).ok();
    git(
        f.dir(),
        &["notes", "add", "-m", "PASS: independently audited", &tip],
    );
    let r = f.run(&["report"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("refs/notes/commits: it holds a note on commit"),
        "{}",
        r.stderr
    );
}

crate::common::under_both_prefixes!(
    an_edited_row_reached_by_a_mirror_clone_is_refused_unless_unverified,
    a_backdated_commit_is_flagged_by_log_and_an_honest_one_is_not,
    a_replace_ref_or_a_note_on_the_ledger_makes_report_and_show_refuse,
    a_body_claim_and_a_reviewed_by_trailer_are_caught_by_verify_report_show_and_log,
    an_author_who_is_not_the_committer_is_refused_and_the_tool_writes_one_identity,
    an_author_naming_benchmark_ci_while_a_writers_key_signed_is_refused,
);
