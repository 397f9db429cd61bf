#!/usr/bin/env bash
# Is the GPU host's 2-vCPU slowdown in the kernel's mapping of the file (one process, two
# threads) or in the CPUs (two processes at once slow each other too)?
set -u
K=$PWD/.device-carry/rb9
date -u; lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz"; uname -r
mkdir -p /tmp/lgt; a=/tmp/lgt/t300.json; m=/tmp/lgt/mixed300.json
python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300 >/dev/null
python3 bench/gen_mixed.py $m --mb 300 $(ls $K/shared/traces/public/*/*) >/dev/null
cat $a $m > /dev/null; date -u
TIMEFORMAT="%R %U %S"
t() { { time "$@" >/dev/null 2>&1; } 2>&1; }
echo "## a file's bytes into a process (touch.c, every cache line of mixed300.json)"
for rep in 1 2 3; do
  for mode in 0 2 1; do
    taskset -c 0 $K/touch $m $mode 1 | sed 's/^/cpu0: /'
    taskset -c 0,1 $K/touch $m $mode 2 | sed 's/^/cpus 0,1: /'
    taskset -c 0,8 $K/touch $m $mode 2 | sed 's/^/cpus 0,8: /'
    x=$( (taskset -c 0 $K/touch $m $mode 1) & (taskset -c 1 $K/touch $m $mode 1) & wait )
    echo "two processes at once, cpu0 and cpu1: $(echo $x)"
  done
done
echo "## the reader of 5c6bd8a: wall user sys, s"
for rep in 1 2 3 4 5; do
  for f in $a $m; do
    b=$(basename $f)
    echo "$b, 1 thread on cpu0: $(RAYON_NUM_THREADS=1 t taskset -c 0 $K/read $f)"
    echo "$b, 2 threads on cpus 0,1: $(RAYON_NUM_THREADS=2 t taskset -c 0,1 $K/read $f)"
    echo "$b, 2 threads on cpus 0,8: $(RAYON_NUM_THREADS=2 t taskset -c 0,8 $K/read $f)"
    x=$( (RAYON_NUM_THREADS=1 t taskset -c 0 $K/read $f) & (RAYON_NUM_THREADS=1 t taskset -c 1 $K/read $f) & wait )
    echo "$b, two processes at once, 1 thread each on cpu0 and cpu1: $(echo $x)"
  done
done
date -u
