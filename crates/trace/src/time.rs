//! Exact conversion of Kineto's decimal microsecond text into integer nanoseconds.
//!
//! Kineto writes `ts` and `dur` in µs with three decimals ("5118046710508.939"). Going through
//! `f64` loses the last nanosecond at these magnitudes, so sums and gaps would drift; parsing the
//! decimal text directly keeps every figure exact.

/// Parses a decimal number of microseconds (`123`, `-4.5`, `5118046710508.939`, `1.5e3`) into
/// nanoseconds, rounding half away from zero past the third decimal. Returns `None` for text that is
/// not a finite decimal number or does not fit in an `i64` of nanoseconds.
pub fn parse_micros_to_ns(text: &str) -> Option<i64> {
    if let Some(ns) = kineto_micros(text.as_bytes()) {
        return Some(ns);
    }
    let bytes = text.trim().as_bytes();
    let (negative, rest) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        b'+' => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    // Split mantissa and exponent.
    let (mantissa, exponent) = match rest.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (&rest[..i], parse_exponent(&rest[i + 1..])?),
        None => (rest, 0i32),
    };
    let (int_part, frac_part) = match mantissa.iter().position(|&b| b == b'.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, &mantissa[mantissa.len()..]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.iter().chain(frac_part).all(u8::is_ascii_digit) {
        return None;
    }
    // value = 0.<digits> * 10^(point), in µs; in ns the point moves three places right.
    let point = int_part.len() as i64 + exponent as i64 + 3;
    let digits = int_part.iter().chain(frac_part).copied();
    let mut value: i64 = 0;
    let mut round_up = false;
    let mut consumed: i64 = 0;
    for d in digits {
        if consumed < point {
            value = value.checked_mul(10)?.checked_add((d - b'0') as i64)?;
        } else {
            round_up = d >= b'5';
            break;
        }
        consumed += 1;
    }
    while consumed < point {
        value = value.checked_mul(10)?;
        consumed += 1;
    }
    if round_up {
        value = value.checked_add(1)?;
    }
    Some(if negative { -value } else { value })
}

/// The form Kineto writes (`5118046710508.939`, `1.6`, `42`: digits, then up to three decimals)
/// without the general path's work; `None` for anything else, which the general path then reads.
/// Every trace event goes through here twice (`ts`, `dur`), so it is worth the shortcut.
#[inline]
fn kineto_micros(bytes: &[u8]) -> Option<i64> {
    kineto_micros_prefix(bytes).and_then(|(len, ns)| (len == bytes.len()).then_some(ns))
}

/// The Kineto form of [`kineto_micros`] at the start of `bytes`: how many bytes it spans and its
/// nanoseconds. It stops at the first byte that cannot continue it, so the fast parser reads a
/// `ts` or `dur` and checks it in one pass.
#[inline]
pub(crate) fn kineto_micros_prefix(bytes: &[u8]) -> Option<(usize, i64)> {
    if let (Some(a), Some(b)) = (eight(bytes, 0), eight(bytes, 8)) {
        // Eight digits at a time: a timestamp has 13 before the point, and a digit-by-digit
        // multiply-add chain was a twentieth of reading a trace.
        let n = match digit_run(a) {
            8 => 8 + digit_run(b),
            n => n,
        };
        // 16 digits: Unix time in µs (1.7·10^15), as some Kineto versions write it (HTA's test
        // traces). Below 10^16 µs the nanoseconds fit u64, and i64 decides, as on the general path.
        if n == 0 || (n == 16 && bytes.get(16).is_some_and(u8::is_ascii_digit)) {
            return None;
        }
        let int = if n <= 8 {
            digits_value(a, n)
        } else {
            digits_value(a, 8) * POW10[n - 8] + digits_value(b, n - 8)
        };
        if bytes.get(n) != Some(&b'.') {
            return Some((n, i64::try_from(int * 1000).ok()?));
        }
        let c = eight(bytes, n + 1).unwrap_or(0);
        let d = digit_run(c);
        if d == 0 || d > 3 {
            return None;
        }
        return Some((n + 1 + d, i64::try_from(int * 1000 + digits_value(c, d) * POW10[3 - d]).ok()?));
    }
    kineto_micros_prefix_bytes(bytes)
}

