"""WebUI evaluation cost: AES per fixture page against a bare Chromium load + screenshot.

Prints, in one run: for every fixture page the time of a bare load + screenshot in a fresh
context, the time of a full AES evaluation of the page's own code (generated page rendered through
every scripted action, screenshots, scoring; target states cached as in a worker), the pages'
own scripted sleeps (time.sleep in actions.py, part of the official protocol), and the ratios;
then pages per minute with one and with two worker processes.

    .venv/bin/python bench/webui_aes.py
"""
from __future__ import annotations

import ast
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGES = ROOT / "fixtures" / "magebench" / "resources" / "WebUI"


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


def evaluate(page: Path) -> float:
    from evaluators.base import ScenarioSpec
    from evaluators.settings import EvaluationSettings
    from evaluators.webui.baselines import page_files
    from evaluators.webui.env import WebUIEpisode
    from evaluators.webui.parsing import CodeKind, CodeWrite

    settings = EvaluationSettings.from_mapping({"resolution": 640, "trace": False}, "webui", "global", platform=True)
    episode = WebUIEpisode(ScenarioSpec(env="webui", key=page.name, data={}, resource_path=page), settings)
    for kind, code in page_files(page, degrade=False).items():
        episode.step(CodeWrite(cast(CodeKind, kind), code))
    started = time.perf_counter()
    episode.evaluate()
    elapsed = time.perf_counter() - started
    episode.close()
    return elapsed


def bare_load(page: Path, browser) -> float:
    started = time.perf_counter()
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    tab = context.new_page()
    tab.goto((page / "index.html").as_uri())
    tab.screenshot()
    context.close()
    return time.perf_counter() - started


def _worker(queue, results) -> None:
    sys.path.insert(0, str(ROOT))
    from evaluators.webui.env import render_target

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


def main() -> None:
    from playwright.sync_api import sync_playwright

    from evaluators.browser import launch_chromium
    from evaluators.webui.env import render_target

    pages = sorted(p for p in PAGES.iterdir() if (p / "index.html").exists())
    with sync_playwright() as p:
        browser = launch_chromium(p)
        bare_load(pages[0], browser)  # warm-up
        bare = {page.name: min(bare_load(page, browser) for _ in range(3)) for page in pages}
        browser.close()
    print(f"{'page':<24}{'bare load+shot':>16}{'AES eval':>10}{'sleeps':>8}{'ratio':>8}{'ratio w/o sleeps':>18}")
    ratios, net = [], []
    for page in pages:
        render_target(page)
        aes_time = evaluate(page)
        sleeps = scripted_sleep(page / "actions.py")
        ratios.append(aes_time / bare[page.name])
        net.append(max(aes_time - sleeps, 0.0) / bare[page.name])
        print(f"{page.name:<24}{bare[page.name]:>15.3f}s{aes_time:>9.2f}s{sleeps:>7.1f}s{ratios[-1]:>8.1f}{net[-1]:>18.1f}")
    print(f"mean ratio AES / bare load: {sum(ratios) / len(ratios):.1f}x "
          f"({sum(net) / len(net):.1f}x without the pages' own sleeps)")
    names = [p.name for p in pages] * 2
    one = throughput(1, names)
    two = throughput(2, names)
    print(f"pages/minute: {one:.1f} with 1 worker, {two:.1f} with 2 workers ({two / one:.2f}x)")


if __name__ == "__main__":
    tempfile.tempdir = None
    main()
