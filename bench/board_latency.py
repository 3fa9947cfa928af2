"""Board, analysis and replay latency and page weight on a large seeded database, measured in one run.

    .venv/bin/python bench/board_latency.py [--submissions 1000] [--attempts 1449] [--requests 20] [--reuse]

Seeds a PostgreSQL database of its own (``magebench_bench`` on the local server, or BENCH_DATABASE_URL)
with official-sized scenario sets (Sokoban 182, Football 108, WebUI 193; mini 20 each) and
``--submissions`` finished submissions spread over the full boards, each with ``--attempts`` scored
attempts (scenarios × repeats, as 483 scenarios × 3 repeats gives 1,449); each submission's result is
stored as the worker stores it when a submission finishes, and with it what its board stores of it
(``leaderboard.stored``: its paired test against the leader, its analysis aggregate). ``--reuse``
measures the database an earlier run seeded instead; whatever a database seeded by an older version
lacks of the stored aggregates is brought up to date first (timed, as a deployment's backfill).

Then prints, per page, the p50 and p95 wall time of requests through Django's test client, cold
(``--cold-requests``, each the first after every board changed as a finishing submission changes its
board, so built from the database: the writer's on-commit update of what is stored of the boards runs
first, as it does before a visitor's request can see the change; and once the process itself has served
each page once: its imports and compiled templates are not a change's cost) and warm
(``--requests``, served from the board cache), each beside its goal (cold p95 ≤ 300 ms, warm p95 ≤
150 ms), the SQL queries of one warm request, the page's size beside its goal (HTML ≤ 250 KiB; JSON
and CSV answers are listed with no goal) and, for a page that draws a chart, the plotly.js bundle it
loads (raw and gzip-compressed, as served). The pages: the home page and its every-model overview,
every full board (its first and second page), its API and CSV export, its analysis page (first page)
and the analysis charts' data, its comparison page, a real Sokoban replay and a Football replay of a
long attack. Then what a submission finishing costs its board (its result rebuilt, and the board's
stored aggregates brought up to date, as the worker does), and, after a change (``--after-changes``
per board): one full board's generation moves on, the warm (``leaderboard.warming.warm_boards``, what
the Celery task runs) computes its data in this process, and the first request of each of that board's
pages and of the home page is measured, as the first visitor after a change sees it where warming
works (a shared cache). Then the home pages' first request after a change of everything at once (a
model's metadata, an import), which no stored ranking survives, and a board summarised from attempt
rows. ``--only`` measures the pages whose label contains a text (e.g. ``home``), cold and warm, and
nothing else. Only measured numbers are printed; nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
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


def setup_django(*, reuse: bool) -> None:
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL",
                                                "postgres://postgres@127.0.0.1:5432/magebench_bench")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    # Trajectories are written under the data directory: a reused database needs the same one.
    os.environ.setdefault("MAGEBENCH_DATA_DIR", str(Path(tempfile.gettempdir()) / "magebench-bench-data"))
    os.environ["MAGEBENCH_DEFAULT_SUITE"] = SUITE
    # Hundreds of API requests a minute from one client: measured, not throttled.
    os.environ["MAGEBENCH_THROTTLE_ANON"] = "1000000/minute"
    if not reuse:
        recreate_database(os.environ["DATABASE_URL"])
        shutil.rmtree(Path(os.environ["MAGEBENCH_DATA_DIR"]) / "media", ignore_errors=True)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def seed(submissions: int, attempts_per_submission: int) -> dict[str, int]:
    from accounts.models import Team
    from catalogue.models import Scenario
    from catalogue.services import environment_ensure
    from evaluators.base import get_plugin
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
            status=Submission.Status.COMPLETED, is_public=True,
            # The boards show the entries of the current prompt set: the platform's, on this suite.
            settings={"repeats": 3, "prompt_version": get_plugin(env).prompts(flow).version})
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


def football_replay_attempt_id(engine_steps: int = 400) -> int:
    """A Football attempt whose replay holds ``engine_steps`` engine steps, one decision each (the
    longest replays the site shows): its trajectory index and engine log, written as the worker would."""
    from django.conf import settings

    from submissions.models import Attempt, Submission

    submission = Submission.objects.filter(environment_id="football", suite=SUITE).order_by("id").first()
    assert submission is not None
    attempt = submission.attempts.order_by("id").first()
    assert attempt is not None
    relative = f"trajectories/{submission.id}/long-football"
    directory = Path(settings.MEDIA_ROOT) / relative
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2)
    terms = ["move", "opponents", "score", "stolen", "pass", "shot"]

    def observation(t: int) -> dict[str, Any]:
        team = [[round(rng.uniform(-1, 1), 4), round(rng.uniform(-0.42, 0.42), 4)] for _ in range(11)]
        return {"ball": [round(rng.uniform(-1, 1), 4), round(rng.uniform(-0.42, 0.42), 4), 0.11],
                "ball_direction": [0.0, 0.0, 0.0], "ball_owned_team": 0, "ball_owned_player": 9, "active": 9,
                "left_team": team, "right_team": [[-x, y] for x, y in team],
                "left_team_direction": [[0.0, 0.0]] * 11, "right_team_direction": [[0.0, 0.0]] * 11,
                "score": [0, 0], "game_mode": 0, "steps_left": 400 - t}

    log_steps, calls, steps = [], [], []
    for t in range(1, engine_steps + 1):
        reward = dict.fromkeys(terms, 0.0) | {"move": 0.001}
        log_steps.append({"t": t, "decision": t, "action": "right", "auto": False, "mode": "single", "terms": reward,
                          "pass_clearance": None, "shot_clearance": None, "reward": 0.001, "cumulative": 0.001 * t,
                          "observation": observation(t)})
        calls.append({"index": t - 1, "decision": t, "retry": 0, "latency": 0.8, "parsed": ["right"],
                      "parse_error": None, "usage": {"prompt": 1480, "completion": 42},
                      "messages": [{"role": "user", "content": [
                          {"type": "text", "text": "Current game scene. Choose one action. " * 8},
                          {"type": "image", "frame": f"frame_{t - 1:04d}.png"}]}],
                      "reply": "# analyze\nThe defender is ahead; keep running.\n# action\nright"})
        steps.append({"index": t, "call": t - 1, "action": "right", "reward": 0.001, "done": t == engine_steps,
                      "frame": f"frame_{t:04d}.png", "extra_frames": [],
                      "info": {"engine_steps": 1, "mode": "single", "cumulative": 0.001 * t, "terms": reward}})
    (directory / "football.json").write_text(json.dumps({
        "kind": "football", "seed": 11, "initial": observation(0), "term_names": terms, "steps": log_steps,
        "segments": [{"decision": t, "action": "right", "mode": "single", "first_step": t, "last_step": t}
                     for t in range(1, engine_steps + 1)]}))
    (directory / "trajectory.json").write_text(json.dumps({
        "env": "football", "scenario": "bench", "flow": "online", "initial_frame": "frame_0000.png",
        "artifacts": {"kind": "football", "file": "football.json", "engine_steps": engine_steps,
                      "segments": engine_steps},
        "status": "scored", "score": 0.4, "outcome": "running",
        "frames": [f"frame_{i:04d}.png" for i in range(engine_steps + 1)], "calls": calls, "steps": steps}))
    Attempt.objects.filter(id=attempt.id).update(trajectory_path=relative, steps=engine_steps,
                                                 model_calls=engine_steps)
    return attempt.id


@dataclass
class Timing:
    p50: float
    p95: float
    size: int
    #: The answer's content type and body (of the last request).
    content_type: str = ""
    body: bytes = b""


def timed(client, url: str, requests: int, before: Callable[[], None] | None = None) -> Timing:
    times = []
    response = None
    for _ in range(requests):
        if before is not None:
            before()
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
    assert response is not None
    times.sort()
    return Timing(statistics.median(times), times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))],
                  len(response.content), response.get("Content-Type", ""), response.content)


def queries_of(client, url: str) -> int:
    from django.db import connection

    executed = 0

    def count(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        nonlocal executed
        executed += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return executed


#: Goals: a page built from the database (cold), one from the board cache (warm), and an HTML page's size.
COLD_GOAL = 0.300
GOAL = 0.150
HTML_GOAL_KIB = 250


def mark(timing: Timing, goal: float = GOAL) -> str:
    return "pass" if timing.p95 <= goal else "MISS"


_PLOTLY = re.compile(r'(?:src|data-plotly)="(/static/vendor/plotly[-a-z]*\.min(?:\.[0-9a-f]{12})?\.js)"')


def plotly_bundle(body: bytes) -> str:
    """The plotly.js bundle a page loads (a script tag, or the one its script loads once a chart is on
    screen), with its size as served: raw and gzip-compressed; "" for a page without a chart."""
    import gzip

    from django.contrib.staticfiles import finders

    match = _PLOTLY.search(body.decode("utf-8", "replace"))
    if match is None:
        return ""
    name = match.group(1).removeprefix("/static/")
    found = finders.find(name)
    if not found:
        return name.rsplit("/", 1)[-1]
    raw = Path(str(found)).read_bytes()
    return (f"{name.rsplit('/', 1)[-1]} {len(raw) / 1024:.0f} KiB, "
            f"{len(gzip.compress(raw, compresslevel=9)) / 1024:.0f} KiB gz")


def weight(timing: Timing) -> str:
    """The answer's size beside its goal: HTML ≤ HTML_GOAL_KIB; other answers have none."""
    kib = timing.size / 1024
    if timing.content_type.startswith("text/html"):
        return f"{kib:7.0f} {'pass' if kib <= HTML_GOAL_KIB else 'MISS':>5s}"
    return f"{kib:7.0f} {'-':>5s}"


