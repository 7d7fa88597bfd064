"""The suite's plumbing: HTTP (http.client and raw sockets), the richpush CLI, the processes
scripts/security.sh started (liveness, restart), log slices, and the per-case Check."""
import base64
import http.client
import json
import os
import re
import secrets
import select
import signal
import socket
import subprocess
import time

HOST = "127.0.0.1"


class Failed(Exception):
    """Stops a case whose next steps depend on what just went wrong (already recorded)."""


class Check:
    """Collects a case's mismatches; each reads 'what: expected X, got Y'."""

    def __init__(self):
        self.failures = []
        self.notes = []  # shown after `ok name`

    def fail(self, message):
        self.failures.append(message)
        return False

    def expect(self, what, ok, expected, got):
        return True if ok else self.fail(f"{what}: expected {expected}, got {got}")

    def need(self, ok):
        """Ends the case when `ok` is false (the mismatch was recorded by the call that made it)."""
        if not ok:
            raise Failed()

    def status(self, what, resp, status, code=None, retry_after=False):
        """resp has `status` (an int or a collection of them), a JSON error body for errors, and `code`."""
        wanted = status if isinstance(status, (set, tuple, list)) else {status}
        if resp.status not in wanted:
            shown = "/".join(str(s) for s in sorted(wanted))
            return self.fail(f"{what}: expected {shown}{' ' + code if code else ''}, got {resp.brief()}")
        if resp.status >= 400 and resp.error_code() is None:
            return self.fail(f"{what}: expected a JSON error body {{\"error\":{{\"code\",\"message\"}}}}, got {resp.brief()}")
        if code and resp.error_code() != code:
            return self.fail(f"{what}: expected code {code}, got {resp.brief()}")
        if retry_after and not resp.header("Retry-After"):
            return self.fail(f"{what}: expected a Retry-After header, got headers {dict(resp.headers or {})}")
        return True


class Resp:
    def __init__(self, status, headers=None, body=b"", elapsed=0.0, error=None):
        self.status = status  # 0 when no response came
        self.headers = headers or {}
        self.body = body
        self.elapsed = elapsed
        self.error = error

    def header(self, name):
        for key, value in self.headers.items():
            if key.lower() == name.lower():
                return value
        return None

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def error_code(self):
        body = self.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            error = body["error"]
            if isinstance(error.get("code"), str) and isinstance(error.get("message"), str):
                return error["code"]
        return None

    def brief(self):
        if self.status == 0:
            return f"no response ({self.error}) after {self.elapsed:.1f}s"
        text = self.body[:200].decode("utf-8", "replace")
        return f"{self.status} {text!r}" + ("…" if len(self.body) > 200 else "")


def basic(user, password):
    raw = f"{user}:{password}".encode()
    return base64.b64encode(raw).decode()


def parse_head(data):
    """Status code and headers of a raw HTTP response (bytes up to or past the blank line)."""
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    match = re.match(r"HTTP/\d\.\d (\d{3})", lines[0])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip()] = value.strip()
    return (int(match.group(1)) if match else 0), headers


def raw_request(port, chunks, timeout=5.0, source=None, pause=0.0, linger_reset=False):
    """Sends `chunks` (bytes) on one connection, `pause` s apart, and reads one response.
    Returns a Resp (status 0 when the server answered nothing or closed the connection)."""
    started = time.monotonic()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        if source:
            sock.bind((source, 0))
        sock.connect((HOST, port))
        for chunk in chunks:
            sock.sendall(chunk)
            if pause:
                time.sleep(pause)
        data = b""
        while b"\r\n\r\n" not in data:
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
        if not data:
            return Resp(0, elapsed=time.monotonic() - started, error="connection closed without a response")
        status, headers = parse_head(data)
        body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
        length = int(headers.get("Content-Length", headers.get("content-length", "0")) or 0)
        sock.settimeout(max(0.2, timeout - (time.monotonic() - started)))
        try:
            while len(body) < min(length, 1 << 20):
                piece = sock.recv(65536)
                if not piece:
                    break
                body += piece
        except OSError:
            pass
        return Resp(status, headers, body, time.monotonic() - started)
    except (OSError, socket.timeout) as error:
        return Resp(0, elapsed=time.monotonic() - started, error=f"{type(error).__name__}: {error}")
    finally:
        sock.close()


