"""Uploads (issue 32): `run` and `attach` send the profile they wrote to Pyroscope's
ingest API (--upload) and to an OTLP collector (--otlp), from nmprof's process, and
the file stays on disk. A local server (upload_server.py) stands in for both and
records every request; each payload is decoded by a real parser (go tool pprof,
the JDK's jfr, protoc with the vendored .proto files) and compared with the file
on disk. Then the faults: a server that is down, busy, rate-limiting, refusing,
silent or closing mid-body, TLS, and nmprof killed mid-upload."""

import contextlib
import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import HERE, JDK17, jfr_events, jfr_tool, report_json, run
from test_attach_native import finished_ok, program, target  # noqa: F401 (fixtures)
from test_formats import needs_go, pprof, raw_samples
from upload_server import UploadServer, free_port, parse_label_set

PROTO_ROOT = HERE.parent / "third_party" / "opentelemetry-proto"
PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
REQUEST_TYPE = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"
PROTOC = shutil.which("protoc")
needs_protoc = pytest.mark.skipif(PROTOC is None, reason="protoc is needed (apt install protobuf-compiler)")


@pytest.fixture
def server():
    servers = []

    def make(**kwargs):
        s = UploadServer(**kwargs)
        servers.append(s)
        return s
    yield make
    for s in servers:
        s.close()


@pytest.fixture(scope="module")
def leak(programs):
    return programs.c("live_leak.c")


@contextlib.contextmanager
def started(nmprof, *args, **popen):
    """nmprof in the background, in a session of its own (killed with all it started
    if the test leaves it running)."""
    proc = subprocess.Popen([str(nmprof), *map(str, args)], stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **popen)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def upload_run(nmprof, leak, out, *options, threads=1, leaks=2000, timeout=120):
    return run(nmprof, "run", "--nativemem", "64k", "-o", out, *options, "--", leak, threads, leaks, timeout=timeout)


def warnings(result):
    return [line for line in result.stderr.splitlines() if "warning" in line]


# --- decoding ---------------------------------------------------------------------

def raw_by_leaf(path):
    """Per sample type, the values of a pprof profile summed by innermost function, as
    `go tool pprof -raw` decodes it."""
    text = pprof("-raw", path)
    types, _ = raw_samples(path)
    names = {}
    for line in text[text.index("Locations"):].splitlines():
        m = re.match(r"^\s*(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(\S+)", line)
        if m:
            names[m.group(1)] = m.group(2)
    totals = {t: {} for t in types}
    samples = text[text.index("Samples:"):text.index("Locations")].splitlines()[2:]
    for line in samples:
        m = re.match(r"^\s*([-\d\s]+):\s*(\d+)", line)
        if not m:
            continue
        leaf = names[m.group(2)]
        for t, v in zip(types, map(int, m.group(1).split())):
            if v:
                totals[t][leaf] = totals[t].get(leaf, 0) + v
    return totals


