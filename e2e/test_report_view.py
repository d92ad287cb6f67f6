"""The report as an experienced user reads it (issue 17): Java tiers merged, allocator
wrappers folded in every format, nmprof's own frames gone, a truthful live headline
when the tracking table overflowed, and the CI gate."""

import json
import os
import pty
import re
import subprocess

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
    # The leak's path (the JVM's own allocations while it links retainDirect are other stacks).
    retained = [s for s in report["stacks"] if {"retainDirect", "allocateMemory0"} <= {f["function"] for f in s["frames"]}]
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


def test_keep_frames_shows_operator_new(nmprof, programs, tmp_path):
    out = tmp_path / "cpp.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", programs.c("cpp_sites.cpp"), check=0)

    def leaves(*args):
        collapsed = run(nmprof, "report", out, "--format", "collapsed", *args, check=0).stdout
        return {line.rsplit(" ", 1)[0].split(";")[-1] for line in collapsed.splitlines()}

    # new char[] (make_buffer) and std::vector's allocator (grow) both reach operator new.
    folded = leaves()
    assert not [leaf for leaf in folded if leaf.startswith(("operator new", "std::"))], folded
    assert {"app::make_buffer(unsigned long)", "app::Cache<long>::grow(unsigned long)"} <= folded, folded
    kept = leaves("--keep-frames")
    assert any(leaf.startswith("operator new") for leaf in kept), kept
    assert not {"app::make_buffer(unsigned long)", "app::Cache<long>::grow(unsigned long)"} & kept, kept


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
    assert re.search(r"^nmprof report: failed: live at the end ~[\d.]+ MiB \u00b1 [\d.]+ MiB exceeds "
                     r"--fail-on-live 10.0 MiB at 95%$", result.stderr, re.M), result.stderr
    assert "Top" in result.stdout  # the report is still written


def test_a_gate_that_cannot_decide_says_so_and_what_would(nmprof, leak):
    """At the estimate itself, the interval straddles the limit: exit 4, one line, and
    the --nativemem that would decide; a lower confidence decides sooner."""
    out, _ = leak
    live = report_json(nmprof, out)["live"]
    assert live["bytes_margin"] > 0
    limit = f"{int(live['estimated_bytes'] / 1024)}k"
    result = run(nmprof, "report", out, "--fail-on-live", limit, check=4)
    assert re.search(r"^nmprof report: undecided: cannot decide --fail-on-live [\d.]+ MiB at 95%: live at the end "
                     r"~[\d.]+ MiB \u00b1 [\d.]+ MiB \(too few samples\); a recording with --nativemem (\d+k|0) would$",
                     result.stderr, re.M), result.stderr
    far = f"{int((live['estimated_bytes'] - 0.8 * live['bytes_margin']) / 1024)}k"
    run(nmprof, "report", out, "--fail-on-live", far, check=4)
    run(nmprof, "report", out, "--fail-on-live", far, "--confidence", "0.5", check=3)
    for bad in ("1", "0", "95%", "x"):
        result = run(nmprof, "report", out, "--confidence", bad, check=2)
        assert "is not a number between 0 and 1" in result.stderr, result.stderr


def test_report_fails_on_growth_against_a_base(nmprof, programs, leak, tmp_path):
    out, _ = leak
    base = tmp_path / "small.jfr"
    run(nmprof, "run", "--nativemem", "64k", "-o", base, "--", programs.c("live_leak.c"), 1, 2000, check=0)
    # Against itself nothing grew; a limit as large as the recording's own margin is ruled out.
    run(nmprof, "report", out, "--diff", out, "--fail-on-growth", "16m", check=0)
    result = run(nmprof, "report", out, "--diff", base, "--fail-on-growth", "1m", check=3)
    assert "failed: live bytes since " in result.stderr and " grew by ~" in result.stderr, result.stderr
    result = run(nmprof, "report", out, "--fail-on-growth", "1m", check=2)
    assert "--diff BASE" in result.stderr
    assert "is not a size" in run(nmprof, "report", out, "--fail-on-live", "lots", check=2).stderr


def test_diff_gives_changes_their_interval_and_marks_those_within_it(nmprof, leak):
    out, _ = leak
    text = run(nmprof, "report", out, "--diff", out, check=0).stdout
    assert re.search(r"^live at end +~[\d.]+ MiB +~[\d.]+ MiB +0 B \u00b1 [\d.]+ MiB \(\+0.0%\) "
                     r"\(not significant at 95%\)$", text, re.M), text
    assert re.search(r"^ +\(0 B\) +[\d.]+ \w+ ", text, re.M), text
    assert "(change): not significant, within its 95% interval" in text
    totals = json.loads(run(nmprof, "report", out, "--diff", out, "--format", "json", check=0).stdout)["totals"]
    assert totals["live_change_margin"] > 0 and totals["live_change_significant"] is False


