#!/usr/bin/env bash
# Report benchmark: `rocescope report` against a bare libpcap read loop over the
# same header-only captures (128-byte snap), 1 M and 10 M frames, one core; peak memory of
# report at both sizes; tshark -T fields on the 1 M file. Two captures (issue 28,
# reference perf-design.md): `bulk`, RDMA WRITEs over 1,000 QPs with an ACK per message;
# `mixed`, WRITE First/Middle/Last over 1,024 QPs with an ACK every 4th packet, a CNP every
# 50th, a READ pair every 200th and a PFC pause every 1,000th from one of 128 hosts
# (`rocescope-samplegen --bulk --mixed`). Each runs `report --threads 1` pinned to one core
# and `report --threads 2` on both, side by side with the loop in one hyperfine run.
# Beside them, the floors under the report: rocescope's own reader handing over every record
# (read_floor read), and the same decoding every frame as the report does (read_floor decode).
# Needs hyperfine (Debian package) and, for the tshark line, tshark.
#
#   bash bench/report.sh [SMALL] [LARGE]
#
# Instructions per frame (valgrind's cachegrind: repeatable on a shared machine, unlike the
# clock) of `report --threads 1` on 200,000 frames of the same capture, and of an earlier
# binary beside it when ROCESCOPE_BASE names one (e.g. a build of the previous release):
#   ROCESCOPE_BASE=/path/to/old/rocescope bash bench/report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-1000000}
large=${2:-10000000}
work=$(mktemp -d /tmp/rocescope-report-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
command -v hyperfine >/dev/null || { echo "install hyperfine (apt-get install hyperfine)"; exit 1; }

# The binaries are ${CARGO_TARGET_DIR:-target}/release's, as cargo builds them.
bin=${CARGO_TARGET_DIR:-target}/release
cargo build --release -q -p rocescope -p rocescope-samplegen
cargo build --release -q -p rocescope-capture --example pcap_read_loop --example read_floor
cargo build --release -q -p rocescope-analyzer --features capture --example stages
for n in "$small" "$large"; do
  $bin/rocescope-samplegen --bulk "$work/bulk$n.pcap" --packets "$n" --qps 1000 --payload 1024 --snap 128 >/dev/null
  $bin/rocescope-samplegen --bulk "$work/mixed$n.pcap" --packets "$n" --qps 1024 --msg-pkts 3 --payload 1024 \
    --snap 128 --pause-hosts 128 --mixed >/dev/null
done
# One thread on one core: the default --threads (one per core) would share the one core.
echo "$(nproc) cores; one core used by each run (taskset -c 1, report --threads 1)"
for n in "$small" "$large"; do
for kind in bulk mixed; do
  f="$work/$kind$n.pcap"
  cat "$f" >/dev/null # page cache
  echo "== $kind, $n frames ($(du -h "$f" | cut -f1))"
  hyperfine -N -w 1 -r 10 --export-json "$work/hf.json" \
    "taskset -c 1 $bin/examples/pcap_read_loop $f" \
    "taskset -c 1 $bin/examples/read_floor read $f" \
    "taskset -c 1 $bin/examples/read_floor decode $f" \
    "taskset -c 1 $bin/rocescope report -r $f --json --threads 1" \
    "$bin/rocescope report -r $f --json --threads 2" >/dev/null 2>&1
  python3 - "$work/hf.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
names = ["libpcap read loop", "rocescope reader", "reader + decode", "report --threads 1", "report --threads 2"]
loop, mloop = min(r[0]["times"]), r[0]["median"]
for name, x in zip(names, r):
    lo, med = min(x["times"]), x["median"]
    print(f"  {name:18s} min {lo*1e3:5.0f} ms, median {med*1e3:5.0f} ms: "
          f"{lo/loop:.2f}x (min/min), {med/mloop:.2f}x (median/median) the libpcap loop")
PY
  /usr/bin/time -f "  report peak RSS: %M KB" $bin/rocescope report -r "$f" --json --threads 1 >/dev/null
done
done
# Where the time goes (analyzer/examples/stages.rs): the records read and classified, then
# also the capture-wide figures, then also the flows, each against the libpcap loop.
for kind in bulk mixed; do
  f="$work/$kind$small.pcap"
  echo "== stages, $kind, $small frames (one core)"
  hyperfine -N -w 1 -r 10 --export-json "$work/hf.json" \
    "taskset -c 1 $bin/examples/pcap_read_loop $f" \
    "taskset -c 1 $bin/examples/stages classify $f" \
    "taskset -c 1 $bin/examples/stages capture-wide $f" \
    "taskset -c 1 $bin/examples/stages all $f" >/dev/null 2>&1
  python3 - "$work/hf.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
names = ["libpcap read loop", "read + classify", "+ capture-wide", "+ flows"]
loop = r[0]["median"]
prev = None
for name, x in zip(names, r):
    med = x["median"]
    step = "" if prev is None or name == names[1] else f", this stage {(med - prev)*1e3:4.0f} ms"
    print(f"  {name:18s} median {med*1e3:5.0f} ms: {med/loop:.2f}x the libpcap loop{step}")
    prev = med
PY
done
if command -v tshark >/dev/null; then
  f="$work/bulk$small.pcap"
  s=$(date +%s.%N)
  tshark -r "$f" -n -T fields -e frame.number -e ip.src -e ip.dst -e infiniband.bth.opcode -e infiniband.bth.destqp \
    -e infiniband.bth.psn -e ip.dsfield.ecn >/dev/null 2>&1
  e=$(date +%s.%N)
  echo "== tshark -T fields (7 fields) on $small frames: $(python3 -c "print(f'{$e - $s:.2f} s')")"
fi
if command -v valgrind >/dev/null; then
  $bin/rocescope-samplegen --bulk "$work/irbulk.pcap" --packets 200000 --qps 1000 --payload 1024 --snap 128 >/dev/null
  $bin/rocescope-samplegen --bulk "$work/irmixed.pcap" --packets 200000 --qps 1024 --msg-pkts 3 --payload 1024 \
    --snap 128 --pause-hosts 128 --mixed >/dev/null
  for kind in bulk mixed; do
    f="$work/ir$kind.pcap"
    echo "== instructions per frame, report --json --threads 1, 200,000 $kind frames (valgrind)"
    # (Not `bin`: the loop's variable would replace the directory for what follows.)
    for b in $bin/rocescope ${ROCESCOPE_BASE:-}; do
      ir=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$b" report -r "$f" --json --threads 1 2>&1 >/dev/null | sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,)
      printf '  %-40s %s instructions, %s per frame\n' "$b" "$ir" "$(python3 -c "print(round($ir / 200000))")"
    done
  done
fi
# Per-frame cost against what grows with a capture (issue 28): it must stay flat (within 20%)
# as more hosts pause and more flows are tracked. Header-only frames; a PFC pause every
# 1,000th frame from the next of N hosts in turn; 20 frames a QP (10 a flow) when the flows
# grow, so the cost of meeting a new flow weighs the same. Instructions (valgrind, when
# installed) and wall ns per frame (the fastest of three runs).
echo "== per-frame cost, report --json --threads 1"
printf '  %-30s %10s %14s %10s\n' case frames "instr/frame" "ns/frame"
cost() {
  local f=$1 label=$2 n=$3 ir="-" best=""
  if command -v valgrind >/dev/null; then
    ir=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      $bin/rocescope report -r "$f" --json --threads 1 2>&1 >/dev/null | sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,)
    ir=$((ir / n))
  fi
  for _ in 1 2 3; do
    s=$(date +%s%N)
    $bin/rocescope report -r "$f" --json --threads 1 >/dev/null
    e=$(date +%s%N)
    t=$(((e - s) / n))
    if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
  done
  printf '  %-30s %10s %14s %10s\n' "$label" "$n" "$ir" "$best"
}
for h in 1 10 100 1000; do
  $bin/rocescope-samplegen --bulk "$work/hosts$h.pcap" --packets 400000 --qps 1000 --snap 128 --pause-hosts "$h" >/dev/null
  cost "$work/hosts$h.pcap" "$h pausing hosts, 2,000 flows" 400000
done
for q in 1000 10000 100000; do
  n=$((q * 20))
  $bin/rocescope-samplegen --bulk "$work/qps$q.pcap" --packets "$n" --qps "$q" --snap 128 --pause-hosts 10 >/dev/null
  cost "$work/qps$q.pcap" "$((q * 2)) flows, 10 pausing hosts" "$n"
done
for p in 1 16 256; do
  $bin/rocescope-samplegen --bulk "$work/points$p.pcap" --packets 400000 --qps 1000 --snap 160 --pause-hosts 10 --points "$p" >/dev/null
  cost "$work/points$p.pcap" "$p capture points (VXLAN mirror)" 400000
done
