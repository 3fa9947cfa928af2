"""What an upload gives for each run, the limits it is read within, and its runs as replies."""
from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.base import get_plugin


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
    # The caps below stop the check at the first one reached: what a file holds beyond them is never
    # parsed, so its size in lines, runs or replies cannot buy it more of a worker's time.
    #: Lines of a JSONL file, blank ones included (a line is parsed and schema-checked, the costly part).
    max_lines: int = 20_000
    #: Runs of a file: 483 scenarios (the whole set) × 20 repeats (the most an upload may give) fit.
    max_runs: int = 10_000
    #: Replies (or actions) of one run: one per model call, and a flow makes at most max_loop's
    #: upper bound (1000) of them.
    max_replies_per_run: int = 1_000
    #: Replies (or actions) of the whole file: 483 scenarios × 20 repeats × 50 calls (the Online
    #: flows' default max_loop) fit.
    max_replies: int = 500_000
    #: Seconds the check may take before it stops and refuses the file (None: no limit, offline).
    max_seconds: float | None = None


#: The limits an upload is read within when its caller names none.
DEFAULT_LIMITS = UploadLimits()


def runs_to_replies(run: UploadedRun, *, env: str, flow: str) -> list[str]:
    """What the platform replays to the environment as model replies.

    Replies as they are; actions as the replies the environment's parser reads them from
    (``EnvironmentPlugin.action_replies``; officially, Global: one ``### Actions`` reply, Online: one
    ``# action`` reply per action); code as the replies the environment plays it back as
    (``EnvironmentPlugin.code_replies``; by default one reply of fenced blocks, one per part present,
    with the fence languages of ``EnvironmentPlugin.upload_code_fences``).
    """
    if run.replies:
        return list(run.replies)
    if run.actions:
        return get_plugin(env).action_replies(flow, run.actions)
    if run.code is not None:
        return get_plugin(env).code_replies(flow, run.code)
    return []
