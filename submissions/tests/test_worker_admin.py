"""The admin's list of workers: what the scheduler counts on, readable by staff and written only by the
workers themselves."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from submissions.models import LiveWorker

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_user("ops", password="a long passphrase 7", is_staff=True,
                                                is_superuser=True)
    client.force_login(user)
    return client


def _live_column(html: str, hostname: str) -> str:
    row = html.split(hostname, 1)[1].split("</tr>", 1)[0]
    return "yes" if "icon-yes" in row else "no" if "icon-no" in row else "?"


def test_staff_see_each_worker_with_its_queues_and_whether_it_is_still_taken_as_up(staff_client, settings):
    settings.MAGEBENCH_WORKER_STALE_AFTER_SECONDS = 180
    now = timezone.now()
    LiveWorker.objects.create(hostname="worker-a@host", queues=["sokoban", "webui"], concurrency=2, last_seen=now)
    LiveWorker.objects.create(hostname="worker-b@host", queues=["football"], concurrency=1,
                              last_seen=now - timedelta(seconds=181))
    response = staff_client.get("/admin/submissions/liveworker/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "sokoban, webui" in html and "football" in html
    assert _live_column(html, "worker-a@host") == "yes"
    assert _live_column(html, "worker-b@host") == "no"


def test_no_one_adds_or_edits_a_worker_by_hand_but_a_dead_ones_row_can_be_deleted(staff_client):
    worker = LiveWorker.objects.create(hostname="worker-a@host", queues=["sokoban"], concurrency=1,
                                       last_seen=timezone.now() - timedelta(days=1))
    assert staff_client.get("/admin/submissions/liveworker/add/").status_code == 403
    response = staff_client.post(f"/admin/submissions/liveworker/{worker.pk}/change/",
                                 {"hostname": worker.hostname, "queues": '["football"]', "concurrency": 8})
    assert response.status_code == 403
    worker.refresh_from_db()
    assert worker.queues == ["sokoban"] and worker.concurrency == 1
    response = staff_client.post(f"/admin/submissions/liveworker/{worker.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not LiveWorker.objects.filter(pk=worker.pk).exists()
