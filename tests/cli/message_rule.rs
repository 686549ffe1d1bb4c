//! Rule 7 with real Git (issue 15, attack 1): a ledger commit's message says exactly what its
//! tree did. Messages written with plumbing and pushed into a bare repository with the
//! pre-receive hook, moved with `git update-ref` under the reference-transaction hook, and read
//! by `verify`, `log` and the next `put` — each lie refused (or, for `log`, not believed), and a
//! correct hand-written message admitted.

use std::path::PathBuf;

use serde_json::json;

use crate::common::{git, git_hooked, hooked_server, ledger, Run};
use crate::gitstore::{canonical_row, read_files, regular, state_commit, Files, Fixture, ID};

pub const FILLED: &str = "scenario/bugfix-iso-weeks/01";
pub const D: &str = "scenario/bugfix-iso-weeks/02";
/// Before `D` in schedule order (arena tasks come first).
pub const A: &str = "arena/sympy-matrix/01";

/// A ledger with one row filled (1/6), pushed to a hooked bare server.
pub struct Case {
    pub f: Fixture,
    pub tip: String,
    pub files: Files,
    _servers: tempfile::TempDir,
    pub server: PathBuf,
    /// The value of the ledger's `Ledger-Declaration` trailer.
    pub decl: String,
}

pub fn record_path(key: &str) -> String {
    git_ledger::git::layout::record_path(key)
}

impl Case {
    #[allow(dead_code)] // the ref-mode tests take a prefix; kept for tests to come
    pub fn new() -> Self {
        Self::under(crate::common::PREFIXES[0])
    }

    /// [`Case::new`] with the ledgers under `prefix`, in the clone and on the server.
    pub fn under(prefix: &str) -> Self {
        let f = Fixture::under(2, prefix);
        f.put(FILLED, "INTERRUPTED_UNGRADED").ok();
        let tip = f.tip();
        let files = read_files(f.dir(), &tip);
        let servers = tempfile::tempdir().unwrap();
        let server = hooked_server(servers.path(), "server.git");
        crate::common::use_prefix(&server, prefix);
        let decl = git(
            f.dir(),
            &[
                "log",
                "-1",
                "--format=%(trailers:key=Ledger-Declaration,valueonly)",
                &tip,
            ],
        )
        .trim()
        .to_owned();
        let c = Case {
            f,
            tip,
            files,
            _servers: servers,
            server,
            decl,
        };
        c.push(&c.tip).ok();
        c
    }

    /// The tip's files with `sids` filled as ERROR (each with its hand record).
    pub fn fill(&self, sids: &[&str]) -> Files {
        let mut files = self.files.clone();
        for sid in sids {
            let path = format!("rows/{sid}.json");
            let mut row: serde_json::Value = serde_json::from_slice(&files[&path].bytes).unwrap();
            let rec = format!("record of {sid}\n").into_bytes();
            row["native_outcome"] = json!("ERROR");
            row["reason"] = json!("crashed");
            row["native_record"] =
                json!({"kind": "hand", "id": sid, "sha256": git_ledger::sha256_hex(&rec)});
            files.insert(path, regular(canonical_row(&row)));
            files.insert(record_path(&format!("hand:{sid}")), regular(rec));
        }
        files
    }

    pub fn commit(&self, files: &Files, message: &str) -> String {
        state_commit(self.f.dir(), files, &[&self.tip], message)
    }

    pub fn push(&self, commit: &str) -> Run {
        git_hooked(
            self.f.dir(),
            &[
                "push",
                "--porcelain",
                self.server.to_str().unwrap(),
                &format!("{commit}:{}", self.f.refname),
            ],
            None,
        )
    }

    pub fn server_tip(&self) -> String {
        git(&self.server, &["rev-parse", &self.f.refname])
    }

    /// Pushing `commit` is refused with `remote:` lines naming it, rule 7 and every needle;
    /// the server's ref does not move.
    #[track_caller]
    pub fn refused(&self, what: &str, commit: &str, needles: &[&str]) {
        self.refused_by("rule 7", what, commit, needles)
    }

