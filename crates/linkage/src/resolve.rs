//! The transitive closure the loader would build for one main object, in its order.
//!
//! glibc maps dependencies breadth-first (`_dl_map_object_deps`): the main object's DT_NEEDED in
//! order, then each new object's in turn. Before searching, a name is matched against what is
//! already loaded — by the names objects were requested under and by DT_SONAME — and a found
//! file that is already loaded under another path (same device and inode) is reused. The
//! dynamic loader itself is loaded from the start, so `libc.so.6`'s `ld-linux-x86-64.so.2`
//! matches it by soname instead of being searched. That order and reuse decide which file a
//! name resolves to (and which RPATHs it inherits), so they are reproduced here.

use std::collections::VecDeque;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::elf::{Arch, ElfError, ElfInfo};
use crate::error::LinkageError;
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

/// Builds the closure of the main object at `path` (inside the inspected system).
pub fn closure(env: &SearchEnv, path: &str) -> Result<Closure, LinkageError> {
    let host = env.fs.resolve(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => LinkageError::NotFound { path: path.into() },
        _ => LinkageError::Io { path: path.into(), error: e },
    })?;
    if host.is_dir() {
        return Err(LinkageError::BadElf { path: path.into(), reason: "is a directory".into() });
    }
    let info = crate::elf::read(&host).map_err(|e| match e {
        ElfError::Io(error) => LinkageError::Io { path: path.into(), error },
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

    let platform = Platform::detect(info.arch, &env.fs);
    let mut c = Closure { objects: Vec::new(), edges: Vec::new(), problems: Vec::new(), notes: Vec::new() };
    describe_arch(env, &info, &platform, path, &mut c);
    // A library names no interpreter; the architecture's usual one is what ldd would use.
    let rtld = match &info.interpreter {
        Some(interp) => Some((interp.clone(), true)),
        None => platform.default_interpreter.map(|i| (i.to_string(), false)),
    };
    let dynamic = info.dynamic;
    c.objects.push(Object {
        path: path.to_string(),
        file_id: file_id(&host),
        host,
        info,
        names: Vec::new(),
        loader: None,
    });
    if !dynamic {
        c.notes.push(format!("{path}: statically linked (no dynamic section), so it has no dependencies"));
        return Ok(c);
    }
    if let Some((rtld, named)) = rtld {
        preload_rtld(env, &rtld, named, platform.arch, &mut c);
    }

    // A name not found once stays not found: ldd fakes an entry for it that later requests
    // match, and a real load stops at the first miss anyway.
    let mut failed: Vec<(String, String)> = Vec::new();
    let mut queue = VecDeque::from([0usize]);
    while let Some(id) = queue.pop_front() {
        let needed = c.objects[id].info.needed.clone();
        for name in needed {
            // A name with a slash is a path: glibc expands its tokens before matching it.
            let key = if name.contains('/') {
                expand_dst(&name, &Dst { origin: c.objects[id].origin(), platform: &platform })
                    .unwrap_or_else(|| name.clone())
            } else {
                name.clone()
            };
            let known = match loaded(&c.objects, &key) {
                Some(to) => Some(Ok(to)),
                None => failed.iter().find(|f| f.0 == name).map(|f| Err(f.1.clone())),
            };
            if let Some(to) = known {
                c.edges.push(Edge { from: id, name, to });
                continue;
            }
            let result = search(env, &c, id, &name, &platform);
            let to = match result.found {
                Some((found_path, host, info)) => {
                    let fid = file_id(&host);
                    match c.objects.iter().position(|o| fid.is_some() && o.file_id == fid) {
                        Some(existing) => {
                            c.objects[existing].names.push(name.clone());
                            Ok(existing)
                        }
                        None => {
                            c.objects.push(Object {
                                path: found_path,
                                host,
                                info,
                                names: vec![name.clone()],
                                loader: Some(id),
                                file_id: fid,
                            });
                            queue.push_back(c.objects.len() - 1);
                            Ok(c.objects.len() - 1)
                        }
                    }
                }
                None => {
                    let why = explain_miss(env, &name, &result);
                    if let Some(fatal) = &result.fatal {
                        c.problems.push(fatal.clone());
                    }
                    failed.push((name.clone(), why.clone()));
                    Err(why)
                }
            };
            c.edges.push(Edge { from: id, name, to });
        }
    }
    note_cycles(&mut c);
    Ok(c)
}

fn file_id(host: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(host).ok().map(|m| (m.dev(), m.ino()))
}

/// glibc's `_dl_name_match_p` plus its DT_SONAME check, over the objects loaded so far.
fn loaded(objects: &[Object], name: &str) -> Option<usize> {
    objects.iter().position(|o| {
        o.path == name || o.names.iter().any(|n| n == name) || o.info.soname.as_deref() == Some(name)
    })
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
    let Ok(info) = crate::elf::read(&host) else {
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
            if t.dirs.is_empty() {
                t.source.clone()
            } else {
                format!("{} ({})", t.source, t.dirs.join(" "))
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
    }
    if !name.contains('/') {
        let hidden: Vec<&String> =
            env.conf_dirs().iter().filter(|d| env.fs.resolve(&format!("{d}/{name}")).is_ok()).collect();
        if let Some(dir) = hidden.first() {
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
    for e in &c.edges {
        if let Ok(to) = e.to {
            if !succ[e.from].contains(&to) {
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
    for cycle in cycles {
        let names: Vec<&str> = cycle.iter().map(|&i| c.objects[i].file_name()).collect();
        c.notes.push(format!(
            "dependency cycle: {} (the loader maps each object once, so this is harmless)",
            names.join(" → ")
        ));
    }
}
