//! Rule 8 (`signing.md`): on a ledger that holds `writers`, every commit carries an SSH
//! signature by a declared writer, for a principal that is the committer's e-mail, valid at
//! the committer time.
//!
//! A commit's signature is its `gpgsig` header (`gpgsig-sha256` in a SHA-256 repository); the
//! signed payload is the commit object without every `gpgsig*` header and its continuation
//! lines, exactly as Git builds it ([`split`]). The signature is read exactly as OpenSSH 9.2p1's
//! ssh-keygen reads it when Git runs it ([`dearmor`], [`parse_sshsig`], [`verify_sshsig`]: the
//! functions of sshsig.c, sshbuf*.c and ssh-*.c mirrored, each cited), in process: namespace
//! `git`, a key the writers file declares, the signature over the payload (the cryptography
//! from RustCrypto through `ssh-key`), then the line's principals, namespaces and validity.
//! `tests/cli/signature_diff.rs` compares the verdicts with `git verify-commit` on hundreds of
//! mutations. Each failure is a reason of its own that names
//! the commit and, where there is one, the key's fingerprint as ssh-keygen prints it.

use std::cell::OnceCell;
use std::rc::Rc;

use gix::ObjectId;

use super::allowed_signers::{fingerprint, matches_list, AllowedSigners, Entry};
use super::known::Known;
use super::layout::WRITERS;
use super::objects::{find_in_tree, is_regular, not_regular, read_blob_bounded_at};
use super::tree::read_object;
use crate::error::{Error, Result};
use crate::refusal::Reason;

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

/// A commit split into its signature (the value of its signature headers) and the bytes it
/// signs.
#[derive(Debug)]
pub struct Split {
    /// The signature as Git hands it to ssh-keygen: every line of the repository's own
    /// signature header(s), without the one leading space of a continuation line.
    pub signature: Option<Vec<u8>>,
    pub payload: Vec<u8>,
}

/// The header that carries a commit's signature in a repository of this hash.
pub fn header_name(hash: gix::hash::Kind) -> &'static str {
    gix::objs::commit::signature_field_name(hash)
}

