"""Programs that end without running anything of the agent's: a raw exit_group (every Go
program leaves so, cgo's included) or SIGKILL end every thread at once. Issue 38,
item 6: such recordings lost their last second and the live view at the exit (one
that exited within its first second left no recording at all). The agent's exit
watch, a process that shares the program's memory, makes their last write: by
default for Go programs, with exitwatch=true for any. Preloaded by hand here, the
tests wait for the watch as nmprof run does (common/exit_watch_lock.h)."""

import fcntl
import os
import shutil
import signal
import struct
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import PROGRAMS, agent_path, jfr_events, jfr_tool, run, stack_of

COUNT, SIZE = 2000, 1000
WATCH_LOCK_BYTE = 1 << 62


def watch_holds(path):
    """Whether an exit watch still holds its lock on the recording (F_OFD_GETLK)."""
    with open(path, "rb") as f:
        query = struct.pack("hhqqi4x", fcntl.F_RDLCK, os.SEEK_SET, WATCH_LOCK_BYTE, 1, 0)
        answer = fcntl.fcntl(f.fileno(), getattr(fcntl, "F_OFD_GETLK", 36), query)
        return struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK


def wait_for_watch(path, seconds=15):
    deadline = time.monotonic() + seconds
    while path.exists() and watch_holds(path):
        assert time.monotonic() < deadline, "the exit watch did not finish"
        time.sleep(0.01)


def preloaded_env(out, watch="true"):
    options = f"nativemem=0,file={out}" + (f",exitwatch={watch}" if watch else "")
    return dict(os.environ, LD_PRELOAD=str(agent_path()), NMPROF_OPTIONS=options)


def preloaded(command, out, watch="true"):
    return subprocess.run(command, env=preloaded_env(out, watch), capture_output=True, text=True, timeout=60)


def stopped_growing(path):
    return jfr_events(path, "nmprof.Statistics")[-1]["values"]["stoppedGrowing"]


def live_at_site(path, site):
    """Blocks allocated at `site` (innermost frame), and those no Free event released:
    every allocation is sampled (nativemem=0), so these are the blocks themselves."""
    allocated = {e["values"]["address"] for e in jfr_events(path, "profiler.Malloc") if stack_of(e)[0].endswith(site)}
    freed = {e["values"]["address"] for e in jfr_events(path, "profiler.Free")}
    return len(allocated), len(allocated - freed)


def assert_whole_to_the_end(out, site):
    wait_for_watch(out)
    summary = subprocess.run([str(jfr_tool()), "summary", str(out)], capture_output=True, text=True, timeout=60)
    assert summary.returncode == 0, summary.stderr
    assert stopped_growing(out) == 0  # recorded to its end, not "ends before its process did"
    assert live_at_site(out, site) == (COUNT, COUNT // 2)


@pytest.fixture(scope="module")
def cgo_alloc(tmp_path_factory):
    go = shutil.which("go")
    if not go:
        pytest.skip("go is not installed (golang-go)")
    where = tmp_path_factory.mktemp("cgo")
    binary = where / "cgo_alloc"
    env = dict(os.environ, GOCACHE=str(where / "go-cache"), GOPATH=str(where / "go"), CGO_ENABLED="1")
    subprocess.run([go, "build", "-o", str(binary), str(PROGRAMS / "cgo_alloc.go")], env=env, check=True,
                   capture_output=True, cwd=where, timeout=600)
    return binary


@pytest.mark.parametrize("how", ["", "threads"], ids=["one thread", "threads"])
def test_a_c_program_that_leaves_by_a_raw_exit_group_is_recorded_to_its_end(programs, tmp_path, how):
    command = [str(programs.c("raw_exit_group.c")), str(COUNT), str(SIZE), how]
    plain = subprocess.run(command, capture_output=True, text=True, timeout=60)
    out = tmp_path / "out.jfr"
    result = preloaded(command, out)
    assert (result.returncode, result.stdout) == (plain.returncode, plain.stdout), result.stderr
    assert_whole_to_the_end(out, "kept_or_freed")


def test_a_cgo_program_is_recorded_to_its_end_without_asking(cgo_alloc, tmp_path):
    command = [str(cgo_alloc), str(COUNT), str(SIZE)]
    plain = subprocess.run(command, capture_output=True, text=True, timeout=60)
    out = tmp_path / "out.jfr"
    result = preloaded(command, out, watch=None)  # exitwatch=auto: Go programs get it
    assert (result.returncode, result.stdout) == (plain.returncode, plain.stdout), result.stderr
    assert_whole_to_the_end(out, "cgo_site")


def test_a_cgo_program_under_run_shows_its_live_memory_at_exit(nmprof, cgo_alloc, tmp_path):
    out = tmp_path / "out.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-o", out, "--", cgo_alloc, COUNT, SIZE, check=0)
    assert f"kept {COUNT // 2} blocks of {SIZE} bytes" in result.stdout
    assert "before its process" not in result.stderr, result.stderr
    assert_whole_to_the_end(out, "cgo_site")
    live = run(nmprof, "report", out, "--live", "--format", "json", check=0).stdout
    assert "cgo_site" in live


