#![no_main]
//! Fuzz target `node_parser`: see `checks::node_parser`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::node_parser(data);
});
