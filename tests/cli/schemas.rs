//! `docs/schemas/`: the JSON Schemas (draft 2020-12) of every format the tool reads or writes.
//! Each schema is itself valid 2020-12; every committed example validates against its schema;
//! an example broken on purpose fails; and every JSON output of the binary that the test suite
//! runs through `common::ledger*` is validated against its command's schema ([`check_output`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::common::{git, ledger, project_root, write, Run};

/// Where the schemas are committed.
pub const DIR: &str = "docs/schemas";

/// Resolves a schema's relative `$ref` (`row.schema.json`) to the committed file beside it:
/// no network, no file outside `docs/schemas/`.
struct Local;

impl jsonschema::Retrieve for Local {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let name = uri.path().as_str().rsplit('/').next().unwrap_or_default();
        if !name.ends_with(".schema.json") || name.contains("..") {
            return Err(format!("{uri}: not a schema of {DIR}").into());
        }
        let bytes = std::fs::read(project_root().join(DIR).join(name))?;
        Ok(serde_json::from_slice(&bytes)?)
    }
}

/// Every schema file name without `.schema.json`, sorted.
pub fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(project_root().join(DIR))
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_suffix(".schema.json").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

fn read_schema(name: &str) -> Value {
    let path = project_root().join(DIR).join(format!("{name}.schema.json"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn compile(name: &str) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .with_retriever(Local)
        .should_validate_formats(true)
        .build(&read_schema(name))
        .unwrap_or_else(|e| panic!("{DIR}/{name}.schema.json does not compile: {e}"))
}

/// Every schema, compiled once for the whole test binary.
fn validators() -> &'static BTreeMap<String, jsonschema::Validator> {
    static V: OnceLock<BTreeMap<String, jsonschema::Validator>> = OnceLock::new();
    V.get_or_init(|| {
        names()
            .into_iter()
            .map(|n| (n.clone(), compile(&n)))
            .collect()
    })
}

/// The errors of `instance` against schema `name` (empty when it validates).
pub fn errors(name: &str, instance: &Value) -> Vec<String> {
    let v = validators()
        .get(name)
        .unwrap_or_else(|| panic!("no schema {DIR}/{name}.schema.json"));
    v.iter_errors(instance)
        .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
        .collect()
}

/// Panic unless `instance` validates against schema `name`; `what` names it in the message.
#[track_caller]
pub fn assert_valid(name: &str, instance: &Value, what: &str) {
    let errs = errors(name, instance);
    assert!(
        errs.is_empty(),
        "{what} does not validate against {DIR}/{name}.schema.json:\n  {}",
        errs.join("\n  ")
    );
}

/// Panic unless `instance` fails schema `name` with an error mentioning `needle`.
#[track_caller]
fn assert_invalid(name: &str, instance: &Value, needle: &str, what: &str) {
    let errs = errors(name, instance);
    assert!(
        !errs.is_empty(),
        "{what} (broken on purpose) validates against {name}.schema.json"
    );
    assert!(
        errs.iter().any(|e| e.contains(needle)),
        "{what}: no error mentions {needle:?}:\n  {}",
        errs.join("\n  ")
    );
}

/// The schema the JSON on standard output of `git-ledger <args>` follows, given its exit status
/// and parsed output; `None` when the command does not print JSON.
pub fn schema_for(args: &[&str], code: i32, out: &Value) -> Option<&'static str> {
    let mut words = args.iter().copied().take_while(|a| *a != "--");
    let command = words.find(|a| !a.starts_with('-'))?;
    let json = args.iter().enumerate().any(|(i, a)| {
        *a == "--json"
            || *a == "--format=json"
            || (*a == "--format" && args.get(i + 1) == Some(&"json"))
    });
    let has = |flag: &str| {
        args.iter()
            .any(|a| *a == flag || a.starts_with(&format!("{flag}=")))
    };
    if json {
        if command == "cite" && (code == 0 || out.get("citeable").is_some()) {
            return Some("cite-verdict");
        }
        // `audit` prints the audit whether it passes or not (exit 2, `ok` false).
        if command == "audit" && out.get("ledgers").is_some() {
            return Some("audit");
        }
        // `log` prints its list even when a message is not admitted, then exits 2.
        if command == "log" && out.is_array() {
            return Some("log");
        }
        if code != 0 {
            return Some("refusal");
        }
        if has("--dry-run") && matches!(command, "import" | "put" | "repair") {
            return Some("dry-run");
        }
        return Some(match command {
            "check" => "check",
            "report" => "report",
            "import" => "import-summary",
            "log" => "log",
            "diff" => "diff",
            "verify" => "verify",
            other => panic!(
                "`git-ledger {other} --json` printed JSON that no schema describes: add one to {DIR}/ and to schemas::schema_for"
            ),
        });
    }
    if code != 0 {
        return None;
    }
    match command {
        "template" => Some("ledger"),
        "show" if has("--row") => Some("row"),
        "show" if has("--declaration") => Some("campaign-declaration"),
        "show" => Some("ledger"),
        "pin" if !has("-o") && !has("--output") => Some("campaign-declaration"),
        _ => None,
    }
}

/// How many outputs [`check_output`] has validated in this test binary.
static VALIDATED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Validate what a run of the binary printed against its command's schema (called by every
/// helper of `common` that runs the binary). A command that should print JSON and prints
/// something else, or JSON outside its schema, fails the test that ran it.
#[track_caller]
pub fn check_output(args: &[&str], run: &Run) {
    if run.stdout.trim().is_empty() {
        return;
    }
    let parsed: Result<Value, _> = serde_json::from_str(&run.stdout);
    let probe = parsed.as_ref().ok().cloned().unwrap_or(Value::Null);
    let Some(schema) = schema_for(args, run.code, &probe) else {
        return;
    };
    let value = parsed.unwrap_or_else(|e| {
        panic!(
            "`git-ledger {}` (exit {}) should print JSON ({schema}.schema.json) but stdout is not JSON ({e}):\n{}",
            args.join(" "),
            run.code,
            run.stdout
        )
    });
    let errs = errors(schema, &value);
    VALIDATED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    assert!(
        errs.is_empty(),
        "`git-ledger {}` (exit {}) printed JSON that breaks {DIR}/{schema}.schema.json:\n  {}\n--- stdout\n{}",
        args.join(" "),
        run.code,
        errs.join("\n  "),
        run.stdout
    );
    if schema == "refusal" {
        details_hold_the_text(args, &value);
    }
    for d in embedded_reasons(schema, &value) {
        let sentence = d["sentence"].as_str().unwrap_or_default();
        assert!(
            !holds_structure(sentence),
            "`git-ledger {}`: a reason in {schema}'s JSON holds a place or a rule number in its sentence: {d}",
            args.join(" ")
        );
    }
}

