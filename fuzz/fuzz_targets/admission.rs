#![no_main]
//! Fuzz target `admission`: a parent/child pair of ledger commits in a real Git repository,
//! judged by the commit-level admission validator; see `fuzz/admission.rs`.

#[path = "../admission.rs"]
mod admission;

// The verdict helpers `admission.rs` uses.
#[path = "../checks.rs"]
mod checks;

thread_local! {
    static HARNESS: admission::Harness = admission::Harness::new();
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    HARNESS.with(|h| h.run(data));
});
