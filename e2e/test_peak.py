"""`report --peak`: what was live at the moment of the highest estimated live total,
in every format, with that moment and total in the header; the run summary points at
it when the run ended far below its peak."""

import re
import shutil
import subprocess

import pytest

from conftest import report_json, run

BLOCKS = 2000  # peak_phases' cache: 2,000 blocks of 4 KiB


@pytest.fixture(scope="module")
def phases(nmprof, programs, tmp_path_factory):
    """peak_phases with every allocation sampled (exact totals): the cache is live at
    the peak, freed long before the end."""
    codec = programs.shared("peak_codec.c")
    program = programs.c("peak_phases.c", libs=(str(codec), f"-Wl,-rpath,{codec.parent}"))
    recording = tmp_path_factory.mktemp("peak") / "phases.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-o", recording, "--", program, BLOCKS, check=0)
    return recording, result.stderr


def site_bytes(report, site):
    return sum(s["estimated_bytes"] for s in report["stacks"] if s["frames"][0]["function"] == site)


def test_json_is_the_live_view_at_the_timelines_peak(nmprof, phases):
    recording, _ = phases
    whole = report_json(nmprof, recording, "--top", "100")
    peak = report_json(nmprof, recording, "--peak", "--top", "100")
    assert peak["view"] == "peak" and whole["view"] == "allocated" and whole["peak"] is None
    assert peak["peak"]["seconds"] == pytest.approx(whole["timeline"]["peak_live_seconds"], abs=1e-9)
    assert peak["totals"]["estimated_bytes"] == pytest.approx(whole["timeline"]["peak_live_bytes"], abs=1)
    assert peak["peak"]["live_at_end"]["estimated_bytes"] == whole["live"]["estimated_bytes"]
    # The cache is what was live then (the peak may fall while its last blocks come).
    assert (BLOCKS - 10) * 4096 <= site_bytes(peak, "site_cache") <= BLOCKS * 4096
    assert site_bytes(report_json(nmprof, recording, "--live"), "site_cache") == 0
    assert peak["duration_seconds"] == whole["duration_seconds"]  # of the whole run
    assert peak["timeline"] == whole["timeline"]


def test_text_says_when_and_how_much(nmprof, phases):
    recording, _ = phases
    text = run(nmprof, "report", recording, "--peak", "--wide", check=0).stdout
    seconds = report_json(nmprof, recording, "--peak")["peak"]["seconds"]
    line = re.search(r"^Live +~[\d.]+ MiB in ~[\d,]+ blocks \([\d,]+ samples\) at the peak, (\d+) ms into the run; "
                     r"~[\d.]+ KiB at the end$", text, re.M)
    assert line, text
    assert int(line.group(1)) == round(seconds * 1000)
    assert re.search(r"^Allocated .* up to the peak$", text, re.M), text
    assert f"\nLive memory at the peak, {line.group(1)} ms into the run\n" in text
    assert re.search(r"^Top \d+ stacks by peak live bytes", text, re.M), text
    assert re.search(r"^Top \d+ functions by peak live self bytes", text, re.M), text


def test_times_under_from_stay_measured_from_the_recordings_start(nmprof, phases):
    """--from narrows what is counted, not the clock: the peak of the samples after it
    is told from the recording's start, and JSON's start_time_ns keeps its meaning
    (issue 39, item 5: 'at the peak, 1.1 s into the run' for a peak 3.1 s into it)."""
    recording, _ = phases
    whole = report_json(nmprof, recording)
    peak = whole["timeline"]["peak_live_seconds"]
    start = f"{0.75 * peak * 1000:.0f}ms"
    windowed = report_json(nmprof, recording, "--from", start, "--peak")
    assert windowed["start_time_ns"] == whole["start_time_ns"]
    # Its peak comes after --from, told from the start as the whole recording's is.
    assert 0.75 * peak <= windowed["peak"]["seconds"] <= whole["duration_seconds"], (peak, windowed["peak"])
    assert windowed["timeline"]["peak_live_seconds"] == pytest.approx(whole["timeline"]["peak_live_seconds"], abs=1e-6)
    text = run(nmprof, "report", recording, "--from", start, "--peak", check=0).stdout
    at = re.search(r"at the peak, (\d+) ms into the run", text)
    assert at and int(at.group(1)) == round(windowed["peak"]["seconds"] * 1000), text


