#!/usr/bin/env python3
"""nmprof's overhead on a tight malloc/free loop (random sizes 16 B - 4 KiB), as
ratios against a plain run in the same invocation, medians of several alternating
runs; and the instructions the hooks add, counted by callgrind (repeatable).

    bench/run_benchmarks.py --build build [--rounds 7] [--pairs 20000000] [--only native|java|attach|context|php|descriptors|loop]

With JAVA_HOME naming a JDK (default: JDK 17), it also times a Deflater-heavy Java
workload with and without nmprof; with PHP 8.2 installed, a ZendMM churn script.
"""

import argparse
import http.server
import os
import resource
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path


def wall_time(cmd, env=None):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def agent_env(agent, options):
    env = dict(os.environ)
    env["LD_PRELOAD"] = str(agent)
    env["NMPROF_OPTIONS"] = options
    return env


def callgrind_instructions(cmd, env=None, within=None):
    """Instructions the command runs (only inside the function `within`, if given)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "cg.out"
        toggle = [f"--toggle-collect={within}"] if within else []
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *toggle, *cmd], env=env,
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
    parser.add_argument("--java-iterations", type=int, default=20000)
    parser.add_argument("--php-requests", type=int, default=3000)
    parser.add_argument("--only", choices=["native", "java", "attach", "context", "php", "startup", "descriptors",
                                           "loop"],
                        help="run one part only")
    args = parser.parse_args()
    if args.only == "startup":
        startup_benchmark(Path(args.build), args.rounds)
        return
    if args.only == "descriptors":
        descriptors_benchmark(Path(args.build))
        return
    if args.only == "loop":
        loop_benchmark(Path(args.build), args.rounds, args.pairs)
        return
    if args.only == "context":
        context_benchmark(Path(args.build), args.rounds, args.pairs)
        return
    if args.only == "php":
        php_benchmark(Path(args.build), args.rounds, args.php_requests)
        return
    if args.only == "java":
        java_benchmark(Path(args.build), args.rounds, args.java_iterations)
        return
    if args.only == "attach":
        attach_benchmarks(Path(args.build), 10, 5)
        return
    build = Path(args.build)
    loop = build / "bench" / "malloc_loop"
    agent = build / "lib" / "nmprof" / "libnmprof.so"
    out = Path(tempfile.mkdtemp()) / "bench-%p.jfr"

    configs = {
        "512k": f"nativemem=512k,file={out}",
        "512k, live off": f"nativemem=512k,live=false,file={out}",
        "512k, rate 100": f"nativemem=512k,rate=100,file={out}",
        "0 (every allocation)": f"nativemem=0,file={out}",
        # Every allocation sampled until the file reaches 64 KiB (a few milliseconds in),
        # then the recording stops: what a stopped recording costs the rest of the run.
        "0, stopped at 64k": f"nativemem=0,maxsize=64k,file={out}",
    }
    print(f"malloc/free loop, {args.pairs:,} pairs per thread; each round runs plain and profiled back to back,")
    print(f"the ratio is the median over {args.rounds} rounds of profiled/plain (the machine is shared and noisy)")
    for threads in (1, 2):
        ratios = {name: [] for name in configs}
        plain_times = []
        for _ in range(args.rounds):
            for name, options in configs.items():
                plain = wall_time([loop, str(threads), str(args.pairs)])
                profiled = wall_time([loop, str(threads), str(args.pairs)], agent_env(agent, options))
                plain_times.append(plain)
                ratios[name].append(profiled / plain)
        print(f"  {threads} thread(s): plain {statistics.median(plain_times):.3f} s")
        for name in configs:
            r = ratios[name]
            print(f"    nativemem={name:22s} ratio {statistics.median(r):.3f}  (min {min(r):.3f}, max {max(r):.3f})")
    samples = samples_in(Path(str(out).replace("%p", "*")).parent, configs["512k"], loop, agent, args.pairs)
    print(f"  samples per second at 512k, 1 thread: {samples:,.0f}")
    limited = samples_in(Path(str(out).replace("%p", "*")).parent, configs["512k, rate 100"], loop, agent, args.pairs)
    print(f"  samples per second at 512k with rate=100, 1 thread: {limited:,.0f}")

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
    stopped = [callgrind_instructions([str(loop), "1", str(k)], agent_env(agent, configs["0, stopped at 64k"]))
               for k in (n, 2 * n)]
    per_pair = lambda v: (v[1] - v[0]) / n
    print("instructions per malloc+free pair (callgrind):")
    print(f"  plain                          {per_pair(plain):8.1f}")
    print(f"  hooked, not sampled, live on   {per_pair(hooked):8.1f}  (+{per_pair(hooked) - per_pair(plain):.1f})")
    print(f"  hooked, not sampled, live off  {per_pair(hooked_off):8.1f}  (+{per_pair(hooked_off) - per_pair(plain):.1f})")
    print(f"  sampled at 512k, live on       {per_pair(sampled):8.1f}  (+{per_pair(sampled) - per_pair(plain):.1f})")
    print(f"  recording stopped (max size)   {per_pair(stopped):8.1f}  (+{per_pair(stopped) - per_pair(plain):.1f})")
    if args.only != "native":
        descriptors_benchmark(build)
        startup_benchmark(build, args.rounds)
        java_benchmark(build, args.rounds, args.java_iterations)
        attach_benchmarks(build, 10, 5)
        php_benchmark(build, args.rounds, args.php_requests)
        loop_benchmark(build, args.rounds, args.pairs)


class IngestServer:
    """A Pyroscope ingest endpoint on 127.0.0.1 that takes every request (200, no body)."""

    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def loop_benchmark(build, rounds, pairs):
    """What --loop (and its uploads) cost the program: the tight loop's time under
    nmprof run with a chunk every second (the shortest period: ten times the boundaries
    of --loop 10s), without and with --upload to a local endpoint, against nmprof run
    without --loop, in the same round; the loop runs a few seconds (4x --pairs)."""
    nmprof = build / "bin" / "nmprof"
    loop = build / "bench" / "malloc_loop"
    directory = Path(tempfile.mkdtemp())
    server = IngestServer()
    command = [str(loop), "1", str(4 * pairs)]
    variants = {
        "no --loop": ["-o", str(directory / "whole.jfr")],
        "--loop 1s": ["--loop", "1s", "--keep", "2", "-o", str(directory / "c-%n.jfr")],
        "--loop 1s --upload": ["--loop", "1s", "--keep", "2", "-o", str(directory / "u-%n.pb.gz"), "--upload",
                               server.url],
    }
    times = {name: [] for name in variants}
    cpu = {name: [] for name in variants}  # of nmprof and the program together
    for _ in range(rounds):
        for name, options in variants.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[name].append(wall_time([str(nmprof), "run", "-q", *options, "--", *command]))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    base = times["no --loop"]
    print(f"--loop: the tight loop ({4 * pairs:,} pairs, one thread) under nmprof run at 512k, "
          f"{statistics.median(base):.2f} s without --loop; the loop's time as a ratio to that, and the CPU time "
          f"nmprof's chunks added per second of the run, medians of {rounds} rounds")
    for name in list(variants)[1:]:
        r = [t / b for t, b in zip(times[name], base)]
        added = [(c - b) / t * 1000 for c, b, t in zip(cpu[name], cpu["no --loop"], times[name])]
        print(f"  {name:20s} ratio {statistics.median(r):.3f}  (min {min(r):.3f}, max {max(r):.3f}); "
              f"CPU +{statistics.median(added):.1f} ms per second")


def descriptors_benchmark(build):
    """Instructions per close() that the agent's hook adds (its check that the number
    is not the agent's), from the difference of two run lengths, callgrind."""
    loop = build / "bench" / "close_loop"
    agent = build / "lib" / "nmprof" / "libnmprof.so"
    env = agent_env(agent, "nativemem=1t,file=" + str(Path(tempfile.mkdtemp()) / "close.jfr"))
    n = 100_000
    plain = [callgrind_instructions([str(loop), str(k)]) for k in (n, 2 * n)]
    hooked = [callgrind_instructions([str(loop), str(k)], env) for k in (n, 2 * n)]
    # Each iteration makes two close() calls (and a dup(), not hooked).
    per_close = lambda v: (v[1] - v[0]) / n / 2
    print("instructions per close() (callgrind; user space only, the system call itself is not counted):")
    print(f"  plain    {per_close(plain):6.1f}")
    print(f"  hooked   {per_close(hooked):6.1f}  (+{per_close(hooked) - per_close(plain):.1f})")


