"""The abuse bench's phases: each sends its traffic to the running site and reports what it measured."""
from __future__ import annotations

import functools
import json
import os
import statistics
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench._abuse.probe import Answer, Sampler, fetch, percentile
from bench._abuse.report import Report
from bench._abuse.seed import ENV, FLOW, SUBSET, SUITE
from bench._abuse.stack import ROOT, Process, dockerfile_command, free_port, start_web

BOARD = f"/boards/{ENV}/{FLOW}/{SUBSET}/"
API_BOARD = f"/api/v1/boards/{ENV}/{FLOW}/{SUBSET}/"
EXPORTS = [("board rows CSV", f"{BOARD}export.csv"), ("board rows JSON", f"{BOARD}export.json"),
           ("attempts CSV", f"{API_BOARD}attempts.csv"), ("attempts Parquet", f"{API_BOARD}attempts.parquet"),
           ("attempts zip", f"{API_BOARD}attempts.zip")]
#: Goals: the first byte of an answer, the web process's memory growth, a page's p95, a submission's p95.
FIRST_BYTE_GOAL = 1.0
MEMORY_GOAL_MIB = 100.0
PAGE_P95_GOAL = 1.0
SUBMIT_P95_GOAL = 1.0
#: Seconds between board page requests while the downloads run, and the most sent.
PAGE_EVERY = 0.5
PAGE_MAX = 240
UPLOAD_LINES = 200_000
UPLOAD_LINE_BYTES = 85


@dataclass
class Site:
    env: dict[str, str]
    port: int
    token: str
    web: Process
    worker: Process
    timeout: float
    requests: int
    downloads: int
    posts: int

    def fresh_web(self) -> None:
        """A new web process, warmed: what a phase left queued in the old one's backlog (requests its
        clients gave up on) would otherwise be served first and weigh on the next phase."""
        self.web.stop()
        self.web = start_web(self.env, self.port)
        self.warm()

    def warm(self) -> None:
        """Two rounds of one board page request per gunicorn worker at once, unmeasured: each worker's
        first request pays its imports and templates, which no later visitor pays."""
        for _ in range(2):
            threads = [threading.Thread(target=fetch, args=(self.port, BOARD), kwargs={"timeout": self.timeout},
                                        daemon=True) for _ in range(web_worker_count())]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=self.timeout + 5)

    def sampler(self) -> Sampler:
        return Sampler({"web": self.web.popen.pid, "worker": self.worker.popen.pid})

    def killed_workers(self) -> int:
        """gunicorn workers its master has killed for running past the timeout, so far."""
        return self.web.tail(10**8).count("WORKER TIMEOUT")

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def web_workers_back(self) -> None:
        """Wait (at most 20 s) until gunicorn runs its full count of workers again after a kill."""
        wanted = web_worker_count()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if len(_children(self.web.popen.pid)) >= wanted:
                return
            time.sleep(0.2)


def web_worker_count() -> int:
    command = dockerfile_command()
    return int(command[command.index("--workers") + 1]) if "--workers" in command else 1


def _children(pid: int) -> list[str]:
    try:
        return open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        return []


def excerpt(body: bytes, chars: int = 200) -> str:
    """The start of an answer's body on one line."""
    return " ".join(body[:4 * chars].decode("utf-8", "replace").split())[:chars]


def mark(ok: bool) -> str:
    return "pass" if ok else "MISS"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def load_span(started: float, sampler: Sampler) -> str:
    return f"{started:.2f}->{os.getloadavg()[0]:.2f} (max {sampler.load_max:.2f})"


def download_row(label: str, answer: Answer, sampler: Sampler, killed: int, load: str) -> str:
    web, worker = sampler.growth_mib("web"), sampler.growth_mib("worker")
    first_ok = answer.first_byte is not None and answer.first_byte <= FIRST_BYTE_GOAL
    clean = answer.status.startswith("2") and killed == 0
    return (f"{label:18s} {answer.status:>22s} {mark(clean):>4s} {seconds(answer.first_byte):>7s} {mark(first_ok):>4s} "
            f"{answer.total:7.2f} {answer.size / 2**20:8.1f} {answer.polls:5d} {web:7.0f} "
            f"{mark(web <= MEMORY_GOAL_MIB):>4s} {worker:7.0f} {killed:6d}  {load}")


