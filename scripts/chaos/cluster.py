"""The system under test: one Redis (AOF everysec) or a Redis Cluster of 3 masters and 3 replicas
(`--cluster`), API replicas, workers and device simulators, started, restarted and replaced here,
with the times each device simulator was offline."""
import base64
import json
import os
import signal
import subprocess
import time
import urllib.request

from procs import Proc, Supervisor, free_port, redis_call, redis_ready, wait_until
from redis_cluster import RedisClusterNodes


class Cluster:
    def __init__(self, binary, workdir, prefix="chaos", api_replicas=2, workers=3, simulators=2, devices=200, groups=20,
                 visibility_timeout=5, fire_delay=0, redis_cluster=False, partitions=1, provider_hold=30, provider_faults=0):
        self.binary, self.workdir, self.prefix = binary, workdir, prefix
        self.supervisor = Supervisor()
        self.redis_port = free_port()
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        # On a cluster: its nodes, every process told the partitions, and creates acknowledged
        # once a replica has them (a master's kill -9 must not take acknowledged creates with it).
        self.nodes = RedisClusterNodes(workdir) if redis_cluster else None
        self.partitions = partitions
        self.env = {"RICHPUSH_PARTITIONS": str(partitions)}
        self.api_ports = [free_port() for _ in range(api_replicas)]
        self.worker_count, self.sim_count = workers, simulators
        self.devices_per_sim = devices // simulators
        self.groups, self.visibility_timeout, self.fire_delay = groups, visibility_timeout, fire_delay
        self.admin, self.user = "chaos-admin", "chaos"
        self.password = os.urandom(9).hex()
        self.redis = None
        # On one Redis, every other device is an Android phone reached through FCM: workers send
        # through `richpush fcm-sim`, which passes what it accepts on to the devices, and whose
        # quota a `provider-quota` fault exhausts for `provider_hold` seconds (SIGUSR1).
        self.provider_hold = provider_hold
        self.fcm = None
        self.fcm_port = free_port()
        self.fcm_dir = os.path.join(workdir, "fcm")
        # With provider faults (percent of requests, one Redis only): the devices are iPhones,
        # Android phones and browsers in turn, reached through `richpush apns-sim`, `fcm-sim` and
        # `webpush-sim`, each answering that share of valid requests with a transient error
        # (429, 500 or 503; Web Push's 429 and 503 with Retry-After, whose window webpush-sim
        # watches: a request to the subscription inside it is logged `inside_retry_after`).
        self.provider_faults = provider_faults
        self.apns = self.webpush = None
        self.apns_port, self.webpush_port = free_port(), free_port()
        self.apns_dir, self.webpush_dir = os.path.join(workdir, "apns"), os.path.join(workdir, "webpush")
        self.apis, self.workers, self.sims = [], [], []
        self.worker_generation = 0
        # Per simulator: [offline_from, online_again] windows (None while still offline).
        self.sim_offline = [[] for _ in range(simulators)]
        self.log_lines = []

    def log(self, text):
        line = f"[{time.strftime('%H:%M:%S')}] {text}"
        self.log_lines.append(line)
        print(line, flush=True)

    # MARK: Redis

    def start_redis(self):
        if self.nodes:
            self.nodes.start()
            self.redis_url = self.nodes.url
            return
        data = os.path.join(self.workdir, "redis")
        os.makedirs(data, exist_ok=True)
        if self.redis is None:
            self.redis = self.supervisor.add(Proc("redis", [
                "redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--dir", data,
                "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no",
                "--logfile", os.path.join(data, "redis.log")], self.workdir))
        self.redis.start()
        if not wait_until(lambda: redis_ready(self.redis_port), 30):
            raise RuntimeError(f"redis-server did not come up; see {data}/redis.log")

    def redis_cli(self, *args):
        return self.nodes.cli(*args) if self.nodes else redis_call(self.redis_port, *args)

    def records_key(self, kind, notification):
        """A notification's key of `kind` (`devices`, …) in its partition."""
        return f"{self.prefix}:{{q{notification % self.partitions}}}:{kind}:{notification}"

    # MARK: RichPush processes

    def richpush(self, *args, stdin=None):
        result = subprocess.run([self.binary, *args, "--redis-url", self.redis_url], input=stdin, capture_output=True, text=True,
                                timeout=60, env=dict(os.environ, **self.env))
        if result.returncode != 0:
            raise RuntimeError(f"richpush {' '.join(args[:2])} failed: {result.stderr.strip()}")
        return result.stdout

    def add_users(self):
        for name, role in [(self.admin, "admin"), (self.user, "user")]:
            self.richpush("users", "add", name, "--role", role, "--cost", "4", "--queue-prefix", self.prefix, stdin=self.password + "\n")

    def start_api(self, index):
        if index >= len(self.apis):
            self.apis.append(self.supervisor.add(Proc(f"api-{index}", [
                self.binary, "api", "--port", str(self.api_ports[index]), "--redis-url", self.redis_url, "--queue-prefix", self.prefix,
                "--visibility-timeout", str(self.visibility_timeout), "--bcrypt-cost", "4",
                "--quota-notifications-per-minute", "0", "--quota-registrations", "0", "--quota-tags", "0",
                "--log-level", "warning"] + (["--durability", "replicated"] if self.nodes else []), self.workdir, env=self.env)))
        self.apis[index].start()
        url = f"http://127.0.0.1:{self.api_ports[index]}/health/live"
        if not wait_until(lambda: urllib.request.urlopen(url, timeout=1).status == 200, 30):
            raise RuntimeError(f"API replica {index} did not start; see {self.apis[index].stderr_path}")

    def start_fcm(self):
        """Starts `richpush fcm-sim` (one Redis only) and waits until it listens."""
        os.makedirs(self.fcm_dir, exist_ok=True)
        self.fcm = self.supervisor.add(Proc("fcm-sim", [
            self.binary, "fcm-sim", "--redis-url", self.redis_url, "--port", str(self.fcm_port),
            "--service-account", os.path.join(self.fcm_dir, "service-account.json"), "--make-credentials",
            "--cert-dir", self.fcm_dir, "--hub-prefix", self.prefix, "--quota-outage-on-signal", str(self.provider_hold),
            "--log-requests"] + self.fault_option("429", "500", "503"),
            self.workdir, env=self.env))
        self.fcm.start()
        if not wait_until(lambda: "listening" in open(self.fcm.stderr_path).read(), 30):
            raise RuntimeError(f"fcm-sim did not start; see {self.fcm.stderr_path}")

    def fault_option(self, *statuses):
        """`--fail` with the provider fault share spread over `statuses` (none without faults)."""
        if not self.provider_faults:
            return []
        share = self.provider_faults / len(statuses)
        return ["--fail", ",".join(f"{status}:{share:g}%" for status in statuses), "--seed", str(getattr(self, "seed", 1))]

    def start_sim_service(self, name, argv):
        proc = self.supervisor.add(Proc(name, argv, self.workdir, env=self.env))
        proc.start()
        if not wait_until(lambda: "listening" in open(proc.stderr_path).read(), 30):
            raise RuntimeError(f"{name} did not start; see {proc.stderr_path}")
        return proc

    def start_apns_and_webpush(self):
        """apns-sim (a .p8 key made for the run) and webpush-sim (a VAPID key made for the run)."""
        for directory in (self.apns_dir, self.webpush_dir):
            os.makedirs(directory, exist_ok=True)
        self.apns_key = os.path.join(self.apns_dir, "AuthKey.p8")
        self.vapid_key = os.path.join(self.webpush_dir, "vapid.pem")
        for path in (self.apns_key, self.vapid_key):
            ec = path + ".ec"
            subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", ec], check=True, capture_output=True)
            subprocess.run(["openssl", "pkcs8", "-topk8", "-nocrypt", "-in", ec, "-out", path], check=True, capture_output=True)
        der = subprocess.run(["openssl", "ec", "-in", self.vapid_key + ".ec", "-pubout", "-outform", "DER"], check=True, capture_output=True).stdout
        self.vapid_public = base64.urlsafe_b64encode(der[-65:]).decode().rstrip("=")
        self.apns = self.start_sim_service("apns-sim", [
            self.binary, "apns-sim", "--redis-url", self.redis_url, "--port", str(self.apns_port), "--team-id", "CHAOSTEAM1",
            "--key-id", "CHAOSKEY01", "--key-file", self.apns_key, "--topic", "com.example.chaos", "--cert-dir", self.apns_dir,
            "--hub-prefix", self.prefix, "--log-requests"] + self.fault_option("429", "500", "503"))
        self.webpush = self.start_sim_service("webpush-sim", [
            self.binary, "webpush-sim", "--port", str(self.webpush_port), "--cert-dir", self.webpush_dir,
            "--log-requests"] + self.fault_option("429", "503"))

    def webpush_inside_retry_after(self):
        """Requests webpush-sim refused because they came inside a Retry-After window it gave."""
        if self.webpush is None or not os.path.exists(self.webpush.stdout_path):
            return 0
        with open(self.webpush.stdout_path) as log:
            return sum(1 for line in log if '"inside_retry_after"' in line)

    def provider_answers(self):
        """Each simulator's answers by status, from its request log."""
        answers = {}
        for name, proc, keep in (("apns", self.apns, lambda e: True), ("fcm", self.fcm, lambda e: "issued" not in e),
                                 ("webpush", self.webpush, lambda e: "status" in e)):
            if proc is None or not os.path.exists(proc.stdout_path):
                continue
            counts = {}
            with open(proc.stdout_path) as log:
                for line in log:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(entry, dict) and "status" in entry and keep(entry):
                        counts[str(entry["status"])] = counts.get(str(entry["status"]), 0) + 1
            answers[name] = counts
        return answers

    def exhaust_fcm_quota(self):
        self.fcm.signal(signal.SIGUSR1)

    def fcm_requests(self):
        """fcm-sim's log of messages:send, one dict per request (status, token, at)."""
        if self.fcm is None or not os.path.exists(self.fcm.stdout_path):
            return []
        requests = []
        with open(self.fcm.stdout_path) as log:
            for line in log:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if "issued" not in entry:
                    requests.append(entry)
        return requests

    def start_worker(self):
        self.worker_generation += 1
        name = f"worker-{self.worker_generation}"
        fcm = [] if self.fcm is None else [
            "--adapter", "apns,fcm,webpush" if self.apns else "fcm,hub", "--fcm-credentials", os.path.join(self.fcm_dir, "service-account.json"),
            "--fcm-url", f"https://127.0.0.1:{self.fcm_port}", "--fcm-ca-file", os.path.join(self.fcm_dir, "ca.pem")]
        if self.apns:
            apns_url = f"https://127.0.0.1:{self.apns_port}"
            fcm += ["--apns-url", apns_url, "--apns-sandbox-url", apns_url, "--apns-topic", "com.example.chaos", "--apns-key-file", self.apns_key,
                    "--apns-key-id", "CHAOSKEY01", "--apns-team-id", "CHAOSTEAM1", "--apns-ca-file", os.path.join(self.apns_dir, "ca.pem"),
                    "--webpush-vapid-key-file", self.vapid_key, "--webpush-subject", "mailto:chaos@example.com",
                    "--webpush-ca-file", os.path.join(self.webpush_dir, "ca.pem")]
        proc = self.supervisor.add(Proc(name, [
            self.binary, "worker", "--redis-url", self.redis_url, "--queue-prefix", self.prefix, "--consumer", f"chaos-{name}",
            "--visibility-timeout", str(self.visibility_timeout), "--max-attempts", "25", "--log-level", os.environ.get("CHAOS_WORKER_LOG", "warning")] + fcm,
            self.workdir, env=self.env))
        proc.start()
        self.workers.append(proc)
        return proc

    def listening_count(self, index):
        try:
            with open(self.sims[index].stderr_path) as err:
                return err.read().count("listening")
        except OSError:
            return 0

    def start_sim(self, index, timeout=60):
        """Starts simulator `index` and waits until its devices listen; registration fails while
        the API or Redis is down, so it is tried again (bounded)."""
        if index >= len(self.sims):
            self.sims.append(self.supervisor.add(Proc(f"sim-{index}", [
                self.binary, "device-sim", "--api", f"http://127.0.0.1:{self.api_ports[index % len(self.api_ports)]}",
                "--redis-url", self.redis_url, "--user", self.user, "--devices", str(self.devices_per_sim),
                "--tag-groups", str(self.groups), "--fire-delay", str(self.fire_delay), "--tap", "none", "--format", "json", "--lenient",
                "--hub-prefix", self.prefix, "--handle-prefix", f"chaos-{index}",
                "--platform", "apns" if self.nodes else "all" if self.apns else "mixed",
                "--state-file", os.path.join(self.workdir, f"sim-{index}.state")] + ([
                    "--apns-tokens", "--webpush-url", f"https://127.0.0.1:{self.webpush_port}",
                    "--webpush-ca-file", os.path.join(self.webpush_dir, "ca.pem"), "--webpush-application-server-key", self.vapid_public,
                ] if self.apns else []), self.workdir,
                env=dict(self.env, RICHPUSH_PASSWORD=self.password))))
        sim = self.sims[index]
        before = self.listening_count(index)
        deadline = time.time() + timeout
        while time.time() < deadline:
            sim.start()
            while sim.alive() and self.listening_count(index) == before and time.time() < deadline:
                time.sleep(0.05)
            if self.listening_count(index) > before:
                return time.time()
            sim.terminate(2)
            time.sleep(0.5)
        raise RuntimeError(f"device simulator {index} did not start; see {sim.stderr_path}")

    def start_all(self):
        self.start_redis()
        self.add_users()
        if not self.nodes:
            self.start_fcm()
            if self.provider_faults:
                self.start_apns_and_webpush()
        for index in range(len(self.api_ports)):
            self.start_api(index)
        for _ in range(self.worker_count):
            self.start_worker()
        for index in range(self.sim_count):
            self.start_sim(index)
        redis = f"cluster {self.redis_url} ({self.partitions} partitions)" if self.nodes else f"redis :{self.redis_port}"
        fcm = "" if self.fcm is None else f", fcm-sim :{self.fcm_port} for the Android half"
        if self.apns:
            fcm = (f", iPhones, Android phones and browsers in turn through apns-sim :{self.apns_port}, fcm-sim :{self.fcm_port} "
                   f"and webpush-sim :{self.webpush_port}, each failing {self.provider_faults:g}% of valid requests")
        self.log(f"up: {redis} (AOF everysec), API {self.api_ports}, {self.worker_count} workers, "
                 f"{self.sim_count} simulators x {self.devices_per_sim} devices in {self.groups} tag groups{fcm}")

    def queue_stats(self):
        stats = json.loads(self.richpush("stats", "--json", "--queue-prefix", self.prefix))
        # With partitions: {"partitions": {...}, "total": {...}}.
        return stats.get("total", stats)

    def dead_letters(self):
        out = self.richpush("dlq", "list", "--json", "--count", "10000", "--queue-prefix", self.prefix)
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def stop(self):
        self.supervisor.stop_all()
        if self.nodes:
            self.nodes.stop()

    def kill_sim(self, index):
        self.sims[index].kill9()
        self.sim_offline[index].append([time.time(), None])

    def restart_sim(self, index):
        online = self.start_sim(index)
        self.sim_offline[index][-1][1] = online
        return online

    def sigstop_redis(self):
        self.redis.signal(signal.SIGSTOP)

    def sigcont_redis(self):
        self.redis.signal(signal.SIGCONT)