def test_run_fails_on_live_in_one_step(nmprof, programs, tmp_path):
    out = tmp_path / "gate.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "--fail-on-live", "4m", "-o", out, "--",
                 programs.c("live_leak.c"), 1, 20000, check=3)
    assert re.search(r"^nmprof: failed: live at the end ~[\d.]+ MiB \u00b1 [\d.]+ \w+ exceeds --fail-on-live 4.00 MiB "
                     r"at 95%$", result.stderr, re.M), result.stderr
    assert out.exists()
    run(nmprof, "run", "--nativemem", "64k", "--fail-on-live", "1g", "-o", out, "--",
        programs.c("live_leak.c"), 1, 20000, check=0)
    # The program's own failure comes first.
    run(nmprof, "run", "--fail-on-live", "1", "-o", out, "--", programs.c("live_leak.c"), check=2)


def test_filters_select_by_process_thread_time_and_frame(nmprof, programs, tmp_path):
    out = tmp_path / "tree.jfr"
    run(nmprof, "run", "--nativemem", "64k", "-o", out, "--", programs.c("forker.c"), "tree", check=0)
    whole = report_json(nmprof, out, "--top", "100")
    pids = [p["pid"] for p in whole["processes"]]
    assert len(pids) > 1
    one = report_json(nmprof, out, "--pid", pids[0], "--top", "100")
    assert 0 < one["allocated"]["samples"] < whole["allocated"]["samples"]
    assert one["selection"] == f"pid {pids[0]}"
    assert "no process 1 in the recording" in run(nmprof, "report", out, "--pid", "1", check=1).stderr
    assert "no thread named or numbered 'nosuch'" in run(nmprof, "report", out, "--thread", "nosuch", check=1).stderr


def test_time_range_and_frame_filters(nmprof, leak):
    out, _ = leak
    whole = report_json(nmprof, out)
    duration = whole["duration_seconds"]
    early = report_json(nmprof, out, "--to", f"{duration / 2:.6f}s")
    late = report_json(nmprof, out, "--from", f"{duration / 2:.6f}s")
    assert early["allocated"]["samples"] + late["allocated"]["samples"] >= whole["allocated"]["samples"]
    assert 0 < early["allocated"]["samples"] < whole["allocated"]["samples"]
    assert early["duration_seconds"] <= duration / 2 + 1e-3
    through = report_json(nmprof, out, "--include", "^site_chain", "--top", "100")
    assert through["stacks"] and all(any(f["function"].startswith("site_chain") for f in s["frames"])
                                     for s in through["stacks"])
    without = report_json(nmprof, out, "--exclude", "^site_chain", "--top", "100")
    assert not any(f["function"].startswith("site_chain") for s in without["stacks"] for f in s["frames"])
    assert "is not a time" in run(nmprof, "report", out, "--from", "soon", check=2).stderr
    assert "no samples match" in run(nmprof, "report", out, "--include", "^no_such_function$", check=1).stderr


def test_functions_by_total_and_the_callers_and_callees_of_one(nmprof, leak):
    out, _ = leak
    by_total = report_json(nmprof, out, "--by", "function", "--sort", "total", "--top", "3")
    totals = [f["total"]["estimated_bytes"] for f in by_total["functions"]]
    assert totals == sorted(totals, reverse=True)
    assert by_total["functions"][0]["total_share"] > 0.99  # worker or start_thread: in every stack
    peek = report_json(nmprof, out, "--peek", "^site_chain$")["peek"]
    assert len(peek) == 1
    callers = {c["function"]["function"] for c in peek[0]["callers"]}
    assert callers == {"site_chain_leak", "site_chain_freed"}
    assert abs(sum(c["totals"]["estimated_bytes"] for c in peek[0]["callers"])
               - peek[0]["total"]["estimated_bytes"]) < 1
    text = run(nmprof, "report", out, "--peek", "^worker$", check=0).stdout
    assert re.search(r"callees:\n(\s+[\d.]+ \w*B\s+[\d.]+%\s+site_\w+ \[live_leak\]\n)+", text), text


def test_the_timeline_shows_peak_live_and_the_allocation_rate(nmprof, leak):
    out, true_live = leak
    t = report_json(nmprof, out)["timeline"]
    assert len(t["allocated_bytes"]) == len(t["live_bytes"]) == 60
    assert abs(sum(t["allocated_bytes"]) - report_json(nmprof, out)["allocated"]["estimated_bytes"]) < 1
    # live_leak only grows: the peak is near the end and near what it keeps.
    assert t["peak_live_bytes"] >= t["live_bytes"][-1]
    assert 0.7 * true_live < t["peak_live_bytes"] < 1.5 * true_live
    assert t["live_bytes"][5] < t["live_bytes"][-1]
    text = run(nmprof, "report", out, check=0).stdout
    assert re.search(r"^  live +[\u2581-\u2588]{60}\n +peak ~[\d.]+ MiB at ", text, re.M), text
    assert re.search(r"^ +~[\d.]+ \w+/s on average, peak ~", text, re.M), text


