"""WebUI AES by the official evaluator beside the platform's, on the fixture pages.

For every fixture page and reply, the official evaluator (``env/utils/WebUI_utils.py``'s
``evaluate_different_interaction`` of an official MageBench checkout, as its WebUI environment
calls it: Selenium, Debian's chromedriver and Chromium, a 1920×1080 window) scores the reply's
folder against the page, in a subprocess of its own; the platform scores the same folder at its
default viewport (1920×937) and with the labelled paper-era variant (1920×1080). The replies are
those the metric card quotes: the page's own files from another folder ("perfect"), the files with
every style removed ("degraded"), and no index.html at all ("no index", which the official run
loads anyway and scores the browser's error page; the platform scores it 0 without rendering).
The page viewport the official browser gives is measured and reported.

The official checkout is never part of this repository: its folder is given on the command line,
with the folder its own dependencies were installed to (``pip install --target``).

    .venv/bin/python bench/webui_official_aes.py --official-code DIR [--official-deps DIR]
        [--out bench/reports/webui_official_aes.md] [--reply NAME ...] [PAGE ...]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
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
REPLIES = ("perfect", "degraded", "no index")
HEIGHTS = (937, 1080)


def official_aes(code: Path, deps: Path | None, page: Path, folder: Path) -> float | str:
    """The official evaluator's AES in %, or why there is none."""
    evaluation = evaluate_officially(code, deps, page, folder)
    return evaluation.failure if evaluation.aes is None else evaluation.aes


def reply_files(page: Path, reply: str) -> dict[str, str]:
    from evaluators.webui.baselines import page_files

    files = page_files(page, degrade=reply == "degraded")
    if reply == "no index":
        files.pop("html", None)
    return files


def platform_aes(renderer: Any, page: Path, folder: Path, reply: str, height: int) -> float:
    from evaluators.tests.webui_pages import aes
    from evaluators.webui.selenium_compat import load_actions

    if reply == "no index":
        return 0.0  # scored as the model's parse error, nothing rendered (a deviation on the card)
    actions = load_actions(page / "actions.py")
    target = renderer.render_states(page, actions, screenshots=False, viewport_height=height)
    copy = renderer.render_states(folder, actions, screenshots=False, viewport_height=height)
    return 100.0 * aes(target, copy, False)


def measure(code: Path, deps: Path | None, pages: list[Path], replies: list[str]) -> tuple[list[dict[Any, Any]], str]:
    from evaluators.tests.webui_pages import reply_folder
    from evaluators.webui.render import PageRenderer

    rows: list[dict[Any, Any]] = []
    scratch = Path(tempfile.mkdtemp(prefix="webui-official-aes-"))
    try:
        with PageRenderer() as renderer:
            for page in pages:
                for reply in replies:
                    started = time.monotonic()
                    folder = reply_folder(page, reply_files(page, reply), scratch / f"{page.name}-{reply}")
                    row: dict[Any, Any] = {"page": page.name, "reply": reply,
                                           "official": official_aes(code, deps, page, folder)}
                    for height in HEIGHTS:
                        row[height] = platform_aes(renderer, page, folder, reply, height)
                    rows.append(row)
                    print(f"{page.name} / {reply}: {row['official']} in {time.monotonic() - started:.0f} s",
                          file=sys.stderr, flush=True)
            chromium = renderer.browser_version
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows, chromium


def _cell(value: float | str) -> str:
    return f"{value:.2f}" if isinstance(value, float) else value


def report(rows: list[dict[Any, Any]], chromium: str, viewport: str) -> str:
    lines = [f"# WebUI AES: the official evaluator and the platform (Chromium {chromium})", "",
             f"Official: {viewport}.", "",
             "AES in %. Platform: the default 1920×937 viewport and the labelled variant",
             "webui_viewport_1080=true; a reply without index.html scores 0 on the platform (a deviation on",
             "the metric card). *same*: equal to the second decimal.", "",
             "| page | reply | official | platform 937 | same | platform 1080 | same |",
             "|---|---|---:|---:|:---:|---:|:---:|"]
    for row in rows:
        cells = [row["page"], row["reply"], _cell(row["official"])]
        for height in HEIGHTS:
            same = isinstance(row["official"], float) and f"{row['official']:.2f}" == f"{row[height]:.2f}"
            cells += [_cell(row[height]), "yes" if same else "no"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for reply in sorted({row["reply"] for row in rows}, key=REPLIES.index):
        scored = [row for row in rows if row["reply"] == reply and isinstance(row["official"], float)]
        counts = [sum(f"{row['official']:.2f}" == f"{row[height]:.2f}" for row in scored) for height in HEIGHTS]
        lines.append(f"{reply}: official scores {len(scored)} of {sum(r['reply'] == reply for r in rows)}; "
                     f"equal to the platform's at 937: {counts[0]}, at 1080: {counts[1]}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_official_arguments(parser)
    parser.add_argument("--out", type=Path, help="write the report here as well")
    parser.add_argument("--reply", action="append", choices=REPLIES, help="only this reply (repeatable)")
    parser.add_argument("pages", nargs="*", help="page folder names (default: every fixture page)")
    args = parser.parse_args()
    code, deps = official_folders(parser, args)
    pages = chosen_pages(PAGES, args.pages)
    from bench._official.runs import official_viewport

    viewport = official_viewport(code, deps, pages[0] / "index.html")
    rows, chromium = measure(code, deps, pages, args.reply or list(REPLIES))
    text = report(rows, chromium, viewport)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