DOWNLOAD_HEADER = (f"{'':18s} {'status':>22s} {'goal':>4s} {'1st B s':>7s} {'goal':>4s} {'total s':>7s} "
                   f"{'MiB recv':>8s} {'polls':>5s} {'web MiB':>7s} {'goal':>4s} {'wkr MiB':>7s} {'killed':>6s}  "
                   "load 1-min start->end (max)")


def measured(site: Site, label: str, call: Callable[[], Answer]) -> tuple[Answer, str]:
    site.web_workers_back()
    killed = site.killed_workers()
    load = os.getloadavg()[0]
    with site.sampler() as sampler:
        answer = call()
    return answer, download_row(label, answer, sampler, site.killed_workers() - killed, load_span(load, sampler))


def exports(site: Site, report: Report) -> None:
    report.line(f"Downloads of the board, anonymous, one at a time (client timeout {site.timeout:.0f} s). Goals: "
                f"first byte <= {FIRST_BYTE_GOAL:.0f} s, web memory growth <= {MEMORY_GOAL_MIB:.0f} MiB, a 2xx "
                "answer well within gunicorn's 30 s timeout, no worker killed")
    report.line(DOWNLOAD_HEADER)
    for label, path in EXPORTS:
        _, row = measured(site, label, functools.partial(fetch, site.port, path, timeout=site.timeout))
        report.line(row)


