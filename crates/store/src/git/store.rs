//! Ref mode: the ledger as the linear history of `refs/ledgers/<id>` (`docs/reference/layout.md`).
//!
//! [`RefStore`] implements [`Store`]: it reads one row by path (never the whole ledger), finds a
//! record by one path lookup under `records/`, and writes a change as one commit on the tip:
//! a tree edit that touches only the changed rows' paths and `records/`, a message with the
//! ledger trailers, the admission validator run on the new commit, and a compare-and-swap ref
//! update that fails with [`WriteError::Moved`] when another writer won, so that
//! [`crate::store::apply`] re-reads, re-checks and rebuilds.
//!
//! `Ledger-Filled: k/n` is computed without reading every row: k is the parent's `Ledger-Filled`
//! count plus the rows this commit fills, by [`super::message::change_message`], the function
//! whose parts admission rule 7 compares the message with. Only when the tip carries no usable
//! trailer (a commit written by other means) are its rows counted once, when the store is
//! opened; the write's admission then refuses it (rule 7 counts from the parent's message).
//!
//! [`init`] writes the root commit; [`resolve_ref`] turns `--ref` (or its absence) into a ref;
//! [`ledger_at`] assembles the ledger document of any ledger commit for `show` and `report`.

use std::path::Path;
use std::rc::Rc;

