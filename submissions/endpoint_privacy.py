"""A team's endpoint is its own: the URL the platform calls, the model id it asks for there, the ids
the endpoint lists at ``/models`` and the team's API key are shown to the team's members (and staff),
never to anyone else, published or not. Everything else a stranger may read about a submission
(pages, API answers, exports, replays) has them struck out."""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from accounts.selectors import Access
from evaluators.endpoints.client import CHAT_COMPLETIONS_PATH
from evaluators.endpoints.credentials import display_url, key_struck
from submissions.crypto import decrypt_secret
from submissions.models import Submission

URL_SHOWN = "[the team's endpoint]"
MODEL_SHOWN = "[the team's model id]"
KEY_SHOWN = "[the team's API key]"
#: Shorter model ids or host names are not struck out of free text: "gpt" or "a" would mangle it.
SHORTEST_STRUCK = 4
#: A path segment of the endpoint's own is struck alone (without its slashes) from this length on:
#: a short one ("/lab") is a common word.
SHORTEST_SEGMENT_STRUCK = 8

#: Path segments every OpenAI-compatible endpoint has: striking them would garble any text that
#: names the API, and they say nothing of whose endpoint it is.
_STANDARD_SEGMENTS = frozenset({"api", "openai", "chat", "completions", "models", "engines", "deployments",
                                "inference", "responses", "embeddings", "compatible", "compat"})
_VERSION = re.compile(r"(?i)v\d+(?:(?:alpha|beta)\d*)?")

T = TypeVar("T")


def can_see_endpoint(access: Access, submission: Submission) -> bool:
    return access.is_staff or submission.team_id in access.team_ids


def endpoint_marks(submission: Submission) -> list[tuple[str, str]]:
    """(text, what replaces it) for everything of the endpoint a stranger must not read, longest first.

    What the team published as its model's name stays: a model id equal to it is no secret."""
    public_name = submission.model.name if submission.model_id else ""
    return list(_marks_of(submission.endpoint_url or "", submission.endpoint_model or "",
                          tuple(_listed_models(submission)), submission.api_key_encrypted, public_name))


@functools.lru_cache(maxsize=256)
def _marks_of(url: str, endpoint_model: str, listed: tuple[str, ...], api_key_encrypted: str,
              public_name: str) -> tuple[tuple[str, str], ...]:
    """Worked out once per endpoint: an export asks for each of a submission's failed attempts."""
    marks = [(text, URL_SHOWN) for text in _url_marks(url)]
    marks += [(model_id, MODEL_SHOWN) for model_id in (endpoint_model, *listed)
              if model_id.casefold() != public_name.casefold()]
    unique = {text: shown for text, shown in reversed(marks) if len(text) >= SHORTEST_STRUCK}
    api_key = _api_key(api_key_encrypted)
    if api_key:
        unique[api_key] = KEY_SHOWN
    return tuple(sorted(unique.items(), key=lambda mark: -len(mark[0])))


def struck(value: T, marks: list[tuple[str, str]]) -> T:
    """``value`` (text, or JSON-like lists and dicts of it) with every mark replaced, in every form
    text quotes it: as written, in any case, JSON-escaped (``\\/``) and URL-encoded; a key mark also
    takes the pieces and masked quotes of the key that providers echo."""
    if not marks:
        return value
    return _struck(value, _striker(tuple(marks)))


def for_viewer(value: T, access: Access, submission: Submission) -> T:
    """``value`` as this viewer may read it: whole for the team, struck out for anyone else."""
    return value if can_see_endpoint(access, submission) else struck(value, endpoint_marks(submission))


def _url_marks(url: str) -> list[str]:
    """The URL, and its host with and without the path, the scheme and the port; the path alone
    where it has segments of the endpoint's own (``/v1/chat/completions`` is everyone's)."""
    if not url:
        return []
    marks = [url, display_url(url)]
    try:
        parts = urlsplit(url)
        hostname = parts.hostname or ""
    except ValueError:
        return marks
    hosts = [host for host in {parts.netloc.rpartition("@")[2], hostname} if host]
    paths = _own_paths(parts.path)
    for host in hosts:
        marks += [host, *(host + path for path in paths), *(f"{parts.scheme}://{host}{path}" for path in ["", *paths])]
    if paths:
        segments = [segment for segment in paths[-1].split("/") if not _standard(segment)]
        marks += [paths[-1], *(segment for segment in segments if len(segment) >= SHORTEST_SEGMENT_STRUCK)]
    return marks


def _own_paths(path: str) -> list[str]:
    """The forms of ``path`` that are the endpoint's own, longest first: the whole path, the base the
    API's routes hang from, and the base up to its last segment that is not a standard one. Empty
    when every segment is standard."""
    whole = path.rstrip("/")
    segments = [segment for segment in whole.split("/") if segment]
    own = [index for index, segment in enumerate(segments) if not _standard(segment)]
    if not own:
        return []
    base = whole[: -len(CHAT_COMPLETIONS_PATH)] if whole.endswith(CHAT_COMPLETIONS_PATH) else whole
    distinctive = "/" + "/".join(segments[: own[-1] + 1])
    return list(dict.fromkeys([whole, base, distinctive]))


