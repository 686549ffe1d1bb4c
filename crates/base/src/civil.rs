//! Civil (proleptic Gregorian, UTC) dates and times as seconds since the Unix epoch: the one
//! validation of a date and time of day, shared by every reader of timestamps (Harbor's
//! results, the allowed-signers file's validity options).

/// Seconds since 1970-01-01T00:00:00Z of `y-mo-d h:mi:s` UTC; `None` for a date or time that
/// does not exist (month 13, February 30 outside a leap year, hour 24, second 60).
pub fn unix_seconds(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&mo)
        || d < 1
        || d > days_in[(mo - 1) as usize]
        || !(0..=23).contains(&h)
        || !(0..=59).contains(&mi)
        || !(0..=59).contains(&s)
    {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
        ] {
            let (y, mo, d, h, mi, s) = bad;
            assert_eq!(unix_seconds(y, mo, d, h, mi, s), None, "{bad:?}");
        }
    }
}
