"""The system calls the agent makes are the ones docs/security.md lists (issue 38):
on the program's threads while it records, nothing but what the list says; on the
writer thread, nothing else either. A seccomp filter written from that list lets the
agent work; a new call must be added to it, with its reason."""

import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

SECURITY = Path(__file__).parent.parent / "docs" / "security.md"
CALL = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\((.*?)(?:\) += (-?\w+).*)?$)")


def documented(section):
    """The calls named in the first column of the table under `section`."""
    text = SECURITY.read_text()
    body = text[text.index(section):]
    body = body[:body.index("\n### ", 1)] if "\n### " in body[1:] else body
    names = set()
    for line in body.splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`(\w+)`", line.split("|")[1]))
    assert names, section
    return names


def traced(tmp_path, name, command):
    """(pid, call, arguments, result) of every system call of `command` and its children."""
    log = tmp_path / name
    subprocess.run(["strace", "-f", "-qq", "-o", str(log), *map(str, command)], check=True, capture_output=True,
                   timeout=120)
    calls, unfinished = [], {}
    for line in log.read_text(errors="replace").splitlines():
        m = CALL.match(line)
        if not m:
            continue
        pid = int(m.group(1))
        if m.group(2):  # "<... call resumed>) = result": the result of a call listed before
            result = re.search(r"\) += (-?\w+)", line)
            if pid in unfinished and result:
                at = unfinished.pop(pid)
                calls[at] = calls[at][:3] + (result.group(1),)
            continue
        calls.append((pid, m.group(3), m.group(4) or "", m.group(5)))
        if line.endswith("<unfinished ...>"):
            unfinished[pid] = len(calls) - 1
    return calls


def between_marks(calls):
    on, out = False, []
    for call in calls:
        if call[1] == "write" and '"start\\n"' in call[2]:
            on = True
        elif call[1] == "write" and '"end\\n"' in call[2]:
            on = False
        elif on:
            out.append(call)
    return out


@pytest.fixture(scope="module")
def strace():
    if not shutil.which("strace"):
        pytest.skip("strace is not installed")


def test_the_agents_system_calls_are_the_documented_ones(nmprof, programs, tmp_path, strace):
    program = programs.c("marked_threads.c")
    plain = {call for _, call, _, _ in between_marks(traced(tmp_path, "plain", [program]))}
    calls = traced(tmp_path, "agent", [nmprof, "run", "--nativemem", "64k", "-o", tmp_path / "out.jfr", "--", program])
    # The command's process: the one that exec'd the program; its threads: what it cloned.
    command = next(pid for pid, call, args, result in calls if call == "execve" and str(program) in args and result == "0")
    children = defaultdict(set)
    for pid, call, _, result in calls:
        if call in ("clone", "clone3") and result and result.isdigit():
            children[pid].add(int(result))
    threads, todo = set(), [command]
    while todo:
        pid = todo.pop()
        threads.add(pid)
        todo.extend(children[pid])
    writers = {pid for pid, call, args, _ in calls if call == "prctl" and '"nmprof writer"' in args}
    assert writers and writers <= threads, "the writer thread started"

    on_program_threads = {call for pid, call, _, _ in between_marks(calls) if pid in threads - writers}
    added = on_program_threads - plain
    assert added <= documented("### On the program's threads"), sorted(added - documented("### On the program's threads"))
    on_writer = {call for pid, call, _, _ in calls if pid in writers}
    assert on_writer <= documented("### On the writer thread"), sorted(on_writer - documented("### On the writer thread"))
    # Under nmprof run, the writer asked the broker for its file.
    assert {"socketpair", "sendmsg", "recvmsg"} <= on_writer
