//! Rule 8 (`signing.md`): on a ledger that holds `writers`, every commit carries an SSH
//! signature by a declared writer, for a principal that is the committer's e-mail, valid at
//! the committer time.
//!
//! A commit's signature is its `gpgsig` header (`gpgsig-sha256` in a SHA-256 repository); the
//! signed payload is the commit object without that header and its continuation lines, as
//! `git commit -S` signs it. The SSHSIG blob is checked in process (RustCrypto's `ssh-key`):
//! namespace `git`, a key the writers file declares, the signature over the payload, then the
//! line's principals, namespaces and validity. Each failure is a reason of its own that names
//! the commit and, where there is one, the key's fingerprint as ssh-keygen prints it.

use std::cell::OnceCell;
use std::rc::Rc;

use gix::ObjectId;

use super::allowed_signers::{fingerprint, matches_list, AllowedSigners, Entry};
use super::known::Known;
use super::layout::WRITERS;
use super::objects::{describe_mode, find_in_tree, is_regular, read_blob_bounded_id};
use super::tree::read_object;
use crate::error::{Error, Result};

/// The namespace Git signs commits in.
pub const NAMESPACE: &str = "git";

/// The parsed writers of a ledger, kept with its declaration (the writers file's bytes are
/// pinned by the declaration's `writers.sha256`, so every admitted tree holds the same ones).
pub type WritersCell = OnceCell<Rc<AllowedSigners>>;

/// Who signed a commit, when the signature is good.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Signer {
    /// The principals of the writers line that allowed the key (a pattern list).
    pub principal: String,
    /// `SHA256:…`.
    pub fingerprint: String,
}

/// A commit split into its signature block (if any) and the bytes it signs.
#[derive(Debug)]
pub struct Split {
    pub signature: Option<String>,
    pub payload: Vec<u8>,
}

/// The header that carries a commit's signature in a repository of this hash.
pub fn header_name(hash: gix::hash::Kind) -> &'static str {
    gix::objs::commit::signature_field_name(hash)
}

/// Split a raw commit into its signature header's value and the rest (the signed payload).
/// As Git does, the signature headers of both hash functions (`gpgsig`, `gpgsig-sha256`) are
/// left out of the payload, and the one of the repository's hash is the signature (the other is
/// the signature of the commit's other-hash form). The same header twice is refused as
/// malformed.
pub fn split(raw: &[u8], hash: gix::hash::Kind) -> std::result::Result<Split, String> {
    const NAMES: [&str; 2] = ["gpgsig", "gpgsig-sha256"];
    let name = header_name(hash);
    let mut payload = Vec::with_capacity(raw.len());
    let mut signature: Option<String> = None;
    let mut other_seen = false;
    let mut rest = raw;
    // Inside a signature header: `Some(true)` the repository's own, `Some(false)` the other's.
    let mut in_sig: Option<bool> = None;
    while !rest.is_empty() {
        let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        rest = tail;
        if line == b"\n" {
            // The end of the headers: the message follows as it is.
            payload.extend_from_slice(line);
            payload.extend_from_slice(rest);
            break;
        }
        if let Some(own) = in_sig {
            if let Some(cont) = line.strip_prefix(b" ") {
                if own {
                    let s = signature.as_mut().expect("in a signature");
                    s.push_str(&String::from_utf8_lossy(cont));
                    if !cont.ends_with(b"\n") {
                        s.push('\n');
                    }
                }
                continue;
            }
            in_sig = None;
        }
        let header = NAMES.iter().find_map(|n| {
            line.strip_prefix(n.as_bytes())
                .and_then(|l| l.strip_prefix(b" "))
                .map(|value| (*n, value))
        });
        if let Some((found, value)) = header {
            let own = found == name;
            if own && signature.is_some() || !own && other_seen {
                return Err(format!("it has two {found} headers"));
            }
            if own {
                let mut s = String::from_utf8_lossy(value).into_owned();
                if !s.ends_with('\n') {
                    s.push('\n');
                }
                signature = Some(s);
            } else {
                other_seen = true;
            }
            in_sig = Some(own);
            continue;
        }
        payload.extend_from_slice(line);
    }
    Ok(Split { signature, payload })
}

