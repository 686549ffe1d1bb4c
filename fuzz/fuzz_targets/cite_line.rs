#![no_main]
//! Fuzz target `cite_line`: see `checks::cite_line`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::cite_line(data);
});
