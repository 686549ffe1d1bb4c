//! `audit` (`docs/reference/witness.md`): a reviewer's read-only check of every ledger a remote serves.
//!
//! The remote's `refs/ledgers/*`, `refs/replace/*` and `refs/notes/*` are fetched (forced, by
//! URL, with the local hooks off) into `refs/ledger-audit/<key>/…`, a namespace no other
//! command reads; nothing is pushed, no ref under `refs/ledgers/` moves. Each ledger found is
//! verified root to tip by the admission validator, its declaration checked against its pinned
//! commit (fetched when the remote serves it), and the replace refs and notes that would change
//! what `git log` shows of it named. Every tip seen is remembered per remote URL (trust on
//! first use, [`seen`]), so a later audit reports a ledger rewritten, deleted or new.

pub mod seen;

use std::path::Path;

use gix::ObjectId;
use serde::Serialize;

use crate::error::{Error, Reasons, Result};
use crate::git::layout::LedgerRefs;
use crate::git::transport;
use crate::refusal::Reason;

/// The namespace of the refs an audit fetches.
pub const AUDIT_PREFIX: &str = "refs/ledger-audit/";

/// What an audit is asked.
pub struct Options {
    /// Tips a reviewer holds (a paper's citations): `(declaration id, tip)`; the id may be
    /// omitted when the remote serves one ledger.
    pub expect: Vec<crate::git::read::ExpectTip>,
    pub max_bytes: u64,
    /// Seconds since the epoch: when the tips were seen.
    pub now: i64,
    /// `--witness W --witness-signers FILE`: check every ledger against W's checkpoints.
    pub witness: Option<(String, std::path::PathBuf)>,
}

/// An audit's findings, printed as one line per ledger or as JSON.
#[derive(Debug, Serialize)]
pub struct Audit {
    /// The remote as given, and the URL it was fetched from.
    pub remote: String,
    pub url: String,
    /// Where its refs were fetched: `refs/ledger-audit/<key>/`.
    pub namespace: String,
    pub ledgers: Vec<LedgerAudit>,
    /// Ledgers an earlier audit of this URL saw that the remote no longer serves.
    pub deleted: Vec<Deleted>,
    /// With `--witness`: ledgers the witness checkpointed that the remote does not serve (a
    /// flag, not a refusal: a witness watches many servers), with the last checkpointed tip.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub witnessed_not_served: Vec<Deleted>,
    /// Each replace ref and note the remote serves that changes what `git log` shows of a
    /// ledger, as a reason placed at it (`<ref> on <remote>`).
    pub shown_otherwise: Vec<Reason>,
    /// Every ledger verifies, every declaration checks, nothing known was rewritten or deleted.
    pub ok: bool,
    /// Every reason `ok` is false, as refusal reasons.
    #[serde(skip)]
    pub reasons: Reasons,
}

/// One ledger the remote serves.
#[derive(Debug, Serialize)]
pub struct LedgerAudit {
    pub id: String,
    /// The ref on the remote (`refs/ledgers/<id>`).
    #[serde(rename = "ref")]
    pub refname: String,
    pub tip: String,
    /// `<id>@<tip>`, as a paper cites it.
    pub citation: String,
    pub admitted: bool,
    /// How many commits were admitted, root to tip (when `admitted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<usize>,
    /// Why the chain is not admitted: every reason, as a value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<Reason>,
    /// The declared writers that signed its commits (when the declaration names writers).
    pub signature: Signature,
    pub declaration: DeclarationCheck,
    /// `new` (first seen from this URL), `extends` (every tip seen before is on its chain) or
    /// `rewritten` (a tip seen before, or an expected one, is not).
    pub history: &'static str,
    /// The tips seen or expected before that it extends, with how many commits it is past each.
    pub extends: Vec<Extends>,
    /// The tips seen or expected before that its chain no longer contains.
    pub rewritten: Vec<String>,
    /// Commits dated before their parent (a flag, not a refusal: clocks differ).
    pub dated_before_parent: Vec<String>,
    /// What the witness says of it (`--witness`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<crate::witness::WitnessCheck>,
}

/// Who signed a ledger's commits.
#[derive(Debug, Serialize)]
pub struct Signature {
    /// Whether the declaration names writers (rule 8 applies).
    pub writers: bool,
    /// The declared writers' principals that signed at least one commit, sorted.
    pub signed_by: Vec<String>,
}

