//! The ledger on a Git ref: init/show round trip, put and repair as commits with trailers,
//! compare-and-swap under many concurrent writers, log, diff, report --at, verify, and ledger
//! refs tampered with by plain Git plumbing, each refused with its reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{git, git_run, ledger, new_repo, pin_env, Run};

pub const ID: &str = "reliability-slice-1";
/// The ledger ref under the default prefix (`Fixture::refname` names it under any prefix).
#[allow(dead_code)] // the ref-mode tests take a prefix; kept for tests to come
pub const REF: &str = "refs/ledgers/reliability-slice-1";

/// A valid declaration (the unit tests' one): an arena task and a scenario task (live), a
/// fixture scenario task, `reps` repetitions each.
pub fn declaration_value(id: &str, reps: u64) -> Value {
    let h = |c: char, n: usize| -> String { std::iter::repeat_n(c, n).collect() };
    let acceptance: serde_json::Map<String, Value> = git_ledger::declaration::ACCEPTANCE_RULES
        .iter()
        .map(|r| (r.to_string(), Value::Bool(true)))
        .collect();
    let mut v = json!({
        "format": "campaign-declaration/1",
        "id": id,
        "source_revision": h('c', 40),
        "repetitions": reps,
        "profile": {
            "name": "build-comparison",
            "source": { "path": "arena/profiles/build-comparison.json", "sha256": h('a', 64) },
            "provider": "acme",
            "joint_planning": true,
            "roles": {
                "builder": { "model": "m-large", "effort": "high" },
                "reviewer": { "model": "m-small", "effort": "medium" }
            },
            "extra_options": ["--no-telemetry"]
        },
        "policy_files": [ { "path": "arena/policy/live-spend.md", "sha256": h('b', 64) } ],
        "runner_tools": { "path": "arena/runner-tools", "sha256": h('d', 64), "files": 4 },
        "runtime_requirements": { "python": "3.12.7", "psutil": "6.1.0", "native_provider": "acme 1.2", "packages": { "numpy": "2.1.0" } },
        "acceptance": acceptance,
        "attempt_fields": git_ledger::declaration::STANDARD_FIELDS,
        "tasks": [
            {
                "id": "arena/sympy-matrix", "kind": "arena", "evidence": "live", "expects": "completion",
                "definition": { "path": "arena/tasks/arena/sympy-matrix", "sha256": h('e', 64), "files": 9 },
                "oracle": { "path": "arena/tasks/arena/sympy-matrix/oracle.py", "sha256": h('f', 64) },
                "upstream": { "repository": "https://example.org/sympy.git", "base_commit": h('1', 40),
                              "reference_commit": h('2', 40), "checks": ["test_a", "test_b"] },
                "limits": { "cli_invocation_seconds": 3600, "oracle_seconds": 120, "max_iterations": 3 },
                "native_outcomes": ["PASS", "FAIL", "STOPPED", "ERROR", "SKIPPED"]
            },
            {
                "id": "scenario/bugfix-iso-weeks", "kind": "scenario", "evidence": "live", "expects": "completion",
                "definition": { "path": "arena/tasks/scenario/bugfix-iso-weeks", "sha256": h('3', 64), "files": 7 },
                "limits": { "harness_minutes": 90, "max_steps": 400 },
                "native_outcomes": ["PASS", "FALSE_COMPLETE", "HONEST_BLOCKER", "ERROR", "SKIPPED",
                                    "NOT_EXERCISED", "RUNNING", "INTERRUPTED_UNGRADED", "PENDING_UNGRADED"]
            },
            {
                "id": "scenario/interrupted-reuse", "kind": "scenario", "evidence": "fixture", "expects": "completion",
                "definition": { "path": "arena/tasks/scenario/interrupted-reuse", "sha256": h('4', 64), "files": 3 },
                "limits": { "harness_minutes": 5, "max_steps": 100 },
                "native_outcomes": ["PASS", "ERROR", "INTERRUPTED_UNGRADED"]
            }
        ]
    });
    let width = reps.to_string().len().max(2);
    let mut schedule = Vec::new();
    for t in [
        "arena/sympy-matrix",
        "scenario/bugfix-iso-weeks",
        "scenario/interrupted-reuse",
    ] {
        for rep in 1..=reps {
            schedule
                .push(json!({"id": format!("{t}/{rep:0width$}"), "task": t, "repetition": rep}));
        }
    }
    v["schedule"] = Value::Array(schedule);
    v
}

/// Pretty JSON with a trailing newline.
pub fn pretty(v: &Value) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(v).unwrap();
    b.push(b'\n');
    b
}

/// A repository with the declaration at `decl.json` (outside the repository) and the ledger
/// ref created by `init`.
pub struct Fixture {
    pub repo: tempfile::TempDir,
    pub files: tempfile::TempDir,
    /// The ledger ref (`REF` under the default prefix).
    pub refname: String,
}

impl Fixture {
    pub fn new(reps: u64) -> Self {
        Self::under(reps, crate::common::PREFIXES[0])
    }
    /// As [`Fixture::new`], with the repository's ledgers under `prefix`.
    pub fn under(reps: u64, prefix: &str) -> Self {
        let repo = new_repo();
        crate::common::use_prefix(repo.path(), prefix);
        let files = tempfile::tempdir().unwrap();
        std::fs::write(
            files.path().join("decl.json"),
            pretty(&declaration_value(ID, reps)),
        )
        .unwrap();
        let refname = format!("{prefix}{ID}");
        let f = Fixture {
            repo,
            files,
            refname,
        };
        f.run(&["init", f.decl().to_str().unwrap()]).ok();
        f
    }
    pub fn dir(&self) -> &Path {
        self.repo.path()
    }
    pub fn decl(&self) -> PathBuf {
        self.files.path().join("decl.json")
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.files.path().join(name)
    }
    pub fn run(&self, args: &[&str]) -> Run {
        ledger(self.dir(), args)
    }
    pub fn tip(&self) -> String {
        git(self.dir(), &["rev-parse", &self.refname])
    }
    /// Write a hand row for `sid` into the files directory; returns its path.
    pub fn hand_row(&self, sid: &str, outcome: &str) -> PathBuf {
        // The template row, read even from a tip plain Git put there (the test's business).
        let row = hand_row_value(
            &self
                .run(&["show", "--unverified", "--row", sid])
                .ok()
                .stdout,
            outcome,
        );
        let path = self.file(&format!("{}.json", sid.replace('/', "_")));
        std::fs::write(&path, pretty(&row)).unwrap();
        path
    }
    pub fn put(&self, sid: &str, outcome: &str) -> Run {
        let p = self.hand_row(sid, outcome);
        self.run(&["put", sid, p.to_str().unwrap()])
    }
}

/// A hand row from a template row: an attempted, ungraded or errored row.
pub fn hand_row_value(template: &str, outcome: &str) -> Value {
    let mut row: Value = serde_json::from_str(template).unwrap();
    row["native_outcome"] = json!(outcome);
    row["native_status"] = json!("INCOMPLETE");
    row["reason"] = json!(format!("{outcome} by hand"));
    row["elapsed_seconds"] = json!(12.5);
    row
}

/// Canonical bytes of a row value as the tool writes them (fields in the standard order).
pub fn canonical_row(v: &Value) -> Vec<u8> {
    // serde_json sorts object keys; build the text by hand in attempt_fields order.
    let mut out = String::from("{\n");
    let fields = git_ledger::declaration::STANDARD_FIELDS;
    for (i, f) in fields.iter().enumerate() {
        let val = serde_json::to_string_pretty(&v[*f])
            .unwrap()
            .replace('\n', "\n  ");
        out.push_str(&format!("  {:?}: {val}", f));
        out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
    }
    out.push_str("}\n");
    out.into_bytes()
}

