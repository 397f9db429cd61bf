#!/usr/bin/env bash
# Seeds for formats_rocprofv3, written into $1: a small rocprofv3 JSON file shaped as the real
# sample (../shared/formats/rocprofv3) is, with a graph launch, kernels, a copy and a marker;
# plain and gzip.
set -euo pipefail
out=$1
cat >"$out/small_results.json" <<'JSON'
{"rocprofiler-sdk-tool": [{"metadata": {"pid": 908, "init_time": 100, "fini_time": 900},
 "agents": [{"id": {"handle": 1}, "type": 1, "name": "cpu", "logical_node_type_id": 0},
            {"id": {"handle": 2}, "type": 2, "name": "gfx950", "product_name": "AMD Instinct MI350X", "logical_node_type_id": 0}],
 "strings": {"buffer_records": [{"kind": "NONE", "operations": []},
   {"kind": "HIP_RUNTIME_API", "operations": ["hipApiName", "hipGraphLaunch", "hipLaunchKernel"]},
   {"kind": "MEMORY_COPY", "operations": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_DEVICE"]},
   {"kind": "MARKER_CORE_API", "operations": ["roctxMarkA", "roctxRangePushA"]}]},
 "kernel_symbols": [{"kernel_id": 0, "kernel_name": ""}, {"kernel_id": 8, "kernel_name": "k.kd", "formatted_kernel_name": "k"}],
 "buffer_records": {
  "kernel_dispatch": [
   {"kind": 11, "operation": 2, "thread_id": 908, "correlation_id": {"internal": 5, "external": 0}, "start_timestamp": 210, "end_timestamp": 250, "dispatch_info": {"agent_id": {"handle": 2}, "queue_id": {"handle": 16}, "kernel_id": 8}},
   {"kind": 11, "operation": 2, "thread_id": 908, "correlation_id": {"internal": 5, "external": 0}, "start_timestamp": 260, "end_timestamp": 300, "dispatch_info": {"agent_id": {"handle": 2}, "queue_id": {"handle": 16}, "kernel_id": 8}}],
  "hip_api": [{"kind": 1, "operation": 1, "thread_id": 908, "correlation_id": {"internal": 5, "external": 0}, "start_timestamp": 150, "end_timestamp": 200}],
  "memory_copy": [{"kind": 2, "operation": 1, "correlation_id": {"internal": 6, "external": 0}, "start_timestamp": 310, "end_timestamp": 320, "dst_agent_id": {"handle": 2}, "src_agent_id": {"handle": 1}}],
  "marker_api": [{"kind": 3, "operation": 1, "thread_id": 908, "correlation_id": {"internal": 7, "external": 0}, "start_timestamp": 140, "end_timestamp": 330}]}}]}
JSON
gzip -c "$out/small_results.json" >"$out/small_results.json.gz"
