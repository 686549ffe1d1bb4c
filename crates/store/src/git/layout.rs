//! The ledger ref's tree layout and commit messages (`docs/reference/layout.md`, "The tree" and
//! "Commits"): path names, the `ledger.json` header, the template tree `init` writes (and the
//! admission validator recomputes without writing), and reading trailers back for `log` (the
//! messages themselves are [`super::message`]'s).

use gix::objs::{Kind, WriteTo};
use gix::ObjectId;
use serde_json::Value;

use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::{Row, FORMAT};

/// The declaration's exact bytes.
pub const CAMPAIGN: &str = "campaign.json";
/// The declared writers' allowed-signers file, exact bytes (only when the declaration names
/// writers; `signing.md`).
pub const WRITERS: &str = "writers";
/// The ledger header (`format` and `declaration`, no rows).
pub const HEADER: &str = "ledger.json";
/// One file per scheduled attempt below this directory.
pub const ROWS: &str = "rows";
/// One file per native record below this directory.
pub const RECORDS: &str = "records";

/// Trailer keys.
pub const T_DECLARATION: &str = "Ledger-Declaration";
pub const T_ATTEMPT: &str = "Ledger-Attempt";
pub const T_REPAIR: &str = "Ledger-Repair";
pub const T_FILLED: &str = "Ledger-Filled";

/// Where replace refs live (`git replace`): `refs/replace/<id of the replaced object>`.
pub const REPLACE_PREFIX: &str = "refs/replace/";

/// Whether `name` starts with `prefix` when ASCII case is ignored. On a case-insensitive file
/// system (macOS, Windows) `refs/LEDGERS/x` is the file of `refs/ledgers/x`, so a check that
/// compares bytes would let another spelling of a guarded ref through.
fn folds_to(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len()
        && name.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Whether `name` is a replace ref in some spelling.
pub fn folds_to_replace_ref(name: &str) -> bool {
    folds_to(name, REPLACE_PREFIX)
}

/// Where notes refs live (`git notes`; `git log` shows `refs/notes/commits` by default).
pub const NOTES_PREFIX: &str = "refs/notes/";

/// Whether `name` is a notes ref in some spelling.
pub fn folds_to_notes_ref(name: &str) -> bool {
    folds_to(name, NOTES_PREFIX)
}

/// Where ledger refs live by default: `refs/ledgers/<declaration id>`.
pub const DEFAULT_PREFIX: &str = "refs/ledgers/";
/// Where ledger refs live on a hosted forge (GitHub.com, GitLab.com), whose protections and CI
/// apply to branches only: `refs/heads/ledgers/<declaration id>` (`docs/forges.md`).
pub const FORGE_PREFIX: &str = "refs/heads/ledgers/";
/// The `git config` key naming where this repository's ledger refs live.
pub const KEY_PREFIX: &str = "ledger.refPrefix";

/// Where a repository keeps its ledger refs, read from `git config ledger.refPrefix`
/// (`refs/ledgers/` when unset). THE one place a ledger ref's name is made or read: every
/// command, hook, `sync` and `verify` names a ledger ref through [`LedgerRefs::name`] and
/// recognises one through [`LedgerRefs::id_of`] / [`LedgerRefs::is_ledger_ref`]; nothing else
/// spells `refs/ledgers/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRefs {
    prefix: String,
}

impl Default for LedgerRefs {
    fn default() -> Self {
        LedgerRefs {
            prefix: DEFAULT_PREFIX.to_owned(),
        }
    }
}

impl LedgerRefs {
    /// The prefix `repo`'s configuration names. Only reads the configuration; whether the
    /// repository mixes prefixes is [`LedgerRefs::checked`]'s question.
    pub fn of(repo: &gix::Repository) -> Result<Self> {
        let config = repo.config_snapshot();
        match config.string(KEY_PREFIX) {
            None => Ok(Self::default()),
            Some(v) => Self::with_prefix(&v.to_string())
                .map_err(|why| Error::Usage(format!("git config {KEY_PREFIX} {v}: {why}"))),
        }
    }

