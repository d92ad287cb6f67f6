"""Programs under seccomp filters (issue 38): a filter may kill a process for any
system call it did not plan for, and the agent makes several. A program that puts
itself under a filter has its recording end right before, and runs on as it does
alone; a process started under a filter nmprof did not check stays unrecorded; and
`nmprof run` itself under a filter (a container's, a systemd unit's) checks that the
agent's system calls pass before it runs the command."""

import re
import subprocess

import pytest

from conftest import jfr_tool, report_json, run

SYS_PWRITE64 = 18
SYS_FLOCK = 73


def plain(program, *args):
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("how", ["prctl", "seccomp", "tsync"])
@pytest.mark.parametrize("refusal", ["kill", "errno"])
def test_a_program_that_sandboxes_itself_runs_as_it_does_alone(nmprof, programs, tmp_path, how, refusal):
    program = programs.c("seccomp_sandbox.c")
    args = [how] + (["errno"] if refusal == "errno" else [])
    alone = plain(program, *args)
    assert (alone.returncode, alone.stdout) == (0, "sandboxed and done\n"), alone.stderr
    out = tmp_path / "sandbox.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-o", out, "--", program, *args)
    assert (result.returncode, result.stdout) == (0, alone.stdout), result.stderr
    assert "puts itself under a seccomp filter: its recording ends here" in result.stderr
    assert "lost the output file" not in result.stderr
    # What it allocated before the filter is all there, 200 blocks of 100,000 bytes,
    # still live when the recording ended; nothing after.
    report = report_json(nmprof, out, "--live")
    assert report["live"]["estimated_bytes"] >= 200 * 100000
    assert report["allocated"]["estimated_bytes"] < 300 * 100000
    assert any("seccomp filter" in note for note in report["notes"]), report["notes"]
    subprocess.run([str(jfr_tool()), "summary", str(out)], check=True, capture_output=True)


def test_an_image_started_under_a_filter_nmprof_did_not_check_stays_unrecorded(nmprof, programs, tmp_path):
    program = programs.c("seccomp_sandbox.c")
    alone = plain(program, "exec")
    assert (alone.returncode, alone.stdout) == (0, "child under the filter\n"), alone.stderr
    out = tmp_path / "exec.jfr"
    result = run(nmprof, "run", "-o", out, "--", program, "exec")
    assert (result.returncode, result.stdout) == (0, alone.stdout), result.stderr
    assert re.search(r"process \d+ runs under 1 seccomp filter\(s\) that nmprof did not check: not profiling it",
                     result.stderr), result.stderr


def test_run_under_a_filter_that_refuses_a_call_checks_it_and_records(nmprof, programs, tmp_path):
    # As in a container: calls outside the profile fail with EPERM.
    wrap = programs.c("seccomp_wrap.c")
    out = tmp_path / "container.jfr"
    result = subprocess.run([wrap, "refuse", str(SYS_FLOCK), nmprof, "run", "--nativemem", "0", "-o", out, "--",
                             programs.c("alloc_sites.c")], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, "done\n"), result.stderr
    assert report_json(nmprof, out)["allocated"]["estimated_bytes"] > 50000


def test_run_under_a_filter_that_kills_for_the_agents_calls_does_not_run_the_command(nmprof, programs, tmp_path):
    # As in a systemd unit whose SystemCallFilter= leaves out a call the agent makes.
    wrap = programs.c("seccomp_wrap.c")
    marker = tmp_path / "ran"
    result = subprocess.run([wrap, "kill", str(SYS_FLOCK), nmprof, "run", "-o", tmp_path / "x.jfr", "--", "sh", "-c",
                             f"touch {marker}"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 126, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "killed by signal 31 (SIGSYS)" in lines[0] and "not running the command" in lines[0]
    assert not marker.exists()


def test_run_under_a_filter_that_refuses_what_the_agent_needs_says_so(nmprof, programs, tmp_path):
    wrap = programs.c("seccomp_wrap.c")
    marker = tmp_path / "ran"
    result = subprocess.run([wrap, "refuse", str(SYS_PWRITE64), nmprof, "run", "-o", tmp_path / "x.jfr", "--", "sh",
                             "-c", f"touch {marker}"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 126, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "the agent could not record under them (it said: " in lines[0], lines
    assert "Operation not permitted" in lines[0]
    assert not marker.exists()
