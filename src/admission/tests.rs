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