/// What the committer line says: e-mail and time (seconds since the epoch).
fn committer(payload: &[u8], hash: gix::hash::Kind) -> std::result::Result<(String, i64), String> {
    let c = gix::objs::CommitRef::from_bytes(payload, hash).map_err(|e| e.to_string())?;
    let who = c.committer().map_err(|e| e.to_string())?;
    let time = who.time().map_err(|e| e.to_string())?;
    Ok((
        String::from_utf8_lossy(who.email).trim().to_owned(),
        time.seconds,
    ))
}

/// Check a raw commit against the writers: the signer when rule 8 holds, the reason when not
/// (without the `commit <id>: rule 8: ` prefix).
pub fn check(
    raw: &[u8],
    hash: gix::hash::Kind,
    writers: &AllowedSigners,
) -> std::result::Result<Signer, String> {
    let split = split(raw, hash).map_err(|e| format!("its signature is malformed: {e}"))?;
    let Some(armored) = split.signature else {
        return Err("it is not signed; a ledger with writers admits only commits signed by a declared writer (configure signing: `git config gpg.format ssh` and `git config user.signingKey <key>`)".into());
    };
    let sig = parse_block(&armored)?;
    if sig.namespace() != NAMESPACE {
        return Err(format!(
            "its signature by key {} is for namespace {:?}, not {NAMESPACE:?} (commit signatures are made in namespace git)",
            fingerprint(sig.public_key()),
            sig.namespace()
        ));
    }
    let lines: Vec<&Entry> = writers.lines_for(sig.public_key()).collect();
    let Some(first) = lines.first() else {
        return Err(format!(
            "it is signed with key {}, which is not a declared writer (the ledger's writers file does not list it)",
            fingerprint(sig.public_key())
        ));
    };
    // A declared key's fingerprint was computed when the writers file was parsed (once per
    // ledger), not once per commit.
    let fpr = first.fingerprint.clone();
    let key = ssh_key::PublicKey::new(sig.public_key().clone(), "");
    if key.verify(NAMESPACE, &split.payload, &sig).is_err() {
        return Err(format!(
            "its signature by key {fpr} does not verify: the commit was changed after it was signed"
        ));
    }
    let (email, time) = committer(&split.payload, hash)
        .map_err(|e| format!("its committer line does not parse ({e})"))?;
    let mut why = None;
    for e in &lines {
        if !matches_list(&email, &e.principals) {
            why.get_or_insert(format!(
                "key {fpr} is declared for {} (writers line {}), not for the committer {email}",
                e.principals, e.line
            ));
            continue;
        }
        // A reason about a line that names the committer wins over one about another principal.
        let mut bad = |w: String| {
            if why
                .as_ref()
                .is_none_or(|old| old.contains(" not for the committer "))
            {
                why = Some(w);
            }
        };
        if let Some(ns) = e
            .namespaces
            .as_deref()
            .filter(|ns| !matches_list(NAMESPACE, ns))
        {
            bad(format!(
                "key {fpr} is not permitted to sign in namespace git (writers line {}: namespaces=\"{ns}\")",
                e.line
            ));
            continue;
        }
        if let Some(after) = e.valid_after.filter(|&a| time < a) {
            bad(format!(
                "key {fpr} is not yet valid at the committer time {} (writers line {}: valid after {})",
                show_time(time),
                e.line,
                show_time(after)
            ));
            continue;
        }
        if let Some(before) = e.valid_before.filter(|&b| time > b) {
            bad(format!(
                "key {fpr} has expired at the committer time {} (writers line {}: valid before {})",
                show_time(time),
                e.line,
                show_time(before)
            ));
            continue;
        }
        return Ok(Signer {
            principal: e.principals.clone(),
            fingerprint: fpr,
        });
    }
    Err(why.expect("some line was found and refused"))
}

const BEGIN: &str = "-----BEGIN SSH SIGNATURE-----";
const END: &str = "-----END SSH SIGNATURE-----";

