"""What the viewport height changes: the fixture pages scored at 1920×937 and at 1920×1080.

937 is what the official harness's 1920×1080 window leaves to the page under today's headless
Chromium (the platform's default); 1080 is the paper-era viewport (``webui_viewport_1080``).
Each page's target and its replies are rendered at the same height, as one evaluation renders
them; the replies are a perfect copy (the page's own files, from another folder) and a degraded
copy (every style removed).

    .venv/bin/python bench/webui_viewport.py [--out bench/reports/webui_viewport.md] [PAGE ...]
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

PAGES = ROOT / "fixtures" / "magebench" / "resources" / "WebUI"
HEIGHTS = (937, 1080)
REPLIES = ("perfect", "degraded")


def measure(pages: list[Path]) -> tuple[list[dict[Any, Any]], str]:
    from evaluators.tests.webui_pages import aes, reply_folder
    from evaluators.webui.baselines import page_files
    from evaluators.webui.render import PageRenderer
    from evaluators.webui.selenium_compat import load_actions

    rows: list[dict[Any, Any]] = []
    scratch = Path(tempfile.mkdtemp(prefix="webui-viewport-"))
    try:
        with PageRenderer() as renderer:
            for page in pages:
                started = time.monotonic()
                actions = load_actions(page / "actions.py")
                row: dict[Any, Any] = {"page": page.name}
                for reply in REPLIES:
                    folder = reply_folder(page, page_files(page, degrade=reply == "degraded"),
                                          scratch / f"{page.name}-{reply}")
                    for height in HEIGHTS:
                        target = renderer.render_states(page, actions, screenshots=False, viewport_height=height)
                        copy = renderer.render_states(folder, actions, screenshots=False, viewport_height=height)
                        row[(reply, height)] = 100.0 * aes(target, copy, False)
                print(f"{page.name}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
                rows.append(row)
            chromium = renderer.browser_version
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows, chromium


def report(rows: list[dict[Any, Any]], chromium: str) -> str:
    lines = [f"# WebUI scores at a 1920×937 and a 1920×1080 viewport (Chromium {chromium})", "",
             "AES in %, official rule; target and reply rendered at the same height. 937 is the default (the",
             "official evaluator's viewport today), 1080 the labelled variant webui_viewport_1080=true.", "",
             "| page | perfect 937 | perfect 1080 | degraded 937 | degraded 1080 | Δ degraded |",
             "|---|---:|---:|---:|---:|---:|"]
    means = {key: sum(row[key] for row in rows) / len(rows) for key in rows[0] if key != "page"}
    for name, values in [*((row["page"], row) for row in rows), ("**mean**", means)]:
        lines.append(f"| {name} | {values[('perfect', 937)]:.2f} | {values[('perfect', 1080)]:.2f} "
                     f"| {values[('degraded', 937)]:.2f} | {values[('degraded', 1080)]:.2f} "
                     f"| {values[('degraded', 1080)] - values[('degraded', 937)]:+.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the report here as well")
    parser.add_argument("pages", nargs="*", help="page folder names (default: every fixture page)")
    args = parser.parse_args()
    pages = ([PAGES / name for name in args.pages] if args.pages
             else sorted(p for p in PAGES.iterdir() if (p / "index.html").exists()))
    text = report(*measure(pages))
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
