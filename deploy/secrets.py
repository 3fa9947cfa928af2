"""The stack's two secrets, made once per deployment: ``python -m deploy.secrets DIR``.

The compose stack's ``secrets`` service runs it before anything else. Each secret is a file in DIR
(a volume every app container mounts, read through ``DJANGO_SECRET_KEY_FILE`` and
``FIELD_ENCRYPTION_KEY_FILE``). A value the operator gives in the environment is written over the
file, so a deployment that started with its own secrets keeps them (the endpoint keys stored in the
database stay readable); otherwise a missing file gets a new random value and an existing one is
kept. Nothing is ever printed.
"""
from __future__ import annotations

import base64
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path


def _django_secret_key() -> str:
    return secrets.token_urlsafe(48)


def _fernet_key() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


#: file name → (the environment variable that overrides it, how a new value is made)
SECRETS: dict[str, tuple[str, Callable[[], str]]] = {
    "django_secret_key": ("DJANGO_SECRET_KEY", _django_secret_key),
    "field_encryption_key": ("FIELD_ENCRYPTION_KEY", _fernet_key),
}


def _write(path: Path, value: str) -> None:
    partial = path.with_suffix(".partial")
    # Created with 0600 from the start: the value is never readable by others, even for an instant.
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(value + "\n")
    os.replace(partial, path)


def ensure_secrets(directory: Path, environ: dict[str, str]) -> dict[str, str]:
    """Make DIR hold every secret; what happened to each (``given``, ``made`` or ``kept``)."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    done: dict[str, str] = {}
    for name, (variable, make) in SECRETS.items():
        path = directory / name
        given = environ.get(variable, "").strip()
        if given:
            if not path.exists() or path.read_text().strip() != given:
                _write(path, given)
            done[name] = "given"
        elif path.exists() and path.read_text().strip():
            done[name] = "kept"
        else:
            _write(path, make())
            done[name] = "made"
    return done


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m deploy.secrets DIR", file=sys.stderr)
        return 2
    done = ensure_secrets(Path(argv[0]), dict(os.environ))
    print("secrets: " + ", ".join(f"{name} {how}" for name, how in done.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
