//! A run's fingerprint: everything about the stack it ran on that could explain a change, as flat
//! `key → value` text, so that two fingerprints differ key by key. Stored once per distinct
//! fingerprint, named by the SHA-256 of its canonical JSON.
//!
//! Keys, by prefix: `gpu`, `gpu_count`, `driver`, `torch`, `cuda`, `hip`, `nccl`, `python`,
//! `python_version`, `host`; `profiler_backend`; `linkage/NAME` (the library torch would load for
//! NAME: its path, and its GNU build id where it was read on the machine that ran); `mapped/NAME`
//! and `mapped_after_profiler/NAME` (what the process had mapped); `layer/NAME` (a mapped profiler
//! or interception library); `env/VAR` (the variables that load or configure such layers);
//! `run/inject_delay_us`, `run/inject_delay_ranks`, `run/tp`, `workload`; `launchguard_version`;
//! `build`, `image/digest`, `image/label/KEY` (what the caller said the image is).

use std::collections::BTreeMap;
use std::path::Path;

use launchguard_analysis::context::{Inventory, Workload};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What the caller knows of the image or build that ran (`--build-id`, `--image-digest`,
/// `--label`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Identity {
    /// The build: a CI build number, a commit, a tag.
    pub build_id: Option<String>,
    /// The container image's digest (`sha256:…`).
    pub image_digest: Option<String>,
    /// The image's labels.
    pub labels: BTreeMap<String, String>,
}

impl Identity {
    /// What names the build in reports: the build id, else the image digest.
    pub fn build(&self) -> Option<&str> {
        self.build_id.as_deref().or(self.image_digest.as_deref())
    }
}

/// A run's fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(pub BTreeMap<String, String>);

/// The most keys a fingerprint keeps: a stranger's file could name a million libraries.
pub const MAX_KEYS: usize = 4096;
/// The longest value a fingerprint keeps, in bytes: a variable could hold a megabyte.
pub const MAX_VALUE: usize = 4096;

impl Fingerprint {
    /// Sets `key` to `value` (cut at [`MAX_VALUE`] bytes, on a character boundary); past
    /// [`MAX_KEYS`] keys, new keys are dropped.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        let (key, mut value) = (key.into(), value.into());
        if self.0.len() >= MAX_KEYS && !self.0.contains_key(&key) {
            return;
        }
        if value.len() > MAX_VALUE {
            let mut cut = MAX_VALUE;
            while !value.is_char_boundary(cut) {
                cut -= 1;
            }
            value.truncate(cut);
            value.push('…');
        }
        self.0.insert(key, value);
    }

    fn set_opt(&mut self, key: &str, value: Option<impl ToString>) {
        if let Some(v) = value {
            self.set(key, v.to_string());
        }
    }

    /// The run's inventory: hardware, software, mapped libraries, layers, variables.
    pub fn add_inventory(&mut self, inv: &Inventory) {
        self.set_opt("gpu", inv.gpu_name.as_ref());
        self.set_opt("gpu_count", inv.gpu_count);
        self.set_opt("driver", inv.driver.as_ref());
        self.set_opt("torch", inv.torch.as_ref());
        self.set_opt("cuda", inv.cuda.as_ref());
        self.set_opt("hip", inv.hip.as_ref());
        self.set_opt("nccl", inv.nccl.as_ref());
        self.set_opt("python", inv.python.as_ref());
        self.set_opt("python_version", inv.python_version.as_ref());
        self.set_opt("host", inv.host.as_ref());
        for (var, value) in &inv.layer_env {
            self.set(format!("env/{var}"), value.clone());
        }
        for (prefix, libs) in [
            ("mapped", &inv.mapped_libraries),
            ("mapped_after_profiler", &inv.mapped_libraries_after_profiler),
        ] {
            for path in libs {
                let name = base_name(path);
                if launchguard_linkage::classify_library_name(&name).is_some() {
                    self.set(format!("layer/{name}"), path.clone());
                }
                self.set(format!("{prefix}/{name}"), path.clone());
            }
        }
        if let Some(preload) = inv.layer_env.get("LD_PRELOAD") {
            for path in preload.split([':', ' ']).filter(|p| !p.is_empty()) {
                self.set(format!("layer/{}", base_name(path)), path.to_string());
            }
        }
    }

    /// The linkage report (`launchguard.linkage/1`) of the PyTorch that ran: the backend and the
    /// closure of libraries torch would load.
    pub fn add_linkage(&mut self, linkage: &serde_json::Value) {
        self.set_opt("profiler_backend", linkage.get("profiler_backend").and_then(|v| v.as_str()));
        let deps = linkage.get("dependencies").and_then(|d| d.as_array()).into_iter().flatten();
        for dep in deps {
            let (Some(name), Some(path)) =
                (dep.get("name").and_then(|v| v.as_str()), dep.get("path").and_then(|v| v.as_str()))
            else {
                continue;
            };
            self.set(format!("linkage/{name}"), path);
        }
        let libs = linkage.get("profiler_libraries").and_then(|d| d.as_array()).into_iter().flatten();
        for lib in libs {
            if let (Some(name), Some(path)) =
                (lib.get("name").and_then(|v| v.as_str()), lib.get("path").and_then(|v| v.as_str()))
            {
                let version = lib.get("version").and_then(|v| v.as_str()).unwrap_or("");
                self.set(format!("linkage/{name}"), path);
                if !version.is_empty() {
                    self.set(format!("profiler_library/{name}"), version);
                }
            }
        }
    }

    /// Adds the GNU build id of every library of the closure, read from the file at its path.
    /// Only for a run on this machine: elsewhere the same path may hold another file.
    pub fn add_build_ids(&mut self) {
        let keys: Vec<String> = self.0.keys().filter(|k| k.starts_with("linkage/")).cloned().collect();
        for key in keys {
            let path = self.0[&key].clone();
            if let Some(id) = launchguard_linkage::build_id(Path::new(&path)) {
                self.set(key, format!("{path} (build id {id})"));
            }
        }
    }

    /// How the run was set up: the injected delay, the ranks, the workload's shape.
    pub fn add_run(&mut self, w: &Workload, tp: u32, inject_delay_us: f64, delay_ranks: Option<&[u32]>) {
        self.set("run/inject_delay_us", format_number(inject_delay_us));
        self.set("run/tp", tp.to_string());
        if let Some(ranks) = delay_ranks {
            let list: Vec<String> = ranks.iter().map(u32::to_string).collect();
            self.set("run/inject_delay_ranks", list.join(","));
        }
        self.set(
            "workload",
            format!(
                "{} {} layers, batch {}, seq {}, hidden {}, heads {}, {}, {} replays",
                w.preset, w.layers, w.batch, w.seq, w.hidden, w.heads, w.arch, w.replays
            ) + &format!(", {}", w.dtype),
        );
    }

    /// What the caller said of the build and image.
    pub fn add_identity(&mut self, id: &Identity) {
        self.set_opt("build", id.build_id.as_ref());
        self.set_opt("image/digest", id.image_digest.as_ref());
        for (k, v) in &id.labels {
            self.set(format!("image/label/{k}"), v.clone());
        }
    }

    /// The canonical JSON: keys sorted, compact.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).expect("a map of strings serializes")
    }

    /// SHA-256 of [`Fingerprint::to_json`], in hex: the fingerprint's name in the store.
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.to_json().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

