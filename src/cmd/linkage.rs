//! `launchguard linkage [TARGET]`.

use launchguard_linkage::{forbidden, inspect, CpuChoice, Limits, Options, Target};

use crate::cli::LinkageArgs;

pub fn run(args: LinkageArgs) -> anyhow::Result<u8> {
    let mut forbid = match &args.config {
        Some(path) => launchguard_judge::Config::from_file(path)?.linkage.forbid,
        None => Vec::new(),
    };
    forbid.extend(args.forbid.iter().cloned());
    launchguard_linkage::validate_forbid(&forbid)?;
    let target = match &args.target {
        Some(p) => Target::Path(p.clone()),
        None => Target::Python(args.python.clone()),
    };
    let limits = Limits {
        max_libraries: args.max_libraries,
        max_depth: args.max_depth,
        max_needed: args.max_needed,
        max_lookups: args.max_lookups,
        max_cache_mib: args.max_cache_mib,
        max_dir_entries: args.max_dir_entries,
    };
    let cpu = CpuChoice { level: args.cpu_level, vendor: args.cpu_vendor, platform: args.platform.clone() };
    let report = inspect(&target, &Options { root: args.root.clone(), ld_library_path: None, limits, cpu })?;
    let violations = forbidden(&report, &forbid)?;
    crate::outputs::print_doc(&launchguard_report::Doc::Linkage(&report, &violations), args.format)?;
    Ok(if violations.is_empty() { 0 } else { 1 })
}
