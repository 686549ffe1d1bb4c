//! The red-team review of issue 15: the merged fixes attacked again with real Git, as the
//! campaign would — variants the fixers' own tests did not try, combinations of the fixes and
//! other entry points. Each test reproduces one attack; those that got through before their
//! fix say so (see docs/decisions.md, "Red-team review of issue 15").

use std::path::Path;

use crate::common::{git, git_hooked, git_run, ledger, ledger_hooked, Run};
use crate::gitstore::Fixture;
use crate::message_rule::{message, Case, D};

/// A commit object written byte for byte (`git hash-object --literally`): the tree of `of`,
/// parent `parent`, extra header lines `headers`, then `message` as raw bytes.
fn raw_commit(dir: &Path, of: &str, parent: &str, headers: &str, message: &[u8]) -> String {
    let tree = git(dir, &["rev-parse", &format!("{of}^{{tree}}")]);
    let mut obj = format!(
        "tree {tree}\nparent {parent}\nauthor A <a@b> 1796117864 +0000\ncommitter A <a@b> 1796117864 +0000\n{headers}\n"
    )
    .into_bytes();
    obj.extend_from_slice(message);
    let r = git_run(
        dir,
        &[
            "hash-object",
            "-t",
            "commit",
            "-w",
            "--literally",
            "--stdin",
        ],
        Some(&obj),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout.trim().to_owned()
}

/// Rule 7 variants on the wire: a message Git would show or parse otherwise than the one the
/// tool writes is refused by pre-receive, naming rule 7; none of them moves the server's ref.
/// (All were refused before this review; kept so that they stay refused.)
fn rule_7_variants_git_reads_otherwise_are_refused(prefix: &str) {
    let c = Case::under(prefix);
    let fill = c.fill(&[D]);
    let good_message = message(
        &format!("put {D}: ERROR -> error"),
        &c.body(&[D]),
        &[c.declaration(), c.attempt(D), "Ledger-Filled: 2/6".into()],
    );
    let good = c.commit(&fill, &good_message);
    c.admitted("the message the tool writes", &good);
    let dir = c.f.dir();
    let variant = |headers: &str, m: &[u8]| raw_commit(dir, &good, &c.tip, headers, m);
    let crlf = good_message.replace('\n', "\r\n");
    c.refused("CRLF line endings", &variant("", crlf.as_bytes()), &["\\r"]);
    let folded = good_message.replace(" ERROR error\n", " ERROR\n error\n");
    c.refused(
        "a Ledger-Attempt folded over two lines (Git unfolds it)",
        &variant("", folded.as_bytes()),
        &["is not a trailer (\" error\")"],
    );
    let folded_count = good_message.replace("Ledger-Filled: 2/6\n", "Ledger-Filled: 2/6\n 6/6\n");
    c.refused(
        "a Ledger-Filled continued on a second line",
        &variant("", folded_count.as_bytes()),
        &["is not a trailer (\" 6/6\")"],
    );
    let no_space = good_message.replace("Ledger-Filled: 2/6", "Ledger-Filled:2/6");
    c.refused(
        "a trailer separated by ':' alone",
        &variant("", no_space.as_bytes()),
        &["\"Ledger-Filled:2/6\" does not say what the commit did"],
    );
    let second = format!("{good_message}Ledger-Filled: 6/6\n");
    c.refused(
        "a second Ledger-Filled",
        &variant("", second.as_bytes()),
        &["\"Ledger-Filled: 6/6\" does not say what the commit did"],
    );
    // What `git log` shows stops at a NUL; the lie before it is what a reviewer reads.
    let mut nul = format!(
        "import {D}: PASS -> verified delivery\n\n{}\nLedger-Attempt: {D} PASS verified_delivery\nLedger-Filled: 6/6\n",
        c.declaration()
    )
    .into_bytes();
    nul.push(0);
    nul.extend_from_slice(good_message.as_bytes());
    c.refused(
        "a lie before a NUL, the true message after it",
        &variant("", &nul),
        &["PASS -> verified delivery", "parses as a Ledger- trailer"],
    );
    // UTF-7 turns `+AAo-` into a newline: Git would show a body line as a new paragraph.
    c.refused(
        "an encoding header Git re-encodes the message from",
        &variant("encoding UTF-7\n", good_message.as_bytes()),
        &["declared in encoding \"UTF-7\""],
    );
}

/// Replace refs named as Git reads them: Git takes the first 40 hex digits of the last
/// component of a name under `refs/replace/` (either case) and ignores the rest, so
/// `refs/replace/<id>x` and `refs/replace/any/<id>.y` replace `<id>` in `git log` as
/// `refs/replace/<id>` does. pre-receive admitted both before this review (the hook only
/// looked at names that were exactly an id); the reference-transaction hook and `verify` read
/// the names the same way.
fn replace_refs_named_with_a_suffix_or_a_directory_are_refused(prefix: &str) {
    let c = Case::under(prefix);
    let dir = c.f.dir();
    let tip = c.tip.clone();
    let upper = tip.to_uppercase();
    // The forged object: the tip's commit with a lying subject.
    let forged = raw_commit(
        dir,
        &tip,
        &git(dir, &["rev-parse", &format!("{tip}^")]),
        "",
        b"put scenario/bugfix-iso-weeks/01: PASS -> verified delivery\n",
    );
    // Git itself follows every one of these names.
    for name in [
        format!("refs/replace/{tip}x"),
        format!("refs/replace/a/{tip}.y"),
        format!("refs/replace/{upper}"),
    ] {
        git(dir, &["update-ref", &name, &forged]);
        let shown = git(dir, &["log", "-1", "--format=%s", &tip]);
        assert!(
            shown.contains("PASS -> verified delivery"),
            "{name}: {shown}"
        );
        // verify names it.
        let r = ledger(dir, &["verify"]);
        r.expect_code(2);
        assert!(
            r.stderr
                .contains(&format!("{name}: it replaces commit {tip}")),
            "{name}: {}",
            r.stderr
        );
        git(dir, &["update-ref", "-d", &name]);
        // pre-receive refuses it.
        let before = git(&c.server, &["for-each-ref"]);
        let r = git_hooked(
            dir,
            &[
                "push",
                "--porcelain",
                c.server.to_str().unwrap(),
                &format!("{forged}:{name}"),
            ],
            None,
        );
        assert_ne!(r.code, 0, "{name}: the push must be refused\n{}", r.stdout);
        assert!(
            r.stderr
                .contains(&format!("{name}: it replaces commit {tip}")),
            "{name}: {}",
            r.stderr
        );
        assert_eq!(git(&c.server, &["for-each-ref"]), before, "{name}");
    }
    // A name whose last component is not an id is ignored by Git, and passes.
    let r = git_hooked(
        dir,
        &[
            "push",
            "--porcelain",
            c.server.to_str().unwrap(),
            &format!("{forged}:refs/replace/{tip}/x"),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The reference-transaction hook in a clone refuses the same names.
    ledger(dir, &["hooks", "install"]).ok();
    for name in [
        format!("refs/replace/{tip}x"),
        format!("refs/replace/a/{tip}.y"),
    ] {
        let r = git_hooked(dir, &["update-ref", &name, &forged], None);
        assert_ne!(r.code, 0, "{name}: {}", r.stderr);
        assert!(r.stderr.contains("it replaces commit"), "{}", r.stderr);
        assert!(
            git_run(dir, &["rev-parse", "--verify", "-q", &name], None).code != 0,
            "{name} was created"
        );
    }
}

/// A reftable repository whose `config.worktree` (or the environment, `GIT_CONFIG_COUNT`)
/// says `extensions.refStorage = files`: Git reads the repository's format from its own
/// `config` file only, and keeps refs in reftable; `init` believed the merged configuration
/// before this review and wrote a loose ref Git cannot see.
fn reftable_is_seen_whatever_other_configuration_says(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let base = tempfile::tempdir().unwrap();
    let decl = Fixture::under(2, prefix);
    let decl_path = decl.decl();
    let decl_path = decl_path.to_str().unwrap();
    git(
        base.path(),
        &["init", "-q", "--ref-format=reftable", "-b", "main", "r"],
    );
    let dir = base.path().join("r");
    crate::common::use_prefix(&dir, prefix);
    git(&dir, &["config", "extensions.worktreeConfig", "true"]);
    git(
        &dir,
        &["config", "--worktree", "extensions.refStorage", "files"],
    );
    let r = ledger(&dir, &["init", decl_path]);
    r.expect_code(1);
    assert!(
        r.stderr.contains("extensions.refStorage = reftable"),
        "{}",
        r.stderr
    );
    assert!(
        !dir.join(".git").join(prefix.trim_end_matches('/')).exists(),
        "a loose ledger ref"
    );
    git(
        &dir,
        &["config", "--worktree", "--unset", "extensions.refStorage"],
    );
    let mut cmd = std::process::Command::new(crate::common::bin());
    crate::common::pin_env(&mut cmd)
        .current_dir(&dir)
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "extensions.refStorage")
        .env("GIT_CONFIG_VALUE_0", "files")
        .args(["init", decl_path]);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        !dir.join(".git").join(prefix.trim_end_matches('/')).exists(),
        "a loose ledger ref"
    );
    assert_eq!(git(&dir, &["for-each-ref"]), "");
    // The other side: a files repository still works, whatever the worktree config says.
    let f = base.path().join("f");
    git(base.path(), &["init", "-q", "-b", "main", "f"]);
    crate::common::use_prefix(&f, prefix);
    git(&f, &["config", "extensions.worktreeConfig", "true"]);
    git(
        &f,
        &["config", "--worktree", "extensions.refStorage", "reftable"],
    );
    ledger(&f, &["init", decl_path]).ok();
    git(&f, &["rev-parse", rf]);
}

/// Every way plain Git deletes a ref, run in a clone with the hooks installed, on a packed
/// ledger ref: `git fetch --prune` of a refspec mapped onto `refs/ledgers/*`, `git remote
/// prune`, `update-ref --stdin` with `option no-deref`, a deletion through a symbolic ref. All
/// were refused before this review; kept so that they stay refused.
fn other_ways_of_deleting_a_ledger_ref_are_refused(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let c = Case::under(prefix);
    let dir = c.f.dir();
    ledger(dir, &["hooks", "install"]).ok();
    let r = git_hooked(dir, &["pack-refs", "--all"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let empty = tempfile::tempdir().unwrap();
    git(empty.path(), &["init", "-q", "--bare", "e.git"]);
    let e = empty.path().join("e.git");
    git(dir, &["remote", "add", "e", e.to_str().unwrap()]);
    git(
        dir,
        &["config", "remote.e.fetch", &format!("+{prefix}*:{prefix}*")],
    );
    let tip = c.tip.clone();
    let stays = |what: &str, r: &Run| {
        assert_ne!(r.code, 0, "{what}: must fail\n{}", r.stderr);
        assert!(
            r.stderr.contains("deleting a ledger ref is refused"),
            "{what}: {}",
            r.stderr
        );
        assert_eq!(git(dir, &["rev-parse", rf]), tip, "{what}: the ref moved");
    };
    stays(
        "fetch --prune",
        &git_hooked(dir, &["fetch", "--prune", "e"], None),
    );
    stays(
        "remote prune",
        &git_hooked(dir, &["remote", "prune", "e"], None),
    );
    let stdin = format!("option no-deref\ndelete {rf}\n");
    stays(
        "update-ref --stdin with option no-deref",
        &git_hooked(dir, &["update-ref", "--stdin"], Some(stdin.as_bytes())),
    );
    let r = git_hooked(dir, &["symbolic-ref", "refs/heads/alias", rf], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    stays(
        "update-ref -d through a symbolic ref",
        &git_hooked(dir, &["update-ref", "-d", "refs/heads/alias"], None),
    );
    // Deleting the symbolic ref itself is not a deletion of the ledger.
    let r = git_hooked(
        dir,
        &["update-ref", "-d", "--no-deref", "refs/heads/alias"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(git(dir, &["rev-parse", rf]), tip);
    // And on the server: a mirror push from a repository without the ledger.
    let m = tempfile::tempdir().unwrap();
    git(m.path(), &["init", "-q", "-b", "main"]);
    git(m.path(), &["commit", "-q", "--allow-empty", "-m", "x"]);
    let r = git_hooked(
        m.path(),
        &["push", "--mirror", c.server.to_str().unwrap()],
        None,
    );
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("deleting a ledger ref is refused"),
        "{}",
        r.stderr
    );
    assert_eq!(c.server_tip(), tip);
}

/// `sync` admits the remote's commits from their blobs: a forged entry in this clone's cache of
/// checked declarations (a scenario outcome added) let `sync` fast-forward the local ledger
/// to a remote commit that `verify` refuses, before this review.
fn a_forged_cache_entry_does_not_change_what_sync_admits(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let c = Case::under(prefix);
    let dir = c.f.dir();
    let base = c.tip.clone();
    // An unhooked remote holding the ledger.
    let remotes = tempfile::tempdir().unwrap();
    git(remotes.path(), &["init", "-q", "--bare", "o.git"]);
    let origin = remotes.path().join("o.git");
    git(dir, &["remote", "add", "origin", origin.to_str().unwrap()]);
    git(dir, &["push", "-q", "origin", &format!("{rf}:{rf}")]);
    // The forged entry (written over the one `put` kept) admits VERIFIED for the scenario
    // task; the remote gains a commit filling a row as VERIFIED, with the message rule 7
    // expects under the forged declaration (an unknown outcome is ungraded).
    crate::refhooks::forge_cache(&dir.join(".git"), "VERIFIED");
    let mut files = c.fill(&[D]);
    let path = format!("rows/{D}.json");
    let mut row: serde_json::Value = serde_json::from_slice(&files[&path].bytes).unwrap();
    row["native_outcome"] = "VERIFIED".into();
    files.insert(
        path,
        crate::gitstore::regular(crate::gitstore::canonical_row(&row)),
    );
    let bad = c.commit(
        &files,
        &message(
            &format!("put {D}: VERIFIED -> ungraded"),
            "",
            &[
                c.declaration(),
                format!("Ledger-Attempt: {D} VERIFIED ungraded"),
                "Ledger-Filled: 2/6".into(),
            ],
        ),
    );
    git(dir, &["push", "-q", "origin", &format!("{bad}:{rf}")]);
    let r = ledger_hooked(dir, &["sync"]);
    assert_eq!(r.code, 2, "sync must refuse\n{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("VERIFIED"), "{}", r.stderr);
    assert_eq!(git(dir, &["rev-parse", rf]), base, "the local ledger moved");
    // log and verify, which read the declaration from its blob too, refuse that commit.
    git(dir, &["update-ref", rf, &bad, &base]);
    let r = ledger(dir, &["verify"]);
    r.expect_code(2);
    assert!(r.stderr.contains("VERIFIED"), "{}", r.stderr);
    let r = ledger(dir, &["log"]);
    r.expect_code(2);
    assert!(r.stderr.contains("VERIFIED"), "{}", r.stderr);
}

/// A repository with the hooks installed and a ledger file on its branch: `eval/campaign.json`
/// and its template `eval/ledger.json`, committed.
fn ledger_file_repo() -> tempfile::TempDir {
    use crate::common::write;
    let repo = crate::common::new_repo();
    let dir = repo.path();
    ledger(dir, &["hooks", "install"]).ok();
    write(
        dir,
        "eval/campaign.json",
        crate::gitstore::pretty(&crate::gitstore::declaration_value(crate::gitstore::ID, 2)),
    );
    let template = ledger(dir, &["template", "eval/campaign.json"])
        .ok()
        .stdout
        .clone();
    write(dir, "eval/ledger.json", &template);
    git(dir, &["add", "-A"]);
    git_hooked(dir, &["commit", "-q", "-m", "declare"], None).ok();
    repo
}

/// The ledger file's text with row D's `elapsed_seconds` (null once D is filled by hand) set.
fn with_d_elapsed(dir: &std::path::Path) -> String {
    let filled = std::fs::read_to_string(dir.join("eval/ledger.json")).unwrap();
    let at = filled.find(&format!("\"schedule_id\": \"{D}\"")).unwrap();
    let e = at + filled[at..].find("\"elapsed_seconds\": null").unwrap();
    format!(
        "{}\"elapsed_seconds\": 99.0{}",
        &filled[..e],
        &filled[e + "\"elapsed_seconds\": null".len()..]
    )
}

/// `r` (a `git` run that would commit an edit of row D's `elapsed_seconds`) was refused by the
/// pre-commit check, and `HEAD` is still `main`.
fn refused_against_head(r: &crate::common::Run, dir: &std::path::Path, main: &str, what: &str) {
    assert_ne!(r.code, 0, "{what} must be refused\n{}", r.stdout);
    assert!(
        r.stderr.contains("eval/ledger.json (against HEAD)")
            && r.stderr.contains("elapsed_seconds"),
        "{}",
        r.stderr
    );
    assert_eq!(git(dir, &["rev-parse", "HEAD"]), main, "{what} committed");
}

/// Fill row `sid` of the ledger file of [`ledger_file_repo`] by hand (`put` in file mode).
fn put_by_hand(dir: &std::path::Path, sid: &str) {
    let l: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("eval/ledger.json")).unwrap()).unwrap();
    let mut row = (l["rows"].as_array().unwrap().iter())
        .find(|r| r["schedule_id"] == sid)
        .unwrap()
        .clone();
    row["native_outcome"] = "INTERRUPTED_UNGRADED".into();
    row["native_status"] = "INCOMPLETE".into();
    row["reason"] = "by hand".into();
    // Outside the work tree and private to this repository (tests run in parallel).
    let p = dir.join(".git/row.json");
    std::fs::write(&p, crate::gitstore::pretty(&row)).unwrap();
    let p = p.to_str().unwrap().to_owned();
    ledger(
        dir,
        &["put", sid, &p, "eval/campaign.json", "eval/ledger.json"],
    )
    .ok();
}

/// A ledger file on a branch, edited by `git merge`: a side branch from before a row was filled
/// fills it the same way and also sets a field the main line left null; the two merge without
/// conflict into a filled row that was edited. `git merge` runs `pre-merge-commit`, not
/// `pre-commit`, so the merge was committed before this review; the installed
/// `pre-merge-commit` runs the same check. The other side: a merge whose result is admitted
/// (the side branch fills another row) commits.
#[test]
fn a_merge_that_edits_a_filled_row_is_refused() {
    use crate::common::write;
    let repo = ledger_file_repo();
    let dir = repo.path();
    assert!(dir.join(".git/hooks/pre-merge-commit").is_file());
    let put = |sid: &str| put_by_hand(dir, sid);
    let commit = |what: &str| {
        git(dir, &["add", "-A"]);
        git_hooked(dir, &["commit", "-q", "-m", what], None)
    };
    put(D);
    commit("fill").ok();
    let main = git(dir, &["rev-parse", "HEAD"]);
    // The side branch: the same fill, and a field the main line left null.
    let side = with_d_elapsed(dir);
    git(dir, &["checkout", "-q", "-b", "side", "HEAD~1"]);
    write(dir, "eval/ledger.json", &side);
    commit("side fill").ok();
    git(dir, &["checkout", "-q", "main"]);
    let r = git_hooked(dir, &["merge", "--no-edit", "side"], None);
    refused_against_head(&r, dir, &main, "the merge");
    git(dir, &["merge", "--abort"]);
    // The other side: the side branch fills another row; the merge is admitted.
    git(
        dir,
        &["checkout", "-q", "-b", "other", &format!("{main}~1")],
    );
    put(crate::message_rule::FILLED);
    commit("other fill").ok();
    git(dir, &["checkout", "-q", "main"]);
    let r = git_hooked(dir, &["merge", "--no-edit", "other"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_ne!(git(dir, &["rev-parse", "HEAD"]), main);
}

/// A ledger file on a branch, edited by `git am`: Git runs `pre-applypatch`, not `pre-commit`,
/// between applying a patch and committing it, so a patch that edits a filled row (made on
/// another clone with `--no-verify`) was committed before; the installed `pre-applypatch` runs
/// the same check. The other side: a patch that fills a DEFERRED row applies.
#[test]
fn a_patch_that_edits_a_filled_row_is_refused_by_git_am() {
    use crate::common::write;
    let repo = ledger_file_repo();
    let dir = repo.path();
    assert!(dir.join(".git/hooks/pre-applypatch").is_file());
    let put = |sid: &str| put_by_hand(dir, sid);
    put(D);
    git(dir, &["add", "-A"]);
    git_hooked(dir, &["commit", "-q", "-m", "fill"], None).ok();
    let main = git(dir, &["rev-parse", "HEAD"]);
    // A patch that sets a field of the filled row, committed past pre-commit.
    let edited = with_d_elapsed(dir);
    git(dir, &["checkout", "-q", "-b", "edit"]);
    write(dir, "eval/ledger.json", &edited);
    git(
        dir,
        &["commit", "-q", "--no-verify", "-am", "edit a filled row"],
    );
    let patch = git(dir, &["format-patch", "-1", "--stdout"]);
    git(dir, &["checkout", "-q", "main"]);
    let r = git_hooked(dir, &["am"], Some(format!("{patch}\n").as_bytes()));
    refused_against_head(&r, dir, &main, "git am");
    git(dir, &["am", "--abort"]);
    // The other side: a patch that fills another row applies.
    git(dir, &["checkout", "-q", "-b", "other"]);
    put(crate::message_rule::FILLED);
    git_hooked(dir, &["commit", "-q", "-am", "other fill"], None).ok();
    let patch = git(dir, &["format-patch", "-1", "--stdout"]);
    git(dir, &["checkout", "-q", "main"]);
    let r = git_hooked(dir, &["am"], Some(format!("{patch}\n").as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_ne!(git(dir, &["rev-parse", "HEAD"]), main);
}

/// A WAL store opened through a symbolic link to its database: SQLite keeps the `-wal` beside
/// the file the link points to. Before this review the import looked for `-wal` beside the
/// link, found none, and read the database without its committed transactions (the attempt
/// only in the WAL was not found); now it copies the target's `-wal`, and neither directory
/// changes.
#[test]
fn a_wal_store_behind_a_symlinked_database_is_read_whole() {
    use crate::inputs::{dir_state, wal_store, ARENA_ROW};
    let c = crate::import::Campaign::new();
    let writer = wal_store(&c, "real-store");
    let real = c.root().join("real-store");
    let link = c.root().join("link-store");
    std::fs::create_dir(&link).unwrap();
    std::os::unix::fs::symlink(real.join("results.sqlite3"), link.join("results.sqlite3")).unwrap();
    let (real_before, link_before) = (dir_state(&real), dir_state(&link));
    c.reset_ledger();
    let r = c.import(&["--arena", ARENA_ROW, "link-store", "att-0001"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(c.row(ARENA_ROW)["native_outcome"], "PASS");
    assert_eq!(dir_state(&real), real_before, "the store changed");
    assert_eq!(
        dir_state(&link),
        link_before,
        "the link's directory changed"
    );
    drop(writer);
}

/// cite's text output with hostile run lines: a field name holding a newline and a terminal
/// escape, a field name with a bidirectional override, an envelope value with an OSC sequence
/// and a newline followed by a fake verdict. Before this review the summary lines and the
/// envelope list printed them raw (a line `not citeable: fake` of the attacker's, the
/// terminal's title set); now each is one line with the characters escaped. `--json` keeps
/// the values as they were.
#[test]
fn cite_text_escapes_hostile_field_names_and_values() {
    let d = tempfile::tempdir().unwrap();
    let h = |s: &str| git_ledger::sha256_hex(s.as_bytes());
    let mut lines = String::new();
    for (i, t) in ["hello-world", "fix-git"].iter().enumerate() {
        let mut row = serde_json::json!({
            "task_id": t,
            "prompt_sha256": h(&format!("p {t}")),
            "hidden_tests_sha256": h(&format!("t {t}")),
            "access_class": "api_model",
            "server_class": "docker_local",
            "timeout_s": 1800,
            "token_budget": 200000,
            "attempt": 1,
            "stop_reason": "pass",
            "patch_sha256": h(&format!("x {t}")),
            "weird\nnot citeable: forged\u{1b}[2J": 1,
            "stop_reason\u{202e}": "x",
        });
        if i == 1 {
            row["access_class"] = "\u{1b}]0;pwned\u{7}evil\nnot citeable: fake".into();
        }
        lines.push_str(&serde_json::to_string(&row).unwrap());
        lines.push('\n');
    }
    crate::common::write(d.path(), "runs.jsonl", &lines);
    let r = ledger(d.path(), &["cite", "runs.jsonl"]);
    r.expect_code(2);
    for out in [&r.stdout, &r.stderr] {
        assert!(
            !out.contains('\u{1b}'),
            "an escape sequence went out raw:\n{out}"
        );
        assert!(
            !out.contains('\u{202e}'),
            "a bidi override went out raw:\n{out}"
        );
        assert!(!out.contains('\u{7}'), "a BEL went out raw:\n{out}");
    }
    let own: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("not citeable"))
        .collect();
    assert_eq!(own.len(), 1, "a forged line of its own:\n{}", r.stdout);
    assert!(
        r.stdout
            .contains("weird\\u{a}not citeable: forged\\u{1b}[2J: invalid in 2 of 2 rows"),
        "{}",
        r.stdout
    );
    // The other side: under --json the field names are kept as they were.
    let r = ledger(d.path(), &["cite", "--json", "runs.jsonl"]);
    r.expect_code(2);
    assert!(
        r.stdout.contains("weird\\nnot citeable: forged\\u001b[2J"),
        "{}",
        r.stdout
    );
}

/// `git notes` on a ledger commit: `git log` shows the note under the commit's message
/// (`Notes:` with whatever text the pusher chose), on the server and in every clone that
/// fetches the notes ref. A pushed `refs/notes/commits` annotating a ledger commit was admitted
/// before this review; now pre-receive and reference-transaction refuse it as they refuse a
/// replace ref, and refuse a ledger update that an existing note would then annotate. The
/// other side: a note on a commit no ledger holds, and removing a note, pass.
fn notes_on_ledger_commits_are_refused(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let c = Case::under(prefix);
    let dir = c.f.dir();
    let url = c.server.to_str().unwrap().to_owned();
    let push = |spec: &str| git_hooked(dir, &["push", "--porcelain", &url, spec], None);
    let server_notes = || git_run(&c.server, &["for-each-ref", "refs/notes/"], None).stdout;
    // Written without our hooks (plain Git in another clone would do the same).
    let plain = |args: &[&str]| {
        let mut a = vec!["-c", "core.hooksPath=/dev/null"];
        a.extend_from_slice(args);
        git(dir, &a)
    };
    plain(&[
        "notes",
        "add",
        "-m",
        "Ledger-Attempt: x PASS verified_delivery",
        &c.tip,
    ]);
    let shown = git(dir, &["log", "-1", &c.tip]);
    assert!(shown.contains("Notes:"), "{shown}");
    // verify names it, with how to remove it.
    let r = ledger(dir, &["verify"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains(&format!(
            "refs/notes/commits: it holds a note on commit {}",
            c.tip
        )) && r
            .stderr
            .contains("git notes --ref refs/notes/commits remove"),
        "{}",
        r.stderr
    );
    let r = push("refs/notes/commits:refs/notes/commits");
    assert_ne!(r.code, 0, "the notes push must be refused\n{}", r.stdout);
    assert!(
        r.stderr.contains(&format!(
            "refs/notes/commits: it holds a note on commit {}",
            c.tip
        )),
        "{}",
        r.stderr
    );
    assert_eq!(server_notes(), "");
    // Another spelling of refs/notes/ is guarded too.
    let r = push("refs/notes/commits:refs/NOTES/commits");
    assert_ne!(r.code, 0, "{}", r.stdout);
    // A note on a commit no ledger holds passes.
    plain(&["notes", "remove", &c.tip]);
    let other = git(dir, &["commit-tree", "-m", "other", &git(dir, &["mktree"])]);
    plain(&["notes", "add", "-m", "fine", &other]);
    let r = push(&format!("{other}:refs/heads/other"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = push("refs/notes/commits:refs/notes/commits");
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A note made before its commit is pushed: the ledger update that would be annotated is
    // refused, naming the note.
    let fill = c.commit(
        &c.fill(&[D]),
        &message(
            &format!("put {D}: ERROR -> error"),
            &c.body(&[D]),
            &[c.declaration(), c.attempt(D), "Ledger-Filled: 2/6".into()],
        ),
    );
    plain(&["notes", "add", "-m", "PASS", &fill]);
    let r = push("refs/notes/commits:refs/notes/commits");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = push(&format!("{fill}:{rf}"));
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stderr.contains(&format!(
            "commit {fill} of this ledger has a note in the existing refs/notes/commits"
        )),
        "{}",
        r.stderr
    );
    assert_eq!(c.server_tip(), c.tip);
    // Removing the note lets the ledger move.
    plain(&["notes", "remove", &fill]);
    let r = push("+refs/notes/commits:refs/notes/commits");
    assert_eq!(r.code, 0, "{}", r.stderr);
    c.admitted("the fill once its note is gone", &fill);
    // In a clone with the hooks, `git notes add` on a ledger commit is refused.
    ledger(dir, &["hooks", "install"]).ok();
    let r = git_hooked(dir, &["notes", "add", "-f", "-m", "PASS", &c.tip], None);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("it holds a note on commit"),
        "{}",
        r.stderr
    );
}

crate::common::under_both_prefixes!(
    rule_7_variants_git_reads_otherwise_are_refused,
    replace_refs_named_with_a_suffix_or_a_directory_are_refused,
    reftable_is_seen_whatever_other_configuration_says,
    other_ways_of_deleting_a_ledger_ref_are_refused,
    a_forged_cache_entry_does_not_change_what_sync_admits,
    notes_on_ledger_commits_are_refused,
);
