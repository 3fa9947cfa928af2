"""Test settings: the local PostgreSQL and Redis that every machine runs (override by env)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("MAGEBENCH_ENV", "test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/magebench")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/9")


def _own_redis_database(url: str, worker: str) -> str:
    """``url`` moved along by the number of the parallel test process ("gw1" → one database on)."""
    base, _, database = url.rpartition("/")
    index = int(worker.removeprefix("gw") or 0)
    return f"{base}/{(int(database or 0) + index) % 16}"


_tmp = Path(tempfile.gettempdir()) / f"magebench-test-{os.getpid()}"
os.environ.setdefault("MAGEBENCH_DATA_DIR", str(_tmp))

# Parallel test processes (pytest-xdist) share the machine's Redis: each needs a database of its own,
# or one process's purge empties another's queue and its workers run the other's attempts. (pytest-django
# gives each its own PostgreSQL test database.) They also inherit the data directory their controller's
# settings chose, where two imports of the fixture scenarios would race: each takes its own. The Celery
# workers a test starts inherit the environment, already moved: the marker keeps them from moving it again.
_xdist_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _xdist_worker and os.environ.get("MAGEBENCH_TEST_PROCESS_OF") != _xdist_worker:
    os.environ["CELERY_BROKER_URL"] = _own_redis_database(os.environ["CELERY_BROKER_URL"], _xdist_worker)
    os.environ["MAGEBENCH_DATA_DIR"] = f"{os.environ['MAGEBENCH_DATA_DIR']}-{_xdist_worker}"
    os.environ["MAGEBENCH_TEST_PROCESS_OF"] = _xdist_worker
# Throttles count in a per-process cache that outlives a test; the test of throttling sets its own rate.
os.environ.setdefault("MAGEBENCH_THROTTLE_ANON", "100000/minute")
os.environ.setdefault("MAGEBENCH_THROTTLE_USER", "100000/minute")
os.environ.setdefault("MAGEBENCH_THROTTLE_UPLOADS", "100000/minute")
# A live server on a machine the whole suite keeps busy answers in its own time: a request is not cut
# off at production's deadline here; the test of the deadline sets a short one itself.
os.environ.setdefault("MAGEBENCH_REQUEST_DEADLINE", "0")

from config.env import env_float  # noqa: E402
from config.settings.base import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MAGEBENCH_INFRA_RETRY_BASE_SECONDS = env_float("MAGEBENCH_INFRA_RETRY_BASE_SECONDS", 0.2)
# Long: a baseline agent's reply slowed by a busy machine must not be cut off and retried (a retry
# the test's own run never picks up leaves its submission unfinished); a test of a timeout sets a
# short one itself.
MAGEBENCH_ENDPOINT_TIMEOUT = env_float("MAGEBENCH_ENDPOINT_TIMEOUT", 60.0)
MAGEBENCH_ENDPOINT_BACKOFF = env_float("MAGEBENCH_ENDPOINT_BACKOFF", 0.05)
