//! Refusals as values: one [`Reason`] says where a rule was broken (the file, ref or commit), for
//! which row and field, which rule, and the sentence a person reads. The text a terminal or a
//! hook's `remote:` line shows and the JSON a script reads are both rendered from it; no code
//! reads a reason back out of its text.
//!
//! The text form is the one git-ledger always printed: `<place>: rule <n>: row <id>: <field>:
//! <sentence>`, each part present only when the reason has it (a row-check reason names the
//! row and field but prints no rule number, as `ledger.md`'s refusal groups are not numbered in
//! messages; found by admission rule 4 in a commit, it prints that rule, its `within`).

use serde::Serialize;
use std::fmt;

/// Which rule of the specification a reason breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "spec", content = "number", rename_all = "kebab-case")]
pub enum Rule {
    /// An admission rule of `docs/reference/layout.md` (1–7, and 8 of `docs/signing.md`): printed as `rule <n>`.
    Admission(u8),
    /// A refusal group of `ledger.md` (1–8): not printed in the text form.
    Ledger(u8),
    /// A rule of `docs/reference/workflow.md` (e.g. 1, ready before the run): not printed in the
    /// text form.
    Workflow(u8),
}

impl Rule {
    /// The words the text form shows for this rule, if any.
    fn shown(self) -> Option<String> {
        match self {
            Rule::Admission(n) => Some(format!("rule {n}")),
            Rule::Ledger(_) | Rule::Workflow(_) => None,
        }
    }
}

/// One reason a change, a file or a command line is refused.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Reason {
    /// Where the rule was broken, outermost first: a ref name, `commit <id>`, a file path, a
    /// record inside a file (`[refs/ledgers/x, commit <id>]`, `[results.sqlite3, attempt a1]`);
    /// empty when the context is the command itself.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub place: Vec<String>,
    /// The scheduled attempt the reason is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// The row field (or dotted path into one, e.g. `native_record.sha256`); in a reason about
    /// a declaration, the member (`tasks[2].limits`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The rule broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// The rule whose check found it, when that is not `rule` itself: admission rule 4 reads
    /// each changed row file of a commit with `ledger.md`'s row checks, whose groups are `rule`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<Rule>,
    /// What a person reads: the rule in words, with the values that broke it.
    pub sentence: String,
    /// How many of the innermost places the text form shows after the rule's words (0: the
    /// rule follows every place). A rule found at an outer place than the reason's own, e.g.
    /// rule 1 of a root commit around its `campaign.json`'s reason, reads `commit X: rule 1:
    /// campaign.json: …` ([`Reason::within_around`]). Only the text's order: the JSON names
    /// the places and the rule.
    #[serde(skip)]
    pub rule_inside: usize,
}

impl Reason {
    /// A reason that is only a sentence (a refusal with no row, field or rule to name).
    pub fn new(sentence: impl Into<String>) -> Self {
        Reason {
            place: Vec::new(),
            row: None,
            field: None,
            rule: None,
            within: None,
            sentence: sentence.into(),
            rule_inside: 0,
        }
    }

    /// The same reason, found at `place` (a file, a ref, a commit). A reason that already has
    /// a place keeps it and gains the outer one in front (`commit X` around `rows/a.json`).
    /// An empty place (a record read from memory, with no path) names nothing and is left out.
    pub fn at(mut self, place: impl fmt::Display) -> Self {
        let place = place.to_string();
        if !place.is_empty() {
            self.place.insert(0, place);
        }
        self
    }

    /// The same reason, about row `id`.
    pub fn row(mut self, id: impl Into<String>) -> Self {
        self.row = Some(id.into());
        self
    }

    /// The same reason, about `field` of its row.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// The same reason, breaking `rule`.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rule = Some(rule);
        self
    }

    /// The same reason, found by the check of `rule` (see [`Reason::within`]); a reason that
    /// breaks no rule yet breaks `rule` itself.
    pub fn within(mut self, rule: Rule) -> Self {
        match self.rule {
            Some(own) if own != rule => self.within = Some(rule),
            Some(_) => {}
            None => self.rule = Some(rule),
        }
        self
    }

    /// [`Reason::within`], for a rule broken at a place around the ones this reason names so
    /// far: the place given next with [`Reason::at`] is the rule's, and the text shows the
    /// rule right after it (`commit X: rule 1: campaign.json: …`).
    pub fn within_around(self, rule: Rule) -> Self {
        let inside = self.place.len();
        let mut r = self.within(rule);
        r.rule_inside = inside;
        r
    }
}