    /// As [`Case::refused`], for the rule named `rule`.
    #[track_caller]
    pub fn refused_by(&self, rule: &str, what: &str, commit: &str, needles: &[&str]) {
        let before = self.server_tip();
        let r = self.push(commit);
        assert_ne!(r.code, 0, "{what}: the push must be rejected\n{}", r.stderr);
        assert!(
            r.stdout.contains("pre-receive hook declined"),
            "{what}: {}",
            r.stdout
        );
        let remote: String = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("remote:"))
            .collect::<Vec<_>>()
            .join("\n");
        for n in [&format!("commit {commit}: {rule}")[..]]
            .iter()
            .chain(needles)
        {
            assert!(remote.contains(n), "{what}: no {n:?} in:\n{remote}");
        }
        assert_eq!(self.server_tip(), before, "{what}: the server's ref moved");
        if std::env::var_os("SHOW_REFUSALS").is_some() {
            eprintln!("== {what}\n{remote}");
        }
    }

    /// Pushing `commit` is admitted; the server's ref is put back afterwards (plain Git on the
    /// server, whose only hook is pre-receive).
    #[track_caller]
    pub fn admitted(&self, what: &str, commit: &str) {
        let before = self.server_tip();
        let r = self.push(commit);
        assert_eq!(r.code, 0, "{what}: the push must be admitted\n{}", r.stderr);
        assert_eq!(self.server_tip(), commit);
        git(&self.server, &["update-ref", &self.f.refname, &before]);
    }

    /// The body the tool writes for filling `sids` (in schedule order) as [`Case::fill`] does.
    pub fn body(&self, sids: &[&str]) -> String {
        let lines: Vec<String> = sids.iter().map(|s| format!("{s}  ERROR  error")).collect();
        lines.join("\n")
    }

    pub fn attempt(&self, sid: &str) -> String {
        format!("Ledger-Attempt: {sid} ERROR error")
    }

    pub fn declaration(&self) -> String {
        format!("Ledger-Declaration: {}", self.decl)
    }
}

pub fn message(subject: &str, body: &str, trailers: &[String]) -> String {
    let body = if body.is_empty() {
        String::new()
    } else {
        format!("{body}\n\n")
    };
    format!("{subject}\n\n{body}{}\n", trailers.join("\n"))
}

/// The attack as found: a valid fill of a row as ERROR, pushed with the subject and trailers of
/// `PASS -> verified delivery`, a `Ledger-Attempt` for a row it never filled and
/// `Ledger-Filled: 6/6`.
/// Move the ref by plain Git to a commit whose message counts 4 of 6 rows filled while its rows
/// hold 2, and see `put` refuse to build on it; the commit.
fn miscounting_tip_is_not_built_on(c: &Case) -> String {
    let miscount = c.commit(
        &c.fill(&[D]),
        &message(
            &format!("put {D}: ERROR -> error"),
            &c.body(&[D]),
            &[c.declaration(), c.attempt(D), "Ledger-Filled: 4/6".into()],
        ),
    );
    git(c.f.dir(), &["update-ref", &c.f.refname, &miscount]);
    let r = c.f.put(A, "ERROR");
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("rule 7: its message counts 4 of 6 rows filled, but its tree holds 2"),
        "{}",
        r.stderr
    );
    miscount
}

fn lying_message(c: &Case) -> String {
    message(
        &format!("import {D}: PASS -> verified delivery"),
        &format!("{D}  PASS (COMPLETE)  verified delivery"),
        &[
            c.declaration(),
            format!("Ledger-Attempt: {D} PASS verified_delivery"),
            format!("Ledger-Attempt: {A} PASS verified_delivery"),
            "Ledger-Filled: 6/6".into(),
        ],
    )
}

