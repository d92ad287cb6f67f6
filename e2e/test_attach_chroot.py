"""nmprof attach to a process in a chroot: the agent and its files go through
/proc/PID/root, into the chroot's /tmp or, when it has none, a directory nmprof makes
there; the program's frames are named although the chroot has no /proc, and those of a
process that chrooted itself, out of its files' reach, are named by the report. Before:
"cannot open /proc/PID/root/tmp: No such file or directory", and with a /tmp there,
frames "+0x1569" without a module."""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import jfr_events, report_json, run
from test_attach import one_line_error
from test_attach_native import Target, finished_ok, sampled_functions


def libraries_of(program):
    """The files the dynamic loader maps for `program`: its libraries and the loader."""
    lines = subprocess.run(["ldd", str(program)], capture_output=True, text=True, check=True).stdout.splitlines()
    return [Path(word) for line in lines for word in line.split() if word.startswith("/")]


@pytest.fixture
def jail(programs):
    """A chroot holding attach_target, its libraries and nothing else (no /proc, no
    /tmp), under /var/tmp: nmprof's own /tmp is not in it."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to chroot")
    program = programs.c("attach_target.c")
    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="nmprof-e2e-jail-"))
    root.chmod(0o755)
    for library in libraries_of(program):
        (root / library.relative_to("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(library, root / library.relative_to("/"))
    shutil.copy(program, root / "attach_target")
    made = []

    def start(root_seen=root):
        t = Target("chroot", root_seen, "/attach_target", "loop", "/stop", cwd="/")
        made.append(t)
        return t
    start.root = root
    yield start
    for t in made:
        t.kill()
    shutil.rmtree(root)


def modules_of(path, function):
    """The modules (JFR classes) of the frames of `function` in the recording's samples."""
    return {f["method"]["type"]["name"] for e in jfr_events(path, "profiler.Malloc")
            for f in e["values"]["stackTrace"]["frames"] if f["method"]["name"] == function}


@pytest.mark.parametrize("tmp", ["no /tmp", "a /tmp"])
def test_a_chrooted_program_is_recorded_with_its_names(nmprof, jail, tmp_path, tmp):
    if tmp == "a /tmp":
        (jail.root / "tmp").mkdir(mode=0o1777)
    t = jail()
    out = tmp_path / "chroot.jfr"
    result = run(nmprof, "attach", t.pid, "--duration", "1", "-o", out, check=0)
    note = f"nmprof: note: process {t.pid} has no /tmp in its root (a chroot?): the agent's files go to /nmprof-tmp-0"
    assert (note in result.stderr) == (tmp == "no /tmp"), result.stderr
    assert {"leaky_site", "churn_site", "round_ok", "main"} <= sampled_functions(out)
    assert modules_of(out, "leaky_site") == {"attach_target"}
    # Nothing of nmprof's is left in the chroot: not its directory, not a file in /tmp.
    assert sorted(p.name for p in jail.root.iterdir()) == sorted(["attach_target", "lib", "lib64"] +
                                                                  (["tmp"] if tmp == "a /tmp" else []))
    if tmp == "a /tmp":
        assert not list((jail.root / "tmp").iterdir())
    (jail.root / "stop").touch()
    assert finished_ok(t).startswith("ok")


def test_a_long_session_in_a_chroot_without_tmp_keeps_its_recording_in_nmprofs_directory(nmprof, jail, tmp_path):
    t = jail()
    run(nmprof, "attach", t.pid, "start", "-q", check=0)
    own = jail.root / "nmprof-tmp-0"
    assert own.is_dir() and own.stat().st_mode & 0o777 == 0o700
    assert [p.name.endswith(f".{t.pid}.jfr") for p in own.iterdir()] == [True], "the recording, nothing else"
    status = run(nmprof, "attach", t.pid, "status", check=0).stdout
    assert "recording into /nmprof-tmp-0/nmprof-" in status
    time.sleep(1)
    out = tmp_path / "stop.jfr"
    run(nmprof, "attach", t.pid, "stop", "-q", "-o", out, check=0)
    assert "leaky_site" in sampled_functions(out)
    assert not own.exists(), "removed once empty"
    (jail.root / "stop").touch()
    assert finished_ok(t).startswith("ok")


def test_a_read_only_chroot_without_tmp_is_refused_in_one_line(nmprof, jail, tmp_path):
    read_only = tmp_path / "ro"
    read_only.mkdir()
    subprocess.run(["mount", "--bind", jail.root, read_only], check=True)
    t = None
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", read_only], check=True)
        t = jail(read_only)
        result = run(nmprof, "attach", t.pid, "--duration", "1", "-o", tmp_path / "x.jfr")
        one_line_error(result, f"process {t.pid} has no /tmp in its root (/proc/{t.pid}/root/tmp",
                       "nmprof cannot make /proc/", "Read-only file system", "give it a /tmp")
        assert t.proc.poll() is None
    finally:
        if t:
            t.kill()  # first: its root is the mount
        subprocess.run(["umount", read_only], check=True)


def report_functions(nmprof, path):
    """Every function the stacks of `nmprof report` name, as 'module!function'."""
    report = report_json(nmprof, path, "--top", "100")
    return {f"{frame['container']}!{frame['function']}" for stack in report["stacks"] for frame in stack["frames"]}


def test_a_process_that_chrooted_itself_has_its_frames_named_by_the_report(nmprof, programs, tmp_path):
    # A daemon's privilege separation: it chroots into an empty directory after it
    # started, and neither it nor its agent can read its program or libc any more.
    # The agent names what their images export (libc's malloc) and module+offset for
    # the rest; the report names those from the files the recording names.
    if os.geteuid() != 0:
        pytest.skip("needs root, to chroot")
    empty = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="nmprof-e2e-empty-"))
    t = Target(programs.c("attach_target.c"), "jail", empty, "/stop", cwd="/")
    try:
        out = tmp_path / "jailed.jfr"
        run(nmprof, "attach", t.pid, "--duration", "1", "-q", "-o", out, check=0)
        recorded = {f["method"]["name"] for e in jfr_events(out, "profiler.Malloc")
                    for f in e["values"]["stackTrace"]["frames"]}
        assert "leaky_site" not in recorded and any(n.startswith("attach_target+0x") for n in recorded), recorded
        named = report_functions(nmprof, out)
        assert {"attach_target!leaky_site", "attach_target!churn_site", "attach_target!main"} <= named, named
        (empty / "stop").touch()
        assert finished_ok(t).startswith("ok")
    finally:
        t.kill()
        shutil.rmtree(empty)
