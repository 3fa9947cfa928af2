"""Settings tables show values as people write them: no Python reprs anywhere."""
from __future__ import annotations

import pytest
from django.template import Context, Template
from django.urls import reverse

from catalogue.services import environment_ensure
from submissions.models import ModelEntry, Submission
from submissions.templatetags.settings_values import setting_text


@pytest.mark.parametrize(("value", "shown"), [
    (None, "—"),
    (True, "yes"),
    (False, "no"),
    (["1-Sokoban-small-v0", "2-Sokoban-small-v0"], "1-Sokoban-small-v0, 2-Sokoban-small-v0"),
    ((1, 2, 3), "1, 2, 3"),
    ([], "—"),
    ({"camera": "wide", "render": True}, "camera: wide\nrender: yes"),
    ({"levels": ["a", "b"], "limit": None}, "levels: a, b\nlimit: —"),
    (0.1, "0.1"),
    (1000, "1000"),
    ("sokoban-global-v3", "sokoban-global-v3"),
])
def test_each_kind_of_value_reads_as_written(value, shown):
    assert setting_text(value) == shown


def test_the_filter_escapes_what_it_writes():
    rendered = Template("{% load settings_values %}{{ v|setting_value }}").render(
        Context({"v": {"<b>": ["x&y"]}}))
    assert rendered == "&lt;b&gt;: x&amp;y"


def _settings_table(lab, submission: Submission) -> str:
    page = lab.client.get(reverse("submission-detail", args=[submission.id])).content.decode()
    table = page[page.index("<h3>Settings</h3>"):]
    return table[:table.index("</table>")]


def _row(name: str, shown: str) -> str:
    return f'<tr><th>{name}</th><td class="setting-value"><code>{shown}</code></td></tr>'


@pytest.mark.django_db
def test_the_submission_page_shows_frozen_settings_without_reprs(lab):
    model = ModelEntry.objects.create(team=lab.team, name="M")
    submission = Submission.objects.create(
        team=lab.team, model=model, environment=environment_ensure("sokoban"), flow="global", subset="full",
        suite="handmade", status=Submission.Status.COMPLETED, source=Submission.Source.ENDPOINT,
        endpoint_url="http://models.example/v1",
        settings={"temperature": 0.1, "no_system_role": False, "observation_images": True, "seed": None,
                  "options": {"render_mode": "rgb"}})
    settings_table = _settings_table(lab, submission)
    cells = {"no_system_role": "no", "observation_images": "yes", "seed": "—", "options": "render_mode: rgb",
             "temperature": "0.1"}
    for name, shown in cells.items():
        assert _row(name, shown) in settings_table
    assert "[&#x27;" not in settings_table and "{&#x27;" not in settings_table and ">True<" not in settings_table
    assert "['" not in settings_table and "{'" not in settings_table and ">True<" not in settings_table


@pytest.mark.django_db
def test_an_uploads_page_shows_its_file_and_its_options_but_no_request_setting_that_never_applied(lab):
    model = ModelEntry.objects.create(team=lab.team, name="M")
    digest = "ab" * 32
    submission = Submission.objects.create(
        team=lab.team, model=model, environment=environment_ensure("sokoban"), flow="global", subset="full",
        suite="handmade", status=Submission.Status.INCOMPLETE, source=Submission.Source.UPLOAD,
        settings={"temperature": 0.1, "no_system_role": False, "seed": None, "options": {"render_mode": "rgb"}},
        upload_sha256=digest, missing_scenarios=["3-Sokoban-v1", "4-Sokoban-v1"])
    settings_table = _settings_table(lab, submission)
    assert _row("upload_sha256", digest) in settings_table
    assert _row("options", "render_mode: rgb") in settings_table and _row("seed", "—") in settings_table
    assert "temperature" not in settings_table and "no_system_role" not in settings_table
    assert "['" not in settings_table and "{'" not in settings_table


def test_the_metric_cards_defaults_use_the_same_filter(client, db):
    page = client.get(reverse("metric-card", args=["sokoban"])).content.decode()
    defaults = page[page.index("Default settings"):]
    assert "=True<" not in defaults and "=False<" not in defaults and "=None<" not in defaults
    assert "no_system_role=no" in defaults
