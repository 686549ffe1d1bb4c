//! The floor under `report` of a ledger file, for `bench/run`: the time a bare parse of the
//! same bytes takes, with nothing classified, checked or written.
//!
//! ```text
//! cargo run --release --example parse_floor -- LEDGER.json
//! cargo run --release --example parse_floor -- --sha256 LEDGER.json
//! ```
//!
//! The file is mapped as `report` maps it, checked as UTF-8, then read by serde_json into
//! `IgnoredAny` (syntax only: every string, number and container read, nothing built), one
//! core. A strict parse does at least this much (it also refuses duplicate keys and NaN, and
//! builds what it reads), so no parse of these bytes, strict or not, can be cheaper; `report`
//! on two cores may be. Prints the bytes and the seconds of the parse alone, one line.
//!
//! With `--sha256` it hashes the mapped bytes instead (SHA-256, as `report` does on its second
//! thread, with the same `sha2` and its CPU extensions): the other cost no report can skip,
//! since the report names the ledger by it. With both on two cores, no report of the file
//! takes less than the larger of the hash and half their sum.

use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let hash = args.first().is_some_and(|a| a == "--sha256");
    if hash {
        args.remove(0);
    }
    let [path] = &args[..] else {
        eprintln!("usage: parse_floor [--sha256] LEDGER.json");
        std::process::exit(64)
    };
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // SAFETY: the benchmark's own file, not changed while it runs.
    #[allow(unsafe_code)]
    let bytes = unsafe { memmap2::Mmap::map(&file) }.unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = Instant::now();
    if hash {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(&bytes[..]);
        println!(
            "{} bytes hashed in {:.3} s ({:x})",
            bytes.len(),
            start.elapsed().as_secs_f64(),
            digest
        );
        return;
    }
    let text = std::str::from_utf8(&bytes).expect("UTF-8");
    let _: serde::de::IgnoredAny = serde_json::from_str(text).expect("JSON");
    println!(
        "{} bytes parsed in {:.3} s",
        bytes.len(),
        start.elapsed().as_secs_f64()
    );
}