def parse_text_format(text):
    """protoc's text format as nested dicts of field -> [values]."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[{}]|[A-Za-z_][A-Za-z0-9_]*:?|-?[0-9][0-9.eE+-]*', text)
    stack = [{}]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "}":
            stack.pop()
            i += 1
        elif token.endswith(":"):
            value = tokens[i + 1]
            if value.startswith('"'):
                value = value[1:-1].encode("latin-1").decode("unicode_escape")
            elif value in ("true", "false"):
                value = value == "true"
            else:
                value = int(value) if re.fullmatch(r"-?\d+", value) else value
            stack[-1].setdefault(token[:-1], []).append(value)
            i += 2
        else:  # a message: name {
            child = {}
            stack[-1].setdefault(token, []).append(child)
            stack.append(child)
            i += 2
    return stack[0]


def protoc_decode(payload, tmp_path):
    path = tmp_path / "otlp.bin"
    path.write_bytes(payload)
    with open(path, "rb") as f:
        result = subprocess.run([PROTOC, f"--decode={REQUEST_TYPE}", f"-I{PROTO_ROOT}", PROTO], stdin=f,
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return parse_text_format(result.stdout)


def one(message, field, default=None):
    values = message.get(field, [])
    assert len(values) <= 1, (field, values)
    return values[0] if values else default


class Otlp:
    """An ExportProfilesServiceRequest, decoded by protoc."""

    def __init__(self, request):
        self.request = request
        self.dictionary = one(request, "dictionary")
        self.strings = self.dictionary["string_table"]
        [resource_profiles] = request["resource_profiles"]
        self.resource = {one(kv, "key"): self.any_value(one(kv, "value", {}))
                         for kv in one(resource_profiles, "resource", {}).get("attributes", [])}
        [self.scope_profiles] = resource_profiles["scope_profiles"]
        self.profiles = {}
        for profile in self.scope_profiles["profiles"]:
            st = one(profile, "sample_type")
            self.profiles[self.string(one(st, "type_strindex", 0))] = profile

    def string(self, index):
        return self.strings[index]

    @staticmethod
    def any_value(value):
        return one(value, "string_value", one(value, "int_value"))

    def table(self, name):
        # Elements with every field at its default print as "name {\n}".
        return self.dictionary.get(name, [])

    def leaf(self, sample):
        stack = self.table("stack_table")[one(sample, "stack_index", 0)]
        first = self.table("location_table")[stack["location_indices"][0]]
        function = self.table("function_table")[one(one(first, "lines"), "function_index", 0)]
        return self.string(one(function, "name_strindex", 0))

    def attributes(self, sample):
        out = {}
        for index in sample.get("attribute_indices", []):
            attribute = self.table("attribute_table")[index]
            out[self.string(one(attribute, "key_strindex", 0))] = self.any_value(one(attribute, "value", {}))
        return out

    def by_leaf(self, sample_type):
        totals = {}
        for sample in self.profiles[sample_type].get("samples", []):
            [value] = sample["values"]
            leaf = self.leaf(sample)
            totals[leaf] = totals.get(leaf, 0) + value
        return totals


def jfr_form_payload(request):
    assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert set(request.form) == {"jfr"}, request.form.keys()
    filename, data = request.form["jfr"]
    assert filename, "a file field, as Pyroscope's form.ReadField reads"
    assert data[:2] == b"\x1f\x8b"  # gzipped, as Pyroscope's Java agent sends it
    return gzip.decompress(data)


# --- what is sent -------------------------------------------------------------------

@needs_go
def test_pprof_upload_is_the_profile_written_with_pyroscopes_query(nmprof, leak, server, tmp_path):
    s = server()
    out = tmp_path / "leak.pb.gz"
    start = time.time()
    result = upload_run(nmprof, leak, out, "--upload", s.url(), "--app", "shop", "--tag", "env=test",
                        "--tag", "region=eu-1")
    end = time.time()
    assert result.returncode == 0, result.stderr
    [request] = s.wait_for(1)
    assert request.method == "POST" and request.path == "/ingest"
    assert parse_label_set(request.param("name")) == ("shop", {"env": "test", "region": "eu-1"})
    assert request.param("format") == "pprof"
    assert request.param("units") == "bytes"
    assert request.param("aggregationType") == "sum"
    assert request.param("spyName") == "nmprof"
    assert int(start) - 1 <= int(request.param("from")) <= int(request.param("until")) <= int(end) + 1
    assert request.headers["content-type"] == "application/octet-stream"
    assert request.headers["user-agent"].startswith("nmprof/")
    # The very bytes of the file, which stays on disk.
    assert request.payload == out.read_bytes()
    payload = tmp_path / "payload.pb.gz"
    payload.write_bytes(request.payload)
    types, samples = raw_samples(payload)
    assert types == ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"]  # Go's heap profile names
    assert raw_by_leaf(payload)["inuse_space"].get("site_leak", 0) > 0
    assert f"profile sent to Pyroscope at {s.url()}" in result.stderr
    assert not warnings(result), result.stderr


@needs_go
def test_a_jfr_output_is_sent_as_its_pprof(nmprof, leak, server, tmp_path):
    s = server()
    out = tmp_path / "leak.jfr"
    result = upload_run(nmprof, leak, out, "--upload", s.url() + "/", "-q")
    assert result.returncode == 0, result.stderr
    [request] = s.wait_for(1)
    assert request.path == "/ingest"  # the base URL's trailing slash is not doubled
    assert parse_label_set(request.param("name")) == ("live_leak", {})  # the program's name
    assert out.exists()
    expected = tmp_path / "expected.pb.gz"
    run(nmprof, "report", out, "-o", expected, check=0)
    payload = tmp_path / "payload.pb.gz"
    payload.write_bytes(request.payload)
    assert raw_by_leaf(payload) == raw_by_leaf(expected)
    assert result.stderr.count("\n") == 1, result.stderr  # -q: only where the file is


def test_jfr_upload_is_pyroscopes_multipart_form_with_the_recording(nmprof, leak, server, tmp_path):
    s = server()
    out = tmp_path / "leak.jfr"
    result = upload_run(nmprof, leak, out, "--upload", s.url(), "--upload-format", "jfr")
    assert result.returncode == 0, result.stderr
    [request] = s.wait_for(1)
    assert request.param("format") == "jfr"
    payload = jfr_form_payload(request)
    assert payload == out.read_bytes()
    sent = tmp_path / "sent.jfr"
    sent.write_bytes(payload)
    mallocs = jfr_events(sent, "profiler.Malloc")
    assert mallocs and len(mallocs) == len(jfr_events(out, "profiler.Malloc"))
    assert any(e["values"]["size"] == 1000 for e in mallocs)  # site_leak's blocks


@needs_protoc
@needs_go
def test_otlp_export_is_the_profile_as_otlp_profiles(nmprof, leak, server, tmp_path):
    s = server()
    out = tmp_path / "leak.jfr"
    result = upload_run(nmprof, leak, out, "--otlp", s.url(), "--tag", "env=test", "--tag", "team=a,b")
    assert result.returncode == 0, result.stderr
    [request] = s.wait_for(1)
    assert request.path == "/v1development/profiles"
    assert request.headers["content-type"] == "application/x-protobuf"
    assert request.headers["content-encoding"] == "gzip"
    otlp = Otlp(protoc_decode(request.payload, tmp_path))
    pid = report_json(nmprof, out)["processes"][0]["pid"]
    assert otlp.resource == {"service.name": "live_leak", "process.pid": pid, "host.name": socket.gethostname(),
                             "env": "test", "team": "a,b"}
    assert one(one(otlp.scope_profiles, "scope"), "name") == "nmprof"
    assert list(otlp.profiles) == ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"]
    for name, profile in otlp.profiles.items():
        period_type = one(profile, "period_type")
        assert otlp.string(one(period_type, "type_strindex")) == "space"
        assert one(profile, "period") == 65536
    # Element 0 of every table is its zero value.
    for table in ("mapping_table", "location_table", "function_table", "attribute_table", "stack_table"):
        assert otlp.table(table)[0] == {}, table
    assert otlp.strings[0] == ""
    # The same profile as the file: by innermost function, for every sample type.
    expected = tmp_path / "expected.pb.gz"
    run(nmprof, "report", out, "-o", expected, check=0)
    pprof_totals = raw_by_leaf(expected)
    for sample_type in otlp.profiles:
        assert otlp.by_leaf(sample_type) == pprof_totals[sample_type], sample_type
    assert f"profile sent to the OTLP collector at {s.url()}/v1development/profiles" in result.stderr


@pytest.fixture(scope="module")
def requests_program(tmp_path_factory):
    program = tmp_path_factory.mktemp("context") / "context_requests"
    subprocess.run(["gcc", "-O2", "-g", f"-I{HERE.parent / 'include'}", "-o", str(program),
                    str(HERE / "programs" / "context_requests.c"), "-pthread"], check=True)
    return program


def raw_labels(path):
    """Each sample's labels as `go tool pprof -raw` prints them: [{key: value}]."""
    text = pprof("-raw", path)
    samples = []
    for line in text[text.index("Samples:"):text.index("Locations")].splitlines()[2:]:
        if re.match(r"^\s*[-\d\s]+:", line):
            samples.append({})
        elif samples:  # key:[value] key:[value] ...
            for key, value in re.findall(r"([^:\[\]]+):\[([^\]]*)\]", line):
                samples[-1][key.strip()] = value
    return samples


