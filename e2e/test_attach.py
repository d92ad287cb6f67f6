"""nmprof attach: a running JVM profiled through the JVM Attach API, on JDK 17 and 25."""

import os
import pwd
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import JDK17, JDK25, jfr_events, run

JDKS = pytest.mark.parametrize("jdk", [JDK17, JDK25], ids=["jdk17", "jdk25"])
OTHER_USER = "nmprof-test"


def become(user):
    """A preexec_fn that runs the child as `user` (None: as we are)."""
    if not user:
        return None
    entry = pwd.getpwnam(user)

    def preexec():
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    return preexec


class Target:
    """A JVM running AttachTarget, stopped (if still running) at the end."""

    def __init__(self, java_programs, jdk, tmp_path, seconds=60, jvm_options=(), user=None, load=False):
        self.stop_file = tmp_path / "stop"
        self.load_file = tmp_path / "load" if load else None
        args = [seconds, self.stop_file] + ([self.load_file] if load else [])
        command = java_programs.command(jdk, *args, main="AttachTarget", jvm_options=jvm_options)
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd="/tmp", preexec_fn=become(user))
        assert self.proc.stdout.readline().strip() == "ready"
        self.pid = self.proc.pid

    def finish(self, timeout=60):
        self.stop_file.touch(exist_ok=True)
        out, err = self.proc.communicate(timeout=timeout)
        return out, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def target(java_programs, tmp_path):
    made = []

    def make(jdk, **kwargs):
        t = Target(java_programs, jdk, tmp_path, **kwargs)
        made.append(t)
        return t
    yield make
    for t in made:
        t.kill()


def java_methods(path, jdk):
    """For each sample, the (class, method) pairs of its stack."""
    stacks = []
    for e in jfr_events(path, "profiler.Malloc", jdk):
        stacks.append([(f["method"]["type"]["name"].replace("/", "."), f["method"]["name"])
                       for f in e["values"]["stackTrace"]["frames"]])
    return stacks


def has_mixed_stack(stacks, native_top, java_method):
    return any(s and s[0][1] == native_top and ("AttachTarget", java_method) in s for s in stacks)


@JDKS
def test_one_shot_attach_records_mixed_stacks_and_the_target_goes_on(nmprof, target, tmp_path, jdk):
    t = target(jdk)
    out = tmp_path / "attach.jfr"
    result = run(nmprof, "attach", t.pid, "--nativemem", "256k", "--duration", "2", "-o", out, check=0, timeout=120)
    assert "profile written to" in result.stderr
    stacks = java_methods(out, jdk)
    assert has_mixed_stack(stacks, "deflateInit2_", "compressLoop"), stacks[:3]
    assert any(("AttachTarget", "directLoop") in s and ("java.nio.ByteBuffer", "allocateDirect") in s for s in stacks)
    stdout, _ = t.finish()
    assert stdout.strip() == "done true"
    assert t.proc.returncode == 0
    assert not list(Path("/tmp").glob(f"nmprof-{t.pid}-*")), "the JVM's temporary files are removed"


@JDKS
def test_two_start_stop_cycles_in_one_jvm(nmprof, target, tmp_path, jdk):
    t = target(jdk)
    for cycle in (1, 2):
        run(nmprof, "attach", t.pid, "start", "--nativemem", "256k", check=0)
        status = run(nmprof, "attach", t.pid, "status", check=0)
        assert "recording into" in status.stdout
        time.sleep(1)
        out = tmp_path / f"cycle{cycle}.jfr"
        run(nmprof, "attach", t.pid, "stop", "-q", "-o", out, check=0)
        assert has_mixed_stack(java_methods(out, jdk), "deflateInit2_", "compressLoop")
        assert "not recording" in run(nmprof, "attach", t.pid, "status", check=0).stdout
    stdout, _ = t.finish()
    assert stdout.strip() == "done true"


@JDKS
def test_dump_takes_a_snapshot_while_recording_goes_on(nmprof, target, tmp_path, jdk):
    t = target(jdk)
    run(nmprof, "attach", t.pid, "start", "--nativemem", "256k", check=0)
    time.sleep(1)
    first = tmp_path / "dump.jfr"
    run(nmprof, "attach", t.pid, "dump", "-q", "-o", first, check=0)
    time.sleep(1)
    final = tmp_path / "final.jfr"
    run(nmprof, "attach", t.pid, "stop", "-q", "-o", final, check=0)
    assert 0 < len(jfr_events(first, "profiler.Malloc", jdk)) < len(jfr_events(final, "profiler.Malloc", jdk))


@JDKS
def test_a_jni_library_loaded_after_the_attach_is_seen(nmprof, target, tmp_path, jdk):
    t = target(jdk, load=True)
    run(nmprof, "attach", t.pid, "start", "--nativemem", "64k", check=0)
    t.load_file.touch()
    time.sleep(1.5)
    out = tmp_path / "jni.jfr"
    run(nmprof, "attach", t.pid, "stop", "-q", "-o", out, check=0)
    stacks = java_methods(out, jdk)
    assert any(s[:3] == [("libjni_alloc.so", "jni_site"), ("libjni_alloc.so", "Java_AttachTarget_jniAllocate"),
                         ("AttachTarget", "jniAllocate")] for s in stacks), [s[:3] for s in stacks][:5]


