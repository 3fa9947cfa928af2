"""WebUI scoring inside a platform worker process beside the official evaluator, candidate by candidate.

The candidates: every fixture page's "degraded" reply (the page's own files with every style
removed), which the official evaluator and the platform score alike
(bench/reports/webui_official_aes.md). Each candidate is scored in turn, one scoring at a time so
that all run at the same load:

1. by the official evaluator (``evaluate_different_interaction`` of an official MageBench checkout,
   run as bench/webui_official_aes.py runs it, in a subprocess; the time is that of the call alone,
   without the subprocess's start and imports);
2. by one platform worker process, started once with its Chromium already running, as an attempt
   scores its reply: the episode writes the reply's files, renders and scores the page and writes
   the artifacts (screenshots per state, the AES tables). Three times:

   * **first, rendered**: the first attempt at the page in the process, the worker rendering the
     target itself (a page with no stored target render: what every first attempt did before the
     import stored them);
   * **first**: the first attempt at the page in the process, reading the target render the
     import's page check stored beside the page (``evaluators/webui/target_store.py``);
   * **warm**: the same page again, its target in the process's memory.

   Each attempt starts after ``IDLE_BEFORE_ATTEMPT`` idle seconds, as a worker's scoring follows
   its model call.

The pages are copied into a scenario folder as the import stores them and go through the WebUI
plug-in's import-time check first, as an import runs it. Medians and their ratios are printed
beside the goal (the platform at least 20 times as fast as the official evaluator on a first
attempt).

The official checkout is never part of this repository: its folder is given on the command line,
with the folder its own dependencies were installed to (``pip install --target``).

    .venv/bin/python bench/webui_worker_vs_official.py --official-code DIR [--official-deps DIR]
        [--rounds N] [--out bench/reports/webui_worker_vs_official.md] [PAGE ...]
"""
from __future__ import annotations

import argparse
import datetime
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._official.webui_evaluator import (  # noqa: E402
    add_official_arguments,
    chosen_pages,
    evaluate_officially,
    official_folders,
)

PAGES = ROOT / "fixtures" / "magebench" / "resources" / "WebUI"
GOAL = 20.0
#: Idle seconds before each platform attempt: in a worker, an attempt's scoring follows its model
#: call, during which Chromium finishes closing the previous attempt's pages.
IDLE_BEFORE_ATTEMPT = 2.0
PLATFORM_RUNS = ("rendered", "first", "warm")
LABELS = {"rendered": "first, rendered", "first": "first", "warm": "warm"}


def official_score(code: Path, deps: Path | None, page: Path, folder: Path) -> tuple[float | None, float]:
    """The official evaluator's AES (%) of ``folder`` against ``page`` and the seconds its call took;
    an evaluation stopped after its timeout has no AES, and that time (a lower bound)."""
    evaluation = evaluate_officially(code, deps, page, folder)
    if evaluation.aes is None and not evaluation.stopped:
        raise SystemExit(f"the official evaluation of {page.name} failed: {evaluation.failure}")
    return evaluation.aes, evaluation.seconds


# ---------------------------------------------------------------------------------------------
# The platform worker process


def _worker(connection: Connection) -> None:
    """Score ``(run, page folder)`` requests as a worker's attempt does, until None comes."""
    from evaluators.base import ScenarioSpec, default_environments, load_plugins
    from evaluators.runner import effective_settings
    from evaluators.webui import env, target_store
    from evaluators.webui.baselines import page_files
    from evaluators.webui.parsing import CodeWrite

    load_plugins(default_environments())  # plain Python: no Django app loads them here
    settings = effective_settings("webui", "global")
    stored_render = target_store.load
    scratch = Path(tempfile.mkdtemp(prefix="webui-worker-"))
    blank = scratch / "blank"
    blank.mkdir()
    (blank / "index.html").write_text("<!doctype html><body><p>ready</p></body>", encoding="utf-8")
    env.renderer().render_states(blank, [])  # a worker's Chromium is running before its attempts
    connection.send(env.renderer().browser_version())
    try:
        while (request := connection.recv()) is not None:
            run, page = request[0], Path(request[1])
            if run != "warm":
                env._target_cache.clear()  # the first attempt at the page in this process
            target_store.load = (lambda *_: None) if run == "rendered" else stored_render
            files = page_files(page, degrade=True)
            started = time.perf_counter()
            episode = env.WebUIEpisode(ScenarioSpec(env="webui", key=page.name, data={}, resource_path=page),
                                       settings)
            for kind, code in files.items():
                episode.step(CodeWrite(kind=kind, code=code))  # type: ignore[arg-type]
            score = episode.score()
            episode.score_details()
            episode.save_artifacts(scratch / f"{run}-{page.name}")
            episode.close()
            connection.send((score, time.perf_counter() - started))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class Worker:
    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child,), daemon=True)
        self.process.start()
        self.browser = str(self.connection.recv())

    def score(self, run: str, page: Path) -> tuple[float, float]:
        self.connection.send((run, str(page)))
        score, seconds = self.connection.recv()
        return float(score), float(seconds)

    def close(self) -> None:
        self.connection.send(None)
        self.process.join(timeout=60)


