//! Hand-built views for the renderers' unit tests.

use launchguard_judge::RanksReport;
use launchguard_judge::{Check, Verdict};

use crate::View;

/// A view of `checks` alone: no trace, no phases.
pub fn view_with_checks<'a>(checks: &'a [Check], document: &'a crate::Document) -> View<'a> {
    View {
        command: "analyze",
        verdict: Verdict::of(checks),
        reason: None,
        checks,
        analysis: None,
        findings: None,
        phases: &[],
        document,
        ranks: None,
    }
}

/// One rank's trace of a tiny TP=2 run: two graph replays, each a compute kernel then an
/// all-reduce. Times in µs. Rank 1 starts each replay `late` µs after rank 0, so rank 0's
/// all-reduces wait for it.
fn rank_trace(rank: u64, late: f64) -> String {
    let mut events = Vec::new();
    for (i, t0) in [1000.0, 1100.0].into_iter().enumerate() {
        let t = t0 + if rank == 1 { late } else { 0.0 };
        let c = i + 1;
        events.push(format!(r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 2, "ts": {}, "dur": 4, "args": {{"correlation": {c}}}}}"#, t - 10.0));
        events.push(format!(r#"{{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": {t}, "dur": 20, "args": {{"device": 0, "stream": 7, "correlation": {c}}}}}"#));
        // Every rank's all-reduce ends together, at t0 + 50: the early rank's runs longer.
        let ar = t + 20.0;
        events.push(format!(r#"{{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f16_RING_LL(x)", "pid": 0, "tid": 7, "ts": {ar}, "dur": {}, "args": {{"device": 0, "stream": 7, "correlation": {c}}}}}"#, t0 + 50.0 - ar));
    }
    format!(
        r#"{{"schemaVersion": 1, "distributedInfo": {{"rank": {rank}, "world_size": 2}}, "traceEvents": [{}]}}"#,
        events.join(",\n")
    )
}

/// The two ranks of [`rank_trace`] analysed together, through the real readers and analysis.
pub fn two_ranks() -> RanksReport {
    use launchguard_analysis::ranks::{analyze_ranks, identify, RankTrace};
    let dir = tempfile::tempdir().unwrap();
    let traces: Vec<_> = (0..2)
        .map(|r| {
            let path = dir.path().join(format!("tp2_rank{r}.json"));
            std::fs::write(&path, rank_trace(r, 5.0)).unwrap();
            launchguard_trace::read(&path).unwrap()
        })
        .collect();
    let ids = identify(&traces).unwrap();
    let ranks: Vec<RankTrace> = ids.iter().map(|(id, i)| RankTrace { id, trace: &traces[*i] }).collect();
    launchguard_judge::ranks(analyze_ranks(&ranks, &Default::default()).unwrap(), &Default::default())
}
