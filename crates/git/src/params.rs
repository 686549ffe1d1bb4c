//! `git -c <key>=<value> ledger …`: the configuration Git passes to the commands it runs.
//!
//! Git runs `git ledger` as the external command `git-ledger`, handing it the `-c` settings of
//! its command line in the environment variable `GIT_CONFIG_PARAMETERS`, which gix does not
//! read (it reads `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`). So that
//! `git -c user.signingKey=… ledger put …` signs with that key as `git -c … commit -S` would,
//! [`overrides`] reads the variable as Git's `config.c` does and gives its settings as gix
//! configuration overrides: each entry is shell-single-quoted, `'key'='value'` (Git 2.31 and
//! later), `'key=value'` (older), or `'key'` / `'key'=` (a boolean set to true), entries
//! separated by blanks, a quote inside a value written `'\''` (and `!` as `'\!'`).

/// The name of the variable.
pub const VAR: &str = "GIT_CONFIG_PARAMETERS";

/// The settings `GIT_CONFIG_PARAMETERS` holds, as `key=value` (or `key` for a boolean set to
/// true); empty when it is unset. `Err`: Git's own message for a value it would refuse.
pub fn overrides() -> Result<Vec<String>, String> {
    match std::env::var(VAR) {
        Ok(v) => parse(&v),
        Err(std::env::VarError::NotPresent) => Ok(Vec::new()),
        Err(std::env::VarError::NotUnicode(_)) => Err(bogus()),
    }
}

fn bogus() -> String {
    format!("bogus format in {VAR}")
}

/// The settings of a `GIT_CONFIG_PARAMETERS` value (see the module's documentation).
pub fn parse(env: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = env.trim_start();
    while !rest.is_empty() {
        let (key, next) = dequote(rest).ok_or_else(bogus)?;
        let next = next.unwrap_or("");
        let (entry, next) = match next.strip_prefix('=') {
            // New style: `'key'='value'`, or `'key'=` (a boolean).
            Some(n) if n.starts_with('\'') => {
                let (value, after) = dequote(n).ok_or_else(bogus)?;
                (format!("{key}={value}"), after.unwrap_or(""))
            }
            Some(n) => (key, n),
            // Old style: `'key=value'`, or `'key'` (a boolean).
            None => (key, next),
        };
        if !(next.is_empty() || next.starts_with(char::is_whitespace)) {
            return Err(bogus());
        }
        out.push(entry);
        rest = next.trim_start();
    }
    Ok(out)
}

/// One single-quoted word at the start of `s`, unquoted as Git's `sq_dequote_step` does: the
/// word, and what follows it (`None` at the end of `s`). `None` if `s` does not start with a
/// quote or the quote is not closed. (Quotes, `\\` and `!` are ASCII, so the word, made of the
/// bytes between them, stays UTF-8.)
fn dequote(s: &str) -> Option<(String, Option<&str>)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'\'') {
        return None;
    }
    let mut word = Vec::new();
    let mut i = 1;
    loop {
        let c = *b.get(i)?;
        if c != b'\'' {
            word.push(c);
            i += 1;
            continue;
        }
        // Out of the quotes: the end, an escaped `'` or `!` back into them, or the word's end.
        match b.get(i + 1) {
            None => return Some((String::from_utf8(word).ok()?, None)),
            Some(b'\\')
                if matches!(b.get(i + 2), Some(b'\'' | b'!')) && b.get(i + 3) == Some(&b'\'') =>
            {
                word.push(b[i + 2]);
                i += 4;
            }
            Some(_) => return Some((String::from_utf8(word).ok()?, Some(&s[i + 1..]))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_and_old_style_entries_as_git_writes_them() {
        assert_eq!(parse("").unwrap(), Vec::<String>::new());
        assert_eq!(
            parse("'user.signingkey'='/home/a/.ssh/k'").unwrap(),
            ["user.signingkey=/home/a/.ssh/k"]
        );
        assert_eq!(
            parse("'a.b'='1' 'c.d=2'  'e.f' 'g.h'=").unwrap(),
            ["a.b=1", "c.d=2", "e.f", "g.h"]
        );
        // A quote and a `!` inside a value, as Git's sq_quote writes them.
        assert_eq!(
            parse(r"'user.name'='it'\''s'\!'' 'x.y'='z'").unwrap(),
            ["user.name=it's!", "x.y=z"]
        );
        assert_eq!(parse("'k.v'='a b = c'").unwrap(), ["k.v=a b = c"]);
    }

    #[test]
    fn what_git_calls_bogus_is_refused() {
        for bad in ["a.b=1", "'a.b", "'a.b'x", "'a.b'='1'x", "'a.b'=x", "'a'='b"] {
            assert_eq!(parse(bad), Err(bogus()), "{bad:?}");
        }
    }

    /// What Git itself puts in the variable for `git -c …` is read back as given.
    #[test]
    fn git_s_own_variable_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("git-show-params");
        std::fs::write(&script, "#!/bin/sh\nprintf %s \"$GIT_CONFIG_PARAMETERS\"\n").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = format!(
            "{}:{}",
            dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = std::process::Command::new("git")
            .env("PATH", path)
            .env_remove(VAR)
            .args([
                "-c",
                "user.signingKey=/tmp/it's key!",
                "-c",
                "core.x",
                "-c",
                "a.b=c=d",
                "show-params",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        // (Older Git lowercases the key's name; keys are compared without case.)
        let got: Vec<String> = (parse(&String::from_utf8(out.stdout).unwrap()).unwrap())
            .into_iter()
            .map(|e| match e.split_once('=') {
                Some((k, v)) => format!("{}={v}", k.to_lowercase()),
                None => e.to_lowercase(),
            })
            .collect();
        assert_eq!(got, ["user.signingkey=/tmp/it's key!", "core.x", "a.b=c=d"]);
    }
}
