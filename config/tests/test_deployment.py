"""The deployment files agree with the code: the image installs what CI tests, every queue the code
sends to has a worker pool, and every variable the compose file sets is one the settings read."""
from __future__ import annotations

import re
from pathlib import Path

import yaml
from django.conf import settings

from evaluators.base import all_plugins
from submissions.selectors import queue_for

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_the_image_installs_with_the_same_script_that_ci_tests_with():
    dockerfile = (ROOT / "Dockerfile").read_text()
    # One instruction per entry, its continuation lines joined (the install's RUN mounts a secret first).
    instructions = re.sub(r"\\\n\s*", " ", re.sub(r"^\s*#.*\n", "", dockerfile, flags=re.M)).splitlines()
    runs = [line for line in instructions if line.startswith("RUN ")]
    assert any(re.search(r"(^|[;&]\s*|\s)(PIP_\w+=\S+\s+)*scripts/setup(\s|$)", run) for run in runs), \
        "the image must install with scripts/setup"
    assert "pip install" not in dockerfile and "apt-get" not in dockerfile  # no second, drifting install path
    assert re.search(r"^scripts/test\b", (ROOT / ".ci/run").read_text(), re.M)
    assert "scripts/setup" in (ROOT / "scripts/test").read_text()


def test_every_queue_the_code_sends_to_is_consumed_by_a_worker_pool_and_beat_runs_the_watchdog():
    services = _compose()["services"]
    consumed: set[str] = set()
    for service in services.values():
        command = service.get("command") or []
        if command[:4] == ["celery", "-A", "config", "worker"] or command[:3] == ["python", "manage.py", "run_worker"]:
            consumed.update(command[command.index("-Q") + 1].split(","))
    declared = {queue.name for queue in settings.CELERY_TASK_QUEUES}
    sent_to = {settings.CELERY_TASK_DEFAULT_QUEUE, *(queue_for(plugin.slug) for plugin in all_plugins())}
    assert sent_to <= declared == consumed
    assert any((s.get("command") or [])[:4] == ["celery", "-A", "config", "beat"] for s in services.values())
    assert {task["task"] for task in settings.CELERY_BEAT_SCHEDULE.values()} == {"submissions.watchdog",
                                                                                 "leaderboard.snapshot_boards"}
    assert {"postgres", "redis", "web", "migrate"} <= set(services)
    assert "--appendonly" in services["redis"]["command"]  # queued messages survive a Redis restart
    # Every long-running service comes back after exiting on its own; only the one-off migration does not.
    assert {name: service.get("restart") for name, service in services.items() if name != "migrate"} == dict.fromkeys(
        set(services) - {"migrate"}, "unless-stopped")
    assert services["migrate"]["restart"] == "no"


def test_every_variable_the_compose_file_sets_is_read_by_the_settings():
    environment = _compose()["x-app"]["environment"]
    sources = "".join(p.read_text() for p in (ROOT / "config" / "settings").glob("*.py"))
    sources += (ROOT / "config" / "env.py").read_text()
    unread = [name for name in environment if f'"{name}"' not in sources]
    assert unread == []


def test_the_browser_workers_may_create_the_namespaces_that_isolate_model_pages():
    services = _compose()["services"]
    browser_pools = [s for s in services.values() if "browser" in (s.get("command") or [])]
    assert browser_pools
    assert all("seccomp=unconfined" in s.get("security_opt", []) for s in browser_pools)
