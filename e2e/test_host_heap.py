"""The agent's own memory never comes from the host's heap: glibc's thresholds,
arenas and counters end up exactly as without the agent."""

import subprocess

import pytest

from conftest import run


@pytest.mark.parametrize("interval", ["0", "4k", "512k"])
def test_glibc_heap_is_as_without_the_agent(nmprof, programs, tmp_path, interval):
    program = programs.c("heap_layout.c")
    plain = subprocess.run([program], capture_output=True, text=True, check=True).stdout
    profiled = run(nmprof, "run", "-q", "--nativemem", interval, "-o", tmp_path / "out.jfr", "--", program,
                   check=0).stdout
    assert profiled == plain
