"""Issue 15: root's nmprof must not be turned against root or other users through
shared directories. Each finding is replayed as an attack by a throwaway user and
must fail. Needs root (the users are created and removed here); the sysctls that
would hide the attacks (fs.protected_symlinks, _regular, _fifos) are 0 meanwhile."""

import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import HERE, JDK17, JDK25, jfr_events, run, stack_of
from test_attach import has_mixed_stack, java_methods, one_line_error, target  # noqa: F401 (target is a fixture)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to create users and act as them")

JVM_USER = "nmprof-sec-jvm"   # owns the JVMs attached to
EVIL_USER = "nmprof-sec-evil"  # an unrelated local user who attacks
PROTECTIONS = ["fs.protected_symlinks", "fs.protected_regular", "fs.protected_fifos"]


@pytest.fixture(scope="module", autouse=True)
def users_and_sysctls():
    for user in (JVM_USER, EVIL_USER):
        subprocess.run(["userdel", user], capture_output=True)
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True)
    saved = {}
    for name in PROTECTIONS:
        value = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True)
        if value.returncode == 0:
            saved[name] = value.stdout.strip()
            subprocess.run(["sysctl", "-q", "-w", f"{name}=0"], capture_output=True)
    yield
    for name, value in saved.items():
        subprocess.run(["sysctl", "-q", "-w", f"{name}={value}"], capture_output=True)
    for user in (JVM_USER, EVIL_USER):
        subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
        time.sleep(0.2)
        # What killed JVMs of the user leave behind: perf data, attach sockets.
        shutil.rmtree(f"/tmp/hsperfdata_{user}", ignore_errors=True)
        for leftover in Path("/tmp").glob(".java_pid*"):
            if leftover.lstat().st_uid == ids(user)[0]:
                leftover.unlink()
        subprocess.run(["userdel", user], capture_output=True)


def ids(user):
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid


def as_user(user):
    uid, gid = ids(user)

    def switch():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return switch


def as_evil(*command, **kwargs):
    return subprocess.run(list(map(str, command)), preexec_fn=as_user(EVIL_USER), capture_output=True, text=True,
                          **kwargs)


@pytest.fixture
def shared_dir():
    """A directory like /tmp: every user may create files, sticky."""
    path = Path(tempfile.mkdtemp(prefix="nmprof-shared-", dir="/var/tmp"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def victim():
    """A file of root's that nobody else may read or write, in a directory of root's
    that others may search (like /etc)."""
    directory = Path(tempfile.mkdtemp(prefix="nmprof-root-", dir="/var/tmp"))
    directory.chmod(0o755)
    path = directory / "victim"
    path.write_text("root's secret\n")
    path.chmod(0o600)
    yield path
    shutil.rmtree(directory)


@pytest.fixture
def jvm(target):
    """JVMs of the JVM's user, stopped at the end."""
    return lambda jdk=JDK17, **kwargs: target(jdk, user=JVM_USER, **kwargs)


def private_agent(tmp_path, nmprof):
    """The agent where the JVM's user cannot read it: nmprof must copy it in."""
    directory = tmp_path / "private"
    directory.mkdir(mode=0o700)
    agent = directory / "libnmprof.so"
    shutil.copy(Path(nmprof).parent.parent / "lib" / "nmprof" / "libnmprof.so", agent)
    return dict(os.environ, NMPROF_AGENT=str(agent))


# Finding 1: a library planted where nmprof used to put its copy is never loaded.
@pytest.mark.parametrize("jdk", [JDK17, JDK25], ids=["jdk17", "jdk25"])
def test_a_planted_agent_copy_is_never_loaded(nmprof, jvm, tmp_path, jdk, shared_dir):
    env = private_agent(tmp_path, nmprof)
    size = Path(env["NMPROF_AGENT"]).stat().st_size
    marker = Path(f"/tmp/nmprof-planted-ran-{os.getpid()}")
    planted = Path(f"/tmp/nmprof-agent-{size}.so")
    source = tmp_path / "evil.c"
    source.write_text(f'#include <stdio.h>\n__attribute__((constructor)) static void run(void) '
                      f'{{ fclose(fopen("{marker}", "w")); }}\n')
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(shared_dir / "evil.so"), str(source)], check=True)
    (shared_dir / "evil.so").chmod(0o644)
    as_evil("cp", shared_dir / "evil.so", planted, check=True)
    as_evil("truncate", "-s", size, planted, check=True)
    try:
        t = jvm(jdk)
        run(nmprof, "attach", t.pid, "start", "--nativemem", "256k", env=env, check=0)
        maps = Path(f"/proc/{t.pid}/maps").read_text()
        assert str(planted) not in maps and not marker.exists()
        copies = {line.split(None, 5)[5] for line in maps.splitlines() if "/nmprof-agent-" in line}
        # The copy this attach made, deleted once loaded (other attaches may have copies of their own meanwhile).
        assert len(copies) == 1 and copies.pop().endswith(" (deleted)"), copies
        assert "recording into" in run(nmprof, "attach", t.pid, "status", env=env, check=0).stdout
        time.sleep(1)
        out = tmp_path / "out.jfr"
        run(nmprof, "attach", t.pid, "stop", "-q", "-o", out, env=env, check=0)
        assert has_mixed_stack(java_methods(out, jdk), "deflateInit2_", "compressLoop")
    finally:
        planted.unlink(missing_ok=True)
        marker.unlink(missing_ok=True)


