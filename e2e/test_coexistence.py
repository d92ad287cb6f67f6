"""nmprof next to what production processes also load: other allocators (jemalloc,
tcmalloc, mimalloc; preloaded and linked), RTLD_DEEPBIND plugins, a second profiler
patching the same GOT slots before and after nmprof (in a native program and in a
JVM), a JVM checking JNI calls (-Xcheck:jni), allocations of atexit itself, malloc in
a signal handler, vfork+exec storms and threads that exit while allocating. Each
program prints the same output with and without nmprof, and nmprof records its
allocations."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import JDK17, JDK25, PROGRAMS, jfr_events, nmprof_path, report_json, run

LIBRARY_DIR = Path("/usr/lib/x86_64-linux-gnu")
JEMALLOC = LIBRARY_DIR / "libjemalloc.so.2"
TCMALLOC = LIBRARY_DIR / "libtcmalloc_minimal.so.4"
MIMALLOC = LIBRARY_DIR / "libmimalloc.so.2"
ALLOCATORS = pytest.mark.parametrize("library", [JEMALLOC, TCMALLOC, MIMALLOC], ids=["jemalloc", "tcmalloc", "mimalloc"])
JDKS = pytest.mark.parametrize("jdk", [JDK17, JDK25], ids=["jdk17", "jdk25"])
TIMEOUT = 120


def allocator(path):
    if not path.exists():
        pytest.fail(f"{path} is missing (.ci/packages: libjemalloc2, libtcmalloc-minimal4, libmimalloc2.0)")
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


@ALLOCATORS
def test_preloaded_allocator(nmprof, programs, tmp_path, library):
    env = with_env(LD_PRELOAD=allocator(library))
    assert_same_output_and_recorded(nmprof, tmp_path, [programs.c("churn.c"), 4, 20000], "work", env)


@ALLOCATORS
def test_linked_allocator(nmprof, tmp_path, library):
    churn = tmp_path / "churn-linked"
    subprocess.run(["gcc", "-O2", "-g", "-o", str(churn), str(PROGRAMS / "churn.c"), "-pthread",
                    str(allocator(library))], check=True)
    assert library.name in subprocess.run(["ldd", str(churn)], capture_output=True, text=True).stdout
    assert_same_output_and_recorded(nmprof, tmp_path, [churn, 4, 20000], "work")


# A launcher that preloads its allocator for the program it execs (export LD_PRELOAD=
# ...; exec app, or env LD_PRELOAD=... app), or execs it with an environment of its
# own: the exec hooks put the agent back into the program's environment. Before, the
# recording held the launcher alone, without a word (hostile testing).
@pytest.mark.parametrize("launcher", ["export", "env", "env -i"])
def test_a_launcher_that_replaces_the_environment_keeps_the_agent(nmprof, programs, tmp_path, launcher):
    program, jemalloc = programs.c("churn.c"), allocator(JEMALLOC)
    if launcher == "export":
        command = ["sh", "-c", f'export LD_PRELOAD={jemalloc}; exec "$0" 4 20000', program]
    else:
        command = [*launcher.split(), f"LD_PRELOAD={jemalloc}", program, 4, 20000]
    result, out = profiled(nmprof, tmp_path, command)
    assert result.returncode == 0, result.stderr
    report = report_json(nmprof, out, "--top", "1000")
    functions = {f["function"] for s in report["stacks"] for f in s["frames"]}
    assert "work" in functions, sorted(functions)
    assert any(Path(p["executable"]).name == "churn" for p in report["processes"]), report["processes"]


def test_an_empty_environment_execed_from_a_small_stack_keeps_the_agent(nmprof, programs, tmp_path):
    # vfork + execve(..., {NULL}) from a thread of 16 KiB of stack: the rebuilt
    # environment fits there, and the program it starts is recorded.
    command = [programs.c("small_stack_exec.c"), programs.c("churn.c"), 4, 20000]
    result, out = profiled(nmprof, tmp_path, command)
    assert result.returncode == 0, result.stderr
    functions = {f["function"] for s in report_json(nmprof, out, "--top", "1000")["stacks"] for f in s["frames"]}
    assert "work" in functions, sorted(functions)


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


def java_unsafe_allocations(java_programs, jdk, jvm_options=(), env=None):
    """Unsafe.allocateMemory: malloc called by libjvm, through its GOT slots."""
    command = java_programs.command(jdk, "unsafe", 20000, 4000, jvm_options=jvm_options)
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


@JDKS
@pytest.mark.parametrize("order", ["before", "after"])
def test_second_profiler_patching_the_same_slots_in_a_jvm(java_programs, programs, tmp_path, jdk, order):
    tracer = f"-agentpath:{programs.shared('got_tracer.c')}"
    out = tmp_path / "jvm.jfr"
    agent = f"-agentpath:{nmprof_path().parent.parent / 'lib' / 'nmprof' / 'libnmprof.so'}=nativemem=64k,file={out}"
    expected = java_unsafe_allocations(java_programs, jdk)
    result = java_unsafe_allocations(java_programs, jdk, [tracer, agent] if order == "before" else [agent, tracer])
    assert (result.returncode, result.stdout) == (expected.returncode, expected.stdout), result.stderr
    assert got_tracer_calls(result.stderr) >= 20000
    unsafe = [e for e in jfr_events(out, "profiler.Malloc", jdk)
              if any(f["method"]["name"] == "allocateMemory0" for f in e["values"]["stackTrace"]["frames"])]
    assert len(unsafe) > 500, len(unsafe)


def jni_warnings(stderr):
    return sorted(line for line in stderr.splitlines() if "WARNING" in line or "FATAL" in line)


@JDKS
def test_a_jvm_checking_jni_calls(nmprof, java_programs, tmp_path, jdk):
    # -Xcheck:jni reports any JNI misuse, nmprof's included; none is added.
    command = java_programs.command(jdk, "jni", 20000, 3000, jvm_options=["-Xcheck:jni"])
    expected = plain(command)
    result, out = profiled(nmprof, tmp_path, command)
    assert (result.returncode, result.stdout) == (0, expected.stdout), result.stderr
    assert jni_warnings(result.stderr) == jni_warnings(expected.stderr), result.stderr
    functions, samples = sampled_functions(nmprof, out)
    assert "jni_site" in functions and "Java_NativeMemoryApp_jniAllocate" in functions, sorted(functions)


def test_deepbind_plugins(nmprof, programs, tmp_path):
    command = [programs.c("deepbind_user.c"), programs.shared("plugin.c")]
    assert_same_output_and_recorded(nmprof, tmp_path, command, "plugin_allocate", interval="0")


def test_allocations_of_atexit_itself(nmprof, programs, tmp_path):
    # Sampled while libc holds its exit-function lock: the agent registered nothing
    # with atexit then (it once did, on the first stack it walked, and hung).
    command = [programs.c("atexit_storm.c"), 100]
    assert_same_output_and_recorded(nmprof, tmp_path, command, "main", interval="0")


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