impl From<String> for Reason {
    fn from(sentence: String) -> Self {
        Reason::new(sentence)
    }
}

impl From<&str> for Reason {
    fn from(sentence: &str) -> Self {
        Reason::new(sentence)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (outer, inner) = self
            .place
            .split_at(self.place.len() - self.rule_inside.min(self.place.len()));
        for p in outer {
            write!(f, "{p}: ")?;
        }
        if let Some(r) = self.within.or(self.rule).and_then(Rule::shown) {
            write!(f, "{r}: ")?;
        }
        for p in inner {
            write!(f, "{p}: ")?;
        }
        if let Some(id) = &self.row {
            write!(f, "row {id}: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.sentence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_form_is_the_parts_in_order() {
        let r = Reason::new("a filled row is never replaced")
            .row("t1-r1")
            .field("native_outcome")
            .rule(Rule::Admission(4))
            .at("commit abc");
        assert_eq!(
            r.to_string(),
            "commit abc: rule 4: row t1-r1: native_outcome: a filled row is never replaced"
        );
        let r = Reason::new("is not a string")
            .row("t1-r1")
            .field("reason")
            .rule(Rule::Ledger(3))
            .at("rows/t1-r1.json")
            .at("commit abc");
        assert_eq!(
            r.to_string(),
            "commit abc: rows/t1-r1.json: row t1-r1: reason: is not a string"
        );
        assert_eq!(Reason::from("plain").to_string(), "plain");
        // A row check found by rule 4 in a commit: the text shows rule 4, the value keeps both.
        let r = Reason::new("is not a string")
            .row("t1-r1")
            .field("reason")
            .rule(Rule::Ledger(3))
            .within(Rule::Admission(4))
            .at("commit abc");
        assert_eq!(
            r.to_string(),
            "commit abc: rule 4: row t1-r1: reason: is not a string"
        );
        assert_eq!(
            (r.rule, r.within),
            (Some(Rule::Ledger(3)), Some(Rule::Admission(4)))
        );
        // A reason of no rule yet breaks the one whose check found it; the same rule is not
        // named twice.
        let plain = Reason::new("not JSON").within(Rule::Admission(4));
        assert_eq!((plain.rule, plain.within), (Some(Rule::Admission(4)), None));
        let same = plain.within(Rule::Admission(4));
        assert_eq!((same.rule, same.within), (Some(Rule::Admission(4)), None));
    }

    #[test]
    fn a_rule_found_around_a_reason_is_shown_after_its_own_place() {
        let r = Reason::new("is missing")
            .field("tasks")
            .at("campaign.json")
            .within_around(Rule::Admission(1))
            .at("commit abc")
            .at("refs/ledgers/x");
        assert_eq!(
            r.to_string(),
            "refs/ledgers/x: commit abc: rule 1: campaign.json: tasks: is missing"
        );
        assert_eq!(r.place, ["refs/ledgers/x", "commit abc", "campaign.json"]);
        assert_eq!(r.rule, Some(Rule::Admission(1)));
    }

    #[test]
    fn the_json_form_names_each_part() {
        let r = Reason::new("s").row("a").rule(Rule::Admission(5));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"row": "a", "rule": {"spec": "admission", "number": 5}, "sentence": "s"})
        );
        let r = Reason::new("s")
            .field("f")
            .rule(Rule::Ledger(3))
            .within(Rule::Admission(4))
            .at("");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({
                "field": "f",
                "rule": {"spec": "ledger", "number": 3},
                "within": {"spec": "admission", "number": 4},
                "sentence": "s"
            }),
            "an empty place names nothing"
        );
        let r = Reason::new("s").at("rows/a.json").at("commit c");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"place": ["commit c", "rows/a.json"], "sentence": "s"})
        );
    }
}
