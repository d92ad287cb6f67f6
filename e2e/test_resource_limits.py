"""The recording stops growing at its limits and says so, and the program runs on as
it does without nmprof: --max-size (run and the agent's option), a disk that fills up,
a working directory the program cannot write, and an address-space limit the program
runs into."""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import JDK17, jfr_events, jfr_tool, nmprof_path, run
from test_attach import Target

# One thread, 100000 small allocations all sampled (--nativemem 0): about 2 MB of
# recording without a limit.
WORKLOAD = ("1", "100000", "0", "0")


def agent():
    return nmprof_path().parent.parent / "lib" / "nmprof" / "libnmprof.so"


@contextlib.contextmanager
def tmpfs(options):
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    mount_point = Path(tempfile.mkdtemp(prefix="nmprof-limits-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount_point)], capture_output=True)
    if mounted.returncode != 0:
        mount_point.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)
        shutil.rmtree(mount_point)


def stopped_growing(path):
    """nmprof.Statistics' stoppedGrowing in the file's last statistics, as the JDK reads them."""
    return jfr_events(path, "nmprof.Statistics")[-1]["values"]["stoppedGrowing"]


def preloaded(program, out, *options, cwd=None):
    env = dict(os.environ, LD_PRELOAD=str(agent()), NMPROF_OPTIONS=",".join(["nativemem=0", f"file={out}", *options]))
    return subprocess.run([str(program), *WORKLOAD], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_run_max_size_stops_the_file_and_says_so(nmprof, programs, tmp_path):
    program = programs.c("known_totals.c")
    plain = subprocess.run([str(program), *WORKLOAD], capture_output=True, text=True, timeout=120)
    out = tmp_path / "out.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "--max-size", "256k", "-o", out, "--", program, *WORKLOAD)
    assert (result.returncode, result.stdout) == (plain.returncode, plain.stdout), result.stderr
    assert out.stat().st_size <= 256 * 1024
    assert out.stat().st_size > 128 * 1024
    assert stopped_growing(out) == 1
    # The agent's line, naming the output asked for (not the staging file), and the
    # summary's note, which says the live view lacks the frees too.
    assert f"nmprof: {out}: the recording of process " in result.stderr, result.stderr
    assert "stopped growing at" in result.stderr and "it reached --max-size" in result.stderr, result.stderr
    assert ".nmprof-" not in result.stderr, result.stderr
    assert "the recording stopped growing (it reached --max-size)" in result.stderr, result.stderr
    assert "blocks freed after it show as live" in " ".join(result.stderr.split()), result.stderr
    assert len(jfr_events(out, "profiler.Malloc")) > 1000


def test_a_recording_within_max_size_is_complete(nmprof, programs, tmp_path):
    out = tmp_path / "out.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "--max-size", "64m", "-o", out, "--",
                 programs.c("known_totals.c"), *WORKLOAD, check=0)
    assert "stopped growing" not in result.stderr
    assert stopped_growing(out) == 0
    assert len(jfr_events(out, "profiler.Malloc")) >= 100000


def test_attach_max_size_stops_the_file_and_the_jvm_goes_on(nmprof, java_programs, tmp_path):
    target = Target(java_programs, JDK17, tmp_path)
    try:
        out = tmp_path / "attach.jfr"
        result = run(nmprof, "attach", target.pid, "--nativemem", "0", "--max-size", "64k", "--duration", "3",
                     "-o", out, check=0, timeout=120)
        assert "the recording stopped growing (it reached --max-size)" in result.stderr, result.stderr
        assert out.stat().st_size <= 64 * 1024
        assert stopped_growing(out) == 1
        stdout, _ = target.finish()
        assert (stdout.strip(), target.proc.returncode) == ("done true", 0)
    finally:
        target.kill()


@pytest.mark.parametrize("size", ["1k", "big", "-5"])
def test_a_bad_max_size_is_refused_before_the_program_runs(nmprof, programs, tmp_path, size):
    marker = tmp_path / "ran"
    result = run(nmprof, "run", "--max-size", size, "-o", tmp_path / "out.jfr", "--", "touch", marker)
    assert result.returncode != 0
    assert "--max-size" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not marker.exists()


def test_the_agent_option_stops_the_file_at_its_size(programs, tmp_path):
    out = tmp_path / "out.jfr"
    result = preloaded(programs.c("known_totals.c"), out, "maxsize=100k")
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size <= 100 * 1024
    assert stopped_growing(out) == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("nmprof:")] == [
        line for line in result.stderr.splitlines() if "stopped growing at" in line], result.stderr


