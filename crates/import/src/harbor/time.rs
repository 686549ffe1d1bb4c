//! Harbor's timestamps: UTC, `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (pydantic's form of an aware
//! UTC `datetime`), read as microseconds since the Unix epoch so that durations are exact.

/// Microseconds since 1970-01-01T00:00:00Z of a Harbor UTC timestamp; `None` for anything else
/// (another offset, a naive time, a date that does not exist).
///
/// The form is read here, the calendar is `civil`'s (jiff's). jiff's own RFC 3339 parser
/// (`str::parse::<jiff::Timestamp>`) is not used: it accepts what this form refuses (a space or
/// `t` for `T`, `z`, a comma before the fraction, minutes without seconds, the basic format
/// `20261201T210232Z`, a leap second `:60` read as `:59`, any offset converted to UTC) and
/// refuses 9999-12-31, past the end of its timestamp range.
pub fn parse_utc(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let rest = s.strip_suffix('Z').or_else(|| s.strip_suffix("+00:00"))?;
    if b.len() < 20 || rest.len() < 19 {
        return None;
    }
    // (At most four digits: read by hand, without `str::parse`'s generality.)
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        (rest.as_bytes().get(r)?.iter()).try_fold(0, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let sep = |i: usize, c: u8| rest.as_bytes().get(i) == Some(&c);
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return None;
    }
    let (y, mo, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (h, mi, se) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let micros = match &rest[19..] {
        "" => 0,
        f => {
            let frac = f.strip_prefix('.')?;
            if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            // The first six digits, padded with zeros (a seventh and later are dropped).
            (frac.bytes().chain(std::iter::repeat(b'0')).take(6))
                .fold(0, |n, c| n * 10 + i64::from(c - b'0'))
        }
    };
    Some(crate::civil::unix_seconds(y, mo, d, h, mi, se)? * 1_000_000 + micros)
}

/// The seconds from `start` to `end` (two timestamps read by [`parse_utc`]; microsecond
/// precision), or `None` when either is not a timestamp or the end comes first.
pub fn seconds_from(start: Option<i64>, end: Option<i64>) -> Option<f64> {
    let (a, b) = (start?, end?);
    (b >= a).then(|| (b - a) as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds_between(start: Option<&str>, end: Option<&str>) -> Option<f64> {
        seconds_from(parse_utc(start?), parse_utc(end?))
    }

    #[test]
    fn harbor_timestamps_read_to_the_microsecond() {
        assert_eq!(parse_utc("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_utc("1970-01-01T00:00:01.5Z"), Some(1_500_000));
        assert_eq!(
            parse_utc("2026-12-01T21:02:32.280657Z"),
            Some(1_796_158_952_280_657)
        );
        assert_eq!(
            parse_utc("2000-03-01T00:00:00+00:00"),
            Some(951_868_800_000_000)
        );
        assert_eq!(
            seconds_between(
                Some("2026-12-01T21:02:32.280657Z"),
                Some("2026-12-01T21:02:32.651444Z")
            ),
            Some(0.370787)
        );
        for bad in [
            "2026-12-01T21:02:32",
            "2026-12-01 21:02:32Z",
            "2026-02-30T00:00:00Z",
            "2026-12-01T24:00:00Z",
            "2026-12-01T21:02:32.Z",
            "2026-12-01T21:02:32+01:00",
            "",
            "Z",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
        assert_eq!(
            seconds_between(Some("1970-01-01T00:00:02Z"), Some("1970-01-01T00:00:01Z")),
            None
        );
    }
}
