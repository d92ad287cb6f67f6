"""Recording under many threads: 32 threads allocating, freeing and reallocating while
threads start and end, with forks and dlopen/dlclose in between. Nothing may crash or
hang, no sample may be lost (the agent's statistics say so), and the totals must
agree with the program's own counts: exactly when every allocation is sampled,
within statistical bounds at 4 KiB."""

import math
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import nmprof_path, report_json, run, unused_uid

SIZES = {"site_malloc": 64, "site_calloc": 10 * 24, "site_realloc": 3000}


def stress(nmprof, programs, tmp_path, interval):
    out = tmp_path / "stress.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", interval, "-o", out, "--", programs.c("thread_stress.c"), 3, 32,
                 programs.shared("plugin.c"), timeout=300, check=0)
    printed = dict(line.split() for line in result.stdout.splitlines())
    assert int(printed["threads"]) > 32 and int(printed["forks"]) > 0, printed
    report = report_json(nmprof, out)
    process = next(p for p in report["processes"] if p["pid"] == int(printed["pid"]))
    stats = process["statistics"]
    assert stats["lost_samples"] == 0, stats
    by_site = {site: [0, 0.0, 0.0] for site in SIZES}  # samples, estimated bytes, estimated count
    for stack in report["stacks"]:
        site = stack["frames"][0]["function"]
        if site in by_site and any(p["pid"] == process["pid"] for p in stack["processes"]):
            by_site[site][0] += stack["samples"]
            by_site[site][1] += stack["estimated_bytes"]
            by_site[site][2] += stack["estimated_count"]
    # A realloc counts what it adds to its block (the program sums it for site_realloc).
    truth = {site: (int(printed[site]), int(printed.get(site + "_bytes", int(printed[site]) * SIZES[site])))
             for site in SIZES}
    return truth, by_site, stats, report


def test_every_allocation_of_many_threads_is_recorded(nmprof, programs, tmp_path):
    truth, recorded, stats, report = stress(nmprof, programs, tmp_path, "0")
    for site, (count, allocated) in truth.items():
        assert recorded[site][0] == count, (site, recorded[site], count)
        assert recorded[site][1] == allocated, site
    # The statistics count what the file holds: the parent's samples plus the library's.
    assert stats["samples"] >= sum(count for count, _ in truth.values())
    assert not report["warnings"], report["warnings"]


def test_estimates_of_many_threads_agree_with_true_totals(nmprof, programs, tmp_path):
    truth, recorded, stats, report = stress(nmprof, programs, tmp_path, "4k")
    interval = 4096
    for site, (count, allocated) in truth.items():
        size = allocated / count  # a realloc's growth varies: its mean
        p = -math.expm1(-size / interval)
        sd = math.sqrt(count * size * size * (1 - p) / p)
        assert abs(recorded[site][1] - allocated) <= 5 * sd + 1e-3 * allocated, (site, recorded[site], allocated)
    assert not report["warnings"], report["warnings"]


def test_a_process_whose_main_thread_exits_ends_with_its_last_thread(nmprof, programs, tmp_path):
    # The agent's writer thread must not keep the process alive: it ends when it is
    # the only thread left, and glibc then ends the process as the worker would have.
    out = tmp_path / "main_exits.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "4k", "-o", out, "--", programs.c("main_thread_exits.c"),
                 timeout=60, check=0)
    assert result.stdout == "worker done\n"
    report = report_json(nmprof, out)
    assert report["processes"][0]["statistics"]["samples"] > 0
    assert any(s["frames"][0]["function"] == "work" for s in report["stacks"])


def test_a_process_refused_a_writer_thread_is_recorded_by_its_own_threads(nmprof, programs):
    # Under RLIMIT_NPROC the system refuses the agent's writer thread: one line says
    # so, and the sampling threads write everything themselves, nothing lost.
    if os.geteuid() != 0:
        pytest.skip("needs root, to run the program as a user of its own under RLIMIT_NPROC")
    uid = unused_uid()
    # Readable by that user: the agent names frames from the program's own file.
    directory = tempfile.mkdtemp(prefix="nmprof-e2e-nproc-", dir="/var/tmp")
    try:
        os.chmod(directory, 0o1777)
        program = shutil.copy(programs.c("writer_refused.c"), directory)
        out = os.path.join(directory, "refused.jfr")
        # Preloaded, not under `nmprof run`, whose private directory the user may not write.
        agent = nmprof_path().parent.parent / "lib" / "nmprof" / "libnmprof.so"
        env = dict(os.environ, LD_PRELOAD=str(agent), NMPROF_OPTIONS=f"nativemem=0,file={out}")
        result = subprocess.run([program, str(uid), "20000"], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "worker_site 20000\nmain_site 20000\n"
        refusals = [line for line in result.stderr.splitlines() if "no writer thread" in line]
        assert len(refusals) == 1 and "EAGAIN" in refusals[0], result.stderr
        report = report_json(nmprof, out)
        assert report["processes"][0]["statistics"]["lost_samples"] == 0
        samples = {}
        for stack in report["stacks"]:
            for frame in stack["frames"]:
                if frame["function"] in ("worker_site", "main_site"):
                    samples[frame["function"]] = samples.get(frame["function"], 0) + stack["samples"]
                    break
        assert samples == {"worker_site": 20000, "main_site": 20000}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
