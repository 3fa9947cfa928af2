"""The evaluation an upload is checked against, and the checks every format shares."""
from __future__ import annotations

import time
from collections.abc import Collection

from evaluators.base import FLOWS, get_plugin
from submissions.uploads.json_values import shorten
from submissions.uploads.problems import Problem, ProblemList, UploadError
from submissions.uploads.runs import UploadedRun, UploadLimits, runs_to_replies


class UploadContext:
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
        self.problems = ProblemList(limits.max_problems)
        self.seen: dict[tuple[str, int], str] = {}
        self.runs = 0
        self.replies = 0
        self._deadline = None if limits.max_seconds is None else time.monotonic() + limits.max_seconds

    def check_time(self, where: str) -> None:
        """Stops the check once it has used its time budget: a refusal the caller can show, where a
        request running on would be killed by the web server with nothing said."""
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self.problems.stop(where, f"checking stopped here: the file takes longer than the "
                                      f"{self.limits.max_seconds:g} s a check may take; upload it in parts")

    def count_run(self, where: str) -> None:
        """One more run of the file; stops the check past the cap on runs."""
        self.runs += 1
        cap = self.limits.max_runs
        if self.runs > cap:
            self.problems.stop(where, f"more than {cap} runs: the cap is {cap} runs per file; upload it in parts")

    def count_replies(self, where: str, count: int, *, what: str = "replies") -> None:
        """A run's ``count`` replies (or actions); stops the check past the cap per run or per file."""
        cap = self.limits.max_replies_per_run
        if count > cap:
            self.problems.stop(where, f"{count} {what}: the cap is {cap} {what} per run (one per model call)")
        self.replies += count
        cap = self.limits.max_replies
        if self.replies > cap:
            self.problems.stop(where, f"more than {cap} replies and actions in the file: the cap is {cap} per "
                                      f"file; upload it in parts")

    def check_identity(self, where: str, scenario: str, repeat: int, *, place: str) -> bool:
        """Scenario known, repeat in range, pair not seen before (``place`` names it in messages)."""
        ok = True
        if scenario not in self.scenarios:
            self.problems.add(where, f"unknown scenario {shorten(repr(scenario))} (not in this subset)")
            ok = False
        if self.max_repeats is not None and repeat >= self.max_repeats:
            self.problems.add(where, f"repeat {repeat} is out of range: this evaluation has {self.max_repeats} "
                                     f"repeat(s), numbered 0 to {self.max_repeats - 1}")
            ok = False
        earlier = self.seen.get((scenario, repeat))
        if earlier is not None:
            self.problems.add(where, f"scenario {shorten(repr(scenario))} repeat {repeat} already given {earlier}")
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


def check_upload_size(data: bytes, context: UploadContext) -> None:
    """Refuses, before any parsing, an upload larger than the limit."""
    limit = context.limits.max_upload_bytes
    if len(data) > limit:
        raise UploadError([Problem("upload", f"upload is {len(data)} bytes, the limit is {limit}")])


def check_line_count(data: bytes, context: UploadContext) -> None:
    """Refuses, before any parsing, a text with more lines than the cap, naming the first line past it."""
    cap = context.limits.max_lines
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if lines > cap:
        context.problems.stop(f"line {cap + 1}", f"the file has {lines} lines: the cap is {cap} lines per file; "
                                                 f"upload it in parts")