/// One entry of a tree built with plumbing: mode and content (for a submodule, the content is
/// the commit id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub mode: String,
    pub bytes: Vec<u8>,
}

pub type Files = BTreeMap<String, Entry>;

/// Every file of a commit's tree (`git ls-tree -r` + `git cat-file`).
pub fn read_files(dir: &Path, rev: &str) -> Files {
    let mut out = Files::new();
    for line in git(dir, &["ls-tree", "-r", rev]).lines() {
        let (meta, path) = line.split_once('\t').unwrap();
        let parts: Vec<&str> = meta.split(' ').collect();
        let bytes = std::process::Command::new("git")
            .current_dir(dir)
            .args(["cat-file", "blob", parts[2]])
            .output()
            .unwrap()
            .stdout;
        out.insert(
            path.to_owned(),
            Entry {
                mode: parts[0].to_owned(),
                bytes,
            },
        );
    }
    out
}

/// Write `files` as a tree with `git hash-object -w` and `git mktree`; returns the tree id.
pub fn write_tree(dir: &Path, files: &Files) -> String {
    let mut here: BTreeMap<String, (String, String, String)> = BTreeMap::new();
    let mut subdirs: BTreeMap<String, Files> = BTreeMap::new();
    for (path, e) in files {
        match path.split_once('/') {
            Some((d, rest)) => {
                subdirs
                    .entry(d.to_owned())
                    .or_default()
                    .insert(rest.to_owned(), e.clone());
            }
            None => {
                let (kind, id) = if e.mode == "160000" {
                    (
                        "commit".to_owned(),
                        String::from_utf8(e.bytes.clone()).unwrap(),
                    )
                } else {
                    let r = git_run(dir, &["hash-object", "-w", "--stdin"], Some(&e.bytes));
                    assert_eq!(r.code, 0, "{}", r.stderr);
                    ("blob".to_owned(), r.stdout.trim().to_owned())
                };
                here.insert(path.clone(), (e.mode.clone(), kind, id));
            }
        }
    }
    for (d, sub) in subdirs {
        let id = write_tree(dir, &sub);
        here.insert(d, ("040000".into(), "tree".into(), id));
    }
    let input: String = here
        .iter()
        .map(|(name, (mode, kind, id))| format!("{mode} {kind} {id}\t{name}\n"))
        .collect();
    let r = git_run(dir, &["mktree", "--missing"], Some(input.as_bytes()));
    assert_eq!(r.code, 0, "mktree: {}", r.stderr);
    r.stdout.trim().to_owned()
}

