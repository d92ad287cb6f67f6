"""The agent in every GOT shape a program can have (issue 38): PIE and non-PIE, lazy
and immediate binding, -fno-plt, functions whose address the program takes (in a
non-PIE executable their PLT entries become their canonical addresses, which every
library's slots then hold), and Debian's own programs, which must run under
`nmprof run` as they run alone."""

import itertools
import os
import shutil
import subprocess

import pytest

from conftest import jfr_events, report_json, run

SIZES = [1111, 3 * 777, 2222, 5 * 999, 3333, 4416, 5555, 6666, 7777, 8888, 100, 12345]

SHAPES = list(itertools.product(("pie", "no-pie"), ("lazy", "now"), ("plt", "no-plt"), ("called", "address-taken")))


@pytest.mark.parametrize("pie,binding,plt,use", SHAPES, ids=["-".join(s) for s in SHAPES])
def test_every_allocation_function_in_every_got_shape(nmprof, programs, tmp_path, pie, binding, plt, use):
    flags = ["-fPIE", "-pie"] if pie == "pie" else ["-fno-pic", "-no-pie"]
    flags.append(f"-Wl,-z,{binding}")
    if plt == "no-plt":
        flags.append("-fno-plt")
    if use == "address-taken":
        flags.append("-DTAKE_ADDRESSES")
    program = programs.c("got_shapes.c", *flags)
    alone = subprocess.run([program], capture_output=True, text=True, timeout=30)
    assert alone.returncode == 0 and alone.stdout == "same malloc\n"

    out = tmp_path / "shape.jfr"
    result = run(nmprof, "run", "--nativemem", "0", "-q", "-o", out, "--", program, timeout=60)
    assert (result.returncode, result.stdout) == (0, alone.stdout), result.stderr
    sizes = [e["values"]["size"] for e in jfr_events(out, "profiler.Malloc")]
    for size in SIZES:
        assert sizes.count(size) == 1, (size, sorted(sizes))
    # Every one of them was freed, through the hooked free: only stdout's buffer is left.
    live = report_json(nmprof, out, "--live")["live"]
    assert (live["matched_frees"], live["estimated_count"]) == (len(SIZES), 1), live


def real_program(*names):
    for name in names:
        path = shutil.which(name, path="/usr/bin:/bin")
        if path:
            return path
    return None


# Programs from Debian's packages, each with arguments that make it print and exit.
# python3 and shellcheck are non-PIE and lazily bound and take malloc's or free's
# address: before issue 38 the first crashed and the second hung under the agent.
DEBIAN_PROGRAMS = [
    ("python3.11", ["-c", "import json, sys; print(json.dumps(sys.version_info[:2]))"]),
    ("perl", ["-e", "print join(',', map { $_ * 2 } 1..5), qq(\\n)"]),
    ("gawk", ["BEGIN { for (i = 0; i < 3; i++) s = s i; print s }"]),
    ("tar", ["--version"]),
    ("gzip", ["--version"]),
    ("git", ["--version"]),
    ("sqlite3", [":memory:", "select 6 * 7;"]),
    ("php", ["-r", "echo str_repeat('ab', 3), PHP_EOL;"]),
    ("node", ["-e", "console.log([1, 2, 3].map(x => x * x).join(' '))"]),
    ("shellcheck", ["--version"]),
]


@pytest.mark.parametrize("name,args", DEBIAN_PROGRAMS, ids=[p[0] for p in DEBIAN_PROGRAMS])
def test_debian_programs_run_as_they_do_alone(nmprof, tmp_path, name, args):
    program = real_program(name)
    if program is None:
        pytest.skip(f"{name} is not installed")
    env = dict(os.environ, LANG="C.UTF-8")
    alone = subprocess.run([program, *args], capture_output=True, text=True, env=env, timeout=60)
    out = tmp_path / "program.jfr"
    profiled = run(nmprof, "run", "-q", "-o", out, "--", program, *args, env=env, timeout=60)
    assert (profiled.returncode, profiled.stdout) == (alone.returncode, alone.stdout), profiled.stderr
    assert out.exists()
