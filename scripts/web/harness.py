"""What the parent's page tests share (scripts/web/browser-test.py, security-test.py and
scripts/bench/web-bench.py): the hunter started on the simulator with its page on, its
--json lines read as they come (each with the time it was read), its setup code, and a
plain HTTP client that signs in like a phone does (cookie, CSRF field, Origin).

Nothing here is cached at a predictable path: every run has its own private temporary
directory (mkdtemp, mode 0700), removed at the end unless asked to keep it.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
UUID = "50495241-5445-2D48-554E-544552000000"
TAGS = ["%s:1:%d" % (UUID, minor) for minor in (1, 2, 3)]


def clock():
    return time.monotonic()


class Failure(Exception):
    """One check that failed: its one line."""


def check(condition, line):
    if not condition:
        raise Failure(line)


def main_guard(name, body):
    """Runs body(); a Failure (or any error) is one clear line on stderr and exit 1."""
    started = clock()
    try:
        body()
    except Failure as f:
        print("%s: FAIL: %s (after %.1f s)" % (name, f, clock() - started), file=sys.stderr)
        sys.exit(1)
    except Exception as e:  # an error of the test itself, or a page not as expected
        import traceback
        traceback.print_exc()
        print("%s: FAIL: %s: %s (after %.1f s)" % (name, type(e).__name__, e, clock() - started), file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("%s: interrupted" % name, file=sys.stderr)
        sys.exit(130)
    print("%s: PASS in %.1f s" % (name, clock() - started))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_binary(name, binary, fix="build it first (swift build)"):
    """The one line and exit 1 when the program to test is not there."""
    if not os.access(binary, os.X_OK):
        print("%s: FAIL: no %s: %s" % (name, binary, fix), file=sys.stderr)
        sys.exit(1)


def default_binary(config="debug"):
    return os.path.join(REPO, ".build", config, "pirate-hunter")


def write_config(path, trail=None):
    """A hunter configuration: the simulator world's UUID as the region (its three tags)."""
    document = {"regions": [{"name": "treasure", "uuid": UUID}], "json": False}
    if trail:
        document["hunt"] = {"trail": trail}
    with open(path, "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")


