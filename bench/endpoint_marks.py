"""What striking a team's endpoint out of a trajectory costs an outsider's replay or an export.

    .venv/bin/python bench/endpoint_marks.py [--calls 100] [--words 2000] [--listed 100] [--repeats 5]

Builds, in memory, a trajectory of ``--calls`` model calls whose replies are ``--words`` words each,
for an endpoint with a path of its own, an API key and ``--listed`` model ids at /models, and prints
the median wall time of ``endpoint_marks`` and of ``struck`` over the trajectory: once with replies
that quote nothing of the endpoint (the usual case), once with replies where one word in five quotes
it (its host and path, a listed id, a longer word beginning with one). Only measured numbers are
printed; nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django

django.setup()

from submissions.crypto import encrypt_secret  # noqa: E402
from submissions.endpoint_privacy import endpoint_marks, struck  # noqa: E402
from submissions.models import ModelEntry, Submission  # noqa: E402

PLAIN = ["the", "box", "moves", "left", "up", "right", "down", "I", "will", "push", "it", "onto", "target", "wall"]
QUOTES = ["gw.example.com/e401-sekrit-DELTA/v1", "model-7", "model-77x"]


def _median_ms(repeats: int, work: Any) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _trajectory(calls: int, words: list[str], per_reply: int, rng: random.Random) -> dict[str, Any]:
    return {"calls": [{"reply": " ".join(rng.choice(words) for _ in range(per_reply)),
                       "messages": [{"role": "user", "content": "Push every box onto a target. " * 40}]}
                      for _ in range(calls)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--words", type=int, default=2000)
    parser.add_argument("--listed", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    submission = Submission(
        endpoint_url="https://gw.example.com/e401-sekrit-DELTA/v1/chat/completions", endpoint_model="",
        api_key_encrypted=encrypt_secret("sk-abcD1234567890efghijklmnopqrstWXYZ"),
        endpoint_listed_models=[f"model-{i}" for i in range(args.listed)], model=ModelEntry(id=1, name="Oracle"))
    marks = endpoint_marks(submission)
    print(f"{len(marks)} marks; endpoint_marks: {_median_ms(args.repeats, lambda: endpoint_marks(submission)):.3f} ms "
          "a call (worked out once per endpoint)")
    rng = random.Random(0)
    for label, words in (("quoting nothing", PLAIN), ("one word in five a quote", PLAIN + QUOTES)):
        document = _trajectory(args.calls, words, args.words, rng)
        size = len(json.dumps(document)) / 1e6
        ms = _median_ms(args.repeats, lambda document=document: struck(document, marks))
        print(f"struck, replies {label}: {size:.2f} MB in {ms:.0f} ms ({ms / size:.0f} ms per MB)")


if __name__ == "__main__":
    main()
