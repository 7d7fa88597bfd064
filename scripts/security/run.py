"""Runs the cases in order against the processes scripts/security.sh started, checks after each
that the API (and worker) still live, and after an NH case that the API's NH listener answers,
restarts what died, prints `ok name` or `FAIL name: why` per case and `N passed, M failed` last.
Exits 1 on any failure."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import cases_authz  # noqa: E402
import cases_batch  # noqa: E402
import cases_input  # noqa: E402
import cases_limits  # noqa: E402
import cases_logs  # noqa: E402
import cases_nh  # noqa: E402
import cases_timing  # noqa: E402
from harness import Check, Ctx, Failed  # noqa: E402

BUDGET = float(os.environ.get("SEC_BUDGET_SECONDS", "90"))  # the log check runs even past it
ONLY = os.environ.get("SEC_ONLY", "")  # run only cases whose name contains this (and the log check)


def plan():
    cases = cases_input.CASES + cases_batch.CASES + cases_authz.CASES + cases_nh.CASES + cases_limits.CASES + cases_limits.LAST_CASES + cases_timing.CASES + cases_logs.CASES
    cases = [(case[0], case[1], case[2] if len(case) > 2 else "api") for case in cases]
    return [case for case in cases if not ONLY or ONLY in case[0] or case[0] == "logs/no-secrets"]


def health(ctx, uses):
    """Why the processes are unhealthy after a case (restarting what died), or []."""
    problems = []
    services = [ctx.api, ctx.worker] + ([ctx.api2] if uses == "api2" else [])
    for service in services:
        problem = service.live()
        if problem is None:
            continue
        tail = service.log_tail(3)
        restart = service.restart() if service.restarts < 5 else "not restarted: restarted 5 times already"
        problems.append(f"{problem} (last log lines: {tail}){'; restarted' if restart is None else '; ' + restart}")
    if uses == "nh" and not problems:
        problem = cases_nh.listener_problem(ctx)
        if problem:
            problems.append(problem)
    return problems


def main():
    ctx = Ctx()
    passed = failed = 0
    started = time.monotonic()
    for problem in filter(None, (ctx.api.live(timeout=5), ctx.worker.live())):
        print(f"FAIL startup: {problem}", flush=True)
        print(f"{passed} passed, {failed + 1} failed")
        return 1
    for name, run, uses in plan():
        if time.monotonic() - started > BUDGET and name != "logs/no-secrets":
            print(f"FAIL {name}: not run, the suite is over its {BUDGET:.0f} s budget", flush=True)
            failed += 1
            continue
        t = Check()
        case_started = time.monotonic()
        try:
            run(ctx, t)
        except Failed:
            pass
        except Exception as error:  # a harness bug, reported as such
            t.fail(f"HARNESS ERROR {type(error).__name__}: {error}")
        t.failures += [f"after the case: {problem}" for problem in health(ctx, uses)]
        elapsed = time.monotonic() - case_started
        if t.failures:
            shown = t.failures[:6] + ([f"(+{len(t.failures) - 6} more)"] if len(t.failures) > 6 else [])
            print(f"FAIL {name}: {'; '.join(shown)}", flush=True)
            failed += 1
        else:
            print(f"ok   {name} ({elapsed:.1f}s{'; ' + '; '.join(t.notes) if t.notes else ''})", flush=True)
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
