//! The files of a trial directory read with as few system calls as the answers allow, and
//! their JSON read by the strict fast reader where it takes them (`json/direct.rs`), the
//! ordinary strict parse deciding (and naming the fault) everywhere else: a job of 1,000
//! trials is 2,000 small files, and reading them was most of an import's time
//! (`docs/benchmarks.md`).

use std::path::Path;

use crate::error::Result;
use crate::json::{skip_ws, Node, NodeParser};

/// A file's bytes when it is a regular file (as `Path::is_file` says), `None` when it is not
/// (absent, a directory, a FIFO, a dangling link): opened once, non-blocking so that a FIFO
/// opens at once (and is then left alone), its type and size read from the open file. A file
/// over `max_bytes`, or one that cannot be opened or read, is left to
/// [`crate::json::read_bounded`], which says why (the same answers as `is_file` and then
/// `read_bounded`, in one `open`, `fstat`, `read` and `close` for a file read whole by its first
/// read).
pub(super) fn read_if_file(path: &Path, max_bytes: u64) -> Result<Option<Vec<u8>>> {
    #[cfg(unix)]
    {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path);
        if let Ok(file) = opened {
            match file.metadata() {
                Ok(meta) if !meta.is_file() => return Ok(None),
                Ok(meta) if meta.len() <= max_bytes => {
                    let size = meta.len() as usize;
                    // One read asks for a byte more than the file's size: a regular file's read
                    // stops at its end, so its size back, and not a byte more, is the whole file,
                    // without the second read (of 0 bytes) that `read_to_end` makes to see the
                    // end. Anything else (fewer bytes, as a file system may return, or more, a
                    // file that grew) reads on to the end as before.
                    let mut bytes = vec![0; size + 1];
                    let first = (&file).read(&mut bytes);
                    bytes.truncate(*first.as_ref().unwrap_or(&0));
                    if size > 0 && bytes.len() == size {
                        return Ok(Some(bytes));
                    }
                    let read = match first {
                        Ok(_) => (&file)
                            .take(max_bytes.saturating_add(1) - bytes.len() as u64)
                            .read_to_end(&mut bytes),
                        Err(e) => Err(e),
                    };
                    if read.is_ok() && bytes.len() as u64 <= max_bytes {
                        return Ok(Some(bytes));
                    }
                }
                _ => {}
            }
        }
    }
    if !path.is_file() {
        return Ok(None);
    }
    crate::json::read_bounded(path, max_bytes).map(Some)
}

/// `bytes` parsed by the fast strict reader, when it takes them whole: UTF-8, an object or an
/// array amid JSON's whitespace, nothing after it. Where it returns a value it is the one the
/// strict parse builds (duplicate keys, numbers that are not finite, nesting over the limit
/// all make it give up); `None` leaves the document to [`crate::json::parse_strict`].
#[cfg(test)]
pub(super) fn parse_fast(bytes: &[u8]) -> Option<Node<'_>> {
    parse_fast_with(&mut NodeParser::new(), bytes)
}

/// [`parse_fast`] by a parser kept across documents (give each value back with
/// [`NodeParser::recycle`]: the next document is then read into the same containers, without
/// allocating them again).
pub(super) fn parse_fast_with<'a>(
    parser: &mut NodeParser<'a>,
    bytes: &'a [u8],
) -> Option<Node<'a>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let start = skip_ws(bytes, 0);
    let (node, len) = parser.parse(&text[start..], 0)?;
    if skip_ws(bytes, start + len) == bytes.len() {
        Some(node)
    } else {
        parser.recycle(node);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::same;

    /// What `read_if_file` answers by its one read is what `Path::is_file` and then
    /// `read_bounded` answer: the same bytes (every size around the read's and the bound's
    /// edges), the same `None`, the same failure in the same words.
    #[test]
    fn a_file_read_in_one_read_is_what_the_ordinary_reads_give() {
        let dir = tempfile::tempdir().unwrap();
        let ordinary = |p: &Path, max: u64| -> Result<Option<Vec<u8>>> {
            if !p.is_file() {
                return Ok(None);
            }
            crate::json::read_bounded(p, max).map(Some)
        };
        let show = |r: Result<Option<Vec<u8>>>| match r {
            Ok(b) => format!("ok {b:?}"),
            Err(e) => format!("{} {e}", e.exit_code()),
        };
        let max = 10_000;
        for size in [0, 1, 2, 4095, 4096, 4097, 9_999, 10_000, 10_001, 70_000] {
            let p = dir.path().join(format!("f{size}"));
            let bytes: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
            std::fs::write(&p, &bytes).unwrap();
            assert_eq!(
                show(read_if_file(&p, max)),
                show(ordinary(&p, max)),
                "{size}"
            );
        }
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        for p in [dir.path().to_path_buf(), dir.path().join("missing"), fifo] {
            assert_eq!(
                show(read_if_file(&p, max)),
                show(ordinary(&p, max)),
                "{}",
                p.display()
            );
        }
    }

    #[test]
    fn the_fast_reader_takes_what_the_strict_parse_takes_and_gives_up_on_the_rest() {
        for doc in [
            "{}",
            " \n{\"a\": [1, 2.5, \"x\", null, true], \"b\": {}}\n",
            "[1]\r\n\t ",
            "{\"s\": \"esc\\\"aped\\u00e9\"}",
        ] {
            let node = parse_fast(doc.as_bytes()).expect(doc);
            let value = crate::json::parse_strict(doc.as_bytes()).unwrap();
            assert!(same(&node, &value), "{doc}");
        }
        for doc in [
            "",
            "1",
            "\"x\"",
            "{\"a\": 1, \"a\": 2}",
            "{\"a\": {\"b\": 1, \"b\": 1}}",
            "{\"a\": 1} x",
            "{\"a\": 1}\u{c}",
            "{\"a\": 1}{}",
            "{\"a\": NaN}",
            "{\"a\": 1e999}",
            "{\"a\": 1",
        ] {
            assert!(parse_fast(doc.as_bytes()).is_none(), "{doc}");
        }
        assert!(parse_fast(b"{\"a\": \"\xff\"}").is_none());
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(parse_fast(deep.as_bytes()).is_none());
        assert!(crate::json::parse_strict(deep.as_bytes()).is_err());
    }

    /// One parser kept across documents (each value given back) reads each as a new one does,
    /// after documents it took, gave up on halfway, or refused for what follows them.
    #[test]
    fn a_parser_kept_across_documents_reads_each_as_a_new_one() {
        let trial = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/data/harbor-jobs/j1/hello-file__eD2pj5h/result.json"),
        )
        .unwrap();
        let docs: Vec<&[u8]> = vec![
            &trial,
            b"{\"a\": [1, {\"b\": [2, 3]}], \"c\": {\"d\": {}}}",
            b"{\"a\": [1, {\"b\": [2, 3",
            &trial,
            b"{\"a\": 1} x",
            b"[{\"z\": 1, \"y\": 2}, {\"y\": 2, \"z\": 1}]",
            b"{\"a\": {\"b\": 1, \"b\": 1}}",
            &trial,
        ];
        let mut parser = NodeParser::new();
        for doc in &docs {
            let kept = parse_fast_with(&mut parser, doc);
            let new = parse_fast(doc);
            assert_eq!(
                kept.is_some(),
                new.is_some(),
                "{}",
                String::from_utf8_lossy(doc)
            );
            if let (Some(kept), Some(new)) = (kept, new) {
                let value = crate::json::parse_strict(doc).unwrap();
                assert!(same(&kept, &value) && same(&new, &value));
                parser.recycle(kept);
            }
        }
    }
}
