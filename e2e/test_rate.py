"""--rate: the agent adapts its sampling interval to hold a number of samples per
second, and the estimates stay unbiased while it does. Sample counts come from the
recording; the programs run for a fixed wall-clock time."""

import math

import pytest

from conftest import report_json, run
from test_run_native import by_top_function, jfr_events


def statistics(nmprof, path):
    return report_json(nmprof, path)["statistics"]


@pytest.mark.parametrize("mode", ["steady", "bursty"])
def test_rate_holds_its_target(nmprof, programs, tmp_path, mode):
    out = tmp_path / "rate.jfr"
    seconds, rate = 4, 200
    run(nmprof, "run", "-q", "--rate", rate, "-o", out, "--", programs.c("rate_loop.c"), mode, seconds, check=0)
    stats = statistics(nmprof, out)
    target = rate * seconds
    # Without the limit, the fast loop takes tens of thousands of samples per second.
    assert 0.7 * target <= stats["samples"] <= 1.3 * target, stats
    assert stats["min_interval"] < stats["max_interval"], stats
    assert stats["max_interval"] > 512 * 1024, stats
    assert "the sampling interval varied from" in run(nmprof, "report", out, check=0).stdout


@pytest.mark.parametrize("threads", [1, 4])
def test_estimates_stay_unbiased_under_rate(nmprof, programs, tmp_path, threads):
    # Several threads share the controller: each weighs its samples with its own countdown's interval.
    counts = {"site_small": 6_000_000 // threads, "site_medium": 300_000 // threads}
    sizes = {"site_small": 48, "site_medium": 3000}
    out = tmp_path / "totals.jfr"
    run(nmprof, "run", "-q", "--rate", 2000, "-o", out, "--", programs.c("known_totals.c"), threads, *counts.values(), 0,
        check=0)
    stats = statistics(nmprof, out)
    assert stats["min_interval"] < stats["max_interval"], stats  # the interval did move
    groups = by_top_function(jfr_events(out, "profiler.Malloc"))
    for site, count in counts.items():
        events = groups[f"known_totals!{site}"]
        assert len(events) > 30, site
        ws = [e["values"]["weight"] for e in events]
        estimate = sum(w * sizes[site] for w in ws)
        # Horvitz-Thompson: sum of w(w-1) x^2 over the samples estimates the variance.
        sd = math.sqrt(sum(w * (w - 1) for w in ws)) * sizes[site]
        truth = count * threads * sizes[site]
        assert abs(estimate - truth) <= 5 * sd + 0.02 * truth, (site, estimate, truth, sd)


def test_a_bad_rate_gets_one_clear_line(nmprof, programs):
    for bad in ("abc", "-5", "2000000"):
        result = run(nmprof, "run", "--rate", bad, "--", programs.c("rate_loop.c"), "steady", 0)
        assert result.returncode != 0
        assert result.stderr.splitlines()[0].startswith("nmprof: --rate"), result.stderr