/// A declaration checked against its pinned commit (`check`).
#[derive(Debug, Serialize)]
pub struct DeclarationCheck {
    pub sha256: String,
    pub source_revision: String,
    /// `matches`, `differs`, or `not served` (the remote does not serve the pinned commit).
    pub status: &'static str,
    /// Why it does not match (or cannot be checked): every reason, as a value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
}

/// A tip seen (or expected) before that the served tip extends.
#[derive(Debug, Serialize)]
pub struct Extends {
    pub tip: String,
    pub behind: usize,
    /// `seen` (an earlier audit) or `expected` (`--expect-tip`).
    pub from: &'static str,
}

/// A ledger an earlier audit saw that the remote no longer serves.
#[derive(Debug, Serialize)]
pub struct Deleted {
    pub id: String,
    pub last_tip: String,
}

/// Seconds since the epoch now: when the tips an audit sees were seen.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `git ledger audit`: audit `remote` from the repository at `repo` (default: discovered),
/// each of `expect_tip` (`ID@TIP | TIP`, as given) held to its ledger's chain, and with
/// `witness` (`--witness W --witness-signers FILE`) every ledger checked against W's
/// checkpoints. Returns the repository's directory (for [`other_prefix_hint`]) and the audit.
pub fn audit_in(
    repo: Option<&Path>,
    remote: &str,
    expect_tip: &[String],
    witness: Option<(String, std::path::PathBuf)>,
    max_bytes: u64,
) -> Result<(std::path::PathBuf, Audit)> {
    let repo = crate::git::open(repo)?;
    let expect = (expect_tip.iter())
        .map(|a| crate::git::read::parse_expect_tip(&repo, a))
        .collect::<Result<Vec<_>>>()?;
    let dir = transport::repo_dir(&repo)?;
    drop(repo);
    let options = Options {
        expect,
        max_bytes,
        now: now(),
        witness,
    };
    let audit = audit(&dir, remote, &options)?;
    Ok((dir, audit))
}

/// `git ledger witness`: [`witness`] from the repository at `repo` (default: discovered);
/// `audited` is given the repository's directory (for [`other_prefix_hint`]) with the audit.
pub fn witness_in(
    repo: Option<&Path>,
    remote: &str,
    ref_name: Option<&str>,
    max_bytes: u64,
    audited: &mut dyn FnMut(&Path, &Audit) -> Result<()>,
) -> Result<(Vec<crate::witness::Witnessed>, Reasons)> {
    let repo = crate::git::open(repo)?;
    let dir = transport::repo_dir(&repo)?;
    drop(repo);
    let options = Options {
        expect: Vec::new(),
        max_bytes,
        now: now(),
        witness: None,
    };
    witness(&dir, remote, ref_name, &options, &mut |a| audited(&dir, a))
}

