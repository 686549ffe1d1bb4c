//! `runtime-identity` with the real binary and real Python interpreters: a fresh venv (no
//! psutil: refused, naming what is missing), and the Inspect venv of `.ci/inspect-venv.sh`,
//! whose identity must be what `inspect-example/runner-tools/run.sh`'s snippet wrote until now,
//! and what `import --runtime-identity` accepts.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{ledger, project_root, which, write};

/// A fresh venv (pip, no psutil) in `dir`; None when Python 3 has no venv module.
fn bare_venv(dir: &Path) -> Option<PathBuf> {
    let python = which("python3")?;
    let venv = dir.join("venv");
    let ok = std::process::Command::new(python)
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| venv.join("bin/python"))
}

#[test]
fn an_interpreter_without_psutil_or_a_named_package_is_refused_naming_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(python) = bare_venv(d) else {
        crate::common::require_tool("python3 -m venv", "runtime-identity on a real venv");
        return;
    };
    let py = python.to_str().unwrap();
    let r = ledger(
        d,
        &[
            "runtime-identity",
            "--python",
            py,
            "--native-provider",
            "pip",
            "--package",
            "no-such-distribution-here",
            "-o",
            "runtime.json",
        ],
    );
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("psutil is not installed (the runtime identity records its version)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("package no-such-distribution-here is not installed"),
        "{}",
        r.stderr
    );
    assert!(!d.join("runtime.json").exists(), "a refusal wrote the file");
    // A native provider that is not a distribution of this interpreter, named without its
    // version, is refused with the way to give one that is not Python's.
    let r = ledger(
        d,
        &[
            "runtime-identity",
            "--python",
            py,
            "--native-provider",
            "autocode-native",
        ],
    );
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("the native provider autocode-native is not an installed distribution"),
        "{}",
        r.stderr
    );
    // Without a native provider: a usage error; without the interpreter: could not run.
    ledger(d, &["runtime-identity", "--python", py]).expect_code(64);
    let r = ledger(
        d,
        &[
            "runtime-identity",
            "--python",
            "/nonexistent/python",
            "--native-provider",
            "pip",
        ],
    );
    r.expect_code(1);
    assert!(
        r.stderr.contains("cannot run /nonexistent/python"),
        "{}",
        r.stderr
    );
}

/// The Inspect venv (`$GIT_LEDGER_INSPECT_VENV` or `<target>/inspect-venv`), as the Inspect run
/// tests find it; skipped loudly without it (a failure under CI).
fn inspect_python() -> Option<PathBuf> {
    let dir = match std::env::var_os("GIT_LEDGER_INSPECT_VENV") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => crate::common::bin()
            .parent()
            .and_then(Path::parent)
            .expect("target dir")
            .join("inspect-venv"),
    };
    let python = dir.join("bin/python");
    if python.is_file() {
        return Some(python);
    }
    let msg = format!(
        "no Inspect venv at {} (build it with .ci/inspect-venv.sh): runtime-identity is not compared with run.sh's snippet",
        dir.display()
    );
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{msg}");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
    None
}

/// What the snippet `inspect-example/runner-tools/run.sh` used to write, run in `python`.
const SNIPPET: &str = r#"
import json, platform, subprocess, sys
import psutil
freeze = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
                        check=True, capture_output=True, text=True).stdout.split()
identity = {
    "python": platform.python_version(),
    "psutil": psutil.__version__,
    "native_provider": "inspect_ai 0.3.285",
    "packages": {"inspect_ai": "0.3.285"},
    "dependencies": sorted(d for d in freeze if "==" in d),
}
with open(sys.argv[1], "w") as f:
    json.dump(identity, f, indent=2)
    f.write("\n")
"#;

#[test]
fn the_inspect_venvs_identity_is_what_run_sh_wrote_and_import_reads_it() {
    let Some(python) = inspect_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let decl = project_root().join("inspect-example/campaign.json");
    let r = ledger(
        d,
        &[
            "runtime-identity",
            decl.to_str().unwrap(),
            "--python",
            python.to_str().unwrap(),
            "-o",
            "runtime.json",
        ],
    );
    r.ok();
    assert!(
        r.stderr.contains("wrote the runtime identity of Python"),
        "{}",
        r.stderr
    );
    let ours: Value =
        serde_json::from_slice(&std::fs::read(d.join("runtime.json")).unwrap()).unwrap();
    let snippet = d.join("snippet.json");
    write(d, "snippet.py", SNIPPET);
    let ok = std::process::Command::new(&python)
        .arg(d.join("snippet.py"))
        .arg(&snippet)
        .status()
        .unwrap()
        .success();
    assert!(ok, "the run.sh snippet failed");
    let theirs: Value = serde_json::from_slice(&std::fs::read(&snippet).unwrap()).unwrap();
    assert_eq!(
        ours, theirs,
        "runtime-identity differs from run.sh's snippet"
    );
    // It follows its schema, and import reads it (the one check of what it reads).
    crate::schemas::assert_valid("runtime-identity", &ours, "runtime-identity -o");
    let bytes = std::fs::read(d.join("runtime.json")).unwrap();
    git_ledger::import::rows::parse_runtime_identity(&bytes, "runtime.json", u64::MAX).unwrap();
    // The venv is the example's: nothing differs from the declaration.
    assert!(!r.stderr.contains("note:"), "{}", r.stderr);
    // Asked for a package the declaration does not name, and to standard output.
    let r = ledger(
        d,
        &[
            "runtime-identity",
            decl.to_str().unwrap(),
            "--python",
            python.to_str().unwrap(),
            "--package",
            "psutil",
        ],
    );
    let v = r.ok().json();
    assert_eq!(v["packages"]["psutil"], ours["psutil"]);
}
