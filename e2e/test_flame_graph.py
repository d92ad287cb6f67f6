"""The HTML flame graph, loaded in a real headless browser (Debian's chromium, driven
over the DevTools protocol: e2e/browser.py): no console errors, the recorded stacks
drawn, search with its share, zoom, the views (allocated, live at the end, live at the
peak, a time range or a moment selected on the chart), the callers' view, colours by
library with their legend, tooltips, the notice of what is too narrow to draw, the
chart's peak marker, and --diff's normalised colours; checked against `nmprof report`'s
JSON and against the pixels of screenshots."""

import re
import shutil
from urllib.parse import parse_qs

import pytest

from browser import CHROMIUM, Browser, rgb
from conftest import report_json, run

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is needed (apt install chromium)")

FRAMES = """[...document.querySelectorAll('#graph .f')].map(d => {
  const r = d.getBoundingClientRect();
  return {path: d.dataset.path, n: d.textContent, share: +d.dataset.share, change: d.dataset.change,
          category: d.dataset.category, background: d.style.background, left: r.left, right: r.right,
          top: r.top, bottom: r.bottom, width: d.style.width};
})"""


def frames(browser):
    """path -> what the page drew for it."""
    return {f["path"]: f for f in browser.eval(FRAMES)}


def hash_params(browser):
    return {k: v[0] for k, v in parse_qs(browser.eval("location.hash.slice(1)")).items()}


def total(browser):
    return int(browser.eval("document.getElementById('total').dataset.bytes"))


def leaf(path):
    return path.rsplit(";", 1)[-1]


def seconds_before(ns):
    """A --to TIME one nanosecond before ns (what a bin ending at ns takes in)."""
    return f"{(ns - 1) / 1e9:.9f}s"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with Browser(tmp_path_factory.mktemp("chromium")) as b:
        yield b


@pytest.fixture(autouse=True)
def no_errors(browser):
    browser.errors.clear()
    yield
    assert not browser.errors, browser.errors


@pytest.fixture(scope="module")
def page(nmprof, programs, tmp_path_factory):
    directory = tmp_path_factory.mktemp("flame")
    recording = directory / "leak.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", recording, "--", programs.c("live_leak.c"), 2, 4000, check=0)
    out = directory / "leak.html"
    run(nmprof, "report", recording, "-o", out, check=0)
    return recording, out


@pytest.fixture(scope="module")
def phases(nmprof, programs, tmp_path_factory):
    """A run whose live memory peaks in its middle, every allocation sampled (exact
    totals), with frames in the program, libc and libpeak_codec.so."""
    directory = tmp_path_factory.mktemp("phases")
    codec = programs.shared("peak_codec.c")
    program = programs.c("peak_phases.c", libs=(str(codec), f"-Wl,-rpath,{codec.parent}"))
    recording = directory / "phases.jfr"
    run(nmprof, "run", "-q", "--nativemem", "0", "-o", recording, "--", program, 2000, check=0)
    out = directory / "phases.html"
    run(nmprof, "report", recording, "-o", out, check=0)
    return recording, out


