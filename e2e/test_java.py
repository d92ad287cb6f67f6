"""nmprof run -- java: mixed native and Java stacks, Java thread names, estimates,
and the live view of direct buffers, on JDK 17 and JDK 25."""

import subprocess

import pytest

from conftest import JDK17, JDK25, jfr_events, jfr_tool, report_json, run, sampling_error_bound

JDKS = pytest.mark.parametrize("jdk", [JDK17, JDK25], ids=["jdk17", "jdk25"])


def frames_of(event):
    """(class, method, type) innermost first; classes with dots as jfr prints them."""
    out = []
    for f in event["values"]["stackTrace"]["frames"]:
        m = f["method"]
        out.append((m["type"]["name"].replace("/", "."), m["name"], f["type"]))
    return out


def record(nmprof, java_programs, jdk, tmp_path, *args, interval="64k"):
    out = tmp_path / "java.jfr"
    result = run(nmprof, "run", "--nativemem", interval, "-o", out, "--", *java_programs.command(jdk, *args),
                 check=0, timeout=300)
    return out, int(result.stdout.split()[-1])


def samples_through(events, klass, method):
    return [e for e in events if any(f[0] == klass and f[1] == method for f in frames_of(e))]


def in_order(frames, expected):
    """The (class, method) pairs of `expected` appear in `frames` in this order, adjacent."""
    names = [(c, m) for c, m, _ in frames]
    for i in range(len(names) - len(expected) + 1):
        if names[i:i + len(expected)] == expected:
            return i
    return -1



@JDKS
def test_deflater_stacks_go_from_zlib_to_the_calling_java_method(nmprof, java_programs, tmp_path, jdk):
    out, _ = record(nmprof, java_programs, jdk, tmp_path, "deflater", 300)
    events = [e for e in samples_through(jfr_events(out, "profiler.Malloc", jdk), "NativeMemoryApp", "deflate")
              if frames_of(e)[0][1] == "deflateInit2_"]
    assert len(events) > 50
    for e in events:
        frames = frames_of(e)
        assert frames[0][1] == "deflateInit2_", frames
        assert frames[1][1] == "Java_java_util_zip_Deflater_init", frames
        assert frames[2][:2] == ("java.util.zip.Deflater", "init") and frames[2][2] == "Native", frames
        assert in_order(frames, [("NativeMemoryApp", "deflate"), ("NativeMemoryApp", "lambda$main$0")]) > 2
        assert e["values"]["eventThread"]["javaName"] == "alloc-deflater"
        assert e["values"]["eventThread"]["javaThreadId"] > 1
        java_types = {t for _, _, t in frames[3:]}
        assert java_types <= {"Interpreted", "JIT compiled", "Inlined", "C1 compiled", "Native"}, java_types
    # Deflater(9) costs zlib a quarter of a MiB or so per stream.
    per_stream = sum(e["values"]["weight"] * e["values"]["size"] for e in events) / 300
    assert 150_000 < per_stream < 400_000, per_stream


@JDKS
def test_inflater_stacks(nmprof, java_programs, tmp_path, jdk):
    out, _ = record(nmprof, java_programs, jdk, tmp_path, "inflater", 2000, interval="16k")
    events = [e for e in samples_through(jfr_events(out, "profiler.Malloc", jdk), "NativeMemoryApp", "inflate")
              if frames_of(e)[0][1] == "inflateInit2_"]
    assert events
    for e in events:
        frames = frames_of(e)
        assert frames[0][1] == "inflateInit2_" and frames[1][1] == "Java_java_util_zip_Inflater_init", frames
        assert frames[2][:2] == ("java.util.zip.Inflater", "init"), frames