def test_collapsed_pprof_and_html_show_the_peak_too(nmprof, phases, tmp_path):
    recording, _ = phases
    peak = report_json(nmprof, recording, "--peak")
    lines = run(nmprof, "report", recording, "--peak", "--format", "collapsed", check=0).stdout.splitlines()
    assert sum(int(l.rsplit(" ", 1)[1]) for l in lines) == pytest.approx(peak["totals"]["estimated_bytes"], abs=len(lines))
    assert any(l.split(" ")[0].endswith(";load;site_cache") for l in lines), lines

    html = tmp_path / "peak.html"
    run(nmprof, "report", recording, "--peak", "-o", html, check=0)
    assert '"view":"peak"' in html.read_text()
    live = tmp_path / "live.html"
    run(nmprof, "report", recording, "--live", "-o", live, check=0)
    assert '"view":"live"' in live.read_text()  # asked for: the page opens on it, though it ended low

    go = shutil.which("go")
    if go is None:
        pytest.skip("go tool pprof is needed (apt install golang-go)")
    profile = tmp_path / "peak.pb.gz"
    run(nmprof, "report", recording, "--peak", "-o", profile, check=0)
    top = subprocess.run([go, "tool", "pprof", "-top", profile], capture_output=True, text=True, check=True).stdout
    assert "Type: inuse_space" in top
    assert "live at the peak of live bytes" in top
    assert re.search(r"site_cache", top), top


def test_the_run_summary_points_at_the_peak_only_when_it_stands_out(nmprof, programs, phases, tmp_path):
    recording, summary = phases
    assert f"peak: nmprof report {recording} --peak\n" in summary, summary
    assert f"\n  peak: nmprof report {recording} --peak\n" in run(nmprof, "report", recording, check=0).stdout
    grows = tmp_path / "grows.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "-o", grows, "--", programs.c("live_leak.c"), 1, 2000, check=0)
    assert "--peak" not in result.stderr, result.stderr  # live_leak ends at its peak


def test_peak_needs_live_data_and_no_diff(nmprof, programs, phases, tmp_path):
    recording, _ = phases
    result = run(nmprof, "report", recording, "--peak", "--diff", recording, check=1)
    assert result.stderr.strip().splitlines() == [f"nmprof report: {recording}: --peak and --diff do not go together"]
    no_live = tmp_path / "no_live.jfr"
    run(nmprof, "run", "-q", "--no-live", "--nativemem", "64k", "-o", no_live, "--", programs.c("live_leak.c"), 1, 100,
        check=0)
    result = run(nmprof, "report", no_live, "--peak", check=1)
    assert len(result.stderr.strip().splitlines()) == 1 and "no live data" in result.stderr, result.stderr
    for view in ("--peak", "--live"):  # a page cannot open on a view it does not have
        result = run(nmprof, "report", no_live, view, "-o", tmp_path / "refused.html", check=1)
        assert len(result.stderr.strip().splitlines()) == 1 and "no live data" in result.stderr, result.stderr
    html = tmp_path / "no_live.html"
    run(nmprof, "report", no_live, "-o", html, check=0)  # a page without a peak view
    assert '"peak"' not in html.read_text().split('"columns"')[1].split("]")[0]


