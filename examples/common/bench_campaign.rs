//! A benchmark's campaign as a real one's is written: the declaration in canonical form (as
//! `pin` writes every declaration) and the ledger template of it. `examples/bench.rs` and
//! `tests/cli/harbor.rs` include it, for `harbor_job.rs` and `inspect_bench.rs`.

use std::path::{Path, PathBuf};

/// Write `decl` to `dir/campaign.json` in canonical form and its ledger template to
/// `dir/template.json`; returns both paths.
pub fn write_campaign(dir: &Path, decl: &serde_json::Value) -> (PathBuf, PathBuf) {
    let decl_path = dir.join("campaign.json");
    std::fs::write(&decl_path, git_ledger::declaration::canonical(decl)).unwrap();
    let d =
        git_ledger::declaration::Declaration::parse(&std::fs::read(&decl_path).unwrap(), u64::MAX)
            .unwrap();
    let template = dir.join("template.json");
    std::fs::write(
        &template,
        git_ledger::ledger::Ledger::template(&d).canonical(&d),
    )
    .unwrap();
    (decl_path, template)
}
