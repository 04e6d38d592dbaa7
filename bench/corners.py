#!/usr/bin/env python3
"""Issue 40's quadratic corners, timed on a release binary (docs/reliability.md "Issue 40").

Writes the inputs under DIR (made from the binary's own reports of samples/compare), then
times each command once (wall seconds; best of --runs):

  wrap        compare two documents, the AFTER one with a point named with N characters
  points      compare two documents of N points, one QP each
  nccl-doc    compare two documents checked against N NCCL variables (match -> mismatch)
  dscp-move   compare two documents of N QPs at one point, DSCP 26 -> 0 (and unchanged)
  nccl-env    report -q --nccl-env FILE of N variables, on samples/demo.pcap
  incast      report -q --no-icrc of N senders to one receiver, each sending twice, all in
              one --bin (and N host pairs)

Usage: bench/corners.py ROCESCOPE DIR [--runs 1] [--only NAME] [--scale 1.0]
"""

import argparse
import copy
import json
import os
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def report(binary, capture):
    out = subprocess.run([binary, "report", "--json", "-r", capture], capture_output=True, check=False)
    return json.loads(out.stdout)


def timed(cmd, runs):
    best, status = None, None
    for _ in range(runs):
        t = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        dt = time.monotonic() - t
        status = p.returncode
        best = dt if best is None else min(best, dt)
    return best, status


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def with_points(base, n):
    """`base` with `n` points, each a copy of its point 0, of its first data flow and of its
    series there."""
    d = copy.deepcopy(base)
    p0 = dict(base["points"][0])
    p0.pop("marks", None)
    flows0 = [f for f in base["flows"] if f["point"] == 0 and f.get("requests", 0) > 0][:1]
    tl0 = [t for t in base["timeline"]["points"] if t["point"] == 0]
    d["points"], d["flows"], d["timeline"]["points"], d["connections"] = [], [], [], []
    d["latency_samples"] = []
    for i in range(n):
        p = dict(p0, name="host%d.pcap" % i)
        d["points"].append(p)
        for f in flows0:
            g = dict(f, point=i)
            g.pop("partner", None)
            d["flows"].append(g)
        for t in tl0:
            d["timeline"]["points"].append(dict(t, point=i))
    return d


def with_qps(base, n, dscp):
    """`base` with `n` copies of its first data flow at point 0, QP numbers 0..n, on `dscp`."""
    d = copy.deepcopy(base)
    f0 = next(f for f in base["flows"] if f["point"] == 0 and f.get("requests", 0) > 0)
    d["flows"] = []
    for q in range(n):
        g = dict(f0, dest_qp=q, dscp=[dscp])
        g.pop("partner", None)
        d["flows"].append(g)
    d["connections"] = []
    for p in d["points"]:
        p.pop("marks", None)
    return d


def with_nccl(base, n, verdict):
    d = copy.deepcopy(base)
    d["nccl"] = {
        "file": "nccl.env",
        "version": "2.23.4",
        "matched": n if verdict == "match" else 0,
        "mismatched": n if verdict == "mismatch" else 0,
        "not_checked": 0,
        "variables": [
            {"name": "NCCL_IB_VAR_%d" % i, "value": "1", "line": i + 1, "verdict": verdict, "wire": "DSCP 26",
             "sets": "-"}
            for i in range(n)
        ],
    }
    return d


