#!/usr/bin/env bash
# Exporter benchmark: 1 M header-only frames over N QPs (default 1,000, 10,000 and
# 100,000): time until the file's final figures are served, the size and series count of one
# scrape and its latency, and the exporter's peak memory. The series count must stay bounded
# by --top-flows (100) however many QPs there are.
#
#   bash bench/export.sh [QPS...]
set -euo pipefail
cd "$(dirname "$0")/.."
qps_list=("${@:-1000 10000 100000}")
[ $# -gt 0 ] || qps_list=(1000 10000 100000)
work=$(mktemp -d /tmp/rocescope-export-bench.XXXXXX)
trap 'pkill -INT -f "rocescope export -r $work" 2>/dev/null || true; rm -rf "$work"' EXIT
# The binaries are ${CARGO_TARGET_DIR:-target}/release's, as cargo builds them.
bin=${CARGO_TARGET_DIR:-target}/release
cargo build --release -q -p rocescope -p rocescope-samplegen
port=19464
printf "%8s %10s %12s %10s %8s %10s\n" QPs analysed scrape_ms bytes series peak_MB
for q in "${qps_list[@]}"; do
  f="$work/$q.pcap"
  $bin/rocescope-samplegen --bulk "$f" --packets 1000000 --qps "$q" --payload 256 --snap 128 >/dev/null
  cat "$f" >/dev/null
  port=$((port + 1))
  /usr/bin/time -f "%M" -o "$work/rss" $bin/rocescope export -r "$f" --listen "127.0.0.1:$port" 2>/dev/null &
  t0=$(date +%s.%N)
  until curl -s "127.0.0.1:$port/healthz" 2>/dev/null | grep -q '"done":true'; do sleep 0.05; done
  t1=$(date +%s.%N)
  ms=$(curl -s -o "$work/m.txt" -w "%{time_total}" "127.0.0.1:$port/metrics")
  series=$(grep -vc '^#' "$work/m.txt")
  bytes=$(wc -c <"$work/m.txt")
  pkill -INT -f "rocescope export -r $f"
  wait
  printf "%8s %9.2fs %12.1f %10s %8s %10.0f\n" "$q" "$(echo "$t1 - $t0" | bc)" "$(echo "$ms * 1000" | bc)" "$bytes" "$series" "$(echo "$(cat "$work/rss") / 1024" | bc)"
done
