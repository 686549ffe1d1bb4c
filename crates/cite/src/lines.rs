//! Reading JSON Lines one line at a time with a bound on each line's length, so a runs file of
//! any size streams in constant memory and one enormous line cannot exhaust it. Skipping an
//! over-long line is bounded too ([`MAX_SKIP_BYTES`]), so a stream without newlines
//! (`/dev/zero`, a FIFO fed forever) ends the reading instead of hanging it.

use std::io::{self, BufRead};

/// How many bytes of an over-long line are read and discarded, past the bound, looking for its
/// end; a line still going on after that ends the reading (`ended: false`).
pub const MAX_SKIP_BYTES: u64 = 64 * 1024 * 1024;

/// One line as read: its bytes (without the newline, and without a trailing `\r`), or the fact
/// that it was longer than the bound (its bytes were read and discarded; `ended` is false when
/// its end was not found within [`MAX_SKIP_BYTES`] more, and the rest of the input is unread).
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Complete,
    TooLong { bytes: u64, ended: bool },
}

/// Read the next line into `buf` (cleared first). Returns `None` at the end of the input.
/// A line longer than `max` bytes is consumed to its end (at most [`MAX_SKIP_BYTES`] past the
/// bound) but not kept.
pub fn read_line<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: u64,
) -> io::Result<Option<Line>> {
    read_line_skipping(reader, buf, max, MAX_SKIP_BYTES)
}

/// [`read_line`] with the skip bound as a parameter.
fn read_line_skipping<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: u64,
    max_skip: u64,
) -> io::Result<Option<Line>> {
    buf.clear();
    let mut total: u64 = 0;
    let mut too_long = false;
    let mut saw_any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        saw_any = true;
        let (part, used, done) = match memchr(chunk) {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        total += part.len() as u64;
        if !too_long {
            if total > max {
                too_long = true;
                buf.clear();
                buf.shrink_to(64 * 1024);
            } else {
                buf.extend_from_slice(part);
            }
        }
        reader.consume(used);
        if done {
            break;
        }
        if total > max.saturating_add(max_skip) {
            return Ok(Some(Line::TooLong {
                bytes: total,
                ended: false,
            }));
        }
    }
    if !saw_any {
        return Ok(None);
    }
    if too_long {
        return Ok(Some(Line::TooLong {
            bytes: total,
            ended: true,
        }));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(Line::Complete))
}

fn memchr(haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == b'\n')
}

/// Whether a line holds only whitespace (skipped, as the seed's gate skips `line.strip() == ""`).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: u64) -> Vec<Result<String, u64>> {
        let mut r = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while let Some(l) = read_line(&mut r, &mut buf, max).unwrap() {
            out.push(match l {
                Line::Complete => Ok(String::from_utf8(buf.clone()).unwrap()),
                Line::TooLong { bytes, .. } => Err(bytes),
            });
        }
        out
    }

    #[test]
    fn splits_on_newline_and_strips_cr() {
        assert_eq!(
            lines(b"ab\r\ncd\n\nlast", 100),
            vec![
                Ok("ab".into()),
                Ok("cd".into()),
                Ok("".into()),
                Ok("last".into())
            ]
        );
        assert_eq!(lines(b"", 100), vec![]);
        assert_eq!(lines(b"x\n", 100), vec![Ok("x".into())]);
    }

    #[test]
    fn a_line_over_the_bound_is_skipped_whole_and_reading_goes_on() {
        assert_eq!(
            lines(b"12345\n1234567890\nok\n", 5),
            vec![Ok("12345".into()), Err(10), Ok("ok".into())]
        );
    }

    #[test]
    fn a_line_without_end_stops_the_reading() {
        // /dev/zero as the runs: one line that never ends must not hang the gate.
        let mut r = io::BufReader::new(io::Read::take(io::repeat(b'x'), u64::MAX));
        let mut buf = Vec::new();
        match read_line_skipping(&mut r, &mut buf, 10, 100_000).unwrap() {
            Some(Line::TooLong { bytes, ended }) => {
                assert!(!ended);
                assert!(bytes > 100_010);
            }
            other => panic!("{other:?}"),
        }
        assert!(buf.is_empty());
    }

    #[test]
    fn blank_means_only_whitespace() {
        assert!(is_blank(b""));
        assert!(is_blank(b" \t\r"));
        assert!(!is_blank(b" {} "));
    }
}
