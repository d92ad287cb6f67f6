"""nmprof next to what production processes also load: other allocators (jemalloc,
tcmalloc; preloaded and linked), RTLD_DEEPBIND plugins, a second profiler patching the
same GOT slots before and after nmprof, malloc in a signal handler, vfork+exec storms
and threads that exit while allocating. Each program prints the same output with and
without nmprof, and nmprof records its allocations."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import PROGRAMS, report_json, run

LIBRARY_DIR = Path("/usr/lib/x86_64-linux-gnu")
JEMALLOC = LIBRARY_DIR / "libjemalloc.so.2"
TCMALLOC = LIBRARY_DIR / "libtcmalloc_minimal.so.4"
TIMEOUT = 120


def allocator(path):
    if not path.exists():
        pytest.fail(f"{path} is missing (.ci/packages: libjemalloc2, libtcmalloc-minimal4)")
    return path


def plain(command, env=None):
    result = subprocess.run(list(map(str, command)), capture_output=True, text=True, timeout=TIMEOUT,
                            env=env)
    assert result.returncode == 0, result.stderr
    return result


def profiled(nmprof, tmp_path, command, env=None, interval="64k"):
    """Runs the command under nmprof and checks that it exited as it does alone."""
    out = tmp_path / "out.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", interval, "-o", out, "--", *command, env=env,
                 timeout=TIMEOUT, check=0)
    return result, out


def with_env(**variables):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in variables.items()})
    return env


def sampled_functions(nmprof, out):
    """Functions in the recorded stacks, and the number of samples."""
    report = report_json(nmprof, out, "--top", "1000")
    functions = {f["function"] for s in report["stacks"] for f in s["frames"]}
    return functions, report["allocated"]["samples"]


def assert_same_output_and_recorded(nmprof, tmp_path, command, function, env=None, interval="64k"):
    expected = plain(command, env)
    result, out = profiled(nmprof, tmp_path, command, env, interval)
    assert result.stdout == expected.stdout
    functions, samples = sampled_functions(nmprof, out)
    assert samples > 0
    assert function in functions, sorted(functions)
    return result


@pytest.mark.parametrize("library", [JEMALLOC, TCMALLOC], ids=["jemalloc", "tcmalloc"])
def test_preloaded_allocator(nmprof, programs, tmp_path, library):
    env = with_env(LD_PRELOAD=allocator(library))
    assert_same_output_and_recorded(nmprof, tmp_path, [programs.c("churn.c"), 4, 20000], "work", env)


@pytest.mark.parametrize("library", [JEMALLOC, TCMALLOC], ids=["jemalloc", "tcmalloc"])
def test_linked_allocator(nmprof, tmp_path, library):
    churn = tmp_path / "churn-linked"
    subprocess.run(["gcc", "-O2", "-g", "-o", str(churn), str(PROGRAMS / "churn.c"), "-pthread",
                    str(allocator(library))], check=True)
    assert library.name in subprocess.run(["ldd", str(churn)], capture_output=True, text=True).stdout
    assert_same_output_and_recorded(nmprof, tmp_path, [churn, 4, 20000], "work")


def got_tracer_calls(stderr):
    """The most calls one process reported (a preloaded tracer is in nmprof itself too)."""
    counts = [int(line.split()[1]) for line in stderr.splitlines() if line.startswith("got_tracer: ")]
    assert counts, stderr
    return max(counts)


def test_second_profiler_patching_the_same_slots_loaded_before(nmprof, programs, tmp_path):
    env = with_env(LD_PRELOAD=programs.shared("got_tracer.c"))
    result = assert_same_output_and_recorded(nmprof, tmp_path, [programs.c("churn.c"), 4, 20000], "work", env)
    # Both see the program's allocations: 4 threads of 20000 calls at least.
    assert got_tracer_calls(result.stderr) >= 80000


def test_second_profiler_patching_the_same_slots_loaded_after(nmprof, programs, tmp_path):
    command = [programs.c("churn.c"), 4, 20000, programs.shared("got_tracer.c")]
    result = assert_same_output_and_recorded(nmprof, tmp_path, command, "work")
    assert got_tracer_calls(result.stderr) >= 80000


def test_deepbind_plugins(nmprof, programs, tmp_path):
    command = [programs.c("deepbind_user.c"), programs.shared("plugin.c")]
    assert_same_output_and_recorded(nmprof, tmp_path, command, "plugin_allocate", interval="0")


def test_malloc_in_a_signal_handler(nmprof, programs, tmp_path):
    # Small interval: signals often land while the interrupted thread is on the sampled path.
    result = assert_same_output_and_recorded(nmprof, tmp_path, [programs.c("signal_malloc.c"), 1000], "on_timer",
                                             interval="1k")
    assert result.stdout == "ok\n"


def test_vfork_exec_storm(nmprof, programs, tmp_path):
    command = [programs.c("vfork_storm.c"), "/bin/true", 300]
    result = assert_same_output_and_recorded(nmprof, tmp_path, command, "main", interval="0")
    assert result.stdout == "300 of 300 children succeeded\n"


def test_threads_exiting_while_sampled(nmprof, programs, tmp_path):
    # Every allocation sampled, those of the thread-exit destructors included.
    result = assert_same_output_and_recorded(nmprof, tmp_path, [programs.c("exiting_threads.c"), 200],
                                             "on_thread_exit", interval="0")
    assert result.stdout == "200 threads exited\n"
