"""The official harness's output folder: what it holds, on which scale it scores, how to write one.

microsoft/MageBench's ``main.py`` gives every run its folder
``<output-dir>/<scenario file name without extension>_r<repeat>/``; the flow writes there:

* ``eval.json`` with ``result`` (the official score), ``details`` and ``parsing_err`` (Global:
  whether no action was parsed; Online: how many turns had none);
* the model's replies: ``output.txt`` (Global: the one reply) or ``output_<loop>.txt`` (Online: one
  file per model call, numbered from 0);
* an environment whose runs are code (its plug-in's ``code_files``): the generated files, each
  only when a reply wrote it, beside a copy of the page folder's own files.

The runner and the environments write more that bears on no score (``res.txt`` beside the run
folders, ``output_video.mp4``, ``tmp.png``, ``output_progress.md``, ``out_images/``); uploads
ignore it.

Scales: each plug-in declares its official ``result``'s scale and range (``result_scale``,
``result_range``): most results are the platform's scores as they are; a fraction of 1 is shown
×100.
"""
from __future__ import annotations

import io
import json
import math
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.base import FLOW_GLOBAL, all_plugins, get_plugin

EVAL_FILE = "eval.json"
GLOBAL_REPLY_FILE = "output.txt"
ONLINE_REPLY_FILE = re.compile(r"^output_(?P<loop>[0-9]+)\.txt$")
#: Slack for a bound reached through floating-point sums.
_RANGE_SLACK = 1e-9


def code_file_names() -> dict[str, str]:
    """The file name of every upload key of code, over the environments whose runs are code."""
    return {key: name for plugin in all_plugins() for key, name in plugin.code_files}


def online_reply_file(loop: int) -> str:
    return f"output_{loop}.txt"


def run_folder_name(scenario: str, repeat: int) -> str:
    return f"{scenario}_r{repeat}"


def platform_score(env: str, result: float) -> float:
    """An official ``result`` on the platform's scale."""
    scale = get_plugin(env).result_scale
    # Rounded where scaled, so that a fraction written from a platform score reads back as that score.
    return float(result) if scale == 1.0 else round(float(result) * scale, 9)


def official_result(env: str, score: float) -> float:
    """A platform score as the official harness would write it in ``result``."""
    scale = get_plugin(env).result_scale
    return float(score) if scale == 1.0 else float(score) / scale


def result_problem(env: str, result: float) -> str:
    """Why ``result`` cannot be an official result of ``env``, or ""."""
    plugin = get_plugin(env)
    bounds = plugin.result_range
    if bounds is None or not math.isfinite(result):
        return ""
    low, high = bounds
    if low - _RANGE_SLACK <= result <= high + _RANGE_SLACK:
        return ""
    return (f"'result' is {result:g}, but the official {env} result is a fraction from {low:g} to {high:g} "
            f"(the platform shows it ×{plugin.result_scale:g})")


@dataclass(frozen=True)
class OfficialRun:
    """One run as the official harness leaves it in its folder."""

    scenario: str
    repeat: int
    flow: str
    replies: Sequence[str]
    result: float
    details: Any = None
    parsing_err: bool | int = False
    #: The code the model wrote, by the upload keys of its plug-in's ``code_files``; files never
    #: written are absent.
    page: Mapping[str, str] = field(default_factory=dict)
    #: Files the harness writes that bear on no score (videos, frames, the page folder's copy), by
    #: their path inside the run folder.
    extras: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def folder(self) -> str:
        return run_folder_name(self.scenario, self.repeat)

    def files(self) -> dict[str, bytes]:
        """The folder's files by their path inside it."""
        files: dict[str, bytes] = dict(self.extras)
        if self.flow == FLOW_GLOBAL:
            files[GLOBAL_REPLY_FILE] = (self.replies[-1] if self.replies else "").encode("utf-8")
        else:
            for loop, reply in enumerate(self.replies):
                files[online_reply_file(loop)] = reply.encode("utf-8")
        for key, name in code_file_names().items():
            if key in self.page:
                files[name] = self.page[key].encode("utf-8")
        report = {"result": self.result, "details": self.details, "parsing_err": self.parsing_err}
        files[EVAL_FILE] = json.dumps(report, indent=4, ensure_ascii=False).encode("utf-8")
        return files


