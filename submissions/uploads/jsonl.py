"""The JSONL format: one object per run, validated against its published schema, and its ``code``
against the environment's own part of it (``EnvironmentPlugin.upload_code_schema``)."""
from __future__ import annotations

import functools
import json
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from evaluators.base import all_plugins, get_plugin
from submissions.uploads.context import UploadContext, check_line_count, check_upload_size
from submissions.uploads.json_values import finite, json_error, json_type, loads, shorten
from submissions.uploads.line_shape import plainly_valid
from submissions.uploads.problems import Problem, UploadError
from submissions.uploads.runs import DEFAULT_LIMITS, UploadedRun, UploadLimits

SCHEMA_PATH: Path = Path(__file__).resolve().parents[2] / "static" / "schemas" / "upload-jsonl-v1.schema.json"

_OUTPUT_KEYS = ("replies", "actions", "code")


def parse_jsonl(data: bytes, *, env: str, flow: str, scenarios: Collection[str], max_repeats: int | None = None,
                limits: UploadLimits = DEFAULT_LIMITS) -> list[UploadedRun]:
    """Parse the JSONL format: one object per line, blank lines skipped."""
    context = UploadContext(env=env, flow=flow, scenarios=scenarios, max_repeats=max_repeats, limits=limits)
    check_upload_size(data, context)
    check_line_count(data, context)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_number = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UploadError([Problem(f"line {line_number}", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column "
                                                   f"{column})")]) from None
    text = text.removeprefix("\ufeff")  # editors on Windows write a byte-order mark

    runs: list[UploadedRun] = []
    entries = 0
    # Only "\n" separates lines: str.splitlines() would also split on characters JSON allows raw in strings.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        entries += 1
        where = f"line {number}"
        context.check_time(where)
        context.count_run(where)
        run = _parse_line(line, number, context)
        if run is not None:
            runs.append(run)
    if not entries:
        context.problems.add("upload", "the file contains no runs")
    context.problems.raise_if_any()
    return runs


@functools.lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@functools.lru_cache(maxsize=16)
def _schema_validator(schema_json: str) -> Draft202012Validator:
    # Keyed by the schema's text, not the environment: the registry may be loaded again with other plug-ins.
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def code_validator(env: str) -> Draft202012Validator:
    """The validator of a line's ``code`` object for ``env``: its plug-in's schema fragment."""
    return _schema_validator(json.dumps(get_plugin(env).upload_code_schema(), sort_keys=True))


def _schema_errors(value: dict[str, Any], context: UploadContext) -> list[tuple[str, Any]]:
    """(path, error) of every way the line breaks the published schema, then its code the environment's."""
    errors = [] if plainly_valid(value) else [(_json_path(error.absolute_path), error)
                                              for error in _validator().iter_errors(value)]
    if not errors and isinstance(value.get("code"), dict) and context.code_files:
        errors = [(_json_path(["code", *error.absolute_path]), error)
                  for error in code_validator(context.env).iter_errors(value["code"])]
    return sorted(errors, key=lambda pair: pair[0])


def _parse_line(line: str, number: int, context: UploadContext) -> UploadedRun | None:
    where = f"line {number}"
    try:
        value = loads(line)
    except (ValueError, RecursionError) as exc:
        context.problems.add(where, f"invalid JSON: {json_error(exc)}")
        return None
    if not isinstance(value, dict):
        context.problems.add(where, f"expected a JSON object, got {json_type(value)}")
        return None
    # Before the schema, whose check of a long list is the slow part: a list past the cap is not read.
    for key in ("replies", "actions"):
        if isinstance(value.get(key), list):
            context.count_replies(f"{where}: {key}", len(value[key]), what=key)

    errors = _schema_errors(value, context)
    for path, error in errors:
        context.problems.add(f"{where}: {path}" if path else where, _schema_message(error, value))
    if errors:
        return None

    scenario: str = value["scenario"]
    repeat = int(value["repeat"])
    ok = context.check_identity(where, scenario, repeat, place=f"on line {number}")
    if "code" in value and not context.code_files:
        coded = " or ".join(plugin.title for plugin in all_plugins() if plugin.code_files)
        context.problems.add(f"{where}: code", f"code is only accepted for {coded}, not for {context.env}; "
                                               f"give replies or actions")
        ok = False
    if "actions" in value and not context.accepts_actions:
        context.problems.add(f"{where}: actions",
                             f"actions are not accepted for {context.title}; give code or replies")
        ok = False
    self_score = value.get("score")
    if self_score is not None and not finite(self_score):
        context.problems.add(f"{where}: score", "must be a finite number")
        ok = False
    if not ok:
        return None

    run = UploadedRun(
        scenario=scenario, repeat=repeat,
        replies=tuple(value.get("replies", ())), actions=tuple(value.get("actions", ())),
        code=dict(value["code"]) if "code" in value else None,
        self_score=None if self_score is None else float(self_score),
        self_error=value.get("error", ""), source=where,
    )
    kind = next(key for key in _OUTPUT_KEYS if key in value)
    context.check_reply_lengths(f"{where}: {kind}", run)
    return run


def _schema_message(error: Any, instance: dict[str, Any]) -> str:
    if error.validator == "oneOf" and not error.absolute_path:
        present = [key for key in _OUTPUT_KEYS if key in instance]
        choices = "'replies', 'actions' or 'code'"
        if not present:
            return f"one of {choices} is required"
        return f"give only one of {choices}, not " + " and ".join(repr(key) for key in present)
    return shorten(error.message)


def _json_path(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text
