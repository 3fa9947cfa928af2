"""What waits in the broker: the length of each Celery queue, read straight from it.

On Redis a queue is a list named after it, plus one list per priority step (kombu names them
``<queue>\\x06\\x16<step>``); messages delivered to a worker and not yet acknowledged wait in the
``unacked`` hash. kombu's file-system broker (development) keeps one file per message.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from kombu.transport.redis import PRIORITY_STEPS, Channel

#: kombu's Redis transport keeps delivered, unacknowledged messages in this hash.
UNACKED_KEY = "unacked"


@dataclass(frozen=True)
class BrokerDepths:
    queues: dict[str, int]
    #: Delivered to a worker and not yet acknowledged; None where the broker does not tell.
    unacked: int | None = None


def _redis_client(url: str, timeout: float) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)


def redis_lists(queue: str) -> list[str]:
    """The lists kombu keeps ``queue``'s messages in: the queue's own name, then one per priority step."""
    return [queue, *(f"{queue}{Channel.sep}{step}" for step in PRIORITY_STEPS if step)]


def redis_depths(url: str, queues: list[str], *, prefix: str = "", timeout: float = 1.0) -> BrokerDepths:
    client = _redis_client(url, timeout)
    try:
        pipe = client.pipeline(transaction=False)
        for queue in queues:
            for key in redis_lists(queue):
                pipe.llen(prefix + key)
        pipe.hlen(prefix + UNACKED_KEY)
        lengths = pipe.execute()
    finally:
        client.close()
    steps = len(redis_lists(""))
    depths = {queue: sum(lengths[i * steps:(i + 1) * steps]) for i, queue in enumerate(queues)}
    return BrokerDepths(queues=depths, unacked=int(lengths[-1]))


def filesystem_depths(folder: str | Path, queues: list[str]) -> BrokerDepths:
    """kombu names a message file ``<time>_<uuid>.<queue>.msg``."""
    depths = dict.fromkeys(queues, 0)
    with os.scandir(folder) as entries:
        for entry in entries:
            queue = entry.name.partition(".")[2].removesuffix(".msg")
            if queue in depths and entry.name.endswith(".msg"):
                depths[queue] += 1
    return BrokerDepths(queues=depths)


def broker_depths(url: str, queues: list[str], transport_options: dict[str, Any], *,
                  timeout: float = 1.0) -> BrokerDepths | None:
    """Each queue's waiting messages, or None for a broker this cannot read. Raises when the broker
    cannot be reached (redis.RedisError, OSError)."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        return redis_depths(url, queues, prefix=str(transport_options.get("global_keyprefix", "")), timeout=timeout)
    if url.startswith("filesystem://"):
        return filesystem_depths(transport_options["data_folder_in"], queues)
    return None


def broker_reachable(url: str, transport_options: dict[str, Any], *, timeout: float) -> None:
    """Raises when the broker cannot be reached within ``timeout`` seconds (each step)."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        client = _redis_client(url, timeout)
        try:
            client.ping()
        finally:
            client.close()
    elif url.startswith("filesystem://"):
        folder = Path(transport_options["data_folder_in"])
        if not (folder.is_dir() and os.access(folder, os.W_OK)):
            raise OSError(f"the broker's folder {folder} is not writable")
    else:
        from kombu import Connection

        with Connection(url, connect_timeout=timeout, transport_options=transport_options) as connection:
            connection.ensure_connection(max_retries=1, timeout=max(1, math.ceil(timeout)))
