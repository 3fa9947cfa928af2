"""A real worker in production's log format: every line JSON, a task's lines with its id, and the
heartbeat file its container's health check reads kept fresh."""
from __future__ import annotations

import json
import time

import pytest

from config.heartbeat import heartbeat_age

pytestmark = pytest.mark.integration


def test_a_json_logging_worker_writes_json_lines_naming_its_tasks_and_keeps_its_heartbeat_file(celery_workers,
                                                                                               tmp_path):
    from config.celery import app

    heartbeat = tmp_path / "heartbeat"
    worker = celery_workers("jsonlog", concurrency=1, env={
        "MAGEBENCH_LOG_FORMAT": "json", "MAGEBENCH_WORKER_HEARTBEAT_FILE": str(heartbeat),
        "MAGEBENCH_WORKER_BEAT_SECONDS": "1"})
    task_id = app.send_task("submissions.watchdog").id
    deadline = time.monotonic() + 60
    while f"{task_id}] succeeded" not in worker.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    text = worker.log.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert lines and set(lines[0]) >= {"time", "level", "logger", "message"}
    # Celery's own lines are JSON too: its ready line and the task's end, which carries the task's id.
    assert any(line["message"].endswith(" ready.") for line in lines)
    (done,) = [line for line in lines if f"{task_id}] succeeded" in line["message"]]
    assert done["task_id"] == task_id and done["logger"] == "celery.app.trace"
    # What is not JSON is the banner Celery prints before logging starts, and warnings printed as such.
    assert not [line for line in text.splitlines() if line.startswith("[20")]
    age = heartbeat_age(heartbeat)
    assert age is not None and age < 5