/// Parse the armored SSHSIG block as ssh-keygen dearmors it (what Git runs): the block starts
/// with the BEGIN line, everything up to the first END marker with its whitespace removed is
/// the base64 of the blob, and what follows the END marker is not read.
fn parse_block(armored: &str) -> std::result::Result<ssh_key::SshSig, String> {
    let Some(rest) = armored.strip_prefix(BEGIN) else {
        return Err("its signature is not an SSH signature (-----BEGIN SSH SIGNATURE-----); only SSH signatures (gpg.format ssh) are verified".into());
    };
    let malformed =
        |e: &dyn std::fmt::Display| format!("its SSH signature block is malformed ({e})");
    let Some(end) = rest.find(END) else {
        return Err(malformed(&"no -----END SSH SIGNATURE----- line"));
    };
    // Byte by byte: an ASCII whitespace byte is never part of a longer UTF-8 sequence, so this
    // removes exactly the whitespace characters (a `char` iterator collected into a `String`
    // cost more than the rest of the dearmoring).
    let b64: Vec<u8> = rest[..end]
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let mut pem = String::with_capacity(b64.len() + 80);
    pem.push_str(BEGIN);
    pem.push('\n');
    for chunk in b64.chunks(70) {
        pem.push_str(std::str::from_utf8(chunk).map_err(|e| malformed(&e))?);
        pem.push('\n');
    }
    pem.push_str(END);
    ssh_key::SshSig::from_pem(pem).map_err(|e| malformed(&e))
}

/// The key fingerprint and namespace of a commit's signature, without checking it against any
/// writers (for `log` on a ledger without writers). `None` when unsigned or unreadable.
pub fn signature_key(raw: &[u8], hash: gix::hash::Kind) -> Option<String> {
    let armored = split(raw, hash).ok()?.signature?;
    parse_block(&armored)
        .ok()
        .map(|s| fingerprint(s.public_key()))
}

