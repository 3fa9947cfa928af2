"""The official output directory inside a checked archive: its run folders and what each holds."""
from __future__ import annotations

import json
import lzma
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any

from evaluators.base import FLOW_GLOBAL
from submissions.official_layout import (
    EVAL_FILE,
    GLOBAL_REPLY_FILE,
    ONLINE_REPLY_FILE,
    online_reply_file,
    platform_score,
    result_problem,
)
from submissions.uploads.context import UploadContext
from submissions.uploads.json_values import finite, json_error, json_type, loads, shorten
from submissions.uploads.runs import UploadedRun, UploadLimits

_READ_CHUNK = 64 * 1024
_RUN_FOLDER = re.compile(r"^(?P<scenario>.+)_r(?P<repeat>[0-9]+)$")
#: Archive debris that desktop tools add; skipped when reading the layout (still counted in sizes).
_JUNK_FOLDERS = frozenset({"__MACOSX"})
_JUNK_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
#: What a read that already reported its problem returns (JSON itself can be null).
_FAILED = object()


@dataclass
class _RunFolder:
    """One ``<scenario>_r<repeat>/`` folder of the archive and its files by name."""

    scenario: str
    repeat: int
    prefix: str  # the folder as named in the archive, with a trailing slash
    files: dict[str, zipfile.ZipInfo] = field(default_factory=dict)


class ZipReader:
    """Lays the checked members out as run folders and reads each run, within the size limits."""

    def __init__(self, archive: zipfile.ZipFile, names: dict[str, zipfile.ZipInfo], context: UploadContext) -> None:
        self.archive = archive
        self.names = names
        self.context = context
        self.bytes_read = 0

    def runs(self) -> list[UploadedRun]:
        """Every readable run, in (scenario, repeat) order; the others leave their problems."""
        folders = self._folders()
        if not folders and not self.context.problems:
            self.context.problems.add("upload", "the archive contains no run folders (<scenario>_r<repeat>/)")
        runs = []
        for folder in folders:
            self.context.check_time(folder.prefix)
            self.context.count_run(folder.prefix)
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
                    example = f" (e.g. {min(self.context.scenarios)}_r0)" if self.context.scenarios else ""
                    problems.add(shorten(prefix), f"folder is not named <scenario>_r<repeat>{example}")
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
        if official:
            self.context.count_replies(prefix, len(official), what="reply files")
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
        # A code run is named by its first code file, the one the page opens with.
        filename = ("actions.json" if actions else self.context.code_files[0][1] if code is not None
                    else "replies.json")
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
            problems.add(where, f"expected a JSON object, got {json_type(report)}")
            return None
        result = report.get("result")
        if "result" not in report:
            problems.add(where, "'result' is missing")
        elif not finite(result):
            problems.add(where, f"'result' must be a finite number, got {shorten(json.dumps(result))}")
        elif reason := result_problem(self.context.env, float(result)):
            problems.add(where, reason)
        parsing_err = report.get("parsing_err")
        if parsing_err is not None and not isinstance(parsing_err, (bool, int)):
            problems.add(where, "'parsing_err' must be a boolean or an integer")
        return platform_score(self.context.env, float(result)) if finite(result) else None

    def _read_strings(self, folder: _RunFolder, filename: str, *, action_names: bool = False) -> tuple[str, ...]:
        where = folder.prefix + filename
        value = self._read_json(folder, filename)
        if value is _FAILED:
            return ()
        what = "action names" if action_names else "strings"
        if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
            self.context.problems.add(where, f"expected a non-empty JSON list of {what}")
            return ()
        self.context.count_replies(where, len(value), what="actions" if action_names else "replies")
        if action_names:
            for index, item in enumerate(value):
                if not item or "," in item or "\n" in item or "\r" in item or len(item) > 100:
                    self.context.problems.add(f"{where}[{index}]", f"{shorten(repr(item))} is not an action name")
        return tuple(value)

    def _read_json(self, folder: _RunFolder, filename: str) -> Any:
        text = self._read_text(folder, filename)
        if text is None:
            return _FAILED
        try:
            return loads(text)
        except (ValueError, RecursionError) as exc:
            self.context.problems.add(folder.prefix + filename, f"invalid JSON: {json_error(exc)}")
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
        self.context.check_time(where)
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
            self.context.problems.add(where, f"cannot be read: {shorten(str(exc))}")
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
