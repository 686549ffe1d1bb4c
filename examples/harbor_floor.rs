//! The floor under `import --harbor` of a job into a file-mode ledger, for issue 29: only the
//! work no such import can skip, and its CPU time (`getrusage`, user + system, the whole
//! process from exec).
//!
//! ```text
//! cargo run --release --example harbor_floor -- DIR   # DIR: bench --harbor --keep DIR's harbor/
//! ```
//!
//! Reads the declaration and the ledger, the job's files and every trial's `result.json` and
//! `lock.json`, parses all of it with serde_json into `IgnoredAny` (syntax only, nothing built),
//! then writes the ledger's bytes to a temporary file in a temporary directory inside DIR (the
//! ledger's file system, as the import's), `fsync`s and renames it there. Prints the bytes
//! read, the files and the CPU time, one line; the temporary directory is removed after the
//! CPU time is taken (nothing is left in DIR).

#[path = "common/rusage.rs"]
mod rusage;

use std::io::Write;
use std::path::Path;

fn parse(bytes: &[u8]) {
    let _: serde::de::IgnoredAny = serde_json::from_slice(bytes).expect("JSON");
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: harbor_floor DIR");
    let dir = Path::new(&dir);
    let (mut bytes, mut files) = (0usize, 0usize);
    let mut read = |p: &Path, json: bool| -> Option<Vec<u8>> {
        let b = std::fs::read(p).ok()?;
        bytes += b.len();
        files += 1;
        if json {
            parse(&b);
        }
        Some(b)
    };
    read(&dir.join("campaign.json"), true).expect("campaign.json");
    let ledger = read(&dir.join("ledger.json"), true).expect("ledger.json");
    let job = dir.join("jobs/bench");
    for f in ["config.json", "result.json", "lock.json"] {
        read(&job.join(f), true);
    }
    read(&job.join("job.log"), false);
    for e in std::fs::read_dir(&job).expect("job dir") {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            read(&e.path().join("result.json"), true);
            read(&e.path().join("lock.json"), true);
        }
    }
    // What the import writes is about 1.1 MB: the ledger's bytes and as much again of rows.
    let tmp = tempfile::tempdir_in(dir).expect("a temporary directory in DIR");
    let out = tmp.path().join("floor.tmp");
    let mut f = std::fs::File::create(&out).unwrap();
    f.write_all(&ledger).unwrap();
    f.write_all(&ledger[..ledger.len() * 7 / 10]).unwrap();
    f.sync_all().unwrap();
    std::fs::rename(&out, tmp.path().join("floor.json")).unwrap();
    let (user, system) = rusage::cpu(libc::RUSAGE_SELF);
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "{bytes} bytes in {files} files; CPU {:.1} ms ({:.1} user + {:.1} system)",
        ms(user + system),
        ms(user),
        ms(system)
    );
}