@JDKS
def test_the_jvm_exiting_during_a_one_shot_attach_still_yields_a_profile(nmprof, target, tmp_path, jdk):
    t = target(jdk, seconds=3)
    out = tmp_path / "exit.jfr"
    result = run(nmprof, "attach", t.pid, "--nativemem", "256k", "--duration", "60", "-o", out, check=0, timeout=120)
    assert "exited" in result.stderr
    assert has_mixed_stack(java_methods(out, jdk), "deflateInit2_", "compressLoop")


@JDKS
def test_a_quiet_one_shot_attach_says_only_where_the_profile_is(nmprof, target, tmp_path, jdk):
    t = target(jdk, seconds=3)
    out = tmp_path / "quiet.jfr"
    result = run(nmprof, "attach", t.pid, "-q", "--nativemem", "256k", "--duration", "60", "-o", out, check=0,
                 timeout=120)
    assert result.stderr == f"nmprof: profile written to {out}\n"  # not that the JVM exited


def ensure_other_user():
    if os.geteuid() != 0:
        pytest.skip("needs root, to run a JVM as another user")
    try:
        pwd.getpwnam(OTHER_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER_USER],
                       check=True)


@JDKS
def test_attach_to_a_jvm_running_as_another_user(nmprof, target, tmp_path, jdk):
    ensure_other_user()
    t = target(jdk, user=OTHER_USER)
    out = tmp_path / "other.jfr"
    run(nmprof, "attach", t.pid, "--nativemem", "256k", "--duration", "2", "-o", out, check=0, timeout=120)
    assert has_mixed_stack(java_methods(out, jdk), "deflateInit2_", "compressLoop")
    assert out.stat().st_uid == os.getuid()


def test_attach_to_a_jvm_in_its_own_pid_and_mount_namespace(nmprof, java_programs, tmp_path):
    if os.geteuid() != 0 or subprocess.run(["unshare", "--pid", "--mount", "--fork", "true"]).returncode != 0:
        pytest.skip("needs root and unshare")
    command = " ".join(java_programs.command(JDK17, 60, "/tmp/stop", main="AttachTarget"))
    proc = subprocess.Popen(["unshare", "--pid", "--mount", "--fork", "sh", "-c",
                             f"mount -t tmpfs tmpfs /tmp && exec {command}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        jvm = int(subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()[0])
        out = tmp_path / "container.jfr"
        run(nmprof, "attach", jvm, "--nativemem", "256k", "--duration", "2", "-o", out, check=0, timeout=120)
        assert has_mixed_stack(java_methods(out, JDK17), "deflateInit2_", "compressLoop")
        processes = jfr_events(out, "nmprof.Process")
        assert processes[0]["values"]["pid"] == 1  # as the JVM sees itself
    finally:
        proc.kill()
        proc.wait()


def one_line_error(result, *words):
    assert result.returncode != 0, result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("nmprof: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_error_no_such_process(nmprof):
    one_line_error(run(nmprof, "attach", 4000000, "--duration", "1"), "no such process")


def test_error_attach_disabled(nmprof, target):
    t = target(JDK17, jvm_options=["-XX:+DisableAttachMechanism"])
    one_line_error(run(nmprof, "attach", t.pid, "--duration", "1"), "DisableAttachMechanism")


def test_error_dynamic_loading_disabled(nmprof, target):
    t = target(JDK17, jvm_options=["-XX:-EnableDynamicAgentLoading"])
    one_line_error(run(nmprof, "attach", t.pid, "--duration", "1"), "EnableDynamicAgentLoading")


def test_error_the_jvm_does_not_answer(nmprof, target):
    t = target(JDK17)
    os.kill(t.pid, signal.SIGSTOP)
    try:
        one_line_error(run(nmprof, "attach", t.pid, "--duration", "1", "--timeout", "1", timeout=60),
                       "did not", "within")
    finally:
        os.kill(t.pid, signal.SIGCONT)


def test_error_permission_denied(nmprof, target, tmp_path):
    ensure_other_user()
    t = target(JDK17)  # runs as root
    entry = pwd.getpwnam(OTHER_USER)

    def as_other():
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    result = subprocess.run([str(nmprof), "attach", str(t.pid), "--duration", "1", "-o", "/tmp/x-denied.jfr"],
                            capture_output=True, text=True, preexec_fn=as_other, cwd="/tmp", timeout=60)
    one_line_error(result, "permission denied")


def test_error_the_agent_fails_to_load(nmprof, target, tmp_path):
    t = target(JDK17)
    not_an_agent = tmp_path / "libnotagent.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(not_an_agent), "-x", "c", "/dev/null"], check=True)
    not_an_agent.parent.chmod(0o755)
    env = dict(os.environ, NMPROF_AGENT=str(not_an_agent))
    one_line_error(run(nmprof, "attach", t.pid, "--duration", "1", env=env), "Agent_OnAttach")