@needs_go
def test_pyroscope_gets_span_ids_in_hex_and_no_local_root_span_id(nmprof, requests_program, server, tmp_path):
    s = server()
    out = tmp_path / "requests.pb.gz"
    result = run(nmprof, "run", "-q", "--nativemem", "256k", "--context-attributes", "route,tenant", "--upload",
                 s.url(), "-o", out, "--", requests_program)
    assert result.returncode == 0, result.stderr
    [request] = s.wait_for(1)
    payload = tmp_path / "payload.pb.gz"
    payload.write_bytes(request.payload)
    on_disk, sent = raw_labels(out), raw_labels(payload)
    assert len(on_disk) == len(sent)
    with_span = 0
    for kept, uploaded in zip(on_disk, sent):
        assert "local root span id" in kept or "span_id" not in kept
        assert "local root span id" not in uploaded  # Pyroscope: a series per request, and a name it refuses
        if "span_id" in kept:
            with_span += 1
            assert uploaded["span_id"] == f"{int(kept['span_id']):016x}"  # as Pyroscope decodes span ids
        assert {k: v for k, v in uploaded.items() if k != "span_id"} == \
            {k: v for k, v in kept.items() if k not in ("span_id", "local root span id")}
    assert with_span > 0
    assert raw_by_leaf(payload) == raw_by_leaf(out)  # the same samples and values


