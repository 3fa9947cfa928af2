"""Validating and parsing uploaded model outputs, without touching the database or the disk.

Two formats are accepted:

* a zip of the official MageBench output directory as the harness writes it
  (``submissions.official_layout``): one ``<scenario>_r<repeat>/`` folder per run, optionally
  wrapped in one top-level folder, each with an ``eval.json`` and the model's replies
  (``output.txt`` or ``output_<k>.txt``); the platform's own ``replies.json`` / ``actions.json``
  and, where the plug-in declares ``code_files`` (the files a model writes), those files are
  accepted in their place;
* JSONL, one object per run, described by ``static/schemas/upload-jsonl-v1.schema.json``.

Self-reported scores are returned on the platform's scale: an official ``result`` on another
scale (the plug-in's ``result_scale``) is converted; JSONL ``score`` values are on the platform's
scale already.

Every problem of a file is collected before anything is returned: the caller gets either all the
runs or an :class:`UploadError` listing everything to fix, never a partial result.
"""
from __future__ import annotations

import functools
import io
import json
import lzma
import math
import re
import stat
import zipfile
import zlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from jsonschema import Draft202012Validator

from evaluators.base import FLOW_GLOBAL, FLOWS, all_plugins, get_plugin
from submissions.official_layout import (
    EVAL_FILE,
    GLOBAL_REPLY_FILE,
    ONLINE_REPLY_FILE,
    online_reply_file,
    platform_score,
    result_problem,
)

SCHEMA_PATH: Path = Path(__file__).resolve().parent.parent / "static" / "schemas" / "upload-jsonl-v1.schema.json"

