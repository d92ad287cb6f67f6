"""Which build of each module was recorded (nmprof.Module's build id, else its file's
size and mtime): function names are never read from a file that is another build by
the time the agent names frames (a package upgrade during a run), and the report
takes no source lines from a file rebuilt since the recording."""

import json
import os
import re
import subprocess

import pytest

from conftest import PROGRAMS, jfr_events, report_json, run



def build(tmp_path, version, build_id):
    """replaced_self and its library, as version "old" or "new" (-DMOVED), linked
    against the library at app/libreplaced.so."""
    out = tmp_path / version
    out.mkdir(exist_ok=True)
    flags = ["-O2", "-g", "-fno-omit-frame-pointer"] + ([] if version == "old" else ["-DMOVED"])
    link = [] if build_id else ["-Wl,--build-id=none"]
    library, program = out / "libreplaced.so", out / "replaced_self"
    subprocess.run(["gcc", *flags, "-shared", "-fPIC", *link, "-o", library, PROGRAMS / "replaced_library.c"],
                   check=True)
    app = tmp_path / "app"
    subprocess.run(["gcc", *flags, *link, "-o", program, PROGRAMS / "replaced_self.c", f"-L{out}", "-lreplaced",
                    f"-Wl,-rpath,{app}"], check=True)
    return program, library


def install(tmp_path, version, build_id):
    """The old build at app/, as the program runs it."""
    app = tmp_path / "app"
    app.mkdir(exist_ok=True)
    program, library = build(tmp_path, version, build_id)
    for built in (program, library):
        (app / built.name).write_bytes(built.read_bytes())
        (app / built.name).chmod(0o755)
    return app / program.name, app / library.name


def record(nmprof, tmp_path, name, program, library, new_program="-", new_library="-"):
    out = tmp_path / f"{name}.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "4k", "-o", out, "--", program, new_program, program,
                 new_library, library, check=0)
    return out, result.stderr


def names_by_module(recording):
    """The function names of the frames of each module, as the agent wrote them."""
    names = {}
    for event in jfr_events(recording, "profiler.Malloc"):
        for frame in event["values"]["stackTrace"]["frames"]:
            method = frame["method"]
            names.setdefault(method["type"]["name"], set()).add(method["name"])
    return names


@pytest.mark.parametrize("build_id", [True, False], ids=["build-id", "no-build-id"])
def test_files_replaced_while_the_program_runs_keep_its_names(nmprof, tmp_path, build_id):
    program, library = install(tmp_path, "old", build_id)
    baseline, _ = record(nmprof, tmp_path, "baseline", program, library)
    expected = names_by_module(baseline)
    assert {"main", "program_exported_alloc"} <= expected["replaced_self"], expected
    assert any(n.startswith("program_alloc") for n in expected["replaced_self"]), expected  # a static function
    assert {"library_alloc", "library_hidden_alloc"} <= expected["libreplaced.so"], expected

    program, library = install(tmp_path, "old", build_id)
    new_program, new_library = build(tmp_path, "new", build_id)
    upgraded, log = record(nmprof, tmp_path, "upgraded", program, library, new_program, new_library)
    assert not new_program.exists() and not new_library.exists()  # renamed over the running ones
    names = names_by_module(upgraded)
    # The program's own file is read through /proc/self/exe, the image that runs.
    assert names["replaced_self"] == expected["replaced_self"]
    # The library's exported functions are named from the image in memory, the others
    # by offset: never from the new build.
    library_names = names["libreplaced.so"]
    assert "library_alloc" in library_names, library_names
    assert "library_hidden_alloc" not in library_names and "library_moved_ahead" not in library_names, library_names
    assert all(n == "library_alloc" or re.fullmatch(r"libreplaced\.so\+0x[0-9a-f]+", n) for n in library_names), \
        library_names
    said = [line for line in log.splitlines() if "is not the build that was loaded" in line]
    assert len(said) == 1 and said[0].startswith(f"nmprof: libreplaced.so: {library} "), log
    assert ("build id" if build_id else "size, modification time or inode") in said[0], said[0]


@pytest.mark.parametrize("build_id", [True, False], ids=["build-id", "no-build-id"])
def test_report_takes_no_lines_from_a_rebuilt_file_and_says_so(nmprof, tmp_path, build_id):
    program, library = install(tmp_path, "old", build_id)
    recording, _ = record(nmprof, tmp_path, "old", program, library)
    lines_before = {(f["function"], f["line"]) for s in report_json(nmprof, recording, "--top", "10")["stacks"]
                    for f in s["frames"] if f["container"] == "replaced_self"}
    assert ("program_alloc", None) not in lines_before and lines_before, lines_before

    new_program, new_library = build(tmp_path, "new", build_id)  # rebuilt where it was: functions moved
    for new, old in ((new_program, program), (new_library, library)):
        old.write_bytes(new.read_bytes())
    result = run(nmprof, "report", recording, "--format", "json", "--top", "10", check=0)
    warnings = [line for line in result.stderr.splitlines() if "is not the build that was recorded" in line]
    assert len(warnings) == 2, result.stderr
    what = "build id" if build_id else "no build id; recorded"
    for name, path in (("replaced_self", program), ("libreplaced.so", library)):
        assert any(w.startswith(f"nmprof report: warning: {recording}: {name}: {path} ") and what in w
                   for w in warnings), result.stderr
    report = json.loads(result.stdout)
    frames = [f for s in report["stacks"] for f in s["frames"]]
    ours = [f for f in frames if f["container"] in ("replaced_self", "libreplaced.so")]
    assert ours and all(f["file"] is None and f["line"] is None and not f["inlined"] for f in ours), ours
    assert any(f["container"] == "libc.so.6" and f["line"] for f in frames), frames  # other modules keep theirs


def test_a_fifo_in_place_of_a_library_blocks_neither_the_program_nor_the_report(nmprof, tmp_path):
    program, library = install(tmp_path, "old", True)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = tmp_path / "fifo.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "4k", "-o", out, "--", program, "-", program, fifo, library,
                 timeout=60, check=0)
    assert f"nmprof: libreplaced.so: {library} cannot be read any more" in result.stderr, result.stderr
    names = names_by_module(out)["libreplaced.so"]
    assert "library_alloc" in names, names
    result = run(nmprof, "report", out, timeout=60, check=0)
    assert "library_alloc" in result.stdout, result.stdout
