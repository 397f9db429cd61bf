#!/usr/bin/env bash
# Seeds for linkage_resolve from this machine's real files, written into $1, in the target's
# input format (sections separated by "\n==\n": ld.so.cache bytes, ld.so.conf text, then
# "PATH [MODE]\n" files; see crates/linkage/src/fuzzing.rs): the real ld.so.cache, ld.so.conf
# and ld.so.conf.d files, with a real library laid out as a torch installation.
set -euo pipefail
out=$1
nl=$'\n'
sep=$'\n==\n'
lib=""
for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64; do
    if [ -f "$d/libz.so.1" ]; then lib=$d; break; fi
done
[ -n "$lib" ] || exit 0
conf=$(cat /etc/ld.so.conf 2>/dev/null || true)
confd=""
for f in /etc/ld.so.conf.d/*.conf; do
    if [ -f "$f" ]; then confd+="$sep$f$nl$(cat "$f")"; fi
done
{
    cat /etc/ld.so.cache 2>/dev/null || true
    printf '%s' "$sep$conf$sep/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so$nl"
    cat "$lib/libz.so.1"
    printf '%s' "$confd"
} >"$out/real-cache-conf-libz-as-torch"
{
    printf '%s' "$sep$conf$sep/opt/t/libtorch_cpu.so$nl"
    cat "$lib/libz.so.1"
    printf '%s' "$confd$sep$lib/libc.so.6 spec${nl}soname libc.so.6"
} >"$out/no-cache-libz-conf-dirs"
