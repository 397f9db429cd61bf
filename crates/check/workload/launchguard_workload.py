"""launchguard's graph-replay workload, run with the user's own Python and PyTorch.

Protocol (launchguard.workload/1): `python3 launchguard_workload.py CONFIG.json`.
- CONFIG names the workload, the result path and the trace path (chosen by launchguard).
- Progress: one JSON object per line on stdout: {"event": "phase", "phase": ..., "state": "start"|"done", ...}.
- Result: a JSON file at config["result_path"] with status "ok", or "skip" with a reason when this
  machine cannot run the workload (no torch, no GPU). A crash is a non-zero exit; launchguard shows
  the stderr tail.
- The script measures; it never decides pass or fail. launchguard does.

Phases, in this order, in one process: inventory; build + capture one graph; unprofiled replays
(before any profiler touched the process): timed one by one, back to back, and step-synchronous
(each replay's output read back before the next launch, as a server reads each decode step's
tokens); a profiled session under torch.profiler; unprofiled replays again (what the profiler
leaves behind).

An injected delay (`inject_delay_us`, to test the guard itself) is busy-waited before every
`inject_every`-th graph launch of each phase (1: every launch), counted from the phase's start.

With WORLD_SIZE > 1 (set by launchguard, torchrun-style), each rank holds a tensor-parallel shard
of the model (column-parallel QKV and up-projection, row-parallel output and down-projection, an
all_reduce after each) and the phases are aligned by barriers.
"""

import json
import os
import platform
import sys
import time

PROTOCOL = "launchguard.workload/1"

# Variables that load profiling or interception layers into a process, or change how they behave.
LAYER_ENV_NAMES = [
    "LD_PRELOAD", "LD_LIBRARY_PATH", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH",
    "HSA_TOOLS_LIB", "HSA_TOOLS_REPORT_LOAD_FAILURE", "HSA_TOOLS_DISABLE_REGISTER",
    "HSA_TOOLS_ROCPROFILER_V1_TOOLS", "ROCP_TOOL_LIBRARIES", "ROCP_TOOL_ATTACH",
    "ROCPROFILER_QUEUE_INTERPOSITION", "GPU_CLR_PROFILE_OUTPUT", "TEARDOWN_CUPTI",
    "DISABLE_CUPTI_LAZY_REINIT", "KINETO_USE_DAEMON", "KINETO_CONFIG", "KINETO_LOG_LEVEL",
    "CUDA_LAUNCH_BLOCKING", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS", "NCCL_GRAPH_MIXING_SUPPORT",
]
LAYER_ENV_PREFIXES = ["ROCPROFILER_REGISTER_", "ROCPROFILER_", "ROCP_", "KINETO_"]


def emit(event, **fields):
    fields["event"] = event
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class Phase:
    """Reports a phase's start and end on stdout, and keeps its wall time."""

    def __init__(self, timings, name, rank):
        self.timings, self.name, self.rank = timings, name, rank

    def __enter__(self):
        self.t0 = time.perf_counter()
        emit("phase", phase=self.name, state="start", rank=self.rank)
        return self

    def __exit__(self, exc_type, exc, tb):
        dt = time.perf_counter() - self.t0
        self.timings[self.name + "_s"] = dt
        if exc_type is None:
            emit("phase", phase=self.name, state="done", seconds=round(dt, 3), rank=self.rank)
        return False


def write_json_atomic(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, path)


def mapped_libraries():
    """Shared objects mapped into this process right now (/proc/self/maps)."""
    libs = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if ".so" in os.path.basename(path) and path not in libs:
                        libs.append(path)
    except OSError:
        pass
    return libs


def layer_env():
    out = {}
    for k, v in os.environ.items():
        if k in LAYER_ENV_NAMES or any(k.startswith(p) for p in LAYER_ENV_PREFIXES):
            out[k] = v
    return out


