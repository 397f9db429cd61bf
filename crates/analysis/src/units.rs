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
        assert_eq!(human_bytes(105_799), "105.8 KB");
    }
}
