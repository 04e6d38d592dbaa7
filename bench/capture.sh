#!/usr/bin/env bash
# Capture benchmark: tcpreplay --topspeed of a large generated capture into one
# end of a veth pair between two network namespaces; `rocescope capture` on the other end,
# then `tcpdump -w` on the same run. Prints packets per second, drops and CPU time for
# each. Needs root, iproute2, tcpreplay and tcpdump. Only the two namespaces carry traffic.
#
#   bash bench/capture.sh [PACKETS] [PAYLOAD_BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-2000000}
payload=${2:-1024}
work=$(mktemp -d /tmp/rocescope-bench.XXXXXX)
ns_a=rsbench_a_$$
ns_b=rsbench_b_$$
cleanup() {
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The binaries are ${CARGO_TARGET_DIR:-target}/release's, as cargo builds them.
bin=${CARGO_TARGET_DIR:-target}/release
cargo build --release -q -p rocescope -p rocescope-samplegen
$bin/rocescope-samplegen --bulk "$work/in.pcap" --packets "$packets" --qps 1000 --payload "$payload" >/dev/null

ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add rsbench_a type veth peer name rsbench_b
ip link set rsbench_a netns "$ns_a"
ip link set rsbench_b netns "$ns_b"
ip -n "$ns_a" link set rsbench_a mtu 9000 up
ip -n "$ns_b" link set rsbench_b mtu 9000 up
# Warm the page cache so tcpreplay reads from memory.
cat "$work/in.pcap" >/dev/null

run() {
  local name=$1
  shift
  rm -f "$work/out"*
  # Start each run with no dirty pages left from the previous one.
  sync
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S" -o "$work/time" ip netns exec "$ns_b" "$@" 2>"$work/err" &
  local pid=$!
  sleep 1.5
  local replay
  replay=$(ip netns exec "$ns_a" tcpreplay --topspeed -i rsbench_a "$work/in.pcap" 2>&1)
  sleep 1.5
  pkill -INT -f "$work/out" || true
  wait "$pid" || true
  local sent pps captured dropped cpu
  sent=$(echo "$replay" | awk '/Actual:/ {print $2}')
  pps=$(echo "$replay" | awk '/Rated:/ {for (i=1;i<=NF;i++) if ($i=="pps,"||$i=="pps") print $(i-1)}' | head -1)
  captured=$(awk '/packets captured/ {print $1}' "$work/err" | head -1)
  dropped=$(awk '/dropped by kernel/ {print $1}' "$work/err" | head -1)
  cpu=$(awk "{printf \"%.2f (user %.2f, sys %.2f)\", \$1 + \$2, \$1, \$2}" "$work/time")
  per=$(awk -v c="${captured:-0}" '{ if (c > 0) printf "%.2f", ($1 + $2) * 1e6 / c; else print "?" }' "$work/time")
  printf '%-10s sent %-9s at %-11s pps | captured %-9s kernel drops %-8s | CPU %ss, %s us/packet\n' \
    "$name" "$sent" "$pps" "${captured:-?}" "${dropped:-?}" "$cpu" "$per"
}

echo "packets: $packets, payload: $payload bytes, $(nproc) cores"
filter='udp dst port 4791 or ether proto 0x8915 or ether proto 0x8808'
run warm-up $bin/rocescope capture -q -i rsbench_b -w "$work/out.pcapng" >/dev/null
for round in 1 2; do
  run tcpdump tcpdump -i rsbench_b -w "$work/out.pcap" "$filter"
  run tcpdump-B tcpdump -i rsbench_b -B 65536 -w "$work/out.pcap" "$filter"
  run rocescope $bin/rocescope capture -q -i rsbench_b -w "$work/out.pcapng"
  run rs-pcap $bin/rocescope capture -q --pcap -i rsbench_b -w "$work/out.pcap"
done