@needs_protoc
def test_otlp_samples_carry_span_ids_and_context_as_attributes(nmprof, requests_program, server, tmp_path):
    s = server()
    out = tmp_path / "requests.jfr"
    result = run(nmprof, "run", "-q", "--nativemem", "256k", "--context-attributes", "route,tenant", "--otlp",
                 s.url(), "--app", "shop", "-o", out, "--", requests_program)
    assert result.returncode == 0, result.stderr
    [request] = s.wait_for(1)
    otlp = Otlp(protoc_decode(request.payload, tmp_path))
    assert otlp.resource["service.name"] == "shop"
    routes = {}
    for sample in otlp.profiles["alloc_space"]["samples"]:
        attributes = otlp.attributes(sample)
        assert "local root span id" not in attributes  # one series per request in Pyroscope: left out
        if "route" in attributes:
            # 16 hex digits, as OpenTelemetry and Pyroscope spell span ids.
            assert re.fullmatch(r"[0-9a-f]{16}", attributes["span_id"]) and int(attributes["span_id"], 16) > 0
            assert attributes["tenant"] in ("tenant-0", "tenant-1")
            routes[attributes["route"]] = routes.get(attributes["route"], 0) + sample["values"][0]
    assert set(routes) == {"/checkout", "/search", "/static"}, routes
    assert routes["/checkout"] > routes["/search"] > routes["/static"]


@needs_protoc
def test_both_destinations_get_the_profile_and_headers_come_from_env_and_file(nmprof, leak, server, tmp_path):
    pyroscope, collector = server(), server()
    headers = tmp_path / "headers"
    headers.write_text("# the tenant\nX-Scope-OrgID: team-a\nAuthorization: Bearer s3cret\n")
    headers.chmod(0o600)
    env = dict(os.environ, NMPROF_UPLOAD_HEADERS="X-Extra: from-env")
    out = tmp_path / "leak.jfr"
    result = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--upload", pyroscope.url(), "--otlp",
                 collector.url(), "--upload-header-file", headers, "--", leak, 1, 500, env=env)
    assert result.returncode == 0, result.stderr
    for s in (pyroscope, collector):
        [request] = s.wait_for(1)
        assert request.headers["authorization"] == "Bearer s3cret"
        assert request.headers["x-scope-orgid"] == "team-a"
        assert request.headers["x-extra"] == "from-env"
    assert "s3cret" not in result.stderr


# --- faults -----------------------------------------------------------------------

def test_a_server_that_comes_up_late_still_gets_the_profile(nmprof, leak, tmp_path):
    port = free_port()
    out = tmp_path / "leak.pb.gz"
    with started(nmprof, "run", "--nativemem", "64k", "-o", out, "--upload", f"http://127.0.0.1:{port}",
                 "--upload-timeout", "60", "--", leak, 1, 500) as proc:
        deadline = time.monotonic() + 60
        while "retrying" not in (line := proc.stderr.readline()):  # the first attempt failed: nobody listens
            assert line and time.monotonic() < deadline, "no retry announced"
        assert "Couldn't connect" in line, line
        s = UploadServer(port=port)
        try:
            _, rest = proc.communicate(timeout=60)
            [request] = s.wait_for(1)
        finally:
            s.close()
    assert proc.returncode == 0, rest
    assert request.complete and request.payload == out.read_bytes()
    assert "profile sent to Pyroscope" in rest
    assert "retrying" not in rest  # said once
    assert "warning" not in rest


def test_a_server_error_is_retried_with_the_same_payload(nmprof, leak, server, tmp_path):
    s = server(script=[500, 503])
    out = tmp_path / "leak.pb.gz"
    result = upload_run(nmprof, leak, out, "--upload", s.url(), leaks=500)
    assert result.returncode == 0, result.stderr
    requests = s.wait_for(3)
    assert len(requests) == 3
    assert requests[0].payload == requests[1].payload == requests[2].payload == out.read_bytes()
    # Backoff between attempts: about half a second, then about one (with jitter).
    assert requests[1].time - requests[0].time >= 0.4
    assert requests[2].time - requests[1].time >= 0.9
    assert result.stderr.count("retrying") == 1 and "HTTP 500" in result.stderr, result.stderr
    assert "profile sent to Pyroscope" in result.stderr and "warning" not in result.stderr


