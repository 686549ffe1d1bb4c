//! The declared writers' file: an OpenSSH *allowed signers* file (`ssh-keygen(1)`, ALLOWED
//! SIGNERS), parsed as OpenSSH reads it, strictly (`signing.md`, "Declared writers").
//!
//! One line per key: principals (a comma-separated pattern list, `*` and `?` wildcards, `!`
//! negation), then options (`namespaces="…"`, `valid-after="…"`, `valid-before="…"`), then the
//! public key. Blank lines and `#` comments are skipped. What git-ledger does not implement
//! (`cert-authority`, any other option, a key type it cannot verify) and a time given without
//! a zone (ssh-keygen reads it in the verifier's local time zone, so a verdict would depend on
//! where it is checked) refuse the whole file: nothing is ignored.

use ssh_key::public::KeyData;
use ssh_key::HashAlg;

use crate::refusal::Reason;

/// One key line.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Line number in the file (from 1).
    pub line: usize,
    /// The principals pattern list, as written.
    pub principals: String,
    /// The namespaces pattern list, if restricted.
    pub namespaces: Option<String>,
    /// Seconds since the epoch (UTC), inclusive bounds.
    pub valid_after: Option<i64>,
    pub valid_before: Option<i64>,
    pub key: KeyData,
    /// `SHA256:…` as ssh-keygen prints it.
    pub fingerprint: String,
}

/// A parsed allowed-signers file.
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    pub entries: Vec<Entry>,
}

/// The fingerprint of a key as ssh-keygen prints it (`SHA256:<base64, unpadded>`).
pub fn fingerprint(key: &KeyData) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// Key types git-ledger verifies (the ones OpenSSH signs with by default).
const KEY_TYPES: [&str; 3] = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"];

impl AllowedSigners {
    /// Parse the file's bytes; every line that breaks a rule is one reason, found at `line N`.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Self, Vec<Reason>> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| vec![Reason::new(format!("it is not UTF-8 text ({e})"))])?;
        let mut entries = Vec::new();
        let mut reasons = Vec::new();
        for (i, raw) in text.split('\n').enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let rest = line.trim_start_matches([' ', '\t']);
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            match parse_line(rest, i + 1) {
                Ok(e) => entries.push(e),
                Err(why) => reasons.push(Reason::new(why).at(format!("line {}", i + 1))),
            }
        }
        if !reasons.is_empty() {
            return Err(reasons);
        }
        if entries.is_empty() {
            return Err(vec![Reason::new(
                "it declares no key (a ledger with writers needs at least one)",
            )]);
        }
        Ok(AllowedSigners { entries })
    }

    /// The lines that declare `key`.
    pub fn lines_for<'a>(&'a self, key: &'a KeyData) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(move |e| e.key == *key)
    }
}

/// Split off the next whitespace-delimited token; a token starting with `"` runs to the
/// closing quote (as OpenSSH's `strdelimw`).
fn token(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_matches([' ', '\t']);
    if s.is_empty() {
        return None;
    }
    if let Some(inner) = s.strip_prefix('"') {
        let end = inner.find('"')?;
        return Some((&inner[..end], &inner[end + 1..]));
    }
    let end = s.find([' ', '\t']).unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

/// The options field: up to the first blank outside quotes.
fn options_field(s: &str) -> std::result::Result<(&str, &str), String> {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ' ' | '\t' if !quoted => return Ok((&s[..i], &s[i..])),
            _ => {}
        }
    }
    if quoted {
        return Err("an option's quote is not closed".into());
    }
    Ok((s, ""))
}

