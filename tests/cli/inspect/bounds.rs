//! Inspect logs bounded as a whole (issue 25, item 3): the attacks a red team built, each made
//! here byte by byte (deterministic, no compressor's choices), run through the real binary.
//!
//! - sixteen central directory entries sharing one 2 KB zstd member of 60 MB of JSON (1.07 GB
//!   and exit 0 before): refused, the entries overlap;
//! - twelve distinct deflate members of 60 MB each (810 MB before): refused at the import's
//!   bound, 4 × `--max-input-bytes`;
//! - zstd frames declaring a 96 MiB window for a few bytes (a panic in the decoder under
//!   `ulimit -v` before): refused before the decoder allocates;
//! - an entry whose local header lies inside another entry's data: refused, they overlap.
//!
//! Each runs under `ulimit -v` (so memory is bounded, not only measured) and `timeout` (no
//! hang), and must end in a refusal (exit 2) whose reason names the log and the member.

use super::{eval_spec, popularity, sample, text, Harness};
use crate::common::{bin, pin_env, Run};
use serde_json::{json, Value};

/// One member written once in the archive: its name in the local header, its method (0
/// stored, 8 deflate, 93 zstd), its packed bytes, its size and CRC-32 decompressed.
pub struct Local {
    pub name: String,
    pub method: u16,
    pub packed: Vec<u8>,
    pub size: u64,
    pub crc: u32,
}

