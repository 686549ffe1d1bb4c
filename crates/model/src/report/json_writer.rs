//! The report's JSON writer: the canonical bytes of `ledger.md`'s report contract, the rows
//! written directly and in shares on every core, the rest through serde.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

use super::{DeclarationRef, LedgerState, Report, RowReport, Section};

/// Render the report as JSON (the contract of `ledger.md`), as the canonical writer writes it:
/// every object's keys sorted, two-space indent, trailing newline. The rows (nearly all of a
/// large report) are written directly (`row_json`), in shares on every core
/// (`rows_json`); the rest is serialised by serde, the report's types declaring their fields
/// in key order (tests compare the bytes with the canonical writer over a `Value`).
pub fn write_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let admitted = (report.admitted, report.refused.as_deref());
    let text = without_rows(
        admitted,
        &report.declaration,
        &report.ledger,
        &report.sections,
    )?;
    let per = share_len(report.rows.len());
    let shares = rows_json(report.rows.chunks(per).collect(), true)?;
    splice_rows(&text, shares, out)
}

/// [`write_json`] of a report that is not needed afterwards, written a block of rows at a
/// time: each block's rows are written in shares on every core and freed by the core that
/// wrote them, and the block's bytes go out before the next block is written, so the document
/// (34 MB for 100,000 rows) is never held whole. The rest of the document is written (and
/// freed) on another core beside the first block. The same bytes as [`write_json`].
pub fn write_json_owned(report: Report, out: &mut dyn Write) -> io::Result<()> {
    let Report {
        admitted,
        declaration,
        ledger,
        refused,
        sections,
        rows,
    } = report;
    let mut rows = rows.into_iter();
    let mut next_block = || -> Vec<Vec<RowReport>> {
        let block: Vec<RowReport> = rows.by_ref().take(BLOCK_ROWS).collect();
        let per = share_len(block.len());
        let mut block = block.into_iter();
        let mut shares = Vec::new();
        loop {
            let share: Vec<RowReport> = block.by_ref().take(per).collect();
            if share.is_empty() {
                return shares;
            }
            shares.push(share);
        }
    };
    let first = next_block();
    let (text, first) = std::thread::scope(|s| {
        let text = s.spawn(move || {
            let text = without_rows(
                (admitted, refused.as_deref()),
                &declaration,
                &ledger,
                &sections,
            );
            drop((declaration, ledger, sections));
            text
        });
        let first = rows_json(first, true);
        let text = text.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (text, first)
    });
    let (text, first) = (text?, first?);
    if first.iter().all(Vec::is_empty) {
        return out.write_all(&text);
    }
    let at = rows_open(&text);
    out.write_all(&text[..at])?;
    for share in first {
        out.write_all(&share)?;
    }
    loop {
        let block = next_block();
        if block.is_empty() {
            break;
        }
        for share in rows_json(block, false)? {
            out.write_all(&share)?;
        }
    }
    out.write_all(b"\n  ")?;
    out.write_all(&text[at..])
}

/// How many rows [`write_json_owned`] writes before it gives their bytes to its writer.
pub const BLOCK_ROWS: usize = 16 * 1024;

/// The canonical report document with `"rows": []`.
fn without_rows(
    (admitted, refused): (bool, Option<&[crate::refusal::Reason]>),
    declaration: &DeclarationRef,
    ledger: &LedgerState,
    sections: &BTreeMap<&'static str, Section>,
) -> io::Result<Vec<u8>> {
    let doc = ReportJson {
        admitted,
        declaration,
        ledger,
        refused,
        rows: [],
        sections,
    };
    Ok(crate::json::canonical(&doc))
}

/// Write the document `text` (from [`without_rows`]) with the written rows between the
/// brackets of its `"rows": []`, as the pretty printer writes a list: each row on a new line,
/// then the `]` on its own.
fn splice_rows(text: &[u8], shares: Vec<Vec<u8>>, out: &mut dyn Write) -> io::Result<()> {
    if shares.iter().all(Vec::is_empty) {
        return out.write_all(text);
    }
    let at = rows_open(text);
    out.write_all(&text[..at])?;
    for share in shares {
        out.write_all(&share)?;
    }
    out.write_all(b"\n  ")?;
    out.write_all(&text[at..])
}

/// Where the rows go in the document `text` (from [`without_rows`]): after its `"rows": [`.
fn rows_open(text: &[u8]) -> usize {
    let open = b"\n  \"rows\": [";
    text.windows(open.len())
        .position(|w| w == open)
        .expect("the report document has rows")
        + open.len()
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

/// The rows as the canonical writer puts them in the report's `rows` list (each after a `,`
/// but the list's first, on a new line, two levels deep): each share (in order) written, and
/// then dropped, on its own core. `first`: the shares begin the list.
fn rows_json<R: AsRef<[RowReport]> + Send>(
    shares: Vec<R>,
    first: bool,
) -> io::Result<Vec<Vec<u8>>> {
    let write = |first: bool, share: R| -> io::Result<Vec<u8>> {
        let rows = share.as_ref();
        let mut out = Vec::with_capacity(rows.len() * 400);
        for (i, row) in rows.iter().enumerate() {
            out.extend_from_slice(if first && i == 0 {
                b"\n    "
            } else {
                b",\n    "
            });
            row_json(&mut out, row);
        }
        drop(share);
        Ok(out)
    };
    let mut shares = shares.into_iter();
    let Some(head) = shares.next() else {
        return Ok(Vec::new());
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .map(|share| s.spawn(move || write(false, share)))
            .collect();
        let mut out = vec![write(first, head)?];
        for h in handles {
            out.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))?);
        }
        Ok(out)
    })
}

/// One row as the canonical writer puts it two levels deep (inside the report's object and
/// its `rows` list), keys sorted, written directly (the rows are nearly all of a large report;
/// tests compare it with the canonical writer).
pub fn row_json(out: &mut Vec<u8>, r: &RowReport) {
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
    json_str(out, &r.native_outcome);
    out.extend_from_slice(b",\n      \"native_status\": ");
    match &r.native_status {
        Some(status) => json_str(out, status),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\n      \"outcome\": ");
    json_str(out, r.outcome);
    out.extend_from_slice(b",\n      \"schedule_id\": ");
    json_str(out, &r.schedule_id);
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

/// The report document without its rows, keys in sorted order (the rows are spliced into its
/// empty `rows` list: [`splice_rows`]).
#[derive(Serialize)]
struct ReportJson<'a> {
    admitted: bool,
    declaration: &'a DeclarationRef,
    ledger: &'a LedgerState,
    refused: Option<&'a [crate::refusal::Reason]>,
    rows: [(); 0],
    sections: &'a BTreeMap<&'static str, Section>,
}
