"""Steady rich-push load through the HTTP API, as a careful client sends it.

Notification k is due at start + k/rate; a pool of threads sends them with keep-alive connections,
alternating between the API replicas. A 503 (honouring Retry-After, at most 2 s), a 5xx, a refused
or dropped connection and a timeout are retried, on the other replica first, until the create is
acknowledged (202) or `give_up` seconds have passed. Every attempt of one notification carries the
same Idempotency-Key, so a retry after a lost answer replays the first create instead of making a
second (a 409 while the first is still handled is retried after its Retry-After; a replica killed
while handling a create leaves its key claimed for a minute, `IdempotencyKey.claimLifetime`, so
`give_up` is longer than that: with 60 s, two creates of a run gave up on 409s). An attempt whose
request went out but got no answer (timeout, reset) may have created the notification: such creates
are "ambiguous". A notification delivered twice under two ids is a repeat the key did not prevent
(its record lost with Redis's last second of AOF after a kill -9).
"""
import base64
import http.client
import json
import os
import queue
import threading
import time


class Attempt:
    __slots__ = ("at", "replica", "status", "error", "detail", "connection_born")

    def __init__(self, at, replica, connection_born):
        self.at, self.replica, self.connection_born = at, replica, connection_born
        self.status = self.error = self.detail = None


class Send:
    """One notification the client wants created."""

    def __init__(self, seq, group, due, key):
        self.seq, self.group, self.due, self.key = seq, group, due, key
        self.attempts = []
        self.id = None
        self.acked_at = None
        self.ambiguous = False

    @property
    def message(self):
        return f"chaos {self.seq}"


class LoadGenerator:
    def __init__(self, api_ports, user, password, rate, duration, groups, threads=16, give_up=90.0, timeout=5.0):
        self.api_ports, self.rate, self.duration, self.groups = api_ports, rate, duration, groups
        self.threads, self.give_up, self.timeout = threads, give_up, timeout
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        self.headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
        self.sends = []
        self.lock = threading.Lock()
        self.todo = queue.Queue()
        self.stop_flag = threading.Event()
        # Idempotency keys unique to this run (the API keeps a key's answer for a day).
        self.run_token = os.urandom(6).hex()

    def run(self):
        """Blocks for the load's duration plus the retries still running (bounded by give_up)."""
        workers = [threading.Thread(target=self._worker, daemon=True) for _ in range(self.threads)]
        for worker in workers:
            worker.start()
        start = time.time()
        total = int(self.rate * self.duration)
        for seq in range(total):
            due = start + seq / self.rate
            delay = due - time.time()
            if delay > 0:
                time.sleep(delay)
            if self.stop_flag.is_set():
                break
            send = Send(seq, seq % self.groups, due, f"chaos-{self.run_token}-{seq}")
            with self.lock:
                self.sends.append(send)
            self.todo.put(send)
        for _ in workers:
            self.todo.put(None)
        for worker in workers:
            worker.join(self.give_up + self.timeout + 5)

    def _worker(self):
        connections = {}
        while True:
            send = self.todo.get()
            if send is None:
                break
            self._create(send, connections)
        for connection, _ in connections.values():
            connection.close()

    def _create(self, send, connections):
        body = json.dumps({"message": send.message, "richType": "text", "payload": f"chaos payload {send.seq}",
                           "target": f"g{send.group}"}).encode()
        headers = dict(self.headers, **{"Idempotency-Key": send.key})
        deadline = time.time() + self.give_up
        attempt = 0
        while time.time() < deadline and not self.stop_flag.is_set():
            replica = (send.seq + attempt) % len(self.api_ports)
            attempt += 1
            connection, born = connections.get(replica, (None, None))
            if connection is None:
                connection, born = http.client.HTTPConnection("127.0.0.1", self.api_ports[replica], timeout=self.timeout), time.time()
                connections[replica] = (connection, born)
            record = Attempt(time.time(), replica, born)
            send.attempts.append(record)
            sent = False
            try:
                connection.request("POST", "/api/notifications", body=body, headers=headers)
                sent = True
                response = connection.getresponse()
                payload = response.read()
                record.status = response.status
                if response.status != 202:
                    try:
                        record.detail = json.loads(payload)["error"]["message"][:120]
                    except (ValueError, KeyError, TypeError):
                        record.detail = payload[:120].decode(errors="replace")
                if response.status == 202:
                    send.id = int(json.loads(payload)["id"])
                    send.acked_at = time.time()
                    return
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connections.pop(replica, None)
                retry_after = response.getheader("Retry-After")
                pause = min(float(retry_after), 2.0) if retry_after and retry_after.isdigit() else 0.2
            except (OSError, http.client.HTTPException) as error:
                record.error = type(error).__name__
                # Refused before the request went out: nothing can have been created.
                if sent or not isinstance(error, ConnectionRefusedError):
                    send.ambiguous = send.ambiguous or sent
                connection.close()
                connections.pop(replica, None)
                pause = 0.1 if isinstance(error, ConnectionRefusedError) else 0.3
            time.sleep(pause)
