#![no_main]
//! Fuzz target `row_transition`: see `checks::row_transition`.

#[path = "../checks.rs"]
mod checks;

static DECL: std::sync::LazyLock<git_ledger::declaration::Declaration> =
    std::sync::LazyLock::new(checks::campaign);

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::row_transition(&DECL, data);
});
