#![no_main]
//! Fuzz target `eval_container`: see `checks::eval_container`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::eval_container(data);
});
