#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from real files, into OUT/<target>/:
recordings made by nmprof (BUILD/bin/nmprof on the demo) and by the JDK
(-XX:StartFlightRecording), Debian's libraries, their .eh_frame sections, and the
mangled names of libstdc++. Generated at test time so no large binary is committed.

usage: make_seeds.py BUILD OUT"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile

JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
# A few event types only: the JDK's metadata alone is about 100 KiB.
JDK_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0">
  <event name="jdk.JVMInformation"><setting name="enabled">true</setting><setting name="period">beginChunk</setting></event>
  <event name="jdk.ObjectAllocationSample"><setting name="enabled">true</setting><setting name="stackTrace">true</setting></event>
  <event name="jdk.ThreadStart"><setting name="enabled">true</setting></event>
</configuration>
"""
# Small libraries of different shapes: C, C++ (mangled names), with and without .symtab.
LIBRARIES = ["libz.so.1", "libdl.so.2", "libpthread.so.0", "libgcc_s.so.1", "libacl.so.1", "libcrypt.so.1"]
LIBRARY_DIR = "/usr/lib/x86_64-linux-gnu"
# The symbolizer tests' library (C++ names, .symtab) and its debug-only copy, when built.
TEST_LIBRARIES = ["tests/symbols/libsymbols_testlib.so", "tests/symbols/testlib.debug"]
MANGLED_NAMES = 200


def sections(image):
    """name -> (file offset, size) of an ELF64 file's sections."""
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    result = {}
    for h in headers:
        start = names_offset + h[0]
        name = image[start:image.index(b"\0", start)].decode()
        result[name] = (h[4], h[5])
    return result


def eh_frame_memory(image):
    """The bytes from .eh_frame_hdr to the end of .eh_frame, as they lie in memory
    (both sit in one read-only segment, at the same distance as in the file)."""
    found = sections(image)
    if ".eh_frame_hdr" not in found or ".eh_frame" not in found:
        return None
    hdr_offset, _ = found[".eh_frame_hdr"]
    frame_offset, frame_size = found[".eh_frame"]
    if frame_offset < hdr_offset:
        return None
    return image[hdr_offset:frame_offset + frame_size]


def write(out, target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


def recordings(build, out):
    with tempfile.TemporaryDirectory() as tmp:
        made = []
        nmprof = os.path.join(build, "bin", "nmprof")
        demo = os.path.join(build, "demo", "nmprof-demo")
        # Coarse sampling keeps the files small (tens of KiB), so each run stays fast.
        for name, command in [("nmprof-demo.jfr", ["--nativemem", "4m", "--", demo]),
                              ("nmprof-processes.jfr", ["--nativemem", "4k", "--", "sh", "-c", "ls /; ls / | sort"])]:
            path = os.path.join(tmp, name)
            subprocess.run([nmprof, "run", "-q", "-o", path] + command,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            made.append(path)
        path = os.path.join(tmp, "jdk.jfr")
        settings = os.path.join(tmp, "seed.jfc")
        with open(settings, "w") as f:
            f.write(JDK_SETTINGS)
        subprocess.run([JAVA, f"-XX:StartFlightRecording:filename={path},settings={settings}", "-version"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        made.append(path)
        for path in made:
            with open(path, "rb") as f:
                data = f.read()
            for target in ("jfr_reader", "report"):
                write(out, target, os.path.basename(path), data)


def libraries(build, out):
    paths = [os.path.join(LIBRARY_DIR, name) for name in LIBRARIES]
    paths += [os.path.join(build, name) for name in TEST_LIBRARIES]
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            image = f.read()
        name = os.path.basename(path)
        write(out, "elf_symbols", name, image)
        memory = eh_frame_memory(image)
        if memory:
            write(out, "eh_frame", name, memory)


def mangled_names(out):
    listing = subprocess.run(["nm", "-D", "--defined-only", os.path.join(LIBRARY_DIR, "libstdc++.so.6")],
                             check=True, capture_output=True, text=True).stdout
    names = [line.split()[-1].split("@")[0] for line in listing.splitlines() if " _Z" in line]
    for i, name in enumerate(names[::max(1, len(names) // MANGLED_NAMES)]):
        write(out, "demangle", f"libstdc++-{i}", name.encode())


def main():
    build, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    recordings(build, out)
    libraries(build, out)
    mangled_names(out)


if __name__ == "__main__":
    main()
