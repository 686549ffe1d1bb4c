//! One test per rule of [`admit`], from both sides: admitted, and refused with its reason (row,
//! field, rule).

use super::*;
use crate::testutil::declaration;

fn filled_value(decl: &Declaration, schedule_id: &str, record: &str) -> Value {
    let mut v = Row::template(decl, schedule_id).unwrap().to_value();
    v["native_outcome"] = "FAIL".into();
    v["reason"] = "oracle failed".into();
    v["native_record"] = serde_json::json!({"kind": "arena", "id": record, "sha256": sha(record)});
    v
}

fn filled(decl: &Declaration, schedule_id: &str) -> Row {
    let mut v = Row::template(decl, schedule_id).unwrap().to_value();
    v["native_outcome"] = "FAIL".into();
    v["reason"] = "oracle failed".into();
    v["native_record"] =
        serde_json::json!({"kind": "hand", "id": schedule_id, "sha256": "a".repeat(64)});
    Row::check(decl, &v, "test").unwrap()
}

fn row(decl: &Declaration, v: &Value) -> Row {
    Row::check(decl, v, "test").unwrap()
}

/// The SHA-256 of the bytes of record `r` in these tests.
fn sha(r: &str) -> String {
    crate::sha256_hex(r.as_bytes())
}

fn deferred(decl: &Declaration, i: usize) -> Row {
    Row::template(decl, &decl.schedule_at(i).id).unwrap()
}

fn edit(before: Row, after: Row) -> RowEdit {
    RowEdit {
        before,
        after,
        from: String::new(),
    }
}

/// The record file of scenario record `r`, added with the bytes `bytes`.
fn added(r: &str, bytes: &str) -> RecordFile {
    RecordFile {
        id: record_id(&format!("arena:{r}")),
        shown: format!("record file of {r}"),
        edit: RecordEdit::Added {
            sha256: Some(sha(bytes)),
        },
    }
}

fn change(rows: Vec<RowEdit>, files: Vec<RecordFile>) -> LedgerChange {
    LedgerChange {
        rows,
        records: Records::Files { files, name: None },
    }
}

/// A state holding the records named.
struct Holding(Vec<&'static str>);

impl LedgerState for Holding {
    fn record_owner(&mut self, key: &str) -> crate::Result<Option<String>> {
        Ok(self.0.contains(&key).then(|| "row elsewhere".into()))
    }
}

fn verdict(
    decl: &Declaration,
    c: &LedgerChange,
    held: Vec<&'static str>,
) -> Result<Vec<RowChange>, Refusal> {
    admit(decl, c, &mut Holding(held)).unwrap().map(|s| s.rows)
}

/// The (row, field, rule) of each reason.
fn named(r: &Refusal) -> Vec<(Option<&str>, Option<&str>, Option<Rule>)> {
    r.reasons()
        .iter()
        .map(|r| (r.row.as_deref(), r.field.as_deref(), r.rule))
        .collect()
}

fn fill(decl: &Declaration, i: usize, record: &str) -> RowEdit {
    let sid = decl.schedule_at(i).id;
    edit(
        deferred(decl, i),
        row(decl, &filled_value(decl, &sid, record)),
    )
}

#[test]
fn a_fill_with_its_record_file_is_admitted() {
    let decl = declaration();
    let c = change(vec![fill(&decl, 0, "r1")], vec![added("r1", "r1")]);
    assert_eq!(verdict(&decl, &c, vec![]), Ok(vec![RowChange::Filled]));
}

#[test]
fn a_row_is_changed_once_per_change() {
    let decl = declaration();
    let sid = decl.schedule_at(0).id;
    let c = change(
        vec![fill(&decl, 0, "r1"), fill(&decl, 0, "r2")],
        vec![added("r1", "r1"), added("r2", "r2")],
    );
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r)[0],
        (Some(sid.as_str()), None, Some(Rule::Admission(4)))
    );
    assert_eq!(
        r.reasons()[0].sentence,
        "is filled twice by this change ( and ); one row holds one attempt",
        "{r:?}"
    );
}

