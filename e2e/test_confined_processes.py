"""Processes that confine themselves still deliver their recordings (issue 38): one
that drops root and execs, becomes another user by raw system calls, chroots, or
runs in a mount namespace of its own (a private /tmp, a read-only file system) can
no longer reach run's staging directory by path. nmprof opens their files for them
(protocol/recording_broker.h)."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import agent_path, report_json, run, unused_uid

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to become another user or mount")

ALLOCATIONS = 500


@pytest.fixture
def worker(programs):
    """The program, where another user can run it (the agent names frames from its file)."""
    shared = Path(tempfile.mkdtemp(prefix="nmprof-e2e-confined-", dir="/var/tmp"))
    shared.chmod(0o755)
    yield shutil.copy(programs.c("confined_worker.c"), shared)
    shutil.rmtree(shared, ignore_errors=True)


def worker_samples(nmprof, out):
    """Samples allocated in the program's own code: worker_site is all that allocates
    there. (A process in an empty chroot cannot read the program's file, and names
    the function by its offset.)"""
    samples = 0
    for stack in report_json(nmprof, out, "--top", "100")["stacks"]:
        if stack["frames"] and stack["frames"][0]["container"].startswith("confined_worker"):
            samples += stack["samples"]
    return samples


def recorded(nmprof, tmp_path, *command, processes=1, out=None, env=None):
    out = out or tmp_path / "confined.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-q", "-o", out, "--", *command, env=env)
    assert result.returncode == 0, result.stderr
    assert "cannot write" not in result.stderr and "lost the output file" not in result.stderr, result.stderr
    assert worker_samples(nmprof, out) == processes * ALLOCATIONS
    return result


@needs_root
def test_a_program_that_setpriv_starts_as_another_user(nmprof, tmp_path, worker):
    uid = str(unused_uid())
    recorded(nmprof, tmp_path, "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", worker, "work",
             ALLOCATIONS)


@needs_root
def test_a_program_that_runuser_starts_as_nobody(nmprof, tmp_path, worker):
    if not shutil.which("runuser"):
        pytest.skip("no runuser")
    recorded(nmprof, tmp_path, "runuser", "-u", "nobody", "--", worker, "work", ALLOCATIONS)


@needs_root
def test_a_child_that_drops_root_and_execs(nmprof, tmp_path, worker):
    result = recorded(nmprof, tmp_path, worker, "exec-as", unused_uid(), ALLOCATIONS)
    assert result.stdout == "done\n"


@needs_root
def test_a_child_that_drops_root_by_raw_system_calls(nmprof, tmp_path, worker):
    recorded(nmprof, tmp_path, worker, "raw-setuid", unused_uid(), ALLOCATIONS)


@needs_root
def test_a_program_that_chroots_into_an_empty_directory(nmprof, tmp_path, worker):
    empty = tmp_path / "empty-root"
    empty.mkdir()
    recorded(nmprof, tmp_path, worker, "chroot", empty, ALLOCATIONS, processes=2)


@needs_root
def test_a_program_with_a_private_tmp(nmprof, tmp_path, worker):
    # systemd's PrivateTmp=yes: the output in /tmp puts the staging directory there.
    out = Path(tempfile.mkdtemp(prefix="nmprof-e2e-private-", dir="/tmp")) / "private.jfr"
    # The agent from outside /tmp, which the program's own /tmp hides (a checkout there).
    env = dict(os.environ, NMPROF_AGENT=shutil.copy(agent_path(), Path(worker).parent))
    try:
        recorded(nmprof, tmp_path, "unshare", "--mount", "--propagation", "private", "sh", "-c",
                 f"mount -t tmpfs tmpfs /tmp && exec {worker} work {ALLOCATIONS}", out=out, env=env)
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


@needs_root
def test_a_program_whose_file_system_is_read_only(nmprof, tmp_path, worker):
    # systemd's ProtectSystem=strict: the staging directory's file system, read-only.
    directory = tmp_path / "outputs"
    directory.mkdir()
    recorded(nmprof, tmp_path, "unshare", "--mount", "--propagation", "private", "sh", "-c",
             f"mount --bind {directory} {directory} && mount -o remount,bind,ro {directory} && "
             f"exec {worker} work {ALLOCATIONS}", out=directory / "ro.jfr")


def test_a_daemon_that_retitles_itself_is_named_by_its_pid(nmprof, programs, tmp_path):
    # redis, nginx and php-fpm overwrite their environment to set their title: the
    # daemon was found by the staging directory in its environment, and not at all
    # then. Every process of the run holds the broker's socket, whatever its title.
    out = tmp_path / "daemon.jfr"
    result = run(nmprof, "run", "-o", out, "--", programs.c("retitled_daemon.c"))
    assert result.returncode == 0, result.stderr
    daemon = int(result.stdout)
    try:
        assert f"process {daemon} (retitled_daemon) outlived the command" in result.stderr, result.stderr
        assert result.stderr.count("outlived the command") == 1, result.stderr  # not the intermediate child
    finally:
        os.kill(daemon, 9)


@pytest.fixture
def static_program(tmp_path):
    source = tmp_path / "static_allocator.c"
    source.write_text('#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n'
                      '  for (int i = 0; i < 1000; i++) { volatile char* p = malloc(100000); p[0] = 1; }\n'
                      '  puts("static done");\n  return 0;\n}\n')
    program = tmp_path / "static_allocator"
    subprocess.run(["gcc", "-O2", "-static", "-o", program, source], check=True)
    return program


@pytest.mark.parametrize("how", ["exec", "fork", "vfork"])
def test_a_static_program_behind_a_shell_is_named_not_blamed_on_the_interval(nmprof, tmp_path, static_program, how):
    # 100 MB allocated by a program the agent cannot enter: the summary said "the
    # program allocated too little for the sampling interval".
    script = {"exec": f"exec {static_program}",
              "fork": f"{static_program}; true",  # bash forks
              "vfork": f"{static_program}; true"}[how]  # dash vforks for a simple command
    shell = "bash" if how == "fork" else "dash"
    result = run(nmprof, "run", "-o", tmp_path / "static.jfr", "--", shell, "-c", script)
    assert (result.returncode, result.stdout) == (0, "static done\n"), result.stderr
    said = " ".join(result.stderr.split())  # the summary's lines are wrapped
    assert "allocated too little" not in said, result.stderr
    assert "left no recording (statically linked" in said, result.stderr
