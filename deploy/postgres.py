"""PostgreSQL's own tools (pg_dump, pg_restore, psql), run on the stack's DATABASE_URL.

The password never reaches a command line (other users of the machine can read those) nor a
message: it goes to the tools in PGPASSWORD, and the URL they get is the same one without it.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

SCHEMES = ("postgres", "postgresql")


class DatabaseError(Exception):
    """A PostgreSQL tool failed, or the URL names no PostgreSQL database."""


@dataclass(frozen=True)
class Database:
    """A database of a server: the URL without its password, the password apart."""

    url: str
    password: str | None
    name: str
    user: str | None
    host: str

    def on(self, name: str) -> str:
        """The URL of another database of the same server (without the password)."""
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path="/" + name))

    def environ(self) -> dict[str, str]:
        environ = dict(os.environ)
        if self.password is not None:
            environ["PGPASSWORD"] = self.password
        return environ

    def redacted(self, text: str) -> str:
        return text.replace(self.password, "***") if self.password else text


def database_from_url(url: str) -> Database:
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise DatabaseError("DATABASE_URL must be a postgres:// URL")
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise DatabaseError("DATABASE_URL names no database")
    host = parts.hostname or "localhost"
    netloc = host if ":" not in host else f"[{host}]"
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    bare = urlunsplit(("postgresql", netloc, parts.path, parts.query, ""))
    password = unquote(parts.password) if parts.password is not None else None
    user = unquote(parts.username) if parts.username else None
    return Database(url=bare, password=password, name=name, user=user, host=host)


def _run(database: Database, command: list[str], *, what: str) -> str:
    try:
        done = subprocess.run(command, env=database.environ(), capture_output=True, text=True, check=False)
    except FileNotFoundError as error:
        raise DatabaseError(f"{what}: {command[0]} is not installed (postgresql-client)") from error
    if done.returncode != 0:
        raise DatabaseError(f"{what} failed: {database.redacted(done.stderr.strip() or done.stdout.strip())}")
    return done.stdout


def pg_dump_version() -> str:
    return subprocess.run(["pg_dump", "--version"], capture_output=True, text=True, check=True).stdout.strip()


def database_dump(database: Database, target: Path) -> None:
    """The whole database in pg_dump's custom format (compressed, restored by pg_restore)."""
    _run(database, ["pg_dump", "--format=custom", f"--file={target}", f"--dbname={database.url}"],
         what="pg_dump")


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def database_recreate(database: Database) -> None:
    """The database dropped (its connections ended) and made again, empty, owned by the URL's user."""
    create = f"CREATE DATABASE {_identifier(database.name)}"
    if database.user:
        create += f" OWNER {_identifier(database.user)}"
    # Each -c runs on its own: DROP DATABASE and CREATE DATABASE refuse to run inside a transaction.
    _run(database, ["psql", "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1", f"--dbname={database.on('postgres')}",
                    "-c", f"DROP DATABASE IF EXISTS {_identifier(database.name)} WITH (FORCE)", "-c", create],
         what="recreating the database")


def database_restore(database: Database, dump: Path) -> None:
    # One transaction: a restore that stops half way leaves the empty database, not half of one.
    _run(database, ["pg_restore", "--no-owner", "--exit-on-error", "--single-transaction",
                    f"--dbname={database.url}", str(dump)], what="pg_restore")

