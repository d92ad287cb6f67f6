"""nmprof attach to a process under seccomp (its own filter, systemd's SystemCallFilter=, a
container's profile): a system call the filter refuses kills the process, and an attach
makes calls the program never makes. Before, attach killed such a process (SIGSYS, exit
159) and said "no such process" or "exited during the attach"."""

import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import JDK17, jfr_events, run, stack_of
from test_attach import one_line_error
from test_attach_native import Target, sampled_functions


@pytest.fixture(scope="module")
def sandboxed(programs):
    return programs.c("sandboxed_service.c")


@pytest.fixture
def service(sandboxed, tmp_path):
    """sandboxed_service under one of its filters, killed at the end if still running."""
    made = []

    def make(mode):
        t = Target(sandboxed, mode, tmp_path / "stop")
        t.stop = tmp_path / "stop"
        made.append(t)
        assert "Seccomp:\t2" in Path(f"/proc/{t.pid}/status").read_text()
        return t
    yield make
    for t in made:
        t.kill()


def served_to_its_end(t):
    """The service ran untouched: stopped by its file, it exits 0 with "ok"."""
    t.stop.touch()
    code, out, err = t.finish()
    assert code == 0 and out.startswith("ok"), (code, out, err)


def test_a_process_under_a_filter_is_refused_in_one_line_and_runs_on(nmprof, service, tmp_path):
    t = service("allow-list")
    out = tmp_path / "never.jfr"
    result = run(nmprof, "attach", t.pid, "--duration", "1", "-o", out)
    one_line_error(result, f"process {t.pid} (sandboxed_servi) runs under a seccomp filter (Seccomp: 2, 1 filter",
                   "nmprof run", "--force")
    assert result.returncode == 1 and not out.exists()
    assert t.proc.poll() is None and "TracerPid:\t0" in Path(f"/proc/{t.pid}/status").read_text()
    served_to_its_end(t)


@pytest.mark.parametrize("action", ["start", "status", "stop", "dump"])
def test_every_request_to_a_process_under_a_filter_is_refused(nmprof, service, tmp_path, action):
    t = service("allow-list")
    one_line_error(run(nmprof, "attach", t.pid, action, "-o", tmp_path / "x.jfr"), "seccomp filter", "--force")
    served_to_its_end(t)


def test_force_never_stops_a_sleep_that_would_resume_through_restart_syscall(nmprof, service, tmp_path):
    # The filter allows everything but restart_syscall, which the kernel uses to resume
    # a clock_nanosleep that ptrace interrupted; the service sleeps most of the time.
    # Before, nmprof stopped it in its sleep, and the sleep's resumption killed it.
    t = service("no-restart")
    out = tmp_path / "forced.jfr"
    result = run(nmprof, "attach", t.pid, "--force", "--nativemem", "64k", "--duration", "2", "-o", out,
                 "--timeout", "30")
    assert result.returncode == 0, result.stderr
    assert {"leaky_site", "churn_site", "main"} <= sampled_functions(out)
    # start, status and stop, each a call on a thread of the service.
    run(nmprof, "attach", t.pid, "start", "--force", "-q", "--nativemem", "64k", "--timeout", "30", check=0)
    assert "recording into" in run(nmprof, "attach", t.pid, "status", "--force", "--timeout", "30", check=0).stdout
    run(nmprof, "attach", t.pid, "stop", "--force", "-q", "-o", tmp_path / "s.jfr", "--timeout", "30", check=0)
    assert "leaky_site" in sampled_functions(tmp_path / "s.jfr")
    served_to_its_end(t)