@JDKS
@pytest.mark.parametrize("mode,entry", [
    ("direct", [("java.nio.ByteBuffer", "allocateDirect"), ("NativeMemoryApp", "direct")]),
    ("unsafe", [("sun.misc.Unsafe", "allocateMemory"), ("NativeMemoryApp", "unsafe")]),
])
def test_vm_allocations_show_vm_frames_then_java_frames(nmprof, java_programs, tmp_path, jdk, mode, entry):
    count, size = 20000, 4000
    out, true_bytes = record(nmprof, java_programs, jdk, tmp_path, mode, count, size)
    def java_part(frames):
        return [f for f in frames if f[0] != "libjvm.so"]

    # The VM also allocates for itself under these methods (linking, say): only the
    # samples of Unsafe.allocateMemory0 are the buffers.
    through = [e for e in jfr_events(out, "profiler.Malloc", jdk) if in_order(frames_of(e), entry) >= 0]
    events = [e for e in through if java_part(frames_of(e))[0][:2] == ("jdk.internal.misc.Unsafe", "allocateMemory0")]
    assert len(events) > 0.9 * len(through)
    for e in events:
        frames = frames_of(e)
        # Native frames of the VM (C++, in libjvm) come first, then Java frames.
        assert frames[0][0] == "libjvm.so" and frames[0][2] == "C++", frames
        assert java_part(frames)[0][2] == "Native", frames
        assert e["values"]["eventThread"]["javaName"] == f"alloc-{mode}"
    estimate = sum(e["values"]["weight"] * e["values"]["size"] for e in events)
    assert abs(estimate - true_bytes) <= sampling_error_bound(size, count, 64 * 1024), (estimate, true_bytes)


@JDKS
def test_jni_library_allocations(nmprof, java_programs, tmp_path, jdk):
    count, size = 20000, 3000
    out, true_bytes = record(nmprof, java_programs, jdk, tmp_path, "jni", count, size)
    events = [e for e in jfr_events(out, "profiler.Malloc", jdk) if frames_of(e)[0][1] == "jni_site"]
    assert events
    for e in events:
        frames = frames_of(e)
        assert frames[0] == ("libjni_alloc.so", "jni_site", "Native"), frames
        assert frames[1][1] == "Java_NativeMemoryApp_jniAllocate", frames
        assert frames[2][:2] == ("NativeMemoryApp", "jniAllocate") and frames[2][2] == "Native", frames
        assert frames[3][:2] == ("NativeMemoryApp", "jni"), frames
    estimate = sum(e["values"]["weight"] * e["values"]["size"] for e in events)
    assert abs(estimate - true_bytes) <= sampling_error_bound(size, count, 64 * 1024), (estimate, true_bytes)


@JDKS
def test_java_frames_carry_line_numbers_and_show_in_jfr_print(nmprof, java_programs, tmp_path, jdk):
    out, _ = record(nmprof, java_programs, jdk, tmp_path, "deflater", 100)
    printed = subprocess.run([str(jfr_tool(jdk)), "print", "--events", "profiler.Malloc", "--stack-depth", "12",
                              str(out)], capture_output=True, text=True, check=True).stdout
    assert "java.util.zip.Deflater.init(int, int, boolean)" in printed
    assert "NativeMemoryApp.deflate(int) line:" in printed
    assert "libz" in printed or "libzip.so.deflateInit2_()" in printed


@JDKS
def test_vm_internal_allocations_have_native_stacks_and_thread_names(nmprof, java_programs, tmp_path, jdk):
    out, _ = record(nmprof, java_programs, jdk, tmp_path, "deflater", 10, interval="16k")
    events = jfr_events(out, "profiler.Malloc", jdk)
    vm = [e for e in events if frames_of(e) and all(f[0] == "libjvm.so" for f in frames_of(e)[:3])]
    assert vm, "the VM's own allocations are recorded"
    names = {e["values"]["eventThread"]["osName"] for e in events}
    assert any(n.startswith(("C1", "C2", "GC", "G1", "VM")) for n in names) or "java" in names, names


