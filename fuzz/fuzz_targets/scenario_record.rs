#![no_main]
//! Fuzz target `scenario_record`: see `checks::scenario_record`.

#[path = "../checks.rs"]
mod checks;

static DECL: std::sync::LazyLock<git_ledger::declaration::Declaration> =
    std::sync::LazyLock::new(checks::campaign);

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::scenario_record(&DECL, data);
});
