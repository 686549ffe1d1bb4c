//! Signing the commits git-ledger writes, from Git's configuration, as `git commit -S` does
//! with `gpg.format ssh` (`signing.md`, "Signing"): `user.signingKey` is a key file, or a
//! `key::<public key>` literal whose private half is in `ssh-agent` (without it, the first line
//! `gpg.ssh.defaultKeyCommand` prints); `gpg.ssh.program`
//! (default `ssh-keygen`) runs as `<program> -Y sign -n git -f <key> [-U] <file>` and leaves
//! the armored signature in `<file>.sig`. The signature goes into the commit's `gpgsig` header
//! (continuation lines indented by one space), at the end of the headers, as Git puts it.
//!
//! Commits on a ledger whose declaration names writers are always signed; elsewhere only when
//! `commit.gpgSign` is true. Only the SSH format is supported: `openpgp` and `x509` are refused
//! with a clear message, and so is a missing key.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use gix::objs::WriteTo;
use gix::ObjectId;

use crate::error::{Error, Result};

/// How to sign, read from Git's configuration.
#[derive(Debug, Clone)]
pub struct Signing {
    program: String,
    key: Key,
}

#[derive(Debug, Clone)]
enum Key {
    /// A private (or public, with the agent) key file.
    File(PathBuf),
    /// A public key whose private half is in ssh-agent.
    Literal(String),
}

const FORMAT_HINT: &str = "sign with an SSH key: `git config gpg.format ssh` and `git config user.signingKey ~/.ssh/id_ed25519` (or `key::<public key>` with the key in ssh-agent)";

/// The signing configuration of `repo`, or `None` when its commits are not signed. `required`:
/// the ledger names writers, so its commits are signed whatever `commit.gpgSign` says.
pub fn config(repo: &gix::Repository, required: bool) -> Result<Option<Signing>> {
    let cfg = repo.config_snapshot();
    let gpgsign = cfg.boolean("commit.gpgSign").unwrap_or(false);
    if !required && !gpgsign {
        return Ok(None);
    }
    let why = if required {
        "this ledger's declaration names writers, so every commit on it is signed"
    } else {
        "commit.gpgSign is true"
    };
    let format = cfg
        .string("gpg.format")
        .map(|s| s.to_string())
        .unwrap_or_else(|| "openpgp".to_owned());
    if format != "ssh" {
        return Err(Error::refused_with_hint(
            format!("{why}, but gpg.format is {format:?}: git-ledger signs only with SSH keys (gpg.format ssh)"),
            FORMAT_HINT,
        ));
    }
    let key = match cfg.string("user.signingKey").map(|s| s.to_string()) {
        Some(key) => key,
        None => match cfg
            .string("gpg.ssh.defaultKeyCommand")
            .map(|s| s.to_string())
        {
            // As Git: the command's first line is the key, `key::<public key>`.
            Some(command) => default_key(&command, why)?,
            None => {
                return Err(Error::refused_with_hint(
                    format!("{why}, but no signing key is configured (user.signingKey is not set)"),
                    FORMAT_HINT,
                ))
            }
        },
    };
    let key = if let Some(literal) = key.strip_prefix("key::") {
        Key::Literal(literal.trim().to_owned())
    } else if key.starts_with("ssh-") || key.starts_with("ecdsa-") {
        Key::Literal(key.trim().to_owned())
    } else {
        let path = match key.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(rest))
                .unwrap_or_else(|| PathBuf::from(&key)),
            None => PathBuf::from(&key),
        };
        if !path.is_file() {
            return Err(Error::refused_with_hint(
                format!(
                    "{why}, but the signing key {} (user.signingKey) does not exist",
                    path.display()
                ),
                FORMAT_HINT,
            ));
        }
        Key::File(path)
    };
    let program = cfg
        .string("gpg.ssh.program")
        .map(|s| s.to_string())
        .unwrap_or_else(|| "ssh-keygen".to_owned());
    Ok(Some(Signing { program, key }))
}

/// The key `gpg.ssh.defaultKeyCommand` prints on its first line (run by the shell, as Git runs
/// it).
fn default_key(command: &str, why: &str) -> Result<String> {
    let out = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            Error::failed(format!(
                "cannot run gpg.ssh.defaultKeyCommand {command:?}: {e}"
            ))
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap_or_default().trim();
    if !out.status.success() || !(first.starts_with("key::") || first.starts_with("ssh-")) {
        return Err(Error::refused_with_hint(
            format!("{why}, but user.signingKey is not set and gpg.ssh.defaultKeyCommand {command:?} printed no key (its first line must be key::<public key>)"),
            FORMAT_HINT,
        ));
    }
    Ok(first.to_owned())
}

