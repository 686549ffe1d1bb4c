//! `pin` and `check` with the real binary: the embedded campaign against this repository's own
//! objects, and a small harness repository pinned, checked, tampered with and shallow-cloned.

use std::path::Path;

use crate::common::{commit_all, git, ledger, new_repo, project_root, write};

/// The embedded campaign checks against this repository's Git objects.
#[test]
fn embedded_campaign_checks_against_this_repository() {
    let root = project_root();
    let r = ledger(&root, &["check", "arena/campaign.json", "--json"]);
    r.ok();
    let v = r.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["id"], "reliability-634-slice-1");
    assert_eq!(v["tasks"], 13);
    assert_eq!(v["scheduled"], 26);
    // profile, 2 policy files, runner tools, 13 definitions, 3 oracles
    assert_eq!(v["checked"].as_array().unwrap().len(), 20);
}

/// The embedded campaign is exactly what `pin` makes of its draft at its source revision.
#[test]
fn embedded_campaign_is_the_pinned_draft() {
    let root = project_root();
    let pinned = std::fs::read(root.join("arena/campaign.json")).unwrap();
    let decl: serde_json::Value = serde_json::from_slice(&pinned).unwrap();
    let rev = decl["source_revision"].as_str().unwrap();
    let draft = git(
        &root,
        &["show", &format!("{rev}:arena/campaign.draft.json")],
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "draft.json", format!("{draft}\n"));
    let draft_path = dir.path().join("draft.json");
    let r = ledger(
        &root,
        &["pin", draft_path.to_str().unwrap(), "--revision", rev],
    );
    r.ok();
    assert_eq!(
        r.stdout.as_bytes(),
        &pinned[..],
        "arena/campaign.json is not what pin writes"
    );
}

const PROFILE: &str = r#"{
  "name": "p",
  "provider": "prov",
  "joint_planning": true,
  "roles": {"builder": {"model": "m-large", "effort": "high"}, "reviewer": {"model": "m-small", "effort": "medium"}},
  "extra_options": ["--no-telemetry"]
}
"#;

fn draft() -> serde_json::Value {
    let rules = git_ledger::declaration::ACCEPTANCE_RULES;
    let acceptance: serde_json::Map<String, serde_json::Value> =
        rules.iter().map(|r| (r.to_string(), true.into())).collect();
    serde_json::json!({
        "format": "campaign-declaration/1",
        "id": "small",
        "repetitions": 2,
        "profile": {"source": {"path": "h/profile.json"}},
        "policy_files": [{"path": "h/policy.md"}],
        "runner_tools": {"path": "h/tools"},
        "runtime_requirements": {"python": "3.12.7"},
        "acceptance": acceptance,
        "attempt_fields": git_ledger::declaration::STANDARD_FIELDS,
        "tasks": [
            {"id": "arena/case-a", "kind": "arena", "evidence": "live", "expects": "completion",
             "definition": {"path": "h/tasks/case-a"}, "oracle": {"path": "h/tasks/case-a/oracle.py"},
             "upstream": {"repository": "https://example.com/a", "base_commit": "1".repeat(40), "reference_commit": "2".repeat(40), "checks": ["t::one"]},
             "limits": {"cli_invocation_seconds": 3600, "oracle_seconds": 120, "max_iterations": 3},
             "native_outcomes": ["PASS", "FAIL"]},
            {"id": "scenario/s-b", "kind": "scenario", "evidence": "fixture", "expects": "completion",
             "definition": {"path": "h/tasks/s-b"},
             "limits": {"harness_minutes": 5, "max_steps": 100},
             "native_outcomes": ["PASS", "ERROR"]}
        ]
    })
}

/// A harness repository with a draft; returns (dir, commit).
pub fn harness() -> (tempfile::TempDir, String) {
    let dir = new_repo();
    let d = dir.path();
    write(d, "h/profile.json", PROFILE);
    write(d, "h/policy.md", "Live spend needs approval.\n");
    write(d, "h/tools/run.py", "print('run')\n");
    write(d, "h/tasks/case-a/brief.md", "Fix it.\n");
    write(d, "h/tasks/case-a/oracle.py", "print('[]')\n");
    write(d, "h/tasks/s-b/brief.md", "Build it.\n");
    write(
        d,
        "draft.json",
        serde_json::to_vec_pretty(&draft()).unwrap(),
    );
    let commit = commit_all(d, "harness");
    (dir, commit)
}

fn pin_to(d: &Path, extra: &[&str]) -> crate::common::Run {
    let mut args = vec!["pin", "draft.json", "-o", "campaign.json"];
    args.extend_from_slice(extra);
    ledger(d, &args)
}

