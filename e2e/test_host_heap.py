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


@pytest.mark.parametrize("interval", ["0", "512k"])
def test_program_with_its_own_allocator_sees_only_its_own_calls(nmprof, programs, tmp_path, interval):
    # Before the agent had memory of its own, its allocations went to this
    # program's malloc (and crashed it at --nativemem 0).
    program = programs.c("own_malloc.c")
    plain = subprocess.run([program], capture_output=True, text=True, check=True).stdout
    profiled = run(nmprof, "run", "-q", "--nativemem", interval, "-o", tmp_path / "out.jfr", "--", program,
                   check=0).stdout
    assert profiled == plain == "mallocs 50000 frees 50000\n"
