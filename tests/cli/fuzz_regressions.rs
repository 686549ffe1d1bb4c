//! The committed fuzz corpus (`tests/fuzz_corpus/<target>/`) fed through the same functions as
//! the cargo-fuzz targets (`fuzz/checks.rs`, `fuzz/admission.rs`), so every crash the fuzzers
//! found, and a set of inputs that reach distinct refusal paths, stay fixed without a fuzzer.
//!
//! A panic fails the test, and so does a changed verdict: each check returns one line saying
//! what the library decided (`fuzz/verdict.rs`), compared with the committed line in
//! `tests/fuzz_corpus/verdicts/<target>.txt` (`<corpus file name>\t<verdict>`, sorted by file
//! name). Every changed verdict, corpus file without a line and line without a file is listed
//! at once. Each target's corpus also keeps the kinds of verdict it must reach (an admitted and
//! a refused input, where both exist).
//!
//! After a deliberate change (a new corpus file, a reworded refusal), rewrite the verdict files
//! with `FUZZ_VERDICTS_BLESS=1 cargo test --test cli fuzz_regressions`, then read their diff.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

#[path = "../../fuzz/checks.rs"]
mod checks;

#[path = "../../fuzz/admission.rs"]
mod admission;

/// The fuzz targets, each a directory of `tests/fuzz_corpus/`.
const TARGETS: [&str; 8] = [
    "declaration",
    "ledger",
    "node_parser",
    "scenario_record",
    "cite_line",
    "row_transition",
    "admission",
    "eval_container",
];

/// The directory of `tests/fuzz_corpus/` holding the verdicts: not a target, no inputs.
const VERDICTS: &str = "verdicts";

/// Set (to anything but empty): write the verdicts instead of comparing them.
const BLESS: &str = "FUZZ_VERDICTS_BLESS";

fn corpus_root() -> PathBuf {
    super::common::project_root().join("tests/fuzz_corpus")
}

fn verdicts_path(target: &str) -> PathBuf {
    corpus_root().join(VERDICTS).join(format!("{target}.txt"))
}

/// Every file of one target's corpus, by name, sorted (at least `min` of them).
fn corpus(target: &str, min: usize) -> Vec<(String, Vec<u8>)> {
    assert!(TARGETS.contains(&target) && target != VERDICTS);
    let dir = corpus_root().join(target);
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            assert!(path.is_file(), "{}: not a file", path.display());
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .filter(|n| !n.contains(['\t', '\n']))
                .unwrap_or_else(|| panic!("{}: a name a verdict line can hold", path.display()))
                .to_owned();
            (name, path)
        })
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
        .map(|(name, p)| {
            let bytes = std::fs::read(&p).unwrap();
            (name, bytes)
        })
        .collect()
}

