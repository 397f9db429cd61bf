//! The pieces of JSON text that the cursor checks on their own: numbers, literals and escaped strings,
//! checked by the same rules serde_json applies, so that the fast parser never accepts what the
//! reference parser rejects.

use std::borrow::Cow;

/// Why a lexeme could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    /// The buffer ended inside it (more bytes may complete it).
    Eof,
    /// It is not valid.
    Syntax,
}

/// The bytes that may follow a scalar: whitespace, an operator or a quote.
const ENDS_SCALAR: [bool; 256] = {
    let mut t = [false; 256];
    let ends = b" \n\r\t,}]:{[\"";
    let mut i = 0;
    while i < ends.len() {
        t[ends[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether `b` may follow a scalar.
#[inline]
pub(crate) fn ends_scalar(b: u8) -> bool {
    ENDS_SCALAR[b as usize]
}

/// The end of the run of ASCII digits that starts at `i`, eight bytes at a time.
#[inline]
fn digits(buf: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = buf.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // A digit is 0x30..=0x39: after xor with 0x30 its high nibble is 0 and adding 6 does not
        // reach 0x10. A carry out of a non-digit byte only disturbs the bytes after it.
        let x = w ^ 0x3030_3030_3030_3030;
        let other =
            (x & 0xF0F0_F0F0_F0F0_F0F0) | (x.wrapping_add(0x0606_0606_0606_0606) & 0x1010_1010_1010_1010);
        if other != 0 {
            return i + other.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while buf.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// The end of the JSON number that starts at `start` (`-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`).
#[inline(always)]
pub(crate) fn number_end(buf: &[u8], start: usize) -> Result<usize, Bad> {
    match small_int_end(buf, start).or_else(|| int_end(buf, start)) {
        Some(end) => Ok(end),
        None => number(buf, start).map(|(end, _)| end),
    }
}

/// The end of an integer of any length without sign, fraction or exponent, followed by a
/// delimiter (ids, process and thread ids, sequence numbers); `None` for anything else.
#[inline(always)]
fn int_end(buf: &[u8], start: usize) -> Option<usize> {
    if !matches!(buf.get(start), Some(b'1'..=b'9')) {
        return None;
    }
    let end = digits(buf, start + 1);
    buf.get(end).is_some_and(|&b| ends_scalar(b)).then_some(end)
}

/// The end of an integer of one to three digits followed by a delimiter (most numbers in a
/// trace's `args`: `0`, `7`, `44`, `256`), without the general path's call; `None` for anything
/// else, which the general path then reads.
#[inline(always)]
fn small_int_end(buf: &[u8], start: usize) -> Option<usize> {
    let s: &[u8; 4] = buf.get(start..start + 4)?.try_into().ok()?;
    let digit = |b: u8| b.is_ascii_digit();
    if !digit(s[0]) {
        return None;
    }
    if ends_scalar(s[1]) {
        return Some(start + 1);
    }
    if s[0] == b'0' || !digit(s[1]) {
        return None;
    }
    if ends_scalar(s[2]) {
        return Some(start + 2);
    }
    (digit(s[2]) && ends_scalar(s[3])).then_some(start + 3)
}

/// [`number_end`], and whether the number has an exponent.
#[inline(always)]
pub(crate) fn number_with_exponent(buf: &[u8], start: usize) -> Result<(usize, bool), Bad> {
    match small_int_end(buf, start).or_else(|| int_end(buf, start)) {
        Some(end) => Ok((end, false)),
        None => number(buf, start),
    }
}

/// The general path of [`number_with_exponent`].
#[inline(never)]
fn number(buf: &[u8], start: usize) -> Result<(usize, bool), Bad> {
    let s = &buf[start..];
    // Missing digits at the end of the buffer may still come; elsewhere they are an error.
    let missing = |j: usize| if j == s.len() { Bad::Eof } else { Bad::Syntax };
    let sign = (s.first() == Some(&b'-')) as usize;
    let mut i = match s.get(sign) {
        Some(b'0') => sign + 1,
        Some(b'1'..=b'9') => digits(s, sign + 1),
        Some(_) => return Err(Bad::Syntax),
        None => return Err(Bad::Eof),
    };
    let mut next = s.get(i).copied();
    if next == Some(b'.') {
        let j = digits(s, i + 1);
        if j == i + 1 {
            return Err(missing(j));
        }
        i = j;
        next = s.get(i).copied();
    }
    let exponent = matches!(next, Some(b'e' | b'E'));
    if exponent {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = digits(s, i);
        if j == i {
            return Err(missing(j));
        }
        i = j;
        next = s.get(i).copied();
    }
    match next {
        Some(b) if ends_scalar(b) => Ok((start + i, exponent)),
        Some(_) => Err(Bad::Syntax),
        None => Err(Bad::Eof),
    }
}

/// The end of the literal (`true`, `false`, `null`) that starts at `start`.
#[inline]
pub(crate) fn literal_end(buf: &[u8], start: usize) -> Result<usize, Bad> {
    let word: &[u8] = match buf[start] {
        b't' => b"true",
        b'f' => b"false",
        b'n' => b"null",
        _ => return Err(Bad::Syntax),
    };
    let rest = &buf[start..];
    let n = word.len().min(rest.len());
    if rest[..n] != word[..n] {
        return Err(Bad::Syntax);
    }
    match rest.get(word.len()) {
        _ if n < word.len() => Err(Bad::Eof),
        None => Err(Bad::Eof),
        Some(&b) if ends_scalar(b) => Ok(start + word.len()),
        Some(_) => Err(Bad::Syntax),
    }
}

/// A number's text as serde_json's `arbitrary_precision` keeps it: verbatim, except that an
/// exponent is written `e` with its sign (`1E5` becomes `1e+5`).
#[inline]
pub(crate) fn number_text(text: &str) -> Cow<'_, str> {
    // `E | 0x20` is `e`; no other byte of a number maps there.
    let Some(e) = text.bytes().position(|b| b | 0x20 == b'e') else {
        return Cow::Borrowed(text);
    };
    let (mantissa, rest) = (&text[..e], &text[e + 1..]);
    let sign = if rest.starts_with(['+', '-']) { "" } else { "+" };
    Cow::Owned(format!("{mantissa}e{sign}{rest}"))
}

fn hex4(bytes: &[u8]) -> Option<u16> {
    let mut n = 0u16;
    for &b in bytes.get(..4)? {
        let d = (b as char).to_digit(16)? as u16;
        n = n * 16 + d;
    }
    Some(n)
}

/// Decodes the contents of a string that holds at least one escape, with serde_json's rules for
/// strings: the escapes `\" \\ \/ \b \f \n \r \t \uXXXX`, UTF-16 surrogates only in valid pairs,
/// and valid UTF-8 around them.
pub(crate) fn unescape(raw: &[u8]) -> Result<String, Bad> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let esc = *raw.get(i + 1).ok_or(Bad::Syntax)?;
        i += 2;
        let c = match esc {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let n = hex4(&raw[i..]).ok_or(Bad::Syntax)?;
                i += 4;
                match n {
                    0xDC00..=0xDFFF => return Err(Bad::Syntax),
                    0xD800..=0xDBFF => {
                        if raw.get(i..i + 2) != Some(b"\\u") {
                            return Err(Bad::Syntax);
                        }
                        let n2 = hex4(&raw[i + 2..]).ok_or(Bad::Syntax)?;
                        if !(0xDC00..=0xDFFF).contains(&n2) {
                            return Err(Bad::Syntax);
                        }
                        i += 6;
                        let cp = (((n as u32 - 0xD800) << 10) | (n2 as u32 - 0xDC00)) + 0x1_0000;
                        char::from_u32(cp).ok_or(Bad::Syntax)?
                    }
                    n => char::from_u32(n as u32).ok_or(Bad::Syntax)?,
                }
            }
            _ => return Err(Bad::Syntax),
        };
        let mut utf8 = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
    }
    String::from_utf8(out).map_err(|_| Bad::Syntax)
}

/// Checks the escapes of a string whose value is ignored, with serde_json's rules for ignored
/// strings: the escape letters and four hex digits after `\u`, surrogates unchecked.
pub(crate) fn check_escapes(raw: &[u8]) -> Result<(), Bad> {
    let mut i = 0;
    while let Some(off) = raw[i..].iter().position(|&b| b == b'\\') {
        i += off;
        match raw.get(i + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
            Some(b'u') => {
                hex4(&raw[i + 2..]).ok_or(Bad::Syntax)?;
                i += 6;
            }
            _ => return Err(Bad::Syntax),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde_number_ok(text: &str) -> bool {
        serde_json::from_str::<serde_json::Value>(&format!("[{text} ]")).is_ok()
    }

    #[test]
    fn numbers_follow_the_json_grammar() {
        for ok in ["0", "-0", "12", "1.5", "-1.25e+3", "5118046481399.733", "1E5", "0.0e-0"] {
            let text = format!("{ok},");
            assert_eq!(number_end(text.as_bytes(), 0), Ok(ok.len()), "{ok}");
            assert!(serde_number_ok(ok), "{ok}");
        }
        for bad in ["01", "-", "1.", ".5", "1e", "1e+", "+1", "1.5x", "--1", "-a", "1.e3"] {
            let text = format!("{bad},");
            assert!(number_end(text.as_bytes(), 0).is_err(), "{bad}");
            assert!(!serde_number_ok(bad), "{bad}");
        }
        assert_eq!(number_end(b"12", 0), Err(Bad::Eof));
        assert_eq!(number_end(b"1.", 0), Err(Bad::Eof));
    }

    #[test]
    fn digit_runs_of_every_length_and_neighbour() {
        for len in 0..20 {
            for next in 0..=255u8 {
                let mut text = vec![b'7'; len];
                text.push(next);
                text.extend_from_slice(b"123456789");
                let want = if next.is_ascii_digit() { len + 10 } else { len };
                assert_eq!(digits(&text, 0), want, "{len} digits then {next:#x}");
            }
        }
    }

    #[test]
    fn number_text_is_serde_s() {
        for text in
            ["0", "-0", "12", "-1.5", "1e5", "1E5", "1e+5", "1E-5", "2.5e0", "18446744073709551616", "-9"]
        {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(number_text(text), v.to_string(), "{text}");
        }
    }

    #[test]
    fn small_integers_take_the_short_path_only_when_they_end() {
        for (text, end) in
            [("0,", Some(1)), ("7]", Some(1)), ("44 ", Some(2)), ("256}", Some(3)), ("2561,", None)]
        {
            let text = format!("{text}xxxx");
            assert_eq!(small_int_end(text.as_bytes(), 0), end, "{text}");
        }
        for text in ["01,xx", "0.5,x", "1.5,x", "-1,xx", "1e5,x", "12a,x", "1"] {
            assert_eq!(small_int_end(text.as_bytes(), 0), None, "{text}");
        }
    }

    #[test]
    fn integers_of_any_length_take_the_integer_path_only_when_they_end() {
        // A naive reading: a digit 1-9, more digits, then a byte that may follow a scalar.
        let naive = |t: &[u8]| {
            if !(b'1'..=b'9').contains(t.first()?) {
                return None;
            }
            let end = t.iter().position(|b| !b.is_ascii_digit())?;
            b" \n\r\t,}]:{[\"".contains(&t[end]).then_some(end)
        };
        for first in [b'0', b'1', b'9', b'-', b'.'] {
            for len in 0..24 {
                for next in 0..=255u8 {
                    let mut text = vec![first];
                    text.extend(std::iter::repeat_n(b'8', len));
                    text.push(next);
                    text.extend_from_slice(b"4321");
                    let got = int_end(&text, 0);
                    assert_eq!(got, naive(&text), "{:?}", String::from_utf8_lossy(&text));
                    // Where it answers, the general path agrees.
                    if let Some(end) = got {
                        assert_eq!(number(&text, 0), Ok((end, false)));
                    }
                }
            }
        }
        // Digits up to the buffer's end are left to the general path, which may wait for more.
        assert_eq!(int_end(b"12345", 0), None);
        assert_eq!(number_end(b"12345", 0), Err(Bad::Eof));
    }

    #[test]
    fn literals() {
        assert_eq!(literal_end(b"true,", 0), Ok(4));
        assert_eq!(literal_end(b"null}", 0), Ok(4));
        assert_eq!(literal_end(b"fals", 0), Err(Bad::Eof));
        assert_eq!(literal_end(b"trux", 0), Err(Bad::Syntax));
        assert_eq!(literal_end(b"truex", 0), Err(Bad::Syntax));
    }

    #[test]
    fn escapes_decode_as_serde_does() {
        for text in [r#"a\"b"#, r"\\\/\b\f\n\r\t", r"\u00e9\u4e2d", r"\ud83d\ude00", "caf\u{e9}\\n"] {
            let want: String = serde_json::from_str(&format!("\"{text}\"")).unwrap();
            assert_eq!(unescape(text.as_bytes()), Ok(want), "{text}");
        }
        for bad in [r"\x", r"\u12", r"\ud83d", r"\ud83dx", r"\ude00", r"\ud83d\u0041", "\\"] {
            assert!(serde_json::from_str::<String>(&format!("\"{bad}\"")).is_err(), "{bad}");
            assert_eq!(unescape(bad.as_bytes()), Err(Bad::Syntax), "{bad}");
        }
        assert_eq!(check_escapes(br"\ud83d ok \n"), Ok(()));
        assert_eq!(check_escapes(br"\q"), Err(Bad::Syntax));
    }
}
