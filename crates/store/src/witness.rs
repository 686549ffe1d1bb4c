//! Witnesses (`docs/reference/witness.md`): tips anchored outside the authors' control.
//!
//! A witness audits a remote ([`crate::audit`]) and, for each ledger that passes, appends a
//! **checkpoint** to `refs/ledger-witness/<ledger id>` in its own repository: a commit whose
//! tree holds only `checkpoint.json` (`ledger-checkpoint/1`: the ledger, its declaration's
//! SHA-256, its root, its tip, its `Ledger-Filled` count), whose parent is the previous
//! checkpoint of that ledger, whose committer time is when the witness saw the tip, and which
//! is signed with the witness's SSH key as rule 8 signs ledger commits. A tip that does not
//! extend the previous checkpoint's tip is never checkpointed: that is a rewrite, reported.
//!
//! [`check`] is the reviewer's side (`verify --witness`, `audit --witness`): the witness's
//! checkpoints are fetched read-only, each must be signed by a key of the witness-signers file
//! (judged as rule 8 judges a ledger commit against its writers), they must form one chain
//! (one parent each, dated in order, one ledger, one declaration, one root, tips each
//! extending the previous), and the ledger's first-parent chain must contain the last
//! checkpointed tip. A ledger commit that follows a checkpointed tip but is dated before that
//! checkpoint is flagged (backdated): the witness saw the chain without it at that time.

use std::path::Path;

use gix::refs::transaction::PreviousValue;
use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Reasons, Result};
use crate::git::layout::{LedgerRefs, DEFAULT_PREFIX, FORGE_PREFIX};
use crate::git::transport;

/// Where a witness keeps its checkpoints: `refs/ledger-witness/<ledger id>`.
pub const WITNESS_PREFIX: &str = "refs/ledger-witness/";
/// Where a reviewer fetches a witness's checkpoints: `refs/ledger-witnessed/<key>/<id>`.
pub const WITNESSED_PREFIX: &str = "refs/ledger-witnessed/";
/// The one file of a checkpoint's tree.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";
/// Its format.
pub const FORMAT: &str = "ledger-checkpoint/1";

/// What a checkpoint says (`checkpoint.json`, canonical JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub format: String,
    pub ledger: String,
    /// The SHA-256 of the ledger's declaration (`campaign.json`).
    pub declaration: String,
    pub root: String,
    pub tip: String,
    /// `<k>/<n>`, the tip's `Ledger-Filled`.
    pub filled: String,
}

