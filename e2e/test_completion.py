"""Shell completion: `nmprof completion bash|zsh`, sourced by the shells themselves,
and installed with the man page by `cmake --install`."""

import shutil
import subprocess

import pytest

from conftest import run

ZSH = shutil.which("zsh")


def complete(nmprof, tmp_path, *words):
    """What bash offers for the last word of `nmprof WORDS...` (an empty last word: after a space)."""
    script = tmp_path / "nmprof.bash"
    script.write_text(run(nmprof, "completion", "bash", check=0).stdout)
    words = ["nmprof", *words]
    line = " ".join(f"'{w}'" for w in words)
    program = (f"source {script}\nCOMP_WORDS=({line})\nCOMP_CWORD={len(words) - 1}\n_nmprof\n"
               'printf "%s\\n" "${COMPREPLY[@]}"\n')
    result = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, cwd=tmp_path,
                            timeout=30)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [line for line in result.stdout.splitlines() if line]


def test_bash_completes_subcommands_options_and_choices(nmprof, tmp_path):
    assert complete(nmprof, tmp_path, "") == ["run", "report", "attach", "completion", "--help", "--version"]
    assert complete(nmprof, tmp_path, "re") == ["report"]
    assert complete(nmprof, tmp_path, "report", "--fo") == ["--format", "--fold"]
    assert complete(nmprof, tmp_path, "report", "x.jfr", "--format", "") == ["text", "json", "pprof", "collapsed",
                                                                              "html"]
    assert complete(nmprof, tmp_path, "report", "--value", "c") == ["count"]
    assert complete(nmprof, tmp_path, "report", "--pe") == ["--peak", "--peek"]
    assert complete(nmprof, tmp_path, "run", "--native") == ["--nativemem"]
    assert complete(nmprof, tmp_path, "run", "--nativemem", "") == []  # a size: nothing to offer
    assert "--duration" in complete(nmprof, tmp_path, "attach", "--")
    (tmp_path / "app.jfr").write_text("")
    assert complete(nmprof, tmp_path, "report", "ap") == ["app.jfr"]
    assert complete(nmprof, tmp_path, "report", "app.jfr", "--diff", "ap") == ["app.jfr"]
    # run: the program after "--" is a command, then its own arguments are files.
    assert "bash" in complete(nmprof, tmp_path, "run", "-q", "--", "bas")
    assert complete(nmprof, tmp_path, "run", "--", "bash", "ap") == ["app.jfr"]


@pytest.mark.skipif(ZSH is None, reason="zsh is needed (apt install zsh)")
def test_zsh_script_parses_and_knows_the_choices(nmprof, tmp_path):
    script = tmp_path / "_nmprof"
    script.write_text(run(nmprof, "completion", "zsh", check=0).stdout)
    result = subprocess.run([ZSH, "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    text = script.read_text()
    assert text.startswith("#compdef nmprof\n")
    assert "'--format[" in text and ":value:(text json pprof collapsed html)'" in text
    assert "'*::command:_normal'" in text  # run completes the profiled command


def test_bad_shell_is_one_line(nmprof):
    result = run(nmprof, "completion", "fish")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("nmprof: ") and "fish" in result.stderr.splitlines()[0]


def test_install_puts_completions_beside_the_man_page(nmprof, tmp_path):
    build = nmprof.parent.parent
    if not (build / "CMakeCache.txt").exists():
        pytest.skip("not a CMake build tree")
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(tmp_path)], check=True, capture_output=True,
                   timeout=300)
    share = tmp_path / "share"
    assert (share / "man" / "man1" / "nmprof.1").exists()
    bash = share / "bash-completion" / "completions" / "nmprof"
    assert "complete -o filenames -F _nmprof nmprof" in bash.read_text()
    assert (share / "zsh" / "vendor-completions" / "_nmprof").read_text().startswith("#compdef nmprof")
