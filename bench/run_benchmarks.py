#!/usr/bin/env python3
"""nmprof's overhead on a tight malloc/free loop (random sizes 16 B - 4 KiB), as
ratios against a plain run in the same invocation, medians of several alternating
runs; and the instructions the hooks add, counted by callgrind (repeatable).

    bench/run_benchmarks.py --build build [--rounds 7] [--pairs 20000000]
"""

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path


def wall_time(cmd, env=None):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def agent_env(agent, options):
    env = dict(os.environ)
    env["LD_PRELOAD"] = str(agent)
    env["NMPROF_OPTIONS"] = options
    return env


def callgrind_instructions(cmd, env=None):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], env=env,
                       capture_output=True, check=True)
        for line in out.read_text().splitlines():
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError("no callgrind summary")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pairs", type=int, default=20_000_000)
    args = parser.parse_args()
    build = Path(args.build)
    loop = build / "bench" / "malloc_loop"
    agent = build / "lib" / "nmprof" / "libnmprof.so"
    out = Path(tempfile.mkdtemp()) / "bench-%p.jfr"

    configs = {
        "512k": f"nativemem=512k,file={out}",
        "512k, live off": f"nativemem=512k,live=false,file={out}",
        "0 (every allocation)": f"nativemem=0,file={out}",
    }
    print(f"malloc/free loop, {args.pairs:,} pairs per thread, median of {args.rounds} alternating runs")
    for threads in (1, 2):
        pairs = args.pairs if "0 (" not in configs else args.pairs
        times = {name: [] for name in ["plain", *configs]}
        for _ in range(args.rounds):
            times["plain"].append(wall_time([loop, str(threads), str(pairs)]))
            for name, options in configs.items():
                times[name].append(wall_time([loop, str(threads), str(pairs)], agent_env(agent, options)))
        plain = statistics.median(times["plain"])
        print(f"  {threads} thread(s): plain {plain:.3f} s")
        for name in configs:
            t = statistics.median(times[name])
            print(f"    nativemem={name:22s} {t:.3f} s   ratio {t / plain:.3f}")

    # Instructions per malloc+free pair that the hooks add when nothing is sampled
    # (an interval of 1 TiB never samples), from the difference of two run lengths.
    n = 200_000
    never = "nativemem=1t,file=" + str(out)
    never_off = "nativemem=1t,live=false,file=" + str(out)
    plain = [callgrind_instructions([str(loop), "1", str(k)]) for k in (n, 2 * n)]
    hooked = [callgrind_instructions([str(loop), "1", str(k)], agent_env(agent, never)) for k in (n, 2 * n)]
    hooked_off = [callgrind_instructions([str(loop), "1", str(k)], agent_env(agent, never_off)) for k in (n, 2 * n)]
    sampled = [callgrind_instructions([str(loop), "1", str(k)], agent_env(agent, "nativemem=512k,file=" + str(out)))
               for k in (n, 2 * n)]
    per_pair = lambda v: (v[1] - v[0]) / n
    print("instructions per malloc+free pair (callgrind):")
    print(f"  plain                          {per_pair(plain):8.1f}")
    print(f"  hooked, not sampled, live on   {per_pair(hooked):8.1f}  (+{per_pair(hooked) - per_pair(plain):.1f})")
    print(f"  hooked, not sampled, live off  {per_pair(hooked_off):8.1f}  (+{per_pair(hooked_off) - per_pair(plain):.1f})")
    print(f"  sampled at 512k, live on       {per_pair(sampled):8.1f}  (+{per_pair(sampled) - per_pair(plain):.1f})")


if __name__ == "__main__":
    main()
