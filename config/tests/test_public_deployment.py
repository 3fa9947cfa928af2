"""What a public deployment relies on: the Content-Security-Policy of every page, Django's deployment
checks under production settings, and a demo server that stays on the loopback interface."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.services import team_create
from catalogue.models import Scenario
from submissions.models import Attempt, ModelEntry, Submission

ROOT = Path(__file__).resolve().parents[2]


def _policy(response) -> dict[str, list[str]]:
    header = response.headers.get("Content-Security-Policy", "")
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0]] = words[1:]
    return directives


@pytest.mark.django_db
def test_every_kind_of_page_carries_a_content_security_policy_that_runs_only_the_site_s_own_scripts(
        fixture_scenarios):
    user = get_user_model().objects.create_user("ada", password="a long passphrase 7", is_staff=True,
                                                is_superuser=True)
    team = team_create(user=user, name="Lab")
    submission = Submission.objects.create(team=team, model=ModelEntry.objects.create(team=team, name="M"),
                                           environment_id="sokoban", flow="global", subset="mini", suite="fixture",
                                           status=Submission.Status.RUNNING, is_public=True)
    attempt = Attempt.objects.create(submission=submission, repeat=0,
                                     scenario=Scenario.objects.filter(environment_id="sokoban").first())
    anonymous, member = Client(), Client()
    member.force_login(user)
    pages = [
        (anonymous, "/"), (anonymous, "/boards/sokoban/global/mini/?suite=fixture"),
        (anonymous, "/boards/sokoban/global/mini/analysis/?suite=fixture"),
        (anonymous, "/boards/sokoban/global/mini/compare/?suite=fixture"),
        (anonymous, "/environments/webui/"), (anonymous, reverse("queue")), (anonymous, reverse("login")),
        (anonymous, reverse("signup")), (anonymous, "/admin/login/"), (anonymous, reverse("submit")),
        (anonymous, reverse("submission-detail", args=[submission.id])),
        (anonymous, reverse("attempt-replay", args=[attempt.id])), (anonymous, "/no/such/page/"),
        (anonymous, reverse("api-schema")), (anonymous, "/api/v1/boards/sokoban/global/mini/"),
        (anonymous, reverse("api-docs")), (anonymous, reverse("api-redoc")),
        (member, reverse("account")), (member, reverse("team", args=[team.slug])), (member, reverse("upload")),
        (member, reverse("password_change")), (member, "/admin/"), (member, "/admin/submissions/submission/"),
    ]
    for client, url in pages:
        response = client.get(url)
        policy = _policy(response)
        assert policy, (url, response.status_code)
        assert policy["default-src"] == ["'self'"], url
        scripts = policy.get("script-src", policy["default-src"])
        assert "'self'" in scripts and not {"'unsafe-inline'", "'unsafe-eval'", "*", "data:"} & set(scripts), url
        styles = policy.get("style-src", policy["default-src"])
        assert "'unsafe-inline'" not in styles and "*" not in styles, url
        assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"], url
        assert policy["base-uri"] == ["'none'"] and policy["form-action"] == ["'self'"], url


TEMPLATE_DIRS = [ROOT / "templates", *ROOT.glob("*/templates")]


def test_no_template_holds_an_inline_script_event_handler_or_style_attribute():
    inline = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=|\sstyle\s*=|<style\b|javascript:", re.I)
    found = [f"{path.relative_to(ROOT)}: {match.group(0)}"
             for directory in TEMPLATE_DIRS for path in directory.rglob("*.html")
             for match in inline.finditer(path.read_text())]
    python_markup = [path for path in ROOT.glob("*/templatetags/*.py") if re.search(r"\sstyle=", path.read_text())]
    assert found == [] and python_markup == []


def _production_environment(tmp_path: Path) -> dict[str, str]:
    keep = {name: value for name, value in os.environ.items() if name in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {**keep, "DJANGO_SETTINGS_MODULE": "config.settings.base", "MAGEBENCH_ENV": "production",
            "DJANGO_SECRET_KEY": "k" * 12 + "-production-secret-of-sufficient-length-and-variety-3f9a2c",
            "FIELD_ENCRYPTION_KEY": "kEqL4pO2mUq7PuqjQ3mnIjqg0b6MnR9Tm5Kc0hXvCUE=",
            "DJANGO_ALLOWED_HOSTS": "leaderboard.example", "MAGEBENCH_DATA_DIR": str(tmp_path),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/magebench_unused", "MAGEBENCH_NUM_PROXIES": "1"}


def test_django_s_deployment_checks_find_nothing_to_warn_about_under_production_settings(tmp_path):
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                            cwd=ROOT, env=_production_environment(tmp_path), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


def test_production_settings_send_hsts_redirect_to_https_and_keep_cookies_secure(tmp_path):
    script = ("from django.conf import settings as s; print(s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT, "
              "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_PROXY_SSL_HEADER, s.DEBUG)")
    result = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {script}"], cwd=ROOT,
                            env=_production_environment(tmp_path), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    hsts, redirect, *rest = result.stdout.split(" ", 2)
    assert int(hsts) >= 31536000 and redirect == "True"
    assert rest[0].strip() == "True True ('HTTP_X_FORWARDED_PROTO', 'https') False"


def _demo_address(environment: dict[str, str]) -> str:
    """The address scripts/demo hands to runserver, worked out by bash from the script's own lines."""
    script = (ROOT / "scripts" / "demo").read_text()
    assignments = [line for line in script.splitlines() if re.match(r"^(PORT|BIND)=", line)]
    runserver = re.search(r"manage\.py runserver (\"[^\"]+\"|\S+)", script)
    assert runserver, "scripts/demo starts the site with runserver"
    env = {"PATH": os.environ["PATH"], **environment}
    result = subprocess.run(["bash", "-c", "\n".join(assignments + [f"echo {runserver.group(1)}"])], env=env,
                            capture_output=True, text=True, timeout=30, check=True)
    return result.stdout.strip()


def test_the_demo_server_listens_on_the_loopback_interface_unless_told_otherwise():
    assert _demo_address({}) == "127.0.0.1:8000"
    assert _demo_address({"PORT": "9000"}) == "127.0.0.1:9000"
    assert _demo_address({"MAGEBENCH_DEMO_BIND": "0.0.0.0"}) == "0.0.0.0:8000"
