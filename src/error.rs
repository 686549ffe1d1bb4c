//! The one error type every command returns, and the exit status each kind maps to.
//!
//! A refusal carries every reason (one line each); everything else carries one message and,
//! where there is an obvious next step, a hint.

use std::fmt;

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

/// What went wrong, classified by the exit status it leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The input, ledger, declaration, record or transition breaks a rule.
    Refused(Vec<String>),
    /// The command could not run (I/O, Git, a missing commit, an unreadable store).
    Failed {
        message: String,
        hint: Option<String>,
    },
    /// The ref moved on every try.
    Contended(String),
    /// The command line is wrong.
    Usage(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A refusal's entries that start with this are hints (next steps), not reasons: printed on a
/// `hint:` line of their own, and under `hints` in JSON.
pub const HINT_PREFIX: &str = "hint: ";

/// The hint for an input over the `--max-input-bytes` bound.
pub const MAX_INPUT_HINT: &str =
    "if the input is trusted, raise the bound with --max-input-bytes <BYTES>";

impl Error {
    /// A refusal with one reason.
    pub fn refused(reason: impl Into<String>) -> Self {
        Error::Refused(vec![reason.into()])
    }

    /// A refusal with one reason and a hint line (the obvious next step).
    pub fn refused_with_hint(reason: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Refused(vec![reason.into(), format!("{HINT_PREFIX}{}", hint.into())])
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

    /// Prefix every message with `context: ` (the file or commit the error is about).
    pub fn context(self, context: impl fmt::Display) -> Self {
        match self {
            Error::Refused(reasons) => Error::Refused(
                reasons
                    .into_iter()
                    .map(|r| {
                        if r.starts_with(HINT_PREFIX) {
                            r
                        } else {
                            format!("{context}: {r}")
                        }
                    })
                    .collect(),
            ),
            Error::Failed { message, hint } => Error::Failed {
                message: format!("{context}: {message}"),
                hint,
            },
            Error::Contended(m) => Error::Contended(format!("{context}: {m}")),
            Error::Usage(m) => Error::Usage(format!("{context}: {m}")),
        }
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Refused(_) => exit::REFUSED,
            Error::Failed { .. } => exit::FAILED,
            Error::Contended(_) => exit::CONTENDED,
            Error::Usage(_) => exit::USAGE,
        }
    }

    /// The reasons a refusal lists (or the one message of any other error).
    pub fn reasons(&self) -> Vec<String> {
        match self {
            Error::Refused(r) => r
                .iter()
                .filter(|r| !r.starts_with(HINT_PREFIX))
                .cloned()
                .collect(),
            Error::Failed { message, .. } => vec![message.clone()],
            Error::Contended(m) | Error::Usage(m) => vec![m.clone()],
        }
    }

    /// Reasons and hints together, for folding this error into a larger refusal.
    pub fn entries(&self) -> Vec<String> {
        let mut out = self.reasons();
        out.extend(
            self.hints()
                .into_iter()
                .map(|h| format!("{HINT_PREFIX}{h}")),
        );
        out
    }

    /// The hints (next steps) an error carries, each once, in order.
    pub fn hints(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        match self {
            Error::Refused(r) => {
                for h in r.iter().filter_map(|r| r.strip_prefix(HINT_PREFIX)) {
                    if !out.iter().any(|o| o == h) {
                        out.push(h.to_owned());
                    }
                }
            }
            Error::Failed { hint: Some(h), .. } => out.push(h.clone()),
            _ => {}
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Refused(_) => {
                write!(f, "refused:")?;
                for r in self.reasons() {
                    write!(f, "\n  {r}")?;
                }
                for h in self.hints() {
                    write!(f, "\n{HINT_PREFIX}{h}")?;
                }
                Ok(())
            }
            Error::Failed { message, hint } => {
                write!(f, "{message}")?;
                if let Some(h) = hint {
                    write!(f, "\nhint: {h}")?;
                }
                Ok(())
            }
            Error::Contended(m) => write!(f, "{m}"),
            Error::Usage(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::failed(e.to_string())
    }
}

/// How many reasons a refusal prints as text (`refused (N reasons):`, the hooks' `remote:`
/// lines): the first ones, then one line saying how many more there were.
pub const SHOWN_REASONS: usize = 20;

/// How many reasons a refusal lists under `--json` (`reasons`, with `reasons_total` beside it
/// when there were more): enough for any honest refusal, bounded for a hostile one.
pub const JSON_REASONS: usize = 1_000;

/// The line that stands for the reasons not printed.
pub fn more_reasons(omitted: usize) -> String {
    format!(
        "… and {omitted} more reason{}",
        if omitted == 1 { "" } else { "s" }
    )
}

/// Collects refusal reasons, so a check can report every problem instead of the first.
#[derive(Debug, Default)]
pub struct Reasons(Vec<String>);

impl Reasons {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, reason: impl Into<String>) {
        self.0.push(reason.into());
    }
    pub fn extend(&mut self, other: impl IntoIterator<Item = String>) {
        self.0.extend(other);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// `Ok(())` when nothing was pushed, else the refusal with every reason.
    pub fn into_result(self) -> Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Error::Refused(self.0))
        }
    }
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}