def test_force_into_a_filter_that_refuses_the_injection_says_what_killed_it(nmprof, service, tmp_path):
    # The risk --force takes: this filter allows only what the service needs, and the
    # injected dlopen opens a file. nmprof says so rather than "exited during the attach".
    t = service("allow-list")
    result = run(nmprof, "attach", t.pid, "--force", "--duration", "1", "-o", tmp_path / "x.jfr", "--timeout", "30")
    one_line_error(result, f"process {t.pid} was killed by signal 31 (SIGSYS) during the call of dlopen(",
                   "its seccomp filter refused one of the call's system calls")
    assert t.proc.wait(timeout=30) == -signal.SIGSYS


def test_strict_mode_is_refused_even_with_force(nmprof, sandboxed, tmp_path):
    proc = subprocess.Popen([sandboxed, "strict"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        for _ in range(500):  # strict mode begins just after "ready"
            if "Seccomp:\t1" in Path(f"/proc/{proc.pid}/status").read_text():
                break
            time.sleep(0.01)
        result = run(nmprof, "attach", proc.pid, "--force", "--duration", "1", "-o", tmp_path / "x.jfr")
        one_line_error(result, "runs in seccomp strict mode (Seccomp: 1", "not even with --force", "nmprof run")
        out, _ = proc.communicate("go\n", timeout=30)
        assert proc.returncode == 0 and out.strip() == "ok"
    finally:
        proc.kill()
        proc.wait()


def test_a_jvm_under_a_filter_loads_the_agent_itself_with_a_warning(nmprof, programs, java_programs, tmp_path):
    # The JVM loads the agent: nothing is injected, and a filter that lets the JVM run
    # (here: everything but kexec_load) lets the agent run too; one that refused the
    # agent's own calls (pwrite64 of its recording, say) would end the JVM, which
    # nmprof cannot tell beforehand: it warns.
    stop = tmp_path / "stop"
    command = [programs.c("seccomp_wrap.c"), "kill", "246",  # kexec_load
               *java_programs.command(JDK17, 60, stop, main="AttachTarget")]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp")
    try:
        assert proc.stdout.readline().strip() == "ready"
        out = tmp_path / "jvm.jfr"
        result = run(nmprof, "attach", proc.pid, "--nativemem", "256k", "--duration", "2", "-q", "-o", out,
                     timeout=120)
        assert result.returncode == 0, result.stderr
        warnings = [l for l in result.stderr.splitlines() if l.startswith("nmprof: warning:")]
        assert len(warnings) == 1 and f"JVM {proc.pid} runs under a seccomp filter" in warnings[0], result.stderr
        assert "nmprof cannot read the filter" in warnings[0]
        assert any("deflateInit2_" in stack_of(e)[0] for e in jfr_events(out, "profiler.Malloc"))
        stop.touch()
        stdout, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and stdout.strip() == "done true"
    finally:
        proc.kill()
        proc.wait()


def test_a_jvm_killed_by_its_filter_during_the_attach_is_said_so(nmprof, programs, java_programs, tmp_path):
    # What the warning is about: a filter that kills on pwrite64, which the JVM never
    # makes and the agent's recording needs. nmprof says how the JVM ended.
    stop = tmp_path / "stop"
    command = [programs.c("seccomp_wrap.c"), "kill", "18",  # pwrite64
               *java_programs.command(JDK17, 60, stop, main="AttachTarget")]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/tmp")
    try:
        assert proc.stdout.readline().strip() == "ready"
        result = run(nmprof, "attach", proc.pid, "--nativemem", "256k", "--duration", "2", "-o", tmp_path / "x.jfr",
                     timeout=120)
        assert result.returncode == 1
        lines = result.stderr.splitlines()
        assert len(lines) == 2 and lines[0].startswith("nmprof: warning:"), result.stderr
        assert lines[1] == (f"nmprof: JVM {proc.pid} was killed by signal 31 (SIGSYS) while its agent answered "
                            "nmprof's request: its seccomp filter refused one of the agent's system calls")
        assert proc.wait(timeout=30) == -signal.SIGSYS
        assert not list(Path("/tmp").glob(f"nmprof-{proc.pid}-*"))
    finally:
        proc.kill()
        proc.wait()