class Hunter:
    """`pirate-hunter hunt --hci simulator --web-port PORT --json --out OUT.wav` with
    RUNTIME_DIRECTORY a private directory; stdout's JSON lines kept with their arrival
    time (`lines`: (monotonic seconds, dict)), stderr kept in a file."""

    def __init__(self, binary, workdir, hci="simulator", port=None, extra=(), web=True, out=True):
        self.binary = binary = os.path.abspath(binary)
        self.workdir = workdir
        # A port picked here is free now, not when the hunter binds it a moment later (an
        # outgoing connection of anything on the machine may take it meanwhile): the start
        # is retried on another one when the hunter says it is in use (`wait_code`).
        self.picked_port = port is None
        self.port = port or free_port()
        self.runtime = os.path.join(workdir, "runtime")
        os.mkdir(self.runtime, 0o700)
        self.config = os.path.join(workdir, "config", "hunter.json")
        os.makedirs(os.path.dirname(self.config), mode=0o700, exist_ok=True)
        if not os.path.exists(self.config):
            write_config(self.config)
        self.out = os.path.join(workdir, "hunt.wav") if out else None
        self.stderr_path = os.path.join(workdir, "hunter.stderr")
        self.hci, self.web, self.extra = hci, web, list(extra)
        self.lines = []
        self.other = []
        self.lock = threading.Lock()
        self.port_retries = 3
        self._spawn()

    def _spawn(self):
        args = [self.binary, "hunt", "--hci", self.hci, "--config", self.config, "--json"]
        args += ["--web-port", str(self.port)] if self.web else ["--no-web"]
        if self.out:
            args += ["--out", self.out]
        args += self.extra
        env = dict(os.environ, RUNTIME_DIRECTORY=self.runtime)
        self.args = args
        self.stderr_file = open(self.stderr_path, "wb")
        self.started = clock()
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.stderr_file, env=env, cwd=self.workdir)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _respawn_if_port_taken(self):
        """The picked port was taken before the hunter bound it: the hunter is stopped and
        started again on another (at most `port_retries` times). True when it was."""
        if not (self.web and self.picked_port and self.port_retries > 0):
            return False
        if ("port %d is in use by another program" % self.port) not in self.stderr_text():
            return False
        self.port_retries -= 1
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(5)
        self.stderr_file.close()
        with self.lock:
            self.lines = []
            self.other = []
        # A fresh start: the runtime directory and the sound file as the first start found them.
        shutil.rmtree(self.runtime)
        os.mkdir(self.runtime, 0o700)
        if self.out and os.path.lexists(self.out):
            os.unlink(self.out)
        self.port = free_port()
        self._spawn()
        return True

    def _read(self):
        for raw in self.process.stdout:
            now = clock()
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                event = json.loads(text)
            except ValueError:
                with self.lock:
                    self.other.append((now, text))
                continue
            with self.lock:
                self.lines.append((now, event))

    @property
    def pid(self):
        return self.process.pid

    def events(self, since=0.0, kind=None):
        with self.lock:
            return [(t, e) for t, e in self.lines if t >= since and (kind is None or e.get("event") == kind)]

    def stderr_text(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def stderr_tail(self, n=5):
        try:
            with open(self.stderr_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-n:])

    def alive(self):
        return self.process.poll() is None

    def wait_code(self, timeout=60):
        """The setup code from RUNTIME_DIRECTORY/web-code (mode 0600), once the page is up."""
        path = os.path.join(self.runtime, "web-code")
        deadline = clock() + timeout
        while clock() < deadline:
            if self._respawn_if_port_taken():
                continue
            check(self.alive(), "the hunter exited (%s) before its page was up: %s" % (self.process.returncode, self.stderr_tail()))
            if os.path.exists(path):
                with open(path) as f:
                    code = f.read().strip()
                if re.fullmatch(r"\d{6}", code):
                    mode = stat.S_IMODE(os.stat(path).st_mode)
                    check(mode == 0o600, "%s has mode %o, not 0600" % (path, mode))
                    self.wait_port(deadline - clock())
                    return code
            time.sleep(0.05)
        raise Failure("no 6-digit setup code in %s after %d s (stderr: %s)" % (path, timeout, self.stderr_tail()))

    def wait_port(self, timeout=10):
        deadline = clock() + max(timeout, 1)
        while clock() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise Failure("nothing listens on port %d" % self.port)

    def rss_kib(self):
        """(VmRSS, VmHWM) in KiB from /proc/PID/status."""
        values = {}
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    values[key] = int(rest.split()[0])
        return values.get("VmRSS", 0), values.get("VmHWM", 0)

    def stop(self, timeout=30):
        """SIGTERM; the exit status (None when it had to be killed)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                self.reader.join(2)
                self.stderr_file.close()
                return None
        self.reader.join(5)
        self.stderr_file.close()
        return self.process.returncode


class Workdir:
    """A private temporary directory (0700), removed at the end unless keep."""

    def __init__(self, prefix, keep=False):
        self.path = tempfile.mkdtemp(prefix=prefix)
        self.keep = keep

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if self.keep:
            print("kept %s" % self.path)
        else:
            shutil.rmtree(self.path, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# A phone's HTTP client: one session cookie, the CSRF field from the last page, Origin.

CSRF = re.compile(r'<input type="hidden" name="csrf" value="([^"]*)"')


class Response:
    def __init__(self, status, headers, body, first_byte=None):
        self.status = status
        self.headers = headers
        self.body = body
        self.first_byte = first_byte

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def __repr__(self):
        return "HTTP %d" % self.status


class Phone:
    def __init__(self, port, host=None, source=None, timeout=15):
        self.port = port
        self.host = host or "localhost:%d" % port
        self.source = source
        self.timeout = timeout
        self.session = None
        self.csrf = None

    def origin(self):
        return "http://" + self.host

    def request(self, method, path, fields=None, headers=None, body=None, origin=True, cookie=True, host=None):
        """One request on a new connection; the answer read whole."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout,
                                          source_address=(self.source, 0) if self.source else None)
        h = {"Host": host or self.host}
        if cookie and self.session:
            h["Cookie"] = "ph_session=" + self.session
        if method == "POST":
            if origin is True:
                h["Origin"] = self.origin()
            elif origin:
                h["Origin"] = origin
            if fields is not None:
                body = urllib.parse.urlencode(fields).encode()
                h["Content-Type"] = "application/x-www-form-urlencoded"
        h.update(headers or {})
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for k, v in h.items():
                conn.putheader(k, v)
            if body is not None and "Content-Length" not in h:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            r = conn.getresponse()
            data = r.read()
            response = Response(r.status, r.getheaders(), data)
        finally:
            conn.close()
        if response.status == 200 and method == "GET":
            m = CSRF.search(response.text)
            if m:
                self.csrf = m.group(1)
        return response

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, fields, csrf=True, **kw):
        fields = dict(fields)
        if csrf and self.csrf is not None:
            fields["csrf"] = self.csrf
        return self.request("POST", path, fields=fields, **kw)

    def log_in(self, code):
        r = self.post("/login", {"code": code}, csrf=False, cookie=False)
        if r.status == 303:
            for value in r.all("Set-Cookie"):
                m = re.match(r"\s*ph_session=([^;]*)", value)
                if m and m.group(1):
                    self.session = m.group(1)
        return r

    def sign_in(self, code):
        r = self.log_in(code)
        check(r.status == 303 and self.session, "POST /login with the right code: %r, not 303 with a ph_session cookie" % r)
        page = self.get("/ready")
        check(page.status == 200, "GET /ready after signing in: %r" % page)
        if not self.csrf:
            self.get("/trail")
        check(self.csrf, "GET /ready and /trail have no csrf field in their forms")
        return r


def wav_stats(path_or_bytes):
    """(seconds, peak, rms) of a 16-bit PCM WAV (RIFF/WAVE checked)."""
    if isinstance(path_or_bytes, (bytes, bytearray)):
        data = bytes(path_or_bytes)
    else:
        with open(path_or_bytes, "rb") as f:
            data = f.read()
    check(len(data) >= 44 and data[:4] == b"RIFF" and data[8:12] == b"WAVE", "not a RIFF/WAVE file (%d bytes, starts %r)" % (len(data), data[:12]))
    import io
    import array
    w = wave.open(io.BytesIO(data))
    check(w.getsampwidth() == 2, "WAV with %d-byte samples, not 16-bit" % w.getsampwidth())
    frames = w.readframes(w.getnframes())
    samples = array.array("h", frames)
    if sys.byteorder == "big":
        samples.byteswap()
    seconds = w.getnframes() / float(w.getframerate() or 1)
    if not samples:
        return seconds, 0, 0.0
    peak = max(abs(min(samples)), abs(max(samples)))
    step = max(1, len(samples) // 200000)
    picked = samples[::step]
    rms = (sum(s * s for s in picked) / len(picked)) ** 0.5
    return seconds, peak, rms