#[test]
fn a_retry_is_refused_naming_what_shows_it() {
    let decl = declaration();
    let sid = decl.schedule_at(0).id;
    let before = row(&decl, &filled_value(&decl, &sid, "r1"));
    // Another record: a retry, whoever writes it.
    let after = row(&decl, &filled_value(&decl, &sid, "r2"));
    let c = change(vec![edit(before.clone(), after)], vec![added("r2", "r2")]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r)[0],
        (
            Some(sid.as_str()),
            Some("native_record"),
            Some(Rule::Admission(4))
        )
    );
    assert_eq!(r.reasons()[0].sentence, "already holds an attempt (FAIL, from arena:r1); the new row: FAIL, from arena:r2; a filled row is never replaced (a retry needs a new declared schedule, and the original row stays)", "{r:?}");
    assert_eq!(r.hints(), [RETRY_HINT]);
    // Another outcome only.
    let mut v = before.to_value();
    v["native_outcome"] = "ERROR".into();
    let r = verdict(
        &decl,
        &change(vec![edit(before.clone(), row(&decl, &v))], vec![]),
        vec![],
    )
    .unwrap_err();
    assert_eq!(named(&r)[0].1, Some("native_outcome"));
    // The same row again (a writer's import or put of the same attempt): a retry, whoever
    // asks; its record is checked too.
    let mut c = change(vec![edit(before.clone(), before.clone())], vec![]);
    c.records = Records::Keys;
    let r = verdict(&decl, &c, vec!["arena:r1"]).unwrap_err();
    assert_eq!(
        named(&r),
        [
            (Some(sid.as_str()), None, Some(Rule::Admission(4))),
            (
                Some(sid.as_str()),
                Some("native_record"),
                Some(Rule::Admission(5))
            )
        ]
    );
    assert_eq!(r.hints(), [RETRY_HINT]);
    // A filled row whose outcome and record stay, edited otherwise (a re-import of changed
    // harness output, or a hand edit): a retry naming the field, whoever asks, with the
    // record's reason as for every retry.
    let mut v = before.to_value();
    v["reason"] = "filled again from the same record".into();
    let c = change(vec![edit(before.clone(), row(&decl, &v))], vec![]);
    let r = verdict(&decl, &c, vec!["arena:r1"]).unwrap_err();
    assert_eq!(
        named(&r),
        [
            (Some(sid.as_str()), Some("reason"), Some(Rule::Admission(4))),
            (
                Some(sid.as_str()),
                Some("native_record"),
                Some(Rule::Admission(5))
            )
        ]
    );
    assert!(r.reasons()[0]
        .sentence
        .starts_with("already holds an attempt"));
    assert!(r.reasons()[0]
        .sentence
        .contains("from the same record, changes reason"));
    assert_eq!(r.hints(), [RETRY_HINT]);
    // Its interventions alone changed: no retry, the transition decides (a repair).
    let mut v = before.to_value();
    v["interventions_decision_or_repair"] =
        serde_json::json!([{"kind": "repair", "note": "fixed"}]);
    let c = change(vec![edit(before.clone(), row(&decl, &v))], vec![]);
    assert_eq!(
        verdict(&decl, &c, vec![]).unwrap(),
        [RowChange::Repaired(1)]
    );
    // The same attempt written again over a row repaired since (an import or put of the same
    // record): a retry too, not a lost repair.
    let mut v = before.to_value();
    v["interventions_decision_or_repair"] = serde_json::json!([{"kind": "repair", "note": "x"}]);
    let repaired = row(&decl, &v);
    let c = change(vec![edit(repaired.clone(), before.clone())], vec![]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r)[0],
        (Some(sid.as_str()), None, Some(Rule::Admission(4)))
    );
    assert_eq!(r.reasons()[0].sentence, "already holds an attempt (FAIL, from arena:r1); a filled row is never replaced (a retry needs a new declared schedule, and the original row stays)", "{r:?}");
    // An intervention changed rather than dropped: the transition's reason.
    let mut v = before.to_value();
    v["interventions_decision_or_repair"] = serde_json::json!([{"kind": "repair", "note": "y"}]);
    let c = change(vec![edit(repaired, row(&decl, &v))], vec![]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r),
        [(
            Some(sid.as_str()),
            Some("interventions_decision_or_repair"),
            Some(Rule::Admission(4))
        )]
    );
}

