#!/usr/bin/env python3
"""How often the CI gate decides wrongly: the planted-leak program (e2e/programs/
planted_leak.c, exactly SIZE live at its end) recorded --runs times, each run with
its own random countdowns (the agent seeds every thread from the cycle counter), then
`report --fail-on-live LIMIT` at limits below and above the truth.

    bench/gate_calibration.py [--nmprof build/bin/nmprof] [--runs 30] [--leak-mib 40] [--nativemem 512k] [--json]

A pass at a limit below the truth is a false pass, a fail above it a false fail;
undecided (exit status 4) is neither. At --confidence 0.95 each should stay under
2.5% (the one-sided tail of a two-sided interval). Also printed: how often the 95%
interval of the live estimate held the truth (about 95% expected).
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE.parent / "e2e" / "programs" / "planted_leak.c"
MIB = 1 << 20


def record(nmprof, program, leak_mib, nativemem, path):
    subprocess.run([nmprof, "run", "-q", "--nativemem", nativemem, "-o", path, "--", program, f"{leak_mib}m"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def live_estimate(nmprof, path):
    """The live estimate and its 95% margin, in bytes."""
    out = subprocess.run([nmprof, "report", "-q", "--format", "json", path], check=True, capture_output=True,
                         text=True).stdout
    live = json.loads(out)["live"]
    return live["estimated_bytes"], live["bytes_margin"]


def gate(nmprof, path, limit_mib):
    result = subprocess.run([nmprof, "report", "-q", "--format", "json", "--fail-on-live", f"{limit_mib}m", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    outcome = {0: "pass", 3: "fail", 4: "undecided"}.get(result.returncode)
    if outcome is None:
        sys.exit(f"gate_calibration: report exited {result.returncode}: {result.stderr.strip()}")
    return outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nmprof", type=Path, default=HERE.parent / "build" / "bin" / "nmprof")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--leak-mib", type=int, default=40)
    parser.add_argument("--nativemem", default="512k")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    nmprof = args.nmprof
    truth = args.leak_mib * MIB
    limits = [args.leak_mib * f for f in (0.4, 0.8, 1.2, 1.6)]
    limits = [int(round(l)) for l in limits]
    outcomes = {l: {"pass": 0, "fail": 0, "undecided": 0} for l in limits}
    covered = 0
    with tempfile.TemporaryDirectory() as work:
        program = Path(work) / "planted_leak"
        subprocess.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", program, PROGRAM], check=True)
        for run in range(args.runs):
            path = Path(work) / f"run{run}.jfr"
            record(nmprof, program, args.leak_mib, args.nativemem, path)
            estimate, margin = live_estimate(nmprof, path)
            covered += abs(estimate - truth) <= margin
            for limit in limits:
                outcomes[limit][gate(nmprof, path, limit)] += 1
    below = [l for l in limits if l * MIB < truth]
    above = [l for l in limits if l * MIB > truth]
    decisions = args.runs * len(below)
    figures = {
        "runs": args.runs,
        "truth_mib": args.leak_mib,
        "nativemem": args.nativemem,
        "interval_coverage": covered / args.runs,
        "false_pass_rate": sum(outcomes[l]["pass"] for l in below) / decisions,
        "false_fail_rate": sum(outcomes[l]["fail"] for l in above) / (args.runs * len(above)),
        "undecided_rate": sum(o["undecided"] for o in outcomes.values()) / (args.runs * len(limits)),
        "outcomes_by_limit_mib": {str(l): outcomes[l] for l in limits},
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"{args.runs} runs of a {args.leak_mib} MiB planted leak at --nativemem {args.nativemem}")
    print(f"  95% interval held the truth: {figures['interval_coverage']:.1%}")
    for l in limits:
        o = outcomes[l]
        print(f"  --fail-on-live {l}m ({'below' if l in below else 'above'} the truth): "
              f"{o['pass']} pass, {o['fail']} fail, {o['undecided']} undecided")
    print(f"  false pass: {figures['false_pass_rate']:.1%}, false fail: {figures['false_fail_rate']:.1%}, "
          f"undecided: {figures['undecided_rate']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