/// [`kineto_micros_prefix`] one byte at a time, near the end of a buffer.
fn kineto_micros_prefix_bytes(bytes: &[u8]) -> Option<(usize, i64)> {
    let mut ns: i64 = 0;
    let mut i = 0;
    // 15 integer digits keep the nanoseconds below i64::MAX.
    while i < 15 {
        match bytes.get(i) {
            Some(&b) if b.is_ascii_digit() => ns = ns * 10 + (b - b'0') as i64,
            _ => break,
        }
        i += 1;
    }
    if i == 0 || bytes.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    if bytes.get(i) != Some(&b'.') {
        return Some((i, ns * 1000));
    }
    let point = i;
    i += 1;
    while i - point <= 3 {
        match bytes.get(i) {
            Some(&b) if b.is_ascii_digit() => ns = ns * 10 + (b - b'0') as i64,
            _ => break,
        }
        i += 1;
    }
    let decimals = i - point - 1;
    if decimals == 0 || bytes.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    Some((i, ns * [1000, 100, 10, 1][decimals]))
}

const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// Eight bytes from `at`, the first in the lowest byte.
#[inline(always)]
fn eight(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..at + 8).map(|c| u64::from_le_bytes(c.try_into().expect("eight bytes")))
}

/// How many of the eight bytes, from the first, are ASCII digits.
#[inline(always)]
fn digit_run(w: u64) -> usize {
    // A digit is 0x30..=0x39: after xor with 0x30 its high nibble is 0 and adding 6 does not
    // reach 0x10. A carry out of a non-digit byte only disturbs the bytes after it.
    let x = w ^ 0x3030_3030_3030_3030;
    let other = (x & 0xF0F0_F0F0_F0F0_F0F0) | (x.wrapping_add(0x0606_0606_0606_0606) & 0x1010_1010_1010_1010);
    (other.trailing_zeros() / 8) as usize
}

/// The value of the first `n` (1 to 8) bytes, which are digits.
#[inline(always)]
fn digits_value(w: u64, n: usize) -> u64 {
    // Move the digits to the top and fill below with '0's: leading zeros change nothing.
    let shift = 8 * (8 - n) as u32;
    let filled = (w << shift) | (0x3030_3030_3030_3030u64.checked_shr(64 - shift).unwrap_or(0));
    // Pairs, then quads, then the eight digits (the first digit is the lowest byte).
    let v = filled - 0x3030_3030_3030_3030;
    let v = v * 10 + (v >> 8);
    // The products overflow on purpose: only the bits that land in the upper half are kept.
    let quads = (v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32));
    let rest = ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32));
    (quads.wrapping_add(rest) >> 32) & 0xFFFF_FFFF
}

fn parse_exponent(bytes: &[u8]) -> Option<i32> {
    let text = std::str::from_utf8(bytes).ok()?;
    let e: i32 = text.parse().ok()?;
    // Anything beyond this cannot be a timestamp and would only overflow.
    (-40..=40).contains(&e).then_some(e)
}