/// The reason objects (refusal.schema.json's reason) an output other than a refusal carries:
/// a report's `refused`, a diff's sides not admitted and `why_not`, a log entry's `refused`
/// and `signature_refused`, an audit's `shown_otherwise` and each ledger's `refused` and
/// declaration `reasons`.
fn embedded_reasons<'v>(schema: &str, v: &'v Value) -> Vec<&'v Value> {
    fn each(v: &Value) -> Vec<&Value> {
        v.as_array().map(|a| a.iter().collect()).unwrap_or_default()
    }
    let mut out: Vec<&Value> = Vec::new();
    match schema {
        "report" => out.extend(each(&v["refused"])),
        "diff" => {
            for side in each(&v["admitted"]["refused"]) {
                out.extend(each(&side["reasons"]));
            }
            out.extend(each(&v["follows"]["why_not"]));
        }
        "log" => {
            for e in each(v) {
                out.extend(each(&e["refused"]));
                out.extend(each(&e["signature_refused"]));
            }
        }
        "audit" => {
            out.extend(each(&v["shown_otherwise"]));
            for l in each(&v["ledgers"]) {
                out.extend(each(&l["refused"]));
                out.extend(each(&l["declaration"]["reasons"]));
            }
        }
        _ => {}
    }
    out
}

/// Whether a reason's sentence holds what should be a value: it starts with a place (a ref, an
/// absolute path, `commit <id>`) or names a rule number (`rule 4: `).
fn holds_structure(sentence: &str) -> bool {
    let head = sentence.split(": ").next().unwrap_or_default();
    let commit = head.strip_prefix("commit ").unwrap_or_default();
    let place_like = sentence.contains(": ")
        && (head.starts_with("refs/")
            || head.starts_with('/')
            || (commit.len() >= 40 && commit.chars().all(|c| c.is_ascii_hexdigit())));
    place_like || (0..=9).any(|n| sentence.contains(&format!("rule {n}: ")))
}

/// A refusal's `details` hold everything its text says: each reason's text is its values
/// rendered (places, the rule shown, row, field, sentence), and no sentence starts with a place
/// or names a rule number, which would be structure only the text holds.
#[track_caller]
fn details_hold_the_text(args: &[&str], v: &Value) {
    let (Some(details), Some(reasons)) = (v["details"].as_array(), v["reasons"].as_array()) else {
        return;
    };
    assert_eq!(details.len(), reasons.len());
    for (d, text) in details.iter().zip(reasons) {
        let text = text.as_str().unwrap();
        let sentence = d["sentence"].as_str().unwrap();
        let shown = [&d["within"], &d["rule"]]
            .into_iter()
            .find(|r| !r.is_null())
            .filter(|r| r["spec"] == "admission")
            .map(|r| format!("rule {}: ", r["number"]));
        let mut parts: Vec<String> = (d["place"].as_array().into_iter().flatten())
            .map(|p| format!("{}: ", p.as_str().unwrap()))
            .collect();
        if let Some(row) = d["row"].as_str() {
            parts.push(format!("row {row}: "));
        }
        if let Some(field) = d["field"].as_str() {
            parts.push(format!("{field}: "));
        }
        parts.push(sentence.to_owned());
        // The rule's words follow the place it was found at: compare without them.
        let without_rule = match &shown {
            Some(r) => text.replacen(r.as_str(), "", 1),
            None => text.to_owned(),
        };
        assert_eq!(
            parts.concat(),
            without_rule,
            "`git-ledger {}`: details do not hold what the text says:\n  {d}",
            args.join(" ")
        );
        if let Some(r) = &shown {
            assert!(
                text.contains(r.as_str()),
                "`git-ledger {}`: {text:?} does not show {r:?}",
                args.join(" ")
            );
        }
        assert!(
            !holds_structure(sentence),
            "`git-ledger {}`: the sentence holds a place or a rule number: {sentence:?}",
            args.join(" ")
        );
    }
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// (a) Every schema is a valid draft 2020-12 schema, declares that draft, has a title and a
/// description, and compiles with its references resolved; docs/schemas/README.md lists each.
#[test]
fn every_schema_is_valid_draft_2020_12() {
    let readme = std::fs::read_to_string(project_root().join(DIR).join("README.md")).unwrap();
    let names = names();
    assert!(names.len() >= 19, "{names:?}");
    for name in &names {
        let schema = read_schema(name);
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
            panic!("{name}.schema.json is not a valid draft 2020-12 schema: {e}");
        }
        assert!(schema["title"].is_string(), "{name}: title");
        assert!(schema["description"].is_string(), "{name}: description");
        compile(name);
        assert!(
            readme.contains(&format!("]({name}.schema.json)")),
            "{DIR}/README.md does not link {name}.schema.json"
        );
    }
    // A schema that is not 2020-12 is told apart (the check above can fail).
    let bad = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": 12});
    assert!(jsonschema::draft202012::meta::validate(&bad).is_err());
}

