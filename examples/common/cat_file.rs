//! `git cat-file --batch` streaming blobs, the alternative `bench` and `defhash_bench` time
//! the definition hash against.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// Run `git` (`cmd`, with its directory and environment set) as `cat-file --batch` over every
/// object id in `ids` (one per line), reading its output to the end; returns the bytes read.
pub fn stream(mut cmd: Command, ids: &str) -> u64 {
    let mut child = cmd
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn git cat-file");
    let mut stdin = child.stdin.take().expect("stdin");
    let ids = ids.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(ids.as_bytes()));
    let mut stdout = child.stdout.take().expect("stdout");
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => n += k as u64,
            Err(e) => panic!("read: {e}"),
        }
    }
    writer.join().expect("writer").expect("write ids");
    assert!(child.wait().expect("wait").success());
    n
}
