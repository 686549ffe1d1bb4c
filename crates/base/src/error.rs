//! The one error type every command returns, and the exit status each kind maps to.
//!
//! A refusal carries every reason (a [`Reason`] value each) and its hints; everything else
//! carries one message and, where there is an obvious next step, a hint.

use std::fmt;

pub use crate::refusal::Reason;

/// Exit statuses, as fixed by `cli.md`.
pub mod exit {
    /// Done (a blocked comparison is still done).
    pub const OK: i32 = 0;
    /// Could not run: I/O error, Git error, missing commit, store unreadable.
    pub const FAILED: i32 = 1;
    /// Refused: the input breaks a rule (each reason printed).
    pub const REFUSED: i32 = 2;
    /// A concurrent writer kept winning; nothing was written.
    pub const CONTENDED: i32 = 3;
    /// Usage error: unknown flag, missing argument.
    pub const USAGE: i32 = 64;
}

/// What went wrong, classified by the exit status it leads to. Each variant's text is beside it:
/// a refusal's is `refused:`, then each reason and each hint on a line of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input, ledger, declaration, record or transition breaks a rule: every reason, and
    /// the next steps.
    #[error("refused:{}", Lines(.0))]
    Refused(Reasons),
    /// The command could not run (I/O, Git, a missing commit, an unreadable store).
    #[error("{message}{}", HintLine(hint))]
    Failed {
        message: String,
        hint: Option<String>,
    },
    /// The ref moved on every try.
    #[error("{0}")]
    Contended(String),
    /// The command line is wrong.
    #[error("{0}")]
    Usage(String),
    /// The repository holds several ledger refs (these, sorted) and the command line named
    /// none: a usage error (exit 64), which the CLI words for the command that was given.
    #[error("{}", several_ledgers(.0, "with --ref:"))]
    SeveralLedgers(Vec<String>),
}

/// A refusal's lines after `refused:`: `\n  <reason>` each, then `\nhint: <hint>` each.
struct Lines<'a>(&'a Reasons);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in self.0.reasons() {
            write!(f, "\n  {r}")?;
        }
        for h in self.0.hints() {
            write!(f, "\nhint: {h}")?;
        }
        Ok(())
    }
}

/// A failure's hint line (`\nhint: <hint>`), when it has one.
struct HintLine<'a>(&'a Option<String>);

impl fmt::Display for HintLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(h) => write!(f, "\nhint: {h}"),
            None => Ok(()),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The hint for an input over the `--max-input-bytes` bound.
pub const MAX_INPUT_HINT: &str =
    "if the input is trusted, raise the bound with --max-input-bytes <BYTES>";

impl Error {
    /// A refusal with one reason.
    pub fn refused(reason: impl Into<Reason>) -> Self {
        Error::Refused(Reasons::one(reason))
    }

    /// A refusal with one reason and a hint line (the obvious next step).
    pub fn refused_with_hint(reason: impl Into<Reason>, hint: impl Into<String>) -> Self {
        let mut r = Reasons::one(reason);
        r.hint(hint);
        Error::Refused(r)
    }

    /// A refusal with these reasons.
    pub fn refusal(reasons: impl IntoIterator<Item = impl Into<Reason>>) -> Self {
        let mut r = Reasons::new();
        r.extend(reasons);
        Error::Refused(r)
    }

    /// A failure without a hint.
    pub fn failed(message: impl Into<String>) -> Self {
        Error::Failed {
            message: message.into(),
            hint: None,
        }
    }