#[test]
fn pin_then_check_passes_and_survives_later_commits() {
    let (dir, commit) = harness();
    let d = dir.path();
    pin_to(d, &[]).ok();
    let decl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(decl["source_revision"], commit.as_str());
    assert_eq!(decl["schedule"].as_array().unwrap().len(), 4);
    assert_eq!(decl["schedule"][1]["id"], "arena/case-a/02");
    assert_eq!(decl["profile"]["roles"]["builder"]["model"], "m-large");
    assert_eq!(decl["profile"]["source"]["path"], "h/profile.json");
    assert_eq!(decl["tasks"][0]["definition"]["files"], 2);
    ledger(d, &["check", "campaign.json"]).ok();
    // Later changes to the harness do not rewrite the pinned protocol.
    write(d, "h/tasks/case-a/brief.md", "Fix it differently.\n");
    commit_all(d, "edit");
    ledger(d, &["check", "campaign.json"]).ok();
    // Pinning again at the new HEAD gives another hash.
    let r = ledger(d, &["pin", "draft.json"]);
    r.ok();
    assert_ne!(
        r.stdout.as_bytes(),
        &std::fs::read(d.join("campaign.json")).unwrap()[..]
    );
    // --revision pins an older commit exactly.
    let r = ledger(d, &["pin", "draft.json", "--revision", "HEAD~1"]);
    r.ok();
    assert_eq!(
        r.stdout.as_bytes(),
        &std::fs::read(d.join("campaign.json")).unwrap()[..]
    );
}

#[test]
fn check_refuses_each_mismatch() {
    let (dir, _) = harness();
    let d = dir.path();
    pin_to(d, &[]).ok();
    let mut decl: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("campaign.json")).unwrap()).unwrap();
    decl["tasks"][0]["definition"]["sha256"] = "0".repeat(64).into();
    decl["tasks"][1]["definition"]["files"] = 7.into();
    decl["runner_tools"]["sha256"] = "f".repeat(64).into();
    decl["profile"]["roles"]["builder"]["effort"] = "low".into();
    decl["policy_files"][0]["sha256"] = "e".repeat(64).into();
    write(
        d,
        "tampered.json",
        serde_json::to_vec_pretty(&decl).unwrap(),
    );
    let r = ledger(d, &["check", "tampered.json"]);
    r.expect_code(2);
    for what in [
        "tasks[0] (arena/case-a).definition",
        "tasks[1] (scenario/s-b).definition",
        "runner_tools (h/tools)",
        "profile",
        "policy_files[0] (h/policy.md)",
    ] {
        assert!(r.stderr.contains(what), "{what} not named:\n{}", r.stderr);
    }
}

#[test]
fn pin_refuses_bad_drafts() {
    let (dir, _) = harness();
    let d = dir.path();
    // A draft that carries a computed field.
    let mut v = draft();
    v["tasks"][0]["definition"]["sha256"] = "a".repeat(64).into();
    write(d, "draft.json", serde_json::to_vec_pretty(&v).unwrap());
    let r = pin_to(d, &[]);
    r.expect_code(2);
    assert!(r.stderr.contains("computed"), "{}", r.stderr);
    assert!(
        !d.join("campaign.json").exists(),
        "nothing is written on refusal"
    );
    // A draft naming a missing path.
    let mut v = draft();
    v["tasks"][1]["definition"]["path"] = "h/tasks/nowhere".into();
    write(d, "draft.json", serde_json::to_vec_pretty(&v).unwrap());
    let r = pin_to(d, &[]);
    r.expect_code(2);
    assert!(r.stderr.contains("h/tasks/nowhere"), "{}", r.stderr);
    // A profile that is not valid JSON.
    write(d, "h/profile.json", "{\"name\": \"p\",}\n");
    write(
        d,
        "draft.json",
        serde_json::to_vec_pretty(&draft()).unwrap(),
    );
    commit_all(d, "broken profile");
    let r = pin_to(d, &[]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("profile file h/profile.json"),
        "{}",
        r.stderr
    );
    // A profile with an unknown key.
    write(
        d,
        "h/profile.json",
        PROFILE.replace("\"name\"", "\"colour\": \"red\", \"name\""),
    );
    commit_all(d, "odd profile");
    let r = pin_to(d, &[]);
    r.expect_code(2);
    assert!(r.stderr.contains("colour"), "{}", r.stderr);
    // An unknown revision.
    let r = pin_to(d, &["--revision", "no-such-branch"]);
    r.expect_code(1);
}

#[test]
fn check_says_how_to_fetch_a_missing_commit() {
    let (dir, _) = harness();
    let d = dir.path();
    pin_to(d, &[]).ok();
    // Move on so the pinned commit is not the tip, then clone shallowly.
    write(d, "later.txt", "later\n");
    commit_all(d, "later");
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", d.display());
    git(clone.path(), &["clone", "-q", "--depth", "1", &url, "c"]);
    let c = clone.path().join("c");
    std::fs::copy(d.join("campaign.json"), c.join("campaign.json")).unwrap();
    let r = ledger(&c, &["check", "campaign.json"]);
    r.expect_code(1);
    assert!(r.stderr.contains("git fetch --unshallow"), "{}", r.stderr);
    git(&c, &["fetch", "-q", "--unshallow"]);
    ledger(&c, &["check", "campaign.json"]).ok();
}

#[test]
fn template_of_the_embedded_campaign_has_26_deferred_rows() {
    let root = project_root();
    let r = ledger(&root, &["template", "arena/campaign.json"]);
    r.ok();
    let v = r.json();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 26);
    assert!(rows
        .iter()
        .all(|r| r["native_outcome"] == "DEFERRED" && r["reason"] == "not attempted"));
    let fixture: Vec<_> = rows.iter().filter(|r| r["evidence"] == "fixture").collect();
    assert_eq!(fixture.len(), 2);
    assert!(fixture
        .iter()
        .all(|r| r["task_id"] == "scenario/interrupted-verification-reuse"));
}