/// Run the audit of `remote` from the repository at `dir`.
pub fn audit(dir: &Path, remote: &str, options: &Options) -> Result<Audit> {
    transport::check_version(dir)?;
    let url = transport::url_of(dir, remote)?;
    let key = transport::key_of(&url);
    let ns = format!("{AUDIT_PREFIX}{key}/");
    // The ledgers are read under this repository's ledger.refPrefix (refs/ledgers/, or
    // refs/heads/ledgers/ for a ledger kept on a forge's branches).
    let prefix = LedgerRefs::of(&crate::git::open(Some(dir))?)?
        .prefix()
        .to_owned();
    let specs = [
        format!("+{prefix}*:{ns}ledgers/*"),
        format!("+refs/replace/*:{ns}replace/*"),
        format!("+refs/notes/*:{ns}notes/*"),
    ];
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    transport::fetch_read_only(dir, &url, &specs, true)?;
    let repo = crate::git::open(Some(dir))?;
    let served = listed(&repo, &format!("{ns}ledgers/"))?;
    let mut seen = seen::Seen::load(&repo, &url)?;
    let mut reasons = Reasons::new();
    let mut ledgers = Vec::new();
    // Ledger ids, on the remote and locally: (remote ref, local audit ref, tip).
    let refs: Vec<(String, String, ObjectId)> = served
        .into_iter()
        .map(|(local, tip)| {
            let id = local[ns.len() + "ledgers/".len()..].to_owned();
            (format!("{prefix}{id}"), local, tip)
        })
        .collect();
    // Expected tips: each must name one served ledger (or there is only one).
    let mut expected: Vec<(String, ObjectId)> = Vec::new();
    for e in &options.expect {
        let id = match (&e.id, refs.len()) {
            (Some(id), _) => id.clone(),
            (None, 1) => refs[0].0[prefix.len()..].to_owned(),
            (None, _) => {
                return Err(Error::Usage(format!(
                    "--expect-tip {}: {remote} serves {} ledgers; say which, as <declaration id>@<full commit id>",
                    e.tip,
                    refs.len()
                )))
            }
        };
        expected.push((id, e.tip));
    }
    for (remote_ref, _local, tip) in &refs {
        let id = remote_ref[prefix.len()..].to_owned();
        let mut one = Reasons::new();
        let l = ledger(
            dir,
            &repo,
            &url,
            &ns,
            &id,
            remote_ref,
            *tip,
            &seen,
            &expected,
            options.max_bytes,
            &mut one,
        )?;
        reasons.absorb(one.at(format!("{remote_ref} on {remote}")));
        ledgers.push(l);
    }
    // What an earlier audit saw that is gone, and expected tips of ledgers not served.
    let mut deleted = Vec::new();
    for (id, tips) in seen.ledgers() {
        if !refs.iter().any(|(r, _, _)| r[prefix.len()..] == *id) {
            let last = tips.last().cloned().unwrap_or_default();
            reasons.push(
                crate::refusal::Reason::new(format!(
                    "deleted: {remote} no longer serves {prefix}{id}, which an earlier audit of {url} saw at {last}"
                ))
                .at(format!("{prefix}{id} on {remote}")),
            );
            deleted.push(Deleted {
                id: id.clone(),
                last_tip: last,
            });
        }
    }
    for (id, tip) in &expected {
        if !refs.iter().any(|(r, _, _)| r[prefix.len()..] == *id) {
            reasons.push(
                crate::refusal::Reason::new(format!(
                    "rewritten since {tip}: {remote} does not serve {prefix}{id} (deleted, or never published there)"
                ))
                .at(format!("{prefix}{id} on {remote}")),
            );
        }
    }
    // Replace refs and notes the remote serves that cover ledger objects.
    let hash = repo.object_hash();
    let replace: Vec<(String, ObjectId)> = listed(&repo, &format!("{ns}replace/"))?
        .into_iter()
        .filter_map(|(local, _)| {
            let name = format!("refs/replace/{}", &local[ns.len() + "replace/".len()..]);
            crate::git::replace::replaced(&name, hash).map(|id| (name, id))
        })
        .collect();
    let notes: Vec<(String, ObjectId)> = listed(&repo, &format!("{ns}notes/"))?
        .into_iter()
        .map(|(local, tip)| {
            (
                format!("refs/notes/{}", &local[ns.len() + "notes/".len()..]),
                tip,
            )
        })
        .collect();
    let tips: Vec<(String, ObjectId)> = refs.iter().map(|(r, _, t)| (r.clone(), *t)).collect();
    let mut shown_otherwise = Vec::new();
    for s in crate::git::replace::find_shown_otherwise(&repo, &tips, replace, notes)? {
        let sentence = if s.note {
            format!(
                "it holds a note on {} {} of {}, which `git log` shows under its message as if it were part of what was admitted",
                s.kind, s.id, s.ledger
            )
        } else {
            format!(
                "it replaces {} {} of {}, so `git log`, `git show` and a mirror clone show another object there than the one admitted",
                s.kind, s.id, s.ledger
            )
        };
        let why = Reason::new(sentence).at(format!("{} on {remote}", s.name));
        reasons.push(why.clone());
        shown_otherwise.push(why);
    }
    let mut witnessed_not_served = Vec::new();
    if let Some((witness, signers)) = &options.witness {
        let served: Vec<(String, ObjectId)> = (refs.iter())
            .map(|(r, _, t)| (r[prefix.len()..].to_owned(), *t))
            .collect();
        let (checks, why, others) =
            crate::witness::check(dir, witness, signers, &served, options.max_bytes)?;
        reasons.absorb(why);
        witnessed_not_served = (others.into_iter())
            .map(|(id, last_tip)| Deleted { id, last_tip })
            .collect();
        for (l, c) in ledgers.iter_mut().zip(checks) {
            l.witness = Some(c);
        }
    }
    for (remote_ref, _, tip) in &refs {
        seen.add(&remote_ref[prefix.len()..], *tip, options.now);
    }
    seen.store(&repo)?;
    Ok(Audit {
        remote: remote.to_owned(),
        url,
        namespace: ns,
        ledgers,
        deleted,
        witnessed_not_served,
        shown_otherwise,
        ok: reasons.is_empty(),
        reasons,
    })
}

