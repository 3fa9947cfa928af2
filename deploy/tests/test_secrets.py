from __future__ import annotations

import stat
from pathlib import Path

from cryptography.fernet import Fernet

from deploy.secrets import ensure_secrets, main


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_it_makes_each_secret_once_readable_by_its_owner_only(tmp_path: Path):
    directory = tmp_path / "secrets"
    assert ensure_secrets(directory, {}) == {"django_secret_key": "made", "field_encryption_key": "made"}
    first = {p.name: p.read_text() for p in directory.iterdir()}
    assert ensure_secrets(directory, {}) == {"django_secret_key": "kept", "field_encryption_key": "kept"}
    assert {p.name: p.read_text() for p in directory.iterdir()} == first
    assert _mode(directory) == 0o700
    assert all(_mode(p) == 0o600 for p in directory.iterdir())
    assert len(first["django_secret_key"].strip()) >= 50
    Fernet(first["field_encryption_key"].strip().encode())  # a valid key for the encrypted fields


def test_two_deployments_never_share_a_secret(tmp_path: Path):
    ensure_secrets(tmp_path / "a", {})
    ensure_secrets(tmp_path / "b", {})
    for name in ("django_secret_key", "field_encryption_key"):
        assert (tmp_path / "a" / name).read_text() != (tmp_path / "b" / name).read_text()


def test_values_the_operator_gives_replace_the_made_ones_so_an_upgrade_keeps_its_keys(tmp_path: Path):
    key = Fernet.generate_key().decode()
    ensure_secrets(tmp_path, {})
    done = ensure_secrets(tmp_path, {"DJANGO_SECRET_KEY": "the-operators-own", "FIELD_ENCRYPTION_KEY": key})
    assert done == {"django_secret_key": "given", "field_encryption_key": "given"}
    assert (tmp_path / "django_secret_key").read_text().strip() == "the-operators-own"
    assert (tmp_path / "field_encryption_key").read_text().strip() == key
    # Given no longer (the next `up` without them), the adopted values stay.
    assert ensure_secrets(tmp_path, {"DJANGO_SECRET_KEY": ""})["django_secret_key"] == "kept"
    assert (tmp_path / "django_secret_key").read_text().strip() == "the-operators-own"


def test_it_prints_what_it_did_and_never_a_value(tmp_path: Path, capsys):
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == "secrets: django_secret_key made, field_encryption_key made"
    assert all(p.read_text().strip() not in out for p in tmp_path.iterdir())