/// A ledger state commit made with plumbing: `files` as the tree, `parents`, a message.
pub fn state_commit(dir: &Path, files: &Files, parents: &[&str], message: &str) -> String {
    let tree = write_tree(dir, files);
    let mut args = vec!["commit-tree".to_owned(), tree];
    for p in parents {
        args.push("-p".into());
        args.push((*p).to_owned());
    }
    args.push("-m".into());
    args.push(message.into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    git(dir, &args)
}

/// The message rule 7 admits for a commit on `parent` that fills one hand row `sid` as ERROR
/// (portfolio outcome `error`, no native status), spelled out here from the rule, not by the
/// tool: the subject `put <sid>: ERROR -> error`, the row's body line and a `from` line, the
/// parent's `Ledger-Declaration`, one `Ledger-Attempt`, and `Ledger-Filled` one more than the
/// parent's.
pub fn error_fill_message(dir: &Path, parent: &str, sid: &str) -> String {
    let trailer = |key: &str| {
        git(
            dir,
            &[
                "log",
                "-1",
                &format!("--format=%(trailers:key={key},valueonly)"),
                parent,
            ],
        )
        .trim()
        .to_owned()
    };
    let decl = trailer("Ledger-Declaration");
    let (k, n) = trailer("Ledger-Filled")
        .split_once('/')
        .map(|(k, n)| (k.parse::<usize>().unwrap(), n.to_owned()))
        .unwrap();
    format!(
        "put {sid}: ERROR -> error\n\n{sid}  ERROR  error\n  from written-with-plumbing\n\nLedger-Declaration: {decl}\nLedger-Attempt: {sid} ERROR error\nLedger-Filled: {}/{n}\n",
        k + 1
    )
}

pub fn regular(bytes: impl Into<Vec<u8>>) -> Entry {
    Entry {
        mode: "100644".into(),
        bytes: bytes.into(),
    }
}

fn init_writes_the_template_and_show_prints_it_byte_for_byte(prefix: &str) {
    let f = Fixture::under(2, prefix);
    let r = f.refname.as_str();
    let template = f
        .run(&["template", f.decl().to_str().unwrap()])
        .ok()
        .stdout
        .clone();
    let shown = f.run(&["show"]).ok().stdout.clone();
    assert_eq!(template, shown);
    // Tree: exactly campaign.json, ledger.json and one row per scheduled attempt, all 100644.
    let files = read_files(f.dir(), r);
    assert_eq!(files.len(), 2 + 6);
    assert!(files.values().all(|e| e.mode == "100644"));
    assert_eq!(
        files["campaign.json"].bytes,
        std::fs::read(f.decl()).unwrap()
    );
    let header: Value = serde_json::from_slice(&files["ledger.json"].bytes).unwrap();
    assert_eq!(header["format"], "campaign-ledger/1");
    assert_eq!(header["declaration"]["id"], ID);
    assert!(String::from_utf8_lossy(&files["ledger.json"].bytes).starts_with("{\n  \"format\""));
    // The root commit's message.
    let subject = git(f.dir(), &["log", "-1", "--format=%s", r]);
    assert_eq!(subject, format!("declare {ID}: 6 scheduled attempts"));
    assert_eq!(git(f.dir(), &["rev-list", "--count", r]), "1");
    // --declaration prints the exact bytes; --row one row.
    assert_eq!(
        f.run(&["show", "--declaration"]).ok().stdout.as_bytes(),
        std::fs::read(f.decl()).unwrap()
    );
    let row = f
        .run(&["show", "--row", "scenario/bugfix-iso-weeks/02"])
        .ok()
        .stdout
        .clone();
    assert_eq!(
        row.as_bytes(),
        files["rows/scenario/bugfix-iso-weeks/02.json"].bytes
    );
    // A second init is refused and leaves the ref alone.
    let tip = f.tip();
    let again = f.run(&["init", f.decl().to_str().unwrap()]);
    again.expect_code(2);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    assert_eq!(f.tip(), tip);
    f.run(&["verify"]).ok();
}

/// `show` and `report` of a ref read its row files on one thread and check them on another, 64
/// at a time: the reasons of rows refused in different batches come in schedule order, each
/// once, as one loop gave them (300 rows: five batches).
fn row_reasons_across_batches_come_in_schedule_order(prefix: &str) {
    let f = Fixture::under(100, prefix);
    let tip = f.tip();
    let mut files = read_files(f.dir(), &tip);
    // Compact bytes of a valid row: not its canonical bytes.
    let compact = |files: &mut Files, sid: &str| {
        let path = format!("rows/{sid}.json");
        let v: Value = serde_json::from_slice(&files[&path].bytes).unwrap();
        files.insert(path, regular(serde_json::to_vec(&v).unwrap()));
    };
    let order = [
        "arena/sympy-matrix/005",
        "arena/sympy-matrix/090",
        "scenario/bugfix-iso-weeks/050",
        "scenario/interrupted-reuse/010",
        "scenario/interrupted-reuse/100",
    ];
    for sid in [order[0], order[1], order[2], order[4]] {
        compact(&mut files, sid);
    }
    assert!(files.remove(&format!("rows/{}.json", order[3])).is_some());
    let bad = state_commit(f.dir(), &files, &[&tip], "damaged by hand");
    for args in [
        &["show", "--unverified", "--at", bad.as_str()][..],
        &["report", "--unverified", "--at", bad.as_str()][..],
    ] {
        let run = f.run(args);
        run.expect_code(2);
        // The reasons, after the banner (which names the first).
        let listed = run
            .stderr
            .split_once("refused (5 reasons):")
            .unwrap_or_else(|| panic!("{args:?}: five reasons in\n{}", run.stderr))
            .1;
        let at: Vec<usize> = order
            .iter()
            .map(|sid| {
                let found: Vec<_> = listed.match_indices(&format!("row {sid}:")).collect();
                assert_eq!(found.len(), 1, "{args:?}: {sid} once in\n{}", run.stderr);
                found[0].0
            })
            .collect();
        assert!(
            at.windows(2).all(|w| w[0] < w[1]),
            "{args:?}: in schedule order:\n{}",
            run.stderr
        );
        assert!(listed.contains("is missing (rows/scenario/interrupted-reuse/010.json)"));
        assert_eq!(
            listed.matches("canonical bytes").count(),
            4,
            "{args:?}: {}",
            run.stderr
        );
    }
}

fn a_ledger_declaration_is_cached_by_blob_id_read_from_there_and_parsed_again_when_damaged(
    prefix: &str,
) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let blob = git(f.dir(), &["rev-parse", &format!("{rf}:campaign.json")]);
    let entry = f.dir().join(".git/git-ledger/declarations").join(&blob);
    let report = f.run(&["report", "--json"]).ok().stdout.clone();
    let kept = std::fs::read_to_string(&entry).expect("report kept the declaration it parsed");
    assert!(
        kept.starts_with("git-ledger declaration cache 4\n"),
        "{kept}"
    );
    assert!(kept.contains(&format!("\nblob {blob} ")), "{kept}");
    // Read from the entry: the same report, and the exact bytes from the blob.
    assert_eq!(f.run(&["report", "--json"]).ok().stdout, report);
    assert_eq!(
        f.run(&["show", "--declaration"]).ok().stdout.as_bytes(),
        std::fs::read(f.decl()).unwrap()
    );
    // A damaged entry is not used: the blob is parsed again and the entry rewritten.
    std::fs::write(
        &entry,
        kept.replace("\"repetitions\":2", "\"repetitions\":3"),
    )
    .unwrap();
    assert_eq!(f.run(&["report", "--json"]).ok().stdout, report);
    assert_eq!(std::fs::read_to_string(&entry).unwrap(), kept);
    f.put("scenario/interrupted-reuse/02", "ERROR").ok();
    f.run(&["verify"]).ok();
    // An entry that checks out is what the writers read, and `verify`, `show`, `log`, `diff`
    // and `sync` never read one (red-team review of issue 15): an entry forged whole (its
    // checksum recomputed) claiming one repetition makes `put` read a schedule of 3 rows and refuse, while
    // `show` and `verify` parse the blob.
    let row = f.hand_row("scenario/bugfix-iso-weeks/02", "ERROR");
    let (head, body) = kept.split_once("\n\n").unwrap();
    let forged_body = body.replacen("\"repetitions\":2", "\"repetitions\":1", 1);
    assert_ne!(forged_body, body);
    let head = head.split("\ncheck ").next().unwrap();
    let forged = format!(
        "{head}\ncheck {:08x}\n\n{forged_body}",
        crc32fast::hash(forged_body.as_bytes())
    );
    std::fs::write(&entry, &forged).unwrap();
    let put = f.run(&["put", "scenario/bugfix-iso-weeks/02", row.to_str().unwrap()]);
    put.expect_code(2);
    // The forged schedule (3 rows, not 6: no repetition 02) is what put read. (The tip, which
    // put wrote, is a checked tip: its count is not compared with the forged schedule's.)
    assert!(
        put.stderr.contains(
            "scenario/bugfix-iso-weeks/02 is not scheduled by declaration reliability-slice-1"
        ),
        "{}",
        put.stderr
    );
    f.run(&["show", "--row", "scenario/bugfix-iso-weeks/02"])
        .ok();
    f.run(&["verify"]).ok();
    // The same forged entry, as a build with other rules would have written it (another
    // rules fingerprint): not trusted. The blob is parsed, the row shown, the entry rewritten
    // under this build's rules.
    let rules = kept
        .lines()
        .find_map(|l| l.strip_prefix("rules "))
        .expect("an entry names the rules it was written under")
        .to_owned();
    assert_eq!(rules.len(), 64, "{kept}");
    let other = forged.replacen(
        &format!("\nrules {rules}\n"),
        &format!("\nrules {}\n", "0".repeat(64)),
        1,
    );
    assert_ne!(other, forged);
    std::fs::write(&entry, &other).unwrap();
    f.run(&["put", "scenario/bugfix-iso-weeks/02", row.to_str().unwrap()])
        .ok();
    assert_eq!(std::fs::read_to_string(&entry).unwrap(), kept);
    f.run(&["verify"]).ok();
}