use gix::objs::{Kind, WriteTo};
use gix::refs::transaction::{Change as RefChange, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;
use gix::ObjectId;

use super::admit::{read_row, Admission, Admitted, Known};
use super::layout::{self, LedgerRefs, CAMPAIGN, HEADER};
/// Kept here too for the callers that know it as `git::store::write_object`.
pub(crate) use super::objects::write_object;
use super::objects::{find_in_tree, find_in_tree_of, is_regular, read_commit};
use super::tree::{read_object, KeptTrees, RecentTrees};
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::{Ledger, Row};
use crate::store::{Change, Store, WriteError};

mod checked;
pub use checked::admitted;
mod create;
pub use create::{init_at, use_branch_prefix, Initialized};

/// The hint Git gives when it knows no identity.
pub const IDENTITY_HINT: &str = "tell Git who you are: `git config user.name \"Your Name\"` and `git config user.email you@example.com` (add --global for every repository)";

/// Every ledger ref (`<ledger.refPrefix>*`, default `refs/ledgers/*`) with the commit it points
/// at, sorted by name. Refused when a declaration id has a ledger ref under two prefixes.
pub fn ledger_refs(repo: &gix::Repository) -> Result<Vec<(String, ObjectId)>> {
    let refs = LedgerRefs::checked(repo)?;
    let fail = |e: &dyn std::fmt::Display| Error::failed(format!("cannot list ledger refs: {e}"));
    let platform = repo.references().map_err(|e| fail(&e))?;
    let mut out = Vec::new();
    for r in platform.prefixed(refs.prefix()).map_err(|e| fail(&e))? {
        let r = r.map_err(|e| fail(&e))?;
        let name = r.name().as_bstr().to_string();
        match r.target().try_id() {
            Some(id) => out.push((name, id.to_owned())),
            None => {
                return Err(Error::refused(format!(
                    "{name} is a symbolic ref; a ledger ref points at a commit"
                )))
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The full ledger ref name an `--ref` argument spells (a full `<ledger.refPrefix>…` name or a
/// declaration id), whether or not the ref exists; any other ref is a usage error.
pub fn ledger_ref_name(refs: &LedgerRefs, a: &str) -> Result<String> {
    let prefix = refs.prefix();
    if let Some(why) = refs.misspelled(a) {
        let folds = |p: &str| a.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
        let n = if folds(prefix) {
            prefix.len()
        } else {
            layout::DEFAULT_PREFIX.len()
        };
        let id = a.get(n..).unwrap_or(a);
        return Err(Error::Usage(format!(
            "--ref {why}: give --ref {}",
            refs.name(id)
        )));
    }
    if a.as_bytes()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"refs/"))
    {
        if !refs.is_ledger_ref(a) {
            return Err(Error::Usage(format!(
                "{a} is not a ledger ref (a ledger ref is {prefix}<declaration id>, or give the declaration id)"
            )));
        }
        return Ok(a.to_owned());
    }
    Ok(refs.name(a))
}

/// The full name of the ledger ref `--ref` names (a full `<ledger.refPrefix>…` name or a
/// declaration id); without it, the only ledger ref. Several ledger refs and no `--ref` is a
/// usage error (exit 64) that lists them.
pub fn resolve_ref(repo: &gix::Repository, arg: Option<&str>) -> Result<(String, ObjectId)> {
    let refs = LedgerRefs::checked(repo)?;
    let prefix = refs.prefix();
    match arg {
        Some(a) => {
            let name = ledger_ref_name(&refs, a)?;
            let id = ref_target(repo, &name)?.ok_or_else(|| {
                Error::failed_with_hint(
                    format!("ledger ref {name} does not exist in this repository"),
                    "create it with `git ledger init <DECLARATION>`, or fetch it with `git ledger sync`",
                )
            })?;
            Ok((name, id))
        }
        None => {
            let mut refs = ledger_refs(repo)?;
            match refs.len() {
                0 if has_remote_ledgers(repo) => Err(Error::failed_with_hint(
                    format!("this repository has no ledger ref ({prefix}*), but a remote has some (refs/remotes/*/ledgers/*)"),
                    "bring them here with `git ledger sync`",
                )),
                0 => Err(Error::failed_with_hint(
                    format!("this repository has no ledger ref ({prefix}*)"),
                    "create one with `git ledger init <DECLARATION>`, fetch one with `git ledger sync`, or pass <DECLARATION> <LEDGER> for file mode",
                )),
                1 => Ok(refs.remove(0)),
                _ => Err(Error::SeveralLedgers(
                    refs.into_iter().map(|(n, _)| n).collect(),
                )),
            }
        }
    }
}

/// Whether any remote-tracking ledger ref (`refs/remotes/*/ledgers/*`) exists.
fn has_remote_ledgers(repo: &gix::Repository) -> bool {
    let Ok(platform) = repo.references() else {
        return false;
    };
    let Ok(iter) = platform.prefixed("refs/remotes/") else {
        return false;
    };
    iter.flatten()
        .any(|r| r.name().as_bstr().to_string().contains("/ledgers/"))
}

/// The commit a ref points at, or `None` when it does not exist.
pub fn ref_target(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    let r = repo
        .try_find_reference(name)
        .map_err(|e| Error::failed(format!("cannot read ref {name}: {e}")))?;
    match r {
        None => Ok(None),
        Some(r) => match r.target().try_id() {
            Some(id) => Ok(Some(id.to_owned())),
            None => Err(Error::refused(format!(
                "{name} is a symbolic ref; a ledger ref points at a commit"
            ))),
        },
    }
}

/// The identity a ledger commit is written by: the committer from Git's configuration and
/// environment, written as both author and committer (rule 7: one identity writes a ledger
/// commit; on a ledger with writers it is the signer's, rule 8). None is a failure with Git's
/// hint.
pub(crate) fn identity(repo: &gix::Repository) -> Result<gix::actor::SignatureRef<'_>> {
    signature(repo.committer(), "committer")
}

fn signature<'a>(
    s: Option<gix::Result<gix::actor::SignatureRef<'a>>>,
    who: &str,
) -> Result<gix::actor::SignatureRef<'a>> {
    match s {
        Some(Ok(s)) => Ok(s),
        Some(Err(e)) => Err(Error::failed(format!("{who} identity: {e}"))),
        None => Err(Error::failed_with_hint(
            format!(
                "{who} identity unknown: set user.name and user.email (or GIT_{0}_NAME and GIT_{0}_EMAIL)",
                who.to_uppercase()
            ),
            IDENTITY_HINT,
        )),
    }
}

/// Move the ledger ref `name` from `expected` to `new`, a commit admission admitted, with
/// compare-and-swap. This is the only way the tool moves a `refs/ledgers/*` ref.
pub(crate) fn move_ref(
    repo: &gix::Repository,
    name: &str,
    expected: PreviousValue,
    new: Admitted,
    message: &str,
) -> std::result::Result<(), WriteError> {
    edit_ref(repo, name, expected, new.id(), message)
}

/// Move `name`, a ref outside `refs/ledgers/` (a remote-tracking ref of ledgers), from
/// `expected` to `new` with compare-and-swap. A ledger ref is refused: it moves only through
/// [`move_ref`].
pub(crate) fn move_tracking_ref(
    repo: &gix::Repository,
    name: &str,
    expected: PreviousValue,
    new: ObjectId,
    message: &str,
) -> std::result::Result<(), WriteError> {
    let refs = LedgerRefs::of(repo).map_err(WriteError::Other)?;
    if refs.is_ledger_ref(name) || refs.folds(name) {
        return Err(WriteError::Other(Error::failed(format!(
            "{name} is a ledger ref; it moves only to a commit admission admitted"
        ))));
    }
    edit_ref(repo, name, expected, new, message)
}

/// Move `name` from `expected` to `new` with compare-and-swap.
fn edit_ref(
    repo: &gix::Repository,
    name: &str,
    expected: PreviousValue,
    new: ObjectId,
    message: &str,
) -> std::result::Result<(), WriteError> {
    let edit = RefEdit {
        change: RefChange::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected,
            new: Target::Object(new),
        },
        name: name
            .try_into()
            .map_err(|e| Error::failed(format!("invalid ref name {name}: {e}")))?,
        deref: false,
    };
    match repo.edit_reference(edit) {
        Ok(_) => Ok(()),
        Err(e) => match e.dominant_class() {
            // The ref no longer has the expected value: another writer won.
            Some(gix::error::Class::Conflict) => Err(WriteError::Moved),
            // Its lock file is held (gix waited `core.filesRefLockTimeout`): a writer is busy
            // with it, or a process killed while holding it left the file behind.
            Some(gix::error::Class::Retryable) => {
                let lock = repo.common_dir().join(format!("{name}.lock"));
                Err(WriteError::Locked(Error::failed_with_hint(
                    format!("cannot update {name}: its lock file {} exists", lock.display()),
                    format!(
                        "another git process seems to be running in this repository; if none is, a killed one left the lock behind: remove {} and try again",
                        lock.display()
                    ),
                )))
            }
            _ => Err(WriteError::Other(Error::failed(format!(
                "cannot update {name}: {e}"
            )))),
        },
    }
}

