//! How well the change-point detector finds steps, against a simple threshold rule, on series
//! whose noise is taken from real repeated H200 runs, and on real result sequences.
//!
//! usage: evaluate OUT_DIR CHECK_RESULT_DIR...
//!
//! The directories hold `launchguard.check/1` results (a file per run, named so that their order
//! is the order they ran). Healthy runs (no injected delay, one rank) of a preset in one
//! directory are one batch of repeated runs: each metric divided by the batch's median gives the
//! real run-to-run noise, pooled per preset and metric. A generated series is 60 runs drawn from
//! that noise (with replacement) around 1, the last 30 moved by a step of 2% to 50% the worse
//! way; null series have no step. Each series is given to the detector offline (whole) and online
//! (one run at a time, as a CI history grows), and to the threshold rule: a run is flagged when
//! it is worse than the median of the 10 runs before it by more than 10%.
//!
//! Prints the tables (Markdown) and writes OUT_DIR/series.json: every generated series with the
//! change points found, for the cross-check against the reference implementations
//! (bench/history_crosscheck.py).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use launchguard_history::changepoint::{self, Config};
use launchguard_history::metrics::{self, Worse};
use launchguard_history::record::Document;
use rayon::prelude::*;

/// The metrics evaluated: what graph-launch overhead moves.
const METRICS: [&str; 4] = ["host_before_us", "host_after_us", "graph_launch_us", "occupancy"];
const STEPS: [f64; 6] = [0.0, 0.02, 0.05, 0.10, 0.20, 0.50];
const LEN: usize = 60;
const AT: usize = 30;
const REPLICATES: usize = 100;
/// A change point counts as the step's when it lies this close to it.
const TOLERANCE: usize = 2;
/// The threshold rule: worse than the median of the previous `WINDOW` runs by more than a
/// threshold: 10%, and the smallest of `CALIBRATION` with at most 1 false flag per 100 healthy runs.
const WINDOW: usize = 10;
const THRESHOLD: f64 = 0.10;
const CALIBRATION: [f64; 12] = [0.05, 0.10, 0.15, 0.20, 0.30, 0.40, 0.50, 0.75, 1.0, 1.5, 2.0, 3.0];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (out, dirs) = args.split_first().expect("usage: evaluate OUT_DIR CHECK_RESULT_DIR...");
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out).unwrap();
    let runs: Vec<(String, Vec<Run>)> = dirs.iter().map(|d| (d.clone(), read_dir(Path::new(d)))).collect();
    let cfg = Config::default();

    // Noise per (preset, metric): each healthy run's value over its batch's median.
    let mut noise: BTreeMap<(String, &str), Vec<f64>> = BTreeMap::new();
    for (_, batch) in &runs {
        let mut by_preset: BTreeMap<&str, Vec<&Run>> = BTreeMap::new();
        for r in batch.iter().filter(|r| r.healthy) {
            by_preset.entry(&r.preset).or_default().push(r);
        }
        for (preset, rs) in by_preset {
            for m in METRICS {
                let vals: Vec<f64> = rs.iter().filter_map(|r| r.figures.get(m).copied()).collect();
                let med = changepoint::median(&vals);
                if vals.len() >= 3 && med > 0.0 {
                    noise.entry((preset.to_string(), m)).or_default().extend(vals.iter().map(|v| v / med));
                }
            }
        }
    }
    println!("## Noise: real repeated H200 runs (healthy, one rank), each over its batch's median\n");
    println!("| preset | metric | runs | MAD | 5th–95th percentile |\n|---|---|---:|---:|---|");
    for ((preset, m), v) in &noise {
        let mad = changepoint::median(&v.iter().map(|x| (x - 1.0).abs()).collect::<Vec<_>>());
        println!(
            "| {preset} | `{m}` | {} | {:.1}% | {:.2}–{:.2} |",
            v.len(),
            100.0 * mad,
            pct(v, 5.0),
            pct(v, 95.0)
        );
    }

    // Generated series.
    let presets: [&'static str; 2] = ["reference", "tiny"];
    let mut jobs = Vec::new();
    for preset in presets {
        for m in METRICS {
            let Some(pool) = noise.get(&(preset.to_string(), m)) else { continue };
            for &step in &STEPS {
                for rep in 0..REPLICATES {
                    jobs.push((preset, m, step, rep, pool.clone()));
                }
            }
        }
    }
    let series: Vec<(&str, &str, f64, Vec<f64>)> = jobs
        .iter()
        .map(|(preset, m, step, rep, pool)| {
            let worse = metrics::metric(m).unwrap().worse;
            let mut state = seed(preset, m, *step, *rep);
            let values: Vec<f64> = (0..LEN)
                .map(|i| {
                    let n = pool[(next(&mut state) % pool.len() as u64) as usize];
                    let shift = if i >= AT { *step } else { 0.0 };
                    match worse {
                        Worse::Higher => n * (1.0 + shift),
                        Worse::Lower => n * (1.0 - shift),
                    }
                })
                .collect();
            (*preset, *m, *step, values)
        })
        .collect();
    // The threshold of the calibrated rule, per preset and metric, from the null series.
    let mut calibrated: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    for preset in presets {
        for m in METRICS {
            let worse = metrics::metric(m).unwrap().worse;
            let nulls: Vec<&Vec<f64>> =
                series.iter().filter(|s| s.0 == preset && s.1 == m && s.2 == 0.0).map(|s| &s.3).collect();
            if nulls.is_empty() {
                continue;
            }
            let t = CALIBRATION
                .into_iter()
                .find(|&t| {
                    let flags: usize = nulls.iter().map(|v| threshold_flags(v, worse, t).len()).sum();
                    100.0 * flags as f64 / (nulls.len() * LEN) as f64 <= 1.0
                })
                .unwrap_or(f64::INFINITY);
            calibrated.insert((preset, m), t);
        }
    }
    let values_cfg = Config { ranks: false, ..cfg };
    let results: Vec<Outcome> = series
        .par_iter()
        .map(|(preset, m, step, values)| {
            let worse = metrics::metric(m).unwrap().worse;
            let methods = vec![
                detector(values, *step, &cfg),
                detector(values, *step, &values_cfg),
                threshold(values, *step, worse, THRESHOLD),
                threshold(values, *step, worse, calibrated[&(*preset, *m)]),
            ];
            Outcome { preset, metric: m, step: *step, values: values.clone(), methods }
        })
        .collect();

    println!("\n## Generated series: {LEN} runs, the step at run {}, {REPLICATES} series per cell\n", AT + 1);
    println!("Detected: a change point within ±{TOLERANCE} runs of the step (threshold rules: a run flagged at or after it). Found at: the median number of runs after the step, the first bad run counted as 1, when the growing history first shows it. False per 100 runs: change points (flagged runs) farther than ±{TOLERANCE} runs from the step, or before it; null series have no step. Each cell: detected / found at / false per 100 runs.\n");
    let names =
        ["E-divisive on ranks (default)", "E-divisive on values", "threshold 10%", "threshold, calibrated"];
    println!("| preset | metric | step | {} |", names.join(" | "));
    println!("|---|---|---:|{}", "---:|".repeat(names.len()));
    for preset in presets {
        for m in METRICS {
            for &step in &STEPS {
                let cell: Vec<&Outcome> = results
                    .iter()
                    .filter(|o| o.preset == preset && o.metric == m && o.step == step)
                    .collect();
                if cell.is_empty() {
                    continue;
                }
                let n = cell.len() as f64;
                let cols: Vec<String> = (0..names.len())
                    .map(|k| {
                        let found: Vec<f64> = cell
                            .iter()
                            .filter(|o| o.methods[k].detected)
                            .map(|o| o.methods[k].delay as f64)
                            .collect();
                        let false_cp: usize = cell.iter().map(|o| o.methods[k].false_points).sum();
                        let fp = 100.0 * false_cp as f64 / (n * LEN as f64);
                        if step == 0.0 {
                            format!("– / – / {fp:.2}")
                        } else {
                            let at = if found.is_empty() {
                                "–".into()
                            } else {
                                format!("{:.0}", changepoint::median(&found))
                            };
                            format!("{:.0}% / {at} / {fp:.2}", 100.0 * found.len() as f64 / n)
                        }
                    })
                    .collect();
                println!(
                    "| {preset} | `{m}` | {} | {} |",
                    if step == 0.0 { "none".to_string() } else { format!("{:.0}%", 100.0 * step) },
                    cols.join(" | ")
                );
            }
        }
    }
    println!("\nThresholds of the calibrated rule (at most 1 false flag per 100 healthy runs):");
    for ((p, m), t) in &calibrated {
        println!("- {p} `{m}`: {:.0}%", 100.0 * t);
    }

    // Real sequences: each directory in its own order.
    println!("\n## Real result sequences (each run a fresh process on an H200, in the order recorded)\n");
    println!("| sequence | metric | runs | first delayed run | change points (run: before → after) | threshold 10% flags |");
    println!("|---|---|---:|---:|---|---|");
    for (dir, batch) in &runs {
        let mut by_preset: BTreeMap<&str, Vec<&Run>> = BTreeMap::new();
        for r in batch.iter().filter(|r| r.tp == 1) {
            by_preset.entry(&r.preset).or_default().push(r);
        }
        for (preset, rs) in by_preset {
            // Healthy runs first, then the delays in increasing order, as the ladders ran.
            let mut rs = rs;
            rs.sort_by(|a, b| a.delay.total_cmp(&b.delay).then(a.name.cmp(&b.name)));
            let first_delayed =
                rs.iter().position(|r| r.delay > 0.0).map_or("none".into(), |i| format!("#{}", i + 1));
            for m in ["host_before_us", "graph_launch_us"] {
                let vals: Vec<f64> = rs.iter().filter_map(|r| r.figures.get(m).copied()).collect();
                let cps = changepoint::detect(&vals, &cfg);
                let shown: Vec<String> = cps
                    .iter()
                    .map(|c| {
                        format!(
                            "#{}: {:.1} → {:.1}",
                            c.index + 1,
                            changepoint::median(&vals[..c.index]),
                            changepoint::median(&vals[c.index..])
                        )
                    })
                    .collect();
                let flags: Vec<String> = threshold_flags(&vals, metrics::metric(m).unwrap().worse, THRESHOLD)
                    .iter()
                    .map(|i| format!("#{}", i + 1))
                    .collect();
                let name = Path::new(dir).file_name().unwrap().to_string_lossy();
                println!(
                    "| {name}/{preset} | `{m}` | {} | {first_delayed} | {} | {} |",
                    vals.len(),
                    if shown.is_empty() { "none".into() } else { shown.join("; ") },
                    if flags.is_empty() { "none".into() } else { flags.join(" ") }
                );
            }
        }
    }

    // For the cross-check: the series, what was found, and the statistic at every split of a few.
    let dump: Vec<serde_json::Value> = results
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut v = serde_json::json!({
                "preset": o.preset, "metric": o.metric, "step": o.step, "truth": AT,
                "values": o.values, "ours": o.methods[0].points, "ours_values": o.methods[1].points,
            });
            if i % 97 == 0 {
                v["q"] = serde_json::json!(changepoint::q_values(&o.values, cfg.min_size, false));
            }
            v
        })
        .collect();
    let path = out.join("series.json");
    std::fs::write(&path, serde_json::to_vec(&serde_json::json!({"config": cfg, "series": dump})).unwrap())
        .unwrap();
    eprintln!("wrote {}", path.display());
}

