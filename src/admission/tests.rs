use super::*;
use crate::testutil::declaration;

fn filled(decl: &Declaration, schedule_id: &str) -> Row {
    let mut v = Row::template(decl, schedule_id).unwrap().to_value();
    v["native_outcome"] = "FAIL".into();
    v["reason"] = "oracle failed".into();
    v["native_record"] =
        serde_json::json!({"kind": "hand", "id": schedule_id, "sha256": "a".repeat(64)});
    Row::check(decl, &v, "test").unwrap()
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
    assert!(reasons[0].contains("schedule_id"), "{reasons:?}");
    assert_eq!(
        row_transition(&decl, &parent, &filled(&decl, a), "c"),
        Ok(RowChange::Filled)
    );
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
    assert!(
        reasons[0].contains(&format!(
            "row {a}: native_record.id: a hand record is named after the row it fills"
        )),
        "{reasons:?}"
    );
    v["native_record"]["id"] = a.as_str().into();
    let child = Row::check(&decl, &v, "test").unwrap();
    assert_eq!(
        row_transition(&decl, &parent, &child, "c"),
        Ok(RowChange::Filled)
    );
}

#[test]
fn an_appended_repair_says_what_was_fixed() {
    let decl = declaration();
    let a = &decl.schedule_at(0).id;
    let parent = filled(&decl, a);
    let repaired = |note: &str| {
        let mut v = parent.to_value();
        v["interventions_decision_or_repair"] =
            serde_json::json!([{"kind": "repair", "note": note}]);
        Row::check(&decl, &v, "test").unwrap()
    };
    for note in ["", " ", "\n\t"] {
        let reasons = row_transition(&decl, &parent, &repaired(note), "c").unwrap_err();
        assert!(
            reasons[0].ends_with(REPAIR_NOTE_EMPTY),
            "{note:?}: {reasons:?}"
        );
    }
    assert_eq!(
        row_transition(&decl, &parent, &repaired("fixed the path"), "c"),
        Ok(RowChange::Repaired(1))
    );
}
