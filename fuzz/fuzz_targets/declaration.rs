#![no_main]
//! Fuzz target `declaration`: see `checks::declaration`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::declaration(data);
});