#[test]
fn a_filled_row_admits_only_appended_repairs_with_a_note() {
    let decl = declaration();
    let a = decl.schedule_at(0).id;
    let parent = filled(&decl, &a);
    let repaired = |note: &str| {
        let mut v = parent.to_value();
        v["interventions_decision_or_repair"] =
            serde_json::json!([{"kind": "repair", "note": note}]);
        Row::check(&decl, &v, "test").unwrap()
    };
    for note in ["", " ", "\n\t"] {
        let c = change(vec![edit(parent.clone(), repaired(note))], vec![]);
        let r = verdict(&decl, &c, vec![]).unwrap_err();
        assert_eq!(r.reasons()[0].sentence, REPAIR_NOTE_EMPTY, "{note:?}");
        assert_eq!(
            named(&r)[0],
            (
                Some(a.as_str()),
                Some("interventions_decision_or_repair"),
                Some(Rule::Admission(4))
            )
        );
    }
    let c = change(
        vec![edit(parent.clone(), repaired("fixed the path"))],
        vec![],
    );
    assert_eq!(verdict(&decl, &c, vec![]), Ok(vec![RowChange::Repaired(1)]));
    // A decision appended, an intervention removed, a field edited.
    let mut v = parent.to_value();
    v["interventions_decision_or_repair"] = serde_json::json!([{"kind": "decision", "note": "ok"}]);
    let c = change(vec![edit(parent.clone(), row(&decl, &v))], vec![]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(r.reasons()[0].sentence, "only repair interventions may be appended to a filled row, not {\"kind\":\"decision\",\"note\":\"ok\"}", "{r:?}");
    // An intervention removed, the attempt otherwise the same: that attempt written again
    // (a retry), as a writer's import of the same record into the row would.
    let c = change(vec![edit(row(&decl, &v), parent.clone())], vec![]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(r.reasons()[0].sentence, "already holds an attempt (FAIL, from hand:arena/sympy-matrix/01); a filled row is never replaced (a retry needs a new declared schedule, and the original row stays)", "{r:?}");
    // A field edited, outcome and record kept: that record's attempt written otherwise, a
    // retry naming the field (its record is checked as every retry's is).
    let mut v = parent.to_value();
    v["reason"] = "edited".into();
    let c = change(vec![edit(parent.clone(), row(&decl, &v))], vec![]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r)[0],
        (Some(a.as_str()), Some("reason"), Some(Rule::Admission(4)))
    );
    assert_eq!(r.reasons()[0].sentence, "already holds an attempt (FAIL, from hand:arena/sympy-matrix/01); the new row, from the same record, changes reason (was \"oracle failed\", now \"edited\"); a filled row is never replaced (a retry needs a new declared schedule, and the original row stays)", "{r:?}");
}

#[test]
fn a_row_never_moves_to_another_scheduled_attempt() {
    // Found while writing the row_transition fuzz target (which asserts it): a DEFERRED parent
    // was "filled" by a child that names another schedule id.
    let decl = declaration();
    let (a, b) = (&decl.schedule_at(0).id, &decl.schedule_at(1).id);
    let parent = Row::template(&decl, a).unwrap();
    let child = filled(&decl, b);
    let reasons = row_transition(&decl, &parent, &child, "c").unwrap_err();
    assert_eq!(
        (reasons[0].row.as_deref(), reasons[0].field.as_deref()),
        (Some(a.as_str()), Some("schedule_id")),
        "{reasons:?}"
    );
    assert_eq!(
        row_transition(&decl, &parent, &filled(&decl, a), "c"),
        Ok(RowChange::Filled)
    );
}

#[test]
fn a_deferred_row_rewritten_as_deferred_is_no_change() {
    let decl = declaration();
    let c = change(vec![edit(deferred(&decl, 0), deferred(&decl, 0))], vec![]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(named(&r)[0].2, Some(Rule::Admission(4)));
}

#[test]
fn a_hand_record_names_the_row_it_fills() {
    let decl = declaration();
    let (a, b) = (&decl.schedule_at(0).id, &decl.schedule_at(1).id);
    let parent = Row::template(&decl, a).unwrap();
    let mut v = filled(&decl, a).to_value();
    v["native_record"]["id"] = b.as_str().into();
    let child = Row::check(&decl, &v, "test").unwrap();
    let reasons = row_transition(&decl, &parent, &child, "c").unwrap_err();
    let r = &reasons[0];
    assert_eq!(
        (r.row.as_deref(), r.field.as_deref(), r.rule),
        (
            Some(a.as_str()),
            Some("native_record.id"),
            Some(Rule::Admission(4))
        ),
        "{reasons:?}"
    );
    assert_eq!(r.sentence, "a hand record is named after the row it fills ({\"kind\": \"hand\", \"id\": \"arena/sympy-matrix/01\"}, as `put` writes it), not \"arena/sympy-matrix/02\": it would take the record key of another row and block that row's `put`", "{r:?}");
    v["native_record"]["id"] = a.as_str().into();
    let child = Row::check(&decl, &v, "test").unwrap();
    assert_eq!(
        row_transition(&decl, &parent, &child, "c"),
        Ok(RowChange::Filled)
    );
}

#[test]
fn one_record_fills_one_row() {
    let decl = declaration();
    let b = decl.schedule_at(1).id;
    // Two rows of one change.
    let c = change(
        vec![fill(&decl, 0, "r1"), fill(&decl, 1, "r1")],
        vec![added("r1", "r1")],
    );
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r),
        [(
            Some(b.as_str()),
            Some("native_record"),
            Some(Rule::Admission(5))
        )]
    );
    assert_eq!(r.reasons()[0].sentence, "record arena:r1 would fill two rows (arena/sympy-matrix/01 and arena/sympy-matrix/02); one record cannot fill two rows", "{r:?}");
    // A record the ledger already holds (record files or keys alike).
    let mut c = change(vec![fill(&decl, 1, "r1")], vec![added("r1", "r1")]);
    let r = verdict(&decl, &c, vec!["arena:r1"]).unwrap_err();
    assert_eq!(
        named(&r),
        [(
            Some(b.as_str()),
            Some("native_record"),
            Some(Rule::Admission(5))
        )]
    );
    c.records = Records::Keys;
    let r = verdict(&decl, &c, vec!["arena:r1"]).unwrap_err();
    assert_eq!(
        r.reasons()[0].sentence,
        "record arena:r1 already filled row elsewhere; one record cannot fill two rows",
        "{r:?}"
    );
    assert_eq!(verdict(&decl, &c, vec![]), Ok(vec![RowChange::Filled]));
}

