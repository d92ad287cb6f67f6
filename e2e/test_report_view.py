"""The report as an experienced user reads it (issue 17): Java tiers merged, allocator
wrappers folded in every format, nmprof's own frames gone, a truthful live headline
when the tracking table overflowed, and the CI gate."""

import json
import re

import pytest

from conftest import JDK17, JDK25, report_json, run

JDKS = pytest.mark.parametrize("jdk", [JDK17, JDK25], ids=["jdk17", "jdk25"])
MIB = 1024 * 1024


def parse_bytes(text):
    number, unit = text.split()
    return float(number.replace(",", "")) * {"B": 1, "KiB": 1024, "MiB": MIB, "GiB": 1024 * MIB}[unit]


@pytest.fixture(scope="module")
def leak(nmprof, programs, tmp_path_factory):
    """live_leak 1 20000: ~40 MB live at exit, recorded with the default tracking table."""
    out = tmp_path_factory.mktemp("leak") / "leak.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--", programs.c("live_leak.c"), 1, 20000, check=0)
    return out, sum(int(n) for n in result.stdout.split())


@pytest.fixture(scope="module")
def direct_leak(nmprof, java_programs, tmp_path_factory):
    recordings = {}
    for jdk in (JDK17, JDK25):
        if not (jdk / "bin" / "java").exists():
            continue
        out = tmp_path_factory.mktemp("direct") / "direct.jfr"
        result = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--",
                     *java_programs.command(jdk, "direct-live", 5000, 20000), check=0, timeout=300)
        recordings[jdk] = (out, int(result.stdout.split()[-1]))
    return recordings


def recording_of(direct_leak, jdk):
    if jdk not in direct_leak:
        pytest.skip(f"{jdk} is not installed")
    return direct_leak[jdk]


@JDKS
def test_a_direct_buffer_leak_is_one_stack_whatever_tier_ran_it(nmprof, direct_leak, jdk):
    out, kept = recording_of(direct_leak, jdk)
    report = report_json(nmprof, out, "--live", "--top", "50")
    retained = [s for s in report["stacks"] if any(f["function"] == "retainDirect" for f in s["frames"])]
    assert len(retained) == 1, [[(f["function"], f["kind"]) for f in s["frames"]] for s in retained]
    frames = retained[0]["frames"]
    assert frames[0]["kind"] in ("java", "java-native"), frames[:3]  # os::malloc and JNI glue folded
    assert {f["kind"] for f in frames} & {"interpreted", "jit", "inlined"} == set()
    assert retained[0]["estimated_bytes"] > 0.5 * kept

    typed = report_json(nmprof, out, "--live", "--top", "50", "--frame-types")
    assert any(f["kind"] in ("interpreted", "jit", "inlined") for s in typed["stacks"] for f in s["frames"])


@JDKS
def test_every_format_folds_wrappers_and_drops_nmprofs_own_frames(nmprof, direct_leak, jdk):
    out, _ = recording_of(direct_leak, jdk)
    collapsed = run(nmprof, "report", out, "--format", "collapsed", check=0).stdout
    assert collapsed
    assert "create_java_vm_with_agent" not in collapsed
    leaves = [line.rsplit(" ", 1)[0].split(";")[-1] for line in collapsed.splitlines()]
    assert not [leaf for leaf in leaves if leaf.startswith(("os::malloc", "AllocateHeap", "Unsafe_"))]

    kept = run(nmprof, "report", out, "--format", "collapsed", "--keep-frames", check=0).stdout
    assert any(line.rsplit(" ", 1)[0].split(";")[-1].startswith("os::malloc") for line in kept.splitlines())
    assert "create_java_vm_with_agent" not in kept


def test_a_bad_fold_pattern_is_one_line(nmprof, leak):
    result = run(nmprof, "report", leak[0], "--fold", "(", check=2)
    assert "--fold" in result.stderr and "'('" in result.stderr