fn put_and_repair_write_one_commit_each_with_trailers_and_match_file_mode(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let sid = "scenario/bugfix-iso-weeks/01";
    let row = f.hand_row(sid, "INTERRUPTED_UNGRADED");
    let root = f.tip();
    let put = f.run(&["put", sid, row.to_str().unwrap()]);
    put.ok();
    assert!(put.stdout.contains(rf), "{}", put.stdout);
    let msg = git(f.dir(), &["log", "-1", "--format=%B", rf]);
    assert!(
        msg.starts_with(&format!("put {sid}: INTERRUPTED_UNGRADED -> ungraded\n\n")),
        "{msg}"
    );
    assert!(
        msg.contains(&format!(
            "Ledger-Attempt: {sid} INTERRUPTED_UNGRADED ungraded"
        )),
        "{msg}"
    );
    assert!(msg.contains("Ledger-Filled: 1/6"), "{msg}");
    assert!(
        msg.contains(&format!("Ledger-Declaration: {ID} sha256:")),
        "{msg}"
    );
    assert_eq!(git(f.dir(), &["rev-parse", &format!("{rf}^")]), root);
    // Git's own trailer parser reads them.
    let trailers = git(
        f.dir(),
        &[
            "log",
            "-1",
            "--format=%(trailers:key=Ledger-Attempt,valueonly)",
            rf,
        ],
    );
    assert_eq!(
        trailers.trim(),
        format!("{sid} INTERRUPTED_UNGRADED ungraded")
    );
    // Author and committer from the environment.
    assert_eq!(
        git(
            f.dir(),
            &["log", "-1", "--format=%an <%ae> / %cn <%ce>", rf]
        ),
        "Test Committer <committer@example.com> / Test Committer <committer@example.com>"
    );
    // The record file: the row file as put received it.
    let files = read_files(f.dir(), rf);
    let records: Vec<_> = files.keys().filter(|p| p.starts_with("records/")).collect();
    assert_eq!(records.len(), 1);
    assert_eq!(files[records[0]].bytes, std::fs::read(&row).unwrap());

    let repair = f.run(&["repair", sid, "--note", "a person fixed the fixture"]);
    repair.ok();
    let msg = git(f.dir(), &["log", "-1", "--format=%B", rf]);
    assert!(msg.starts_with(&format!("repair {sid}\n")), "{msg}");
    assert!(msg.contains(&format!("Ledger-Repair: {sid}")), "{msg}");
    assert!(msg.contains("Ledger-Filled: 1/6"), "{msg}");

    // The same writes in file mode give the same ledger bytes.
    let ledger_file = f.file("ledger.json");
    let template = f
        .run(&["template", f.decl().to_str().unwrap()])
        .ok()
        .stdout
        .clone();
    std::fs::write(&ledger_file, template).unwrap();
    let (d, l) = (f.decl(), ledger_file.clone());
    f.run(&[
        "put",
        sid,
        row.to_str().unwrap(),
        d.to_str().unwrap(),
        l.to_str().unwrap(),
    ])
    .ok();
    f.run(&[
        "repair",
        sid,
        "--note",
        "a person fixed the fixture",
        d.to_str().unwrap(),
        l.to_str().unwrap(),
    ])
    .ok();
    let shown = f.run(&["show"]).ok().stdout.clone();
    assert_eq!(std::fs::read_to_string(&ledger_file).unwrap(), shown);
    // report --at gives what file mode gives, text and JSON, but for the ledger state each names
    // (docs/reference/workflow.md, rule 6): the file's SHA-256, the ref, commit, Ledger-Filled and
    // citation.
    let tip = f.tip();
    let file_sha = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(std::fs::read(&ledger_file).unwrap());
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let mut file_json = f
        .run(&["report", d.to_str().unwrap(), l.to_str().unwrap(), "--json"])
        .json();
    let mut ref_json = f.run(&["report", "--at", rf, "--json"]).json();
    assert_eq!(
        file_json["ledger"],
        serde_json::json!({"mode": "file", "sha256": file_sha})
    );
    assert_eq!(
        ref_json["ledger"],
        serde_json::json!({"citation": format!("{ID}@{tip}"), "commit": tip, "filled": 1,
                           "mode": "ref", "ref": rf})
    );
    file_json.as_object_mut().unwrap().remove("ledger");
    ref_json.as_object_mut().unwrap().remove("ledger");
    assert_eq!(file_json, ref_json);
    let text = |args: &[&str]| -> String {
        let out = f.run(args).ok().stdout.clone();
        out.lines()
            .filter(|l| {
                !l.starts_with("Ledger ") && !l.starts_with("Ledger-") && !l.starts_with("Cite as ")
            })
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let file_text = f
        .run(&["report", d.to_str().unwrap(), l.to_str().unwrap()])
        .ok()
        .stdout
        .clone();
    assert!(
        file_text.contains(&format!("\nLedger file sha256 {file_sha}\n")),
        "{file_text}"
    );
    let ref_text = f.run(&["report", "--at", rf]).ok().stdout.clone();
    assert!(
        ref_text.contains(&format!(
            "\nLedger ref {rf}\nLedger commit {tip}\nLedger-Filled 1\nCite as {ID}@{tip}\n"
        )),
        "{ref_text}"
    );
    assert_eq!(
        text(&["report", d.to_str().unwrap(), l.to_str().unwrap()]),
        text(&["report", "--at", rf])
    );
    // The same state gives the same bytes, in every format and both modes; an older commit
    // (`--at rf~1`) names itself and its own Ledger-Filled.
    for format in ["text", "json", "markdown", "html"] {
        for args in [
            vec![
                "report",
                d.to_str().unwrap(),
                l.to_str().unwrap(),
                "--format",
                format,
            ],
            vec!["report", "--format", format],
            vec!["report", "--at", &tip, "--format", format],
        ] {
            assert_eq!(
                f.run(&args).ok().stdout,
                f.run(&args).ok().stdout,
                "{args:?}"
            );
        }
        assert_eq!(
            f.run(&["report", "--format", format]).ok().stdout,
            f.run(&["report", "--at", &tip, "--format", format])
                .ok()
                .stdout,
        );
    }
    let root_json = f
        .run(&["report", "--at", &format!("{rf}~2"), "--json"])
        .json();
    assert_eq!(root_json["ledger"]["commit"], serde_json::json!(root));
    assert_eq!(root_json["ledger"]["filled"], serde_json::json!(0));
    assert_eq!(
        root_json["ledger"]["citation"],
        serde_json::json!(format!("{ID}@{root}"))
    );
    // A retry through the tool is refused and writes nothing.
    let tip = f.tip();
    let retry = f.run(&["put", sid, row.to_str().unwrap()]);
    retry.expect_code(2);
    assert!(
        retry.stderr.contains("already holds an attempt"),
        "{}",
        retry.stderr
    );
    assert_eq!(f.tip(), tip);
    f.run(&["verify"]).ok();
}

fn log_lists_each_commit_with_its_attempts(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
        .ok();
    f.put("scenario/interrupted-reuse/02", "ERROR").ok();
    f.run(&["repair", "scenario/interrupted-reuse/02", "--note", "fixed"])
        .ok();
    let log = f.run(&["log"]).ok().stdout.clone();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 4, "{log}");
    assert!(
        lines[0].contains("2026-11-29 Test Committer  repair scenario/interrupted-reuse/02  [2/6]"),
        "{log}"
    );
    assert!(
        lines[1].contains("scenario/interrupted-reuse/02 ERROR -> error  [2/6]"),
        "{log}"
    );
    assert!(
        lines[2].contains("scenario/bugfix-iso-weeks/01 INTERRUPTED_UNGRADED -> ungraded  [1/6]"),
        "{log}"
    );
    assert!(
        lines[3].contains(&format!("declare {ID}: 6 scheduled attempts  [0/6]")),
        "{log}"
    );
    let short = &f.tip()[..7];
    assert!(lines[0].starts_with(short));
    let rev = f.run(&["log", "--reverse"]).ok().stdout.clone();
    assert_eq!(rev.lines().next(), lines.last().copied());
    let j = f.run(&["log", rf, "--json"]).ok().json();
    assert_eq!(j.as_array().unwrap().len(), 4);
    assert_eq!(
        j[2]["attempts"][0],
        json!({"schedule_id": "scenario/bugfix-iso-weeks/01", "native_outcome": "INTERRUPTED_UNGRADED", "outcome": "ungraded"})
    );
    assert_eq!(j[0]["repairs"], json!(["scenario/interrupted-reuse/02"]));
    assert_eq!(j[0]["filled"], "2/6");
    assert_eq!(j[0]["commit"], f.tip());
}

