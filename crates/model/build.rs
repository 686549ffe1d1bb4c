// Build script: the rules fingerprint (`GIT_LEDGER_RULES`), a SHA-256 over the source files
// that hold the declaration and row rules: this crate's and the base's strict JSON. The
// declaration cache (`crates/store/src/git/decl_cache.rs`)
// trusts an entry only when it was written by a build with the same fingerprint, so a build
// whose rules differ, stricter or laxer, parses every declaration afresh instead of trusting
// what an older parse found.

use std::path::{Path, PathBuf};

/// The files and directories (below the workspace's `crates/`) whose code decides what a
/// declaration or a row may be. A directory counts with every `.rs` file below it, tests
/// (`tests.rs`) aside.
pub const RULE_SOURCES: &[&str] = &[
    "model/src/declaration.rs",
    "model/src/declaration",
    "model/src/ledger.rs",
    "model/src/ledger",
    "model/src/admission.rs",
    "model/src/admission",
    "base/src/json.rs",
    "base/src/json",
];

/// Every rule source file below `root` (the workspace's `crates/`), sorted by its path relative
/// to it.
pub fn rule_files(root: &Path) -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let rel = format!("{rel}/{name}");
            if path.is_dir() {
                if name != "tests" {
                    walk(&path, &rel, out);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                out.push((rel, path));
            }
        }
    }
    let mut out = Vec::new();
    for s in RULE_SOURCES {
        let path = root.join(s);
        if path.is_dir() {
            walk(&path, s, &mut out);
        } else if path.is_file() {
            out.push(((*s).to_owned(), path));
        }
    }
    out.sort();
    out
}

/// The fingerprint: SHA-256 over each rule file's relative path, length and bytes.
pub fn fingerprint(root: &Path) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for (rel, path) in rule_files(root) {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        h.update(format!("{rel}\0{}\0", bytes.len()).as_bytes());
        h.update(&bytes);
    }
    // The library's `hex` is faster-hex's; a build script cannot call the library, and one
    // digest per build is not worth a build dependency.
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[allow(dead_code)] // also compiled into a unit test, which calls only the functions above
fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by Cargo"));
    let root = manifest.parent().expect("crates/model has a parent");
    for s in RULE_SOURCES {
        println!("cargo:rerun-if-changed=../{s}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=GIT_LEDGER_RULES={}", fingerprint(root));
}
