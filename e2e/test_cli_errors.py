"""Bad input gets one clear line on stderr and a non-zero exit, and nothing starts."""

import os

import pytest

from conftest import run


def one_line_error(result, code, *words):
    assert result.returncode == code, result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert lines and lines[0].startswith("nmprof: "), result.stderr
    for w in words:
        assert w in result.stderr, result.stderr


def test_unknown_option(nmprof):
    one_line_error(run(nmprof, "run", "--bogus", "--", "true"), 2, "--bogus", "--help")


def test_malformed_interval(nmprof, tmp_path):
    one_line_error(run(nmprof, "run", "--nativemem", "12q", "-o", tmp_path / "a.jfr", "--", "true"), 2, "12q")


def test_missing_command(nmprof, tmp_path):
    one_line_error(run(nmprof, "run", "-o", tmp_path / "a.jfr", "--", "no-such-program-xyz"), 127,
                   "command not found: no-such-program-xyz")


def test_a_path_to_nothing_is_not_found_as_the_readme_says(nmprof, tmp_path):
    one_line_error(run(nmprof, "run", "-o", tmp_path / "a.jfr", "--", "/nonexistent/prog"), 127,
                   "command not found: /nonexistent/prog")


def test_not_executable(nmprof, tmp_path):
    f = tmp_path / "data.txt"
    f.write_text("hello")
    one_line_error(run(nmprof, "run", "-o", tmp_path / "a.jfr", "--", f), 126, "not an executable")


def test_output_directory_missing(nmprof, tmp_path):
    one_line_error(run(nmprof, "run", "-o", tmp_path / "nope" / "a.jfr", "--", "true"), 1, "does not exist")


def test_output_not_writable(nmprof, tmp_path):
    d = tmp_path / "ro"
    d.mkdir(mode=0o500)
    if os.geteuid() != 0:  # root may write to a mode 0500 directory
        one_line_error(run(nmprof, "run", "-o", f"{d}/a.jfr", "--", "true"), 1, "not writable")
    # /proc exists but takes no new files: said so, not "No such file or directory" (issue 17).
    result = run(nmprof, "run", "-o", "/proc/a.jfr", "--", "true")
    one_line_error(result, 1, "files cannot be created in /proc")
    assert "No such file" not in result.stderr


def test_no_command_given(nmprof):
    one_line_error(run(nmprof, "run"), 2)


def test_report_of_a_file_that_is_not_jfr(nmprof, tmp_path):
    f = tmp_path / "x.jfr"
    f.write_bytes(b"hello world, not a recording" * 10)
    result = run(nmprof, "report", f)
    assert result.returncode != 0 and result.stderr.startswith("nmprof") and "not a JFR file" in result.stderr


def test_report_of_a_missing_file(nmprof, tmp_path):
    result = run(nmprof, "report", tmp_path / "missing.jfr")
    assert result.returncode != 0 and "missing.jfr" in result.stderr


# Hostile testing, item 7: numbers that are not numbers of seconds (or out of any
# sensible range) are refused in one line before anything is attached to.
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e308", "-1", "99999999999999999999", "0x10", "5s", ""])
@pytest.mark.parametrize("option", ["--timeout", "--duration"])
def test_attach_seconds_are_finite_and_in_range(nmprof, option, value):
    action = ["status"] if option == "--timeout" else []
    result = run(nmprof, "attach", os.getpid(), *action, option, value, timeout=10)
    one_line_error(result, 2, option, "is not a number of seconds")
    assert len(result.stderr) < 200, result.stderr


def test_a_timeout_of_zero_is_refused_and_fractions_are_taken(nmprof):
    one_line_error(run(nmprof, "attach", os.getpid(), "status", "--timeout", "0", timeout=10), 2, "--timeout")
    for option, value in (("--timeout", "0.5"), ("--duration", "0")):
        result = run(nmprof, "attach", 4000000, option, value, timeout=10)
        one_line_error(result, 1, "no such process")


@pytest.mark.parametrize("args", [["--depth", "99999999999999999999"], ["--depth", "1e308"], ["--pid", "-1"],
                                  ["--pid", "99999999999999999999"], ["--top", "nan"]])
def test_report_counts_are_in_range(nmprof, tmp_path, args):
    result = run(nmprof, "report", tmp_path / "missing.jfr", *args)
    one_line_error(result, 2, args[0])
    assert len(result.stderr) < 200, result.stderr
