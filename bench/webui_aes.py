"""WebUI evaluation cost: AES per fixture page against a bare Chromium load + screenshot.

Prints, in one run: for every fixture page the time of a bare load + screenshot in a fresh
context, the time of a full AES evaluation of the page's own code (generated page rendered through
every scripted action, screenshots, scoring; target states cached as in a worker) on the browser's
virtual clock (the default) and in real time (``webui_real_time``), the pages' own scripted sleeps
(time.sleep in actions.py, part of the official protocol), and the ratios to the bare load, with
their mean next to the goal; then pages per minute with one and with two worker processes (virtual
clock). The bare and virtual times are the best of ``REPEATS`` runs, so that a busy machine inflates
them less; the real-time one is one run (its sleeps dominate it).

    .venv/bin/python bench/webui_aes.py
"""
from __future__ import annotations

import ast
import datetime
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGES = ROOT / "fixtures" / "magebench" / "resources" / "WebUI"
REPEATS = 3
#: The goal: a mean over fixture pages of at most this many bare loads + screenshots.
GOAL_RATIO = 3.0


def scripted_sleep(actions_file: Path) -> float:
    """Seconds of time.sleep in the functions listed in ``actions`` (constant arguments)."""
    tree = ast.parse(actions_file.read_text(encoding="utf-8"))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    listed: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "actions" for t in node.targets):
            assert isinstance(node.value, ast.List | ast.Tuple), "actions is a list of names"
            listed = [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    total = 0.0
    for name in listed:
        for call in ast.walk(functions[name]):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "sleep"
                    and call.args and isinstance(call.args[0], ast.Constant)
                    and isinstance(call.args[0].value, int | float)):
                total += float(call.args[0].value)
    return total


def evaluate(page: Path, real_time: bool = False) -> float:
    from evaluators.base import ScenarioSpec
    from evaluators.settings import EvaluationSettings
    from evaluators.webui.baselines import page_files
    from evaluators.webui.env import WebUIEpisode
    from evaluators.webui.options import REAL_TIME_SETTING
    from evaluators.webui.parsing import CodeKind, CodeWrite

    settings = EvaluationSettings.from_mapping({"resolution": 640, "trace": False, REAL_TIME_SETTING: real_time},
                                               "webui", "global", platform=True)
    episode = WebUIEpisode(ScenarioSpec(env="webui", key=page.name, data={}, resource_path=page), settings)
    for kind, code in page_files(page, degrade=False).items():
        episode.step(CodeWrite(cast(CodeKind, kind), code))
    started = time.perf_counter()
    episode.evaluate()
    elapsed = time.perf_counter() - started
    episode.close()
    return elapsed


def bare_load(page: Path, browser) -> float:
    from evaluators.webui.results import VIEWPORT

    started = time.perf_counter()
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.goto((page / "index.html").as_uri())
    tab.screenshot()
    context.close()
    return time.perf_counter() - started


def _load_plugins() -> None:
    from evaluators.base import default_environments, load_plugins

    load_plugins(default_environments())  # plain Python: no Django app loads them here


def _worker(queue, results) -> None:
    sys.path.insert(0, str(ROOT))
    from evaluators.webui.env import render_target

    _load_plugins()
    while True:
        name = queue.get()
        if name is None:
            return
        render_target(PAGES / name)  # a worker renders each target once, then reuses it
        results.put(evaluate(PAGES / name))


def throughput(workers: int, names: list[str]) -> float:
    # Fresh interpreters: a forked child would inherit this process's running Playwright.
    ctx = multiprocessing.get_context("spawn")
    queue, results = ctx.Queue(), ctx.Queue()
    for name in names:
        queue.put(name)
    for _ in range(workers):
        queue.put(None)
    processes = [ctx.Process(target=_worker, args=(queue, results)) for _ in range(workers)]
    for process in processes:
        process.start()
    started = None
    for _ in names:
        results.get()
        started = started or time.perf_counter()  # the first result marks the end of start-up
    finished = time.perf_counter()
    for process in processes:
        process.join()
    # Throughput in steady state: results after the first, over the time they took.
    assert started is not None
    return (len(names) - 1) / ((finished - started) / 60)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main() -> None:
    from playwright.sync_api import sync_playwright

    from evaluators.browser import launch_chromium
    from evaluators.webui.env import render_target

    _load_plugins()
    load = os.getloadavg()
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start; bare and virtual: best of {REPEATS} runs")
    pages = sorted(p for p in PAGES.iterdir() if (p / "index.html").exists())
    print(f"{'page':<24}{'bare':>8}{'AES virtual':>13}{'AES real':>10}{'sleeps':>8}"
          f"{'ratio virtual':>15}{'ratio real':>12}")
    virtual, real, bare = [], [], {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        bare_load(pages[0], browser)  # warm-up
        for page in pages:
            render_target(page, "virtual")
            render_target(page, "real")
            # bare loads and AES runs taken in turn, so that both see the same load on a shared machine
            runs = [(bare_load(page, browser), evaluate(page)) for _ in range(REPEATS)]
            bare[page.name] = min(run[0] for run in runs)
            # real time is dominated by the sleeps it waits out: one run says enough
            times = {"virtual": min(run[1] for run in runs), "real": evaluate(page, real_time=True)}
            sleeps = scripted_sleep(page / "actions.py")
            virtual.append(times["virtual"] / bare[page.name])
            real.append(times["real"] / bare[page.name])
            print(f"{page.name:<24}{bare[page.name]:>7.3f}s{times['virtual']:>12.2f}s{times['real']:>9.2f}s"
                  f"{sleeps:>7.1f}s{virtual[-1]:>14.1f}x{real[-1]:>11.1f}x")
        browser.close()
    load = os.getloadavg()
    print(f"mean ratio AES / bare load: {_mean(virtual):.1f}x on the virtual clock, {_mean(real):.1f}x in real time "
          f"(goal: <= {GOAL_RATIO:g}x bare load + screenshot, mean over fixture pages: "
          f"{'met' if _mean(virtual) <= GOAL_RATIO else 'missed'})")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end of the per-page times")
    names = [p.name for p in pages] * 2
    one = throughput(1, names)
    two = throughput(2, names)
    print(f"pages/minute: {one:.1f} with 1 worker, {two:.1f} with 2 workers ({two / one:.2f}x)")


if __name__ == "__main__":
    tempfile.tempdir = None
    main()