def test_a_c_program_is_not_watched_unless_asked(programs, tmp_path):
    """exitwatch=auto watches Go programs only: a C program's raw exit_group still loses
    what had not been written (here everything: it ends before the first write)."""
    command = [str(programs.c("raw_exit_group.c")), str(COUNT), str(SIZE)]
    out = tmp_path / "out.jfr"
    result = preloaded(command, out, watch=None)
    assert result.returncode == 0, result.stderr
    assert not out.exists() or live_at_site(out, "kept_or_freed") != (COUNT, COUNT // 2)


def test_a_program_killed_by_sigkill_is_recorded_to_its_end(programs, tmp_path):
    out = tmp_path / "out.jfr"
    command = [str(programs.c("raw_exit_group.c")), str(COUNT), str(SIZE), "wait"]
    proc = subprocess.Popen(command, env=preloaded_env(out), stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == f"parent: kept {COUNT // 2} blocks of {SIZE} bytes\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert_whole_to_the_end(out, "kept_or_freed")


def test_the_watch_is_no_child_of_the_program(programs, tmp_path):
    """A program that waits for every child it has (__WALL, as strace does) finds none."""
    command = [str(programs.c("raw_exit_group.c")), str(COUNT), str(SIZE), "children"]
    out = tmp_path / "out.jfr"
    result = preloaded(command, out)
    assert result.stdout.endswith("no children\n"), result.stdout + result.stderr
    assert_whole_to_the_end(out, "kept_or_freed")


def test_a_forked_child_has_a_watch_of_its_own(programs, tmp_path):
    command = [str(programs.c("raw_exit_group.c")), str(COUNT), str(SIZE), "fork"]
    out = tmp_path / "out.jfr"
    result = preloaded(command, out)
    assert sorted(result.stdout.splitlines()) == [f"{who}: kept {COUNT // 2} blocks of {SIZE} bytes"
                                                  for who in ("child", "parent")], result.stderr
    recordings = sorted(tmp_path.glob("out*.jfr"))
    assert len(recordings) == 2, recordings
    for recording in recordings:
        assert_whole_to_the_end(recording, "kept_or_freed")


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_a_program_under_strace_ends_and_is_recorded_to_its_end(programs, tmp_path):
    """strace -f follows every clone but the watch's (CLONE_UNTRACED), and waits for
    what it follows: it must not wait for the watch, nor lose it."""
    command = [str(programs.c("raw_exit_group.c")), str(COUNT), str(SIZE), "threads"]
    out = tmp_path / "out.jfr"
    agent = [f"-E{name}={preloaded_env(out)[name]}" for name in ("LD_PRELOAD", "NMPROF_OPTIONS")]
    traced = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", *agent, *command], capture_output=True,
                            text=True, timeout=60)
    assert traced.returncode == 0, traced.stderr
    assert_whole_to_the_end(out, "kept_or_freed")


def watches_of(marker):
    """The exit watches (comm "nmprof watch") of a program whose command line has
    `marker`: a watch shares the program's memory, its command line included."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if (proc / "comm").read_text() == "nmprof watch\n" and marker in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_the_watch_of_a_program_that_exits_normally_goes_with_it(tmp_path):
    marker = f"marker-{uuid.uuid4()}"
    out = tmp_path / "out.jfr"
    proc = subprocess.Popen(["sh", "-c", "read line", marker], env=preloaded_env(out), stdin=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 10
    while not watches_of(marker.encode()):
        assert time.monotonic() < deadline, "no exit watch started"
        time.sleep(0.01)
    proc.communicate("\n", timeout=60)
    assert proc.returncode == 0
    deadline = time.monotonic() + 5
    while watches_of(marker.encode()):
        assert time.monotonic() < deadline, "the exit watch outlived its program"
        time.sleep(0.05)
    wait_for_watch(out)
    assert subprocess.run([str(jfr_tool()), "summary", str(out)], capture_output=True, timeout=60).returncode == 0