#: Below this uncompressed size a high compression ratio is harmless (and common for logs).
RATIO_CHECK_MIN_BYTES = 1024 * 1024

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_READ_CHUNK = 64 * 1024
_RUN_FOLDER = re.compile(r"^(?P<scenario>.+)_r(?P<repeat>[0-9]+)$")
_DRIVE_LETTER = re.compile(r"^[A-Za-z]:")
_OUTPUT_KEYS = ("replies", "actions", "code")
_CODE_FENCES = (("html", "html"), ("css", "css"), ("js", "javascript"))
#: Archive debris that desktop tools add; skipped when reading the layout (still counted in sizes).
_JUNK_FOLDERS = frozenset({"__MACOSX"})
_JUNK_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
_MAX_SHOWN_CHARS = 200


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an upload, and where."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class UploadError(ValueError):
    """An upload that cannot be used; ``problems`` lists everything found, in file order."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions cross process boundaries (task results); the default reduce would pass the
        # joined message back as ``problems``.
        return (type(self), (self.problems,))


@dataclass(frozen=True)
class UploadedRun:
    """The model outputs of one (scenario, repeat): replies, action names or the code it wrote."""

    scenario: str
    repeat: int
    replies: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    code: dict[str, str] | None = field(default=None, hash=False)
    self_score: float | None = None
    self_error: str = ""
    source: str = ""


@dataclass(frozen=True)
class UploadLimits:
    """Sizes an upload may reach; the zip limits hold for declared and for actually read sizes."""

    max_upload_bytes: int = 50 * 1024 * 1024
    max_member_bytes: int = 20 * 1024 * 1024
    max_total_bytes: int = 200 * 1024 * 1024
    max_members: int = 20_000
    max_ratio: float = 200.0
    max_reply_chars: int = 200_000
    #: Problems beyond this are counted, not listed, so a garbage file cannot produce a huge report.
    max_problems: int = 1000


class _Problems:
    def __init__(self, limit: int) -> None:
        self.items: list[Problem] = []
        self.limit = limit
        self.dropped = 0

    def add(self, where: str, message: str) -> None:
        if len(self.items) < self.limit:
            self.items.append(Problem(where, message))
        else:
            self.dropped += 1

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        problems = list(self.items)
        if self.dropped:
            problems.append(Problem("upload", f"{self.dropped} more problem(s) not listed"))
        raise UploadError(problems)


class _Context:
    """What every check needs: the evaluation the upload is for and the problems found so far."""

    def __init__(self, *, env: str, flow: str, scenarios: Collection[str], max_repeats: int | None,
                 limits: UploadLimits) -> None:
        if flow not in FLOWS:
            raise ValueError(f"unknown flow {flow!r}; known: {', '.join(FLOWS)}")
        self.env = env
        self.flow = flow
        plugin = get_plugin(env)
        self.title = plugin.title
        #: The files a run may carry as code instead of replies (empty: replies or actions only).
        self.code_files = plugin.code_files
        #: Whether runs may be given as action names (environments with an action vocabulary).
        self.accepts_actions = bool(plugin.ACTIONS)
        self.scenarios = frozenset(scenarios)
        self.max_repeats = max_repeats
        self.limits = limits
        self.problems = _Problems(limits.max_problems)
        self.seen: dict[tuple[str, int], str] = {}

    def check_identity(self, where: str, scenario: str, repeat: int, *, place: str) -> bool:
        """Scenario known, repeat in range, pair not seen before (``place`` names it in messages)."""
        ok = True
        if scenario not in self.scenarios:
            self.problems.add(where, f"unknown scenario {_shorten(repr(scenario))} (not in this subset)")
            ok = False
        if self.max_repeats is not None and repeat >= self.max_repeats:
            self.problems.add(where, f"repeat {repeat} is out of range: this evaluation has {self.max_repeats} "
                                     f"repeat(s), numbered 0 to {self.max_repeats - 1}")
            ok = False
        earlier = self.seen.get((scenario, repeat))
        if earlier is not None:
            self.problems.add(where, f"scenario {_shorten(repr(scenario))} repeat {repeat} already given {earlier}")
            ok = False
        else:
            self.seen[(scenario, repeat)] = place
        return ok

    def check_reply_lengths(self, where: str, run: UploadedRun, *, reply_names: list[str] | None = None) -> None:
        """Every reply within the limit; ``reply_names`` names each reply's own file (official folders)."""
        limit = self.limits.max_reply_chars
        if run.replies:
            for index, reply in enumerate(run.replies):
                if len(reply) > limit:
                    place = reply_names[index] if reply_names else f"{where}[{index}]"
                    self.problems.add(place, f"reply is {len(reply)} characters long, the limit is {limit}")
            return
        for reply in runs_to_replies(run, env=self.env, flow=self.flow):
            if len(reply) > limit:
                subject = "the code makes" if run.code is not None else "the actions make"
                self.problems.add(where, f"{subject} a reply of {len(reply)} characters, the limit is {limit}")
                return


def parse_upload(data: bytes, *, env: str, flow: str, scenarios: Collection[str], max_repeats: int | None = None,
                 limits: UploadLimits = UploadLimits()) -> list[UploadedRun]:
    """Detect the format (zip by magic bytes PK\\x03\\x04 / empty-zip PK\\x05\\x06, else JSONL) and parse it."""
    parse = parse_zip if data[:4] in _ZIP_MAGIC else parse_jsonl
    return parse(data, env=env, flow=flow, scenarios=scenarios, max_repeats=max_repeats, limits=limits)


def parse_jsonl(data: bytes, *, env: str, flow: str, scenarios: Collection[str], max_repeats: int | None = None,
                limits: UploadLimits = UploadLimits()) -> list[UploadedRun]:
    """Parse the JSONL format: one object per line, blank lines skipped."""
    context = _Context(env=env, flow=flow, scenarios=scenarios, max_repeats=max_repeats, limits=limits)
    _check_upload_size(data, context)
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
        run = _parse_line(line, number, context)
        if run is not None:
            runs.append(run)
    if not entries:
        context.problems.add("upload", "the file contains no runs")
    context.problems.raise_if_any()
    return runs


