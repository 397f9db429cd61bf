//! The transitive closure the loader would build for one main object, in its order.
//!
//! glibc maps dependencies breadth-first (`_dl_map_object_deps`): the main object's DT_NEEDED in
//! order, then each new object's in turn. Before searching, a name is matched against what is
//! already loaded — by the names objects were requested under and by DT_SONAME — and a found
//! file that is already loaded under another path (same device and inode) is reused. The
//! dynamic loader itself is loaded from the start, so `libc.so.6`'s `ld-linux-x86-64.so.2`
//! matches it by soname instead of being searched. That order and reuse decide which file a
//! name resolves to (and which RPATHs it inherits), so they are reproduced here.

use std::collections::{HashMap, HashSet, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::elf::{Arch, ElfError, ElfInfo};
use crate::error::LinkageError;
use crate::loader::LoaderAssumption;
use crate::search::{expand_dst, CacheState, Dst, Platform, Requester, SearchEnv, SearchResult};

/// One loaded object.
#[derive(Debug, Clone)]
pub struct Object {
    /// The path as the loader names it (inside the inspected system; not normalized).
    pub path: String,
    /// The file on this machine, symlinks resolved.
    pub host: PathBuf,
    /// What the loader read from it.
    pub info: ElfInfo,
    /// The names it was requested under, first one first.
    pub names: Vec<String>,
    /// The object whose DT_NEEDED first brought it in (glibc's `l_loader`); `None` for the main
    /// object and the dynamic loader.
    pub loader: Option<usize>,
    /// `(st_dev, st_ino)`, for reuse of one file found under two paths.
    file_id: Option<(u64, u64)>,
    /// Length of its chain of loaders (0 for the main object and the dynamic loader).
    depth: usize,
}

impl Object {
    /// `$ORIGIN`: the directory part of the path as the loader names it (symlinks unresolved).
    pub fn origin(&self) -> &str {
        match self.path.rfind('/') {
            Some(0) => "/",
            Some(i) => &self.path[..i],
            None => ".",
        }
    }

    /// The file name part of the path, for labels and chains.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// One DT_NEEDED entry and what it resolved to.
#[derive(Debug, Clone)]
pub struct Edge {
    /// Index of the requesting object.
    pub from: usize,
    /// The DT_NEEDED name.
    pub name: String,
    /// Index of the object it resolved to, or why it did not.
    pub to: Result<usize, String>,
}

/// The closure of one main object.
#[derive(Debug, Clone)]
pub struct Closure {
    /// Loaded objects; 0 is the main object.
    pub objects: Vec<Object>,
    /// Every DT_NEEDED entry, in the loader's processing order.
    pub edges: Vec<Edge>,
    /// Things that make the result incomplete or unreliable.
    pub problems: Vec<String>,
    /// Things worth knowing that change nothing (cycles).
    pub notes: Vec<String>,
    /// What the search assumed about the loader that would run.
    pub loader: Option<LoaderAssumption>,
}

impl Closure {
    /// The chain of names from the main object's file name to `id`, through each `l_loader`.
    pub fn chain(&self, id: usize) -> Vec<String> {
        let mut chain = Vec::new();
        let mut cur = Some(id);
        while let Some(i) = cur {
            let o = &self.objects[i];
            chain.push(match o.loader {
                Some(_) => o.names.first().cloned().unwrap_or_else(|| o.file_name().into()),
                None => o.file_name().to_string(),
            });
            cur = o.loader;
        }
        chain.reverse();
        chain
    }
}

/// The names every loaded object answers to (its path, the names it was requested under, its
/// soname), each mapped to the first such object: glibc's `_dl_name_match_p` over the loaded
/// list, in constant time instead of a scan per DT_NEEDED entry.
#[derive(Default)]
struct Loaded(HashMap<String, usize>);

impl Loaded {
    fn add(&mut self, name: &str, id: usize) {
        let at = self.0.entry(name.to_string()).or_insert(id);
        *at = (*at).min(id);
    }

    fn add_object(&mut self, o: &Object, id: usize) {
        self.add(&o.path, id);
        if let Some(soname) = &o.info.soname {
            self.add(soname, id);
        }
        for n in &o.names {
            self.add(n, id);
        }
    }

    fn get(&self, name: &str) -> Option<usize> {
        self.0.get(name).copied()
    }
}

fn lookups_error(path: &str, env: &SearchEnv) -> LinkageError {
    LinkageError::Limit {
        what: format!(
            "{path}: resolving its closure took more than {} file-system lookups",
            env.fs.budget().limit()
        ),
        flag: "--max-lookups N",
    }
}

/// Builds the closure of the main object at `path` (inside the inspected system).
pub fn closure(env: &SearchEnv, path: &str) -> Result<Closure, LinkageError> {
    let host = env.fs.resolve(path).map_err(|e| match e.kind() {
        _ if env.fs.budget().spent() => lookups_error(path, env),
        std::io::ErrorKind::NotFound => LinkageError::NotFound { path: path.into() },
        _ => LinkageError::Io { path: path.into(), error: e },
    })?;
    let info = crate::elf::read(&host, None).map_err(|e| match e {
        ElfError::Io(error) => LinkageError::Io { path: path.into(), error },
        ElfError::NotRegular(_) => LinkageError::BadElf { path: path.into(), reason: e.to_string() },
        ElfError::NotElf => LinkageError::NotElf { path: path.into() },
        ElfError::Malformed(reason) => LinkageError::BadElf { path: path.into(), reason },
    })?;
    if !matches!(info.e_type, object::elf::ET_DYN | object::elf::ET_EXEC) {
        return Err(LinkageError::BadElf {
            path: path.into(),
            reason: format!(
                "not a shared library or executable (ELF type {}), the loader never loads it",
                info.e_type
            ),
        });
    }

    let limits = env.limits;
    let mut platform = Platform::detect(info.arch, &env.fs);
    let mut c = Closure {
        objects: Vec::new(),
        edges: Vec::new(),
        problems: Vec::new(),
        notes: Vec::new(),
        loader: None,
    };
    describe_arch(env, &info, &platform, path, &mut c);
    // A library names no interpreter; the architecture's usual one is what ldd would use.
    let rtld = match &info.interpreter {
        Some(interp) => Some((interp.clone(), true)),
        None => platform.default_interpreter.map(|i| (i.to_string(), false)),
    };
    let setup = env.loader_setup(&platform, rtld.as_ref().map(|(r, _)| r.as_str()));
    platform.apply(&setup.derived);
    c.notes.extend(setup.notes.iter().cloned());
    c.problems.extend(setup.problems.iter().cloned());
    c.loader = Some(setup.assumption.clone());
    let dynamic = info.dynamic;
    c.objects.push(Object {
        path: path.to_string(),
        file_id: file_id(&host),
        host,
        info,
        names: Vec::new(),
        loader: None,
        depth: 0,
    });
    if !dynamic {
        c.notes.push(format!("{path}: statically linked (no dynamic section), so it has no dependencies"));
        return Ok(c);
    }
    if let Some((rtld, named)) = rtld {
        preload_rtld(env, &rtld, named, platform.arch, &mut c);
    }
    let mut loaded = Loaded::default();
    for (id, o) in c.objects.iter().enumerate() {
        loaded.add_object(o, id);
    }
    let mut by_file: HashMap<(u64, u64), usize> = HashMap::new();
    for (id, o) in c.objects.iter().enumerate() {
        if let Some(fid) = o.file_id {
            by_file.entry(fid).or_insert(id);
        }
    }

    // A name not found once stays not found: ldd fakes an entry for it that later requests
    // match, and a real load stops at the first miss anyway.
    let mut failed: HashMap<String, String> = HashMap::new();
    let mut queue = VecDeque::from([0usize]);
    while let Some(id) = queue.pop_front() {
        let needed = std::mem::take(&mut c.objects[id].info.needed);
        if c.edges.len() + needed.len() > limits.max_needed {
            return Err(LinkageError::Limit {
                what: format!("{path}: its closure has more than {} DT_NEEDED entries", limits.max_needed),
                flag: "--max-needed N",
            });
        }
        for name in &needed {
            // A name with a slash is a path: glibc expands its tokens before matching it.
            let key = if name.contains('/') {
                expand_dst(name, &Dst { origin: c.objects[id].origin(), platform: &platform })
                    .unwrap_or_else(|| name.clone())
            } else {
                name.clone()
            };
            let known = match loaded.get(&key) {
                Some(to) => Some(Ok(to)),
                None => failed.get(name).map(|why| Err(why.clone())),
            };
            if let Some(to) = known {
                c.edges.push(Edge { from: id, name: name.clone(), to });
                continue;
            }
            let result = search(env, &c, id, name, &platform);
            if env.fs.budget().spent() {
                return Err(lookups_error(path, env));
            }
            let to = match result.found {
                Some((found_path, host, info)) => {
                    let fid = file_id(&host);
                    match fid.and_then(|f| by_file.get(&f).copied()) {
                        Some(existing) => {
                            c.objects[existing].names.push(name.clone());
                            loaded.add(name, existing);
                            Ok(existing)
                        }
                        None => {
                            let new_id = c.objects.len();
                            if new_id >= limits.max_libraries {
                                return Err(LinkageError::Limit {
                                    what: format!(
                                        "{path}: its closure has more than {} libraries",
                                        limits.max_libraries
                                    ),
                                    flag: "--max-libraries N",
                                });
                            }
                            let depth = c.objects[id].depth + 1;
                            if depth > limits.max_depth {
                                let mut chain = c.chain(id);
                                chain.push(name.clone());
                                return Err(LinkageError::Limit {
                                    what: format!(
                                        "{path}: a chain of libraries each loading the next is deeper than {} ({})",
                                        limits.max_depth,
                                        summarize_chain(&chain)
                                    ),
                                    flag: "--max-depth N",
                                });
                            }
                            c.objects.push(Object {
                                path: found_path,
                                host,
                                info,
                                names: vec![name.clone()],
                                loader: Some(id),
                                file_id: fid,
                                depth,
                            });
                            loaded.add_object(&c.objects[new_id], new_id);
                            if let Some(f) = fid {
                                by_file.insert(f, new_id);
                            }
                            queue.push_back(new_id);
                            Ok(new_id)
                        }
                    }
                }
                None => {
                    let why = explain_miss(env, name, &result);
                    if let Some(fatal) = &result.fatal {
                        c.problems.push(fatal.clone());
                    }
                    failed.insert(name.clone(), why.clone());
                    Err(why)
                }
            };
            c.edges.push(Edge { from: id, name: name.clone(), to });
        }
        c.objects[id].info.needed = needed;
    }
    note_cycles(&mut c);
    if let Some(conf) = env.conf_if_read() {
        c.notes.extend(conf.notes.iter().cloned());
    }
    if env.hints_cut_short() {
        c.notes.push(
            "explanations of unresolved names stopped checking ld.so.conf directories (too many lookups)"
                .into(),
        );
    }
    Ok(c)
}

/// `a → b → c → … → y → z` for a long chain.
fn summarize_chain(chain: &[String]) -> String {
    if chain.len() <= 6 {
        return chain.join(" → ");
    }
    format!("{} → … → {}", chain[..3].join(" → "), chain[chain.len() - 2..].join(" → "))
}

fn file_id(host: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(host).ok().map(|m| (m.dev(), m.ino()))
}

/// Loads the dynamic loader first, as it is in every process. `named`: the main object's
/// PT_INTERP names it, so its absence is a problem (for a library it is only a guess).
fn preload_rtld(env: &SearchEnv, rtld: &str, named: bool, arch: Arch, c: &mut Closure) {
    let Ok(host) = env.fs.resolve(rtld) else {
        if named {
            c.problems
                .push(format!("the program interpreter {rtld} is missing, so this program cannot start"));
        }
        return;
    };
    let Ok(info) = crate::elf::read(&host, None) else {
        c.problems.push(format!("the dynamic loader {rtld} is not a readable ELF file"));
        return;
    };
    if info.arch != arch {
        return;
    }
    c.objects.push(Object {
        path: rtld.to_string(),
        file_id: file_id(&host),
        host,
        info,
        names: vec![],
        loader: None,
        depth: 0,
    });
}

fn search(env: &SearchEnv, c: &Closure, id: usize, name: &str, platform: &Platform) -> SearchResult {
    let mut chain = Vec::new();
    let mut cur = Some(id);
    while let Some(i) = cur {
        let o = &c.objects[i];
        chain.push(Requester {
            label: o.file_name(),
            origin: o.origin(),
            rpath: o.info.effective_rpath(),
            runpath: o.info.runpath.as_deref(),
            nodeflib: o.info.nodeflib,
        });
        cur = o.loader;
    }
    env.search(name, &chain, platform)
}

/// One line saying where the loader looked, and why candidates did not count.
fn explain_miss(env: &SearchEnv, name: &str, result: &SearchResult) -> String {
    if let Some(fatal) = &result.fatal {
        return format!("the loader stops at {fatal}");
    }
    let tried: Vec<String> = result
        .tried
        .iter()
        .map(|t| {
            let more = if t.more > 0 { format!(" and {} more", t.more) } else { String::new() };
            if t.dirs.is_empty() {
                t.source.clone()
            } else {
                format!("{} ({}{more})", t.source, t.dirs.join(" "))
            }
        })
        .collect();
    let mut why = if name.contains('/') {
        format!("no such file: {}", tried.join(", "))
    } else {
        format!("not found in {}", tried.join(", "))
    };
    if !result.skipped.is_empty() {
        why.push_str(&format!("; passed over {}", result.skipped.join(", ")));
        if result.skipped_more > 0 {
            why.push_str(&format!(" and {} more", result.skipped_more));
        }
    }
    if !name.contains('/') {
        if let Some(dir) = env.conf().dirs.iter().find(|d| env.in_conf_dir(d, name)) {
            let cache = match env.cache {
                CacheState::Loaded(_) => "ld.so.cache does not list it",
                _ => "there is no usable ld.so.cache",
            };
            why.push_str(&format!(
                "; {dir}/{name} exists in an ld.so.conf directory but {cache} (run ldconfig)"
            ));
        }
    }
    why
}

fn describe_arch(env: &SearchEnv, info: &ElfInfo, platform: &Platform, path: &str, c: &mut Closure) {
    match (&env.cache, env.fs.root()) {
        (CacheState::Broken(why), _) => c.problems.push(format!(
            "/etc/ld.so.cache is unusable ({why}): only the system directories are searched after RUNPATH"
        )),
        (CacheState::Missing, _) => c.notes.push(
            "there is no /etc/ld.so.cache: after RUNPATH the loader searches only the system directories"
                .into(),
        ),
        _ => {}
    }
    if let Some(interp) = &info.interpreter {
        if interp.contains("ld-musl") {
            c.problems.push(format!(
                "{path} uses the musl loader {interp}; resolution follows glibc's rules and may differ"
            ));
        }
    }
    if env.fs.root().is_none() {
        if let Some(host) = Arch::host() {
            if host != info.arch {
                c.problems.push(format!(
                    "{path} is a {} ELF, not for this {host} machine: its dependencies are searched for {}, and system libraries of this machine do not count",
                    info.arch, info.arch
                ));
            }
        }
    }
    if platform.default_interpreter.is_none() {
        c.notes.push(format!(
            "{} is an architecture without built-in facts here: any ld.so.cache entry of the right ELF class counts, and $PLATFORM is unknown",
            info.arch
        ));
    }
}

/// Finds cycles among resolved edges (depth-first, back edges) and notes each once.
fn note_cycles(c: &mut Closure) {
    let n = c.objects.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    for e in &c.edges {
        if let Ok(to) = e.to {
            if seen.insert((e.from, to)) {
                succ[e.from].push(to);
            }
        }
    }
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut cycles: Vec<Vec<usize>> = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(top) = stack.last_mut() {
            let node = top.0;
            if let Some(&to) = succ[node].get(top.1) {
                top.1 += 1;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|(v, _)| *v == to).unwrap_or(0);
                        let mut cycle: Vec<usize> = stack[from..].iter().map(|(v, _)| *v).collect();
                        cycle.push(to);
                        cycles.push(cycle);
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    // Each back edge is one cycle; a crafted closure can have thousands. The first few say it.
    const SHOWN: usize = 10;
    if cycles.len() > SHOWN {
        c.notes.push(format!("{} dependency cycles; the first {SHOWN} follow", cycles.len()));
        cycles.truncate(SHOWN);
    }
    for cycle in cycles {
        let names: Vec<&str> = cycle.iter().map(|&i| c.objects[i].file_name()).collect();
        c.notes.push(format!(
            "dependency cycle: {} (the loader maps each object once, so this is harmless)",
            names.join(" → ")
        ));
    }
}
