"""Settings are read strictly from the environment."""
import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_secret


def test_booleans_must_be_spelled_out(monkeypatch):
    monkeypatch.setenv("X_FLAG", "Flase")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG must be true or false"):
        env_bool("X_FLAG", True)
    monkeypatch.setenv("X_FLAG", "off")
    assert env_bool("X_FLAG", True) is False


def test_numbers_fall_back_to_defaults_and_reject_junk(monkeypatch):
    assert env_int("X_MISSING", 4) == 4 and env_float("X_MISSING", 0.5) == 0.5
    monkeypatch.setenv("X_NUM", "2.5")
    assert env_float("X_NUM", 0.0) == 2.5
    with pytest.raises(ImproperlyConfigured, match="X_NUM must be an integer"):
        env_int("X_NUM", 1)


def test_a_secret_can_come_from_a_file(monkeypatch, tmp_path):
    (tmp_path / "key").write_text("s3cret\n")
    monkeypatch.setenv("X_KEY_FILE", str(tmp_path / "key"))
    assert env_secret("X_KEY") == "s3cret"
    monkeypatch.setenv("X_KEY_FILE", str(tmp_path / "absent"))
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        env_secret("X_KEY")


def test_production_refuses_to_start_without_its_secrets(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SECRET_KEY", "FIELD_ENCRYPTION_KEY"}}
    env.update({"MAGEBENCH_ENV": "production", "DJANGO_SETTINGS_MODULE": "config.settings.base",
                "MAGEBENCH_DATA_DIR": str(tmp_path)})
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], env=env, capture_output=True,
                          text=True)
    assert done.returncode != 0 and "DJANGO_SECRET_KEY" in done.stderr
