"""Chaos: teams keep submitting while workers, the broker, the database and the web process are
killed or restarted at random; afterwards every attempt must have ended once and every board must be
what its stored attempts say.

    .venv/bin/python bench/chaos.py --minutes 3 --seed 1 [--stack local|compose] [--workers N]
                                    [--out bench/reports/chaos.txt]

Two stacks (``--stack``), with the same teams, submitter, checks and report (``bench/_chaos/``):

- ``local`` (the default; ``bench/_chaos/local.py``): local processes the bench starts itself:
  Celery workers (``celery -A config worker``, two pool processes each, --workers of them, 3 by
  default), Celery beat (the watchdog, every 2 s), the web process (``manage.py runserver
  --noreload``) and a private ``redis-server --port 6390 --save ''`` as the broker (db 11); the
  database is ``magebench_chaos`` on the machine's PostgreSQL (dropped and created). The shared
  PostgreSQL and Redis servers are never restarted: a database restart is simulated by
  ``pg_terminate_backend`` on every connection to the bench's database (what a restart does to its
  clients), a broker restart by killing the private redis-server (which comes back empty) or by
  FLUSHDB of the bench's db. Latest run: ``bench/reports/chaos.txt``.
- ``compose`` (``bench/_chaos/compose.py``): the production stack of docker-compose.yml, with the
  images and compose files of ``scripts/compose-check`` (one driver: ``deploy/stack.py``) plus
  ``bench/_chaos/compose.chaos.yml`` (fast heartbeats and watchdog, quotas out of the way), its proxy
  on https://localhost:18443, --workers light worker containers (2 by default) next to the browser
  and engine pools. Teams submit through the API and the proxy (a token each) to endpoints
  served on each light worker's loopback. The events are real: ``docker kill -s KILL`` of a worker
  container (started again), ``docker stop`` of one (its stop time measured; started again),
  FLUSHALL of Redis then a restart of its container, a restart of the PostgreSQL container and of
  the web container. Workers have Docker's ``restart: unless-stopped``: one that exits on its own
  (a Celery worker can, when Redis restarts under it) is started again, and the report counts those
  restarts. The stored side is checked inside the web container. The stack is torn down (volumes
  included) at the end, also on failure or interrupt; a run takes about 3 minutes more than
  --minutes. Latest run: ``bench/reports/chaos-compose.txt``.

Teams (each its own baseline endpoint on Sokoban Online, mini, one repeat; every answer waits a
seeded lognormal draw of mean 0.3 s; ``bench/_chaos/agents.py``): Steady (the oracle), Flaky (the
oracle; every 4th request a 500), Garbled (the random agent; every 5th reply garbage), Throttled
(the oracle; every 6th a 429), and Uploader, who uploads the oracle's runs in the official layout. A
submitter adds one submission (ten attempts) every --submit-pause s (seeded; 30-60 by default, about
what three workers on two cores play, so the queue drains soon after the chaos); the chaos loop,
every 5-20 s (seeded), does one of the stack's events. A poller reads the home page and the queue
page every 0.5 s throughout.

After the chaos the workers are left alone until every submission has finished (or --drain s), and
the bench checks: no attempt left waiting or running (lost); every scored attempt's trajectory is
its last try's (a second try never wrote over it); no scored attempt carries an infrastructure
error, no infrastructure failure has a score; every stored board result equals a rebuild from the
stored attempts (``submission_result_rebuild``, what ``manage.py rebuild_results`` runs); no
server error (5xx) outside the database's downtime (and 5 s after it). It prints the figures and
writes them to --out; it exits 1 when a check fails.
"""
from __future__ import annotations

import argparse
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._chaos.record import Record, check_server_errors, report  # noqa: E402
from bench._chaos.stack import Stack, log  # noqa: E402
from bench._chaos.traffic import oracle_upload, poll_web, submitter  # noqa: E402

REPORTS = {"local": ROOT / "bench" / "reports" / "chaos.txt",
           "compose": ROOT / "bench" / "reports" / "chaos-compose.txt"}


def make_stack(args: argparse.Namespace) -> Stack:
    if args.stack == "compose":
        from bench._chaos.compose import ComposeStack

        return ComposeStack(light_workers=args.workers)
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is needed for the private broker")
    from bench._chaos.local import LocalStack

    return LocalStack(workers=args.workers)


def run(args: argparse.Namespace) -> int:
    stack = make_stack(args)
    workdir = Path(tempfile.mkdtemp(prefix="magebench-chaos-"))
    rng = random.Random(args.seed)
    record = Record()
    stop = threading.Event()
    try:
        stack.prepare(workdir)
        log("recording the oracle's upload")
        upload = oracle_upload(workdir)
        stack.start(workdir, upload)
        started = time.monotonic()
        threads = [threading.Thread(target=poll_web, args=(stack, record, started, stop), daemon=True),
                   threading.Thread(target=submitter, daemon=True,
                                    args=(stack, record, random.Random(args.seed + 1), stop, tuple(args.submit_pause)))]
        for thread in threads:
            thread.start()
        log(f"chaos on the {args.stack} stack for {args.minutes} min (seed {args.seed}); work in {workdir}")
        end = started + args.minutes * 60
        while True:
            pause = rng.uniform(5, 20)
            if time.monotonic() + pause > end:
                break
            time.sleep(pause)
            kind = rng.choice(stack.kinds)
            try:
                what = stack.event(kind, rng, record, started)
            except (RuntimeError, subprocess.SubprocessError) as exc:  # the stack's tool refused: say so, go on
                what = f"FAILED: {exc}"
            record.events.append((time.monotonic() - started, kind, what))
            log(what)
        stop.set()
        threads[1].join(timeout=60)
        chaos_seconds = time.monotonic() - started
        log("chaos over; waiting for the queue to drain")
        drain_started = time.monotonic()
        poller = threading.Event()
        polling = threading.Thread(target=poll_web, args=(stack, record, started, poller), daemon=True)
        polling.start()
        while stack.active_count() and time.monotonic() - drain_started < args.drain:
            time.sleep(2)
        drained = time.monotonic() - drain_started
        poller.set()
        checks, figures = stack.outcome(record)
        check_server_errors(record, checks)
        failed = [what for _, _, what in record.events if what.startswith("FAILED")]
        checks.check(not failed, f"every chaos event ran: {len(failed)} failed {failed[:3]}")
        remaining = stack.active_count()
        checks.check(remaining == 0, f"the queue drained: {remaining} submissions still active after {drained:.0f} s")
    finally:
        stop.set()
        stack.stop()
    lines = report(args, stack.description, stack.kinds, record, stack.stop_seconds, chaos_seconds, drained,
                   figures, checks)
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out or REPORTS[args.stack]).write_text(text)
    return 1 if checks.failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--stack", choices=("local", "compose"), default="local")
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None,
                        help="local: worker processes (3); compose: light worker containers (2)")
    parser.add_argument("--submit-pause", type=float, nargs=2, default=[30.0, 60.0], metavar=("MIN", "MAX"),
                        help="seconds between two submissions, drawn uniformly")
    parser.add_argument("--drain", type=float, default=900.0, help="longest wait for the queue to drain (s)")
    parser.add_argument("--out", default=None,
                        help="the report (bench/reports/chaos.txt, or chaos-compose.txt for the compose stack)")
    args = parser.parse_args()
    if args.workers is None:
        args.workers = 2 if args.stack == "compose" else 3
    # A SIGTERM ends the run as Ctrl-C does: the stack is stopped (torn down on compose) on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
