//! The dataset card: the frozen list of task cards a run is checked against.
//!
//! A card is read whole (it is small and bounded by `--max-input-bytes`), parsed strictly and
//! checked field by field. Every problem is collected, so one refusal lists them all; the parts
//! that are usable are still compared with the runs, so a run's mismatch is reported too.

use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;
use std::path::Path;

use super::{check_hex, is_missing, show, Problem, Reason};
use crate::error::{Error, Result};

/// The seven fields of a task card, in the order `docs/reference/cite.md` lists them.
pub const CARD_FIELDS: [&str; 7] = [
    "task_id",
    "repo_revision",
    "prompt_sha256",
    "hidden_tests_sha256",
    "allowed_files",
    "timeout_s",
    "token_budget",
];

/// A checked dataset card. `problems` is empty when the card is complete and valid.
#[derive(Debug, Clone, Default)]
pub struct Card {
    /// SHA-256 of the card file's bytes, lowercase hex.
    pub sha256: String,
    /// The one sentence the run answers, written before the run.
    pub question: Option<String>,
    /// The tasks are public puzzles: the rate cannot be cited as generalisation.
    pub public_tasks: bool,
    /// Usable task cards by task id (the first card of a duplicated id).
    pub(super) tasks: BTreeMap<String, CardTask>,
    /// Usable task ids in card order.
    pub(super) order: Vec<String>,
    /// Whether the tasks could be read at all (else runs are not compared with the card).
    pub(super) usable: bool,
    /// Everything wrong with the card.
    pub problems: Vec<Problem>,
}

/// The fields of one task card that runs are compared with (each `None` when the card's value
/// is missing or invalid, which is already a problem of the card).
#[derive(Debug, Clone, Default)]
pub(super) struct CardTask {
    pub index: usize,
    pub prompt_sha256: Option<String>,
    pub hidden_tests_sha256: Option<String>,
    pub timeout_s: Option<Number>,
    pub token_budget: Option<u64>,
}

impl Card {
    /// Read and check the card at `path`. A card over `max_bytes` or not valid JSON is a problem
    /// of the card (a refusal); only a file that cannot be read is an error (exit 1).
    pub fn read(path: &Path, max_bytes: u64) -> Result<Card> {
        match crate::json::read_bounded(path, max_bytes) {
            Ok(bytes) => Ok(Card::from_bytes(&bytes)),
            Err(Error::Refused(reasons)) => Ok(Card {
                problems: (reasons.reasons().iter())
                    .map(|r| card_problem(Reason::InvalidValue, None, None, None, r.to_string()))
                    .collect(),
                ..Card::default()
            }),
            Err(e) => Err(e),
        }
    }

    /// Check a card from its bytes.
    pub fn from_bytes(bytes: &[u8]) -> Card {
        let mut card = Card {
            sha256: crate::sha256_hex(bytes),
            ..Card::default()
        };
        match crate::json::parse_strict(bytes) {
            Ok(Value::Object(top)) => card.check_top(top),
            Ok(other) => card.push(
                Reason::InvalidValue,
                None,
                None,
                None,
                format!(
                    "the card is {}, not an object with \"tasks\"",
                    crate::json::type_name(&other)
                ),
            ),
            Err(e) => card.push(
                Reason::InvalidValue,
                None,
                None,
                None,
                format!("the card is not valid JSON: {e}"),
            ),
        }
        card
    }

    fn push(
        &mut self,
        reason: Reason,
        index: Option<usize>,
        task_id: Option<&str>,
        field: Option<&str>,
        message: String,
    ) {
        self.problems
            .push(card_problem(reason, index, task_id, field, message));
    }

