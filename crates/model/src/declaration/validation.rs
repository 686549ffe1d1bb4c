//! Every validation rule of `declaration.md`, over a parsed JSON document: each helper records
//! a reason naming the place and returns what it could read, so one pass reports every
//! problem. `validate` gives the typed parts a [`Declaration`](super::Declaration) is built
//! from; [`validate_profile_file`] checks the profile file `pin` copies in.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::{
    expected_schedule, is_full_commit, is_harbor_digest, is_repo_path, is_sample_id, is_sha256,
    is_valid_id, is_valid_task_name, sample_key, CachedForm, Declaration, Evidence, Expects,
    FilePin, HarborSpec, InspectSpec, Kind, Mode, Profile, Role, ScheduleEntry, Task, Tasks,
    TreePin, Upstream, ACCEPTANCE_RULES, COUNT_LIMITS, FORMAT, MAX_SCHEDULE, STANDARD_FIELDS,
};
use crate::error::{Reasons, Result};
use crate::json;
use crate::refusal::Reason;

struct Ctx<'r> {
    r: &'r mut Reasons,
    mode: Mode,
}

impl Ctx<'_> {
    /// A reason about the member at `at` (`tasks[2].limits`) of the declaration.
    fn bad(&mut self, at: &str, msg: impl std::fmt::Display) {
        let reason = Reason::new(msg.to_string());
        let reason = if at.is_empty() {
            reason
        } else {
            reason.field(at)
        };
        self.r.push(reason.at("declaration"));
    }

    /// Check an object's keys: unknown keys refused, required keys present. In a draft the
    /// `computed` keys must be absent; in a declaration they are required.
    fn keys(
        &mut self,
        at: &str,
        m: &Map<String, Value>,
        required: &[&str],
        optional: &[&str],
        computed: &[&str],
    ) {
        for k in m.keys() {
            let known = required.contains(&k.as_str()) || optional.contains(&k.as_str());
            let is_computed = computed.contains(&k.as_str());
            if is_computed && self.mode == Mode::Draft {
                self.bad(
                    &join(at, k),
                    "a draft carries no computed field (pin computes it)",
                );
            } else if !known && !is_computed {
                if k.is_empty() {
                    self.bad(at, "unknown key \"\" (an empty name)");
                } else {
                    self.bad(&join(at, k), "unknown key");
                }
            }
        }
        for k in required {
            if !m.contains_key(*k) {
                self.bad(&join(at, k), "missing");
            }
        }
        if self.mode == Mode::Declaration {
            for k in computed {
                if !m.contains_key(*k) {
                    self.bad(&join(at, k), "missing");
                }
            }
        }
    }

    fn object<'v>(&mut self, at: &str, v: Option<&'v Value>) -> Option<&'v Map<String, Value>> {
        match v? {
            Value::Object(m) => Some(m),
            other => {
                self.bad(
                    at,
                    format!("must be an object, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn string<'v>(&mut self, at: &str, v: Option<&'v Value>) -> Option<&'v str> {
        match v? {
            Value::String(s) if !s.is_empty() => Some(s),
            Value::String(_) => {
                self.bad(at, "must not be empty");
                None
            }
            other => {
                self.bad(
                    at,
                    format!("must be a string, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn strings(&mut self, at: &str, v: Option<&Value>) -> Option<Vec<String>> {
        match v? {
            Value::Array(items) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        other => self.bad(
                            &format!("{at}[{i}]"),
                            format!("must be a string, not {}", json::type_name(other)),
                        ),
                    }
                }
                Some(out)
            }
            other => {
                self.bad(
                    at,
                    format!("must be a list of strings, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn repo_path(&mut self, at: &str, v: Option<&Value>) -> Option<String> {
        let s = self.string(at, v)?;
        if is_repo_path(s) {
            Some(s.to_owned())
        } else {
            self.bad(at, format!("{s:?} is not a repository-relative path"));
            None
        }
    }

    fn sha256(&mut self, at: &str, v: Option<&Value>) -> Option<String> {
        let v = v?;
        let s = self.string(at, Some(v))?;
        if is_sha256(s) {
            Some(s.to_owned())
        } else {
            self.bad(at, format!("{s:?} is not a lowercase hex SHA-256"));
            None
        }
    }

    fn count(&mut self, at: &str, v: Option<&Value>) -> Option<u64> {
        let v = v?;
        match json::count(v) {
            Some(n) => Some(n),
            None => {
                self.bad(at, format!("must be a nonnegative integer, not {v}"));
                None
            }
        }
    }

    fn boolean(&mut self, at: &str, v: Option<&Value>) -> Option<bool> {
        match v? {
            Value::Bool(b) => Some(*b),
            other => {
                self.bad(
                    at,
                    format!("must be a boolean, not {}", json::type_name(other)),
                );
                None
            }
        }
    }

    fn tree_pin(&mut self, at: &str, v: Option<&Value>) -> Option<TreePin> {
        let m = self.object(at, v)?;
        self.keys(at, m, &["path"], &[], &["sha256", "files"]);
        let path = self.repo_path(&join(at, "path"), m.get("path"));
        let sha256 = self.sha256(
            &join(at, "sha256"),
            m.get("sha256").filter(|_| self.mode == Mode::Declaration),
        );
        let files = self.count(
            &join(at, "files"),
            m.get("files").filter(|_| self.mode == Mode::Declaration),
        );
        if files == Some(0) {
            self.bad(
                &join(at, "files"),
                "must be at least 1 (an empty tree cannot be pinned)",
            );
        }
        Some(TreePin {
            path: path?,
            sha256,
            files,
        })
    }

    fn file_pin(&mut self, at: &str, v: Option<&Value>) -> Option<FilePin> {
        let m = self.object(at, v)?;
        self.keys(at, m, &["path"], &[], &["sha256"]);
        let path = self.repo_path(&join(at, "path"), m.get("path"));
        let sha256 = self.sha256(
            &join(at, "sha256"),
            m.get("sha256").filter(|_| self.mode == Mode::Declaration),
        );
        Some(FilePin {
            path: path?,
            sha256,
        })
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// Validate a parsed declaration. `schedule_checked`: the fast path already found the schedule
/// exactly `tasks × repetitions` (its value here is a placeholder).
pub(super) fn validate(
    value: &Value,
    mode: Mode,
    r: &mut Reasons,
    schedule_checked: bool,
) -> Option<Declaration> {
    let mut c = Ctx { r, mode };
    let Value::Object(top) = value else {
        c.bad(
            "(top level)",
            format!("must be an object, not {}", json::type_name(value)),
        );
        return None;
    };
    c.keys(
        "",
        top,
        &[
            "format",
            "id",
            "repetitions",
            "profile",
            "policy_files",
            "runner_tools",
            "runtime_requirements",
            "attempt_fields",
            "tasks",
        ],
        // `acceptance` is required too; `validate_acceptance` reports its absence.
        &["title", "status", "acceptance", "writers"],
        &["source_revision", "schedule"],
    );
    match top.get("format") {
        Some(Value::String(s)) if s == FORMAT => {}
        Some(other) => c.bad("format", format!("must be {FORMAT:?}, not {other}")),
        None => {}
    }
    let id = c.string("id", top.get("id")).map(str::to_owned);
    if let Some(id) = &id {
        if !is_valid_id(id) {
            c.bad(
                "id",
                format!("{id:?} is not a valid ref name component (ASCII letters, digits, '.', '_', '-'; not starting with '.' or '-', no '..', not ending in '.' or '.lock', at most 100 characters)"),
            );
        }
    }
    for k in ["title", "status"] {
        if top.contains_key(k) {
            c.string(k, top.get(k));
        }
    }
    let source_revision = if mode == Mode::Declaration {
        let s = c.string("source_revision", top.get("source_revision"));
        match s {
            Some(s) if is_full_commit(s) => Some(s.to_owned()),
            Some(s) => {
                c.bad("source_revision", format!("{s:?} is not a full commit id (a branch, tag or abbreviation is never pinned)"));
                None
            }
            None => None,
        }
    } else {
        None
    };
    let repetitions = c.count("repetitions", top.get("repetitions"));
    if let Some(n) = repetitions {
        if !(1..=999).contains(&n) {
            c.bad("repetitions", format!("must be from 1 to 999, not {n}"));
        }
    }
    let profile = validate_profile(&mut c, top.get("profile"));
    let policy_files = match top.get("policy_files") {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| c.file_pin(&format!("policy_files[{i}]"), Some(v)))
            .collect(),
        Some(other) => {
            c.bad(
                "policy_files",
                format!("must be a list, not {}", json::type_name(other)),
            );
            Vec::new()
        }
        None => Vec::new(),
    };
    let runner_tools = c.tree_pin("runner_tools", top.get("runner_tools"));
    // `None`: not declared; `Some(None)`: declared but invalid (the reason is recorded).
    let writers = top.get("writers").map(|v| c.file_pin("writers", Some(v)));
    let runtime_requirements = validate_runtime(&mut c, top.get("runtime_requirements"));
    validate_acceptance(&mut c, top.get("acceptance"));
    let attempt_fields = validate_attempt_fields(&mut c, top.get("attempt_fields"));
    let tasks = validate_tasks(&mut c, top.get("tasks"));
    let implied = match (&tasks, repetitions) {
        (Some(tasks), Some(reps)) if (1..=999).contains(&reps) => {
            let n = tasks.len() as u64 * reps;
            if n > MAX_SCHEDULE {
                c.bad(
                    "schedule",
                    format!("tasks × repetitions is {n} scheduled attempts; at most {MAX_SCHEDULE} are accepted"),
                );
                false
            } else {
                true
            }
        }
        _ => false,
    };
    let schedule_ok = if mode == Mode::Declaration && !schedule_checked {
        let expected = match (&tasks, repetitions) {
            (Some(tasks), Some(reps)) if implied => {
                Some(expected_schedule(tasks.iter().map(|t| t.id.as_str()), reps))
            }
            _ => None,
        };
        validate_schedule(&mut c, top.get("schedule"), expected).is_some()
    } else {
        // A draft's schedule is the one it implies; the fast path checked a declaration's.
        implied
    };

    if let (Some(p), Some(tasks)) = (&profile, &tasks) {
        if let Some(t) = tasks
            .iter()
            .find(|t| !matches!(t.kind, Kind::Inspect | Kind::Harbor))
        {
            for (name, _) in p.roles.iter().filter(|(_, r)| r.effort.is_none()) {
                c.bad(
                    &format!("profile.roles.{name}.effort"),
                    format!("null (no reasoning effort) is only for a declaration of inspect or harbor tasks; {} is an {} task, whose harness forwards an effort flag", t.id, t.kind.as_str()),
                );
            }
        }
    }
    let tasks = tasks?;
    if !schedule_ok {
        return None;
    }
    // Validated: `attempt_fields` holds every standard field, once.
    Declaration::assemble(
        String::new(),
        CachedForm {
            sha256: Cow::Borrowed(""),
            id: Cow::Owned(id?),
            source_revision: Cow::Owned(source_revision),
            repetitions: repetitions?,
            profile: Cow::Owned(profile?),
            policy_files: Cow::Owned(policy_files),
            runner_tools: Cow::Owned(runner_tools?),
            writers: Cow::Owned(match writers {
                None => None,
                Some(w) => Some(w?),
            }),
            runtime_requirements: Cow::Owned(runtime_requirements?),
            attempt_fields: Cow::Owned(attempt_fields?),
        },
        Tasks::parsed(tasks),
    )
}

fn validate_profile(c: &mut Ctx, v: Option<&Value>) -> Option<Profile> {
    let m = c.object("profile", v)?;
    let content = [
        "name",
        "provider",
        "joint_planning",
        "roles",
        "extra_options",
    ];
    c.keys("profile", m, &["source"], &[], &content);
    let source = c.file_pin("profile.source", m.get("source"));
    if c.mode == Mode::Draft {
        return Some(Profile {
            source: source?,
            name: None,
            provider: None,
            joint_planning: false,
            roles: BTreeMap::new(),
            extra_options: Vec::new(),
        });
    }
    let name = c.string("profile.name", m.get("name")).map(str::to_owned);
    let provider = c
        .string("profile.provider", m.get("provider"))
        .map(str::to_owned);
    let joint_planning = c.boolean("profile.joint_planning", m.get("joint_planning"));
    let extra_options = c.strings("profile.extra_options", m.get("extra_options"));
    let roles = parse_roles(c, "profile.roles", m.get("roles"));
    Some(Profile {
        source: source?,
        name,
        provider,
        joint_planning: joint_planning?,
        roles: roles?,
        extra_options: extra_options?,
    })
}

/// Parse a profile's `roles` object (also used by `pin` on the profile file).
fn parse_roles(c: &mut Ctx, at: &str, v: Option<&Value>) -> Option<BTreeMap<String, Role>> {
    let m = c.object(at, v)?;
    if m.is_empty() {
        c.bad(at, "must declare at least one role");
    }
    let mut roles = BTreeMap::new();
    for (name, spec) in m {
        let rat = format!("{at}.{name}");
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            c.bad(
                &rat,
                "a role name is letters, digits, '-' or '_' (it names the --<role>-model flag)",
            );
        }
        let Some(spec) = c.object(&rat, Some(spec)) else {
            continue;
        };
        c.keys(&rat, spec, &["model", "effort"], &[], &[]);
        let model = c.string(&format!("{rat}.model"), spec.get("model"));
        // A null effort is a model run without one (Inspect); whether the declaration may say
        // so is checked against its tasks.
        let effort = match spec.get("effort") {
            Some(Value::Null) => Some(None),
            v => c
                .string(&format!("{rat}.effort"), v)
                .map(|e| Some(e.to_owned())),
        };
        if let (Some(model), Some(effort)) = (model, effort) {
            roles.insert(
                name.clone(),
                Role {
                    model: model.to_owned(),
                    effort,
                },
            );
        }
    }
    Some(roles)
}

/// Validate a profile file's content (what `pin` copies into the declaration).
pub fn validate_profile_file(value: &Value) -> Result<()> {
    let mut r = Reasons::new();
    let mut c = Ctx {
        r: &mut r,
        mode: Mode::Declaration,
    };
    if let Some(m) = c.object("profile file", Some(value)) {
        c.keys(
            "profile file",
            m,
            &[
                "name",
                "provider",
                "joint_planning",
                "roles",
                "extra_options",
            ],
            &[],
            &[],
        );
        c.string("profile file.name", m.get("name"));
        c.string("profile file.provider", m.get("provider"));
        c.boolean("profile file.joint_planning", m.get("joint_planning"));
        c.strings("profile file.extra_options", m.get("extra_options"));
        parse_roles(&mut c, "profile file.roles", m.get("roles"));
    }
    r.into_result()
}

fn validate_runtime(c: &mut Ctx, v: Option<&Value>) -> Option<Map<String, Value>> {
    let m = c.object("runtime_requirements", v)?;
    c.keys(
        "runtime_requirements",
        m,
        &[],
        &["python", "psutil", "native_provider", "packages"],
        &[],
    );
    for k in ["python", "psutil", "native_provider"] {
        if m.contains_key(k) {
            c.string(&format!("runtime_requirements.{k}"), m.get(k));
        }
    }
    if let Some(p) = m.get("packages") {
        if let Some(pm) = c.object("runtime_requirements.packages", Some(p)) {
            for (name, version) in pm {
                c.string(
                    &format!("runtime_requirements.packages.{name}"),
                    Some(version),
                );
            }
        }
    }
    Some(m.clone())
}

fn validate_acceptance(c: &mut Ctx, v: Option<&Value>) {
    let m = match v {
        Some(Value::Object(m)) => m,
        Some(other) => {
            c.bad(
                "acceptance",
                format!(
                    "weakens the acceptance rules: must be an object stating every rule as true, not {}",
                    json::type_name(other)
                ),
            );
            return;
        }
        None => {
            c.bad(
                "acceptance",
                "missing: weakens the acceptance rules (state every rule as true)",
            );
            return;
        }
    };
    for rule in ACCEPTANCE_RULES {
        match m.get(rule) {
            Some(Value::Bool(true)) => {}
            Some(other) => c.bad(
                &format!("acceptance.{rule}"),
                format!("weakens the acceptance rules: must be true, not {other}"),
            ),
            None => c.bad(
                &format!("acceptance.{rule}"),
                "weakens the acceptance rules: the rule is omitted (state it as true)",
            ),
        }
    }
    for k in m.keys() {
        if !ACCEPTANCE_RULES.contains(&k.as_str()) {
            c.bad(
                &format!("acceptance.{k}"),
                "weakens the acceptance rules: the tool does not know this rule",
            );
        }
    }
}

fn validate_attempt_fields(c: &mut Ctx, v: Option<&Value>) -> Option<Vec<String>> {
    let fields = c.strings("attempt_fields", v)?;
    let mut ok = true;
    for (i, std) in STANDARD_FIELDS.iter().enumerate() {
        match fields.get(i) {
            Some(f) if f == std => {}
            Some(f) => {
                c.bad(&format!("attempt_fields[{i}]"), format!("must be {std:?} (the fields of ledger.md in order, then added fields), not {f:?}"));
                ok = false;
                break;
            }
            None => {
                c.bad(
                    "attempt_fields",
                    format!("lacks {std:?} (every field of ledger.md, in order)"),
                );
                ok = false;
                break;
            }
        }
    }
    let mut seen = HashSet::new();
    for (i, f) in fields.iter().enumerate() {
        if f.is_empty() {
            c.bad(&format!("attempt_fields[{i}]"), "must not be empty");
            ok = false;
        }
        if !seen.insert(f.as_str()) {
            c.bad(
                &format!("attempt_fields[{i}]"),
                format!("{f:?} is listed twice"),
            );
            ok = false;
        }
    }
    ok.then_some(fields)
}

fn validate_tasks(c: &mut Ctx, v: Option<&Value>) -> Option<Vec<Task>> {
    let items = match v? {
        Value::Array(items) => items,
        other => {
            c.bad(
                "tasks",
                format!("must be a list, not {}", json::type_name(other)),
            );
            return None;
        }
    };
    if items.is_empty() {
        c.bad("tasks", "must declare at least one task");
    }
    let mut tasks = Vec::new();
    let mut ids = HashSet::new();
    // (Inspect task, sample id as JSON text) → the task that declares it: a sample fixes its
    // schedule id, so two tasks may not declare the same one.
    let mut samples: HashMap<(String, String), String> = HashMap::new();
    // Harbor task name → the task that declares it.
    let mut harbor_tasks: HashMap<String, String> = HashMap::new();
    let mut all_ok = true;
    for (i, item) in items.iter().enumerate() {
        match validate_task(c, i, item) {
            Some(t) => {
                if !ids.insert(t.id.clone()) {
                    c.bad(
                        &format!("tasks[{i}].id"),
                        format!("{:?} repeats an id", t.id),
                    );
                    all_ok = false;
                }
                if let Some(spec) = &t.harbor {
                    if let Some(other) = harbor_tasks.insert(spec.task.clone(), t.id.clone()) {
                        c.bad(
                            &format!("tasks[{i}] ({}).harbor.task", t.id),
                            format!(
                                "declares Harbor task {:?} as {other} does: a trial fills the rows of the one task that names its task",
                                spec.task
                            ),
                        );
                        all_ok = false;
                    }
                }
                if let Some(spec) = &t.inspect {
                    let key = (spec.task.clone(), sample_key(&spec.sample_id));
                    if let Some(other) = samples.insert(key, t.id.clone()) {
                        c.bad(
                            &format!("tasks[{i}] ({}).inspect", t.id),
                            format!(
                                "declares sample {} of Inspect task {:?} as {other} does: a sample fills one task's rows",
                                spec.sample_id, spec.task
                            ),
                        );
                        all_ok = false;
                    }
                }
                tasks.push(t);
            }
            None => all_ok = false,
        }
    }
    all_ok.then_some(tasks)
}

fn validate_task(c: &mut Ctx, i: usize, v: &Value) -> Option<Task> {
    let at0 = format!("tasks[{i}]");
    let m = c.object(&at0, Some(v))?;
    let label = m
        .get("id")
        .and_then(Value::as_str)
        .map(|id| format!("{at0} ({id})"))
        .unwrap_or(at0);
    let at = label.as_str();
    let before = c.r.len();
    let kind = match c.string(&join(at, "kind"), m.get("kind")) {
        Some("arena") => Some(Kind::Arena),
        Some("scenario") => Some(Kind::Scenario),
        Some("inspect") => Some(Kind::Inspect),
        Some("harbor") => Some(Kind::Harbor),
        Some(other) => {
            c.bad(
                &join(at, "kind"),
                format!(
                    "must be \"arena\", \"scenario\", \"inspect\" or \"harbor\", not {other:?}"
                ),
            );
            None
        }
        None => None,
    };
    // `limits` is required too; `validate_limits` reports its absence, once, with the reason.
    match kind {
        Some(Kind::Arena) => c.keys(
            at,
            m,
            &[
                "id",
                "kind",
                "evidence",
                "expects",
                "definition",
                "oracle",
                "upstream",
                "native_outcomes",
            ],
            &["limits"],
            &[],
        ),
        Some(Kind::Scenario) => {
            let common = [
                "id",
                "kind",
                "evidence",
                "expects",
                "definition",
                "native_outcomes",
            ];
            c.keys(at, m, &common, &["limits"], &[]);
        }
        Some(Kind::Inspect) => {
            let common = [
                "id",
                "kind",
                "evidence",
                "expects",
                "definition",
                "inspect",
                "native_outcomes",
            ];
            c.keys(at, m, &common, &["limits"], &[]);
        }
        Some(Kind::Harbor) => {
            let common = [
                "id",
                "kind",
                "evidence",
                "expects",
                "definition",
                "harbor",
                "native_outcomes",
            ];
            c.keys(at, m, &common, &["limits"], &[]);
        }
        None => {}
    }
    let id = c.string(&join(at, "id"), m.get("id")).map(str::to_owned);
    if let (Some(id), Some(kind)) = (&id, kind) {
        match id.split_once('/') {
            Some((k, name)) if k == kind.as_str() && is_valid_task_name(name) => {}
            _ => c.bad(
                &join(at, "id"),
                format!("{id:?} must be \"{}/<name>\", the name matching [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 characters, no '..')", kind.as_str()),
            ),
        }
    }
    let evidence = match c.string(&join(at, "evidence"), m.get("evidence")) {
        Some(s) => Evidence::parse(s).or_else(|| {
            c.bad(
                &join(at, "evidence"),
                format!("must be \"live\" or \"fixture\", not {s:?}"),
            );
            None
        }),
        None => None,
    };
    let expects = match c.string(&join(at, "expects"), m.get("expects")) {
        Some("completion") => Some(Expects::Completion),
        Some("stop") if kind == Some(Kind::Inspect) => {
            c.bad(
                &join(at, "expects"),
                "an inspect task expects \"completion\": Inspect has no stop status, so a PASS could never be a stop",
            );
            None
        }
        Some("stop") if kind == Some(Kind::Harbor) => {
            c.bad(
                &join(at, "expects"),
                "a harbor task expects \"completion\": a Harbor trial has no stop status, so a PASS could never be a stop",
            );
            None
        }
        Some("stop") => Some(Expects::Stop),
        Some(s) => {
            c.bad(
                &join(at, "expects"),
                format!("must be \"completion\" or \"stop\", not {s:?}"),
            );
            None
        }
        None => None,
    };
    let definition = c.tree_pin(&join(at, "definition"), m.get("definition"));
    let (oracle, upstream) = if kind == Some(Kind::Arena) {
        let oracle = c.file_pin(&join(at, "oracle"), m.get("oracle"));
        (
            oracle,
            validate_upstream(c, &join(at, "upstream"), m.get("upstream")),
        )
    } else {
        (None, None)
    };
    let inspect = if kind == Some(Kind::Inspect) {
        validate_inspect(c, &join(at, "inspect"), m.get("inspect"))
    } else {
        None
    };
    let harbor = if kind == Some(Kind::Harbor) {
        validate_harbor(c, &join(at, "harbor"), m.get("harbor"))
    } else {
        None
    };
    let limits = kind.and_then(|k| validate_limits(c, &join(at, "limits"), m.get("limits"), k));
    let native_outcomes = c.strings(&join(at, "native_outcomes"), m.get("native_outcomes"));
    if let (Some(outcomes), Some(kind)) = (&native_outcomes, kind) {
        let mut seen = HashSet::new();
        for o in outcomes {
            if o == "DEFERRED" {
                c.bad(
                    &join(at, "native_outcomes"),
                    "DEFERRED is implied and is not listed",
                );
            } else if !kind.allowed_outcomes().contains(&o.as_str()) {
                c.bad(
                    &join(at, "native_outcomes"),
                    format!(
                        "{o:?} has no portfolio outcome for {} {} task (allowed: {})",
                        kind_article(kind),
                        kind.as_str(),
                        kind.allowed_outcomes().join(" ")
                    ),
                );
            }
            if !seen.insert(o) {
                c.bad(
                    &join(at, "native_outcomes"),
                    format!("{o:?} is listed twice"),
                );
            }
        }
    }
    if c.r.len() != before {
        return None;
    }
    Some(Task {
        id: id?,
        kind: kind?,
        evidence: evidence?,
        expects: expects?,
        definition: definition?,
        inspect,
        harbor,
        oracle,
        upstream,
        limits: limits?,
        native_outcomes: native_outcomes?,
    })
}

fn validate_upstream(c: &mut Ctx, at: &str, v: Option<&Value>) -> Option<Upstream> {
    let m = c.object(at, v)?;
    c.keys(
        at,
        m,
        &["repository", "base_commit", "reference_commit", "checks"],
        &[],
        &[],
    );
    let repository = c.string(&join(at, "repository"), m.get("repository"));
    let commit = |c: &mut Ctx, k: &str| {
        let s = c.string(&join(at, k), m.get(k))?;
        if is_full_commit(s) {
            Some(s.to_owned())
        } else {
            c.bad(&join(at, k), format!("{s:?} is not a full commit id"));
            None
        }
    };
    let base_commit = commit(c, "base_commit");
    let reference_commit = commit(c, "reference_commit");
    let checks = c.strings(&join(at, "checks"), m.get("checks"));
    Some(Upstream {
        repository: repository?.to_owned(),
        base_commit: base_commit?,
        reference_commit: reference_commit?,
        checks: checks?,
    })
}

fn validate_limits(
    c: &mut Ctx,
    at: &str,
    v: Option<&Value>,
    kind: Kind,
) -> Option<BTreeMap<String, f64>> {
    let Some(v) = v else {
        c.bad(
            at,
            "missing: every task declares its limits (spend is compared with them)",
        );
        return None;
    };
    let m = c.object(at, Some(v))?;
    let names = kind.limit_names();
    if kind.limits_are_optional() {
        return validate_optional_limits(c, at, m, kind);
    }
    let mut out = BTreeMap::new();
    for k in m.keys() {
        if !names.contains(&k.as_str()) {
            c.bad(
                &join(at, k),
                format!(
                    "{} {} task declares exactly {}",
                    kind_article(kind),
                    kind.as_str(),
                    names.join(", ")
                ),
            );
        }
    }
    for name in names {
        let lat = join(at, name);
        match m.get(*name) {
            None => c.bad(&lat, "missing limit"),
            Some(v) if COUNT_LIMITS.contains(name) => match json::count(v) {
                Some(n) => {
                    out.insert(name.to_string(), n as f64);
                }
                None => c.bad(
                    &lat,
                    format!("must be a nonnegative integer (a count), not {v}"),
                ),
            },
            Some(v) => match json::nonneg_number(v) {
                Some(f) => {
                    out.insert(name.to_string(), f);
                }
                None => c.bad(
                    &lat,
                    format!("must be a finite nonnegative number, not {v}"),
                ),
            },
        }
    }
    (out.len() == names.len()).then_some(out)
}

/// "a" or "an" before the kind's name.
fn kind_article(kind: Kind) -> &'static str {
    match kind {
        Kind::Arena | Kind::Inspect => "an",
        Kind::Scenario | Kind::Harbor => "a",
    }
}

/// An Inspect or Harbor task's limits: at least one of its kind's limit names, nothing else;
/// counts are integers, seconds and USD finite nonnegative numbers.
fn validate_optional_limits(
    c: &mut Ctx,
    at: &str,
    m: &Map<String, Value>,
    kind: Kind,
) -> Option<BTreeMap<String, f64>> {
    let names = kind.limit_names();
    let before = c.r.len();
    let mut out = BTreeMap::new();
    for (k, v) in m {
        let lat = join(at, k);
        if !names.contains(&k.as_str()) {
            c.bad(
                &lat,
                format!(
                    "{} {} task declares only {} (at least one)",
                    kind_article(kind),
                    kind.as_str(),
                    names.join(", ")
                ),
            );
        } else if COUNT_LIMITS.contains(&k.as_str()) {
            match json::count(v) {
                Some(n) => {
                    out.insert(k.clone(), n as f64);
                }
                None => c.bad(
                    &lat,
                    format!("must be a nonnegative integer (a count), not {v}"),
                ),
            }
        } else {
            match json::nonneg_number(v) {
                Some(f) => {
                    out.insert(k.clone(), f);
                }
                None => c.bad(
                    &lat,
                    format!("must be a finite nonnegative number, not {v}"),
                ),
            }
        }
    }
    if m.is_empty() {
        c.bad(
            at,
            format!(
                "{} {} task declares at least one of {} (spend is compared with them)",
                kind_article(kind),
                kind.as_str(),
                names.join(", ")
            ),
        );
    }
    (c.r.len() == before).then_some(out)
}

/// A Harbor task's `harbor` block: every key required, the digest in Harbor's form, the
/// threshold a finite number.
fn validate_harbor(c: &mut Ctx, at: &str, v: Option<&Value>) -> Option<HarborSpec> {
    let m = c.object(at, v)?;
    let before = c.r.len();
    c.keys(
        at,
        m,
        &["task", "digest", "agent", "reward", "pass_at_least"],
        &[],
        &[],
    );
    let text = |c: &mut Ctx, k: &str| {
        let s = c.string(&join(at, k), m.get(k))?;
        if s.is_empty() {
            c.bad(&join(at, k), "must not be empty");
            return None;
        }
        Some(s.to_owned())
    };
    let task = text(c, "task");
    let digest = text(c, "digest");
    let agent = text(c, "agent");
    let reward = text(c, "reward");
    if let Some(d) = &digest {
        if !is_harbor_digest(d) {
            c.bad(
                &join(at, "digest"),
                format!("{d:?} is not Harbor's content digest, \"sha256:<64 lowercase hex digits>\" (a trial lock's task.digest)"),
            );
        }
    }
    let pass_at_least = match m.get("pass_at_least") {
        Some(v) => match v.as_f64().filter(|f| f.is_finite() && v.is_number()) {
            Some(f) => Some(f),
            None => {
                c.bad(
                    &join(at, "pass_at_least"),
                    format!("must be a finite number (the least reward that passes), not {v}"),
                );
                None
            }
        },
        None => None,
    };
    if c.r.len() != before {
        return None;
    }
    Some(HarborSpec {
        task: task?,
        digest: digest?,
        agent: agent?,
        reward: reward?,
        pass_at_least: pass_at_least?,
    })
}

/// An Inspect task's `inspect` block.
fn validate_inspect(c: &mut Ctx, at: &str, v: Option<&Value>) -> Option<InspectSpec> {
    let m = c.object(at, v)?;
    let before = c.r.len();
    c.keys(
        at,
        m,
        &["task", "sample_id", "scorer", "pass"],
        &["task_args"],
        &[],
    );
    let task = c
        .string(&join(at, "task"), m.get("task"))
        .map(str::to_owned);
    let scorer = c
        .string(&join(at, "scorer"), m.get("scorer"))
        .map(str::to_owned);
    let sample_id = match m.get("sample_id") {
        Some(v) if is_sample_id(v) => Some(v.clone()),
        Some(v) => {
            c.bad(
                &join(at, "sample_id"),
                format!(
                    "must be a non-empty string or an integer (the dataset sample's id), not {v}"
                ),
            );
            None
        }
        None => None,
    };
    let pass = match m.get("pass") {
        Some(Value::Array(items)) => {
            let mut out: Vec<Value> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let ok =
                    matches!(item, Value::String(_)) || item.as_f64().is_some_and(f64::is_finite);
                if !ok {
                    c.bad(
                        &format!("{}[{i}]", join(at, "pass")),
                        format!("must be a string or a number (a score value), not {item}"),
                    );
                } else if out.iter().any(|o| json::value_eq(o, item)) {
                    c.bad(
                        &format!("{}[{i}]", join(at, "pass")),
                        format!("{item} is listed twice"),
                    );
                } else {
                    out.push(item.clone());
                }
            }
            if items.is_empty() {
                c.bad(
                    &join(at, "pass"),
                    "must list at least one score value that is a PASS",
                );
            }
            Some(out)
        }
        Some(other) => {
            c.bad(
                &join(at, "pass"),
                format!(
                    "must be a list of score values (strings or numbers), not {}",
                    json::type_name(other)
                ),
            );
            None
        }
        None => None,
    };
    let task_args = match m.get("task_args") {
        None => Some(Map::new()),
        Some(Value::Object(a)) => Some(a.clone()),
        Some(other) => {
            c.bad(
                &join(at, "task_args"),
                format!("must be an object, not {}", json::type_name(other)),
            );
            None
        }
    };
    if c.r.len() != before {
        return None;
    }
    Some(InspectSpec {
        task: task?,
        sample_id: sample_id?,
        scorer: scorer?,
        pass: pass?,
        task_args: task_args?,
    })
}

fn validate_schedule(
    c: &mut Ctx,
    v: Option<&Value>,
    expected: Option<Vec<ScheduleEntry>>,
) -> Option<Vec<ScheduleEntry>> {
    let items = match v? {
        Value::Array(items) => items,
        other => {
            c.bad(
                "schedule",
                format!("must be a list, not {}", json::type_name(other)),
            );
            return None;
        }
    };
    // The usual case first: every entry exactly the one expected. A large schedule (100,000
    // entries) is then checked without a message path, a copy or a set insert per entry; any
    // difference falls through to the entry-by-entry checks below, which name it.
    if let Some(exp) = &expected {
        if items.len() == exp.len() && items.iter().zip(exp).all(|(i, e)| is_entry(i, e)) {
            return expected;
        }
    }
    let expected = expected.as_deref();
    let mut entries = Vec::new();
    let mut ok = true;
    let mut seen = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("schedule[{i}]");
        let Some(m) = c.object(&at, Some(item)) else {
            ok = false;
            continue;
        };
        let before = c.r.len();
        c.keys(&at, m, &["id", "task", "repetition"], &[], &[]);
        let id = c.string(&join(&at, "id"), m.get("id"));
        let task = c.string(&join(&at, "task"), m.get("task"));
        let repetition = c.count(&join(&at, "repetition"), m.get("repetition"));
        if let Some(id) = id {
            if !seen.insert(id.to_owned()) {
                c.bad(&join(&at, "id"), format!("{id:?} repeats an id"));
            }
        }
        match (id, task, repetition) {
            (Some(id), Some(task), Some(repetition)) if c.r.len() == before => {
                entries.push(ScheduleEntry {
                    id: id.to_owned(),
                    task: task.to_owned(),
                    repetition,
                })
            }
            _ => ok = false,
        }
    }
    let expected = expected?;
    if !ok {
        return None;
    }
    if entries != expected {
        let mut diffs = Vec::new();
        for (i, (got, want)) in entries.iter().zip(expected).enumerate() {
            if got != want {
                diffs.push(format!(
                    "schedule[{i}] is {{{:?}, {:?}, {}}}, expected {{{:?}, {:?}, {}}}",
                    got.id, got.task, got.repetition, want.id, want.task, want.repetition
                ));
                if diffs.len() == 3 {
                    break;
                }
            }
        }
        c.bad(
            "schedule",
            format!(
                "is not exactly tasks × repetitions in task then repetition order ({} entries, expected {}){}{}",
                entries.len(),
                expected.len(),
                if diffs.is_empty() { "" } else { ": " },
                diffs.join("; ")
            ),
        );
        return None;
    }
    Some(entries)
}

/// Whether `item` is exactly the schedule entry `e`: `{"id", "task", "repetition"}` and nothing
/// else, with the same values.
fn is_entry(item: &Value, e: &ScheduleEntry) -> bool {
    let Value::Object(m) = item else {
        return false;
    };
    m.len() == 3
        && matches!(m.get("id"), Some(Value::String(s)) if *s == e.id)
        && matches!(m.get("task"), Some(Value::String(s)) if *s == e.task)
        && m.get("repetition").and_then(json::count) == Some(e.repetition)
}
