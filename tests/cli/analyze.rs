//! `launchguard analyze` on real traces.

use crate::util::*;

#[test]
fn bundled_example_fails_on_occupancy() {
    let (code, v) = analyze_json(&repo_root().join("examples/delay270_clean.json.gz"), &[]);
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "fail");
}
