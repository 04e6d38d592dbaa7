#!/usr/bin/env bash
# The exporter's HTTP server under abuse (issue 15), on loopback only: `rocescope export -r`
# under `prlimit --nofile=1024` serving a 200,000-frame, 1,000-QP capture (a 307 kB scrape),
# then one load at a time while a scraper fetches /metrics every 50 ms on a new connection:
#
#   baseline    no load
#   idle        1,100 connections that send nothing (past the open-file limit), held 12 s
#   slowread    100 connections, 200 pipelined scrapes each, never read, held 12 s
#   hugehead    4 rounds of 50 connections sending an 8 MiB header line each, no CRLF
#   pipeline    50 connections x 100 pipelined requests, every answer read
#   slowloris   200 connections trickling a request head a byte a second, 12 s
#
# For each: what the server held (its open descriptors over the baseline, at most), its RSS
# before, at its peak and after, the scrapes that got 200 and their p50/p99 latency, and the
# scrapes that did not (503, or a connection error). The load is bounded in count and time.
# Needs python3 and prlimit (util-linux).
#
#   bash bench/export-load.sh [PORT]
#   PHASES="baseline idle" bash bench/export-load.sh     # only these
#   ROCESCOPE=/path/to/rocescope bash bench/export-load.sh  # another build (before/after)
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-19480}
cargo build --release -q -p rocescope -p rocescope-samplegen
bin=${CARGO_TARGET_DIR:-target}/release
work=$(mktemp -d /tmp/rocescope-export-load.XXXXXX)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
"$bin/rocescope-samplegen" --bulk "$work/load.pcap" --packets 200000 --qps 1000 --payload 256 --snap 128 >/dev/null
prlimit --nofile=1024:1024 "${ROCESCOPE:-$bin/rocescope}" export -r "$work/load.pcap" --listen "127.0.0.1:$port" 2>"$work/stderr" &
pid=$!
status=0
python3 - "$port" "$pid" <<'EOF' || status=$?
import os, resource, socket, statistics, sys, threading, time

PORT, PID = int(sys.argv[1]), int(sys.argv[2])
ADDR = ("127.0.0.1", PORT)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))


