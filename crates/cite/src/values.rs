//! The value checks run lines and the card share: what *missing* means, how a value is shown in
//! a message, and the strict readers of a hex digest, a timeout and a token budget.

use serde_json::{Number, Value};

/// *Missing* as cite.md defines it: absent (checked by the caller), `null` or `""`.
pub(crate) fn is_missing(v: &Value) -> bool {
    matches!(v, Value::Null) || v.as_str() == Some("")
}

/// A value for a message: strings quoted, everything else as JSON, long values cut.
pub(crate) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

pub(crate) fn check_string(v: &Value) -> std::result::Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        v => Err(format!("must be a string, not {}", show(v))),
    }
}

/// A hash: 1 to 64 hex digits (either case; compared in lower case).
pub(crate) fn check_hex(v: &Value) -> std::result::Result<String, String> {
    match v {
        Value::String(s)
            if (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Ok(s.to_ascii_lowercase())
        }
        v => Err(format!(
            "must be a hex digest (1 to 64 hex digits), not {}",
            show(v)
        )),
    }
}

/// A positive finite number of seconds.
pub(crate) fn check_timeout(v: &Value) -> std::result::Result<Number, String> {
    match v {
        Value::Number(n) if n.as_f64().is_some_and(|f| f.is_finite() && f > 0.0) => Ok(n.clone()),
        v => Err(format!(
            "must be a positive number of seconds, not {}",
            show(v)
        )),
    }
}

/// A positive integer number of tokens.
pub(crate) fn check_budget(v: &Value) -> std::result::Result<u64, String> {
    match crate::json::count(v) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "must be a positive integer number of tokens, not {}",
            show(v)
        )),
    }
}
