"""Validating and parsing uploaded model outputs, without touching the database or the disk.

Two formats are accepted:

* a zip of the official MageBench output directory as the harness writes it
  (``submissions.official_layout``): one ``<scenario>_r<repeat>/`` folder per run, optionally
  wrapped in one top-level folder, each with an ``eval.json`` and the model's replies
  (``output.txt`` or ``output_<k>.txt``); the platform's own ``replies.json`` / ``actions.json``
  and, where the plug-in declares ``code_files`` (the files a model writes), those files are
  accepted in their place (``archive``, ``run_folders``);
* JSONL, one object per run, described by ``static/schemas/upload-jsonl-v1.schema.json``
  (``jsonl``).

Self-reported scores are returned on the platform's scale: an official ``result`` on another
scale (the plug-in's ``result_scale``) is converted; JSONL ``score`` values are on the platform's
scale already.

Every problem of a file is collected before anything is returned: the caller gets either all the
runs or an :class:`UploadError` listing everything to fix, never a partial result.
"""
from __future__ import annotations

from submissions.uploads.archive import RATIO_CHECK_MIN_BYTES, parse_zip
from submissions.uploads.jsonl import SCHEMA_PATH, parse_jsonl
from submissions.uploads.problems import Problem, UploadError
from submissions.uploads.runs import UploadedRun, UploadLimits, runs_to_replies
from submissions.uploads.service import parse_upload

__all__ = [
    "RATIO_CHECK_MIN_BYTES",
    "SCHEMA_PATH",
    "Problem",
    "UploadError",
    "UploadLimits",
    "UploadedRun",
    "parse_jsonl",
    "parse_upload",
    "parse_zip",
    "runs_to_replies",
]
