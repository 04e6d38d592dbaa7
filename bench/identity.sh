#!/usr/bin/env bash
# The engine rewrite's guard (issue 39): `report` (text and JSON) of this tree's binary must be
# byte-identical to an earlier binary's, on every sample, every real capture, the bench
# captures and any extra captures given, for 1, 2, 3 and 8 threads.
#
#   bash bench/identity.sh OLD_BINARY [EXTRA_CAPTURE ...]
#
# NEW is ${NEW:-${CARGO_TARGET_DIR:-target}/release/rocescope}. The bench captures are made with
# that target's rocescope-samplegen (the budget's three shapes at their large size, the
# mixed shape over two capture points, and one with `--fold-breakers`). Exits 1 on the first difference, after printing the diff's head.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/identity.sh OLD_BINARY [EXTRA_CAPTURE ...]}
shift
target=${CARGO_TARGET_DIR:-target}
new=${NEW:-$target/release/rocescope}
gen=$target/release/rocescope-samplegen
threads=${THREADS:-1 2 3 8}
work=$(mktemp -d /tmp/identity.XXXXXX)
trap 'rm -rf "$work"' EXIT

caps=()
while IFS= read -r f; do caps+=("$f"); done < <(find samples -name '*.pcap' -o -name '*.pcapng' | sort)
real=../shared/real-captures
if [ -d "$real" ]; then
  while IFS= read -r f; do caps+=("$f"); done < <(find "$real" -maxdepth 1 -type f ! -name '*.md' | sort)
fi
if [ -z "${NO_BENCH:-}" ]; then
  mixed=(--msg-pkts 3 --payload 1024 --snap 128 --pause-hosts 128 --mixed)
  "$gen" --bulk "$work/bulk.pcap" --packets 120000 --qps 1000 --payload 1024 --snap 128 >/dev/null
  "$gen" --bulk "$work/mixed.pcap" --packets 120000 --qps 1024 "${mixed[@]}" >/dev/null
  "$gen" --bulk "$work/qps10k.pcap" --packets 100000 --qps 10000 "${mixed[@]}" >/dev/null
  "$gen" --bulk "$work/points.pcap" --packets 60000 --qps 512 --points 2 "${mixed[@]}" >/dev/null
  # Frames that break the folds' conditions (analyzer/src/fold.rs: time going back past a
  # bin, marks and priority changing in a bin, three classes on a flow, marked copies).
  "$gen" --bulk "$work/breakers.pcap" --packets 60000 --qps 512 --fold-breakers "${mixed[@]}" >/dev/null
  caps+=("$work/bulk.pcap" "$work/mixed.pcap" "$work/qps10k.pcap" "$work/points.pcap" "$work/breakers.pcap")
fi
caps+=("$@")

n=0
for cap in "${caps[@]}"; do
  for t in $threads; do
    # With several threads, both ways of reading: every shard reading the file, and the file
    # read once and divided among the shards (src/divided.rs; ROCESCOPE_DIVIDED).
    modes=0
    [ "$t" -gt 1 ] && modes="0 1"
    for mode in $modes; do
      for out in text json; do
        flag=()
        [ "$out" = json ] && flag=(--json)
        set +e
        "$old" report -r "$cap" --threads "$t" "${flag[@]}" >"$work/old" 2>"$work/old.err"
        a=$?
        ROCESCOPE_DIVIDED=$mode "$new" report -r "$cap" --threads "$t" "${flag[@]}" >"$work/new" 2>"$work/new.err"
        b=$?
        set -e
        if [ "$a" != "$b" ] || ! cmp -s "$work/old" "$work/new" || ! cmp -s "$work/old.err" "$work/new.err"; then
          echo "DIFFERS: $cap --threads $t $out (ROCESCOPE_DIVIDED=$mode; exit $a vs $b)"
          diff "$work/old" "$work/new" | head -20 || true
          diff "$work/old.err" "$work/new.err" | head -5 || true
          exit 1
        fi
        n=$((n + 1))
      done
    done
  done
done
echo "identical: $n runs over ${#caps[@]} captures (threads: $threads)"
