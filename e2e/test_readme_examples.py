"""The native examples of the README and of docs/*.md run as written (issue 17; the
reference moved from the README to docs/ in issue 36): every `nmprof run` and
`nmprof report` line of their code blocks that needs no JVM, PHP, running process,
context attributes or missing tool, in a directory where ./app and ./run-tests
exist. Each must exit 0, as the documents imply."""

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from upload_server import UploadServer

ROOT = Path(__file__).parent.parent
# The README first, then docs/ in name order: the examples keep one order from run to run.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NEEDS = ("java", "php", "attach", "--tag", "--by attribute", "--by span", "--context-attributes", "./bin/",
         "LD_PRELOAD", "script.jfr", "./server", "--upload-header-file")
# Uploads go to the ports the documents name on localhost (Pyroscope's, the collector's),
# where the test puts stand-ins (upload_server.py) when they are free.
UPLOAD_PORT = re.compile(r"--(?:upload|otlp) http://localhost:(\d+)")


def examples():
    lines = []
    for document in DOCUMENTS:
        lines += [c for c in document_examples(document) if c not in lines]
    return lines


def document_examples(document):
    lines, in_code = [], False
    for line in document.read_text().splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        indented = line.startswith("    ")
        command = re.sub(r"^\s*\$ ", "", line).strip()
        if not (in_code or indented) or not command.startswith(("nmprof run", "nmprof report")):
            continue
        command = command.split("  #")[0].strip()  # the documents' comments
        if any(n in command for n in NEEDS):
            continue
        if "flamegraph.pl" in command and not shutil.which("flamegraph.pl"):
            continue
        if "go tool" in command and not shutil.which("go"):
            continue
        lines.append(command)
    return lines


def test_the_documents_have_native_examples():
    found = examples()
    assert any(c.startswith("nmprof run -o app.jfr -- ./app") for c in found), found
    assert any("--fail-on-live" in c for c in found), found


def test_the_documented_examples_run_as_written(nmprof, programs, tmp_path):
    leak = programs.c("live_leak.c")
    for name in ("app", "run-tests"):
        script = tmp_path / name
        script.write_text(f"#!/bin/sh\nexec {leak} 1 2000\n")
        script.chmod(0o755)
    env = dict(os.environ, PATH=f"{Path(nmprof).parent}:{os.environ['PATH']}")
    commands = examples()
    servers = {}
    for port in {int(p) for c in commands for p in UPLOAD_PORT.findall(c)}:
        with contextlib.suppress(OSError):  # taken: its examples are left out
            servers[port] = UploadServer(port=port)
    commands = [c for c in commands if all(int(p) in servers for p in UPLOAD_PORT.findall(c))]
    # Recordings first, then what reads them; files the documents name without making them are copies.
    commands.sort(key=lambda c: not c.startswith("nmprof run"))
    try:
        for command in commands:
            for name in re.findall(r"(\S+\.jfr)\b", command):
                if not (tmp_path / name).exists() and (tmp_path / "app.jfr").exists() and " -o " + name not in command:
                    shutil.copy(tmp_path / "app.jfr", tmp_path / name)
            sent = {port: len(server.requests) for port, server in servers.items()}
            result = subprocess.run(["sh", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                                    timeout=120)
            assert result.returncode == 0, f"{command}\n{result.stderr}"
            for port in map(int, UPLOAD_PORT.findall(command)):  # the upload arrived
                assert len(servers[port].requests) == sent[port] + 1, f"{command}\n{result.stderr}"
    finally:
        for server in servers.values():
            server.close()