    /// As [`LedgerRefs::of`], and refused when a declaration id has a ledger ref under two
    /// prefixes (`refs/ledgers/<id>` and `refs/heads/ledgers/<id>`): a repository never mixes
    /// them, and no command guesses which is the ledger.
    pub fn checked(repo: &gix::Repository) -> Result<Self> {
        let refs = Self::of(repo)?;
        let mut prefixes = vec![DEFAULT_PREFIX, FORGE_PREFIX];
        if !prefixes.contains(&refs.prefix()) {
            prefixes.push(refs.prefix());
        }
        let fail =
            |e: &dyn std::fmt::Display| Error::failed(format!("cannot list ledger refs: {e}"));
        let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        let platform = repo.references().map_err(|e| fail(&e))?;
        for p in prefixes {
            for r in platform.prefixed(p).map_err(|e| fail(&e))? {
                let name = r.map_err(|e| fail(&e))?.name().as_bstr().to_string();
                if let Some(id) = name.strip_prefix(p) {
                    seen.entry(id.to_owned()).or_default().push(name.clone());
                }
            }
        }
        let mut reasons = crate::error::Reasons::new();
        let mut pair = String::new();
        for (id, names) in seen.into_iter().filter(|(_, n)| n.len() > 1) {
            if pair.is_empty() {
                pair = names.join(" ");
            }
            reasons.push(format!(
                "declaration {id:?} has a ledger ref under two prefixes: {}; a repository keeps its ledgers under one (git config {KEY_PREFIX} is {}), and no command guesses which is the ledger",
                names.join(" and "),
                refs.prefix()
            ));
        }
        if !reasons.is_empty() {
            reasons.hint(format!(
                "compare them with `git ledger diff {pair}`; keep the one under {} and move the other away (`git update-ref -d <ref>` after saving its tip)",
                refs.prefix()
            ));
            return Err(Error::Refused(reasons));
        }
        Ok(refs)
    }

    /// A prefix as `git config ledger.refPrefix` may give it: `refs/…/`, a valid ref name
    /// once a declaration id follows, and none of the namespaces Git or git-ledger use for
    /// something else (remote-tracking refs, tags, replace and notes refs, sync's own refs).
    pub fn with_prefix(prefix: &str) -> std::result::Result<Self, String> {
        if !prefix.starts_with("refs/") || !prefix.ends_with('/') || prefix.len() < 7 {
            return Err(format!(
                "a ledger ref prefix is refs/<name>/ (ending in /), such as {DEFAULT_PREFIX} or {FORGE_PREFIX}"
            ));
        }
        gix::refs::FullName::try_from(format!("{prefix}x").as_str())
            .map_err(|e| format!("{prefix}<id> is no valid ref name: {e}"))?;
        for taken in [
            "refs/remotes/",
            "refs/tags/",
            REPLACE_PREFIX,
            NOTES_PREFIX,
            "refs/ledger-conflicts/",
            "refs/ledger-remotes/",
        ] {
            if folds_to(prefix, taken) {
                return Err(format!(
                    "{taken} is used by Git or git-ledger for something else; use {DEFAULT_PREFIX} or {FORGE_PREFIX}"
                ));
            }
        }
        Ok(LedgerRefs {
            prefix: prefix.to_owned(),
        })
    }

    /// `refs/ledgers/`, `refs/heads/ledgers/`, …
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether the ledgers live on branches (`refs/heads/…`), as on a hosted forge.
    pub fn on_branches(&self) -> bool {
        self.prefix.starts_with("refs/heads/")
    }

    /// `<prefix><declaration id>`.
    pub fn name(&self, declaration_id: &str) -> String {
        format!("{}{declaration_id}", self.prefix)
    }

