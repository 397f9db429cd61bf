#!/usr/bin/env bash
# Seeds for linkage_elf from this machine's real ELF files, written into $1: a small library,
# the dynamic loader, an executable, and (with a C compiler) libraries with DT_RPATH and
# DT_RUNPATH as the linker writes them.
set -euo pipefail
out=$1
for f in /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 /usr/lib64/libz.so.1 \
         /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 /bin/true; do
    if [ -f "$f" ]; then
        cp -L "$f" "$out/$(basename "$f")"
    fi
done
if command -v cc >/dev/null; then
    src=$(mktemp --suffix=.c)
    echo 'int f(void) { return 0; }' >"$src"
    cc -shared -fPIC -o "$out/librpath.so" "$src" -Wl,-soname,librpath.so.1,--disable-new-dtags,-rpath,'$ORIGIN/../lib' -lm || true
    cc -shared -fPIC -o "$out/librunpath.so" "$src" -Wl,-soname,librunpath.so.1,--enable-new-dtags,-rpath,'$ORIGIN:/opt/rocm/lib' -lm || true
    rm -f "$src"
fi
