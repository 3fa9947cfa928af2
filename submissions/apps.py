from pathlib import Path

from django.apps import AppConfig


def _shown_as(path: Path, data_dir: Path, name: str) -> str:
    """How a folder reads in messages: its path inside the data directory, or its role's name."""
    try:
        return str(Path(path).resolve().relative_to(Path(data_dir).resolve()))
    except ValueError:
        return name


class SubmissionsConfig(AppConfig):
    name = "submissions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Attempts' messages, trajectories and traces name files relative to the data directory.
        from django.conf import settings

        from evaluators.paths import show_paths_relative_to

        data = Path(settings.DATA_DIR)
        show_paths_relative_to([
            (settings.SCENARIO_ROOT, _shown_as(settings.SCENARIO_ROOT, data, "scenarios")),
            (settings.MEDIA_ROOT, _shown_as(settings.MEDIA_ROOT, data, "media")),
            (data, ""),
            (settings.BASE_DIR, ""),
        ])
