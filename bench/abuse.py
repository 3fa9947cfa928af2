"""The public site under abuse: big exports, a big upload check, a board page during downloads and a
burst of submissions, measured against the production-shaped web process on a 60,000-attempt board.

    .venv/bin/python bench/abuse.py [--phase exports|upload|board|submit ...] [--reuse]
                                    [--out bench/reports/abuse.txt]

The site: production settings (``MAGEBENCH_ENV=production`` with the secrets and the proxy count it
requires; every request carries what the reverse proxy would add, ``X-Forwarded-Proto: https`` and
``X-Forwarded-For``), its own PostgreSQL database ``magebench_bench_abuse`` (dropped and created, or
BENCH_DATABASE_URL), Redis db 6 as broker and cache (flushed), data under /tmp/magebench-bench-abuse
(static files collected there, as the image does). The web process is the Dockerfile's CMD (gunicorn,
its worker count, timeout and options) bound to 127.0.0.1 on a free port, started afresh before each
phase (what a phase left in its backlog, requests whose clients gave up, would weigh on the next) and
warmed by two rounds of one board page request per gunicorn worker at once; one Celery worker
(``manage.py run_worker``, as the compose file starts them) reads every queue the settings declare.
Endpoint URLs may be local (``MAGEBENCH_ENDPOINT_ALLOW_PRIVATE``) and the quotas are out of the
way: the burst is what is measured. The board: Sokoban Global, mini, fixture suite; ``--submissions``
finished public submissions (3,000) × the mini set's 10 scenarios × 2 repeats = 60,000 scored
attempts, ``--trajectories`` of them (300) with a small trajectory folder (its index and a PNG frame,
hard links of one folder), and a team API token. ``--reuse`` skips the seeding and measures the
database and data folder an earlier run left (the token is read back from the data folder).

Phases (all by default; ``--phase`` picks some):

- exports: each download of the board, anonymous: its rows as CSV and JSON
  (``/boards/<env>/<flow>/<subset>/export.csv|json``) and every attempt as CSV, Parquet and the
  trajectories zip (``/api/v1/boards/.../attempts.<fmt>``), one after another.
- upload: a 17 MB JSONL file of 200,000 short lines posted to ``/api/v1/uploads/check/`` with the token.
  For each download and the upload: ``first byte`` (seconds until the first answer's status line and
  headers), ``total`` (seconds until the last byte of the file: a 202 + Retry-After answer, a file
  built off the request path, is polled, honouring Retry-After, until it comes, and the polls are
  counted; redirects are followed), the bytes received, the status (an HTTP status, or how the
  connection ended: reset, closed, timeout after ``--timeout`` s), ``web MiB`` (the web process's
  memory growth: the RSS summed over the gunicorn master and its workers, read from /proc every
  0.1 s, peak minus before), ``worker MiB`` (the same for the Celery worker's process tree) and the
  gunicorn workers killed meanwhile (``WORKER TIMEOUT`` in its log). Goals: first byte ≤ 1 s, web
  memory growth ≤ 100 MiB, total well below the 30 s worker timeout, no 5xx and no killed worker.
- board: the board page's p50/p95/max, anonymous, ``--requests`` (30) sequential requests on a quiet
  site (after one unmeasured request), then while ``--downloads`` (10) per-attempt CSV downloads run
  at once (each from its own client address, as separate visitors): one page request sent every
  0.5 s (each on its own connection) for as long as a download runs, at least ``--requests``; the p95
  counts the requests sent while a download was running.
  Goal: loaded p95 well below 1 s, beside the quiet p95.
- submit: ``--posts`` (50) endpoint submissions of the fixture mini set posted at once through the API
  (to a closed local port: nothing needs to answer), their p50, p95 and max seconds and statuses,
  after one posted alone (its seconds: what one costs without a queue in front of it).
  Goal: p95 ≤ 1 s on a quiet 2-core machine.

Each phase also records the machine's 1-minute load average (at its start, its end and its highest
sample), as other work on the machine weighs on every number. The report goes to stdout and to
``--out``, with the commit it ran on, the date and the machine's load. Only measured numbers; nothing
here asserts on time. A full run takes about 10 minutes on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._abuse import stack  # noqa: E402
from bench._abuse.phases import PHASES, Site  # noqa: E402
from bench._abuse.report import Report  # noqa: E402

SEED_FILE = stack.DATA_DIR / "seed.json"


def _migrate_and_seed(args: argparse.Namespace, report: Report) -> dict[str, object]:
    import django

    django.setup()
    from django.core.management import call_command

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    if args.reuse:
        seeded = json.loads(SEED_FILE.read_text())
        report.line(f"reusing the seeded database: {seeded['submissions']:,} submissions, "
                    f"{seeded['attempts']:,} attempts, {seeded['trajectories']} trajectory folders")
    else:
        from bench._abuse.seed import seed

        result = seed(args.submissions, repeats=2, trajectories=args.trajectories)
        seeded = {"submissions": result.submissions, "attempts": result.attempts,
                  "trajectories": result.trajectories, "token": result.token}
        SEED_FILE.write_text(json.dumps(seeded))
        report.line(f"seeded {result.submissions:,} finished public submissions, {result.attempts:,} scored "
                    f"attempts ({result.trajectories} with a trajectory folder) in "
                    f"{time.perf_counter() - started:.0f} s (migrations included)")
    return seeded


def prepare(args: argparse.Namespace, env: dict[str, str], report: Report) -> dict[str, object]:
    """The database and data folder (seeded, or reused), migrated, with the static files collected."""
    import shutil

    os.environ.update(env)
    if not args.reuse:
        stack.recreate_database(env["DATABASE_URL"])
        shutil.rmtree(stack.DATA_DIR / "media", ignore_errors=True)
    stack.DATA_DIR.mkdir(parents=True, exist_ok=True)
    stack.flush_redis()
    collecting = stack.collectstatic(env)
    try:
        seeded = _migrate_and_seed(args, report)
        if collecting.wait() != 0:
            raise RuntimeError(f"collectstatic failed: see {stack.DATA_DIR / 'collectstatic.log'}")
    finally:
        if collecting.poll() is None:
            collecting.kill()
    from django.db import connections

    # The bench process holds no connection while the site is measured.
    connections.close_all()
    return seeded


def commit() -> str:
    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{git('rev-parse', '--short', 'HEAD')} {git('log', '-1', '--format=%s')[:90]}{dirty}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", action="append", choices=list(PHASES),
                        help="run only this phase (repeatable; default: every phase)")
    parser.add_argument("--submissions", type=int, default=3000, help="finished public submissions seeded")
    parser.add_argument("--trajectories", type=int, default=300, help="attempts given a trajectory folder")
    parser.add_argument("--reuse", action="store_true", help="measure the database an earlier run seeded")
    parser.add_argument("--timeout", type=float, default=60.0, help="client-side seconds per download or request")
    parser.add_argument("--requests", type=int, default=30, help="board page requests, quiet and loaded")
    parser.add_argument("--downloads", type=int, default=10, help="per-attempt CSV downloads at once")
    parser.add_argument("--posts", type=int, default=50, help="submissions posted at once")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="the Celery worker's processes")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "reports" / "abuse.txt")
    args = parser.parse_args()
    phases = args.phase or list(PHASES)

    report = Report()
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    report.line(f"commit {commit()}")
    report.line(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; "
                f"load average {load} (1, 5, 15 min) at the start; other work may share the machine")
    env = stack.environment()
    seeded = prepare(args, env, report)
    port = stack.free_port()
    web = stack.start_web(env, port)
    worker = None
    site: Site | None = None
    try:
        worker = stack.start_worker(env, args.worker_concurrency)
        command = stack.gunicorn_command(port)
        timeout = (f"{command[command.index('--timeout') + 1]} s" if "--timeout" in command
                   else "30 s, gunicorn's default")
        report.line(f"web: gunicorn {' '.join(command[1:])} (production settings; worker timeout {timeout})")
        report.line(f"worker: manage.py run_worker --concurrency={args.worker_concurrency} (every declared queue)")
        site = Site(env=env, port=port, token=str(seeded["token"]), web=web, worker=worker, timeout=args.timeout,
                    requests=args.requests, downloads=args.downloads, posts=args.posts)
        started = time.perf_counter()
        site.warm()
        report.line(f"warm-up (two rounds of one board page request per gunicorn worker at once; the first builds "
                    f"the board): {time.perf_counter() - started:.1f} s")
        for number, name in enumerate(phases):
            if number:
                site.fresh_web()
            report.blank()
            PHASES[name](site, report)
    finally:
        if worker is not None:
            worker.stop()
        (site.web if site is not None else web).stop()
    report.blank()
    report.line(f"load average at the end {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report.text())
    print(f"(written to {args.out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
