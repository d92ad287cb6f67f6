"""A minimal FastCGI client (the protocol's responder role) for the php-fpm tests:
one request per connection, its stdout returned without the headers."""

import socket
import struct

VERSION, BEGIN_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT = 1, 1, 3, 4, 5, 6
RESPONDER = 1


def _record(kind, content, request_id=1):
    return struct.pack(">BBHHBx", VERSION, kind, request_id, len(content), 0) + content


def _length(n):
    return bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)


def _params(params):
    return b"".join(_length(len(k)) + _length(len(v)) + k + v
                    for k, v in ((k.encode(), str(v).encode()) for k, v in params.items()))


def request(address, script, timeout=30):
    """Runs `script` (an absolute path) through the FastCGI server at (host, port)."""
    params = {"SCRIPT_FILENAME": script, "SCRIPT_NAME": script, "REQUEST_METHOD": "GET", "QUERY_STRING": "",
              "SERVER_PROTOCOL": "HTTP/1.1", "GATEWAY_INTERFACE": "CGI/1.1"}
    with socket.create_connection(address, timeout=timeout) as s:
        s.sendall(_record(BEGIN_REQUEST, struct.pack(">HB5x", RESPONDER, 0)) + _record(PARAMS, _params(params)) +
                  _record(PARAMS, b"") + _record(STDIN, b""))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    out = b""
    while len(data) >= 8:
        _, kind, _, length, padding = struct.unpack(">BBHHB", data[:7])
        if kind == STDOUT:
            out += data[8:8 + length]
        data = data[8 + length + padding:]
    return out.split(b"\r\n\r\n", 1)[-1].decode()