/// `git ledger init`: create `refs/ledgers/<id>` with the root commit (the declaration, the
/// header, every template row). Refused when the ref exists. Returns the ref name and commit.
pub fn init(repo: &gix::Repository, decl: &Declaration) -> Result<(String, ObjectId)> {
    let name = LedgerRefs::checked(repo)?.name(&decl.id);
    gix::refs::FullName::try_from(name.as_str()).map_err(|e| {
        Error::refused(format!(
            "declaration id {:?} cannot name a ref ({name}): {e}",
            decl.id
        ))
    })?;
    if let Some(at) = ref_target(repo, &name)? {
        return Err(Error::refused_with_hint(
            format!("{name} already exists (at {at}); init creates a ledger once"),
            "fill its rows with `git ledger import` or `git ledger put`; a changed protocol needs a declaration with a new id",
        ));
    }
    let committer = identity(repo)?;
    let author = committer;
    let bytes = decl.bytes().ok_or_else(|| {
        Error::failed("init needs the declaration's bytes (it was read from a cache)")
    })?;
    let writers = super::signature::declared_writers(repo, decl)?;
    let signing = super::sign::config(repo, writers.is_some())?;
    let campaign = write_object(repo, Kind::Blob, bytes)?;
    let mut blobs = vec![(layout::CAMPAIGN, campaign)];
    if let Some((writers_bytes, _)) = &writers {
        blobs.push((
            layout::WRITERS,
            write_object(repo, Kind::Blob, writers_bytes)?,
        ));
    }
    let tree = layout::build_tree(
        repo.object_hash(),
        &blobs,
        &layout::template_files(decl),
        &mut |kind, data| write_object(repo, kind, data),
    )?;
    let message = super::message::root_message(decl);
    let commit = super::sign::write_commit(
        repo,
        committer,
        author,
        &message,
        tree,
        Vec::new(),
        signing.as_ref(),
    )
    .map_err(|e| e.context("cannot write the root commit"))?;
    // Root admission decides, as for any other writer (rules 1, 7 and 8; the declaration is
    // the caller's parse of the bytes just written, not parsed again).
    let known = std::rc::Rc::new(Known::new(decl.clone(), campaign));
    let commit = Admission::new(repo, bytes.len() as u64)
        .with_known(known)
        .admit_root(commit, &name)?;
    match move_ref(
        repo,
        &name,
        PreviousValue::MustNotExist,
        commit,
        &format!("ledger: declare {}", decl.id),
    ) {
        Ok(()) => Ok((name, commit.id())),
        Err(WriteError::Moved) => Err(Error::refused(format!(
            "{name} already exists (created concurrently); init creates a ledger once"
        ))),
        Err(WriteError::Other(e) | WriteError::Locked(e)) => Err(e),
    }
}

/// The declaration and header of a ledger commit's tree, checked: `ledger.json` must be the
/// canonical header of `campaign.json`'s declaration.
pub fn declaration_at(
    admission: &mut Admission<'_>,
    repo: &gix::Repository,
    tree: ObjectId,
    at: &str,
) -> Result<Rc<Known>> {
    let known = admission.declaration_of_tree(tree, at)?;
    let Some((_, header)) = find_in_tree(repo, tree, HEADER)?.filter(|(m, _)| is_regular(*m))
    else {
        return Err(Error::refused(
            crate::refusal::Reason::new(format!("{HEADER} is missing or not a regular file"))
                .at(at),
        ));
    };
    // Compared by blob id, without reading it: in a pack a 130-byte header may be stored as a
    // delta of the 10.8 MB declaration.
    let expected = gix::objs::compute_hash(
        repo.object_hash(),
        Kind::Blob,
        &layout::header_bytes(&known.decl),
    )
    .map_err(|e| Error::failed(format!("cannot hash an object: {e}")))?;
    if header != expected {
        return Err(Error::refused(
            crate::refusal::Reason::new(format!(
                "{HEADER} is not the header of the declaration in {CAMPAIGN} ({{\"format\": \"campaign-ledger/1\", \"declaration\": {{\"id\", \"sha256\"}}}}, canonical)"
            ))
            .at(at)
        ));
    }
    Ok(known)
}

/// Every row of a ledger commit, as a checked [`Ledger`] in schedule order (reads every row:
/// for `show` and `report`, which print the whole ledger). With `cached` false the declaration
/// is parsed from its blob, never taken from the cache of checked declarations: `report`'s
/// verdict must not depend on an entry it did not check (a forged one could weaken the rules).
pub fn ledger_at(
    repo: &gix::Repository,
    commit: ObjectId,
    max_bytes: u64,
    cached: bool,
) -> Result<(Rc<Known>, Ledger)> {
    let at = format!("commit {commit}");
    let mut rows = Vec::new();
    let repo = &tip_reader(repo);
    // The walk, and every reason about a row file, are `each_row_at`'s; its record-hash
    // verdict is not needed here: the whole-ledger checks below decide group 7 and name the rows.
    let (known, _) = each_row_at(repo, commit, max_bytes, cached, &mut |_, _, row| {
        rows.push(row)
    })?;
    let decl = &known.decl;
    // The whole-ledger checks (one record per row, …) as for a ledger file.
    let value = serde_json::json!({
        "format": crate::ledger::FORMAT,
        "declaration": {"id": decl.id, "sha256": decl.sha256},
        "rows": rows.iter().map(Row::to_value).collect::<Vec<_>>(),
    });
    let ledger = Ledger::from_owned_value(decl, value).map_err(|e| e.context(&at))?;
    Ok((known, ledger))
}

/// Bytes of delta bases kept while one ledger state's rows are read ([`tip_reader`]). On
/// 100,000 rows, against 64 MB: the same CPU for `show` and `report` at 4 MB (and at 8 and
/// 16), twice `show`'s at 0 (each row blob's delta chain inflated again); 4 MB adds 3.5 MB
/// of peak RSS to 0's, 8 MB 8 MB.
const TIP_PACK_CACHE_BYTES: usize = 4 << 20;

