#!/usr/bin/env python3
"""The per-frame instruction budget of `rocescope report` (issue 39), checked in CI.

For every capture in bench/budget.toml (made by `rocescope-samplegen --bulk`, so the same
bytes everywhere) and both outputs (`report -q` and `report --json`, one thread), this
counts the instructions the release binary runs under valgrind's callgrind, at two sizes of
the same capture, and takes the slope:

    per frame = (instructions(large) - instructions(small)) / (frames(large) - frames(small))
    fixed     = instructions(small) - per frame * frames(small)

The slope is the cost of one more frame, free of what a run pays once: start-up, and the
report and JSON entry of each flow, since both sizes hold every data flow and its ACKs (on
the many-QP capture, 20,000 flows). That is `fixed`, checked too, so per-flow work cannot
grow unseen. Valgrind counts the instructions the program itself runs (user space, every
thread), one at a time: two runs agree to within a few instructions in hundreds of millions,
whatever else the machine is doing (bench/README.md).

The check fails (exit 1) when a figure is above its budget times (1 + margin), prints every
figure either way, and says when a figure is far under its budget (lower it). Exit 2: the
tool could not measure (no valgrind, a run that failed, a budget file it cannot read).

    python3 bench/instructions.py                 # build, measure, check
    python3 bench/instructions.py --no-build      # use ${CARGO_TARGET_DIR:-target}/release/
    python3 bench/instructions.py --repeat        # every run twice: the counts must agree
    python3 bench/instructions.py --only bulk     # one capture
    python3 bench/instructions.py --save m.json   # keep the measurements
    python3 bench/instructions.py --measured m.json   # check saved measurements, no valgrind
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUDGET = os.path.join(ROOT, "bench", "budget.toml")
# The two outputs, as bench/budget.toml names them, and the options that make them.
MODES = {"quiet": ["-q"], "json": ["--json"]}
# Two counts of the same run may differ by this much at most (--repeat).
REPEAT_TOLERANCE = 0.001


class Failure(Exception):
    """The tool could not measure or read what it needs (exit 2)."""


def load_budget(path):
    """The budget file: its margins and its captures, each with its two budgets."""
    if tomllib is None:
        raise Failure("Python 3.11 or later is needed (tomllib) to read " + path)
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise Failure(f"{path}: {e}")
    margin, far_under = doc.get("margin"), doc.get("far_under")
    if not isinstance(margin, (int, float)) or not isinstance(far_under, (int, float)):
        raise Failure(f"{path}: `margin` and `far_under` (fractions, e.g. 0.03 and 0.10) are needed")
    captures = {}
    for name, c in doc.items():
        if not isinstance(c, dict):
            continue
        frames = c.get("frames")
        if not (isinstance(c.get("samplegen"), list) and isinstance(frames, list) and len(frames) == 2
                and all(isinstance(n, int) for n in frames) and frames[0] < frames[1]):
            raise Failure(f"{path}: [{name}] needs `samplegen` (a list of arguments) and `frames` "
                          "(two sizes, the smaller first)")
        for mode in MODES:
            b = c.get(mode)
            if not (isinstance(b, dict) and isinstance(b.get("per_frame"), (int, float))
                    and isinstance(b.get("fixed"), (int, float)) and isinstance(b.get("why"), str) and b["why"]):
                raise Failure(f"{path}: [{name}.{mode}] needs `per_frame`, `fixed` and `why` "
                              "(when and why it was last set)")
        captures[name] = c
    if not captures:
        raise Failure(f"{path}: no capture to measure")
    return margin, far_under, captures


def run(cmd, **kw):
    """Run `cmd`; its completed process (stdout and stderr as text unless `kw` says otherwise)."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    try:
        return subprocess.run(cmd, text=True, **kw)
    except OSError as e:
        raise Failure(f"{cmd[0]}: {e}")


