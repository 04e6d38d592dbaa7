#!/usr/bin/env bash
# Parallel report benchmark (issue 13): `rocescope report --threads N` on a header-only
# capture (128-byte snap) of RDMA WRITEs over many QPs, for N = 1, 2, 4 and every core
# count up to the machine's: wall time (hyperfine, median) and CPU time; then what the
# design predicts on 4 to 64 free cores; then the machine's own ceiling for this work.
#
# Two threads (the default with two cores or more) work in two stages (src/pipelined.rs,
# analyzer/src/pipeline.rs, 2026-12-08): one reads the file, classifies each frame and
# checks it for a mirror's copy, the other analyses it; the row "2 (shards)" is the same two
# threads as two shards of host pairs (ROCESCOPE_PIPELINE=0), the design below.
#
# More threads (src/divided.rs, analyzer/src/divide.rs and parallel.rs, issue 39): the first
# shard decodes every frame and runs the capture-wide pass on it (totals, priorities, pause
# timelines, MAC table, fabric series, marks, fan-in), and keeps the flows of a part of the
# host pairs; the others decode only their own pairs' frames. Each thread reads the whole
# file, or, with a core to spare, one walker reads it once and hands each shard its records.
# The first shard's part is analyzer/src/parallel.rs first_fraction, fitted on the pumps
# measured per thread (24% at two, none from three on). With one thread's work split into the
# walker's w, the first shard's floor d (decoding and the capture-wide pass on every frame),
# what all the pairs' flows add to it p, and what decoding and analysing all the pairs cost
# another shard q, the first shard's wall is d + s*p and each other's (1 - s)/(N - 1)*q; the
# walker runs beside them (w). The capture-wide state is not yet divided among the shards
# (not mergeable as kept: the fan-in's and the fabric's bins, the MAC table's station and the
# pause counts are running figures), so d bounds the speedup at any thread count.
#
#   bash bench/threads.sh [FRAMES] [QPS]     (default 10,000,000 frames over 10,000 QPs)
#
# On a machine with 16 or more cores, the measured rows beside the predicted ones are the
# measurement plan: run it there and compare.
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-10000000}
qps=${2:-10000}
work=$(mktemp -d /tmp/rocescope-threads-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)"; exit 1; }
# The binaries are ${CARGO_TARGET_DIR:-target}/release's, as cargo builds them.
bin=${CARGO_TARGET_DIR:-target}/release
cargo build --release -q -p rocescope -p rocescope-samplegen
f="$work/bulk.pcap"
$bin/rocescope-samplegen --bulk "$f" --packets "$frames" --qps "$qps" --payload 1024 --snap 128 >/dev/null
cat "$f" >/dev/null # page cache
cores=$(nproc)
counts=(1 2 4)
for n in 8 16 32 64; do [ "$n" -le "$cores" ] && counts+=("$n"); done
echo "$frames frames over $qps QPs ($(du -h "$f" | cut -f1)), $cores cores"
printf "%12s %10s %10s %10s\n" threads wall_s cpu_s speedup
rows=()
for n in "${counts[@]}"; do
  hyperfine -N -w 1 -r 3 --export-json "$work/hf.json" \
    "$bin/rocescope report -q -r $f --threads $n" >/dev/null 2>&1
  wall=$(python3 -c "import json; print(json.load(open('$work/hf.json'))['results'][0]['median'])")
  cpu=$( { /usr/bin/time -f "%U %S" $bin/rocescope report -q -r "$f" --threads "$n" >/dev/null; } 2>&1 | tail -1 | awk '{print $1 + $2}')
  rows+=("$n $wall $cpu")
done
# The same two threads as two shards of host pairs.
hyperfine -N -w 1 -r 3 --export-json "$work/hf.json" \
  "env ROCESCOPE_PIPELINE=0 $bin/rocescope report -q -r $f --threads 2" >/dev/null 2>&1
shards2=$(python3 -c "import json; print(json.load(open('$work/hf.json'))['results'][0]['median'])")
python3 - "$cores" "$shards2" "${rows[@]}" <<'PY'
import sys
cores, shards2 = int(sys.argv[1]), float(sys.argv[2])
rows = [tuple(float(x) for x in r.split()) for r in sys.argv[3:]]
t1 = next(w for n, w, c in rows if n == 1)
for n, w, c in rows:
    label = f"{int(n)} (stages)" if n == 2 else f"{int(n)}"
    print(f"{label:>12s} {w:10.2f} {c:10.2f} {t1 / w:9.2f}x")
print(f"{'2 (shards)':>12s} {shards2:10.2f} {'':>10s} {t1 / shards2:9.2f}x")
# The prediction, with the parts of one thread's work measured per thread (callgrind
# `--separate-threads`, the divided reading, 200,000 of these frames over 10,000 QPs,
# 2026-12-07), and the first shard's part as analyzer/src/parallel.rs computes it.
w, d, p, q = 0.14, 0.53, 0.25, 0.75
def first(n):
    # parallel.rs first_fraction's model and constants.
    F, P, R, Q = 0.66, 0.23, 0.17, 0.715
    if n <= 1:
        return 1.0
    qn = Q / (n - 1)
    return min(max((R + qn - F) / (P + qn), 0.0), 1.0 / n)
print("predicted for shards (3 threads and more) on a machine with that many free cores and one more for the walker (one thread's work = 1):")
for n in (2, 4, 8, 16, 32, 64):
    s = first(n)
    wall = max(w, d + s * p, (1 - s) / (n - 1) * q)
    print(f"  {n:3d} threads: first shard keeps {s:.0%} of the pairs, {1 / wall:.2f}x")
print(f"  limit: {1 / d:.2f}x (the first shard's decoding and capture-wide pass on every frame; "
      f"with them divided among the shards too, the walker's {1 / w:.1f}x)")
PY
# The machine's own ceiling for this work: two independent one-thread reports at once, as
# many as there are cores (nothing shared between them but the cores, caches and memory
# bus). Their throughput against one alone bounds what any number of shards could reach.
if [ "$cores" -ge 2 ]; then
  hyperfine -N -w 1 -r 3 --export-json "$work/one.json" "$bin/rocescope report -q -r $f --threads 1" >/dev/null 2>&1
  one=$(python3 -c "import json; print(json.load(open('$work/one.json'))['results'][0]['median'])")
  runs=()
  for _ in 1 2 3; do
    s=$(date +%s.%N)
    for _ in $(seq "$cores"); do $bin/rocescope report -q -r "$f" --threads 1 >/dev/null & done
    wait
    e=$(date +%s.%N)
    runs+=("$(echo "$e - $s" | bc)")
  done
  python3 - "$one" "$cores" "${runs[@]}" <<'PY'
import statistics, sys
one, cores, runs = float(sys.argv[1]), int(sys.argv[2]), [float(x) for x in sys.argv[3:]]
many = statistics.median(runs)
print(f"{cores} independent one-thread reports at once: {many:.2f} s (one alone: {one:.2f} s); "
      f"the machine's ceiling for this work: {cores * one / many:.2f}x")
PY
fi
