//! Figures for people: durations and sizes in the unit that reads best. One place, so every
//! report and check message writes them alike.

/// A duration given in µs, in the unit that reads best (`5.2 µs`, `8.37 ms`, `1.20 s`).
pub fn human_us(us: f64) -> String {
    if us.abs() >= 1_000_000.0 {
        format!("{:.2} s", us / 1_000_000.0)
    } else if us.abs() >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// Figures of one quantity (a mean, a p50, a p99, a max) in one unit, the one [`human_us`]
/// picks for the largest, so that a line does not read "p50 215.1 µs  p99 3.69 ms". A small
/// figure beside a large one keeps two significant digits (up to 4 decimals: "0.0002 ms");
/// `None` is "–".
pub fn human_us_alike(values: &[Option<f64>]) -> Vec<String> {
    let top = values.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let (scale, unit, least) = if top >= 1_000_000.0 {
        (1e-6, "s", 2)
    } else if top >= 1000.0 {
        (1e-3, "ms", 2)
    } else {
        (1.0, "µs", 1)
    };
    values
        .iter()
        .map(|v| match v {
            None => "–".to_string(),
            Some(v) => {
                let x = v * scale;
                // Two significant digits of a figure below 1 ms (or s); µs keep one decimal.
                let small = unit != "µs" && x.abs() > 0.0 && x.abs() < 1.0;
                let needed = if small { (-x.abs().log10()).floor() as usize + 2 } else { 0 };
                format!("{:.*} {unit}", needed.clamp(least, 4.max(least)), x)
            }
        })
        .collect()
}

/// A byte count in decimal units (`105.8 KB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_switch_at_a_thousand() {
        assert_eq!(human_us(5.24), "5.2 µs");
        assert_eq!(human_us(999.9), "999.9 µs");
        assert_eq!(human_us(8370.0), "8.37 ms");
        assert_eq!(human_us(463_176.5), "463.18 ms");
        assert_eq!(human_us(1_200_000.0), "1.20 s");
        assert_eq!(human_bytes(999), "999 B");
    }

    #[test]
    fn figures_of_one_quantity_share_the_largest_ones_unit() {
        let alike = |v: &[Option<f64>]| human_us_alike(v).join(", ");
        assert_eq!(alike(&[Some(43.4), Some(0.25), Some(130.4)]), "43.4 µs, 0.2 µs, 130.4 µs");
        assert_eq!(
            alike(&[Some(3406.7), Some(215.1), Some(3686.2), Some(321_536.1)]),
            "3.41 ms, 0.22 ms, 3.69 ms, 321.54 ms"
        );
        // 0.2 µs beside 324 ms: two significant digits, not "0.00 ms".
        assert_eq!(alike(&[Some(0.2), Some(324_960.0)]), "0.0002 ms, 324.96 ms");
        assert_eq!(alike(&[Some(0.0), None, Some(1_200_000.0)]), "0.00 s, –, 1.20 s");
        assert_eq!(human_bytes(105_799), "105.8 KB");
    }
}