fn a_lying_message_is_refused_by_pre_receive_and_reference_transaction(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let c = Case::under(prefix);
    let lie = c.commit(&c.fill(&[D]), &lying_message(&c));
    c.refused(
        "the attack",
        &lie,
        &[
            &format!("its subject is \"import {D}: PASS -> verified delivery\""),
            &format!("put {D}: ERROR -> error"),
            &format!("Ledger-Attempt: {D} PASS verified_delivery"),
            &format!("Ledger-Attempt: {A} PASS verified_delivery"),
            "Ledger-Filled: 6/6",
            "Ledger-Filled: 2/6",
        ],
    );
    // The same tree with the message the tool writes is admitted.
    let truth = c.commit(
        &c.fill(&[D]),
        &message(
            &format!("put {D}: ERROR -> error"),
            &format!(
                "{}\n  from written-by-hand-with-git-commit-tree",
                c.body(&[D])
            ),
            &[c.declaration(), c.attempt(D), "Ledger-Filled: 2/6".into()],
        ),
    );
    c.admitted("the truth", &truth);

    // Locally, under the reference-transaction hook: `git update-ref` is refused the same way
    // and the ref stays; the true message moves it.
    let dir = c.f.dir();
    ledger(dir, &["hooks", "install"]).ok();
    let r = git_hooked(dir, &["update-ref", rf, &lie], None);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(&format!("commit {lie}: rule 7"))
            && r.stderr.contains("Ledger-Filled: 6/6"),
        "{}",
        r.stderr
    );
    assert_eq!(c.f.tip(), c.tip, "nothing moved");
    git_hooked(dir, &["update-ref", rf, &truth], None).ok();
    assert_eq!(c.f.tip(), truth);
}

fn verify_log_and_put_do_not_believe_a_lying_message_that_got_in(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let c = Case::under(prefix);
    let dir = c.f.dir();
    let lie = c.commit(&c.fill(&[D]), &lying_message(&c));
    // No hooks here: plain Git puts it on the ledger ref.
    git(dir, &["update-ref", rf, &lie]);

    let v = c.f.run(&["verify"]);
    v.expect_code(2);
    assert!(
        v.stderr.contains(&format!("commit {lie}: rule 7")),
        "{}",
        v.stderr
    );

    // log reports what the rows say (ERROR, 2 of 6 filled), flags the message, exits 2.
    let l = c.f.run(&["log"]);
    l.expect_code(2);
    let first = l.stdout.lines().next().unwrap();
    assert!(
        first.contains(&format!("{D} ERROR -> error  [2/6]")) && first.contains("rule 7"),
        "{}",
        l.stdout
    );
    assert!(!l.stdout.contains("verified delivery"), "{}", l.stdout);
    assert!(!l.stdout.contains("6/6"), "{}", l.stdout);
    assert!(
        l.stderr.contains(&format!("commit {lie}: rule 7")),
        "{}",
        l.stderr
    );
    let j = c.f.run(&["log", "--json"]);
    j.expect_code(2);
    let j = j.json();
    assert_eq!(
        j[0]["attempts"],
        json!([{"schedule_id": D, "native_outcome": "ERROR", "outcome": "error"}])
    );
    assert_eq!(j[0]["filled"], "2/6");
    assert_eq!(j[0]["message_admitted"], false);
    assert_eq!(j[1]["message_admitted"], true);

    // The next put cannot count from the poisoned trailer: nothing is written (no 7/6).
    let r = c.f.put(A, "ERROR");
    r.expect_code(2);
    assert!(r.stderr.contains("rule 7"), "{}", r.stderr);
    assert_eq!(c.f.tip(), lie, "nothing moved");
    let all = git(dir, &["log", "--all", "--format=%B"]);
    assert!(!all.contains("Ledger-Filled: 7/6"), "{all}");

    // A tip that only miscounts (4/6 where its rows hold 2) is not built on either: the count
    // is cross-checked with the tree's record files.
    let miscount = miscounting_tip_is_not_built_on(&c);
    assert_eq!(c.f.tip(), miscount, "nothing moved");

    // Back on the admitted tip, put writes the count from the admitted parent.
    git(dir, &["update-ref", rf, &c.tip]);
    c.f.put(A, "ERROR").ok();
    let m = git(dir, &["log", "-1", "--format=%B", rf]);
    assert!(m.contains("Ledger-Filled: 2/6"), "{m}");
    c.f.run(&["verify"]).ok();
    c.f.run(&["log"]).ok();
}

