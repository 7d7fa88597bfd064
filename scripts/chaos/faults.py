"""The faults of a chaos run: each one injected and undone here, with its times."""
import random
import signal
import time

from procs import redis_ready, wait_until

KINDS = ["worker-kill", "api-kill", "redis-pause", "redis-restart", "redis-kill", "sim-kill", "provider-quota"]
# On a Redis Cluster: a master killed -9 (its replica takes over, then it comes back as a replica)
# or paused for less than the node timeout, instead of the one Redis's faults.
CLUSTER_KINDS = ["worker-kill", "api-kill", "master-kill", "master-pause", "sim-kill"]


class Fault:
    def __init__(self, kind, target):
        self.kind, self.target = kind, target
        self.start = time.time()
        self.end = None
        self.recovered_at = None

    def as_dict(self):
        return {"kind": self.kind, "target": self.target, "start": self.start, "end": self.end,
                "recovery_s": None if self.recovered_at is None else round(self.recovered_at - self.start, 3)}


def schedule(duration, rng, every=10.0, kinds_to_use=KINDS):
    """Offsets (s) and kinds: every kind once in random order, then random kinds, one fault per
    `every` seconds (at least every kind once), none in the last 10% of the load."""
    count = max(len(kinds_to_use), int(duration * 0.9 / every))
    kinds = rng.sample(kinds_to_use, len(kinds_to_use)) + [rng.choice(kinds_to_use) for _ in range(count - len(kinds_to_use))]
    spacing = duration * 0.85 / count
    return [(spacing * (index + 0.5) + rng.uniform(-0.2, 0.2) * spacing, kind) for index, kind in enumerate(kinds)]


def inject(cluster, kind, rng, pause_seconds=2.0):
    """Injects one fault and returns once the system was given back what it lost (the killed
    process restarted or replaced, Redis answering again)."""
    if kind == "worker-kill":
        alive = [worker for worker in cluster.workers if worker.alive()]
        victim = rng.choice(alive)
        fault = Fault(kind, victim.name)
        victim.kill9()
        cluster.workers.remove(victim)
        cluster.start_worker()
    elif kind == "api-kill":
        index = rng.randrange(len(cluster.apis))
        fault = Fault(kind, cluster.apis[index].name)
        cluster.apis[index].kill9()
        time.sleep(1.0)
        cluster.start_api(index)
    elif kind == "redis-pause":
        fault = Fault(kind, f"redis SIGSTOP {pause_seconds:.0f} s")
        cluster.sigstop_redis()
        time.sleep(pause_seconds)
        cluster.sigcont_redis()
    elif kind == "redis-restart":
        fault = Fault(kind, "redis SHUTDOWN + start")
        try:
            cluster.redis_cli("SHUTDOWN")
        except OSError:
            pass  # SHUTDOWN closes the connection without a reply
        if not cluster.redis.wait(20):
            cluster.redis.kill9()
        cluster.start_redis()
    elif kind == "redis-kill":
        fault = Fault(kind, "redis kill -9 + start from AOF")
        cluster.redis.signal(signal.SIGKILL)
        cluster.redis.wait(5)
        cluster.start_redis()
    elif kind == "master-kill":
        port = rng.choice(cluster.nodes.masters())
        fault = Fault(kind, f"master :{port} kill -9, back as a replica")
        cluster.nodes.kill_master(port)
    elif kind == "master-pause":
        port = rng.choice(cluster.nodes.masters())
        fault = Fault(kind, f"master :{port} SIGSTOP {pause_seconds / 2:.0f} s")
        cluster.nodes.pause_master(port, pause_seconds / 2)
    elif kind == "provider-quota":
        # FCM's project quota used up: 429 QUOTA_EXCEEDED with Retry-After until it ends. Nothing
        # is killed; the fault lasts as long as the quota is out, while the schedule goes on.
        fault = Fault(kind, f"fcm-sim quota out {cluster.provider_hold:g} s")
        cluster.exhaust_fcm_quota()
        fault.end = fault.start + cluster.provider_hold
        cluster.log(f"fault {kind} ({fault.target})")
        return fault
    elif kind == "sim-kill":
        index = rng.randrange(len(cluster.sims))
        fault = Fault(kind, cluster.sims[index].name)
        cluster.kill_sim(index)
        time.sleep(1.0)
        cluster.restart_sim(index)
    else:
        raise ValueError(kind)
    if kind.startswith("redis"):
        wait_until(lambda: redis_ready(cluster.redis_port), 30)
    fault.end = time.time()
    cluster.log(f"fault {kind} ({fault.target}): {fault.end - fault.start:.2f} s until restored")
    return fault


def run_schedule(cluster, plan, started, stop_flag):
    """Runs the planned faults at their offsets from `started`; returns the faults injected."""
    rng = random.Random(cluster.seed)
    faults = []
    for offset, kind in plan:
        while time.time() < started + offset:
            if stop_flag.is_set():
                return faults
            time.sleep(0.05)
        faults.append(inject(cluster, kind, rng))
    return faults