#[test]
fn each_filled_row_brings_its_record_file_with_the_declared_hash() {
    let decl = declaration();
    let a = decl.schedule_at(0).id;
    // Missing.
    let c = change(vec![fill(&decl, 0, "r1")], vec![]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r),
        [(
            Some(a.as_str()),
            Some("native_record"),
            Some(Rule::Admission(5))
        )]
    );
    // Other bytes.
    let c = change(vec![fill(&decl, 0, "r1")], vec![added("r1", "other bytes")]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(
        named(&r),
        [(
            Some(a.as_str()),
            Some("native_record.sha256"),
            Some(Rule::Admission(5))
        )]
    );
    assert_eq!(r.reasons()[0].sentence, "is 82f3e9c695dc6b8d1b11818d5701919e286de8d47f7c3eb3100c485f79e57828, but record file of r1 hashes to a3ead5eedad5df82318c51685dbc1c147a36d1ff8584fc82de6b08d0bf63a795", "{r:?}");
    // Without record files (a ledger document) only the key counts.
    let mut c = change(vec![fill(&decl, 0, "r1")], vec![]);
    c.records = Records::Keys;
    assert_eq!(verdict(&decl, &c, vec![]), Ok(vec![RowChange::Filled]));
}

#[test]
fn record_files_are_added_only_for_the_rows_filled_and_never_change() {
    let decl = declaration();
    let c = change(vec![], vec![added("r9", "r9")]);
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(named(&r), [(None, None, Some(Rule::Admission(5)))]);
    assert_eq!(
        r.reasons()[0].sentence,
        "record file of r9 was added, but no row this commit fills names it",
        "{r:?}"
    );
    for (edit, what) in [
        (RecordEdit::Changed, "record file x changed"),
        (RecordEdit::Removed, "record file x was removed"),
    ] {
        let f = RecordFile {
            id: record_id("arena:r1"),
            shown: "record file x".into(),
            edit,
        };
        let r = verdict(&decl, &change(vec![], vec![f]), vec![]).unwrap_err();
        assert_eq!(
            r.reasons()[0].sentence,
            format!("{what}; existing record files never change or disappear"),
            "{r:?}"
        );
        assert_eq!(named(&r)[0].2, Some(Rule::Admission(5)));
    }
    assert_eq!(verdict(&decl, &change(vec![], vec![]), vec![]), Ok(vec![]));
}

