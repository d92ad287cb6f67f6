"""`run --loop`: a chunk file every period while the program runs, each a complete
recording that the JDK's jfr, go tool pprof and nmprof report open on their own. The
chunks' allocated views add up to what the program allocated (nothing lost or counted
twice at a boundary); a chunk's live view holds every block still live at its end,
however old."""

import json
import math
import os
import re
import shutil
import subprocess
import time

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


def live_by_site(report):
    return {site: site_bytes(report, site) for site in ("leak_at_start", "held_site", "paced_site")}


def test_the_chunks_read_together_are_the_whole_run(nmprof, chunks):
    """report chunk-*.jfr, in any order: what they allocated summed, what was live at
    the end of the last one (not every chunk's live blocks again), each free paired."""
    files, truth = chunks
    shuffled = files[1::2] + files[::2]
    merged = report_json(nmprof, *shuffled, "--top", "100")
    assert merged["files"] == [str(f) for f in files]  # in time order
    singles = [report_json(nmprof, f, "--top", "100") for f in files]
    for site, allocated in truth.items():
        summed = sum(site_bytes(r, site) for r in singles)
        assert site_bytes(merged, site) == pytest.approx(summed, rel=1e-9), site
        bound = 4 / math.sqrt(merged["allocated"]["samples"]) + 0.03
        assert abs(site_bytes(merged, site) - allocated) <= bound * allocated, (site, allocated)

    live = report_json(nmprof, *files, "--live", "--top", "100")
    last = report_json(nmprof, files[-1], "--live", "--top", "100")
    assert live_by_site(live) == pytest.approx(live_by_site(last), rel=1e-9)
    assert live["live"]["unmatched_frees"] == 0 and live["live"]["frees_of_earlier_chunks"] == 0, live["live"]
    # held_site's blocks are freed 1.5 s after they were allocated: the last chunk on its
    # own sees frees of blocks it did not allocate, the chunks read together pair them.
    assert last["live"]["frees_of_earlier_chunks"] > 0, last["live"]
    held_live = 150 * 65536
    bound = 4 / math.sqrt(max(live["live"]["samples"], 1)) + 0.03
    assert abs(site_bytes(live, "held_site") - held_live) <= bound * held_live + 65536, live["stacks"]
    # The run's timeline: its peak is the leak and the held blocks, not chunks added up.
    peak = live["timeline"]["peak_live_bytes"]
    assert peak < 1.5 * (truth["leak_at_start"] + held_live), peak

    text = run(nmprof, "report", *files, check=0).stdout
    assert text.splitlines()[0] == f"nmprof report: {files[0]} ... {files[-1]} ({len(files)} files)", text
    # A chunk that ends while its process runs on lost nothing: no 'stopped early'.
    for f in files:
        assert "stopped early" not in run(nmprof, "report", f, check=0).stdout, f


def test_two_chunks_compare_and_a_file_given_twice_is_refused(nmprof, chunks):
    files, _ = chunks
    diff = run(nmprof, "report", files[-1], "--diff", files[1], check=0)
    assert diff.stdout.startswith(f"nmprof diff: {files[-1]} against {files[1]}"), diff.stdout
    twice = run(nmprof, "report", files[0], files[1], files[0])
    assert twice.returncode == 1
    assert twice.stderr.splitlines() == [f"nmprof report: {files[0]}: given twice"], twice.stderr


def test_every_allocation_of_a_busy_program_is_in_the_chunks(nmprof, programs, tmp_path):
    """--nativemem 0 on 3 million blocks made and freed in a burst: the agent appends
    faster than it patches its header's size, and bytes past the size the header gave
    were read as the next chunk ('not a JFR file': no chunk was written at all)."""
    result = run(nmprof, "run", "--loop", "1s", "--nativemem", "0", "-q", "-o", tmp_path / "c-%n.jfr", "--",
                 programs.c("many_small_blocks.c"), 3_000_000)
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
    files = list(tmp_path.glob("c-*.jfr"))
    merged = report_json(nmprof, *files)
    assert merged["allocated"]["samples"] == 3_000_002, merged["allocated"]  # the blocks, their array, the kept one
    assert merged["live"]["estimated_bytes"] == 1 << 20 and merged["live"]["unmatched_frees"] == 0, merged["live"]


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


# Hostile tests of --loop (each was a break).

