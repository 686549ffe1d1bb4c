//! What a record given to the wrong reader is (docs/reference/workflow.md, rule 4: a record
//! that cannot be read as the declared task's kind is refused, never imported as a degraded
//! row). Each reader refuses
//! what it cannot read; when the record is recognisably another harness's (or a ledger or a
//! declaration), the refusal says that in one reason, with the flag that reads it, instead of
//! every field of the reader's format it breaks.

use serde_json::Value;

/// A document recognised: what it is, and the `import` flag that reads it (none for a ledger or
/// a declaration, which are not records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    pub reader: Option<&'static str>,
    what: String,
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reader {
            Some(flag) => write!(f, "{}, which {flag} reads", self.what),
            None => write!(f, "{}, not a harness record", self.what),
        }
    }
}

/// What a parsed JSON document is, when it is one of the documents git-ledger knows. `None`
/// when it looks like none of them.
pub(crate) fn recognise(v: &Value) -> Option<Seen> {
    let m = v.as_object()?;
    let seen = |reader, what: String| Some(Seen { reader, what });
    if let Some(f) = m.get("format").and_then(Value::as_str) {
        if f.starts_with("scenario-result/") {
            return seen(
                Some("--scenario"),
                format!("a scenario run's record (format {f})"),
            );
        }
        if f.starts_with("campaign-ledger/") {
            return seen(None, format!("a ledger document (format {f})"));
        }
        if f.starts_with("campaign-declaration/") {
            return seen(None, format!("a campaign declaration (format {f})"));
        }
    }
    let has = |k: &str| m.contains_key(k);
    if has("task_name") && has("trial_name") && m.get("config").is_some_and(Value::is_object) {
        return seen(
            Some("--harbor"),
            "a Harbor trial's result (task_name, trial_name, config; give its trial or job directory)"
                .to_owned(),
        );
    }
    if m.get("eval").is_some_and(Value::is_object) && (has("samples") || has("version")) {
        return seen(
            Some("--inspect"),
            "an Inspect log (eval, samples)".to_owned(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_known_document_is_named_with_what_reads_it() {
        let scenario = json!({"format": "scenario-result/1", "run_id": "r"});
        let s = recognise(&scenario).unwrap();
        assert_eq!(s.reader, Some("--scenario"));
        assert_eq!(
            s.to_string(),
            "a scenario run's record (format scenario-result/1), which --scenario reads"
        );
        let harbor = json!({"task_name": "t", "trial_name": "t__x", "config": {"job_id": "j"}});
        assert_eq!(recognise(&harbor).unwrap().reader, Some("--harbor"));
        let inspect = json!({"version": 2, "eval": {"task": "t"}, "samples": []});
        assert_eq!(recognise(&inspect).unwrap().reader, Some("--inspect"));
        let ledger = json!({"format": "campaign-ledger/1"});
        assert_eq!(
            recognise(&ledger).unwrap().to_string(),
            "a ledger document (format campaign-ledger/1), not a harness record"
        );
        let decl = json!({"format": "campaign-declaration/1"});
        assert_eq!(recognise(&decl).unwrap().reader, None);
    }

    #[test]
    fn anything_else_is_not_named() {
        for v in [
            json!({}),
            json!([1]),
            json!({"format": "other/1"}),
            json!({"task_name": "t", "trial_name": "x", "config": 3}),
            json!({"eval": "x", "samples": []}),
        ] {
            assert_eq!(recognise(&v), None, "{v}");
        }
    }
}
