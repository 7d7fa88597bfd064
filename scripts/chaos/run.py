"""scripts/chaos.sh: a bounded fault-injection run on loopback, reconciled push by push.

Starts Redis (AOF everysec), API replicas, workers and device simulators; sends steady rich-push
load through the HTTP API while faults are injected on a schedule (every kind at least once, then
random ones); waits for the queue to drain; then reconciles every acknowledged notification with
what each device received and prints the figures. Exit 1 on any loss or duplicate, 2 on a setup
failure. Every process is started and stopped here, by PID.
"""
import argparse
import json
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from cluster import Cluster  # noqa: E402
from faults import CLUSTER_KINDS, KINDS, run_schedule, schedule  # noqa: E402
from load import LoadGenerator  # noqa: E402
from reconcile import reconcile  # noqa: E402


def parse():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the richpush executable")
    parser.add_argument("--workdir", required=True, help="where logs, Redis data and the report go")
    parser.add_argument("--duration", type=float, default=90, help="seconds of load (default 90)")
    parser.add_argument("--rate", type=float, default=40, help="notifications per second (default 40)")
    parser.add_argument("--devices", type=int, default=200, help="simulated devices in all (default 200)")
    parser.add_argument("--groups", type=int, default=20, help="tag groups; each notification targets one (default 20)")
    parser.add_argument("--fault-every", type=float, default=10, help="seconds between faults (default 10)")
    parser.add_argument("--drain-timeout", type=float, default=120, help="seconds to wait for the queue to drain (default 120)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    parser.add_argument("--cluster", action="store_true",
                        help="on a local Redis Cluster (scripts/cluster.sh: 3 masters, 3 replicas) with --durability replicated; "
                             "its faults kill -9 or pause a master instead of the one Redis")
    parser.add_argument("--partitions", type=int, default=None, help="queue partitions with --cluster (default 6)")
    parser.add_argument("--provider-hold", type=float, default=30,
                        help="seconds FCM's quota stays used up in a provider-quota fault (default 30; one Redis only)")
    parser.add_argument("--provider-faults", type=float, default=0,
                        help="percent of valid requests apns-sim, fcm-sim and webpush-sim answer with a transient error (429, 500, "
                             "503); the devices are iPhones, Android phones and browsers in turn (default 0: iPhones through the "
                             "simulated hub, every other device an Android phone; one Redis only)")
    args = parser.parse_args()
    for name in ("duration", "rate", "fault_every", "drain_timeout"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    if args.partitions is not None and not args.cluster:
        parser.error("--partitions needs --cluster (one Redis runs one partition)")
    if not 0 <= args.provider_faults <= 50:
        parser.error("--provider-faults must be 0 to 50 (percent)")
    if args.provider_faults and args.cluster:
        parser.error("--provider-faults needs one Redis (the platform simulators run there)")
    if not 1 <= args.provider_hold <= 3600:
        parser.error("--provider-hold must be 1 to 3600 seconds")
    if args.partitions is None:
        args.partitions = 6 if args.cluster else 1
    if args.partitions < 1:
        parser.error("--partitions must be at least 1")
    if args.devices < 2 or args.groups < 1 or args.groups > args.devices // 2:
        parser.error("--devices must be at least 2 and --groups between 1 and devices/2")
    return args


def drain(cluster, load, timeout):
    """Waits until the queue is empty and no device got anything for a while (bounded)."""
    deadline = time.time() + timeout
    quiet_since = None
    last_size = -1
    while time.time() < deadline:
        time.sleep(1)
        size = sum(os.path.getsize(sim.stdout_path) for sim in cluster.sims if os.path.exists(sim.stdout_path))
        try:
            stats = cluster.queue_stats()
            idle = stats.get("pending", 1) == 0 and stats.get("delayed", 1) == 0 and stats.get("lag", 1) == 0
        except (RuntimeError, ValueError):
            idle = False
        if idle and size == last_size:
            quiet_since = quiet_since or time.time()
            if time.time() - quiet_since >= 5:
                return True
        else:
            quiet_since = None
        last_size = size
    return False


def print_report(result, seed, args):
    pairs = result["pairs"]
    print()
    print(f"==> chaos run: {args.duration:.0f} s, {args.rate:g} notifications/s to {args.devices} devices, seed {seed}")
    print(f"    acknowledged {result['acknowledged']} of {result['wanted']} creates "
          f"({result['not acknowledged (gave up)']} gave up, {result['ambiguous creates (request sent, no answer)']} ambiguous)")
    print(f"    pairs expected {result['pairs expected']}:")
    for key in sorted(pairs):
        print(f"      {key}: {pairs[key]}")
    print(f"    creates repeated by client retries despite the Idempotency-Key (its record lost with Redis's last second): "
          f"{result['client-side repeats delivered (despite the Idempotency-Key)']}, "
          f"unacknowledged creates delivered: {result['unacknowledged creates delivered']}")
    print(f"    dead letters: {result['dead letters']} {result['dead letter reasons'] or ''}")
    print(f"    fetch failures on devices: {result['fetch failures'] or 0}")
    print(f"    API answers other than 202: during faults {result['api errors']['during faults'] or 0}, "
          f"outside faults {result['api errors']['outside faults'] or 0}")
    for message, count in result["api error messages"].items():
        print(f"      {count} x {message}")
    print("    faults (recovery: from the fault to the first push of a notification sent after it):")
    for fault in result["faults"]:
        recovery = "never" if fault["recovery_s"] is None else f"{fault['recovery_s']:.2f} s"
        print(f"      {fault['kind']:<14} {fault['target']:<32} restored in {fault['end'] - fault['start']:.2f} s, recovery {recovery}")
    provider = result.get("provider")
    if provider:
        print(f"    FCM answers: {provider['answers']}; requests during a quota hold (after its first 429 + 2 s): "
              f"{provider['during hold']}")
    faults = result.get("provider faults")
    if faults:
        print(f"    provider faults {args.provider_faults:g}%: answers by simulator {faults['answers']}; Web Push requests inside a "
              f"Retry-After window: {faults['inside retry-after']}")
    for item in result["lost"][:10]:
        print(f"    LOST: {item}")


def provider_figures(cluster, faults):
    """What fcm-sim answered, and how many requests reached it while a quota hold was in force:
    from 2 s after the hold's first 429 (requests already in flight may land before) to 0.2 s
    before its end. The fleet must send nothing then."""
    requests = cluster.fcm_requests()
    if not requests:
        return None
    answers = {}
    for entry in requests:
        answers[str(entry.get("status"))] = answers.get(str(entry.get("status")), 0) + 1
    during = 0
    for fault in faults:
        if fault.kind != "provider-quota":
            continue
        first = min((e["at"] for e in requests if e.get("status") == 429 and e.get("at", 0) >= fault.start), default=None)
        if first is None:
            continue
        during += sum(1 for e in requests if first + 2 < e.get("at", 0) < fault.end - 0.2)
    return {"answers": answers, "during hold": during}


def main():
    args = parse()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    os.makedirs(args.workdir, exist_ok=True)
    cluster = Cluster(args.binary, args.workdir, devices=args.devices, groups=args.groups,
                      redis_cluster=args.cluster, partitions=args.partitions, provider_hold=args.provider_hold,
                      provider_faults=args.provider_faults)
    kinds = CLUSTER_KINDS if args.cluster else KINDS
    cluster.seed = seed
    stop_flag = threading.Event()

    def on_signal(signum, _frame):
        stop_flag.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        try:
            cluster.start_all()
        except RuntimeError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        load = LoadGenerator(cluster.api_ports, cluster.admin, cluster.password, args.rate, args.duration, args.groups)
        plan = schedule(args.duration, random.Random(seed), args.fault_every, kinds)
        started = time.time()
        faults = []
        injector = threading.Thread(target=lambda: faults.extend(run_schedule(cluster, plan, started, stop_flag)), daemon=True)
        injector.start()
        load.run()
        injector.join()
        cluster.log(f"load done: {sum(1 for s in load.sends if s.id is not None)} acknowledged; draining")
        if not drain(cluster, load, args.drain_timeout):
            cluster.log("the queue did not drain in time; reconciling what arrived")
        for sim in cluster.sims:
            sim.terminate(10)
        result = reconcile(cluster, load.sends, faults)
        result["provider"] = provider_figures(cluster, faults)
        if args.provider_faults:
            result["provider faults"] = {"answers": cluster.provider_answers(), "inside retry-after": cluster.webpush_inside_retry_after()}
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        cluster.stop()
    result["seed"] = seed
    result["settings"] = vars(args)
    with open(os.path.join(args.workdir, "chaos-report.json"), "w") as out:
        json.dump(result, out, indent=2)
    print_report(result, seed, args)
    missing_kinds = set(kinds) - {fault["kind"] for fault in result["faults"]}
    lost = sum(count for key, count in result["pairs"].items() if key.startswith("lost"))
    duplicated = result["pairs"].get("duplicated", 0)
    during_hold = (result.get("provider") or {}).get("during hold", 0)
    inside_window = (result.get("provider faults") or {}).get("inside retry-after", 0)
    failed = lost > 0 or duplicated > 0 or result["acknowledged"] == 0 or bool(missing_kinds) or during_hold > 0 or inside_window > 0
    if missing_kinds:
        print(f"    fault kinds never injected: {sorted(missing_kinds)}")
    if during_hold:
        print(f"    {during_hold} requests reached FCM while its quota hold was in force")
    if inside_window:
        print(f"    {inside_window} Web Push requests came inside a Retry-After window")
    print(f"==> {'FAILED' if failed else 'PASSED'}: lost while online {lost}, duplicated {duplicated}; "
          f"report {os.path.join(args.workdir, 'chaos-report.json')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
