//! Ledger tips whose `Ledger-Filled` count this tool has checked against their tree, kept per
//! ledger ref in `<git common dir>/git-ledger/tips/<SHA-256 of the ref name>`; and, in a list of
//! the same form (`<git common dir>/git-ledger/admitted/<SHA-256 of "admitted">`), ledger
//! commits whose whole chain from the root `verify`'s validator admitted (see [`admitted`]).
//!
//! A writer builds on the tip's count (rule 7 counts from the parent's message), so before it
//! writes it makes sure the tip's message counts as many filled rows as the tip's tree holds
//! record files. Counting the record files reads every fan-out directory `records/<hh>/`: at
//! 10,000 filled rows that was half of an import's time, and it grew with the rows filled. A
//! tip counted once, or one this tool wrote itself after admitting it on a tip so checked
//! (admission's rules 5 and 7 keep the count and the records in step), needs no second count:
//! such tips are listed here, the newest first, at most [`KEPT`] per ref.
//!
//! Like the declaration cache (`decl_cache`) this is derived data that may be deleted at any
//! time (the next writer counts again), it is read only by the writers (never by `verify`, the
//! hooks, `report` or `sync`'s admission), only in a repository git-ledger fully trusts, and
//! only when written by this version under the same rules fingerprint. What it trusts is
//! weighed in `docs/decisions.md` ("Checked tips"): a forged list can make a writer build on a
//! tip whose count was never checked, which is less than a forged declaration-cache entry can
//! make it do, and changes no verdict of `verify` or the hooks.

use gix::ObjectId;

use super::super::decl_cache;

/// The first line of a list; a change of its layout changes it.
const MAGIC: &str = "git-ledger checked tips 1";

/// How many checked tips are kept per ref: enough for the writers that take turns on one ref
/// and for a ref reset to a recent tip, small enough to read at every write.
pub(super) const KEPT: usize = 32;

/// The directory of the writers' lists (a tip's count checked).
const TIPS: &str = "tips";
/// The directory of the list of admitted chains, and the key of its one list.
const ADMITTED: (&str, &str) = ("admitted", "admitted");

/// The file of list `refname` in directory `dir`, if this repository may hold one.
fn path_in(repo: &gix::Repository, dir: &str, refname: &str) -> Option<std::path::PathBuf> {
    Some(
        decl_cache::dir(repo)?
            .join(dir)
            .join(crate::sha256_hex(refname.as_bytes())),
    )
}

/// The writers' file for `refname`.
#[cfg(test)]
fn path(repo: &gix::Repository, refname: &str) -> Option<std::path::PathBuf> {
    path_in(repo, TIPS, refname)
}

/// The tips listed for `refname`, newest first; empty when there is no list, or it is not
/// whole, or another version, other rules or another ref wrote it.
fn read(repo: &gix::Repository, refname: &str) -> Vec<ObjectId> {
    read_in(repo, TIPS, refname)
}

fn read_in(repo: &gix::Repository, dir: &str, refname: &str) -> Vec<ObjectId> {
    let Some(path) = path_in(repo, dir, refname) else {
        return Vec::new();
    };
    let hash = repo.object_hash();
    // The header and KEPT ids, each on its own line; anything longer is not such a list.
    let bound = 512 + (KEPT as u64) * (hash.len_in_hex() as u64 + 1);
    let text = match std::fs::metadata(&path) {
        Ok(m) if m.is_file() && m.len() <= bound => std::fs::read_to_string(&path).ok(),
        _ => None,
    };
    text.and_then(|t| parse(&t, refname, hash))
        .unwrap_or_default()
}

/// The ids of a list's text, `None` unless every line is what [`add`] writes.
fn parse(text: &str, refname: &str, hash: gix::hash::Kind) -> Option<Vec<ObjectId>> {
    let body = text.strip_prefix(&header(refname))?;
    let mut ids = Vec::new();
    for line in body.split_terminator('\n') {
        if line.len() != hash.len_in_hex() {
            return None;
        }
        ids.push(ObjectId::from_hex(line.as_bytes()).ok()?);
    }
    (body.ends_with('\n') && ids.len() <= KEPT).then_some(ids)
}

fn header(refname: &str) -> String {
    format!(
        "{MAGIC}\nversion {}\nrules {}\nref {refname}\n\n",
        env!("CARGO_PKG_VERSION"),
        decl_cache::RULES
    )
}

/// Whether `tip` is listed as checked for `refname`.
pub(super) fn holds(repo: &gix::Repository, refname: &str, tip: ObjectId) -> bool {
    read(repo, refname).contains(&tip)
}

