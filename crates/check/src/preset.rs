//! Workload presets: the graphs `check` captures and replays.

pub use launchguard_analysis::context::Workload;

/// Names of the presets.
pub const PRESETS: [&str; 3] = ["reference", "tiny", "qwen3-0.6b"];

/// A preset by name.
pub fn preset(name: &str) -> Option<Workload> {
    let base = Workload {
        preset: name.to_string(),
        arch: "gpt".into(),
        layers: 4,
        batch: 8,
        seq: 1,
        hidden: 2048,
        heads: 16,
        kv_heads: None,
        head_dim: None,
        ffn: None,
        dtype: "float16".into(),
        eager_warmups: 20,
        warmups: 20,
        replays: 100,
        host_replays: 300,
        gpu_replays: 100,
        device: 0,
    };
    match name {
        // The ATOM test's workload exactly: 4 layers, batch 8, seq 1, hidden 2048, 16 heads,
        // fp16, 20 warm-ups, 100 profiled replays.
        "reference" => Some(base),
        // Launch-bound: 11 kernels, ~35 µs of GPU time per replay on an H200 (ground-truth
        // size sweep), so a few µs of host overhead per launch show in the headroom.
        "tiny" => Some(Workload { layers: 1, hidden: 1024, heads: 16, ..base }),
        // Qwen3-0.6B's layer shapes (28 layers, hidden 1024, 16 heads, 8 KV heads, head_dim
        // 128, MLP 3072, bf16), randomly initialised: nothing is downloaded.
        "qwen3-0.6b" => Some(Workload {
            arch: "qwen3".into(),
            layers: 28,
            hidden: 1024,
            heads: 16,
            kv_heads: Some(8),
            head_dim: Some(128),
            ffn: Some(3072),
            dtype: "bfloat16".into(),
            ..base
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_exists() {
        for p in PRESETS {
            assert_eq!(preset(p).unwrap().preset, p);
        }
        assert!(preset("huge").is_none());
    }
}
