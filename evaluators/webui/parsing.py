"""Turning a WebUI reply into file writes, exactly as the official flows do (reference §2.4).

Global (Flow/GlobalPlanning.py): every run of newlines is collapsed into one, the reply is split on
triple backticks and every odd segment is a code block. The segment is stripped; its first line is
the language tag and the rest is the code. Only ``html``, ``javascript`` and ``css`` name an action
(``write_<tag>``); any other tag (``js``, ``HTML``, a missing tag whose first code line is then read
as the tag) makes the official action constructor assert, the run raises, and the attempt scores 0.
We report that as a parse error naming the tag(s) and execute nothing.

Online (Flow/Online_Web_*.py): only the text after ``# Regenerate`` is read (the whole reply when the
marker is absent). Blocks opening with ```html, ```javascript or ```css are taken as such; any
other block has its type guessed from its content, and blocks that cannot be guessed are skipped.
A reply with an odd number of fences was cut off: the official flow asks the model once to continue
and parses the two replies concatenated (see :func:`needs_continuation`).

Writes are returned one per block, in reply order: executing them in order reproduces the official
behaviour, where a later block of the same kind overwrites the file an earlier one wrote.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, ParseResult

CodeKind = Literal["html", "javascript", "css"]

#: Also the order in which the online parser tries explicit tags (it matters: a prefix test).
KINDS: tuple[CodeKind, ...] = ("html", "javascript", "css")
FILENAMES: dict[CodeKind, str] = {"html": "index.html", "javascript": "script.js", "css": "style.css"}

FENCE = "```"
REGENERATE_MARKER = "# Regenerate"

ERR_NO_CODE_BLOCK = "no code block"
ERR_UNTERMINATED = "unterminated code block"
ERR_NO_RECOGNISED_BLOCK = "no code block of type html, css or javascript"

_NEWLINE_RUNS = re.compile(r"\n+")


@dataclass(frozen=True)
class CodeWrite:
    """Overwrite one of the page's three files with ``code``."""

    kind: CodeKind
    code: str

    @property
    def action(self) -> str:
        return f"write_{self.kind}"

    @property
    def filename(self) -> str:
        return FILENAMES[self.kind]

    def __str__(self) -> str:
        # Trajectory logs list actions by name; the code itself is already stored with the reply.
        return self.action


def collapse_newlines(text: str) -> str:
    """Replace every run of newlines by one, as both official parsers do before splitting.

    Lines holding only spaces are not newlines and survive; blank lines inside code vanish, which
    changes nothing a browser renders except inside ``<pre>`` and template literals.
    """
    return _NEWLINE_RUNS.sub("\n", text)


def _split_tag(segment: str) -> tuple[str, str]:
    """The official (tag, code) split of one Global code segment."""
    stripped = segment.strip()
    newline = stripped.find("\n")
    if newline < 0:
        # The official slice with find() == -1: the tag loses its last character and the code is
        # the whole segment, so ```html``` yields the tag "htm" and fails like any unknown tag.
        return stripped[:-1], stripped
    return stripped[:newline], stripped[newline + 1:]


def _describe_tag(tag: str) -> str:
    if not tag:
        return "an empty tag"
    shown = tag if len(tag) <= 40 else tag[:37] + "..."
    return repr(shown)


def parse_global(reply: str) -> ParseResult:
    """All code blocks of a Global reply; any block with an unsupported tag voids the whole reply."""
    segments = collapse_newlines(reply).split(FENCE)[1::2]
    if not segments:
        return ParseResult(actions=[], error=ERR_NO_CODE_BLOCK)
    writes: list[CodeWrite] = []
    tokens: list[str] = []
    rejected: list[str] = []
    for segment in segments:
        tag, code = _split_tag(segment)
        tokens.append(f"write_{tag}")
        if tag in KINDS:
            writes.append(CodeWrite(kind=tag, code=code))
        else:
            rejected.append(tag)
    if rejected:
        names = ", ".join(_describe_tag(tag) for tag in dict.fromkeys(rejected))
        error = (f"unsupported code block tag {names}: only 'html', 'css' and 'javascript' are accepted, "
                 f"so the whole reply is rejected")
        return ParseResult(actions=[], error=error, foreign_tokens=[f"write_{tag}" for tag in rejected],
                           tokens=tokens)
    return ParseResult(actions=list(writes), tokens=tokens)


