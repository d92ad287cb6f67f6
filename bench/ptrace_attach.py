#!/usr/bin/env python3
"""nmprof attach to a native process (ptrace): how long the target stops while the
agent is injected, and its malloc/free throughput before, while attached (1 MiB
sampling) and after stop. The target prints, per 100 ms window, its pairs per CPU
second (so that other load on the machine does not count) and the longest gap
between two of its iterations (bench/attach_throughput.c; that gap includes being
descheduled, shown by the "without nmprof" line).

    bench/ptrace_attach.py --build build [--rounds 3] [--phase 3]

Throughputs are medians of the 100 ms windows of each phase (the windows where
nmprof attaches or stops left out), as ratios to "before" of the same run.
"""

import argparse
import re
import statistics
import subprocess
import time
from pathlib import Path


def one_round(nmprof, program, phase, out_dir, attach=True):
    proc = subprocess.Popen([str(program), str(3 * phase + 1)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    begun = time.monotonic()
    time.sleep(phase)
    attach_at = time.monotonic() - begun
    stopped_ms = 0
    if attach:
        started = subprocess.run([str(nmprof), "attach", str(proc.pid), "start", "--nativemem", "1m"], check=True,
                                 capture_output=True, text=True).stderr
        stopped_ms = float(re.search(r"it stopped for ([0-9.]+) ms", started).group(1))
    time.sleep(phase)
    stop_at = time.monotonic() - begun
    if attach:
        subprocess.run([str(nmprof), "attach", str(proc.pid), "stop", "-q", "-o", str(out_dir / "bench.jfr")],
                       check=True, capture_output=True)
    out, _ = proc.communicate(timeout=60)
    windows = [tuple(map(float, line.split())) for line in out.splitlines()]

    def phase_rate(start, end):
        return statistics.median(pairs for t, pairs, _ in windows if start + 0.2 <= t and t + 0.1 <= end - 0.1)

    def longest_gap(around):
        return max(gap for t, _, gap in windows if around - 0.3 <= t <= around + 0.3)

    before = phase_rate(0, attach_at)
    baseline_gap = max(gap for t, _, gap in windows if 0.2 <= t <= attach_at - 0.3)
    return {
        "attached": phase_rate(attach_at, stop_at) / before,
        "after": phase_rate(stop_at, 3 * phase) / before,
        "stopped_ms": stopped_ms,
        "stop_at_attach_ms": longest_gap(attach_at) / 1000,
        "stop_at_stop_ms": longest_gap(stop_at) / 1000,
        "baseline_gap_ms": baseline_gap / 1000,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", type=Path)
    parser.add_argument("--rounds", default=3, type=int)
    parser.add_argument("--phase", default=3.0, type=float, help="seconds before, attached, after")
    args = parser.parse_args()
    nmprof = args.build / "bin" / "nmprof"
    program = args.build / "bench" / "attach_throughput"
    out_dir = args.build / "bench"
    # Alternating with control runs (no attach), whose phase ratios show the machine's own drift.
    results, controls = [], []
    for _ in range(args.rounds):
        results.append(one_round(nmprof, program, args.phase, out_dir))
        controls.append(one_round(nmprof, program, args.phase, out_dir, attach=False))
    for key, label in [("stopped_ms", "thread stopped for injection + start, nmprof's clock (ms)"),
                       ("stop_at_attach_ms", "longest gap in the target around the attach (ms)"),
                       ("stop_at_stop_ms", "longest gap in the target around the stop (ms)"),
                       ("baseline_gap_ms", "longest gap without nmprof (ms, scheduling noise)"),
                       ("attached", "throughput attached at 1 MiB / before"),
                       ("after", "throughput after stop / before")]:
        values = [r[key] for r in results]
        print(f"{label:58} median {statistics.median(values):.3f}  (runs: {', '.join(f'{v:.3f}' for v in values)})")
    for key, label in [("attached", "control: middle phase / before, no nmprof"),
                       ("after", "control: last phase / before, no nmprof")]:
        values = [r[key] for r in controls]
        print(f"{label:58} median {statistics.median(values):.3f}  (runs: {', '.join(f'{v:.3f}' for v in values)})")


if __name__ == "__main__":
    main()
