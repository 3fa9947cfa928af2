"""The sections of the scale report, as markdown lines."""
from __future__ import annotations

import statistics

from bench._scale.bare import Bare
from bench._scale.rounds import AGENT_FOR_ENV, BOARDS, MIB, QUEUES, Memory, Round, board_name, slot_times
from bench._scale.workers import SAMPLE_EVERY


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def num(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{suffix}"


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def report_scaling(rounds: list[Round], boards: list[tuple[str, str]], timeout: float) -> list[str]:
    lines = ["", "## 1. Mini-set wall time by worker count", "",
             "Each worker: `celery -A config worker --concurrency=1 --pool=prefork --without-gossip "
             "--without-mingle` with no `-Q` (it consumes light, browser and engine). Wall time runs from "
             "the first submission to the last submission's `finished_at`; workers were started and "
             "answering pings before it began.", ""]
    reference = rounds[0] if rounds and rounds[0].finished else None
    rows = []
    for measured in rounds:
        scored = sum(1 for row in measured.rows if row["status"] == "scored")
        wall = measured.wall
        rows.append([
            str(measured.workers),
            num(wall, 1) if measured.finished else f"unfinished after {timeout:.0f}",
            f"{measured.attempts} ({scored} scored)",
            num(measured.attempts / wall if wall else None, 3),
            num(reference.wall / wall if reference and reference.wall and wall else None, 2, "×"),
            num(measured.load, 2),
        ])
    ref_label = f"{rounds[0].workers} worker{'s' if rounds and rounds[0].workers != 1 else ''}" if rounds else "-"
    lines += table(["workers", "wall s", "attempts", "attempts/s", f"speed-up vs {ref_label}",
                    "load avg (1 min) at submit"], rows)
    lines += ["", "Mean attempt duration (`Attempt.duration_seconds`: the episode inside `attempt_run`, HTTP "
              "included) per board and worker count, with what the attempts did in the first round:", ""]
    headers = ["board", *[f"N={r.workers} s" for r in rounds], "engine steps / attempt", "model calls / attempt",
               "mean score"]
    rows = []
    for board in boards:
        first = rounds[0].by_board(board) if rounds else []
        rows.append([
            board_name(*board),
            *[num(mean([row["duration_seconds"] for row in r.by_board(board) if row["duration_seconds"] is not None]))
              for r in rounds],
            num(mean([row["steps"] for row in first]), 1),
            num(mean([row["model_calls"] for row in first]), 1),
            num(mean([row["score"] for row in first if row["score"] is not None]), 1),
        ])
    lines += table(headers, rows)
    return lines


def report_memory(memory: Memory, timeout: float) -> list[str]:
    from submissions.selectors import queue_for

    served: dict[str, list[str]] = {queue: [] for queue in QUEUES}
    for env in sorted({env for env, _ in BOARDS}):
        served.setdefault(queue_for(env), []).append(env)
    measured = memory.round
    lines = ["", "## 2. Peak memory per worker kind", "",
             "Three workers, one per queue (`-Q light`, `-Q browser`, `-Q engine`, `--concurrency=1`), ran one "
             f"mini set ({measured.attempts} attempts, wall "
             f"{num(measured.wall, 1) + ' s' if measured.finished else f'unfinished after {timeout:.0f} s'}, "
             f"load average {measured.load:.2f} at submit). "
             f"RSS summed over each worker's process tree (main process, pool child and their children such as "
             f"Playwright's driver and Chromium), sampled every {SAMPLE_EVERY} s ({memory.samples} samples); idle "
             "is the largest of 5 samples taken after the workers answered pings, before the first submission. "
             "A sum of RSS counts pages shared between processes (forked pool child, Chromium's zygote) once "
             "per process, so it is an upper bound of what the tree really holds.", ""]
    rows = []
    for queue in QUEUES:
        label = f"mem-{queue}"
        idle, peak = memory.idle.get(label, 0), memory.peak.get(label, 0)
        rows.append([queue, ", ".join(served[queue]) or "-", num(idle / MIB, 0), num(peak / MIB, 0),
                     num((peak - idle) / MIB, 0), f"{memory.processes_idle.get(label, 0)} → "
                     f"{memory.processes_at_peak.get(label, 0)}"])
    lines += table(["queue", "environments", "idle MiB", "peak MiB", "peak − idle MiB", "processes idle → at peak"],
                   rows)
    return lines


def report_overhead(bare: dict[tuple[str, str], Bare], reference: Round | None,
                    boards: list[tuple[str, str]], floor: float | None) -> list[str]:
    lines = ["", "## 3. Evaluator overhead per environment", "",
             "Bare: `run_attempt` in this process for each mini scenario, with the settings the platform's "
             "submissions froze and a model object that calls a fresh baseline directly (no HTTP, no JSON, no "
             "database, no Celery). Platform: the 1-worker round of section 1, per attempt the time from the "
             "previous attempt's end (or the submission) to its own end — Celery delivery, claim, episode with "
             "HTTP round trips, heartbeats and result writes; `attempt_run` is the part `Attempt.duration_seconds` "
             "records.", ""]
    single = reference is not None and reference.workers == 1 and reference.finished
    slots = slot_times(reference) if single and reference is not None else {}
    rows = []
    totals = {"bare": 0.0, "platform": 0.0, "n_bare": 0, "n_platform": 0}
    for board in boards:
        measured = bare.get(board, Bare())
        platform_rows = reference.by_board(board) if single and reference is not None else []
        board_slots = [slots[row["id"]] for row in platform_rows if row["id"] in slots]
        bare_mean, platform_mean = mean(measured.times), mean(board_slots)
        calls = mean([row["model_calls"] for row in platform_rows])
        totals["bare"] += sum(measured.times)
        totals["platform"] += sum(board_slots)
        totals["n_bare"] += len(measured.times)
        totals["n_platform"] += len(board_slots)
        rows.append([
            board_name(*board),
            f"{len(measured.times)} / {len(board_slots)}",
            num(bare_mean),
            num(platform_mean),
            num(mean([row["duration_seconds"] for row in platform_rows if row["duration_seconds"] is not None])),
            num(platform_mean / bare_mean if platform_mean and bare_mean else None, 2, "×"),
            num(platform_mean - bare_mean if platform_mean is not None and bare_mean is not None else None),
            num(calls, 0),
            num(calls * floor if calls is not None and floor else None),
            f"{num(mean(measured.scores), 1)} / "
            f"{num(mean([row['score'] for row in platform_rows if row['score'] is not None]), 1)}",
        ])
    if totals["n_bare"] and totals["n_platform"]:
        bare_all = totals["bare"] / totals["n_bare"]
        platform_all = totals["platform"] / totals["n_platform"]
        rows.append(["**all attempts**", f"{totals['n_bare']} / {totals['n_platform']}", num(bare_all),
                     num(platform_all), "", num(platform_all / bare_all, 2, "×"), num(platform_all - bare_all),
                     "", "", ""])
    lines += table(["board", "attempts bare / platform", "bare s/attempt", "platform s/attempt",
                    "of which attempt_run s", "platform / bare", "platform − bare s", "model calls / attempt",
                    "calls × endpoint floor s", "mean score bare / platform"], rows)
    if floor is not None:
        lines += ["", f"Endpoint floor: a one-word request from `ChatClient` to a baseline server takes "
                  f"{floor * 1000:.1f} ms (median of 30); paid once per model call, it is the "
                  "`calls × endpoint floor` column, the endpoint's share rather than the platform's."]
    if not single:
        lines += ["", "No finished 1-worker round (run with `--workers` starting at 1): the platform column is empty."]
    return lines


def report_board(board: tuple[list[str], float, int] | None, submissions: int, attempts: int) -> list[str]:
    lines = ["", f"## 4. Board p95 at {submissions:,} submissions", ""]
    if board is None:
        return lines + ["Skipped (`--skip-board`)."]
    output, seconds, code = board
    lines += [f"`bench/board_latency.py --submissions {submissions} --attempts {attempts}` run as a subprocess "
              f"on its own database (`magebench_bench`) in {seconds:.0f} s (seeding included), exit code {code}. "
              "Its output, less the seeding progress lines (p50/p95 through Django's test client of 5 cold "
              "requests, each the first after the boards changed, and of 20 warm ones served from the board "
              "cache; SQL queries of a warm request):", "", "```", *output, "```"]
    return lines


def report_problems(rounds: list[Round], memory: Memory | None, bare: dict[tuple[str, str], Bare],
                    boards: list[tuple[str, str]], problems: list[str]) -> list[str]:
    notes = list(problems)
    for measured in [*rounds, *([memory.round] if memory else [])]:
        if not measured.finished:
            left = sum(1 for row in measured.rows if row["status"] in ("pending", "running", "retrying"))
            notes.append(f"round {measured.label}: not finished in time, {left} attempt(s) still active")
        for row in measured.failures():
            notes.append(f"round {measured.label}: attempt {row['id']} ({board_name(row['env'], row['flow'])}) "
                         f"{row['status']} after {row['tries']} tries: {row['error_kind']} "
                         f"{first_line(row['error_message'])}")
        retried = [row for row in measured.rows if row["tries"] > 1]
        if retried:
            notes.append(f"round {measured.label}: {len(retried)} attempt(s) needed more than one try")
    for board, bare_run in bare.items():
        notes += [f"bare {board_name(*board)}: {failure}" for failure in bare_run.failures]
    if rounds:
        for board in boards:
            rows = rounds[0].by_board(board)
            if rows and all(row["steps"] == 0 for row in rows):
                calls = mean([row["model_calls"] for row in rows]) or 0
                notes.append(f"{board_name(*board)}: the {AGENT_FOR_ENV[board[0]]} baseline made no move "
                             f"({calls:.0f} model calls, 0 steps per attempt): these times measure the flow's "
                             "model-call loop, not the environment's stepping.")
            played = bare.get(board)
            bare_score = statistics.fmean(played.scores) if played and played.scores else None
            platform_score = statistics.fmean([r["score"] or 0.0 for r in rows]) if rows else None
            if bare_score is not None and platform_score is not None and abs(bare_score - platform_score) > 1e-6:
                notes.append(f"{board_name(*board)}: the bare and platform runs played different episodes (mean "
                             f"score {bare_score:.1f} against {platform_score:.1f}; the {AGENT_FOR_ENV[board[0]]} "
                             "baseline's replies depend on its random state), so its platform / bare ratio compares "
                             "episodes of different lengths, not overhead alone.")
    return ["", "## Problems and notes", "", *([f"- {note}" for note in notes] or ["- none"])]