    fn check_top(&mut self, top: Map<String, Value>) {
        for key in top.keys() {
            if !matches!(key.as_str(), "tasks" | "question" | "public_tasks") {
                self.push(
                    Reason::InvalidValue,
                    None,
                    None,
                    Some(key),
                    format!("unknown field {key:?} (the card holds \"tasks\", \"question\" and \"public_tasks\")"),
                );
            }
        }
        match top.get("question") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if !s.trim().is_empty() => self.question = Some(s.clone()),
            Some(v) => self.push(
                Reason::InvalidValue,
                None,
                None,
                Some("question"),
                format!("question must be a non-empty sentence, not {}", show(v)),
            ),
        }
        match top.get("public_tasks") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => self.public_tasks = *b,
            Some(v) => self.push(
                Reason::InvalidValue,
                None,
                None,
                Some("public_tasks"),
                format!("public_tasks must be true or false, not {}", show(v)),
            ),
        }
        match top.get("tasks") {
            None | Some(Value::Null) => self.push(
                Reason::EnvelopeMismatch,
                None,
                None,
                Some("tasks"),
                "the card is incomplete: \"tasks\" is missing".into(),
            ),
            Some(Value::Array(tasks)) if tasks.is_empty() => self.push(
                Reason::EnvelopeMismatch,
                None,
                None,
                Some("tasks"),
                "the card is incomplete: \"tasks\" lists no task".into(),
            ),
            Some(Value::Array(tasks)) => {
                self.usable = true;
                for (i, task) in tasks.iter().enumerate() {
                    self.check_task(i, task);
                }
            }
            Some(v) => self.push(
                Reason::InvalidValue,
                None,
                None,
                Some("tasks"),
                format!(
                    "\"tasks\" must be a list of task cards, not {}",
                    crate::json::type_name(v)
                ),
            ),
        }
    }

    fn check_task(&mut self, index: usize, task: &Value) {
        let Value::Object(fields) = task else {
            self.push(
                Reason::InvalidValue,
                Some(index),
                None,
                None,
                format!(
                    "card task {index} is {}, not an object",
                    crate::json::type_name(task)
                ),
            );
            return;
        };
        let id = match fields.get("task_id") {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        let label = match &id {
            Some(id) => format!("card task {index} ({id})"),
            None => format!("card task {index}"),
        };
        let tid = id.as_deref();
        for key in fields.keys() {
            if !CARD_FIELDS.contains(&key.as_str()) {
                self.push(
                    Reason::InvalidValue,
                    Some(index),
                    tid,
                    Some(key),
                    format!("{label}: unknown field {key:?}"),
                );
            }
        }
        let mut out = CardTask {
            index,
            ..CardTask::default()
        };
        for field in CARD_FIELDS {
            let value = fields.get(field);
            if value.is_none_or(is_missing) || value == Some(&Value::Array(Vec::new())) {
                self.push(
                    Reason::EnvelopeMismatch,
                    Some(index),
                    tid,
                    Some(field),
                    format!("{label}: the card is incomplete: {field} is missing or empty"),
                );
                continue;
            }
            let value = value.unwrap_or(&Value::Null);
            let checked: std::result::Result<(), String> = match field {
                "task_id" => match value {
                    Value::String(_) => Ok(()),
                    v => Err(format!("must be a string, not {}", show(v))),
                },
                "repo_revision" => check_revision(value),
                "prompt_sha256" => check_hex(value).map(|h| out.prompt_sha256 = Some(h)),
                "hidden_tests_sha256" => {
                    check_hex(value).map(|h| out.hidden_tests_sha256 = Some(h))
                }
                "allowed_files" => check_paths(value),
                "timeout_s" => super::check_timeout(value).map(|n| out.timeout_s = Some(n)),
                "token_budget" => super::check_budget(value).map(|b| out.token_budget = Some(b)),
                _ => Ok(()),
            };
            if let Err(why) = checked {
                self.push(
                    Reason::InvalidValue,
                    Some(index),
                    tid,
                    Some(field),
                    format!("{label}: {field} {why}"),
                );
            }
        }
        if let Some(id) = id {
            if let Some(first) = self.tasks.get(&id) {
                let first = first.index;
                self.push(
                    Reason::InvalidValue,
                    Some(index),
                    Some(&id),
                    Some("task_id"),
                    format!("{label}: task_id {id:?} is already card task {first}; task ids are unique in the card"),
                );
            } else {
                self.order.push(id.clone());
                self.tasks.insert(id, out);
            }
        }
    }
}

fn card_problem(
    reason: Reason,
    index: Option<usize>,
    task_id: Option<&str>,
    field: Option<&str>,
    message: String,
) -> Problem {
    Problem {
        reason,
        source: "card",
        message: format!("card: {message}"),
        card_task: index,
        task_id: task_id.map(|t| Value::String(t.to_owned())),
        field: field.map(str::to_owned),
        ..Problem::default()
    }
}

/// A commit id: 7 to 64 hex digits (abbreviated or full SHA-1/SHA-256), never a branch or tag.
fn check_revision(v: &Value) -> std::result::Result<(), String> {
    match v {
        Value::String(s) if (7..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()) => Ok(()),
        Value::String(s) => Err(format!(
            "{s:?} is not a commit id (7 to 64 hex digits); pin a commit, never a branch or tag name"
        )),
        v => Err(format!("must be a commit id string, not {}", show(v))),
    }
}

