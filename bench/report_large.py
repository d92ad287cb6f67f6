#!/usr/bin/env python3
"""Time and peak memory of `nmprof report` on a large recording, against the JDK's
`jfr summary` on the same file.

    bench/report_large.py --build build [--pairs 2200000] [--threads 2] [--recording big.jfr] [--rounds 3]

The recording is made once (kept when --recording names an existing file): the
benchmark's malloc loop under `nmprof run --nativemem 0`, so every malloc and free is
an event (about 2 * pairs * threads of them, ~60 bytes each with a 2-thread loop).
Each tool then runs --rounds times; the medians of wall time and of peak RSS
(GNU time's "Maximum resident set size") are printed, with MB/s of the file.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

JFR = Path(os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")) / "bin" / "jfr"


def make_recording(build, path, threads, pairs):
    nmprof = build / "bin" / "nmprof"
    loop = build / "bench" / "malloc_loop"
    subprocess.run([nmprof, "run", "-q", "--nativemem", "0", "-o", path, "--", loop, str(threads), str(pairs)],
                   check=True, stdout=subprocess.DEVNULL)


def measure(cmd):
    """Wall seconds and peak RSS in MB of one run (output discarded)."""
    with tempfile.NamedTemporaryFile("r") as stats:
        subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", stats.name, *map(str, cmd)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds, kilobytes = stats.read().split()[-2:]
    return float(seconds), int(kilobytes) / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build", type=Path)
    parser.add_argument("--recording", type=Path, help="reuse this file when it exists, else make it there")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=2_200_000, help="malloc/free pairs per thread")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    work = tempfile.TemporaryDirectory()
    recording = args.recording or Path(work.name) / "large.jfr"
    if not recording.exists():
        make_recording(args.build, recording, args.threads, args.pairs)
    megabytes = recording.stat().st_size / 1e6
    print(f"recording: {recording} ({megabytes:.0f} MB)")

    nmprof = args.build / "bin" / "nmprof"
    out = Path(work.name) / "out"
    tools = {
        "nmprof report": [nmprof, "report", recording],
        "nmprof report --live": [nmprof, "report", "--live", recording],
        "nmprof report --format pprof": [nmprof, "report", "--format", "pprof", "-o", f"{out}.pb.gz", recording],
        "nmprof report --format collapsed": [nmprof, "report", "--format", "collapsed", recording],
    }
    if JFR.exists():
        tools["jfr summary"] = [JFR, "summary", recording]
    print(f"{'':34}{'seconds':>9}{'s/100MB':>9}{'peak RSS MB':>13}")
    for name, cmd in tools.items():
        runs = [measure(cmd) for _ in range(args.rounds)]
        seconds = statistics.median(r[0] for r in runs)
        rss = statistics.median(r[1] for r in runs)
        print(f"{name:34}{seconds:9.2f}{seconds / megabytes * 100:9.2f}{rss:13.0f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
