//! Civil (proleptic Gregorian, UTC) dates and times as seconds since the Unix epoch: the one
//! validation of a date and time of day, shared by every reader of timestamps (Harbor's
//! results, the allowed-signers file's validity options).

use jiff::civil::DateTime;

/// Seconds since 1970-01-01T00:00:00Z of `y-mo-d h:mi:s` UTC; `None` for a date or time that
/// does not exist (month 13, February 30 outside a leap year, hour 24, second 60) or a year
/// outside 0..=9999 (the callers read four digits).
///
/// The calendar is jiff's (`civil::DateTime`, already built for gix's dates); the difference
/// is taken between civil times, not through `jiff::Timestamp`, whose range stops at
/// 9999-12-30T22:00:00Z (so that any offset can be applied to it) and would refuse the last
/// hours of year 9999, which a validity time such as `99991231Z` names.
pub fn unix_seconds(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    const EPOCH: DateTime = DateTime::constant(1970, 1, 1, 0, 0, 0, 0);
    if !(0..=9999).contains(&y) {
        return None;
    }
    let small = |v: i64| i8::try_from(v).ok();
    let at = DateTime::new(
        i16::try_from(y).ok()?,
        small(mo)?,
        small(d)?,
        small(h)?,
        small(mi)?,
        small(s)?,
        0,
    )
    .ok()?;
    Some(at.duration_since(EPOCH).as_secs())
}

#[cfg(test)]
mod tests {
    use super::unix_seconds;

    #[test]
    fn real_dates_count_from_the_epoch_and_impossible_ones_are_none() {
        assert_eq!(unix_seconds(1970, 1, 1, 0, 0, 0), Some(0));
        assert_eq!(unix_seconds(2000, 2, 29, 12, 0, 0), Some(951_825_600));
        assert_eq!(unix_seconds(2026, 12, 1, 23, 59, 59), Some(1_796_169_599));
        assert_eq!(unix_seconds(1969, 12, 31, 23, 59, 59), Some(-1));
        // The whole of the four-digit years, the last second of 9999 included.
        assert_eq!(unix_seconds(0, 1, 1, 0, 0, 0), Some(-62_167_219_200));
        assert_eq!(
            unix_seconds(9999, 12, 31, 23, 59, 59),
            Some(253_402_300_799)
        );
        assert_eq!(unix_seconds(2400, 2, 29, 0, 0, 0), Some(13_574_563_200));
        for bad in [
            (2026, 13, 1, 0, 0, 0),
            (2026, 0, 1, 0, 0, 0),
            (2026, 2, 29, 0, 0, 0),
            (1900, 2, 29, 0, 0, 0),
            (2026, 4, 31, 0, 0, 0),
            (2026, 1, 0, 0, 0, 0),
            (2026, 1, 1, 24, 0, 0),
            (2026, 1, 1, 0, 60, 0),
            (2026, 1, 1, 0, 0, 60),
            (10000, 1, 1, 0, 0, 0),
            (-1, 12, 31, 0, 0, 0),
            (2026, 1, 1, 0, 0, -1),
        ] {
            let (y, mo, d, h, mi, s) = bad;
            assert_eq!(unix_seconds(y, mo, d, h, mi, s), None, "{bad:?}");
        }
    }
}
