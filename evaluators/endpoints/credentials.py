"""Credentials that ride in endpoint URLs: finding them, and keeping them out of anything shown.

A key belongs in the Authorization header, where the platform puts the team's API key. One typed
into the URL instead would be stored in clear and shown to everyone who sees the submission, so
new URLs carrying one are refused, and URLs stored before that rule are shown without it. An
endpoint may also echo the key it was sent, whole, in part or masked: ``key_struck`` hides it.
"""
from __future__ import annotations

import functools
import re
from urllib.parse import unquote_plus, urlsplit, urlunsplit

_REDACTED = "[redacted]"

#: Query parameter names that are secrets whatever surrounds them (compared lower-cased, with
#: ``-`` and ``.`` read as ``_``).
_SECRET_NAMES = frozenset({"sig", "pwd", "pass", "passwd", "jwt", "bearer", "code", "sessionid", "session"})
#: Words that make any parameter name secret-looking: api_key, accessKey, X-Amz-Signature, client_secret…
_SECRET_WORDS = ("key", "token", "secret", "passw", "signature", "credential", "auth")


def is_secret_name(name: str) -> bool:
    normalised = re.sub(r"[-.\s]", "_", name.strip().lower())
    return normalised in _SECRET_NAMES or any(word in normalised for word in _SECRET_WORDS)


def url_credentials(url: str) -> list[str]:
    """What in ``url`` looks like a credential, described without its value; empty when nothing does."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    found: list[str] = []
    if "@" in parts.netloc:
        found.append("a user name or password before the host (…@)")
    for name in _parameter_names(parts.query):
        if is_secret_name(name):
            found.append(f"query parameter {_printable(name)!r}")
    return found


def display_url(url: str) -> str:
    """``url`` as it may be shown to anyone: no user info, no secret-looking parameter, no fragment."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    netloc = parts.netloc.rpartition("@")[2]
    # Filtered as written, so the parameters kept read exactly as the team typed them.
    kept = [piece for piece in parts.query.split("&") if piece and not is_secret_name(_name_of(piece))]
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(kept), ""))


def _name_of(piece: str) -> str:
    return unquote_plus(piece.partition("=")[0])


def _parameter_names(query: str) -> list[str]:
    return [_name_of(piece) for piece in query.split("&") if piece]


# ``scheme://anything-without-slash@`` is user info; the lookahead keeps an ``@`` in a path.
_USER_INFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]*@")
_PARAMETER = re.compile(r"(?P<lead>[?&;])(?P<name>[^=&;#\s'\"<>]+)=(?P<value>[^&;#\s'\"<>)]*)")


def scrub_secrets(text: str) -> str:
    """``text`` with the user info of every URL in it removed and secret-looking parameter values
    replaced: for free text (exception messages, stored errors) that may quote a URL."""
    text = _USER_INFO.sub(r"\1", text)

    def parameter(match: re.Match[str]) -> str:
        if not is_secret_name(match["name"]):
            return match[0]
        return f"{match['lead']}{match['name']}={_REDACTED}"

    return _PARAMETER.sub(parameter, text)


def _printable(text: str, limit: int = 40) -> str:
    cleaned = "".join(c for c in text if c.isprintable())
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "…"


#: Echoed pieces of a key shorter than this are left in text: a few characters say nothing of it,
#: and striking them would mangle ordinary words.
SHORTEST_KEY_PIECE = 8
#: A provider's masked quote of a key ("sk-abc***wxyz") is struck once its visible ends show this
#: many of the key's characters: its last four alone are what providers print to name a key.
SHORTEST_MASKED_ENDS = 4
#: What providers put in place of the middle of a key they quote ("sk-abc***wxyz", "sk-ab...yz"):
#: three or more of these in a row, or an ellipsis.
_KEY_MASKS = "*•."
_ELLIPSIS = "…"
_MASK_RUNS = (*(mask * 3 for mask in _KEY_MASKS), _ELLIPSIS)


def key_struck(text: str, api_key: str, shown: str) -> str:
    """``text`` with ``api_key`` replaced by ``shown``: whole, any run of ``SHORTEST_KEY_PIECE``
    characters or more of it (also inside a longer word), and the masked quotes providers make of it
    in their errors (OpenAI's "Incorrect API key provided: sk-abc***************wxyz")."""
    if not api_key or not text:
        return text
    # Plain searches first: most text quotes nothing of the key, and they are many times faster.
    if any(mask in text for mask in _MASK_RUNS):
        text = _masked_quotes(api_key).sub(lambda match: _quote_shown(match, api_key, shown), text)
    if len(api_key) < SHORTEST_KEY_PIECE:
        return text.replace(api_key, shown)
    windows, _ = _key_windows(api_key)
    return _pieces_struck(text, api_key, shown) if any(window in text for window in windows) else text


@functools.lru_cache(maxsize=64)
def _masked_quotes(api_key: str) -> re.Pattern[str]:
    alphabet = set(api_key)
    key_chars = f"[{re.escape(''.join(sorted(alphabet)))}]"
    masks = [f"[{re.escape(c)}]{{3,}}" for c in _KEY_MASKS if c not in alphabet]
    if _ELLIPSIS not in alphabet:
        masks.append(_ELLIPSIS)
    if not masks:
        return re.compile("(?!)")  # a key of every mask character: no quote of it can be told apart
    return re.compile(f"(?<!{key_chars})(?P<head>{key_chars}*)(?:{'|'.join(masks)})(?P<tail>{key_chars}*)"
                      f"(?!{key_chars})")


def _quote_shown(match: re.Match[str], api_key: str, shown: str) -> str:
    head, tail = match["head"], match["tail"]
    if api_key.startswith(head) and api_key.endswith(tail) and len(head) + len(tail) >= SHORTEST_MASKED_ENDS:
        return shown
    return match[0]


@functools.lru_cache(maxsize=64)
def _key_windows(api_key: str) -> tuple[frozenset[str], re.Pattern[str]]:
    windows = frozenset(api_key[i: i + SHORTEST_KEY_PIECE] for i in range(len(api_key) - SHORTEST_KEY_PIECE + 1))
    return windows, re.compile("|".join(re.escape(window) for window in sorted(windows)))


def _pieces_struck(text: str, api_key: str, shown: str) -> str:
    """``text`` with every run of at least ``SHORTEST_KEY_PIECE`` characters of the key replaced:
    a run is found by its first window of the key, then followed as long as each next window is one."""
    windows, first = _key_windows(api_key)
    out: list[str] = []
    done = 0
    match = first.search(text)
    while match is not None:
        end = match.end()
        while end < len(text) and text[end - SHORTEST_KEY_PIECE + 1: end + 1] in windows:
            end += 1
        out += [text[done:match.start()], shown]
        done = end
        match = first.search(text, end)
    return "".join(out) + text[done:] if out else text
