//! A record is read as its declared task's kind or refused (docs/reference/workflow.md,
//! rule 4), for every kind: another harness's record given to a reader is refused with one reason naming what it is
//! and the flag that reads it; a Harbor reward the trials do not have (a typo in
//! `harbor.reward`) is refused naming the rewards they have, never imported as UNSCORED; in
//! every case nothing is written, dry run or not.

use std::path::Path;

use serde_json::Value;

use crate::harbor::{copy_dir, shared, task, Harness};
use crate::import::Campaign;

/// A trial directory of the shared Harbor job `j1`, copied into the campaign's repository.
fn harbor_trial(root: &Path) -> String {
    let job = shared().join("j1");
    let trial = crate::harbor::trials(&job, "hello-file").remove(0);
    let rel = format!("jobs/j1/{}", trial.file_name().unwrap().to_string_lossy());
    copy_dir(&job, &root.join("jobs/j1"));
    rel
}

/// `args`, and `--dry-run` when `dry`.
fn maybe_dry<'a>(dry: bool, args: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    if dry {
        v.push("--dry-run");
    }
    v
}

#[test]
fn another_harnesss_record_is_refused_naming_what_it_is() {
    let c = Campaign::new();
    let root = c.root();
    let trial = harbor_trial(root);
    let run = c.run_dir("20261129T101500Z-a001");
    let sid = "scenario/bugfix-iso-weeks/01";
    for dry in [false, true] {
        // A Harbor trial given as a scenario run.
        let r = c.refused(&maybe_dry(dry, &["--scenario", sid, &trial]), &[]);
        assert_eq!(
            r.stderr,
            format!(
                "refused (1 reason):\n  {trial}/result.json: row {sid}: not a scenario record (format scenario-result/1): it is a Harbor trial's result (task_name, trial_name, config; give its trial or job directory), which --harbor reads\n"
            )
        );
        // A scenario run given as a Harbor trial.
        let r = c.refused(&maybe_dry(dry, &["--harbor", &run]), &[]);
        assert_eq!(
            r.stderr,
            format!(
                "refused (1 reason):\n  {run}/result.json: not a Harbor trial result: it is a scenario run's record (format scenario-result/1), which --scenario reads\n"
            )
        );
        // An Inspect log given as a scenario run's result.json.
        let log = crate::common::project_root()
            .join("tests/data/inspect-logs/2025-05-12T20-28-13-04-00_popularity.json");
        c.refused(
            &maybe_dry(dry, &["--scenario", sid, log.to_str().unwrap()]),
            &["popularity.json: row scenario/bugfix-iso-weeks/01: not a scenario record (format scenario-result/1): it is an Inspect log (eval, samples), which --inspect reads"],
        );
        // The ledger itself, or the declaration, given as a record.
        c.refused(
            &maybe_dry(dry, &["--scenario", sid, "ledger.json"]),
            &["ledger.json: row scenario/bugfix-iso-weeks/01: not a scenario record (format scenario-result/1): it is a ledger document (format campaign-ledger/1), not a harness record"],
        );
        c.refused(
            &maybe_dry(dry, &["--scenario", sid, "campaign.json"]),
            &["it is a campaign declaration (format campaign-declaration/1), not a harness record"],
        );
        // Records that are not Inspect logs.
        c.refused(
            &maybe_dry(dry, &["--inspect", &format!("{run}/result.json")]),
            &["result.json: not an Inspect log: it is a scenario run's record (format scenario-result/1), which --scenario reads"],
        );
        c.refused(
            &maybe_dry(dry, &["--inspect", &format!("{trial}/result.json")]),
            &["result.json: not an Inspect log: it is a Harbor trial's result"],
        );
        // JSON that is no known document still says what the Inspect reader missed.
        crate::common::write(root, "other.json", "{\"a\": 1}\n");
        c.refused(
            &maybe_dry(dry, &["--inspect", "other.json"]),
            &["other.json: the log holds no eval spec (eval)"],
        );
        // A directory that is not an Arena store: it cannot be read as one (exit 1).
        let before = c.ledger_bytes();
        let r = c.import(&maybe_dry(
            dry,
            &[
                "--arena",
                "arena/sympy-matrix-derivatives/01",
                &run,
                "att-0001",
            ],
        ));
        r.expect_code(1);
        assert!(
            r.stderr
                .contains(&format!("{run}: no results.sqlite3: not an Arena store")),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("hint: it holds a result.json or attempt.json: a scenario run's evidence directory (--scenario <ID> <DIR>)"),
            "{}",
            r.stderr
        );
        assert_eq!(c.ledger_bytes(), before);
        // A scenario record of another schema: its format named, not read as this one.
        let mut other: Value =
            serde_json::from_slice(&std::fs::read(root.join(&run).join("result.json")).unwrap())
                .unwrap();
        other["format"] = "scenario-result/2".into();
        let path = c.scenario_run("other-schema", &other);
        c.refused(
            &maybe_dry(dry, &["--scenario", sid, &path]),
            &["format: \"scenario-result/2\" is not \"scenario-result/1\""],
        );
    }
    // The other side: each record, given to its own reader, imports.
    c.import(&["--scenario", sid, &run]).ok();
    assert_eq!(c.row(sid)["native_outcome"], "PASS");
}

