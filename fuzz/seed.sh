#!/usr/bin/env bash
# Seed the fuzz corpora from the bundled samples (fuzz/corpus is not committed):
#   corpus/decode   each frame of every sample, behind the decode target's option byte
#   corpus/readers  every sample behind each of the readers target's modes: as it is,
#                   compressed by the target, gzip-compressed here, and two merged
#   corpus/analyzer every sample as the analyzer target's length-prefixed frames
#   corpus/report_document  the samples' reports (`report --json`), alone and as the
#                   before/after pairs of samples/compare, NUL-separated (needs a built
#                   rocescope: target/release or target/debug, or $ROCESCOPE)
#   corpus/parquet  a few damages of the tables the parquet target writes itself (no damage,
#                   a flipped byte in each table, both cut short, bytes written over each)
# Usage: fuzz/seed.sh (from anywhere). Needs python3 for the decode and analyzer seeds.
set -euo pipefail
cd "$(dirname "$0")"
samples=(../samples/*.pcap* ../samples/cases/*.pcap ../samples/qos/*.pcap)
mkdir -p corpus/readers corpus/analyzer corpus/decode corpus/report_document corpus/parquet
# The parquet target starts from valid tables (samples/demo.pcap's) and damages them as its
# input says: mode 2 with no damage, flips in each table, cuts, bytes written at the end.
printf '\x02' > corpus/parquet/intact
printf '\x02\x00\x10\x00\x00\xff' > corpus/parquet/flip-flows
printf '\x02\x01\x10\x00\x00\x01\x01\x40\x00\x00\x80' > corpus/parquet/flip-packets
printf '\x03\x00\x40\x00\x00\x00\x20\x00\x00' > corpus/parquet/cut
printf '\x00\xf0\xff\xff\xff\x00\x00\x00\x00' > corpus/parquet/overwrite-flows
printf '\x01\x00\x01\x00\x00\x15\x00\x15\x00' > corpus/parquet/overwrite-packets

n=0
for f in "${samples[@]}"; do
  [ -f "$f" ] || continue
  base=$(basename "$f")
  { printf '\x00'; cat "$f"; } > "corpus/readers/raw-$base"
  { printf '\x02'; cat "$f"; } > "corpus/readers/gz-$base"
  { printf '\x00'; gzip -c "$f"; } > "corpus/readers/file-$base.gz"
  n=$((n + 1))
done
# Merges: the sender and receiver of the two-point sample, and two small samples.
merge() {
  local a=$1 b=$2 out=$3 size
  size=$(stat -c %s "$a")
  python3 -c "import sys; sys.stdout.buffer.write(bytes([3]) + ($size % 65536).to_bytes(2, 'little'))" > "$out"
  cat "$a" "$b" >> "$out"
}
if command -v python3 >/dev/null 2>&1; then
  merge ../samples/two-points-sender.pcap ../samples/two-points-receiver.pcap corpus/readers/merge-two-points
  merge ../samples/rnr.pcap ../samples/atomics.pcap corpus/readers/merge-small
  python3 - "${samples[@]}" <<'PY'
# Classic pcap (either byte order, micro- or nanosecond) into the analyzer target's format
# and, frame by frame, into the decode target's corpus.
import hashlib, os, struct, sys

def frames(path):
    data = open(path, "rb").read()
    if len(data) < 24:
        return None
    magic = data[:4]
    kinds = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\xa1\xb2\xc3\xd4": (">", 1000),
             b"\x4d\x3c\xb2\xa1": ("<", 1), b"\xa1\xb2\x3c\x4d": (">", 1)}
    if magic not in kinds:
        return None  # pcapng or gzip: the readers corpus has them
    e, mult = kinds[magic]
    linktype = struct.unpack(e + "I", data[20:24])[0]
    out, off = [], 24
    while off + 16 <= len(data):
        sec, frac, caplen, wirelen = struct.unpack(e + "IIII", data[off:off + 16])
        body = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        out.append((sec * 10**9 + frac * mult, wirelen, body))
    return linktype, out

LINK = {1: 0, 113: 1, 276: 2, 101: 3}          # the analyzer target's link types
DECODE_LINK = {1: 0, 101: 1, 113: 2, 276: 3}   # the decode target's
SCALES = [1, 10**3, 10**6, 10**9]

def encode(sel, fr):
    """fr: (ts_ns, wire length, bytes, point) in time order, as the analyzer target reads them."""
    blob, prev = bytearray([sel]), None
    for ts, wirelen, body, point in fr[:2000]:
        body = body[:65535]
        dt = 0 if prev is None else ts - prev
        prev = ts
        scale = 0
        while scale < 3 and not -2**31 <= dt // SCALES[scale] < 2**31:
            scale += 1
        d = max(-2**31, min(2**31 - 1, dt // SCALES[scale]))
        extra = max(0, min(31, wirelen - len(body)))
        blob += struct.pack("<HiB", len(body), d, scale | point << 2 | extra << 3) + body
    return bytes(blob)

points = {}
for path in sys.argv[1:]:
    got = frames(path) if path.endswith(".pcap") else None
    if not got or got[0] not in LINK:
        continue
    linktype, fr = got
    name = os.path.basename(path)
    open(os.path.join("corpus/analyzer", name), "wb").write(
        encode(LINK[linktype] << 2, [(ts, w, b, 0) for ts, w, b in fr]))
    if name.startswith("two-points-"):
        points[name] = (linktype, fr)
    for ts, wirelen, body in fr[:300]:
        seed = bytes([DECODE_LINK[linktype]]) + body
        open(os.path.join("corpus/decode", hashlib.sha1(seed).hexdigest()[:16]), "wb").write(seed)
# The two-point sample merged by time, as two capture points (option bit 0x10).
a, b = points.get("two-points-sender.pcap"), points.get("two-points-receiver.pcap")
if a and b and a[0] == b[0]:
    merged = sorted([(ts, w, body, 0) for ts, w, body in a[1]] + [(ts, w, body, 1) for ts, w, body in b[1]],
                    key=lambda f: f[0])
    open("corpus/analyzer/two-points-merged", "wb").write(encode(LINK[a[0]] << 2 | 0x10, merged))
PY
else
  echo "fuzz/seed.sh: no python3; the analyzer and decode corpora are not seeded" >&2
fi
# Report documents, made by a rocescope already built (this script builds nothing).
target=${CARGO_TARGET_DIR:-../target}
case "$target" in /*) ;; *) target="../$target" ;; esac
rocescope=${ROCESCOPE:-}
for b in "$target/release/rocescope" "$target/debug/rocescope"; do
  [ -z "$rocescope" ] && [ -x "$b" ] && rocescope=$b
done
if [ -n "$rocescope" ]; then
  for f in ../samples/*.pcap ../samples/qos/*.pcap; do
    [ -f "$f" ] || continue
    "$rocescope" report --json -r "$f" > "corpus/report_document/$(basename "$f" .pcap)" 2>/dev/null || true
  done
  for b in ../samples/compare/*-before.pcap; do
    a=${b%-before.pcap}-after.pcap
    [ -f "$a" ] || continue
    out="corpus/report_document/pair-$(basename "${b%-before.pcap}")"
    { "$rocescope" report --json -r "$b"; printf '\0'; "$rocescope" report --json -r "$a"; } > "$out" 2>/dev/null || true
  done
else
  echo "fuzz/seed.sh: no rocescope binary (build it, or set ROCESCOPE): the report_document corpus is not seeded" >&2
fi
echo "seeded: $(ls corpus/readers | wc -l) readers, $(ls corpus/analyzer | wc -l) analyzer, $(ls corpus/decode | wc -l) decode, $(ls corpus/report_document | wc -l) report_document inputs from $n samples"
echo "seeded: $(ls corpus/readers | wc -l) readers, $(ls corpus/analyzer | wc -l) analyzer, $(ls corpus/decode | wc -l) decode inputs from $n samples, $(ls corpus/parquet | wc -l) parquet inputs"