    /// A failure with a hint line.
    pub fn failed_with_hint(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Failed {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// The same error, found at `context` (the file, ref or commit it is about): a refusal's
    /// reasons gain it as their outer place, any other message a `context: ` prefix.
    pub fn context(self, context: impl fmt::Display) -> Self {
        match self {
            Error::Refused(r) => Error::Refused(r.at(&context)),
            Error::Failed { message, hint } => Error::Failed {
                message: format!("{context}: {message}"),
                hint,
            },
            Error::Contended(m) => Error::Contended(format!("{context}: {m}")),
            Error::Usage(m) => Error::Usage(format!("{context}: {m}")),
            e @ Error::SeveralLedgers(_) => e,
        }
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Refused(_) => exit::REFUSED,
            Error::Failed { .. } => exit::FAILED,
            Error::Contended(_) => exit::CONTENDED,
            Error::Usage(_) | Error::SeveralLedgers(_) => exit::USAGE,
        }
    }

    /// The reasons a refusal lists, as values (none for any other error). Their text is
    /// rendered at the edge: `Display` here, the CLI's and the hooks' output.
    pub fn refusal_reasons(&self) -> &[Reason] {
        match self {
            Error::Refused(r) => r.reasons(),
            _ => &[],
        }
    }

    /// The one message of an error that is not a refusal (a refusal's are its reasons).
    pub fn message(&self) -> Option<String> {
        match self {
            Error::Refused(_) => None,
            Error::Failed { message, .. } => Some(message.clone()),
            Error::Contended(m) | Error::Usage(m) => Some(m.clone()),
            e @ Error::SeveralLedgers(_) => Some(e.to_string()),
        }
    }

    /// This error as reasons and hints, for folding it into a larger refusal (any other
    /// error's message becomes one reason, its hint a hint).
    pub fn into_reasons(self) -> Reasons {
        match self {
            Error::Refused(r) => r,
            Error::Failed { message, hint } => {
                let mut r = Reasons::one(message);
                if let Some(h) = hint {
                    r.hint(h);
                }
                r
            }
            Error::Contended(m) | Error::Usage(m) => Reasons::one(m),
            e @ Error::SeveralLedgers(_) => Reasons::one(e.to_string()),
        }
    }

    /// The hints (next steps) an error carries, each once, in order.
    pub fn hints(&self) -> Vec<String> {
        match self {
            Error::Refused(r) => r.hints().to_vec(),
            Error::Failed { hint: Some(h), .. } => vec![h.clone()],
            _ => Vec::new(),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::failed(e.to_string())
    }
}

/// The usage error for several ledger refs and none named: the refs, one a line, after how to
/// name one (`how`, e.g. `with --ref:`).
pub fn several_ledgers(refs: &[String], how: &str) -> String {
    let mut m = format!(
        "this repository has several ledgers; say which (a ref name or a declaration id) {how}"
    );
    for r in refs {
        m.push_str("\n  ");
        m.push_str(r);
    }
    m
}

/// How many reasons of one kind a refusal prints as text (`refused (N reasons):`, the hooks'
/// `remote:` lines): the first ones ([`shown_reasons`]), then one line saying how many more
/// there were.
pub const SHOWN_REASONS: usize = 20;

/// How many reasons a refusal prints as text in all, over every kind (at most
/// [`SHOWN_REASONS`] of each).
pub const SHOWN_REASONS_ALL: usize = 5 * SHOWN_REASONS;

/// Which of `reasons` a refusal prints as text, in order: at most [`SHOWN_REASONS`] of each
/// kind (the same rule, the rule it was found within and the field: 300,000 unclaimed records
/// are one kind, a bad row beside them another) and [`SHOWN_REASONS_ALL`] in all; and how many
/// are left out, for the line [`more_reasons`] prints.
pub fn shown_reasons(reasons: &[Reason]) -> (Vec<&Reason>, usize) {
    let mut per_kind: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    let mut shown = Vec::new();
    for r in reasons {
        let n = per_kind
            .entry((r.rule, r.within, r.field.as_deref()))
            .or_default();
        if *n < SHOWN_REASONS && shown.len() < SHOWN_REASONS_ALL {
            *n += 1;
            shown.push(r);
        }
    }
    let omitted = reasons.len() - shown.len();
    (shown, omitted)
}

/// The line that stands for the reasons not printed.
pub fn more_reasons(omitted: usize) -> String {
    format!(
        "… and {omitted} more reason{}",
        if omitted == 1 { "" } else { "s" }
    )
}

/// A refusal's content: every reason (a [`Reason`] value each) and the hints, the next steps
/// a person can take. Checks collect into one so that they report every problem, not the
/// first; the text and JSON renderings are made from it at the edge.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reasons {
    reasons: Vec<Reason>,
    hints: Vec<String>,
}

impl Reasons {
    pub fn new() -> Self {
        Self::default()
    }
    /// Reasons holding one reason.
    pub fn one(reason: impl Into<Reason>) -> Self {
        Reasons {
            reasons: vec![reason.into()],
            hints: Vec::new(),
        }
    }
    pub fn push(&mut self, reason: impl Into<Reason>) {
        self.reasons.push(reason.into());
    }
    pub fn extend(&mut self, other: impl IntoIterator<Item = impl Into<Reason>>) {
        self.reasons.extend(other.into_iter().map(Into::into));
    }
    /// Add a next step; a hint already given is not repeated.
    pub fn hint(&mut self, hint: impl Into<String>) {
        let hint = hint.into();
        if !self.hints.contains(&hint) {
            self.hints.push(hint);
        }
    }
    /// Take another refusal's reasons and hints.
    pub fn absorb(&mut self, other: Reasons) {
        self.reasons.extend(other.reasons);
        for h in other.hints {
            self.hint(h);
        }
    }
    /// The same reasons, each found at `place` (hints are not about a place).
    pub fn at(mut self, place: impl fmt::Display) -> Self {
        let place = place.to_string();
        self.reasons = self.reasons.into_iter().map(|r| r.at(&place)).collect();
        self
    }
    /// Change every reason with `f` (e.g. to name a place only where none is named yet).
    pub fn map(mut self, f: impl FnMut(Reason) -> Reason) -> Self {
        self.reasons = self.reasons.into_iter().map(f).collect();
        self
    }
    pub fn is_empty(&self) -> bool {
        self.reasons.is_empty()
    }
    pub fn len(&self) -> usize {
        self.reasons.len()
    }
    pub fn reasons(&self) -> &[Reason] {
        &self.reasons
    }
    pub fn hints(&self) -> &[String] {
        &self.hints
    }
    /// `Ok(())` when no reason was pushed, else the refusal with every reason and hint.
    pub fn into_result(self) -> Result<()> {
        if self.reasons.is_empty() {
            Ok(())
        } else {
            Err(Error::Refused(self))
        }
    }
    /// The reasons alone (hints dropped).
    pub fn into_vec(self) -> Vec<Reason> {
        self.reasons
    }
}

impl From<Reasons> for Error {
    fn from(r: Reasons) -> Self {
        Error::Refused(r)
    }
}

impl From<Vec<Reason>> for Reasons {
    fn from(reasons: Vec<Reason>) -> Self {
        Reasons {
            reasons,
            hints: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_error_reads_as_it_always_did() {
        let mut r = Reasons::one(Reason::new("a reason").at("ledger.json"));
        r.push("another");
        r.hint("do this");
        r.hint("then that");
        assert_eq!(
            Error::Refused(r).to_string(),
            "refused:\n  ledger.json: a reason\n  another\nhint: do this\nhint: then that"
        );
        assert_eq!(Error::refused("one").to_string(), "refused:\n  one");
        assert_eq!(Error::failed("it broke").to_string(), "it broke");
        assert_eq!(
            Error::failed_with_hint("it broke", "mend it").to_string(),
            "it broke\nhint: mend it"
        );
        assert_eq!(Error::Contended("moved".into()).to_string(), "moved");
        assert_eq!(Error::Usage("no flag".into()).to_string(), "no flag");
        assert_eq!(
            Error::SeveralLedgers(vec!["refs/ledgers/a".into(), "refs/ledgers/b".into()]).to_string(),
            "this repository has several ledgers; say which (a ref name or a declaration id) with --ref:\n  refs/ledgers/a\n  refs/ledgers/b"
        );
    }

    #[test]
    fn many_reasons_of_one_kind_show_the_first_twenty_and_the_others_stay_visible() {
        let mut many: Vec<Reason> = (0..300)
            .map(|i| Reason::new(format!("record {i} is unclaimed")))
            .collect();
        let mut other = Reason::new("a row of its own");
        other.field = Some("native_outcome".into());
        many.push(other.clone());
        let (shown, omitted) = shown_reasons(&many);
        assert_eq!(shown.len(), SHOWN_REASONS + 1);
        assert_eq!(omitted, 300 - SHOWN_REASONS);
        assert_eq!(shown.last(), Some(&&other));
        // Many kinds: SHOWN_REASONS_ALL in all.
        let kinds: Vec<Reason> = (0..500)
            .map(|i| {
                let mut r = Reason::new("x");
                r.field = Some(format!("f{}", i % 50));
                r
            })
            .collect();
        let (shown, omitted) = shown_reasons(&kinds);
        assert_eq!(shown.len(), SHOWN_REASONS_ALL);
        assert_eq!(omitted, 500 - SHOWN_REASONS_ALL);
        // Few: all of them.
        assert_eq!(shown_reasons(&kinds[..3]), (kinds[..3].iter().collect(), 0));
    }
}
