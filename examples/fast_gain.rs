//! What the fast paths gain, for `bench/run`: the report's reading of a ledger file through the
//! fast path (`Ledger::parse_kept`: rows parsed by the hand parser on every core, checked as
//! borrowed nodes) against the ordinary path it falls back to (`json::parse_document` into a
//! `Value`, `Ledger::from_owned_value`, a summary of each row); and the declaration's
//! (`Declaration::parse`: the schedule compared with `tasks × repetitions` as text,
//! `declaration/fast.rs`) against its ordinary path (`Declaration::parse_ordinary`: the whole
//! document as a `Value`, validated); each in one process on the same bytes.
//!
//! ```text
//! cargo run --release --example fast_gain -- CAMPAIGN.json LEDGER.json
//! ```
//!
//! Prints `ledger fast <s> ordinary <s>` and `declaration fast <s> ordinary <s>` (best of 2
//! each), and checks that both paths give the same summaries, and the same declaration.

use std::time::{Duration, Instant};

use git_ledger::declaration::{Declaration, Mode};
use git_ledger::json;
use git_ledger::ledger::Ledger;
use git_ledger::report::{RowSummary, Summarise};

const MAX: u64 = 1 << 40;

fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let start = Instant::now();
    let mut out = f();
    let mut best = start.elapsed();
    let start = Instant::now();
    out = {
        drop(out);
        f()
    };
    best = best.min(start.elapsed());
    (best, out)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [campaign, ledger] = &args[..] else {
        eprintln!("usage: fast_gain CAMPAIGN.json LEDGER.json");
        std::process::exit(64)
    };
    let decl = Declaration::read(std::path::Path::new(campaign), MAX).expect("declaration");
    let text = std::fs::read(campaign).expect("campaign.json");
    let (decl_fast, a) = best(|| Declaration::parse(&text, MAX).expect("declaration"));
    let (decl_ordinary, b) =
        best(|| Declaration::parse_ordinary(&text, Mode::Declaration, MAX).expect("declaration"));
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "the fast and ordinary paths read one declaration"
    );
    let bytes = std::fs::read(ledger).expect("ledger.json");
    let (fast, kept) =
        best(|| Ledger::parse_kept(&decl, &bytes, MAX, &Summarise::new()).expect("ledger"));
    let (ordinary, whole) = best(|| {
        let v = json::parse_document(&bytes, "ledger", MAX).expect("JSON");
        let l = Ledger::from_owned_value(&decl, v).expect("ledger");
        l.rows
            .iter()
            .map(|r| RowSummary::of(&decl, r))
            .collect::<Vec<_>>()
    });
    assert!(
        kept.iter().eq(whole.iter()),
        "the fast and ordinary paths summarise alike"
    );
    println!(
        "ledger fast {:.3} ordinary {:.3}",
        fast.as_secs_f64(),
        ordinary.as_secs_f64()
    );
    println!(
        "declaration fast {:.3} ordinary {:.3}",
        decl_fast.as_secs_f64(),
        decl_ordinary.as_secs_f64()
    );
}