/// The writers' list of checked tips (`.git/git-ledger/tips/<SHA-256 of the ref name>`): the
/// commits whose count a writer checked against their tree, or wrote on such a tip.
fn checked_tips(c: &Case) -> Vec<String> {
    let file =
        c.f.dir()
            .join(".git/git-ledger/tips")
            .join(git_ledger::sha256_hex(c.f.refname.as_bytes()));
    std::fs::read_to_string(file)
        .map(|t| {
            let ids = t.split_once("\n\n").map_or("", |(_, ids)| ids);
            ids.lines().map(str::to_owned).collect()
        })
        .unwrap_or_default()
}

/// The count cross-check is paid once per tip, not at every write: a tip a writer counted or
/// wrote is listed and not counted again, while a tip moved by plain Git is counted (and a
/// miscounting one refused) however many tips are listed. The list is trusted like the
/// declaration cache: a forged one makes a writer build on an unchecked tip, which `verify`
/// and the hooks (which never read it) still refuse.
fn a_writer_counts_each_tip_once_and_every_tip_plain_git_moved_to(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let c = Case::under(prefix);
    let dir = c.f.dir();
    // Case::new's put counted the root and wrote the tip on it.
    let root = git(dir, &["rev-list", "--max-parents=0", rf]);
    assert_eq!(checked_tips(&c), [c.tip.clone(), root]);

    // A miscounting tip moved by plain Git is not on the list: it is counted, refused, and
    // not listed.
    let miscount = miscounting_tip_is_not_built_on(&c);
    assert!(!checked_tips(&c).contains(&miscount));

    // A true tip moved by plain Git is counted once and listed; the put on it lists its commit.
    let honest = c.commit(
        &c.fill(&[D]),
        &message(
            &format!("put {D}: ERROR -> error"),
            &c.body(&[D]),
            &[c.declaration(), c.attempt(D), "Ledger-Filled: 2/6".into()],
        ),
    );
    git(dir, &["update-ref", rf, &honest]);
    c.f.put(A, "ERROR").ok();
    let written = c.f.tip();
    assert_eq!(checked_tips(&c)[..2], [written.clone(), honest.clone()]);

    // Without the list (deleted, like any derived data) the tip is counted again.
    std::fs::remove_dir_all(dir.join(".git/git-ledger")).unwrap();
    c.f.put(FILLED, "ERROR").expect_code(2); // a retry: refused after the count
    assert_eq!(checked_tips(&c), std::slice::from_ref(&written));

    // A forged list naming the miscounting tip is believed by the writer, as a forged
    // declaration-cache entry is; the commit it writes on it is refused by verify and by the
    // server's hook, which read no list.
    git(dir, &["update-ref", rf, &miscount]);
    let file = dir
        .join(".git/git-ledger/tips")
        .join(git_ledger::sha256_hex(rf.as_bytes()));
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}{miscount}\n")).unwrap();
    c.f.put(A, "ERROR").ok();
    let on_lie = c.f.tip();
    assert!(git(dir, &["log", "-1", "--format=%B", &on_lie]).contains("Ledger-Filled: 5/6"));
    let v = c.f.run(&["verify"]);
    v.expect_code(2);
    assert!(
        v.stderr.contains(&format!("commit {miscount}: rule 7")),
        "{}",
        v.stderr
    );
    let before = c.server_tip();
    let r = c.push(&on_lie);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("commit {miscount}: rule 7")),
        "{}",
        r.stderr
    );
    assert_eq!(c.server_tip(), before);
}