    /// The declaration id a ledger ref's name holds (`None`: not a ledger ref here).
    pub fn id_of<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.prefix.as_str())
    }

    /// Whether `name` is a ledger ref of this repository, spelled as it must be.
    pub fn is_ledger_ref(&self, name: &str) -> bool {
        name.starts_with(self.prefix.as_str())
    }

    /// Whether `name` is a ledger ref in some spelling (`refs/ledgers/…`, `refs/LEDGERS/…`,
    /// …, and under any prefix git-ledger knows): what the hooks guard. Only the configured
    /// prefix, in its own spelling, is ever admitted.
    pub fn folds(&self, name: &str) -> bool {
        folds_to(name, &self.prefix) || folds_to(name, DEFAULT_PREFIX)
    }

    /// Why `name` is refused when it is a ledger ref spelled other than as the configured
    /// prefix says: another case (on a case-insensitive file system the same file, which
    /// would move the ledger unchecked), or `refs/ledgers/` in a repository whose ledgers are
    /// on branches (a repository never mixes the two).
    pub fn misspelled(&self, name: &str) -> Option<crate::refusal::Reason> {
        let p = self.prefix.as_str();
        if folds_to(name, p) && !name.starts_with(p) {
            return Some(
                crate::refusal::Reason::new(format!(
                    "a ledger ref is spelled {p}{} in lowercase; every other spelling is refused (on a case-insensitive file system it is the same file, and would move the ledger unchecked)",
                    &name[p.len()..]
                ))
                .at(name),
            );
        }
        if p != DEFAULT_PREFIX && folds_to(name, DEFAULT_PREFIX) {
            return Some(
                crate::refusal::Reason::new(format!(
                    "this repository keeps its ledgers under {p} (git config {KEY_PREFIX}); a ledger ref under {DEFAULT_PREFIX} is refused, since a repository never mixes the two (the ledger is {p}{})",
                    &name[DEFAULT_PREFIX.len()..]
                ))
                .at(name),
            );
        }
        None
    }

    /// For a ref under `refs/ledgers/` or `refs/heads/ledgers/`, the same declaration id's ref
    /// under the other one: the ref whose existence makes `name` a second ledger of one id.
    pub fn twin(name: &str) -> Option<String> {
        if let Some(id) = name.strip_prefix(FORGE_PREFIX) {
            Some(format!("{DEFAULT_PREFIX}{id}"))
        } else {
            (name.strip_prefix(DEFAULT_PREFIX)).map(|id| format!("{FORGE_PREFIX}{id}"))
        }
    }

    /// Where `sync` keeps what it last fetched of `remote`'s ledgers. Under `refs/ledgers/`:
    /// `refs/remotes/<remote>/ledgers/`. Under a branch prefix a plain `git fetch` (default
    /// refspec `+refs/heads/*:refs/remotes/<remote>/*`) force-updates
    /// `refs/remotes/<remote>/ledgers/<id>`, so sync keeps its own copy where no default
    /// refspec writes: `refs/ledger-remotes/<remote>/`.
    pub fn tracking_prefix(&self, remote: &str) -> String {
        if self.on_branches() {
            format!("refs/ledger-remotes/{remote}/")
        } else {
            format!("refs/remotes/{remote}/ledgers/")
        }
    }

    /// The fetch refspec `sync --setup` adds: `<prefix>*:<tracking prefix>*` (not forced).
    pub fn fetch_refspec(&self, remote: &str) -> String {
        format!("{}*:{}*", self.prefix, self.tracking_prefix(remote))
    }
}

/// `rows/<schedule id>.json`.
pub fn row_path(schedule_id: &str) -> String {
    format!("{ROWS}/{schedule_id}.json")
}

/// `records/<hh>/<rest>.json`: the SHA-256 of the record key `"<kind>:<id>"`, split after its
/// first two hex digits (as Git fans out `.git/objects`), so that no tree grows with every
/// filled row.
pub fn record_path(key: &str) -> String {
    let hex = crate::sha256_hex(key.as_bytes());
    format!("{RECORDS}/{}/{}.json", &hex[..2], &hex[2..])
}

/// The schedule id a `rows/…` path names (not checked against a schedule).
pub fn schedule_id_of(path: &str) -> Option<&str> {
    path.strip_prefix("rows/")?.strip_suffix(".json")
}