def test_processes_one_after_another_do_not_add_up_at_the_peak(nmprof, programs, tmp_path):
    """Two processes that each hold 40 MiB, one after the other: each one's blocks
    leave the live series when its recording ends, so the peak is ~40 MiB, not 80
    (issue 39, item 2: 'peak live: ~79.9 MiB' before). The live view of the whole
    recording still sums what each process left at its end."""
    leak = programs.c("planted_leak.c")
    recording = tmp_path / "sequential.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-o", recording, "--", "sh", "-c",
                 f"{leak} 40m; sleep 0.3; {leak} 40m", check=0)
    peak = re.search(r"peak live:\s+~([\d.]+) MiB", result.stderr)
    assert peak and 40 <= float(peak.group(1)) < 41, result.stderr
    whole = report_json(nmprof, recording)
    assert 40 << 20 <= whole["timeline"]["peak_live_bytes"] < 41 << 20
    # Each process's end, summed (and the little the shell left).
    assert 80 << 20 <= whole["live"]["estimated_bytes"] < (80 << 20) + (64 << 10)
    at_peak = report_json(nmprof, recording, "--peak")
    assert 40 << 20 <= at_peak["totals"]["estimated_bytes"] < 41 << 20
    leaks = [st for st in at_peak["stacks"] if st["frames"][0]["function"] == "site_leak"]
    assert len({p["pid"] for st in leaks for p in st["processes"]}) == 1, leaks  # one of the two
    # Between the two: the first process's blocks are gone, the second's not yet there.
    first = min((p for p in whole["processes"] if p["command"].startswith(str(leak))), key=lambda p: p["start_time_ns"])
    first_end = (first["start_time_ns"] - whole["start_time_ns"]) / 1e9 + first["duration_seconds"]
    text = run(nmprof, "report", recording, "--live", "--to", f"{first_end + 0.15:.3f}s", check=0).stdout
    assert re.search(r"^Live\s+~0 B|^Live\s+~[\d.]+ (B|KiB) ", text, re.M), text


def test_recycled_workers_give_a_flat_live_timeline(nmprof, programs, tmp_path):
    """A master that forks six workers one after another, each holding 10 MiB until it
    exits (php-fpm's pm.max_requests): the live series never holds more than one
    worker's memory, so the peak is one worker's and the timeline is flat, not a
    staircase to 60 MiB (issue 39)."""
    workers, held = 6, 160 * 64 * 1024
    recording = tmp_path / "recycled.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-o", recording, "--", programs.c("recycled_workers.c"),
                 workers, 160, check=0)
    whole = report_json(nmprof, recording)
    assert len([p for p in whole["processes"] if p["command"].startswith("recycled: worker")]) == workers
    timeline = whole["timeline"]
    # One worker's blocks and the master's few (its startup: under 64 KiB).
    assert held <= timeline["peak_live_bytes"] < held + (64 << 10), timeline
    assert max(timeline["live_bytes"]) < held + (64 << 10), timeline["live_bytes"]
    peak = re.search(r"peak live:\s+~([\d.]+) MiB", result.stderr)
    assert peak and 10 <= float(peak.group(1)) < 10.1, result.stderr
    # The live view still sums what each worker left at its end.
    assert workers * held <= whole["live"]["estimated_bytes"] < workers * held + (64 << 10)


def test_the_peak_live_line_gives_its_interval(nmprof, programs, tmp_path):
    """Sampled, the peak is an estimate: run's 'peak live' line gives its interval,
    which is the one of the live view at that moment (the same blocks), and JSON
    carries it; recording every allocation, there is none to give."""
    leak = programs.c("planted_leak.c")
    recording = tmp_path / "sampled.jfr"
    result = run(nmprof, "run", "--nativemem", "256k", "-o", recording, "--", leak, "40m", check=0)
    line = next(line for line in result.stderr.splitlines() if line.strip().startswith("peak live:"))
    whole = report_json(nmprof, recording)
    margin = whole["timeline"]["peak_live_bytes_margin"]
    at_peak = report_json(nmprof, recording, "--peak")["totals"]
    assert margin > 0 and margin == pytest.approx(at_peak["bytes_margin"], rel=1e-6), (margin, at_peak)
    assert re.search(r"peak live:\s+~[\d.]+ MiB ± [\d.]+ (MiB|KiB) at ", line), line
    exact = tmp_path / "exact.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-o", exact, "--", leak, "4m", check=0)
    assert "±" not in next(line for line in result.stderr.splitlines() if "peak live:" in line)
    assert report_json(nmprof, exact)["timeline"]["peak_live_bytes_margin"] == 0
