//! Helpers for the tests of every crate (the `test-support` feature): running `git` in a test
//! repository with a fixed identity and dates, and a refusal's reasons compared as values
//! ([`Want`], [`assert_reason!`](crate::assert_reason), [`assert_only_reason!`](crate::assert_only_reason)).

use crate::error::Error;
use crate::refusal::{Reason, Rule};

/// Run `git` in `dir` with a fixed identity and dates and no user or system configuration;
/// returns its standard output without the trailing newline.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "C")
        .env("GIT_COMMITTER_EMAIL", "c@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-29T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-29T10:00:00Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
}

/// The reasons of a refusal, as values (panics on success or on another kind of error, with
/// what it was).
#[track_caller]
pub fn refused<T: std::fmt::Debug>(r: Result<T, Error>) -> Vec<Reason> {
    match r {
        Err(Error::Refused(r)) => {
            assert!(
                !r.reasons().is_empty(),
                "a refusal lists at least one reason"
            );
            r.reasons().to_vec()
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The parts of a reason a test names, each compared for equality with the reason's own: its
/// place (every place, outermost first), row, field, rule, `within`, and, where the words
/// matter, its sentence or its whole rendered text. A part the test does not name is not
/// compared. Built by [`assert_reason!`](crate::assert_reason) from `part = value` pairs.
#[derive(Debug, Default, Clone)]
pub struct Want {
    place: Option<Vec<String>>,
    row: Option<Option<String>>,
    field: Option<Option<String>>,
    rule: Option<Option<Rule>>,
    within: Option<Option<Rule>>,
    sentence: Option<String>,
    text: Option<String>,
}

/// A part a [`Want`] can name with or without a value: `row = "a"` or `row = None` (no row;
/// an `Option<String>` is given `.as_deref()`).
pub trait Part<T> {
    fn part(self) -> Option<T>;
}

impl Part<String> for &str {
    fn part(self) -> Option<String> {
        Some(self.to_owned())
    }
}

impl Part<String> for String {
    fn part(self) -> Option<String> {
        Some(self)
    }
}

impl Part<String> for &String {
    fn part(self) -> Option<String> {
        Some(self.clone())
    }
}

impl Part<Rule> for Option<Rule> {
    fn part(self) -> Option<Rule> {
        self
    }
}

impl Part<String> for Option<&str> {
    fn part(self) -> Option<String> {
        self.map(str::to_owned)
    }
}

impl Part<Rule> for Rule {
    fn part(self) -> Option<Rule> {
        Some(self)
    }
}

impl Want {
    /// Every place of the reason, outermost first (`[]`: none).
    pub fn place<S: AsRef<str>>(mut self, place: impl IntoIterator<Item = S>) -> Self {
        self.place = Some(place.into_iter().map(|p| p.as_ref().to_owned()).collect());
        self
    }
    pub fn row(mut self, row: impl Part<String>) -> Self {
        self.row = Some(row.part());
        self
    }
    pub fn field(mut self, field: impl Part<String>) -> Self {
        self.field = Some(field.part());
        self
    }
    pub fn rule(mut self, rule: impl Part<Rule>) -> Self {
        self.rule = Some(rule.part());
        self
    }
    pub fn within(mut self, rule: impl Part<Rule>) -> Self {
        self.within = Some(rule.part());
        self
    }
    /// The sentence, whole.
    pub fn sentence(mut self, sentence: impl Into<String>) -> Self {
        self.sentence = Some(sentence.into());
        self
    }
    /// The rendered text form, whole (place, rule, row, field and sentence).
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Whether `r` has every part named.
    pub fn matches(&self, r: &Reason) -> bool {
        self.place.as_ref().is_none_or(|p| *p == r.place)
            && self.row.as_ref().is_none_or(|x| *x == r.row)
            && self.field.as_ref().is_none_or(|x| *x == r.field)
            && self.rule.is_none_or(|x| x == r.rule)
            && self.within.is_none_or(|x| x == r.within)
            && self.sentence.as_ref().is_none_or(|s| *s == r.sentence)
            && self.text.as_ref().is_none_or(|t| *t == r.to_string())
    }

    /// The first of `reasons` with every part named (panics, listing them, when none has).
    #[track_caller]
    pub fn find<'r>(&self, reasons: &'r [Reason]) -> &'r Reason {
        match reasons.iter().find(|r| self.matches(r)) {
            Some(r) => r,
            None => panic!("no reason is {self:?}; the reasons:\n{}", listed(reasons)),
        }
    }

    /// The one reason of `reasons`, which has every part named (panics, listing them, when
    /// there are others or it has not).
    #[track_caller]
    pub fn only<'r>(&self, reasons: &'r [Reason]) -> &'r Reason {
        match reasons {
            [r] if self.matches(r) => r,
            _ => panic!(
                "expected one reason, {self:?}; the reasons:\n{}",
                listed(reasons)
            ),
        }
    }
}

