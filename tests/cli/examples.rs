//! `arena/examples/`: the example records of the embedded campaign, and `ledger.json`, which
//! must be exactly what importing them produces.

use std::path::Path;

use crate::common::{ledger, project_root};
use crate::make_examples;

/// The committed `arena/examples/ledger.json` equals the template ledger of
/// `arena/campaign.json` after importing every example record the import accepts (with the
/// built binary, from the repository root, the Arena store built from its committed SQL),
/// and the refused records are refused.
#[test]
fn ledger_json_is_what_importing_the_examples_produces() {
    let root = project_root();
    let campaign = root.join("arena/campaign.json");
    let decl = git_ledger::declaration::Declaration::read(&campaign, u64::MAX).unwrap();
    let sql = std::fs::read_to_string(root.join(make_examples::ARENA_SQL)).unwrap();
    // The committed records are the ones the generator writes for the pinned declaration.
    assert_eq!(
        sql,
        make_examples::arena_sql(&decl),
        "arena-store.sql is stale: run `cargo run --example make_examples`"
    );
    git_ledger::import::build_store_from_sql(&root.join(make_examples::ARENA_STORE), &sql).unwrap();

    let out = tempfile::tempdir().unwrap();
    let work = out.path().join("ledger.json");
    std::fs::write(
        &work,
        git_ledger::ledger::Ledger::template(&decl).canonical(&decl),
    )
    .unwrap();
    let work_s = work.to_string_lossy().into_owned();
    let run = |refused: bool| {
        let mut args = vec![
            "import".to_owned(),
            "arena/campaign.json".to_owned(),
            work_s.clone(),
        ];
        let examples = Path::new(make_examples::EXAMPLES);
        args.extend(make_examples::import_args(examples, refused));
        args.extend(make_examples::runtime_args(examples));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ledger(&root, &args)
    };
    let r = run(true);
    r.expect_code(2);
    assert!(
        r.stderr.contains("never graded") && r.stderr.contains("still RUNNING"),
        "{}",
        r.stderr
    );
    run(false).ok();
    let produced = std::fs::read(&work).unwrap();
    let committed = std::fs::read(root.join("arena/examples/ledger.json")).unwrap();
    assert!(
        produced == committed,
        "arena/examples/ledger.json is not what importing the examples produces: run `cargo run --example make_examples`"
    );
}
