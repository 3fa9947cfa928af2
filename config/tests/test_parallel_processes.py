"""Parallel test processes never share a queue: each moves the Redis database along by its number."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from config.settings.test import _own_redis_database

ROOT = Path(__file__).resolve().parents[2]


def _seen(**env: str) -> tuple[str, str]:
    """The broker URL and data directory the test settings give a fresh process with ``env``."""
    environ = {k: v for k, v in os.environ.items() if k not in {"PYTEST_XDIST_WORKER", "MAGEBENCH_TEST_PROCESS_OF"}}
    environ.update({"DJANGO_SETTINGS_MODULE": "config.settings.test", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/9",
                    "MAGEBENCH_DATA_DIR": "/tmp/controller", **env})
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(settings.CELERY_BROKER_URL, settings.DATA_DIR)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True,
                          check=True)
    broker, data_dir = done.stdout.strip().splitlines()[-1].split(" ")
    return broker, data_dir


def test_each_parallel_test_process_moves_the_redis_database_by_its_number() -> None:
    assert _own_redis_database("redis://127.0.0.1:6379/9", "gw0") == "redis://127.0.0.1:6379/9"
    assert _own_redis_database("redis://127.0.0.1:6379/9", "gw1") == "redis://127.0.0.1:6379/10"
    assert _own_redis_database("redis://127.0.0.1:6379/14", "gw3") == "redis://127.0.0.1:6379/1"


def test_a_parallel_process_gets_its_own_redis_database_and_data_directory_and_its_workers_keep_them() -> None:
    assert _seen() == ("redis://127.0.0.1:6379/9", "/tmp/controller")
    # Inherited from the controller process, which chose them for itself.
    assert _seen(PYTEST_XDIST_WORKER="gw2") == ("redis://127.0.0.1:6379/11", "/tmp/controller-gw2")
    # A Celery worker started by the process on gw2 inherits its environment, already moved.
    assert _seen(PYTEST_XDIST_WORKER="gw2", MAGEBENCH_TEST_PROCESS_OF="gw2") == ("redis://127.0.0.1:6379/9",
                                                                                 "/tmp/controller")
