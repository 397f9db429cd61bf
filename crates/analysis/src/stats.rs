//! The statistics of a baseline comparison: the Mann–Whitney U test and a bootstrap confidence
//! interval for the difference of two medians. Samples are finite numbers (JSON cannot carry
//! anything else); an empty sample gives `None`.

use rand::{Rng, SeedableRng};
use rand_distr::{Beta, Distribution};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

/// The median (mean of the two middle values for an even count); `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mut v = values.to_vec();
    let (left, mid, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *mid;
    if n % 2 == 1 {
        return Some(upper);
    }
    // The lower middle value is the largest of the values placed before the upper one.
    let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lower + upper) / 2.0)
}

/// The result of a two-sided Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample (scipy's `statistic`).
    pub u: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Two-sided Mann–Whitney U test, normal approximation with tie correction and continuity
/// correction: the same method and figures as
/// `scipy.stats.mannwhitneyu(x, y, alternative='two-sided', method='asymptotic', use_continuity=True)`.
///
/// The normal approximation (not the exact distribution) because the samples compared here are
/// hundreds of per-replay timings, full of ties at the clock's resolution.
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut all: Vec<(f64, bool)> =
        x.iter().map(|&v| (v, true)).chain(y.iter().map(|&v| (v, false))).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = all.len();
    // Rank sum of x with average ranks for ties, and the tie term Σ(t³ − t).
    let (mut rank_sum_x, mut tie_term) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && all[j].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        // Ranks i+1 ..= j share their average.
        let rank = (i + 1 + j) as f64 / 2.0;
        rank_sum_x += rank * all[i..j].iter().filter(|e| e.1).count() as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let (n1, n2, n) = (n1 as f64, n2 as f64, n as f64);
    let u1 = rank_sum_x - n1 * (n1 + 1.0) / 2.0;
    let u = u1.max(n1 * n2 - u1);
    let sigma = (n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
    // All values tied: no evidence of a difference (scipy: z = −inf, p clipped to 1).
    let p_value = if sigma > 0.0 {
        let z = (u - n1 * n2 / 2.0 - 0.5) / sigma;
        (2.0 * normal_sf(z)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    Some(MannWhitney { u: u1, p_value })
}

/// Upper tail of the standard normal distribution, accurate far into the tail (erfc, not 1 − cdf).
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// A confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Confidence level (0.95 for a 95% interval).
    pub confidence: f64,
}

impl Interval {
    /// Whether `v` lies inside, bounds included.
    pub fn contains(&self, v: f64) -> bool {
        self.low <= v && v <= self.high
    }
}

/// Percentile bootstrap interval of `median(current) − median(baseline)`: each of `resamples`
/// rounds redraws both samples with replacement (independently, each at its own size) and takes
/// the difference of their medians; the interval runs between the (1 − confidence)/2 and
/// (1 + confidence)/2 quantiles of those differences (linear interpolation, numpy's default).
///
/// A resample's median is drawn straight from its distribution (a private `Resampler`) rather
/// than from the redrawn values, so a round costs a few random numbers whatever the samples' size,
/// and every sample counts. Deterministic for a given seed, whatever the number of threads: the RNG
/// is PCG-64 (`rand_pcg`), seeded with `seed`. Resampling single values assumes they are
/// independent; per-replay timings are somewhat autocorrelated, so the interval is a little
/// narrow, which is why the comparison also demands a minimum effect size.
pub fn bootstrap_median_shift(
    baseline: &[f64],
    current: &[f64],
    resamples: u32,
    confidence: f64,
    seed: u64,
) -> Option<Interval> {
    if baseline.is_empty() || current.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = Pcg64::seed_from_u64(seed);
    let (b, c) = (Resampler::new(baseline), Resampler::new(current));
    let mut shifts: Vec<f64> = (0..resamples)
        .map(|_| {
            let mb = b.median(&mut rng);
            c.median(&mut rng) - mb
        })
        .collect();
    shifts.sort_by(f64::total_cmp);
    let tail = 100.0 * (1.0 - confidence) / 2.0;
    use crate::intervals::percentile;
    Some(Interval { low: percentile(&shifts, tail)?, high: percentile(&shifts, 100.0 - tail)?, confidence })
}

/// Medians of bootstrap resamples of one sample, drawn without drawing the resample.
///
/// Redrawing n values with replacement is drawing n positions of the sorted sample, each
/// ⌊n·u⌋ for a uniform u in [0, 1); the resample's median is the value at its middle drawn
/// position(s). The k-th smallest of n uniforms has the Beta(k, n + 1 − k) distribution, and the
/// next one above it, at u, is u plus (1 − u) times the smallest of the n − k uniforms left
/// (`1 − w^(1/(n − k))`, w uniform in (0, 1]). So the middle positions, and the median, have
/// exactly the distribution they have when all n values are redrawn, for two random numbers
/// instead of n. (Redrawing every value had taken as long as reading both traces of a
/// comparison; past 50,000 values a side it had to bootstrap a subsample.)
struct Resampler {
    sorted: Vec<f64>,
    /// The rank (1-based) of the lower middle value: (n + 1) / 2 for an odd n, n / 2 for an even.
    k: usize,
    /// The distribution of the k-th smallest of n uniforms.
    lower: Beta<f64>,
}

impl Resampler {
    fn new(values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let k = n.div_ceil(2);
        let lower = Beta::new(k as f64, (n + 1 - k) as f64).expect("both parameters are at least 1");
        Resampler { sorted, k, lower }
    }

    /// The sorted value at the drawn position of uniform `u`.
    fn at(&self, u: f64) -> f64 {
        let n = self.sorted.len();
        // `u` < 1, but rounding may bring it to 1.
        self.sorted[((u * n as f64) as usize).min(n - 1)]
    }

    /// The median of one resample of the same size, drawn with replacement.
    fn median(&self, rng: &mut Pcg64) -> f64 {
        let n = self.sorted.len();
        let u = self.lower.sample(rng);
        if n % 2 == 1 {
            return self.at(u);
        }
        let w = 1.0 - rng.random::<f64>();
        let next = u + (1.0 - u) * (1.0 - libm::pow(w, 1.0 / (n - self.k) as f64));
        (self.at(u) + self.at(next)) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(f64::MIN_POSITIVE)
    }

    /// The samples of cases C and D below, made from integers so that Python computes exactly the
    /// same floats.
    fn formula(base: i64, mult: i64, modulus: i64, spike_at: i64, spike: i64) -> Vec<f64> {
        (0..300)
            .map(|i| {
                (base + (i * mult) % modulus * 2 + if i % 10 == spike_at { spike } else { 0 }) as f64 / 100.0
            })
            .collect()
    }

    /// Expected values from scipy 1.17.1 (numpy 2.4.6), Python 3.11:
    ///
    /// ```python
    /// from scipy.stats import mannwhitneyu
    /// r = mannwhitneyu(x, y, alternative='two-sided', method='asymptotic', use_continuity=True)
    /// print(repr(r.statistic), repr(r.pvalue))
    /// cx = [(260 + (i*37) % 101 * 2 + (1000 if i % 10 == 0 else 0)) / 100 for i in range(300)]
    /// cy = [(290 + (i*53) % 97 * 2 + (1200 if i % 10 == 3 else 0)) / 100 for i in range(300)]
    /// dy = [(1260 + (i*53) % 97 * 2 + (1200 if i % 10 == 3 else 0)) / 100 for i in range(300)]
    /// # A: [1.1, 2.3, 3.5, 4.2, 5.8] vs [2.0, 6.1, 7.4, 8.3, 9.9, 10.5] → 4.0 0.05523425371806383
    /// # B: [1, 2, 2, 3, 3, 3, 4, 6] vs [2, 3, 3, 4, 5, 5, 6, 7, 8]     → 17.0 0.07023901994774666
    /// # C: cx vs cy                                                  → 35041.5 2.7254081618527683e-06
    /// # D: cx vs dy                                                  → 4978.5 2.906048331307484e-79
    /// # E: [3.0]*5 vs [3.0]*7                                        → 17.5 1.0
    /// # F: [1.0] vs [2.0]                                            → 0.0 1.0
    /// ```
    #[test]
    fn mann_whitney_matches_scipy() {
        let cx = formula(260, 37, 101, 0, 1000);
        let cy = formula(290, 53, 97, 3, 1200);
        let dy = formula(1260, 53, 97, 3, 1200);
        // (name, x, y, scipy's U, scipy's p)
        type Case = (&'static str, Vec<f64>, Vec<f64>, f64, f64);
        let cases: [Case; 6] = [
            (
                "A",
                vec![1.1, 2.3, 3.5, 4.2, 5.8],
                vec![2.0, 6.1, 7.4, 8.3, 9.9, 10.5],
                4.0,
                0.05523425371806383,
            ),
            (
                "B",
                vec![1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 6.0],
                vec![2.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0, 7.0, 8.0],
                17.0,
                0.07023901994774666,
            ),
            ("C", cx.clone(), cy, 35041.5, 2.7254081618527683e-06),
            ("D", cx, dy, 4978.5, 2.906048331307484e-79),
            ("E", vec![3.0; 5], vec![3.0; 7], 17.5, 1.0),
            ("F", vec![1.0], vec![2.0], 0.0, 1.0),
        ];
        for (name, x, y, u, p) in cases {
            let r = mann_whitney_u(&x, &y).unwrap();
            assert_eq!(r.u, u, "case {name}: U");
            // erfc in libm and in scipy's special functions agree to a few ulps, even at 1e-79.
            assert!(close(r.p_value, p, 1e-9), "case {name}: p {} against scipy's {p}", r.p_value);
        }
        assert!(mann_whitney_u(&[], &[1.0]).is_none());
    }

    #[test]
    fn mann_whitney_is_symmetric_in_p() {
        let x = formula(260, 37, 101, 0, 1000);
        let y = formula(290, 53, 97, 3, 1200);
        let (a, b) = (mann_whitney_u(&x, &y).unwrap(), mann_whitney_u(&y, &x).unwrap());
        assert_eq!(a.p_value, b.p_value);
        assert_eq!(a.u + b.u, 300.0 * 300.0);
    }

    #[test]
    fn median_by_hand() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[100.0, 1.0, 3.0, 2.0, 4.0]), Some(3.0));
        assert_eq!(median(&[8.0, 5.0, 7.0, 6.0]), Some(6.5));
        // Case C's medians, from numpy.median: 3.67 and 3.96.
        assert_eq!(median(&formula(260, 37, 101, 0, 1000)), Some(3.67));
        assert_eq!(median(&formula(290, 53, 97, 3, 1200)), Some(3.96));
    }

    /// Normal-ish samples with a spike every tenth value, like per-replay host timings.
    fn synthetic(n: usize, level: f64, seed: u64) -> Vec<f64> {
        let mut rng = Pcg64::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let (u1, u2): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
                let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                level + 0.3 * normal + if i % 10 == 0 { 20.0 } else { 0.0 }
            })
            .collect()
    }

    #[test]
    fn bootstrap_interval_holds_a_large_shift_and_the_hand_computed_median_difference() {
        let base = synthetic(300, 3.0, 1);
        let cur: Vec<f64> = base.iter().map(|v| v + 10.0).collect();
        // Shifting every value by 10 shifts the median by exactly 10.
        assert!(close(median(&cur).unwrap() - median(&base).unwrap(), 10.0, 1e-12));
        let ci = bootstrap_median_shift(&base, &cur, 2000, 0.95, 7).unwrap();
        assert!(ci.contains(10.0), "{ci:?}");
        assert!(ci.low > 9.5 && ci.high < 10.5, "{ci:?}");
        assert_eq!(ci.confidence, 0.95);
    }

    #[test]
    fn bootstrap_interval_narrows_with_more_samples() {
        let width = |n: usize| {
            let ci =
                bootstrap_median_shift(&synthetic(n, 3.0, 2), &synthetic(n, 3.5, 3), 2000, 0.95, 11).unwrap();
            assert!(ci.contains(0.5), "n = {n}: {ci:?}");
            ci.high - ci.low
        };
        let (small, large) = (width(40), width(1000));
        // The median's standard error falls as 1/√n: 25× the samples, about a fifth of the width.
        assert!(large < small / 3.0, "width {small} at n = 40, {large} at n = 1000");
    }

    #[test]
    fn the_interval_does_not_depend_on_the_threads() {
        let (b, c) = (synthetic(3000, 3.0, 4), synthetic(2000, 3.2, 5));
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| bootstrap_median_shift(&b, &c, 1999, 0.95, 3))
        };
        let one = on(1);
        assert!(one.is_some());
        assert_eq!(one, on(3));
        assert_eq!(one, on(16));
    }

    /// Every resample of `values` (all n^n draws of n positions, equally likely), by the direct
    /// median: the exact distribution of a resample's median, as (value, probability).
    fn enumerated_medians(values: &[f64]) -> Vec<(f64, f64)> {
        let n = values.len();
        let total = n.pow(n as u32);
        let mut counts: std::collections::BTreeMap<u64, usize> = Default::default();
        for code in 0..total {
            let drawn: Vec<f64> = (0..n).map(|i| values[code / n.pow(i as u32) % n]).collect();
            *counts.entry(median(&drawn).unwrap().to_bits()).or_default() += 1;
        }
        counts.into_iter().map(|(bits, c)| (f64::from_bits(bits), c as f64 / total as f64)).collect()
    }

    #[test]
    fn drawn_medians_have_the_exact_distribution_of_redrawn_samples() {
        // Odd and even sizes, ties, a lone outlier: each median value's frequency in 200,000
        // draws against its probability over every possible resample.
        let draws = 200_000;
        for values in [
            vec![4.0],
            vec![2.0, 9.0],
            vec![5.0, 1.0, 3.0],
            vec![1.0, 2.0, 2.0, 5.0],
            vec![3.0, 1.0, 4.0, 1.0, 5.0],
            vec![2.0, 7.0, 1.0, 8.0, 2.0, 8.0],
            vec![1.0, 6.0, 2.0, 3.0, 9.0, 4.0, 100.0],
        ] {
            let exact = enumerated_medians(&values);
            let r = Resampler::new(&values);
            let mut rng = Pcg64::seed_from_u64(values.len() as u64);
            let mut seen: std::collections::BTreeMap<u64, usize> = Default::default();
            for _ in 0..draws {
                *seen.entry(r.median(&mut rng).to_bits()).or_default() += 1;
            }
            let mut accounted = 0;
            for &(value, p) in &exact {
                let got = seen.get(&value.to_bits()).copied().unwrap_or(0);
                accounted += got;
                let sd = (p * (1.0 - p) / draws as f64).sqrt();
                let freq = got as f64 / draws as f64;
                assert!(
                    (freq - p).abs() <= 5.0 * sd + 1e-9,
                    "{values:?}: median {value} drawn {freq}, exact {p}"
                );
            }
            assert_eq!(accounted, draws, "{values:?}: a median no resample has");
        }
    }

    #[test]
    fn drawn_medians_match_redrawn_medians_on_larger_samples() {
        // A naive second implementation, every value redrawn and the median taken directly,
        // against the drawn medians: two-sample Kolmogorov–Smirnov distance of 20,000 of each,
        // under its 0.1% critical value (1.95 · √(2 / 20,000)).
        let m = 20_000;
        for n in [300, 301] {
            let values = synthetic(n, 3.0, 9);
            let r = Resampler::new(&values);
            let (mut rng, mut naive_rng) = (Pcg64::seed_from_u64(1), Pcg64::seed_from_u64(2));
            let mut drawn: Vec<f64> = (0..m).map(|_| r.median(&mut rng)).collect();
            let mut naive: Vec<f64> = (0..m)
                .map(|_| {
                    let again: Vec<f64> = (0..n).map(|_| values[naive_rng.random_range(0..n)]).collect();
                    median(&again).unwrap()
                })
                .collect();
            drawn.sort_by(f64::total_cmp);
            naive.sort_by(f64::total_cmp);
            let cdf = |v: &[f64], x: f64| v.partition_point(|&y| y <= x) as f64 / v.len() as f64;
            let d = drawn
                .iter()
                .chain(&naive)
                .map(|&x| (cdf(&drawn, x) - cdf(&naive, x)).abs())
                .fold(0.0, f64::max);
            assert!(d < 1.95 * (2.0 / m as f64).sqrt(), "n = {n}: KS distance {d}");
        }
    }

    #[test]
    fn a_huge_sample_is_bootstrapped_whole() {
        // 400,000 samples a side, shifted by exactly 10: the interval holds 10, and is narrower
        // than that of 50,000 of them (the median's standard error falls as 1/√n: √8 ≈ 2.8×).
        let (b, c) = (synthetic(400_000, 100.0, 1), synthetic(400_000, 110.0, 2));
        let whole = bootstrap_median_shift(&b, &c, 2000, 0.95, 7).unwrap();
        let part = bootstrap_median_shift(&b[..50_000], &c[..50_000], 2000, 0.95, 7).unwrap();
        assert!(whole.contains(10.0) && part.contains(10.0), "{whole:?} {part:?}");
        let (w, p) = (whole.high - whole.low, part.high - part.low);
        assert!(w < p / 2.0, "width {w} of 400,000 a side, {p} of 50,000");
    }

    #[test]
    fn bootstrap_is_deterministic_per_seed() {
        let (b, c) = (synthetic(300, 3.0, 4), synthetic(300, 4.0, 5));
        let run = |seed| bootstrap_median_shift(&b, &c, 500, 0.95, seed).unwrap();
        assert_eq!(run(42), run(42));
        assert_ne!(run(42), run(43));
        assert!(bootstrap_median_shift(&[], &c, 500, 0.95, 1).is_none());
    }

    #[test]
    fn bootstrap_interval_covers_zero_about_as_often_as_promised() {
        // Equal distributions: a 95% interval should hold 0 in about 95% of trials; percentile
        // intervals of medians run slightly narrow, so accept 85% or more.
        let trials = 100;
        let covered = (0..trials)
            .filter(|&t| {
                let (b, c) = (synthetic(120, 3.0, 1000 + t), synthetic(120, 3.0, 5000 + t));
                bootstrap_median_shift(&b, &c, 400, 0.95, t).unwrap().contains(0.0)
            })
            .count();
        assert!(covered >= 85, "{covered} of {trials} intervals held the true shift 0");
    }

    /// A drawn position is ⌊n·u⌋ of the sorted sample; a `u` rounded up to 1 takes the largest
    /// value rather than one past the end.
    #[test]
    fn a_drawn_position_stays_inside_the_sample() {
        let r = Resampler::new(&[3.0, 1.0, 2.0]);
        // ⌊3·0⌋ = 0, ⌊3·0.34⌋ = 1, ⌊3·0.99⌋ = 2, and u = 1 clamped to 2.
        assert_eq!([r.at(0.0), r.at(0.34), r.at(0.99), r.at(1.0)], [1.0, 2.0, 3.0, 3.0]);
    }
}
