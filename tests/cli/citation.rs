//! The tip is the citation (docs/reference/workflow.md): `verify --expect-tip` admits a ledger
//! whose chain still holds a cited tip and refuses one rewritten since; a commit a reviewer names
//! that the repository does not hold is "not in the served history", the fetch hint only second.

use crate::common::*;
use crate::gitstore::{Fixture, ID};

const SID_1: &str = "scenario/bugfix-iso-weeks/01";
const SID_2: &str = "scenario/bugfix-iso-weeks/02";

fn verify_expect_tip_admits_the_tip_and_its_first_parent_ancestors(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let root = f.tip();
    f.put(SID_1, "ERROR").ok();
    f.put(SID_2, "ERROR").ok();
    let tip = f.tip();
    let cited = format!("{ID}@{tip}");
    let out = f.run(&["verify", "--expect-tip", &cited]);
    out.ok();
    assert_eq!(
        out.stdout,
        format!("{rf}: 3 commits admitted, root to {tip}; {tip} is its tip\n")
    );
    // The bare commit id, the ref named with --ref as with every other command, or positionally.
    for args in [
        vec!["verify", "--expect-tip", &root],
        vec!["verify", "--ref", ID, "--expect-tip", &root],
        vec!["verify", rf, "--expect-tip", &root],
    ] {
        let out = f.run(&args);
        out.ok();
        assert_eq!(
            out.stdout,
            format!("{rf}: 3 commits admitted, root to {tip}; it extends {root} by 2 commits\n"),
            "{args:?}"
        );
    }
    let json = f
        .run(&["verify", "--expect-tip", &cited, "--json"])
        .ok()
        .json();
    crate::schemas::assert_valid("verify", &json, "verify --expect-tip --json");
    assert_eq!(
        json["refs"][0]["expected_tip"],
        serde_json::json!({"behind": 0, "commit": tip})
    );
    // The citation a report prints is what verify takes.
    let report = f.run(&["report", "--json"]).ok().json();
    assert_eq!(report["ledger"]["citation"], serde_json::json!(cited));
}

