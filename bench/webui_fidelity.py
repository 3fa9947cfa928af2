"""WebUI scoring fidelity: what each official-behaviour choice changes, measured on the fixture pages.

For every fixture page it renders the target and three replies (the page's own files = a perfect
copy; the page without any style = "degraded"; the page with every id renamed, so scripted actions
cannot find their elements = "renamed ids") from another folder, as an attempt would, and reports:

* AES with the official rule (every target element in every state) against the labelled variant
  that leaves out elements an action did not change (``webui_exclude_unchanged``);
* AES with and without a screenshot of every state (must be identical);
* AES with boxes measured as chromedriver's element.rect reports them (layout sizes) against
  boxes sized by getBoundingClientRect (what the platform used before);
* the targets compared on url(...) values (they never equal in another folder).

    .venv/bin/python bench/webui_fidelity.py [--out bench/reports/webui_fidelity.md] [PAGE ...]
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGES = ROOT / "fixtures" / "magebench" / "resources" / "WebUI"
REPLIES = ("perfect", "degraded", "renamed ids")
_ID = re.compile(r"""\bid=(["'])""")


def reply_files(page: Path, reply: str) -> dict[str, str]:
    from evaluators.webui.baselines import page_files

    files = page_files(page, degrade=reply == "degraded")
    if reply == "renamed ids":
        files["html"] = _ID.sub(r"id=\1renamed-", files["html"])
    return files


def write_reply(page: Path, reply: str, into: Path) -> Path:
    """The episode's folder: the page folder without its three files, then the reply's files."""
    folder = into / "page"
    shutil.copytree(page, folder)
    for name in ("index.html", "style.css", "script.js"):
        (folder / name).unlink(missing_ok=True)
    names = {"html": "index.html", "css": "style.css", "javascript": "script.js"}
    for kind, code in reply_files(page, reply).items():
        (folder / names[kind]).write_text(code, encoding="utf-8")
    return folder


def aes(target: Any, generated: Any, *, exclude: bool) -> float:
    from evaluators.webui.aes import score_page
    from evaluators.webui.elements import PageState

    states = list(generated.states) if not generated.load_error else []
    for state in target.states[len(states):]:
        states.append(PageState(name=state.name, elements=[]))
    doms = [state.dom for state in target.states]
    return 100.0 * score_page(target.states, states, target_dom=doms, exclude_unchanged=exclude).aes


def measure(pages: list[Path]) -> tuple[list[dict[str, Any]], str]:
    from evaluators.webui.page_check import url_valued_targets
    from evaluators.webui.render import PageRenderer
    from evaluators.webui.selenium_compat import load_actions

    rows = []
    chromium = ""
    scratch = Path(tempfile.mkdtemp(prefix="webui-fidelity-"))
    try:
        with PageRenderer() as official, PageRenderer(geometry="bounding-box") as boxes:
            for page in pages:
                started = time.monotonic()
                actions = load_actions(page / "actions.py")
                target = {"shots": official.render_states(page, actions, screenshots=True),
                          "plain": official.render_states(page, actions, screenshots=False),
                          "bbox": boxes.render_states(page, actions, screenshots=False)}
                row: dict[str, Any] = {"page": page.name, "url_properties": url_valued_targets(target["plain"].states)}
                for index, reply in enumerate(REPLIES):
                    folder = write_reply(page, reply, scratch / f"{page.name}-{index}")
                    shots = official.render_states(folder, actions, screenshots=True)
                    plain = official.render_states(folder, actions, screenshots=False)
                    bbox = boxes.render_states(folder, actions, screenshots=False)
                    row[reply] = {
                        "official": aes(target["shots"], shots, exclude=False),
                        "exclude": aes(target["shots"], shots, exclude=True),
                        "official_plain": aes(target["plain"], plain, exclude=False),
                        "exclude_plain": aes(target["plain"], plain, exclude=True),
                        "bbox": aes(target["bbox"], bbox, exclude=False),
                        "same_dom": [s.dom for s in shots.states] == [s.dom for s in plain.states],
                    }
                row["seconds"] = time.monotonic() - started
                rows.append(row)
                print(f"{page.name}: done in {row['seconds']:.0f} s", file=sys.stderr, flush=True)
            chromium = official.browser_version
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows, chromium


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def report(rows: list[dict[str, Any]], chromium: str) -> str:
    from evaluators.webui.results import VIEWPORT

    lines = [f"# WebUI scoring fidelity on the fixture pages (Chromium {chromium}, viewport 1920×{VIEWPORT['height']})",
             "",
             "AES in %. *official*: every target element in every state (the default); *exclude*: the labelled",
             "variant webui_exclude_unchanged=true; *no shots*: the same without screenshots; *bbox*: boxes sized",
             "by getBoundingClientRect instead of chromedriver's layout sizes.", ""]
    for reply in REPLIES:
        lines += [f"## Reply: {reply}", "",
                  "| page | official | exclude | Δ exclude | official, no shots | exclude, no shots | bbox | Δ bbox |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for row in rows:
            r = row[reply]
            lines.append(f"| {row['page']} | {r['official']:.2f} | {r['exclude']:.2f} "
                         f"| {r['exclude'] - r['official']:+.2f} | {r['official_plain']:.2f} "
                         f"| {r['exclude_plain']:.2f} | {r['bbox']:.2f} "
                         f"| {r['bbox'] - r['official']:+.2f} |")
        values = {key: _mean([row[reply][key] for row in rows]) for key in
                  ("official", "exclude", "official_plain", "exclude_plain", "bbox")}
        lines.append(f"| **mean** | {values['official']:.2f} | {values['exclude']:.2f} "
                     f"| {values['exclude'] - values['official']:+.2f} | {values['official_plain']:.2f} "
                     f"| {values['exclude_plain']:.2f} | {values['bbox']:.2f} "
                     f"| {values['bbox'] - values['official']:+.2f} |")
        lines.append("")
    same = all(row[reply]["same_dom"] for row in rows for reply in REPLIES)
    lines.append(f"Screenshots leave every state's DOM unchanged: {'yes' if same else 'NO'}.")
    affected = [row["page"] for row in rows if row["url_properties"]]
    lines.append("Pages with targets compared on url(...) values: "
                 + (", ".join(affected) if affected else "none") + ".")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", help="fixture page names (default: all)")
    parser.add_argument("--out", type=Path, help="also write the Markdown report here")
    args = parser.parse_args()
    pages = [PAGES / name for name in args.pages] if args.pages else sorted(
        p for p in PAGES.iterdir() if (p / "index.html").exists())
    rows, chromium = measure(pages)
    text = report(rows, chromium)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
