//! Where a benchmark finds a harness's Python virtual environment (Inspect's, Harbor's).

use std::path::{Path, PathBuf};

/// The venv's python, if there is one: the directory `var` names, else `name` in the target
/// directory this benchmark was built in (`target/release/examples/bench` -> `target`, where
/// `.ci/*-venv.sh` put them), else in `target/` of the repository.
pub fn python(var: &str, name: &str) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(v) = std::env::var_os(var) {
        candidates.push(PathBuf::from(v));
    }
    if let Some(target) = std::env::current_exe()
        .ok()
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .and_then(Path::parent)
    {
        candidates.push(target.join(name));
    }
    candidates.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(name),
    );
    candidates
        .into_iter()
        .map(|v| v.join("bin/python"))
        .find(|py| py.is_file())
}