def test_retry_after_is_honoured(nmprof, leak, server, tmp_path):
    s = server(script=[(429, {"Retry-After": "3"})])
    out = tmp_path / "leak.pb.gz"
    result = upload_run(nmprof, leak, out, "--upload", s.url(), leaks=500)
    assert result.returncode == 0, result.stderr
    first, second = s.wait_for(2)
    assert 2.9 <= second.time - first.time <= 6, second.time - first.time
    assert "HTTP 429" in result.stderr and "profile sent" in result.stderr


def test_a_refusal_is_said_once_with_the_servers_message_and_not_retried(nmprof, leak, server, tmp_path):
    s = server(script=[400])
    out = tmp_path / "leak.pb.gz"
    result = upload_run(nmprof, leak, out, "--upload", s.url(), "--upload-timeout", "5", leaks=500)
    assert result.returncode == 0, result.stderr  # the program's status: the profile is on disk
    time.sleep(1)
    assert len(s.requests) == 1  # no retry storm
    [line] = warnings(result)
    assert line == (f"nmprof: warning: Pyroscope at {s.url()} did not take {out} "
                    "(HTTP 400: scripted refusal 400); it stays on disk"), result.stderr
    assert "retrying" not in result.stderr and "profile sent" not in result.stderr
    assert out.read_bytes()[:2] == b"\x1f\x8b"


def test_a_redirect_is_named_not_followed(nmprof, leak, server, tmp_path):
    s = server(script=[(308, {"Location": "https://127.0.0.1:1/ingest"})])  # http:// sent on to https://
    out = tmp_path / "leak.pb.gz"
    result = upload_run(nmprof, leak, out, "--upload", s.url(), "--upload-timeout", "5", leaks=500)
    assert result.returncode == 0, result.stderr
    [line] = warnings(result)
    assert line == (f"nmprof: warning: Pyroscope at {s.url()} did not take {out} (HTTP 308: redirected to "
                    "https://127.0.0.1:1/ingest, which nmprof does not follow); it stays on disk"), line
    assert len(s.requests) == 1


def flush_after_request(nmprof, leak, s, out, timeout):
    """nmprof run uploading to `s`: its exit status, its stderr, and how long it took
    to end after the server's first request."""
    with started(nmprof, "run", "--nativemem", "64k", "-o", out, "--upload", s.url(), "--upload-timeout", timeout,
                 "--", leak, 1, 500) as proc:
        [request] = s.wait_for(1)
        _, err = proc.communicate(timeout=60)
        return proc.returncode, err, time.monotonic() - request.time


def test_a_server_that_never_answers_costs_at_most_the_upload_timeout(nmprof, leak, server, tmp_path):
    s = server(script=["hang"])
    out = tmp_path / "leak.jfr"
    status, err, waited = flush_after_request(nmprof, leak, s, out, 2)
    assert status == 0, err
    assert waited <= 2 + 1, waited  # the timeout, and a little
    [line] = [l for l in err.splitlines() if "warning" in l]
    assert line == (f"nmprof: warning: {out} was not sent to Pyroscope at {s.url()} (not taken within "
                    "--upload-timeout 2 s; no answer yet); it stays on disk"), err
    assert report_json(nmprof, out)["totals"]["estimated_bytes"] > 0


def test_a_connection_closed_mid_body_is_retried(nmprof, leak, server, tmp_path):
    s = server(script=["close-mid-body"])
    out = tmp_path / "leak.pb.gz"
    result = upload_run(nmprof, leak, out, "--upload", s.url(), leaks=500)
    assert result.returncode == 0, result.stderr
    first, second = s.wait_for(2)
    assert not first.complete and second.complete
    assert second.payload == out.read_bytes()
    assert "retrying" in result.stderr and "profile sent" in result.stderr


