"""The processes of a chaos run: each started here, tracked by PID, and stopped here.

Nothing is daemonized: redis-server runs in the foreground as our child, so kill -9, SIGSTOP and
restarts act on exactly the process this run started, and `stop_all` leaves nothing behind.
"""
import os
import signal
import socket
import subprocess
import time


class Proc:
    """One child process with its log files; `start` may be called again after it died."""

    def __init__(self, name, argv, workdir, env=None, stdout_name=None):
        self.name, self.argv, self.workdir, self.env = name, argv, workdir, env
        self.stdout_path = os.path.join(workdir, stdout_name or f"{name}.out")
        self.stderr_path = os.path.join(workdir, f"{name}.err")
        self.popen = None
        self.stopped = False  # SIGSTOPped

    def start(self):
        env = dict(os.environ)
        env.update(self.env or {})
        # Append: a restarted process keeps writing after what its predecessor wrote.
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            self.popen = subprocess.Popen(self.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                                          cwd=self.workdir, restore_signals=True)
        return self

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.popen.pid, sig)
            if sig == signal.SIGSTOP:
                self.stopped = True
            elif sig == signal.SIGCONT:
                self.stopped = False

    def kill9(self):
        self.signal(signal.SIGKILL)
        self.wait(5)

    def wait(self, timeout):
        if self.popen is None:
            return True
        try:
            self.popen.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def terminate(self, grace=10):
        """SIGTERM, then SIGKILL after `grace` seconds; a stopped process is continued first."""
        if not self.alive():
            return
        if self.stopped:
            self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        if not self.wait(grace):
            self.kill9()


class Supervisor:
    """Every process of the run, so that one call stops them all, whatever happened."""

    def __init__(self):
        self.procs = []

    def add(self, proc):
        self.procs.append(proc)
        return proc

    def stop_all(self):
        for proc in reversed(self.procs):
            if proc.alive() and proc.stopped:
                proc.signal(signal.SIGCONT)
        for proc in reversed(self.procs):
            if proc.alive():
                proc.signal(signal.SIGTERM)
        deadline = time.time() + 15
        for proc in reversed(self.procs):
            if not proc.wait(max(0.1, deadline - time.time())):
                proc.kill9()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisCommandError(Exception):
    pass


def redis_call(port, *args, timeout=2.0):
    """One command over a fresh connection (RESP2); raises OSError when Redis is away."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        parts = [f"*{len(args)}\r\n".encode()]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            parts.append(f"${len(data)}\r\n".encode() + data + b"\r\n")
        sock.sendall(b"".join(parts))
        reader = sock.makefile("rb")
        return _read_reply(reader)


def _read_reply(reader):
    line = reader.readline()
    if not line:
        raise ConnectionError("redis closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RedisCommandError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        length = int(rest)
        if length < 0:
            return None
        data = reader.read(length + 2)[:-2]
        return data
    if kind == b"*":
        count = int(rest)
        return None if count < 0 else [_read_reply(reader) for _ in range(count)]
    raise ConnectionError(f"unexpected reply {line!r}")


def wait_until(predicate, timeout, step=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except (OSError, RedisCommandError):
            pass
        time.sleep(step)
    return False


def redis_ready(port):
    """The dataset is loaded: while it loads the AOF, Redis already answers PING but refuses
    reads and writes with LOADING."""
    try:
        info = redis_call(port, "INFO", "persistence")
        return b"loading:0" in info
    except (OSError, RedisCommandError):
        return False