/// Split a raw commit as Git does before it verifies a commit's signature
/// (`parse_buffer_signed_by_header` in Git's commit.c, which `parse_signed_commit` calls):
/// line by line, a line `<own header> <value>` (`gpgsig` in a SHA-1 repository,
/// `gpgsig-sha256` in a SHA-256 one) and its continuation lines (starting with a space) are
/// the signature, appended in order (a second such header is appended to the first); every
/// other header line that *starts with* `gpgsig` (`gpgsig-sha256`, `gpgsigx`, a bare `gpgsig`
/// line) and its continuation lines are left out of the payload too; every other line, and
/// from the first empty line on the whole rest, is the payload.
pub fn split(raw: &[u8], hash: gix::hash::Kind) -> Split {
    let own = header_name(hash).as_bytes();
    let mut payload = Vec::with_capacity(raw.len());
    let mut signature: Option<Vec<u8>> = None;
    let (mut in_signature, mut other) = (false, false);
    let mut rest = raw;
    while !rest.is_empty() {
        let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        let mut sig = None;
        if in_signature && line[0] == b' ' {
            sig = Some(&line[1..]);
        } else if line.starts_with(own) && line.get(own.len()) == Some(&b' ') {
            sig = Some(&line[own.len() + 1..]);
            other = false;
        } else if line.starts_with(b"gpgsig") {
            other = true;
        } else if other && line[0] != b' ' {
            other = false;
        }
        if let Some(value) = sig {
            signature
                .get_or_insert_with(Vec::new)
                .extend_from_slice(value);
            in_signature = true;
        } else {
            if line[0] == b'\n' {
                // The end of the headers: the whole remainder is payload.
                payload.extend_from_slice(rest);
                break;
            }
            if !other {
                payload.extend_from_slice(line);
            }
            in_signature = false;
        }
        rest = tail;
    }
    Split { signature, payload }
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
/// (at the writers line it is about, if any: the caller gives it its own place and rule).
pub fn check(
    raw: &[u8],
    hash: gix::hash::Kind,
    writers: &AllowedSigners,
) -> std::result::Result<Signer, Reason> {
    let split = split(raw, hash);
    let Some(armored) = split.signature else {
        return Err(Reason::new("it is not signed; a ledger with writers admits only commits signed by a declared writer (configure signing: `git config gpg.format ssh` and `git config user.signingKey <key>`)"));
    };
    let sig = parse_block(&armored).map_err(Reason::new)?;
    if sig.namespace != NAMESPACE.as_bytes() {
        return Err(Reason::new(format!(
            "its signature by key {} is for namespace {:?}, not {NAMESPACE:?} (commit signatures are made in namespace git)",
            fingerprint(&sig.key),
            String::from_utf8_lossy(&sig.namespace)
        )));
    }
    let lines: Vec<&Entry> = writers.lines_for(&sig.key).collect();
    let Some(first) = lines.first() else {
        return Err(Reason::new(format!(
            "it is signed with key {}, which is not a declared writer (the ledger's writers file does not list it)",
            fingerprint(&sig.key)
        )));
    };
    // A declared key's fingerprint was computed when the writers file was parsed (once per
    // ledger), not once per commit.
    let fpr = first.fingerprint.clone();
    if let Err(why) = verify_sshsig(&sig, &split.payload) {
        return Err(Reason::new(format!(
            "its signature by key {fpr} does not verify ({why}): the commit was changed after it was signed, or the signature was"
        )));
    }
    let (email, time) = committer(&split.payload, hash)
        .map_err(|e| Reason::new(format!("its committer line does not parse ({e})")))?;
    // Why no line admits it, and whether that reason is about a line that names the committer
    // (which wins over one about another principal).
    let mut why: Option<(Reason, bool)> = None;
    for e in &lines {
        if !matches_list(&email, &e.principals) {
            why.get_or_insert((
                Reason::new(format!(
                    "key {fpr} is declared for {}, not for the committer {email}",
                    e.principals
                ))
                .at(format!("writers line {}", e.line)),
                false,
            ));
            continue;
        }
        // A reason about a line that names the committer wins over one about another principal.
        let mut bad = |w: String| {
            let w = Reason::new(w).at(format!("writers line {}", e.line));
            if why
                .as_ref()
                .is_none_or(|(_, names_committer)| !names_committer)
            {
                why = Some((w, true));
            }
        };
        if let Some(ns) = e
            .namespaces
            .as_deref()
            .filter(|ns| !matches_list(NAMESPACE, ns))
        {
            bad(format!(
                "key {fpr} is not permitted to sign in namespace git (namespaces=\"{ns}\")"
            ));
            continue;
        }
        if let Some(after) = e.valid_after.filter(|&a| time < a) {
            bad(format!(
                "key {fpr} is not yet valid at the committer time {} (valid after {})",
                show_time(time),
                show_time(after)
            ));
            continue;
        }
        if let Some(before) = e.valid_before.filter(|&b| time > b) {
            bad(format!(
                "key {fpr} has expired at the committer time {} (valid before {})",
                show_time(time),
                show_time(before)
            ));
            continue;
        }
        return Ok(Signer {
            principal: e.principals.clone(),
            fingerprint: fpr,
        });
    }
    let (why, _) = why.expect("some line was found and refused");
    Err(why)
}

const BEGIN: &[u8] = b"-----BEGIN SSH SIGNATURE-----";
const END: &[u8] = b"-----END SSH SIGNATURE-----";

/// `isspace` in the C locale, which `b64_pton` skips anywhere.
fn c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// OpenSSH's `sshsig_dearmor` (sshsig.c, OpenSSH 9.2p1, the ssh-keygen Git runs here): the
/// block starts with `-----BEGIN SSH SIGNATURE-----` and a line feed (no carriage return, no
/// base64 on that line); the base64 runs up to the first line feed that is followed by
/// `-----END SSH SIGNATURE-----` (so the END marker starts a line of its own); whatever follows
/// that marker is not read. The base64 is decoded as `sshbuf_b64tod` does (`sshbuf_dup_string`,
/// then `b64_pton`).
pub fn dearmor(sig: &[u8]) -> std::result::Result<Vec<u8>, &'static str> {
    let rest = sig
        .strip_prefix(BEGIN)
        .ok_or("missing header")?
        .strip_prefix(b"\n")
        .ok_or("the -----BEGIN SSH SIGNATURE----- line does not end right after the marker")?;
    let mut footer = Vec::with_capacity(END.len() + 1);
    footer.push(b'\n');
    footer.extend_from_slice(END);
    let end = memchr::memmem::find(rest, &footer)
        .ok_or("missing footer (a line starting -----END SSH SIGNATURE-----)")?;
    let mut b64 = &rest[..end];
    // `sshbuf_dup_string`: a NUL only as the last byte (dropped).
    if let Some(nul) = memchr::memchr(0, b64) {
        if nul + 1 != b64.len() {
            return Err("a NUL byte inside the base64");
        }
        b64 = &b64[..nul];
    }
    b64_pton(b64).ok_or("invalid base64")
}