def test_fold_adds_the_users_own_rules(nmprof, leak):
    plain = report_json(nmprof, leak[0], "--by", "function", "--top", "100")
    assert any(f["function"] == "site_leak" and f["self"]["estimated_bytes"] > 0 for f in plain["functions"])
    folded = report_json(nmprof, leak[0], "--by", "function", "--top", "100", "--fold", "^site_")
    assert not any(f["function"].startswith("site_") and f["self"]["estimated_bytes"] > 0 for f in folded["functions"])


def test_the_live_headline_gives_bounds_when_the_tracking_table_overflowed(nmprof, programs, tmp_path):
    out = tmp_path / "cap.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "--maxtracked", 10, "-o", out, "--",
                 programs.c("live_leak.c"), 1, 20000, check=0)
    true_live = sum(int(n) for n in result.stdout.split())
    line = next(l for l in result.stderr.splitlines() if "live at exit" in l)
    bounds = re.search(r"between ~([\d.,]+ \w+) and ~([\d.,]+ \w+)", line)
    assert bounds, line
    low, high = parse_bytes(bounds.group(1)), parse_bytes(bounds.group(2))
    assert low <= true_live * 1.2 and high >= true_live * 0.8, (low, high, true_live)
    live = report_json(nmprof, out)["live"]
    assert live["lower_bound_bytes"] is not None and live["lower_bound_bytes"] <= live["estimated_bytes"]
    assert "between ~" in run(nmprof, "report", out, check=0).stdout


def test_without_overflow_the_headline_is_one_estimate(nmprof, leak):
    out, true_live = leak
    assert report_json(nmprof, out)["live"]["lower_bound_bytes"] is None
    line = next(l for l in run(nmprof, "report", out, check=0).stdout.splitlines() if l.startswith("Live"))
    assert "between" not in line


def test_report_fails_on_live_above_the_limit_with_one_line(nmprof, leak):
    out, true_live = leak
    run(nmprof, "report", out, "--fail-on-live", "1g", check=0)
    result = run(nmprof, "report", out, "--fail-on-live", "10m", check=3)
    assert re.search(r"^nmprof report: failed: live at the end ~[\d.]+ MiB exceeds --fail-on-live 10.0 MiB$",
                     result.stderr, re.M), result.stderr
    assert "Top" in result.stdout  # the report is still written


def test_report_fails_on_growth_against_a_base(nmprof, programs, leak, tmp_path):
    out, _ = leak
    base = tmp_path / "small.jfr"
    run(nmprof, "run", "--nativemem", "64k", "-o", base, "--", programs.c("live_leak.c"), 1, 2000, check=0)
    run(nmprof, "report", out, "--diff", out, "--fail-on-growth", "1m", check=0)
    result = run(nmprof, "report", out, "--diff", base, "--fail-on-growth", "1m", check=3)
    assert "failed: live bytes grew by ~" in result.stderr
    result = run(nmprof, "report", out, "--fail-on-growth", "1m", check=2)
    assert "--diff BASE" in result.stderr
    assert "is not a size" in run(nmprof, "report", out, "--fail-on-live", "lots", check=2).stderr


def test_run_fails_on_live_in_one_step(nmprof, programs, tmp_path):
    out = tmp_path / "gate.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "--fail-on-live", "4m", "-o", out, "--",
                 programs.c("live_leak.c"), 1, 20000, check=3)
    assert re.search(r"^nmprof: failed: live at the end ~[\d.]+ MiB exceeds --fail-on-live 4.00 MiB$",
                     result.stderr, re.M), result.stderr
    assert out.exists()
    run(nmprof, "run", "--nativemem", "64k", "--fail-on-live", "1g", "-o", out, "--",
        programs.c("live_leak.c"), 1, 20000, check=0)
    # The program's own failure comes first.
    run(nmprof, "run", "--fail-on-live", "1", "-o", out, "--", programs.c("live_leak.c"), check=2)
