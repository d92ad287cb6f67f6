"""The agent lives in other people's processes: it needs nothing but libc and
exports nothing but its entry points."""

import subprocess

from conftest import nmprof_path

# Not even libm: one more library to load costs every process the agent is
# preloaded into about 0.3 ms of CPU (sampling's log and expm1 are the agent's own).
ALLOWED_NEEDED = {"libc.so.6", "ld-linux-x86-64.so.2"}
ALLOWED_EXPORTS = {"Agent_OnLoad", "Agent_OnAttach", "Agent_OnUnload",
                   # nmprof.h's entry point and the natives of io.nmprof.Context (nmprof-api.jar)
                   "nmprof_thread_context", "Java_io_nmprof_Context_abi0", "Java_io_nmprof_Context_block0",
                   "Java_io_nmprof_Context_attributeIndex0",
                   # what nmprof attach calls through ptrace once the agent is loaded
                   "nmprof_attach_request"}


def agent():
    return nmprof_path().parent.parent / "lib" / "nmprof" / "libnmprof.so"


def test_runtime_dependencies_are_libc_only():
    dynamic = subprocess.run(["readelf", "-d", str(agent())], capture_output=True, text=True, check=True).stdout
    needed = {line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line}
    assert needed <= ALLOWED_NEEDED, needed
    ldd = subprocess.run(["ldd", str(agent())], capture_output=True, text=True, check=True).stdout
    assert "libstdc++" not in ldd and "libgcc_s" not in ldd, ldd


def test_only_entry_points_are_exported():
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(agent())], capture_output=True, text=True,
                             check=True).stdout
    exported = {line.split()[-1] for line in symbols.splitlines() if line.strip()}
    assert exported <= ALLOWED_EXPORTS, exported - ALLOWED_EXPORTS
