"""`run --loop`: a chunk file every period while the program runs, each a complete
recording that the JDK's jfr, go tool pprof and nmprof report open on their own. The
chunks' allocated views add up to what the program allocated (nothing lost or counted
twice at a boundary); a chunk's live view holds every block still live at its end,
however old."""

import json
import math
import re
import shutil
import subprocess

import pytest

from conftest import jfr_events, jfr_tool, report_json, run, stack_of

LEAK = 16_000_000
SECONDS = 6


@pytest.fixture(scope="module")
def chunks(nmprof, programs, tmp_path_factory):
    """The chunks of a 6-second program, cut every second, as (files, truth by site)."""
    out = tmp_path_factory.mktemp("loop")
    program = programs.c("paced_allocations.c")
    result = run(nmprof, "run", "--loop", "1s", "--nativemem", "16k", "-q", "-o", out / "chunk-%n.jfr", "--",
                 program, SECONDS, LEAK, check=0)
    truth = {site: int(bytes) for site, bytes in (line.split() for line in result.stdout.splitlines())}
    files = sorted(out.glob("chunk-*.jfr"), key=lambda f: int(re.search(r"(\d+)", f.name).group(1)))
    assert [f.name for f in files] == [f"chunk-{n}.jfr" for n in range(len(files))], files
    lines = [l for l in result.stderr.splitlines() if l]
    assert lines == [f"nmprof: profile written to {f}" for f in files], result.stderr
    return files, truth


def site_bytes(report, site):
    return sum(s["estimated_bytes"] for s in report["stacks"] if s["frames"][0]["function"] == site)


def test_six_seconds_cut_every_second_make_at_least_six_chunks(chunks):
    files, _ = chunks
    assert len(files) >= SECONDS, files  # five boundaries or more


def test_the_chunks_add_up_to_what_the_program_allocated(nmprof, chunks):
    files, truth = chunks
    reports = [report_json(nmprof, f, "--top", "100") for f in files]
    samples = sum(r["allocated"]["samples"] for r in reports)
    for site, allocated in truth.items():
        estimated = sum(site_bytes(r, site) for r in reports)
        bound = 4 / math.sqrt(samples) + 0.03
        assert abs(estimated - allocated) <= bound * allocated, (site, estimated, allocated, samples)
    # Each full second has its share: the program allocates at a steady pace.
    paced = [site_bytes(r, "paced_site") for r in reports[1:-1]]
    assert min(paced) > 0.5 * max(paced), paced


def test_each_chunk_opens_on_its_own_in_jfr_summary(chunks):
    files, _ = chunks
    for f in files:
        result = subprocess.run([str(jfr_tool()), "summary", str(f)], capture_output=True, text=True)
        assert result.returncode == 0, (f, result.stderr)
        assert re.search(r"profiler\.Malloc\s+[1-9]", result.stdout), (f, result.stdout)


def test_a_block_of_the_first_chunk_never_freed_is_live_in_the_last(nmprof, chunks):
    files, truth = chunks
    first = report_json(nmprof, files[0], "--top", "100")
    assert site_bytes(first, "leak_at_start") == truth["leak_at_start"]
    later = [report_json(nmprof, f, "--top", "100") for f in files[1:]]
    assert all(site_bytes(r, "leak_at_start") == 0 for r in later)  # allocated once

    last = report_json(nmprof, files[-1], "--live", "--top", "100")
    leak = [s for s in last["stacks"] if s["frames"][0]["function"] == "leak_at_start"]
    assert len(leak) == 1 and leak[0]["estimated_bytes"] == truth["leak_at_start"], last["stacks"]
    assert leak[0]["age"]["oldest_seconds"] > SECONDS - 1, leak  # its own age, not the chunk's
    # In the file: the original sample, stack and time, as profiler.LiveMalloc.
    carried = jfr_events(files[-1], "profiler.LiveMalloc")
    assert any(stack_of(e)[0].endswith("!leak_at_start") for e in carried), carried
    assert not jfr_events(files[0], "profiler.LiveMalloc")


def test_loop_refuses_an_output_that_does_not_name_each_chunk(nmprof, tmp_path):
    result = run(nmprof, "run", "--loop", "1s", "-o", tmp_path / "app.jfr", "--", "true")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "nmprof: --loop writes a file per chunk: -o needs %n (the chunk's number) or %t (its start time), "
        "e.g. -o app-%n.jfr"], result.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("period", ["0.5", "0", "1x", "nan"])
def test_loop_refuses_less_than_a_second_and_what_is_no_duration(nmprof, tmp_path, period):
    result = run(nmprof, "run", "--loop", period, "-o", tmp_path / "app-%n.jfr", "--", "true")
    assert result.returncode == 2 and f"'{period}' is not a duration" in result.stderr, result.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(shutil.which("go") is None, reason="go tool pprof is needed (apt install golang-go)")
def test_keep_leaves_the_newest_pprof_chunks_and_each_opens_in_go_tool_pprof(nmprof, programs, tmp_path):
    program = programs.c("paced_allocations.c")
    result = run(nmprof, "run", "--loop", "1", "--keep", "2", "--nativemem", "16k", "-q",
                 "-o", tmp_path / "c-%n.pb.gz", "--", program, 3.5, 1000, check=0)
    written = re.findall(r"c-(\d+)\.pb\.gz", result.stderr)
    assert len(written) >= 4, result.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(f"c-{n}.pb.gz" for n in written[-2:])
    for f in tmp_path.iterdir():
        top = subprocess.run(["go", "tool", "pprof", "-sample_index=alloc_space", "-top", str(f)],
                             capture_output=True, text=True, timeout=120)
        assert top.returncode == 0 and "paced_site" in top.stdout, top.stderr
