#!/usr/bin/env python3
"""The HTML flame graph on a large profile: the page's size (and its data's, by part),
the time `nmprof report -o page.html` takes, and in headless chromium the time to parse
the data and draw the page, and to redraw it for the callers' view, a time range, a
moment and a search (medians of --repeat loads, each in a fresh browser).

    bench/flame_graph_page.py --build build [--stacks 10000] [--rounds 40] [--nativemem 8k] [--repeat 5]
                              [--recording FILE.jfr]

The recording is bench/many_stacks under `nmprof run` (made once, kept when
--recording names an existing file): STACKS distinct stacks of ~log2(STACKS) frames.
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from browser import Browser  # noqa: E402

INTERACTIONS = {
    "callers (first time)": "state.inverted = true; update()",
    "callers, live at the end": "state.view = 'live'; update()",
    "time range": "state.inverted = false; state.view = 'allocated'; state.from = 10; state.to = 60; update()",
    "moment": "state.from = 0; state.to = 80; state.view = 'live'; update()",
    "search": "state.search = 'right'; update()",
}


def cpu_seconds(cmd):
    """Wall and user+system CPU seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic() - start, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def data_of(page):
    text = page.read_text()
    start = text.index('type="application/json">') + len('type="application/json">')
    return text[start:text.index("</script>", start)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build", type=Path)
    parser.add_argument("--recording", type=Path, help="reuse this file when it exists, else make it there")
    parser.add_argument("--stacks", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--nativemem", default="8k")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    work = tempfile.TemporaryDirectory()
    nmprof = args.build / "bin" / "nmprof"
    recording = args.recording or Path(work.name) / "many.jfr"
    if not recording.exists():
        subprocess.run([nmprof, "run", "-q", "--nativemem", args.nativemem, "-o", recording, "--",
                        args.build / "bench" / "many_stacks", str(args.stacks), str(args.rounds)],
                       check=True, stdout=subprocess.DEVNULL)
    page = Path(work.name) / "page.html"
    writes = [cpu_seconds([nmprof, "report", recording, "-o", page]) for _ in range(args.repeat)]
    texts = [cpu_seconds([nmprof, "report", recording, "-o", Path(work.name) / "report.txt"])
             for _ in range(args.repeat)]

    data = json.loads(data_of(page))
    rows = len(data["rows"]) // (1 + 3 * len(data["columns"]))
    print(f"recording: {recording} ({recording.stat().st_size / 1e6:.1f} MB), {rows} stacks in the page, "
          f"{len(data['nodes']) // 3} tree nodes, {sum(len(c) for c in data.get('cells', [])) // 4} time cells "
          f"in {data['time']['bins'] if 'time' in data else 0} bins")
    print(f"page: {page.stat().st_size / 1e6:.2f} MB; data by part (kB): " +
          ", ".join(f"{k} {len(json.dumps(v, separators=(',', ':'))) / 1e3:.0f}" for k, v in data.items()
                    if len(json.dumps(v)) > 1000))
    print(f"nmprof report -o page.html: {statistics.median(w for w, _ in writes):.2f} s wall, "
          f"{statistics.median(c for _, c in writes):.2f} s CPU (a text report: "
          f"{statistics.median(c for _, c in texts):.2f} s CPU)")

    timings = {"parse and set up": [], "first draw": [], "to ready (wall)": [], **{k: [] for k in INTERACTIONS}}
    for i in range(args.repeat):
        with Browser(Path(work.name) / f"chromium{i}", 1300, 900) as browser:
            start = time.monotonic()
            browser.open(page.as_uri())
            timings["to ready (wall)"].append((time.monotonic() - start) * 1000)
            first = browser.eval("window.nmprofTimings")
            timings["parse and set up"].append(first["load"])
            timings["first draw"].append(first["render"])
            for name, script in INTERACTIONS.items():
                timings[name].append(browser.eval(
                    f"(() => {{ const t = performance.now(); {script}; return performance.now() - t; }})()"))
            assert not browser.errors, browser.errors
    print(f"in chromium (medians of {args.repeat}, ms): " +
          ", ".join(f"{k} {statistics.median(v):.0f}" for k, v in timings.items()))


if __name__ == "__main__":
    main()
