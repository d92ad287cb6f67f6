"""io.nmprof.Context (nmprof-api.jar) on JDK 17 and 25: the context Java code sets is
on the samples its threads take, under nmprof run, -agentpath and nmprof attach; and
the jar does nothing without the agent."""

import subprocess
import tempfile
import shutil
import time
from pathlib import Path

import pytest

from conftest import HERE, JDK17, JDK25, jfr_events, nmprof_path, run, stack_of

JDKS = pytest.mark.parametrize("jdk", [JDK17, JDK25], ids=["jdk17", "jdk25"])


def api_jar():
    jar = nmprof_path().parent.parent / "share" / "java" / "nmprof-api.jar"
    if not jar.exists():
        pytest.fail(f"{jar} is not built")
    return jar


@pytest.fixture(scope="module")
def classpath():
    directory = tempfile.mkdtemp(prefix="nmprof-e2e-context-", dir="/var/tmp")
    subprocess.run([str(JDK17 / "bin" / "javac"), "--release", "11", "-cp", str(api_jar()), "-d", directory,
                    str(HERE / "java" / "ContextApp.java")], check=True, capture_output=True)
    yield f"{api_jar()}:{directory}"
    shutil.rmtree(directory, ignore_errors=True)


def java(jdk, *args):
    executable = jdk / "bin" / "java"
    if not executable.exists():
        pytest.skip(f"{executable} is not installed")
    return [str(executable), "-Xmx256m", *map(str, args)]


def check_context(path, attached=False):
    """Samples in request() carry the thread's span and route; samples in idle() none.
    Attached, a thread's request under way when the agent came had set its context
    while there was no agent: its samples carry none."""
    in_request = idle = 0
    with_context = set()  # threads seen with a context
    for e in jfr_events(path, "profiler.Malloc"):
        v, stack = e["values"], stack_of(e)
        thread = v["eventThread"]["osThreadId"]
        if "ContextApp!request" in stack:
            if attached and v["spanId"] == 0 and thread not in with_context:
                continue
            with_context.add(thread)
            assert v["spanId"] > 0 and v["localRootSpanId"] == v["spanId"], v
            assert v["route"] == f"/r{v['spanId'] // 1000}", v
            in_request += 1
        elif "ContextApp!idle" in stack:
            assert (v["spanId"], v["localRootSpanId"], v["route"]) == (0, 0, ""), v
            idle += 1
    assert in_request >= 10 and idle >= 3, (in_request, idle)


@JDKS
def test_run(nmprof, classpath, tmp_path, jdk):
    out = tmp_path / "run.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "64k", "--context-attributes", "route", "-o", out, "--",
                 *java(jdk, "-cp", classpath, "ContextApp", 2, 40), check=0)
    assert "served" in result.stdout
    check_context(out)


@JDKS
def test_agentpath(classpath, tmp_path, jdk):
    agent = nmprof_path().parent.parent / "lib" / "nmprof" / "libnmprof.so"
    out = tmp_path / "agentpath.jfr"
    subprocess.run(java(jdk, f"-agentpath:{agent}=nativemem=64k,attributes=route,file={out}", "-cp", classpath,
                        "ContextApp", 2, 40), check=True, capture_output=True, timeout=120)
    check_context(out)


@JDKS
def test_attach_after_the_class_is_in_use(nmprof, classpath, tmp_path, jdk):
    stop = tmp_path / "stop"
    proc = subprocess.Popen(java(jdk, "-cp", classpath, "ContextApp", 2, "until", stop), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd="/tmp")
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # its threads set context with no agent in the JVM
        out = tmp_path / "attach.jfr"
        run(nmprof, "attach", proc.pid, "--duration", "2", "--nativemem", "16m", "--context-attributes", "route",
            "-q", "-o", out, check=0)
        check_context(out, attached=True)
    finally:
        stop.touch()
        stdout, stderr = proc.communicate(timeout=60)
    # No thread died of an UnsatisfiedLinkError: the natives are bound before the
    # class is told the agent is there (the JVM lists an attached agent's library for
    # native lookups only once Agent_OnAttach has returned).
    assert proc.returncode == 0 and stdout.endswith("served\n") and "Exception" not in stderr, stderr


@JDKS
def test_without_the_agent_the_jar_does_nothing(classpath, jdk):
    result = subprocess.run(java(jdk, "-cp", classpath, "ContextApp", 2, 20), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and result.stdout == "served\n", result.stderr
