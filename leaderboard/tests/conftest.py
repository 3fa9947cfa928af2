"""Fixtures of the leaderboard's tests."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from accounts.models import Team
from conftest import baseline_servers, import_fixture_scenarios
from leaderboard.tests.site_pages import play_site
from submissions.models import Submission

#: Rows the site's played runs leave behind: every table but those Django fills in itself after a flush.
_NOT_PLAYED = ["contenttypes", "auth.permission", "admin.logentry", "sessions"]


@pytest.fixture
def played(transactional_db, fixture_scenarios, baseline_endpoint):
    """One short run per environment the platform really played, and a signed-up team (site_pages.py)."""
    return play_site(baseline_endpoint)


@pytest.fixture(scope="module")
def played_rows(django_db_setup: Any, django_db_blocker: Any,
                tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """The site played once for the module (play_site), kept as the rows it wrote; the database is left
    empty, as a transactional test expects it. The runs' files stay in the data directory."""
    from django.core.management import call_command

    rows = tmp_path_factory.mktemp("played") / "played.json"
    with django_db_blocker.unblock():
        try:
            with baseline_servers() as endpoint:
                import_fixture_scenarios()
                played = play_site(endpoint)
            call_command("dumpdata", exclude=_NOT_PLAYED, output=str(rows), verbosity=0)
        finally:
            call_command("flush", interactive=False, verbosity=0)
    return rows, {key: submission.id for key, submission in played.items()}


@pytest.fixture
def played_site(transactional_db: Any, played_rows: tuple[Path, dict[str, int]]) -> dict[str, Submission]:
    """``played``, for the tests of a module that only read it: the module's one play, loaded again into
    this test's database (playing the WebUI run renders every fixture page)."""
    from django.core.management import call_command

    rows, ids = played_rows
    call_command("loaddata", str(rows), verbosity=0)
    return {key: Submission.objects.get(id=submission_id) for key, submission_id in ids.items()}


@pytest.fixture
def stored_lab(fixture_scenarios) -> Team:
    """A team whose entries the stored-value tests finish."""
    return Team.objects.create(name="Lab", slug="lab")
