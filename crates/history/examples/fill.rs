//! Fills a history with N runs for the benchmark (bench/history-bench.sh): a real `check` result
//! recorded N times, its figures drawn around their own values from the run-to-run spread of
//! real H200 runs (±5%, one run in five at 1.8× the usual host cost, as measured in
//! docs/history.md), with a step of +25% every 2,000 runs.
//!
//! usage: fill HISTORY N CHECK_RESULT

use launchguard_history::record::{Document, Labels};
use launchguard_history::series::Lane;
use launchguard_history::store::{self, Location, Mode};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [history, n, template] = &args[..] else { panic!("usage: fill HISTORY N CHECK_RESULT") };
    let n: usize = n.parse().unwrap();
    let Document::Check(base) = launchguard_history::import::read(template.as_ref()).unwrap() else {
        panic!("{template}: not a check result")
    };
    let mut store = store::open(&Location::parse(history), Mode::Create).unwrap();
    let mut state = 1u64;
    let t0 = std::time::Instant::now();
    let mut batch = Vec::new();
    for i in 0..n {
        let mut r = base.clone();
        let level = 1.0 + 0.25 * (i / 2000) as f64;
        for (name, phase) in r.phases.iter_mut() {
            let bimodal = if next(&mut state).is_multiple_of(5) { 1.8 } else { 1.0 };
            let noise = 1.0 + 0.05 * ((next(&mut state) % 2001) as f64 / 1000.0 - 1.0);
            if let Some(p) = phase.host_p50_us.as_mut() {
                *p *= noise * if name == "profiled" { 1.0 } else { bimodal * level };
            }
        }
        let labels = Labels {
            lane: Lane::Named("bench".into()),
            identity: launchguard_history::fingerprint::Identity {
                build_id: Some(format!("build-{i}")),
                ..Default::default()
            },
            ..Default::default()
        };
        batch.push((Document::Check(r), labels));
        // A thousand runs per transaction: one fsync each, not one per run.
        if batch.len() == 1000 || i + 1 == n {
            launchguard_history::record_all(store.as_mut(), &batch).unwrap();
            batch.clear();
        }
    }
    eprintln!("recorded {n} runs in {:.1} s", t0.elapsed().as_secs_f64());
}

/// splitmix64.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