def test_console_errors_are_seen(browser, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<script>undefinedFunction();</script><body data-ready=1>")
    browser.open(broken.as_uri())
    assert any("ReferenceError" in e for e in browser.errors), browser.errors
    browser.errors.clear()


def test_page_is_self_contained_and_draws_the_stacks(browser, page):
    _, html = page
    text = html.read_text()
    assert not re.search(r'(src|href)="', text)  # nothing to fetch: it opens from disk
    browser.open(html.as_uri())
    drawn = frames(browser)
    assert "clone3;start_thread;worker;site_churn" in drawn
    assert "clone3;start_thread;worker;site_chain_freed;site_chain" in drawn
    assert hash_params(browser)["view"] == "allocated"  # much was left live: the page opens on what was allocated


def test_live_view_search_and_zoom(nmprof, browser, page):
    recording, html = page
    browser.open(html.as_uri() + "#view=live&search=site_leak")
    drawn = frames(browser)
    assert "clone3;start_thread;worker;site_leak" in drawn
    assert "clone3;start_thread;worker;site_churn" not in drawn  # all freed: nothing live
    live = report_json(nmprof, recording, "--live", "--top", "50")
    leak = sum(s["estimated_bytes"] for s in live["stacks"] if s["frames"][0]["function"] == "site_leak")
    share = float(re.search(r"matched [^(]*\(([\d.]+)%\)", browser.eval("document.getElementById('match').textContent")).group(1))
    assert share == pytest.approx(100 * leak / live["totals"]["estimated_bytes"], abs=0.1)
    assert browser.eval("document.querySelectorAll('#graph .f.hit').length") >= 1

    zoomed = "clone3;start_thread;worker;site_chain_leak"
    browser.open(html.as_uri() + "#view=live&zoom=" + zoomed)
    drawn = frames(browser)
    assert drawn[zoomed]["width"] == "100%"
    assert drawn["clone3;start_thread;worker"]["width"] == "100%"  # what it was called from, above it
    assert "clone3;start_thread;worker;site_leak" not in drawn


def test_colours_are_the_legends_for_each_library(browser, phases, tmp_path):
    _, html = phases
    browser.open(html.as_uri() + "#view=allocated")
    legend = browser.eval("""[...document.querySelectorAll('#legend .key')].map(k => ({
        name: k.childNodes[1].textContent, category: k.dataset.category,
        colour: getComputedStyle(k.querySelector('i')).backgroundColor}))""")
    by_name = {k["name"]: k for k in legend}
    assert {"peak_phases", "libpeak_codec.so", "libc.so.6"} <= set(by_name), legend
    colours = [by_name[n]["colour"] for n in ("peak_phases", "libpeak_codec.so", "libc.so.6")]
    assert len(set(colours)) == 3, colours
    drawn = frames(browser)
    library_of = {"site_cache": "peak_phases", "load": "peak_phases", "main": "peak_phases",
                  "codec_decode": "libpeak_codec.so", "__libc_start_main": "libc.so.6"}
    for path, f in drawn.items():
        if leaf(path) in library_of:
            assert f["category"] == by_name[library_of[leaf(path)]]["category"], path
            assert rgb(f["background"]) == rgb(by_name[library_of[leaf(path)]]["colour"]), path

    # On screen: a point of the codec's frame, right of its name, is the legend's colour.
    codec = next(f for p, f in drawn.items() if p.endswith(";load;codec_decode"))
    browser.mouse("mouseMoved", 1, 1)
    image = browser.screenshot(tmp_path / "colours.png")
    assert image.pixel(codec["right"] - 4, (codec["top"] + codec["bottom"]) / 2) == rgb(by_name["libpeak_codec.so"]["colour"])
    cache = next(f for p, f in drawn.items() if p.endswith(";load;site_cache"))
    assert image.pixel(cache["right"] - 4, (cache["top"] + cache["bottom"]) / 2) == rgb(by_name["peak_phases"]["colour"])


def test_tooltip_tells_library_source_self_and_total(nmprof, browser, phases):
    recording, html = phases
    browser.open(html.as_uri() + "#view=allocated")
    load = next(f for p, f in frames(browser).items() if p.endswith(";main;load"))
    browser.mouse("mouseMoved", load["left"] + 30, (load["top"] + load["bottom"]) / 2)
    tip = browser.eval("document.getElementById('tip').innerText")
    assert tip.startswith("load\n"), tip
    assert re.search(r"library\s+peak_phases \(native\)", tip), tip
    assert re.search(r"source\s+\S*peak_phases\.c:\d+", tip), tip
    report = report_json(nmprof, recording, "--top", "1000")
    through_load = [s for s in report["stacks"] if any(f["function"] == "load" for f in s["frames"])]
    expected_bytes = sum(s["estimated_bytes"] for s in through_load)
    expected_count = sum(s["estimated_count"] for s in through_load)
    total_line = re.search(r"total\s+([\d.]+) (B|KiB|MiB) \u00b7 ([\d.]+)% of the view \u00b7 ~([\d,]+) allocations", tip)
    assert total_line, tip
    value, unit, share, allocations = total_line.groups()
    assert float(value) * {"B": 1, "KiB": 1024, "MiB": 1 << 20}[unit] == pytest.approx(expected_bytes, rel=0.01)
    assert float(share) == pytest.approx(100 * expected_bytes / report["allocated"]["estimated_bytes"], abs=0.1)
    assert int(allocations.replace(",", "")) == round(expected_count)  # every allocation sampled: exact
    assert "self" not in tip  # load allocates nothing itself

    site = next(f for p, f in frames(browser).items() if p.endswith(";load;site_cache"))
    browser.mouse("mouseMoved", site["left"] + 10, (site["top"] + site["bottom"]) / 2)
    tip = browser.eval("document.getElementById('tip').innerText")
    # 2,000 blocks of 4 KiB, every one sampled
    assert re.search(r"self\s+7\.81 MiB \u00b7 [\d.]+% of the view \u00b7 ~2,000 allocations \(in it\)", tip), tip


def test_tooltip_gives_a_sampled_estimate_its_interval(nmprof, browser, page, phases):
    """At 64 KiB the whole's tooltip shows the interval the JSON report gives its
    allocated bytes (variances add up the tree); every allocation recorded, none."""
    recording, html = page
    browser.open(html.as_uri() + "#view=allocated")
    root = next(f for p, f in frames(browser).items() if not p)
    browser.mouse("mouseMoved", root["left"] + 30, (root["top"] + root["bottom"]) / 2)
    tip = browser.eval("document.getElementById('tip').innerText")
    margin = re.search(r"total\s+[\d.]+ \S+ \u00b1 ([\d.]+) (B|KiB|MiB) \u00b7", tip)
    assert margin, tip
    expected = report_json(nmprof, recording)["allocated"]["bytes_margin"]
    assert expected > 0
    value, unit = margin.groups()
    assert float(value) * {"B": 1, "KiB": 1024, "MiB": 1 << 20}[unit] == pytest.approx(expected, rel=0.01)
    _, exact = phases
    browser.open(exact.as_uri() + "#view=allocated")
    root = next(f for p, f in frames(browser).items() if not p)
    browser.mouse("mouseMoved", root["left"] + 30, (root["top"] + root["bottom"]) / 2)
    assert "\u00b1" not in browser.eval("document.getElementById('tip').innerText")


def test_callers_view_starts_from_the_allocating_functions(browser, phases):
    _, html = phases
    browser.open(html.as_uri() + "#view=allocated&inverted=1")
    drawn = frames(browser)
    first = {p for p in drawn if p.count(";") == 0 and p}
    assert {"codec_decode", "site_cache", "site_leak"} <= first, first
    assert "load" not in first and "main" not in first
    assert "codec_decode;load;main;__libc_start_call_main" in drawn
    assert "codec_decode;main;__libc_start_call_main" in drawn  # decoding after the cache was freed
    assert browser.eval("document.getElementById('inverted').checked")


def test_hidden_frames_are_counted_with_their_bytes(nmprof, browser, phases):
    recording, html = phases
    browser.open(html.as_uri() + "#view=allocated")
    report = report_json(nmprof, recording, "--top", "100000")
    # The tree of stacks by function name, and the subtrees narrower than 0.1% whose
    # parent is wide enough to be drawn.
    tree = {}
    for s in report["stacks"]:
        node = tree
        for f in reversed(s["frames"]):
            child = node.setdefault(f["function"], {"bytes": 0, "children": {}})
            child["bytes"] += s["estimated_bytes"]
            node = child["children"]
    whole = report["allocated"]["estimated_bytes"]
    hidden = []

    def walk(children):
        for child in children.values():
            if child["bytes"] / whole < 0.001:
                hidden.append(child["bytes"])
            else:
                walk(child["children"])
    walk(tree)
    assert hidden, "the recording has no frame too narrow to draw"
    notice = browser.eval("Object.assign({text: document.getElementById('hidden').textContent}, document.getElementById('hidden').dataset)")
    assert int(notice["frames"]) == len(hidden), notice
    assert int(notice["bytes"]) == pytest.approx(sum(hidden), abs=len(hidden)), notice
    assert notice["text"].startswith(f"not drawn: {len(hidden)} frame"), notice


def test_peak_view_is_the_default_when_little_was_left_and_matches_report_peak(nmprof, browser, phases, tmp_path):
    recording, html = phases
    peak = report_json(nmprof, recording, "--peak")
    end = report_json(nmprof, recording, "--live")
    assert peak["view"] == "peak"
    assert end["totals"]["estimated_bytes"] < peak["totals"]["estimated_bytes"] / 4
    browser.open(html.as_uri())
    assert hash_params(browser)["view"] == "peak"
    assert total(browser) == pytest.approx(peak["totals"]["estimated_bytes"], abs=2)
    status = browser.eval("document.getElementById('total').textContent")
    assert status.startswith("live at the peak, "), status
    assert any(p.endswith(";load;site_cache") for p in frames(browser))
    browser.open(html.as_uri() + "#view=live")
    assert total(browser) == pytest.approx(end["totals"]["estimated_bytes"], abs=2)
    assert not any(p.endswith(";load;site_cache") for p in frames(browser))  # the cache was freed

    # The chart's marker: where the report says the peak was, and on screen in its red.
    mark = browser.eval("""(() => { const c = document.getElementById('peak-mark'), box = document.getElementById('chart')
        .getBoundingClientRect(); return {x: box.left + +c.getAttribute('cx'), y: box.top + +c.getAttribute('cy'),
        left: box.left, width: box.width, start: data.time.start, span: data.time.bins * data.time.bin}; })()""")
    at = peak["peak"]["seconds"] * 1e9
    assert mark["x"] == pytest.approx(mark["left"] + (at - mark["start"]) / mark["span"] * mark["width"], abs=1)
    highest = browser.eval("Math.min(...document.querySelector('#chart path[stroke]').getAttribute('d')"
                           ".match(/[\\d.]+ [\\d.]+/g).map(p => +p.split(' ')[1]))")
    assert mark["y"] - browser.eval("document.getElementById('chart').getBoundingClientRect().top") == pytest.approx(highest, abs=0.5)
    browser.mouse("mouseMoved", 1, 1)
    image = browser.screenshot(tmp_path / "peak.png")
    assert image.pixel(mark["x"], mark["y"]) == (209, 36, 47)

    # Clicking the chart where the peak is opens the peak view again.
    browser.click(mark["x"], mark["y"] + 30)
    assert hash_params(browser)["view"] == "peak"


def test_the_chart_says_its_live_line_is_an_upper_bound_when_the_tracking_table_overflowed(
        nmprof, browser, programs, page, tmp_path):
    """As the text's live lines do (issue 39): past an overflow of --maxtracked the frees
    of the untracked samples are never seen."""
    recording = tmp_path / "capped.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "--maxtracked", 50, "-o", recording, "--",
        programs.c("live_leak.c"), 1, 20000, check=0)
    assert report_json(nmprof, recording)["processes"][0]["statistics"]["untracked_samples"] > 0
    chart_texts = "[...document.querySelectorAll('#chart text')].map(t => t.textContent)"
    for path, overflowed in ((recording, True), (page[0], False)):
        html = tmp_path / (path.stem + ".html")
        run(nmprof, "report", path, "-o", html, check=0)
        browser.open(html.as_uri())
        texts = browser.eval(chart_texts)
        live = [t for t in texts if t.startswith("live, up to ")]
        assert len(live) == 1, texts
        assert live[0].endswith(" (at most: the tracking table overflowed)") == overflowed, texts


