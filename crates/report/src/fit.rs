//! Fitting the readable report to a terminal's columns: text wrapped at its spaces under a
//! hanging indent, table cells cut in the middle, and one unit per column of times.

use unicode_width::UnicodeWidthStr;

/// Columns when the output's width is unknown (a pipe, a file, a CI log).
pub const DEFAULT_WIDTH: usize = 100;
/// The narrowest width the report is laid out for: below it, lines run over.
pub const MIN_WIDTH: usize = 60;

/// Display width of `s` in terminal columns.
pub(crate) fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Writes `lead` followed by `text`, wrapped at its spaces to `cols` columns; continuation lines
/// start with `indent` spaces. Runs of spaces inside a line are kept; a word wider than the room
/// is cut.
pub(crate) fn wrap_into(out: &mut String, lead: &str, text: &str, indent: usize, cols: usize) {
    let cols = cols.max(MIN_WIDTH);
    let pad = " ".repeat(indent);
    let mut line = lead.to_string();
    let mut line_w = width(lead);
    let mut fresh = true;
    // Each word with the spaces before it.
    let mut rest = text;
    while !rest.is_empty() {
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        let after = &rest[spaces..];
        let end = after.find(' ').unwrap_or(after.len());
        let word = &after[..end];
        rest = &after[end..];
        if word.is_empty() {
            break;
        }
        let w = width(word);
        let sep = if fresh { 0 } else { spaces };
        if !fresh && line_w + sep + w > cols {
            out.push_str(line.trim_end());
            out.push('\n');
            line = pad.clone();
            line_w = indent;
            fresh = true;
        }
        if fresh && w > cols.saturating_sub(line_w) {
            // A word wider than the room: cut into pieces that fit.
            let (mut piece, mut piece_w) = (String::new(), 0);
            for ch in word.chars() {
                let ch_w = width(ch.encode_utf8(&mut [0; 4]));
                if line_w + piece_w + ch_w > cols && !piece.is_empty() {
                    line.push_str(&piece);
                    out.push_str(&line);
                    out.push('\n');
                    line = pad.clone();
                    line_w = indent;
                    piece.clear();
                    piece_w = 0;
                }
                piece.push(ch);
                piece_w += ch_w;
            }
            line.push_str(&piece);
            line_w += piece_w;
            fresh = false;
            continue;
        }
        if !fresh {
            line.push_str(&" ".repeat(spaces));
            line_w += spaces;
        }
        line.push_str(word);
        line_w += w;
        fresh = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// `s` cut to `cols` columns, the middle replaced by "…" (the ends of a name tell it apart).
pub(crate) fn cut_middle(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let keep = cols.saturating_sub(1);
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out: String = chars[..head.min(chars.len())].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len().saturating_sub(tail)..]);
    out
}

/// `s` right-aligned in `cols` display columns.
pub(crate) fn right(s: &str, cols: usize) -> String {
    format!("{}{s}", " ".repeat(cols.saturating_sub(width(s))))
}

/// `s` left-aligned in `cols` display columns.
pub(crate) fn left(s: &str, cols: usize) -> String {
    format!("{s}{}", " ".repeat(cols.saturating_sub(width(s))))
}

/// One unit for a column of times (µs): ms when the largest reaches a millisecond, s when it
/// reaches a second. Returns the unit's name and its size in µs.
pub(crate) fn column_unit(values: impl IntoIterator<Item = f64>) -> (&'static str, f64) {
    let max = values.into_iter().filter(|v| v.is_finite()).fold(0.0_f64, |m, v| m.max(v.abs()));
    if max >= 1e6 {
        ("s", 1e6)
    } else if max >= 1e3 {
        ("ms", 1e3)
    } else {
        ("µs", 1.0)
    }
}

/// A time in µs in a column's unit, without the unit: two decimals in ms and s, one in µs.
pub(crate) fn in_unit(us: f64, unit: (&'static str, f64)) -> String {
    let v = us / unit.1;
    match unit.0 {
        "µs" => format!("{v:.1}"),
        "ms" => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_wraps_under_its_indent_at_spaces() {
        let mut out = String::new();
        let text = "the GPU waits 72.0 µs p50 for each replay after the first, against 256.7 µs of GPU time per replay";
        wrap_into(&mut out, "  FAIL  replay_idle  ", text, 21, 60);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1, "{out}");
        assert!(lines.iter().all(|l| width(l) <= 60), "{out}");
        assert!(lines[1..].iter().all(|l| l.starts_with(&" ".repeat(21)) && !l[21..].starts_with(' ')));
        // Nothing lost: the words in order.
        let words: Vec<&str> = out.split_whitespace().skip(2).collect();
        assert_eq!(words.join(" "), text);
        // A short text stays on one line, its double spaces kept.
        let mut one = String::new();
        wrap_into(&mut one, "x ", "a  b", 2, 80);
        assert_eq!(one, "x a  b\n");
        // A word wider than the room is cut, never lost.
        let mut long = String::new();
        let word = "y".repeat(150);
        wrap_into(&mut long, "", &word, 4, 60);
        assert!(long.lines().all(|l| width(l) <= 60), "{long}");
        assert_eq!(long.split_whitespace().collect::<String>(), word);
    }

    #[test]
    fn names_are_cut_in_the_middle_and_units_chosen_per_column() {
        assert_eq!(cut_middle("abcdefghij", 20), "abcdefghij");
        let cut = cut_middle("nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_TNT", 21);
        assert_eq!(cut, "nvjet_sm90…splitK_TNT");
        assert_eq!(width(&cut), 21);
        assert_eq!(column_unit([717.4, 5800.0]), ("ms", 1e3));
        assert_eq!(column_unit([7.2, 11.3]), ("µs", 1.0));
        assert_eq!(in_unit(717.4, ("ms", 1e3)), "0.72");
        assert_eq!(right("µs", 4), "  µs");
    }
}
