"""The backup tool's settings, read from the environment (12-factor, with the stack's defaults)."""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    database_url: str
    data_dir: Path
    secrets_dir: Path
    dest: Path
    keep: int
    every_seconds: float


def _positive_int(environ: Mapping[str, str], name: str, default: int) -> int:
    value = int(environ.get(name, str(default)))
    if value < 1:
        raise ValueError(f"{name} must be 1 or more, not {value}")
    return value


def _positive_float(environ: Mapping[str, str], name: str, default: float) -> float:
    value = float(environ.get(name, str(default)))
    if value <= 0:
        raise ValueError(f"{name} must be more than 0, not {value}")
    return value


def settings_from(environ: Mapping[str, str] = os.environ) -> Settings:
    return Settings(
        database_url=environ.get("DATABASE_URL", ""),
        data_dir=Path(environ.get("MAGEBENCH_DATA_DIR", "/data")),
        secrets_dir=Path(environ.get("MAGEBENCH_SECRETS_DIR", "/run/magebench-secrets")),
        dest=Path(environ.get("MAGEBENCH_BACKUP_DEST", "/backups")),
        keep=_positive_int(environ, "MAGEBENCH_BACKUP_KEEP", 14),
        every_seconds=_positive_float(environ, "MAGEBENCH_BACKUP_EVERY_SECONDS", 86400.0),
    )