fn each_part_of_rule_7_is_refused_alone_and_a_true_message_is_admitted(prefix: &str) {
    let c = Case::under(prefix);
    let one = c.fill(&[D]);
    let subject = format!("put {D}: ERROR -> error");
    let good = [c.declaration(), c.attempt(D), "Ledger-Filled: 2/6".into()];
    let body = c.body(&[D]);
    let with = |t: &[String]| c.commit(&one, &message(&subject, &body, t));

    c.admitted("the tool's message", &with(&good));
    c.admitted(
        "the tool's message naming its input",
        &c.commit(
            &one,
            &message(
                &subject,
                &format!("{body}\n  from runs/row%2002.json"),
                &good,
            ),
        ),
    );
    // Nothing but what the change did: no free text, no other trailer (docs/messages.md).
    c.refused(
        "a claim in the body",
        &c.commit(
            &one,
            &message(
                &subject,
                &format!("{body}\nIndependently re-run and audited by the benchmark maintainers."),
                &good,
            ),
        ),
        &[
            "line 4 of the body (\"Independently re-run",
            "no other text",
        ],
    );
    let mut signed = good.to_vec();
    signed.push("Reviewed-by: The Maintainers <m@example.org>".into());
    c.refused(
        "a Reviewed-by trailer",
        &with(&signed),
        &["trailer Reviewed-by is not one the tool writes"],
    );
    c.refused(
        "a claim in a from line",
        &c.commit(
            &one,
            &message(
                &subject,
                &format!("{body}\n  from audited by the maintainers"),
                &good,
            ),
        ),
        &["names its input in another form than the tool's"],
    );

    c.refused(
        "wrong subject",
        &c.commit(
            &one,
            &message(&format!("put {D}: PASS -> verified delivery"), "", &good),
        ),
        &["its subject is", &subject],
    );
    c.refused(
        "subject of two lines",
        &c.commit(
            &one,
            &format!("{subject}\nand more\n\n{}\n", good.join("\n")),
        ),
        &["runs on to line 2"],
    );
    c.refused(
        "missing Ledger-Attempt",
        &with(&[c.declaration(), "Ledger-Filled: 2/6".into()]),
        &[&format!("trailer \"{}\" is missing", c.attempt(D))],
    );
    c.refused(
        "Ledger-Attempt twice",
        &with(&[
            c.declaration(),
            c.attempt(D),
            c.attempt(D),
            "Ledger-Filled: 2/6".into(),
        ]),
        &["appears 2 times"],
    );
    c.refused(
        "Ledger-Attempt for a row it never filled",
        &with(&[
            c.declaration(),
            c.attempt(D),
            c.attempt(A),
            "Ledger-Filled: 2/6".into(),
        ]),
        &[&c.attempt(A), "does not say what the commit did"],
    );
    c.refused(
        "wrong outcome in Ledger-Attempt",
        &with(&[
            c.declaration(),
            format!("Ledger-Attempt: {D} ERROR verified_delivery"),
            "Ledger-Filled: 2/6".into(),
        ]),
        &["verified_delivery", &c.attempt(D)],
    );
    c.refused(
        "wrong Ledger-Filled",
        &with(&[c.declaration(), c.attempt(D), "Ledger-Filled: 3/6".into()]),
        &["Ledger-Filled: 3/6", "Ledger-Filled: 2/6"],
    );
    c.refused(
        "wrong Ledger-Declaration",
        &with(&[
            format!("Ledger-Declaration: {ID} sha256:{}", "0".repeat(64)),
            c.attempt(D),
            "Ledger-Filled: 2/6".into(),
        ]),
        &["the ledger's declaration is"],
    );
    let mut unknown = good.to_vec();
    unknown.push("Ledger-Foo: bar".into());
    c.refused(
        "unknown Ledger-Foo",
        &with(&unknown),
        &["Ledger-Foo is not one"],
    );
    let mut lower = good.to_vec();
    lower.push(format!("ledger-attempt: {A} PASS verified_delivery"));
    c.refused(
        "another spelling",
        &with(&lower),
        &["ledger-attempt is not one"],
    );
    c.refused(
        "a Ledger- line in the body",
        &c.commit(
            &one,
            &message(
                &subject,
                &format!("Ledger-Attempt: {A} PASS verified_delivery"),
                &good,
            ),
        ),
        &["line 3 of the body parses as a Ledger- trailer"],
    );
    c.refused(
        "a line that is no trailer among the trailers",
        &with(&[
            c.declaration(),
            c.attempt(D),
            "not a trailer".into(),
            "Ledger-Filled: 2/6".into(),
        ]),
        &["is not a trailer"],
    );

    // A message declared in another encoding: Git would re-encode it to show it.
    let tree = git(
        c.f.dir(),
        &["rev-parse", &format!("{}^{{tree}}", with(&good))],
    );
    let latin = git(
        c.f.dir(),
        &[
            "-c",
            "i18n.commitEncoding=ISO-8859-1",
            "commit-tree",
            &tree,
            "-p",
            &c.tip,
            "-m",
            &message(&subject, "", &good),
        ],
    );
    c.refused("an encoding header", &latin, &["encoding \"ISO-8859-1\""]);

    // Two rows in one commit: schedule order (A before D).
    let two = c.fill(&[A, D]);
    let both_body = c.body(&[A, D]);
    let both = |t: &[String]| c.commit(&two, &message("put 2 attempts", &both_body, t));
    c.admitted(
        "two rows in schedule order",
        &both(&[
            c.declaration(),
            c.attempt(A),
            c.attempt(D),
            "Ledger-Filled: 3/6".into(),
        ]),
    );
    c.refused(
        "two rows out of order",
        &both(&[
            c.declaration(),
            c.attempt(D),
            c.attempt(A),
            "Ledger-Filled: 3/6".into(),
        ]),
        &["out of order"],
    );
    c.refused(
        "two rows, one Ledger-Attempt",
        &both(&[c.declaration(), c.attempt(A), "Ledger-Filled: 3/6".into()]),
        &["is missing"],
    );
}