/// A handle on `repo` for reading one ledger state's declaration, trees and row files, with a
/// delta-base cache of [`TIP_PACK_CACHE_BYTES`] instead of the 64 MB every handle has for
/// `verify`'s walk (which reads the same trees again and again). Reading one state uses each
/// row blob once (`show`: twice, a pass apart), so the large cache was only memory: 54 MB of
/// `show`'s 76 MB of heap on a 100,000-row ledger (issue 30). Dropped with the read.
fn tip_reader(repo: &gix::Repository) -> gix::Repository {
    super::with_pack_cache_bytes(repo, TIP_PACK_CACHE_BYTES)
}

/// The rows of ledger commit `commit`, each row file read and checked as [`ledger_at`] reads
/// it and handed to `each` (with its blob id) in schedule order, then dropped: `report` and
/// `show` of a ledger ref hold one row at a time, never the document. Every reason
/// [`ledger_at`] gives for a row (missing, wrong mode, refused, not scheduled) is given, in the
/// same order. "One record cannot fill two rows" (group 7) is decided on hashes of the record
/// keys: `Ok(false)` when two hash alike (two rows share a record, or two keys collide), and
/// the caller asks [`ledger_at`], which decides and names the rows.
///
/// Two stages on two cores: this thread reads each row file out of Git (inflating it and its
/// deltas: a third of the work), a second checks the bytes it is handed, in schedule order,
/// and calls `each` (the rest), handed over [`BATCH_ROWS`] at a time.
fn each_row_at(
    repo: &gix::Repository,
    commit: ObjectId,
    max_bytes: u64,
    cached: bool,
    each: &mut (dyn FnMut(&Declaration, ObjectId, Row) + Send),
) -> Result<(Rc<Known>, bool)> {
    use std::hash::BuildHasher;
    let info = read_commit(repo, commit)?;
    let at = format!("commit {commit}");
    let mut admission = Admission::new(repo, max_bytes);
    if !cached {
        admission = admission.without_cache();
    }
    let known = declaration_at(&mut admission, repo, info.tree, &at)?;
    let decl = &known.decl;
    let Some((_, rows_tree)) = find_in_tree(repo, info.tree, layout::ROWS)? else {
        return Err(Error::refused(
            crate::refusal::Reason::new("rows/ is missing").at(&at),
        ));
    };
    let mut files = Vec::new();
    list_blobs(repo, rows_tree, "rows".into(), &mut files)?;
    let mut by_path: std::collections::HashMap<String, (gix::objs::tree::EntryMode, ObjectId)> =
        files.into_iter().map(|(p, m, i)| (p, (m, i))).collect();
    let keys = std::hash::RandomState::new();
    let (handed, checked) = std::sync::mpsc::sync_channel::<Vec<RowFile>>(BATCHES_IN_FLIGHT);
    let at = at.as_str();
    let (read, (mut reasons, mut records)) = std::thread::scope(|s| {
        let checker = s.spawn(|| {
            let mut reasons = crate::error::Reasons::new();
            let mut records = Vec::new();
            for file in checked.into_iter().flatten() {
                let (id, sid, path, bytes) = match file {
                    RowFile::Refused(r) => {
                        reasons.extend(r);
                        continue;
                    }
                    RowFile::Read {
                        id,
                        sid,
                        path,
                        bytes,
                    } => (id, sid, path, bytes),
                };
                match super::admit::check_row_bytes(decl, &bytes, &sid, &path, at) {
                    // After a refusal nothing is handed on: the rows are refused whole.
                    Ok(row) if reasons.is_empty() => {
                        // The key `<kind>:<id>` hashed as its two parts (a kind has no `:`).
                        records.extend(row.native_record().map(|r| keys.hash_one((r.kind, r.id))));
                        each(decl, id, row);
                    }
                    Ok(_) => {}
                    Err(r) => reasons.extend(r),
                }
            }
            (reasons, records)
        });
        let read = (|| -> Result<()> {
            let mut batch = Vec::with_capacity(BATCH_ROWS);
            for e in decl.schedule() {
                let path = layout::row_path(&e.id);
                let file = match by_path.remove(&path) {
                    None => RowFile::Refused(vec![crate::refusal::Reason::new(format!(
                        "is missing ({path})"
                    ))
                    .row(&e.id)
                    .at(at)]),
                    Some((mode, _)) if !is_regular(mode) => {
                        RowFile::Refused(vec![crate::refusal::Reason::new(
                            super::objects::not_regular(&path, mode),
                        )
                        .row(&e.id)
                        .at(at)])
                    }
                    Some((_, id)) => {
                        match super::admit::read_row_bytes(repo, id, &path, max_bytes, at)? {
                            Ok(bytes) => RowFile::Read {
                                id,
                                sid: e.id,
                                path,
                                bytes,
                            },
                            Err(r) => RowFile::Refused(r),
                        }
                    }
                };
                batch.push(file);
                if batch.len() == BATCH_ROWS {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_ROWS));
                    if handed.send(full).is_err() {
                        // The checker is gone: its panic is resumed when it is joined.
                        return Ok(());
                    }
                }
            }
            let _ = handed.send(batch);
            Ok(())
        })();
        // The checker ends when the sender is dropped, whether all was read or not.
        drop(handed);
        let checked = checker
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (read, checked)
    });
    // A row file that cannot be read at all is a failure, whatever was refused before it.
    read?;
    let mut extra: Vec<_> = by_path.into_keys().collect();
    extra.sort();
    for p in extra {
        reasons.push(
            crate::refusal::Reason::new(format!(
                "{p} is not a row of the schedule (no row is added)"
            ))
            .at(at),
        );
    }
    reasons.into_result()?;
    records.sort_unstable();
    let distinct = !records.windows(2).any(|w| w[0] == w[1]);
    Ok((known, distinct))
}

