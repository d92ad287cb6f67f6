"""The dynamic linker's calls that depend on who makes them: dlopen searches a bare
name in the calling library's RUNPATH or RPATH (and expands $ORIGIN from its path),
and dlsym(RTLD_NEXT) searches after the caller's library. The agent's hooks made
libnmprof.so the caller: a plugin found through its host's RUNPATH was "not found"
under nmprof, and a chain of RTLD_NEXT look-ups found itself for ever (Debian's
llvm-omp-device-info-14 spun at 100% CPU). They now leave such calls as the program
made them, and patch what they loaded at the agent's next write."""

import subprocess

import pytest

from conftest import PROGRAMS, jfr_events, run, stack_of

COUNT, SIZE = 300, 4000


def build(tmp_path, dtags):
    """The plugin in lib/plugins/, its host in lib/ with RUNPATH (new dtags) or RPATH
    $ORIGIN/plugins, and the program linked with the host and then a copy of the
    plugin (the next chained())."""
    lib = tmp_path / "lib"
    (lib / "plugins").mkdir(parents=True)
    gcc = ["gcc", "-O2", "-g", "-fno-omit-frame-pointer"]
    plugin = lib / "plugins" / "libloader_plugin.so"
    subprocess.run([*gcc, "-shared", "-fPIC", "-o", plugin, PROGRAMS / "loader_plugin.c"], check=True)
    subprocess.run([*gcc, "-shared", "-fPIC", "-o", lib / "libchain_end.so", PROGRAMS / "loader_plugin.c"],
                   check=True)
    # (No tail calls: the dynamic linker must see the host as the caller, not the program.)
    subprocess.run([*gcc, "-fno-optimize-sibling-calls", "-shared", "-fPIC", "-o", lib / "libloader_host.so",
                    PROGRAMS / "loader_host.c",
                    f"-Wl,--{dtags}-new-dtags,-rpath,$ORIGIN/plugins", "-ldl"], check=True)
    program = tmp_path / "loader_user"
    subprocess.run([*gcc, "-o", program, PROGRAMS / "loader_user.c", "-Wl,--no-as-needed", lib / "libloader_host.so",
                    lib / "libchain_end.so", f"-Wl,-rpath,{lib}", "-pthread", "-ldl"], check=True)
    return program


@pytest.mark.parametrize("dtags", ["enable", "disable"], ids=["runpath", "rpath"])
def test_a_plugin_found_through_its_hosts_runpath_loads_and_is_recorded(nmprof, tmp_path, dtags):
    command = [build(tmp_path, dtags), COUNT, SIZE]
    plain = subprocess.run(list(map(str, command)), capture_output=True, text=True, timeout=60)
    assert plain.stdout.startswith("chained: 70\n"), plain.stdout
    out = tmp_path / "out.jfr"
    profiled = run(nmprof, "run", "-q", "--nativemem", "0", "-o", out, "--", *command, timeout=120)
    assert (profiled.returncode, profiled.stdout) == (plain.returncode, plain.stdout), profiled.stderr
    # Patched at the agent's next write, a second after the dlopen at most: every block
    # the plugin allocated two seconds later is in the recording, from the plugin.
    plugin_blocks = [e for e in jfr_events(out, "profiler.Malloc")
                     if stack_of(e)[0] == "libloader_plugin.so!plugin_block"]
    assert len(plugin_blocks) == COUNT
    assert {e["values"]["size"] for e in plugin_blocks} == {SIZE}
