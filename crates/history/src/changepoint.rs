//! Change points in one metric's series: E-divisive means (Matteson & James, "A Nonparametric
//! Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014) with its
//! permutation test, as MongoDB runs it on its performance tests (Daly et al., ICPE 2020).
//!
//! - **Statistic.** For a segment split at τ into X (before) and Y (from τ on), the energy
//!   distance scaled by the sizes, with exponent 1:
//!   `Q = 2/(n+m) Σ|Xi−Yj| − 2m/((n+m)(n−1)) Σ_{i<k}|Xi−Xk| − 2n/((n+m)(m−1)) Σ_{j<k}|Yj−Yk|`.
//!   It compares whole distributions through absolute differences, not means, so one outlying
//!   run moves it little; no normality is assumed. By default it is computed on the runs' ranks
//!   within the segment (ties at their mean rank), not their values: real host costs are
//!   bimodal — one process in five lands at ~1.8× the usual cost — and on values that second
//!   mode drowns a 20% step of the usual one, while ranks see it (docs/history.md measures
//!   both; `ranks: false` is the method exactly as MongoDB and Otava compute it). The candidate is the τ that maximizes it
//!   within a segment, each side at least `min_size` runs. As in MongoDB's implementation the
//!   segment's end is its right end (Matteson & James also search it); that makes one pass
//!   O(n log n) here: the within-sums are accumulated with Fenwick trees over the values' ranks.
//! - **Significance.** The runs of every segment are shuffled within it, `permutations` times;
//!   the p-value is the share of shuffles whose best Q reaches the candidate's,
//!   `(count + 1) / (permutations + 1)`. A candidate is kept at p ≤ `alpha`, and the segments are
//!   split again, until one is not. The shuffles stop as soon as the count rules significance
//!   out (Besag & Clifford's sequential rule: the same decision, far fewer shuffles where nothing
//!   changed). They are drawn from a ChaCha generator seeded from the series itself, so the same
//!   history gives the same answer on every machine.
//! - **Long series** are searched in overlapping windows of `window` runs (half a window apart),
//!   and the candidates of all windows merged bottom-up, as Apache Otava does (Fleming et al.,
//!   "Hunter", ICPE 2023): each point is tested again between its neighbours (at most a window
//!   on each side), the weakest that fails the test or moves the median of the whole level by
//!   less than `min_relative` is dropped, its neighbours tested again. The cost stays linear in the length.
//!   This re-test keeps the point where it is and shuffles around it (the two-sample energy
//!   test at that split, as Otava's merge keeps the index and re-runs its t-test): once a
//!   neighbour is gone, the point is no longer the best split of its new segment, and holding
//!   it against the best split of each shuffle would drop real changes next to a larger one.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// The detector's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Config {
    /// Significance level of the permutation test.
    pub alpha: f64,
    /// Shuffles per test (at most).
    pub permutations: usize,
    /// Fewest runs on each side of a change point.
    pub min_size: usize,
    /// A change that moves the median by less than this fraction is dropped.
    pub min_relative: f64,
    /// Runs per window on long series.
    pub window: usize,
    /// Compare the runs' ranks within each segment rather than their values.
    pub ranks: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self { alpha: 0.01, permutations: 199, min_size: 3, min_relative: 0.02, window: 120, ranks: true }
    }
}

impl Config {
    /// Refuses settings under which the test means nothing.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!("the significance level must lie between 0 and 1, got {}", self.alpha));
        }
        if (self.permutations as f64 + 1.0) * self.alpha < 1.0 {
            return Err(format!(
                "{} permutations cannot reach p ≤ {}: use at least {}",
                self.permutations,
                self.alpha,
                (1.0 / self.alpha).ceil() as usize - 1
            ));
        }
        if self.permutations > 100_000 {
            return Err("at most 100000 permutations".into());
        }
        if self.min_size < 2 {
            return Err("a side needs at least 2 runs".into());
        }
        if !(self.min_relative >= 0.0 && self.min_relative.is_finite()) {
            return Err(format!("the smallest change must be a fraction ≥ 0, got {}", self.min_relative));
        }
        if self.window < 4 * self.min_size {
            return Err(format!(
                "a window needs at least {} runs (4 × the smallest side)",
                4 * self.min_size
            ));
        }
        Ok(())
    }
}

/// A change point: the first run of the new level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Index of the first run after the change, in the series given.
    pub index: usize,
    /// The permutation test's p-value, between its neighbours.
    pub p_value: f64,
    /// The statistic Q at the split.
    pub q: f64,
}