/// `b64_pton` (openbsd-compat/base64.c, as `sshbuf_b64tod` calls it): whitespace is skipped
/// anywhere; `=` ends the data, padding must be complete, only whitespace may follow it, and
/// the bits past the last byte must be zero; a partial quantum without padding is refused.
fn b64_pton(src: &[u8]) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u8> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    }
    let mut out: Vec<u8> = Vec::with_capacity(src.len() / 4 * 3 + 3);
    // The byte being filled (`target[tarindex]`), kept apart so its slop bits can be checked.
    let mut partial: u8 = 0;
    let mut state = 0;
    let mut i = 0;
    let mut pad = false;
    while i < src.len() {
        let c = src[i];
        i += 1;
        if c_space(c) {
            continue;
        }
        if c == b'=' {
            pad = true;
            break;
        }
        let v = value(c)?;
        match state {
            0 => {
                partial = v << 2;
                state = 1;
            }
            1 => {
                out.push(partial | (v >> 4));
                partial = (v & 0x0f) << 4;
                state = 2;
            }
            2 => {
                out.push(partial | (v >> 2));
                partial = (v & 0x03) << 6;
                state = 3;
            }
            _ => {
                out.push(partial | v);
                partial = 0;
                state = 0;
            }
        }
    }
    if pad {
        match state {
            0 | 1 => return None,
            2 => {
                // Another `=` must follow, after any whitespace.
                while i < src.len() && c_space(src[i]) {
                    i += 1;
                }
                if i >= src.len() || src[i] != b'=' {
                    return None;
                }
                i += 1;
            }
            _ => {}
        }
        if src[i..].iter().any(|&c| !c_space(c)) {
            return None;
        }
        if partial != 0 {
            return None;
        }
    } else if state != 0 {
        return None;
    }
    Some(out)
}

/// A cursor over an SSH wire buffer, with `sshbuf`'s getters.
struct Wire<'a>(&'a [u8]);

impl<'a> Wire<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (n, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*n))
    }
    /// `sshbuf_get_string`: a u32 length, then that many bytes (all of them present).
    fn string(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        if n > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(s)
    }
    /// `sshbuf_get_cstring`: a string with no NUL but, at most, one as its last byte (which the
    /// C string then ends at).
    fn cstring(&mut self) -> Option<&'a [u8]> {
        let s = self.string()?;
        match memchr::memchr(0, s) {
            Some(z) if z + 1 < s.len() => None,
            Some(z) => Some(&s[..z]),
            None => Some(s),
        }
    }
    /// `sshbuf_get_bignum2_bytes_direct`: a string holding a non-negative big-endian integer
    /// (leading zeros allowed and dropped), at most 16384 bits.
    fn bignum(&mut self) -> Option<&'a [u8]> {
        let mut d = self.string()?;
        if d.first().is_some_and(|b| b & 0x80 != 0) {
            return None;
        }
        if d.len() > 2049 || d.len() == 2049 && d[0] != 0 {
            return None;
        }
        while let Some((0, rest)) = d.split_first() {
            d = rest;
        }
        Some(d)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An SSHSIG blob as `sshsig_wrap_verify` reads it.
pub struct SshSig {
    pub key: ssh_key::public::KeyData,
    /// The namespace as a C string (a trailing NUL dropped).
    pub namespace: Vec<u8>,
    pub hash: ssh_key::HashAlg,
    /// The signature string (`string sigtype, string blob`).
    pub signature: Vec<u8>,
}