# Finding 2: the agent never writes through a planted symbolic link or into a file
# someone else created, and its recordings are 0600.
def test_the_agent_refuses_planted_links_and_files(nmprof, programs, shared_dir, victim):
    program = programs.c("alloc_sites.c")
    agent = Path(nmprof).parent.parent / "lib" / "nmprof" / "libnmprof.so"
    as_evil("ln", "-s", victim, shared_dir / "link.jfr", check=True)
    as_evil("touch", shared_dir / "forged.jfr", check=True)
    as_evil("chmod", "666", shared_dir / "forged.jfr", check=True)
    for name in ("link.jfr", "forged.jfr"):
        env = dict(os.environ, LD_PRELOAD=str(agent), NMPROF_OPTIONS=f"nativemem=0,file={shared_dir / name}")
        result = subprocess.run([str(program)], env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0
        assert f"cannot write {shared_dir / name}" in result.stderr, result.stderr
    assert victim.read_text() == "root's secret\n"
    assert (shared_dir / "forged.jfr").stat().st_size == 0

    env = dict(os.environ, LD_PRELOAD=str(agent), NMPROF_OPTIONS=f"nativemem=0,file={shared_dir / 'mine.jfr'}")
    subprocess.run([str(program)], env=env, check=True, capture_output=True, timeout=60)
    mode = (shared_dir / "mine.jfr").stat()
    assert stat.S_IMODE(mode.st_mode) == 0o600 and mode.st_uid == 0


def test_attach_recordings_are_private_to_the_jvms_user(nmprof, jvm, tmp_path):
    t = jvm()
    started = run(nmprof, "attach", t.pid, "start", "--nativemem", "256k", check=0)
    recording = Path(f"/proc/{t.pid}/root") / started.stderr.split(" into ")[1].split()[0].lstrip("/")
    st = recording.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == ids(JVM_USER)[0]
    assert len(recording.name) == len(f"nmprof-{t.pid}-") + 26 + len(f".{t.pid}.jfr"), "its name cannot be guessed"
    run(nmprof, "attach", t.pid, "stop", "-q", "-o", tmp_path / "out.jfr", check=0)
    assert not recording.exists()


@pytest.fixture
def jvm_users_file():
    """A file of the JVM's user, in a directory of that user: the JVM's helper could delete it."""
    directory = Path(tempfile.mkdtemp(prefix="nmprof-jvm-user-", dir="/var/tmp"))
    path = directory / "precious.jfr"
    path.write_text("keep me\n")
    for p in (directory, path):
        os.chown(p, *ids(JVM_USER))
    yield path
    shutil.rmtree(directory)


# Finding 3: another user who watches for nmprof and plants replies at the names it
# used to pick (or tampers with the reply files it makes) changes nothing.
def test_planted_replies_are_ignored(nmprof, jvm, tmp_path, shared_dir, jvm_users_file):
    t = jvm()
    script = ("import os,glob,time\n"
              "forged = 'result=ok\\nrecording=true\\nfile=%s\\n'\n"
              "while not os.path.exists(%r):\n"
              "  for p in os.listdir('/proc'):\n"
              "    try:\n"
              "      if open('/proc/%%s/comm' %% p).read().strip() != 'nmprof': continue\n"
              "    except OSError: continue\n"
              "    for n in range(1, 4):\n"
              "      try: open('/tmp/nmprof-%d-%%s-%%d.reply' %% (p, n), 'w').write(forged)\n"
              "      except OSError: pass\n"
              "  for f in glob.glob('/tmp/nmprof-reply-*'):\n"
              "    try: open(f, 'w').write(forged)\n"
              "    except OSError: pass\n"
              "    try: os.rename(f, f + '.x'); open(f, 'w').write(forged)\n"
              "    except OSError: pass\n"
              "  time.sleep(0.002)\n") % (jvm_users_file, str(shared_dir / "attacker-stop"), t.pid)
    attacker = threading.Thread(target=lambda: print(as_evil(sys.executable, "-c", script, timeout=120).stderr))
    attacker.start()
    try:
        time.sleep(0.5)
        out = tmp_path / "out.jfr"
        run(nmprof, "attach", t.pid, "--duration", "1", "--nativemem", "256k", "-q", "-o", out, timeout=60)
        run(nmprof, "attach", t.pid, "start", "--nativemem", "256k", timeout=60)
        run(nmprof, "attach", t.pid, "status", timeout=60)
        run(nmprof, "attach", t.pid, "stop", "-q", "-o", out, timeout=60)
    finally:
        (shared_dir / "attacker-stop").touch()
        attacker.join()
        for f in Path("/tmp").glob(f"nmprof-{t.pid}-*.reply"):
            f.unlink()
        for f in Path("/tmp").glob("nmprof-reply-*.x"):
            f.unlink()
        # The attacker's last forgeries, planted after nmprof had removed its reply.
        for f in Path("/tmp").glob("nmprof-reply-*"):
            if f.stat().st_uid == pwd.getpwnam(EVIL_USER).pw_uid:
                f.unlink()
    assert jvm_users_file.read_text() == "keep me\n"
    assert has_mixed_stack(java_methods(out, JDK17), "deflateInit2_", "compressLoop")


class FakeJvm:
    """fake_jvm.py run as the JVM's user: a hostile target."""

    def __init__(self, programs, mode, *args):
        libdir = Path(tempfile.mkdtemp(dir="/var/tmp"))
        libdir.chmod(0o755)
        shutil.copy(programs.shared("plugin.c"), libdir / "libjvm.so")
        self.libdir = libdir
        self.proc = subprocess.Popen([sys.executable, str(HERE / "fake_jvm.py"), mode, str(libdir), *map(str, args)],
                                     stdout=subprocess.PIPE, text=True, preexec_fn=as_user(JVM_USER), cwd="/tmp")
        assert self.proc.stdout.readline().strip() == "ready"
        self.pid = self.proc.pid

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        Path(f"/tmp/.java_pid{self.pid}").unlink(missing_ok=True)
        shutil.rmtree(self.libdir, ignore_errors=True)


@pytest.fixture
def fake_jvm(programs):
    made = []

    def make(mode, *args):
        made.append(FakeJvm(programs, mode, *args))
        return made[-1]
    yield make
    for f in made:
        f.stop()


# Finding 6: what a target sends is bounded in size and time.
def test_an_endless_attach_reply_is_cut_off(nmprof, fake_jvm):
    fake = fake_jvm("flood")
    started = time.monotonic()
    one_line_error(run(nmprof, "attach", fake.pid, "status", timeout=60), "sent more than 16 MiB")
    assert time.monotonic() - started < 30


def test_a_huge_reply_file_is_not_read(nmprof, fake_jvm):
    fake = fake_jvm("sparse")
    one_line_error(run(nmprof, "attach", fake.pid, "status", timeout=60), "tampered")
    reply = fake.proc.stdout.readline().split(" ", 1)[1].strip()
    assert reply.startswith("/tmp/nmprof-reply-") and not Path(reply).exists()


# Finding 3: numbers that are not numbers and escape sequences in a reply.
def test_reply_values_are_parsed_safely_and_printed_harmless(nmprof, fake_jvm):
    fake = fake_jvm("escapes")
    result = run(nmprof, "attach", fake.pid, "status", timeout=60, check=0)
    assert "\x1b" not in result.stdout + result.stderr and "\x07" not in result.stdout
    assert "~? MiB estimated live" in result.stdout and "samples ?" in result.stdout


def test_a_recording_named_by_a_reply_is_copied_but_never_deleted(nmprof, programs, fake_jvm, tmp_path,
                                                                   jvm_users_file):
    source = tmp_path / "source.jfr"
    run(nmprof, "run", "--nativemem", "0", "-q", "-o", source, "--", programs.c("alloc_sites.c"), check=0)
    shutil.copy(source, jvm_users_file)
    fake = fake_jvm("names", jvm_users_file)
    run(nmprof, "attach", fake.pid, "stop", "-q", "-o", tmp_path / "out.jfr", timeout=60, check=0)
    assert jvm_users_file.exists(), "a file a reply names is not nmprof's to delete"
    assert (tmp_path / "out.jfr").read_bytes() == source.read_bytes()


# Ctrl-C during `attach stop -o x.html`, once the agent has given its recording up:
# nmprof died in the conversion and left .nmprof-x.jfr beside the output, and the
# recording with it. Now it writes the output, then ends by the signal.
def test_a_signal_after_the_agents_reply_waits_for_the_output(nmprof, programs, fake_jvm, tmp_path, jvm_users_file):
    source = tmp_path / "source.jfr"
    run(nmprof, "run", "--nativemem", "0", "-q", "-o", source, "--", programs.c("live_leak.c"), 2, 40000, check=0)
    shutil.copy(source, jvm_users_file)
    fake = fake_jvm("names", jvm_users_file)
    out, collected = tmp_path / "out.html", tmp_path / ".nmprof-out.jfr"
    proc = subprocess.Popen([str(nmprof), "attach", str(fake.pid), "stop", "-o", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        while not collected.exists() and proc.poll() is None:
            time.sleep(0.0005)
        assert proc.poll() is None, "the conversion is over before the signal: the test needs a longer one"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGINT, stderr
    assert "nmprof: SIGINT came while the profile is written: nmprof ends once it is written" in stderr
    assert out.read_text().rstrip().endswith("</html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.html", "source.jfr"]


def test_a_planted_attach_socket_is_named_not_waited_on(nmprof, jvm):
    t = jvm()
    planted = Path(f"/tmp/.java_pid{t.pid}")
    as_evil("touch", planted, check=True)
    try:
        started = time.monotonic()
        one_line_error(run(nmprof, "attach", t.pid, "status", timeout=60), str(planted), "not a socket",
                       "remove that file")
        assert time.monotonic() - started < 10
    finally:
        planted.unlink()


def helper_of(nmprof_pid, uid):
    """The attach helper: a child of nmprof running with the target's uid."""
    for child in Path(f"/proc/{nmprof_pid}/task/{nmprof_pid}/children").read_text().split():
        try:
            if Path(f"/proc/{child}").stat().st_uid == uid:
                return int(child)
        except FileNotFoundError:
            pass
    return None


# Finding 6 and 7: the JVM's user stops the helper, or kills it while its trigger
# file exists: nmprof ends in bounded time and leaves no trigger file behind.
@pytest.mark.parametrize("attack", [signal.SIGSTOP, signal.SIGKILL])
def test_a_stopped_or_killed_helper_neither_hangs_nmprof_nor_leaves_a_trigger(nmprof, jvm, attack):
    t = jvm()
    os.kill(t.pid, signal.SIGSTOP)  # its listener cannot start: the helper waits with its trigger
    trigger = Path(f"/tmp/.attach_pid{t.pid}")
    proc = subprocess.Popen([str(nmprof), "attach", str(t.pid), "status", "--timeout", "3"], stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 10
        while not trigger.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert trigger.exists()
        helper = helper_of(proc.pid, ids(JVM_USER)[0])
        assert helper
        os.kill(helper, attack)
        if attack == signal.SIGSTOP:
            os.kill(t.pid, signal.SIGCONT)  # the JVM would answer; the stopped helper cannot
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode != 0 and "the attach helper" in stderr, stderr
        assert not trigger.exists()
    finally:
        proc.kill()
        os.kill(t.pid, signal.SIGCONT)


def test_a_jvm_exiting_during_a_one_shot_leaves_no_recording(nmprof, jvm, tmp_path):
    t = jvm(seconds=3)
    out = tmp_path / "exit.jfr"
    result = run(nmprof, "attach", t.pid, "--nativemem", "256k", "--duration", "60", "-o", out, check=0, timeout=120)
    assert f"JVM {t.pid} exited with status 0; collecting what it recorded" in result.stderr, result.stderr
    assert has_mixed_stack(java_methods(out, JDK17), "deflateInit2_", "compressLoop")
    assert not list(Path("/tmp").glob(f"nmprof-{t.pid}-*"))


# Finding 4 and issue 16 item 5: run's staging file cannot be planted, and parallel
# runs with the same -o each write a whole file.
def test_run_never_writes_through_a_planted_partial_file(nmprof, programs, shared_dir, victim):
    out = shared_dir / "out.jfr"
    as_evil("ln", "-s", victim, str(out) + ".partial", check=True)
    run(nmprof, "run", "--nativemem", "0", "-q", "-o", out, "--", programs.c("alloc_sites.c"), check=0)
    assert victim.read_text() == "root's secret\n"
    assert out.is_file() and not out.is_symlink() and jfr_events(out, "profiler.Malloc")
    assert out.stat().st_uid == 0


def test_parallel_runs_with_the_same_output_all_succeed(nmprof, programs, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    program = programs.c("known_totals.c")
    start_together = time.time() + 1
    procs = [subprocess.Popen([str(nmprof), "run", "--nativemem", "0", "-q", "-o", str(out_dir / "same.jfr"), "--",
                               "sh", "-c", f"sleep {start_together - time.time():.3f}; exec {program} 1 20000 2000 2"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    for p in procs:
        _, stderr = p.communicate(timeout=120)
        assert p.returncode == 0 and "cannot" not in stderr, stderr
    assert len(jfr_events(out_dir / "same.jfr", "nmprof.Process")) >= 1  # jfr reads it whole
    assert [p.name for p in out_dir.iterdir()] == ["same.jfr"], "no staging files or directories are left"


# Issue 16 item 7: names too long for what nmprof creates are refused before the
# command starts; the longest one that fits works.
def test_output_names_are_checked_before_the_command_starts(nmprof, programs, tmp_path):
    marker = tmp_path / "started"
    for name in ["a" * 256, "b" * 250 + "%p.jfr"]:
        result = run(nmprof, "run", "-o", tmp_path / name, "--", "touch", marker)
        assert result.returncode == 1
        one_line_error(result, "file name too long")
        assert not marker.exists()
    deep = tmp_path / "/".join(["d" * 200] * 20)
    deep.mkdir(parents=True)
    one_line_error(run(nmprof, "run", "-o", deep / "x.jfr", "--", "touch", marker), "too long")
    assert not marker.exists()
    longest = tmp_path / ("c" * 251)
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", longest, "--", programs.c("alloc_sites.c"), check=0)
    assert longest.is_file()
    # A converted output is made from .nmprof-NAME.jfr beside it: 246 bytes of stem
    # fit in .html but not in that name (the run failed after the command, hostile
    # testing); the longest that fits works.
    for suffix in [".html", ".pb.gz"]:
        result = run(nmprof, "run", "-o", tmp_path / ("e" * 246 + suffix), "--", "touch", marker)
        one_line_error(result, "file name too long", "with the .nmprof-*.jfr made beside it")
        assert not marker.exists()
    converted = tmp_path / ("f" * 242 + ".html")
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", converted, "--", programs.c("alloc_sites.c"), check=0)
    assert converted.is_file()


# Finding 6: a FIFO at the output path is refused at once, never opened.
def test_a_fifo_at_the_output_path_does_not_block(nmprof, shared_dir):
    fifo = shared_dir / "out.jfr"
    as_evil("mkfifo", fifo, check=True)
    one_line_error(run(nmprof, "run", "-o", fifo, "--", "true", timeout=30), "not a regular file")


# Finding 5: under sudo, the output is created with the invoking user's rights.
def test_sudo_cannot_write_where_the_user_could_not(nmprof, programs, victim, shared_dir):
    uid, gid = ids(EVIL_USER)
    env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER=EVIL_USER)
    result = run(nmprof, "run", "-o", victim, "--", "true", env=env)
    one_line_error(result, "not writable")
    st = victim.stat()
    assert victim.read_text() == "root's secret\n" and st.st_uid == 0

    mine = shared_dir / "users"
    mine.mkdir()
    os.chown(mine, uid, gid)
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", mine / "out.jfr", "--", programs.c("alloc_sites.c"),
        env=env, check=0)
    assert (mine / "out.jfr").stat().st_uid == uid
    assert [p.name for p in mine.iterdir()] == ["out.jfr"], "staged outside the user's directory"


def test_sudo_attach_dump_cannot_replace_a_file_of_root(nmprof, jvm, victim, tmp_path):
    t = jvm()
    uid, gid = ids(EVIL_USER)
    env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid))
    run(nmprof, "attach", t.pid, "start", "--nativemem", "256k", check=0)
    one_line_error(run(nmprof, "attach", t.pid, "dump", "-o", victim, env=env), "not writable")
    assert victim.read_text() == "root's secret\n" and victim.stat().st_uid == 0
    run(nmprof, "attach", t.pid, "stop", "-q", "-o", tmp_path / "out.jfr", check=0)


# Finding 9: an output directory whose name looks like agent options.
@pytest.mark.parametrize("directory", ["x,live=false", "y,file=z", "w,stackdepth=1"])
def test_paths_that_look_like_options_stay_paths(nmprof, programs, tmp_path, directory):
    out_dir = tmp_path / directory
    out_dir.mkdir()
    run(nmprof, "run", "--nativemem", "0", "-q", "-o", out_dir / "out.jfr", "--", programs.c("alloc_sites.c"),
        check=0)
    events = jfr_events(out_dir / "out.jfr", "profiler.Malloc")
    assert events and max(len(e["values"]["stackTrace"]["frames"]) for e in events) > 1


# Hostile testing of the CLI (the security/reliability issue, item 1): every output,
# converted formats included, is written by the one safe writer: a link planted at
# the output's name is neither followed nor replaced, a FIFO or device is never opened.
CONVERTED = [".html", ".pb.gz", ".txt", ".json", ".collapsed"]


@pytest.fixture(scope="module")
def recording(nmprof, programs, tmp_path_factory):
    out = tmp_path_factory.mktemp("recording") / "rec.jfr"
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", out, "--", programs.c("alloc_sites.c"), check=0)
    return out


@pytest.mark.parametrize("extension", CONVERTED + [".jfr"])
def test_outputs_never_follow_or_replace_a_planted_link(nmprof, programs, recording, shared_dir, victim, extension):
    out = shared_dir / ("r" + extension)
    as_evil("ln", "-s", victim, out, check=True)
    commands = [["run", "-q", "--nativemem", "0", "-o", out, "--", programs.c("alloc_sites.c")]]
    if extension != ".jfr":
        commands.append(["report", recording, "-o", out])
    for command in commands:
        result = run(nmprof, *command, timeout=60)
        assert result.returncode != 0 and "is a symbolic link" in result.stderr, result.stderr
    assert victim.read_text() == "root's secret\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert out.is_symlink() and [p.name for p in shared_dir.iterdir()] == [out.name]


def test_a_fifo_or_device_at_a_report_output_is_refused_at_once(nmprof, recording, shared_dir):
    for extension in CONVERTED:
        fifo = shared_dir / ("out" + extension)
        as_evil("mkfifo", fifo, check=True)
        result = run(nmprof, "report", recording, "-o", fifo, timeout=10)
        assert result.returncode == 1 and "not a regular file" in result.stderr, result.stderr
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
    for device in ("/dev/full", "/dev/null"):
        result = run(nmprof, "report", recording, "-o", device, timeout=10)
        assert result.returncode == 1 and "not a regular file" in result.stderr, result.stderr
        assert stat.S_ISCHR(os.lstat(device).st_mode)
    result = run(nmprof, "report", recording, "-o", "/dev/stdout", timeout=10)
    assert result.returncode == 1 and "symbolic link" in result.stderr and result.stdout == ""
    assert os.path.islink("/dev/stdout")


# Item 6: outputs hold command lines and context values: 0600 in every format; under
# sudo they belong to the invoking user, converted ones too.
def test_every_output_is_private(nmprof, programs, recording, tmp_path):
    for extension in CONVERTED + [".jfr"]:
        out = tmp_path / ("run" + extension)
        run(nmprof, "run", "-q", "--nativemem", "0", "-o", out, "--keep-jfr", "--", programs.c("alloc_sites.c"),
            check=0)
        kept = tmp_path / "run.jfr"
        for path in (out, kept):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, (path, oct(path.stat().st_mode))
        if extension != ".jfr":
            report = tmp_path / ("report" + extension)
            run(nmprof, "report", recording, "-o", report, check=0)
            assert stat.S_IMODE(report.stat().st_mode) == 0o600, report


def test_sudo_converted_outputs_belong_to_the_invoking_user(nmprof, programs, recording, shared_dir, victim):
    uid, gid = ids(EVIL_USER)
    env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER=EVIL_USER)
    mine = shared_dir / "users"
    mine.mkdir()
    os.chown(mine, uid, gid)
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", mine / "out.html", "--", programs.c("alloc_sites.c"),
        env=env, check=0)
    run(nmprof, "report", recording, "-o", mine / "report.txt", env=env, check=0)
    for name in ("out.html", "report.txt"):
        assert (mine / name).stat().st_uid == uid, name
    assert sorted(p.name for p in mine.iterdir()) == ["out.html", "report.txt"]
    result = run(nmprof, "report", recording, "-o", victim, env=env)
    assert result.returncode == 1 and victim.read_text() == "root's secret\n"


# Item 6: under sudo -E, NMPROF_AGENT is the invoking user's: ignored (one line says
# so) unless --trust-environment. main loaded whatever it named (and attach copied it
# into the target's /tmp when the target could not read it: a root-only file).
def test_sudo_ignores_nmprof_agent_unless_trusted(nmprof, programs, shared_dir):
    uid, gid = ids(EVIL_USER)
    plain = dict(os.environ, NMPROF_AGENT="/nonexistent/libnmprof.so")
    sudo = dict(plain, SUDO_UID=str(uid), SUDO_GID=str(gid))
    out = shared_dir / "out.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "0", "-o", out, "--", programs.c("alloc_sites.c"), env=sudo)
    assert result.returncode == 0 and jfr_events(out, "profiler.Malloc"), result.stderr
    ignored = [line for line in result.stderr.splitlines() if "NMPROF_AGENT" in line]
    assert len(ignored) == 1 and "ignoring" in ignored[0] and "--trust-environment" in ignored[0], result.stderr
    for env, args in ((sudo, ["--trust-environment"]), (plain, [])):
        refused = run(nmprof, "run", *args, "-o", out, "--", "true", env=env)
        assert refused.returncode == 1 and "NMPROF_AGENT=/nonexistent/libnmprof.so does not exist" in refused.stderr


# Item 3: what the recorded program names (its path and command line, frame, thread
# and module names) and what a target says reach no terminal raw and forge no line:
# control characters and malformed UTF-8 are shown escaped, \xHH.
HOSTILE_DIR = "dir\x1b]0;title\x07\nx\x9b"  # \x9b: U+009B, a C1 control (CSI)
HOSTILE_FRAME = "site\nforged;\x1b[31mred"


@pytest.fixture(scope="module")
def hostile_recording(nmprof, programs, tmp_path_factory):
    directory = tmp_path_factory.mktemp("hostile") / HOSTILE_DIR
    directory.mkdir()
    program = directory / "hostile"
    subprocess.run(["objcopy", f"--redefine-sym=site_churn={HOSTILE_FRAME}", programs.c("live_leak.c"), program],
                   check=True)
    out = directory.parent / "hostile.jfr"
    summary = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--", program, 2, 4000, check=0)
    return out, summary.stderr


def assert_harmless(text):
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) < 0xa0 for c in text), repr(text)


