"""Shell scripts and programs under the locales users have. A sampled allocation
can happen while libc holds one of its own locks (setlocale allocates while holding
its locale lock): whatever the agent calls from there must not take that lock again.
"""

import subprocess

import pytest

from conftest import run

SCRIPT = 'for i in $(seq 40); do x=$(bash -c "echo hi"); done; echo ok'


def utf8_locales():
    names = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=True).stdout.split()
    wanted = {"c.utf8", "en_us.utf8"}
    return [name for name in names if name.lower().replace("-", "") in wanted]


LOCALES = utf8_locales()


def locale_env(name):
    import os
    env = dict(os.environ)
    env.pop("LANGUAGE", None)
    env["LANG"] = name
    env["LC_ALL"] = name
    return env


@pytest.fixture(params=LOCALES or [pytest.param(None, marks=pytest.mark.skip("no UTF-8 locale installed"))])
def utf8(request):
    return locale_env(request.param)


def test_c_utf8_is_installed():
    # Debian's libc-bin always has it: without it, the tests below would not run.
    assert any(name.lower().startswith("c.utf") for name in LOCALES), LOCALES


def test_nested_shells_finish(nmprof, tmp_path, utf8):
    result = run(nmprof, "run", "-q", "-o", tmp_path / "out.jfr", "--", "bash", "-c", SCRIPT, env=utf8,
                 timeout=60, check=0)
    assert result.stdout == "ok\n"


def test_every_allocation_sampled_during_setlocale(nmprof, tmp_path, utf8):
    # At --nativemem 0 the first sample lands inside setlocale(), which holds libc's
    # locale lock: before the fix this hung every time.
    for _ in range(3):
        result = run(nmprof, "run", "-q", "--nativemem", "0", "-o", tmp_path / "out.jfr", "--", "bash", "-c",
                     "echo hi; printf '%s\\n' héllo | wc -m", env=utf8, timeout=30, check=0)
        assert result.stdout == "hi\n6\n"


def test_shim_script_starting_python(nmprof, tmp_path, utf8):
    # A pyenv-style shim: a shell script that execs the real program.
    shim = tmp_path / "python3"
    shim.write_text('#!/bin/sh\nset -e\nprogram=$(command -v python3)\nexec "$program" "$@"\n')
    shim.chmod(0o755)
    for _ in range(8):
        result = run(nmprof, "run", "-q", "-o", tmp_path / "out.jfr", "--", str(shim), "-c",
                     "import locale; print(locale.getpreferredencoding(), ' '.join(['x'] * 3))",
                     env=utf8, timeout=60, check=0)
        assert result.stdout == "UTF-8 x x x\n"
