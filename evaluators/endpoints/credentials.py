"""Credentials that ride in endpoint URLs: finding them, and keeping them out of anything shown.

A key belongs in the Authorization header, where the platform puts the team's API key. One typed
into the URL instead would be stored in clear and shown to everyone who sees the submission, so
new URLs carrying one are refused, and URLs stored before that rule are shown without it.
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
#: What providers put in place of the middle of a key they quote ("sk-abc***wxyz", "sk-ab...yz"):
#: three or more of these in a row, or an ellipsis.
_KEY_MASKS = "*•."
_ELLIPSIS = "…"


def key_struck(text: str, api_key: str, shown: str) -> str:
    """``text`` with ``api_key`` replaced by ``shown``: whole, any piece of it of
    ``SHORTEST_KEY_PIECE`` characters or more, and the masked quotes providers make of it in their
    errors (OpenAI's "Incorrect API key provided: sk-abc***************wxyz")."""
    if not api_key or not text:
        return text
    text = text.replace(api_key, shown)
    return _key_pieces(api_key).sub(lambda match: _piece_shown(match, api_key, shown), text)


@functools.lru_cache(maxsize=64)
def _key_pieces(api_key: str) -> re.Pattern[str]:
    alphabet = set(api_key)
    key_chars = f"[{re.escape(''.join(sorted(alphabet)))}]"
    masks = [f"[{re.escape(c)}]{{3,}}" for c in _KEY_MASKS if c not in alphabet]
    if _ELLIPSIS not in alphabet:
        masks.append(_ELLIPSIS)
    piece = f"(?P<piece>{key_chars}{{{SHORTEST_KEY_PIECE},}})"
    masked = f"(?P<head>{key_chars}*)(?:{'|'.join(masks)})(?P<tail>{key_chars}*)" if masks else ""
    either = f"{masked}|{piece}" if masked else piece
    return re.compile(f"(?<!{key_chars})(?:{either})(?!{key_chars})")


def _piece_shown(match: re.Match[str], api_key: str, shown: str) -> str:
    piece = match["piece"]
    if piece is not None:
        return shown if piece in api_key else piece
    head, tail = match["head"] or "", match["tail"] or ""
    # The visible ends of a masked quote: together they name as much of the key as a long piece.
    if api_key.startswith(head) and api_key.endswith(tail) and len(head) + len(tail) >= SHORTEST_KEY_PIECE:
        return shown
    return match[0]