# ---------------------------------------------------------------------------------------------
# The run


def stored_pages(pages: list[Path], into: Path) -> list[Path]:
    """The pages copied as the import stores them, through the plug-in's import-time check."""
    from evaluators.base import StoredScenario, default_environments, get_plugin, load_plugins
    from evaluators.webui.resources import folder_hash

    load_plugins(default_environments())
    stored = []
    for page in pages:
        content = folder_hash(page)
        folder = into / f"{content[:16]}-{page.name}"
        shutil.copytree(page, folder)
        stored.append(StoredScenario(key=page.name, path=folder, content_hash=content, data={}, tags={}))
    for line in get_plugin("webui").check_scenarios(stored, workers=2, recheck=True, store=lambda check: None):
        print(line, file=sys.stderr)
    return [scenario.path for scenario in stored]


def reply_folder(page: Path, into: Path) -> Path:
    from evaluators.tests.webui_pages import reply_folder as folder_with
    from evaluators.webui.baselines import page_files

    return folder_with(page, page_files(page, degrade=True), into)


def measure(code: Path, deps: Path | None, pages: list[Path], rounds: int) -> tuple[list[dict[str, Any]], str]:
    rows: list[dict[str, Any]] = []
    scratch = Path(tempfile.mkdtemp(prefix="webui-worker-vs-official-"))
    try:
        stored = stored_pages(pages, scratch / "scenarios")
        worker = Worker()
        try:
            for round_ in range(rounds):
                for page in stored:
                    name = page.name.split("-", 1)[1]
                    candidate = reply_folder(page, scratch / f"{round_}-{name}")
                    row: dict[str, Any] = {"page": name, "round": round_ + 1}
                    row["official_aes"], row["official"] = official_score(code, deps, page, candidate)
                    for run in PLATFORM_RUNS:
                        time.sleep(IDLE_BEFORE_ATTEMPT)
                        row[f"{run}_aes"], row[run] = worker.score(run, page)
                    rows.append(row)
                    print(f"{name}: official {row['official']:.1f} s; platform "
                          + ", ".join(f"{LABELS[run]} {row[run]:.2f} s" for run in PLATFORM_RUNS),
                          file=sys.stderr, flush=True)
        finally:
            worker.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows, worker.browser


def report(rows: list[dict[str, Any]], browser: str, loads: tuple[str, str]) -> str:
    lines = [f"# WebUI scoring: a platform worker process beside the official evaluator (Chromium {browser})", "",
             f"{datetime.date.today().isoformat()}, {os.cpu_count()} cores; load average {loads[0]} before, "
             f"{loads[1]} after. Candidates: each fixture page's degraded reply, scored one at a time "
             "in turn by the official evaluator (its call's time) and one platform worker process (each "
             f"attempt after {IDLE_BEFORE_ATTEMPT:g} s idle, as after a model call). Seconds per candidate; "
             "AES in %. *first, rendered*: the worker renders the target, as every first attempt did before "
             "the import stored target renders; *first*: it reads the stored one; *warm*: the target in memory.",
             "",
             "| page | official s | first, rendered s | first s | warm s | official AES | platform AES |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        same = all(f"{row[f'{run}_aes']:.2f}" == f"{row['platform_aes']:.2f}" for run in PLATFORM_RUNS)
        official_aes = "stopped" if row["official_aes"] is None else f"{row['official_aes']:.2f}"
        lines.append(f"| {row['page']} | {'≥ ' if row['official_aes'] is None else ''}{row['official']:.1f} | "
                     f"{row['rendered']:.2f} | {row['first']:.2f} | {row['warm']:.2f} | {official_aes} | "
                     f"{row['platform_aes']:.2f}{'' if same else ' (runs differ)'} |")
    official = statistics.median(row["official"] for row in rows)
    lines += ["", f"Median official: {official:.1f} s.", ""]
    for run in PLATFORM_RUNS:
        median = statistics.median(row[run] for row in rows)
        ratio = official / median
        goal = f" (goal ≥ {GOAL:g}×: {'met' if ratio >= GOAL else 'missed'})" if run == "first" else ""
        lines.append(f"- platform {LABELS[run]}: median {median:.2f} s, {ratio:.1f}× the official evaluator{goal}")
    agree = sum(row["official_aes"] is not None and f"{row['official_aes']:.2f}" == f"{row['platform_aes']:.2f}"
                for row in rows)
    lines += ["", f"AES equal to the second decimal: {agree} of {len(rows)} candidates."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_official_arguments(parser)
    parser.add_argument("--rounds", type=int, default=1, help="passes over the candidates (default 1)")
    parser.add_argument("--out", type=Path, help="write the report here as well")
    parser.add_argument("pages", nargs="*", help="page folder names (default: every fixture page)")
    args = parser.parse_args()
    code, deps = official_folders(parser, args)
    pages = chosen_pages(PAGES, args.pages)
    before = " ".join(f"{value:.1f}" for value in os.getloadavg())
    rows, browser = measure(code, deps, pages, args.rounds)
    for row in rows:
        row["platform_aes"] = row["first_aes"]
    text = report(rows, browser, (before, " ".join(f"{value:.1f}" for value in os.getloadavg())))
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