/// Parse an SSHSIG blob exactly as OpenSSH 9.2p1 does before it verifies
/// (`sshsig_peek_hashalg`, `hash_buffer`, `sshsig_wrap_verify` in sshsig.c): the magic
/// `SSHSIG`, a version no larger than 1 (`sshsig_parse_preamble`), the public key
/// (`sshkey_froms`: a string whose contents are one key blob, consumed exactly), the namespace,
/// the reserved string (read and not interpreted: the signed data holds an empty one whatever
/// it says), the hash algorithm (`sha256` or `sha512`) and the signature string, with nothing
/// after it ("Signature contains trailing data").
pub fn parse_sshsig(blob: &[u8]) -> std::result::Result<SshSig, String> {
    let bad = |what: &str| what.to_owned();
    let mut w = Wire(blob);
    let magic =
        w.0.strip_prefix(b"SSHSIG")
            .ok_or_else(|| bad("no SSHSIG magic"))?;
    w.0 = magic;
    let version = w.u32().ok_or_else(|| bad("no version"))?;
    if version > 1 {
        return Err(format!(
            "signature version {version} is larger than supported version 1"
        ));
    }
    let key_blob = w
        .string()
        .ok_or_else(|| bad("the public key string is cut short"))?;
    let namespace = w
        .cstring()
        .ok_or_else(|| bad("the namespace string is invalid"))?;
    w.string()
        .ok_or_else(|| bad("the reserved string is cut short"))?;
    let hash = w
        .cstring()
        .ok_or_else(|| bad("the hash algorithm string is invalid"))?;
    let signature = w
        .string()
        .ok_or_else(|| bad("the signature string is cut short"))?;
    if !w.is_empty() {
        return Err(bad("the signature contains trailing data"));
    }
    let hash = match hash {
        b"sha256" => ssh_key::HashAlg::Sha256,
        b"sha512" => ssh_key::HashAlg::Sha512,
        other => {
            return Err(format!(
                "unsupported hash algorithm {:?}",
                String::from_utf8_lossy(other)
            ))
        }
    };
    let key = parse_key(key_blob).ok_or_else(|| bad("the public key does not parse"))?;
    Ok(SshSig {
        key,
        namespace: namespace.to_vec(),
        hash,
        signature: signature.to_vec(),
    })
}

/// The key type a key blob names, as `sshkey_type_from_name` matches it: the full name, or
/// (for a plain key) the short name in any case.
fn key_type(name: &[u8]) -> Option<&'static str> {
    const TYPES: [(&str, &str); 3] = [
        ("ssh-ed25519", "ED25519"),
        ("ssh-rsa", "RSA"),
        ("ecdsa-sha2-nistp256", ""),
    ];
    TYPES
        .iter()
        .find(|(full, short)| {
            name == full.as_bytes()
                || !short.is_empty() && name.eq_ignore_ascii_case(short.as_bytes())
        })
        .map(|(full, _)| *full)
}

/// `sshkey_from_blob_internal` for the key types git-ledger verifies: the type name, the key's
/// fields as that type's `deserialize_public` reads them, and nothing after.
fn parse_key(blob: &[u8]) -> Option<ssh_key::public::KeyData> {
    use ssh_key::public::{EcdsaPublicKey, Ed25519PublicKey, KeyData, RsaPublicKey};
    let mut w = Wire(blob);
    let kind = key_type(w.cstring()?)?;
    let key = match kind {
        "ssh-ed25519" => {
            let pk: [u8; 32] = w.string()?.try_into().ok()?;
            KeyData::Ed25519(Ed25519PublicKey(pk))
        }
        "ssh-rsa" => {
            let e = ssh_key::Mpint::from_positive_bytes(w.bignum()?).ok()?;
            let n = w.bignum()?;
            // `sshkey_check_rsa_length`: at least 1024 bits.
            let bits = n.len() * 8 - n.first().map_or(8, |b| b.leading_zeros() as usize);
            if !(1024..=16384).contains(&bits) {
                return None;
            }
            let n = ssh_key::Mpint::from_positive_bytes(n).ok()?;
            KeyData::Rsa(RsaPublicKey { e, n })
        }
        _ => {
            if w.cstring()? != b"nistp256" {
                return None;
            }
            // `get_ec` (sshbuf-getput-crypto.c): only an uncompressed point.
            let point = w.string()?;
            if point.first() != Some(&0x04) {
                return None;
            }
            KeyData::Ecdsa(EcdsaPublicKey::from_sec1_bytes(point).ok()?)
        }
    };
    w.is_empty().then_some(key)
}

