"""What the viewport height changes: the fixture pages scored at 1920×1080 and at 1920×937.

1080 is the paper's viewport (the platform's default); 937 is what the official harness's
1920×1080 window leaves to the page under today's headless Chromium (``webui_viewport_937``).
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
HEIGHTS = (1080, 937)
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
    lines = [f"# WebUI scores at a 1920×1080 and a 1920×937 viewport (Chromium {chromium})", "",
             "AES in %, official rule; target and reply rendered at the same height.", "",
             "| page | perfect 1080 | perfect 937 | degraded 1080 | degraded 937 | Δ degraded |",
             "|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['page']} | {row[('perfect', 1080)]:.2f} | {row[('perfect', 937)]:.2f} "
                     f"| {row[('degraded', 1080)]:.2f} | {row[('degraded', 937)]:.2f} "
                     f"| {row[('degraded', 937)] - row[('degraded', 1080)]:+.2f} |")
    means = {key: sum(row[key] for row in rows) / len(rows) for key in rows[0] if key != "page"}
    lines.append(f"| **mean** | {means[('perfect', 1080)]:.2f} | {means[('perfect', 937)]:.2f} "
                 f"| {means[('degraded', 1080)]:.2f} | {means[('degraded', 937)]:.2f} "
                 f"| {means[('degraded', 937)] - means[('degraded', 1080)]:+.2f} |")
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
