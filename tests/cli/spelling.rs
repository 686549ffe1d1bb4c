//! One spelling everywhere (docs/reference/workflow.md, rule 10): `--ref REF` on every command that
//! reads a ledger ref, `usage error:` on every usage error with clap's suggestion.

use crate::common::{git, hooked_server, ledger_hooked, new_repo, Daemon};
use crate::gitstore::{declaration_value, hand_row_value, pretty, Fixture, ID};

fn every_command_that_reads_a_ledger_ref_takes_dash_dash_ref(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(1, prefix);
    let tip = f.tip();
    // log and verify take it positionally too, and the two spellings print the same.
    assert_eq!(
        f.run(&["log", "--ref", ID]).ok().stdout,
        f.run(&["log", ID]).ok().stdout
    );
    assert_eq!(
        f.run(&["verify", "--ref", rf]).ok().stdout,
        f.run(&["verify", rf]).ok().stdout
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
                .starts_with(&format!("error: ledger ref {prefix}nope does not exist")),
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
        .run(&["verify", ID, "--ref", rf])
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

/// A second ledger beside the fixture's (under `prefix`), so that no command may pick "the
/// only one".
fn two_ledgers(prefix: &str) -> (Fixture, String) {
    let f = Fixture::under(1, prefix);
    let other = f.file("other.json");
    std::fs::write(&other, pretty(&declaration_value("other-slice", 1))).unwrap();
    f.run(&["init", other.to_str().unwrap()]).ok();
    (f, "other-slice".to_owned())
}

fn the_writing_commands_and_diff_take_dash_dash_ref(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let (f, other) = two_ledgers(prefix);
    let template = f
        .run(&["template", f.decl().to_str().unwrap()])
        .ok()
        .stdout
        .clone();
    let rows: serde_json::Value = serde_json::from_str(&template).unwrap();
    let sid = rows["rows"][0]["schedule_id"].as_str().unwrap().to_owned();
    let root = f.tip();
    let shown = f
        .run(&["show", "--ref", ID, "--row", &sid])
        .ok()
        .stdout
        .clone();
    let row = f.file("row.json");
    std::fs::write(&row, pretty(&hand_row_value(&shown, "ERROR"))).unwrap();
    // Without --ref, two ledgers: a usage error naming the line to type.
    let out = f.run(&["put", &sid, row.to_str().unwrap()]);
    out.expect_code(64);
    assert!(
        out.stderr
            .contains("for example: `git ledger put … --ref other-slice`"),
        "{}",
        out.stderr
    );
    assert_eq!(f.tip(), root);
    f.run(&["put", &sid, row.to_str().unwrap(), "--ref", ID])
        .ok();
    let filled = f.tip();
    assert_ne!(filled, root);
    f.run(&[
        "repair",
        &sid,
        "--note",
        "a person fixed the fixture",
        "--ref",
        rf,
    ])
    .ok();
    let repaired = f.tip();
    // The other ledger did not move.
    let other_ref = format!("{prefix}{other}");
    let other_root = git(f.dir(), &["rev-parse", &other_ref]);
    assert_eq!(
        git(f.dir(), &["rev-list", "--count", &other_ref]),
        "1",
        "{other_root}"
    );
    // diff A: B is the tip of --ref (default the only ledger); the same as naming it.
    let named = f.run(&["diff", &root, rf]).ok().stdout.clone();
    assert_eq!(f.run(&["diff", &root, "--ref", ID]).ok().stdout, named);
    assert!(named.contains("B follows A by 2 admitted steps"), "{named}");
    assert!(named.contains(&sid), "{named}");
    // Several ledgers and no --ref: a usage error naming the line to type.
    let out = f.run(&["diff", &root]);
    out.expect_code(64);
    assert!(
        out.stderr.contains(&format!(
            "for example: `git ledger diff {root} --ref {other}`"
        )),
        "{}",
        out.stderr
    );
    // B and --ref both: a usage error; --files takes no --ref.
    let out = f.run(&["diff", &root, &repaired, "--ref", ID]);
    out.expect_code(64);
    assert!(
        out.stderr
            .starts_with("usage error: diff: B and --ref both name state B"),
        "{}",
        out.stderr
    );
    let out = f.run(&["diff", "--files", "a.json", "--ref", ID]);
    out.expect_code(64);
    // A ledger ref that does not exist, or a ref that is no ledger ref.
    let out = f.run(&["diff", &root, "--ref", "nope"]);
    out.expect_code(1);
    assert!(
        out.stderr
            .starts_with(&format!("error: ledger ref {prefix}nope does not exist")),
        "{}",
        out.stderr
    );
    let out = f.run(&["diff", &root, "--ref", "refs/heads/main"]);
    out.expect_code(64);
    assert!(
        out.stderr.contains("refs/heads/main is not a ledger ref"),
        "{}",
        out.stderr
    );
    assert_eq!(f.tip(), repaired);
}

fn sync_dash_dash_ref_syncs_that_ledger_alone(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let base = tempfile::tempdir().unwrap();
    let server = hooked_server(base.path(), "ledger.git");
    crate::common::use_prefix(&server, prefix);
    let daemon = Daemon::start(base.path());
    let url = daemon.url("ledger.git");
    let (f, other) = two_ledgers(prefix);
    git(f.dir(), &["remote", "add", "origin", &url]);
    let served = |dir: &std::path::Path| {
        git(
            dir,
            &["ls-remote", "--refs", "origin", &format!("{prefix}*")],
        )
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap().to_owned())
        .collect::<Vec<_>>()
    };
    let out = ledger_hooked(f.dir(), &["sync", "--ref", ID]);
    out.ok();
    assert_eq!(
        out.stdout,
        format!("{rf}: pushed to origin (new there) ({})\n", f.tip())
    );
    assert_eq!(served(f.dir()), vec![rf.to_owned()]);
    // A clone that has no ledger yet fetches only the one named.
    let clone = new_repo();
    crate::common::use_prefix(clone.path(), prefix);
    git(clone.path(), &["remote", "add", "origin", &url]);
    ledger_hooked(f.dir(), &["sync"]).ok();
    assert_eq!(served(f.dir()).len(), 2);
    let out = ledger_hooked(
        clone.path(),
        &["sync", "--ref", &format!("{prefix}{other}")],
    );
    out.ok();
    assert!(
        out.stdout.starts_with(&format!("{prefix}{other}: ")),
        "{}",
        out.stdout
    );
    assert_eq!(
        git(
            clone.path(),
            &["for-each-ref", "--format=%(refname)", prefix]
        ),
        format!("{prefix}{other}")
    );
    // The other side: a ledger neither here nor there, a ref that is no ledger ref, --setup.
    let out = ledger_hooked(clone.path(), &["sync", "--ref", "nope"]);
    out.expect_code(1);
    assert_eq!(
        out.stderr,
        format!("error: ledger ref {prefix}nope exists neither in this repository nor on origin\nhint: list the ledgers origin serves with `git ls-remote origin '{prefix}*'`\n")
    );
    for (args, says) in [
        (
            vec!["sync", "--ref", "refs/heads/main"],
            "is not a ledger ref",
        ),
        (vec!["sync", "--ref", "a b"], "is not a declaration id"),
        (vec!["sync", "--setup", "--ref", ID], "takes no --ref"),
    ] {
        let out = ledger_hooked(clone.path(), &args);
        out.expect_code(64);
        assert!(out.stderr.starts_with("usage error: "), "{}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    assert_eq!(
        git(
            clone.path(),
            &["for-each-ref", "--format=%(refname)", prefix]
        ),
        format!("{prefix}{other}")
    );
}

crate::common::under_both_prefixes!(
    every_command_that_reads_a_ledger_ref_takes_dash_dash_ref,
    the_writing_commands_and_diff_take_dash_dash_ref,
    sync_dash_dash_ref_syncs_that_ledger_alone,
);