/// The order of the ed25519 group, little-endian.
const ED25519_L: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

/// Reduce `s` (below 2^253) modulo the group order, as `sc25519_from32bytes` does.
fn reduce_s(s: &mut [u8]) {
    let ge = (0..32).rev().find_map(|i| match s[i].cmp(&ED25519_L[i]) {
        std::cmp::Ordering::Equal => None,
        o => Some(o == std::cmp::Ordering::Greater),
    });
    if ge.unwrap_or(true) {
        let mut borrow = 0i16;
        for i in 0..32 {
            let d = i16::from(s[i]) - i16::from(ED25519_L[i]) - borrow;
            s[i] = d.rem_euclid(256) as u8;
            borrow = i16::from(d < 0);
        }
    }
}

/// `sshkey_verify` as `sshsig_wrap_verify` calls it (after its RSA signature type check): the
/// signature string of `key`'s type over `data`.
fn verify_raw(
    key: &ssh_key::public::KeyData,
    sig: &[u8],
    data: &[u8],
) -> std::result::Result<(), &'static str> {
    use ::signature::Verifier;
    use ssh_key::public::KeyData;
    use ssh_key::{Algorithm, EcdsaCurve};
    let mut w = Wire(sig);
    let sigtype = w.cstring().ok_or("the signature type is invalid")?;
    let blob = w.string().ok_or("the signature blob is cut short")?;
    if !w.is_empty() {
        return Err("the signature blob has trailing data");
    }
    let bad = "the signature does not verify";
    let signature = match key {
        KeyData::Ed25519(_) => {
            // ssh_ed25519_verify and crypto_sign_ed25519_open (ed25519.c): 64 bytes, the top
            // three bits of S clear, S taken modulo the group order.
            if sigtype != b"ssh-ed25519" {
                return Err("the signature type is not the key's");
            }
            if blob.len() != 64 || blob[63] & 0xe0 != 0 {
                return Err(bad);
            }
            let mut b = blob.to_vec();
            reduce_s(&mut b[32..]);
            ssh_key::Signature::new(Algorithm::Ed25519, b).map_err(|_| bad)?
        }
        KeyData::Rsa(k) => {
            // sshsig_wrap_verify allows rsa-sha2-512 and rsa-sha2-256; ssh_rsa_verify pads a
            // short signature with leading zeros to the modulus length and refuses a longer one.
            let hash = match sigtype {
                b"rsa-sha2-512" => ssh_key::HashAlg::Sha512,
                b"rsa-sha2-256" => ssh_key::HashAlg::Sha256,
                _ => return Err("unsupported RSA signature algorithm"),
            };
            let modlen = k.n.as_positive_bytes().map_or(0, <[u8]>::len);
            if blob.len() > modlen {
                return Err(bad);
            }
            let mut b = vec![0; modlen - blob.len()];
            b.extend_from_slice(blob);
            ssh_key::Signature::new(Algorithm::Rsa { hash: Some(hash) }, b).map_err(|_| bad)?
        }
        KeyData::Ecdsa(_) => {
            // ssh_ecdsa_verify: the key's type name, then r and s as bignums, nothing after.
            if sigtype != b"ecdsa-sha2-nistp256" {
                return Err("the signature type is not the key's");
            }
            let mut inner = Wire(blob);
            let r = inner.bignum().ok_or(bad)?;
            let s = inner.bignum().ok_or(bad)?;
            if !inner.is_empty() {
                return Err(bad);
            }
            let mut canonical = Vec::new();
            for n in [r, s] {
                let m = ssh_key::Mpint::from_positive_bytes(n).map_err(|_| bad)?;
                let bytes = m.as_bytes();
                canonical.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
                canonical.extend_from_slice(bytes);
            }
            ssh_key::Signature::new(
                Algorithm::Ecdsa {
                    curve: EcdsaCurve::NistP256,
                },
                canonical,
            )
            .map_err(|_| bad)?
        }
        _ => return Err("the key type is not supported"),
    };
    key.verify(data, &signature).map_err(|_| bad)
}