def test_chart_moment_and_range_match_the_report_at_those_times(nmprof, browser, phases):
    recording, html = phases
    browser.open(html.as_uri() + "#view=allocated")
    box = browser.eval("(() => { const r = document.getElementById('chart').getBoundingClientRect();"
                       " return {left: r.left, top: r.top, width: r.width}; })()")
    middle = box["top"] + 60

    browser.click(box["left"] + box["width"] * 0.9, middle)  # after the cache was freed
    params = hash_params(browser)
    assert params["view"] == "live" and "from" not in params
    at_ns = round(float(params["to"]) * 1e9)
    expected = report_json(nmprof, recording, "--live", "--to", seconds_before(at_ns))
    assert total(browser) == pytest.approx(expected["totals"]["estimated_bytes"], abs=2)
    assert browser.eval("document.getElementById('moment') !== null")

    browser.drag(box["left"] + box["width"] * 0.05, box["left"] + box["width"] * 0.5, middle)
    params = hash_params(browser)
    assert params["view"] == "allocated"
    from_ns, to_ns = round(float(params.get("from", 0)) * 1e9), round(float(params["to"]) * 1e9)
    window = ["--from", f"{from_ns / 1e9:.9f}s", "--to", seconds_before(to_ns)]
    expected = report_json(nmprof, recording, *window)
    assert total(browser) == pytest.approx(expected["allocated"]["estimated_bytes"], abs=2)
    assert total(browser) > 0
    browser.eval("(() => { const v = document.getElementById('view'); v.value = 'live'; v.onchange({target: v}); })()")
    expected = report_json(nmprof, recording, "--live", *window)
    assert total(browser) == pytest.approx(expected["totals"]["estimated_bytes"], abs=2)
    assert browser.eval("document.getElementById('view').selectedOptions[0].text").startswith("of it, live at ")