def parse_zip(data: bytes, *, env: str, flow: str, scenarios: Collection[str], max_repeats: int | None = None,
              limits: UploadLimits = UploadLimits()) -> list[UploadedRun]:
    """Parse a zip of the official output directory, reading members into memory within ``limits``."""
    context = _Context(env=env, flow=flow, scenarios=scenarios, max_repeats=max_repeats, limits=limits)
    _check_upload_size(data, context)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError):
        raise UploadError([Problem("upload", "not a zip archive")]) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_members:
            raise UploadError([Problem("upload", f"the archive has {len(infos)} members, the limit is "
                                                 f"{limits.max_members}")])
        names = _check_members(infos, context)
        # Nothing is decompressed from an archive that failed a safety check.
        context.problems.raise_if_any()
        runs = _ZipReader(archive, names, context).runs()
    context.problems.raise_if_any()
    return runs


def runs_to_replies(run: UploadedRun, *, env: str, flow: str) -> list[str]:
    """What the platform replays to the environment as model replies.

    Replies as they are; actions as the replies the environment's parser reads them from
    (``EnvironmentPlugin.action_replies``; officially, Global: one ``### Actions`` reply, Online: one
    ``# action`` reply per action); code as one reply of fenced ``html``, ``css`` and ``javascript``
    blocks (only the parts present).
    """
    if run.replies:
        return list(run.replies)
    if run.actions:
        return get_plugin(env).action_replies(flow, run.actions)
    if run.code is not None:
        blocks = [f"```{fence}\n{run.code[key]}\n```" for key, fence in _CODE_FENCES if key in run.code]
        return ["\n\n".join(blocks)]
    return []


# --- JSONL -------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _parse_line(line: str, number: int, context: _Context) -> UploadedRun | None:
    where = f"line {number}"
    try:
        value = _loads(line)
    except (ValueError, RecursionError) as exc:
        context.problems.add(where, f"invalid JSON: {_json_error(exc)}")
        return None
    if not isinstance(value, dict):
        context.problems.add(where, f"expected a JSON object, got {_json_type(value)}")
        return None

    errors = sorted(_validator().iter_errors(value), key=lambda error: [str(part) for part in error.absolute_path])
    for error in errors:
        path = _json_path(error.absolute_path)
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
    if self_score is not None and not _finite(self_score):
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
    return _shorten(error.message)