def _standard(segment: str) -> bool:
    return segment.lower() in _STANDARD_SEGMENTS or _VERSION.fullmatch(segment) is not None


def _listed_models(submission: Submission) -> list[str]:
    listed = submission.endpoint_listed_models
    return [str(model_id) for model_id in listed] if isinstance(listed, list) else []


def _api_key(api_key_encrypted: str) -> str:
    try:
        return decrypt_secret(api_key_encrypted)
    except ValueError:  # a rotated encryption key: the key cannot be read, so neither can it be known
        return ""


def _forms(text: str) -> Iterable[str]:
    """``text`` as other text may quote it: as written, JSON-escaped (once, or twice where a stored
    document holds text that was escaped already), and URL-encoded."""
    yield text
    yield text.replace("/", "\\/")
    yield text.replace("/", "\\\\/")
    yield quote(text, safe="")
    yield quote(text, safe="/:@")


class _Striker:
    """The marks compiled once: every form of every mark in one pattern, as a tree of their letters
    (an alternation of hundreds of forms is tried form by form at every character of a long
    trajectory; the tree fails at the first letter no form has). The longest form that stands
    alone wins, so that a URL is struck whole before its host is."""

    def __init__(self, marks: tuple[tuple[str, str], ...]) -> None:
        self.shown: dict[str, str] = {}
        for text, shown in marks:
            for form in _forms(text):
                self.shown.setdefault(form.lower(), shown)
        longest_first = sorted(self.shown, key=len, reverse=True)
        # The shorter forms each form begins with: where a form runs into a longer word, one of them may not.
        self.shorter: dict[str, list[str]] = {
            form: [other for other in longest_first if len(other) < len(form) and form.startswith(other)]
            for form in longest_first}
        tree = _alternation(_letter_tree(self.shown))
        # Matched in the lower-cased text, many times faster than ignoring case, wherever lower-casing
        # keeps every character in its place (a few letters, such as "İ", become two).
        self.pattern = re.compile(tree)
        self.pattern_any_case = re.compile(tree, re.IGNORECASE)
        self.keys = [text for text, shown in marks if shown == KEY_SHOWN]

    def __call__(self, text: str) -> str:
        lowered = text.lower()
        pattern, read = (self.pattern, lowered) if len(lowered) == len(text) else (self.pattern_any_case, text)
        out: list[str] = []
        done = 0
        match = pattern.search(read)
        while match is not None:
            form = self._standing_alone(read, match)
            if form is None:
                match = pattern.search(read, match.start() + 1)
                continue
            out += [text[done:match.start()], self.shown[form]]
            done = match.start() + len(form)
            match = pattern.search(read, done)
        text = "".join(out) + text[done:] if out else text
        for key in self.keys:
            text = key_struck(text, key, KEY_SHOWN)
        return text

    def _standing_alone(self, text: str, match: re.Match[str]) -> str | None:
        """The longest form at the match that is no part of a longer word: the path ``/lab`` stays
        in ``/laboratory``, the host ``10.0.0.1`` in ``10.0.0.12``."""
        start, matched = match.start(), match[0].lower()
        for form in [matched, *self.shorter.get(matched, ())]:
            if form in self.shown and _alone(text, start, start + len(form)):
                return form
        return None


def _alone(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` begins and ends where a word does."""
    def joined(left: int) -> bool:
        return 0 <= left and left + 1 < len(text) and _word(text[left]) and _word(text[left + 1])

    return not joined(start - 1) and not joined(end - 1)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _letter_tree(forms: Iterable[str]) -> dict[str, Any]:
    """The forms as nested dicts of their letters; the key "" marks the end of a form."""
    tree: dict[str, Any] = {}
    for form in forms:
        node = tree
        for char in form:
            node = node.setdefault(char, {})
        node[""] = {}
    return tree


def _alternation(node: dict[str, Any]) -> str:
    """A pattern of the forms below ``node``, longer before shorter; a run of single letters is
    written as one literal, so that only branches nest (a URL-encoded form is hundreds of letters)."""
    branches = []
    for char in sorted(key for key in node if key):
        chain, child = re.escape(char), node[char]
        while "" not in child and len(child) == 1:
            (char, child), = child.items()
            chain += re.escape(char)
        branches.append(chain + _alternation(child))
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    return f"(?:{body})?" if "" in node else body


@functools.lru_cache(maxsize=64)
def _striker(marks: tuple[tuple[str, str], ...]) -> _Striker:
    """Compiled once per set of marks: an export strikes thousands of texts with the same ones."""
    return _Striker(marks)


def _struck(value: Any, striker: _Striker) -> Any:
    if isinstance(value, str):
        return striker(value)
    if isinstance(value, dict):
        return {key: _struck(item, striker) for key, item in value.items()}
    if isinstance(value, list):
        return [_struck(item, striker) for item in value]
    return value