/// Reasons as a test failure lists them: each value, then its text.
fn listed(reasons: &[Reason]) -> String {
    reasons
        .iter()
        .map(|r| format!("  {r:?}\n    {r}\n"))
        .collect()
}

/// Assert that some reason of a list (anything that is `AsRef<[Reason]>`) has the named parts
/// ([`Want`]), and return it: `assert_reason!(r, row = "t1-r1", field = "native_outcome",
/// rule = Rule::Ledger(3))`. Parts: `place` (every place, `["commit c", "rows/a.json"]`), `row`,
/// `field`, `rule`, `within` (each a value, or `None` for none), `sentence` and `text` (whole).
#[macro_export]
macro_rules! assert_reason {
    ($reasons:expr, $($part:ident = $value:expr),+ $(,)?) => {
        $crate::testutil::Want::default()
            $(.$part($value))+
            .find(::core::convert::AsRef::<[$crate::refusal::Reason]>::as_ref(&$reasons))
    };
}

/// [`assert_reason!`], for a list of exactly one reason.
#[macro_export]
macro_rules! assert_only_reason {
    ($reasons:expr, $($part:ident = $value:expr),+ $(,)?) => {
        $crate::testutil::Want::default()
            $(.$part($value))+
            .only(::core::convert::AsRef::<[$crate::refusal::Reason]>::as_ref(&$reasons))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasons() -> Vec<Reason> {
        vec![
            Reason::new("is not a string")
                .row("t1-r1")
                .field("reason")
                .rule(Rule::Ledger(3))
                .at("rows/t1-r1.json"),
            Reason::new("a filled row is never replaced")
                .row("t1-r2")
                .rule(Rule::Admission(4))
                .at("commit c"),
        ]
    }

    #[test]
    fn a_reason_is_found_by_the_parts_named() {
        let r = reasons();
        let found = crate::assert_reason!(r, row = "t1-r2", rule = Rule::Admission(4));
        assert_eq!(found.sentence, "a filled row is never replaced");
        crate::assert_reason!(
            r,
            place = ["rows/t1-r1.json"],
            row = "t1-r1",
            field = "reason",
            rule = Rule::Ledger(3),
            within = None,
            sentence = "is not a string",
            text = "rows/t1-r1.json: row t1-r1: reason: is not a string",
        );
        crate::assert_reason!(r, field = None, place = ["commit c"]);
        crate::assert_only_reason!(r[..1], row = "t1-r1");
    }

    #[test]
    fn a_part_that_differs_is_no_match() {
        let r = reasons();
        let w = Want::default().row("t1-r1").rule(Rule::Admission(3));
        assert!(!r.iter().any(|x| w.matches(x)));
        let w = Want::default().sentence("is not a");
        assert!(!r.iter().any(|x| w.matches(x)), "a sentence is whole");
        let w = Want::default().place(["commit c", "x"]);
        assert!(!r.iter().any(|x| w.matches(x)), "a place is every place");
        let only = std::panic::catch_unwind(|| {
            crate::assert_only_reason!(reasons(), row = "t1-r1");
        });
        assert!(only.is_err(), "two reasons are not one");
        let none = std::panic::catch_unwind(|| {
            crate::assert_reason!(reasons(), field = "native_outcome");
        });
        assert!(none.is_err());
    }

    #[test]
    fn refused_gives_the_reasons_of_a_refusal_alone() {
        let r = refused::<()>(Err(Error::refusal(reasons())));
        assert_eq!(r, reasons());
        let failed = std::panic::catch_unwind(|| refused::<()>(Err(Error::failed("x"))));
        assert!(failed.is_err());
        let ok = std::panic::catch_unwind(|| refused(Ok(1)));
        assert!(ok.is_err());
    }
}
