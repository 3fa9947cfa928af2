"""The paper-sized mini run: as many attempts as the paper's mini protocol, on real workers, timed.

    .venv/bin/python bench/paper_mini.py [--workers 2] [--out bench/reports/paper_mini.txt]

The paper's mini protocol plays 20 scenarios per environment: Sokoban 20 levels × 3 repeats in each
of the two flows, WebUI 20 pages × 3 repeats (Global), Football 20 scenarios × 10 repeats (Online):
120 + 60 + 200 = 380 attempts. The fixture sets are smaller (WebUI 8 pages, Football 12 scenarios),
so this bench writes a copy of the fixture resources whose mini lists hold 20 scenarios each: the
first 20 Sokoban levels, and the WebUI pages and Football scenarios repeated under new names
("faq-accordion~2", "R3_R_1~2.py") until there are 20. It imports them as suite "paper", serves the
baseline endpoints (the oracle with the pages for Sokoban and WebUI, the seeded random agent for
Football, which the oracle cannot play), starts ``--workers`` Celery workers (concurrency 1, every
queue) on a database and Redis db of its own, submits the four boards at once and waits until each
submission has finished.

Prints the wall time per environment (submission to the environment's last finished attempt) and
in total, against the goal of 30 minutes on 2 cores; the worker time each environment used; and,
for Football, the renders per episode (frames the model was shown) and the seconds per render of
Mesa's software renderer, measured in this process before the run: their product times the
episodes over the workers is the bound software rendering puts on Football's share. Beside it, the
work the games themselves need: Football's physics (engine steps × seconds per step, measured here,
over the cores) and the other boards' attempts (their worker time over the workers); the wall time
over that work floor is what the platform adds (encoding frames, requests, the database, scheduling)
and the report gives the workers' time outside attempts. Last, the renders as the run pays for them:
before the run, as many processes as workers render at once (the machine's seconds per frame then),
and each episode's first frame costs one unseen draw more (gfootball settles its camera, as
officially); the wall time over that is the share no change to the platform's own code can remove.
Only measured numbers are printed; nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import scale  # noqa: E402

SCENARIOS = 20
#: Repeats per board in the paper's mini protocol.
PROTOCOL: list[tuple[str, str, int]] = [("sokoban", "global", 3), ("sokoban", "online", 3), ("webui", "global", 3),
                                        ("football", "online", 10)]
GOAL_MINUTES = 30.0
#: With instant agents the run is CPU-bound: it should take little more than its rendering floor.
FLOOR_RATIO_GOAL = 1.15
SUITE = "paper"
STARTING_LOAD = os.getloadavg()


def paper_resources(target: Path) -> Path:
    """A copy of the fixture resources whose mini lists hold SCENARIOS entries each (see the module doc)."""
    resources = target / "resources"
    shutil.copytree(scale.RESOURCES, resources)
    for title in ("Sokoban", "WebUI", "Football"):
        entries: list[str] = json.loads((resources / f"{title}_all.json").read_text(encoding="utf-8"))
        chosen = entries[:SCENARIOS]
        copy = 2
        while len(chosen) < SCENARIOS:
            for entry in entries:
                if len(chosen) == SCENARIOS:
                    break
                source = resources.parent / entry
                name = f"{source.stem}~{copy}{source.suffix}"
                duplicate = source.with_name(name)
                if source.is_dir():
                    shutil.copytree(source, duplicate)
                else:
                    shutil.copy2(source, duplicate)
                chosen.append(str(Path(entry).with_name(name)))
            copy += 1
        # The mini list is what the boards' mini subset reads; the full list must contain it.
        (resources / f"{title}_mini.json").write_text(json.dumps(chosen, ensure_ascii=False), encoding="utf-8")
        full = entries + [e for e in chosen if e not in entries]
        (resources / f"{title}_all.json").write_text(json.dumps(full, ensure_ascii=False), encoding="utf-8")
    return resources


def seconds_per_render(samples: int = 10) -> tuple[float, float, float]:
    """Mesa's software renderer: the renderer's start-up, then the median seconds of one 1280×720 frame;
    and the median seconds of one engine step between frames (gfootball's physics, rendering off)."""
    from evaluators.football.engine import Engine
    from evaluators.football.resources import discover_football

    scenario = next(s for s in discover_football(scale.RESOURCES) if s.in_mini).data["scenario"]
    engine = Engine(scenario, seed=1)
    try:
        started = time.perf_counter()
        engine.frame()
        start_up = time.perf_counter() - started
        times, steps = [], []
        for _ in range(samples):
            for _ in range(STEPS_PER_FRAME):
                started = time.perf_counter()
                engine.step(0)
                steps.append(time.perf_counter() - started)
            started = time.perf_counter()
            engine.frame()
            times.append(time.perf_counter() - started)
    finally:
        engine.close()
    return start_up, statistics.median(times), statistics.median(steps)


#: Engine steps timed between two timed frames (an auto-rendered decision plays several).
STEPS_PER_FRAME = 5
#: Episodes, later frames per episode and engine steps between two frames each rendering process plays
#: in ``rendering_together`` (a random agent's decision is about three engine steps in the run).
TOGETHER_EPISODES = 4
TOGETHER_FRAMES = 8
TOGETHER_STEPS = 3


def _rendering_loop(scenarios: list[dict[str, Any]], ready: Any) -> tuple[list[float], list[float]]:
    """One process's episodes: the seconds of each episode's first frame and of the later ones."""
    from evaluators.football.engine import Engine

    warm = Engine(scenarios[0], seed=0)
    try:
        warm.frame()  # the renderer's start-up, paid once per process, is not what is measured here
    finally:
        warm.close()
    ready.wait()
    firsts: list[float] = []
    laters: list[float] = []
    for episode in range(TOGETHER_EPISODES):
        engine = Engine(scenarios[episode % len(scenarios)], seed=episode + 1)
        try:
            started = time.perf_counter()
            engine.frame()
            firsts.append(time.perf_counter() - started)
            done = False
            for _ in range(TOGETHER_FRAMES):
                for _ in range(TOGETHER_STEPS):
                    if not done:
                        _, done = engine.step(0)
                started = time.perf_counter()
                engine.frame()
                laters.append(time.perf_counter() - started)
        finally:
            engine.close()
    return firsts, laters


def rendering_together(processes: int) -> tuple[float, float]:
    """What rendering costs the machine when ``processes`` workers render at once, as they do in the run:
    seconds of the whole machine per frame, and the extra an episode's first frame costs (gfootball moves
    the game into its renderer and draws once without showing it so that the camera settles, as
    officially; the model never sees that draw)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from evaluators.football.resources import discover_football

    scenarios = [s.data["scenario"] for s in discover_football(scale.RESOURCES) if s.in_mini][:TOGETHER_EPISODES]
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        ready = manager.Barrier(processes)
        with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
            results = list(pool.map(_rendering_loop, [scenarios] * processes, [ready] * processes))
    firsts = [t for first, _ in results for t in first]
    laters = [t for _, later in results for t in later]
    # Every process renders all the time, so the machine's cost of one frame is its wall time over them.
    per_frame = statistics.median(laters) / processes
    return per_frame, max(0.0, statistics.median(firsts) / processes - per_frame)


#: Seconds between watchdog rounds while the run is waited for (the deployment's default beat).
WATCHDOG_EVERY = 30.0


def still_running(ids: list[int], active: Sequence[str]) -> bool:
    """Whether a submission is unfinished; a database that restarts meanwhile is waited for."""
    from django.db import InterfaceError, OperationalError, connection

    from submissions.models import Submission

    while True:
        try:
            return Submission.objects.filter(id__in=ids, status__in=active).exists()
        except (OperationalError, InterfaceError) as exc:
            scale.log(f"database unavailable ({exc}); retrying")
            connection.close()
            time.sleep(2.0)


def watchdog_round() -> None:
    from django.db import InterfaceError, OperationalError, connection
    from kombu.exceptions import OperationalError as BrokerError

    from submissions.watchdog import watchdog_run

    try:
        counts = watchdog_run()
    except (OperationalError, InterfaceError, BrokerError, OSError) as exc:
        scale.log(f"watchdog round skipped: {exc}")
        connection.close()
        return
    if any(counts.values()):
        scale.log(f"watchdog: {counts}")


def frames_of(trajectory_path: str) -> int:
    from django.conf import settings

    directory = Path(settings.MEDIA_ROOT) / trajectory_path
    return sum(1 for p in directory.glob("frame_*.png")) if trajectory_path and directory.is_dir() else 0


def run(workers: int, timeout: float, data_dir: Path, per_render: float, per_step: float,
        together: tuple[float, float]) -> list[str]:
    from django.db.models import Count

    from accounts.services import team_get_or_create
    from catalogue.models import Scenario
    from submissions.models import Attempt, Submission
    from submissions.services import model_entry_upsert, submission_create_endpoint

    counts = {env: Scenario.objects.filter(environment_id=env, suite=SUITE, **Scenario.subset_filter("mini")).count()
              for env, _, _ in PROTOCOL}
    boards = [(env, flow) for env, flow, _ in PROTOCOL]
    scale.purge_broker()
    with scale.endpoints(boards) as servers, \
            scale.workers_running([(f"paper-{i + 1}", None) for i in range(workers)], data_dir / "logs"):
        model = model_entry_upsert(team=team_get_or_create(name="Paper mini bench"), name="Baselines")
        load = os.getloadavg()
        submitted_at = time.time()
        ids = {(env, flow): submission_create_endpoint(
            model=model, env=env, flow=flow, subset="mini", suite=SUITE, endpoint_url=servers[(env, flow)].url,
            endpoint_model=scale.AGENT_FOR_ENV[env], settings={"repeats": repeats}).id
            for env, flow, repeats in PROTOCOL}
        deadline = time.monotonic() + timeout
        active = [Submission.Status.QUEUED, Submission.Status.RUNNING]
        watched = time.monotonic()
        while still_running(list(ids.values()), active):
            if time.monotonic() > deadline:
                break
            if time.monotonic() - watched > WATCHDOG_EVERY:
                # What Celery beat does on a deployment: a restarted broker or a killed worker loses nothing.
                watchdog_round()
                watched = time.monotonic()
            time.sleep(1.0)
    lines = [f"- boards submitted at once, 1-minute load average then {load[0]:.2f}; scenarios in the paper "
             f"mini set: {', '.join(f'{env} {n}' for env, n in counts.items())}",
             "", "| board | attempts | scored | repeats | worker s (sum of attempts) | mean s/attempt | mean score |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    ends: dict[str, float] = {}
    unfinished = []
    worker_seconds: dict[str, float] = {}
    for (env, flow), submission_id in ids.items():
        submission = Submission.objects.get(id=submission_id)
        attempts = list(submission.attempts.values("status", "score", "duration_seconds", "trajectory_path",
                                                   "finished_at"))
        scored = [a for a in attempts if a["status"] == Attempt.Status.SCORED]
        seconds = [a["duration_seconds"] or 0.0 for a in attempts]
        finished = [a["finished_at"].timestamp() for a in attempts if a["finished_at"] is not None]
        worker_seconds[env] = worker_seconds.get(env, 0.0) + sum(seconds)
        if submission.is_active:
            unfinished.append(f"{env} {flow}")
        if finished:
            ends[env] = max(ends.get(env, 0.0), max(finished))
        repeats = next(r for e, f, r in PROTOCOL if (e, f) == (env, flow))
        mean_score = statistics.mean(float(a["score"] or 0.0) for a in scored) if scored else float("nan")
        lines.append(f"| {env} {flow} | {len(attempts)} | {len(scored)} | {repeats} | {sum(seconds):.0f} | "
                     f"{statistics.mean(seconds) if seconds else 0:.2f} | {mean_score:.1f} |")
    lines += ["", "| environment | wall time (from submission to its last attempt) |", "|---|---:|"]
    for env in dict.fromkeys(env for env, _, _ in PROTOCOL):
        done = env in ends and not any(board.startswith(f"{env} ") for board in unfinished)
        lines.append(f"| {env} | {(ends[env] - submitted_at) / 60:.1f} min |" if done else f"| {env} | not finished |")
    total = (max(ends.values()) - submitted_at) / 60 if ends and not unfinished else None
    mark = "" if total is None else (" — met" if total <= GOAL_MINUTES else " — missed")
    if total is not None:
        lines.append(f"| **total** | **{total:.1f} min** (goal ≤ {GOAL_MINUTES:.0f} min on 2 cores{mark}) |")
    else:
        lines.append(f"| **total** | not finished within {timeout:.0f} s: {', '.join(unfinished)} |")
    football = [a for a in Attempt.objects.filter(submission_id=ids[("football", "online")],
                                                  status=Attempt.Status.SCORED)
                .values("trajectory_path", "duration_seconds", "model_calls", "details")]
    if football:
        renders = statistics.mean(frames_of(a["trajectory_path"]) for a in football)
        episodes = next(r for e, _, r in PROTOCOL if e == "football") * SCENARIOS
        # llvmpipe already spreads one render over every core: more workers do not divide this.
        bound = renders * per_render * episodes / 60
        lines += ["", f"Football: {renders:.1f} renders per episode (frames the model was shown) × {per_render:.2f} s "
                      f"per render (Mesa's software renderer on every core, 1280×720) × {episodes} episodes = "
                      f"{bound:.1f} min of the whole machine spent rendering, with any number of workers; "
                      f"{statistics.mean(a['model_calls'] for a in football):.1f} model calls and "
                      f"{statistics.mean(a['duration_seconds'] or 0 for a in football):.1f} s per episode."]
        if total is not None and bound:
            ratio = total / bound
            lines.append(f"Whole run over the rendering floor: {total:.1f} / {bound:.1f} = {ratio:.2f} (goal ≤ "
                         f"{FLOOR_RATIO_GOAL:g}: {'met' if ratio <= FLOOR_RATIO_GOAL else 'missed'}).")
            beside = BesideRenders.of(workers, episodes, per_step, football, worker_seconds)
            lines += work_floor(total, bound, workers, per_step, beside, worker_seconds)
            lines += rendering_as_run(total, per_render, together, renders, episodes, workers, beside)
    failed = (Attempt.objects.filter(submission_id__in=ids.values()).exclude(status=Attempt.Status.SCORED)
              .values("status", "error_kind").annotate(n=Count("id")))
    for row in failed:
        lines.append(f"- not scored: {row['n']} attempt(s) {row['status']} {row['error_kind']}")
    return lines


@dataclass(frozen=True)
class BesideRenders:
    """The work the games need beside Football's renders, in minutes of the whole run."""

    steps: float  # Football's engine steps per episode
    physics: float
    others: float

    @classmethod
    def of(cls, workers: int, episodes: int, per_step: float, football: Sequence[Mapping[str, Any]],
           worker_seconds: dict[str, float]) -> BesideRenders:
        steps = statistics.mean(int((a["details"] or {}).get("engine_steps", 0)) for a in football)
        # gfootball's physics runs on one core, so the machine's cores share it; the other boards' attempts
        # held a worker each for as long as they ran.
        return cls(steps=steps, physics=steps * per_step * episodes / (os.cpu_count() or 1) / 60,
                   others=sum(s for env, s in worker_seconds.items() if env != "football") / workers / 60)


def work_floor(total: float, bound: float, workers: int, per_step: float, beside: BesideRenders,
               worker_seconds: dict[str, float]) -> list[str]:
    """The rendering floor plus the work the games themselves need beside it, and where the rest went."""
    floor = bound + beside.physics + beside.others
    idle = workers * total - sum(worker_seconds.values()) / 60
    return [
        f"Beside the renders, the games need: Football's physics, {beside.steps:.1f} engine steps per episode × "
        f"{per_step * 1000:.1f} ms per step (one core) ÷ {os.cpu_count()} cores = {beside.physics:.1f} min; the "
        f"other boards' attempts, their worker time ÷ {workers} workers = {beside.others:.1f} min.",
        f"Whole run over that work floor ({bound:.1f} + {beside.physics:.1f} + {beside.others:.1f} = {floor:.1f} "
        f"min): {total / floor:.2f}. What it leaves is the platform's own work in the attempts (encoding frames, "
        f"requests, the database) and the workers' time outside attempts: {idle:.1f} worker-minutes "
        f"({idle / (workers * total):.0%} of the {workers} workers' wall time).",
    ]


def rendering_as_run(total: float, per_render: float, together: tuple[float, float], renders: float,
                     episodes: int, workers: int, beside: BesideRenders) -> list[str]:
    """The renders as the run pays for them: workers rendering at once, and each episode's unseen first draw."""
    per_frame, first_extra = together
    floor = (renders * per_frame + first_extra) * episodes / 60
    if not floor:
        return []
    work = floor + beside.physics + beside.others
    return [
        f"Rendering as the run does it ({workers} processes rendering at once, measured before the run): "
        f"{per_frame:.3f} s of the machine per frame ({per_frame / per_render:.2f} × the "
        f"single-process figure) and {first_extra:.2f} s more for each episode's first frame (gfootball moves "
        "the game into its renderer and draws once unseen so that the camera settles, as officially): "
        f"({renders:.1f} × {per_frame:.3f} + {first_extra:.2f}) × {episodes} = {floor:.1f} min. Whole run over "
        f"that: {total / floor:.2f}; with the physics and the other boards beside it ({work:.1f} min): "
        f"{total / work:.2f}.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3 * 3600.0, help="seconds the run may take")
    parser.add_argument("--out", type=Path, default=None, help="also write the report to this file")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    data_dir = Path(tempfile.mkdtemp(prefix="magebench-paper-"))
    scale.DATABASE_URL = os.environ.get("BENCH_PAPER_DATABASE_URL",
                                        "postgres://postgres@127.0.0.1:5432/magebench_bench_paper")
    scale.BROKER_URL = "redis://127.0.0.1:6379/13"
    scale.RESOURCES = paper_resources(data_dir)
    scale.SUITE = SUITE
    started = time.perf_counter()
    try:
        scale.log(f"setting up {scale.DATABASE_URL} and the paper mini set (data in {data_dir})")
        scale.setup_django(data_dir)
        start_up, per_render, per_step = seconds_per_render()
        scale.log(f"renderer start-up {start_up:.1f} s, {per_render:.2f} s per render, "
                  f"{per_step * 1000:.1f} ms per engine step")
        together = rendering_together(args.workers)
        scale.log(f"{args.workers} processes rendering at once: {together[0]:.3f} s of the machine per frame, "
                  f"{together[1]:.2f} s more per episode's first frame")
        lines = [
            "# The paper-sized mini run",
            "",
            f"- run: {dt.datetime.now().isoformat(timespec='seconds')} on `{platform.node()}`, "
            f"{os.cpu_count()} cores; load average (1/5/15 min) at start: "
            + ", ".join(f"{v:.2f}" for v in STARTING_LOAD),
            f"- {args.workers} Celery worker(s), `--concurrency=1`, every queue; database `{scale.DATABASE_URL}`",
            f"- protocol: {', '.join(f'{e} {f} {SCENARIOS} × {r}' for e, f, r in PROTOCOL)}",
        ]
        lines += run(args.workers, args.timeout, data_dir, per_render, per_step, together)
        lines += [f"Renderer start-up: {start_up:.1f} s, once per worker process. Load average (1/5/15 min) at "
                  "the end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()) + ".",
                  "", f"Total bench time (set-up included): {time.perf_counter() - started:.0f} s."]
        text = "\n".join(lines) + "\n"
        print(text, end="")
        if args.out is not None:
            args.out.write_text(text, encoding="utf-8")
    finally:
        scale.purge_broker()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