/// Run `check` on every file (naming the file if it panics), then compare the verdicts with
/// the committed ones; `reached` are texts that some verdict must contain (the kinds of
/// verdict the corpus keeps).
fn each(target: &str, min: usize, reached: &[&str], check: impl Fn(&[u8]) -> String) {
    let mut got = BTreeMap::new();
    for (name, bytes) in corpus(target, min) {
        eprintln!("{target}: {name}");
        let verdict = check(&bytes);
        assert!(
            !verdict.is_empty() && !verdict.contains(['\t', '\n', '\r']),
            "{target}: {name}: not a one-line verdict: {verdict:?}"
        );
        got.insert(name, verdict);
    }
    compare(target, &got);
    let missing: Vec<&&str> = reached
        .iter()
        // A verdict reaches a kind when it, or one of its `; `-separated parts, starts with it:
        // a word further in ("read" inside "serde_json reads", "refused" inside "evidence
        // refused") is not that kind.
        .filter(|want| {
            !got.values().any(|v| {
                v.starts_with(**want) || v.split("; ").any(|part| part.starts_with(**want))
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{target}: no corpus file has a verdict (part) starting with {missing:?}"
    );
}

/// Compare `got` with the committed verdicts of `target` (or write them, under [`BLESS`]).
fn compare(target: &str, got: &BTreeMap<String, String>) {
    let path = verdicts_path(target);
    if std::env::var_os(BLESS).is_some_and(|v| !v.is_empty()) {
        let mut text = String::new();
        for (name, verdict) in got {
            writeln!(text, "{name}\t{verdict}").unwrap();
        }
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\nwrite it with {BLESS}=1 cargo test --test cli fuzz_regressions",
            path.display()
        )
    });
    let mut problems = Vec::new();
    let mut expected: BTreeMap<&str, &str> = BTreeMap::new();
    let mut previous = "";
    for (i, l) in text.lines().enumerate() {
        let Some((name, verdict)) = l.split_once('\t') else {
            problems.push(format!("line {}: not `<file>\\t<verdict>`: {l:?}", i + 1));
            continue;
        };
        if name <= previous {
            problems.push(format!("line {}: {name}: not sorted, or twice", i + 1));
        }
        previous = name;
        expected.insert(name, verdict);
    }
    for (name, verdict) in got {
        match expected.get(name.as_str()) {
            None => problems.push(format!(
                "{name}: no committed verdict\n  got:      {verdict}"
            )),
            Some(want) if want != verdict => problems.push(format!(
                "{name}: verdict changed\n  expected: {want}\n  got:      {verdict}"
            )),
            Some(_) => {}
        }
    }
    for name in expected.keys() {
        if !got.contains_key(*name) {
            problems.push(format!(
                "{name}: a committed verdict, but no such corpus file"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{target}: {} against {}:\n{}\nif every change is intended: \
         {BLESS}=1 cargo test --test cli fuzz_regressions, then read the diff",
        if problems.len() == 1 {
            "1 problem".to_owned()
        } else {
            format!("{} problems", problems.len())
        },
        path.display(),
        problems.join("\n")
    );
}

/// Every directory of `tests/fuzz_corpus/` is a target's corpus or the verdicts, and the
/// verdicts are one file per target: no corpus is left out of the test, no input read as a
/// verdict or the reverse.
#[test]
fn corpus_directories_are_the_targets() {
    let mut dirs: Vec<String> = std::fs::read_dir(corpus_root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    dirs.sort();
    let mut want: Vec<String> = TARGETS.iter().map(|t| t.to_string()).collect();
    want.push(VERDICTS.to_owned());
    want.sort();
    assert_eq!(
        dirs, want,
        "tests/fuzz_corpus/ holds the targets and {VERDICTS}/"
    );
    let mut files: Vec<String> = std::fs::read_dir(corpus_root().join(VERDICTS))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut want: Vec<String> = TARGETS.iter().map(|t| format!("{t}.txt")).collect();
    want.sort();
    assert_eq!(files, want, "{VERDICTS}/ holds one file per target");
}

#[test]
fn declaration_corpus() {
    each(
        "declaration",
        5,
        &[
            "declaration: admitted",
            "declaration: refused",
            "draft: admitted",
            "draft: refused",
        ],
        checks::declaration,
    );
}

#[test]
fn ledger_corpus() {
    let decl = checks::campaign();
    each("ledger", 3, &["admitted", "refused"], |b| {
        checks::ledger(&decl, b)
    });
}

#[test]
fn node_parser_corpus() {
    each(
        "node_parser",
        5,
        &[
            "depth 0: read ",
            "depth 0: gave up; serde_json reads",
            "depth 0: gave up; serde_json refuses",
        ],
        checks::node_parser,
    );
}

#[test]
fn scenario_record_corpus() {
    let decl = checks::campaign();
    each("scenario_record", 3, &["parsed", "refused"], |b| {
        checks::scenario_record(&decl, b)
    });
}

#[test]
fn cite_line_corpus() {
    each(
        "cite_line",
        3,
        // With the card the line bound is 200 bytes, shorter than any complete line: that run
        // is never citeable.
        &["runs: citeable", "runs: not citeable"],
        checks::cite_line,
    );
}

#[test]
fn row_transition_corpus() {
    let decl = checks::campaign();
    each(
        "row_transition",
        4,
        &["admitted: filled", "admitted: repaired", "refused"],
        |b| checks::row_transition(&decl, b),
    );
}

#[test]
fn admission_corpus() {
    // One bare repository in a temporary directory, as the fuzz target builds once per process.
    let harness = admission::Harness::new();
    each(
        "admission",
        100,
        &["step: admitted", "step: refused"],
        |b| harness.run(b),
    );
}

#[test]
fn eval_container_corpus() {
    // The attacks of issue 25 (written by `inspect::bounds`, which checks they are here) and
    // Inspect's own logs.
    each(
        "eval_container",
        8,
        &["open: refused", "log: refused", "log: 4 samples"],
        checks::eval_container,
    );
}
