"""Heap-live: which stacks still hold memory at the end, and nothing else."""

import os
import subprocess

import pytest

from conftest import jfr_events, report_json, run, sampling_error_bound, stack_of


def live_by_top_function(report):
    return {s["frames"][0]["function"]: s for s in report["stacks"]}



def test_live_view_shows_the_leak_and_nothing_that_was_freed(nmprof, programs, tmp_path):
    threads, leaks = 4, 20000
    out = tmp_path / "live.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--", programs.c("live_leak.c"), threads, leaks,
                 check=0)
    leak_bytes, chain_bytes = map(int, result.stdout.split())
    report = report_json(nmprof, out, "--live", "--top", "50")
    assert report["view"] == "live"
    live = live_by_top_function(report)
    interval = 64 * 1024

    leak = live["site_leak"]["estimated_bytes"]
    assert abs(leak - leak_bytes) <= sampling_error_bound(1000, threads * leaks, interval), (leak, leak_bytes)
    chains = threads * ((leaks + 19) // 20)
    chain = sum(s["estimated_bytes"] for s in report["stacks"]
                if [f["function"] for f in s["frames"][:2]] == ["site_chain", "site_chain_leak"])
    assert abs(chain - chain_bytes) <= sampling_error_bound(20000, chains, interval) + 0.01 * chain_bytes, (chain, chain_bytes)

    # Everything else was freed: on its thread, on another thread, after realloc chains.
    freed_sites = {"site_churn", "site_cross_thread"}
    assert not freed_sites & set(live), sorted(live)
    chain_freed = [s for s in report["stacks"]
                   if [f["function"] for f in s["frames"][:2]] == ["site_chain", "site_chain_freed"]]
    assert not chain_freed
    explained = leak + chain
    assert report["totals"]["estimated_bytes"] < 1.05 * explained

    # The allocation view still has the freed sites, with many frees matched.
    allocated = report_json(nmprof, out, "--top", "50")
    tops = {s["frames"][0]["function"] for s in allocated["stacks"]}
    assert {"site_churn", "site_cross_thread", "site_leak"} <= tops
    assert allocated["live"]["matched_frees"] > 1000
    assert allocated["live"]["unmatched_frees"] == 0


def test_frees_are_recorded_only_for_tracked_blocks(nmprof, programs, tmp_path):
    out = tmp_path / "frees.jfr"
    run(nmprof, "run", "--nativemem", "64k", "-o", out, "--", programs.c("live_leak.c"), 1, 2000, check=0)
    mallocs = jfr_events(out, "profiler.Malloc")
    frees = jfr_events(out, "profiler.Free")
    # Tracked: sampled blocks, and where reallocs moved them (a Free's newAddress).
    tracked = {e["values"]["address"] for e in mallocs} | {f["values"]["newAddress"] for f in frees}
    assert frees and all(f["values"]["address"] in tracked for f in frees)
    assert all(f["values"]["stackTrace"] is None or not f["values"]["stackTrace"]["frames"] for f in frees)
    # Far fewer free events than frees: only sampled blocks are followed (and moved).
    assert len([f for f in frees if not f["values"]["newAddress"]]) <= len(mallocs)


def test_live_tracking_can_be_turned_off(nmprof, programs, tmp_path):
    # From the CLI and through the agent's own option string.
    cli = tmp_path / "cli-off.jfr"
    run(nmprof, "run", "--nativemem", "64k", "--no-live", "-o", cli, "--", programs.c("live_leak.c"), 1, 2000, check=0)
    agent = nmprof.parent.parent / "lib" / "nmprof" / "libnmprof.so"
    env_off = tmp_path / "agent-off.jfr"
    env = dict(os.environ, LD_PRELOAD=str(agent), NMPROF_OPTIONS=f"nativemem=64k,live=false,file={env_off}")
    subprocess.run([str(programs.c("live_leak.c")), "1", "2000"], env=env, check=True, capture_output=True)
    for off in (cli, env_off):
        assert jfr_events(off, "profiler.Malloc")
        assert not jfr_events(off, "profiler.Free")
        settings = {e["values"]["name"]: e["values"]["value"] for e in jfr_events(off, "jdk.ActiveSetting")}
        assert settings["live"] == "false"
        assert report_json(nmprof, off)["live"] is None


def test_the_tracking_cap_is_reported(nmprof, programs, tmp_path):
    out = tmp_path / "cap.jfr"
    run(nmprof, "run", "--nativemem", "64k", "--maxtracked", 50, "-o", out, "--", programs.c("live_leak.c"), 1, 20000,
        check=0)
    report = report_json(nmprof, out)
    stats = report["processes"][0]["statistics"]
    assert stats["untracked_samples"] > 0
    assert stats["tracked_blocks"] <= 50
    assert any("untracked" in n or "overstate" in n for n in report["notes"]), report["notes"]
    # Every line of the summary that counts live bytes says it overstates them.
    text = run(nmprof, "run", "--nativemem", "64k", "--maxtracked", 50, "-o", tmp_path / "again.jfr", "--",
               programs.c("live_leak.c"), 1, 20000, check=0).stderr
    for label in ("live at exit:", "peak live:"):
        line = next(line for line in text.splitlines() if line.strip().startswith(label))
        assert "the tracking table overflowed" in line, text
    timeline = run(nmprof, "report", out).stdout.split("Over time")[1]
    assert "end ~" in timeline and "(at most: the tracking table overflowed)" in timeline, timeline


def test_every_allocation_recorded_tracks_half_a_million_live_blocks(nmprof, programs, tmp_path):
    """--nativemem 0 on a program that holds 600,000 blocks at once (over the
    sampling default of --maxtracked): the table grows to hold them, so every free
    is seen and the live view is exact (issue 39: the live view had become a range
    ten times wide, with no word on the peak line)."""
    count = 600_000
    out = tmp_path / "small.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-o", out, "--", programs.c("many_small_blocks.c"), count)
    assert "overflowed" not in result.stderr, result.stderr
    report = report_json(nmprof, out)
    stats = report["processes"][0]["statistics"]
    assert stats["untracked_samples"] == 0 and stats["tracked_blocks"] == 1, stats
    kept = [s for s in report_json(nmprof, out, "--live")["stacks"] if s["frames"][0]["function"] == "site_kept"]
    assert report["live"]["estimated_bytes"] == 1 << 20 and len(kept) == 1, report["live"]
    assert report["live"]["lower_bound_bytes"] is None
    held = count * (32 + 8)  # the blocks and the array of their addresses
    assert held <= report["timeline"]["peak_live_bytes"] < held + (64 << 10), report["timeline"]