def startup_benchmark(build, rounds):
    """What each process of a shell script costs: a bash loop of 300 short commands,
    plain and under nmprof run (every command loads the agent and leaves a recording),
    wall seconds per command; and the instructions of one short command."""
    nmprof = build / "bin" / "nmprof"
    out = Path(tempfile.mkdtemp()) / "script.jfr"
    commands = 300
    script = ["bash", "-c", f"for i in $(seq {commands}); do /bin/true; done"]

    def seconds(cmd):
        start = time.monotonic()
        subprocess.run(cmd, check=True, capture_output=True)
        return time.monotonic() - start

    plain, profiled = [], []
    for _ in range(rounds):
        plain.append(seconds(script))
        profiled.append(seconds([str(nmprof), "run", "-q", "-o", str(out), "--", *script]))
    per_command = lambda v: statistics.median(v) / commands * 1000
    print(f"shell script of {commands} commands: {per_command(plain):.2f} ms per command plain, "
          f"{per_command(profiled):.2f} ms under nmprof run (medians of {rounds})")
    agent = build / "lib" / "nmprof" / "libnmprof.so"
    never = agent_env(agent, f"nativemem=1t,file={out}")
    counts = [callgrind_instructions(["/bin/true"], env) for env in (None, never)]
    print(f"  instructions of /bin/true: plain {counts[0] / 1e6:.2f}M, with the agent {counts[1] / 1e6:.2f}M")
    run_fixed_cost(nmprof, rounds)