/// What `witness` did for one ledger.
#[derive(Debug, Serialize)]
pub struct Witnessed {
    pub id: String,
    pub tip: String,
    /// The witness's ref.
    #[serde(rename = "ref")]
    pub refname: String,
    /// `checkpointed`, `unchanged` (the last checkpoint is of this tip) or `refused`.
    pub status: &'static str,
    /// The checkpoint written (or the last one, when unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Why not, when refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The root of `tip`'s first-parent chain.
pub fn root_of(repo: &gix::Repository, tip: ObjectId) -> Result<ObjectId> {
    let mut at = tip;
    loop {
        match crate::git::objects::read_commit(repo, at)?.parents.first() {
            Some(p) => at = *p,
            None => return Ok(at),
        }
    }
}

/// The `k/n` of a message's `Ledger-Filled: k/n` trailer (empty when it has none).
fn filled_of(message: &str) -> String {
    (message.lines())
        .rev()
        .find_map(|l| l.strip_prefix("Ledger-Filled: "))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The checkpoint a witness would write for ledger `id` at `tip`.
pub fn checkpoint_of(
    repo: &gix::Repository,
    id: &str,
    tip: ObjectId,
    max_bytes: u64,
) -> Result<Checkpoint> {
    let decl = crate::git::read::declaration_bytes_at(repo, tip, max_bytes)?;
    let info = crate::git::objects::read_commit(repo, tip)?;
    Ok(Checkpoint {
        format: FORMAT.to_owned(),
        ledger: id.to_owned(),
        declaration: crate::sha256_hex(&decl),
        root: root_of(repo, tip)?.to_string(),
        tip: tip.to_string(),
        filled: filled_of(&info.message),
    })
}

/// The checkpoint commit `commit` holds: its tree must hold `checkpoint.json` alone, in the
/// format.
pub fn read_checkpoint(repo: &gix::Repository, commit: ObjectId) -> Result<Checkpoint> {
    let info = crate::git::objects::read_commit(repo, commit)?;
    let bad = |why: String| Error::refused(format!("checkpoint {commit}: {why}"));
    let tree = repo
        .find_tree(info.tree)
        .map_err(|e| bad(format!("its tree cannot be read: {e}")))?;
    let names: Vec<String> = (tree.iter())
        .filter_map(|e| e.ok().map(|e| e.filename().to_string()))
        .collect();
    if names != [CHECKPOINT_FILE] {
        return Err(bad(format!(
            "its tree holds {names:?}, not {CHECKPOINT_FILE} alone"
        )));
    }
    let bytes = crate::git::read_blob_bounded(repo, commit, CHECKPOINT_FILE, 1 << 16)?;
    let v =
        crate::json::parse_strict(&bytes).map_err(|e| bad(format!("{CHECKPOINT_FILE}: {e}")))?;
    let c: Checkpoint =
        serde_json::from_value(v).map_err(|e| bad(format!("{CHECKPOINT_FILE}: {e}")))?;
    if c.format != FORMAT {
        return Err(bad(format!(
            "{CHECKPOINT_FILE} is {:?}, not {FORMAT}",
            c.format
        )));
    }
    Ok(c)
}

/// A ledger an audit found: its id, its tip, and whether the audit passes it (admitted, its
/// declaration matching its pinned commit, no tip seen before rewritten).
pub struct Candidate {
    pub id: String,
    pub tip: ObjectId,
    pub passes: bool,
}

/// Append a checkpoint of every ledger that passed the audit to the witness's repository
/// `repo`. `ref_name` replaces `refs/ledger-witness/<id>` (one ledger only).
pub fn witness(
    repo: &gix::Repository,
    remote: &str,
    ledgers: &[Candidate],
    ref_name: Option<&str>,
    max_bytes: u64,
) -> Result<(Vec<Witnessed>, Reasons)> {
    if ref_name.is_some() && ledgers.len() > 1 {
        return Err(Error::Usage(format!(
            "--ref names one witness ref, but {remote} serves {} ledgers",
            ledgers.len()
        )));
    }
    if let Some(r) = ref_name {
        gix::refs::FullName::try_from(r)
            .map_err(|e| Error::Usage(format!("--ref {r}: not a full ref name ({e})")))?;
        if r.starts_with(DEFAULT_PREFIX) || r.starts_with(FORGE_PREFIX) || !r.starts_with("refs/") {
            return Err(Error::Usage(format!(
                "--ref {r}: a witness ref is a full ref name outside {DEFAULT_PREFIX} and {FORGE_PREFIX}"
            )));
        }
    }
    let refs = LedgerRefs::of(repo)?;
    let mut out = Vec::new();
    let mut reasons = Reasons::new();
    let mut signing = None;
    for l in ledgers {
        let refname = ref_name
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{WITNESS_PREFIX}{}", l.id));
        let mut result = Witnessed {
            id: l.id.clone(),
            tip: l.tip.to_string(),
            refname: refname.clone(),
            status: "refused",
            checkpoint: None,
            reason: None,
        };
        if !l.passes {
            result.reason = Some(format!("{}@{}: the audit does not pass it", l.id, l.tip));
            out.push(result);
            continue;
        }
        let tip = l.tip;
        let new = checkpoint_of(repo, &l.id, tip, max_bytes)?;
        let prev = crate::git::store::ref_target(repo, &refname)?;
        if let Some(prev) = prev {
            let last = read_checkpoint(repo, prev)?;
            let why = if last.ledger != new.ledger {
                Some(crate::refusal::Reason::new(format!(
                    "{refname} checkpoints ledger {}, not {}",
                    last.ledger, new.ledger
                )))
            } else if last.declaration != new.declaration || last.root != new.root {
                Some(crate::refusal::Reason::new(format!(
                    "rewritten: {}@{} has declaration {} and root {}, but the last checkpoint {prev} is of declaration {} and root {}",
                    l.id, l.tip, new.declaration, new.root, last.declaration, last.root
                )))
            } else {
                let last_tip = ObjectId::from_hex(last.tip.as_bytes())
                    .map_err(|e| Error::failed(format!("checkpoint {prev}: tip: {e}")))?;
                match crate::git::read::behind(repo, tip, last_tip)? {
                    Ok(0) => {
                        result.status = "unchanged";
                        result.checkpoint = Some(prev.to_string());
                        out.push(result);
                        continue;
                    }
                    Ok(_) => None,
                    Err(mut why) => {
                        why.sentence.push_str(&format!(
                            " (the tip of the last checkpoint {prev}); a rewrite is never checkpointed"
                        ));
                        Some(why)
                    }
                }
            };
            if let Some(why) = why {
                result.reason = Some(why.to_string());
                reasons.push(why.at(format!("{} on {remote}", refs.name(&l.id))));
                out.push(result);
                continue;
            }
        }
        if signing.is_none() {
            signing = Some(
                crate::git::sign::config(repo, true)
                    .map_err(|e| e.context("a checkpoint is signed with the witness's SSH key"))?,
            );
        }
        let id = write(repo, &new, prev, signing.as_ref().and_then(Option::as_ref))?;
        let expected = match prev {
            Some(p) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(p)),
            None => PreviousValue::MustNotExist,
        };
        crate::git::store::move_tracking_ref(
            repo,
            &refname,
            expected,
            id,
            &format!("ledger witness: checkpoint {}@{}", l.id, l.tip),
        )
        .map_err(|e| match e {
            crate::store::WriteError::Moved => Error::failed(format!(
                "{refname} moved while the checkpoint was written (another witness run); run it again"
            )),
            crate::store::WriteError::Other(e) | crate::store::WriteError::Locked(e) => e,
        })?;
        result.status = "checkpointed";
        result.checkpoint = Some(id.to_string());
        out.push(result);
    }
    Ok((out, reasons))
}

/// Write the checkpoint commit (signed), its parent `prev`; no ref moves.
fn write(
    repo: &gix::Repository,
    c: &Checkpoint,
    prev: Option<ObjectId>,
    signing: Option<&crate::git::sign::Signing>,
) -> Result<ObjectId> {
    use gix::objs::Kind;
    let blob = crate::git::objects::write_object(repo, Kind::Blob, &crate::json::canonical(c))?;
    let mut tree = format!("100644 {CHECKPOINT_FILE}\0").into_bytes();
    tree.extend_from_slice(blob.as_bytes());
    let tree = crate::git::objects::write_object(repo, Kind::Tree, &tree)?;
    let committer = crate::git::store::identity(repo)?;
    let message = format!(
        "Checkpoint {}@{}\n\nFilled {}; root {}; declaration sha256 {}.\n",
        c.ledger, c.tip, c.filled, c.root, c.declaration
    );
    crate::git::sign::write_commit(
        repo,
        committer,
        committer,
        &message,
        tree,
        prev.into_iter().collect(),
        signing,
    )
}

/// What a witness says about one ledger, as a reviewer checks it.
#[derive(Debug, Serialize)]
pub struct WitnessCheck {
    /// The witness as given, and the URL fetched.
    pub witness: String,
    pub url: String,
    /// Its checkpoints of the ledger, oldest first.
    pub checkpoints: Vec<CheckpointSeen>,
    /// The signers (principals) of the checkpoints, sorted.
    pub signed_by: Vec<String>,
    /// How many commits the ledger's tip is past the last checkpointed tip (when its chain
    /// contains it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behind_last: Option<usize>,
    /// Ledger commits that follow a checkpointed tip but are dated before that checkpoint.
    pub backdated: Vec<Backdated>,
    /// Whether the witness's checkpoints vouch for the ledger.
    pub ok: bool,
}

/// One checkpoint as read.
#[derive(Debug, Serialize)]
pub struct CheckpointSeen {
    pub commit: String,
    pub tip: String,
    /// The committer time, `YYYY-MM-DDTHH:MM:SSZ`.
    pub time: String,
}

/// A ledger commit dated before a checkpoint it follows.
#[derive(Debug, Serialize)]
pub struct Backdated {
    pub commit: String,
    pub time: String,
    pub checkpoint: String,
    pub checkpoint_time: String,
}

/// What [`check`] found: one check per ledger asked about, the refusals, and the ledgers the
/// witness checkpointed that were not asked about (id, last checkpointed tip).
pub type Checked = (Vec<WitnessCheck>, Reasons, Vec<(String, String)>);

/// The witness's signers file: an allowed-signers file, as `gpg.ssh.allowedSignersFile`.
pub fn read_signers(path: &Path) -> Result<crate::git::allowed_signers::AllowedSigners> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::Usage(format!(
            "--witness-signers {}: cannot read it: {e}",
            path.display()
        ))
    })?;
    crate::git::allowed_signers::AllowedSigners::parse(&bytes)
        .map_err(|r| Error::refusal(r).context(format!("--witness-signers {}", path.display())))
}