@JDKS
def test_direct_buffers_freed_by_their_cleaner_leave_the_live_view(nmprof, java_programs, tmp_path, jdk):
    count, size = 5000, 20000
    out, kept_bytes = record(nmprof, java_programs, jdk, tmp_path, "direct-live", count, size)
    report = report_json(nmprof, out, "--live", "--top", "30")
    retained = [s for s in report["stacks"] if any(f["function"] == "retainDirect" for f in s["frames"])]
    released = [s for s in report["stacks"] if any(f["function"] == "releaseDirect" for f in s["frames"])]
    live = sum(s["estimated_bytes"] for s in retained)
    assert abs(live - kept_bytes) <= sampling_error_bound(size, count, 64 * 1024), (live, kept_bytes)
    assert sum(s["estimated_bytes"] for s in released) < 0.02 * kept_bytes


def deflate_samples(path, jdk):
    return [e for e in jfr_events(path, "profiler.Malloc", jdk)
            if in_order(frames_of(e), [("NativeMemoryApp", "deflate")]) >= 0 and frames_of(e)[0][1] == "deflateInit2_"]


@JDKS
def test_the_agent_loads_with_agentpath_without_the_cli(java_programs, tmp_path, jdk):
    from conftest import nmprof_path
    agent = nmprof_path().parent.parent / "lib" / "nmprof" / "libnmprof.so"
    out = tmp_path / "direct.jfr"
    command = java_programs.command(jdk, "deflater", 200)
    command.insert(1, f"-agentpath:{agent}=nativemem=64k,file={out}")
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    assert len(deflate_samples(out, jdk)) > 50
    settings = {e["values"]["name"]: e["values"]["value"] for e in jfr_events(out, "jdk.ActiveSetting", jdk)}
    assert settings["mode"] == "jvm" and settings["nativemem"] == "65536"


@JDKS
def test_system_exit_still_writes_the_recording(nmprof, java_programs, tmp_path, jdk):
    out = tmp_path / "exit.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--", *java_programs.command(jdk, "exit", 200),
                 timeout=300)
    assert result.returncode == 3, result.stderr
    assert len(deflate_samples(out, jdk)) > 50


@JDKS
def test_sigterm_through_nmprof_shuts_the_jvm_down_with_its_recording(nmprof, java_programs, tmp_path, jdk):
    import signal
    out = tmp_path / "term.jfr"
    proc = subprocess.Popen([str(nmprof), "run", "--nativemem", "64k", "-o", str(out), "--",
                             *java_programs.command(jdk, "wait", 200)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    # The JVM ends by its shutdown sequence (exit status 143), which writes the recording.
    assert proc.returncode == 143, stderr
    assert len(deflate_samples(out, jdk)) > 50


@JDKS
def test_loop_cuts_a_jvm_into_chunks_that_add_up(nmprof, java_programs, tmp_path, jdk):
    """run --loop on a JVM: several chunks, each opening in the JDK's own jfr, that
    together give zlib's quarter of a MiB per Deflater."""
    count = 200_000
    result = run(nmprof, "run", "--loop", "1s", "--nativemem", "64k", "-q", "-o", tmp_path / "c-%n.jfr", "--",
                 *java_programs.command(jdk, "deflater", count), check=0, timeout=300)
    files = sorted(tmp_path.glob("c-*.jfr"))
    assert len(files) >= 2 and "warning" not in result.stderr, result.stderr
    for f in files:
        summary = subprocess.run([str(jfr_tool(jdk)), "summary", str(f)], capture_output=True, text=True)
        assert summary.returncode == 0, (f, summary.stderr)
    merged = report_json(nmprof, *files, "--top", "100")
    deflating = sum(s["estimated_bytes"] for s in merged["stacks"]
                    if any(f["function"] == "deflate" and f["container"] == "NativeMemoryApp" for f in s["frames"]))
    assert 150_000 < deflating / count < 400_000, deflating / count