def test_a_chunk_that_cannot_be_written_does_not_block_the_next(nmprof, programs, tmp_path):
    """A directory at chunk 1's name: chunk 1 is lost (said so; the recordings are kept)
    but the chunks after it are written, each under a name of its own. The kept
    recording, from which what chunk 0 holds was punched out, reads in the JDK's jfr,
    and with chunk 0 it holds every sample: nothing recorded is lost."""
    (tmp_path / "c-1.jfr").mkdir()
    result = run(nmprof, "run", "--loop", "1s", "-q", "--nativemem", "0", "-o", tmp_path / "c-%n.jfr", "--",
                 programs.c("paced_allocations.c"), 3.5, 100)
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("chunk 1 was not written") == 1, result.stderr
    assert (tmp_path / "c-0.jfr").is_file() and (tmp_path / "c-2.jfr").is_file(), result.stderr
    assert "recordings are kept in" in result.stderr
    truth = int(dict(line.split() for line in result.stdout.splitlines())["paced_site"])
    [kept] = tmp_path.glob(".nmprof-*/*.jfr")
    summary = subprocess.run([str(jfr_tool()), "summary", str(kept)], capture_output=True, text=True)
    assert summary.returncode == 0 and re.search(r"profiler\.Malloc\s+[1-9]", summary.stdout), summary
    first, rest = (report_json(nmprof, f, "--top", "100") for f in (tmp_path / "c-0.jfr", kept))
    assert site_bytes(first, "paced_site") > 0 and site_bytes(rest, "paced_site") < truth
    assert site_bytes(first, "paced_site") + site_bytes(rest, "paced_site") == truth


