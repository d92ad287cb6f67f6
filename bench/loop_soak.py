#!/usr/bin/env python3
"""`run --loop` over a long run: nmprof's own memory (VmRSS) and descriptors, and
the disk space the agent's recording takes (what the written chunks hold is punched
out of it), read every second, stay flat while chunks are cut; the chunks, read
together, add up to what the program allocated. The program is e2e/programs/paced_allocations.c (4 KiB
blocks allocated and freed at a steady pace, 64 KiB blocks each held 1.5 s, a leak at
its start).

    bench/loop_soak.py --build build [--seconds 600] [--period 10] [--jvm JDK_HOME]

With --jvm, the program is a JVM instead (bench/java/PacedDeflater.java: 2,000
Deflaters a second), and the chunks' bytes per Deflater are set against those of a
one-shot recording of the same program.

Prints nmprof's RSS and descriptor count and the recording's size and space on disk
over the run (first reading after the first chunk, last, highest), the chunks' sizes, and each site's bytes from
`nmprof report chunk-*.jfr` against the program's own count.
"""

import argparse
import json
import math
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def status_of(pid, chunks):
    """nmprof's VmRSS (KiB) and open descriptors, and the size and the space on disk
    (bytes) of the agent's recording; None once nmprof is gone."""
    try:
        rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                   if line.startswith("VmRSS:"))
        fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
        recording = next(chunks.glob(".nmprof-*/*.jfr")).stat()
        return rss, fds, recording.st_size, recording.st_blocks * 512
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return None


def native_program(work, seconds):
    program = work / "paced_allocations"
    subprocess.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", str(program),
                    str(HERE.parent / "e2e/programs/paced_allocations.c")], check=True)
    return [str(program), str(seconds), "1000000"]


def jvm_program(work, seconds, jdk):
    subprocess.run([str(jdk / "bin/javac"), "-d", str(work), str(HERE / "java/PacedDeflater.java")], check=True)
    return [str(jdk / "bin/java"), "-Xmx256m", "-cp", str(work), "PacedDeflater", str(seconds)]


def bytes_per_deflater(nmprof, files, streams):
    merged = json.loads(subprocess.run([str(nmprof), "report", *map(str, files), "--format", "json", "--top", "1000"],
                                       capture_output=True, text=True, check=True).stdout)
    deflating = sum(s["estimated_bytes"] for s in merged["stacks"] if any(
        f["function"] == "main" and f.get("container") == "PacedDeflater" for f in s["frames"]))
    return deflating / streams, merged["allocated"]["samples"]


def soak(nmprof, seconds, period, work, command):
    chunks = work / "chunks"
    chunks.mkdir()
    proc = subprocess.Popen([str(nmprof), "run", "--loop", str(period), "--nativemem", "64k", "-q",
                             "-o", str(chunks / "c-%n.jfr"), "--", *command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    readings = []  # (seconds since start, rss KiB, fds, recording's size, its space on disk)
    begun = time.monotonic()
    while proc.poll() is None:
        status = status_of(proc.pid, chunks)
        if status:
            readings.append((time.monotonic() - begun, *status))
        time.sleep(1)
    out, err = proc.communicate()
    files = sorted(chunks.glob("c-*.jfr"), key=lambda f: int(f.stem.split("-")[1]))
    return readings, files, out, proc.returncode, err


def native_accuracy(nmprof, files, out):
    truth = {site: int(n) for site, n in (line.split() for line in out.splitlines())}
    merged = json.loads(subprocess.run([str(nmprof), "report", *map(str, files), "--format", "json", "--top", "100"],
                                       capture_output=True, text=True, check=True).stdout)
    samples = merged["allocated"]["samples"]
    bound = 4 / math.sqrt(samples) + 0.03
    for site, allocated in truth.items():
        estimated = sum(s["estimated_bytes"] for s in merged["stacks"] if s["frames"][0]["function"] == site)
        print(f"{site}: {estimated / allocated:.4f} of the truth ({allocated} B; bound ±{bound:.3f})")


def jvm_accuracy(nmprof, files, out, command, work):
    """The chunks' bytes per Deflater against a one-shot recording of 20 s."""
    per_stream, samples = bytes_per_deflater(nmprof, files, int(out.split()[-1]))
    one_shot = work / "one-shot.jfr"
    result = subprocess.run([str(nmprof), "run", "--nativemem", "64k", "-q", "-o", str(one_shot), "--",
                             *command[:-1], "20"], capture_output=True, text=True, check=True)
    reference, _ = bytes_per_deflater(nmprof, [one_shot], int(result.stdout.split()[-1]))
    bound = 4 / math.sqrt(samples) + 0.03
    print(f"bytes per Deflater: {per_stream:.0f} in the chunks, {reference:.0f} in a one-shot recording of 20 s: "
          f"{per_stream / reference:.4f} (bound ±{bound:.3f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", type=Path)
    parser.add_argument("--seconds", default=600, type=float)
    parser.add_argument("--period", default=10, type=float)
    parser.add_argument("--jvm", type=Path, help="a JDK's home: soak a JVM")
    args = parser.parse_args()
    nmprof = args.build / "bin/nmprof"
    with tempfile.TemporaryDirectory(prefix="nmprof-soak-") as work:
        work = Path(work)
        command = jvm_program(work, args.seconds, args.jvm) if args.jvm else native_program(work, args.seconds)
        readings, files, out, status, err = soak(nmprof, args.seconds, args.period, work, command)
        settled = [r for r in readings if r[0] >= args.period + 2] or readings  # after the first chunk
        print(f"{args.seconds:.0f} s, a chunk every {args.period:g} s: {len(files)} chunks, exit status {status}")
        print(f"nmprof RSS: {settled[0][1] / 1024:.1f} MiB after the first chunk, {settled[-1][1] / 1024:.1f} MiB "
              f"at the end, at most {max(r[1] for r in settled) / 1024:.1f} MiB ({len(readings)} readings)")
        print(f"nmprof descriptors: {min(r[2] for r in settled)} to {max(r[2] for r in settled)}")
        print(f"the agent's recording: {settled[-1][3] / 2**20:.1f} MiB in size at the end, on disk "
              f"{settled[0][4] / 2**20:.2f} MiB after the first chunk, {settled[-1][4] / 2**20:.2f} MiB at the end, "
              f"at most {max(r[4] for r in settled) / 2**20:.2f} MiB")
        sizes = [f.stat().st_size for f in files]
        print(f"chunk sizes: first {sizes[0]} B, middle {sizes[len(sizes) // 2]} B, last {sizes[-1]} B")
        if args.jvm:
            jvm_accuracy(nmprof, files, out, command, work)
        else:
            native_accuracy(nmprof, files, out)
        said = [line for line in err.splitlines() if line and "profile written to" not in line]
        if said:
            print("nmprof said:", *said, sep="\n  ")


if __name__ == "__main__":
    main()
