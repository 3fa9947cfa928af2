"""Bringing a backup back: the database, the data folder and the secrets, as they were when taken."""
from __future__ import annotations

from collections.abc import Callable

from deploy import archive, postgres, store
from deploy.settings import Settings


def _refuse_damaged(backup: store.Backup) -> None:
    problems = store.backup_problems(backup)
    if problems:
        raise store.BackupError(f"{backup.name} is damaged; nothing was changed:\n  " + "\n  ".join(problems))


def _refuse_unsafe(backup: store.Backup, settings: Settings) -> None:
    try:
        archive.archive_check(backup.path / store.DATA, settings.data_dir)
        if (backup.path / store.SECRETS).is_file():
            archive.archive_check(backup.path / store.SECRETS, settings.secrets_dir)
    except archive.UnsafeArchive as error:
        raise store.BackupError(f"{backup.name} holds an unsafe archive ({error}); nothing was changed") from error


def backup_restore(backup: store.Backup, settings: Settings, say: Callable[[str], None] = print) -> None:
    """Replace the database, the data folder (all but the static files) and the secrets with ``backup``'s.

    Everything is checked before anything changes: the files against the manifest's sha256, the
    archives' members against where they would land."""
    database = postgres.database_from_url(settings.database_url)
    _refuse_damaged(backup)
    _refuse_unsafe(backup, settings)
    say(f"{backup.name}: every file matches its manifest")
    postgres.database_recreate(database)
    say(f"database {database.name} on {database.host}: dropped and created again, empty")
    postgres.database_restore(database, backup.path / store.DUMP)
    say(f"database {database.name}: restored from {store.DUMP}")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    removed = archive.folder_empty(settings.data_dir, kept=archive.DATA_KEPT_ON_RESTORE)
    restored = archive.archive_extract(backup.path / store.DATA, settings.data_dir)
    say(f"data folder {settings.data_dir}: {removed} entries removed, {restored} restored (static files kept)")
    if (backup.path / store.SECRETS).is_file():
        settings.secrets_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        restored = archive.archive_extract(backup.path / store.SECRETS, settings.secrets_dir)
        say(f"secrets folder {settings.secrets_dir}: {restored} entries restored")
    else:
        say(f"secrets folder {settings.secrets_dir}: left as it is (the backup holds no secrets)")