def pcap(path, frames):
    """Frames 10 ns apart (nanosecond pcap): 400,000 of them within one 10 ms --bin."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            ts = 1_700_000_000 * 10**9 + 10 * i
            f.write(struct.pack("<IIII", ts // 10**9, ts % 10**9, len(fr), len(fr)))
            f.write(fr)


def write_frame(src, dst, qp):
    """An RC WRITE ONLY of 64 bytes asking for an ACK, DSCP 26, ECT(0); ICRC zero (read with
    --no-icrc)."""
    bth = struct.pack(">BBHI I", 0x0A, 0, 0xFFFF, qp & 0xFFFFFF, 0x80000001)
    reth = struct.pack(">QII", 0, 1, 64)
    ib = bth + reth + bytes(64) + bytes(4)
    udp = struct.pack(">HHHH", 49152, 4791, 8 + len(ib), 0)
    total = 20 + len(udp) + len(ib)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, (26 << 2) | 2, total, 0, 0x4000, 64, 17, 0, bytes(src), bytes(dst))
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    return eth + ip + udp + ib


def host(i):
    return [10, (i >> 16) & 255, (i >> 8) & 255, i & 255]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only")
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    sc = lambda n: max(1, int(n * a.scale))
    cmp_dir = os.path.join(ROOT, "samples/compare")
    before = report(a.binary, os.path.join(cmp_dir, "ecn-off-before.pcap"))
    after = report(a.binary, os.path.join(cmp_dir, "ecn-off-after.pcap"))
    J = lambda name: os.path.join(a.dir, name)
    want = lambda name: a.only in (None, name)
    class Rows(list):
        def append(self, row):
            what, (secs, status) = row
            print("%-48s %8.2f s  (status %s)" % (what, secs, status))
            sys.stdout.flush()

    rows = Rows()

    if want("wrap"):
        n = sc(4_000_000)
        b, x = copy.deepcopy(before), copy.deepcopy(after)
        b["points"].append(dict(b["points"][0], name="b" * 8))
        x["points"].append(dict(x["points"][0], name="n" * n))
        write(J("wrap-before.json"), b)
        write(J("wrap-after.json"), x)
        rows.append(("wrap: a point name of %d characters" % n,
                     timed([a.binary, "compare", J("wrap-before.json"), J("wrap-after.json")], a.runs)))
    if want("points"):
        n = sc(40_000)
        write(J("points-before.json"), with_points(before, n))
        write(J("points-after.json"), with_points(after, n))
        rows.append(("documents of %d points" % n,
                     timed([a.binary, "compare", J("points-before.json"), J("points-after.json")], a.runs)))
    if want("nccl-doc"):
        n = sc(40_000)
        write(J("nccl-before.json"), with_nccl(before, n, "match"))
        write(J("nccl-after.json"), with_nccl(before, n, "mismatch"))
        rows.append(("documents of %d NCCL variables" % n,
                     timed([a.binary, "compare", J("nccl-before.json"), J("nccl-after.json")], a.runs)))
    if want("dscp-move"):
        n = sc(100_000)
        write(J("qps-26.json"), with_qps(before, n, 26))
        write(J("qps-0.json"), with_qps(before, n, 0))
        rows.append(("DSCP 26 -> 0 over %d QPs" % n,
                     timed([a.binary, "compare", J("qps-26.json"), J("qps-0.json")], a.runs)))
        rows.append(("%d QPs unchanged" % n, timed([a.binary, "compare", J("qps-26.json"), J("qps-26.json")], a.runs)))
    if want("nccl-env"):
        n = sc(60_000)
        with open(J("nccl.env"), "w") as f:
            f.write("NCCL_IB_TC=106\n")
            for i in range(n):
                f.write("NCCL_IB_EXTRA_%d=%d\n" % (i, i))
        demo = os.path.join(ROOT, "samples/demo.pcap")
        rows.append(("--nccl-env of %d lines (%d bytes)" % (n + 1, os.path.getsize(J("nccl.env"))),
                     timed([a.binary, "report", "-q", "-r", demo, "--nccl-env", J("nccl.env")], a.runs)))
    if want("incast"):
        n = sc(200_000)
        # Each sender twice, a pass apart, all in one bin: every one is sending in it.
        pcap(J("incast.pcap"), (write_frame(host(i % n + 2), [10, 255, 0, 1], 0x100) for i in range(2 * n)))
        pcap(J("pairs.pcap"), (write_frame(host(2 * (i % n) + 2), host(2 * (i % n) + 3), 0x100) for i in range(2 * n)))
        rows.append(("%d senders to one receiver" % n,
                     timed([a.binary, "report", "-q", "--no-icrc", "--threads", "1", "-r", J("incast.pcap")], a.runs)))
        rows.append(("%d host pairs" % n,
                     timed([a.binary, "report", "-q", "--no-icrc", "--threads", "1", "-r", J("pairs.pcap")], a.runs)))


if __name__ == "__main__":
    main()
