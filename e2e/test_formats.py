"""Outputs for the tools people use, each judged by its consumer: pprof heap profiles
read by `go tool pprof`, collapsed stacks parsed as flamegraph.pl does, and diffs of
two recordings. Totals agree with `nmprof report` within rounding."""

import gzip
import json
import os
import pty
import re
import shutil
import signal
import stat
import time
import subprocess
from pathlib import Path

import pytest

from conftest import JDK17, report_json, run

GO = shutil.which("go")
needs_go = pytest.mark.skipif(GO is None, reason="go tool pprof is needed (apt install golang-go)")


def pprof(*args):
    result = subprocess.run([GO, "tool", "pprof", *map(str, args)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def raw_samples(path):
    """Sample types and each sample's values, as `go tool pprof -raw` decodes them."""
    lines = pprof("-raw", path).splitlines()
    start = lines.index("Samples:")
    types = [t.split("/")[0] for t in lines[start + 1].replace("[dflt]", "").split()]
    samples = []
    for line in lines[start + 2:]:
        if line.startswith("Locations"):
            break
        m = re.match(r"^\s*([\d\s]+):[\d\s]+$", line)
        if m:
            samples.append(dict(zip(types, map(int, m.group(1).split()))))
    return types, samples


def collapsed(text):
    """flamegraph.pl's reading: the value is after the last space, frames split on ';'."""
    rows = []
    for line in text.splitlines():
        stack, value = line.rsplit(" ", 1)
        rows.append((stack.split(";"), int(value)))
    return rows


@pytest.fixture(scope="module")
def leak_recording(nmprof, programs, tmp_path_factory):
    out = tmp_path_factory.mktemp("formats") / "leak.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", programs.c("live_leak.c"), 2, 4000, check=0)
    return out


@needs_go
def test_pprof_has_the_four_heap_types_with_the_reports_totals(nmprof, leak_recording, tmp_path):
    out = tmp_path / "leak.pb.gz"
    run(nmprof, "report", leak_recording, "--format", "pprof", "-o", out, check=0)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    types, samples = raw_samples(out)
    assert types == ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"]
    allocated = report_json(nmprof, leak_recording)["totals"]
    live = report_json(nmprof, leak_recording, "--live")["totals"]
    rounding = len(samples)  # each sample's value is rounded once
    assert abs(sum(s["alloc_space"] for s in samples) - allocated["estimated_bytes"]) <= rounding
    assert abs(sum(s["alloc_objects"] for s in samples) - allocated["estimated_count"]) <= rounding
    assert abs(sum(s["inuse_space"] for s in samples) - live["estimated_bytes"]) <= rounding

    top = pprof("-top", out)
    assert "File: live_leak" in top and "Type: alloc_space" in top and "Duration:" in top
    assert re.search(r"^\s*\S+\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+site_churn$", top, re.M), top
    inuse = pprof("-top", "-sample_index=inuse_space", out)
    flat = [line.split()[-1] for line in inuse.splitlines() if re.match(r"^\s*[\d.]+[kMG]?B\s", line)]
    assert set(flat[:2]) == {"site_leak", "site_chain"}, inuse


@needs_go
def test_pprof_traces_are_the_recorded_stacks_innermost_first(nmprof, leak_recording, tmp_path):
    out = tmp_path / "leak.pb.gz"
    run(nmprof, "report", leak_recording, "-o", out, "--live", check=0)  # the format follows the extension
    traces = pprof("-traces", out)
    assert "Type: inuse_space" in traces
    blocks = [b.split("\n") for b in traces.split("-----------+-------------------------------------------------------")]
    stacks = [[line.split()[-1] for line in b if line.strip() and not line.strip().startswith("bytes:")] for b in blocks]
    assert any(s[:3] == ["site_chain", "site_chain_leak", "worker"] for s in stacks), traces
    assert any(s[:2] == ["site_leak", "worker"] for s in stacks), traces
    assert "bytes:  1000B" in traces  # site_leak's mean size label, as Go's heap profiles have


def test_collapsed_stacks_are_root_first_and_add_up(nmprof, leak_recording):
    rows = collapsed(run(nmprof, "report", leak_recording, "--format", "collapsed", check=0).stdout)
    total = report_json(nmprof, leak_recording)["totals"]["estimated_bytes"]
    assert abs(sum(v for _, v in rows) - total) <= len(rows)
    leaves = {frames[-1] for frames, _ in rows}
    assert {"site_leak", "site_churn", "site_cross_thread"} <= leaves
    assert all(frames[-2] == "worker" for frames, _ in rows if frames[-1] == "site_leak")

    live = collapsed(run(nmprof, "report", leak_recording, "--format", "collapsed", "--live", "--value", "count",
                         check=0).stdout)
    live_count = report_json(nmprof, leak_recording, "--live")["totals"]["estimated_count"]
    assert {"site_leak", "site_chain"} <= {frames[-1] for frames, _ in live}
    assert not {"site_churn", "site_cross_thread"} & {frames[-1] for frames, _ in live}
    assert abs(sum(v for _, v in live) - live_count) <= len(live)


@needs_go
def test_run_writes_the_format_its_output_names(nmprof, programs, tmp_path):
    out = tmp_path / "run.pb.gz"
    result = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--", programs.c("live_leak.c"), 1, 1000, check=0)
    assert "profile written to " + str(out) in result.stderr
    assert "more: go tool pprof -top" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.pb.gz"]  # no JFR left behind
    assert "Type: inuse_space" in pprof("-top", out)  # the run recorded live data: pprof opens on it

    kept = tmp_path / "kept.pb.gz"
    run(nmprof, "run", "-q", "--keep-jfr", "--nativemem", "64k", "-o", kept, "--", programs.c("live_leak.c"), 1, 1000,
        check=0)
    assert (tmp_path / "kept.jfr").exists()
    assert report_json(nmprof, tmp_path / "kept.jfr")["totals"]["samples"] > 0
    _, samples = raw_samples(kept)
    assert samples


def test_output_extensions_are_read_whatever_their_case(nmprof, leak_recording, tmp_path):
    # report.HTML was a JFR recording under that name, without a word (hostile testing).
    page, text = tmp_path / "report.HTML", tmp_path / "report.Txt"
    run(nmprof, "report", leak_recording, "-o", page)
    assert page.read_text().lstrip().lower().startswith("<!doctype html")
    run(nmprof, "report", leak_recording, "-o", text)
    assert text.read_text().startswith("nmprof report: ")


@needs_go
def test_a_run_that_samples_nothing_writes_empty_profiles(nmprof, programs, tmp_path):
    for name in ["x.pb.gz", "x.collapsed", "x.html", "x.json"]:
        out = tmp_path / name
        run(nmprof, "run", "-q", "--nativemem", "1g", "-o", out, "--", programs.c("quiet_end.c"), "return", check=0)
        assert out.exists(), name
    top = pprof("-top", tmp_path / "x.pb.gz")
    assert "Total samples = 0" in top or "0 of 0 total" in top, top
    assert (tmp_path / "x.collapsed").read_text() == ""
    assert "<html" in (tmp_path / "x.html").read_text().lower()
    assert json.loads((tmp_path / "x.json").read_text())["statistics"]["samples"] == 0


def known_totals(nmprof, programs, out, medium):
    run(nmprof, "run", "-q", "--nativemem", "16k", "-o", out, "--", programs.c("known_totals.c"), 1, 50000, medium, 4,
        check=0)
    return out


def test_diff_finds_the_planted_growth_first(nmprof, programs, tmp_path):
    base = known_totals(nmprof, programs, tmp_path / "base.jfr", 5000)
    new = known_totals(nmprof, programs, tmp_path / "new.jfr", 25000)  # site_medium allocates 5 times as much
    text = run(nmprof, "report", new, "--diff", base, check=0).stdout
    # change, its margin, base, new: a growth five times the margin is significant (no parentheses).
    assert re.search(r"stack \(innermost first\)\n\s+\+\S+ \S+\s+\S+ \S+\s+\S+ \S+\s+\S+ \S+\s+site_medium < work", text), text
    assert re.search(r"allocated\s+~\S+ \S+\s+~\S+ \S+\s+\+", text), text

    diff = report_json(nmprof, new, "--diff", base)
    first = diff["stacks"][0]
    assert first["frames"][:2] == ["site_medium", "work"]
    growth = 20000 * 3000
    assert abs(first["allocated_change_bytes"] - growth) < 0.2 * growth, first
    assert first["allocated_change_significant"] and 0 < first["allocated_change_margin"] < 0.2 * growth, first
    assert diff["functions"][0]["function"] == "site_medium"
    assert diff["totals"]["allocated_change_bytes"] == pytest.approx(
        diff["totals"]["new_allocated_bytes"] - diff["totals"]["base_allocated_bytes"])

    # flamegraph.pl's differential input: "stack BASE NEW".
    lines = run(nmprof, "report", new, "--diff", base, "--format", "collapsed", check=0).stdout.splitlines()
    stack, before, after = lines[0].rsplit(" ", 2)
    assert stack.endswith(";work;site_medium") and int(after) > 3 * int(before)


def one_line_error(result):
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines and lines[0].startswith("nmprof"), result.stderr
    return lines[0]


def test_bad_input_gets_one_clear_line(nmprof, leak_recording, programs, tmp_path):
    assert "'svg' is not one of text|json|pprof|collapsed|html" in one_line_error(
        run(nmprof, "report", leak_recording, "--format", "svg"))
    line = one_line_error(run(nmprof, "report", leak_recording, "-o", tmp_path / "missing" / "x.pb.gz"))
    assert "cannot write" in line and "No such file or directory" in line
    assert not list(tmp_path.iterdir())
    other = known_totals(nmprof, programs, tmp_path / "other.jfr", 100)
    line = one_line_error(run(nmprof, "report", leak_recording, "--diff", other))
    assert "same program" in line
    not_jfr = tmp_path / "notes.txt"
    not_jfr.write_text("hello\n")
    assert "not a JFR file" in one_line_error(run(nmprof, "report", leak_recording, "--diff", not_jfr))
    assert "/dev/null (not a regular file)" in one_line_error(run(nmprof, "report", "/dev/null"))
    assert "not pprof" in one_line_error(run(nmprof, "report", leak_recording, "--diff", leak_recording, "-o",
                                             tmp_path / "d.pb.gz"))


def test_outputs_that_are_not_plain_files(nmprof, leak_recording, tmp_path):
    # Only regular files are replaced: a device is refused, never opened, and stays one.
    line = one_line_error(run(nmprof, "report", leak_recording, "-o", "/dev/full"))
    assert "-o /dev/full exists and is not a regular file" in line and "-o - is standard output" in line
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    # -o - is standard output, as without -o.
    written = run(nmprof, "report", leak_recording, "--format", "collapsed", "-o", "-", check=0)
    assert ";site_churn " in written.stdout
    assert not (Path.cwd() / "-").exists()
    # A symbolic link is neither followed nor replaced.
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert "is a symbolic link" in one_line_error(run(nmprof, "report", leak_recording, "-o", link))
    assert link.is_symlink() and target.read_text() == "old\n"


def read_terminal(fd):
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other side is closed
            return data
        if not chunk:
            return data
        data += chunk


def test_progress_shows_on_a_terminal_only(nmprof, programs, tmp_path):
    # Every allocation sampled: a recording of some 20 MB, past the reader's 8 MB steps.
    big = tmp_path / "big.jfr"
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", big, "--", programs.c("known_totals.c"), 1, 300000, 0, 0,
        check=0, timeout=300)
    assert big.stat().st_size > 16 << 20

    def stderr_on_terminal(*args):
        main, other = pty.openpty()
        result = subprocess.run([str(nmprof), "report", str(big), *args], stdout=subprocess.DEVNULL, stderr=other,
                                timeout=300)
        os.close(other)
        text = read_terminal(main).decode()
        os.close(main)
        assert result.returncode == 0, text
        return text

    shown = stderr_on_terminal()
    assert re.search(r"\rnmprof report: reading \S*big\.jfr \d+%", shown), repr(shown)
    assert shown.endswith("\r\x1b[K"), repr(shown)  # erased when done
    assert stderr_on_terminal("-q") == ""
    piped = run(nmprof, "report", big, check=0)
    assert piped.stderr == ""


