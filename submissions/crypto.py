"""Encryption of endpoint API keys at rest (Fernet, key from FIELD_ENCRYPTION_KEY)."""
from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    return Fernet(settings.FIELD_ENCRYPTION_KEY.encode())


def encrypt_secret(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode() if value else ""


def decrypt_secret(token: str) -> str:
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        # A rotated FIELD_ENCRYPTION_KEY makes old keys unreadable; say so instead of sending junk.
        raise ValueError("the stored API key cannot be decrypted with the current FIELD_ENCRYPTION_KEY") from None