def wait_closed(sock, limit):
    """Seconds until the server closes `sock` (EOF or reset), or None if still open after `limit`."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        ready, _, _ = select.select([sock], [], [], 0.1)
        if ready:
            try:
                if sock.recv(65536) == b"":
                    return time.monotonic() - started
            except OSError:
                return time.monotonic() - started
    return None


class Service:
    """A process scripts/security.sh started: its pid file, argv file (NUL-separated) and log."""

    def __init__(self, run_dir, name, port=None):
        self.run_dir = run_dir
        self.name = name
        self.port = port
        self.log = os.path.join(run_dir, f"{name}.log")
        self.restarts = 0

    def pid(self):
        try:
            with open(os.path.join(self.run_dir, f"{self.name}.pid")) as file:
                return int(file.read().strip())
        except (OSError, ValueError):
            return None

    def running(self):
        pid = self.pid()
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        try:  # a zombie (exited, not yet reaped by bash) counts as dead
            with open(f"/proc/{pid}/stat") as file:
                return file.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    def live(self, timeout=3.0):
        """Why the service is not healthy, or None when it is."""
        if not self.running():
            return f"{self.name} (pid {self.pid()}) is not running"
        if self.port is None:
            return None
        resp = http_request(self.port, "GET", "/health/live", timeout=timeout)
        if resp.status != 200:
            return f"{self.name} does not answer GET /health/live: {resp.brief()}"
        return None

    def log_size(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def log_since(self, offset):
        try:
            with open(self.log, "rb") as file:
                file.seek(offset)
                return file.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, lines=2):
        text = self.log_since(max(0, self.log_size() - 4000)).strip().splitlines()
        return " | ".join(line[:200] for line in text[-lines:])

    def stop(self):
        """TERM, then KILL after 3 s, the process of the pid file (a hung one, before a restart)."""
        pid = self.pid()
        if pid is None or not self.running():
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 3
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.running():
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)

    def restart(self):
        """Starts the process again with the argv scripts/security.sh used; the new pid goes in the
        pid file, where the script's EXIT trap finds it. A hung process is stopped first."""
        self.stop()
        with open(os.path.join(self.run_dir, f"{self.name}.argv"), "rb") as file:
            argv = [part.decode() for part in file.read().split(b"\0") if part]
        with open(self.log, "ab") as log, open(os.path.join(self.run_dir, f"{self.name}.stdout"), "ab") as out:
            log.write(f"\n===== security suite: restarted {self.name} =====\n".encode())
            log.flush()
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=log, start_new_session=True)
        with open(os.path.join(self.run_dir, f"{self.name}.pid"), "w") as file:
            file.write(f"{process.pid}\n")
        self.restarts += 1
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return f"exited with {process.returncode} on restart"
            if self.port is None or self.live(timeout=1) is None:
                return None
            time.sleep(0.2)
        return "not healthy 15 s after restart"


def http_request(port, method, path, body=None, headers=None, timeout=10.0, source=None):
    """One request on a fresh connection; never raises for network errors (status 0 instead)."""
    started = time.monotonic()
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout,
                                            source_address=(source, 0) if source else None)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return Resp(response.status, dict(response.getheaders()), data, time.monotonic() - started)
    except (OSError, http.client.HTTPException) as error:
        return Resp(0, elapsed=time.monotonic() - started, error=f"{type(error).__name__}: {error}")
    finally:
        connection.close()


