"""Shared fixtures for the end-to-end tests: the nmprof binary, test programs built
from e2e/programs, and reading recordings with the JDK's own `jfr` tool."""

import hashlib
import json
import math
import os
import pwd
import shutil
import signal
import tempfile
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
PROGRAMS = HERE / "programs"
JDK17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")
JDK25 = Path("/usr/lib/jvm/temurin-25-jdk-amd64")


def nmprof_path():
    path = os.environ.get("NMPROF_BIN")
    if path:
        return Path(path)
    return HERE.parent / "build" / "bin" / "nmprof"


def agent_path():
    """The agent nmprof preloads: NMPROF_AGENT's, else the one its build made."""
    return Path(os.environ.get("NMPROF_AGENT") or nmprof_path().parent.parent / "lib" / "nmprof" / "libnmprof.so")


@pytest.fixture(scope="session")
def nmprof():
    path = nmprof_path()
    if not path.exists():
        pytest.fail(f"nmprof not built at {path} (set NMPROF_BIN)")
    return path


class Programs:
    """Compiles test programs on first use into a session directory."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.built = {}

    def c(self, name, *flags, libs=()):
        key = (name, flags, tuple(libs))
        if key not in self.built:
            source = PROGRAMS / name
            # Builds with other libraries go to a directory of their own: the program's
            # name is what its stacks show.
            directory = self.dir / ("libs-" + hashlib.sha1(repr(libs).encode()).hexdigest()[:8] if libs else "")
            directory.mkdir(exist_ok=True)
            out = directory / (source.stem + ("-" + "-".join(f.strip("-") for f in flags) if flags else ""))
            compiler = "g++" if source.suffix == ".cpp" else "gcc"
            cmd = [compiler, "-O2", "-g", "-fno-omit-frame-pointer", "-o", str(out), str(source), *flags,
                   "-pthread", *libs]
            subprocess.run(cmd, check=True)
            self.built[key] = out
        return self.built[key]

    def shared(self, name, *flags, stem=None):
        source = PROGRAMS / name
        out = self.dir / ("lib" + (stem or source.stem) + ".so")
        if not out.exists():
            subprocess.run(["gcc", "-O2", "-g", "-shared", "-fPIC", "-o", str(out), str(source), *flags], check=True)
        return out


@pytest.fixture(scope="session")
def programs(tmp_path_factory):
    return Programs(tmp_path_factory.mktemp("programs"))


def unused_uid():
    """A user id no account has: a test's process becomes it to be nobody else's."""
    taken = {p.pw_uid for p in pwd.getpwall()}
    return next(u for u in range(61000, 62000) if u not in taken)


def sampling_error_bound(size, count, interval):
    """How far a sampled estimate of `count` allocations of `size` bytes may fall from
    the truth, exceeded with a probability below 6e-7 (five standard deviations of a
    normal variable). Each allocation is sampled with p = 1 - exp(-size/interval) and
    weighs size/p, so the error is (sampled - count*p) * size/p with `sampled`
    binomial: with few allocations and p near 1 its tail is far heavier than the
    normal one (3 of 16 blocks of 1 MiB missed at 256 KiB: 2.3e-3, past five sigma)."""
    p = -math.expm1(-size / interval)
    mean = count * p
    normal = 5 * math.sqrt(count * p * (1 - p))
    if p >= 1 or count > 20000:
        return normal * size / p
    def mass(k):
        return math.exp(math.lgamma(count + 1) - math.lgamma(k + 1) - math.lgamma(count - k + 1)
                        + k * math.log(p) + (count - k) * math.log1p(-p))
    outside = 0.0
    for k in sorted(range(count + 1), key=lambda k: -abs(k - mean)):
        if outside + mass(k) > 6e-7:
            return max(abs(k - mean), normal) * size / p
        outside += mass(k)
    return 0.0


def run(nmprof, *args, cwd=None, env=None, timeout=120, check=None):
    # In its own session, so that a hung run is killed with everything it started.
    proc = subprocess.Popen([str(nmprof), *map(str, args)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    result = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if check is not None:
        assert result.returncode == check, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


def jfr_tool(jdk=JDK17):
    tool = jdk / "bin" / "jfr"
    if not tool.exists():
        pytest.skip(f"{tool} is not installed")
    return tool


def jfr_events(path, event_type, jdk=JDK17):
    """Events of one type as the JDK's jfr tool decodes them."""
    out = subprocess.run([str(jfr_tool(jdk)), "print", "--json", "--stack-depth", "64", "--events", event_type, str(path)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["recording"]["events"]


def frame_name(frame):
    method = frame["method"]
    return f'{method["type"]["name"]}!{method["name"]}'


def stack_of(event):
    """Frames innermost first as 'library!function'."""
    return [frame_name(f) for f in event["values"]["stackTrace"]["frames"]]


def report_json(nmprof, path, *args):
    result = run(nmprof, "report", path, "--format", "json", *args, check=0)
    return json.loads(result.stdout)


JAVA_DIR = HERE / "java"


class JavaPrograms:
    """The Java test program, compiled once (class files for Java 17, run by 17 and 25),
    and its JNI library."""

    def __init__(self, directory):
        self.dir = Path(directory)
        javac = JDK17 / "bin" / "javac"
        subprocess.run([str(javac), "-d", str(self.dir), str(JAVA_DIR / "NativeMemoryApp.java"),
                        str(JAVA_DIR / "AttachTarget.java")], check=True, capture_output=True)
        self.dir.chmod(0o755)  # readable by the JVMs the tests run as another user
        include = JDK17 / "include"
        subprocess.run(["gcc", "-O2", "-g", "-shared", "-fPIC", f"-I{include}", f"-I{include / 'linux'}",
                        "-o", str(self.dir / "libjni_alloc.so"), str(PROGRAMS / "jni_alloc.c")], check=True)

    def command(self, jdk, *args, main="NativeMemoryApp", jvm_options=()):
        java = jdk / "bin" / "java"
        if not java.exists():
            pytest.skip(f"{java} is not installed")
        return [str(java), "-Xmx256m", *jvm_options, f"-Djava.library.path={self.dir}", "-cp", str(self.dir),
                main, *map(str, args)]


@pytest.fixture(scope="session")
def java_programs():
    if not (JDK17 / "bin" / "javac").exists():
        pytest.fail(f"{JDK17} is needed (apt install openjdk-17-jdk-headless)")
    # Outside pytest's private temporary directory: JVMs running as another user read it.
    # Not under /tmp either: a test mounts a private /tmp over it for a JVM in a container.
    directory = tempfile.mkdtemp(prefix="nmprof-e2e-java-", dir="/var/tmp")
    yield JavaPrograms(directory)
    shutil.rmtree(directory, ignore_errors=True)