def test_a_full_disk_stops_the_file_leaving_the_host_room(programs):
    # The 600 KiB disk fills before the recording's 2 MB: it stops growing, says so
    # in the file, and the rest of the disk stays the program's.
    with tmpfs("size=600k") as disk:
        out = disk / "full.jfr"
        result = preloaded(programs.c("known_totals.c"), out)
        assert result.returncode == 0, result.stderr
        assert "stopped growing at" in result.stderr and "the disk was nearly full" in result.stderr, result.stderr
        summary = subprocess.run([str(jfr_tool()), "summary", str(out)], capture_output=True, text=True)
        assert summary.returncode == 0, summary.stderr + summary.stdout
        assert "profiler.Malloc" in summary.stdout
        assert stopped_growing(out) == 2
        assert shutil.disk_usage(disk).free > 0


def test_a_first_append_larger_than_the_disk_leaves_a_recording_that_says_so(nmprof, programs):
    # 100,000 distinct stacks allocated in the first second: the first append (their
    # pools, megabytes) does not fit on a 1 MiB disk. The process's description is
    # written first, in an append of its own: the recording says whose it is and why
    # it has no samples. Before, it held metadata alone, which `report` refused ("no
    # allocation events") while `run` said the profile was written (hostile testing).
    with tmpfs("size=1m") as disk:
        out = disk / "full.jfr"
        env = dict(os.environ, LD_PRELOAD=str(agent()), NMPROF_OPTIONS=f"nativemem=0,file={out}")
        program = programs.c("../../bench/many_stacks.c")
        result = subprocess.run([str(program), "100000", "1"], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "the disk was nearly full" in result.stderr, result.stderr
        assert [e["values"]["commandLine"] for e in jfr_events(out, "nmprof.Process")] == [f"{program} 100000 1"]
        assert stopped_growing(out) == 2
        report = run(nmprof, "report", out)
        assert "Nothing was sampled before the recording stopped (the disk was nearly full)" in report.stdout


def test_a_program_in_a_read_only_working_directory_runs_and_is_recorded(nmprof, programs, tmp_path):
    # -o relative to where nmprof runs; the program works in a directory it cannot
    # write: its recording still goes where nmprof said.
    program = programs.c("known_totals.c")
    with tmpfs("ro,size=64k") as read_only:
        command = f"cd {read_only} && exec {program} 1 1000 0 0"
        result = run(nmprof, "run", "--nativemem", "0", "-o", "out.jfr", "--", "sh", "-c", command, cwd=tmp_path,
                     check=0)
    functions = {frame for e in jfr_events(tmp_path / "out.jfr", "profiler.Malloc")
                 for frame in [e["values"]["stackTrace"]["frames"][0]["method"]["name"]]}
    assert "site_small" in functions, result.stderr


def test_an_unwritable_default_output_leaves_the_program_running(programs):
    # No file= : the agent's default is relative to the working directory, here read-only.
    with tmpfs("ro,size=64k") as read_only:
        env = dict(os.environ, LD_PRELOAD=str(agent()), NMPROF_OPTIONS="nativemem=0")
        result = subprocess.run([str(programs.c("known_totals.c")), *WORKLOAD], env=env, cwd=read_only,
                                capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("nmprof:")]
    assert len(lines) == 1 and "cannot write" in lines[0] and "allocations pass through" in lines[0], result.stderr


# Hostile testing, item 16: the disk fills between the agent's recording and run's
# copy of it to -o: run fails (not exit 0 as on main) and says where the recording is.
def test_a_full_disk_at_the_final_copy_fails_the_run_and_keeps_the_recording(nmprof, programs):
    with tmpfs("size=600k") as disk:
        out = disk / "out.jfr"
        result = run(nmprof, "run", "--nativemem", "0", "-o", out, "--", programs.c("known_totals.c"), *WORKLOAD)
        assert result.returncode == 1, result.stderr
        assert not out.exists()
        kept = re.search(r"kept in (\S+)", result.stderr)
        assert kept and "No space left on device" in result.stderr, result.stderr
        assert list(Path(kept.group(1)).glob("*.jfr"))


# Issue 38, item 3: under `ulimit -v` a program that mallocs until NULL left records cut
# in the middle (a buffer written after its growth failed): report read a record
# "needing 134690174402561 bytes" and the JDK's jfr could not open the file. The agent's
# allocations fail there too: the file must stay whole, and say so when the agent ran
# out of memory. The limit applies to nmprof itself as well, as with ulimit -v.
@pytest.mark.parametrize("limit_mib", [64, 128, 256])
@pytest.mark.parametrize("threaded", [False, True], ids=["one thread", "threads"])
def test_an_address_space_limit_leaves_a_whole_recording(nmprof, programs, tmp_path, limit_mib, threaded):
    program = programs.c("address_space_hog.c")
    command = [str(program), "4096", *(["threaded"] if threaded else [])]
    limited = ["prlimit", f"--as={limit_mib << 20}", "--"]
    plain = subprocess.run([*limited, *command], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0 and "malloc returned NULL: yes" in plain.stdout, plain
    out = tmp_path / "out.jfr"
    result = subprocess.run([*limited, str(nmprof), "run", "--nativemem", "4k", "-o", str(out), "--", *command],
                            capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (plain.returncode, plain.stdout), result.stderr
    assert "damaged" not in result.stderr, result.stderr
    summary = subprocess.run([str(jfr_tool()), "summary", str(out)], capture_output=True, text=True, timeout=60)
    assert summary.returncode == 0, summary.stderr
    report = run(nmprof, "report", out, check=0)
    assert "damaged" not in report.stderr, report.stderr
    ran_out = "the agent ran out of memory" in result.stderr
    assert stopped_growing(out) == (6 if ran_out else 0), result.stderr
    if ran_out:  # and the summary says why the recording stopped
        assert "the agent ran out of memory: the process's address space was exhausted" in " ".join(
            result.stderr.split()), result.stderr


# Issue 38, item 10: once a recording stopped, its hooks went on sampling into nothing
# (a Python run took 2.3 times as long as plain after --max-size was reached). The
# allocation slots are now given back: the program's own GOT slots hold libc's malloc
# and free again (the program waits up to 20 s for that; on main they stayed nmprof's).
@pytest.mark.parametrize("limit", ["max-size", "ulimit -f"])
def test_a_stopped_recording_gives_the_allocation_slots_back(nmprof, programs, tmp_path, limit):
    program = programs.c("slot_owner.c", "-fno-plt")
    plain = subprocess.run([str(program), "20"], capture_output=True, text=True, timeout=60)
    assert plain.stdout == "malloc is libc.so.6's, free is libc.so.6's\n", plain
    out = tmp_path / "out.jfr"
    options = ["--max-size", "64k"] if limit == "max-size" else []
    wrapper = ["prlimit", "--fsize=100000", "--"] if limit == "ulimit -f" else []
    result = subprocess.run([*wrapper, str(nmprof), "run", "--nativemem", "0", *options, "-o", str(out), "--",
                             str(program), "20"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (plain.returncode, plain.stdout), result.stderr
    assert "stopped growing" in result.stderr, result.stderr
    assert stopped_growing(out) == (1 if limit == "max-size" else 3)
    assert len(jfr_events(out, "profiler.Malloc")) > 100


def test_a_file_size_limit_at_the_final_copy_fails_the_run_and_keeps_the_recordings(nmprof, programs, tmp_path):
    # Two processes, each stopped at the limit: the merged output is larger than it.
    # nmprof died of SIGXFSZ (exit 153) halfway through the output, left a .partial
    # file and said nothing of the recordings.
    program = programs.c("known_totals.c")
    out = tmp_path / "out.jfr"
    result = subprocess.run(["prlimit", "--fsize=200000", "--", str(nmprof), "run", "--nativemem", "0", "-o",
                             str(out), "--", "sh", "-c", f"{program} 1 100000 0 0; {program} 1 100000 0 0"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "File too large" in result.stderr, result.stderr
    assert not out.exists() and not list(tmp_path.glob("*.partial"))
    kept = re.search(r"kept in (\S+)", result.stderr)
    assert kept and len(list(Path(kept.group(1)).glob("*.jfr"))) >= 2, result.stderr  # sh's and both programs'


def test_the_command_still_dies_of_sigxfsz_as_without_nmprof(nmprof, tmp_path):
    # nmprof survives SIGXFSZ with a handler, which exec resets: its command does not.
    script = f"head -c 100000 /dev/zero > {tmp_path / 'big'}"
    plain = subprocess.run(["prlimit", "--fsize=10000", "--", "sh", "-c", script], timeout=60)
    result = subprocess.run(["prlimit", "--fsize=10000", "--", str(nmprof), "run", "-q", "-o", str(tmp_path / "out.jfr"),
                             "--", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert plain.returncode == result.returncode == 128 + signal.SIGXFSZ, result.stderr