def test_diff_is_normalised_red_grew_blue_shrank(nmprof, programs, browser, tmp_path):
    def known_totals(name, small, medium, large):
        out = tmp_path / name
        run(nmprof, "run", "-q", "--nativemem", "0", "-o", out, "--", programs.c("known_totals.c"), 1, small, medium,
            large, check=0)
        return out

    # site_medium allocates 5 times as much in the new run, site_small 10 times less,
    # site_large nothing.
    base = known_totals("base.jfr", 200000, 5000, 4)
    new = known_totals("new.jfr", 20000, 25000, 0)
    html = tmp_path / "diff.html"
    run(nmprof, "report", new, "--diff", base, "-o", html, check=0)

    def site_bytes(report, site):
        return sum(s["estimated_bytes"] for s in report["stacks"] if s["frames"][0]["function"] == site)
    reports = [report_json(nmprof, r, "--top", "1000") for r in (base, new)]
    factor = reports[1]["allocated"]["estimated_bytes"] / reports[0]["allocated"]["estimated_bytes"]

    browser.open(html.as_uri())
    drawn = frames(browser)
    assert browser.eval("document.getElementById('norm').checked")
    for site in ("site_medium", "site_small"):
        path = next(p for p in drawn if p.endswith(";work;" + site))
        normalised = site_bytes(reports[1], site) - factor * site_bytes(reports[0], site)
        assert int(drawn[path]["change"]) == pytest.approx(normalised, abs=2), site
    medium = next(f for p, f in drawn.items() if p.endswith(";work;site_medium"))
    small = next(f for p, f in drawn.items() if p.endswith(";work;site_small"))
    red, green, blue = rgb(medium["background"])
    assert red > 200 and red > green + 60 and red > blue + 60, medium  # grew, once scaled: red
    red, green, blue = rgb(small["background"])
    assert blue > 180 and blue > red + 60, small  # shrank: blue
    note = browser.eval("document.getElementById('norm-note').textContent")
    assert f"\u00d7{factor:.3f}" in note, note
    gone = re.search(r"gone since the base \(not drawn\): 1 stack, ([\d.]+) MiB", note)
    assert gone, note  # site_large, which has no width in the new recording
    assert float(gone.group(1)) == pytest.approx(factor * site_bytes(reports[0], "site_large") / (1 << 20), rel=0.005)
    assert browser.eval("document.querySelector('#legend .bar') !== null")

    browser.open(html.as_uri() + "#norm=0")
    drawn = frames(browser)
    path = next(p for p in drawn if p.endswith(";work;site_medium"))
    raw = site_bytes(reports[1], "site_medium") - site_bytes(reports[0], "site_medium")
    assert int(drawn[path]["change"]) == pytest.approx(raw, abs=2)
    assert not browser.eval("document.getElementById('norm').checked")
    assert "as recorded" in browser.eval("document.getElementById('norm-note').textContent")


# Hostile testing, item 4: recorded text that would change how the browser reads the
# data script ("<!--<script" put it into a state where "</script>" no longer ends it:
# a blank page) stays data; the title shows it as text.
def test_a_name_that_opens_a_script_comment_does_not_blank_the_page(nmprof, programs, browser, tmp_path):
    hostile = tmp_path / "<!--<script>&\u2028\u2029>"  # in the command line: the page's title
    hostile.mkdir()
    program = shutil.copy(programs.c("live_leak.c"), hostile)
    recording = tmp_path / "hostile.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", recording, "--", program, 2, 4000, check=0)
    html = tmp_path / "hostile.html"
    run(nmprof, "report", recording, "-o", html, check=0)
    data = html.read_text().split('<script id="data" type="application/json">')[1].split("</script>")[0]
    assert not set("<>&\u2028\u2029") & set(data), data[:200]
    browser.open(html.as_uri())
    assert "clone3;start_thread;worker;site_churn" in frames(browser)
    assert "<!--<script>&" in browser.eval("document.getElementById('title').textContent")