def jsonl_upload(lines: int = UPLOAD_LINES, width: int = UPLOAD_LINE_BYTES) -> bytes:
    """``lines`` short runs of the fixture's Sokoban levels, each line ``width`` bytes with its newline."""
    listed = json.loads((ROOT / "fixtures" / "magebench" / "resources" / "Sokoban_mini.json").read_text())
    keys = [Path(name).stem for name in listed]
    out = []
    for i in range(lines):
        run = {"scenario": keys[i % len(keys)], "repeat": i // len(keys), "replies": ["Up"]}
        padding = max(0, width - 1 - len(json.dumps(run)))
        out.append(json.dumps(run | {"replies": ["Up" + " " * padding]}))
    return ("\n".join(out) + "\n").encode()


def multipart(fields: dict[str, str], name: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
             for key, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                 f"Content-Type: application/x-ndjson\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def upload(site: Site, report: Report) -> None:
    data = jsonl_upload()
    body, content_type = multipart({"env": ENV, "flow": FLOW, "subset": SUBSET, "suite": SUITE}, "file",
                                   "runs.jsonl", data)
    report.line(f"An upload check of a {len(data) / 1e6:.1f} MB JSONL file of {UPLOAD_LINES:,} lines, with the "
                "team's token (same goals)")
    report.line(DOWNLOAD_HEADER)
    answer, row = measured(site, "upload check", lambda: fetch(
        site.port, "/api/v1/uploads/check/", method="POST", body=body, keep=True, timeout=site.timeout,
        headers={**site.auth(), "Content-Type": content_type, "Content-Length": str(len(body))}))
    report.line(row)
    if answer.body:
        report.line(f"  its answer: {excerpt(answer.body)}")


def _page_times(site: Site, count: int) -> list[Answer]:
    return [fetch(site.port, BOARD, timeout=site.timeout) for _ in range(count)]


def _summary(answers: list[Answer]) -> str:
    times = [a.total for a in answers]
    statuses = Counter(a.status for a in answers)
    return (f"p50 {statistics.median(times):.3f} s, p95 {percentile(times, 0.95):.3f} s, max {max(times):.3f} s "
            f"({len(answers)} requests; {', '.join(f'{n}x {s}' for s, n in sorted(statuses.items()))})")


def board(site: Site, report: Report) -> None:
    report.line(f"The board page ({BOARD}), anonymous. Goal: p95 during the downloads well below "
                f"{PAGE_P95_GOAL:.0f} s, beside the quiet p95")
    load = os.getloadavg()[0]
    with site.sampler() as sampler:
        quiet = _page_times(site, site.requests)
    report.line(f"  quiet (after the warm-up), {site.requests} in a row: {_summary(quiet)}; "
                f"load {load_span(load, sampler)}")

    site.web_workers_back()
    killed = site.killed_workers()
    load = os.getloadavg()[0]
    downloads: list[Answer] = []
    pages: list[tuple[bool, Answer]] = []
    lock = threading.Lock()

    def download(client: int) -> None:
        # Separate visitors, not one client many times: each has its own address, so no per-client
        # throttle stands in for what the site itself can take.
        answer = fetch(site.port, f"{API_BOARD}attempts.csv", timeout=site.timeout,
                       headers={"X-Forwarded-For": f"198.51.100.{10 + client}"})
        with lock:
            downloads.append(answer)

    def page(during: bool) -> None:
        answer = fetch(site.port, BOARD, timeout=site.timeout)
        with lock:
            pages.append((during, answer))

    with site.sampler() as sampler:
        loaders = [threading.Thread(target=download, args=(i,), daemon=True) for i in range(site.downloads)]
        for thread in loaders:
            thread.start()
        visitors: list[threading.Thread] = []
        while len(visitors) < PAGE_MAX:
            running = any(thread.is_alive() for thread in loaders)
            if not running and len(visitors) >= site.requests:
                break
            visitor = threading.Thread(target=page, args=(running,), daemon=True)
            visitor.start()
            visitors.append(visitor)
            time.sleep(PAGE_EVERY)
        for thread in [*loaders, *visitors]:
            thread.join(timeout=site.timeout + 5)
    during = [answer for was_during, answer in pages if was_during]
    report.line(f"  while {site.downloads} per-attempt CSV downloads run at once, one request every {PAGE_EVERY} s: "
                + (f"{_summary(during)} {mark(percentile([a.total for a in during], 0.95) <= PAGE_P95_GOAL)}"
                   if during else "none sent while a download ran"))
    after = [answer for was_during, answer in pages if not was_during]
    if after:
        report.line(f"  sent after the last download ended: {_summary(after)}")
    statuses = Counter(a.status for a in downloads)
    report.line(f"  the downloads: {', '.join(f'{n}x {s}' for s, n in sorted(statuses.items()))}; total "
                f"p50 {statistics.median([a.total for a in downloads]):.1f} s, max "
                f"{max(a.total for a in downloads):.1f} s; first byte max "
                f"{max((a.first_byte or 0.0) for a in downloads):.2f} s; gunicorn workers killed "
                f"{site.killed_workers() - killed}; web memory growth {sampler.growth_mib('web'):.0f} MiB, worker "
                f"{sampler.growth_mib('worker'):.0f} MiB; load {load_span(load, sampler)}")


def submit(site: Site, report: Report) -> None:
    closed = free_port()  # bound and released: nothing listens there
    body = json.dumps({"model_name": "Abuse burst", "env": ENV, "flow": FLOW, "subset": SUBSET, "suite": SUITE,
                       "endpoint_url": f"http://127.0.0.1:{closed}/v1", "endpoint_model": "abuse",
                       "settings": {"repeats": 1}}).encode()
    headers = {**site.auth(), "Content-Type": "application/json"}
    barrier = threading.Barrier(site.posts)
    answers: list[Answer] = []
    lock = threading.Lock()

    def post() -> None:
        barrier.wait()
        answer = fetch(site.port, "/api/v1/submissions/", method="POST", body=body, headers=headers, keep=True,
                       timeout=site.timeout)
        with lock:
            answers.append(answer)

    site.web_workers_back()
    alone = fetch(site.port, "/api/v1/submissions/", method="POST", body=body, headers=headers, keep=True,
                  timeout=site.timeout)
    load = os.getloadavg()[0]
    with site.sampler() as sampler:
        threads = [threading.Thread(target=post, daemon=True) for _ in range(site.posts)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=site.timeout + 5)
    times = [a.total for a in answers]
    p95 = percentile(times, 0.95)
    report.line(f"{site.posts} endpoint submissions (fixture mini set, to a closed local port) posted at once with "
                f"the team's token. Goal: p95 <= {SUBMIT_P95_GOAL:.0f} s on a quiet 2-core machine")
    report.line(f"  one alone first: {alone.total:.3f} s, {alone.status}")
    report.line(f"  {site.posts} at once: {_summary(answers)} {mark(p95 <= SUBMIT_P95_GOAL)}; web memory growth "
                f"{sampler.growth_mib('web'):.0f} MiB; load {load_span(load, sampler)}")
    refused = [a for a in [alone, *answers] if not a.status.startswith("2") and a.body]
    if refused:
        report.line(f"  e.g. {refused[0].status}: {excerpt(refused[0].body)}")


PHASES: dict[str, Callable[[Site, Report], None]] = {
    "exports": exports, "upload": upload, "board": board, "submit": submit}