def test_an_interrupt_cuts_the_flush_short_and_names_the_file(nmprof, leak, server, tmp_path):
    s = server(script=["hang"])
    out = tmp_path / "leak.jfr"
    with started(nmprof, "run", "--nativemem", "64k", "-o", out, "--upload", s.url(), "--upload-timeout", "60",
                 "--", leak, 1, 500) as proc:
        s.wait_for(1)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGTERM, err  # ends by the signal, as a shell expects
    assert f"{out} was not sent to Pyroscope at {s.url()} (interrupted; no answer yet); it stays on disk" in err
    assert "came while the profile is written" not in err  # it was written before the upload began
    assert report_json(nmprof, out)["totals"]["estimated_bytes"] > 0


def test_a_signal_nmprof_ignores_does_not_cut_the_flush_short(nmprof, leak, server, tmp_path):
    """Under nohup a hangup is ignored: the upload goes on (it was abandoned at once)."""
    s = server(script=[(503, {"Retry-After": "2"})])
    out = tmp_path / "leak.pb.gz"
    with started(nmprof, "run", "--nativemem", "64k", "-o", out, "--upload", s.url(), "--upload-timeout", "30",
                 "--", leak, 1, 500, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) as proc:
        s.wait_for(1)
        time.sleep(0.3)
        proc.send_signal(signal.SIGHUP)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    first, second = s.wait_for(2)
    assert second.payload == out.read_bytes()
    assert "profile sent to Pyroscope" in err and "warning" not in err, err


def test_a_retry_after_past_the_upload_timeout_ends_the_flush_and_says_so(nmprof, leak, server, tmp_path):
    s = server(script=[(429, {"Retry-After": "3600"})])
    out = tmp_path / "leak.pb.gz"
    status, err, waited = flush_after_request(nmprof, leak, s, out, 20)
    assert status == 0, err
    assert waited < 5, waited  # not the 20 s of --upload-timeout: no attempt could come within them
    [line] = [l for l in err.splitlines() if "warning" in l]
    assert re.fullmatch(rf"nmprof: warning: {re.escape(str(out))} was not sent to Pyroscope at {s.url()} \(the server "
                        r"asked to wait 3(600|599) s more \(Retry-After\), past --upload-timeout 20 s; last: HTTP 429: "
                        r"scripted 429\); it stays on disk", line), line