/// Whether `sig` is a good signature of `message` in namespace [`NAMESPACE`]: the data
/// `sshsig_wrap_verify` builds (magic, the expected namespace, an empty reserved string, the
/// hash algorithm, the message's hash) verified with the blob's key.
pub fn verify_sshsig(sig: &SshSig, message: &[u8]) -> std::result::Result<(), &'static str> {
    let data = ssh_key::SshSig::signed_data(NAMESPACE, sig.hash, message)
        .map_err(|_| "cannot build the signed data")?;
    verify_raw(&sig.key, &sig.signature, &data)
}

/// The SSHSIG blob of an armoured signature, as ssh-keygen reads it: [`dearmor`], then
/// [`parse_sshsig`]. A signature that does not start with the SSH marker is not an SSH
/// signature (Git would hand it to another program, `get_format_by_sig`).
fn parse_block(armored: &[u8]) -> std::result::Result<SshSig, String> {
    if !armored.starts_with(BEGIN) {
        return Err("its signature is not an SSH signature (-----BEGIN SSH SIGNATURE-----); only SSH signatures (gpg.format ssh) are verified".into());
    }
    let malformed = |e: &dyn std::fmt::Display| {
        format!("its SSH signature block is malformed ({e}; ssh-keygen refuses it too)")
    };
    let blob = dearmor(armored).map_err(|e| malformed(&e))?;
    parse_sshsig(&blob).map_err(|e| malformed(&e))
}

/// What a commit's signature says without any writers to check it against (`log` on a ledger
/// without writers, as `ssh-keygen -Y check-novalidate` judges it): the key's fingerprint when
/// the signature verifies with the key it carries, in namespace git, over the commit; why not
/// otherwise. `None` when unsigned.
pub fn self_verified(
    raw: &[u8],
    hash: gix::hash::Kind,
) -> Option<std::result::Result<String, String>> {
    let split = split(raw, hash);
    let armored = split.signature?;
    Some((|| {
        let sig = parse_block(&armored)?;
        let fpr = fingerprint(&sig.key);
        if sig.namespace != NAMESPACE.as_bytes() {
            return Err(format!(
                "its signature by key {fpr} is for namespace {:?}, not {NAMESPACE:?}",
                String::from_utf8_lossy(&sig.namespace)
            ));
        }
        verify_sshsig(&sig, &split.payload).map_err(|why| {
            format!("its signature by key {fpr} does not verify ({why}): the commit was changed after it was signed, or the signature was")
        })?;
        Ok(fpr)
    })())
}