def generate(samplegen, args, frames, path):
    """Write a capture of `frames` frames; the number samplegen says it wrote."""
    p = run([samplegen, "--bulk", path, "--packets", str(frames), *args])
    m = re.search(r"wrote (\d+) frames", p.stdout)
    if p.returncode != 0 or not m:
        raise Failure(f"rocescope-samplegen --bulk {' '.join(args)}: {p.stderr.strip() or p.stdout.strip()}")
    return int(m.group(1))


def count(binary, mode, capture):
    """Instructions of one `report` run under callgrind (the whole process, every thread)."""
    cmd = ["valgrind", "--tool=callgrind", "--cache-sim=no", "--callgrind-out-file=/dev/null",
           binary, "report", *MODES[mode], "--threads", "1", "-r", capture]
    # The JSON goes to /dev/null: what is counted is the writing, not a pipe to this tool.
    p = run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # The report's own status: 0, or 3 and 4 (violations, the gate) when findings come; the
    # run went through either way. 1, 2 or a signal: it did not.
    m = re.search(r"==\d+== (?:Collected|I\s+refs)\s*:\s*([\d,]+)", p.stderr)
    if p.returncode not in (0, 3, 4) or not m:
        tail = "\n".join(p.stderr.strip().splitlines()[-8:])
        raise Failure(f"{' '.join(cmd)}: exit {p.returncode}\n{tail}")
    return int(m.group(1).replace(",", ""))


