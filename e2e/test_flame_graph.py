"""The HTML flame graph, loaded in a real headless browser (Debian's chromium): no
console errors, the recorded stacks drawn, search with its share, zoom, and the
allocated/live switch, driven through the page's URL fragment."""

import re
import shutil
import subprocess

import pytest

from conftest import report_json, run

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is needed (apt install chromium)")


def load(page, fragment, profile_dir):
    """The DOM once the page's scripts ran, and the browser's console lines."""
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile_dir}",
         "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri() + fragment],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout, [line for line in result.stderr.splitlines() if ":CONSOLE" in line]


def frames(dom):
    """data-path -> style of each drawn frame."""
    return {m.group(1): m.group(2)
            for m in re.finditer(r'<div class="f [^"]*" data-path="([^"]*)" data-share="[^"]*" style="([^"]*)"', dom)}


@pytest.fixture(scope="module")
def page(nmprof, programs, tmp_path_factory):
    directory = tmp_path_factory.mktemp("flame")
    recording = directory / "leak.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", recording, "--", programs.c("live_leak.c"), 2, 4000, check=0)
    out = directory / "leak.html"
    run(nmprof, "report", recording, "-o", out, check=0)
    return recording, out


def test_console_errors_are_seen(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<script>undefinedFunction();</script>")
    _, console = load(broken, "", tmp_path / "profile")
    assert any("Uncaught ReferenceError" in line for line in console), console


def test_page_is_self_contained_and_draws_the_stacks(page, tmp_path):
    _, html = page
    text = html.read_text()
    assert not re.search(r'(src|href)="', text)  # nothing to fetch: it opens from disk
    dom, console = load(html, "", tmp_path / "profile")
    assert not console, console
    drawn = frames(dom)
    leaf = "clone3;start_thread;worker;site_churn"
    assert leaf in drawn and "clone3;start_thread;worker;site_chain_freed;site_chain" in drawn
    assert re.search(r'class="f native"', dom)


def test_live_view_search_and_zoom(nmprof, page, tmp_path):
    recording, html = page
    dom, console = load(html, "#view=live&search=site_leak", tmp_path / "profile")
    assert not console, console
    drawn = frames(dom)
    assert "clone3;start_thread;worker;site_leak" in drawn
    assert "clone3;start_thread;worker;site_churn" not in drawn  # all freed: nothing live
    live = report_json(nmprof, recording, "--live", "--top", "50")
    leak = sum(s["estimated_bytes"] for s in live["stacks"] if s["frames"][0]["function"] == "site_leak")
    share = float(re.search(r'<span id="match">matched [^(]*\(([\d.]+)%\)', dom).group(1))
    assert share == pytest.approx(100 * leak / live["totals"]["estimated_bytes"], abs=0.1)
    assert 'class="f native hit"' in dom

    zoomed = "clone3;start_thread;worker;site_chain_leak"
    dom, console = load(html, "#view=live&zoom=" + zoomed, tmp_path / "profile")
    assert not console, console
    drawn = frames(dom)
    assert "width: 100%" in drawn[zoomed]
    assert "width: 100%" in drawn["clone3;start_thread;worker"]  # what it was called from, above it
    assert "clone3;start_thread;worker;site_leak" not in drawn


def test_diff_page_colours_growth_red_and_shrinkage_green(nmprof, programs, tmp_path):
    def known_totals(name, small, medium):
        out = tmp_path / name
        run(nmprof, "run", "-q", "--nativemem", "16k", "-o", out, "--", programs.c("known_totals.c"), 1, small, medium,
            4, check=0)
        return out

    # site_medium allocates 5 times as much in the new run, site_small 10 times less.
    base = known_totals("base.jfr", 200000, 5000)
    new = known_totals("new.jfr", 20000, 25000)
    html = tmp_path / "diff.html"
    run(nmprof, "report", new, "--diff", base, "-o", html, check=0)
    dom, console = load(html, "", tmp_path / "profile")
    assert not console, console
    drawn = {m.group(1): (int(m.group(2)), m.group(3)) for m in re.finditer(
        r'<div class="f diff" data-path="([^"]*)" data-share="[^"]*" data-change="(-?\d+)" style="([^"]*)"', dom)}
    medium = next(path for path in drawn if path.endswith(";work;site_medium"))
    small = next(path for path in drawn if path.endswith(";work;site_small"))
    growth = 20000 * 3000
    change, style = drawn[medium]
    assert abs(change - growth) < 0.2 * growth
    assert re.search(r"background: rgb\(255, (\d+), \1\)", style), style  # red
    change, style = drawn[small]
    assert change < 0
    assert re.search(r"background: rgb\((\d+), 255, \1\)", style), style  # green
    assert re.search(r'<span id="total">allocated: [^<]*, change \+', dom), dom


# Hostile testing, item 4: recorded text that would change how the browser reads the
# data script ("<!--<script" put it into a state where "</script>" no longer ends it:
# a blank page) stays data; the title shows it as text.
def test_a_name_that_opens_a_script_comment_does_not_blank_the_page(nmprof, programs, tmp_path):
    hostile = tmp_path / "<!--<script>&\u2028\u2029>"  # in the command line: the page's title
    hostile.mkdir()
    program = shutil.copy(programs.c("live_leak.c"), hostile)
    recording = tmp_path / "hostile.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", recording, "--", program, 2, 4000, check=0)
    html = tmp_path / "hostile.html"
    run(nmprof, "report", recording, "-o", html, check=0)
    data = html.read_text().split('<script id="data" type="application/json">')[1].split("</script>")[0]
    assert not set("<>&\u2028\u2029") & set(data), data[:200]
    dom, console = load(html, "", tmp_path / "profile")
    assert not console, console
    assert "clone3;start_thread;worker;site_churn" in frames(dom)
    assert "&lt;!--&lt;script&gt;&amp;" in dom