/// `witness`: audit `remote` from the repository at `dir` (no expected tips, no witness
/// check), then append a checkpoint of every ledger that passes to that repository
/// ([`crate::witness::witness`]; `ref_name` replaces `refs/ledger-witness/<id>`). `audited`
/// is given the audit before any checkpoint is written, so that what it prints comes first
/// even when the witness then fails. Returns the checkpoints and every reason of both.
pub fn witness(
    dir: &Path,
    remote: &str,
    ref_name: Option<&str>,
    options: &Options,
    audited: &mut dyn FnMut(&Audit) -> Result<()>,
) -> Result<(Vec<crate::witness::Witnessed>, Reasons)> {
    let audit = audit(dir, remote, options)?;
    audited(&audit)?;
    let candidates: Vec<crate::witness::Candidate> = (audit.ledgers.iter())
        .map(|l| {
            Ok(crate::witness::Candidate {
                id: l.id.clone(),
                tip: ObjectId::from_hex(l.tip.as_bytes())
                    .map_err(|e| Error::failed(format!("tip {}: {e}", l.tip)))?,
                passes: l.passes(),
            })
        })
        .collect::<Result<_>>()?;
    let repo = crate::git::open(Some(dir))?;
    let (written, why) = crate::witness::witness(
        &repo,
        &audit.remote,
        &candidates,
        ref_name,
        options.max_bytes,
    )?;
    let mut reasons = audit.reasons;
    reasons.absorb(why);
    Ok((written, reasons))
}

/// One served ledger audited: its chain, signers, declaration and what it extends.
#[allow(clippy::too_many_arguments)]
fn ledger(
    dir: &Path,
    repo: &gix::Repository,
    url: &str,
    ns: &str,
    id: &str,
    remote_ref: &str,
    tip: ObjectId,
    seen: &seen::Seen,
    expected: &[(String, ObjectId)],
    max_bytes: u64,
    reasons: &mut Reasons,
) -> Result<LedgerAudit> {
    let mut admission = crate::git::admit::Admission::new(repo, max_bytes).without_cache();
    let (admitted, commits, refused) = match admission.chain(Some(remote_ref), tip, &mut |_, _| {})
    {
        Ok(n) => (true, Some(n), Vec::new()),
        Err(Error::Refused(r)) => {
            let refused = r.reasons().to_vec();
            reasons.absorb(r);
            (false, None, refused)
        }
        Err(e) => return Err(e.context(remote_ref)),
    };
    // Signers and dates, from the history `log` reads (only of an admitted chain: its root
    // and declaration are sound).
    let mut signature = Signature {
        writers: false,
        signed_by: Vec::new(),
    };
    let mut dated_before_parent = Vec::new();
    if admitted {
        let h = crate::git::history::history(repo, tip)?;
        signature.writers = h.writers;
        for e in &h.entries {
            if let Some(p) = e.signer.as_ref().and_then(|s| s.principal.clone()) {
                if !signature.signed_by.contains(&p) {
                    signature.signed_by.push(p);
                }
            }
        }
        signature.signed_by.sort();
        dated_before_parent = backdated(repo, tip)?;
    }
    let declaration = check_declaration(dir, repo, url, ns, tip, max_bytes, reasons)?;
    // What it extends: every tip seen before and every expected one must be on its chain.
    let mut extends = Vec::new();
    let mut rewritten = Vec::new();
    let earlier: Vec<(ObjectId, &'static str)> = (seen.tips(id).iter())
        .filter_map(|t| ObjectId::from_hex(t.as_bytes()).ok())
        .map(|t| (t, "seen"))
        .chain(
            (expected.iter())
                .filter(|(e, _)| e == id)
                .map(|(_, t)| (*t, "expected")),
        )
        .collect();
    for (t, from) in &earlier {
        match crate::git::read::behind(repo, tip, *t)? {
            Ok(k) => extends.push(Extends {
                tip: t.to_string(),
                behind: k,
                from,
            }),
            Err(mut why) => {
                if *from == "seen" {
                    let saw = format!(" (an earlier audit of {url} saw {t} as its tip)");
                    why.sentence.push_str(&saw);
                }
                reasons.push(why);
                rewritten.push(t.to_string());
            }
        }
    }
    let history = if !rewritten.is_empty() {
        "rewritten"
    } else if seen.tips(id).is_empty() {
        "new"
    } else {
        "extends"
    };
    Ok(LedgerAudit {
        id: id.to_owned(),
        refname: remote_ref.to_owned(),
        tip: tip.to_string(),
        citation: format!("{id}@{tip}"),
        admitted,
        commits,
        refused,
        signature,
        declaration,
        history,
        extends,
        rewritten,
        dated_before_parent,
        witness: None,
    })
}

/// The commits of `tip`'s first-parent chain whose committer time is before their parent's.
pub fn backdated(repo: &gix::Repository, tip: ObjectId) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut info = crate::git::objects::read_commit(repo, tip)?;
    while let Some(&p) = info.parents.first() {
        let parent = crate::git::objects::read_commit(repo, p)?;
        if info.committer_time.0 < parent.committer_time.0 {
            out.push(info.id.to_string());
        }
        info = parent;
    }
    out.reverse();
    Ok(out)
}