def after_a_change(client, pages: list[tuple[str, str]], changes: int) -> None:
    """The first request of each page after its board changed and the warm ran (in this process)."""
    from leaderboard.changes import boards_changed
    from leaderboard.warming import warm_boards

    warm_boards(everything=True)
    times: dict[str, list[float]] = {url: [] for _, url in pages}
    warm_times = []
    for env, flow in FULL_BOARDS:
        board = f"/boards/{env}/{flow}/full/"
        urls = [url for _, url in pages if url == "/" or url.startswith((board, f"/api/v1{board}"))]
        for _ in range(changes):
            boards_changed((env, flow, "full"))
            started = time.perf_counter()
            warmed = warm_boards()
            warm_times.append(time.perf_counter() - started)
            assert warmed.boards == [(env, flow, "full")] and warmed.home and not warmed.failed, warmed
            for url in urls:
                started = time.perf_counter()
                response = client.get(url)
                times[url].append(time.perf_counter() - started)
                assert response.status_code == 200, (url, response.status_code)
    warm_times.sort()
    print(f"after a change, warmed in-process first (one warm: board pages + home, p50 "
          f"{statistics.median(warm_times):.1f} s, max {warm_times[-1]:.1f} s); first request of each page:")
    for label, url in pages:
        if not times[url]:
            continue
        ordered = sorted(times[url])
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        timing = Timing(statistics.median(ordered), p95, 0)
        print(f"  {label:42s} {timing.p50 * 1000:7.0f}ms {timing.p95 * 1000:5.0f}ms {mark(timing):>5s}  "
              f"({len(ordered)} changes)", flush=True)