/// Formats nanoseconds as microseconds with three decimals, the way Kineto writes them.
pub fn format_ns_as_micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    format!("{sign}{}.{:03}", abs / 1000, abs % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kineto_three_decimals_are_exact() {
        assert_eq!(parse_micros_to_ns("5118046710508.939"), Some(5_118_046_710_508_939));
        assert_eq!(parse_micros_to_ns("6.208"), Some(6_208));
        assert_eq!(parse_micros_to_ns("1.6"), Some(1_600));
        assert_eq!(parse_micros_to_ns("1683564902133354"), Some(1_683_564_902_133_354_000));
        assert_eq!(parse_micros_to_ns("0"), Some(0));
        assert_eq!(parse_micros_to_ns("-4.5"), Some(-4_500));
        assert_eq!(parse_micros_to_ns(".5"), Some(500));
        assert_eq!(parse_micros_to_ns("7."), Some(7_000));
    }

    #[test]
    fn sixteen_digits_are_read_by_the_shortcut_up_to_the_largest_nanosecond() {
        // Unix time in µs, as some Kineto versions write it: read in one pass, exactly.
        assert_eq!(
            kineto_micros_prefix(b"1712195495505583.5,        "),
            Some((18, 1_712_195_495_505_583_500))
        );
        assert_eq!(kineto_micros_prefix(b"1712195495505583}   "), Some((16, 1_712_195_495_505_583_000)));
        // i64::MAX ns is 9223372036854775.807 µs: one more does not fit, nor does a 17th digit.
        assert_eq!(kineto_micros_prefix(b"9223372036854775.807,       "), Some((20, i64::MAX)));
        assert_eq!(kineto_micros_prefix(b"9223372036854775.808,       "), None);
        assert_eq!(kineto_micros_prefix(b"9223372036854776,    "), None);
        assert_eq!(kineto_micros_prefix(b"12345678901234567,   "), None);
        assert_eq!(parse_micros_to_ns("9223372036854775.808"), None);
        assert_eq!(parse_micros_to_ns(" 9223372036854775.807"), Some(i64::MAX));
    }

    #[test]
    fn extra_decimals_round_half_away_from_zero() {
        assert_eq!(parse_micros_to_ns("1.0004"), Some(1_000));
        assert_eq!(parse_micros_to_ns("1.0005"), Some(1_001));
        assert_eq!(parse_micros_to_ns("-1.0005"), Some(-1_001));
        assert_eq!(parse_micros_to_ns("1712195495505583.0"), Some(1_712_195_495_505_583_000));
    }

    #[test]
    fn exponents_shift_the_point() {
        assert_eq!(parse_micros_to_ns("1.5e3"), Some(1_500_000));
        assert_eq!(parse_micros_to_ns("15E-1"), Some(1_500));
        assert_eq!(parse_micros_to_ns("2e-4"), Some(0));
        assert_eq!(parse_micros_to_ns("6e-4"), Some(1));
    }

    #[test]
    fn garbage_and_overflow_are_none() {
        for bad in ["", "-", ".", "abc", "1.2.3", "NaN", "Infinity", "1e999", "99999999999999999999"] {
            assert_eq!(parse_micros_to_ns(bad), None, "{bad}");
        }
    }

    #[test]
    fn formatting_round_trips() {
        for ns in [0, 1, 999, 1000, 5_118_046_710_508_939, -4_500] {
            assert_eq!(parse_micros_to_ns(&format_ns_as_micros(ns)), Some(ns));
        }
    }

    proptest::proptest! {
        #[test]
        fn kineto_shortcut_agrees_with_the_general_path(text in "[0-9]{0,17}(\\.[0-9]{0,4})?|[ +.-]?[0-9.]{0,5}") {
            if let Some(ns) = kineto_micros(text.as_bytes()) {
                let general = parse_micros_to_ns(&format!(" {text}"));
                proptest::prop_assert_eq!(Some(ns), general, "{}", text);
            }
        }

        #[test]
        fn kineto_prefix_agrees_with_the_general_path_on_what_it_spans(
            text in "[0-9]{0,17}(\\.[0-9]{0,4})?[,}\\] .e0-9-]{0,2}",
            pad in 0usize..30,
        ) {
            // Short and long buffers: byte by byte near an end, eight bytes at a time elsewhere.
            let text = format!("{text}{}", ",".repeat(pad));
            if let Some((len, ns)) = kineto_micros_prefix(text.as_bytes()) {
                proptest::prop_assert!(len > 0 && !text.as_bytes().get(len).is_some_and(u8::is_ascii_digit));
                proptest::prop_assert_eq!(Some(ns), parse_micros_to_ns(&text[..len]), "{}", text);
            }
        }

        #[test]
        fn three_decimal_text_parses_exactly(int in 0u64..10_000_000_000_000_000, frac in 0u32..1000) {
            let text = format!("{int}.{frac:03}");
            let expected = int as i128 * 1000 + frac as i128;
            let got = parse_micros_to_ns(&text);
            if expected <= i64::MAX as i128 {
                proptest::prop_assert_eq!(got, Some(expected as i64));
            } else {
                proptest::prop_assert_eq!(got, None);
            }
        }
    }
}
