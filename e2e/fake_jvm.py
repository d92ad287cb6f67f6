"""A hostile process that passes for a HotSpot JVM: it maps a library named
libjvm.so and listens on /tmp/.java_pid<pid>, then answers every attach request
the way the test asks (python3 fake_jvm.py MODE LIBDIR [VICTIM]):

  flood    streams reply bytes without end
  sparse   makes the agent's reply file 8 GiB (sparse), says its path, and reports success
  escapes  a reply with nmprof's token, escape sequences and absurd numbers
  names    a reply with nmprof's token naming VICTIM as the recording
"""

import ctypes
import os
import socket
import sys


def agent_options(request):
    """key=value pairs of the agent options in a `load` request (values unescaped)."""
    fields = request.split(b"\0")
    options, key_values, item, escaped = fields[4].decode(), {}, "", False
    for c in options + ",":
        if escaped:
            item, escaped = item + c, False
        elif c == "\\":
            escaped = True
        elif c == ",":
            key, _, value = item.partition("=")
            key_values[key], item = value, ""
        else:
            item += c
    return key_values


def answer(mode, connection, victim):
    request = b""
    while request.count(b"\0") < 5:
        request += connection.recv(4096)
    options = agent_options(request)
    if mode == "flood":
        connection.sendall(b"0\n")
        chunk = b"x" * 65536
        while True:
            connection.sendall(chunk)
    if mode == "sparse":
        os.truncate(options["reply"], 8 << 30)
        print(f"reply {options['reply']}", flush=True)  # for the test to check it is removed
    else:
        lines = {"escapes": f"result=ok\nrecording=true\nfile=/tmp/\x1b]0;pwned\x07\x1b[2Jx.jfr\nlive_bytes=1e999\n"
                            f"samples=12\x1b[31m\ntoken={options.get('token', '')}\n",
                 "names": f"result=ok\nrecording=true\nfile={victim}\ntoken={options.get('token', '')}\n"}[mode]
        with open(options["reply"], "w") as reply:
            reply.write(lines)
    connection.sendall(b"0\nreturn code: 0\n")


def main():
    mode, libdir = sys.argv[1], sys.argv[2]
    victim = sys.argv[3] if len(sys.argv) > 3 else ""
    ctypes.CDLL(os.path.join(libdir, "libjvm.so"))
    path = f"/tmp/.java_pid{os.getpid()}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    print("ready", flush=True)
    try:
        while True:
            connection, _ = server.accept()
            try:
                answer(mode, connection, victim)
            except (BrokenPipeError, ConnectionResetError):
                pass
            connection.close()
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