/// List `tip` as checked for `refname`, first. Best effort: a list that cannot be written is
/// not an error (the next writer counts again), and of two writers adding at once one may lose
/// its id, which costs the same.
pub(super) fn add(repo: &gix::Repository, refname: &str, tip: ObjectId) {
    add_in(repo, TIPS, refname, tip)
}

fn add_in(repo: &gix::Repository, dir: &str, refname: &str, tip: ObjectId) {
    let Some(path) = path_in(repo, dir, refname) else {
        return;
    };
    let mut ids = read_in(repo, dir, refname);
    if ids.first() == Some(&tip) {
        return;
    }
    ids.retain(|id| *id != tip);
    ids.insert(0, tip);
    ids.truncate(KEPT);
    let mut text = header(refname);
    for id in &ids {
        text.push_str(&id.to_string());
        text.push('\n');
    }
    let _ = decl_cache::write_atomically(&path, &[text.as_bytes()]);
}

/// Ledger commits whose whole first-parent chain, root included, `verify`'s validator admitted
/// (`verify` lists each tip it admits, `report`, `show`, `log` and `diff` each state they
/// establish), newest first, at most [`KEPT`]: a reviewer's command on such a commit, or on one
/// that extends it, checks only the steps after it (`git::read::admitted`). `verify` itself
/// never reads it. Derived data as above: weighed in `docs/decisions.md` ("Admitted states").
pub mod admitted {
    use super::*;

    /// The listed commits, newest first.
    pub fn listed(repo: &gix::Repository) -> Vec<ObjectId> {
        read_in(repo, ADMITTED.0, ADMITTED.1)
    }

    /// List `commit` (its chain admitted from the root), first. Best effort, as [`super::add`].
    pub fn add(repo: &gix::Repository, commit: ObjectId) {
        add_in(repo, ADMITTED.0, ADMITTED.1, commit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;

    fn repo() -> (tempfile::TempDir, gix::Repository) {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        let repo = crate::git::open(Some(dir.path())).unwrap();
        (dir, repo)
    }

    fn id(c: u8) -> ObjectId {
        ObjectId::from_hex(&[c; 40]).unwrap()
    }

    #[test]
    fn a_listed_tip_is_held_for_its_ref_only_and_the_list_keeps_the_newest() {
        let (_dir, repo) = repo();
        let r = "refs/ledgers/a";
        assert!(!holds(&repo, r, id(b'1')), "nothing listed yet");
        add(&repo, r, id(b'1'));
        add(&repo, r, id(b'2'));
        assert!(holds(&repo, r, id(b'1')) && holds(&repo, r, id(b'2')));
        assert!(!holds(&repo, "refs/ledgers/b", id(b'1')), "another ref");
        // Adding a listed tip again moves it first; the oldest fall off after KEPT.
        add(&repo, r, id(b'1'));
        assert_eq!(read(&repo, r), [id(b'1'), id(b'2')]);
        for i in 0..KEPT {
            add(
                &repo,
                r,
                ObjectId::from_hex(format!("{i:040x}").as_bytes()).unwrap(),
            );
        }
        assert_eq!(read(&repo, r).len(), KEPT);
        assert!(!holds(&repo, r, id(b'1')) && !holds(&repo, r, id(b'2')));
    }

    #[test]
    fn a_list_that_is_not_whole_or_of_other_rules_holds_nothing() {
        let (_dir, repo) = repo();
        let r = "refs/ledgers/a";
        add(&repo, r, id(b'1'));
        let file = path(&repo, r).unwrap();
        let good = std::fs::read_to_string(&file).unwrap();
        let edits = [
            good.replacen("tips 1", "tips 2", 1),
            good.replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1),
            good.replacen(decl_cache::RULES, &"0".repeat(64), 1),
            good.replacen("refs/ledgers/a", "refs/ledgers/b", 1),
            good[..good.len() - 1].to_owned(),
            good[..good.len() - 2].to_owned() + "\n",
            good.replacen("\n\n", "\n", 1),
            good.clone() + "not an id\n",
            String::new(),
        ];
        for (i, bad) in edits.iter().enumerate() {
            assert_ne!(bad, &good, "edit {i} changes the list");
            std::fs::write(&file, bad).unwrap();
            assert!(!holds(&repo, r, id(b'1')), "edit {i} holds nothing");
        }
        // Too long to be a list: not read.
        std::fs::write(
            &file,
            good.clone() + &format!("{}\n", id(b'2')).repeat(KEPT),
        )
        .unwrap();
        assert!(!holds(&repo, r, id(b'1')));
        // Adding over a broken list starts a new one.
        add(&repo, r, id(b'3'));
        assert_eq!(read(&repo, r), [id(b'3')]);
    }
}
