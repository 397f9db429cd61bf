//! Text from strangers made safe to print on a terminal. Kernel names, device and stream labels,
//! GPU names, file names inside an image come from files anyone can write: an escape sequence in
//! one would drive the reader's terminal (clear it, retitle it, hide the lines after), a line
//! break would forge a line of the report (`verdict: PASS`), a bidirectional override would show
//! text in another order than it is. They are shown escaped instead, as `\x1b`, `\n`, `\u{202e}`.
//! JSON keeps them exact; HTML and Markdown escape them their own way.

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
}
