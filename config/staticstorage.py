"""The storage of collected static files: compressed, named by their content's hash."""
from __future__ import annotations

from typing import Any

from whitenoise.storage import CompressedManifestStaticFilesStorage


class CollectedStaticStorage(CompressedManifestStaticFilesStorage):
    """Hashed names even with DEBUG on (the demo): Django's storage would link the plain names then,
    which WhiteNoise can only serve with a short max-age, and only the collected files are served."""

    def url(self, name: Any, force: bool = False) -> str:
        return super().url(name, force=True)
