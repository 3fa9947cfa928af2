"""Fixtures of the leaderboard's tests."""
from __future__ import annotations

import pytest

from accounts.models import Team
from leaderboard.tests.site_pages import play_site


@pytest.fixture
def played(transactional_db, fixture_scenarios, baseline_endpoint):
    """One short run per environment the platform really played, and a signed-up team (site_pages.py)."""
    return play_site(baseline_endpoint)


@pytest.fixture
def stored_lab(fixture_scenarios) -> Team:
    """A team whose entries the stored-value tests finish."""
    return Team.objects.create(name="Lab", slug="lab")
