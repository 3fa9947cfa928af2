"""Page folders the WebUI tests render: a fixture page with a reply's files in place of its own."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import cast

from evaluators.webui.parsing import FILENAMES, CodeKind


def reply_folder(page: Path, files: dict[str, str], into: Path) -> Path:
    """The page folder an attempt writes its reply into (the target's three files replaced)."""
    folder = into / "page"
    shutil.copytree(page, folder)
    for name in FILENAMES.values():
        (folder / name).unlink(missing_ok=True)
    for kind, code in files.items():
        (folder / FILENAMES[cast(CodeKind, kind)]).write_text(code, encoding="utf-8")
    return folder
