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


def test_a_path_to_nothing_is_not_found_as_the_docs_say(nmprof, tmp_path):
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


# Hostile testing of issue 22: `run -o ""` said "-o  is a directory" (exit 1), `report
# -o ""` wrote to standard output, `attach -o ""` to nmprof-<pid>.jfr, `--diff ""` was
# no --diff, and `run --output= -- cmd` wrote a file named "--" (CLI11 took the next
# argument for the value). An empty path is refused before anything starts.
@pytest.mark.parametrize("args, option", [
    (["run", "-o", "", "--", "true"], "--output"),
    (["run", "--output=", "--", "true"], "--output"),
    (["report", "x.jfr", "-o", ""], "--output"),
    (["report", "x.jfr", "--output=", "--top", "3"], "--output"),
    (["report", "x.jfr", "--diff", ""], "--diff"),
    (["report", "x.jfr", "--diff=", "y.jfr"], "--diff"),
    (["report", ""], "file"),
    (["attach", "4000000", "-o", ""], "--output"),
])
def test_an_empty_path_is_refused(nmprof, tmp_path, args, option):
    result = run(nmprof, *args, cwd=tmp_path)
    one_line_error(result, 2, f"{option}: empty path")
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


def test_an_empty_value_after_an_equals_sign_is_empty(nmprof):
    one_line_error(run(nmprof, "run", "--top=", "3", "--", "true"), 2, "--top: '' is not a number")


@pytest.mark.parametrize("args", [["--depth", "99999999999999999999"], ["--depth", "1e308"], ["--pid", "-1"],
                                  ["--pid", "99999999999999999999"], ["--top", "nan"]])
def test_report_counts_are_in_range(nmprof, tmp_path, args):
    result = run(nmprof, "report", tmp_path / "missing.jfr", *args)
    one_line_error(result, 2, args[0])
    assert len(result.stderr) < 200, result.stderr


def test_a_negative_depth_or_top_says_what_it_counts(nmprof, tmp_path):
    depth = run(nmprof, "report", tmp_path / "missing.jfr", "--depth", "-1")
    one_line_error(depth, 2, "--depth: '-1' is not a number of frames", "0: all")
    top = run(nmprof, "run", "--top", "0", "--", "true")
    one_line_error(top, 2, "--top: '0' is not a number of stacks")


@pytest.mark.parametrize("args, meant", [
    (["report", "x.jfr", "--dpeth", "3"], "--depth"),  # two letters swapped
    (["report", "x.jfr", "--keep-frame"], "--keep-frames"),
    (["run", "--nativemme", "64k", "--", "true"], "--nativemem"),
    (["attach", "--tiemout", "3", "1"], "--timeout"),  # not "action: 1 not in ..."
    (["reprot", "x.jfr"], "report"),
])
def test_a_misspelled_option_or_command_gets_a_suggestion(nmprof, args, meant):
    result = run(nmprof, *args)
    wrong = next(a for a in args if a.startswith("--") or a == "reprot")
    one_line_error(result, 2, f"'{wrong}'", f"did you mean {meant}?")


def test_no_suggestion_when_nothing_is_close(nmprof):
    result = run(nmprof, "report", "x.jfr", "--xyz")
    one_line_error(result, 2, "unknown option '--xyz' for report")
    assert "did you mean" not in result.stderr


def test_an_unknown_option_is_echoed_without_its_control_characters(nmprof):
    result = run(nmprof, "report", "x.jfr", "--de\x1b[31mpth", "3")
    one_line_error(result, 2, "'--de\\x1b[31mpth'")
    assert "\x1b" not in result.stderr


# Hostile testing of issue 22: `report rec.jfr -o rec.jfr --format json` (or -o naming
# the --diff base, or a hard link to it) replaced the recording with its report and
# said nothing. The output may not be a file the report reads.
@pytest.mark.parametrize("which", ["file", "diff base", "hard link"])
def test_report_never_writes_over_the_recording_it_reads(nmprof, tmp_path, which):
    recording = tmp_path / "rec.jfr"
    run(nmprof, "run", "-q", "-o", recording, "--", "true", check=0)
    base = tmp_path / "base.jfr"
    base.write_bytes(recording.read_bytes())
    before = recording.read_bytes()
    if which == "file":
        args, output = [recording], recording
    elif which == "diff base":
        args, output = [recording, "--diff", base], base
    else:
        output = tmp_path / "link.jfr"
        os.link(recording, output)
        args = [recording]
    result = run(nmprof, "report", *args, "-o", output, "--format", "json")
    assert result.returncode == 1, result.stderr
    assert len(result.stderr.splitlines()) == 1 and "is the recording being read" in result.stderr, result.stderr
    assert recording.read_bytes() == before and base.read_bytes() == before


# A path as the user typed it, newline and escape sequence included, is one line in
# every message run prints about it: the error (it was three lines, with a raw ESC)
# and the summary's "profile written to" (hostile testing).
def test_control_characters_in_output_paths_never_reach_the_terminal(nmprof, tmp_path):
    forged = "x\nnmprof: profile written to /etc/passwd\x1b[31m.jfr"
    result = run(nmprof, "run", "-o", tmp_path / "missing" / forged, "--", "true")
    one_line_error(result, 1, "does not exist", "x\\x0anmprof: profile written to /etc/passwd\\x1b[31m.jfr")
    assert len(result.stderr.splitlines()) == 1 and "\x1b" not in result.stderr
    result = run(nmprof, "run", "-o", tmp_path / ("new\nline\x1b[31m.html"), "--", "true")
    assert result.returncode == 0, result.stderr
    assert "profile written to " + str(tmp_path) + "/new\\x0aline\\x1b[31m.html" in result.stderr
    assert "\x1b" not in result.stderr and "new\nline" not in result.stderr
