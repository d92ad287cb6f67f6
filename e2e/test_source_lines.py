"""File and line of native frames, from DWARF line tables read when reporting: the
program's own .debug_line, or a separate debug file found through its debuglink;
shown as `function (file.c:42)` in text and carried into pprof."""

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROGRAMS, jfr_events, report_json, run


def line_of(source, text):
    """The 1-based line of the first line of `source` containing `text`."""
    for number, line in enumerate((PROGRAMS / source).read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {source}")


def record(nmprof, program, out):
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", program, 1, 2000, check=0)
    return run(nmprof, "report", out, "--live", "--top", "5", check=0).stdout


def test_text_report_points_at_the_allocating_lines(nmprof, programs, tmp_path):
    text = record(nmprof, programs.c("live_leak.c"), tmp_path / "leak.jfr")
    leak = line_of("live_leak.c", "void site_leak(void) { keep(malloc(")
    call = line_of("live_leak.c", "    site_leak();")
    assert re.search(rf"site_leak \(live_leak\.c:{leak}\)\s.*\n\s+worker \(live_leak\.c:{call}\)", text), text
    chain = line_of("live_leak.c", "p = realloc(p, final")
    assert f"site_chain (live_leak.c:{chain})" in text, text


def debuglinked_program(programs, tmp_path):
    """live_leak without DWARF, and its debug file beside it, named by its debuglink."""
    program = tmp_path / "stripped_leak"
    shutil.copy(programs.c("live_leak.c"), program)
    debug = tmp_path / "stripped_leak.debug"
    subprocess.run(["objcopy", "--only-keep-debug", str(program), str(debug)], check=True)
    subprocess.run(["objcopy", "--strip-debug", f"--add-gnu-debuglink={debug}", str(program)], check=True)
    return program, debug


def test_separate_debug_file_through_debuglink(nmprof, programs, tmp_path):
    program, debug = debuglinked_program(programs, tmp_path)
    assert b".debug_line" not in program.read_bytes()
    out = tmp_path / "stripped.jfr"
    text = record(nmprof, program, out)
    leak = line_of("live_leak.c", "void site_leak(void) { keep(malloc(")
    assert f"site_leak (live_leak.c:{leak})" in text, text

    debug.unlink()  # without it, names only: no invented lines
    text = run(nmprof, "report", out, "--live", check=0).stdout
    assert re.search(r"site_leak\s+stripped_leak\n", text), text


def stripped_program(programs, tmp_path):
    """live_leak without DWARF nor debuglink: libdw looks for stripped_leak.debug beside it,
    in .debug/ beside it and under /usr/lib/debug."""
    program = tmp_path / "stripped_leak"
    shutil.copy(programs.c("live_leak.c"), program)
    subprocess.run(["objcopy", "--strip-debug", str(program)], check=True)
    return program


def opened_files(trace, nmprof, *args, env=None):
    """The files nmprof and what it ran opened (strace writes `trace`)."""
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-e", "signal=none", "-o", str(trace), str(nmprof),
                    *map(str, args)], env=env, capture_output=True, timeout=120, check=False)
    opened = set()
    for line in trace.read_text().splitlines():
        found = re.search(r'openat\(AT_FDCWD, "([^"]+)", [^)]*\) = \d+$', line)
        if found:
            opened.add(found.group(1))
    return opened


def test_a_fifo_where_a_debug_file_is_looked_for_blocks_no_report(nmprof, programs, tmp_path):
    # A directory others can write to (/tmp) is where such a FIFO could be put.
    program = stripped_program(programs, tmp_path)
    out = tmp_path / "fifo.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", program, 1, 2000, check=0)
    (tmp_path / ".debug").mkdir()
    for fifo in (tmp_path / "stripped_leak.debug", tmp_path / ".debug" / "stripped_leak.debug"):
        os.mkfifo(fifo)
    text = run(nmprof, "report", out, "--live", timeout=60, check=0).stdout
    assert re.search(r"site_leak\s+stripped_leak\n", text), text


