"""Paths as visitors see them: relative to the data directory, never where the server keeps them.

Error messages, trajectories and browser traces quote files (a scenario's actions.py, the folder a
WebUI page was rendered in). Written as they are, they would tell anyone how the server is laid
out. ``shown`` rewrites every place registered here, and the platform's own temporary folders, to
a relative form; the site registers its folders once at start-up (evaluators/apps.py).
"""
from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

#: Prefix of every temporary folder the platform makes (WebUI pages, page checks, test data).
TEMP_PREFIX = "magebench-"

_roots: list[tuple[str, str]] = []
_pattern: re.Pattern[str] | None = None


@cache
def _temp_spellings() -> tuple[str, ...]:
    return tuple(sorted(_spellings(Path(tempfile.gettempdir())), key=len, reverse=True))


def _spellings(path: Path) -> set[str]:
    spellings = {str(path)}
    with contextlib.suppress(OSError):
        spellings.add(str(path.resolve()))
    return {spelling.rstrip("/") for spelling in spellings if spelling.rstrip("/")}


def show_paths_relative_to(roots: Iterable[tuple[Path, str]]) -> None:
    """Register folders and how each is shown: ``(data_dir, "")`` shows ``<data_dir>/a/b`` as ``a/b``,
    ``(scenario_root, "scenarios")`` as ``scenarios/a/b``."""
    global _pattern
    for path, shown_as in roots:
        for spelling in _spellings(Path(path)):
            if spelling not in (root for root, _ in _roots):
                _roots.append((spelling, shown_as.strip("/")))
    _pattern = None


def _compiled() -> re.Pattern[str]:
    global _pattern
    if _pattern is None:
        # Longest first, so a folder inside another is matched as itself; a root ends at a path
        # boundary, so /data does not swallow the start of /database.
        roots = sorted({root for root, _ in _roots}, key=len, reverse=True)
        temp = [re.escape(spelling) + "/" + re.escape(TEMP_PREFIX) + r"[\w.-]*" for spelling in _temp_spellings()]
        alternatives = [re.escape(root) for root in roots] + temp
        _pattern = re.compile(r"(file://)?(" + "|".join(alternatives) + r")(?![\w.-])(/?)")
    return _pattern


def _replacement(match: re.Match[str]) -> str:
    url, root, slash = match.group(1) or "", match.group(2), match.group(3)
    shown_as = dict(_roots).get(root, "")
    if url:
        # A file:// URL stays a URL, rooted where the folder was: file:///tmp/magebench-x/page/a.css
        # reads file:///page/a.css.
        return "file:///" + (shown_as + slash if shown_as else "")
    if shown_as:
        return shown_as + slash
    return "" if slash else "."


def _mentions_a_root(text: str) -> bool:
    # Substring tests are far cheaper than the expression on a long trajectory that quotes none.
    temp = [spelling + "/" + TEMP_PREFIX for spelling in _temp_spellings()]
    return any(root in text for root, _ in _roots) or any(prefix in text for prefix in temp)


def shown(text: str) -> str:
    """``text`` with every registered folder (and every platform temporary folder) made relative.

    A file:// URL elsewhere in the temporary directory (a page reaching out of its folder with
    ``../``) is rooted at that directory, as the folder itself is: file:///tmp/x.png reads file:///x.png.
    """
    if not text:
        return text
    if _mentions_a_root(text):
        text = _compiled().sub(_replacement, text)
    for spelling in _temp_spellings():
        text = text.replace(f"file://{spelling}/", "file:///")
    return text


def shown_in(value: Any) -> Any:
    """``shown`` applied to every string inside a JSON-like value (dicts, lists, strings)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown_in(key): shown_in(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown_in(item) for item in value]
    return value