fn verify_expect_tip_refuses_a_ledger_rewritten_since_the_tip(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let root = f.tip();
    f.put(SID_1, "ERROR").ok();
    let cited_tip = f.tip();
    // The authors rewrite the ledger from its root: the same root, another history, every
    // commit admitted, so plain verify passes.
    git(f.dir(), &["update-ref", rf, &root]);
    f.put(SID_1, "INTERRUPTED_UNGRADED").ok();
    let tip = f.tip();
    assert_ne!(tip, cited_tip);
    f.run(&["verify"]).ok();
    let out = f.run(&["verify", "--expect-tip", &format!("{ID}@{cited_tip}")]);
    out.expect_code(2);
    assert_eq!(
        out.stderr,
        format!(
            "refused (1 reason):\n  {rf}: rewritten since {cited_tip}: commit {cited_tip} is not on the ledger's first-parent chain from {tip} to its root\n"
        )
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    // A tip the repository never held (garbage-collected by the server that rewrote it).
    let gone = "0123456789abcdef0123456789abcdef01234567";
    let out = f.run(&["verify", "--expect-tip", gone]);
    out.expect_code(2);
    assert_eq!(
        out.stderr,
        format!(
            "refused (1 reason):\n  {rf}: rewritten since {gone}: commit {gone} is not in the served history: the ledger may have been rewritten\n"
        )
    );
    assert!(!out.stderr.contains("fetch"), "{}", out.stderr);
    // Under --json the refusal is one object with the reason.
    let out = f.run(&["verify", "--expect-tip", gone, "--json"]);
    out.expect_code(2);
    let json = out.json();
    assert_eq!(json["refused"], serde_json::json!(true));
    assert!(json["reasons"][0]
        .as_str()
        .unwrap()
        .contains("rewritten since"));
    // A report of the rewritten-away commit names it, and no ledger ref: it is on none.
    let old = f.run(&["report", "--at", &cited_tip, "--json"]).ok().json();
    assert_eq!(
        old["ledger"],
        serde_json::json!({"citation": format!("{ID}@{cited_tip}"), "commit": cited_tip,
                           "filled": 1, "mode": "ref", "ref": null})
    );
    let text = f.run(&["report", "--at", &cited_tip]).ok().stdout.clone();
    assert!(
        text.contains("\nLedger ref none: the commit is on no ledger ref's history\n"),
        "{text}"
    );
    let now = f.run(&["report", "--json"]).ok().json();
    assert_eq!(now["ledger"]["ref"], serde_json::json!(rf));
    // The old ledger tip still verifies its own chain: nothing but the expectation refused.
    assert_eq!(f.tip(), tip);
}

fn verify_expect_tip_bad_arguments_are_usage_errors(prefix: &str) {
    let f = Fixture::under(1, prefix);
    let tip = f.tip();
    let missing = format!("{prefix}other-ledger does not exist");
    for (arg, needle) in [
        (
            "abc1234".to_owned(),
            "give the full commit id (40 hex digits)",
        ),
        (format!("{ID}@{}", &tip[..12]), "give the full commit id"),
        (format!("..bad@{tip}"), "is not a declaration id"),
        (format!("other-ledger@{tip}"), missing.as_str()),
    ] {
        let out = f.run(&["verify", "--expect-tip", &arg]);
        assert!(
            out.stderr.contains(needle),
            "{arg}: {} {}",
            out.code,
            out.stderr
        );
        assert_ne!(out.code, 0, "{arg}");
    }
    let out = f.run(&["verify", "--expect-tip", "abc1234"]);
    out.expect_code(64);
    assert!(
        out.stderr.starts_with("usage error: --expect-tip abc1234:"),
        "{}",
        out.stderr
    );
}

fn a_named_commit_that_is_not_served_may_mean_a_rewrite_and_fetching_comes_second(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(1, prefix);
    let gone = "0123456789abcdef0123456789abcdef01234567";
    for args in [
        vec!["report", "--at", gone],
        vec!["show", "--at", gone],
        vec!["diff", gone, rf],
    ] {
        let out = f.run(&args);
        out.expect_code(1);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(
            lines[0],
            format!("error: commit {gone} is not in the served history: the ledger may have been rewritten"),
            "{args:?}"
        );
        assert!(
            lines[1].starts_with("hint: if it was only never fetched here: fetch it"),
            "{}",
            out.stderr
        );
        assert_eq!(lines.len(), 2, "{}", out.stderr);
    }
    // A commit the repository holds reads as before.
    f.run(&["report", "--at", &f.tip()]).ok();
}

/// The same ledger state gives the same bytes in every format, wherever the report is made (a
/// fresh clone, another directory); another state gives other bytes, each naming its commit.
fn every_format_of_one_state_is_byte_identical_in_a_clone_and_names_its_tip(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    f.put(SID_1, "ERROR").ok();
    let tip = f.tip();
    let clone = tempfile::tempdir().unwrap();
    let c = clone.path().join("reviewer");
    git(
        clone.path(),
        &["clone", "-q", f.dir().to_str().unwrap(), "reviewer"],
    );
    crate::common::use_prefix(&c, prefix);
    git(&c, &["fetch", "-q", "origin", &format!("{rf}:{rf}")]);
    let formats = ["text", "markdown", "html", "json"];
    let reports = |dir: &std::path::Path| -> Vec<String> {
        formats
            .iter()
            .map(|fmt| {
                let out = ledger(dir, &["report", "--format", fmt]);
                out.ok();
                out.stdout.clone()
            })
            .collect()
    };
    let here = reports(f.dir());
    assert_eq!(here, reports(&c), "a clone's reports of the same state");
    assert_eq!(here, reports(f.dir()), "the same repository, again");
    let cited = format!("{ID}@{tip}");
    for (fmt, out) in formats.iter().zip(&here) {
        assert!(out.contains(&cited), "{fmt}: {out}");
        assert!(out.contains(rf), "{fmt}: {out}");
        assert!(
            !out.contains(f.dir().to_str().unwrap()),
            "{fmt} names a path"
        );
    }
    let json: serde_json::Value = serde_json::from_str(&here[3]).unwrap();
    crate::schemas::assert_valid("report", &json, "report --json in ref mode");
    assert_eq!(json["ledger"]["commit"], serde_json::json!(tip));
    assert_eq!(json["ledger"]["filled"], serde_json::json!(1));
    // The other side: one more row is another state, and every format says so.
    f.put(SID_2, "ERROR").ok();
    let next = f.tip();
    let later = reports(f.dir());
    for ((fmt, a), b) in formats.iter().zip(&here).zip(&later) {
        assert_ne!(a, b, "{fmt}");
        assert!(b.contains(&format!("{ID}@{next}")), "{fmt}: {b}");
        assert!(!b.contains(&tip), "{fmt} names the older tip: {b}");
    }
    // The clone, not yet synced, still reports (and cites) the state it holds.
    assert_eq!(reports(&c), here);
    // File mode: the same declaration and ledger bytes under other names give the same bytes,
    // each naming the file's SHA-256.
    let shown = f.run(&["show"]).ok().stdout.clone();
    let elsewhere = tempfile::tempdir().unwrap();
    let copies = [
        (f.decl(), f.file("ledger.json")),
        (
            elsewhere.path().join("d.json"),
            elsewhere.path().join("l.json"),
        ),
    ];
    for (d, l) in &copies {
        if d != &f.decl() {
            std::fs::copy(f.decl(), d).unwrap();
        }
        std::fs::write(l, &shown).unwrap();
    }
    let sha = git_ledger::sha256_hex(shown.as_bytes());
    let file_reports: Vec<Vec<String>> = copies
        .iter()
        .map(|(d, l)| {
            formats
                .iter()
                .map(|fmt| {
                    let out = ledger(
                        elsewhere.path(),
                        &[
                            "report",
                            d.to_str().unwrap(),
                            l.to_str().unwrap(),
                            "--format",
                            fmt,
                        ],
                    );
                    out.ok();
                    assert!(out.stdout.contains(&sha), "{fmt}: {}", out.stdout);
                    out.stdout.clone()
                })
                .collect()
        })
        .collect();
    assert_eq!(file_reports[0], file_reports[1]);
}

crate::common::under_both_prefixes!(
    verify_expect_tip_admits_the_tip_and_its_first_parent_ancestors,
    verify_expect_tip_refuses_a_ledger_rewritten_since_the_tip,
    verify_expect_tip_bad_arguments_are_usage_errors,
    a_named_commit_that_is_not_served_may_mean_a_rewrite_and_fetching_comes_second,
    every_format_of_one_state_is_byte_identical_in_a_clone_and_names_its_tip,
);
