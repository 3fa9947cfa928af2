"""What a failing provider costs a team: requests and seconds until the submission pauses.

    .venv/bin/python bench/provider_failures.py [--after 20] [--out bench/reports/provider_failures.txt]

Each case submits the fixture Sokoban mini set (10 levels, one repeat) against a local endpoint that
answers every request as one provider documents a failure (status, headers, JSON body; the doubles
of ``evaluators/tests/provider_doubles.py``), to a worker started as production starts it
(``manage.py run_worker -Q light``) with the production settings: three retries a request from 2 s,
a try again after 30 s, MAGEBENCH_BREAKER_ATTEMPTS 3. It prints the requests the endpoint received
until the submission paused, the seconds from the submission to the pause, the requests that came
in the ``--after`` seconds after it (there should be none beyond the attempts already in flight), and
the reason the team reads. The goals: a spent quota at most 20 requests and 120 s; an endpoint that
always answers 503 at most 50 requests and 300 s. Only measured numbers are printed.

Uses its own database (``magebench_bench_failures``, dropped and created, or
BENCH_FAILURES_DATABASE_URL) and Redis db 11 (flushed before and after).
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
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

from bench import scale  # noqa: E402
from bench._latency.trees import worker_command, worker_running  # noqa: E402
from evaluators.tests import provider_doubles as doubles  # noqa: E402
from evaluators.tests.scripted_server import ScriptedServer  # noqa: E402

DEFAULT_REPORT = ROOT / "bench" / "reports" / "provider_failures.txt"


@dataclass(frozen=True)
class Case:
    name: str
    answers: Callable[[dict[str, Any]], Any]
    flow: str
    #: The goal: (requests, seconds) until the pause.
    goal: tuple[int, float]


CASES = [
    Case("OpenAI 429 insufficient_quota", doubles.always(429, doubles.OPENAI_QUOTA, doubles.OPENAI_HEADERS),
         "global", (20, 120.0)),
    Case("OpenAI 429 insufficient_quota", doubles.always(429, doubles.OPENAI_QUOTA, doubles.OPENAI_HEADERS),
         "online", (20, 120.0)),
    Case("Anthropic 429 spend limit", doubles.always(429, doubles.ANTHROPIC_SPEND_LIMIT,
                                                     {**doubles.ANTHROPIC_HEADERS, "retry-after": "2400"}),
         "online", (20, 120.0)),
    Case("Gemini 429 daily quota (list body)",
         doubles.always(429, doubles.gemini_quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "43s")),
         "online", (20, 120.0)),
    Case("OpenAI 400 max_tokens refused", doubles.always(400, doubles.OPENAI_MAX_TOKENS, doubles.OPENAI_HEADERS),
         "online", (20, 120.0)),
    Case("200 HTML sign-in page", doubles.always(200, doubles.SIGN_IN_PAGE, {"Content-Type": "text/html"}),
         "online", (20, 120.0)),
    Case("nginx 503, always", doubles.always(503, doubles.NGINX_503, {"Content-Type": "text/html"}),
         "global", (50, 300.0)),
]


@dataclass
class Outcome:
    case: Case
    paused: bool
    requests_to_pause: int
    seconds_to_pause: float | None
    requests_after: int
    status: str
    reason: str


def run_case(case: Case, logs: Path, after: float, timeout: float) -> Outcome:
    from django.db import transaction

    from accounts.services import team_get_or_create
    from submissions.models import Submission
    from submissions.services import model_entry_upsert, submission_create_endpoint

    hostname = f"failures-{os.getpid()}-{int(time.time())}@{socket.gethostname()}"
    scale.purge_broker()
    with ScriptedServer(case.answers) as server, \
            worker_running(case.name.replace(" ", "-"), worker_command("a", "light", hostname), logs):
        model = model_entry_upsert(team=team_get_or_create(name="Paying team"), name=f"{case.name} {case.flow}")
        started = time.monotonic()
        with transaction.atomic():
            submission = submission_create_endpoint(
                model=model, env="sokoban", flow=case.flow, subset="mini", suite=scale.SUITE,
                endpoint_url=server.url, endpoint_model="m", settings={"repeats": 1, "resolution": 256})
        deadline = started + timeout
        while time.monotonic() < deadline:
            status = Submission.objects.values_list("status", flat=True).get(id=submission.id)
            if status not in (Submission.Status.QUEUED, Submission.Status.RUNNING):
                break
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        at_pause = server.hits
        time.sleep(after)
        submission.refresh_from_db()
        return Outcome(case=case, paused=submission.status == Submission.Status.PAUSED, requests_to_pause=at_pause,
                       seconds_to_pause=elapsed if submission.status == Submission.Status.PAUSED else None,
                       requests_after=server.hits - at_pause, status=submission.status,
                       reason=submission.status_reason)


def report(outcomes: list[Outcome], command: str) -> str:
    lines = ["Provider failures: what a failing endpoint costs until the submission pauses "
             "(bench/provider_failures.py)",
             f"run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {command}",
             "Sokoban fixture mini set (10 levels × 1 repeat), one `manage.py run_worker -Q light`, production retry "
             "settings", "",
             f"{'case':<38} {'flow':<7} {'to pause':>8} {'after':>6} {'total':>6} {'goal':>5} {'seconds':>8} "
             f"{'goal':>5}  status"]
    for o in outcomes:
        seconds = f"{o.seconds_to_pause:.1f}" if o.seconds_to_pause is not None else "-"
        total = o.requests_to_pause + o.requests_after
        lines.append(f"{o.case.name:<38} {o.case.flow:<7} {o.requests_to_pause:>8} {o.requests_after:>6} {total:>6} "
                     f"{o.case.goal[0]:>5} {seconds:>8} {o.case.goal[1]:>5.0f}  {o.status}")
    lines += ["", "requests: until the pause; 'after', in the seconds after it (attempts already in flight finishing "
              "their try); the request goal is for the total.", "", "What the team reads:"]
    lines += [f"- {o.case.name} ({o.case.flow}): {o.reason}" for o in outcomes]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--after", type=float, default=20.0, help="seconds to count requests after the pause")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each pause")
    parser.add_argument("--out", type=Path, default=DEFAULT_REPORT)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="magebench-failures-"))
    scale.DATABASE_URL = os.environ.get("BENCH_FAILURES_DATABASE_URL",
                                        "postgres://postgres@127.0.0.1:5432/magebench_bench_failures")
    scale.BROKER_URL = "redis://127.0.0.1:6379/11"
    try:
        scale.log(f"setting up {scale.DATABASE_URL} (data in {data_dir})")
        scale.setup_django(data_dir)
        outcomes = []
        for case in CASES:
            scale.log(f"{case.name} ({case.flow})")
            outcomes.append(run_case(case, data_dir / "logs", args.after, args.timeout))
        text = report(outcomes, ".venv/bin/python " + " ".join(["bench/provider_failures.py", *sys.argv[1:]]))
        print(text, end="")
        args.out.write_text(text, encoding="utf-8")
    finally:
        scale.purge_broker()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