def test_the_recording_gives_back_its_disk_space_while_the_program_runs(nmprof, programs, tmp_path):
    """A service looped for weeks: its agent's recording grows by every sample, but what
    the written chunks hold is punched out of it: the file's size grows, the space it
    takes on disk does not."""
    proc = subprocess.Popen([str(nmprof), "run", "--loop", "1s", "--nativemem", "0", "-q",
                             "-o", str(tmp_path / "c-%n.jfr"), "--", str(programs.c("paced_allocations.c")), "9", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    largest = (0, 0)  # size, bytes on disk
    while proc.poll() is None:
        for f in tmp_path.glob(".nmprof-*/*.jfr"):
            try:
                st = f.stat()
            except FileNotFoundError:
                continue
            largest = max(largest, (st.st_size, st.st_blocks * 512))
        time.sleep(0.2)
    stdout, stderr = proc.communicate()
    assert proc.returncode == 0 and "warning" not in stderr, stderr
    size, on_disk = largest
    assert size > 4_000_000 and on_disk < 0.5 * size, largest
    truth = int(dict(line.split() for line in stdout.splitlines())["paced_site"])
    merged = report_json(nmprof, *tmp_path.glob("c-*.jfr"), "--top", "100")
    assert site_bytes(merged, "paced_site") == truth


def test_keep_does_not_remove_what_nmprof_did_not_write(nmprof, programs, tmp_path):
    """A chunk replaced by a directory that --keep would remove: a warning, and the run
    goes on (nmprof aborted, leaving its command running)."""
    proc = subprocess.Popen([str(nmprof), "run", "--loop", "1s", "--keep", "1", "-q", "-o", str(tmp_path / "c-%n.jfr"),
                             "--", str(programs.c("paced_allocations.c")), "3.5", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = tmp_path / "c-0.jfr"
    for _ in range(300):
        if first.exists():
            break
        subprocess.run(["sleep", "0.02"])
    first.unlink()
    (first / "inside").mkdir(parents=True)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "--keep: cannot remove" in stderr and "terminate called" not in stderr, stderr
    assert first.is_dir() and len(list(tmp_path.glob("c-*.jfr"))) == 2  # the directory and the newest chunk


def test_the_last_chunk_holds_no_block_of_a_process_that_ended_before_it(nmprof, programs, tmp_path):
    """A process that leaked 8 MB and ended in the first second has no block live in the
    last chunk, three seconds later, where its blocks were brought back; the next
    program's own 1 kB leak is."""
    paced = programs.c("paced_allocations.c")
    result = run(nmprof, "run", "--loop", "1s", "--nativemem", "0", "-q", "-o", tmp_path / "c-%n.jfr", "--",
                 "sh", "-c", f"{paced} 0.2 8000000; {paced} 3.5 1000", check=0)
    files = sorted(tmp_path.glob("c-*.jfr"), key=lambda f: int(re.search(r"(\d+)", f.name).group(1)))
    assert len(files) >= 4, (files, result.stderr)
    assert site_bytes(report_json(nmprof, files[0], "--live", "--top", "100"), "leak_at_start") > 8_000_000
    assert site_bytes(report_json(nmprof, files[-1], "--live", "--top", "100"), "leak_at_start") == 1000


def test_a_run_of_many_short_processes_holds_no_descriptor_for_each(nmprof, programs, tmp_path):
    """Under a descriptor limit below the number of processes, every process is still
    recorded: the recordings of ended processes are not held open."""
    leak = programs.c("paced_allocations.c")
    script = f"ulimit -n 48; exec {nmprof} run --loop 1s --nativemem 0 -q -o {tmp_path}/c-%n.jfr -- " \
             f"sh -c 'for i in $(seq 80); do {leak} 0.001 100000; done'"
    result = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Too many open files" not in result.stderr and "left out" not in result.stderr, result.stderr
    reports = [report_json(nmprof, f, "--top", "100") for f in tmp_path.glob("c-*.jfr")]
    assert sum(site_bytes(r, "leak_at_start") for r in reports) == 80 * 100000


def test_max_size_bounds_each_chunk_which_says_so_and_the_next_is_whole_again(nmprof, programs, tmp_path):
    """--max-size under --loop: every chunk at most that size (the agent's own file is
    not capped: every chunk has samples), each one cut short says it stopped growing at
    --max-size, and the live view carries on whole: the leak of the start is in the last."""
    leak = 1_000_000
    result = run(nmprof, "run", "--loop", "1s", "--max-size", "128k", "--nativemem", "0", "-q",
                 "-o", tmp_path / "c-%n.jfr", "--", programs.c("paced_allocations.c"), 3.5, leak, check=0)
    files = sorted(tmp_path.glob("c-*.jfr"), key=lambda f: int(re.search(r"(\d+)", f.name).group(1)))
    assert len(files) >= 4 and "warning" not in result.stderr, result.stderr
    for f in files:
        assert f.stat().st_size <= 128 * 1024, (f, f.stat().st_size)
        report = report_json(nmprof, f, "--top", "100")
        assert report["statistics"]["stopped_growing"] == 1, (f, report["statistics"])
        assert site_bytes(report, "paced_site") > 0, f
    last = report_json(nmprof, files[-1], "--live", "--top", "100")
    assert site_bytes(last, "leak_at_start") == leak


def test_the_recordings_of_ended_processes_go_once_their_chunks_are_written(nmprof, programs, tmp_path):
    """A run of many short processes: each one's recording leaves the staging directory
    once the chunks that hold it are written (they all stayed, on disk, to the end)."""
    leak = programs.c("paced_allocations.c")
    proc = subprocess.Popen([str(nmprof), "run", "--loop", "1s", "--nativemem", "0", "-q", "-o", str(tmp_path / "c-%n.jfr"),
                             "--", "sh", "-c", f"for i in $(seq 120); do {leak} 0.05 100000 >/dev/null; done"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    most = 0
    while proc.poll() is None:
        most = max(most, len(list(tmp_path.glob(".nmprof-*/*.jfr"))))
        time.sleep(0.1)
    _, stderr = proc.communicate()
    assert proc.returncode == 0 and "warning" not in stderr, stderr
    assert 0 < most < 90, most
    reports = [report_json(nmprof, f, "--top", "100") for f in tmp_path.glob("c-*.jfr")]
    assert sum(site_bytes(r, "leak_at_start") for r in reports) == 120 * 100000


def test_an_image_begun_after_a_chunk_ended_is_not_in_it(nmprof, programs, tmp_path):
    """A program exec'd after the first chunk's end but before it is cut (1.5 s later)
    is in the next chunk only (it was listed in the first, running through it)."""
    paced = programs.c("paced_allocations.c")
    run(nmprof, "run", "--loop", "1s", "-q", "-o", tmp_path / "c-%n.jfr", "--",
        "sh", "-c", f"sleep 1.3; exec {paced} 1 100", check=0)
    commands = [[p["executable"] for p in report_json(nmprof, tmp_path / f"c-{n}.jfr")["processes"]] for n in (0, 1)]
    assert str(paced) not in commands[0], commands
    assert str(paced) in commands[1], commands


def test_a_process_that_gets_the_pid_of_an_ended_one_is_in_the_chunks(nmprof, programs, tmp_path):
    """Over weeks pids come round again: a process with the pid of one whose recording
    is already in chunks records into a file of its own name anew (its allocations
    were missing from the chunks)."""
    if os.geteuid() != 0 or subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"]).returncode != 0:
        pytest.skip("needs root and unshare (a pid namespace, where the pid is chosen)")
    result = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", str(nmprof), "run", "--loop", "1s",
                             "--nativemem", "0", "-q", "-o", str(tmp_path / "c-%n.jfr"), "--",
                             str(programs.c("reused_pid.c")), "500"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
    merged = report_json(nmprof, *tmp_path.glob("c-*.jfr"), "--top", "100")
    assert site_bytes(merged, "first_child") == 500_000 and site_bytes(merged, "second_child") == 500_000


def test_a_process_that_outlives_the_command_is_named(nmprof, programs, tmp_path):
    leak = programs.c("paced_allocations.c")
    result = run(nmprof, "run", "--loop", "1s", "-q", "-o", tmp_path / "c-%n.jfr", "--",
                 "sh", "-c", f"setsid {leak} 2 1000 > /dev/null &", check=0)
    outlived = r"warning: process \d+ \([^)]*\) outlived the command: what it records from now on is not in the chunks"
    assert re.search(outlived, result.stderr), result.stderr
