//! One spelling everywhere (workflow.md §10): `--ref REF` on every command that reads a ledger
//! ref, `usage error:` on every usage error with clap's suggestion.

use crate::gitstore::{Fixture, ID, REF};

#[test]
fn every_command_that_reads_a_ledger_ref_takes_dash_dash_ref() {
    let f = Fixture::new(1);
    let tip = f.tip();
    // log and verify take it positionally too, and the two spellings print the same.
    assert_eq!(
        f.run(&["log", "--ref", ID]).ok().stdout,
        f.run(&["log", ID]).ok().stdout
    );
    assert_eq!(
        f.run(&["verify", "--ref", REF]).ok().stdout,
        f.run(&["verify", REF]).ok().stdout
    );
    for args in [
        vec!["report", "--ref", ID],
        vec!["show", "--ref", ID],
        vec!["log", "--ref", ID],
        vec!["verify", "--ref", ID],
    ] {
        f.run(&args).ok();
    }
    // A ref that does not exist is named, whichever spelling.
    for args in [
        vec!["log", "--ref", "nope"],
        vec!["verify", "--ref", "nope"],
    ] {
        let out = f.run(&args);
        out.expect_code(1);
        assert!(
            out.stderr
                .starts_with("error: ledger ref refs/ledgers/nope does not exist"),
            "{}",
            out.stderr
        );
    }
    // Both at once is a usage error for log (one ref), several refs for verify.
    let out = f.run(&["log", ID, "--ref", ID]);
    out.expect_code(64);
    assert!(
        out.stderr.starts_with("usage error: the argument"),
        "{}",
        out.stderr
    );
    assert!(f
        .run(&["verify", ID, "--ref", REF])
        .ok()
        .stdout
        .contains(&tip));
}

#[test]
fn a_usage_error_says_usage_error_with_clap_s_suggestion() {
    let f = Fixture::new(1);
    let out = f.run(&["log", "--reff", ID]);
    out.expect_code(64);
    assert!(
        out.stderr
            .starts_with("usage error: unexpected argument '--reff' found\n\n  tip: a similar argument exists: '--ref'\n"),
        "{}",
        out.stderr
    );
    for args in [
        vec!["verify", "--frobnicate"],
        vec!["report", "--format", "pdf"],
        vec!["diff"],
        vec!["no-such-command"],
    ] {
        let out = f.run(&args);
        out.expect_code(64);
        assert!(
            out.stderr.starts_with("usage error: "),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("\nerror:"), "{}", out.stderr);
    }
    // No command at all, or a command group without its subcommand: a usage error, then help.
    for args in [vec![], vec!["hook"]] {
        let out = f.run(&args);
        out.expect_code(64);
        assert!(
            out.stderr
                .starts_with("usage error: a command is required\n\n"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("Usage: git-ledger"), "{}", out.stderr);
    }
    // --help and --version are no errors.
    let out = f.run(&["log", "--help"]);
    out.ok();
    assert!(out.stdout.contains("--ref <REF>"), "{}", out.stdout);
    assert!(!out.stdout.contains("usage error"));
}