def zip_runs(runs: Iterable[OfficialRun], *, top: str = "output", summary: bool = True) -> bytes:
    """A zip of an output directory holding ``runs`` (inside the folder ``top``, unless empty), with
    the runner's ``res.txt`` (the plain mean of the results) beside the run folders."""
    runs = list(runs)
    prefix = f"{top}/" if top else ""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for run in runs:
            for name, content in sorted(run.files().items()):
                archive.writestr(f"{prefix}{run.folder}/{name}", content)
        if summary and runs:
            archive.writestr(f"{prefix}res.txt", str(sum(run.result for run in runs) / len(runs)))
    return buffer.getvalue()


def official_run_from_trajectory(*, env: str, flow: str, scenario: str, repeat: int, trajectory: Mapping[str, Any],
                                 score: float, page_folder: Path | None = None) -> OfficialRun:
    """The folder the official harness would have written for a run the platform played.

    ``trajectory`` is the platform's ``trajectory.json``: every model call's reply becomes an
    output file, in call order. ``page_folder`` (an environment whose runs are code) is the
    folder whose copy the official environment leaves in the run folder.
    """
    calls = list(trajectory.get("calls") or [])
    replies = [str(call.get("reply") or "") for call in calls]
    parsing_err: bool | int
    if flow == FLOW_GLOBAL:
        # The official Global flow makes one call; its actions are the ones played.
        replies = replies[-1:]
        parsing_err = not (calls and calls[-1].get("parsed"))
    else:
        parsing_err = sum(1 for call in calls if not call.get("parsed"))
    details = trajectory.get("details") or {}
    extras: dict[str, bytes] = {}
    page: dict[str, str] = {}
    plugin = get_plugin(env)
    code_files = plugin.code_files
    if code_files:
        artefacts = trajectory.get("artifacts") or {}
        # A code artefact is named by its upload key or by its fence's language.
        keys = {**{key: key for key, _ in code_files}, **{fence: key for key, fence in plugin.upload_code_fences}}
        opening = code_files[0][0]
        for kind, code in (artefacts.get("code") or {}).items():
            key = keys.get(kind)
            if key is not None and not (key == opening and code == ""):  # an empty page is never written
                page[key] = code
        if page_folder is not None:
            extras.update(_page_copy(page_folder, targets={name for _, name in code_files}))
        extras["output_progress.md"] = b"# observation-1\n"
        official_details: Any = {"aes": details.get("aes"), "states": details.get("state_scores")}
    else:
        extras["output_video.mp4"] = b"\x00\x00\x00\x18ftypmp42"
        extras["tmp.png"] = b"\x89PNG\r\n\x1a\n"
        text = f"accumulated reward: {details.get('cumulative_reward', score)}"
        if "best_reward" in details:
            text += f"\nBest reward: {details['best_reward']}"
        official_details = [{"type": "text", "text": text}]
    return OfficialRun(scenario=scenario, repeat=repeat, flow=flow, replies=replies,
                       result=official_result(env, score), details=official_details, parsing_err=parsing_err,
                       page=page, extras=extras)


def _page_copy(page_folder: Path, *, targets: set[str]) -> dict[str, bytes]:
    """The page folder as the official environment copies it: without the target's own code files."""
    copied: dict[str, bytes] = {}
    for path in sorted(page_folder.rglob("*")):
        relative = path.relative_to(page_folder).as_posix()
        if path.is_file() and relative not in targets:
            copied[relative] = path.read_bytes()
    return copied