def _json_path(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


# --- zip ---------------------------------------------------------------------------------------

@dataclass
class _RunFolder:
    scenario: str
    repeat: int
    prefix: str  # the folder as named in the archive, with a trailing slash
    files: dict[str, zipfile.ZipInfo] = field(default_factory=dict)


def _check_members(infos: list[zipfile.ZipInfo], context: _Context) -> dict[str, zipfile.ZipInfo]:
    """Safety checks on every member; returns the usable file members by their (decoded) name."""
    limits = context.limits
    names: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = _member_name(info)
        total += info.file_size
        unsafe = _unsafe_name(name)
        if unsafe:
            context.problems.add(_shorten(name), f"{unsafe}: the archive is refused")
            continue
        if info.flag_bits & 0x1:
            context.problems.add(name, "encrypted members are not accepted")
        if stat.S_ISLNK(info.external_attr >> 16):
            context.problems.add(name, "symbolic links are not accepted")
        if info.file_size > limits.max_member_bytes:
            context.problems.add(name, f"member is {info.file_size} bytes uncompressed, the limit is "
                                       f"{limits.max_member_bytes}")
        if info.file_size > RATIO_CHECK_MIN_BYTES:
            ratio = info.file_size / info.compress_size if info.compress_size else math.inf
            if ratio > limits.max_ratio:
                context.problems.add(name, f"compression ratio {ratio:.0f} exceeds {limits.max_ratio:g} "
                                           f"(possible zip bomb)")
        if name in names:
            context.problems.add(name, "member appears twice in the archive")
        if not info.is_dir():
            names[name] = info
    if total > limits.max_total_bytes:
        context.problems.add("upload", f"the members total {total} bytes uncompressed, the limit is "
                                       f"{limits.max_total_bytes}")
    return names


def _member_name(info: zipfile.ZipInfo) -> str:
    if info.flag_bits & 0x800:
        return info.filename
    # Many zip tools store UTF-8 names without setting the flag; zipfile then decodes them as cp437.
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return info.filename


def _unsafe_name(name: str) -> str:
    """Why extracting ``name`` could write outside the folder (zip slip), or ""."""
    if "\\" in name:
        return "member name contains a backslash"
    if name.startswith("/"):
        return "member name is absolute"
    if _DRIVE_LETTER.match(name):
        return "member name starts with a drive letter"
    if ".." in name.split("/"):
        return "member name contains '..'"
    return ""


class _ZipReader:
    """Lays the checked members out as run folders and reads each run, within the size limits."""

    def __init__(self, archive: zipfile.ZipFile, names: dict[str, zipfile.ZipInfo], context: _Context) -> None:
        self.archive = archive
        self.names = names
        self.context = context
        self.bytes_read = 0

    def runs(self) -> list[UploadedRun]:
        folders = self._folders()
        if not folders and not self.context.problems:
            self.context.problems.add("upload", "the archive contains no run folders (<scenario>_r<repeat>/)")
        runs = []
        for folder in folders:
            run = self._read_run(folder)
            if run is not None:
                runs.append(run)
        return runs

    def _folders(self) -> list[_RunFolder]:
        problems = self.context.problems
        paths = {name: [part for part in name.split("/") if part] for name in self.names}
        paths = {name: parts for name, parts in paths.items()
                 if parts and parts[0] not in _JUNK_FOLDERS and parts[-1] not in _JUNK_FILES}
        wrapper = self._wrapper(paths)
        folders: dict[str, _RunFolder] = {}
        refused: set[str] = set()
        for name, parts in paths.items():
            relative = parts[1:] if wrapper else parts
            if len(relative) < 2:
                continue  # loose files beside the run folders (summaries, logs) are not runs
            top = relative[0]
            prefix = (f"{wrapper}/" if wrapper else "") + top + "/"
            if top in refused:
                continue
            if top not in folders:
                match = _RUN_FOLDER.match(top)
                if match is None:
                    problems.add(_shorten(prefix), "folder is not named <scenario>_r<repeat> "
                                                   "(e.g. 1-Sokoban-small-v0_r0)")
                    refused.add(top)
                    continue
                scenario, repeat = match["scenario"], int(match["repeat"])
                if not self.context.check_identity(prefix, scenario, repeat, place=f"in {prefix}"):
                    refused.add(top)
                    continue
                folders[top] = _RunFolder(scenario=scenario, repeat=repeat, prefix=prefix)
            if len(relative) == 2:
                folders[top].files[relative[1]] = self.names[name]
        return sorted(folders.values(), key=lambda folder: (folder.scenario, folder.repeat))

    @staticmethod
    def _wrapper(paths: dict[str, list[str]]) -> str:
        """The single folder wrapping every run folder, or "" when the run folders are at the top."""
        tops = {parts[0] for parts in paths.values()}
        if len(tops) != 1:
            return ""
        (top,) = tops
        if _RUN_FOLDER.match(top) or any(len(parts) < 2 for parts in paths.values()):
            return ""
        return top

    def _read_run(self, folder: _RunFolder) -> UploadedRun | None:
        problems = self.context.problems
        prefix = folder.prefix
        before = len(problems.items) + problems.dropped

        self_score: float | None = None
        if EVAL_FILE not in folder.files:
            problems.add(prefix, f"missing {EVAL_FILE}: the run did not finish (the official harness writes it last, "
                                 f"and runs such a folder again when resumed); finish the run or leave the folder out")
        else:
            report = self._read_json(folder, EVAL_FILE)
            if report is not _FAILED:
                self_score = self._check_eval(prefix + EVAL_FILE, report)

        replies: tuple[str, ...] = ()
        actions: tuple[str, ...] = ()
        code: dict[str, str] | None = None
        reply_names: list[str] = []
        official = self._official_reply_files(folder)
        if official and "replies.json" in folder.files:
            problems.add(prefix, f"gives the replies twice, in replies.json and in {official[0]}; keep one")
        elif "replies.json" in folder.files:
            replies = self._read_strings(folder, "replies.json")
            reply_names = [f"{prefix}replies.json[{index}]" for index in range(len(replies))]
        elif self.context.accepts_actions and "actions.json" in folder.files:
            actions = self._read_strings(folder, "actions.json", action_names=True)
        elif official:
            texts = [self._read_text(folder, name) for name in official]
            replies = tuple(text for text in texts if text is not None)
            reply_names = [prefix + name for name in official]
        elif any(name in folder.files for _, name in self.context.code_files):
            code = {}
            for key, filename in self.context.code_files:
                if filename in folder.files:
                    text = self._read_text(folder, filename)
                    if text is not None:
                        code[key] = text
        elif self.context.code_files and not self._other_flow_replies(folder):
            # A run that generated no page (a blank reply) is the model's failure: it is replayed as
            # one empty reply, which the parser reports and AES scores 0, as officially.
            replies = ("",)
        else:
            problems.add(prefix, self._missing_replies(folder))

        if len(problems.items) + problems.dropped > before:
            return None
        run = UploadedRun(scenario=folder.scenario, repeat=folder.repeat, replies=replies, actions=actions,
                          code=code, self_score=self_score, source=prefix)
        filename = "actions.json" if actions else "index.html" if code is not None else "replies.json"
        self.context.check_reply_lengths(prefix + filename, run, reply_names=reply_names or None)
        return run

    def _official_reply_files(self, folder: _RunFolder) -> list[str]:
        """The reply files of this upload's flow, in call order; [] (with a problem when they are
        malformed) otherwise."""
        if self.context.flow == FLOW_GLOBAL:
            return [GLOBAL_REPLY_FILE] if GLOBAL_REPLY_FILE in folder.files else []
        by_loop: dict[int, list[str]] = {}
        for name in folder.files:
            match = ONLINE_REPLY_FILE.match(name)
            if match is not None:
                by_loop.setdefault(int(match["loop"]), []).append(name)
        if not by_loop:
            return []
        problems = self.context.problems
        for loop, names in sorted(by_loop.items()):
            if len(names) > 1:
                problems.add(folder.prefix, f"{' and '.join(sorted(names))} both number call {loop}")
        # Numbered as the official Online flow numbers its turns: from 0, one per model call, no gap.
        missing = max(by_loop) + 1 - len(by_loop)
        if missing:
            # Walked only as far as the gaps shown: a name like output_99999999999.txt costs nothing.
            gaps: list[str] = []
            loop = 0
            while len(gaps) < min(missing, 5):
                if loop not in by_loop:
                    gaps.append(online_reply_file(loop))
                loop += 1
            shown = ", ".join(gaps) + (f" and {missing - len(gaps)} more" if missing > len(gaps) else "")
            problems.add(folder.prefix, f"missing {shown}: the Online flow writes output_0.txt, output_1.txt, "
                                        f"… one per model call")
        return [min(by_loop[loop]) for loop in sorted(by_loop)]

    def _other_flow_replies(self, folder: _RunFolder) -> bool:
        if self.context.flow == FLOW_GLOBAL:
            return any(ONLINE_REPLY_FILE.match(name) for name in folder.files)
        return GLOBAL_REPLY_FILE in folder.files

    def _missing_replies(self, folder: _RunFolder) -> str:
        flow = self.context.flow
        if flow == FLOW_GLOBAL:
            if self._other_flow_replies(folder):
                return ("has output_<k>.txt files, which the Online flow writes; this upload is for the Global "
                        "flow, whose reply is output.txt")
            expected = "output.txt (the Global flow's reply)"
        else:
            if self._other_flow_replies(folder):
                return ("has output.txt, which the Global flow writes; this upload is for the Online flow, whose "
                        "replies are output_0.txt, output_1.txt, …")
            expected = "output_0.txt, output_1.txt, … (the Online flow's replies, one per model call)"
        alternatives = "replies.json or actions.json" if self.context.accepts_actions else "replies.json"
        return f"missing the model's replies: {expected}, or {alternatives}"

    def _check_eval(self, where: str, report: Any) -> float | None:
        """The reported score on the platform's scale, or None (with a problem) when there is none."""
        problems = self.context.problems
        if not isinstance(report, dict):
            problems.add(where, f"expected a JSON object, got {_json_type(report)}")
            return None
        result = report.get("result")
        if "result" not in report:
            problems.add(where, "'result' is missing")
        elif not _finite(result):
            problems.add(where, f"'result' must be a finite number, got {_shorten(json.dumps(result))}")
        elif reason := result_problem(self.context.env, float(result)):
            problems.add(where, reason)
        parsing_err = report.get("parsing_err")
        if parsing_err is not None and not isinstance(parsing_err, (bool, int)):
            problems.add(where, "'parsing_err' must be a boolean or an integer")
        return platform_score(self.context.env, float(result)) if _finite(result) else None

    def _read_strings(self, folder: _RunFolder, filename: str, *, action_names: bool = False) -> tuple[str, ...]:
        where = folder.prefix + filename
        value = self._read_json(folder, filename)
        if value is _FAILED:
            return ()
        what = "action names" if action_names else "strings"
        if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
            self.context.problems.add(where, f"expected a non-empty JSON list of {what}")
            return ()
        if action_names:
            for index, item in enumerate(value):
                if not item or "," in item or "\n" in item or "\r" in item or len(item) > 100:
                    self.context.problems.add(f"{where}[{index}]", f"{_shorten(repr(item))} is not an action name")
        return tuple(value)

    def _read_json(self, folder: _RunFolder, filename: str) -> Any:
        text = self._read_text(folder, filename)
        if text is None:
            return _FAILED
        try:
            return _loads(text)
        except (ValueError, RecursionError) as exc:
            self.context.problems.add(folder.prefix + filename, f"invalid JSON: {_json_error(exc)}")
            return _FAILED

    def _read_text(self, folder: _RunFolder, filename: str) -> str | None:
        where = folder.prefix + filename
        data = self._read_member(where, folder.files[filename])
        if data is None:
            return None
        try:
            return data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            self.context.problems.add(where, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})")
            return None

    def _read_member(self, where: str, info: zipfile.ZipInfo) -> bytes | None:
        """The member's bytes, read in chunks so that sizes the archive lies about cannot exhaust memory."""
        limits = self.context.limits
        limit = min(info.file_size, limits.max_member_bytes, limits.max_total_bytes - self.bytes_read)
        chunks: list[bytes] = []
        size = 0
        try:
            with self.archive.open(info) as handle:
                while chunk := handle.read(_READ_CHUNK):
                    size += len(chunk)
                    if size > limit:
                        self.context.problems.add(where, _overflow_message(info, limits, size))
                        return None
                    chunks.append(chunk)
        # Whatever a corrupt or exotic member makes the decompressors raise, it is the upload's fault.
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError, ValueError,
                zlib.error, lzma.LZMAError) as exc:
            self.context.problems.add(where, f"cannot be read: {_shorten(str(exc))}")
            return None
        finally:
            self.bytes_read += size
        return b"".join(chunks)


