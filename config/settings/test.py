"""Test settings: the local PostgreSQL and Redis that every machine runs (override by env)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("MAGEBENCH_ENV", "test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/magebench")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/9")
_tmp = Path(tempfile.gettempdir()) / f"magebench-test-{os.getpid()}"
os.environ.setdefault("MAGEBENCH_DATA_DIR", str(_tmp))
# Throttles count in a per-process cache that outlives a test; the test of throttling sets its own rate.
os.environ.setdefault("MAGEBENCH_THROTTLE_ANON", "100000/minute")
os.environ.setdefault("MAGEBENCH_THROTTLE_USER", "100000/minute")

from config.settings.base import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MAGEBENCH_INFRA_RETRY_BASE_SECONDS = 0.2
MAGEBENCH_ENDPOINT_TIMEOUT = 5.0
MAGEBENCH_ENDPOINT_BACKOFF = 0.05