/// Fetch the checkpoints of `witness` (a remote, URL or path) into
/// `refs/ledger-witnessed/<key>/`, read-only, and check each ledger `(id, tip)` against them.
/// The reasons are refusals (`ok` false); the backdated commits are flags. Also returned: the
/// ledgers the witness checkpointed that are not among `ledgers` (id, last checkpointed tip).
pub fn check(
    dir: &Path,
    witness: &str,
    signers_path: &Path,
    ledgers: &[(String, ObjectId)],
    max_bytes: u64,
) -> Result<Checked> {
    let signers = read_signers(signers_path)?;
    transport::check_version(dir)?;
    let url = transport::url_of(dir, witness)?;
    let ns = format!("{WITNESSED_PREFIX}{}/", transport::key_of(&url));
    let spec = format!("+{WITNESS_PREFIX}*:{ns}*");
    transport::fetch_read_only(dir, &url, &[spec.as_str()], true)?;
    let repo = crate::git::open(Some(dir))?;
    let refs = LedgerRefs::of(&repo)?;
    let mut out = Vec::new();
    let mut reasons = Reasons::new();
    for (id, tip) in ledgers {
        let mut one = Reasons::new();
        let c = check_one(
            &repo, witness, &url, &ns, &signers, id, *tip, max_bytes, &mut one,
        )?;
        reasons.absorb(one.at(format!("{}, witness {witness}", refs.name(id))));
        out.push(c);
    }
    let mut others = Vec::new();
    let platform = repo
        .references()
        .map_err(|e| Error::failed(format!("cannot list {ns}*: {e}")))?;
    for r in (platform.prefixed(ns.as_str()))
        .map_err(|e| Error::failed(format!("cannot list {ns}*: {e}")))?
        .flatten()
    {
        let id = r.name().as_bstr().to_string()[ns.len()..].to_owned();
        if ledgers.iter().any(|(l, _)| *l == id) {
            continue;
        }
        if let Some(c) = r.target().try_id() {
            let tip = read_checkpoint(&repo, c.to_owned())
                .map(|c| c.tip)
                .unwrap_or_default();
            others.push((id, tip));
        }
    }
    others.sort();
    Ok((out, reasons, others))
}