/// A non-empty list of repository-relative paths: no leading `/`, no drive letter, no empty,
/// `.` or `..` component, no NUL or backslash.
fn check_paths(v: &Value) -> std::result::Result<(), String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "must be a list of repository-relative paths, not {}",
            show(v)
        ));
    };
    for item in items {
        let Value::String(p) = item else {
            return Err(format!("must hold paths (strings), not {}", show(item)));
        };
        let drive =
            p.len() >= 2 && p.as_bytes()[1] == b':' && p.as_bytes()[0].is_ascii_alphabetic();
        let bad_component = p.split('/').any(|c| c.is_empty() || c == "." || c == "..");
        if p.starts_with('/') || drive || bad_component || p.contains('\0') || p.contains('\\') {
            return Err(format!(
                "{p:?} is not a repository-relative path (no leading '/', no empty, '.' or '..' component, '/' as separator)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn task(id: &str) -> Value {
        json!({
            "task_id": id,
            "repo_revision": "9f3c1ab",
            "prompt_sha256": "6d2ec1aa",
            "hidden_tests_sha256": "a91b0440",
            "allowed_files": ["src/parse.py"],
            "timeout_s": 180,
            "token_budget": 12000
        })
    }

    fn card(v: Value) -> Card {
        Card::from_bytes(&crate::json::canonical(&v))
    }

    /// The card's one problem: its reason, its text and the field it names.
    fn only(card: &Card) -> (Reason, String, Option<String>) {
        assert_eq!(card.problems.len(), 1, "{:#?}", card.problems);
        let p = &card.problems[0];
        (p.reason, p.message.clone(), p.field.clone())
    }

    #[test]
    fn a_complete_card_passes_and_is_hashed_over_its_bytes() {
        let bytes = br#"{"tasks": [{"task_id": "t", "repo_revision": "9f3c1ab", "prompt_sha256": "6d2ec1aa", "hidden_tests_sha256": "a91b0440", "allowed_files": ["src/parse.py"], "timeout_s": 180, "token_budget": 12000}], "question": "How many pass?", "public_tasks": true}"#;
        let c = Card::from_bytes(bytes);
        assert!(c.problems.is_empty(), "{:#?}", c.problems);
        assert_eq!(c.sha256, crate::sha256_hex(bytes));
        assert_eq!(c.question.as_deref(), Some("How many pass?"));
        assert!(c.public_tasks);
        assert_eq!(c.order, vec!["t".to_string()]);
        assert_eq!(c.tasks["t"].token_budget, Some(12000));
    }

    #[test]
    fn every_field_is_required() {
        for field in CARD_FIELDS {
            for empty in [None, Some(Value::Null), Some(json!(""))] {
                let mut t = task("t");
                match &empty {
                    None => {
                        t.as_object_mut().unwrap().remove(field);
                    }
                    Some(v) => t[field] = v.clone(),
                }
                let c = card(json!({"tasks": [t]}));
                let (reason, msg, named) = only(&c);
                assert_eq!(reason, Reason::EnvelopeMismatch, "{field}: {msg}");
                assert_eq!(named.as_deref(), Some(field), "{msg}");
                assert_eq!(
                    msg,
                    format!(
                        "card: card task 0{}: the card is incomplete: {field} is missing or empty",
                        if field == "task_id" { "" } else { " (t)" }
                    )
                );
            }
        }
        let mut t = task("t");
        t["allowed_files"] = json!([]);
        assert_eq!(
            only(&card(json!({"tasks": [t]}))).0,
            Reason::EnvelopeMismatch
        );
    }

    #[test]
    fn zero_and_false_are_values_not_missing() {
        let mut t = task("t");
        t["timeout_s"] = json!(0);
        let (reason, msg, _) = only(&card(json!({"tasks": [t]})));
        assert_eq!(reason, Reason::InvalidValue, "{msg}");
        assert_eq!(
            msg,
            "card: card task 0 (t): timeout_s must be a positive number of seconds, not 0"
        );
    }

    #[test]
    fn repo_revision_is_a_commit_not_a_branch() {
        for ok in ["9f3c1ab", "9F3C1AB0", &"a".repeat(40), &"b".repeat(64)] {
            let mut t = task("t");
            t["repo_revision"] = json!(ok);
            assert!(card(json!({"tasks": [t]})).problems.is_empty(), "{ok}");
        }
        for bad in [
            json!("main"),
            json!("v1.2.3"),
            json!("9f3c1a"),
            json!("a".repeat(65)),
            json!(1234567),
        ] {
            let mut t = task("t");
            t["repo_revision"] = bad.clone();
            let (reason, msg, named) = only(&card(json!({"tasks": [t]})));
            assert_eq!(reason, Reason::InvalidValue, "{bad}");
            assert_eq!(named.as_deref(), Some("repo_revision"), "{msg}");
        }
    }

    #[test]
    fn hashes_are_hex() {
        for field in ["prompt_sha256", "hidden_tests_sha256"] {
            for bad in [
                json!("xyz"),
                json!("6d2e c1"),
                json!(12),
                json!("a".repeat(65)),
            ] {
                let mut t = task("t");
                t[field] = bad;
                let (reason, msg, named) = only(&card(json!({"tasks": [t]})));
                assert_eq!(reason, Reason::InvalidValue);
                assert_eq!(named.as_deref(), Some(field), "{msg}");
            }
        }
    }

    #[test]
    fn timeout_is_a_positive_number_and_budget_a_positive_integer() {
        for (field, good, bad) in [
            (
                "timeout_s",
                json!(0.5),
                vec![json!(-1), json!(0), json!("180")],
            ),
            (
                "token_budget",
                json!(1),
                vec![json!(0), json!(12000.0), json!(-5), json!(1.5), json!("1")],
            ),
        ] {
            let mut t = task("t");
            t[field] = good;
            assert!(card(json!({"tasks": [t]})).problems.is_empty(), "{field}");
            for b in bad {
                let mut t = task("t");
                t[field] = b.clone();
                let (reason, msg, named) = only(&card(json!({"tasks": [t]})));
                assert_eq!(reason, Reason::InvalidValue, "{field} {b}");
                assert_eq!(named.as_deref(), Some(field), "{msg}");
            }
        }
    }

    #[test]
    fn allowed_files_are_repository_relative_paths() {
        let mut t = task("t");
        t["allowed_files"] = json!(["src/a.py", "README.md", "dir/sub/x"]);
        assert!(card(json!({"tasks": [t]})).problems.is_empty());
        for bad in [
            json!("src/a.py"),
            json!(["/etc/passwd"]),
            json!(["../x"]),
            json!(["a//b"]),
            json!(["./a"]),
            json!(["C:x"]),
            json!([3]),
        ] {
            let mut t = task("t");
            t["allowed_files"] = bad.clone();
            let (reason, msg, named) = only(&card(json!({"tasks": [t]})));
            assert_eq!(reason, Reason::InvalidValue, "{bad}");
            assert_eq!(named.as_deref(), Some("allowed_files"), "{msg}");
        }
    }

    #[test]
    fn duplicate_task_ids_are_refused() {
        let c = card(json!({"tasks": [task("a"), task("b"), task("a")]}));
        let (reason, msg, _) = only(&c);
        assert_eq!(reason, Reason::InvalidValue);
        assert_eq!(msg, "card: card task 2 (a): task_id \"a\" is already card task 0; task ids are unique in the card");
        assert_eq!(c.order, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn the_format_is_closed() {
        let mut t = task("t");
        t["notes"] = json!("x");
        let (reason, msg, _) = only(&card(json!({"tasks": [t]})));
        assert_eq!(reason, Reason::InvalidValue);
        assert_eq!(msg, "card: card task 0 (t): unknown field \"notes\"");
        let (reason, msg, _) = only(&card(json!({"tasks": [task("t")], "extra": 1})));
        assert_eq!(reason, Reason::InvalidValue);
        assert_eq!(msg, "card: unknown field \"extra\" (the card holds \"tasks\", \"question\" and \"public_tasks\")");
    }

    #[test]
    fn optional_fields_are_typed() {
        assert_eq!(
            only(&card(json!({"tasks": [task("t")], "public_tasks": "yes"}))).0,
            Reason::InvalidValue
        );
        assert_eq!(
            only(&card(json!({"tasks": [task("t")], "question": 3}))).0,
            Reason::InvalidValue
        );
        assert_eq!(
            only(&card(json!({"tasks": [task("t")], "question": ""}))).0,
            Reason::InvalidValue
        );
        assert!(
            card(json!({"tasks": [task("t")], "question": null, "public_tasks": null}))
                .problems
                .is_empty()
        );
    }

    #[test]
    fn shape_problems() {
        assert_eq!(only(&card(json!({}))).0, Reason::EnvelopeMismatch);
        assert_eq!(
            only(&card(json!({"tasks": []}))).0,
            Reason::EnvelopeMismatch
        );
        assert_eq!(only(&card(json!({"tasks": {}}))).0, Reason::InvalidValue);
        assert_eq!(only(&card(json!({"tasks": [1]}))).0, Reason::InvalidValue);
        assert_eq!(only(&card(json!([]))).0, Reason::InvalidValue);
        let c = Card::from_bytes(br#"{"tasks": [], "tasks": []}"#);
        let (reason, msg, _) = only(&c);
        assert_eq!(reason, Reason::InvalidValue);
        assert_eq!(
            msg,
            "card: the card is not valid JSON: duplicate key \"tasks\" at line 1 column 21"
        );
        assert!(!c.usable);
    }
}