/// `2026-11-29T10:00:00Z`.
///
/// The day count is turned into a date here (Howard Hinnant's `civil_from_days`), not by jiff
/// as `civil::unix_seconds` is: jiff's dates end at year 9999, and the time shown may be any
/// `i64` a commit carries (a forged one's, or one past a `valid-before` of `99991231Z`).
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
        return Err(Error::refused(
            crate::refusal::Reason::new(format!(
                "{WRITERS} is missing; the declaration names writers ({}), so every ledger commit holds them",
                pin.path
            ))
            .at(at)
        ));
    };
    if !is_regular(mode) {
        return Err(Error::refused(
            crate::refusal::Reason::new(not_regular(WRITERS, mode)).at(at),
        ));
    }
    if let Some(w) = known.writers.get() {
        if known.writers_blob.get() == Some(&blob) {
            return Ok(Some((blob, w.clone())));
        }
    }
    let bytes = read_blob_bounded_at(repo, blob, max_bytes, at, WRITERS)?;
    let got = crate::sha256_hex(&bytes);
    let want = pin.sha256.as_deref().unwrap_or_default();
    if got != want {
        return Err(Error::refused(
            crate::refusal::Reason::new(format!(
                "{WRITERS} hashes to {got}, but the declaration pins writers.sha256 {want} (the file's exact bytes never change)"
            ))
            .at(at)
        ));
    }
    let parsed = AllowedSigners::parse(&bytes)
        .map_err(|r| Error::refusal(r).context(WRITERS).context(at))?;
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
        return Err(Error::refused(
            crate::refusal::Reason::new(format!(
                "the file hashes to {got}, but the declaration pins writers.sha256 {want}"
            ))
            .at(&what),
        ));
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
        Err(why) => vec![why.within_around(crate::refusal::Rule::Admission(8)).at(at)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_header_and_its_continuation_lines_are_cut_out() {
        let raw = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n\nmsg\n gpgsig x\n";
        let s = split(raw, gix::hash::Kind::Sha1);
        assert_eq!(
            s.signature.as_deref(),
            Some(&b"-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n"[..])
        );
        assert_eq!(
            s.payload,
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nmsg\n gpgsig x\n"
        );
        // As Git's parse_buffer_signed_by_header: every other header starting with `gpgsig`
        // (the other hash's, `gpgsigx`, a bare `gpgsig`) is left out with its continuation
        // lines; another header's continuation lines stay.
        let both = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig-sha256 x\n y\ngpgsig a\ngpgsigx b\n c\ngpgsig\n d\nmergetag e\n f\n\nm\n";
        let s = split(both, gix::hash::Kind::Sha1);
        assert_eq!(s.signature.as_deref(), Some(&b"a\n"[..]));
        assert_eq!(
            s.payload,
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nmergetag e\n f\n\nm\n"
        );
        // The same header twice: Git appends the second to the first.
        let twice = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig a\nauthor x\ngpgsig b\n c\n\nm\n";
        let s = split(twice, gix::hash::Kind::Sha1);
        assert_eq!(s.signature.as_deref(), Some(&b"a\nb\nc\n"[..]));
        assert_eq!(
            s.payload,
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor x\n\nm\n"
        );
        // In a SHA-256 repository the own header is gpgsig-sha256 and gpgsig is the other's.
        let s = split(both, gix::hash::Kind::Sha1);
        assert!(s.signature.is_some());
    }

    #[test]
    fn the_armour_is_read_as_sshsig_dearmor_reads_it() {
        let ok = |t: &str| dearmor(t.as_bytes());
        assert_eq!(
            ok("-----BEGIN SSH SIGNATURE-----\nU1NI\n-----END SSH SIGNATURE-----\n"),
            Ok(b"SSH".to_vec())
        );
        // Whitespace anywhere in the base64, CRLF inside, text after the END marker: read.
        assert_eq!(
            ok("-----BEGIN SSH SIGNATURE-----\nU1\r\n N I\r\n-----END SSH SIGNATURE-----xyz"),
            Ok(b"SSH".to_vec())
        );
        // A CR after BEGIN, base64 on the BEGIN line, END not at a line start: refused.
        assert!(
            ok("-----BEGIN SSH SIGNATURE-----\r\nU1NI\n-----END SSH SIGNATURE-----\n").is_err()
        );
        assert!(ok("-----BEGIN SSH SIGNATURE-----U1NI\n-----END SSH SIGNATURE-----\n").is_err());
        assert!(ok("-----BEGIN SSH SIGNATURE-----\nU1NI-----END SSH SIGNATURE-----\n").is_err());
        assert!(ok("-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----\n").is_err());
        // b64_pton: padding complete, nothing but whitespace after it, zero slop bits.
        assert_eq!(b64_pton(b"U1M="), Some(b"SS".to_vec()));
        assert_eq!(b64_pton(b"Uw = = "), Some(b"S".to_vec()));
        assert_eq!(b64_pton(b"Uw="), None);
        assert_eq!(b64_pton(b"U1N="), None);
        assert_eq!(b64_pton(b"U1M=x"), None);
        assert_eq!(b64_pton(b"U1N"), None);
        assert_eq!(b64_pton(b"U1M*"), None);
        assert_eq!(b64_pton(b""), Some(Vec::new()));
        assert!(
            dearmor(b"-----BEGIN SSH SIGNATURE-----\nU1\0NI\n-----END SSH SIGNATURE-----").is_err()
        );
    }

    #[test]
    fn s_is_reduced_modulo_the_group_order() {
        let mut s = ED25519_L;
        reduce_s(&mut s);
        assert_eq!(s, [0; 32]);
        let mut s = ED25519_L;
        s[0] += 5;
        reduce_s(&mut s);
        let mut five = [0; 32];
        five[0] = 5;
        assert_eq!(s, five);
        let mut small = five;
        reduce_s(&mut small);
        assert_eq!(small, five);
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
        // A refusal is a sentence alone: rule 8 and the commit are its caller's.
        let why = |raw: &[u8], w: &AllowedSigners| check(raw, sha1, w).unwrap_err();
        let is = |s: String| Reason::new(s);
        // A reason about one line of the writers file names it as its place.
        let on_line = |n: usize, s: String| Reason::new(s).at(format!("writers line {n}"));
        let unsigned = split(&good, sha1).payload;
        assert_eq!(why(&unsigned, &w), is("it is not signed; a ledger with writers admits only commits signed by a declared writer (configure signing: `git config gpg.format ssh` and `git config user.signingKey <key>`)".into()));
        assert_eq!(
            why(&signed(KEY, "file", "c@x.org"), &w),
            is(format!("its signature by key {fpr} is for namespace \"file\", not \"git\" (commit signatures are made in namespace git)"))
        );
        let other = ssh_key::PrivateKey::from_openssh(OTHER).unwrap();
        let other = fingerprint(other.public_key().key_data());
        assert_ne!(other, fpr);
        assert_eq!(
            why(&signed(OTHER, "git", "c@x.org"), &w),
            is(format!("it is signed with key {other}, which is not a declared writer (the ledger's writers file does not list it)"))
        );
        let changed = String::from_utf8(good.clone())
            .unwrap()
            .replace("msg", "msh");
        assert_eq!(
            why(changed.as_bytes(), &w),
            is(format!("its signature by key {fpr} does not verify (the signature does not verify): the commit was changed after it was signed, or the signature was"))
        );
        assert_eq!(
            why(&signed(KEY, "git", "d@x.org"), &w),
            on_line(
                1,
                format!("key {fpr} is declared for c@x.org, not for the committer d@x.org")
            )
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
        assert_eq!(
            why(&good, &at("valid-after=\"20261129100001Z\"")),
            on_line(1, format!("key {fpr} is not yet valid at the committer time 2026-11-29T10:00:00Z (valid after 2026-11-29T10:00:01Z)"))
        );
        assert_eq!(
            why(&good, &at("valid-before=\"20261129095959Z\"")),
            on_line(1, format!("key {fpr} has expired at the committer time 2026-11-29T10:00:00Z (valid before 2026-11-29T09:59:59Z)"))
        );
        assert_eq!(
            why(&good, &at("namespaces=\"file\"")),
            on_line(
                1,
                format!(
                    "key {fpr} is not permitted to sign in namespace git (namespaces=\"file\")"
                )
            )
        );
        // A line that names the committer says why over one that names another principal.
        let both = writers(&format!(
            "d@x.org {PUBLIC}\nc@x.org valid-before=\"20260101Z\" {PUBLIC}\n"
        ));
        assert_eq!(
            why(&good, &both),
            on_line(2, format!("key {fpr} has expired at the committer time 2026-11-29T10:00:00Z (valid before 2026-01-01T00:00:00Z)"))
        );
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
        assert_eq!(
            why(broken.as_bytes(), &w),
            is(
                "its SSH signature block is malformed (invalid base64; ssh-keygen refuses it too)"
                    .into()
            )
        );
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
        assert_eq!(
            why(no_end.as_bytes(), &w),
            is("its SSH signature block is malformed (missing footer (a line starting -----END SSH SIGNATURE-----); ssh-keygen refuses it too)".into())
        );
    }

    #[test]
    fn times_show_as_utc() {
        assert_eq!(show_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(show_time(1_795_946_400), "2026-11-29T10:00:00Z");
        assert_eq!(show_time(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(show_time(253_402_300_800), "10000-01-01T00:00:00Z");
        assert_eq!(show_time(-1), "1969-12-31T23:59:59Z");
    }
}