/// The declaration of `tip` checked against its pinned commit, fetched from `url` when this
/// repository lacks it.
fn check_declaration(
    dir: &Path,
    repo: &gix::Repository,
    url: &str,
    ns: &str,
    tip: ObjectId,
    max_bytes: u64,
    reasons: &mut Reasons,
) -> Result<DeclarationCheck> {
    let info = crate::git::objects::read_commit(repo, tip)?;
    let at = format!("commit {tip}");
    let mut admission = crate::git::admit::Admission::new(repo, max_bytes).without_cache();
    let known = match admission.declaration_of_tree(info.tree, &at) {
        Ok(k) => k,
        Err(Error::Refused(r)) => {
            let why = r.reasons().to_vec();
            reasons.absorb(r);
            return Ok(DeclarationCheck {
                sha256: String::new(),
                source_revision: String::new(),
                status: "differs",
                reasons: why,
            });
        }
        Err(e) => return Err(e),
    };
    let decl = &known.decl;
    let rev = decl.source_revision.clone().unwrap_or_default();
    let mut check = DeclarationCheck {
        sha256: decl.sha256.clone(),
        source_revision: rev.clone(),
        status: "matches",
        reasons: Vec::new(),
    };
    let pinned = ObjectId::from_hex(rev.as_bytes()).ok();
    if pinned.is_some_and(|p| !repo.has_object(p)) {
        let spec = format!("{rev}:{ns}pinned/{rev}");
        let got = transport::fetch_read_only(dir, url, &[spec.as_str()], false).is_ok();
        // A server that serves no commit by its id (protocol v0 without
        // uploadpack.allowReachableSHA1InWant) may still serve it under a branch or tag.
        if !got {
            let heads = format!("+refs/heads/*:{ns}heads/*");
            let tags = format!("+refs/tags/*:{ns}tags/*");
            let _ = transport::fetch_read_only(dir, url, &[heads.as_str(), tags.as_str()], true);
        }
    }
    // A fresh handle sees what was just fetched.
    let fresh = crate::git::open(Some(dir))?;
    if pinned.is_none_or(|p| !fresh.has_object(p)) {
        let why = Reason::new(format!(
            "its pinned commit {rev} is not served by {url}, so its pins cannot be checked"
        ))
        .at(format!(
            "declaration {} (sha256 {})",
            decl.id,
            decl.short_hash()
        ));
        reasons.push(why.clone());
        check.status = "not served";
        check.reasons.push(why);
        return Ok(check);
    }
    match crate::git::pin::check(&fresh, decl, max_bytes) {
        Ok(_) => {}
        Err(Error::Refused(r)) => {
            let r = r.at(format!("declaration {} at {rev}", decl.id));
            check.status = "differs";
            check.reasons = r.reasons().to_vec();
            reasons.absorb(r);
        }
        Err(e) => return Err(e),
    }
    Ok(check)
}