def test_help_names_the_program_and_its_choices(nmprof):
    out = run(nmprof, "report", "--help", check=0).stdout
    assert "Usage: nmprof report [OPTIONS] file" in out
    assert "--format text|json|pprof|collapsed|html" in out
    assert "--value bytes|count" in out and "->" not in out
    run_help = run(nmprof, "run", "--help", check=0).stdout
    assert "Usage: nmprof run [OPTIONS]" in run_help
    assert "--stackdepth 1-2048" in run_help and "UINT:" not in run_help


@needs_go
def test_java_methods_are_functions_of_their_own(nmprof, java_programs, tmp_path):
    out = tmp_path / "java.pb.gz"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--",
        *java_programs.command(JDK17, "deflater", 300), check=0, timeout=300)
    traces = pprof("-traces", "-sample_index=alloc_space", out)
    # zlib's allocation entry and the JNI stub are folded: the Java method that called them comes first.
    assert re.search(r"\s[\d.]+\w?B\s+java\.util\.zip\.Deflater\.init\n\s+java\.util\.zip\.Deflater\.<init>\n", traces), traces
    assert "deflateInit2_" not in traces
    functions = pprof("-top", "-sample_index=alloc_space", "-nodecount=1000", out)
    assert re.search(r"\sNativeMemoryApp\.deflate$", functions, re.M), functions