/// `2026-11-29T10:00:00Z`.
pub fn show_time(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The writers of a ledger whose declaration names them, read from `tree` once per
/// declaration: the `writers` entry must be a regular file whose SHA-256 is the declared one,
/// and must parse. `None` when the declaration names no writers. `at` names the commit.
pub(crate) fn writers_of(
    repo: &gix::Repository,
    known: &Known,
    tree: ObjectId,
    at: &str,
    max_bytes: u64,
) -> Result<Option<(ObjectId, Rc<AllowedSigners>)>> {
    let Some(pin) = &known.decl.writers else {
        return Ok(None);
    };
    let Some((mode, blob)) = find_in_tree(repo, tree, WRITERS)? else {
        return Err(Error::refused(format!(
            "{at}: {WRITERS} is missing; the declaration names writers ({}), so every ledger commit holds them",
            pin.path
        )));
    };
    if !is_regular(mode) {
        return Err(Error::refused(format!(
            "{at}: {WRITERS} has mode {}; every entry is a regular file (100644)",
            describe_mode(mode)
        )));
    }
    if let Some(w) = known.writers.get() {
        if known.writers_blob.get() == Some(&blob) {
            return Ok(Some((blob, w.clone())));
        }
    }
    let bytes = read_blob_bounded_id(repo, blob, max_bytes, &format!("{at}: {WRITERS}"))?;
    let got = crate::sha256_hex(&bytes);
    let want = pin.sha256.as_deref().unwrap_or_default();
    if got != want {
        return Err(Error::refused(format!(
            "{at}: {WRITERS} hashes to {got}, but the declaration pins writers.sha256 {want} (the file's exact bytes never change)"
        )));
    }
    let parsed = AllowedSigners::parse(&bytes)
        .map_err(|r| Error::refusal(r).context(format!("{at}: {WRITERS}")))?;
    let parsed = Rc::new(parsed);
    if known.writers.get().is_none() {
        let _ = known.writers.set(parsed.clone());
        let _ = known.writers_blob.set(blob);
    }
    Ok(Some((blob, parsed)))
}

/// The writers file a declaration names, read from Git objects at its `source_revision`
/// (`init` copies it into the root tree): its bytes, checked against `writers.sha256`, and
/// parsed. `None` when the declaration names no writers.
pub fn declared_writers(
    repo: &gix::Repository,
    decl: &crate::declaration::Declaration,
) -> Result<Option<(Vec<u8>, AllowedSigners)>> {
    let Some(pin) = &decl.writers else {
        return Ok(None);
    };
    let rev = decl.source_revision.as_deref().unwrap_or_default();
    let commit = super::require_commit(repo, rev)?;
    let what = format!("writers ({}) at {rev}", pin.path);
    let bytes = super::read_blob_bounded(repo, commit, &pin.path, u64::MAX)
        .map_err(|e| e.context(&what))?;
    let got = crate::sha256_hex(&bytes);
    let want = pin.sha256.as_deref().unwrap_or_default();
    if got != want {
        return Err(Error::refused(format!(
            "{what}: the file hashes to {got}, but the declaration pins writers.sha256 {want}"
        )));
    }
    let parsed = AllowedSigners::parse(&bytes).map_err(|r| Error::refusal(r).context(&what))?;
    Ok(Some((bytes, parsed)))
}

/// Rule 8 for `commit`, whose ledger's writers are in `tree` (the parent's tree for a step,
/// the root's own for the root; rule 2 keeps them equal). Reasons, empty when it holds or the
/// ledger has no writers.
pub(crate) fn rule8(
    repo: &gix::Repository,
    known: &Known,
    tree: ObjectId,
    commit: ObjectId,
    max_bytes: u64,
) -> Result<Vec<crate::refusal::Reason>> {
    if known.decl.writers.is_none() {
        return Ok(Vec::new());
    }
    let at = format!("commit {commit}");
    // Once read and checked against the declaration, the writers are those of every admitted
    // tree of this declaration (the root check and rule 2), so a step need not look again.
    let writers = match known.writers.get() {
        Some(w) => w.clone(),
        None => match writers_of(repo, known, tree, &at, max_bytes)? {
            Some((_, w)) => w,
            None => return Ok(Vec::new()),
        },
    };
    let mut buf = Vec::new();
    let raw = read_object(
        &repo.objects,
        &commit,
        gix::objs::Kind::Commit,
        || "commit".into(),
        &mut buf,
    )?;
    Ok(match check(raw, repo.object_hash(), &writers) {
        Ok(_) => Vec::new(),
        Err(why) => vec![crate::refusal::Reason::new(why)
            .rule(crate::refusal::Rule::Admission(8))
            .at(at)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_header_and_its_continuation_lines_are_cut_out() {
        let raw = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n\nmsg\n gpgsig x\n";
        let s = split(raw, gix::hash::Kind::Sha1).unwrap();
        assert_eq!(
            s.signature.as_deref(),
            Some("-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n")
        );
        assert_eq!(
            s.payload,
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nmsg\n gpgsig x\n"
        );
        // The other hash's signature header is not part of the payload either, as in Git.
        let both =
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig-sha256 x\n y\ngpgsig a\n\nm\n";
        let s = split(both, gix::hash::Kind::Sha1).unwrap();
        assert_eq!(s.signature.as_deref(), Some("a\n"));
        assert_eq!(
            s.payload,
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nm\n"
        );
        let twice = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig a\ngpgsig b\n\nm\n";
        assert!(split(twice, gix::hash::Kind::Sha1).is_err());
    }

    /// Test-only keys (made with ssh-keygen for these tests; they sign nothing else).
    const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBSN3MlKmr48SQgD1DynUiWs/VX5uLsxCrPb6tr/0tZIQAAAIij3t/Qo97f
0AAAAAtzc2gtZWQyNTUxOQAAACBSN3MlKmr48SQgD1DynUiWs/VX5uLsxCrPb6tr/0tZIQ
AAAED9Ll949fqj5uEkSqP00dGOzM9AFCrw5DIx0trVIOOx4lI3cyUqavjxJCAPUPKdSJaz
9Vfm4uzEKs9vq2v/S1khAAAABHVuaXQB
-----END OPENSSH PRIVATE KEY-----
";
    const PUBLIC: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFI3cyUqavjxJCAPUPKdSJaz9Vfm4uzEKs9vq2v/S1kh";
    const OTHER: &str = "-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACCygm+mORnA06CI9SvQtdIBIC0ECSsx3TQb0GfhHob5HwAAAIjeAcdd3gHH
XQAAAAtzc2gtZWQyNTUxOQAAACCygm+mORnA06CI9SvQtdIBIC0ECSsx3TQb0GfhHob5Hw
AAAEBSaLZqMseNacqBM/Mf/9TrnMWQnJWjnJPhipwtlxx47bKCb6Y5GcDToIj1K9C10gEg
LQQJKzHdNBvQZ+EehvkfAAAABW90aGVy
-----END OPENSSH PRIVATE KEY-----
";

    /// A commit by `email` at 2026-11-29T10:00:00Z, signed with `key` in `namespace`.
    fn signed(key: &str, namespace: &str, email: &str) -> Vec<u8> {
        let payload = format!(
            "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1795946400 +0000\ncommitter C <{email}> 1795946400 +0000\n\nmsg\n"
        );
        let key = ssh_key::PrivateKey::from_openssh(key).unwrap();
        let sig = key
            .sign(namespace, ssh_key::HashAlg::Sha512, payload.as_bytes())
            .unwrap()
            .to_pem(ssh_key::LineEnding::LF)
            .unwrap();
        super::super::sign::with_signature(payload.as_bytes(), gix::hash::Kind::Sha1, &sig)
    }

    fn writers(line: &str) -> AllowedSigners {
        AllowedSigners::parse(line.as_bytes()).unwrap()
    }

    /// Each part of rule 8, from both sides.
    #[test]
    fn rule_8_admits_a_declared_writer_and_names_each_failure() {
        let sha1 = gix::hash::Kind::Sha1;
        let w = writers(&format!("c@x.org {PUBLIC}\n"));
        let good = signed(KEY, "git", "c@x.org");
        let signer = check(&good, sha1, &w).unwrap();
        assert_eq!(signer.principal, "c@x.org");
        assert!(signer.fingerprint.starts_with("SHA256:"));
        let fpr = signer.fingerprint.clone();
        let why = |raw: &[u8], w: &AllowedSigners| check(raw, sha1, w).unwrap_err();
        let unsigned = split(&good, sha1).unwrap().payload;
        assert!(why(&unsigned, &w).starts_with("it is not signed"));
        assert!(why(&signed(KEY, "file", "c@x.org"), &w).contains("for namespace \"file\""));
        assert!(why(&signed(OTHER, "git", "c@x.org"), &w).contains("not a declared writer"));
        let changed = String::from_utf8(good.clone())
            .unwrap()
            .replace("msg", "msh");
        let e = why(changed.as_bytes(), &w);
        assert!(
            e.contains(&fpr) && e.contains("changed after it was signed"),
            "{e}"
        );
        let e = why(&signed(KEY, "git", "d@x.org"), &w);
        assert!(
            e.contains("declared for c@x.org (writers line 1), not for the committer d@x.org"),
            "{e}"
        );
        // Patterns: a wildcard line admits, a negation refuses.
        assert!(check(
            &signed(KEY, "git", "d@x.org"),
            sha1,
            &writers(&format!("*@x.org {PUBLIC}"))
        )
        .is_ok());
        assert!(check(
            &signed(KEY, "git", "d@x.org"),
            sha1,
            &writers(&format!("*@x.org,!d@* {PUBLIC}"))
        )
        .is_err());
        // Validity at the committer time, bounds inclusive.
        let at = |opt: &str| writers(&format!("c@x.org {opt} {PUBLIC}"));
        assert!(check(&good, sha1, &at("valid-after=\"20261129100000Z\"")).is_ok());
        assert!(check(&good, sha1, &at("valid-before=\"20261129100000Z\"")).is_ok());
        assert!(why(&good, &at("valid-after=\"20261129100001Z\"")).contains("is not yet valid"));
        assert!(why(&good, &at("valid-before=\"20261129095959Z\"")).contains("has expired"));
        assert!(why(&good, &at("namespaces=\"file\""))
            .contains("not permitted to sign in namespace git"));
        assert!(check(&good, sha1, &at("namespaces=\"file,git\"")).is_ok());
        // Another line for the same key may admit what one line does not.
        let two = writers(&format!(
            "c@x.org valid-before=\"20260101Z\" {PUBLIC}\nc@x.org {PUBLIC}\n"
        ));
        assert_eq!(check(&good, sha1, &two).unwrap().principal, "c@x.org");
        // A malformed block.
        let broken = String::from_utf8(good.clone())
            .unwrap()
            .replacen("\n ", "\n !", 2);
        assert!(why(broken.as_bytes(), &w).contains("malformed"));
        // As ssh-keygen reads a block (and Git accepts it): blank lines inside and text after
        // the END line do not matter.
        let text = String::from_utf8(good.clone()).unwrap();
        let end = "-----END SSH SIGNATURE-----\n";
        let trailing = text.replace(end, &format!("{end} garbage\n"));
        assert!(check(trailing.as_bytes(), sha1, &w).is_ok());
        let begin = "-----BEGIN SSH SIGNATURE-----\n";
        let blank = text.replace(begin, &format!("{begin} \n"));
        assert!(check(blank.as_bytes(), sha1, &w).is_ok());
        let no_end = text.replace(&format!(" {end}"), "");
        assert!(why(no_end.as_bytes(), &w).contains("no -----END SSH SIGNATURE----- line"));
    }

    #[test]
    fn times_show_as_utc() {
        assert_eq!(show_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(show_time(1_795_946_400), "2026-11-29T10:00:00Z");
        assert_eq!(show_time(951_868_800), "2000-03-01T00:00:00Z");
    }
}