/// The change points of `x`, in order.
pub fn detect(x: &[f64], cfg: &Config) -> Vec<ChangePoint> {
    let n = x.len();
    if n < 2 * cfg.min_size {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed_of(x));
    let mut candidates: Vec<usize> = Vec::new();
    if n <= cfg.window {
        candidates = divisive(x, 0, n, cfg, &mut rng);
    } else {
        let step = cfg.window / 2;
        let mut start = 0;
        loop {
            let end = (start + cfg.window).min(n);
            candidates.extend(divisive(x, start, end, cfg, &mut rng));
            if end == n {
                break;
            }
            start += step;
        }
        candidates.sort_unstable();
        candidates.dedup();
    }
    merge(x, candidates, cfg, &mut rng)
}

/// Seed of the shuffles: a hash of the values, so that a series always gets the same shuffles.
fn seed_of(x: &[f64]) -> u64 {
    // FNV-1a over the bits: stable across platforms and versions, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in x {
        for b in v.to_bits().to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Matteson & James's divisive search in `x[start..end)`: the change points it keeps, as indices
/// into `x`.
fn divisive(x: &[f64], start: usize, end: usize, cfg: &Config, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut bounds = vec![start, end];
    let mut found = Vec::new();
    let mut scratch = Scratch { ranks: cfg.ranks, ..Scratch::default() };
    loop {
        // The best split of each segment.
        let best = bounds
            .windows(2)
            .filter_map(|w| {
                best_split(&x[w[0]..w[1]], cfg.min_size, &mut scratch).map(|(t, q)| (w[0] + t, q))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((tau, q)) = best else { break };
        let segments: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        let statistic = |y: &[f64], s: &mut Scratch| best_split(y, cfg.min_size, s).map(|(_, q)| q);
        if !permutation_test(x, &segments, q, cfg, rng, &mut scratch, statistic).0 {
            break;
        }
        found.push(tau);
        let at = bounds.partition_point(|&b| b < tau);
        bounds.insert(at, tau);
    }
    found.sort_unstable();
    found
}

/// Shuffles each segment, `permutations` times at most, and counts the shuffles whose
/// `statistic` (the largest over the segments) reaches `q`; stops once significance is out of
/// reach. Returns whether it is significant and the p-value.
fn permutation_test(
    x: &[f64],
    segments: &[(usize, usize)],
    q: f64,
    cfg: &Config,
    rng: &mut ChaCha8Rng,
    scratch: &mut Scratch,
    statistic: impl Fn(&[f64], &mut Scratch) -> Option<f64>,
) -> (bool, f64) {
    // p = (count + 1) / (R + 1) ≤ alpha  ⇔  count ≤ alpha (R + 1) − 1.
    let allowed = (cfg.alpha * (cfg.permutations as f64 + 1.0) - 1.0 + 1e-9).floor() as usize;
    let mut count = 0;
    let mut shuffled = Vec::new();
    for done in 1..=cfg.permutations {
        let mut best = f64::NEG_INFINITY;
        for &(a, b) in segments {
            shuffled.clear();
            shuffled.extend_from_slice(&x[a..b]);
            shuffled.shuffle(rng);
            if let Some(pq) = statistic(&shuffled, scratch) {
                best = best.max(pq);
            }
        }
        // A shuffle's statistic equal to the observed one counts (the observed order is one of
        // the shuffles); the tolerance keeps rounding from deciding it.
        if best >= q - 1e-12 * q.abs() {
            count += 1;
            if count > allowed {
                return (false, (count + 1) as f64 / (done + 1) as f64);
            }
        }
    }
    (true, (count + 1) as f64 / (cfg.permutations + 1) as f64)
}

/// Re-tests each candidate between its neighbours (at most a window on each side), dropping the
/// weakest one that fails — not significant, or moving the median less than `min_relative` —
/// until all pass (Otava's merge step).
fn merge(x: &[f64], mut points: Vec<usize>, cfg: &Config, rng: &mut ChaCha8Rng) -> Vec<ChangePoint> {
    let mut scratch = Scratch { ranks: cfg.ranks, ..Scratch::default() };
    let half = cfg.window / 2;
    // (p-value, relative change, q) of point i between its neighbours.
    let mut test = |points: &[usize], i: usize, rng: &mut ChaCha8Rng| -> Option<(f64, f64, f64)> {
        let lo = if i == 0 { 0 } else { points[i - 1] };
        let hi = points.get(i + 1).copied().unwrap_or(x.len());
        let t = points[i];
        let (a, b) = (lo.max(t.saturating_sub(half)), hi.min(t + half));
        if t - a < cfg.min_size || b - t < cfg.min_size {
            return None;
        }
        // The two-sample energy test of the split at t alone: its place is already chosen.
        let q = q_at(&x[a..b], t - a, &mut scratch);
        let at_t = |y: &[f64], s: &mut Scratch| Some(q_at(y, t - a, s));
        let (ok, p) = permutation_test(x, &[(a, b)], q, cfg, rng, &mut scratch, at_t);
        // The size of the change over the whole levels either side, as reports state it.
        let rel = relative_change(&x[lo..t], &x[t..hi]);
        Some((if ok { p } else { p.max(cfg.alpha + f64::EPSILON) }, rel, q))
    };
    loop {
        let stats: Vec<Option<(f64, f64, f64)>> = (0..points.len()).map(|i| test(&points, i, rng)).collect();
        // The weakest failing point: unusable first, then the largest p-value, then the smallest change.
        let failing = stats
            .iter()
            .enumerate()
            .filter(|(_, s)| match s {
                None => true,
                Some((p, rel, _)) => *p > cfg.alpha || rel.abs() < cfg.min_relative,
            })
            .max_by(|(_, a), (_, b)| match (a, b) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, _) => std::cmp::Ordering::Greater,
                (_, None) => std::cmp::Ordering::Less,
                (Some(a), Some(b)) => a.0.total_cmp(&b.0).then(b.1.abs().total_cmp(&a.1.abs())),
            })
            .map(|(i, _)| i);
        match failing {
            Some(i) => {
                points.remove(i);
            }
            None => {
                return points
                    .iter()
                    .zip(stats)
                    .map(|(&index, s)| {
                        let (p_value, _, q) = s.expect("every kept point was tested");
                        ChangePoint { index, p_value, q }
                    })
                    .collect()
            }
        }
    }
}

/// Relative change of the median from `before` to `after` (0 when the median before is 0).
pub fn relative_change(before: &[f64], after: &[f64]) -> f64 {
    let (b, a) = (median(before), median(after));
    if b == 0.0 {
        0.0
    } else {
        (a - b) / b.abs()
    }
}

/// The median (mean of the middle two for an even count); NaN for none.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

/// Q at every split τ of `y` with at least `min_size` runs on each side, as (τ, Q): what the
/// search maximizes, for comparison with other implementations.
pub fn q_values(y: &[f64], min_size: usize, ranks: bool) -> Vec<(usize, f64)> {
    let mut s = Scratch { ranks, ..Scratch::default() };
    if y.len() < 2 * min_size.max(2) {
        return Vec::new();
    }
    (min_size.max(2)..=y.len() - min_size.max(2)).map(|t| (t, q_at(y, t, &mut s))).collect()
}

/// Buffers reused between passes, and whether values or ranks are compared.
#[derive(Default)]
struct Scratch {
    ranks: bool,
    order: Vec<usize>,
    rank: Vec<usize>,
    count: Vec<u32>,
    sum: Vec<f64>,
    left: Vec<f64>,
    right: Vec<f64>,
    centred: Vec<f64>,
}

/// Q at every split of `y` with at least `min_size` runs on each side: the best (τ, Q).
fn best_split(y: &[f64], min_size: usize, s: &mut Scratch) -> Option<(usize, f64)> {
    let n = y.len();
    if n < 2 * min_size {
        return None;
    }
    within_sums(y, s);
    let total = s.left[n];
    let nf = n as f64;
    let mut best: Option<(usize, f64)> = None;
    for tau in min_size..=n - min_size {
        let (a, b) = (tau as f64, (n - tau) as f64);
        let (wl, wr) = (s.left[tau], s.right[tau]);
        let cross = total - wl - wr;
        let q = 2.0 / nf * cross - 2.0 * b / (nf * (a - 1.0)) * wl - 2.0 * a / (nf * (b - 1.0)) * wr;
        if best.is_none_or(|(_, bq)| q > bq) {
            best = Some((tau, q));
        }
    }
    best
}

/// Q at the split τ of `y` (both sides at least 2 runs).
fn q_at(y: &[f64], tau: usize, s: &mut Scratch) -> f64 {
    within_sums(y, s);
    let (n, a, b) = (y.len() as f64, tau as f64, (y.len() - tau) as f64);
    let (wl, wr) = (s.left[tau], s.right[tau]);
    let cross = s.left[y.len()] - wl - wr;
    2.0 / n * cross - 2.0 * b / (n * (a - 1.0)) * wl - 2.0 * a / (n * (b - 1.0)) * wr
}

/// `s.left[t]` = Σ_{i<k<t} |y_i − y_k|, `s.right[t]` = Σ_{t≤j<k} |y_j − y_k|, for t in 0..=n, each
/// accumulated with Fenwick trees over the ranks of the values (O(n log n)).
fn within_sums(y: &[f64], s: &mut Scratch) {
    let n = y.len();
    // Centred on the first value: the sums of differences do not change, the magnitudes added do.
    let c = y.first().copied().unwrap_or(0.0);
    s.centred.clear();
    s.centred.extend(y.iter().map(|v| v - c));
    s.order.clear();
    s.order.extend(0..n);
    let v = &s.centred;
    s.order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    s.rank.resize(n, 0);
    for (r, &i) in s.order.iter().enumerate() {
        s.rank[i] = r;
    }
    if s.ranks {
        // Each value replaced by its rank, ties by their mean rank (identical runs stay identical).
        let mut k = 0;
        while k < n {
            let mut e = k + 1;
            while e < n && s.centred[s.order[e]] == s.centred[s.order[k]] {
                e += 1;
            }
            let mid = (k + e - 1) as f64 / 2.0;
            for &i in &s.order[k..e] {
                s.centred[i] = mid;
            }
            k = e;
        }
    }
    s.left.clear();
    s.left.resize(n + 1, 0.0);
    s.right.clear();
    s.right.resize(n + 1, 0.0);
    for forward in [true, false] {
        s.count.clear();
        s.count.resize(n + 1, 0);
        s.sum.clear();
        s.sum.resize(n + 1, 0.0);
        let (mut seen, mut seen_sum, mut acc) = (0u32, 0.0f64, 0.0f64);
        for step in 0..n {
            let i = if forward { step } else { n - 1 - step };
            let (x, r) = (s.centred[i], s.rank[i]);
            // Values ranked below this one (ties sit on either side alike: their difference is 0).
            let (mut below, mut below_sum, mut k) = (0u32, 0.0f64, r);
            while k > 0 {
                below += s.count[k];
                below_sum += s.sum[k];
                k &= k - 1;
            }
            let above = seen - below;
            let above_sum = seen_sum - below_sum;
            acc += x * f64::from(below) - below_sum + above_sum - x * f64::from(above);
            let mut k = r + 1;
            while k <= n {
                s.count[k] += 1;
                s.sum[k] += x;
                k += k & k.wrapping_neg();
            }
            seen += 1;
            seen_sum += x;
            if forward {
                s.left[step + 1] = acc;
            } else {
                s.right[i] = acc;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q straight from the definition, every pair summed: the independent second implementation.
    fn naive_q(y: &[f64], tau: usize) -> f64 {
        let (x, z) = y.split_at(tau);
        let (n, m) = (x.len() as f64, z.len() as f64);
        let cross: f64 = x.iter().flat_map(|a| z.iter().map(move |b| (a - b).abs())).sum();
        let within = |s: &[f64]| -> f64 {
            let mut t = 0.0;
            for i in 0..s.len() {
                for k in i + 1..s.len() {
                    t += (s[i] - s[k]).abs();
                }
            }
            t
        };
        // Matteson & James: (nm/(n+m)) · [2/(nm) Σ|X−Y| − Σ_{i<k}|X|/C(n,2) − Σ_{j<k}|Y|/C(m,2)].
        n * m / (n + m)
            * (2.0 / (n * m) * cross - within(x) / (n * (n - 1.0) / 2.0) - within(z) / (m * (m - 1.0) / 2.0))
    }

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Mid-ranks, counted by hand: each value's count of smaller values plus half its ties.
    fn naive_ranks(y: &[f64]) -> Vec<f64> {
        y.iter()
            .map(|v| {
                let below = y.iter().filter(|w| *w < v).count() as f64;
                let same = y.iter().filter(|w| *w == v).count() as f64;
                below + (same - 1.0) / 2.0
            })
            .collect()
    }

    #[test]
    fn fenwick_sums_match_the_definition() {
        let mut seed = 7;
        for n in [4usize, 5, 9, 30, 61] {
            // Ties included: values on a coarse grid.
            let y: Vec<f64> = (0..n).map(|_| (lcg(&mut seed) * 20.0).round() / 2.0 + 1000.0).collect();
            for ranks in [false, true] {
                let reference = if ranks { naive_ranks(&y) } else { y.clone() };
                let mut s = Scratch { ranks, ..Scratch::default() };
                for tau in 2..=n - 2 {
                    let (fast, slow) = (q_at(&y, tau, &mut s), naive_q(&reference, tau));
                    assert!(
                        (fast - slow).abs() <= 1e-9 * slow.abs().max(1.0),
                        "n {n} τ {tau}: {fast} vs {slow}"
                    );
                }
                let (t, q) = best_split(&y, 2, &mut s).unwrap();
                let best = (2..=n - 2).map(|t| naive_q(&reference, t)).fold(f64::NEG_INFINITY, f64::max);
                assert!((q - best).abs() <= 1e-9 * best.abs().max(1.0));
                assert!((naive_q(&reference, t) - best).abs() <= 1e-9 * best.abs().max(1.0));
            }
        }
    }

    #[test]
    fn a_clear_step_is_found_where_it_is() {
        let mut seed = 3;
        let y: Vec<f64> = (0..40).map(|i| if i < 20 { 10.0 } else { 15.0 } + lcg(&mut seed) - 0.5).collect();
        let cps = detect(&y, &Config::default());
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), vec![20]);
        assert!(cps[0].p_value <= 0.01);
    }

    #[test]
    fn noise_alone_gives_nothing() {
        let mut seed = 11;
        let y: Vec<f64> = (0..60).map(|_| 10.0 + lcg(&mut seed)).collect();
        assert!(detect(&y, &Config::default()).is_empty());
    }

    #[test]
    fn two_steps_in_a_long_series_are_both_found() {
        // Longer than a window: found through the windows and the merge.
        let mut seed = 5;
        let y: Vec<f64> = (0..600)
            .map(|i| {
                let level = if i < 250 {
                    100.0
                } else if i < 430 {
                    130.0
                } else {
                    90.0
                };
                level + 4.0 * (lcg(&mut seed) - 0.5)
            })
            .collect();
        let cps: Vec<usize> = detect(&y, &Config::default()).iter().map(|c| c.index).collect();
        assert_eq!(cps, vec![250, 430]);
    }

    #[test]
    fn ranks_see_a_step_under_a_second_mode() {
        // Real host costs are bimodal (some processes land at ~1.8× the usual cost): a 20% step of
        // the usual cost hides among them for the values, not for the ranks.
        let mut seed = 21;
        let y: Vec<f64> = (0..60)
            .map(|i| {
                let base = if lcg(&mut seed) < 0.3 { 1.8 } else { 1.0 };
                base * if i < 30 { 1.0 } else { 1.2 } * (1.0 + 0.03 * (lcg(&mut seed) - 0.5))
            })
            .collect();
        let found = |ranks| {
            detect(&y, &Config { ranks, ..Config::default() }).iter().map(|c| c.index).collect::<Vec<_>>()
        };
        assert_eq!(found(true), vec![30]);
    }

    #[test]
    fn too_small_a_change_is_dropped() {
        // Significant, but 1% of the level: below min_relative.
        let y: Vec<f64> = (0..40).map(|i| if i < 20 { 100.0 } else { 101.0 }).collect();
        assert!(detect(&y, &Config::default()).is_empty());
        let cfg = Config { min_relative: 0.0, ..Config::default() };
        assert_eq!(detect(&y, &cfg).iter().map(|c| c.index).collect::<Vec<_>>(), vec![20]);
    }

    #[test]
    fn the_same_series_gives_the_same_answer() {
        let mut seed = 9;
        let y: Vec<f64> = (0..80).map(|i| if i < 50 { 1.0 } else { 1.3 } + 0.4 * lcg(&mut seed)).collect();
        assert_eq!(detect(&y, &Config::default()), detect(&y, &Config::default()));
    }

    #[test]
    fn short_series_and_bad_settings() {
        assert!(detect(&[1.0, 2.0, 3.0], &Config::default()).is_empty());
        assert!(Config { alpha: 0.001, permutations: 99, ..Config::default() }.validate().is_err());
        assert!(Config { min_size: 1, ..Config::default() }.validate().is_err());
        assert!(Config { alpha: f64::NAN, ..Config::default() }.validate().is_err());
        assert!(Config::default().validate().is_ok());
    }

    #[test]
    fn median_and_relative_change() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!((relative_change(&[10.0, 10.0], &[12.0, 12.0]) - 0.2).abs() < 1e-12);
    }
}
