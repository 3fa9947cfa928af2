"""Reading WebUI pages from a MageBench ``resources/`` directory (official layout).

``WebUI_all.json`` / ``WebUI_mini.json`` list page folders (names may hold spaces and CJK
characters, and are \\u-escaped in the JSON). Each folder holds the annotated target
``index.html``, its style and script, assets, ``tasks.md`` with screenshots under ``_images/``,
and ``actions.py``. The actions files are Python and run when a page is evaluated, so only a
directory an administrator names is imported, never an upload.
"""
from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from evaluators.base import ImportedScenario, ResourceError
from evaluators.checkout_files import TooDeep, parse_python
from evaluators.resources import read_subsets

#: Files a page needs; a page without actions.py has no interactions (one official page, Hoodie3).
REQUIRED = ("index.html", "tasks.md")


def folder_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def action_names(actions_file: Path) -> list[str]:
    """Names in the module-level ``actions`` list, read without running the file."""
    if not actions_file.exists():
        return []
    try:
        tree = parse_python(actions_file.read_text(encoding="utf-8"), actions_file.name)
    except TooDeep as exc:
        raise ResourceError(f"{actions_file}: cannot be read as data: {exc}") from None
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        raise ResourceError(f"{actions_file} is not valid Python: {exc}") from None
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "actions" for t in node.targets):
            if not isinstance(node.value, ast.List):
                raise ResourceError(f"{actions_file}: 'actions' must be a list of function names")
            names = [elt.id for elt in node.value.elts if isinstance(elt, ast.Name)]
    return names


def discover_webui(resources: Path, *, verify: bool = True) -> list[ImportedScenario]:
    folder = resources / "WebUI"
    all_names, mini = read_subsets(resources, "WebUI")
    problems = []
    for name in all_names:
        missing = [f for f in REQUIRED if not (folder / name / f).is_file()]
        if missing:
            problems.append(f"{name} (no {', '.join(missing)})")
    if problems:
        raise ResourceError(f"{len(problems)} WebUI page(s) are incomplete: {'; '.join(problems[:5])}")
    found = []
    for name in all_names:
        page = folder / name
        actions = action_names(page / "actions.py")
        warnings = [] if (page / "actions.py").exists() else [f"{name}: no actions.py, only the initial page is scored"]
        screenshots = sorted(p.name for p in (page / "_images").glob("*.png")) if (page / "_images").is_dir() else []
        found.append(ImportedScenario(
            key=name, in_mini=name in mini, in_full=True,
            data={"page": name, "actions": actions, "screenshots": screenshots},
            tags={"interactions": len(actions), "has_script": (page / "script.js").exists()},
            content_hash=folder_hash(page), resource_file=page, warnings=warnings,
        ))
    return found