fn parse_line(line: &str, number: usize) -> std::result::Result<Entry, String> {
    let (principals, rest) = token(line).ok_or("no principals")?;
    if principals.is_empty() {
        return Err("empty principals".into());
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    if rest.is_empty() {
        return Err(format!("principals {principals:?} are followed by no key"));
    }
    let first = rest.split([' ', '\t']).next().unwrap_or_default();
    let (options, key_text) = if is_key_type_token(first) {
        ("", rest)
    } else {
        let (o, k) = options_field(rest)?;
        (o, k.trim_start_matches([' ', '\t']))
    };
    let mut entry = Entry {
        line: number,
        principals: principals.to_owned(),
        namespaces: None,
        valid_after: None,
        valid_before: None,
        key: parse_key(key_text)?,
        fingerprint: String::new(),
    };
    entry.fingerprint = fingerprint(&entry.key);
    parse_options(options, &mut entry)?;
    Ok(entry)
}

/// Whether a token names a key type (`ssh-…`, `ecdsa-…`, `sk-…`): then no options precede it.
fn is_key_type_token(t: &str) -> bool {
    t.starts_with("ssh-") || t.starts_with("ecdsa-") || t.starts_with("sk-")
}

fn parse_key(text: &str) -> std::result::Result<KeyData, String> {
    let mut parts = text.split([' ', '\t']).filter(|p| !p.is_empty());
    let kind = parts.next().ok_or("no public key")?;
    let blob = parts
        .next()
        .ok_or_else(|| format!("key type {kind} without its key"))?;
    if !KEY_TYPES.contains(&kind) {
        return Err(format!(
            "key type {kind} is not supported (git-ledger verifies {})",
            KEY_TYPES.join(", ")
        ));
    }
    let key = ssh_key::PublicKey::from_openssh(&format!("{kind} {blob}"))
        .map_err(|e| format!("the {kind} public key does not parse ({e})"))?;
    let data = key.key_data().clone();
    if data.algorithm().as_str() != kind {
        return Err(format!(
            "the key is a {}, not the {kind} the line says",
            data.algorithm()
        ));
    }
    Ok(data)
}

fn parse_options(mut s: &str, e: &mut Entry) -> std::result::Result<(), String> {
    while !s.is_empty() {
        let name_end = s.find(['=', ',']).unwrap_or(s.len());
        let name = &s[..name_end];
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "cert-authority" => {
                return Err("option cert-authority is not supported (git-ledger verifies keys listed one by one, not certificates)".into())
            }
            "namespaces" | "valid-after" | "valid-before" => {
                let after = s[name_end..]
                    .strip_prefix('=')
                    .ok_or_else(|| format!("option {name} needs a quoted value"))?;
                let (value, rest) = dequote(after).ok_or_else(|| {
                    format!("option {name}: the value must be in double quotes")
                })?;
                s = rest;
                match lower.as_str() {
                    "namespaces" => {
                        if e.namespaces.replace(value).is_some() {
                            return Err("option namespaces is given twice".into());
                        }
                    }
                    _ => {
                        let t = parse_time(&value).map_err(|why| format!("option {name}: {why}"))?;
                        let slot = if lower == "valid-after" {
                            &mut e.valid_after
                        } else {
                            &mut e.valid_before
                        };
                        if slot.replace(t).is_some() {
                            return Err(format!("option {name} is given twice"));
                        }
                    }
                }
            }
            _ => {
                return Err(format!(
                    "option {name:?} is not supported (allowed signers options: namespaces, valid-after, valid-before)"
                ))
            }
        }
        if s.is_empty() {
            break;
        }
        s = s
            .strip_prefix(',')
            .ok_or("options must be separated by commas")?;
        if s.is_empty() {
            return Err("options end with a comma".into());
        }
    }
    if let (Some(a), Some(b)) = (e.valid_after, e.valid_before) {
        if b <= a {
            return Err("valid-before is not after valid-after".into());
        }
    }
    Ok(())
}

/// A double-quoted value (`\"` inside is a quote), and what follows it.
fn dequote(s: &str) -> Option<(String, &str)> {
    let inner = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &inner[i + 1..])),
            '\\' if inner[i + 1..].starts_with('"') => {
                chars.next();
                out.push('"');
            }
            c => out.push(c),
        }
    }
    None
}

/// `YYYYMMDD[HHMM[SS]]` followed by `Z` (or `UTC`), as seconds since the epoch.
///
/// The form is read here (the three lengths, as ssh-keygen tells them apart), the calendar is
/// `civil`'s (jiff's): jiff's `strptime` has no optional fields, so it would take a format per
/// length, and its `%Y` also reads a sign and fewer than four digits.
pub fn parse_time(s: &str) -> std::result::Result<i64, String> {
    let digits = if let Some(d) = s.strip_suffix(['Z', 'z']) {
        d
    } else if s.len() > 3 && s[s.len() - 3..].eq_ignore_ascii_case("utc") {
        &s[..s.len() - 3]
    } else {
        return Err(format!(
            "{s:?} has no time zone: add Z (UTC); ssh-keygen reads a time without one in the local time zone of whoever verifies, and a ledger's verdict must not depend on where it is checked"
        ));
    };
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{s:?} is not YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS followed by Z"
        ));
    }
    let n = |a: usize, b: usize| {
        digits
            .get(a..b)
            .map_or(0, |d| d.parse::<i64>().unwrap_or(0))
    };
    let (y, mo, d) = (n(0, 4), n(4, 6), n(6, 8));
    let (h, mi, se) = (n(8, 10), n(10, 12), n(12, 14));
    match crate::civil::unix_seconds(y, mo, d, h, mi, se) {
        Some(t) if y >= 1970 => Ok(t),
        _ => Err(format!("{s:?} is not a valid date and time")),
    }
}

/// OpenSSH's `match_pattern_list`: whether `s` matches the comma-separated `patterns` (`*`,
/// `?`; a pattern starting with `!` that matches makes the whole list fail).
pub fn matches_list(s: &str, patterns: &str) -> bool {
    let mut positive = false;
    for p in patterns.split(',') {
        let (negated, p) = match p.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, p),
        };
        if glob(s.as_bytes(), p.as_bytes()) {
            if negated {
                return false;
            }
            positive = true;
        }
    }
    positive
}

