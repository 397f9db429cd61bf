//! Progress of the workload's phases on stderr: a spinner per phase on a terminal, one plain line
//! per finished phase elsewhere (CI logs).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// The phases in the order the workload runs them, with a label for people.
pub const PHASES: [(&str, &str); 6] = [
    ("import", "import torch"),
    ("inventory", "inventory: versions, GPU, loaded layers"),
    ("capture", "build, warm up and capture the graph"),
    ("before", "replays, profiler never started"),
    ("profiled", "replays under torch.profiler"),
    ("after", "replays after the profiler session"),
];

/// Shows phases as they start and finish.
pub struct PhaseProgress {
    bar: Option<ProgressBar>,
    enabled: bool,
    prefix: String,
}

impl PhaseProgress {
    /// `enabled = false` prints nothing (JSON output, tests).
    pub fn new(enabled: bool, prefix: &str) -> Self {
        Self { bar: None, enabled, prefix: prefix.to_string() }
    }

    fn label(phase: &str) -> (usize, &str) {
        PHASES.iter().position(|(p, _)| *p == phase).map_or((0, phase), |i| (i + 1, PHASES[i].1))
    }

    /// A phase started.
    pub fn start(&mut self, phase: &str) {
        if !self.enabled {
            return;
        }
        let (i, label) = Self::label(phase);
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix}[{msg}] {elapsed}").expect("valid template"),
            );
            bar.set_prefix(self.prefix.clone());
            bar.set_message(format!("{i}/{} {label}", PHASES.len()));
            bar.enable_steady_tick(Duration::from_millis(100));
            self.bar = Some(bar);
        }
    }

    /// A phase finished after `seconds`.
    pub fn done(&mut self, phase: &str, seconds: f64) {
        if !self.enabled {
            return;
        }
        let (i, label) = Self::label(phase);
        let line = format!("{}{i}/{} {label}: {seconds:.1} s", self.prefix, PHASES.len());
        match self.bar.take() {
            Some(bar) => bar.finish_with_message(format!("{i}/{} {label}: {seconds:.1} s", PHASES.len())),
            None => eprintln!("launchguard: {line}"),
        }
    }

    /// Clears a running spinner (on error).
    pub fn abandon(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.abandon();
        }
    }
}
