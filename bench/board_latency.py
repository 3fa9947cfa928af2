"""Board, analysis and replay latency on a large seeded database, measured in one run.

    .venv/bin/python bench/board_latency.py [--submissions 1000] [--attempts 1449] [--requests 20]

Seeds a PostgreSQL database of its own (``magebench_bench`` on the local server, or BENCH_DATABASE_URL)
with official-sized scenario sets (Sokoban 182, Football 108, WebUI 193; mini 20 each) and
``--submissions`` finished submissions spread over the full boards, each with ``--attempts`` scored
attempts (scenarios × repeats, as 483 scenarios × 3 repeats gives 1,449). Then prints, per page,
the p50 and p95 wall time of ``--requests`` requests through Django's test client and the number
of SQL queries one request makes (the same for a board of 10 or 200 entries: no N+1). Boards read
each entry's stored result; the last line measures the same board summarised from attempt rows.
Only measured numbers are printed; nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SIZES = {"sokoban": 182, "football": 108, "webui": 193}
MINI = 20
FULL_BOARDS = [("sokoban", "global"), ("sokoban", "online"), ("webui", "global"), ("webui", "online"),
               ("football", "online")]
SUITE = "bench"


def recreate_database(url: str) -> None:
    """Drop and create the database ``url`` names (on the local server), so every run starts empty."""
    import psycopg

    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as connection:
        name = url.rsplit("/", 1)[1]
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL",
                                                "postgres://postgres@127.0.0.1:5432/magebench_bench")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ.setdefault("MAGEBENCH_DATA_DIR", tempfile.mkdtemp(prefix="magebench-bench-"))
    os.environ["MAGEBENCH_DEFAULT_SUITE"] = SUITE
    recreate_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def seed(submissions: int, attempts_per_submission: int) -> dict[str, int]:
    from accounts.models import Team
    from leaderboard.models import Scenario
    from leaderboard.services import environment_ensure
    from submissions.models import Attempt, ModelEntry, Submission
    from submissions.services import submission_result_rebuild

    rng = random.Random(1)
    scenarios: dict[str, list[Scenario]] = {}
    for env, size in SIZES.items():
        environment = environment_ensure(env)
        Scenario.objects.bulk_create(
            Scenario(environment=environment, suite=SUITE, key=f"{env}-{i:03d}", in_mini=i < MINI, in_full=True,
                     tags={"zone": f"R{1 + i % 9}", "category": "personal", "variant": f"v{i % 3}", "boxes": 1 + i % 4},
                     content_hash=f"{i}")
            for i in range(size))
        scenarios[env] = list(Scenario.objects.filter(environment_id=env, suite=SUITE).order_by("key"))
    teams = Team.objects.bulk_create(Team(name=f"Team {i}", slug=f"team-{i}") for i in range(100))
    models = ModelEntry.objects.bulk_create(
        ModelEntry(team=teams[i % 100], name=f"Model {i}", organisation=f"Org {i % 37}",
                   parameter_count=rng.choice([None, 7_000_000_000, 70_000_000_000]), open_weights=bool(i % 2))
        for i in range(submissions))
    created = 0
    for i, model in enumerate(models):
        env, flow = FULL_BOARDS[i % len(FULL_BOARDS)]
        submission = Submission.objects.create(
            team=model.team, model=model, environment_id=env, flow=flow, subset="full", suite=SUITE,
            status=Submission.Status.COMPLETED, settings={"repeats": 3, "prompt_version": "bench"}, is_public=True)
        pool = scenarios[env]
        skill = rng.random()
        rows = []
        for k in range(attempts_per_submission):
            scenario = pool[k % len(pool)]
            rows.append(Attempt(
                submission=submission, scenario=scenario, repeat=k // len(pool), status=Attempt.Status.SCORED,
                score=round(100 * min(1.0, max(0.0, rng.gauss(skill, 0.2))), 3), steps=10, model_calls=10,
                invalid_action=rng.random() < 0.2, repeating_action=rng.random() < 0.1,
                details={"breakdown": {"parse": 0.1, "render": 0.1, "interaction": 0.1, "unmatched": 0.1,
                                       "attribute": 0.1}} if env == "webui" else {}))
        Attempt.objects.bulk_create(rows, batch_size=5000)
        # Bulk-created attempts bypass the worker's finishing step, which stores the entry's result.
        submission_result_rebuild(submission_id=submission.id)
        created += len(rows)
        if (i + 1) % 100 == 0:
            print(f"  seeded {i + 1} submissions, {created} attempts", flush=True)
    return {"submissions": submissions, "attempts": created}


def replayed_attempt_id() -> int:
    """A real Sokoban Online episode played by the oracle baseline over HTTP, so the replay page
    reads a real multi-step trajectory with its frames."""
    from django.core.management import call_command

    from accounts.services import team_get_or_create
    from evaluators.baselines.agents import make_agent
    from evaluators.baselines.server import start_server
    from submissions.engine import attempt_run
    from submissions.services import model_entry_upsert, submission_create_endpoint

    call_command("import_magebench", str(ROOT / "fixtures" / "magebench"), suite="fixture", envs=["sokoban"],
                 verbosity=0)
    server = start_server(make_agent("oracle", seed=0))
    try:
        model = model_entry_upsert(team=team_get_or_create(name="Replay"), name="Replay oracle")
        submission = submission_create_endpoint(model=model, env="sokoban", flow="online", subset="mini",
                                                suite="fixture", endpoint_url=server.url, settings={"repeats": 1})
        attempt_id = submission.attempts.order_by("id").values_list("id", flat=True).first()
        assert attempt_id is not None
        attempt_run(attempt_id=attempt_id)
    finally:
        server.stop()
    return attempt_id


def measure(client, url: str, requests: int) -> tuple[float, float, int]:
    from django.db import connection

    executed = 0

    def count(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        nonlocal executed
        executed += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        client.get(url)
        times.append(time.perf_counter() - started)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    return statistics.median(times), p95, executed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--attempts", type=int, default=1449)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    setup_django()
    started = time.perf_counter()
    counts = seed(args.submissions, args.attempts)
    print(f"seeded {counts['submissions']} submissions, {counts['attempts']} attempts "
          f"in {time.perf_counter() - started:.0f} s")
    from django.test import Client

    from submissions.models import Attempt, SubmissionResult

    client = Client()
    per_board = args.submissions // len(FULL_BOARDS)
    attempt_id = replayed_attempt_id()
    steps = Attempt.objects.values_list("steps", flat=True).get(id=attempt_id)
    pages = [
        ("home (overview + every board)", "/"),
        (f"Sokoban global full board ({per_board} entries)", "/boards/sokoban/global/full/"),
        (f"WebUI global full board ({per_board} entries)", "/boards/webui/global/full/"),
        ("Sokoban board API (JSON)", "/api/v1/boards/sokoban/global/full/"),
        ("Sokoban board CSV export", "/boards/sokoban/global/full/export.csv"),
        ("Football analysis page", "/boards/football/online/full/analysis/"),
        ("Sokoban analysis page", "/boards/sokoban/global/full/analysis/"),
        (f"replay page (Sokoban Online, {steps} steps)", f"/attempts/{attempt_id}/replay/"),
    ]
    print(f"{'page':48s} {'p50':>8s} {'p95':>8s} {'queries':>8s}")
    measured = {}
    for label, url in pages:
        p50, p95, queries = measure(client, url, args.requests)
        measured[url] = p95
        print(f"{label:48s} {p50 * 1000:7.0f}ms {p95 * 1000:7.0f}ms {queries:8d}")
    # The same board summarised from every attempt row, as it would be without stored results.
    board_url = "/boards/sokoban/global/full/"
    SubmissionResult.objects.all().delete()
    p50, p95, queries = measure(client, board_url, args.requests)
    print(f"{'Sokoban full board from attempt rows':48s} {p50 * 1000:7.0f}ms {p95 * 1000:7.0f}ms {queries:8d}")
    print(f"board p95, attempt rows / stored results: {p95 / measured[board_url]:.1f}x")


if __name__ == "__main__":
    main()