#[test]
fn the_rows_state_owns_the_records_its_rows_name() {
    let decl = declaration();
    let a = decl.schedule_at(0).id;
    let rows = [
        row(&decl, &filled_value(&decl, &a, "r1")),
        deferred(&decl, 1),
    ];
    let mut s = RowsState(&rows);
    assert_eq!(
        s.record_owner("arena:r1").unwrap(),
        Some(format!("row {a}"))
    );
    assert_eq!(s.record_owner("arena:r2").unwrap(), None);
}

#[test]
fn one_change_is_one_kind_of_step() {
    let decl = declaration();
    let b = decl.schedule_at(1).id;
    let parent = filled(&decl, &decl.schedule_at(0).id);
    let mut v = parent.to_value();
    v["interventions_decision_or_repair"] =
        serde_json::json!([{"kind": "repair", "note": "fixed"}]);
    let repair = edit(parent.clone(), row(&decl, &v));
    // A repair and a fill together: refused as rule 7, no row named.
    let c = change(
        vec![repair.clone(), fill(&decl, 1, "r1")],
        vec![added("r1", "r1")],
    );
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(named(&r), [(None, None, Some(Rule::Admission(7)))]);
    // Each alone is admitted.
    let c = change(vec![repair], vec![]);
    assert_eq!(verdict(&decl, &c, vec![]), Ok(vec![RowChange::Repaired(1)]));
    let c = change(vec![fill(&decl, 1, "r1")], vec![added("r1", "r1")]);
    assert_eq!(verdict(&decl, &c, vec![]), Ok(vec![RowChange::Filled]));
    // A hand-written fill beside an imported one: refused as rule 7 too.
    let hand = edit(deferred(&decl, 1), filled(&decl, &b));
    let mut c = change(vec![fill(&decl, 0, "r1"), hand], vec![added("r1", "r1")]);
    c.records = Records::Keys;
    let r = verdict(&decl, &c, vec![]).unwrap_err();
    assert_eq!(named(&r), [(None, None, Some(Rule::Admission(7)))]);
    c.rows.remove(0);
    assert_eq!(verdict(&decl, &c, vec![]), Ok(vec![RowChange::Filled]));
}

#[test]
fn two_ledger_files_are_the_rows_whose_bytes_differ() {
    let decl = declaration();
    let old = Ledger::template(&decl);
    let mut new = old.clone();
    assert!(LedgerChange::between(&decl, &old, &new).rows.is_empty());
    new.rows[1] = filled(&decl, &decl.schedule_at(1).id);
    let c = LedgerChange::between(&decl, &old, &new);
    assert_eq!(c.rows.len(), 1);
    assert_eq!(c.rows[0].after.schedule_id(), decl.schedule_at(1).id);
    assert!(matches!(c.records, Records::Keys));
}

#[test]
fn a_filled_row_without_its_record_breaks_rule_5() {
    // The row checks admit a null native_record; what the fill then lacks is its record file
    // (rule 5), which the text once named inside a rule 4 reason.
    let decl = declaration();
    let a = &decl.schedule_at(0).id;
    let parent = Row::template(&decl, a).unwrap();
    let mut v = filled(&decl, a).to_value();
    v["native_record"] = Value::Null;
    let child = Row::check(&decl, &v, "test").unwrap();
    let reasons = transition(&decl, &parent, &child).unwrap_err();
    let r = &reasons[0];
    assert_eq!(
        (r.row.as_deref(), r.field.as_deref(), r.rule),
        (
            Some(a.as_str()),
            Some("native_record"),
            Some(Rule::Admission(5))
        )
    );
    // The rule is the value's; the sentence names no rule number.
    assert_eq!(
        r.sentence,
        "a filled row names the record it was filled from (one record file per filled row)"
    );
    let mut v = filled(&decl, a).to_value();
    v["native_record"]["kind"] = "arena".into();
    let child = Row::check(&decl, &v, "test").unwrap();
    assert_eq!(transition(&decl, &parent, &child), Ok(RowChange::Filled));
}
