#!/usr/bin/env bash
# Memory benchmark (issue 13): `rocescope report` peak RSS on 1 M header-only frames over
# 100,000 QPs (200,000 flows: the RDMA WRITEs and their ACKs; 128-byte snap), with one
# thread and with two, printing nothing (-q) and streaming the JSON document (--json); each
# run twice, the larger peak kept. Then 1 M one-packet QPs (a WRITE Only each, its ACK not
# captured: --msg-pkts 1 --no-acks), --json on one thread: the many-QP bound (issue 39: under
# 600 MB; 641 MB in the fifth session, under it in the sixth: docs/performance.md. The
# figure of 170-260 MB quoted before as "1 M one-packet QPs" was --no-acks without
# --msg-pkts 1: 250,000 QPs of four packets). 100,000 QPs: under 150 MB (issue 13), under
# 120 MB (issue 39): 114 / 117 MB with one / two threads on 2026-12-07.
#
#   bash bench/memory.sh [FRAMES] [QPS]
#
# The binaries are ${CARGO_TARGET_DIR:-target}/release's; ROCESCOPE=PATH measures another
# `rocescope` (an earlier build) on the same capture.
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-1000000}
qps=${2:-100000}
work=$(mktemp -d /tmp/rocescope-memory-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cargo build --release -q -p rocescope -p rocescope-samplegen
bin=${CARGO_TARGET_DIR:-target}/release
f="$work/bulk.pcap"
"$bin"/rocescope-samplegen --bulk "$f" --packets "$frames" --qps "$qps" --payload 1024 --snap 128 >/dev/null
echo "$frames frames over $qps QPs ($(du -h "$f" | cut -f1)); peak RSS of two runs each"
printf "%8s %8s %10s %8s\n" threads output peak_MB wall_s
for t in 1 2; do
  for out in -q --json; do
    peak=0
    wall=0
    for _ in 1 2; do
      /usr/bin/time -f "%M %e" -o "$work/t" "${ROCESCOPE:-$bin/rocescope}" report -r "$f" --threads "$t" "$out" >/dev/null
      read -r kb s <"$work/t"
      [ "$kb" -gt "$peak" ] && peak=$kb
      wall=$s
    done
    printf "%8s %8s %10.1f %8s\n" "$t" "$out" "$(echo "$peak / 1024" | bc -l)" "$wall"
  done
done
g="$work/one.pcap"
"$bin"/rocescope-samplegen --bulk "$g" --packets "$frames" --qps "$frames" --msg-pkts 1 --no-acks --payload 1024 --snap 128 >/dev/null
peak=0
for _ in 1 2; do
  /usr/bin/time -f "%M %e" -o "$work/t" "${ROCESCOPE:-$bin/rocescope}" report -r "$g" --threads 1 --json >/dev/null
  read -r kb s <"$work/t"
  [ "$kb" -gt "$peak" ] && peak=$kb
done
printf "%s one-packet QPs, --json, one thread: %.1f MB (%s s)\n" "$frames" "$(echo "$peak / 1024" | bc -l)" "$s"
