"""The Redis Cluster of a `--cluster` chaos run: scripts/cluster.sh's 3 masters and 3 replicas
(AOF everysec, node timeout 2 s), started and stopped by that script (it stops every node by the
PID in its directory), and its masters killed, paused and started again here."""
import os
import signal
import subprocess
import time

from procs import RedisCommandError, redis_call, wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class RedisClusterNodes:
    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "cluster")
        self.script = os.path.join(ROOT, "scripts", "cluster.sh")
        self.url = None
        self.ports = []
        self.paused = set()

    def _script(self, *args):
        return subprocess.run(["bash", self.script, *args, "--dir", self.dir], capture_output=True, text=True, timeout=180)

    def start(self):
        result = self._script("start")
        if result.returncode != 0:
            raise RuntimeError(f"scripts/cluster.sh start failed: {result.stderr.strip() or result.stdout.strip()}")
        self.url = result.stdout.strip().splitlines()[-1]
        with open(os.path.join(self.dir, "ports")) as ports:
            self.ports = [int(line) for line in ports if line.strip()]

    def stop(self):
        for port in list(self.paused):
            self._signal(port, signal.SIGCONT)
        self._script("stop")

    def pid(self, port):
        for name in os.listdir(self.dir):
            node = os.path.join(self.dir, name)
            try:
                with open(os.path.join(node, "port")) as text:
                    if int(text.read().strip()) != port:
                        continue
                with open(os.path.join(node, "redis.pid")) as text:
                    return int(text.read().strip())
            except (OSError, ValueError):
                continue
        raise RuntimeError(f"no cluster node on port {port}")

    def _signal(self, port, sig):
        os.kill(self.pid(port), sig)
        if sig == signal.SIGSTOP:
            self.paused.add(port)
        elif sig == signal.SIGCONT:
            self.paused.discard(port)

    def role(self, port):
        try:
            reply = redis_call(port, "ROLE", timeout=1.0)
            return reply[0].decode() if reply else None
        except (OSError, RedisCommandError):
            return None

    def masters(self):
        return [port for port in self.ports if self.role(port) == "master"]

    def serving(self):
        """Three masters answer and every node that answers says the cluster is ok."""
        if len(self.masters()) != 3:
            return False
        for port in self.ports:
            try:
                info = redis_call(port, "CLUSTER", "INFO", timeout=1.0)
            except (OSError, RedisCommandError):
                continue
            if b"cluster_state:ok" not in info:
                return False
        return True

    def kill_master(self, port):
        """kill -9 of a master; returns once its replica serves its slots and the killed node is
        back as a replica that has synced (so the next kill finds a replica to promote)."""
        os.kill(self.pid(port), signal.SIGKILL)
        wait_until(lambda: self.role(port) is None, 5)
        if not wait_until(self.serving, 30):
            raise RuntimeError(f"no replica took over from the master on port {port}")
        result = self._script("restart-node", "--port", str(port))
        if result.returncode != 0:
            raise RuntimeError(f"restarting the node on port {port} failed: {result.stderr.strip()}")
        synced = wait_until(lambda: b"master_link_status:up" in redis_call(port, "INFO", "replication", timeout=1.0), 30)
        if not synced:
            raise RuntimeError(f"the node on port {port} did not sync as a replica")

    def pause_master(self, port, seconds):
        """SIGSTOP for less than the node timeout: no failover, the master's clients wait."""
        self._signal(port, signal.SIGSTOP)
        time.sleep(seconds)
        self._signal(port, signal.SIGCONT)

    def cli(self, *args):
        """A command through redis-cli -c (it follows MOVED), on a master that answers."""
        for port in self.masters():
            result = subprocess.run(["redis-cli", "-c", "-p", str(port), *map(str, args)], capture_output=True, text=True, timeout=10)
            if result.returncode == 0:
                return result.stdout.strip()
        raise OSError("no master of the cluster answered")