def rss_mb():
    try:
        with open(f"/proc/{PID}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def alive():
    try:
        with open(f"/proc/{PID}/stat") as f:
            return f.read().split(") ", 1)[1][0] not in "ZX"
    except OSError:
        return False


def fds():
    try:
        return len(os.listdir(f"/proc/{PID}/fd"))
    except OSError:
        return 0


def request(path, timeout=5.0):
    """One GET on a new connection: (status or error name, seconds)."""
    t0 = time.perf_counter()
    try:
        with socket.create_connection(ADDR, timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while True:
                c = s.recv(1 << 16)
                if not c:
                    break
                data += c
        status = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1 ") else "empty"
    except OSError as e:
        status = type(e).__name__
    return status, time.perf_counter() - t0


# Wait for the file's final figures.
t0 = time.time()
while True:
    try:
        s, _ = request("/healthz", 1)
        if s == "200":
            with socket.create_connection(ADDR, timeout=2) as c:
                c.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                if b'"done":true' in c.recv(4096):
                    break
    except OSError:
        pass
    if time.time() - t0 > 60:
        sys.exit("the exporter never finished the file")
    time.sleep(0.1)
for _ in range(5):
    request("/metrics")
BASE_FDS = fds()
with socket.create_connection(ADDR, timeout=5) as c:
    c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    body = b""
    while chunk := c.recv(1 << 16):
        body += chunk
size = len(body.split(b"\r\n\r\n", 1)[-1])
print(f"scrape: {size / 1000:.0f} kB; exporter RSS {rss_mb():.1f} MB, {BASE_FDS} descriptors open",
      file=sys.stderr)


class Watch:
    """Scrapes every 50 ms and samples the exporter's RSS and descriptors meanwhile."""

    def __init__(self):
        self.stop = threading.Event()
        self.scrapes = []
        self.rss_peak = rss_mb()
        self.fds_peak = fds()
        self.threads = [threading.Thread(target=self.scrape, daemon=True),
                        threading.Thread(target=self.sample, daemon=True)]
        for t in self.threads:
            t.start()

    def scrape(self):
        t0 = time.time()
        while not self.stop.is_set():
            at = time.time() - t0
            self.scrapes.append(request("/metrics") + (at,))
            time.sleep(0.05)

    def sample(self):
        while not self.stop.is_set():
            self.rss_peak = max(self.rss_peak, rss_mb())
            self.fds_peak = max(self.fds_peak, fds())
            time.sleep(0.02)

    def end(self):
        self.stop.set()
        for t in self.threads:
            t.join()


def settle(limit=15):
    """Wait until the exporter holds no more connections than at the start."""
    t0 = time.time()
    while fds() > BASE_FDS and time.time() - t0 < limit:
        time.sleep(0.05)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


rows = []


def phase(name, load):
    settle()
    before = rss_mb()
    print(f"{name}...", file=sys.stderr, flush=True)
    w = Watch()
    try:
        note = load()
    except OSError as e:
        note = f"the load failed: {e!r}"
    finally:
        w.end()
    settle()
    after = rss_mb()
    ok = [t * 1000 for s, t, _ in w.scrapes if s == "200"]
    bad, last_bad = {}, 0.0
    for s, _, at in w.scrapes:
        if s != "200":
            bad[s] = bad.get(s, 0) + 1
            last_bad = max(last_bad, at)
    errors = ", ".join(f"{n} x {s}" for s, n in sorted(bad.items()))
    errors = f"{errors} (the last {last_bad:.1f} s in)" if errors else "none"
    rows.append((name, w.fds_peak - BASE_FDS, before, w.rss_peak, after, len(ok), len(w.scrapes),
                 pct(ok, 50), pct(ok, 99), errors, note))


def baseline():
    time.sleep(3)
    return "no load"


def idle():
    conns, refused = [], 0
    for _ in range(1100):
        try:
            s = socket.create_connection(ADDR, timeout=1)
            conns.append(s)
        except OSError:
            refused += 1
    # Those past the cap were answered 503 and closed: they are readable at once.
    time.sleep(0.5)
    shed = 0
    for s in conns:
        s.setblocking(False)
        try:
            if s.recv(1, socket.MSG_PEEK) is not None:
                shed += 1
        except BlockingIOError:
            pass
        except OSError:
            shed += 1
    t0 = time.time()
    closed_at = None
    while time.time() - t0 < 11.5:
        if closed_at is None and fds() <= BASE_FDS + 1:
            closed_at = time.time() - t0 + 0.5
        time.sleep(0.05)
    for s in conns:
        s.close()
    when = f"closed by the server after {closed_at:.1f} s" if closed_at else "still held after 12 s"
    return f"{len(conns)} opened ({refused} failed), {shed} shed at once (503, or closed); the rest {when}"


def slowread():
    req = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 200
    conns = []
    for _ in range(100):
        try:
            s = socket.create_connection(ADDR, timeout=3)
        except OSError:
            continue
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        try:
            s.send(req)
        except BlockingIOError:
            pass
        conns.append(s)
    t0, closed_at = time.time(), None
    while time.time() - t0 < 12:
        if closed_at is None and time.time() - t0 > 0.5 and fds() <= BASE_FDS:
            closed_at = time.time() - t0
        time.sleep(0.05)
    for s in conns:
        s.close()
    when = f"all closed by the server after {closed_at:.1f} s" if closed_at else "still held after 12 s"
    return f"{len(conns)} x 200 pipelined scrapes never read; {when}"


def hugehead():
    results = []
    chunk = b"a" * (1 << 20)

    def one():
        sent = 0
        try:
            with socket.create_connection(ADDR, timeout=5) as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
                for _ in range(8):
                    s.sendall(chunk)
                    sent += len(chunk)
                answer = s.recv(64)
                results.append((sent, answer[:12].decode(errors="replace") or "closed"))
        except OSError as e:
            results.append((sent, type(e).__name__))

    for _ in range(4):
        ts = [threading.Thread(target=one) for _ in range(50)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    got = {}
    for _, r in results:
        got[r] = got.get(r, 0) + 1
    most = max(s for s, _ in results) / (1 << 20)
    return f"4 rounds of 50 x 8 MiB header line: at most {most:.2f} MiB written (into socket buffers) before the cut; " + \
        ", ".join(f"{n} x {r.strip()}" for r, n in sorted(got.items()))


def pipeline():
    counts = []

    def one():
        batch = b"".join(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                         (b"Connection: close\r\n" if i == 99 else b"") + b"\r\n" for i in range(100))
        with socket.create_connection(ADDR, timeout=10) as s:
            s.sendall(batch)
            data = b""
            while True:
                c = s.recv(1 << 16)
                if not c:
                    break
                data += c
        counts.append(data.count(b"HTTP/1.1 200 OK"))

    t0 = time.time()
    ts = [threading.Thread(target=one) for _ in range(50)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    took = time.time() - t0
    time.sleep(1)
    return f"50 x 100 pipelined: {sum(counts)} of 5000 answered 200 in {took:.2f} s"


def slowloris():
    conns = []
    for _ in range(200):
        try:
            conns.append(socket.create_connection(ADDR, timeout=3))
        except OSError:
            pass
    head = b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"a" * 100
    t0, closed = time.time(), {}
    for i in range(12):
        for n, s in enumerate(conns):
            if n in closed:
                continue
            try:
                s.send(head[i:i + 1])
            except OSError:
                closed[n] = time.time() - t0
        time.sleep(1)
    for s in conns:
        s.close()
    if closed:
        return f"{len(conns)} trickling a byte a second: {len(closed)} cut off, after {min(closed.values()):.1f}-{max(closed.values()):.1f} s"
    return f"{len(conns)} trickling a byte a second: none cut off in 12 s"


ONLY = os.environ.get("PHASES", "").split()
for name, load in [("baseline", baseline), ("idle", idle), ("slowread", slowread),
                   ("hugehead", hugehead), ("pipeline", pipeline), ("slowloris", slowloris)]:
    if not alive():
        print(f"the exporter has ended; {name} and after not run", file=sys.stderr)
        break
    if not ONLY or name in ONLY:
        phase(name, load)

print(f"{'load':<10} {'held':>5} {'RSS MB before/peak/after':>25} {'scrapes ok':>11} {'p50 ms':>7} {'p99 ms':>7}  failed scrapes")
for name, held, b, p, a, ok, n, p50, p99, errors, _ in rows:
    print(f"{name:<10} {held:>5} {b:>9.1f}/{p:>6.1f}/{a:>6.1f} {ok:>5}/{n:<5} {p50:>7.1f} {p99:>7.1f}  {errors}")
print()
for r in rows:
    print(f"{r[0]:<10} {r[-1]}")
if alive():
    print("\nthe exporter is alive")
else:
    sys.exit("\nthe exporter has ended")
EOF
echo
echo "exporter's stderr:"
sed 's/^/  /' "$work/stderr"
exit $status