impl Signing {
    /// The armored SSH signature of `payload` in namespace `git`.
    pub fn sign(&self, payload: &[u8]) -> Result<String> {
        let fail = |m: String| Error::failed_with_hint(m, FORMAT_HINT);
        let dir = tempfile::tempdir()
            .map_err(|e| fail(format!("cannot make a directory to sign in: {e}")))?;
        let buffer = dir.path().join("commit");
        std::fs::write(&buffer, payload)
            .map_err(|e| fail(format!("cannot write the commit to sign: {e}")))?;
        let (key_file, literal) = match &self.key {
            Key::File(p) => (p.clone(), false),
            Key::Literal(k) => {
                let p = dir.path().join("key.pub");
                std::fs::write(&p, format!("{k}\n"))
                    .map_err(|e| fail(format!("cannot write the signing key: {e}")))?;
                (p, true)
            }
        };
        let mut cmd = Command::new(&self.program);
        cmd.args(["-Y", "sign", "-n", "git", "-f"]).arg(&key_file);
        if literal {
            cmd.arg("-U");
        }
        let out = cmd
            .arg(&buffer)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| {
                fail(format!(
                    "cannot run {} (gpg.ssh.program): {e}",
                    self.program
                ))
            })?;
        if !out.status.success() {
            return Err(fail(format!(
                "{} -Y sign failed with key {}: {}",
                self.program,
                key_file.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let sig = std::fs::read_to_string(buffer.with_extension("sig"))
            .map_err(|e| fail(format!("{} -Y sign wrote no signature: {e}", self.program)))?;
        if !sig.starts_with("-----BEGIN SSH SIGNATURE-----") {
            return Err(fail(format!(
                "{} -Y sign wrote something that is not an SSH signature",
                self.program
            )));
        }
        Ok(sig)
    }
}

/// The bytes of `commit` with `signature` in its signature header, at the end of the headers.
pub fn with_signature(commit: &[u8], hash: gix::hash::Kind, signature: &str) -> Vec<u8> {
    let end = memchr::memmem::find(commit, b"\n\n").map_or(commit.len(), |i| i + 1);
    let mut out = Vec::with_capacity(commit.len() + signature.len() + 64);
    out.extend_from_slice(&commit[..end]);
    out.extend_from_slice(super::signature::header_name(hash).as_bytes());
    // `gpgsig <first line>`, then each further line indented by one space.
    for line in signature.trim_end_matches('\n').split('\n') {
        out.push(b' ');
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(&commit[end..]);
    out
}

/// Write a commit object (signed when `signing` is given); no ref moves.
pub fn write_commit(
    repo: &gix::Repository,
    committer: gix::actor::SignatureRef<'_>,
    author: gix::actor::SignatureRef<'_>,
    message: &str,
    tree: ObjectId,
    parents: Vec<ObjectId>,
    signing: Option<&Signing>,
) -> Result<ObjectId> {
    let commit = gix::objs::Commit {
        message: message.into(),
        tree,
        author: author.into(),
        committer: committer.into(),
        encoding: None,
        parents: parents.into(),
        extra_headers: Vec::new(),
    };
    let mut bytes = Vec::new();
    commit
        .write_to(&mut bytes)
        .map_err(|e| Error::failed(format!("cannot serialise a commit: {e}")))?;
    if let Some(s) = signing {
        let sig = s.sign(&bytes)?;
        bytes = with_signature(&bytes, repo.object_hash(), &sig);
    }
    super::objects::write_object(repo, gix::objs::Kind::Commit, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_goes_at_the_end_of_the_headers_and_splits_back_out() {
        let commit = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ncommitter A <a@x> 1 +0000\n\nmsg\n\nbody\n";
        let sig = "-----BEGIN SSH SIGNATURE-----\nU1NI\n-----END SSH SIGNATURE-----\n";
        let signed = with_signature(commit, gix::hash::Kind::Sha1, sig);
        assert_eq!(
            signed,
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ncommitter A <a@x> 1 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NI\n -----END SSH SIGNATURE-----\n\nmsg\n\nbody\n"
        );
        let back = super::super::signature::split(&signed, gix::hash::Kind::Sha1);
        assert_eq!(back.payload, commit);
        assert_eq!(back.signature.as_deref(), Some(sig.as_bytes()));
    }
}
