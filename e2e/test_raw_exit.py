"""Programs that end without running anything of the agent's: a raw exit_group (every Go
program leaves so, cgo's included) or SIGKILL end every thread at once. Issue 38,
item 6: such recordings lost their last second and the live view at the exit (one
that exited within its first second left no recording at all). The agent's exit
watch, a process that shares the program's memory, makes their last write, with
exitwatch=true (nmprof run --exit-watch). A watch is never made in a process that
may give privileges up: the programs run here as a user of their own. Preloaded by
hand, the tests wait for the watch as nmprof run does (common/exit_watch_lock.h)."""

import fcntl
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from conftest import PROGRAMS, agent_path, jfr_events, jfr_tool, run, stack_of, unused_uid

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


def agent_options(out, watch="true"):
    return f"nativemem=0,file={out}" + (f",exitwatch={watch}" if watch else "")


UID = unused_uid()


def unprivileged(*command):
    """The command as a user of its own, without root's privileges (as it is, when the
    tests do not run as root)."""
    if os.geteuid() != 0:
        return [*map(str, command)]
    return ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", *map(str, command)]


def preloaded_command(command, out, watch="true"):
    """The command, unprivileged, with the agent preloaded (not into setpriv, which
    runs as root)."""
    return unprivileged("env", f"LD_PRELOAD={agent_path()}", f"NMPROF_OPTIONS={agent_options(out, watch)}", *command)


def preloaded(command, out, watch="true"):
    return subprocess.run(preloaded_command(command, out, watch), capture_output=True, text=True, timeout=60)


@pytest.fixture
def shared():
    """A directory the programs' user may write in, with the programs in it."""
    directory = Path(tempfile.mkdtemp(prefix="nmprof-e2e-exit-", dir="/var/tmp"))
    directory.chmod(0o1777)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def raw_exit(programs, shared):
    return shutil.copy(programs.c("raw_exit_group.c"), shared)


def stopped_growing(path):
    return jfr_events(path, "nmprof.Statistics")[-1]["values"]["stoppedGrowing"]


def live_at_site(path, site):
    """Blocks allocated at `site` (innermost frame), and those no Free event released:
    every allocation is sampled (nativemem=0), so these are the blocks themselves."""
    allocated = {e["values"]["address"] for e in jfr_events(path, "profiler.Malloc")
                 if stack_of(e) and stack_of(e)[0].endswith(site)}
    freed = {e["values"]["address"] for e in jfr_events(path, "profiler.Free")}
    return len(allocated), len(allocated - freed)