/// Row files handed from [`each_row_at`]'s reading to its checking at a time: one hand-over
/// (and the wake-up of a waiting thread, a system call) per row cost more than it saved.
const BATCH_ROWS: usize = 64;

/// Batches read and not yet checked, at most: enough that neither stage waits on the other's
/// uneven rows, a few hundred KB.
const BATCHES_IN_FLIGHT: usize = 4;

/// What [`each_row_at`]'s reading hands its checking, in schedule order.
enum RowFile {
    /// The row's reasons found before its bytes could be checked (missing, not a regular
    /// file, over the size bound).
    Refused(Vec<crate::refusal::Reason>),
    /// A row file's bytes.
    Read {
        id: ObjectId,
        sid: String,
        path: String,
        bytes: Vec<u8>,
    },
}

/// What `keep` takes of every row of ledger commit `commit`, in schedule order, each row read,
/// checked and dropped in turn (see [`each_row_at`]): the same verdict and reasons as
/// [`ledger_at`], without the document in memory.
pub fn kept_at<K: crate::ledger::Keep>(
    repo: &gix::Repository,
    commit: ObjectId,
    max_bytes: u64,
    cached: bool,
    keep: &K,
) -> Result<(Rc<Known>, crate::ledger::KeptRows<K::Kept>)> {
    let mut kept = Vec::new();
    let (known, distinct) = each_row_at(
        &tip_reader(repo),
        commit,
        max_bytes,
        cached,
        &mut |decl, _, row| kept.push(keep.keep(decl, row.view())),
    )?;
    if distinct {
        return Ok((known, kept.into()));
    }
    drop(kept);
    let (known, ledger) = ledger_at(repo, commit, max_bytes, cached)?;
    let kept: Vec<_> = (ledger.rows.iter())
        .map(|row| keep.keep(&known.decl, row.view()))
        .collect();
    Ok((known, kept.into()))
}

/// Write the ledger document of commit `commit` to `out` (the bytes `ledger_at(…).canonical`
/// gives), a row at a time: every row is read and checked first (nothing is written for a
/// commit [`ledger_at`] refuses), then read again and written; what stays in memory is one
/// row and each row's blob id.
pub fn write_ledger_at(
    repo: &gix::Repository,
    commit: ObjectId,
    max_bytes: u64,
    cached: bool,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    use std::io::Write as _;
    let mut blobs = Vec::new();
    let reader = tip_reader(repo);
    let (known, distinct) = each_row_at(&reader, commit, max_bytes, cached, &mut |_, id, _| {
        blobs.push(id)
    })?;
    if !distinct {
        // `ledger_at` names the rows that share a record (or, for two keys whose hashes
        // collide, accepts the ledger).
        let (known, ledger) = ledger_at(repo, commit, max_bytes, cached)?;
        out.write_all(&ledger.canonical(&known.decl))?;
        return Ok(());
    }
    let decl = &known.decl;
    let empty = Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows: Vec::new(),
    }
    .canonical(decl);
    let open = b"\"rows\": [";
    let at = (empty.windows(open.len()).position(|w| w == open))
        .expect("a ledger document has rows")
        + open.len();
    let (head, tail) = empty.split_at(at);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    out.write_all(head)?;
    let mut line = Vec::new();
    for (i, (id, e)) in blobs.into_iter().zip(decl.schedule()).enumerate() {
        let path = layout::row_path(&e.id);
        let bytes = super::objects::read_blob_bounded_id(&reader, id, max_bytes, &path)?;
        line.clear();
        line.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
        indent_row(&mut line, &bytes);
        out.write_all(&line)?;
    }
    if decl.schedule_len() > 0 {
        out.write_all(b"\n  ")?;
    }
    out.write_all(tail)?;
    out.flush()?;
    Ok(())
}

/// A row file's canonical bytes (checked: two-space indent, trailing newline, no raw newline
/// inside a string) as the canonical writer puts the row two levels deep, in a document's
/// `rows` list: every line after the first indented four more spaces, no trailing newline.
fn indent_row(out: &mut Vec<u8>, bytes: &[u8]) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut lines = bytes.split(|&b| b == b'\n');
    if let Some(first) = lines.next() {
        out.extend_from_slice(first);
    }
    for line in lines {
        out.extend_from_slice(b"\n    ");
        out.extend_from_slice(line);
    }
}

/// Every blob below `tree` with its full path.
fn list_blobs(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: String,
    out: &mut Vec<(String, gix::objs::tree::EntryMode, ObjectId)>,
) -> Result<()> {
    let mut buf = Vec::new();
    let entries =
        super::tree::tree_entries(&repo.objects, repo.object_hash(), &tree, &prefix, &mut buf)?;
    for (name, mode, id) in entries {
        let path = format!("{prefix}/{}", super::show_path(&name));
        if mode.is_tree() {
            list_blobs(repo, id, path, out)?;
        } else {
            out.push((path, mode, id));
        }
    }
    Ok(())
}

/// A ledger on a ref, read at its tip.
pub struct RefStore {
    repo: gix::Repository,
    refname: String,
    known: Rc<Known>,
    tip: ObjectId,
    tip_tree: ObjectId,
    /// Rows filled at the tip.
    filled: usize,
    max_bytes: u64,
    /// How many times the tip was re-read after a lost race.
    retries: usize,
    /// Large trees read or written (the `rows/` directories above all), shared with the admission
    /// of each write.
    trees: KeptTrees,
}

