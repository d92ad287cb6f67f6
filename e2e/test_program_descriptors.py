"""Programs that close or replace descriptors they did not open (daemons close every
number, one by one or with close_range, or dup2 /dev/null over them), from one
thread while others allocate: their own files never get a byte of the agent's, and
the recording is complete. The agent's file moves out of their way; one taken by a
raw system call is reopened by path, and when even that fails, `run` says which
process's recording stopped early."""

import subprocess

import pytest

from conftest import jfr_events, jfr_tool, report_json, run, stack_of


def profiled(nmprof, tmp_path, program, *args, interval="4k"):
    out = tmp_path / "out.jfr"
    out.unlink(missing_ok=True)
    return out, run(nmprof, "run", "--nativemem", interval, "-o", out, "--", program, *map(str, args), timeout=120)


def assert_complete(nmprof, out, result):
    """jfr reads it whole; every sample its last statistics count is in it, and they
    were written as the process ended. (Samples the agent could not keep up with at
    4k, lostSamples, are another matter.)"""
    summary = subprocess.run([str(jfr_tool()), "summary", str(out)], capture_output=True, text=True)
    assert summary.returncode == 0, summary.stderr
    report = report_json(nmprof, out)
    assert report["statistics"]["samples"] == report["allocated"]["samples"] > 0, report["statistics"]
    assert "stopped early" not in result.stderr, result.stderr


@pytest.mark.parametrize("how", ["close", "close_range", "dup2"])
@pytest.mark.parametrize("limit", [[], [1024]], ids=["", "1024-descriptors"])
def test_a_program_closing_every_number_keeps_its_files_and_the_recording_stays_whole(nmprof, programs, tmp_path,
                                                                                       how, limit):
    # Before the fix, every run stopped recording ("Bad file descriptor") and the CLI
    # dropped the last append; some found "FLR" over the start of one of their files.
    # With 1024 descriptors the agent's file is among the numbers closed: it moves.
    program = programs.c("fd_closer.c")
    files = tmp_path / "files"
    files.mkdir()
    for _ in range(2):
        out, result = profiled(nmprof, tmp_path, program, how, 200, files, *limit)
        assert result.returncode == 0 and result.stdout == "ok\n", result.stdout + result.stderr
        assert "nmprof: warning" not in result.stderr and "cannot write" not in result.stderr, result.stderr
        assert "lost the output file" not in result.stderr, result.stderr
        assert_complete(nmprof, out, result)


def sites(out):
    return {stack_of(e)[0] for e in jfr_events(out, "profiler.Malloc")}


def test_a_file_closed_by_a_raw_system_call_is_reopened_and_keeps_what_was_written(nmprof, programs, tmp_path):
    out, result = profiled(nmprof, tmp_path, programs.c("raw_closer.c"), "reopen", interval="64k")
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    assert_complete(nmprof, out, result)
    assert {"raw_closer!before_site", "raw_closer!after_site"} <= sites(out)


def test_run_says_which_recording_stopped_early_when_its_file_cannot_be_reopened(nmprof, programs, tmp_path):
    # Before the fix, run said "profile written" and nothing else.
    out, result = profiled(nmprof, tmp_path, programs.c("raw_closer.c"), "exhaust", interval="64k")
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    assert "lost the output file" in result.stderr, result.stderr
    report = report_json(nmprof, out)
    pid = report["processes"][0]["pid"]
    assert f"the recording of process {pid} (" in result.stderr and "stopped early" in result.stderr, result.stderr
    assert "raw_closer!before_site" in sites(out)


# Subshells, pipelines, command substitution, background jobs, a descriptor opened and
# closed, a here-document: dash's fork children call close(-1), which spun for good
# once the agent held a number counted with -1's (the broker's socket).
SHELL_SCRIPT = r"""
(seq 5 | sort -r) | tr '\n' ' '; echo
lines=$(printf 'a\nb\n' | wc -l); echo "lines $lines"
{ echo grouped; } 2>&1 | cat
sleep 0.01 & wait $!; echo "background $?"
exec 3>/dev/null; exec 3>&-; echo closed
cat <<EOF
here $lines
EOF
exit 3
"""


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_shell_scripts_run_as_they_do_without_nmprof(nmprof, tmp_path, shell):
    plain = subprocess.run([shell, "-c", SHELL_SCRIPT], capture_output=True, text=True, timeout=30)
    profiled = run(nmprof, "run", "-q", "-o", tmp_path / "out.jfr", "--", shell, "-c", SHELL_SCRIPT, timeout=60)
    assert (profiled.returncode, profiled.stdout) == (plain.returncode, plain.stdout) == (3, plain.stdout)
    assert "background 0" in plain.stdout and "here 2" in plain.stdout
