#!/usr/bin/env python3
"""PHP's `.=` in a loop (bench/php/concat.php: one erealloc per iteration), run
without nmprof and under `nmprof run` (the same invocation otherwise): the median
CPU time (user + system, so that other load on the machine counts less) of each,
and their ratio. Also the allocated bytes the recording reports, which should be
about the string's final size.

The ratio of a run of a few hundred milliseconds mixes two costs, which are also
given apart: what `nmprof run` costs whatever the script does (the script with one
iteration: the agent's start and first samples in PHP, the report at exit, which
is also timed alone), and what the loop costs (the difference of the two lengths,
with and without nmprof). --libc-heap runs PHP with USE_ZEND_ALLOC=0: the string is
then grown by libc's realloc.

    bench/php_concat.py --build build [--rounds 7] [--iterations 400000] [--nativemem 512k] [--libc-heap]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path


def cpu_seconds(command, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=400000)
    parser.add_argument("--nativemem", default="512k")
    parser.add_argument("--libc-heap", action="store_true", help="USE_ZEND_ALLOC=0")
    args = parser.parse_args()
    env = dict(os.environ, USE_ZEND_ALLOC="0") if args.libc_heap else None
    nmprof = Path(args.build) / "bin" / "nmprof"
    php = shutil.which("php8.2") or shutil.which("php")
    script = Path(__file__).parent / "php" / "concat.php"
    with tempfile.TemporaryDirectory() as tmp:
        out, short = Path(tmp) / "concat.jfr", Path(tmp) / "one.jfr"
        plain = lambda n: [php, str(script), str(n)]
        profiled = lambda n: ([str(nmprof), "run", "-q", "--nativemem", args.nativemem, "-o",
                               str(out if n > 1 else short), "--"] + plain(n))
        times = {key: [] for key in [(kind, n) for kind in ("without", "under") for n in (1, args.iterations)]
                 + [("report", 1)]}
        for _ in range(args.rounds):  # interleaved: load changes hit all alike
            for n in (1, args.iterations):
                times["without", n].append(cpu_seconds(plain(n), env))
                times["under", n].append(cpu_seconds(profiled(n), env))
            times["report", 1].append(cpu_seconds([str(nmprof), "report", str(short)]))
        report = json.loads(subprocess.run([str(nmprof), "report", "--format", "json", str(out)], check=True,
                                           capture_output=True, text=True).stdout)
    m = {key: statistics.median(values) for key, values in times.items()}
    n = args.iterations

    def row(label, without, under, after=""):
        cells = "".join(f"{v * 1000:10.1f}" if v is not None else " " * 10 for v in (without, under))
        print(f"  {label:<38}{cells}   {after}".rstrip())

    print(f"{n} iterations, median CPU ms of {args.rounds} rounds")
    print(f"  {'':<38}{'without':>10}{'under':>10}")
    row("the script", m["without", n], m["under", n], f"{m['under', n] / m['without', n]:.3f}x")
    row("one iteration (what the run costs)", m["without", 1], m["under", 1],
        f"+{(m['under', 1] - m['without', 1]) * 1000:.1f} ms")
    row("  its report at exit, alone", None, m["report", 1])
    loop_without, loop_under = m["without", n] - m["without", 1], m["under", n] - m["under", 1]
    row("the loop (the difference)", loop_without, loop_under, f"{loop_under / loop_without:.3f}x")
    final = n * 100
    allocated = report["allocated"]["estimated_bytes"]
    print(f"allocated {allocated / 2**20:.1f} MiB reported, string {final / 2**20:.1f} MiB, "
          f"{report['allocated']['samples']} samples")


if __name__ == "__main__":
    main()