/// The refs under `prefix` with the objects they point at, sorted by name.
fn listed(repo: &gix::Repository, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
    let fail = |e: &dyn std::fmt::Display| Error::failed(format!("cannot list {prefix}*: {e}"));
    let platform = repo.references().map_err(|e| fail(&e))?;
    let mut out = Vec::new();
    for r in platform.prefixed(prefix).map_err(|e| fail(&e))? {
        let mut r = r.map_err(|e| fail(&e))?;
        let name = r.name().as_bstr().to_string();
        if let Ok(id) = r.peel_to_id() {
            out.push((name, id.detach()));
        }
    }
    out.sort();
    Ok(out)
}

impl LedgerAudit {
    /// Whether a witness may checkpoint it: admitted, its declaration matching its pinned
    /// commit, no tip seen or expected before rewritten.
    pub fn passes(&self) -> bool {
        self.admitted && self.declaration.status == "matches" && self.rewritten.is_empty()
    }

    /// The line a reviewer quotes: the citation, the commits admitted, the signers, the
    /// declaration's check, what it extends.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        match self.commits {
            Some(n) => parts.push(format!(
                "{n} commit{} admitted",
                if n == 1 { "" } else { "s" }
            )),
            None => parts.push("NOT ADMITTED".to_owned()),
        }
        if self.admitted {
            parts.push(
                match (self.signature.writers, &self.signature.signed_by[..]) {
                    (true, who) => format!("signed by declared writers {}", who.join(", ")),
                    (false, _) => "unsigned (the declaration names no writers)".to_owned(),
                },
            );
        }
        parts.push(match self.declaration.status {
            "matches" => format!(
                "declaration {} matches commit {}",
                &self.declaration.sha256[..12.min(self.declaration.sha256.len())],
                self.declaration.source_revision
            ),
            "not served" => format!(
                "declaration not checked: commit {} is not served",
                self.declaration.source_revision
            ),
            _ => "declaration DIFFERS from its pinned commit".to_owned(),
        });
        parts.push(match self.history {
            "new" if self.extends.is_empty() => "new (first seen from this URL)".to_owned(),
            "rewritten" => format!("REWRITTEN since {}", self.rewritten.join(", ")),
            _ => {
                let last = self.extends.iter().min_by_key(|e| e.behind);
                match last {
                    Some(e) if e.behind == 0 => format!("unchanged since {}", e.tip),
                    Some(e) => format!(
                        "extends {} by {} commit{}",
                        e.tip,
                        e.behind,
                        if e.behind == 1 { "" } else { "s" }
                    ),
                    None => "new (first seen from this URL)".to_owned(),
                }
            }
        });
        if !self.dated_before_parent.is_empty() {
            parts.push(format!(
                "{} commit{} dated before {} parent ({})",
                self.dated_before_parent.len(),
                if self.dated_before_parent.len() == 1 {
                    ""
                } else {
                    "s"
                },
                if self.dated_before_parent.len() == 1 {
                    "its"
                } else {
                    "their"
                },
                self.dated_before_parent
                    .iter()
                    .map(|c| &c[..12])
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(w) = &self.witness {
            parts.push(w.line());
        }
        format!("{}: {}", self.citation, parts.join("; "))
    }
}

/// When `url` serves no ledger under this repository's `ledger.refPrefix` but does under the
/// other prefix git-ledger knows (`refs/ledgers/`, `refs/heads/ledgers/`), the line that says
/// so: a reviewer of a forge's repository who did not set the prefix would otherwise read
/// "serves no ledger" as a pass.
pub fn other_prefix_hint(dir: &std::path::Path, url: &str) -> Result<Option<String>> {
    use crate::git::layout::{LedgerRefs, DEFAULT_PREFIX, FORGE_PREFIX, KEY_PREFIX};
    let prefix = LedgerRefs::of(&crate::git::open(Some(dir))?)?
        .prefix()
        .to_owned();
    let other = if prefix == DEFAULT_PREFIX {
        FORGE_PREFIX
    } else {
        DEFAULT_PREFIX
    };
    let served = crate::git::transport::served(dir, url, other)?;
    Ok((!served.is_empty()).then(|| {
        format!(
            "{url} serves {} ref(s) under {other} (first: {}), and this repository reads ledgers under {prefix}; `git config {KEY_PREFIX} {other}` reads those",
            served.len(),
            served[0].0
        )
    }))
}