fn diff_lists_changed_rows_counts_and_whether_b_follows_a(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let root = f.tip();
    f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
        .ok();
    f.put("scenario/interrupted-reuse/02", "ERROR").ok();
    let tip = f.tip();
    let j = f.run(&["diff", &root, rf, "--json"]).ok().json();
    assert_eq!(j["rows"].as_array().unwrap().len(), 2);
    assert_eq!(j["rows"][0]["schedule_id"], "scenario/bugfix-iso-weeks/01");
    assert_eq!(
        j["rows"][0]["before"],
        json!({"native_outcome": "DEFERRED", "outcome": "not_attempted"})
    );
    assert_eq!(
        j["rows"][0]["after"],
        json!({"native_outcome": "INTERRUPTED_UNGRADED", "outcome": "ungraded"})
    );
    let d = j["rows"][0]["diff"].as_str().unwrap();
    assert!(d.starts_with("--- a/rows/scenario/bugfix-iso-weeks/01.json\n+++ b/rows/scenario/bugfix-iso-weeks/01.json\n@@"), "{d}");
    assert!(
        d.contains("\n-  \"native_outcome\": \"DEFERRED\",\n"),
        "{d}"
    );
    assert!(
        d.contains("\n+  \"native_outcome\": \"INTERRUPTED_UNGRADED\",\n"),
        "{d}"
    );
    assert_eq!(j["counts"]["live"]["not_attempted"], -1);
    assert_eq!(j["counts"]["live"]["ungraded"], 1);
    assert_eq!(j["counts"]["fixture"]["error"], 1);
    assert_eq!(j["counts"]["fixture"]["verified_delivery"], 0);
    assert_eq!(j["follows"]["follows"], true);
    assert_eq!(j["follows"]["steps"], 2);
    // Backwards: B is an ancestor of A, so B does not follow A.
    let back = f.run(&["diff", &tip, &root, "--json"]).ok().json();
    assert_eq!(back["follows"]["follows"], false);
    assert_eq!(back["counts"]["live"]["not_attempted"], 1);
    let text = f.run(&["diff", &root, &tip]).ok().stdout.clone();
    assert!(text.contains("row scenario/bugfix-iso-weeks/01 (live): DEFERRED (not attempted) -> INTERRUPTED_UNGRADED (ungraded)"), "{text}");
    assert!(text.contains("B follows A by 2 admitted steps"), "{text}");
    // Files: the same rows.
    let (a, b) = (f.file("a.json"), f.file("b.json"));
    std::fs::write(&a, f.run(&["show", "--at", &root]).ok().stdout.as_bytes()).unwrap();
    std::fs::write(&b, f.run(&["show"]).ok().stdout.as_bytes()).unwrap();
    let jf = f
        .run(&[
            "diff",
            "--files",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            f.decl().to_str().unwrap(),
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(jf["rows"], j["rows"]);
    assert_eq!(jf["counts"], j["counts"]);
    assert_eq!(jf["follows"]["follows"], true);
}

fn concurrent_writers_each_land_exactly_once(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(4, prefix); // 12 rows
    let decl: Value = serde_json::from_slice(&std::fs::read(f.decl()).unwrap()).unwrap();
    let ids: Vec<String> = decl["schedule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    let template = f.run(&["template", f.decl().to_str().unwrap()]).ok().json();
    let mut paths = Vec::new();
    for (i, sid) in ids.iter().enumerate() {
        let row = hand_row_value(&template["rows"][i].to_string(), "ERROR");
        let p = f.file(&format!("row{i}.json"));
        std::fs::write(&p, pretty(&row)).unwrap();
        paths.push(p);
        let _ = sid;
    }
    // One process per row, plus two more racing for row 0.
    let mut children = Vec::new();
    let mut jobs: Vec<(String, PathBuf)> = ids.iter().cloned().zip(paths.iter().cloned()).collect();
    jobs.push((ids[0].clone(), paths[0].clone()));
    jobs.push((ids[0].clone(), paths[0].clone()));
    for (sid, p) in &jobs {
        let mut cmd = std::process::Command::new(crate::common::bin());
        pin_env(&mut cmd)
            .current_dir(f.dir())
            .args(["put", sid, p.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        children.push(cmd.spawn().unwrap());
    }
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let ok = outs.iter().filter(|o| o.status.code() == Some(0)).count();
    let refused: Vec<_> = outs.iter().filter(|o| o.status.code() == Some(2)).collect();
    for o in &outs {
        assert!(
            matches!(o.status.code(), Some(0) | Some(2)),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(ok, ids.len(), "every row lands once");
    assert_eq!(
        refused.len(),
        2,
        "the two extra writers of row 0 are refused as retries"
    );
    for o in refused {
        assert!(String::from_utf8_lossy(&o.stderr).contains("already holds an attempt"));
    }
    let retries: usize = outs
        .iter()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .matches("rebuilt")
                .count()
        })
        .sum();
    eprintln!("{retries} writers rebuilt their commit after losing a race");
    assert!(
        retries > 0,
        "with {} concurrent writers some lose a race and retry",
        jobs.len()
    );
    // Every row filled exactly once; one commit per row; the count is right.
    assert_eq!(
        git(f.dir(), &["rev-list", "--count", rf]),
        (ids.len() + 1).to_string()
    );
    let attempts = git(
        f.dir(),
        &[
            "log",
            "--format=%(trailers:key=Ledger-Attempt,valueonly)",
            rf,
        ],
    );
    let mut seen: Vec<&str> = attempts
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    seen.sort();
    let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(seen, want);
    let filled = git(
        f.dir(),
        &[
            "log",
            "-1",
            "--format=%(trailers:key=Ledger-Filled,valueonly)",
            rf,
        ],
    );
    assert_eq!(filled.trim(), format!("{}/{}", ids.len(), ids.len()));
    let shown = f.run(&["show"]).ok().json();
    assert!(shown["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["native_outcome"] == "ERROR"));
    f.run(&["verify"]).ok();
}

fn ref_selection_identity_and_naming(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    // A second ledger: commands without --ref ask which.
    let other = f.file("other.json");
    std::fs::write(&other, pretty(&declaration_value("other-campaign", 1))).unwrap();
    f.run(&["init", other.to_str().unwrap()]).ok();
    let row = f.hand_row_for_ref("scenario/bugfix-iso-weeks/01");
    let r = f.run(&["put", "scenario/bugfix-iso-weeks/01", row.to_str().unwrap()]);
    r.expect_code(64);
    assert!(
        r.stderr.contains(&format!("{prefix}other-campaign")) && r.stderr.contains(rf),
        "{}",
        r.stderr
    );
    f.run(&[
        "put",
        "scenario/bugfix-iso-weeks/01",
        row.to_str().unwrap(),
        "--ref",
        ID,
    ])
    .ok();
    f.run(&["verify", "--all"]).ok();
    // A ledger ref not named after its declaration is refused.
    let misnamed = format!("{prefix}misnamed");
    git(f.dir(), &["update-ref", &misnamed, rf]);
    let v = f.run(&["verify", &misnamed]);
    v.expect_code(2);
    assert!(
        v.stderr.contains(&format!("belongs on {rf}")),
        "{}",
        v.stderr
    );
    let p = f.run(&[
        "put",
        "scenario/bugfix-iso-weeks/02",
        row.to_str().unwrap(),
        "--ref",
        &misnamed,
    ]);
    p.expect_code(2);
    // No identity: refused with Git's hint, nothing written.
    let tip = f.tip();
    let row2 = f.hand_row_for_ref("scenario/bugfix-iso-weeks/02");
    let mut cmd = std::process::Command::new(crate::common::bin());
    pin_env(&mut cmd)
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("EMAIL")
        .current_dir(f.dir())
        .args([
            "put",
            "scenario/bugfix-iso-weeks/02",
            row2.to_str().unwrap(),
            "--ref",
            ID,
        ]);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("git config user.name"), "{stderr}");
    assert_eq!(f.tip(), tip);
}

impl Fixture {
    fn hand_row_for_ref(&self, sid: &str) -> PathBuf {
        let row = hand_row_value(
            &self.run(&["show", "--row", sid, "--ref", ID]).ok().stdout,
            "ERROR",
        );
        let path = self.file(&format!("{}.json", sid.replace('/', "_")));
        std::fs::write(&path, pretty(&row)).unwrap();
        path
    }
}

/// The ledger after `init` and one `put` of bugfix/01, for the tampering cases.
struct Tamper {
    f: Fixture,
    root: String,
    tip: String,
    files: Files,
}

impl Tamper {
    fn under(prefix: &str) -> Self {
        let f = Fixture::under(2, prefix);
        let root = f.tip();
        f.put("scenario/bugfix-iso-weeks/01", "INTERRUPTED_UNGRADED")
            .ok();
        let tip = f.tip();
        let files = read_files(f.dir(), &tip);
        Tamper {
            f,
            root,
            tip,
            files,
        }
    }

    /// Commit `files` on the tip with plumbing, point the ledger ref at it, run `verify`, put
    /// the ref back, and return the refusal (asserting exit 2 and the tampered commit named).
    fn refused(&self, what: &str, files: &Files, parents: &[&str], needles: &[&str]) -> String {
        let commit = state_commit(self.f.dir(), files, parents, what);
        self.expect_refused(what, &commit, needles)
    }

    fn expect_refused(&self, what: &str, commit: &str, needles: &[&str]) -> String {
        let dir = self.f.dir();
        git(dir, &["update-ref", &self.f.refname, commit]);
        let v = self.f.run(&["verify"]);
        git(dir, &["update-ref", &self.f.refname, &self.tip]);
        assert_eq!(
            v.code, 2,
            "{what}: verify must refuse\n{}{}",
            v.stdout, v.stderr
        );
        assert!(
            v.stderr.contains(&format!("commit {commit}")),
            "{what}: the commit is named:\n{}",
            v.stderr
        );
        for n in needles {
            assert!(v.stderr.contains(n), "{what}: no {n:?} in:\n{}", v.stderr);
        }
        // A rule the text names is a value of a reason too, not only words in it: its rule,
        // or the rule whose check found it (rule 4 reads a row file with ledger.md's checks,
        // whose refusal group is the reason's rule).
        let j = {
            git(dir, &["update-ref", &self.f.refname, commit]);
            let j = self.f.run(&["verify", "--json"]);
            git(dir, &["update-ref", &self.f.refname, &self.tip]);
            j.json()
        };
        for k in (needles.iter()).filter_map(|n| n.strip_prefix("rule ")?.parse::<u8>().ok()) {
            let want = serde_json::json!({"spec": "admission", "number": k});
            assert!(
                j["details"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["rule"] == want || d["within"] == want),
                "{what}: no reason carries rule {k} as a value: {j}"
            );
        }
        // The validator's API says the same for the ref update tip → commit.
        let repo = git_ledger::git::open(Some(dir)).unwrap();
        let old = git_ledger::git::ObjectId::from_hex(self.tip.as_bytes()).unwrap();
        let new = git_ledger::git::ObjectId::from_hex(commit.as_bytes()).unwrap();
        let r = git_ledger::git::admit::admit_update(
            &repo,
            &self.f.refname,
            Some(old),
            Some(new),
            1 << 26,
        );
        match r {
            Err(git_ledger::Error::Refused(reasons)) => {
                // A merge whose first parent is not the tip is a rewrite from the tip's view.
                assert!(!reasons.is_empty());
            }
            other => panic!("{what}: admit_update must refuse, got {other:?}"),
        }
        if std::env::var_os("SHOW_REFUSALS").is_some() {
            eprintln!("== {what}\n{}", v.stderr);
        }
        v.stderr
    }

    fn row_path(sid: &str) -> String {
        format!("rows/{sid}.json")
    }

    fn row(&self, sid: &str) -> Value {
        serde_json::from_slice(&self.files[&Self::row_path(sid)].bytes).unwrap()
    }

    fn with(&self, path: &str, bytes: Vec<u8>) -> Files {
        let mut files = self.files.clone();
        files.insert(path.to_owned(), regular(bytes));
        files
    }

    fn record_paths(&self) -> Vec<String> {
        self.files
            .keys()
            .filter(|p| p.starts_with("records/"))
            .cloned()
            .collect()
    }
}

fn record_path(key: &str) -> String {
    use sha2_free::hex_sha256;
    let hex = hex_sha256(key.as_bytes());
    format!("records/{}/{}.json", &hex[..2], &hex[2..])
}

mod sha2_free {
    /// SHA-256 through the library (no extra test dependency).
    pub fn hex_sha256(bytes: &[u8]) -> String {
        git_ledger::sha256_hex(bytes)
    }
}

fn tampering_with_plumbing_is_refused_by_verify_and_the_validator(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let t = Tamper::under(prefix);
    let tip = t.tip.as_str();
    let filled = "scenario/bugfix-iso-weeks/01";
    let deferred = "scenario/bugfix-iso-weeks/02";

    // The untampered chain passes.
    t.f.run(&["verify"]).ok();

    // A filled row edited.
    let mut row = t.row(filled);
    row["reason"] = json!("edited later");
    t.refused(
        "filled row edited",
        &t.with(&Tamper::row_path(filled), canonical_row(&row)),
        &[tip],
        &["rule 4", &format!("row {filled}"), "reason"],
    );

    // A retry: the filled row replaced by another attempt with its own record.
    let mut retry = t.row(filled);
    retry["native_outcome"] = json!("ERROR");
    retry["reason"] = json!("second try");
    let rec = b"another record".to_vec();
    retry["native_record"] =
        json!({"kind": "hand", "id": "second-try", "sha256": git_ledger::sha256_hex(&rec)});
    let mut files = t.with(&Tamper::row_path(filled), canonical_row(&retry));
    files.insert(record_path("hand:second-try"), regular(rec));
    t.refused(
        "retry",
        &files,
        &[tip],
        &[
            "rule 4",
            &format!("row {filled}"),
            "native_outcome",
            "never replaced",
        ],
    );

    // A row added.
    let extra = t.row(deferred);
    t.refused(
        "row added",
        &t.with(
            "rows/scenario/bugfix-iso-weeks/03.json",
            canonical_row(&extra),
        ),
        &[tip],
        &["rule 3", "rows/scenario/bugfix-iso-weeks/03.json"],
    );

    // A row removed.
    let mut files = t.files.clone();
    files.remove(&Tamper::row_path(deferred));
    t.refused(
        "row removed",
        &files,
        &[tip],
        &["rule 3", &format!("row {deferred} was removed")],
    );

    // campaign.json changed.
    let mut decl = t.files["campaign.json"].bytes.clone();
    decl.push(b'\n');
    t.refused(
        "campaign.json changed",
        &t.with("campaign.json", decl),
        &[tip],
        &["rule 2", "campaign.json changed"],
    );

    // ledger.json changed.
    t.refused(
        "ledger.json changed",
        &t.with("ledger.json", b"{}\n".to_vec()),
        &[tip],
        &["rule 2", "ledger.json changed"],
    );

    // A merge commit.
    t.refused(
        "merge",
        &t.files,
        &[tip, &t.root],
        &["rule 1", "merge commit"],
    );

    // A DEFERRED row with spend.
    let mut spend = t.row(deferred);
    spend["elapsed_seconds"] = json!(30);
    t.refused(
        "deferred with spend",
        &t.with(&Tamper::row_path(deferred), canonical_row(&spend)),
        &[tip],
        &["rule 4", &format!("row {deferred}"), "elapsed_seconds"],
    );

    // Non-canonical row bytes (a valid attempted row, compact JSON, with its record).
    let mut fill = t.row(deferred);
    fill["native_outcome"] = json!("ERROR");
    fill["reason"] = json!("crashed");
    let rec = b"record bytes".to_vec();
    fill["native_record"] =
        json!({"kind": "hand", "id": deferred, "sha256": git_ledger::sha256_hex(&rec)});
    let mut files = t.with(
        &Tamper::row_path(deferred),
        serde_json::to_vec(&fill).unwrap(),
    );
    files.insert(
        record_path(&format!("hand:{deferred}")),
        regular(rec.clone()),
    );
    t.refused(
        "non-canonical",
        &files,
        &[tip],
        &["rule 4", &format!("row {deferred}"), "canonical bytes"],
    );

    // The same row in canonical bytes with its record is admitted (the control case).
    let mut files = t.with(&Tamper::row_path(deferred), canonical_row(&fill));
    files.insert(
        record_path(&format!("hand:{deferred}")),
        regular(rec.clone()),
    );
    let good = state_commit(
        t.f.dir(),
        &files,
        &[tip],
        &error_fill_message(t.f.dir(), tip, deferred),
    );
    git(t.f.dir(), &["update-ref", rf, &good]);
    t.f.run(&["verify"]).ok();
    git(t.f.dir(), &["update-ref", rf, tip]);

    // A record missing for a newly filled row.
    let files = t.with(&Tamper::row_path(deferred), canonical_row(&fill));
    t.refused(
        "record missing",
        &files,
        &[tip],
        &["rule 5", &format!("row {deferred}"), "no record file"],
    );

    // A record whose bytes do not hash to native_record.sha256.
    let mut files = t.with(&Tamper::row_path(deferred), canonical_row(&fill));
    files.insert(
        record_path(&format!("hand:{deferred}")),
        regular(b"other bytes".to_vec()),
    );
    t.refused(
        "record hash",
        &files,
        &[tip],
        &["rule 5", "native_record.sha256"],
    );

    // An unknown path.
    t.refused(
        "unknown path",
        &t.with("notes.txt", b"hello\n".to_vec()),
        &[tip],
        &["rule 3", "notes.txt", "outside the ledger layout"],
    );

    // A symlink where a row should be.
    let mut files = t.files.clone();
    files.insert(
        Tamper::row_path(deferred),
        Entry {
            mode: "120000".into(),
            bytes: b"../01.json".to_vec(),
        },
    );
    t.refused(
        "symlink",
        &files,
        &[tip],
        &["rule 3", &format!("row {deferred}"), "120000"],
    );

    // A submodule where a row should be.
    let mut files = t.files.clone();
    files.insert(
        Tamper::row_path(deferred),
        Entry {
            mode: "160000".into(),
            bytes: t.root.clone().into_bytes(),
        },
    );
    t.refused("submodule", &files, &[tip], &["rule 3", "160000"]);

    // An executable row file.
    let mut files = t.files.clone();
    files.get_mut(&Tamper::row_path(deferred)).unwrap().mode = "100755".into();
    t.refused("executable", &files, &[tip], &["rule 3", "100755"]);

    // A directory where a row should be.
    let mut files = t.files.clone();
    let template_bytes = files.remove(&Tamper::row_path(deferred)).unwrap();
    files.insert(
        format!("{}/x.json", Tamper::row_path(deferred)),
        template_bytes,
    );
    t.refused(
        "tree where a row should be",
        &files,
        &[tip],
        &["rule 3", "is a directory"],
    );

    // A record file changed, and one removed.
    let rec = t.record_paths().remove(0);
    t.refused(
        "record changed",
        &t.with(&rec, b"changed".to_vec()),
        &[tip],
        &["rule 5", "changed"],
    );
    let mut files = t.files.clone();
    files.remove(&rec);
    t.refused("record removed", &files, &[tip], &["rule 5", "was removed"]);

    // A row path that does not match its schedule_id.
    let other: Value = t.row("scenario/bugfix-iso-weeks/02");
    t.refused(
        "path mismatch",
        &t.with(
            &Tamper::row_path("scenario/interrupted-reuse/02"),
            canonical_row(&other),
        ),
        &[tip],
        &["rule 4", "row scenario/interrupted-reuse/02", "schedule_id"],
    );

    // A root that is not the template: a chain whose root already holds a filled row.
    let root_files = t.files.clone();
    let bad_root = state_commit(t.f.dir(), &root_files, &[], "declare by hand");
    t.expect_refused(
        "bad root",
        &bad_root,
        &[
            "rule 1",
            &format!("row {filled}: differs from its template row"),
        ],
    );
}

fn the_validator_refuses_deletion_and_rewrites_and_passes_other_refs(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let t = Tamper::under(prefix);
    let repo = git_ledger::git::open(Some(t.f.dir())).unwrap();
    let id = |s: &str| git_ledger::git::ObjectId::from_hex(s.as_bytes()).unwrap();
    let admit = |name: &str, old: Option<&str>, new: Option<&str>| {
        git_ledger::git::admit::admit_update(&repo, name, old.map(id), new.map(id), 1 << 26)
    };
    assert_eq!(
        admit(rf, None, Some(&t.tip)).unwrap(),
        2,
        "creation checks the whole chain"
    );
    assert_eq!(admit(rf, Some(&t.root), Some(&t.tip)).unwrap(), 1);
    let del = admit(rf, Some(&t.tip), None).unwrap_err();
    assert!(del.refusal_reasons()[0]
        .to_string()
        .contains("deleting a ledger ref is refused"));
    let rewind = admit(rf, Some(&t.tip), Some(&t.root)).unwrap_err();
    assert!(
        rewind.refusal_reasons()[0]
            .to_string()
            .contains("not an ancestor"),
        "{rewind:?}"
    );
    assert_eq!(admit("refs/heads/main", None, Some(&t.tip)).unwrap(), 0);
    let wrong_name = admit(&format!("{prefix}elsewhere"), None, Some(&t.tip)).unwrap_err();
    assert!(
        wrong_name.refusal_reasons()[0]
            .to_string()
            .contains("belongs on"),
        "{wrong_name:?}"
    );
}

/// The message the tool writes for a commit that fills `sid` by hand (as `put` would), with
/// `filled` rows filled after it, so that a commit written by plumbing says what it did.
fn put_message(files: &Files, sid: &str, filled: usize) -> String {
    use git_ledger::store::{Change, ChangeKind, RowWrite};
    let decl = git_ledger::declaration::Declaration::parse_vec(
        files["campaign.json"].bytes.clone(),
        1 << 26,
    )
    .unwrap();
    let value: Value = serde_json::from_slice(&files[&Tamper::row_path(sid)].bytes).unwrap();
    let row = git_ledger::ledger::Row::check(&decl, &value, "row").unwrap();
    let change = Change {
        kind: ChangeKind::Put,
        rows: vec![RowWrite {
            row,
            record: None,
            source: String::new(),
        }],
    };
    let (message, after) =
        git_ledger::git::message::change_message(&decl, &change, filled - 1).unwrap();
    assert_eq!(after, filled);
    message
}

/// `docs/reference/layout.md`: a record file is `records/<hh>/<rest>.json`, the SHA-256 of its key split after
/// two hex digits. The tool writes that; a plumbing commit that does so is admitted, in a new
/// fan-out directory or in one that already holds a record; a flat record path (the layout
/// before 2026-12), a record in another fan-out directory than its hash's, a record name that
/// is not 62 hex digits and `.json`, a fan-out entry that is not a directory, and a directory
/// in `records/` that is not two hex digits are each refused by `verify` and by the validator,
/// naming the path and the rule.
fn records_are_fanned_out_and_every_other_record_path_is_refused(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let t = Tamper::under(prefix);
    let dir = t.f.dir();
    let tip = t.tip.as_str();
    let filled = "scenario/bugfix-iso-weeks/01";
    let deferred = "scenario/bugfix-iso-weeks/02";
    let hex = |key: &str| git_ledger::sha256_hex(key.as_bytes());

    // `put` wrote its record fanned out, `records/<hh>` a tree.
    let put_key = format!("hand:{filled}");
    let h = hex(&put_key);
    assert_eq!(
        t.record_paths(),
        [format!("records/{}/{}.json", &h[..2], &h[2..])]
    );
    let hh = h[..2].to_owned();
    let top = git(dir, &["ls-tree", tip, "records/"]);
    assert!(
        top.starts_with("040000 tree ") && top.ends_with(&format!("\trecords/{hh}")),
        "{top}"
    );

    // The row `deferred` filled by plumbing from a scenario record `scenario:<id>` of bytes
    // `rec` (a hand record must be named after its own row, so its key is fixed).
    let rec = b"the record\n".to_vec();
    let fill = |id: &str| -> Files {
        let mut row = t.row(deferred);
        row["native_outcome"] = json!("ERROR");
        row["reason"] = json!("crashed");
        row["native_record"] =
            json!({"kind": "scenario", "id": id, "sha256": git_ledger::sha256_hex(&rec)});
        t.with(&Tamper::row_path(deferred), canonical_row(&row))
    };
    // Record ids whose key lands in put's fan-out directory, and in another one.
    let ids = |same: bool| {
        (0..)
            .map(|i| format!("fan-{i}"))
            .find(|id| hex(&format!("scenario:{id}")).starts_with(&hh) == same)
            .unwrap()
    };
    for (what, id) in [
        ("a new fan-out directory", ids(false)),
        ("put's fan-out directory", ids(true)),
    ] {
        let mut files = fill(&id);
        files.insert(record_path(&format!("scenario:{id}")), regular(rec.clone()));
        let good = state_commit(dir, &files, &[tip], &put_message(&files, deferred, 2));
        git(dir, &["update-ref", rf, &good]);
        let v = t.f.run(&["verify"]);
        git(dir, &["update-ref", rf, tip]);
        assert_eq!(v.code, 0, "{what}: admitted\n{}{}", v.stdout, v.stderr);
        let listed = git(dir, &["ls-tree", "-r", "--name-only", &good, "records/"]);
        assert_eq!(listed.lines().count(), 2, "{what}: {listed}");
    }

    let id = ids(false);
    let key = format!("scenario:{id}");
    let k = hex(&key);
    let refuse = |what: &str, path: String, needles: &[&str]| {
        let mut files = fill(&id);
        files.insert(path.clone(), regular(rec.clone()));
        let mut all = vec![path.as_str()];
        all.extend_from_slice(needles);
        t.refused(what, &files, &[tip], &all)
    };
    let flat = refuse(
        "flat record path",
        format!("records/{k}.json"),
        &[
            "rule 3",
            "outside the ledger layout",
            "records/<hh>/<rest>.json",
        ],
    );
    assert!(flat.contains(&format!("row {deferred}")), "{flat}");
    // In another fan-out directory: not the row's record file, and the row has none.
    let wrong = if k.starts_with("00") { "01" } else { "00" };
    refuse(
        "record in the wrong fan-out directory",
        format!("records/{wrong}/{}.json", &k[2..]),
        &[
            "rule 5",
            "no row this commit fills names it",
            "no record file",
        ],
    );
    for (what, name) in [
        (
            "64 hex digits below a fan-out directory",
            format!("{k}.json"),
        ),
        ("61 hex digits", format!("{}.json", &k[3..])),
        ("upper-case hex", format!("{}.json", k[2..].to_uppercase())),
        ("not .json", format!("{}.JSON", &k[2..])),
        ("not hex", format!("{}g.json", &k[3..])),
    ] {
        refuse(
            what,
            format!("records/{}/{name}", &k[..2]),
            &["rule 5", "is not a record file name"],
        );
    }
    refuse(
        "a fan-out entry that is a file",
        format!("records/{}", &k[..2]),
        &["rule 3", "is not a directory"],
    );
    // Upper-case hex ("AB": the key's own digits may have no letter to upper-case).
    for d in ["AB".to_owned(), k[..3].to_owned(), "x".into()] {
        let mut files = fill(&id);
        files.insert(
            format!("records/{d}/{}.json", &k[2..]),
            regular(rec.clone()),
        );
        t.refused(
            "a directory in records/ that is not two hex digits",
            &files,
            &[tip],
            &[
                "rule 3",
                &format!("records/{d} is outside the ledger layout"),
            ],
        );
    }
    // An empty fan-out directory (Git writes no empty trees), built with plumbing.
    let empty = crate::common::git_run(
        dir,
        &["hash-object", "-t", "tree", "-w", "--stdin"],
        Some(b""),
    );
    let empty = empty.stdout.trim().to_owned();
    let eh = if hh == "00" { "01" } else { "00" };
    let mktree = |listing: String| {
        let r = crate::common::git_run(dir, &["mktree"], Some(listing.as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout.trim().to_owned()
    };
    let records = mktree(format!(
        "{}\n040000 tree {empty}\t{eh}\n",
        git(dir, &["ls-tree", &format!("{tip}:records")])
    ));
    let root = mktree(
        git(dir, &["ls-tree", tip])
            .lines()
            .map(|l| match l.strip_suffix("\trecords") {
                Some(_) => format!("040000 tree {records}\trecords\n"),
                None => format!("{l}\n"),
            })
            .collect(),
    );
    let commit = git(
        dir,
        &[
            "commit-tree",
            &root,
            "-p",
            tip,
            "-m",
            "empty fan-out directory",
        ],
    );
    t.expect_refused(
        "an empty fan-out directory",
        &commit,
        &["rule 3", &format!("records/{eh} is an empty directory")],
    );
    assert_eq!(t.f.tip(), t.tip, "nothing moved");
}

/// `git -c <key>=<value> ledger …`: Git hands the setting over in GIT_CONFIG_PARAMETERS, and it
/// applies as it would to a Git command; without it, the repository's configuration stands.
fn git_dash_c_settings_reach_the_tool(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let f = Fixture::under(2, prefix);
    let row = f.hand_row("scenario/bugfix-iso-weeks/01", "ERROR");
    let row = row.to_str().unwrap();
    let tip = git(f.dir(), &["rev-parse", rf]);
    // Signing asked for on the command line alone, in a format the tool does not sign with:
    // refused before anything is written.
    let r = crate::common::git_hooked(
        f.dir(),
        &[
            "-c",
            "commit.gpgSign=true",
            "ledger",
            "put",
            "scenario/bugfix-iso-weeks/01",
            row,
        ],
        None,
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("commit.gpgSign is true, but gpg.format is \"openpgp\""),
        "{}",
        r.stderr
    );
    assert_eq!(git(f.dir(), &["rev-parse", rf]), tip, "nothing moved");
    // A value Git itself would call bogus stops the command (exit 1), as it stops Git.
    let mut cmd = std::process::Command::new(crate::common::bin());
    pin_env(&mut cmd)
        .current_dir(f.dir())
        .env("GIT_CONFIG_PARAMETERS", "'commit.gpgsign")
        .args(["put", "scenario/bugfix-iso-weeks/01", row]);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bogus format in GIT_CONFIG_PARAMETERS"),
        "{out:?}"
    );
    assert_eq!(git(f.dir(), &["rev-parse", rf]), tip, "nothing moved");
    // Without the setting, the same put is written.
    f.run(&["put", "scenario/bugfix-iso-weeks/01", row]).ok();
    assert_ne!(git(f.dir(), &["rev-parse", rf]), tip);
    let shown = f
        .run(&["show", "--row", "scenario/bugfix-iso-weeks/01"])
        .ok()
        .stdout
        .clone();
    assert!(shown.contains("\"native_outcome\": \"ERROR\""), "{shown}");
}

crate::common::under_both_prefixes!(init_writes_the_template_and_show_prints_it_byte_for_byte);
crate::common::under_both_prefixes!(row_reasons_across_batches_come_in_schedule_order);

crate::common::under_both_prefixes!(
    a_ledger_declaration_is_cached_by_blob_id_read_from_there_and_parsed_again_when_damaged,
    put_and_repair_write_one_commit_each_with_trailers_and_match_file_mode,
    log_lists_each_commit_with_its_attempts,
    diff_lists_changed_rows_counts_and_whether_b_follows_a,
    concurrent_writers_each_land_exactly_once,
    ref_selection_identity_and_naming,
    tampering_with_plumbing_is_refused_by_verify_and_the_validator,
    the_validator_refuses_deletion_and_rewrites_and_passes_other_refs,
    records_are_fanned_out_and_every_other_record_path_is_refused,
    git_dash_c_settings_reach_the_tool,
);