impl RefStore {
    /// Open the ledger ref `ref_arg` names (see [`resolve_ref`]) in the repository found from
    /// `repo_dir`.
    pub fn open(repo_dir: Option<&Path>, ref_arg: Option<&str>, max_bytes: u64) -> Result<Self> {
        let repo = super::open(repo_dir)?;
        Self::from_repo(repo, ref_arg, max_bytes)
    }

    /// Open a ledger ref in an already opened repository.
    pub fn from_repo(repo: gix::Repository, ref_arg: Option<&str>, max_bytes: u64) -> Result<Self> {
        let (refname, tip) = resolve_ref(&repo, ref_arg)?;
        let trees = KeptTrees::default();
        let (known, tip_tree, filled) = Self::load(&repo, &refname, tip, None, max_bytes, &trees)?;
        Ok(RefStore {
            repo,
            refname,
            known,
            tip,
            tip_tree,
            filled,
            max_bytes,
            retries: 0,
            trees,
        })
    }

    /// Read what the store needs from `tip`: the declaration (named after the ref), the header,
    /// the tree and the filled count.
    fn load(
        repo: &gix::Repository,
        refname: &str,
        tip: ObjectId,
        known: Option<Rc<Known>>,
        max_bytes: u64,
        trees: &KeptTrees,
    ) -> Result<(Rc<Known>, ObjectId, usize)> {
        let info = read_commit(repo, tip)?;
        let at = format!("{refname} (commit {tip})");
        let mut admission = Admission::new(repo, max_bytes);
        if let Some(k) = known {
            admission = admission.with_known(k);
        }
        let known = declaration_at(&mut admission, repo, info.tree, &at)?;
        let wanted = LedgerRefs::of(repo)?.name(&known.decl.id);
        if refname != wanted {
            return Err(Error::refused(format!(
                "{refname} holds the ledger of declaration {:?}; a ledger ref is named after its declaration's id ({wanted})",
                known.decl.id,
            )));
        }
        let n = known.decl.schedule_len();
        // The count an admitted tip's message gives (rule 7 makes it the tree's); a tip
        // without one is counted for `location`, and the next write's admission refuses it.
        let filled = match super::message::filled_of(&info.message, n) {
            Some(k) => k,
            None => count_filled(repo, &known.decl, info.tree, max_bytes, &at)?,
        };
        // The count is cross-checked with the tree: in an admitted ledger every filled row has
        // exactly one record file and no record file is without its row (rule 5), so a tip
        // whose message counts otherwise was not admitted, and nothing is written on it.
        // Record files sit one level down, in the fan-out directories `records/<hh>/`, and
        // counting them reads every one: a tip this repository's writers already checked, or
        // wrote on a checked tip, is not counted again (`checked`).
        if !checked::holds(repo, refname, tip) {
            let records = match find_in_tree(repo, info.tree, layout::RECORDS)? {
                Some((mode, id)) if mode.is_tree() => count_records(repo, id, trees)?,
                _ => 0,
            };
            if records != filled {
                return Err(Error::refused_with_hint(
                    crate::refusal::Reason::new(format!(
                        "its message counts {filled} of {n} rows filled, but its tree holds {records} (one record file per filled row): the tip's message was not admitted, so nothing is written on it"
                    ))
                    .rule(crate::refusal::Rule::Admission(7))
                    .at(&at),
                    format!("check the chain with `git ledger verify {refname}`; a ledger ref moved by plain Git without the hooks can hold such a commit (`git ledger hooks install` refuses them)"),
                ));
            }
            checked::add(repo, refname, tip);
        }
        Ok((known, info.tree, filled))
    }

    /// The ref this store writes.
    pub fn refname(&self) -> &str {
        &self.refname
    }

    /// The commit the store last read or wrote.
    pub fn tip(&self) -> ObjectId {
        self.tip
    }

    /// How many rows are filled at the tip.
    pub fn filled(&self) -> usize {
        self.filled
    }
}

/// The entries of a `records/` tree: its own non-directory entries, and every entry of each of
/// its fan-out directories `records/<hh>/` (reads all of them: O(filled rows)).
fn count_records(repo: &gix::Repository, records: ObjectId, trees: &KeptTrees) -> Result<usize> {
    let cache = RecentTrees::sharing(&repo.objects, trees.clone());
    let hash = repo.object_hash();
    let data = cache.tree(&records, || "tree records".into())?;
    let mut count = 0usize;
    for e in gix::objs::TreeRefIter::from_bytes(&data, hash).filter_map(|e| e.ok()) {
        if !e.mode.is_tree() {
            count += 1;
            continue;
        }
        let dir = e.oid.to_owned();
        let sub = cache.tree(&dir, || format!("tree records/{}", e.filename))?;
        count += gix::objs::TreeRefIter::from_bytes(&sub, hash).count();
    }
    Ok(count)
}

/// Count the filled rows of a tree by reading every row (only for a tip without a usable
/// `Ledger-Filled` trailer).
pub(crate) fn count_filled(
    repo: &gix::Repository,
    decl: &Declaration,
    tree: ObjectId,
    max_bytes: u64,
    at: &str,
) -> Result<usize> {
    let mut n = 0;
    for e in decl.schedule() {
        let path = layout::row_path(&e.id);
        let Some((_, id)) = find_in_tree(repo, tree, &path)? else {
            return Err(Error::refused(
                crate::refusal::Reason::new(format!("is missing ({path})"))
                    .row(&e.id)
                    .at(at),
            ));
        };
        let row = read_row(repo, decl, id, &e.id, max_bytes, at)?.map_err(Error::refusal)?;
        if !row.is_deferred() {
            n += 1;
        }
    }
    Ok(n)
}