def needs_continuation(reply: str) -> bool:
    """True when the reply stops inside a code block (an odd number of fences in the whole reply).

    The official Online flow then asks the model, once, to continue without repeating itself, and
    parses the first reply and the continuation concatenated.
    """
    return reply.count(FENCE) % 2 == 1


def regenerate_section(reply: str) -> str:
    """The part of an Online reply the official parser reads."""
    if REGENERATE_MARKER not in reply:
        return reply
    # split()[1], not the text after the first marker: a second marker ends the section.
    return reply.split(REGENERATE_MARKER)[1]


def _explicit_block(rest: str) -> tuple[CodeKind, int] | None:
    """(kind, end) for a block opening with an exact tag prefix; ``end`` is the closing fence's index."""
    for kind in KINDS:
        opening = FENCE + kind
        if rest.startswith(opening):
            close = rest.find(FENCE, len(opening))
            return kind, close if close >= 0 else len(rest)
    return None


def guess_kind(code: str) -> CodeKind | None:
    """The official content-based guess for a block without a recognised tag."""
    if code.count("<") + code.count(">") > code.count("\n"):
        return "html"
    if ";" in code or "function " in code or "document." in code or "const" in code:
        return "javascript"
    if code.count("{") + code.count("}") > 1:
        return "css"
    return None


def _strip_info_line(code: str) -> str:
    newline = code.find("\n")
    return code[newline + 1:] if newline >= 0 else ""


def parse_online(reply: str, *, allow_unterminated: bool = False, official_slicing: bool = True) -> ParseResult:
    """The code blocks of an Online reply's ``# Regenerate`` section.

    ``allow_unterminated``: a reply with an odd number of fences is reported as
    :data:`ERR_UNTERMINATED` (with whatever blocks it holds still listed in ``actions``) so that the
    flow can ask for a continuation; pass True for the concatenated reply, which the official flow
    parses as it is, the last block then running to the end of the text.

    ``official_slicing``: the official parser cuts a guessed block's code at ``len("```" + kind)``,
    so a ```js block guessed as javascript loses the 13 characters after its opening fence (the tag
    line and the start of the code). True (the default) reproduces that; False drops exactly the
    opening fence's line instead.
    """
    text = collapse_newlines(regenerate_section(reply))
    writes: list[CodeWrite] = []
    fences_seen = False
    position = 0
    while True:
        start = text.find(FENCE, position)
        if start < 0:
            break
        fences_seen = True
        rest = text[start:]
        explicit = _explicit_block(rest)
        if explicit is not None:
            kind, end = explicit
            code = rest[len(FENCE + kind):end]
        else:
            close = rest.find(FENCE, len(FENCE))
            end = close if close >= 0 else len(rest)
            guessed = guess_kind(rest[len(FENCE):end])
            if guessed is None:
                # Only the opening fence is skipped, so this block's closing fence opens the next one.
                position = start + len(FENCE)
                continue
            kind = guessed
            code = rest[len(FENCE + kind):end] if official_slicing else _strip_info_line(rest[len(FENCE):end])
        writes.append(CodeWrite(kind=kind, code=code))
        position = start + end + len(FENCE)

    tokens = [write.action for write in writes]
    if needs_continuation(reply) and not allow_unterminated:
        return ParseResult(actions=writes, error=ERR_UNTERMINATED, tokens=tokens)
    if not writes:
        return ParseResult(actions=[], error=ERR_NO_RECOGNISED_BLOCK if fences_seen else ERR_NO_CODE_BLOCK)
    return ParseResult(actions=writes, tokens=tokens)


def parse_reply(flow: str, reply: str) -> ParseResult:
    if flow == FLOW_GLOBAL:
        return parse_global(reply)
    if flow == FLOW_ONLINE:
        return parse_online(reply)
    raise ValueError(f"WebUI has no flow {flow!r}")


def files_after(writes: Iterable[CodeWrite], start: dict[CodeKind, str] | None = None) -> dict[CodeKind, str]:
    """The page's files once ``writes`` have run in order on top of ``start``: the last write of a kind wins."""
    files: dict[CodeKind, str] = dict(start or {})
    for write in writes:
        files[write.kind] = write.code
    return files
