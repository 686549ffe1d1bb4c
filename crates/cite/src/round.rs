//! Rounding rates to four decimals exactly as Python's `round(x, 4)` rounds a float.
//!
//! Python rounds the binary double itself: it takes the exact decimal value of `x`, rounds it to
//! the requested digits with ties to even (a tie only happens when the double is exactly half
//! way, e.g. `1/32 = 0.03125`), and converts that decimal back to the nearest double. Formatting
//! through a decimal string of limited precision, or `(x * 10000).round() / 10000`, gets some
//! cases wrong (`0.00015`, `1/32`), so this works on the exact binary value.

/// `round(x, 4)` as Python computes it, for any finite `x` (non-finite values are returned as
/// they are, as Python does).
pub fn round4(x: f64) -> f64 {
    round_to(x, 4)
}

/// `round(x, digits)` as Python computes it, for `digits` in `0..=8`.
pub fn round_to(x: f64, digits: u32) -> f64 {
    debug_assert!(digits <= 8);
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let negative = x < 0.0;
    let (mantissa, exp) = decompose(x.abs());
    let scale = 10u128.pow(digits);
    let rounded = if exp >= 0 {
        // An integer: nothing after the point to round.
        return x;
    } else {
        // x = mantissa / 2^k exactly; x * 10^digits = mantissa * scale / 2^k.
        let k = (-exp) as u32;
        let numerator = mantissa as u128 * scale; // < 2^53 * 10^8 < 2^81
        if k >= 100 {
            // numerator < 2^81, so x * 10^digits < 2^-19: rounds to zero.
            0u128
        } else {
            let denominator = 1u128 << k;
            let q = numerator / denominator;
            let r = numerator % denominator;
            let twice = r * 2; // r < 2^99, so no overflow
            if twice > denominator || (twice == denominator && q % 2 == 1) {
                q + 1
            } else {
                q
            }
        }
    };
    // q < 2^53 here for every x below 2^53 / 10^digits; a correctly rounded division of two
    // exactly representable doubles is the same double strtod gives for the decimal string.
    let value = rounded as f64 / scale as f64;
    if negative {
        -value
    } else {
        value
    }
}

/// The exact value of a positive finite double as `mantissa * 2^exp`.
fn decompose(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value is what CPython 3 prints for `round(x, 4)`.
    #[test]
    fn matches_python_round() {
        let cases: &[(f64, f64)] = &[
            (2.0 / 3.0, 0.6667),
            (1.0 / 6.0, 0.1667),
            (5.0 / 12.0, 0.4167),
            (1.0 / 12.0, 0.0833),
            (0.75, 0.75),
            (1.0, 1.0),
            (0.0, 0.0),
            // Exact ties in binary: ties go to even.
            (1.0 / 32.0, 0.0312),
            (3.0 / 32.0, 0.0938),
            (5.0 / 32.0, 0.1562),
            (7.0 / 32.0, 0.2188),
            // Decimal "ties" that are not ties in binary.
            (0.00005, 0.0001),
            (0.00015, 0.0001),
            (0.00025, 0.0003),
            (0.12345, 0.1235),
            (1.00005, 1.0001),
            (0.00004999, 0.0),
            (1e-300, 0.0),
            (f64::MIN_POSITIVE / 4.0, 0.0),
            (123.456789, 123.4568),
            (-2.0 / 3.0, -0.6667),
            (1.0 / 1_000_000.0, 0.0),
            (999_999.0 / 1_000_000.0, 1.0),
        ];
        for &(x, want) in cases {
            assert_eq!(round4(x), want, "round({x:e}, 4)");
        }
    }

    #[test]
    fn every_small_fraction_matches_decimal_rounding() {
        // For n up to 200 every a/n rounded must print with at most four decimals.
        for n in 1..=200u32 {
            for a in 0..=n {
                let r = round4(a as f64 / n as f64);
                let s = r.to_string();
                let decimals = s.split('.').nth(1).map_or(0, str::len);
                assert!(decimals <= 4, "{a}/{n} -> {s}");
            }
        }
    }

    #[test]
    fn large_and_odd_values_pass_through() {
        assert_eq!(round4(1e20), 1e20);
        assert!(round4(f64::NAN).is_nan());
        assert_eq!(round4(f64::INFINITY), f64::INFINITY);
        assert_eq!(round_to(2.5, 0), 2.0);
        assert_eq!(round_to(3.5, 0), 4.0);
        assert_eq!(round_to(0.5, 0), 0.0);
    }
}
