//! The committed fuzz corpus (`tests/fuzz_corpus/<target>/`) fed through the same functions as
//! the cargo-fuzz targets (`fuzz/checks.rs`), so every crash the fuzzers found, and a set of
//! inputs that reach distinct refusal paths, stay fixed without a fuzzer. A panic fails the test;
//! for the two admission targets each file's verdict must also be the one recorded beside the
//! corpus (`tests/fuzz_corpus/<target>.verdicts`; `FUZZ_VERDICTS_BLESS=1` rewrites it after an
//! intended change of a rule).

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
fn each(target: &str, min: usize, check: impl Fn(&[u8])) {
    for (path, bytes) in corpus(target, min) {
        eprintln!("{target}: {}", path.display());
        check(&bytes);
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

/// Run `check` on every file and compare each file's verdict with the recorded one.
fn verdicts(target: &str, min: usize, check: impl Fn(&[u8]) -> &'static str) {
    let mut got = String::new();
    for (path, bytes) in corpus(target, min) {
        eprintln!("{target}: {}", path.display());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        got.push_str(&format!("{name} {}\n", check(&bytes)));
    }
    let recorded = super::common::project_root()
        .join("tests/fuzz_corpus")
        .join(format!("{target}.verdicts"));
    if std::env::var_os("FUZZ_VERDICTS_BLESS").is_some() {
        std::fs::write(&recorded, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&recorded).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (FUZZ_VERDICTS_BLESS=1 writes it)",
            recorded.display()
        )
    });
    let differ: Vec<String> = (got.lines().zip(want.lines()))
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("  now {g:?}, recorded {w:?}"))
        .collect();
    assert!(
        differ.is_empty() && got.lines().count() == want.lines().count(),
        "{target}: verdicts differ from {} (FUZZ_VERDICTS_BLESS=1 rewrites it after an intended change):\n{}",
        recorded.display(),
        differ.join("\n")
    );
}

#[test]
fn row_transition_corpus() {
    let decl = checks::campaign();
    verdicts("row_transition", 4, |b| checks::row_transition(&decl, b));
}

#[test]
fn admission_corpus() {
    // One bare repository in a temporary directory, as the fuzz target builds once per process.
    let harness = admission::Harness::new();
    verdicts("admission", 100, |b| harness.run(b));
}
