import contextlib
from pathlib import Path
from typing import Any

from django.apps import AppConfig


def _shown_as(path: Path, data_dir: Path, name: str) -> str:
    """How a folder reads in messages: its path inside the data directory, or its role's name."""
    try:
        return str(Path(path).resolve().relative_to(Path(data_dir).resolve()))
    except ValueError:
        return name


def _worker_ready(sender: Any = None, **kwargs: Any) -> None:
    from submissions.shutdown import remember_pool
    from submissions.workers import on_worker_ready

    # The pool is remembered first, so a stop that comes at once still finds what to hand back.
    remember_pool(str(sender.hostname), sender.controller)
    on_worker_ready(sender, **kwargs)


def _worker_shutdown(sender: Any = None, **kwargs: Any) -> None:
    from submissions.workers import on_worker_shutdown

    on_worker_shutdown(sender, **kwargs)


def _worker_shutting_down(sender: Any = None, **kwargs: Any) -> None:
    from submissions.shutdown import on_worker_shutting_down

    on_worker_shutting_down(sender, **kwargs)


def _worker_init(sender: Any = None, **kwargs: Any) -> None:
    from submissions.shutdown import on_worker_init

    on_worker_init(**kwargs)


class SubmissionsConfig(AppConfig):
    name = "submissions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # evaluators/ reads no Django settings itself: what it needs is handed over once here, so that
        # workers and management commands run each environment under its operator's limits, and attempts'
        # messages, trajectories and traces name files relative to the data directory.
        from celery import signals
        from django.conf import settings

        from evaluators.base import apply_operator_settings
        from evaluators.paths import show_paths_relative_to

        apply_operator_settings(settings.MAGEBENCH_ENVIRONMENTS, settings.MAGEBENCH_OPERATOR_SETTINGS)

        data = Path(settings.DATA_DIR)
        show_paths_relative_to([
            (settings.SCENARIO_ROOT, _shown_as(settings.SCENARIO_ROOT, data, "scenarios")),
            (settings.MEDIA_ROOT, _shown_as(settings.MEDIA_ROOT, data, "media")),
            (data, ""),
            (settings.BASE_DIR, ""),
        ])
        # The client wheel's digest is read as each process starts, before any request: a wheel and
        # its digest file both swapped later are still refused (client_wheel.py).
        from submissions.client_wheel import pinned_digest

        with contextlib.suppress(OSError):
            pinned_digest()
        # Workers record themselves, so the queue page and time-left estimates know what serves each
        # queue (a worker has loaded the apps before it reports ready).
        signals.worker_ready.connect(_worker_ready, dispatch_uid="submissions.worker_ready")
        signals.worker_shutdown.connect(_worker_shutdown, dispatch_uid="submissions.worker_shutdown")
        # A stopped worker hands its attempts in flight back instead of waiting for them (shutdown.py).
        signals.worker_shutting_down.connect(_worker_shutting_down, dispatch_uid="submissions.worker_shutting_down")
        signals.worker_init.connect(_worker_init, dispatch_uid="submissions.worker_init")
