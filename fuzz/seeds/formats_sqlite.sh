#!/usr/bin/env bash
# Seeds for formats_sqlite, written into $1 with the sqlite3 shell: a small rocpd database in
# each of the two schemas of rocprofiler-sdk's source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql
# (times in the rows; times in rocpd_timestamp, agents and queues in rocpd_track), and a small
# Nsight Systems export with the tables and columns of the real ones in ../shared/formats/nsys.
set -euo pipefail
out=$1
command -v sqlite3 >/dev/null || { echo "formats_sqlite seeds need the sqlite3 shell" >&2; exit 0; }
u=_0a1b
sqlite3 "$out/rocpd.db" <<SQL
CREATE TABLE rocpd_string$u (id INTEGER PRIMARY KEY, guid TEXT, string TEXT);
CREATE TABLE rocpd_info_agent$u (id INTEGER PRIMARY KEY, type TEXT, type_index INTEGER, logical_index INTEGER, product_name TEXT);
CREATE TABLE rocpd_info_thread$u (id INTEGER PRIMARY KEY, tid INTEGER);
CREATE TABLE rocpd_info_process$u (id INTEGER PRIMARY KEY, pid INTEGER, environment TEXT);
CREATE TABLE rocpd_info_kernel_symbol$u (id INTEGER PRIMARY KEY, kernel_name TEXT, display_name TEXT);
CREATE TABLE rocpd_event$u (id INTEGER PRIMARY KEY, category_id INTEGER, correlation_id INTEGER);
CREATE TABLE rocpd_region$u (id INTEGER PRIMARY KEY, tid INTEGER, start INTEGER, "end" INTEGER, name_id INTEGER, event_id INTEGER);
CREATE TABLE rocpd_kernel_dispatch$u (id INTEGER PRIMARY KEY, agent_id INTEGER, kernel_id INTEGER, queue_id INTEGER, stream_id INTEGER, start INTEGER, "end" INTEGER, event_id INTEGER);
CREATE TABLE rocpd_memory_copy$u (id INTEGER PRIMARY KEY, start INTEGER, "end" INTEGER, name_id INTEGER, dst_agent_id INTEGER, src_agent_id INTEGER, queue_id INTEGER, event_id INTEGER);
CREATE VIEW rocpd_kernel_dispatch AS SELECT * FROM rocpd_kernel_dispatch$u;
INSERT INTO rocpd_string$u VALUES (1,'g','hipGraphLaunch'),(2,'g','HIP_RUNTIME_API'),(3,'g','MEMORY_COPY_HOST_TO_DEVICE'),(4,'g','MARKER_CORE_API'),(5,'g','step');
INSERT INTO rocpd_info_agent$u VALUES (1,'CPU',0,0,'cpu'),(2,'GPU',0,1,'AMD Instinct MI300X');
INSERT INTO rocpd_info_thread$u VALUES (1,4242);
INSERT INTO rocpd_info_process$u VALUES (1,4242,'{"RANK":"1","WORLD_SIZE":"2"}');
INSERT INTO rocpd_info_kernel_symbol$u VALUES (1,'k.kd','k');
INSERT INTO rocpd_event$u VALUES (1,2,5),(2,NULL,5),(3,NULL,5),(4,NULL,6),(5,4,0);
INSERT INTO rocpd_region$u VALUES (1,1,100,150,1,1),(2,1,90,400,5,5);
INSERT INTO rocpd_kernel_dispatch$u VALUES (1,2,1,7,1,160,200,2),(2,2,1,7,1,210,260,3);
INSERT INTO rocpd_memory_copy$u VALUES (1,270,300,3,2,1,7,4);
SQL
sqlite3 "$out/rocpd_tracks.db" <<SQL
CREATE TABLE rocpd_string$u (id INTEGER PRIMARY KEY, string TEXT);
CREATE TABLE rocpd_info_agent$u (id INTEGER PRIMARY KEY, type TEXT, type_index INTEGER, product_name TEXT);
CREATE TABLE rocpd_info_thread$u (id INTEGER PRIMARY KEY, tid INTEGER);
CREATE TABLE rocpd_info_kernel_symbol$u (id INTEGER PRIMARY KEY, kernel_name TEXT, display_name TEXT);
CREATE TABLE rocpd_track$u (id INTEGER PRIMARY KEY, tid INTEGER, agent_id INTEGER, queue_id INTEGER, stream_id INTEGER);
CREATE TABLE rocpd_timestamp$u (id INTEGER PRIMARY KEY, value INTEGER, phase INTEGER, track_id INTEGER);
CREATE TABLE rocpd_event$u (id INTEGER PRIMARY KEY, category_id INTEGER, correlation_id INTEGER);
CREATE TABLE rocpd_region$u (id INTEGER PRIMARY KEY, track_id INTEGER, name_id INTEGER, start_id INTEGER, end_id INTEGER, event_id INTEGER);
CREATE TABLE rocpd_kernel_dispatch$u (id INTEGER PRIMARY KEY, track_id INTEGER, kernel_id INTEGER, start_id INTEGER, end_id INTEGER, event_id INTEGER);
INSERT INTO rocpd_string$u VALUES (1,'hipGraphLaunch'),(2,'HIP_RUNTIME_API');
INSERT INTO rocpd_info_agent$u VALUES (2,'GPU',0,'AMD Instinct MI300X');
INSERT INTO rocpd_info_thread$u VALUES (1,4242);
INSERT INTO rocpd_info_kernel_symbol$u VALUES (1,'k.kd','k');
INSERT INTO rocpd_track$u VALUES (1,1,NULL,NULL,NULL),(2,NULL,2,7,1);
INSERT INTO rocpd_timestamp$u VALUES (1,100,1,1),(2,150,2,1),(3,160,1,2),(4,200,2,2);
INSERT INTO rocpd_event$u VALUES (1,2,5),(2,NULL,5);
INSERT INTO rocpd_region$u VALUES (1,1,1,1,2,1);
INSERT INTO rocpd_kernel_dispatch$u VALUES (1,2,1,3,4,2);
SQL
sqlite3 "$out/nsys.sqlite" <<'SQL'
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER, shortName INTEGER, graphNodeId INTEGER, graphId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER, graphId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER, textId INTEGER);
INSERT INTO StringIds VALUES (1,'cudaGraphLaunch_v10000'),(2,'kern'),(3,'cudaLaunchKernel_v7000'),(4,'probe::replay');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (59,'NvtxPushPopRange','NvtxPushPopRange');
INSERT INTO TARGET_INFO_GPU VALUES (0,'NVIDIA H200');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (160,200,0,7,5,2,2,1,1),(210,260,0,7,5,2,2,2,1),(300,320,0,7,9,2,2,NULL,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (330,340,0,7,10,8,2,2);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (350,360,0,7,11,2);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100,150,0,281474993487873,5,1),(280,290,0,281474993487873,9,3);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (400,500,0,7,12,3);
INSERT INTO NVTX_EVENTS VALUES (90,370,59,NULL,281474993487873,4);
SQL
