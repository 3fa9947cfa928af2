"""Several reads as of one moment: a page or an answer whose counts must add up.

Counts read one query after another can each see a different moment while workers write (an
attempt scored between the count of scored attempts and the list of them). Inside ``one_moment``
every query reads the same snapshot: PostgreSQL's REPEATABLE READ, which takes it at the first
statement; SQLite's read transaction sees one state of the file throughout.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone


@contextmanager
def one_moment() -> Iterator[datetime]:
    """Run the block's reads in one read-only snapshot; yields when it was taken.

    Inside a transaction already (a service, a test) the block reads as that transaction does.
    """
    if connection.in_atomic_block:
        yield timezone.now()
        return
    postgres = connection.vendor == "postgresql"
    if postgres:
        from psycopg import IsolationLevel

        connection.ensure_connection()
        raw = connection.connection
        # Set on the driver's connection, so its BEGIN names the level whatever statement comes first.
        before = (raw.isolation_level, raw.read_only)
        raw.isolation_level, raw.read_only = IsolationLevel.REPEATABLE_READ, True
    try:
        with transaction.atomic():
            if postgres:
                with connection.cursor() as cursor:
                    # The first statement takes the snapshot: its own start is the moment read.
                    cursor.execute("SELECT statement_timestamp()")
                    row = cursor.fetchone()
                moment = row[0] if row else timezone.now()
            else:
                moment = timezone.now()
            yield moment
    finally:
        if postgres and connection.connection is raw:
            raw.isolation_level, raw.read_only = before