/// Harbor's digest of a task, as the lock of a trial of the shared job `j1` records it.
fn digest(name: &str) -> String {
    let trial = crate::harbor::trials(&shared().join("j1"), name).remove(0);
    let lock: Value =
        serde_json::from_slice(&std::fs::read(trial.join("lock.json")).unwrap()).unwrap();
    lock["task"]["digest"].as_str().unwrap().to_owned()
}

/// The three tasks of the shared job, `hello-file` deciding by reward `reward`.
fn tasks(hello_reward: &str) -> Vec<Value> {
    ["hello-file", "wrong-answer", "slow-verifier"]
        .iter()
        .map(|name| {
            let mut t = task(name, &digest(name), "oracle", "fixture");
            if *name == "hello-file" {
                t["harbor"]["reward"] = hello_reward.into();
            }
            t
        })
        .collect()
}

#[test]
fn a_harbor_reward_the_trials_do_not_have_is_refused_naming_theirs() {
    // `rewards` for `reward`: a typo that pin and init cannot see.
    let h = Harness::new(tasks("rewards"), 2);
    let job = h.job("j1");
    let before = h.ledger_bytes();
    for dry in [true, false] {
        let mut args = vec!["--harbor", job.as_str()];
        if dry {
            args.push("--dry-run");
        }
        let r = h.import(&args);
        r.expect_code(2);
        assert_eq!(
            h.ledger_bytes(),
            before,
            "a refused import changed the ledger"
        );
        let lines: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.contains("harbor.reward"))
            .collect();
        assert_eq!(lines.len(), 2, "{}", r.stderr);
        for (line, trial) in lines
            .iter()
            .zip(crate::harbor::trials(&h.path().join(&job), "hello-file"))
        {
            let name = trial.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                line.trim(),
                format!(
                    "{job}/{name}/result.json: row harbor/hello-file/0{}: the verifier recorded no reward \"rewards\" but has rewards reward: the declaration (task harbor/hello-file, harbor.reward) and the trial disagree",
                    if name == "hello-file__eD2pj5h" { 1 } else { 2 }
                )
            );
        }
        // No other reason: the other tasks' trials would import.
        assert!(
            r.stderr.starts_with("refused (2 reasons):\n"),
            "{}",
            r.stderr
        );
    }
    // The other side: declared as the verifier writes it, the same job imports, every
    // hello-file trial a PASS.
    let h = Harness::new(tasks("reward"), 2);
    let job = h.job("j1");
    h.import(&["--harbor", &job]).ok();
    for rep in ["01", "02"] {
        assert_eq!(
            h.row(&format!("harbor/hello-file/{rep}"))["native_outcome"],
            "PASS"
        );
    }
    // A trial whose verifier recorded no rewards at all stays UNSCORED: the
    // declaration and the trial do not disagree, there is no score.
    let h = Harness::new(tasks("reward"), 2);
    let job = h.job("j1");
    let trial = crate::harbor::trials(&h.path().join(&job), "hello-file").remove(0);
    let path = trial.join("result.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v["verifier_result"]["rewards"] = serde_json::json!({});
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    h.import(&["--harbor", trial.to_str().unwrap()]).ok();
    let row = h.row("harbor/hello-file/01");
    assert_eq!(row["native_outcome"], "UNSCORED");
    assert_eq!(row["reason"], "the verifier recorded no rewards");
}
