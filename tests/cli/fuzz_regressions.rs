//! The committed fuzz corpus (`tests/fuzz_corpus/<target>/`) fed through the same functions as
//! the cargo-fuzz targets (`fuzz/checks.rs`), so every crash the fuzzers found, and a set of
//! inputs that reach distinct refusal paths, stay fixed without a fuzzer. A panic fails the test.

use std::path::PathBuf;

#[path = "../../fuzz/checks.rs"]
mod checks;

#[path = "../../fuzz/admission.rs"]
mod admission;

/// Every file of one target's corpus, sorted (at least `min` of them).
fn corpus(target: &str, min: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = super::common::project_root()
        .join("tests/fuzz_corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() >= min,
        "{}: {} files, expected at least {min}",
        dir.display(),
        files.len()
    );
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// Run `check` on every file, naming the file if it panics.
fn each(target: &str, min: usize, check: impl Fn(&[u8]) -> String) {
    for (path, bytes) in corpus(target, min) {
        eprintln!("{target}: {}", path.display());
        let _ = check(&bytes);
    }
}

#[test]
fn declaration_corpus() {
    each("declaration", 5, checks::declaration);
}

#[test]
fn ledger_corpus() {
    let decl = checks::campaign();
    each("ledger", 3, |b| checks::ledger(&decl, b));
}

#[test]
fn node_parser_corpus() {
    each("node_parser", 5, checks::node_parser);
}

#[test]
fn scenario_record_corpus() {
    let decl = checks::campaign();
    each("scenario_record", 3, |b| checks::scenario_record(&decl, b));
}

#[test]
fn cite_line_corpus() {
    each("cite_line", 3, checks::cite_line);
}

#[test]
fn row_transition_corpus() {
    let decl = checks::campaign();
    each("row_transition", 4, |b| checks::row_transition(&decl, b));
}

#[test]
fn admission_corpus() {
    // One bare repository in a temporary directory, as the fuzz target builds once per process.
    let harness = admission::Harness::new();
    each("admission", 100, |b| harness.run(b));
}