/// The committed examples, as (schema, instance, where it comes from): the embedded
/// campaign's draft, declaration, profile, example ledger (and each of its rows), runtime
/// identity and scenario results; the fuzz seeds that are valid inputs.
fn committed_examples() -> Vec<(&'static str, Value, String)> {
    let root = project_root();
    let mut out = Vec::new();
    let mut file = |schema: &'static str, p: PathBuf| {
        let what = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
        out.push((schema, read_json(&p), what));
    };
    file("campaign-draft", root.join("arena/campaign.draft.json"));
    file("campaign-declaration", root.join("arena/campaign.json"));
    for p in files(&root.join("arena/profiles"), ".json") {
        file("profile", p);
    }
    file("ledger", root.join("arena/examples/ledger.json"));
    file("runtime-identity", root.join("arena/examples/runtime.json"));
    let results = files(&root.join("arena/examples/scenario-runs"), "/result.json");
    assert!(results.len() >= 6, "{results:?}");
    for p in results {
        file("scenario-result", p);
    }
    let corpus = root.join("tests/fuzz_corpus");
    for f in ["campaign.json", "small.json", "small-3reps.json"] {
        file("campaign-declaration", corpus.join("declaration").join(f));
    }
    for f in ["campaign.draft.json", "small.draft.json"] {
        file("campaign-draft", corpus.join("declaration").join(f));
    }
    for f in ["template.json", "filled.json", "repaired.json"] {
        file("ledger", corpus.join("ledger").join(f));
    }
    file("row", corpus.join("node_parser/row.json"));
    for f in ["example.json", "minimal.json", "spec-example.json"] {
        file("scenario-result", corpus.join("scenario_record").join(f));
    }
    file("cite-card", corpus.join("cite_line/card.json"));
    let ledger = read_json(&root.join("arena/examples/ledger.json"));
    for row in ledger["rows"].as_array().unwrap() {
        out.push((
            "row",
            row.clone(),
            format!("arena/examples/ledger.json row {}", row["schedule_id"]),
        ));
    }
    for f in ["ok.jsonl", "multi.jsonl"] {
        let p = corpus.join("cite_line").join(f);
        for (i, line) in std::fs::read_to_string(&p).unwrap().lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).unwrap();
            out.push(("cite-runs-line", v, format!("{}:{}", p.display(), i + 1)));
        }
    }
    out
}

