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
        ) {
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