/// One real run.
struct Run {
    name: String,
    preset: String,
    delay: f64,
    tp: u32,
    healthy: bool,
    figures: metrics::Figures,
}

fn read_dir(dir: &Path) -> Vec<Run> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|p| match launchguard_history::import::read(p) {
            Ok(Document::Check(r)) => Some(Run {
                name: p.file_name().unwrap().to_string_lossy().into_owned(),
                preset: r.workload.preset.clone(),
                delay: r.inject_delay_us,
                tp: r.tp,
                healthy: r.inject_delay_us == 0.0 && r.tp == 1,
                figures: metrics::of_check(&r),
            }),
            _ => None,
        })
        .collect()
}

/// What each method did on one series.
struct Outcome {
    preset: &'static str,
    metric: &'static str,
    step: f64,
    values: Vec<f64>,
    methods: Vec<Found>,
}

/// What one method found.
struct Found {
    points: Vec<usize>,
    detected: bool,
    /// Runs after the step, the first bad one counted as 1, when it was first found.
    delay: usize,
    false_points: usize,
}

fn near(i: usize) -> bool {
    i.abs_diff(AT) <= TOLERANCE
}

fn detector(values: &[f64], step: f64, cfg: &Config) -> Found {
    let points: Vec<usize> = changepoint::detect(values, cfg).iter().map(|c| c.index).collect();
    let stepped = step > 0.0;
    let detected = stepped && points.iter().any(|&i| near(i));
    let false_points = points.iter().filter(|&&i| !(stepped && near(i))).count();
    // Online: the first prefix whose change points include the step's.
    let delay = if detected {
        (AT + 1..=LEN)
            .find(|&n| changepoint::detect(&values[..n], cfg).iter().any(|c| near(c.index)))
            .map_or(LEN, |n| n - AT)
    } else {
        0
    };
    Found { points, detected, delay, false_points }
}

fn threshold(values: &[f64], step: f64, worse: Worse, t: f64) -> Found {
    let flags = threshold_flags(values, worse, t);
    let stepped = step > 0.0;
    let first = flags.iter().find(|&&i| stepped && i >= AT);
    Found {
        detected: first.is_some(),
        delay: first.map_or(0, |&i| i - AT + 1),
        false_points: flags.iter().filter(|&&i| !stepped || i < AT).count(),
        points: flags,
    }
}

/// The runs the threshold rule flags at threshold `t`.
fn threshold_flags(values: &[f64], worse: Worse, t: f64) -> Vec<usize> {
    (WINDOW..values.len())
        .filter(|&i| {
            let base = changepoint::median(&values[i - WINDOW..i]);
            match worse {
                Worse::Higher => values[i] > base * (1.0 + t),
                Worse::Lower => values[i] < base * (1.0 - t),
            }
        })
        .collect()
}

fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((p / 100.0) * (s.len() - 1) as f64).round() as usize]
}

fn seed(preset: &str, m: &str, step: f64, rep: usize) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("{preset}/{m}/{step}/{rep}").bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// splitmix64.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
