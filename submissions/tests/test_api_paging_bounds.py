"""Paging parameters out of any sensible range are the caller's mistake: a 400 that says why."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("query", ["offset=9223372036854775808", "offset=99999999999999999999999999",
                                   "limit=9223372036854775808&offset=0", "offset=-9223372036854775809"])
def test_a_huge_paging_number_on_the_submission_list_is_a_400_not_a_server_error(client, query):
    response = client.get(f"/api/v1/submissions/?{query}")
    assert response.status_code in (200, 400), response.content[:300]
    if "offset=9" in query:
        assert response.status_code == 400 and "offset" in response.json()["message"]