def measure(binary, samplegen, captures, jobs, repeat):
    """Every capture's counts at both sizes, both outputs: {name: {mode: [[frames, instr], ...]}}."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="rocescope-instructions.") as work:
        files = {}
        for name, c in captures.items():
            for n in c["frames"]:
                path = os.path.join(work, f"{name}-{n}.pcap")
                files[(name, n)] = (path, generate(samplegen, [str(a) for a in c["samplegen"]], n, path))
        # One valgrind run per core at once: the counts do not depend on what else runs.
        runs = [(name, mode, n) for name, c in captures.items() for mode in MODES for n in c["frames"]]
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {key: [pool.submit(count, binary, key[1], files[(key[0], key[2])][0])
                             for _ in range(2 if repeat else 1)] for key in runs}
            results = {key: [f.result() for f in fs] for key, fs in futures.items()}
    worst = 0.0
    for (name, mode, n), counts in results.items():
        worst = max(worst, (max(counts) - min(counts)) / max(counts))
        if max(counts) - min(counts) > REPEAT_TOLERANCE * max(counts):
            raise Failure(f"{name}, report {' '.join(MODES[mode])}, {n} frames: two runs counted "
                          f"{counts[0]:,} and {counts[1]:,} instructions (more than "
                          f"{REPEAT_TOLERANCE:.1%} apart): the count is not deterministic")
        out.setdefault(name, {}).setdefault(mode, []).append([files[(name, n)][1], counts[0]])
    if repeat:
        print(f"Every run counted twice: the two counts differ by {worst:.1e} of the count at most "
              f"(allowed: {REPEAT_TOLERANCE:.1%})")
    return out


def figures(points):
    """(per frame, fixed) from two [frames, instructions] points."""
    (n1, i1), (n2, i2) = sorted(points)
    slope = (i2 - i1) / (n2 - n1)
    return slope, i1 - slope * n1


def check(measured, margin, far_under, captures, budget_path):
    """Print every figure against its budget; the number of figures over budget."""
    over, under = [], []
    rows = []
    for name, c in captures.items():
        for mode, opts in MODES.items():
            points = measured.get(name, {}).get(mode)
            if not points or len(points) != 2:
                raise Failure(f"no measurement of {name}, report {' '.join(opts)}")
            per_frame, fixed = figures(points)
            b = c[mode]
            for what, got, budget, unit in (("per frame", per_frame, b["per_frame"], ""),
                                            ("fixed", fixed, b["fixed"], "")):
                limit = budget * (1 + margin)
                state = "ok"
                if got > limit:
                    state = "OVER"
                    over.append((name, mode, what, got, budget, limit))
                elif got < budget * (1 - far_under):
                    state = "far under"
                    under.append((name, mode, what, got, budget))
                rows.append((f"{name}, report {' '.join(opts)}", what, got, budget, limit,
                             (got - budget) / budget if budget else 0.0, state))
    print(f"Instructions (callgrind, report --threads 1; per frame: the slope between two sizes; "
          f"fixed: a run's cost outside it). Budget: {os.path.relpath(budget_path, ROOT)}, "
          f"margin +{margin:.0%}")
    print(f"  {'capture, output':28s} {'figure':10s} {'measured':>14s} {'budget':>14s} "
          f"{'limit':>14s} {'vs budget':>9s}")
    for label, what, got, budget, limit, rel, state in rows:
        print(f"  {label:28s} {what:10s} {got:14,.0f} {budget:14,.0f} {limit:14,.0f} {rel:+9.1%}  {state}")
    for name, mode, what, got, budget in under:
        print(f"note: {name}, report {' '.join(MODES[mode])}: {what} {got:,.0f} is more than "
              f"{far_under:.0%} under its budget {budget:,.0f}: lower the budget "
              f"([{name}.{mode}] in {os.path.relpath(budget_path, ROOT)}) so the gain is kept")
    sys.stdout.flush()
    for name, mode, what, got, budget, limit in over:
        key = "per_frame" if what == "per frame" else "fixed"
        print(f"FAILED: {name}, report {' '.join(MODES[mode])}: {what} {got:,.0f} instructions, "
              f"over the budget {budget:,.0f} (+{margin:.0%}: {limit:,.0f}). If the work is "
              f"wanted, raise `{key}` in [{name}.{mode}] of {os.path.relpath(budget_path, ROOT)} to "
              f"{got:,.0f} in the same commit and say why in its `why` (bench/README.md); "
              f"otherwise make the change cheaper.", file=sys.stderr)
    return len(over)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", default=BUDGET, help="the budget file (bench/budget.toml)")
    ap.add_argument("--no-build", action="store_true", help="use the release binaries as they are")
    ap.add_argument("--bin", help="the rocescope binary (default: TARGET/release/rocescope)")
    ap.add_argument("--only", help="the captures to measure, comma-separated (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="valgrind runs at once")
    ap.add_argument("--repeat", action="store_true", help="every run twice; fail if the counts differ")
    ap.add_argument("--save", help="write the measurements to this JSON file")
    ap.add_argument("--measured", help="check these saved measurements instead of measuring")
    a = ap.parse_args()
    try:
        margin, far_under, captures = load_budget(a.budget)
        if a.only:
            wanted = a.only.split(",")
            unknown = [w for w in wanted if w not in captures]
            if unknown:
                raise Failure(f"--only: no capture {', '.join(unknown)} in {a.budget}")
            captures = {k: v for k, v in captures.items() if k in wanted}
        if a.measured:
            try:
                with open(a.measured) as f:
                    measured = json.load(f)
            except (OSError, ValueError) as e:
                raise Failure(f"{a.measured}: {e}")
        else:
            if shutil.which("valgrind") is None:
                raise Failure("valgrind is not installed (apt-get install valgrind)")
            target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
            target = os.path.join(ROOT, target) if not os.path.isabs(target) else target
            if not a.no_build:
                # The profile users install (Cargo.toml [profile.release]): the budget is its cost.
                p = subprocess.run(["cargo", "build", "--release", "-q", "-p", "rocescope",
                                    "-p", "rocescope-samplegen"], cwd=ROOT)
                if p.returncode != 0:
                    raise Failure("cargo build --release failed")
            binary = a.bin or os.path.join(target, "release", "rocescope")
            samplegen = os.path.join(target, "release", "rocescope-samplegen")
            for b in (binary, samplegen):
                if not os.access(b, os.X_OK):
                    raise Failure(f"{b}: not built (cargo build --release -p rocescope -p rocescope-samplegen)")
            measured = measure(binary, samplegen, captures, max(1, a.jobs), a.repeat)
            if a.save:
                with open(a.save, "w") as f:
                    json.dump(measured, f, indent=1)
        over = check(measured, margin, far_under, captures, a.budget)
    except Failure as e:
        print(f"bench/instructions.py: {e}", file=sys.stderr)
        return 2
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