def test_recorded_text_is_escaped_in_text_reports(nmprof, hostile_recording):
    recording, summary = hostile_recording
    assert_harmless(summary)
    for args in ([], ["--by", "function"], ["--live"], ["--diff", recording]):
        text = run(nmprof, "report", recording, *args, check=0).stdout
        assert_harmless(text)
    text = run(nmprof, "report", recording, "--by", "function", "--wide", check=0).stdout
    assert "dir\\x1b]0;title\\x07\\x0ax\\xc2\\x9b/hostile" in text and "site\\x0aforged;\\x1b[31mred" in text


def test_a_newline_in_a_frame_name_forges_no_collapsed_stack(nmprof, hostile_recording):
    recording, _ = hostile_recording
    for args in (["--format", "collapsed"], ["--diff", recording, "--format", "collapsed"]):
        lines = run(nmprof, "report", recording, *args, check=0).stdout.splitlines()
        assert all(re.fullmatch(r"[^ \x00-\x1f]+(?: [^\x00-\x1f]*)*?( -?\d+)+", line) for line in lines), lines
        assert any(";site\\x0aforged:\\x1b[31mred " in line for line in lines), lines
        assert not any(line.startswith("forged") for line in lines)


def test_a_targets_name_is_escaped_in_attach_errors(nmprof):
    script = ("import ctypes, os, signal, time\n"
              "ctypes.CDLL(None).prctl(15, b'\\x1b[2J\\nforged', 0, 0, 0)\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")
    target = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert target.stdout.readline().strip() == "ready"
        os.kill(target.pid, signal.SIGSTOP)
        result = run(nmprof, "attach", target.pid, "--duration", "1", timeout=60)
        one_line_error(result, "is stopped", "(\\x1b[2J)")  # comm ends at the newline
        assert_harmless(result.stderr)
    finally:
        target.kill()
        target.wait()