impl Store for RefStore {
    fn declaration(&self) -> &Declaration {
        &self.known.decl
    }

    /// The tip's `Ledger-Filled` count (checked against the rows when the store opened a tip
    /// without a usable trailer), kept up to date by each write: no row is read.
    fn filled(&mut self) -> Result<usize> {
        Ok(self.filled)
    }

    fn row(&mut self, schedule_id: &str) -> Result<Row> {
        let decl = &self.known.decl;
        if decl.schedule_position(schedule_id).is_none() {
            return Err(Error::refused(format!(
                "{schedule_id} is not scheduled by declaration {}",
                decl.id
            )));
        }
        let at = format!("{} (commit {})", self.refname, self.tip);
        let path = layout::row_path(schedule_id);
        // Through the trees this store keeps, as record_owner: a change's rows share `rows/`.
        let trees = RecentTrees::sharing(&self.repo.objects, self.trees.clone());
        match find_in_tree_of(&trees, self.repo.object_hash(), self.tip_tree, &path)? {
            Some((mode, id)) if is_regular(mode) => {
                read_row(&self.repo, decl, id, schedule_id, self.max_bytes, &at)?
                    .map_err(Error::refusal)
            }
            Some(_) => Err(Error::refused(
                crate::refusal::Reason::new(format!("{path} is not a regular file"))
                    .row(schedule_id)
                    .at(&at),
            )),
            None => Err(Error::refused(
                crate::refusal::Reason::new(format!("is missing ({path})"))
                    .row(schedule_id)
                    .at(&at),
            )),
        }
    }

    fn record_owner(&mut self, key: &str) -> Result<Option<String>> {
        let path = layout::record_path(key);
        let trees = RecentTrees::sharing(&self.repo.objects, self.trees.clone());
        Ok(
            find_in_tree_of(&trees, self.repo.object_hash(), self.tip_tree, &path)?
                .map(|_| format!("a row of {} ({path} is in it)", self.refname)),
        )
    }

    fn write(&mut self, change: &Change) -> std::result::Result<(), WriteError> {
        self.commit(change, false).map(|_| ())
    }

    fn rehearse(&mut self, change: &Change) -> Result<Option<String>> {
        // Every object the write would make is kept in memory and dropped after the
        // admission: the object database is not touched, no ref moves.
        self.repo.objects.enable_object_memory();
        let r = self.commit(change, true);
        self.repo.objects.take_object_memory();
        match r {
            Ok(message) => Ok(Some(message)),
            Err(WriteError::Other(e) | WriteError::Locked(e)) => Err(e),
            Err(WriteError::Moved) => Err(Error::failed(
                "a dry run moved no ref, yet was told the ref moved",
            )),
        }
    }

    fn location(&self) -> Option<String> {
        let retries = match self.retries {
            0 => String::new(),
            1 => "; rebuilt once after another writer moved the ref".to_owned(),
            n => format!("; rebuilt {n} times after other writers moved the ref"),
        };
        Some(format!(
            "{} {} ({}/{} filled{retries})",
            self.refname,
            self.tip,
            self.filled,
            self.known.decl.schedule_len()
        ))
    }

    fn reload(&mut self) -> Result<()> {
        let tip = ref_target(&self.repo, &self.refname)?
            .ok_or_else(|| Error::failed(format!("{} was deleted while writing", self.refname)))?;
        let (known, tree, filled) = Self::load(
            &self.repo,
            &self.refname,
            tip,
            Some(self.known.clone()),
            self.max_bytes,
            &self.trees,
        )?;
        if known.blob != self.known.blob {
            return Err(Error::refused(format!(
                "{} now holds another declaration (campaign.json changed at commit {tip})",
                self.refname
            )));
        }
        self.tip = tip;
        self.tip_tree = tree;
        self.filled = filled;
        self.retries += 1;
        Ok(())
    }
}