def _overflow_message(info: zipfile.ZipInfo, limits: UploadLimits, size: int) -> str:
    if size > info.file_size:
        return f"member produced more than its declared {info.file_size} bytes"
    if size > limits.max_member_bytes:
        return f"member is larger than the limit of {limits.max_member_bytes} bytes"
    return f"the members read total more than the limit of {limits.max_total_bytes} bytes"


# --- shared ------------------------------------------------------------------------------------

_FAILED = object()


def _check_upload_size(data: bytes, context: _Context) -> None:
    limit = context.limits.max_upload_bytes
    if len(data) > limit:
        raise UploadError([Problem("upload", f"upload is {len(data)} bytes, the limit is {limit}")])


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            # Parsers disagree on which duplicate wins; refusing keeps the meaning unambiguous.
            raise ValueError(f"duplicate key {_shorten(repr(key))}")
        result[key] = value
    return result


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def _json_error(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    return _shorten(str(exc))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _finite(value: Any) -> TypeGuard[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


def _shorten(text: str) -> str:
    # Cut in the middle: schema messages start with the offending value and end with the rule broken.
    if len(text) <= _MAX_SHOWN_CHARS:
        return text
    half = (_MAX_SHOWN_CHARS - 1) // 2
    return text[:half] + "…" + text[-half:]
