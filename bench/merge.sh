#!/usr/bin/env bash
# Merge benchmark (issue 13): captures from 1, 2, 256 and 1024 points fed to the analyzer
# (analyzer/examples/merge_points.rs: RC SENDs between pairs of hosts, each packet seen at
# both ends, one in 10,000 missing at the receiver, a packet every 100 ns). Per count of
# points: the best ns/frame of RUNS runs and the peak RSS, with a 10 ms match window and
# with the default 500 ms (every packet of the run still waiting at the end); with valgrind,
# the instructions of a 200,000-packet run (steady on a shared machine, unlike the clock).
#
#   bash bench/merge.sh [PACKETS] [RUNS]
#   MERGE_BIN=/path/to/merge_points bash bench/merge.sh   (another build, e.g. an earlier commit's)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1000000}
runs=${2:-5}
bin=${MERGE_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release -q -p rocescope-analyzer --example merge_points
  bin=${CARGO_TARGET_DIR:-target}/release/examples/merge_points
fi
for window in 10 500; do
  echo "== $packets packets, --match-window-ms $window"
  for points in 1 2 256 1024; do
    best=
    for _ in $(seq "$runs"); do
      line=$(/usr/bin/time -f "peak %M" "$bin" "$points" "$packets" "$window" 2>&1)
      ns=$(sed -n 's/.*: \([0-9.]*\) ns\/frame.*/\1/p' <<<"$line")
      kb=$(sed -n 's/^peak \([0-9]*\)$/\1/p' <<<"$line")
      if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $ns < $best else 1)"; then best=$ns; fi
    done
    printf '  %5s points: %7s ns/frame (best of %s), peak RSS %6s MB\n' "$points" "$best" "$runs" \
      "$(python3 -c "print(f'{$kb/1024:.1f}')")"
  done
done
if command -v valgrind >/dev/null; then
  echo "== instructions, 200,000 packets, --match-window-ms 10 (valgrind)"
  for points in 1 2 256 1024; do
    ir=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" "$points" 200000 10 2>&1 \
      | sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p')
    printf '  %5s points: %s\n' "$points" "$ir"
  done
fi