#[allow(clippy::too_many_arguments)]
fn check_one(
    repo: &gix::Repository,
    witness: &str,
    url: &str,
    ns: &str,
    signers: &crate::git::allowed_signers::AllowedSigners,
    id: &str,
    tip: ObjectId,
    max_bytes: u64,
    reasons: &mut Reasons,
) -> Result<WitnessCheck> {
    let hash = repo.object_hash();
    let show = crate::git::signature::show_time;
    let mut result = WitnessCheck {
        witness: witness.to_owned(),
        url: url.to_owned(),
        checkpoints: Vec::new(),
        signed_by: Vec::new(),
        behind_last: None,
        backdated: Vec::new(),
        ok: false,
    };
    let Some(last) = crate::git::store::ref_target(repo, &format!("{ns}{id}"))? else {
        reasons.push(format!(
            "the witness {witness} holds no checkpoint of {id} ({WITNESS_PREFIX}{id}), so it vouches for no tip of it"
        ));
        return Ok(result);
    };
    let before = reasons.len();
    // The checkpoint chain, newest first, then reversed.
    let mut chain: Vec<(ObjectId, i64, Checkpoint)> = Vec::new();
    let mut at = Some(last);
    while let Some(c) = at {
        let info = crate::git::objects::read_commit(repo, c)?;
        let raw = repo
            .find_object(c)
            .map_err(|e| Error::failed(format!("cannot read checkpoint {c}: {e}")))?
            .data
            .clone();
        if crate::git::signature::split(&raw, hash).signature.is_none() {
            reasons.push(format!(
                "checkpoint {c} is not signed: a checkpoint is the witness's signed statement"
            ));
        } else {
            match crate::git::signature::check(&raw, hash, signers) {
                Ok(s) => {
                    if !result.signed_by.contains(&s.principal) {
                        result.signed_by.push(s.principal);
                    }
                }
                // Rule 8's check, on a witness's checkpoint: no rule of the ledger is broken.
                Err(mut why) => {
                    why.sentence = format!(
                        "judged against the witness-signers file as rule 8 judges a ledger commit against its writers: {}",
                        why.sentence
                    );
                    reasons.push(why.at(format!("checkpoint {c}")))
                }
            }
        }
        if info.parents.len() > 1 {
            reasons.push(format!(
                "the checkpoints are not one chain: checkpoint {c} has {} parents",
                info.parents.len()
            ));
        }
        match read_checkpoint(repo, c) {
            Ok(cp) => chain.push((c, info.committer_time.0, cp)),
            Err(Error::Refused(r)) => reasons.absorb(r),
            Err(e) => return Err(e),
        }
        at = info.parents.first().copied();
    }
    chain.reverse();
    result.signed_by.sort();
    // The ledger's own chain, root first.
    let mut ledger_chain = Vec::new();
    let mut c = Some(tip);
    while let Some(id) = c {
        let info = crate::git::objects::read_commit(repo, id)?;
        c = info.parents.first().copied();
        ledger_chain.push((id, info.committer_time.0));
    }
    ledger_chain.reverse();
    let pos = |t: &str| {
        ObjectId::from_hex(t.as_bytes())
            .ok()
            .and_then(|t| ledger_chain.iter().position(|(c, _)| *c == t))
    };
    let mine = checkpoint_of(repo, id, tip, max_bytes)?;
    let mut previous: Option<(usize, &ObjectId)> = None;
    let mut bounds: Vec<(usize, i64, ObjectId)> = Vec::new();
    for (i, (c, time, cp)) in chain.iter().enumerate() {
        result.checkpoints.push(CheckpointSeen {
            commit: c.to_string(),
            tip: cp.tip.clone(),
            time: show(*time),
        });
        if cp.ledger != id || cp.declaration != mine.declaration || cp.root != mine.root {
            reasons.push(format!(
                "checkpoint {c} is of ledger {} (declaration sha256 {}, root {}), but {id} has declaration sha256 {} and root {}: the ledger was rewritten from another root or declaration",
                cp.ledger, cp.declaration, cp.root, mine.declaration, mine.root
            ));
        }
        if i > 0 && *time < chain[i - 1].1 {
            reasons.push(format!(
                "the checkpoints are not one chain: checkpoint {c} is dated {}, before its parent {} ({})",
                show(*time),
                chain[i - 1].0,
                show(chain[i - 1].1)
            ));
        }
        let last = i + 1 == chain.len();
        match pos(&cp.tip) {
            Some(p) => {
                if let Some((q, pc)) = previous {
                    if p < q {
                        reasons.push(format!(
                            "the checkpoints are not one chain: checkpoint {c}'s tip {} does not extend the tip of checkpoint {pc} before it",
                            cp.tip
                        ));
                    }
                }
                previous = Some((p, c));
                bounds.push((p, *time, *c));
                if last {
                    result.behind_last = Some(ledger_chain.len() - 1 - p);
                }
            }
            None if last => {
                let held = ObjectId::from_hex(cp.tip.as_bytes()).is_ok_and(|t| repo.has_object(t));
                reasons.push(format!(
                    "rewritten since {}: the witness {witness} checkpointed it at {} (checkpoint {c}), and the ledger's first-parent chain from {tip} no longer contains it{}",
                    cp.tip,
                    show(*time),
                    if held { "" } else { " (nor is it in the served history)" }
                ));
            }
            None => {
                // An earlier checkpointed tip off the chain, while a later one is on it.
                reasons.push(format!(
                    "the checkpoints are not one chain: checkpoint {c}'s tip {} is not on the chain the last checkpointed tip is on",
                    cp.tip
                ));
            }
        }
    }
    // Backdated: each commit after a checkpointed tip, against the latest checkpoint it
    // follows.
    for (p, (commit, time)) in ledger_chain.iter().enumerate() {
        if let Some((_, ct, cc)) = bounds.iter().rev().find(|(bp, _, _)| *bp < p) {
            if time < ct {
                result.backdated.push(Backdated {
                    commit: commit.to_string(),
                    time: show(*time),
                    checkpoint: cc.to_string(),
                    checkpoint_time: show(*ct),
                });
            }
        }
    }
    result.ok = reasons.len() == before;
    Ok(result)
}

impl WitnessCheck {
    /// What a reviewer quotes about the witness.
    pub fn line(&self) -> String {
        let n = self.checkpoints.len();
        let mut s = match (self.ok, self.checkpoints.last()) {
            (true, Some(last)) => format!(
                "witnessed by {}: {n} checkpoint{} signed by {}; the last, of {} at {}, is on its chain{}",
                self.witness,
                if n == 1 { "" } else { "s" },
                self.signed_by.join(", "),
                last.tip,
                last.time,
                match self.behind_last {
                    Some(0) | None => " (its tip)".to_owned(),
                    Some(k) => format!(" ({k} commit{} before its tip)", if k == 1 { "" } else { "s" }),
                }
            ),
            (false, _) => format!("NOT VOUCHED FOR by the witness {}", self.witness),
            (true, None) => format!("no checkpoint by {}", self.witness),
        };
        for b in &self.backdated {
            s.push_str(&format!(
                "; commit {} dated {} follows checkpoint {} of {} yet is dated before it (backdated)",
                &b.commit[..12],
                b.time,
                &b.checkpoint[..12],
                b.checkpoint_time
            ));
        }
        s
    }
}