@needs_go
def test_attach_dumps_convert_and_diff(nmprof, java_programs, tmp_path):
    from test_attach import Target  # a JVM running AttachTarget
    t = Target(java_programs, JDK17, tmp_path)
    try:
        run(nmprof, "attach", t.pid, "start", "--nativemem", "256k", check=0)
        time.sleep(1)
        first = tmp_path / "first.jfr"
        run(nmprof, "attach", t.pid, "dump", "-q", "-o", first, check=0)
        time.sleep(1)
        snapshot = tmp_path / "snapshot.pb.gz"
        run(nmprof, "attach", t.pid, "dump", "-q", "-o", snapshot, check=0)
        assert "Type: inuse_space" in pprof("-top", snapshot)
        assert not list(tmp_path.glob("*snapshot*.jfr"))  # converted, not kept
        last = tmp_path / "last.jfr"
        run(nmprof, "attach", t.pid, "stop", "-q", "-o", last, check=0)
        diff = report_json(nmprof, last, "--diff", first)
        assert diff["totals"]["allocated_change_bytes"] > 0  # the JVM went on allocating
    finally:
        t.kill()


# Hostile testing, item 16: a recording joined with itself (`cat a.jfr a.jfr`) is
# counted once, with a one-line note; main counted every sample twice.
def test_a_recording_joined_with_itself_is_counted_once(nmprof, programs, leak_recording, tmp_path):
    other = tmp_path / "other.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", other, "--", programs.c("known_totals.c"), 1, 20000, 100, 1,
        check=0)
    both = tmp_path / "both.jfr"
    both.write_bytes(leak_recording.read_bytes() + other.read_bytes())
    twice = tmp_path / "twice.jfr"
    twice.write_bytes(both.read_bytes() * 2)
    once = report_json(nmprof, both)
    result = run(nmprof, "report", twice, "--format", "json", check=0)
    assert json.loads(result.stdout)["totals"] == once["totals"]
    notes = [line for line in result.stderr.splitlines() if "repeat" in line]
    assert len(notes) == 1 and "counted once" in notes[0], result.stderr
    assert notes[0].startswith("nmprof report: warning:") and " 2 chunks repeat" in notes[0]


# Hostile testing of issue 22: Ctrl-C (or SIGTERM) during `report big.jfr -o big.html`
# left the file being written, .nmprof-*.partial, beside the output. A signal that
# ends nmprof now removes it first; nmprof still ends by the signal.
@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_report_interrupted_while_writing_leaves_nothing_behind(nmprof, programs, tmp_path, signo):
    recording = tmp_path / "big.jfr"
    # Every allocation recorded: some 20 MB, a second's work to turn into a flame graph.
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", recording, "--", programs.c("known_totals.c"), "1", "300000",
        "0", "0", check=0)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    proc = subprocess.Popen([str(nmprof), "report", str(recording), "-o", str(out_dir / "big.html")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(out_dir.iterdir()):  # the file being written is there
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.002)
        proc.send_signal(signo)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == -signo
    assert list(out_dir.iterdir()) == []