# Item 2: the owner of the output's directory could rename run's staging directory and
# put a link in its place. The merge reads it through a descriptor, but the command's
# processes open their recordings by path: a process started after the swap (here
# the command's child) created root's files in the directory the link named, and its
# recording was lost. Found by hostile testing; now run stages in /tmp when anyone
# else may rename a directory on the way to the output.
def test_the_output_directorys_owner_cannot_redirect_the_staging_directory(nmprof, programs, tmp_path, victim):
    out_dir = Path(tempfile.mkdtemp(prefix="nmprof-evil-out-", dir="/var/tmp"))
    os.chown(out_dir, *ids(EVIL_USER))
    go = tmp_path / "go"
    child = programs.c("known_totals.c")
    script = f"echo ready; while [ ! -e {go} ]; do sleep 0.05; done; {child} 1 1000 100 1"
    proc = subprocess.Popen([str(nmprof), "run", "--nativemem", "0", "-q", "-o", str(out_dir / "out.jfr"), "--",
                             "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        for staging in out_dir.glob(".nmprof-*"):
            swap = (f"import os\nos.rename({str(staging)!r}, {str(out_dir / 'moved')!r})\n"
                    f"os.symlink({str(victim.parent)!r}, {str(staging)!r})\n")
            as_evil(sys.executable, "-c", swap, check=True)
        go.touch()
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        assert sorted(p.name for p in victim.parent.iterdir()) == ["victim"]
        functions = {f for e in jfr_events(out_dir / "out.jfr", "profiler.Malloc") for f in stack_of(e)}
        assert "known_totals!site_small" in functions
    finally:
        proc.kill()
        shutil.rmtree(out_dir)



# Hostile testing of issue 22: a directory on the way to -o that another user planted
# as a link in a shared sticky directory (/tmp/report -> a directory of root's) was
# followed, with fs.protected_symlinks at 0, which the Security section says nmprof
# needs not: root's report landed in the directory the link names. safe_file's
# open_parent now walks the path a component at a time and follows a link in a
# directory every user may write only when it is ours or the directory owner's.
def test_a_link_planted_on_the_way_to_the_output_is_not_followed(nmprof, programs, recording, shared_dir, victim):
    as_evil("ln", "-s", victim.parent, shared_dir / "report", check=True)
    result = run(nmprof, "report", recording, "-o", shared_dir / "report" / "out.html", check=1)
    assert "symbolic link that another user owns" in result.stderr and result.stderr.count("\n") == 1
    one_line_error(run(nmprof, "run", "-o", shared_dir / "report" / "out.jfr", "--", "true"), "symbolic link")
    # The agent, as root's process, too.
    agent = Path(nmprof).parent.parent / "lib" / "nmprof" / "libnmprof.so"
    env = dict(os.environ, LD_PRELOAD=str(agent), NMPROF_OPTIONS=f"nativemem=0,file={shared_dir}/report/x.jfr")
    result = subprocess.run([str(programs.c("alloc_sites.c"))], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "symbolic link" in result.stderr, result.stderr
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim"]


# The invoking user's own link is followed under sudo: whose link it is, is judged with
# that user's rights, as the kernel would for them.
def test_sudo_follows_the_invoking_users_own_link(nmprof, recording, shared_dir):
    uid, gid = ids(EVIL_USER)
    env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER=EVIL_USER)
    mine = shared_dir / "users"
    mine.mkdir()
    os.chown(mine, uid, gid)
    as_evil("ln", "-s", mine, shared_dir / "link", check=True)
    run(nmprof, "report", recording, "-o", shared_dir / "link" / "report.txt", env=env, check=0)
    assert (mine / "report.txt").stat().st_uid == uid
    result = run(nmprof, "report", recording, "-o", shared_dir / "link" / "again.txt", check=1)
    assert "symbolic link" in result.stderr, "root does not follow it"