def driver_version(torch):
    """The GPU driver's version, without extra packages."""
    import ctypes
    if getattr(torch.version, "hip", None):
        try:
            with open("/sys/module/amdgpu/version") as f:
                return "amdgpu " + f.read().strip()
        except OSError:
            return None
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0:
            return "%d.%d" % (v.value // 1000, (v.value % 1000) // 10)
    except OSError:
        return None
    return None


def busy_wait_us(us):
    """Spins for `us` microseconds: an injected per-launch overhead, to test the guard itself."""
    if us <= 0:
        return
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


class Injector:
    """The injected delay: `us` busy-waited before every `every`-th launch (the every-th,
    2·every-th, … of a phase; `reset()` starts a phase)."""

    def __init__(self, us, every):
        self.us, self.every, self.count = us, max(1, int(every)), 0

    def reset(self):
        self.count = 0

    def __call__(self):
        self.count += 1
        if self.us > 0 and self.count % self.every == 0:
            busy_wait_us(self.us)


def build_model(torch, cfg, world, rank):
    """The preset's model, sharded over `world` ranks when world > 1."""
    nn = torch.nn
    F = torch.nn.functional
    dist = torch.distributed if world > 1 else None
    hidden, heads = cfg["hidden"], cfg["heads"]
    kv_heads = cfg.get("kv_heads") or heads
    head_dim = cfg.get("head_dim") or hidden // heads
    ffn = cfg.get("ffn") or 4 * hidden
    arch = cfg.get("arch", "gpt")
    if heads % world or kv_heads % world or ffn % world:
        raise ValueError("heads (%d), kv_heads (%d) and ffn (%d) must divide by tp=%d" % (heads, kv_heads, ffn, world))
    lh, lkv, lffn = heads // world, kv_heads // world, ffn // world

    def all_reduce(x):
        if dist is not None:
            dist.all_reduce(x)
        return x

    class GptBlock(nn.Module):
        # LayerNorm, QKV, SDPA, output projection, LayerNorm, GELU MLP: the ATOM test's block.
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(hidden)
            # No biases, as in the ATOM test's block (one GEMM per projection, no extra adds).
            self.qkv = nn.Linear(hidden, 3 * lh * head_dim, bias=False)
            self.out = nn.Linear(lh * head_dim, hidden, bias=False)
            self.ln2 = nn.LayerNorm(hidden)
            self.up = nn.Linear(hidden, lffn, bias=False)
            self.down = nn.Linear(lffn, hidden, bias=False)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, lh, head_dim).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v)
            x = x + all_reduce(self.out(a.transpose(1, 2).reshape(b, t, lh * head_dim)))
            return x + all_reduce(self.down(F.gelu(self.up(self.ln2(x)))))

    class Qwen3Block(nn.Module):
        # Qwen3's decoder layer shapes: RMSNorm, q/k/v with grouped-query attention and per-head
        # RMSNorm on q and k, rotary embeddings, o_proj, RMSNorm, SiLU-gated MLP.
        def __init__(self):
            super().__init__()
            self.ln1 = nn.RMSNorm(hidden, eps=1e-6)
            self.q = nn.Linear(hidden, lh * head_dim, bias=False)
            self.k = nn.Linear(hidden, lkv * head_dim, bias=False)
            self.v = nn.Linear(hidden, lkv * head_dim, bias=False)
            self.q_norm = nn.RMSNorm(head_dim, eps=1e-6)
            self.k_norm = nn.RMSNorm(head_dim, eps=1e-6)
            self.o = nn.Linear(lh * head_dim, hidden, bias=False)
            self.ln2 = nn.RMSNorm(hidden, eps=1e-6)
            self.gate = nn.Linear(hidden, lffn, bias=False)
            self.up = nn.Linear(hidden, lffn, bias=False)
            self.down = nn.Linear(lffn, hidden, bias=False)

        def forward(self, x, cos, sin):
            b, t, _ = x.shape
            h = self.ln1(x)
            q = self.q_norm(self.q(h).view(b, t, lh, head_dim)).transpose(1, 2)
            k = self.k_norm(self.k(h).view(b, t, lkv, head_dim)).transpose(1, 2)
            v = self.v(h).view(b, t, lkv, head_dim).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            if lkv != lh:
                k = k.repeat_interleave(lh // lkv, dim=1)
                v = v.repeat_interleave(lh // lkv, dim=1)
            a = F.scaled_dot_product_attention(q, k, v)
            x = x + all_reduce(self.o(a.transpose(1, 2).reshape(b, t, lh * head_dim)))
            h = self.ln2(x)
            return x + all_reduce(self.down(F.silu(self.gate(h)) * self.up(h)))

    def rotate(x, cos, sin):
        x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            block = Qwen3Block if arch == "qwen3" else GptBlock
            self.layers = nn.ModuleList([block() for _ in range(cfg["layers"])])
            if arch == "qwen3":
                # Rotary tables for position 0..seq-1, theta 1e6.
                inv = 1.0 / (1e6 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
                ang = torch.outer(torch.arange(cfg["seq"], dtype=torch.float32), inv)
                emb = torch.cat((ang, ang), dim=-1)
                self.register_buffer("cos", emb.cos()[None, None])
                self.register_buffer("sin", emb.sin()[None, None])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x, self.cos, self.sin) if arch == "qwen3" else layer(x)
            return x

    return Model()


def replay_us(g, inject):
    """Host time of one replay with its injected delay, µs: the clock read just around them."""
    t0 = time.perf_counter_ns()
    inject()
    g.replay()
    return (time.perf_counter_ns() - t0) / 1000.0


def measure_host(torch, g, n, inject, stream):
    """Host cost of each replay: a monotonic clock around (injected delay +) `replay()`.

    Replays run in short bursts with a synchronize between them (not timed), so the launch queue
    never fills and a replay never waits for the GPU to make room.
    """
    samples = []
    burst = 10
    inject.reset()
    for start in range(0, n, burst):
        for _ in range(min(burst, n - start)):
            samples.append(replay_us(g, inject))
        stream.synchronize()
    return samples


def measure_steady(torch, g, n, inject, stream):
    """Host cost of each of `n` back-to-back replays with no synchronize in between, as a serving
    loop replays: if `replay()` blocks until the GPU is done (NCCL collectives in the graph do that),
    the CPU cannot run ahead and each call lasts as long as the GPU's replay."""
    samples = []
    stream.synchronize()
    inject.reset()
    for _ in range(n):
        samples.append(replay_us(g, inject))
    stream.synchronize()
    return samples


def measure_sync(torch, g, out, n, inject, stream):
    """Step-synchronous replays, as a server decodes: each replay's output is read back to the
    host (a few values, as a server reads each step's tokens) before the next launch, so nothing
    queues ahead and every host cost adds to the step. Returns the host time of each whole step
    (injected delay, launch, the GPU's replay, the read-back), µs, and the GPU time of each
    replay from device events recorded around it, µs (with the stream idle at each launch, that
    span also holds whatever of the launch's own host time elapsed before its first kernel)."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    steps = []
    stream.synchronize()
    inject.reset()
    # The output is an inference tensor: its views are taken where inference tensors may be.
    with torch.inference_mode():
        tokens = out.reshape(-1)[:8]
        # Untimed steps first: the first read-back sets up its copy path.
        for _ in range(5):
            g.replay()
            tokens.cpu()
        for i in range(n):
            t0 = time.perf_counter_ns()
            inject()
            starts[i].record(stream)
            g.replay()
            ends[i].record(stream)
            # .cpu() copies and waits for the stream: the step's result is on the host.
            tokens.cpu()
            steps.append((time.perf_counter_ns() - t0) / 1000.0)
    stream.synchronize()
    return steps, [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]


def measure_gpu(torch, g, n, stream):
    """GPU time per replay: device events around `n` back-to-back replays (no injected delay, so
    the GPU never waits for the host)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    stream.synchronize()
    start.record(stream)
    for _ in range(n):
        g.replay()
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) * 1000.0 / n


def summary(samples):
    s = sorted(samples)
    if not s:
        return {}
    def pct(p):
        pos = p / 100.0 * (len(s) - 1)
        lo, hi = int(pos), min(int(pos) + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)
    return {"p50_us": pct(50), "p99_us": pct(99), "mean_us": sum(s) / len(s), "min_us": s[0], "max_us": s[-1]}


def run(cfg):
    timings = {}
    t_start = time.perf_counter()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    result_path = cfg["result_path"].replace("{rank}", str(rank))
    result = {"schema": PROTOCOL, "status": "ok", "rank": rank, "world_size": world,
              "inventory": {"host": platform.node(), "python": sys.executable,
                            "python_version": platform.python_version(), "layer_env": layer_env()}}

    def skip(reason):
        result["status"] = "skip"
        result["reason"] = reason
        write_json_atomic(result_path, result)
        return 0

    try:
        with Phase(timings, "import", rank):
            import torch
    except ImportError as e:
        return skip("torch is not installed for %s (%s)" % (sys.executable, e))
    inv = result["inventory"]
    inv["torch"] = torch.__version__
    inv["cuda"] = getattr(torch.version, "cuda", None)
    inv["hip"] = getattr(torch.version, "hip", None)
    if not torch.cuda.is_available():
        return skip("no GPU visible to PyTorch %s (torch.cuda.is_available() is False)" % torch.__version__)

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device_index = cfg.get("device", 0) + (local_rank if world > 1 else 0)
    if device_index >= torch.cuda.device_count():
        return skip("GPU %d requested but only %d visible" % (device_index, torch.cuda.device_count()))
    torch.cuda.set_device(device_index)
    device = torch.device("cuda", device_index)

    with Phase(timings, "inventory", rank):
        inv["gpu_name"] = torch.cuda.get_device_name(device_index)
        inv["gpu_count"] = torch.cuda.device_count()
        inv["device_index"] = device_index
        inv["driver"] = driver_version(torch)
        inv["mapped_libraries"] = mapped_libraries()
        if world > 1:
            import torch.distributed as dist
            dist.init_process_group("nccl", device_id=device)
            inv["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
            # One token per run, rank 0's, on every rank: launchguard tells this run's results
            # from a previous run's left in the same folder.
            token = [os.urandom(8).hex() if rank == 0 else None]
            dist.broadcast_object_list(token, src=0)
            result["session"] = token[0]
        else:
            result["session"] = os.urandom(8).hex()

    def barrier():
        if world > 1:
            torch.distributed.barrier(device_ids=[device_index])

    dtype = getattr(torch, cfg.get("dtype", "float16"))
    delay_us = float(cfg.get("inject_delay_us", 0))
    delay_ranks = cfg.get("inject_delay_ranks")
    if delay_ranks is not None and rank not in delay_ranks:
        delay_us = 0.0
    inject = Injector(delay_us, cfg.get("inject_every", 1))
    with Phase(timings, "capture", rank):
        torch.manual_seed(1234)
        model = build_model(torch, cfg, world, rank).to(device=device, dtype=dtype).eval()
        x = torch.randn(cfg["batch"], cfg["seq"], cfg["hidden"], device=device, dtype=dtype)
        with torch.inference_mode():
            for _ in range(cfg.get("eager_warmups", 0)):
                model(x)
        torch.cuda.synchronize(device)
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.inference_mode():
            # Warm up eagerly on a side stream, as PyTorch requires before capture.
            with torch.cuda.stream(side):
                for _ in range(3):
                    model(x)
            torch.cuda.current_stream(device).wait_stream(side)
            torch.cuda.synchronize(device)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                y = model(x)
        torch.cuda.synchronize(device)
        stream = torch.cuda.current_stream(device)
        for _ in range(cfg["warmups"]):
            g.replay()
        stream.synchronize()
        barrier()

    phases = {}
    with Phase(timings, "before", rank):
        gpu = measure_gpu(torch, g, cfg["gpu_replays"], stream)
        barrier()
        host = measure_host(torch, g, cfg["host_replays"], inject, stream)
        barrier()
        steady = measure_steady(torch, g, cfg["host_replays"], inject, stream)
        barrier()
        sync_steps, sync_gpu = measure_sync(torch, g, y, cfg["host_replays"], inject, stream)
        phases["before"] = {"host_us": host, "steady_host_us": steady, "gpu_us_per_replay": gpu,
                            "sync_step_us": sync_steps, "sync_gpu_us": sync_gpu, **summary(host)}
        barrier()

    with Phase(timings, "profiled", rank):
        from torch.profiler import ProfilerActivity, profile, record_function
        trace_path = cfg["trace_path"].replace("{rank}", str(rank))
        host = []
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            barrier()
            inject.reset()
            for _ in range(cfg["replays"]):
                with record_function(cfg.get("annotation", "launchguard::replay")):
                    t0 = time.perf_counter_ns()
                    inject()
                    g.replay()
                    host.append((time.perf_counter_ns() - t0) / 1000.0)
            torch.cuda.synchronize(device)
        t_export = time.perf_counter()
        prof.export_chrome_trace(trace_path)
        timings["export_s"] = time.perf_counter() - t_export
        phases["profiled"] = {"host_us": host, "trace_path": trace_path, **summary(host)}
        inv["mapped_libraries_after_profiler"] = [p for p in mapped_libraries() if p not in inv["mapped_libraries"]]
        barrier()

    with Phase(timings, "after", rank):
        host = measure_host(torch, g, cfg["host_replays"], inject, stream)
        gpu = measure_gpu(torch, g, cfg["gpu_replays"], stream)
        phases["after"] = {"host_us": host, "gpu_us_per_replay": gpu, **summary(host)}
        barrier()

    del y
    result["phases"] = phases
    timings["total_s"] = time.perf_counter() - t_start
    result["timings"] = timings
    write_json_atomic(result_path, result)
    emit("result", rank=rank)
    if world > 1:
        # Everything is measured and written. NCCL teardown after graph-captured collectives is
        # not needed for that and must not be able to hang the guard: leave without it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


def main():
    # launchguard sends SIGUSR1 before it kills a workload that outlived its timeout: the Python
    # stacks of every thread then show where it hung.
    import faulthandler
    import signal
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if len(sys.argv) != 2:
        sys.stderr.write("usage: launchguard_workload.py CONFIG.json\n")
        return 2
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
    if cfg.get("schema") != "launchguard.workload-config/1":
        sys.stderr.write("unsupported config schema %r\n" % cfg.get("schema"))
        return 2
    return run(cfg)


if __name__ == "__main__":
    sys.exit(main())
