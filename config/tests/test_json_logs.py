"""Log lines as JSON objects carrying the ids of the work they are about."""
from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from config.celery import _task_ended, _task_started
from config.logs import JsonFormatter, log_context

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield stream
    finally:
        root.removeHandler(handler)


def _lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_logged_inside_an_attempts_context_carries_its_ids(json_lines):
    log = logging.getLogger("evaluators.somewhere")
    log.warning("before")
    with log_context(submission_id=12, attempt_id=345):
        log.warning("model said %s", "hi")
        with log_context(task_id="t-1"):
            log.warning("inside the task")
    log.warning("after")
    before, during, task, after = _lines(json_lines)
    assert during["message"] == "model said hi" and during["level"] == "WARNING"
    assert during["logger"] == "evaluators.somewhere"
    assert (during["submission_id"], during["attempt_id"]) == (12, 345) and "task_id" not in during
    assert (task["submission_id"], task["attempt_id"], task["task_id"]) == (12, 345, "t-1")
    assert not {"submission_id", "attempt_id", "task_id"} & (set(before) | set(after))
    assert during["time"].endswith("+00:00") and "T" in during["time"]


def test_an_exceptions_text_goes_into_its_line(json_lines):
    try:
        raise RuntimeError("the endpoint went away")
    except RuntimeError:
        logging.getLogger("x").exception("attempt failed")
    (line,) = _lines(json_lines)
    assert line["message"] == "attempt failed"
    assert "Traceback" in line["exception"] and "RuntimeError: the endpoint went away" in line["exception"]


def test_a_celery_task_names_its_id_in_every_line_it_logs(json_lines):
    _task_started(task_id="abc-123")
    logging.getLogger("submissions.engine").warning("working")
    _task_ended(task_id="abc-123")
    logging.getLogger("submissions.engine").warning("idle")
    working, idle = _lines(json_lines)
    assert working["task_id"] == "abc-123" and "task_id" not in idle


@pytest.mark.django_db
def test_the_engine_names_the_attempt_and_its_submission_while_it_plays_one(json_lines, monkeypatch, fixture_scenarios):
    from accounts.models import Team
    from catalogue.models import Scenario
    from submissions import engine
    from submissions.models import Attempt, ModelEntry, Submission

    team = Team.objects.create(name="Lab", slug="lab")
    submission = Submission.objects.create(team=team, model=ModelEntry.objects.create(team=team, name="m"),
                                           environment_id="sokoban", flow="global", subset="mini", suite="fixture")
    attempt = Attempt.objects.create(submission=submission, scenario=Scenario.objects.filter(suite="fixture").first(),
                                     repeat=0)
    monkeypatch.setattr(engine, "_attempt_play_and_record",
                        lambda attempt: logging.getLogger("evaluators.runner").warning("step 1"))
    engine._attempt_play(attempt)
    (line,) = _lines(json_lines)
    assert (line["attempt_id"], line["submission_id"]) == (attempt.id, submission.id)


@pytest.mark.parametrize(("log_format", "is_json"), [("json", True), ("plain", False)])
def test_the_sites_log_lines_follow_the_log_format_setting(log_format, is_json):
    env = {**os.environ, "MAGEBENCH_LOG_FORMAT": log_format, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    code = "import django, logging; django.setup(); logging.getLogger('submissions.engine').warning('hello')"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60, check=True)
    (line,) = [line for line in result.stderr.splitlines() if "hello" in line]
    if is_json:
        assert json.loads(line) | {"time": None} == {"time": None, "level": "WARNING", "logger": "submissions.engine",
                                                   "message": "hello"}
    else:
        assert line.endswith(" WARNING submissions.engine hello")


def test_production_logs_json_and_development_plain_unless_told(monkeypatch):
    code = "from django.conf import settings; print(settings.MAGEBENCH_LOG_FORMAT)"
    base = {key: value for key, value in os.environ.items() if key != "MAGEBENCH_LOG_FORMAT"}
    development = {**base, "MAGEBENCH_ENV": "development", "DJANGO_SETTINGS_MODULE": "config.settings.base"}
    production = {**development, "MAGEBENCH_ENV": "production", "DJANGO_SECRET_KEY": "x" * 50,
                  "FIELD_ENCRYPTION_KEY": "YnVpbGQtb25seS1idWlsZC1vbmx5LWJ1aWxkLW9ubHk=",
                  "DJANGO_ALLOWED_HOSTS": "localhost", "MAGEBENCH_NUM_PROXIES": "1"}
    for env, expected in ((development, "plain"), (production, "json")):
        result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=60)
        assert result.stdout.strip() == expected, result.stderr[-2000:]
