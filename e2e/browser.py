"""A headless chromium driven over the DevTools protocol (--remote-debugging-pipe), for
tests of the HTML flame graph that need more than the DOM: script values, mouse
events, and screenshots with their pixels."""

import base64
import json
import os
import shutil
import struct
import subprocess
import time
import zlib

CHROMIUM = shutil.which("chromium")


class PageError(Exception):
    pass


class Browser:
    """One chromium, one tab. Console errors and uncaught exceptions are kept in .errors."""

    def __init__(self, profile_dir, width=1200, height=900):
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()

        def pipe_fds():  # chromium reads commands on fd 3 and writes replies on fd 4
            read, write = os.dup(commands_read), os.dup(replies_write)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
             "--force-color-profile=srgb", f"--user-data-dir={profile_dir}", "--remote-debugging-pipe",
             "about:blank"],
            preexec_fn=pipe_fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(replies_write)
        self.out = os.fdopen(commands_write, "wb")
        self.replies = os.fdopen(replies_read, "rb")
        self.buffer = b""
        self.next_id = 0
        self.errors = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime"):
            self.call(domain + ".enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def close(self):
        self.out.close()
        self.process.kill()
        self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _message(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.replies.fileno(), 1 << 16)
            if not chunk:
                raise PageError("chromium went away")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=False, **params):
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params}
        if session:
            request["sessionId"] = self.session
        self.out.write(json.dumps(request).encode() + b"\0")
        self.out.flush()
        while True:
            message = self._message()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise PageError(f"{method}: {message['error']}")
                return message["result"]
            self._event(message)

    def _event(self, message):
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))

    def open(self, url, ready="document.body && document.body.dataset.ready === '1'", timeout=60):
        """Loads url and waits until the expression `ready` is true."""
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + timeout
        while not self.eval(ready):
            if time.monotonic() > deadline:
                raise PageError(f"{url} not ready after {timeout} s: {self.errors}")
            time.sleep(0.05)

    def eval(self, expression):
        """The JSON value of a script expression in the page."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise PageError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def mouse(self, kind, x, y, buttons=0):
        """kind: mouseMoved, mousePressed or mouseReleased (the left button)."""
        button = "left" if kind != "mouseMoved" or buttons else "none"
        self.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button=button, buttons=buttons,
                  clickCount=1 if kind != "mouseMoved" else 0)

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, buttons=1)
        self.mouse("mouseReleased", x, y)

    def drag(self, x0, x1, y, steps=5):
        self.mouse("mouseMoved", x0, y)
        self.mouse("mousePressed", x0, y, buttons=1)
        for i in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * i / steps, y, buttons=1)
        self.mouse("mouseReleased", x1, y)

    def screenshot(self, path=None):
        """The viewport as an Image (saved to path as PNG when given)."""
        png = base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"])
        if path:
            with open(path, "wb") as f:
                f.write(png)
        return Image(png)


class Image:
    """The pixels of an 8-bit, non-interlaced RGB or RGBA PNG (what chromium writes)."""

    def __init__(self, png):
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        at, idat = 8, b""
        while at < len(png):
            length, kind = struct.unpack(">I4s", png[at:at + 8])
            body = png[at + 8:at + 8 + length]
            if kind == b"IHDR":
                self.width, self.height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
                assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
                self.channels = 4 if colour == 6 else 3
            elif kind == b"IDAT":
                idat += body
            at += 12 + length
        raw, stride = zlib.decompress(idat), self.width * self.channels
        rows, previous = [], bytearray(stride)
        for y in range(self.height):
            start = y * (stride + 1)
            kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
            for i in range(stride):
                left = line[i - self.channels] if i >= self.channels else 0
                up, corner = previous[i], previous[i - self.channels] if i >= self.channels else 0
                if kind == 1:
                    line[i] = (line[i] + left) & 255
                elif kind == 2:
                    line[i] = (line[i] + up) & 255
                elif kind == 3:
                    line[i] = (line[i] + (left + up) // 2) & 255
                elif kind == 4:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
            rows.append(bytes(line))
            previous = line
        self.rows = rows

    def pixel(self, x, y):
        """(r, g, b) at integer coordinates."""
        at = int(x) * self.channels
        return tuple(self.rows[int(y)][at:at + 3])


def rgb(css):
    """(r, g, b) of "#rrggbb" or "rgb(r, g, b)"."""
    css = css.strip()
    if css.startswith("#"):
        return tuple(int(css[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(v) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])