def run_fixed_cost(nmprof, rounds):
    """What nmprof run adds to a short PHP command whatever it does: CPU seconds (user +
    system, of nmprof and what it runs) of php -r '' plain, under run -q (the recording is
    only checked), and under run with its summary (whose stacks read the modules' debug
    files), interleaved, medians."""
    out = Path(tempfile.mkdtemp()) / "fixed.jfr"
    command = [PHP, "-r", ""]
    variants = {"plain": command, "run -q": [str(nmprof), "run", "-q", "-o", str(out), "--", *command],
                "run (summary)": [str(nmprof), "run", "-o", str(out), "--", *command]}
    times = {name: [] for name in variants}
    for _ in range(rounds):
        for name, cmd in variants.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(cmd, check=True, capture_output=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    plain = statistics.median(times["plain"])
    print(f"php -r '', CPU ms (medians of {rounds}): " +
          ", ".join(f"{name} {statistics.median(t) * 1000:.0f} (+{(statistics.median(t) - plain) * 1000:.0f})"
                    for name, t in times.items()))


def php_benchmark(build, rounds, requests):
    """The ZendMM churn script with and without nmprof (run -- php), CPU seconds of its
    loop, plain and profiled back to back in each round; and the instructions an
    emalloc+efree pair costs through the agent's handlers when nothing is sampled;
    the instructions of two request loops (churn.php and pages.php) against plain php."""
    nmprof = build / "bin" / "nmprof"
    out = Path(tempfile.mkdtemp()) / "php.jfr"
    script = [PHP, str(Path(__file__).parent / "php" / "churn.php")]
    configs = {"512k": ["--nativemem", "512k"], "512k, live off": ["--nativemem", "512k", "--no-live"]}
    ratios = {name: [] for name in configs}
    plain_times = []
    for _ in range(rounds):
        for name, options in configs.items():
            plain = wall_time([*script, str(requests)])
            profiled = wall_time([str(nmprof), "run", "-q", *options, "-o", str(out), "--", *script, str(requests)])
            plain_times.append(plain)
            ratios[name].append(profiled / plain)
    print(f"PHP churn, {requests} requests, CPU seconds of the loop: plain {statistics.median(plain_times):.3f} s")
    for name, r in ratios.items():
        print(f"  nativemem={name:16s} ratio {statistics.median(r):.3f}  (min {min(r):.3f}, max {max(r):.3f})")
    # The loop counted in instructions (the executor's, so startup is left out):
    # deterministic, where CPU time on a shared machine is not. What 300 more requests
    # cost (600 minus 300), so that one-off work (the first sample builds the frame
    # tables of the modules on its stack) stays out, for churn.php and for pages.php
    # (JSON and templates, closer to an application).
    agent = build / "lib" / "nmprof" / "libnmprof.so"
    for name in ("churn", "pages"):
        script = [PHP, str(Path(__file__).parent / "php" / f"{name}.php")]
        counted = lambda env=None: (callgrind_instructions([*script, "600"], env, within="execute_ex") -
                                    callgrind_instructions([*script, "300"], env, within="execute_ex"))
        plain = counted()
        for config, options in {"512k": "nativemem=512k", "512k, live off": "nativemem=512k,live=false",
                                "never sampled": "nativemem=1t"}.items():
            ratio = counted(agent_env(agent, f"{options},file={out}")) / plain
            print(f"  instructions of 300 requests of {name}.php, nativemem={config:16s} ratio {ratio:.3f}")
    # Startup: PHP dlopens its extensions one by one, and the agent looks at every
    # loaded module's relocations after each dlopen.
    never = agent_env(agent, f"nativemem=1t,file={out}")
    startup = [callgrind_instructions([PHP, "-r", ""], env) for env in (None, never)]
    print(f"  instructions of php -r '' (startup and shutdown): plain {startup[0] / 1e6:.1f}M, "
          f"through nmprof {startup[1] / 1e6:.1f}M")
    # Each turn of this loop makes one string and frees the previous one: the added
    # instructions per turn are those of an emalloc+efree pair through the agent's
    # handlers when nothing is sampled (1 TiB interval), live tracking on.
    loop = lambda k: [PHP, "-n", "-r", f"for ($i = 0; $i < {k}; $i++) {{ $s = str_repeat('a', 100); }}"]
    n = 100_000
    plain = [callgrind_instructions(loop(k)) for k in (n, 2 * n)]
    hooked = [callgrind_instructions(loop(k), never) for k in (n, 2 * n)]
    per_turn = lambda v: (v[1] - v[0]) / n
    print(f"  instructions per emalloc+efree pair, not sampled (callgrind): plain {per_turn(plain):.1f}, "
          f"through nmprof {per_turn(hooked):.1f} (+{per_turn(hooked) - per_turn(plain):.1f})")


def context_benchmark(build, rounds, pairs):
    """nmprof.h: ns per call (plain: no agent in the process), and the malloc loop at
    512 KiB with a new context every 100 allocations against the same loop without."""
    agent = build / "lib" / "nmprof" / "libnmprof.so"
    cost = build / "bench" / "context_cost"
    out = Path(tempfile.mkdtemp()) / "context-%p.jfr"
    options = f"nativemem=512k,attributes=route,file={out}"
    print("nmprof.h calls, ns per call (fastest / median of 15 timings of 10M calls):")
    for call in ("set", "attribute", "clear"):
        plain = subprocess.run([cost, call, "10000000"], capture_output=True, text=True, check=True).stdout.split()
        loaded = subprocess.run([cost, call, "10000000"], env=agent_env(agent, options), capture_output=True,
                                text=True, check=True).stdout.split()
        print(f"  {call:10s} no agent {plain[0]} / {plain[1]}   agent {loaded[0]} / {loaded[1]}")
    loop = build / "bench" / "malloc_loop"
    with_context, without = [], []
    for _ in range(rounds):
        without.append(wall_time([loop, "1", str(pairs)], agent_env(agent, options)))
        with_context.append(wall_time([loop, "1", str(pairs), "context"], agent_env(agent, options)))
    ratios = [w / o for w, o in zip(with_context, without)]
    print(f"malloc loop at 512k, {pairs:,} pairs, context set every 100 allocations vs none: median "
          f"{statistics.median(with_context):.3f} s vs {statistics.median(without):.3f} s, ratio of medians "
          f"{statistics.median(with_context) / statistics.median(without):.3f} (per-round ratios {min(ratios):.3f}"
          f"..{max(ratios):.3f}, {rounds} rounds)")
    n = 200_000
    per_pair = {}
    for name, extra in (("without", []), ("with", ["context"])):
        counts = [callgrind_instructions([str(loop), "1", str(k), *extra], agent_env(agent, options)) for k in (n, 2 * n)]
        per_pair[name] = (counts[1] - counts[0]) / n
    print(f"  instructions per malloc+free pair at 512k (callgrind): without context {per_pair['without']:.1f}, "
          f"with {per_pair['with']:.1f}")


def samples_in(directory, options, loop, agent, pairs):
    """Samples per second that a 1-thread run with `options` takes, from its recording."""
    for old in directory.glob("bench-*.jfr"):
        old.unlink()
    elapsed = wall_time([loop, "1", str(pairs)], agent_env(agent, options))
    recording = next(directory.glob("bench-*.jfr"))
    return samples_in_file(recording) / elapsed


def samples_in_file(path):
    out = subprocess.run([str(JFR), "summary", str(path)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.strip().startswith("profiler.Malloc"):
            return int(line.split()[1])
    return 0


def java_benchmark(build, rounds, iterations):
    """The Deflater workload with and without nmprof (run -- java) at 512 KiB, and
    the cost of a sample with a Java stack, from a run that samples everything."""
    classes = Path(tempfile.mkdtemp())
    subprocess.run([str(JAVAC), "-d", str(classes), str(Path(__file__).parent / "java" / "DeflaterBench.java")],
                   check=True)
    nmprof = build / "bin" / "nmprof"
    out = classes / "bench.jfr"
    java = [str(JAVA), "-cp", str(classes), "DeflaterBench", str(iterations)]
    plain, profiled = [], []
    for _ in range(rounds):
        plain.append(wall_time(java))
        profiled.append(wall_time([str(nmprof), "run", "-q", "--nativemem", "512k", "-o", str(out), "--", *java]))
    p, q = statistics.median(plain), statistics.median(profiled)
    print(f"Deflater workload, {iterations} iterations, median of {rounds}: plain {p:.3f} s, "
          f"nmprof 512k {q:.3f} s, ratio {q / p:.3f} ({samples_in_file(out)} samples)")
    every = [wall_time([str(nmprof), "run", "-q", "--nativemem", "0", "-o", str(out), "--", *java])
             for _ in range(rounds)]
    samples = samples_in_file(out)
    cost = (statistics.median(every) - p) / samples * 1e6
    print(f"  every allocation sampled: {statistics.median(every):.3f} s for {samples} samples with Java stacks: "
          f"{cost:.1f} us per sample")


def attach_benchmark(build, classes, seconds):
    """Throughput of one JVM before attach, while attached at 1m, and after stop."""
    nmprof = build / "bin" / "nmprof"
    jvm = subprocess.Popen([str(JAVA), "-cp", str(classes), "ThroughputBench"], stdout=subprocess.PIPE, text=True)

    def seconds_of(n):
        return [int(jvm.stdout.readline()) for _ in range(n)]
    try:
        seconds_of(5)  # warm-up: JIT compilation
        before = seconds_of(seconds)
        subprocess.run([str(nmprof), "attach", str(jvm.pid), "start", "--nativemem", "1m"], check=True,
                       capture_output=True)
        seconds_of(1)
        during = seconds_of(seconds)
        out = classes / "attached.jfr"
        subprocess.run([str(nmprof), "attach", str(jvm.pid), "stop", "-q", "-o", str(out)], check=True,
                       capture_output=True)
        seconds_of(1)
        after = seconds_of(seconds)
    finally:
        jvm.kill()
        jvm.wait()
    b, d, a = (statistics.median(x) for x in (before, during, after))
    return b / d, b / a


def attach_benchmarks(build, seconds, runs):
    with tempfile.TemporaryDirectory() as d:
        classes = Path(d)
        subprocess.run([str(JAVAC), "-d", str(classes), str(Path(__file__).parent / "java" / "ThroughputBench.java")],
                       check=True)
        ratios = [attach_benchmark(build, classes, seconds) for _ in range(runs)]
    during = statistics.median(r[0] for r in ratios)
    after = statistics.median(r[1] for r in ratios)
    print(f"attach, Deflater throughput in one JVM (median over {runs} JVMs of the median of {seconds} one-second "
          f"windows each): slowdown while attached at 1m {during:.3f}x, after stop {after:.3f}x "
          f"(per JVM after stop: {', '.join(f'{r[1]:.3f}' for r in ratios)})")


JDK = Path(os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"))
JAVA, JAVAC, JFR = JDK / "bin" / "java", JDK / "bin" / "javac", JDK / "bin" / "jfr"
PHP = "php8.2"


if __name__ == "__main__":
    main()
