//! The report's JSON writer: the canonical bytes of `ledger.md`'s report contract, written
//! as they are made. The rows (nearly all of a large report) are written directly, a block at
//! a time in shares on every core, each block's bytes given to the writer before the next is
//! made; the sections are written by serde straight to the writer. The document (34 MB for
//! 100,000 rows) is never held whole.

use serde::Serialize;
use std::io::{self, Write};
use std::sync::Arc;

use super::{DeclarationRef, LedgerState, Report, ScheduleIds, Shape};

/// Render the report as JSON (the contract of `ledger.md`), as the canonical writer writes it:
/// every object's keys sorted, two-space indent, trailing newline. The report's types declare
/// their fields in key order, so serde writes them as the canonical writer would (tests
/// compare the bytes with the canonical writer over a `Value`).
pub fn write_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    // The keys before `rows`, as their own document without its closing `\n}`.
    let head = serde_json::to_vec_pretty(&Head {
        admitted: report.admitted,
        declaration: &report.declaration,
        ledger: &report.ledger,
        refused: report.refused.as_deref(),
    })
    .map_err(io::Error::other)?;
    out.write_all(&head[..head.len() - 2])?;
    out.write_all(b",\n  \"rows\": [")?;
    let (ids, shapes) = (report.rows.schedule(), report.rows.shapes());
    if !shapes.is_empty() {
        for (b, block) in shapes.chunks(BLOCK_ROWS).enumerate() {
            let start = b * BLOCK_ROWS;
            for share in rows_json(ids, start, block)? {
                out.write_all(&share)?;
            }
        }
        out.write_all(b"\n  ]")?;
    } else {
        out.write_all(b"]")?;
    }
    out.write_all(b",\n  \"sections\": ")?;
    // Serialised as a document of its own, each line indented once more: where the canonical
    // writer puts it, one level deep (a JSON string holds no raw newline). Streamed: its ids
    // lists mention every row (30 MB and more for 1,000,000 rows).
    let mut indented = Indented::new(&mut out);
    serde_json::to_writer_pretty(&mut indented, &report.sections).map_err(io::Error::other)?;
    indented.flush()?;
    out.write_all(b"\n}\n")?;
    out.flush()
}

/// A writer that indents every line after the first by two more spaces. serde_json's pretty
/// printer writes a few bytes a call: they are gathered, and indented a block at a time (a
/// line break split between blocks is still one byte, so the blocks' bounds change nothing).
struct Indented<W: Write> {
    out: W,
    block: Vec<u8>,
    indented: Vec<u8>,
}

/// How much [`Indented`] gathers before it indents and writes.
const INDENT_BLOCK: usize = 64 * 1024;

impl<W: Write> Indented<W> {
    fn new(out: W) -> Self {
        Indented {
            out,
            block: Vec::with_capacity(INDENT_BLOCK + 1024),
            indented: Vec::new(),
        }
    }

    /// Indent and write what is gathered, in one write.
    fn pass(&mut self) -> io::Result<()> {
        let mut from = 0;
        for at in memchr::memchr_iter(b'\n', &self.block) {
            self.indented.extend_from_slice(&self.block[from..at]);
            self.indented.extend_from_slice(b"\n  ");
            from = at + 1;
        }
        self.indented.extend_from_slice(&self.block[from..]);
        self.out.write_all(&self.indented)?;
        self.indented.clear();
        self.block.clear();
        Ok(())
    }
}

impl<W: Write> Write for Indented<W> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.block.extend_from_slice(buf);
        if self.block.len() >= INDENT_BLOCK {
            self.pass()?;
        }
        Ok(buf.len())
    }
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write(buf).map(drop)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.pass()?;
        self.out.flush()
    }
}

/// How many rows [`write_json`] writes before it gives their bytes to its writer.
pub const BLOCK_ROWS: usize = 16 * 1024;

/// The report's keys before `rows`, in key order.
#[derive(Serialize)]
struct Head<'a> {
    admitted: bool,
    declaration: &'a DeclarationRef,
    ledger: &'a LedgerState,
    refused: Option<&'a [crate::refusal::Reason]>,
}

/// Below this many rows one thread writes them all.
pub const PARALLEL_JSON_ROWS: usize = 4096;

/// How many rows each core writes.
fn share_len(rows: usize) -> usize {
    let n = if rows < PARALLEL_JSON_ROWS {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    };
    rows.div_ceil(n).max(1)
}