/// Every property name a schema declares, recursively.
fn property_names(schema: &Value, out: &mut std::collections::BTreeSet<String>) {
    match schema {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = m.get("properties") {
                out.extend(props.keys().cloned());
            }
            m.values().for_each(|v| property_names(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}

/// The reference documents what the schemas hold: formats.md links every schema, and the
/// report's JSON contract (report-json.md) names every key of report.schema.json, so a key the
/// report starts to print (which its closed schema then has to list) is documented too.
#[test]
fn the_reference_documents_every_schema_and_report_key() {
    let reference = project_root().join("docs/reference");
    let formats = std::fs::read_to_string(reference.join("formats.md")).unwrap();
    for name in names() {
        assert!(
            formats.contains(&format!("](../schemas/{name}.schema.json)")),
            "docs/reference/formats.md does not link {name}.schema.json"
        );
    }
    let contract = std::fs::read_to_string(reference.join("report-json.md")).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    property_names(&read_schema("report"), &mut keys);
    assert!(keys.len() > 30, "{keys:?}");
    for key in keys {
        assert!(
            ["`{}", ".{}`", ".{}[", ".{}.", "\"{}\""]
                .iter()
                .any(|f| contract.contains(&f.replace("{}", &key))),
            "docs/reference/report-json.md does not name the report key {key:?}"
        );
    }
}

/// (b) Every committed example validates.
#[test]
fn every_committed_example_validates() {
    let examples = committed_examples();
    for (schema, value, what) in &examples {
        assert_valid(schema, value, what);
    }
    assert!(examples.len() >= 40, "{} examples checked", examples.len());
    // The seed's gap.jsonl lacks queue_wait_ms: the tool refuses it, and so does the schema.
    let corpus = project_root().join("tests/fuzz_corpus");
    let gap = std::fs::read_to_string(corpus.join("cite_line/gap.jsonl")).unwrap();
    let gap: Value = serde_json::from_str(gap.lines().next().unwrap()).unwrap();
    assert_invalid("cite-runs-line", &gap, "queue_wait_ms", "gap.jsonl");
}

/// A ledger on a ref with every kind of row and record, and one output of every command that
/// prints JSON, all produced by the built binary. Each output is validated by `check_output`
/// as it is produced (through `common::ledger`); the values are returned for the tests that
/// break them on purpose.
struct Tour {
    campaign: crate::import::Campaign,
    outputs: BTreeMap<&'static str, Value>,
    /// (schema, record or tree file as JSON, its path on the ref)
    files: Vec<(&'static str, Value, String)>,
}

impl Tour {
    fn new() -> Tour {
        Self::under(crate::common::PREFIXES[0])
    }

    /// [`Tour::new`] with the ledger under `prefix`.
    fn under(prefix: &str) -> Tour {
        let c = crate::import::Campaign::new();
        let root = c.root().to_path_buf();
        crate::common::use_prefix(&root, prefix);
        let id = c.decl.id.clone();
        let reference = format!("{prefix}{id}");
        let mut outputs = BTreeMap::new();
        let mut keep = |key: &'static str, args: &[&str], code: i32| {
            let r = ledger(&root, args);
            r.expect_code(code);
            outputs.insert(key, r.json());
        };
        keep("check", &["check", "campaign.json", "--json"], 0);
        ledger(&root, &["init", "campaign.json"]).ok();
        let examples = Path::new(crate::make_examples::EXAMPLES);
        let mut args: Vec<String> = vec!["import".into(), "--json".into()];
        args.extend(crate::make_examples::import_args(examples, false));
        args.extend(crate::make_examples::runtime_args(examples));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut dry = args.clone();
        dry.push("--dry-run");
        keep("dry-run", &dry, 0);
        keep("import-summary", &args, 0);
        // A hand row for the run that was admitted but never graded, then a repair.
        let hand = crate::make_examples::SCENARIO_RUNS
            .iter()
            .find(|s| s.outcome.is_none())
            .unwrap();
        let shown = ledger(&root, &["show", "--row", hand.schedule_id]);
        let mut row: Value = shown.ok().json();
        row["native_outcome"] = "INTERRUPTED_UNGRADED".into();
        row["reason"] = "the run was interrupted before grading".into();
        row["evidence_refs"] = json!([format!("arena/examples/scenario-runs/{}", hand.run_id)]);
        write(
            &root,
            "hand-row.json",
            serde_json::to_vec_pretty(&row).unwrap(),
        );
        ledger(&root, &["put", hand.schedule_id, "hand-row.json"]).ok();
        let verified = crate::make_examples::SCENARIO_RUNS[0].schedule_id;
        ledger(
            &root,
            &["repair", verified, "--note", "fixed the fixture by hand"],
        )
        .ok();
        keep("report", &["report", "--json"], 0);
        keep("log", &["log", "--json"], 0);
        let first = git(&root, &["rev-list", "--max-parents=0", &reference]);
        keep("diff", &["diff", &first, &reference, "--json"], 0);
        keep("verify", &["verify", "--json"], 0);
        // The repository audited by path, as a reviewer would audit a remote.
        let here = root.display().to_string();
        keep("audit", &["audit", &here, "--json"], 0);
        // A refusal: the same record again is a retry.
        let again = crate::make_examples::import_args(examples, false);
        let mut args = vec!["import", "--json"];
        args.extend(again.iter().take(3).map(String::as_str));
        keep("refusal", &args, 2);
        // The citeability gate, citeable and not.
        let corpus = project_root().join("tests/fuzz_corpus/cite_line");
        let ok = corpus.join("ok.jsonl");
        let gap = corpus.join("gap.jsonl");
        keep("cite-verdict", &["cite", ok.to_str().unwrap(), "--json"], 0);
        keep(
            "cite-refusal",
            &["cite", gap.to_str().unwrap(), "--json"],
            2,
        );

        // Every file of the ref's tip: the header, the rows, and the record of each filled
        // row (a scenario result.json's bytes, an Arena export, a hand row as put read it).
        let mut files = Vec::new();
        let blob = |path: &str| -> Value {
            serde_json::from_str(&git(
                &root,
                &["cat-file", "blob", &format!("{reference}:{path}")],
            ))
            .unwrap()
        };
        files.push((
            "ledger-header",
            blob("ledger.json"),
            "ledger.json".to_owned(),
        ));
        files.push((
            "campaign-declaration",
            blob("campaign.json"),
            "campaign.json".to_owned(),
        ));
        for entry in c.decl.schedule().map(|e| e.id) {
            let path = git_ledger::git::layout::row_path(&entry);
            let row = blob(&path);
            if let Some(rec) = row["native_record"].as_object() {
                let key = format!(
                    "{}:{}",
                    rec["kind"].as_str().unwrap(),
                    rec["id"].as_str().unwrap()
                );
                let schema = match rec["kind"].as_str().unwrap() {
                    "scenario" => "scenario-result",
                    "arena" => "arena-record",
                    _ => "row",
                };
                let rpath = git_ledger::git::layout::record_path(&key);
                files.push((schema, blob(&rpath), rpath));
            }
            files.push(("row", row, path));
        }
        Tour {
            campaign: c,
            outputs,
            files,
        }
    }
}

/// The model of the Inspect log the inspect tour imports (`log_streaming.eval`).
const INSPECT_MODEL: &str = "azureai/Meta-Llama-3-1-405B-Instruct-jqf";

/// A declaration of Inspect tasks with declared writers, pinned by the binary in a real
/// repository from a draft, its template, and Inspect's own streaming log imported into it
/// (`import --inspect --json`): the instances of every Inspect and writers construct.
struct InspectTour {
    dir: tempfile::TempDir,
    draft: Value,
    profile: Value,
    declaration: Value,
    ledger: Value,
    summary: Value,
}

impl InspectTour {
    fn new() -> InspectTour {
        let dir = crate::common::new_repo();
        let d = dir.path();
        write(d, "evals/pop/task.py", "# the task\n");
        write(d, "evals/pop/dataset.jsonl", "{}\n");
        let profile = json!({
            "name": "inspect", "provider": "azureai", "joint_planning": false,
            "roles": {"default": {"model": INSPECT_MODEL, "effort": null}},
            "extra_options": []
        });
        write(
            d,
            "h/profile.json",
            serde_json::to_vec_pretty(&profile).unwrap(),
        );
        write(d, "h/policy.md", "spend nothing\n");
        write(d, "h/tools/run.sh", "#!/bin/sh\n");
        write(
            d,
            "h/allowed_signers",
            "ledger@example.com namespaces=\"git\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICZMJxa+vKfwWJVhmRWswp5JuL2smjbxrQOIU1nmfOoZ\n",
        );
        std::fs::create_dir_all(d.join("logs")).unwrap();
        std::fs::copy(
            project_root().join("tests/data/inspect-logs/log_streaming.eval"),
            d.join("logs/log_streaming.eval"),
        )
        .unwrap();
        write(d, ".gitignore", "/ledger.json\n/campaign.json\n/logs/\n");
        crate::common::commit_all(d, "harness");
        let task = |i: u64| {
            json!({
                "id": format!("inspect/popularity-{i}"),
                "kind": "inspect",
                "evidence": "live",
                "expects": "completion",
                "definition": {"path": "evals/pop"},
                "inspect": {"task": "popularity", "sample_id": i, "scorer": "match", "pass": ["C", 1], "task_args": {}},
                "limits": {"message_limit": 10, "token_limit": 200000, "time_limit": 600, "working_limit": 300.5, "cost_limit": 2.5},
                "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"]
            })
        };
        let rules: serde_json::Map<String, Value> =
            read_json(&project_root().join("arena/campaign.json"))["acceptance"]
                .as_object()
                .unwrap()
                .clone();
        let draft = json!({
            "format": "campaign-declaration/1",
            "id": "inspect-schemas",
            "repetitions": 2,
            "profile": {"source": {"path": "h/profile.json"}},
            "policy_files": [{"path": "h/policy.md"}],
            "runner_tools": {"path": "h/tools"},
            "writers": {"path": "h/allowed_signers"},
            "runtime_requirements": {"python": "3.12.7"},
            "acceptance": rules,
            "attempt_fields": read_json(&project_root().join("arena/campaign.json"))["attempt_fields"]
                .as_array()
                .unwrap()[..20]
                .to_vec(),
            "tasks": [task(1), task(2)]
        });
        write(d, "draft.json", serde_json::to_vec_pretty(&draft).unwrap());
        // To standard output (validated as a declaration by check_output), then to a file.
        ledger(d, &["pin", "draft.json"]).ok();
        ledger(d, &["pin", "draft.json", "-o", "campaign.json"]).ok();
        let t = ledger(d, &["template", "campaign.json"]);
        t.ok();
        write(d, "ledger.json", &t.stdout);
        let summary = ledger(
            d,
            &[
                "import",
                "campaign.json",
                "ledger.json",
                "--inspect",
                "logs/log_streaming.eval",
                "--json",
            ],
        );
        summary.ok();
        let summary = summary.json();
        InspectTour {
            declaration: read_json(&d.join("campaign.json")),
            ledger: read_json(&d.join("ledger.json")),
            dir,
            draft,
            profile,
            summary,
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The Inspect instances, as (schema, instance, what).
    fn examples(&self) -> Vec<(&'static str, Value, String)> {
        let mut out = vec![
            (
                "campaign-draft",
                self.draft.clone(),
                "inspect draft".to_owned(),
            ),
            (
                "profile",
                self.profile.clone(),
                "inspect profile".to_owned(),
            ),
            (
                "campaign-declaration",
                self.declaration.clone(),
                "inspect declaration".to_owned(),
            ),
            ("ledger", self.ledger.clone(), "inspect ledger".to_owned()),
            (
                "import-summary",
                self.summary.clone(),
                "import --inspect --json".to_owned(),
            ),
        ];
        for row in self.ledger["rows"].as_array().unwrap() {
            out.push((
                "row",
                row.clone(),
                format!("inspect row {}", row["schedule_id"]),
            ));
        }
        out
    }
}

/// The Inspect and writers instances validate; each construct is really there (a writers pin,
/// a null effort, an Inspect row with model → counts, a limit status, the Inspect keys of
/// the import summary).
#[test]
fn the_inspect_and_writers_instances_validate() {
    let t = InspectTour::new();
    for (schema, value, what) in t.examples() {
        assert_valid(schema, &value, &what);
    }
    assert!(t.declaration["writers"]["sha256"].is_string());
    assert!(t.declaration["profile"]["roles"]["default"]["effort"].is_null());
    let rows = t.ledger["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["native_record"]["kind"] == "inspect"));
    assert!(rows.iter().any(|r| r["usage"][INSPECT_MODEL].is_object()));
    assert!(t.summary["imported"][0]["option_deviations"].is_array());
    assert!(t.summary["skipped"]["undeclared"].is_array());
    assert_eq!(t.summary["deferred"], 0);
}

/// (b, d) The files of a ledger ref (header, declaration, rows, every kind of record) and one
/// output of each JSON-printing command validate against their schemas.
fn a_ledger_ref_and_every_json_output_validate(prefix: &str) {
    let t = Tour::under(prefix);
    let kinds: Vec<&str> = t.files.iter().map(|(s, _, _)| *s).collect();
    for want in ["scenario-result", "arena-record", "ledger-header", "row"] {
        assert!(
            kinds.contains(&want),
            "no {want} file on the ref: {kinds:?}"
        );
    }
    assert!(
        t.files.iter().any(|(s, v, p)| *s == "row"
            && p.starts_with("records/")
            && v["native_record"].is_null()),
        "no hand record"
    );
    for (schema, value, path) in &t.files {
        assert_valid(schema, value, path);
    }
    for (key, value) in &t.outputs {
        let schema = if *key == "cite-refusal" {
            "cite-verdict"
        } else {
            key
        };
        assert_valid(schema, value, key);
    }
    assert_eq!(t.outputs["cite-refusal"]["citeable"], false);
    assert_eq!(t.outputs["refusal"]["refused"], true);
    let _ = &t.campaign;
}

/// Break `value` at a JSON pointer: replace the value there, or remove the key when `with` is
/// `None`.
fn broken(value: &Value, pointer: &str, with: Option<Value>) -> Value {
    let mut v = value.clone();
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = v
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("{pointer} not found"));
    match (target, with) {
        (Value::Object(m), None) => {
            assert!(m.remove(key).is_some(), "{pointer} not found");
        }
        (Value::Object(m), Some(w)) => {
            m.insert(key.to_owned(), w);
        }
        (Value::Array(a), Some(w)) => a[key.parse::<usize>().unwrap()] = w,
        (other, _) => panic!("{pointer}: cannot break {other}"),
    }
    v
}

/// One valid instance per schema (or more) with one edit that breaks it:
/// (schema, valid instance, JSON pointer, replacement (None: remove the key), what the error
/// names).
type Broken = (
    &'static str,
    Value,
    &'static str,
    Option<Value>,
    &'static str,
);

fn broken_cases(t: &Tour) -> Vec<Broken> {
    let root = project_root();
    let file = |schema: &str| -> Value {
        t.files
            .iter()
            .find(|(s, v, _)| *s == schema && (schema != "row" || !v["native_record"].is_null()))
            .map(|(_, v, _)| v.clone())
            .unwrap_or_else(|| panic!("no {schema} file"))
    };
    let decl = read_json(&root.join("arena/campaign.json"));
    let draft = read_json(&root.join("arena/campaign.draft.json"));
    let ledger_doc = read_json(&root.join("arena/examples/ledger.json"));
    let row = ledger_doc["rows"][0].clone();
    let runs_line: Value = serde_json::from_str(
        std::fs::read_to_string(root.join("tests/fuzz_corpus/cite_line/ok.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let card = read_json(&root.join("tests/fuzz_corpus/cite_line/card.json"));
    let profile = read_json(&root.join("arena/profiles/build-comparison.json"));
    let runtime = read_json(&root.join("arena/examples/runtime.json"));
    let out = |k: &str| t.outputs[k].clone();
    // (schema, valid instance, pointer, replacement (None: remove), what the error names)
    vec![
        (
            "campaign-declaration",
            decl.clone(),
            "/acceptance/unknown_is_null",
            Some(json!(false)),
            "true",
        ),
        (
            "campaign-declaration",
            decl.clone(),
            "/source_revision",
            Some(json!("HEAD")),
            "HEAD",
        ),
        (
            "campaign-declaration",
            decl.clone(),
            "/tasks/0/limits/max_iterations",
            Some(json!(2.5)),
            "integer",
        ),
        (
            "campaign-draft",
            draft.clone(),
            "/runner_tools/sha256",
            Some(json!("0".repeat(64))),
            "sha256",
        ),
        (
            "campaign-draft",
            draft,
            "/tasks/0/native_outcomes/0",
            Some(json!("DEFERRED")),
            "DEFERRED",
        ),
        ("profile", profile, "/roles/builder/effort", None, "effort"),
        (
            "ledger",
            ledger_doc.clone(),
            "/format",
            Some(json!("campaign-ledger/2")),
            "campaign-ledger/1",
        ),
        (
            "ledger",
            ledger_doc,
            "/rows/0/usage",
            Some(json!({"input_tokens": -1})),
            "-1",
        ),
        (
            "ledger-header",
            file("ledger-header"),
            "/declaration/extra",
            Some(json!(1)),
            "extra",
        ),
        (
            "row",
            row.clone(),
            "/estimated_usd",
            Some(json!(-0.5)),
            "-0.5",
        ),
        (
            "row",
            row.clone(),
            "/interventions_decision_or_repair",
            Some(json!([{"kind": "retry", "note": "x"}])),
            "retry",
        ),
        ("row", row, "/oracle_checks", None, "oracle_checks"),
        (
            "runtime-identity",
            runtime,
            "/dependencies",
            Some(json!(["pytest 8.3.3"])),
            "pytest 8.3.3",
        ),
        (
            "scenario-result",
            file("scenario-result"),
            "/harness/cli_calls",
            Some(json!("143")),
            "143",
        ),
        (
            "arena-record",
            file("arena-record"),
            "/attempt/surprise",
            Some(json!(null)),
            "surprise",
        ),
        (
            "cite-runs-line",
            runs_line.clone(),
            "/stop_reason",
            Some(json!("crash")),
            "crash",
        ),
        ("cite-runs-line", runs_line, "/attempt", Some(json!(0)), "0"),
        (
            "cite-card",
            card,
            "/tasks/0/repo_revision",
            Some(json!("main")),
            "main",
        ),
        (
            "cite-verdict",
            out("cite-verdict"),
            "/retry_rate",
            Some(json!(1.5)),
            "1.5",
        ),
        (
            "cite-verdict",
            out("cite-refusal"),
            "/reason",
            Some(json!("bad_luck")),
            "bad_luck",
        ),
        (
            "report",
            out("report"),
            "/sections/live/outcomes/verified_delivery",
            None,
            "verified_delivery",
        ),
        (
            "report",
            out("report"),
            "/rows/0/gaps",
            Some(json!(["looks fine"])),
            "looks fine",
        ),
        (
            "import-summary",
            out("import-summary"),
            "/imported/0/outcome",
            Some(json!("great")),
            "great",
        ),
        ("log", out("log"), "/0/commit", Some(json!("abc")), "abc"),
        (
            "diff",
            out("diff"),
            "/follows/follows",
            Some(json!("yes")),
            "yes",
        ),
        (
            "verify",
            out("verify"),
            // Not a full ref name with an id after a prefix (the prefix is a setting, so the
            // schema knows the shape only: `refs/heads/main` is a ledger ref's shape).
            "/refs/0/ref",
            Some(json!("main")),
            "main",
        ),
        ("check", out("check"), "/ok", Some(json!(false)), "true"),
        (
            "audit",
            out("audit"),
            "/ledgers/0/history",
            Some(json!("trusted")),
            "trusted",
        ),
        (
            "dry-run",
            out("dry-run"),
            "/rows/0/repair",
            Some(json!("no")),
            "boolean",
        ),
        ("refusal", out("refusal"), "/reasons", Some(json!([])), "[]"),
    ]
}

/// The Inspect and writers constructs, each broken on purpose (the instances of
/// [`InspectTour`] and, for a null effort beside other kinds, the arena declaration).
fn inspect_broken_cases(t: &InspectTour) -> Vec<Broken> {
    let decl = t.declaration.clone();
    let draft = t.draft.clone();
    let row = t.ledger["rows"][0].clone();
    let arena = read_json(&project_root().join("arena/campaign.json"));
    vec![
        (
            "campaign-declaration",
            decl.clone(),
            "/tasks/0/limits/retry_limit",
            Some(json!(3)),
            "retry_limit",
        ),
        (
            "campaign-declaration",
            decl.clone(),
            "/tasks/0/limits/message_limit",
            Some(json!(2.5)),
            "integer",
        ),
        (
            "campaign-declaration",
            decl.clone(),
            "/tasks/0/inspect/sample_id",
            Some(json!(1.5)),
            "1.5",
        ),
        (
            "campaign-declaration",
            decl.clone(),
            "/tasks/0/native_outcomes/0",
            Some(json!("STOPPED")),
            "STOPPED",
        ),
        (
            "campaign-declaration",
            decl.clone(),
            "/writers/sha256",
            None,
            "sha256",
        ),
        (
            "campaign-declaration",
            arena,
            "/profile/roles/builder/effort",
            Some(json!(null)),
            "null",
        ),
        (
            "campaign-draft",
            draft.clone(),
            "/tasks/0/limits",
            Some(json!({})),
            "/tasks/0/limits",
        ),
        (
            "campaign-draft",
            draft.clone(),
            "/tasks/0/inspect/pass",
            Some(json!([])),
            "/tasks/0/inspect/pass",
        ),
        ("campaign-draft", draft, "/writers/path", None, "path"),
        (
            "row",
            row.clone(),
            "/native_record/kind",
            Some(json!("scenario")),
            "scenario",
        ),
        (
            "row",
            row.clone(),
            "/usage/azureai~1Meta-Llama-3-1-405B-Instruct-jqf/total_tokens",
            Some(json!(-1)),
            "-1",
        ),
        (
            "ledger",
            t.ledger.clone(),
            "/rows/0/schedule_id",
            Some(json!("inspect/popularity-1/1")),
            "inspect/popularity-1/1",
        ),
        (
            "import-summary",
            t.summary.clone(),
            "/imported/0/option_deviations",
            None,
            "option_deviations",
        ),
        (
            "import-summary",
            t.summary.clone(),
            "/skipped/undeclared",
            None,
            "undeclared",
        ),
        (
            "import-summary",
            t.summary.clone(),
            "/imported/0/record",
            Some(json!("inspectx:U1")),
            "inspectx:U1",
        ),
    ]
}

/// (c) For every schema, a valid example edited to break it fails validation, with an error
/// that names what was broken.
#[test]
fn an_example_broken_on_purpose_fails_its_schema() {
    let t = Tour::new();
    let it = InspectTour::new();
    let mut cases = broken_cases(&t);
    cases.extend(inspect_broken_cases(&it));
    let mut covered: Vec<&str> = Vec::new();
    for (schema, valid, pointer, with, needle) in &cases {
        assert_valid(schema, valid, &format!("{schema} example"));
        let bad = broken(valid, pointer, with.clone());
        assert_invalid(
            schema,
            &bad,
            needle,
            &format!("{schema} with {pointer} broken"),
        );
        covered.push(schema);
    }
    for name in names() {
        assert!(
            covered.contains(&name.as_str()),
            "no broken example for {name}.schema.json"
        );
    }
}

/// Both sides of every input schema: each input broken on purpose, which its schema rejects, is
/// refused by the tool too (exit 2, the reason naming the field), when the tool reads it.
#[test]
fn the_tool_refuses_the_inputs_broken_on_purpose() {
    let t = Tour::new();
    let root = t.campaign.root().to_path_buf();
    let project = project_root();
    let ok_runs = project.join("tests/fuzz_corpus/cite_line/ok.jsonl");
    let ok_runs = ok_runs.to_str().unwrap();
    let mut checked = std::collections::BTreeSet::new();
    // The Inspect cases run in the Inspect tour's repository, against its declaration.
    let it = InspectTour::new();
    let mut all: Vec<(bool, Broken)> = broken_cases(&t).into_iter().map(|c| (false, c)).collect();
    all.extend(inspect_broken_cases(&it).into_iter().map(|c| (true, c)));
    let main_root = root.clone();
    for (i, (inspect, (schema, valid, pointer, with, _))) in all.into_iter().enumerate() {
        let root = if inspect {
            it.root().to_path_buf()
        } else {
            main_root.clone()
        };
        let (report_dir, report_decl, doc) = if inspect {
            (root.clone(), "campaign.json", it.ledger.clone())
        } else {
            (
                project.clone(),
                "arena/campaign.json",
                read_json(&project.join("arena/examples/ledger.json")),
            )
        };
        let bad = broken(&valid, pointer, with);
        let field = pointer
            .rsplit('/')
            .find(|s| s.parse::<usize>().is_err())
            .unwrap();
        let name = format!("broken-{i}.json");
        let path = root.join(&name);
        std::fs::write(&path, serde_json::to_vec_pretty(&bad).unwrap()).unwrap();
        let (dir, args): (&Path, Vec<String>) = match schema {
            "campaign-declaration" => (&root, vec!["template".into(), name.clone()]),
            "campaign-draft" => (&root, vec!["pin".into(), name.clone()]),
            "profile" => {
                write(
                    &root,
                    "arena/profiles/build-comparison.json",
                    serde_json::to_vec_pretty(&bad).unwrap(),
                );
                crate::common::commit_all(&root, "a broken profile");
                (
                    &root,
                    vec!["pin".into(), "arena/campaign.draft.json".into()],
                )
            }
            "ledger" | "row" => {
                if schema == "row" {
                    let mut doc = doc;
                    doc["rows"][0] = bad.clone();
                    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
                }
                (
                    report_dir.as_path(),
                    vec![
                        "report".into(),
                        report_decl.into(),
                        path.display().to_string(),
                    ],
                )
            }
            "runtime-identity" => (
                &root,
                vec![
                    "import".into(),
                    "campaign.json".into(),
                    "ledger.json".into(),
                    "--scenario".into(),
                    crate::make_examples::SCENARIO_RUNS[0].schedule_id.into(),
                    format!(
                        "arena/examples/scenario-runs/{}",
                        crate::make_examples::SCENARIO_RUNS[0].run_id
                    ),
                    "--runtime-identity".into(),
                    name.clone(),
                ],
            ),
            "scenario-result" => {
                let run = format!("runs/broken-{i}");
                write(
                    &root,
                    &format!("{run}/result.json"),
                    serde_json::to_vec_pretty(&bad).unwrap(),
                );
                let id = format!("scenario/{}/01", bad["scenario"].as_str().unwrap());
                (
                    &root,
                    vec![
                        "import".into(),
                        "campaign.json".into(),
                        "ledger.json".into(),
                        "--scenario".into(),
                        id,
                        run,
                    ],
                )
            }
            "cite-runs-line" => {
                std::fs::write(&path, serde_json::to_string(&bad).unwrap() + "\n").unwrap();
                (&root, vec!["cite".into(), name.clone()])
            }
            "cite-card" => (
                &root,
                vec!["cite".into(), ok_runs.into(), "--card".into(), name.clone()],
            ),
            // Written by the tool (ledger-header, arena-record) or printed by it: no input.
            _ => continue,
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = ledger(dir, &args);
        let out = format!("{}{}", r.stdout, r.stderr);
        assert_eq!(
            r.code,
            2,
            "{schema} with {pointer} broken: `git-ledger {}` exited {}:\n{out}",
            args.join(" "),
            r.code
        );
        let needle = field;
        assert!(
            out.contains(needle),
            "{schema} with {pointer} broken: the refusal does not name {needle:?}:\n{out}"
        );
        checked.insert(schema);
    }
    for schema in [
        "campaign-declaration",
        "campaign-draft",
        "profile",
        "ledger",
        "row",
        "runtime-identity",
        "scenario-result",
        "cite-runs-line",
        "cite-card",
    ] {
        assert!(checked.contains(schema), "no input broken for {schema}");
    }
}

/// The schemas mean the same to an independent implementation: Python's `jsonschema` (what a
/// Python harness would validate its records with) accepts every committed example, the files of
/// a ledger ref and every output, and rejects every example broken on purpose
/// (`schemas_reference.py`).
#[test]
fn python_jsonschema_agrees() {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import jsonschema"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        crate::common::require_tool(
            "python3 with jsonschema (Debian: python3-jsonschema)",
            "the cross-check of docs/schemas/ with Python's jsonschema",
        );
        return;
    }
    let t = Tour::new();
    let mut cases = Vec::new();
    let mut case = |schema: &str, instance: &Value, what: String, valid: bool| {
        cases.push(json!({"schema": schema, "instance": instance, "what": what, "valid": valid}));
    };
    for (schema, value, what) in committed_examples() {
        case(schema, &value, what, true);
    }
    for (schema, value, path) in &t.files {
        case(schema, value, format!("ledger ref {path}"), true);
    }
    for (key, value) in &t.outputs {
        let schema = if *key == "cite-refusal" {
            "cite-verdict"
        } else {
            key
        };
        case(schema, value, format!("output {key}"), true);
    }
    let it = InspectTour::new();
    for (schema, value, what) in it.examples() {
        case(schema, &value, what, true);
    }
    let mut all = broken_cases(&t);
    all.extend(inspect_broken_cases(&it));
    for (schema, valid, pointer, with, _) in all {
        let bad = broken(&valid, pointer, with);
        case(
            schema,
            &bad,
            format!("{schema} with {pointer} broken"),
            false,
        );
    }
    let n = cases.len();
    let script = project_root().join("tests/cli/schemas_reference.py");
    let mut child = std::process::Command::new("python3")
        .arg(script)
        .arg(project_root().join(DIR))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let input = serde_json::to_vec(&Value::Array(cases)).unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "Python's jsonschema disagrees ({n} cases):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(n >= 100, "{n} cases");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim_end());
}

/// (d) The hook itself: `check_output` picks the schema from the subcommand and the JSON flag,
/// and fails a run whose output breaks it.
#[test]
fn check_output_picks_the_schema_and_fails_on_a_breach() {
    let refusal = json!({"refused": true, "reasons": ["x"]});
    assert_eq!(
        schema_for(&["report", "--json"], 0, &json!({})),
        Some("report")
    );
    assert_eq!(
        schema_for(&["report", "--format", "json"], 0, &json!({})),
        Some("report")
    );
    assert_eq!(
        schema_for(&["report", "--format=json"], 0, &json!({})),
        Some("report")
    );
    assert_eq!(
        schema_for(&["report", "--format", "html"], 0, &json!({})),
        None
    );
    assert_eq!(
        schema_for(&["import", "--json"], 2, &refusal),
        Some("refusal")
    );
    assert_eq!(
        schema_for(&["cite", "r", "--json"], 2, &json!({"citeable": false})),
        Some("cite-verdict")
    );
    assert_eq!(
        schema_for(&["cite", "r", "--json"], 1, &refusal),
        Some("refusal")
    );
    assert_eq!(
        schema_for(&["show", "--row", "x"], 0, &json!({})),
        Some("row")
    );
    assert_eq!(schema_for(&["pin", "d", "-o", "f"], 0, &json!({})), None);
    let run = Run {
        code: 0,
        stdout: "{\"refs\": [{\"ref\": \"refs/ledgers/x\"}]}".into(),
        stderr: String::new(),
    };
    let caught = std::panic::catch_unwind(|| check_output(&["verify", "--json"], &run));
    let msg = caught.expect_err("a breach passes");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("verify.schema.json") && msg.contains("admitted"),
        "{msg}"
    );
    let not_json = Run {
        code: 0,
        stdout: "report\n".into(),
        stderr: String::new(),
    };
    assert!(std::panic::catch_unwind(|| check_output(&["report", "--json"], &not_json)).is_err());
}

/// The helpers of `common` that run the binary do validate: a JSON run through `ledger` and one
/// through `ledger_stdin` each go through [`check_output`].
#[test]
fn the_common_helpers_validate_what_they_run() {
    let root = project_root();
    let count = || VALIDATED.load(std::sync::atomic::Ordering::SeqCst);
    let before = count();
    let r = ledger(
        &root,
        &[
            "report",
            "--json",
            "arena/campaign.json",
            "arena/examples/ledger.json",
        ],
    );
    r.ok();
    assert!(
        count() > before,
        "common::ledger did not validate its output"
    );
    let before = count();
    let runs = std::fs::read(root.join("tests/fuzz_corpus/cite_line/ok.jsonl")).unwrap();
    let r = crate::common::ledger_stdin(&root, &["cite", "-", "--json"], Some(&runs));
    r.ok();
    assert!(
        count() > before,
        "common::ledger_stdin did not validate its output"
    );
}

crate::common::under_both_prefixes!(a_ledger_ref_and_every_json_output_validate);

/// The reasons other outputs carry are found and judged: a sentence that starts with a commit
/// or a ref, or names a rule number, is caught; a sentence of words is not.
#[test]
fn reasons_inside_other_outputs_are_found_and_judged() {
    let c = "a".repeat(40);
    let bad = json!({"sentence": format!("commit {c}: it is not signed")});
    let good = json!({"place": [format!("commit {c}")], "sentence": "it is not signed"});
    let log = json!([{"refused": [good.clone()], "signature_refused": [bad.clone()]}]);
    assert_eq!(embedded_reasons("log", &log), vec![&good, &bad]);
    let diff = json!({"admitted": {"refused": [{"side": "B", "rev": "x", "reasons": [good.clone()]}]},
        "follows": {"why_not": [bad.clone()]}});
    assert_eq!(embedded_reasons("diff", &diff), vec![&good, &bad]);
    let audit = json!({"shown_otherwise": [good.clone()],
        "ledgers": [{"refused": [bad.clone()], "declaration": {"reasons": [good.clone()]}}]});
    assert_eq!(embedded_reasons("audit", &audit).len(), 3);
    assert_eq!(
        embedded_reasons("report", &json!({"refused": null})).len(),
        0
    );
    assert!(holds_structure(bad["sentence"].as_str().unwrap()));
    assert!(holds_structure("refs/ledgers/x: moved"));
    assert!(holds_structure("a filled row, rule 4: never replaced"));
    assert!(!holds_structure(good["sentence"].as_str().unwrap()));
}