def finders_size(name: str) -> str:
    import gzip

    from django.contrib.staticfiles import finders

    found = finders.find(name)
    if not found:
        return ""
    raw = Path(str(found)).read_bytes()
    return f"{len(raw) / 1024:.0f} KiB, {len(gzip.compress(raw, compresslevel=9)) / 1024:.0f} KiB gz"


def finishing(samples: int) -> None:
    """What a submission finishing costs its board: its result rebuilt from its 1,449 attempts and the
    board's stored aggregates brought up to date (its own analysis aggregate and paired test against
    the leader; every entry's test when it becomes the leader), as the worker does once it commits."""
    from leaderboard.changes import boards_store
    from leaderboard.models import EntryAnalysis, StoredPairedTest
    from submissions.models import Submission
    from submissions.services import submission_result_rebuild

    rebuilt, stored = [], []
    for env, flow in FULL_BOARDS:
        ids = list(Submission.objects.filter(suite=SUITE, environment_id=env, flow=flow)
                   .order_by("-id").values_list("id", flat=True)[:samples])
        for submission_id in ids:
            # As if it had just finished: nothing of it stored yet but its attempts.
            EntryAnalysis.objects.filter(result_id=submission_id).delete()
            StoredPairedTest.objects.filter(other_id=submission_id).delete()
            started = time.perf_counter()
            submission_result_rebuild(submission_id=submission_id)  # its board's update runs on commit, here
            rebuilt.append(time.perf_counter() - started)
            started = time.perf_counter()
            boards_store([(env, flow, "full")])  # a second time: nothing left to compute
            stored.append(time.perf_counter() - started)
    rebuilt.sort()
    stored.sort()
    print(f"a submission finishing ({len(rebuilt)}: its result from its attempts, then its board's stored "
          f"aggregates): p50 {statistics.median(rebuilt) * 1000:.0f} ms, max {rebuilt[-1] * 1000:.0f} ms; "
          f"checking a board whose aggregates are current: p50 {statistics.median(stored) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--attempts", type=int, default=1449)
    parser.add_argument("--requests", type=int, default=20, help="warm requests per page")
    parser.add_argument("--cold-requests", type=int, default=5, help="cold requests per page")
    parser.add_argument("--reuse", action="store_true", help="measure the database an earlier run seeded")
    parser.add_argument("--after-changes", type=int, default=3,
                        help="changes per full board, each warmed, then each page's first request measured")
    parser.add_argument("--finish-samples", type=int, default=3,
                        help="submissions per full board finished again, each timed with its board's stored update")
    parser.add_argument("--only", default="",
                        help="measure only the pages whose label contains this text (e.g. home)")
    args = parser.parse_args()
    setup_django(reuse=args.reuse)
    from django.conf import settings

    started = time.perf_counter()
    if args.reuse:
        from leaderboard.changes import boards_store
        from submissions.models import Attempt, Submission

        counts = {"submissions": Submission.objects.filter(suite=SUITE).count(),
                  "attempts": Attempt.objects.filter(submission__suite=SUITE).count()}
        print(f"reusing {counts['submissions']} submissions, {counts['attempts']} attempts")
        started = time.perf_counter()
        boards_store([(env, flow, "full") for env, flow in FULL_BOARDS])
        print(f"stored aggregates brought up to date in {time.perf_counter() - started:.1f} s "
              "(nothing to do once a run stored them)")
    else:
        counts = seed(args.submissions, args.attempts)
        print(f"seeded {counts['submissions']} submissions, {counts['attempts']} attempts "
              f"in {time.perf_counter() - started:.0f} s")
    from django.db import transaction
    from django.test import Client

    from leaderboard.changes import boards_changed
    from submissions.models import Attempt, SubmissionResult

    client = Client()
    per_board = counts["submissions"] // len(FULL_BOARDS)
    from submissions.selectors import trajectory_dir

    replayed = (Attempt.objects.filter(submission__suite="fixture", submission__environment_id="sokoban")
                .exclude(trajectory_path="").order_by("id").first())
    sokoban_attempt = (replayed.id if replayed is not None and trajectory_dir(replayed) is not None
                       else replayed_attempt_id())
    steps = Attempt.objects.values_list("steps", flat=True).get(id=sokoban_attempt)
    football_attempt = football_replay_attempt_id()
    titles = {"sokoban": "Sokoban", "webui": "WebUI", "football": "Football"}
    pages = [("home (overview + each board's first rows)", "/"),
             ("home, every model (overview page 2)", "/?overview=full&models=all&page=2")]
    for env, flow in FULL_BOARDS:
        board = f"/boards/{env}/{flow}/full/"
        name = f"{titles[env]} {flow}"
        pages += [(f"{name} full board ({per_board} entries, page 1)", board),
                  (f"{name} full board (page 2)", f"{board}?page=2"),
                  (f"{name} board API (JSON)", f"/api/v1/boards/{env}/{flow}/full/"),
                  (f"{name} board CSV export", f"{board}export.csv"),
                  (f"{name} analysis page", f"{board}analysis/"),
                  (f"{name} analysis charts' data (JSON)", f"{board}analysis/?charts=1"),
                  (f"{name} comparison page", f"{board}compare/")]
    pages += [(f"replay page (Sokoban Online, {steps} steps)", f"/attempts/{sokoban_attempt}/replay/"),
              ("replay page (Football, 400 engine steps)", f"/attempts/{football_attempt}/replay/")]

    def load() -> str:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())

    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {load()}; "
          f"cache {settings.CACHES['default']['BACKEND'].rsplit('.', 1)[1]}; "
          f"{args.cold_requests} cold and {args.requests} warm requests per page; goals: cold p95 ≤ "
          f"{COLD_GOAL * 1000:.0f} ms, warm p95 ≤ {GOAL * 1000:.0f} ms, HTML ≤ {HTML_GOAL_KIB} KiB")
    print(f"{'page':46s} {'cold p50':>9s} {'p95':>7s} {'goal':>5s}   {'warm p50':>9s} {'p95':>7s} {'goal':>5s} "
          f"{'queries':>8s} {'KiB':>7s} {'goal':>5s}  plotly.js loaded")
    # The process's own start (imports, templates compiled, plug-ins loaded) is paid once, by one
    # request to each page before anything is measured: what follows is what a change costs a page.
    for _, url in pages:
        assert client.get(url).status_code == 200, url
    if args.only:
        pages = [(label, url) for label, url in pages if args.only in label]
    from leaderboard.warming import every_board

    def every_board_changed() -> None:
        # As a submission finishing on each board: outside a transaction its on-commit work (the
        # counters moved on, the boards' stored aggregates and rankings brought up to date) runs here,
        # before the request, as the worker's does before a visitor can see the change.
        boards_changed(*every_board())

    measured = {}
    for label, url in pages:
        # Cold: each request is the first after the boards changed, as after a submission finishes.
        cold = timed(client, url, args.cold_requests, before=every_board_changed)
        warm = timed(client, url, args.requests)
        measured[url] = warm
        print(f"{label:46s} {cold.p50 * 1000:7.0f}ms {cold.p95 * 1000:5.0f}ms {mark(cold, COLD_GOAL):>5s}   "
              f"{warm.p50 * 1000:7.0f}ms {warm.p95 * 1000:5.0f}ms {mark(warm):>5s} "
              f"{queries_of(client, url):8d} {weight(warm)}  {plotly_bundle(warm.body)}", flush=True)
    full_plotly = finders_size("vendor/plotly.min.js")
    if full_plotly:
        print(f"(the full bundle, vendor/plotly.min.js, which every chart page loaded before: {full_plotly})")
    if not args.only:
        finishing(args.finish_samples)
        after_a_change(client, pages, args.after_changes)
    for label, url in pages:
        if url == "/" or url.startswith("/?"):
            # A change of everything (no boards named): every stored ranking is stale, so the page
            # ranks the boards again and stores them.
            cold = timed(client, url, args.cold_requests, before=boards_changed)
            print(f"{label + ', after a change of everything':62s} {cold.p50 * 1000:7.0f}ms "
                  f"{cold.p95 * 1000:5.0f}ms {mark(cold, COLD_GOAL):>5s}", flush=True)
    if not args.only:
        # The same board summarised from every attempt row, as it would be without stored results.
        board_url = "/boards/sokoban/global/full/"
        with transaction.atomic():  # rolled back, so that --reuse finds the stored results again
            SubmissionResult.objects.all().delete()
            cold = timed(client, board_url, args.cold_requests, before=boards_changed)
            transaction.set_rollback(True)
        print(f"{'Sokoban full board from attempt rows (cold)':44s} {cold.p50 * 1000:7.0f}ms "
              f"{cold.p95 * 1000:5.0f}ms {mark(cold, COLD_GOAL):>5s}")
    print(f"load average at the end {load()}")


if __name__ == "__main__":
    main()