def certificate(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's certificate")
def test_https_works_and_an_untrusted_certificate_is_one_clear_error(nmprof, leak, server, tmp_path):
    cert, key = certificate(tmp_path)
    s = server(certificate=(cert, key))
    out = tmp_path / "leak.pb.gz"
    untrusted = upload_run(nmprof, leak, out, "--upload", s.url("https"), leaks=500)
    [line] = warnings(untrusted)  # the system's CAs do not know the certificate
    assert re.fullmatch(rf"nmprof: warning: Pyroscope at {s.url('https')} did not take {out} \(TLS: .*certificate.*\); "
                        "it stays on disk", line), line
    assert s.requests == []
    result = run(nmprof, "run", "--nativemem", "64k", "-o", out, "--upload", s.url("https"), "--", leak, 1, 500,
                 env=dict(os.environ, CURL_CA_BUNDLE=str(cert)))
    assert result.returncode == 0 and "profile sent" in result.stderr, result.stderr
    [request] = s.wait_for(1)
    assert request.payload == out.read_bytes()


def test_https_to_a_plain_http_server_is_a_tls_error_without_retries(nmprof, leak, server, tmp_path):
    s = server()
    out = tmp_path / "leak.pb.gz"
    start = time.monotonic()
    result = upload_run(nmprof, leak, out, "--upload", s.url("https"), "--upload-timeout", "30", leaks=500)
    assert time.monotonic() - start < 20
    [line] = warnings(result)
    assert "(TLS: " in line and "the server does not speak TLS: an http:// URL?" in line, line
    assert "it stays on disk" in line, line
    assert "retrying" not in result.stderr


def test_sigkill_during_an_upload_leaves_the_program_running_and_the_file_readable(
        nmprof, target, server, tmp_path):  # noqa: F811
    s = server(script=["hang"])
    stop = tmp_path / "stop"
    t = target("loop", stop)
    out = tmp_path / "attached.jfr"
    with started(nmprof, "attach", t.pid, "--nativemem", "64k", "--duration", "1", "-o", out, "--upload", s.url(),
                 "--upload-timeout", "60") as proc:
        [request] = s.wait_for(1)
        assert parse_label_set(request.param("name"))[0] == "attach_target"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    time.sleep(0.5)
    assert t.proc.poll() is None  # the program runs on
    finished_ok(t, stop)
    assert report_json(nmprof, out)["totals"]["estimated_bytes"] > 0


def test_sigkill_of_run_during_an_upload_leaves_the_file_readable(nmprof, leak, server, tmp_path):
    s = server(script=["hang"])
    out = tmp_path / "leak.pb.gz"
    with started(nmprof, "run", "--nativemem", "64k", "-o", out, "--upload", s.url(), "--", leak, 1, 500) as proc:
        [request] = s.wait_for(1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert out.read_bytes() == request.payload  # complete before the upload began


# --- attach ---------------------------------------------------------------------------

@needs_protoc
def test_attach_one_shot_and_stop_upload_what_they_collect(nmprof, target, server, tmp_path):  # noqa: F811
    pyroscope, collector = server(), server()
    stop = tmp_path / "stop"
    t = target("loop", stop)
    out = tmp_path / "one-shot.jfr"
    result = run(nmprof, "attach", t.pid, "--nativemem", "64k", "--duration", "1", "-o", out, "--upload",
                 pyroscope.url(), "--otlp", collector.url(), "--tag", "env=test")
    assert result.returncode == 0, result.stderr
    [request] = pyroscope.wait_for(1)
    assert parse_label_set(request.param("name")) == ("attach_target", {"env": "test"})
    [exported] = collector.wait_for(1)
    otlp = Otlp(protoc_decode(exported.payload, tmp_path))
    assert otlp.resource["process.pid"] == t.pid and otlp.resource["service.name"] == "attach_target"
    assert otlp.resource["env"] == "test"

    run(nmprof, "attach", t.pid, "start", "--nativemem", "64k", "--tag", "env=later", check=0)
    time.sleep(1)
    stopped = tmp_path / "stopped.pb.gz"
    result = run(nmprof, "attach", t.pid, "stop", "-o", stopped, "--upload", pyroscope.url(), "--app", "svc")
    assert result.returncode == 0, result.stderr
    _, second = pyroscope.wait_for(2)
    assert parse_label_set(second.param("name")) == ("svc", {"env": "later"})  # the tags the recording has
    assert second.payload == stopped.read_bytes()
    finished_ok(t, stop)


def test_attach_loop_uploads_each_chunk_as_written(nmprof, target, server, tmp_path):  # noqa: F811
    s = server()
    stop = tmp_path / "stop"
    t = target("loop", stop)
    result = run(nmprof, "attach", t.pid, "--loop", "1s", "--duration", "3.5", "--nativemem", "64k", "-q",
                 "-o", tmp_path / "c-%n.pb.gz", "--upload", s.url())
    assert result.returncode == 0, result.stderr
    files = sorted(tmp_path.glob("c-*.pb.gz"), key=lambda f: int(f.name[2:-6]))
    assert len(files) >= 3, result.stderr
    requests = s.wait_for(len(files))
    assert [r.payload for r in requests] == [f.read_bytes() for f in files]
    assert {parse_label_set(r.param("name"))[0] for r in requests} == {"attach_target"}
    # Each chunk starts where the one before it ended (in whole seconds, rounded outwards).
    spans = [(int(r.param("from")), int(r.param("until"))) for r in requests]
    assert all(a[0] < b[0] <= a[1] for a, b in zip(spans, spans[1:])), spans
    finished_ok(t, stop)


# --- refusals -----------------------------------------------------------------------

def refused(result, code, *words):
    assert result.returncode == code, result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert lines and lines[0].startswith("nmprof: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize("options, words", [
    (["--upload-header", "Authorization: Bearer x"], ["--upload-header: not taken on the command line, where ps shows it", "NMPROF_UPLOAD_HEADERS"]),
    (["--upload", "localhost:4040"], ["--upload: 'localhost:4040' is not a URL"]),
    (["--upload", ""], ["--upload: empty URL"]),  # "$PYROSCOPE_URL" unset: it sent nothing, silently
    (["--otlp", ""], ["--otlp: empty URL"]),
    (["--upload", "ftp://host"], ["not an http:// or https:// URL"]),
    (["--upload", "https://user:pw@host"], ["credentials, which would show in ps"]),
    (["--otlp", "http://host:99999"], ["--otlp", "no valid host[:port]"]),
    (["--app", "shop"], ["--app goes with --upload URL or --otlp URL"]),
    (["--upload-timeout", "5"], ["--upload-timeout goes with"]),
    (["--upload", "http://h", "--upload-timeout", "0"], ["--upload-timeout", "not a number of seconds"]),
    (["--upload", "http://h", "--upload-format", "xml"], ["--upload-format"]),
    (["--otlp", "http://h", "--upload-format", "jfr"], ["--upload-format", "goes with --upload"]),
    (["--upload", "http://h", "--app", "my app"], ["--app", "does not take"]),
    (["--upload", "http://h", "--tag", "team=a,b"], ["cannot hold ','"]),
    (["--upload", "http://h", "--upload-header-file", "/nonexistent/h"], ["cannot read /nonexistent/h"]),
])
def test_bad_upload_options_are_one_line_and_nothing_runs(nmprof, tmp_path, options, words):
    marker = tmp_path / "ran"
    result = run(nmprof, "run", "-o", tmp_path / "a.jfr", *options, "--", "touch", marker)
    refused(result, 2, *words)
    assert not marker.exists()


def test_a_header_file_others_may_read_is_refused(nmprof, tmp_path):
    headers = tmp_path / "headers"
    headers.write_text("Authorization: Bearer s3cret\n")
    headers.chmod(0o644)
    marker = tmp_path / "ran"
    result = run(nmprof, "run", "-o", tmp_path / "a.jfr", "--upload", "http://h", "--upload-header-file", headers,
                 "--", "touch", marker)
    refused(result, 2, "mode 0644", f"chmod 600 {headers}")
    assert not marker.exists() and "s3cret" not in result.stderr


def test_attach_start_with_upload_is_refused(nmprof):
    refused(run(nmprof, "attach", os.getpid(), "start", "--upload", "http://h"), 2,
            "send what a one-shot attach or a stop collects")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="a small tmpfs in a mount namespace")