/// How strongly a kind of difference is suspected of changing graph-launch cost, before looking at
/// when it changed: interception layers and the profiler first, then versions, libraries,
/// variables, identity.
pub fn prior(key: &str) -> (f64, &'static str) {
    const INTERCEPTION: [&str; 4] =
        ["env/LD_PRELOAD", "env/CUDA_INJECTION64_PATH", "env/HSA_TOOLS_LIB", "env/ROCP_TOOL_LIBRARIES"];
    if key.starts_with("layer/")
        || INTERCEPTION.contains(&key)
        || key == "profiler_backend"
        || key.starts_with("profiler_library/")
        || key.starts_with("run/")
    {
        (1.0, "interception and profiler")
    } else if ["torch", "cuda", "hip", "driver", "nccl"].contains(&key) {
        (0.9, "versions")
    } else if key.starts_with("linkage/") {
        (0.8, "linkage")
    } else if key.starts_with("env/") || key.starts_with("mapped") {
        (0.7, "environment and mapped libraries")
    } else if key == "build" || key.starts_with("image/") {
        (0.5, "image identity")
    } else {
        (0.4, "machine and tools")
    }
}

/// The file name of a path (`/x/libcupti.so.13` → `libcupti.so.13`).
fn base_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// A number as a person writes it: `25`, `2.5`.
fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_sha256_of_the_sorted_json() {
        let mut f = Fingerprint::default();
        f.set("torch", "2.11.0");
        f.set("gpu", "NVIDIA H200");
        assert_eq!(f.to_json(), r#"{"gpu":"NVIDIA H200","torch":"2.11.0"}"#);
        // printf '%s' '{"gpu":"NVIDIA H200","torch":"2.11.0"}' | sha256sum
        assert_eq!(f.hash(), "21ea0da702ff15a2f49a0861a387ee6a53b0cdcccc17c274abec4f0e52285aa7");
    }

    #[test]
    fn values_and_keys_are_bounded() {
        let mut f = Fingerprint::default();
        f.set("env/X", "é".repeat(5000));
        assert!(f.get("env/X").unwrap().len() <= MAX_VALUE + '…'.len_utf8());
        for i in 0..MAX_KEYS + 10 {
            f.set(format!("k{i}"), "v");
        }
        assert_eq!(f.0.len(), MAX_KEYS);
    }

    #[test]
    fn layers_come_from_mapped_libraries_and_ld_preload() {
        let inv = Inventory {
            mapped_libraries: vec!["/usr/lib/libcupti.so.13".into(), "/usr/lib/libm.so.6".into()],
            layer_env: [("LD_PRELOAD".to_string(), "/opt/libdelay.so".to_string())].into(),
            ..Default::default()
        };
        let mut f = Fingerprint::default();
        f.add_inventory(&inv);
        assert_eq!(f.get("layer/libcupti.so.13"), Some("/usr/lib/libcupti.so.13"));
        assert_eq!(f.get("layer/libm.so.6"), None);
        assert_eq!(f.get("mapped/libm.so.6"), Some("/usr/lib/libm.so.6"));
        assert_eq!(f.get("layer/libdelay.so"), Some("/opt/libdelay.so"));
        assert_eq!(f.get("env/LD_PRELOAD"), Some("/opt/libdelay.so"));
    }

    #[test]
    fn numbers_read_as_written() {
        assert_eq!(format_number(25.0), "25");
        assert_eq!(format_number(2.5), "2.5");
        assert_eq!(format_number(0.0), "0");
    }
}