def assert_whole_to_the_end(out, site, count=COUNT):
    wait_for_watch(out)
    summary = subprocess.run([str(jfr_tool()), "summary", str(out)], capture_output=True, text=True, timeout=60)
    assert summary.returncode == 0, summary.stderr
    assert stopped_growing(out) == 0  # recorded to its end, not "ends before its process did"
    assert live_at_site(out, site) == (count, count // 2)


@pytest.fixture(scope="module")
def cgo_alloc(tmp_path_factory):
    go = shutil.which("go")
    if not go:
        pytest.skip("go is not installed (golang-go)")
    where = tmp_path_factory.mktemp("cgo")
    binary = Path(tempfile.mkdtemp(prefix="nmprof-e2e-cgo-", dir="/var/tmp")) / "cgo_alloc"
    binary.parent.chmod(0o755)
    env = dict(os.environ, GOCACHE=str(where / "go-cache"), GOPATH=str(where / "go"), CGO_ENABLED="1")
    subprocess.run([go, "build", "-o", str(binary), str(PROGRAMS / "cgo_alloc.go")], env=env, check=True,
                   capture_output=True, cwd=where, timeout=600)
    yield binary
    shutil.rmtree(binary.parent, ignore_errors=True)


def assert_runs_as_plain_and_is_recorded_to_its_end(command, out, site):
    plain = subprocess.run(unprivileged(*command), capture_output=True, text=True, timeout=60)
    result = preloaded(command, out)
    assert (result.returncode, result.stdout) == (plain.returncode, plain.stdout), result.stderr
    assert_whole_to_the_end(out, site)


@pytest.mark.parametrize("how", ["", "threads"], ids=["one thread", "threads"])
def test_a_c_program_that_leaves_by_a_raw_exit_group_is_recorded_to_its_end(raw_exit, shared, how):
    assert_runs_as_plain_and_is_recorded_to_its_end([raw_exit, COUNT, SIZE, how], shared / "out.jfr", "kept_or_freed")


def test_a_cgo_program_is_recorded_to_its_end(cgo_alloc, shared):
    assert_runs_as_plain_and_is_recorded_to_its_end([cgo_alloc, COUNT, SIZE], shared / "out.jfr", "cgo_site")


def test_a_go_program_without_the_watch_is_told_what_it_loses(cgo_alloc, shared):
    result = preloaded([cgo_alloc, COUNT, SIZE], shared / "out.jfr", watch=None)
    assert result.returncode == 0, result.stderr
    assert "is a Go program, which ends by a raw exit_group" in result.stderr
    assert "nmprof run --exit-watch" in result.stderr


def test_a_cgo_program_under_run_exit_watch_shows_its_live_memory_at_exit(nmprof, cgo_alloc, shared):
    out = shared / "out.jfr"
    result = run(nmprof, "run", "--exit-watch", "--nativemem", "0", "-o", out, "--",
                 *unprivileged(cgo_alloc, COUNT, SIZE), check=0)
    assert f"kept {COUNT // 2} blocks of {SIZE} bytes" in result.stdout
    assert "before its process" not in result.stderr and "Go program" not in result.stderr, result.stderr
    assert_whole_to_the_end(out, "cgo_site")
    assert "cgo_site" in run(nmprof, "report", out, "--live", check=0).stdout


def test_a_c_program_is_not_watched_unless_asked(raw_exit, shared):
    """Without exitwatch=true, a raw exit_group still loses what had not been written
    (here everything: the program ends before the agent's first write)."""
    out = shared / "out.jfr"
    result = preloaded([raw_exit, COUNT, SIZE], out, watch=None)
    assert result.returncode == 0, result.stderr
    assert not out.exists() or live_at_site(out, "kept_or_freed") != (COUNT, COUNT // 2)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to be privileged")
def test_a_privileged_process_gets_no_watch(raw_exit, shared):
    """A watch keeps the credentials it was made with while it shares the program's
    memory: a program that drops root could make it run code as root (hostile test)."""
    marker = f"marker-{uuid.uuid4()}"
    env = dict(os.environ, LD_PRELOAD=str(agent_path()), NMPROF_OPTIONS=agent_options(shared / "out.jfr"))
    proc = subprocess.Popen([raw_exit, str(COUNT), str(SIZE), "wait", marker], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("parent: kept")
        assert watches_of(marker.encode()) == []
    finally:
        proc.kill()
        _, stderr = proc.communicate(timeout=60)
    assert "runs with privileges it may give up (root, capabilities or set-id): no exit watch" in stderr


def test_a_program_killed_by_sigkill_is_recorded_to_its_end(raw_exit, shared):
    out = shared / "out.jfr"
    proc = subprocess.Popen(preloaded_command([raw_exit, COUNT, SIZE, "wait"], out), stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == f"parent: kept {COUNT // 2} blocks of {SIZE} bytes\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert_whole_to_the_end(out, "kept_or_freed")


def test_the_watch_is_no_child_of_the_program(raw_exit, shared):
    """A program that waits for every child it has (__WALL, as strace does) finds none."""
    out = shared / "out.jfr"
    result = preloaded([raw_exit, COUNT, SIZE, "children"], out)
    assert result.stdout.endswith("no children\n"), result.stdout + result.stderr
    assert_whole_to_the_end(out, "kept_or_freed")


def test_the_watch_leaves_the_programs_group_session_and_directory(raw_exit, shared):
    """Hostile tests: a watch in the program's process group kept a finished job's group
    alive (and was stopped with it, for good, or killed with it); one in its working
    directory kept the file system that held it from being unmounted."""
    marker = f"marker-{uuid.uuid4()}"
    proc = subprocess.Popen(preloaded_command([raw_exit, COUNT, SIZE, "wait", marker], shared / "o.jfr"),
                            stdout=subprocess.PIPE, text=True, cwd=shared, start_new_session=True)
    try:
        assert proc.stdout.readline().startswith("parent: kept")
        (watch,) = watches_of(marker.encode())
        assert os.getpgid(watch) != proc.pid and os.getsid(watch) != proc.pid
        assert os.readlink(f"/proc/{watch}/cwd") == "/"
    finally:
        proc.kill()
        proc.wait(timeout=60)
    assert_whole_to_the_end(shared / "o.jfr", "kept_or_freed")


def test_a_forked_child_has_a_watch_of_its_own(raw_exit, shared):
    """A child's watch starts at its first write (none at the fork: a child killed at
    once would leave an empty file): enough allocations for one."""
    count = 20000
    result = preloaded([raw_exit, count, SIZE, "fork"], shared / "out.jfr")
    assert sorted(result.stdout.splitlines()) == [f"{who}: kept {count // 2} blocks of {SIZE} bytes"
                                                  for who in ("child", "parent")], result.stderr
    recordings = sorted(shared.glob("out*.jfr"))
    assert len(recordings) == 2, recordings
    for recording in recordings:
        assert_whole_to_the_end(recording, "kept_or_freed", count)


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_a_program_under_strace_ends_and_is_recorded_to_its_end(raw_exit, shared):
    """strace -f follows every clone but the watch's (CLONE_UNTRACED), and waits for
    what it follows: it must not wait for the watch, nor lose it."""
    out = shared / "out.jfr"
    agent = [f"-ELD_PRELOAD={agent_path()}", f"-ENMPROF_OPTIONS={agent_options(out)}"]
    traced = subprocess.run(unprivileged("strace", "-f", "-qq", "-o", "/dev/null", *agent, raw_exit, COUNT, SIZE,
                                         "threads"), capture_output=True, text=True, timeout=60)
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


def test_the_watch_of_a_program_that_exits_normally_goes_with_it(shared):
    marker = f"marker-{uuid.uuid4()}"
    out = shared / "out.jfr"
    proc = subprocess.Popen(preloaded_command(["sh", "-c", "read line", marker], out), stdin=subprocess.PIPE,
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
