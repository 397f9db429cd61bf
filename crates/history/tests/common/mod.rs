//! The same test of a store on both engines: real H200 check results recorded and read back.

use std::path::PathBuf;

use launchguard_history::changepoint::Config;
use launchguard_history::fingerprint::Identity;
use launchguard_history::record::{gunzip, Document, Labels, Reset};
use launchguard_history::series::Lane;
use launchguard_history::store::Store;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The real results of `selftest --preset reference` on an H200: 10 healthy runs, then 5, 10,
/// 25, 50, 100, 200, 400 µs injected before each replay.
pub fn reference_runs() -> Vec<PathBuf> {
    let dir = repo().join("tests/data/h200-check/reference");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

pub fn exercise(store: &mut dyn Store) {
    assert_eq!(store.schema_version().unwrap(), launchguard_history::schema::latest());
    let files = reference_runs();
    assert_eq!(files.len(), 17);
    let mut ids = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let doc = launchguard_history::import::read(f).unwrap();
        let labels = Labels {
            lane: Lane::Named("selftest".into()),
            identity: Identity { build_id: Some(format!("build-{i}")), ..Default::default() },
            source: Some(f.display().to_string()),
            ..Default::default()
        };
        let (id, key) = launchguard_history::record(store, &doc, &labels).unwrap();
        assert_eq!(
            (key.preset.as_str(), key.machine.as_str(), key.lane.as_str()),
            ("reference", "NVIDIA H200", "selftest")
        );
        ids.push(id);
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids grow in recording order: {ids:?}");
    let series = store.series().unwrap();
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].1, 17);
    let runs = store.runs(&series[0].0).unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), ids);
    // Figures read back exactly as recorded: the values of the files themselves.
    for (run, f) in runs.iter().zip(&files) {
        let Document::Check(report) = launchguard_history::import::read(f).unwrap() else { panic!() };
        assert_eq!(run.figures, launchguard_history::metrics::of_check(&report), "{}", f.display());
        assert_eq!(run.figures["host_before_us"], report.phases["before"].host_p50_us.unwrap());
        // The whole document is kept, raw samples included.
        let (schema, body) = store.document(run.id).unwrap().unwrap();
        assert_eq!(schema, "launchguard.check/1");
        let back: serde_json::Value = serde_json::from_slice(&gunzip(&body).unwrap()).unwrap();
        assert_eq!(
            back["phases"]["before"]["host_us"].as_array().unwrap().len(),
            report.phases["before"].host_us.len()
        );
    }
    assert_eq!(store.run(ids[3]).unwrap().unwrap(), runs[3]);
    assert_eq!(store.run(999_999).unwrap(), None);
    // Fingerprints: one per distinct one, read back whole.
    let mut hashes: Vec<String> = runs.iter().map(|r| r.fingerprint.clone()).collect();
    hashes.sort();
    hashes.dedup();
    let fps = store.fingerprints(&hashes).unwrap();
    assert_eq!(fps.len(), hashes.len());
    let first = &fps[&runs[0].fingerprint];
    assert_eq!(first.get("torch"), Some("2.11.0+cu130"));
    assert_eq!(first.get("run/inject_delay_us"), Some("0"));
    assert_eq!(fps[&runs[12].fingerprint].get("run/inject_delay_us"), Some("25"));
    // The build is the run's, not the stack's: the runs of one stack share a fingerprint.
    assert_eq!(first.get("build"), None);
    assert_eq!(runs[0].identity.build_id.as_deref(), Some("build-0"));
    assert!(hashes.len() < runs.len(), "{} fingerprints for {} runs", hashes.len(), runs.len());

    // The ladder starts at run 11 (5 µs on ~3–5 µs of host cost), a ramp rather than a step: one
    // run at 5 µs cannot be a level of its own (3 runs at least), so the change is placed at run
    // 11 or 12 (10 µs).
    let key = series[0].0.clone();
    let a = launchguard_history::analyse(store, &key, &Config::default()).unwrap();
    let host = a.metrics.iter().find(|m| m.metric.name == "host_before_us").unwrap();
    let first = host.changes.first().map(|c| c.run_id).unwrap_or(-1);
    assert!([ids[10], ids[11]].contains(&first), "{:?}", host.changes);
    let gate = launchguard_history::gate(store, &key, &Config::default()).unwrap();
    let (f, e) = gate.iter().find(|(f, _)| f.metric == "host_before_us").unwrap();
    assert_eq!(f.first_bad.run_id, first);
    let top: Vec<&str> = e.differences.iter().take(3).map(|d| d.key.as_str()).collect();
    assert!(top.contains(&"run/inject_delay_us"), "{:?}", e.differences);

    // A reset at the first bad run accepts it: the gate passes for that metric.
    let reset = Reset {
        id: None,
        key: key.clone(),
        run_id: ids[10],
        metric: None,
        note: "the ladder is expected".into(),
        created_at: "2026-12-02T00:00:00Z".into(),
    };
    let rid = store.add_reset(&reset).unwrap();
    let resets = store.resets(&key).unwrap();
    assert_eq!(resets, vec![Reset { id: Some(rid), ..reset }]);
    let a = launchguard_history::analyse(store, &key, &Config::default()).unwrap();
    let gate = launchguard_history::gate::judge(&a);
    assert!(gate.iter().all(|f| f.first_bad.run_id > ids[10]), "{gate:?}");
}
