//! The hooks refuse what the writers refuse (issue 15, attack 11): a repair with an empty note,
//! and a hand record named after another row (which would take that row's record key and block
//! its `put`). One rule, in the row transition every writer and the admission run: tried through
//! the CLI and through plumbing pushed into a bare repository with the pre-receive hook.

use serde_json::json;

use crate::gitstore::{canonical_row, regular};
use crate::message_rule::{message, record_path, Case, A, D, FILLED};

const EMPTY_NOTE: &str = "a repair's note is empty; it must say what the person fixed";

fn a_repair_without_a_note_is_refused_by_the_cli_and_by_the_hook(prefix: &str) {
    let c = Case::under(prefix);
    // The CLI.
    for note in ["", "   ", "\n\t"] {
        let r = c.f.run(&["repair", FILLED, "--note", note]);
        r.expect_code(2);
        assert!(
            r.stderr.contains(&format!(
                "row {FILLED}: interventions_decision_or_repair: {EMPTY_NOTE}"
            )),
            "{note:?}: {}",
            r.stderr
        );
        assert_eq!(c.f.tip(), c.tip, "nothing moved");
    }

    // Plumbing, pushed: the same reason from the hook (rule 4).
    let repaired = |note: &str| {
        let path = format!("rows/{FILLED}.json");
        let mut row: serde_json::Value = serde_json::from_slice(&c.files[&path].bytes).unwrap();
        row["interventions_decision_or_repair"]
            .as_array_mut()
            .unwrap()
            .push(json!({"kind": "repair", "note": note}));
        let mut files = c.files.clone();
        files.insert(path, regular(canonical_row(&row)));
        c.commit(
            &files,
            &message(
                &format!("repair {FILLED}"),
                &format!(
                    "{FILLED}  INTERRUPTED_UNGRADED (INCOMPLETE)  ungraded\n  repair: {}",
                    git_ledger::git::message::one_line(note)
                ),
                &[
                    c.declaration(),
                    format!("Ledger-Repair: {FILLED}"),
                    "Ledger-Filled: 1/6".into(),
                ],
            ),
        )
    };
    for note in ["", "  "] {
        c.refused_by(
            "rule 4",
            &format!("repair note {note:?}"),
            &repaired(note),
            &[&format!(
                "row {FILLED}: interventions_decision_or_repair: {EMPTY_NOTE}"
            )],
        );
    }
    c.admitted(
        "a repair that says what was fixed",
        &repaired("fixed the import path"),
    );

    // File mode goes through the same rule.
    let decl = c.f.decl();
    let file = c.f.file("ledger.json");
    let template = c.f.run(&["template", decl.to_str().unwrap()]);
    std::fs::write(&file, template.ok().stdout.as_bytes()).unwrap();
    let row = c.f.hand_row(D, "ERROR");
    let (d, l) = (decl.to_str().unwrap(), file.to_str().unwrap());
    c.f.run(&["put", D, row.to_str().unwrap(), d, l]).ok();
    let before = std::fs::read(&file).unwrap();
    let r = c.f.run(&["repair", D, "--note", " ", d, l]);
    r.expect_code(2);
    assert!(r.stderr.contains(EMPTY_NOTE), "{}", r.stderr);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is untouched"
    );
    c.f.run(&["repair", D, "--note", "fixed", d, l]).ok();
    c.f.run(&["repair", FILLED, "--note", "fixed the import path"])
        .ok();
    c.f.run(&["verify"]).ok();
}

fn a_hand_record_named_after_another_row_is_refused_and_that_row_can_still_be_put(prefix: &str) {
    let c = Case::under(prefix);
    // D filled from a hand record named after A: the record file takes A's key.
    let with_id = |id: &str| {
        let path = format!("rows/{D}.json");
        let mut row: serde_json::Value = serde_json::from_slice(&c.files[&path].bytes).unwrap();
        let rec = format!("record of {D}\n").into_bytes();
        row["native_outcome"] = json!("ERROR");
        row["reason"] = json!("crashed");
        row["native_record"] =
            json!({"kind": "hand", "id": id, "sha256": git_ledger::sha256_hex(&rec)});
        let mut files = c.files.clone();
        files.insert(path, regular(canonical_row(&row)));
        files.insert(record_path(&format!("hand:{id}")), regular(rec));
        c.commit(
            &files,
            &message(
                &format!("put {D}: ERROR -> error"),
                &c.body(&[D]),
                &[c.declaration(), c.attempt(D), "Ledger-Filled: 2/6".into()],
            ),
        )
    };
    c.refused_by(
        "rule 4",
        "a hand record named after another row",
        &with_id(A),
        &[&format!(
            "row {D}: native_record.id: a hand record is named after the row it fills"
        )],
    );
    // The CLI never writes one: put sets native_record itself and refuses one given.
    let mut row: serde_json::Value =
        serde_json::from_slice(&std::fs::read(c.f.hand_row(D, "ERROR")).unwrap()).unwrap();
    row["native_record"] = json!({"kind": "hand", "id": A, "sha256": "0".repeat(64)});
    let p = c.f.file("forged.json");
    std::fs::write(&p, crate::gitstore::pretty(&row)).unwrap();
    let r = c.f.run(&["put", D, p.to_str().unwrap()]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("native_record must be null"),
        "{}",
        r.stderr
    );
    assert_eq!(c.f.tip(), c.tip);

    // Named after its own row, it is admitted; A can still be put.
    c.admitted("a hand record named after its row", &with_id(D));
    c.f.put(A, "ERROR").ok();
    c.f.run(&["verify"]).ok();
}

crate::common::under_both_prefixes!(
    a_repair_without_a_note_is_refused_by_the_cli_and_by_the_hook,
    a_hand_record_named_after_another_row_is_refused_and_that_row_can_still_be_put,
);