def test_a_fifo_named_as_the_program_where_libdw_looks_blocks_no_report(nmprof, programs, tmp_path):
    """Without a debuglink, libdw looks for the file's own name too (.debug/stripped_leak,
    /usr/lib/debug/DIR/stripped_leak), once anything else says it may find a debug file:
    a stale debug file beside the program, or debuginfod servers. Before: the report
    waited forever in open() on the FIFO."""
    program = stripped_program(programs, tmp_path)
    out = tmp_path / "fifo.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", program, 1, 2000, check=0)
    (tmp_path / ".debug").mkdir()
    os.mkfifo(tmp_path / ".debug" / "stripped_leak")
    (tmp_path / "stripped_leak.debug").write_bytes(b"not the debug file")  # a regular file libdw rejects
    text = run(nmprof, "report", out, "--live", timeout=30, check=0).stdout
    assert re.search(r"site_leak\s+stripped_leak\n", text), text
    (tmp_path / "stripped_leak.debug").unlink()
    env = dict(os.environ, DEBUGINFOD_URLS="http://127.0.0.1:9/", XDG_CACHE_HOME=str(tmp_path / "cache"))
    text = run(nmprof, "report", out, "--live", timeout=30, check=0, env=env).stdout
    assert re.search(r"site_leak\s+stripped_leak\n", text), text


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is needed")
def test_run_reads_debug_files_only_for_a_summary_that_shows_stacks(nmprof, programs, tmp_path):
    program, debug = debuglinked_program(programs, tmp_path)
    trace = tmp_path / "openat.trace"
    command = ["--nativemem", "64k", "-o", tmp_path / "leak.jfr", "--", program, 1, 2000]
    assert str(debug) in opened_files(trace, nmprof, "run", *command)  # the summary's stacks have their lines
    # Quiet, into a .jfr: no stack is shown.
    assert str(debug) not in opened_files(trace, nmprof, "run", "-q", *command)


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is needed")
@pytest.mark.skipif(not glob.glob("/usr/lib/*/libdebuginfod.so.1"), reason="libdebuginfod1 is needed")
def test_debuginfod_client_is_loaded_only_when_servers_are_configured(nmprof, programs, tmp_path):
    program = stripped_program(programs, tmp_path)
    out = tmp_path / "leak.jfr"
    run(nmprof, "run", "-q", "--nativemem", "64k", "-o", out, "--", program, 1, 2000, check=0)
    env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
    trace = tmp_path / "openat.trace"
    client = re.compile(r"/libdebuginfod[-.][^/]*so")
    assert not any(client.search(f) for f in opened_files(trace, nmprof, "report", out, env=env))
    # A server that refuses at once: the client is loaded, and asks it.
    env.update(DEBUGINFOD_URLS="http://127.0.0.1:9/", XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert any(client.search(f) for f in opened_files(trace, nmprof, "report", out, env=env))


@pytest.mark.skipif(shutil.which("go") is None, reason="go tool pprof is needed")
def test_pprof_carries_file_line_and_build_id(nmprof, programs, tmp_path):
    out = tmp_path / "leak.jfr"
    record(nmprof, programs.c("live_leak.c"), out)
    profile = tmp_path / "leak.pb.gz"
    run(nmprof, "report", out, "-o", profile, check=0)
    raw = subprocess.run(["go", "tool", "pprof", "-raw", str(profile)], capture_output=True, text=True,
                         check=True).stdout
    leak = line_of("live_leak.c", "void site_leak(void) { keep(malloc(")
    assert re.search(rf" site_leak \S*/live_leak\.c:{leak} ", raw), raw
    notes = subprocess.run(["readelf", "-n", str(programs.c("live_leak.c"))], capture_output=True, text=True,
                           check=True).stdout
    build_id = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
    assert re.search(rf"^1: \S+ \S*/live_leak {build_id} \[FN\]$", raw, re.M), raw  # the program's mapping
    # pprof looks the source up relative to -source_path (by default the working directory).
    listing = subprocess.run(["go", "tool", "pprof", "-source_path", str(PROGRAMS.parent), "-list", "site_leak",
                              str(profile)], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"\s{leak}:__attribute__", listing), listing


def addr2line_chain(program, return_address):
    """What `addr2line -i -f -C` says of the call before a return address: (function,
    file, line) of each function inlined there, innermost first, then of the caller."""
    out = subprocess.run(["addr2line", "-i", "-f", "-C", "-e", str(program), hex(return_address - 1)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    chain = []
    for function, location in zip(out[0::2], out[1::2]):
        file, line = re.match(r"(.*):(\d+|\?)", location).groups()  # "??:?" without DWARF
        chain.append((function, None if file == "??" else file, int(line) if line.isdigit() else None))
    return chain


# Clang writes no .debug_aranges, which libdw looks units up in.
@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_functions_inlined_at_a_call_are_frames_of_their_own(nmprof, tmp_path, compiler):
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    program = tmp_path / "inlined_sites"
    subprocess.run([compiler, "-O2", "-g", "-fno-omit-frame-pointer", "-o", program, PROGRAMS / "inlined_sites.cpp"],
                   check=True)
    out = tmp_path / "inlined.jfr"
    run(nmprof, "run", "-q", "--nativemem", "16k", "-o", out, "--", program, 20, check=0)
    # The return addresses the agent recorded for the program's frames, by function.
    addresses = {}
    for event in jfr_events(out, "profiler.Malloc"):
        for frame in event["values"]["stackTrace"]["frames"]:
            if frame["method"]["type"]["name"] == program.name:
                addresses.setdefault(frame["method"]["name"], set()).add(frame["bytecodeIndex"])
    report = report_json(nmprof, out, "--keep-frames", "--top", "10")
    checked = set()
    for stack in report["stacks"]:
        chain = []  # the frames at one return address: inlined ones, then their caller
        for frame in stack["frames"]:
            if frame["container"] != program.name:
                chain = []
                continue
            chain.append(frame)
            if frame["inlined"]:
                continue
            # addr2line names the innermost of several inlined functions after their caller.
            found = [(f["function"] if i else None, f["file"], f["line"]) for i, f in enumerate(chain)]
            said = [[(function if i else None, file, line) for i, (function, file, line) in
                     enumerate(addr2line_chain(program, address))] for address in addresses[frame["function"]]]
            assert found in said, (found, said)
            assert [f["inlined"] for f in chain] == [True] * (len(chain) - 1) + [False]
            checked.add(tuple(f["function"] for f in chain))
            chain = []
    # Clang's names of static functions have their parameters: new_block(unsigned long).
    assert any([f.split("(")[0] for f in frames] == ["new_block", "new_record", "new_buffers"] for frames in checked), \
        checked
    assert any(frames[0].startswith("std::__new_allocator<long>::allocate") and len(frames) >= 3 for frames in checked), \
        checked
    assert any(frames[-2:] == ("std::vector<long, std::allocator<long> >::push_back(long&&)", "grow_numbers(int)")
               for frames in checked), checked
