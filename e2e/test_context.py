"""Context tags: static --tag, per-thread context set through nmprof.h on every
profiler.Malloc, and the report's --tag filter and --by context views."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import HERE, PROGRAMS, jfr_events, jfr_tool, nmprof_path, report_json, run, stack_of

MIB = 1024 * 1024
# What e2e/programs/context_requests.c allocates, by route (None: outside requests).
BYTES_BY_ROUTE = {"/checkout": 80 * MIB, "/search": 40 * MIB, "/static": 20 * MIB, None: 37.5 * MIB}
SIZE_OF_ROUTE = {"/checkout": 4096, "/search": 2048, "/static": 1024, None: 512}
REQUESTS = 4 * 60
# At 32 KiB between samples each value has 600+ samples: 20% is more than 5 standard errors.
TOLERANCE = 0.2


@pytest.fixture(scope="module")
def requests_program(tmp_path_factory):
    out = tmp_path_factory.mktemp("context") / "context_requests"
    subprocess.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", f"-I{HERE.parent / 'include'}", "-Wall", "-Werror",
                    "-o", str(out), str(PROGRAMS / "context_requests.c"), "-pthread"], check=True)
    return out


@pytest.fixture(scope="module")
def recording(nmprof, requests_program, tmp_path_factory):
    out = tmp_path_factory.mktemp("context-recording") / "requests.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "32k", "--context-attributes", "route,tenant", "--tag",
                 "service=shop", "--tag", "env=test", "-o", out, "--", requests_program, check=0)
    assert "served" in result.stdout
    return out


def test_runs_unchanged_without_the_agent(requests_program):
    result = subprocess.run([str(requests_program)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == "served\n", result.stderr


def test_every_sample_carries_its_context(recording):
    events = jfr_events(recording, "profiler.Malloc")
    route_of_size = {size: route for route, size in SIZE_OF_ROUTE.items()}
    seen = set()
    for e in events:
        v = e["values"]
        if not any(frame.endswith("!serve") for frame in stack_of(e)):
            continue  # stdio's buffer of the main thread
        assert v["size"] in route_of_size, v
        route = route_of_size[v["size"]]
        seen.add(route)
        if route is None:  # outside requests: no context at all
            assert (v["spanId"], v["localRootSpanId"], v["route"], v["tenant"]) == (0, 0, "", ""), v
        else:
            assert v["route"] == route, v
            assert v["spanId"] > 0 and v["localRootSpanId"] == v["spanId"], v
            assert v["tenant"] == f"tenant-{(v['spanId'] // 1000) % 2}", v
    assert seen == set(SIZE_OF_ROUTE)


def test_jfr_summary_and_tags(recording):
    summary = subprocess.run([str(jfr_tool()), "summary", str(recording)], capture_output=True, text=True, check=True)
    assert "profiler.Malloc" in summary.stdout and "nmprof.Tag" in summary.stdout
    tags = {e["values"]["key"]: e["values"]["value"] for e in jfr_events(recording, "nmprof.Tag")}
    assert tags == {"service": "shop", "env": "test"}


def malloc_bytes_per_event(recording):
    summary = subprocess.run([str(jfr_tool()), "summary", str(recording)], capture_output=True, text=True,
                             check=True).stdout
    count, size = next(line.split()[1:3] for line in summary.splitlines() if line.split()[:1] == ["profiler.Malloc"])
    return int(size) / int(count)


def test_attribute_values_go_through_the_string_pool(nmprof, requests_program, recording, tmp_path):
    suffix = "-" + "x" * 50
    out = tmp_path / "long-values.jfr"
    run(nmprof, "run", "-q", "--nativemem", "32k", "--context-attributes", "route,tenant", "-o", out, "--",
        requests_program, suffix, check=0)
    tenants = {e["values"]["tenant"] for e in jfr_events(out, "profiler.Malloc")}
    assert tenants == {"", "tenant-0" + suffix, "tenant-1" + suffix}
    # An event carries a pool key, not the text: 51 more bytes in most values (inline,
    # about 40 more per event) leave the events' size as it was.
    assert malloc_bytes_per_event(out) - malloc_bytes_per_event(recording) < 3


def test_estimates_by_route_within_bounds(nmprof, recording):
    report = report_json(nmprof, recording, "--by", "attribute:route")
    assert report["by"] == "attribute:route"
    assert report["tags"] == {"service": "shop", "env": "test"}
    assert report["context_attributes"] == ["route", "tenant"]
    assert report["processes"][0]["tags"] == {"service": "shop", "env": "test"}
    rows = {row["value"]: row for row in report["contexts"]}
    for route, expected in BYTES_BY_ROUTE.items():
        assert abs(rows[route]["estimated_bytes"] - expected) < TOLERANCE * expected, (route, rows[route])
        assert abs(rows[route]["estimated_count"] - expected / SIZE_OF_ROUTE[route]) < TOLERANCE * expected / SIZE_OF_ROUTE[route]
    # Undeclared names are ignored and counted: one per request.
    assert report["statistics"]["undeclared_attributes"] == REQUESTS


def test_tag_filter_and_span_view(nmprof, recording):
    checkout = report_json(nmprof, recording, "--tag", "route=/checkout", "--by", "span", "--top", "1000")
    assert checkout["filters"] == {"route": "/checkout"}
    assert abs(checkout["allocated"]["estimated_bytes"] - 80 * MIB) < TOLERANCE * 80 * MIB
    # 80 checkout requests, each its own span; samples of none of them lack a span.
    spans = [row["value"] for row in checkout["contexts"]]
    assert None not in spans and 60 <= len(spans) <= 80
    tenant = report_json(nmprof, recording, "--tag", "route=/search", "--tag", "tenant=tenant-1")
    assert abs(tenant["allocated"]["estimated_bytes"] - 20 * MIB) < TOLERANCE * 20 * MIB
    # Static tags select whole processes.
    assert report_json(nmprof, recording, "--tag", "service=shop")["allocated"]["samples"] > 0
    other = run(nmprof, "report", recording, "--tag", "service=other")
    assert other.returncode == 1 and "no samples match --tag service=other" in other.stderr


@pytest.mark.skipif(shutil.which("go") is None, reason="go tool pprof is needed (apt install golang-go)")
def test_pprof_samples_carry_tags_and_context_as_labels(nmprof, recording, tmp_path):
    out = tmp_path / "requests.pb.gz"
    run(nmprof, "report", recording, "-o", out, check=0)

    def pprof(*args):
        result = subprocess.run(["go", "tool", "pprof", *args, str(out)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout

    tags = pprof("-tags")
    for key in ("service", "env", "route", "tenant", "span_id", "local root span id"):
        assert re.search(rf"^ {key}: Total", tags, re.M), tags
    # Span ids are strings (pprof would sum numbers), the names Pyroscope and Datadog read.
    # -raw prints a sample's string labels on one line, each numeric label on its own.
    raw = pprof("-raw")
    strings = [line for line in raw.splitlines() if "service:[shop]" in line]
    span_ids = [re.search(r" span_id:\[(\d+)\]", line) for line in strings]
    span_ids = [m.group(1) for m in span_ids if m]
    assert span_ids and any(re.search(r"\blocal root span id:\[\d+\]", line) for line in strings), raw
    # --tag takes the label's name as well as the recording's.
    some = span_ids[0]
    by_label = report_json(nmprof, recording, "--tag", f"span_id={some}")["allocated"]["samples"]
    assert by_label == report_json(nmprof, recording, "--tag", f"spanId={some}")["allocated"]["samples"] > 0
    assert re.search(r"^\s+\S+ \(\s*100%\): shop$", tags, re.M), tags

    def total_mib(*args):
        top = pprof("-top", "-unit=MB", "-nodefraction=0", *args)
        return float(re.search(r"Showing nodes accounting for ([\d.]+)MB", top).group(1)) * 1e6 / MIB

    for route in ("/checkout", "/search"):
        expected = BYTES_BY_ROUTE[route] / MIB
        assert abs(total_mib(f"-tagfocus=route={route}") - expected) < TOLERANCE * expected, route
    # Samples outside requests carry no route and no span: what -tagignore leaves.
    outside = BYTES_BY_ROUTE[None] / MIB
    assert abs(total_mib("-tagignore=route=/") - outside) < TOLERANCE * outside + 1


def test_text_report_shows_tags_and_values(nmprof, recording):
    text = run(nmprof, "report", recording, "--by", "attribute:route", check=0).stdout
    assert "Tags        env=test, service=shop" in text
    assert "values of attribute:route" in text and "/checkout" in text and "(none)" in text


def test_report_of_an_unknown_attribute(nmprof, recording):
    result = run(nmprof, "report", recording, "--by", "attribute:user")
    assert result.returncode == 1
    assert "no context attribute 'user' in the recording (it has route, tenant)" in result.stderr


def test_agent_options_without_the_cli(requests_program, tmp_path):
    agent = nmprof_path().parent.parent / "lib" / "nmprof" / "libnmprof.so"
    out = tmp_path / "direct.jfr"
    env = dict(os.environ, LD_PRELOAD=str(agent),
               NMPROF_OPTIONS=f"nativemem=256k,attributes=route,tag=team=payments,file={out}")
    subprocess.run([str(requests_program)], env=env, check=True, capture_output=True, timeout=60)
    events = jfr_events(out, "profiler.Malloc")
    assert any(e["values"]["route"] == "/checkout" for e in events)
    assert all("tenant" not in e["values"] for e in events)
    assert {e["values"]["key"]: e["values"]["value"] for e in jfr_events(out, "nmprof.Tag")} == {"team": "payments"}


def test_without_declared_attributes_spans_still_recorded(nmprof, requests_program, tmp_path):
    out = tmp_path / "spans.jfr"
    run(nmprof, "run", "-q", "--nativemem", "256k", "-o", out, "--", requests_program, check=0)
    events = jfr_events(out, "profiler.Malloc")
    assert any(e["values"]["spanId"] > 0 for e in events)
    assert all("route" not in e["values"] for e in events)
    report = report_json(nmprof, out)
    assert report["statistics"]["undeclared_attributes"] == 3 * REQUESTS
    # The user is told how to record them.
    text = run(nmprof, "report", out, check=0).stdout
    assert re.search(rf"^warning: {3 * REQUESTS:,} context attributes were set under a name the recording did not"
                     r" declare \(it has none\).*--context-attributes", text.replace("\n         ", " "), re.M | re.S), text


def test_a_context_set_by_a_key_destructor_stays_with_its_thread(nmprof, tmp_path):
    # Thread A's own pthread key destructor sets its span after the agent's destructor
    # ran; thread B starts meanwhile. Before the fix the agent gave A's block to B at
    # once, so A's span went into B's block (B's samples said span 1) and A's last
    # samples had none.
    program = tmp_path / "context_key_destructor"
    subprocess.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", f"-I{HERE.parent / 'include'}", "-Wall", "-Werror",
                    "-o", str(program), str(PROGRAMS / "context_key_destructor.c"), "-pthread"], check=True)
    out = tmp_path / "destructor.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", program)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    spans = {}
    for e in jfr_events(out, "profiler.Malloc"):
        site = next((f for f in stack_of(e) if f.startswith("context_key_destructor!site_")), None)
        if site:
            spans.setdefault(site.split("!")[1], set()).add(e["values"]["spanId"])
    assert spans == {"site_a": {1}, "site_a_destructor": {1}, "site_b": {2}}


def one_line_usage_error(result, *words):
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("nmprof: ") and len(result.stderr.splitlines()) <= 2, result.stderr
    for w in words:
        assert w in result.stderr, result.stderr


@pytest.mark.parametrize("args, words", [
    (["--tag", "novalue"], ["bad tag 'novalue'"]),
    (["--tag", "=v"], ["bad tag '=v'"]),
    (["--context-attributes", "a,b,c,d,e,f,g,h,i"], ["too many context attributes (at most 8)"]),
    (["--context-attributes", "route,,tenant"], ["bad context attribute name ''"]),
    (["--context-attributes", ""], ["bad context attribute name ''"]),
    (["--context-attributes", "route,route"], ["declared twice"]),
    (["--context-attributes", "size"], ["is a field of profiler.Malloc"]),
    (["--context-attributes", "route,allocator"], ["context attribute name 'allocator' is a field of profiler.Malloc"]),
    (["--context-attributes", "http.route"], ["bad context attribute name 'http.route'"]),
])
def test_bad_context_options(nmprof, tmp_path, args, words):
    one_line_usage_error(run(nmprof, "run", *args, "-o", tmp_path / "a.jfr", "--", "true"), *words)
    # attach checks them before looking for the JVM
    one_line_usage_error(run(nmprof, "attach", "999999", *args), *words)
    one_line_usage_error(run(nmprof, "attach", "999999", "start", *args), *words)


@pytest.mark.parametrize("args, words", [
    (["--tag", "route"], ["bad tag 'route'"]),
    (["--by", "attribute:"], ["--by takes"]),
    (["--by", "tenant"], ["--by takes"]),
])
def test_bad_report_options(nmprof, recording, args, words):
    one_line_usage_error(run(nmprof, "report", recording, *args), *words)
