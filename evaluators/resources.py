"""Scenario lists of a MageBench ``resources/`` directory, shared by every environment."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluators.base import ImportedScenario, ResourceError
from evaluators.checkout_files import loads_json

#: A scenario file's JSON content to the scenario's data and tags; raises ValueError, KeyError or
#: TypeError on a file that is not one.
ScenarioReader = Callable[[Any], tuple[dict[str, Any], dict[str, Any]]]


def read_list(path: Path) -> list[str]:
    """Scenario names (file or folder stems) from a MageBench list file."""
    try:
        entries = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResourceError(f"{path.name} cannot be read as JSON: {exc}") from None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ResourceError(f"{path.name} must be a JSON list of scenario paths")
    stems = [Path(entry.replace("\\", "/")).name for entry in entries]
    return [stem.rsplit(".", 1)[0] if "." in stem else stem for stem in stems]


def read_subsets(resources: Path, title: str) -> tuple[list[str], set[str]]:
    """``<title>_all.json`` in order and the ``<title>_mini.json`` names, which must all be in it."""
    all_names = read_list(resources / f"{title}_all.json")
    mini_path = resources / f"{title}_mini.json"
    mini = set(read_list(mini_path)) if mini_path.exists() else set()
    stray = sorted(mini - set(all_names))
    if stray:
        raise ResourceError(f"{title}_mini.json names scenarios missing from {title}_all.json: {', '.join(stray[:5])}")
    return all_names, mini


def read_listed_files(resources: Path, title: str, suffix: str, what: str) -> tuple[Path, list[str], set[str]]:
    """The ``<title>/`` folder, the listed names and the mini names, once every listed file exists there."""
    folder = resources / title
    all_names, mini_names = read_subsets(resources, title)
    missing = [name for name in all_names if not (folder / f"{name}{suffix}").is_file()]
    if missing:
        raise ResourceError(
            f"{len(missing)} of {len(all_names)} {title} {what} have no {suffix} in {folder}: {', '.join(missing[:5])}"
        )
    return folder, all_names, mini_names


def discover_json_files(resources: Path, title: str, what: tuple[str, str],
                        read: ScenarioReader) -> list[ImportedScenario]:
    """The scenarios of a ``<title>/`` folder of JSON files, one a file, in the lists' order: ``read``
    turns each file's content into its data and tags. ``what`` names a scenario and the scenarios in
    the refusals ("a level", "levels"); the content hash is the file's."""
    one, many = what
    folder, all_names, mini_names = read_listed_files(resources, title, ".json", many)
    found: list[ImportedScenario] = []
    for name in all_names:
        path = folder / f"{name}.json"
        raw = path.read_bytes()
        try:
            data, tags = read(loads_json(raw))
        except (KeyError, TypeError, ValueError) as exc:
            raise ResourceError(f"{path.name} is not {one}: {exc}") from None
        found.append(ImportedScenario(key=name, in_mini=name in mini_names, in_full=True, data=data, tags=tags,
                                      content_hash=hashlib.sha256(raw).hexdigest()))
    return found
