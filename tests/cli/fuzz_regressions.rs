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

/// xorshift64*: the seeded mutations below are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The tokens of `fuzz/json.dict` (the fuzzers' dictionary), unquoted and unescaped.
fn dictionary() -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(super::common::project_root().join("fuzz/json.dict"))
        .expect("fuzz/json.dict");
    text.lines()
        .filter_map(|l| l.split_once('=').map(|(_, v)| v))
        .filter_map(|v| v.strip_prefix('"')?.strip_suffix('"'))
        .map(|v| v.replace("\\\"", "\"").replace("\\\\", "\\").into_bytes())
        .collect()
}

/// The bytes a mutation writes over one: JSON's structure, escapes, numbers and literals.
const BYTES: &[u8] = b"{}[],:\"\\0-1eE.+ \nnul";

/// One seeded mutation of `input`, as a fuzzer makes them: a byte changed, a stretch deleted
/// or repeated, a dictionary token inserted or written over, or two stretches swapped.
fn mutate(input: &[u8], dict: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(3) {
        let n = out.len();
        let at = rng.below(n + 1);
        let len = 1 + rng.below(16.min(n.max(1)));
        let end = (at + len).min(n);
        match rng.below(6) {
            0 if at < n => out[at] = BYTES[rng.below(BYTES.len())],
            1 => drop(out.drain(at..end)),
            2 => {
                let copy = out[at..end].to_vec();
                out.splice(at..at, copy);
            }
            3 => {
                let token = &dict[rng.below(dict.len())];
                out.splice(at..at, token.iter().copied());
            }
            4 => {
                let token = &dict[rng.below(dict.len())];
                out.splice(at..end, token.iter().copied());
            }
            _ if at < n => out[at] ^= 1 << rng.below(8),
            _ => {}
        }
    }
    out
}

/// The fast paths (`json/direct.rs`, `ledger/fast.rs`, `declaration/fast.rs`) against the
/// ordinary ones on seeded mutations of every corpus file: `checks::ledger`, `node_parser` and
/// `declaration` assert that both give the same verdict (and the same ledger, report and
/// declaration), so a disagreement panics here. Deterministic: the same inputs on every run,
/// a few thousand of them, the fuzzers' work in miniature (they run for hours, not in CI).
#[test]
fn seeded_mutations_give_the_fast_and_ordinary_paths_one_verdict() {
    let dict = dictionary();
    assert!(dict.len() > 20, "the dictionary is read");
    let decl = checks::campaign();
    let mut rng = Rng(0x5eed_f00d);
    let mut verdicts = std::collections::BTreeSet::new();
    for (target, per_file) in [("ledger", 40), ("node_parser", 200), ("declaration", 8)] {
        for (name, bytes) in corpus(target, 1) {
            for k in 0..per_file {
                let input = mutate(&bytes, &dict, &mut rng);
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match target {
                    "ledger" => checks::ledger(&decl, &input),
                    "node_parser" => checks::node_parser(&input),
                    _ => checks::declaration(&input),
                }));
                match run {
                    Ok(v) => {
                        verdicts.insert(format!("{target}: {}", v.split(" (").next().unwrap()));
                    }
                    Err(_) => panic!(
                        "{target}: mutation {k} of {name} ({} bytes): the paths disagree or panic: {:?}",
                        input.len(),
                        String::from_utf8_lossy(&input)
                    ),
                }
            }
        }
    }
    // Both sides are reached: mutations the library admits and mutations it refuses.
    for want in [
        "ledger: admitted",
        "ledger: refused",
        "node_parser: depth 0: read",
    ] {
        assert!(
            verdicts.iter().any(|v| v.starts_with(want)),
            "no mutation reached {want:?}: {verdicts:?}"
        );
    }
}
