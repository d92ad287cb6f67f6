"""A local stand-in for the servers nmprof uploads to, started by the tests on
127.0.0.1 (an ephemeral port, or a given one), faithful to what they accept:

- Pyroscope's ingest API (grafana/pyroscope pkg/ingester/pyroscope/ingest_handler.go):
  POST /ingest with the query parameters name, from, until, format, units,
  aggregationType, spyName; `name` parsed as api/model/labelset/labelset.go does (an
  invalid one is a 400 with a JSON error, as Pyroscope answers); format=pprof takes
  the body as the profile; format=jfr a multipart form whose *file* field "jfr"
  (gunzipped when it starts with gzip's magic, as pkg/og/convert/jfr/profile.go does)
  is the recording.
- The OTLP/HTTP profiles endpoint (POST /v1development/profiles): binary protobuf
  (application/x-protobuf; 415 otherwise, as Pyroscope's and the collector's), gzip
  Content-Encoding undone; the answer is an empty ExportProfilesServiceResponse.

Every request is recorded (Request below). Faults are scripted: `script` is a list of
what to do with the next requests, one item each, then 200 for the rest:
  500, 429, 400 ...            answer with that status (a JSON error body for 4xx)
  (429, {"Retry-After": "2"})  with these headers
  "hang"                       read the request, then never answer
  "close-mid-body"             read part of the body, then close the connection
"""

import gzip
import http.server
import json
import re
import socket
import threading
import time
import urllib.parse


class Request:
    def __init__(self, handler, body, complete):
        self.time = time.monotonic()
        self.method = handler.command
        url = urllib.parse.urlsplit(handler.path)
        self.path = url.path
        self.query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        self.raw_query = url.query
        self.headers = {k.lower(): v for k, v in handler.headers.items()}
        self.body = body  # as sent (before Content-Encoding is undone)
        self.complete = complete  # False: the connection was closed mid-body
        self.payload = None  # what the server would ingest (pprof, JFR or OTLP bytes)
        self.form = {}  # multipart fields: name -> (filename, bytes)

    def param(self, name):
        values = self.query.get(name, [])
        assert len(values) == 1, (name, self.query)
        return values[0]


def parse_label_set(name):
    """api/model/labelset/labelset.go: APP{k=v,...}; the app may hold letters, digits,
    _ . - /; label names letters, digits, _ and .; values run to the next ',' or '}'.
    Returns (app, labels) or raises ValueError as Pyroscope refuses it."""
    app, _, rest = name.partition("{")
    app = app.strip()
    if not app or not re.fullmatch(r"[A-Za-z0-9_./-]+", app):
        raise ValueError(f"invalid service name: {app!r}")
    labels = {}
    if rest:
        body = rest.split("}", 1)[0]
        for pair in filter(None, body.split(",")):
            key, eq, value = pair.partition("=")
            key = key.strip()
            if not eq or not re.fullmatch(r"[A-Za-z0-9_.]+", key) or key == "__name__":
                raise ValueError(f"invalid label name: {key!r}")
            labels[key] = value.strip()
    return app, labels


def parse_multipart(content_type, body):
    """The fields of a multipart/form-data body: name -> (filename or None, bytes)."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        raise ValueError("malformed multipart content type header")
    boundary = b"--" + match.group(1).encode()
    if not body.startswith(boundary):
        raise ValueError("the body does not start with the boundary")
    fields = {}
    for part in body.split(boundary)[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part[2:].partition(b"\r\n\r\n")
        assert data.endswith(b"\r\n"), "a part ends with CRLF before the boundary"
        disposition = re.search(rb'name="([^"]*)"(?:; filename="([^"]*)")?', head)
        name = disposition.group(1).decode()
        filename = disposition.group(2).decode() if disposition.group(2) is not None else None
        fields[name] = (filename, data[:-2])
    return fields


def gunzipped(data):
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


class UploadServer:
    def __init__(self, port=0, script=(), certificate=None):
        self.requests = []
        self.script = list(script)
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.stopping = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                with server.lock:
                    action = server.script.pop(0) if server.script else 200
                length = int(self.headers.get("Content-Length", "0"))
                if action == "close-mid-body":
                    body = self.rfile.read(min(length // 2, 1024))
                    server.record(Request(self, body, complete=False))
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                body = self.rfile.read(length)
                request = Request(self, body, complete=len(body) == length)
                status, headers, answer = server.ingest(request, action)
                server.record(request)
                if action == "hang":
                    server.stopping.wait()
                    return
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        if certificate:
            import ssl
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*certificate)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, scheme="http"):
        return f"{scheme}://127.0.0.1:{self.port}"

    def record(self, request):
        with self.arrived:
            self.requests.append(request)
            self.arrived.notify_all()

    def wait_for(self, count, timeout=30):
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.requests) >= count, timeout)
            return list(self.requests)

    def ingest(self, request, action):
        """(status, headers, body) as the server would answer; fills request.payload."""
        def error(status, message):
            # pkg/util/http ErrorWithStatus: {"code": ..., "message": ...}
            return status, {"Content-Type": "application/json"}, json.dumps(
                {"code": "invalid_argument", "message": message}).encode() + b"\n"
        try:
            if request.path == "/ingest":
                parse_label_set(request.param("name"))
                fmt = request.param("format")
                if fmt == "pprof":
                    request.payload = request.body
                elif fmt == "jfr":
                    request.form = parse_multipart(request.headers.get("content-type", ""), request.body)
                    filename, jfr = request.form.get("jfr", (None, b""))
                    if filename is None:
                        return error(400, "jfr field is required")  # form.ReadField takes file fields only
                    request.payload = gunzipped(jfr)
                else:
                    return error(400, f"unknown format {fmt!r}")
                answer = (200, {}, b"")
            elif request.path == "/v1development/profiles":
                content_type = request.headers.get("content-type", "")
                if content_type not in ("application/x-protobuf", "application/protobuf"):
                    return 415, {"Content-Type": "text/plain"}, f"Unsupported Content-Type: {content_type}".encode()
                body = request.body
                if request.headers.get("content-encoding", "").lower() == "gzip":
                    body = gzip.decompress(body)
                request.payload = body
                answer = (200, {"Content-Type": "application/x-protobuf"}, b"")
            else:
                return 404, {"Content-Type": "text/plain"}, b"404 page not found\n"
        except ValueError as e:
            return error(400, f"name: {e}")
        if isinstance(action, tuple):
            status, headers = action
            return status, headers, json.dumps({"code": "unavailable", "message": f"scripted {status}"}).encode()
        if isinstance(action, int) and action != 200:
            if 400 <= action < 500:
                return error(action, f"scripted refusal {action}")
            return action, {"Content-Type": "text/plain"}, f"scripted {action}\n".encode()
        return answer

    def close(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
