//! Text from strangers made safe to show, for every format, in this one place. Kernel names,
//! device and stream labels, GPU names, file names inside an image come from files anyone can
//! write: an escape sequence in one would drive the reader's terminal (clear it, retitle it, hide
//! the lines after) when the report, or a file of it, is printed; a line break would forge a line
//! of the report (`verdict: PASS`); a bidirectional override would show text in another order than
//! it is. The rule for each format:
//!
//! - the terminal, Markdown, HTML, JUnit and CSV show such a character escaped as text, `\x1b`,
//!   `\n`, `\u{202e}` ([`one_line`] for a value, [`printable`] over a whole document as the last
//!   line of defence), then apply their own escaping (entities, table pipes, quoting);
//! - JSON keeps the text exact, with every such character as a JSON `\u` escape ([`json`]), so a
//!   document printed on a terminal cannot drive it either;
//! - a CSV cell that a spreadsheet would take for a formula is neutralized ([`csv_cell`]).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as it is (line breaks and tabs aside).
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escaped(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if keep(c) || !unsafe_char(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// A value shown within one line of a report: every control character escaped, line breaks too.
pub fn one_line(s: &str) -> Cow<'_, str> {
    escaped(s, |_| false)
}

/// A whole report for a terminal: every control character escaped but its own line breaks and
/// tabs. The last line of defence: values are escaped with [`one_line`] where they are inserted.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n' || c == '\t')
}

/// JSON text written by serde_json (a whole document, or a value embedded in a page) with every
/// character that could drive a terminal as a `\u` escape. serde_json escapes the C0 controls
/// inside strings already; DEL, the C1
/// controls and the bidirectional overrides it writes raw (valid JSON, but raw bytes on a
/// terminal). Outside strings JSON text is ASCII, so every such character is inside a string,
/// where `\uXXXX` means the same character.
pub fn json(text: &str) -> Cow<'_, str> {
    // The C0 controls outside strings are the document's own whitespace.
    let raw = |c: char| unsafe_char(c) && c >= '\x7f';
    if !has_raw(text, raw) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            // Every unsafe character is in the Basic Multilingual Plane: one `\u` escape each.
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `text` has a character `raw` holds for, among those at or above DEL. A document of
/// megabytes is nearly all ASCII: it is tested 32 bytes at a time (the largest byte of a block,
/// which compiles to vector instructions), and characters are decoded only in blocks that hold a
/// byte at or above DEL.
fn has_raw(text: &str, raw: impl Fn(char) -> bool) -> bool {
    const BLOCK: usize = 32;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let end = (at + BLOCK).min(bytes.len());
        if bytes[at..end].iter().fold(0, |m, &b| m.max(b)) < 0x7f {
            at = end;
            continue;
        }
        // Back to the start of the character the block starts inside, then decode to the end of
        // the one it ends inside.
        let mut from = at;
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = end;
        while !text.is_char_boundary(to) {
            to += 1;
        }
        if text[from..to].chars().any(&raw) {
            return true;
        }
        at = to;
    }
    false
}

/// A cell of a CSV table: escaped as [`one_line`], and one that a spreadsheet would evaluate as a
/// formula (it begins with `=`, `+`, `-`, `@`, a tab or a carriage return) prefixed with `'`,
/// as spreadsheet-safe CSV writers do (OWASP's rule). A number stays a number: `-3.5` and `1e-3`
/// are left as they are.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    let formula = matches!(s.as_bytes().first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r'));
    if formula && !is_number(s) {
        return Cow::Owned(format!("'{}", one_line(s)));
    }
    one_line(s)
}

/// Whether `s` is a decimal number as a spreadsheet reads one (`-12`, `+3.5`, `1e-3`), not text
/// that begins like one (`-1+cmd|' /C calc'!A0`).
fn is_number(s: &str) -> bool {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    body.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && s.parse::<f64>().is_ok_and(f64::is_finite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_drives_a_terminal_and_keeps_the_rest() {
        assert_eq!(one_line("gemm<float>(int) µs → ok"), "gemm<float>(int) µs → ok");
        assert!(matches!(one_line("plain"), Cow::Borrowed(_)));
        assert_eq!(one_line("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(one_line("k\nverdict: PASS"), "k\\nverdict: PASS");
        assert_eq!(one_line("x\u{202e}gpj.exe"), "x\\u{202e}gpj.exe");
        assert_eq!(one_line("\u{9b}31m"), "\\x9b31m");
        assert_eq!(one_line("del\x7f"), "del\\x7f");
        assert_eq!(printable("a\tb\nc\x1b]0;title\x07\n"), "a\tb\nc\\x1b]0;title\\x07\n");
    }

    #[test]
    fn the_block_test_finds_what_decoding_every_character_finds() {
        let raw = |c: char| unsafe_char(c) && c >= '\x7f';
        // Each character at each offset across two 32-byte blocks, among ASCII and harmless
        // multibyte characters (µ, €, an emoji) that straddle the block edges.
        for special in ['\x7f', '\u{9b}', '\u{202e}', '\u{2066}', '\u{200f}', 'µ', '€', '😀', 'a'] {
            for pad in ["", "µ", "€€", "😀"] {
                for at in 0..70 {
                    let text = format!("{}{pad}{special}{}", "x".repeat(at), "y".repeat(40));
                    assert_eq!(has_raw(&text, raw), text.chars().any(raw), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn json_escapes_what_serde_leaves_raw_and_stays_the_same_value() {
        let name = "k\x1b]0;t\x07\u{202e}\u{9b}\x7f\nend";
        let text = serde_json::to_string(&serde_json::json!({ "name": name })).unwrap();
        let safe = json(&text);
        assert!(safe.chars().all(|c| c.is_ascii() && !c.is_ascii_control()), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["name"], name);
        assert!(matches!(json("{\"a\": \"µs\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_evaluate_are_neutralized_and_numbers_are_not() {
        for (cell, want) in [
            ("=HYPERLINK(\"http://evil/\",\"x\")", "'=HYPERLINK(\"http://evil/\",\"x\")"),
            ("+cmd", "'+cmd"),
            ("-1+cmd|' /C calc'!A0", "'-1+cmd|' /C calc'!A0"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\\t=1"),
            ("\r=1", "'\\r=1"),
            ("-", "'-"),
            ("-3.5", "-3.5"),
            ("+2", "+2"),
            ("-0.001", "-0.001"),
            ("1e-3", "1e-3"),
            ("-1.5e+3", "-1.5e+3"),
            ("gemm<float>", "gemm<float>"),
            ("a\x1b[2Jb", "a\\x1b[2Jb"),
            ("-inf", "'-inf"),
            ("-NaN", "'-NaN"),
        ] {
            assert_eq!(csv_cell(cell), want, "{cell:?}");
        }
    }
}