/// `*` any run, `?` any one byte, everything else itself.
fn glob(s: &[u8], p: &[u8]) -> bool {
    let (mut si, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            si += 1;
            pi += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAQNvbR0/X0pMlFmThGyGDhrBjqFfo6xSNW83MPMmRNH";

    fn parse(text: &str) -> std::result::Result<AllowedSigners, Vec<Reason>> {
        AllowedSigners::parse(text.as_bytes())
    }

    #[test]
    fn lines_with_and_without_options_parse() {
        let s = parse(&format!(
            "# writers\n\nalice@example.com {ED} alice\n  bob@example.com,*@ops.example.com namespaces=\"git,file\",valid-after=\"20260101Z\",VALID-BEFORE=\"202701011230Z\" {ED}\n"
        ))
        .unwrap();
        assert_eq!(s.entries.len(), 2);
        let b = &s.entries[1];
        assert_eq!(b.line, 4);
        assert_eq!(b.namespaces.as_deref(), Some("git,file"));
        assert_eq!(b.valid_after, Some(1_767_225_600));
        assert_eq!(b.valid_before, Some(1_798_806_600));
        assert!(b.fingerprint.starts_with("SHA256:"));
        assert!(matches_list("carol@ops.example.com", &b.principals));
        assert!(!matches_list("carol@example.com", &b.principals));
    }

    #[test]
    fn what_is_not_implemented_is_refused_not_ignored() {
        for (line, why) in [
            (
                format!("a@x cert-authority {ED}"),
                "option cert-authority is not supported (git-ledger verifies keys listed one by one, not certificates)",
            ),
            (
                format!("a@x no-touch-required {ED}"),
                "option \"no-touch-required\" is not supported (allowed signers options: namespaces, valid-after, valid-before)",
            ),
            (
                format!("a@x namespaces=git {ED}"),
                "option namespaces: the value must be in double quotes",
            ),
            (
                format!("a@x valid-after=\"20260101\" {ED}"),
                "option valid-after: \"20260101\" has no time zone: add Z (UTC); ssh-keygen reads a time without one in the local time zone of whoever verifies, and a ledger's verdict must not depend on where it is checked",
            ),
            (
                format!("a@x valid-after=\"2026010Z\" {ED}"),
                "option valid-after: \"2026010Z\" is not YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS followed by Z",
            ),
            (
                format!("a@x valid-after=\"20260230Z\" {ED}"),
                "option valid-after: \"20260230Z\" is not a valid date and time",
            ),
            (
                format!("a@x valid-after=\"20270101Z\",valid-before=\"20260101Z\" {ED}"),
                "valid-before is not after valid-after",
            ),
            (
                format!("a@x namespaces=\"git\",namespaces=\"git\" {ED}"),
                "option namespaces is given twice",
            ),
            (
                "a@x ecdsa-sha2-nistp384 AAAA".to_owned(),
                "key type ecdsa-sha2-nistp384 is not supported (git-ledger verifies ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa)",
            ),
            (
                "a@x ssh-ed25519 notbase64".to_owned(),
                "the ssh-ed25519 public key does not parse (Base64 encoding error: invalid Base64 encoding)",
            ),
            ("a@x".to_owned(), "principals \"a@x\" are followed by no key"),
        ] {
            let r = parse(&line).unwrap_err();
            git_ledger_base::assert_only_reason!(r, place = ["line 1"], sentence = why);
        }
        // A second bad line is a second reason, at its own line; a comment is no line.
        let r = parse(&format!("# writers\na@x {ED}\nb@x\nc@x\n")).unwrap_err();
        assert_eq!(r.len(), 2, "{r:?}");
        git_ledger_base::assert_reason!(
            r,
            place = ["line 3"],
            text = "line 3: principals \"b@x\" are followed by no key"
        );
        git_ledger_base::assert_reason!(
            r,
            place = ["line 4"],
            sentence = "principals \"c@x\" are followed by no key"
        );
        let r = parse("# nothing\n").unwrap_err();
        git_ledger_base::assert_only_reason!(
            r,
            place = Vec::<String>::new(),
            sentence = "it declares no key (a ledger with writers needs at least one)"
        );
    }

    #[test]
    fn patterns_match_as_openssh_does() {
        assert!(matches_list("a@x.org", "a@x.org"));
        assert!(matches_list("a@x.org", "b@x.org,*@x.org"));
        assert!(!matches_list("a@x.org", "*@x.org,!a@*"));
        assert!(matches_list("ab", "a?"));
        assert!(!matches_list("abc", "a?"));
        assert!(!matches_list("git", ""));
    }

    #[test]
    fn times_are_utc() {
        assert_eq!(parse_time("19700101Z"), Ok(0));
        assert_eq!(parse_time("19700102000001Z"), Ok(86_401));
        assert_eq!(parse_time("20000301UTC"), Ok(951_868_800));
    }
}