impl RefStore {
    /// Write `change` as one commit on the tip, admit it, and move the ref; with `dry`, stop
    /// after the admission (the objects go wherever `repo.objects` puts them: in memory for a
    /// rehearsal). Returns the commit's message.
    fn commit(&mut self, change: &Change, dry: bool) -> std::result::Result<String, WriteError> {
        let repo = &self.repo;
        let decl = &self.known.decl;
        let fail = |e: &dyn std::fmt::Display| {
            Error::failed(format!("cannot write the ledger commit: {e}"))
        };
        // The object-level editor reads through the kept trees, and each tree it writes is
        // kept for the admission below. (`gix::Repository::edit_tree` would also look up every
        // entry of each tree it writes, `rows/` with one entry per task among them.)
        let trees = RecentTrees::sharing(&repo.objects, self.trees.clone());
        let mut buf = Vec::new();
        let root = read_object(
            &trees,
            &self.tip_tree,
            Kind::Tree,
            || "tree".into(),
            &mut buf,
        )?;
        let root = gix::objs::TreeRef::from_bytes(root, repo.object_hash())
            .map_err(|e| fail(&e))?
            .into();
        let mut editor = gix::objs::tree::Editor::new(root, &trees, repo.object_hash());
        // Every blob is held to the admission's size bound before any object is written: a
        // refusal leaves the object store as it was.
        let rows: Vec<Vec<u8>> = change.rows.iter().map(|w| w.row.canonical(decl)).collect();
        let mut r = crate::error::Reasons::new();
        for (w, bytes) in change.rows.iter().zip(&rows) {
            let sid = w.row.schedule_id();
            let mut bound = |what: String, len: usize| {
                if len as u64 > self.max_bytes {
                    r.push(
                        crate::refusal::Reason::new(format!(
                            "{what} would be {len} bytes, over the input bound of {} bytes (--max-input-bytes)",
                            self.max_bytes
                        ))
                        .row(sid),
                    );
                }
            };
            bound(format!("its file {}", layout::row_path(sid)), bytes.len());
            if let (Some(record), Some(rec)) = (&w.record, w.row.native_record()) {
                let key = rec.key();
                let path = layout::record_path(&key);
                bound(format!("record {key} ({path})"), record.bytes().len());
            }
        }
        if !r.is_empty() {
            r.hint(crate::error::MAX_INPUT_HINT);
            r.into_result()?;
        }
        let mut newly = 0;
        for (w, row_bytes) in change.rows.iter().zip(&rows) {
            let id = write_object(repo, Kind::Blob, row_bytes)?;
            editor
                .upsert(
                    layout::row_path(w.row.schedule_id()).split('/'),
                    gix::objs::tree::EntryKind::Blob,
                    id,
                )
                .map_err(|e| fail(&e))?;
            if let (Some(record), Some(rec)) = (&w.record, w.row.native_record()) {
                let rid = write_object(repo, Kind::Blob, record.bytes())?;
                editor
                    .upsert(
                        layout::record_path(&rec.key()).split('/'),
                        gix::objs::tree::EntryKind::Blob,
                        rid,
                    )
                    .map_err(|e| fail(&e))?;
                newly += 1;
            }
        }
        let tree = editor.write(|t| {
            buf.clear();
            t.write_to(&mut buf).map_err(|e| fail(&e))?;
            let id = write_object(repo, Kind::Tree, &buf)?;
            trees.keep(&id, &buf);
            Ok::<_, Error>(id)
        })?;
        // The parent's count (its admitted message's) plus what this change fills, by the same
        // function rule 7 checks the message with.
        let (message, filled) =
            super::message::change_message(decl, change, self.filled).map_err(|why| {
                Error::refused(
                    crate::refusal::Reason::new(why)
                        .rule(crate::refusal::Rule::Admission(7))
                        .at(format!("{} (commit {})", self.refname, self.tip)),
                )
            })?;
        debug_assert_eq!(filled, self.filled + newly);
        let committer = identity(repo)?;
        let author = committer;
        let signing = super::sign::config(repo, decl.writers.is_some())?;
        let parents = vec![self.tip];
        let commit = super::sign::write_commit(
            repo,
            committer,
            author,
            &message,
            tree,
            parents,
            signing.as_ref(),
        )?;
        // The one validator decides before the ref moves.
        let (_, admitted) = Admission::new(repo, self.max_bytes)
            .with_known(self.known.clone())
            .with_trees(self.trees.clone())
            .admit_step(self.tip, commit)?;
        if dry {
            return Ok(message);
        }
        let subject = message.lines().next().unwrap_or_default();
        move_ref(
            repo,
            &self.refname,
            PreviousValue::MustExistAndMatch(Target::Object(self.tip)),
            admitted,
            &format!("ledger: {subject}"),
        )?;
        // Admitted on a checked tip: its count is its tree's too (rules 5 and 7).
        checked::add(repo, &self.refname, commit);
        self.tip = commit;
        self.tip_tree = tree;
        self.filled = filled;
        Ok(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;

    /// Only admission makes an [`Admitted`] and only for a ledger ref; the one mover that takes
    /// a bare commit id refuses ledger refs and moves the others.
    #[test]
    fn a_ledger_ref_moves_only_to_an_admitted_commit() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("a"), "a\n").unwrap();
        git(dir.path(), &["add", "a"]);
        git(
            dir.path(),
            &[
                "-c",
                "user.name=T",
                "-c",
                "user.email=t@e",
                "commit",
                "-qm",
                "a",
            ],
        );
        let id = ObjectId::from_hex(git(dir.path(), &["rev-parse", "HEAD"]).as_bytes()).unwrap();
        let repo = super::super::open(Some(dir.path())).unwrap();
        let refused =
            Admission::new(&repo, 1 << 20).admit("refs/heads/x", None, id, &mut |_, _| {});
        assert!(matches!(refused, Err(Error::Failed { .. })), "{refused:?}");
        // Not a ledger commit: admission refuses to admit it on a ledger ref.
        let refused =
            Admission::new(&repo, 1 << 20).admit("refs/ledgers/x", None, id, &mut |_, _| {});
        assert!(matches!(refused, Err(Error::Refused(_))), "{refused:?}");
        let moved = move_tracking_ref(&repo, "refs/ledgers/x", PreviousValue::Any, id, "m");
        assert!(matches!(moved, Err(WriteError::Other(_))));
        assert_eq!(ref_target(&repo, "refs/ledgers/x").unwrap(), None);
        move_tracking_ref(
            &repo,
            "refs/remotes/o/ledgers/x",
            PreviousValue::Any,
            id,
            "m",
        )
        .unwrap();
        assert_eq!(
            ref_target(&repo, "refs/remotes/o/ledgers/x").unwrap(),
            Some(id)
        );
    }
}