def test_text_fits_columns_and_wide_and_depth_show_everything(nmprof, leak):
    out, _ = leak
    env = dict(os.environ, COLUMNS="70")
    narrow = run(nmprof, "report", out, "--top", "3", env=env, check=0).stdout
    # Only a command to copy may overflow: it stays whole.
    assert max(len(l) for l in narrow.splitlines() if "more: nmprof" not in l) <= 70, narrow
    assert "live_leak.c:" in narrow  # source lines kept
    wide = run(nmprof, "report", out, "--top", "3", "--wide", env=env, check=0).stdout
    assert max(len(l) for l in wide.splitlines()) > 70
    shallow = run(nmprof, "report", out, "--top", "1", "--depth", "1", check=0).stdout
    assert re.search(r"\.\.\. \d+ more frames \(--depth \d+ shows them\)", shallow), shallow
    deep = run(nmprof, "report", out, "--top", "1", "--depth", "0", check=0).stdout
    assert "more frames" not in deep and "clone" in deep


def test_wide_pads_names_to_the_longest_shown_only(nmprof, leak):
    """--wide shortens no name and pads none past the longest: a frame line is at most
    the indent, the longest name (with its file:line), two spaces and the longest
    library (issue 39, item 3: lines of ~100,000 columns before)."""
    out, _ = leak
    wide = run(nmprof, "report", out, "--top", "3", "--depth", "0", "--wide", check=0).stdout
    frames = [f for s in report_json(nmprof, out, "--top", "3")["stacks"] for f in s["frames"]]

    def shown(f):
        where = f" ({os.path.basename(f['file'])}:{f['line']})" if f["file"] and f["line"] else ""
        return len(f["function"]) + len(where)
    longest = 6 + max(shown(f) for f in frames) + 2 + max(len(f["container"]) for f in frames)
    names = {f["function"] for f in frames}
    frame_lines = [l for l in wide.splitlines() if l.startswith("      ") and l[6:].split(" ")[0] in names]
    assert frame_lines, wide
    assert max(len(l) for l in frame_lines) <= longest, (longest, wide)


def test_80_columns_keep_file_and_line_and_tell_stacks_apart(nmprof, programs, tmp_path):
    out = tmp_path / "long.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", programs.c("cpp_long_names.cpp"), check=0)
    env = dict(os.environ, COLUMNS="80")
    text = run(nmprof, "report", out, "--top", "2", "--depth", "1", env=env, check=0).stdout
    # Paths (the command, the recording) are not cut.
    assert max(len(l) for l in text.splitlines() if str(tmp_path.parent) not in l) <= 80, text
    stacks = re.findall(r"^#\d.*\n((?:      .*\n)+)", text, re.M)
    assert len(stacks) == 2 and stacks[0] != stacks[1], text
    # The parameters gave way, not the file and line.
    assert re.search(r"insert_entries\(\.\.\.\) \(cpp_long_names\.cpp:\d+\)", text), text
    assert {"caller_a", "caller_b"} <= set(re.findall(r"caller_[ab]", text)), text


def test_colour_on_a_terminal_unless_no_color(nmprof, leak):
    out, _ = leak

    def on_a_terminal(**env):
        main, child = pty.openpty()
        proc = subprocess.Popen([str(nmprof), "report", str(out), "--top", "1"], stdout=child, stderr=child,
                                env=dict(os.environ, COLUMNS="100", **env))
        os.close(child)
        text = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            text += chunk
        proc.wait(timeout=60)
        os.close(main)
        return text.decode()

    assert "\033[1m#1 " in on_a_terminal()
    assert "\033[" not in on_a_terminal(NO_COLOR="1")
    assert "\033[" not in run(nmprof, "report", out, "--top", "1", check=0).stdout  # piped


def test_wording_and_edge_cases(nmprof, programs, leak, tmp_path):
    out, _ = leak
    for bad in ("0", "-1"):
        assert "--top" in run(nmprof, "report", out, "--top", bad, check=2).stderr
        assert "--top" in run(nmprof, "run", "--top", bad, "--", "true", check=2).stderr
    quiet = run(nmprof, "run", "-q", "--nativemem", "64k", "-o", tmp_path / "q.jfr", "--",
                programs.c("live_leak.c"), 1, 2000, check=0)
    assert quiet.stderr == f"nmprof: profile written to {tmp_path / 'q.jfr'}\n"
    # A command line with a newline stays on its line of the header.
    multi = tmp_path / "multi.jfr"
    run(nmprof, "run", "--nativemem", "64k", "-o", multi, "--", programs.c("live_leak.c"), 1, "2000\nmore", check=0)
    header = run(nmprof, "report", multi, check=0).stdout.split("\n\n")[0]
    assert re.search(r"^Command .*live_leak 1 '?2000\\x0amore'?\nProcess ", header, re.M), header


def test_json_settings_name_the_file_not_the_staging_path(nmprof, leak):
    out, _ = leak
    report = report_json(nmprof, out)
    assert report["processes"][0]["settings"]["file"] == str(out)
    assert ".nmprof-" not in json.dumps(report)


def test_run_to_a_text_file_names_that_file_not_its_staging_recording(nmprof, programs, tmp_path):
    out = tmp_path / "run.txt"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", programs.c("live_leak.c"), 1, 2000, check=0)
    text = out.read_text()
    assert text.startswith(f"nmprof report: {out}\n"), text[:200]
    # Its recording is gone: no command to report on it.
    assert ".nmprof-" not in text and "more: nmprof report" not in text, text
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]
