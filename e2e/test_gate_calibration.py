"""The CI gate decides at its stated confidence: the short version of
bench/gate_calibration.py (6 runs of a 40 MiB planted leak instead of 30), with a
loose bound. Each wrong decision (a pass below the truth, a fail above it) should
happen in under 2.5% of the runs; here at most one of the 12 decisions on each side
may be wrong, and the 95% interval must hold the truth in at least 4 of the 6 runs."""

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "gate_calibration.py"


def test_the_live_gate_rarely_decides_wrongly_on_a_planted_leak(nmprof):
    out = subprocess.run([sys.executable, BENCH, "--nmprof", nmprof, "--runs", "6", "--json"], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    figures = json.loads(out)
    assert figures["false_pass_rate"] <= 1 / 12, figures
    assert figures["false_fail_rate"] <= 1 / 12, figures
    assert figures["interval_coverage"] >= 4 / 6, figures
    # Limits far from the truth are decided, not left undecided.
    outcomes = figures["outcomes_by_limit_mib"]
    assert outcomes["16"]["fail"] >= 5 and outcomes["64"]["pass"] >= 5, figures