/// The rows of `block` (the first at position `start`) as the canonical writer puts them in
/// the report's `rows` list (each after a `,` but the list's first, on a new line, two levels
/// deep), in shares written on every core.
fn rows_json(ids: &ScheduleIds, start: usize, block: &[Arc<Shape>]) -> io::Result<Vec<Vec<u8>>> {
    let write = |first: usize, rows: &[Arc<Shape>]| -> Vec<u8> {
        let mut out = Vec::with_capacity(rows.len() * 400);
        let mut id = String::new();
        for (i, shape) in rows.iter().enumerate() {
            let p = first + i;
            out.extend_from_slice(if p == 0 { b"\n    " } else { b",\n    " });
            id.clear();
            ids.write(super::ids::position(p), &mut id);
            row_json(&mut out, &id, shape);
        }
        out
    };
    let per = share_len(block.len());
    let mut shares = block.chunks(per).enumerate();
    let Some((_, head)) = shares.next() else {
        return Ok(Vec::new());
    };
    Ok(std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .map(|(k, share)| s.spawn(move || write(start + k * per, share)))
            .collect();
        let mut out = vec![write(start, head)];
        for h in handles {
            out.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        out
    }))
}

/// One row (its id and shape) as the canonical writer puts it two levels deep (inside the
/// report's object and its `rows` list), keys sorted, written directly (the rows are nearly
/// all of a large report; tests compare it with the canonical writer).
pub fn row_json(out: &mut Vec<u8>, schedule_id: &str, shape: &Shape) {
    let r = shape.row(String::new());
    out.extend_from_slice(b"{\n      \"gaps\": ");
    if r.gaps.is_empty() {
        out.extend_from_slice(b"[]");
    } else {
        for (i, gap) in r.gaps.iter().enumerate() {
            out.extend_from_slice(if i == 0 {
                b"[\n        "
            } else {
                b",\n        "
            });
            json_str(out, gap);
        }
        out.extend_from_slice(b"\n      ]");
    }
    out.extend_from_slice(b",\n      \"limits\": ");
    if r.limits.is_empty() {
        out.extend_from_slice(b"{}");
    } else {
        for (i, (name, state)) in r.limits.iter().enumerate() {
            out.extend_from_slice(if i == 0 {
                b"{\n        "
            } else {
                b",\n        "
            });
            json_str(out, name);
            out.extend_from_slice(b": ");
            json_str(out, state.as_str());
        }
        out.extend_from_slice(b"\n      }");
    }
    out.extend_from_slice(b",\n      \"native_outcome\": ");
    json_str(out, r.native_outcome);
    out.extend_from_slice(b",\n      \"native_status\": ");
    match r.native_status {
        Some(status) => json_str(out, status),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\n      \"outcome\": ");
    json_str(out, r.outcome);
    out.extend_from_slice(b",\n      \"schedule_id\": ");
    json_str(out, schedule_id);
    out.extend_from_slice(b",\n      \"section\": ");
    json_str(out, r.section);
    out.extend_from_slice(b"\n    }");
}

/// A JSON string as serde_json writes it: quoted, with `"`, `\\` and control characters
/// escaped (by serde_json itself when there are any), everything else as it is.
pub fn json_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
    } else {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line after the first indented by two more spaces, whatever blocks the writes
    /// come in: the whole document at once, or serde's own few-byte writes over many blocks.
    #[test]
    fn indented_is_each_line_after_the_first_two_spaces_deeper_across_blocks() {
        let items: Vec<String> = (0..12_000).map(|i| format!("row/{i:05}\nx")).collect();
        let doc = serde_json::json!({"a": items, "b": {"c": [1, 2, {"d": []}]}});
        let pretty = serde_json::to_vec_pretty(&doc).unwrap();
        assert!(pretty.len() > 3 * INDENT_BLOCK, "spans several blocks");
        let expected: Vec<u8> = String::from_utf8(pretty.clone())
            .unwrap()
            .replace('\n', "\n  ")
            .into_bytes();
        let mut by_serde = Vec::new();
        let mut w = Indented::new(&mut by_serde);
        serde_json::to_writer_pretty(&mut w, &doc).unwrap();
        w.flush().unwrap();
        assert!(by_serde == expected);
        for cut in [1, 7, INDENT_BLOCK - 1, INDENT_BLOCK, INDENT_BLOCK + 1] {
            let mut whole = Vec::new();
            let mut w = Indented::new(&mut whole);
            for piece in pretty.chunks(cut) {
                w.write_all(piece).unwrap();
            }
            w.flush().unwrap();
            assert!(whole == expected, "writes of {cut} bytes");
        }
    }
}