/// A zip archive holding `locals` in order and a central directory of `entries`, each the
/// index of the local it points to and the name it gives it (several entries may point to one
/// local: the attack).
pub fn archive(locals: &[Local], entries: &[(usize, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for l in locals {
        offsets.push(out.len() as u32);
        out.extend_from_slice(&local_header(l));
        out.extend_from_slice(&l.packed);
    }
    let cd = out.len() as u32;
    let mut central = Vec::new();
    for (i, name) in entries {
        let l = &locals[*i];
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes()); // made by
        central.extend_from_slice(&fields(l, name));
        central.extend_from_slice(&[0u8; 6]); // comment length, disk, internal attributes
        central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        central.extend_from_slice(&offsets[*i].to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// The fields a local header and a central entry share, from "version needed" to the extra
/// field's length.
fn fields(l: &Local, name: &str) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&20u16.to_le_bytes()); // needed
    b.extend_from_slice(&0u16.to_le_bytes()); // flags
    b.extend_from_slice(&l.method.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // time, date
    b.extend_from_slice(&l.crc.to_le_bytes());
    b.extend_from_slice(&(l.packed.len() as u32).to_le_bytes());
    b.extend_from_slice(&(l.size as u32).to_le_bytes());
    b.extend_from_slice(&(name.len() as u16).to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes()); // extra
    b
}

fn local_header(l: &Local) -> Vec<u8> {
    let mut b = 0x0403_4b50u32.to_le_bytes().to_vec();
    b.extend_from_slice(&fields(l, &l.name));
    b.extend_from_slice(l.name.as_bytes());
    b
}

/// JSON made of `prefix`, `n` bytes `a` and `suffix`: its CRC-32 (computed in pieces).
fn crc(prefix: &[u8], n: u64, suffix: &[u8]) -> u32 {
    crc_of(prefix, b"a", n, suffix)
}

/// The CRC-32 of `prefix`, `n` times `unit` and `suffix`.
fn crc_of(prefix: &[u8], unit: &[u8], n: u64, suffix: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(prefix);
    let chunk = unit.repeat((1 << 20) / unit.len());
    let per = (chunk.len() / unit.len()) as u64;
    let mut left = n;
    while left > 0 {
        let k = left.min(per);
        h.update(&chunk[..k as usize * unit.len()]);
        left -= k;
    }
    h.update(suffix);
    h.finalize()
}

/// One zstd frame of `prefix`, `n` bytes `a` (RLE blocks: 4 bytes per 128 KiB) and `suffix`
/// (raw blocks). `window`: the frame's window descriptor (RFC 8878 3.1.1.1.2), or `None` for a
/// single-segment frame (its window is its content size). The content size is always given.
pub fn zstd_rle(prefix: &[u8], n: u64, suffix: &[u8], window: Option<u8>) -> Vec<u8> {
    let mut f = 0xFD2F_B528u32.to_le_bytes().to_vec();
    match window {
        None => f.push(0b1110_0000), // 8-byte content size, single segment
        Some(w) => {
            f.push(0b1100_0000);
            f.push(w);
        }
    }
    f.extend_from_slice(&(prefix.len() as u64 + n + suffix.len() as u64).to_le_bytes());
    let block = |f: &mut Vec<u8>, kind: u32, size: usize, last: bool| {
        let h = (size as u32) << 3 | kind << 1 | u32::from(last);
        f.extend_from_slice(&h.to_le_bytes()[..3]);
    };
    block(&mut f, 0, prefix.len(), false);
    f.extend_from_slice(prefix);
    let mut left = n;
    while left > 0 {
        let k = left.min(128 << 10);
        block(&mut f, 1, k as usize, false);
        f.push(b'a');
        left -= k;
    }
    block(&mut f, 0, suffix.len(), true);
    f.extend_from_slice(suffix);
    f
}

/// A sample (Inspect's shape, `super::sample`) with a field `pad` of `n` bytes `a`: the bytes
/// before and after the padding.
pub fn padded(id: u64, epoch: u64) -> (Vec<u8>, Vec<u8>) {
    let s = text(&sample(id, epoch, &format!("u{id}e{epoch}"), json!("C")));
    let prefix = [&s[..s.len() - 1], b", \"pad\": \"".as_slice()].concat();
    (prefix, b"\"}".to_vec())
}

/// The header of a log that ended (`header.json`, stored).
pub fn header() -> Local {
    let e = text(
        &json!({"version": 2, "status": "success", "eval": eval_spec(super::MODEL, Value::Null)}),
    );
    stored("header.json", &e)
}

pub fn stored(name: &str, data: &[u8]) -> Local {
    Local {
        name: name.to_owned(),
        method: 0,
        packed: data.to_vec(),
        size: data.len() as u64,
        crc: crc32fast::hash(data),
    }
}

/// A zstd member: sample `id` (epoch 1) padded to `n` more bytes, in one RLE frame.
pub fn zstd_sample(id: u64, n: u64, window: Option<u8>) -> Local {
    let (p, s) = padded(id, 1);
    Local {
        name: format!("samples/{id}_epoch_1.json"),
        method: 93,
        packed: zstd_rle(&p, n, &s, window),
        size: p.len() as u64 + n + s.len() as u64,
        crc: crc(&p, n, &s),
    }
}

/// The attack of the report: `entries` central directory entries (samples 1…) sharing one zstd
/// member of `n` bytes of padding, after the header.
pub fn shared_zstd(entries: usize, n: u64) -> Vec<u8> {
    let locals = [header(), zstd_sample(1, n, None)];
    let names: Vec<String> = (1..=entries)
        .map(|i| format!("samples/{i}_epoch_1.json"))
        .collect();
    let mut e: Vec<(usize, &str)> = vec![(0, "header.json")];
    e.extend(names.iter().map(|n| (1, n.as_str())));
    archive(&locals, &e)
}

/// `members` distinct members (samples 1…), each `packed` (the same compressed bytes: one
/// sample's padding), after the header.
fn distinct(
    members: usize,
    n: u64,
    method: u16,
    pack: impl Fn(&[u8], u64, &[u8]) -> Vec<u8>,
) -> Vec<u8> {
    let mut locals = vec![header()];
    for id in 1..=members as u64 {
        let (p, s) = padded(id, 1);
        locals.push(Local {
            name: format!("samples/{id}_epoch_1.json"),
            method,
            packed: pack(&p, n, &s),
            size: p.len() as u64 + n + s.len() as u64,
            crc: crc(&p, n, &s),
        });
    }
    let e: Vec<(usize, &str)> = locals
        .iter()
        .enumerate()
        .map(|(i, l)| (i, l.name.as_str()))
        .collect();
    archive(&locals, &e)
}

/// Deflate bits, least significant first (RFC 1951 3.1.1).
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, v: u64, n: u32) {
        self.acc |= v << self.n;
        self.n += n;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    /// A Huffman code, most significant bit first.
    fn code(&mut self, c: u64, n: u32) {
        let r = (0..n).fold(0, |r, i| r | ((c >> i) & 1) << (n - 1 - i));
        self.put(r, n);
    }
    fn align(&mut self) {
        if self.n > 0 {
            self.put(0, 8 - self.n);
        }
    }
    fn stored(&mut self, data: &[u8], last: bool) {
        self.put(u64::from(last), 1);
        self.put(0, 2);
        self.align();
        let len = data.len() as u16;
        self.out.extend_from_slice(&len.to_le_bytes());
        self.out.extend_from_slice(&(!len).to_le_bytes());
        self.out.extend_from_slice(data);
    }
}

/// One deflate stream of `prefix` (a stored block), `n` bytes `a` (a fixed-Huffman block: one
/// literal, then matches of 258 bytes at distance 1, 13 bits each) and `suffix` (the last,
/// stored block): what a compressor gives for such JSON, written by hand.
pub fn deflate_rle(prefix: &[u8], n: u64, suffix: &[u8]) -> Vec<u8> {
    deflate_runs(prefix, b"a", n, suffix)
}

/// [`deflate_rle`] of `n` times `unit` (one or two bytes, each below 144: the distance of the
/// matches is the unit's length).
pub fn deflate_runs(prefix: &[u8], unit: &[u8], n: u64, suffix: &[u8]) -> Vec<u8> {
    assert!(matches!(unit.len(), 1 | 2) && unit.iter().all(|&c| c < 144));
    let mut b = Bits {
        out: Vec::new(),
        acc: 0,
        n: 0,
    };
    b.stored(prefix, false);
    b.put(0, 1);
    b.put(1, 2); // fixed Huffman codes
    let literal = |b: &mut Bits, c: u8| b.code(0x30 + u64::from(c), 8);
    let total = n * unit.len() as u64;
    if total > 0 {
        unit.iter().for_each(|&c| literal(&mut b, c));
        let rest = total - unit.len() as u64;
        for _ in 0..rest / 258 {
            b.code(0b1100_0101, 8); // length 258 (code 285)
            b.code(unit.len() as u64 - 1, 5); // distance 1 or 2 (codes 0, 1)
        }
        let done = unit.len() as u64 + rest / 258 * 258;
        for i in done..total {
            literal(&mut b, unit[(i % unit.len() as u64) as usize]);
        }
    }
    b.code(0, 7); // end of block (256)
    b.stored(suffix, true);
    b.align();
    b.out
}

/// Distinct deflate members, the red team's second attack.
pub fn distinct_deflate(members: usize, n: u64) -> Vec<u8> {
    distinct(members, n, 8, deflate_rle)
}

/// Distinct zstd members (RLE frames): the bound of the whole, without a shared member.
pub fn distinct_zstd(members: usize, n: u64) -> Vec<u8> {
    distinct(members, n, 93, |p, n, s| zstd_rle(p, n, s, None))
}

/// `members` small samples whose zstd frames each declare a window of 96 MiB (descriptor
/// exponent 16, mantissa 4: 64 + 32 MiB), under the decoder's own limit of 100 MiB.
pub fn window_bomb(members: usize) -> Vec<u8> {
    let mut locals = vec![header()];
    locals.extend((1..=members as u64).map(|id| zstd_sample(id, 10, Some(16 << 3 | 4))));
    let e: Vec<(usize, &str)> = locals
        .iter()
        .enumerate()
        .map(|(i, l)| (i, l.name.as_str()))
        .collect();
    archive(&locals, &e)
}

/// A header whose eval spec holds a list of `n` zeros (2 bytes of JSON each, a 32-byte value
/// each once built), deflated: 60 MB of JSON that an unbounded reader builds into 1 GB.
pub fn zeros_header(n: u64) -> Vec<u8> {
    let spec = text(&eval_spec(super::MODEL, Value::Null));
    let prefix = [
        br#"{"version": 2, "status": "success", "eval": "#.as_slice(),
        &spec[..spec.len() - 1],
        br#", "zeros": ["#,
    ]
    .concat();
    let suffix = b"0]}}".to_vec();
    let h = Local {
        name: "header.json".into(),
        method: 8,
        packed: deflate_runs(&prefix, b"0,", n, &suffix),
        size: prefix.len() as u64 + 2 * n + suffix.len() as u64,
        crc: crc_of(&prefix, b"0,", n, &suffix),
    };
    archive(&[h], &[(0, "header.json")])
}

/// A stored member whose data holds a whole second member (local header and data): a second
/// entry points into the first one's bytes.
pub fn nested() -> Vec<u8> {
    let inner = {
        let (p, s) = padded(2, 1);
        stored("samples/2_epoch_1.json", &[p, s].concat())
    };
    let mut inner_bytes = local_header(&inner);
    inner_bytes.extend_from_slice(&inner.packed);
    let outer = stored("samples/1_epoch_1.json", &inner_bytes);
    let h = header();
    let inner_at = (local_header(&h).len() + h.packed.len() + local_header(&outer).len()) as u32;
    let mut z = archive(
        &[h, outer],
        &[(0, "header.json"), (1, "samples/1_epoch_1.json")],
    );
    // Add a third entry for the inner member: rewrite the central directory by hand.
    let cd_len = u32::from_le_bytes(z[z.len() - 10..z.len() - 6].try_into().unwrap()) as usize;
    let cd_at = u32::from_le_bytes(z[z.len() - 6..z.len() - 2].try_into().unwrap()) as usize;
    let mut entry = 0x0201_4b50u32.to_le_bytes().to_vec();
    entry.extend_from_slice(&20u16.to_le_bytes());
    entry.extend_from_slice(&fields(&inner, &inner.name));
    entry.extend_from_slice(&[0u8; 6]);
    entry.extend_from_slice(&0u32.to_le_bytes());
    entry.extend_from_slice(&inner_at.to_le_bytes());
    entry.extend_from_slice(inner.name.as_bytes());
    let eocd = z.split_off(cd_at + cd_len);
    z.extend_from_slice(&entry);
    let mut eocd = eocd;
    eocd[8..10].copy_from_slice(&3u16.to_le_bytes());
    eocd[10..12].copy_from_slice(&3u16.to_le_bytes());
    eocd[12..16].copy_from_slice(&((cd_len + entry.len()) as u32).to_le_bytes());
    z.extend_from_slice(&eocd);
    z
}

/// The kilobytes of address space every run below gets (`ulimit -v`): the unbounded reader
/// needed over 1 GB for the first two attacks and panicked in 1.5 GB for the third.
const ADDRESS_SPACE_KB: u64 = 600_000;

/// Run the binary in the harness under `ulimit -v` and a time limit.
fn bounded(h: &Harness, args: &[&str], kb: u64) -> Run {
    let mut cmd = std::process::Command::new("sh");
    pin_env(&mut cmd);
    cmd.current_dir(h.path())
        .arg("-c")
        .arg(format!("ulimit -v {kb} && exec timeout 300 \"$0\" \"$@\""))
        .arg(bin())
        .args(["import", "campaign.json", "ledger.json"])
        .args(args);
    let o = cmd.output().unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Import `log` (written to `logs/<name>`) under the bounds: refused, the ledger unchanged, the
/// first reason's place the log and `member`, its sentence containing `needle`.
#[track_caller]
fn refused(h: &Harness, name: &str, log: &[u8], member: &str, needle: &str) {
    let rel = format!("logs/{name}");
    crate::common::write(h.path(), &rel, log);
    let before = h.ledger_bytes();
    let r = bounded(h, &["--json", "--inspect", &rel], ADDRESS_SPACE_KB);
    r.expect_code(2);
    let v = r.json();
    assert_eq!(v["refused"], true, "{v}");
    let d = &v["details"][0];
    let place = if member.is_empty() {
        json!([rel])
    } else {
        json!([rel, member])
    };
    assert_eq!(d["place"], place, "{v}");
    let sentence = d["sentence"].as_str().unwrap();
    assert!(sentence.contains(needle), "{needle:?} not in {sentence:?}");
    assert_eq!(h.ledger_bytes(), before, "a refusal changed the ledger");
}

fn harness() -> Harness {
    Harness::new(
        popularity(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
        1,
    )
}

#[test]
fn sixteen_entries_sharing_one_member_are_refused_as_overlapping() {
    let h = harness();
    let log = shared_zstd(16, 60_000_000);
    assert!(log.len() < 6_000, "{} bytes", log.len());
    refused(
        &h,
        "shared.eval",
        &log,
        "",
        "central directory entries 1 (samples/1_epoch_1.json) and 2 (samples/2_epoch_1.json) overlap",
    );
}

#[test]
fn twelve_distinct_deflate_members_stop_at_the_imports_bound() {
    let h = harness();
    let log = distinct_deflate(12, 60_000_000);
    assert!(log.len() < 5_000_000, "{} bytes", log.len());
    // 4 × 64 MiB: four samples of 60 MB are read, the fifth is refused.
    refused(
        &h,
        "deflate.eval",
        &log,
        "samples/5_epoch_1.json",
        "which with the 240001",
    );
}

#[test]
fn a_zstd_window_larger_than_its_member_is_refused_before_the_decoder_allocates() {
    let h = harness();
    let log = window_bomb(16);
    assert!(log.len() < 10_000, "{} bytes", log.len());
    refused(
        &h,
        "window.eval",
        &log,
        "samples/1_epoch_1.json",
        "a zstd frame declares a window of 100663296 bytes",
    );
}

#[test]
fn a_header_of_thirty_million_zeros_is_refused_at_the_memory_its_values_take() {
    let h = harness();
    let log = zeros_header(30_000_000);
    refused(
        &h,
        "zeros.eval",
        &log,
        "header.json",
        "take more than the memory kept for them (2 × --max-input-bytes)",
    );
}

#[test]
fn an_entry_inside_another_entrys_data_is_refused_as_overlapping() {
    let h = harness();
    refused(
        &h,
        "nested.eval",
        &nested(),
        "",
        "central directory entries 1 (samples/1_epoch_1.json) and 2 (samples/2_epoch_1.json) overlap",
    );
}

/// A log of the header and one sample (`id`, epoch 1) padded with `n` bytes, zstd.
fn one_sample_log(id: u64, n: u64) -> Vec<u8> {
    archive(
        &[header(), zstd_sample(id, n, None)],
        &[
            (0, "header.json"),
            (1, &format!("samples/{id}_epoch_1.json")),
        ],
    )
}

#[test]
fn the_bound_is_the_imports_over_every_log_it_reads() {
    let h = harness();
    for id in 1..=4 {
        crate::common::write(
            h.path(),
            &format!("logs/{id}.eval"),
            one_sample_log(id, 900_000),
        );
    }
    // --max-input-bytes 1000000: 4,000,000 bytes for the import. Four logs of 0.9 MB fit …
    let r = bounded(
        &h,
        &["--max-input-bytes", "1000000", "--inspect", "logs"],
        ADDRESS_SPACE_KB,
    );
    r.ok();
    assert!(r.stdout.contains("imported 4 attempts"), "{}", r.stdout);
    // … a fifth does not, though each log is under the bound: refused, naming the log.
    crate::common::write(h.path(), "logs/5.eval", one_sample_log(5, 900_000));
    let before = h.ledger_bytes();
    let r = bounded(
        &h,
        &[
            "--json",
            "--max-input-bytes",
            "1000000",
            "--inspect",
            "logs",
        ],
        ADDRESS_SPACE_KB,
    );
    r.expect_code(2);
    let d = &r.json()["details"][0];
    assert_eq!(
        d["place"],
        json!(["logs/5.eval", "samples/5_epoch_1.json"]),
        "{d}"
    );
    let sentence = d["sentence"].as_str().unwrap();
    assert!(
        sentence.contains("is over its bound of 4000000 bytes (4 × --max-input-bytes)"),
        "{sentence}"
    );
    assert_eq!(h.ledger_bytes(), before);
    // Raised, it imports the fifth (the four are already in the ledger: listed, skipped).
    bounded(
        &h,
        &["--max-input-bytes", "2000000", "--inspect", "logs"],
        ADDRESS_SPACE_KB,
    )
    .ok();
    assert_eq!(h.row("inspect/popularity-5/01")["native_outcome"], "PASS");
}

#[test]
fn a_member_whose_memory_cannot_be_had_fails_with_exit_1_not_a_panic() {
    let h = harness();
    // 1.5 GB recorded, within a raised bound, under 600 MB of address space: the one allocation
    // for it fails, and the import ends with exit 1 (nothing of it was read).
    let (p, s) = padded(1, 1);
    let n = 1_500_000_000;
    let big = Local {
        name: "samples/1_epoch_1.json".into(),
        method: 93,
        packed: zstd_rle(&p, n, &s, None),
        size: p.len() as u64 + n + s.len() as u64,
        crc: 0, // never reached
    };
    let log = archive(
        &[header(), big],
        &[(0, "header.json"), (1, "samples/1_epoch_1.json")],
    );
    crate::common::write(h.path(), "logs/big.eval", log);
    let before = h.ledger_bytes();
    let r = bounded(
        &h,
        &[
            "--max-input-bytes",
            "2000000000",
            "--inspect",
            "logs/big.eval",
        ],
        ADDRESS_SPACE_KB,
    );
    r.expect_code(1);
    assert!(
        r.stderr
            .contains("logs/big.eval: samples/1_epoch_1.json: out of memory: 1500000"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert_eq!(h.ledger_bytes(), before);
}

#[test]
fn a_directory_of_sixty_thousand_empty_members_is_refused_before_any_is_read() {
    let h = harness();
    let names: Vec<String> = (0..60_000)
        .map(|i| format!("samples/{i}_epoch_1.json"))
        .collect();
    let h_local = header();
    let mut locals = vec![h_local];
    locals.extend(names.iter().map(|n| stored(n, b"{}")));
    let e: Vec<(usize, &str)> = locals
        .iter()
        .enumerate()
        .map(|(i, l)| (i, l.name.as_str()))
        .collect();
    let log = archive(&locals, &e);
    // 7.6 MB: within 4 × 2 MiB; 60,000 entries and samples: more than 2 × 2 MiB of memory.
    assert!(log.len() < 8 << 20, "{}", log.len());
    crate::common::write(h.path(), "logs/empty.eval", &log);
    let before = h.ledger_bytes();
    let r = bounded(
        &h,
        &[
            "--json",
            "--max-input-bytes",
            "2097152",
            "--inspect",
            "logs/empty.eval",
        ],
        ADDRESS_SPACE_KB,
    );
    r.expect_code(2);
    let d = &r.json()["details"][0];
    assert_eq!(d["place"], json!(["logs/empty.eval"]), "{d}");
    assert!(
        d["sentence"]
            .as_str()
            .unwrap()
            .contains("each sample and archive entry"),
        "{d}"
    );
    let hints = r.json()["hints"].clone();
    assert!(
        hints
            .to_string()
            .contains("raise the bound with --max-input-bytes"),
        "{hints}"
    );
    assert_eq!(h.ledger_bytes(), before);
}

/// The corpus of the `eval_container` fuzz target: each attack at the target's member bound
/// (1 MiB, `fuzz/checks.rs`), and Inspect's own logs.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mib = 1_000_000;
    let mut c = vec![
        ("attack-shared-zstd.eval".to_owned(), shared_zstd(16, mib)),
        ("attack-distinct-zstd.eval".into(), distinct_zstd(6, mib)),
        (
            "attack-distinct-deflate.eval".into(),
            distinct_deflate(6, mib),
        ),
        ("attack-zstd-window.eval".into(), window_bomb(4)),
        ("attack-nested.eval".into(), nested()),
        ("attack-zeros.eval".into(), zeros_header(500_000)),
        (
            "under-bound-one-sample.eval".into(),
            one_sample_log(1, 1000),
        ),
    ];
    for name in [
        "log_streaming.eval",
        "log_formats.eval",
        "mmlu-summary-choices.eval",
    ] {
        let bytes = std::fs::read(super::shared(name)).unwrap();
        c.push((format!("inspect-{name}"), bytes));
    }
    c
}

#[test]
fn the_eval_container_fuzz_corpus_holds_every_attack() {
    let dir = crate::common::project_root().join("tests/fuzz_corpus/eval_container");
    let bless = std::env::var_os("FUZZ_VERDICTS_BLESS").is_some_and(|v| !v.is_empty());
    for (name, bytes) in corpus() {
        let p = dir.join(&name);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&p, &bytes).unwrap();
        }
        let got = std::fs::read(&p).unwrap_or_else(|e| {
            panic!("{}: {e} (write it with FUZZ_VERDICTS_BLESS=1)", p.display())
        });
        assert!(
            got == bytes,
            "{}: not the attack this test builds",
            p.display()
        );
    }
}