fn a_hand_written_root_is_admitted_only_with_the_message_init_writes(prefix: &str) {
    let rf: &str = &format!("{prefix}reliability-slice-1");
    let c = Case::under(prefix);
    let dir = c.f.dir();
    let root = git(dir, &["rev-list", "--max-parents=0", rf]);
    let tree = git(dir, &["rev-parse", &format!("{root}^{{tree}}")]);
    let servers = tempfile::tempdir().unwrap();
    let server = hooked_server(servers.path(), "fresh.git");
    crate::common::use_prefix(&server, prefix);
    let push = |commit: &str| {
        git_hooked(
            dir,
            &[
                "push",
                "--porcelain",
                server.to_str().unwrap(),
                &format!("{commit}:{rf}"),
            ],
            None,
        )
    };
    let root_with = |msg: &str| git(dir, &["commit-tree", &tree, "-m", msg]);
    let trailers = format!("{}\nLedger-Filled: 0/6", c.declaration());
    let bad = root_with(&format!("declare {ID}: 7 scheduled attempts\n\n{trailers}"));
    let r = push(&bad);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains(&format!("commit {bad}: rule 7: its subject is")),
        "{}",
        r.stderr
    );
    let filled = root_with(&format!(
        "declare {ID}: 6 scheduled attempts\n\n{}\nLedger-Filled: 1/6",
        c.declaration()
    ));
    let r = push(&filled);
    assert!(
        r.code != 0 && r.stderr.contains("Ledger-Filled: 0/6"),
        "{}",
        r.stderr
    );
    let good = root_with(&format!("declare {ID}: 6 scheduled attempts\n\n{trailers}"));
    push(&good).ok();
    assert_eq!(git(&server, &["rev-parse", rf]), good);
}

crate::common::under_both_prefixes!(
    a_lying_message_is_refused_by_pre_receive_and_reference_transaction,
    verify_log_and_put_do_not_believe_a_lying_message_that_got_in,
    a_writer_counts_each_tip_once_and_every_tip_plain_git_moved_to,
    each_part_of_rule_7_is_refused_alone_and_a_true_message_is_admitted,
    a_hand_written_root_is_admitted_only_with_the_message_init_writes,
);
