"""python -m deploy.backup take | list | prune | schedule | restore NAME_OR_PATH

Backups of the stack: the database (pg_dump), the data folder (MAGEBENCH_DATA_DIR, without its
static files) and the generated secrets (MAGEBENCH_SECRETS_DIR), one folder per backup in
MAGEBENCH_BACKUP_DEST. The standard library and PostgreSQL's client tools only: no Django.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from deploy import archive, postgres, restore, schedule, store
from deploy.settings import Settings, settings_from

DESCRIPTION = ("Backups of the database, the data volume and the generated secrets: taken, listed, pruned, "
               "scheduled and restored (README: Backups and restore).")


def _readable(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def command_take(settings: Settings, _args: argparse.Namespace) -> None:
    backup = store.backup_take(settings)
    manifest = store.manifest_read(backup)
    files = manifest["files"]
    assert isinstance(files, dict)
    for name, entry in sorted(files.items()):
        print(f"{name}: {entry['size']} bytes")
    print(backup.name)


def command_list(settings: Settings, args: argparse.Namespace) -> None:
    for backup in store.backups_complete(settings.dest):
        line = f"{backup.name}  {_readable(backup.size()):>10}"
        if args.verify:
            problems = store.backup_problems(backup)
            line += "  verified" if not problems else "  DAMAGED: " + "; ".join(problems)
        print(line)


def command_prune(settings: Settings, args: argparse.Namespace) -> None:
    keep = args.keep if args.keep is not None else settings.keep
    for name in store.backups_prune(settings.dest, keep=keep):
        print(f"removed {name}")


def command_schedule(settings: Settings, _args: argparse.Namespace) -> None:
    schedule.schedule_run(settings)


def command_restore(settings: Settings, args: argparse.Namespace) -> None:
    try:
        backup = store.backup_find(args.backup, settings.dest)
    except store.BackupError as error:
        raise store.BackupError(f"{error}; nothing was changed") from error
    restore.backup_restore(backup, settings)
    print(f"restored {backup.name}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m deploy.backup", description=DESCRIPTION)
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--dest", type=Path, help="the backups' folder (MAGEBENCH_BACKUP_DEST, /backups)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("take", parents=[where], help="take a backup now; prints its name last"
                        ).set_defaults(run=command_take)
    listing = commands.add_parser("list", parents=[where], help="the complete backups, newest first")
    listing.add_argument("--verify", action="store_true", help="check every file against its manifest")
    listing.set_defaults(run=command_list)
    prune = commands.add_parser("prune", parents=[where], help="remove all but the newest backups")
    prune.add_argument("--keep", type=int, help="how many to keep (MAGEBENCH_BACKUP_KEEP, 14)")
    prune.set_defaults(run=command_prune)
    commands.add_parser("schedule", parents=[where], help="take and prune every MAGEBENCH_BACKUP_EVERY_SECONDS, "
                        "until stopped").set_defaults(run=command_schedule)
    back = commands.add_parser("restore", parents=[where], help="replace the database, data and secrets with a "
                               "backup's (checked first)")
    back.add_argument("backup", help="a backup's name in the backups' folder, or a path to one")
    back.set_defaults(run=command_restore)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = settings_from()
        if args.dest is not None:
            settings = replace(settings, dest=args.dest)
        args.run(settings, args)
    except (store.BackupError, postgres.DatabaseError, archive.UnsafeArchive, ValueError, OSError) as error:
        print(f"backup {args.command}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
