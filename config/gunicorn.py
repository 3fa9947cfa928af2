"""gunicorn's hooks for the web process (the Dockerfile runs ``gunicorn -c config/gunicorn.py …``).

Its worker processes share their metrics through files (prometheus-client's multiprocess mode): each
writes its samples under PROMETHEUS_MULTIPROC_DIR and a scrape, answered by any of them, sums them
all. The folder is emptied as gunicorn starts (samples of a previous run would be counted again) and
a worker that exits is marked dead (its live gauges are dropped; its counts stay in the sums).

gunicorn's own lines (workers booted, timed out, killed) follow MAGEBENCH_LOG_FORMAT as the site's do.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# Set before the workers start, so that they import prometheus-client in multiprocess mode.
METRICS_DIR = Path(os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", "/tmp/magebench-prometheus"))



# One line per request on standard output, with what the proxy in front said about the client: the
# address it saw (X-Forwarded-For, which it sets alone) and the scheme. The path without its query
# string, which may carry what a user typed.
accesslog = "-"
access_log_format = ('%(m)s %(U)s status=%(s)s bytes=%(B)s duration_ms=%(M)s '
                     'forwarded_for="%({x-forwarded-for}i)s" proto="%({x-forwarded-proto}i)s"')


def _log_format() -> str:
    # As config/settings/base.py reads it: gunicorn's master process never loads Django's settings.
    chosen = os.environ.get("MAGEBENCH_LOG_FORMAT")
    return chosen or ("json" if os.environ.get("MAGEBENCH_ENV") == "production" else "plain")


if _log_format() == "json":
    # Merged by gunicorn over its own logging configuration: the same handlers, with JSON lines.
    logconfig_dict = {
        "formatters": {"generic": {"()": "config.logs.JsonFormatter"}},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["error_console"], "propagate": False},
            "gunicorn.access": {"level": "INFO", "handlers": ["console"], "propagate": False},
        },
    }


def on_starting(server: Any) -> None:
    METRICS_DIR.mkdir(parents=True, exist_ok=True)
    for stale in METRICS_DIR.glob("*.db"):
        stale.unlink(missing_ok=True)


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
