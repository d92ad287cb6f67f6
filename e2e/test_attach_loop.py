"""nmprof attach PID --loop: a chunk file every period while a one-shot attach records
(issue 32, item 5), for a native process (through ptrace) and a JVM."""

import math
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import JDK17, agent_path, jfr_tool, report_json, run
from test_attach import Target as JvmTarget, java_methods
from test_attach_native import Target, finished_ok, left_in_tmp, program, recorded_pids, sampled_functions, target  # noqa: F401 (fixtures)

HELD_BLOCK, HELD_TICKS = 65536, 150  # paced_allocations.c: a 64 KiB block held 1.5 s, every 10 ms
PACED_PER_HELD = 100 * 4096 / HELD_BLOCK  # what paced_site allocates for each held_site block


def chunk_files(directory):
    files = sorted(directory.glob("c-*.jfr"), key=lambda f: int(re.search(r"(\d+)", f.name).group(1)))
    assert [f.name for f in files] == [f"c-{n}.jfr" for n in range(len(files))], files
    return files


def site_bytes(report, site):
    return sum(s["estimated_bytes"] for s in report["stacks"] if s["frames"][0]["function"] == site)


def test_a_native_process_gives_a_chunk_a_second_that_add_up_and_the_target_goes_on(nmprof, programs, tmp_path):
    paced = subprocess.Popen([str(programs.c("paced_allocations.c")), "8", "1000"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        result = run(nmprof, "attach", paced.pid, "--loop", "1s", "--duration", "4.5", "--nativemem", "16k",
                     "-o", tmp_path / "c-%n.jfr", check=0, timeout=120)
        assert result.returncode == 0, result.stderr
        files = chunk_files(tmp_path)
        assert len(files) >= 4, result.stderr
        for f in files:
            assert f"nmprof: profile written to {f}" in result.stderr
            summary = subprocess.run([str(jfr_tool()), "summary", str(f)], capture_output=True, text=True)
            assert summary.returncode == 0 and re.search(r"profiler\.Malloc\s+[1-9]", summary.stdout), summary
        # The last chunk's summary: what is live at its end, of a target that runs on.
        assert "live at end:" in result.stderr and "live at exit" not in result.stderr, result.stderr
        assert not left_in_tmp(paced.pid)
        out, _ = paced.communicate(timeout=60)
        assert paced.returncode == 0 and "held_site" in out, out

        merged = report_json(nmprof, *files, "--top", "100")
        samples = merged["allocated"]["samples"]
        bound = 4 / math.sqrt(samples) + 0.03
        ratio = site_bytes(merged, "paced_site") / site_bytes(merged, "held_site")
        assert abs(ratio - PACED_PER_HELD) <= 2 * bound * PACED_PER_HELD, (ratio, samples)
        # Every held block was allocated after the attach: the last chunk's live view holds them all.
        live = report_json(nmprof, files[-1], "--live", "--top", "100")
        held = HELD_BLOCK * HELD_TICKS
        assert abs(site_bytes(live, "held_site") - held) <= (4 / math.sqrt(HELD_TICKS) + 0.03) * held, live["live"]
    finally:
        paced.kill()
        paced.communicate()


def test_the_workers_a_server_forks_are_in_the_chunks_and_leave_no_file(nmprof, programs, tmp_path):
    stop = tmp_path / "stop"
    t = Target(programs.c("forking_server.c"), stop)
    try:
        attach = subprocess.Popen([str(nmprof), "attach", str(t.pid), "--loop", "1s", "-q",
                                   "-o", str(tmp_path / "c-%n.jfr")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        time.sleep(2.5)
        stop.touch()  # the server ends, its workers after it: the attach ends with it
        _, err = attach.communicate(timeout=60)
        assert attach.returncode == 0, err
        assert finished_ok(t).startswith("ok")
        files = chunk_files(tmp_path)
        assert len(files) >= 2, err
        assert {"worker_site", "parent_site"} <= set().union(*(sampled_functions(f) for f in files))
        assert len(set().union(*(recorded_pids(f) for f in files))) > 3
        assert not left_in_tmp(t.pid), "no worker recorded on, to write its file as it ended"
    finally:
        t.kill()


def test_a_server_forking_hundreds_of_workers_costs_nmprof_no_descriptor_for_each(nmprof, programs, tmp_path):
    """A worker every 20 ms for 5 s, under an nmprof limited to 64 descriptors. Before,
    nmprof held each worker's file open until the end: past its limit no chunk could be
    written, the agent could not be stopped and recorded on after nmprof had exited, and
    the workers' files piled up in the target's /tmp (a hostile tester's break)."""
    stop = tmp_path / "stop"
    t = Target(programs.c("forking_server.c"), stop)
    limited = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    try:
        attach = subprocess.Popen([str(nmprof), "attach", str(t.pid), "--loop", "1s", "--duration", "5", "-q",
                                   "-o", str(tmp_path / "c-%n.jfr")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, preexec_fn=limited)
        time.sleep(3.5)
        in_tmp = len(left_in_tmp(t.pid))
        _, err = attach.communicate(timeout=60)
        assert attach.returncode == 0, err
        assert err.splitlines() == [f"nmprof: profile written to {f}" for f in chunk_files(tmp_path)], err
        # A worker's file goes once a chunk written holds it: those of the last seconds remain.
        assert in_tmp < 150, in_tmp
        assert "not recording" in run(nmprof, "attach", t.pid, "status", check=0).stdout
        assert not left_in_tmp(t.pid)
        assert finished_ok(t, stop).startswith("ok")
        files = chunk_files(tmp_path)
        assert len(set().union(*(recorded_pids(f) for f in files))) > 100
    finally:
        t.kill()


def test_the_last_chunk_of_an_idle_target_is_written(nmprof, target, tmp_path):
    """A target that allocates nothing: every window, the last included, is a chunk
    (the last was left out when nothing new came in it: a hostile tester's break)."""
    t = target("read", stdin=subprocess.PIPE)
    result = run(nmprof, "attach", t.pid, "--loop", "1s", "--duration", "3.5", "-q", "-o", tmp_path / "c-%n.jfr",
                 check=0, timeout=120)
    assert result.returncode == 0, result.stderr
    assert len(chunk_files(tmp_path)) == 4, result.stderr
    t.proc.stdin.write("\n")
    t.proc.stdin.flush()
    finished_ok(t)


def test_no_chunk_at_all_is_an_error(nmprof, programs, tmp_path):
    """The target's /tmp is full: its agent cannot write a byte. Before, --loop wrote no
    chunk, said nothing and exited 0 (a hostile tester's break)."""
    # The program and the agent where the target sees them (a build under /tmp is hidden
    # there, and the agent's copy into its /tmp would fail first).
    directory = tempfile.mkdtemp(dir="/var/tmp", prefix="nmprof-e2e-")
    os.chmod(directory, 0o755)
    copy = shutil.copy(programs.c("paced_allocations.c"), directory)
    env = dict(os.environ, NMPROF_AGENT=shutil.copy(agent_path(), directory))
    paced = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                              f"mount -t tmpfs -o size=4k tmpfs /tmp && exec {copy} 30 1000"],
                             stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        result = run(nmprof, "attach", paced.pid, "--loop", "1s", "--duration", "2.5", "-q",
                     "-o", tmp_path / "c-%n.jfr", env=env, timeout=120)
        assert result.returncode == 1, result.stderr
        assert "nmprof: no chunk was written: the agent wrote nothing readable" in result.stderr.splitlines()
        assert not list(tmp_path.iterdir())
    finally:
        paced.kill()
        paced.wait()
        shutil.rmtree(directory)


def test_a_jvm_gives_chunks_with_java_frames(nmprof, java_programs, tmp_path):
    t = JvmTarget(java_programs, JDK17, tmp_path)
    try:
        result = run(nmprof, "attach", t.pid, "--loop", "1s", "--duration", "3.5", "--nativemem", "256k", "-q",
                     "-o", tmp_path / "c-%n.jfr", check=0, timeout=120)
        assert result.returncode == 0, result.stderr
        files = chunk_files(tmp_path)
        assert len(files) >= 3, result.stderr
        for f in files[:-1]:  # each full second has its share of the target's steady work
            assert any(("AttachTarget", "compressLoop") in s for s in java_methods(f, JDK17)), f
        stdout, _ = t.finish()
        assert stdout.strip() == "done true"
        assert not left_in_tmp(t.pid)
    finally:
        t.kill()


@pytest.mark.parametrize("args, message", [
    (["start", "--loop", "1s", "-o", "c-%n.jfr"],
     "--loop writes chunks while a one-shot attach records: give no action (start)"),
    (["--loop", "1s", "-o", "c.jfr"],
     "--loop writes a file per chunk: -o needs %n (the chunk's number) or %t (its start time), e.g. -o app-%n.jfr"),
    (["--loop", "1s"],
     "--loop writes a file per chunk: -o needs %n (the chunk's number) or %t (its start time), e.g. -o app-%n.jfr"),
    (["--keep", "2", "-o", "c-%n.jfr"], "--keep N keeps the newest N chunks of --loop: give --loop"),
], ids=["action", "output", "default output", "keep alone"])
def test_loop_options_that_cannot_be_followed_are_refused_before_the_attach(nmprof, target, tmp_path, args,
                                                                           message):
    stop = tmp_path / "stop"
    t = target("loop", stop)
    result = run(nmprof, "attach", t.pid, *args, cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.splitlines() == [f"nmprof: {message}"], result.stderr
    assert not left_in_tmp(t.pid)
    finished_ok(t, stop)
    assert [f.name for f in tmp_path.iterdir()] == ["stop"]
