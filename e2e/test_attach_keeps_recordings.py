"""nmprof attach keeps what it recorded: on a full output disk the agent's recording stays
where it is and nmprof says where (as run does); stop and dump after the target ended
deliver the recording its agent left; a target that ends while nmprof looks for a safe
point is said to have done so. Before: the recording was deleted, "no such process"."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import jfr_events, run
from test_attach import one_line_error
from test_attach_native import left_in_tmp, program, sampled_functions, target  # noqa: F401 (fixtures)


@pytest.fixture
def full_disk(tmp_path):
    """A directory on a 16 KiB file system: the output cannot be written there."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to mount a small tmpfs")
    directory = tmp_path / "full"
    directory.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", directory], check=True)
    yield directory
    subprocess.run(["umount", directory], check=True)


@pytest.mark.parametrize("how", ["one shot", "stop"])
def test_a_full_output_disk_keeps_the_recording_where_it_is_and_says_where(nmprof, target, tmp_path, full_disk,
                                                                           how):
    stop = tmp_path / "stop"
    t = target("loop", stop)
    output = full_disk / "out.jfr"
    if how == "one shot":
        result = run(nmprof, "attach", t.pid, "--duration", "1", "-o", output)
    else:
        run(nmprof, "attach", t.pid, "start", "-q", check=0)
        time.sleep(1)
        result = run(nmprof, "attach", t.pid, "stop", "-o", output)
    assert result.returncode == 1, result.stderr
    kept = left_in_tmp(t.pid)
    assert len(kept) == 1, kept
    assert result.stderr.splitlines()[-1] == (
        f"nmprof: cannot write the output: No space left on device; the recording is kept in /tmp/{kept[0]}")
    assert not output.exists()
    try:
        # Whole and readable: what the user recorded is there.
        assert "leaky_site" in sampled_functions(Path("/tmp") / kept[0])
        assert "not recording" in run(nmprof, "attach", t.pid, "status", check=0).stdout
    finally:
        (Path("/tmp") / kept[0]).unlink()
    t.proc.kill()


@pytest.mark.parametrize("end", ["exited and reaped", "killed, a zombie"])
def test_dump_and_stop_after_the_target_ended_deliver_what_its_agent_left(nmprof, target, tmp_path, end):
    stop = tmp_path / "stop"
    t = target("loop", stop)
    run(nmprof, "attach", t.pid, "start", "-q", check=0)
    time.sleep(1.5)  # the agent writes every second
    if end == "exited and reaped":
        stop.touch()
        code, out, _ = t.finish()
        assert code == 0 and out.startswith("ok")
    else:
        os.kill(t.pid, signal.SIGKILL)  # not reaped: the test is its parent
        while open(f"/proc/{t.pid}/stat").read().rsplit(") ", 1)[1][0] != "Z":
            time.sleep(0.01)
    left = left_in_tmp(t.pid)
    assert len(left) == 1
    one_line_error(run(nmprof, "attach", t.pid, "status"),
                   f"process {t.pid} has ended; the recording its agent left is in /tmp/{left[0]}",
                   f"nmprof attach {t.pid} stop -o FILE")
    dumped = tmp_path / "dump.jfr"
    run(nmprof, "attach", t.pid, "dump", "-q", "-o", dumped, check=0)
    assert left_in_tmp(t.pid) == left, "dump leaves it"
    stopped = tmp_path / "stop.jfr"
    result = run(nmprof, "attach", t.pid, "stop", "-o", stopped, check=0)
    assert f"nmprof: process {t.pid} has ended; delivering the recording its agent left in /tmp/{left[0]}" \
        in result.stderr
    for path in (dumped, stopped):
        assert {"leaky_site", "churn_site"} <= sampled_functions(path)
    assert len(jfr_events(stopped, "nmprof.Process")) == 1
    assert not left_in_tmp(t.pid), "stop removes it"
    result = run(nmprof, "attach", t.pid, "stop", "-o", tmp_path / "again.jfr")
    assert result.returncode == 1 and "delivering" not in result.stderr


def test_a_target_that_ends_while_nmprof_waits_for_a_safe_point_is_said_to(nmprof, target, tmp_path):
    # Its only thread waits in system(): a frame of the C library under the wait, never
    # a safe point. Before: "no such process", as if the pid had been wrong. It waits
    # 6 s: long enough for nmprof to be searching by then on a loaded machine (with 2 s,
    # it once exited before the search, "during the attach").
    t = target("shell", 6)
    begun = time.monotonic()
    result = run(nmprof, "attach", t.pid, "--duration", "1", "-o", tmp_path / "x.jfr", "--timeout", "60")
    one_line_error(result, f"nmprof: process {t.pid} exited while nmprof waited for a safe point")
    assert time.monotonic() - begun < 30
    assert not left_in_tmp(t.pid)


def test_threads_that_end_as_nmprof_stops_them_do_not_end_the_search(nmprof, target, tmp_path):
    # Its threads start and end all the time, busy in the C library (rarely at a safe
    # point) until they end: nmprof often holds one as it ends. Before, that could end
    # the attach at once ('exited during the attach', about a process that ran on).
    t = target("churn", 60)
    result = run(nmprof, "attach", t.pid, "--duration", "1", "-o", tmp_path / "x.jfr", "--timeout", "3")
    assert result.returncode == 0 or \
        f"no thread of process {t.pid} reached a point where it is safe" in result.stderr, result.stderr
    assert t.proc.poll() is None, "it runs on"