def test_an_output_that_could_not_be_written_names_the_recording_kept(nmprof, leak, server, tmp_path):
    """A full disk: the recording fits, its conversion to HTML (the page alone is more
    than 30 KiB) does not; the profile is still sent, and a refusal names the file that
    is on disk, the recording, not the output that is not."""
    s = server(script=[400])
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "leak.html"
    script = (f"mount -t tmpfs -o size=40k tmpfs {disk} && exec {nmprof} run --nativemem 64k -o {out} "
              f"--upload {s.url()} --upload-timeout 5 -- {leak} 1 500")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr  # the output could not be written
    kept = disk / ".nmprof-leak.jfr"
    assert f"could not be converted to {out} (cannot write {out}: No space left on device); it is kept in " \
           f"{kept}" in result.stderr, result.stderr
    [request] = s.wait_for(1)
    assert request.param("format") == "pprof"
    [line] = warnings(result)
    assert line == (f"nmprof: warning: Pyroscope at {s.url()} did not take {kept} (HTTP 400: scripted refusal 400); "
                    "it stays on disk"), line


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="hides libcurl in a mount namespace")
def test_without_libcurl_upload_says_what_to_install(nmprof, tmp_path):
    library = Path("/usr/lib/x86_64-linux-gnu/libcurl.so.4")
    if not library.exists():
        pytest.skip("no libcurl.so.4 to hide")
    marker = tmp_path / "ran"
    script = (f"mount --bind /dev/null {library.resolve()} && exec {nmprof} run -o {tmp_path / 'a.jfr'} "
              f"--upload http://h -- touch {marker}")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    refused(result, 1, "uploads need libcurl", "apt install libcurl4")
    assert not marker.exists()


def test_chunks_not_sent_that_keep_removed_are_not_said_to_stay_on_disk(nmprof, programs, server, tmp_path):
    """run --loop --keep 1 while the server never answers: the chunks --keep removed
    are named as removed, the one kept as on disk (all were said to stay on disk)."""
    s = server(script=["hang"])
    result = run(nmprof, "run", "--loop", "1s", "--keep", "1", "-q", "-o", tmp_path / "c-%n.jfr",
                 "--upload", s.url(), "--upload-timeout", "1", "--",
                 programs.c("paced_allocations.c"), 3.5, 1000, check=0)
    kept = list(tmp_path.iterdir())
    assert len(kept) == 1, kept
    warnings = [l for l in result.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 2, result.stderr
    stays, removed = warnings
    assert re.fullmatch(rf"nmprof: warning: ({re.escape(str(tmp_path))}/c-\d\.jfr(, )?)+ not sent to Pyroscope at "
                        rf"{re.escape(s.url())} \(.*\) and removed by --keep 1", removed), removed
    assert str(kept[0]) not in removed
    assert stays.startswith(f"nmprof: warning: {kept[0]} was not sent") and stays.endswith("it stays on disk"), stays