/// Whether `name` is a fan-out directory's name below `records/`: two lowercase hex digits.
pub fn is_fanout_name(name: &[u8]) -> bool {
    name.len() == 2 && name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `name` is a record file's name inside a fan-out directory: 62 lowercase hex digits
/// (the rest of the key's SHA-256) and `.json`.
pub fn is_record_name(name: &[u8]) -> bool {
    name.strip_suffix(b".json").is_some_and(|stem| {
        stem.len() == 62 && stem.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Whether `path` is a fan-out directory: `records/<2 lowercase hex>`.
pub fn is_fanout_dir(path: &str) -> bool {
    path.strip_prefix("records/")
        .is_some_and(|hh| is_fanout_name(hh.as_bytes()))
}

/// Whether `path` has the shape of a record file: `records/<2 hex>/<62 hex>.json` (lowercase).
/// Which fan-out directory a key belongs in is [`record_path`]'s answer, checked by rule 5.
pub fn is_record_path(path: &str) -> bool {
    path.strip_prefix("records/")
        .and_then(|p| p.split_once('/'))
        .is_some_and(|(hh, rest)| is_fanout_name(hh.as_bytes()) && is_record_name(rest.as_bytes()))
}

/// The canonical bytes of `ledger.json`: `{"format", "declaration": {"id", "sha256"}}`, keys
/// in the ledger document's order.
pub fn header_bytes(decl: &Declaration) -> Vec<u8> {
    let format = Value::from(FORMAT);
    let declaration = serde_json::json!({"id": decl.id, "sha256": decl.sha256});
    crate::json::canonical_ordered(vec![("format", &format), ("declaration", &declaration)])
}

/// Every `(path, bytes)` of the root commit `init` writes but `campaign.json` (the
/// declaration's own bytes, a blob the caller has): the header and every template row.
pub fn template_files(decl: &Declaration) -> Vec<(String, Vec<u8>)> {
    each_template_file(decl).collect()
}

/// [`template_files`] one file at a time.
fn each_template_file(decl: &Declaration) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
    let header = (HEADER.to_owned(), header_bytes(decl));
    let rows = decl.schedule().filter_map(move |e| {
        Row::template(decl, &e.id).map(|row| (row_path(&e.id), row.canonical(decl)))
    });
    std::iter::once(header).chain(rows)
}

/// Build a tree of regular files (mode 100644) from blobs already stored (`blobs`, as `(path,
/// id)`) and from `(path, bytes)`, handing every other object to `write` (which stores it, or
/// only hashes it). Returns the root tree id.
pub fn build_tree(
    hash: gix::hash::Kind,
    blobs: &[(&str, ObjectId)],
    files: &[(String, Vec<u8>)],
    write: &mut dyn FnMut(Kind, &[u8]) -> Result<ObjectId>,
) -> Result<ObjectId> {
    let never = gix::objs::find::Never;
    let mut editor = gix::objs::tree::Editor::new(gix::objs::Tree::empty(), &never, hash);
    for &(path, id) in blobs {
        upsert(&mut editor, path, id)?;
    }
    for (path, bytes) in files {
        upsert(&mut editor, path, write(Kind::Blob, bytes)?)?;
    }
    write_tree(editor, write)
}

/// The regular file `path` of the tree `editor` builds is the blob `id`.
fn upsert(editor: &mut gix::objs::tree::Editor<'_>, path: &str, id: ObjectId) -> Result<()> {
    editor
        .upsert(path.split('/'), gix::objs::tree::EntryKind::Blob, id)
        .map(drop)
        .map_err(|e| Error::failed(format!("cannot build the tree at {path}: {e}")))
}

/// The trees `editor` holds, each handed to `write`; the root tree's id.
fn write_tree(
    mut editor: gix::objs::tree::Editor<'_>,
    write: &mut dyn FnMut(Kind, &[u8]) -> Result<ObjectId>,
) -> Result<ObjectId> {
    let mut buf = Vec::new();
    editor.write(|tree| {
        buf.clear();
        tree.write_to(&mut buf)
            .map_err(|e| Error::failed(format!("cannot serialise a tree: {e}")))?;
        write(Kind::Tree, &buf)
    })
}

/// The tree id `init` writes for `decl`, whose bytes are the blob `campaign` (and whose
/// writers file is the blob `writers`, when it names writers), computed without writing any
/// object. Each template file is made, hashed, put in the tree and dropped in turn: what is
/// held is the tree's entries, not every template row (102 MB at 100,000 rows), nor a list
/// of their paths and ids beside the entries (10 MB).
pub fn template_tree_id(
    hash: gix::hash::Kind,
    decl: &Declaration,
    campaign: ObjectId,
    writers: Option<ObjectId>,
) -> Result<ObjectId> {
    let mut write = |kind, data: &[u8]| {
        gix::objs::compute_hash(hash, kind, data)
            .map_err(|e| Error::failed(format!("cannot hash an object: {e}")))
    };
    let never = gix::objs::find::Never;
    let mut editor = gix::objs::tree::Editor::new(gix::objs::Tree::empty(), &never, hash);
    upsert(&mut editor, CAMPAIGN, campaign)?;
    if let Some(w) = writers {
        upsert(&mut editor, WRITERS, w)?;
    }
    for (path, bytes) in each_template_file(decl) {
        upsert(&mut editor, &path, write(Kind::Blob, &bytes)?)?;
    }
    write_tree(editor, &mut write)
}

/// One `Ledger-Attempt` trailer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Attempt {
    pub schedule_id: String,
    pub native_outcome: String,
    /// The portfolio outcome key (`verified_delivery`, …).
    pub outcome: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_ledger_prefix_is_a_ledger_ref_and_only_lowercase_passes() {
        let d = LedgerRefs::default();
        for name in [
            "refs/ledgers/x",
            "refs/LEDGERS/x",
            "Refs/Ledgers/a/b",
            "REFS/LEDGERS/",
        ] {
            assert!(d.folds(name), "{name}");
        }
        for name in [
            "refs/ledger/x",
            "refs/heads/ledgers/x",
            "refs/ledgersx",
            "refs/",
            "",
        ] {
            assert!(!d.folds(name), "{name}");
        }
        assert_eq!(d.misspelled("refs/ledgers/x"), None);
        assert_eq!(d.misspelled("refs/heads/x"), None);
        let why = d.misspelled("refs/LEDGERS/x").unwrap();
        assert_eq!(why.place, ["refs/LEDGERS/x"]);
        assert_eq!(why.sentence, "a ledger ref is spelled refs/ledgers/x in lowercase; every other spelling is refused (on a case-insensitive file system it is the same file, and would move the ledger unchecked)", "{why:?}");
        // Not at a character boundary: no panic.
        assert!(!d.folds("refs/ledgersé/x"));
        // Where sync keeps refused attempts, and the remote-tracking copies: no ledger refs.
        for name in [
            "refs/ledger-conflicts/x/1",
            "refs/LEDGER-CONFLICTS/x/1",
            "refs/remotes/origin/ledgers/x",
        ] {
            assert!(!d.folds(name) && d.misspelled(name).is_none(), "{name}");
        }
        assert_eq!(d.misspelled("refs/ledgersé/x"), None);
        assert!(folds_to_replace_ref("refs/Replace/1") && !folds_to_replace_ref("refs/replaced"));
    }

    #[test]
    fn a_branch_prefix_names_and_recognises_ledger_refs_and_refuses_the_other_prefix() {
        let f = LedgerRefs::with_prefix(FORGE_PREFIX).unwrap();
        assert_eq!(f.name("x"), "refs/heads/ledgers/x");
        assert_eq!(f.id_of("refs/heads/ledgers/x"), Some("x"));
        assert_eq!(f.id_of("refs/ledgers/x"), None);
        assert!(f.is_ledger_ref("refs/heads/ledgers/x") && !f.is_ledger_ref("refs/heads/main"));
        assert!(f.folds("refs/heads/LEDGERS/x") && f.folds("refs/ledgers/x"));
        assert!(!f.folds("refs/heads/main"));
        assert!(f.misspelled("refs/heads/ledgers/x").is_none());
        let why = f.misspelled("refs/Heads/ledgers/x").unwrap();
        assert_eq!(why.place, ["refs/Heads/ledgers/x"]);
        assert_eq!(why.sentence, "a ledger ref is spelled refs/heads/ledgers/x in lowercase; every other spelling is refused (on a case-insensitive file system it is the same file, and would move the ledger unchecked)", "{why:?}");
        let why = f.misspelled("refs/ledgers/x").unwrap();
        assert_eq!(why.place, ["refs/ledgers/x"]);
        assert_eq!(why.sentence, "this repository keeps its ledgers under refs/heads/ledgers/ (git config ledger.refPrefix); a ledger ref under refs/ledgers/ is refused, since a repository never mixes the two (the ledger is refs/heads/ledgers/x)", "{why:?}");
        assert_eq!(f.tracking_prefix("o"), "refs/ledger-remotes/o/");
        assert_eq!(
            LedgerRefs::default().tracking_prefix("o"),
            "refs/remotes/o/ledgers/"
        );
        assert_eq!(
            f.fetch_refspec("o"),
            "refs/heads/ledgers/*:refs/ledger-remotes/o/*"
        );
        for bad in [
            "refs/ledgers",
            "ledgers/",
            "refs/",
            "refs/tags/l/",
            "refs/remotes/o/",
            "refs/a b/",
            "refs/Replace/x/",
        ] {
            assert!(LedgerRefs::with_prefix(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn record_paths_have_the_spec_shape() {
        let p = record_path("hand:x/01");
        assert!(is_record_path(&p));
        let hex = crate::sha256_hex(b"hand:x/01");
        assert_eq!(p, format!("records/{}/{}.json", &hex[..2], &hex[2..]));
        assert!(is_fanout_dir(p.rsplit_once('/').unwrap().0));
        // The flat layout of version 1, and names that are not the fan-out's shape.
        assert!(!is_record_path(&format!("records/{hex}.json")));
        assert!(!is_record_path("records/abc.json"));
        assert!(!is_record_path(&format!(
            "records/{}/{}.json",
            &hex[..2],
            &hex[..62].to_uppercase()
        )));
        assert!(!is_record_path(&format!(
            "records/{}/{}.json",
            &hex[..3],
            &hex[3..]
        )));
        assert!(!is_record_path(&format!(
            "records/{}/{}.JSON",
            &hex[..2],
            &hex[2..]
        )));
        assert!(!is_fanout_dir("records/AB") && !is_fanout_dir("records/abc"));
        assert_eq!(schedule_id_of("rows/a/b/01.json"), Some("a/b/01"));
    }
}