class Ctx:
    """What the cases share: ports, users and passwords, the secrets the logs must not hold."""

    def __init__(self):
        env = os.environ
        self.bin = env["SEC_BIN"]
        self.run_dir = env["SEC_RUN_DIR"]
        self.redis_url = env["RICHPUSH_REDIS_URL"]
        self.api = Service(self.run_dir, "api", int(env["SEC_API_PORT"]))
        self.api2 = Service(self.run_dir, "api2", int(env["SEC_API2_PORT"]))
        self.worker = Service(self.run_dir, "worker")
        self.passwords = {name: env[f"SEC_PW_{name.upper()}"] for name in ("alice", "bob", "root")}
        self.secrets = {env["SEC_REDIS_PASSWORD"]: "the Redis password", **{pw: f"password of {n}" for n, pw in self.passwords.items()}}
        # The NH listener's keys (scripts/security/cases_nh.py), read from their connection strings.
        for name in ("FULL", "LISTEN", "OTHER"):
            fields = dict(part.split("=", 1) for part in env.get(f"SEC_NH_{name}", "").split(";") if "=" in part)
            if fields.get("SharedAccessKey"):
                self.secrets[fields["SharedAccessKey"]] = f"the NH key of SEC_NH_{name}"
        self.registrations = {}  # user -> [registration ids]
        self.accepted = {}  # user -> when the API last accepted their real password

    # -- secrets ---------------------------------------------------------------------------

    def secret(self, value, what):
        self.secrets[value] = what
        return value

    def token(self, prefix):
        return f"{prefix}-{secrets.token_hex(8)}"

    # -- CLI -------------------------------------------------------------------------------

    def cli(self, *args, stdin=None, timeout=30):
        try:
            return subprocess.run([self.bin, *args], input=stdin, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, 124, "", f"timed out after {timeout}s")

    def add_user(self, t, name, password=None, role="user", app=None):
        """A user of the default app, or of `app` (signing in as `name@app`)."""
        password = password or self.token(f"{name}-pw")
        self.secret(password, f"password of {name}")
        extra = ["--app", app] if app else []
        result = self.cli("users", "add", name, "--cost", "4", "--role", role, *extra, stdin=password + "\n")
        t.need(t.expect(f"`users add {name}`", result.returncode == 0, "exit 0", f"exit {result.returncode}: {result.stderr.strip()[-300:]}"))
        self.passwords[f"{name}@{app}" if app else name] = password
        return password

    # -- HTTP ------------------------------------------------------------------------------

    def http(self, method, path, body=None, user=None, password=None, bearer=None, headers=None,
             port=None, timeout=10.0, source=None, content_type=None):
        headers = dict(headers or {})
        real = user is not None and password is None
        if user is not None:
            password = self.passwords[user] if password is None else password
            token = self.secret(basic(user, password), f"Basic credential of {user!r}")
            headers["Authorization"] = f"Basic {token}"
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        if isinstance(body, (dict, list)):
            body = json.dumps(body, ensure_ascii=False).encode()
            headers.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        if content_type:
            headers["Content-Type"] = content_type
        if body is None and method in ("POST", "PUT"):
            body = b""
        resp = http_request(port or self.api.port, method, path, body, headers, timeout, source)
        if real and resp.status not in (0, 401, 429, 503):
            self.accepted[user] = time.monotonic()
        return resp

    def auth_header(self, user, password=None):
        password = self.passwords[user] if password is None else password
        return f"Authorization: Basic {self.secret(basic(user, password), f'Basic credential of {user!r}')}\r\n"

    # -- API steps shared by cases ---------------------------------------------------------

    def send(self, user, target=None, message="m", payload="p", rich_type="text", port=None, fields=None, **kw):
        body = {"message": message, "richType": rich_type, "payload": payload, **(fields or {})}
        if target is not None:
            body["target"] = target
        return self.http("POST", "/api/notifications", body, user=user, port=port, **kw)

    def sent_id(self, t, what, resp):
        """The id of a 202 answer, or ends the case."""
        t.need(t.status(what, resp, 202))
        body = resp.json() or {}
        t.need(t.expect(f"{what}: id", isinstance(body.get("id"), str), "a string id", resp.brief()))
        return body["id"]

    def register(self, t, user, tags=(), handle=None, port=None, platform="apns"):
        """The seed's two calls; returns (registration id, PUT response). Ends the case if POST fails."""
        handle = self.secret(handle or self.token(f"handle-{user}"), f"device handle of {user}")
        created = self.http("POST", f"/api/register?handle={handle}", user=user, port=port)
        t.need(t.status(f"POST /api/register as {user}", created, 200))
        reg_id = created.json()
        t.need(t.expect(f"POST /api/register as {user}", isinstance(reg_id, str), "a JSON string id", created.brief()))
        put = self.http("PUT", f"/api/register/{reg_id}", {"Platform": platform, "Handle": handle, "Tags": list(tags)}, user=user, port=port)
        if put.status == 200:
            self.registrations.setdefault(user, []).append(reg_id)
        return reg_id, put

    def wait_delivered(self, t, user, nid, limit=10.0):
        """Polls the status until the state is past queued; returns the last status body."""
        deadline = time.monotonic() + limit
        last = None
        while time.monotonic() < deadline:
            last = self.http("GET", f"/api/notifications/{nid}/status", user=user)
            body = last.json() if last.status == 200 else None
            if body and body.get("state") not in ("accepted", "queued", None):
                return body
            time.sleep(0.2)
        t.fail(f"notification {nid}: expected the worker to deliver it within {limit:.0f}s (state past queued), last status {last.brief() if last else 'none'}")
        raise Failed()
