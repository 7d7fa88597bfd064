"""The last case: no log of the run holds a secret the suite used (passwords, Basic credentials,
the Redis password, API keys, device handles)."""
import glob
import os


def no_secrets_in_logs(ctx, t):
    files = sorted(glob.glob(os.path.join(ctx.run_dir, "*.log")) + glob.glob(os.path.join(ctx.run_dir, "*.stdout")))
    t.need(t.expect("log files of the run", any(f.endswith("api.log") for f in files), "api.log among them", files))
    for path in files:
        with open(path, "rb") as file:
            text = file.read().decode("utf-8", "replace")
        for secret, what in sorted(ctx.secrets.items(), key=lambda item: item[1]):
            if len(secret) >= 6 and secret in text:
                line = next(line for line in text.splitlines() if secret in line)
                t.fail(f"{os.path.basename(path)} holds {what}: {line[:160]!r}")


CASES = [("logs/no-secrets", no_secrets_in_logs)]
