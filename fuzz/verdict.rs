//! Verdict lines (`checks::verdict`, used by `checks.rs` and `admission.rs`): what the library
//! decided for one fuzz input, in one short line that is the same on every machine and every
//! run, so that `tests/cli/fuzz_regressions.rs` can compare it with the committed one.
//!
//! A refusal is its number of reasons and the first one; object ids and hashes are masked, a
//! long reason is cut, and characters that would break a line (or hide in one) are escaped.
#![allow(dead_code)]

use git_ledger::error::{Error, Reasons};

/// The characters of a reason shown before it is cut.
pub const REASON_CHARS: usize = 200;

/// What can be refused: the library's error, a refusal's reasons, or the plain lists of reason
/// texts some checks still return, and the reasons of `admission::row_transition`.
pub trait Refusal {
    /// `refused (<n> reasons): <first reason>`, or `failed: <message>` for an error that is
    /// not a refusal (the check could not run).
    fn verdict(&self) -> String;
}

impl Refusal for Reasons {
    fn verdict(&self) -> String {
        let first = self.reasons().first().map(ToString::to_string);
        refused(self.len(), first.as_deref())
    }
}

impl Refusal for Error {
    fn verdict(&self) -> String {
        match self {
            Error::Refused(r) => r.verdict(),
            Error::Failed { message, .. } => format!("failed: {}", line(message)),
            Error::Contended(m) | Error::Usage(m) => format!("failed: {}", line(m)),
            other => format!("failed: {}", line(&other.to_string())),
        }
    }
}

impl Refusal for Vec<git_ledger::error::Reason> {
    fn verdict(&self) -> String {
        let first = self.first().map(ToString::to_string);
        refused(self.len(), first.as_deref())
    }
}

impl Refusal for Vec<String> {
    fn verdict(&self) -> String {
        refused(self.len(), self.first().map(String::as_str))
    }
}

/// A parser's one message (`json::parse_strict`).
impl Refusal for String {
    fn verdict(&self) -> String {
        refused(1, Some(self))
    }
}

/// `refused (<n> reason[s]): <first>`.
pub fn refused(n: usize, first: Option<&str>) -> String {
    let s = if n == 1 { "" } else { "s" };
    match first {
        Some(first) => format!("refused ({n} reason{s}): {}", line(first)),
        None => format!("refused ({n} reason{s})"),
    }
}

/// `1 row`, `2 rows`.
pub fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// One text as part of a verdict line: ids masked, cut at [`REASON_CHARS`], escaped.
pub fn line(text: &str) -> String {
    let masked = mask_ids(text);
    let mut out = String::new();
    for (i, c) in masked.chars().enumerate() {
        if i == REASON_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || is_invisible(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that change or hide what a line shows: zero-width, bidi controls, separators.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
}

/// Every run of 40 or more hex digits (object ids, SHA-256 hashes and the fan-out names made
/// from them) replaced by `<id>`: they change whenever the harness, the campaign or an object
/// format changes a byte, which says nothing about what was decided.
pub fn mask_ids(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let run = b[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if run >= 40 {
            out.push_str("<id>");
            i += run;
        } else if run > 0 {
            out.push_str(&text[i..i + run]);
            i += run;
        } else {
            // Copy one character (the run stops at a non-ASCII-hex byte, a char boundary).
            let c = text[i..].chars().next().expect("a character");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}
