"""The import-time WebUI page check: what makes a page not evaluable, and how the import stores it."""
from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluators.tests.webui_pages import PAGES
from evaluators.webui.elements import Element, PageState
from evaluators.webui.page_check import PageCheck, assess, missing_references, summary_lines, url_valued_targets
from evaluators.webui.results import RenderedState, RenderResult


def target(xpath: str, rect: tuple[float, float, float, float], *, filter_by: str = "has_text",
           evalby: str = "", styles: dict[str, str] | None = None, text: str = "x") -> Element:
    return Element(index=0, tag="div", rect=rect, text=text,
                   attributes={"data-filter-by": filter_by, "data-evalby": evalby}, styles=styles or {},
                   descendants=0, outer_html=f"<div>{text}</div>", xpath=xpath)


# --- without a browser -------------------------------------------------------------------------


def test_missing_references_lists_local_files_named_by_the_page_and_its_stylesheets_only(tmp_path: Path):
    (tmp_path / "css").mkdir()
    (tmp_path / "here.png").write_bytes(b"")
    (tmp_path / "index.html").write_text(
        '<link rel="stylesheet" href="css/site.css"><link rel="stylesheet" href="https://cdn.example.org/x.css">'
        '<img src="here.png"><img src="img/gone%20away.png"><img src="data:image/png;base64,AAAA">'
        '<a href="other.html">a link is not fetched</a><script src="app.js"></script>'
        '<div style="background-image: url(\'inline.svg\')"></div>', encoding="utf-8")
    (tmp_path / "css" / "site.css").write_text("body { background: url(../bg.jpg) } .x { background: url(#f) }",
                                               encoding="utf-8")
    assert missing_references(tmp_path) == ["img/gone away.png", "app.js", "inline.svg", "bg.jpg"]


def test_targets_compared_for_equality_on_a_url_value_are_listed_once():
    background = {"background-image": 'url("file:///pages/a/bg.png")'}
    states = [PageState("origin", [target("/html/body/div[1]", (0, 0, 10, 10), filter_by="background-image",
                                          styles=background),
                                   target("/html/body/div[2]", (0, 20, 10, 10), evalby="background-image|color",
                                          styles=background),
                                   target("/html/body/div[3]", (0, 40, 10, 10), evalby="color", styles=background)]),
              PageState("open", [target("/html/body/div[2]", (0, 20, 10, 10), evalby="background-image",
                                        styles=background)])]
    assert url_valued_targets(states) == ["/html/body/div[1] background-image", "/html/body/div[2] background-image"]


def render_result(*states: RenderedState, **fields) -> RenderResult:
    return RenderResult(states=list(states), **fields)


def test_a_page_whose_targets_carry_no_weight_is_flagged(tmp_path: Path):
    (tmp_path / "index.html").write_text("<p>hi</p>", encoding="utf-8")
    plain = Element(index=0, tag="p", rect=(0, 0, 10, 10), text="hi", attributes={}, styles={}, descendants=0,
                    outer_html="<p>hi</p>", xpath="/html/body/p")
    rendered = render_result(RenderedState("origin", [plain]))
    check = assess("plain", tmp_path, rendered, rendered)
    assert check.zero_weight and check.total_weight == 0.0
    assert check.problems == ["the annotated elements have zero total weight (every reply scores 0)"]
    assert check.status == "flagged"


def test_an_action_failing_on_the_target_and_a_losing_copy_are_both_explained(tmp_path: Path):
    (tmp_path / "index.html").write_text("<div>x</div>", encoding="utf-8")
    box = target("/html/body/div", (0, 0, 100, 20), filter_by="text", evalby="text|color",
                 styles={"color": "rgba(0, 0, 0, 1)"}, text="Now 10:00")
    later = target("/html/body/div", (0, 0, 100, 20), filter_by="text", evalby="text|color",
                   styles={"color": "rgba(0, 0, 0, 1)"}, text="Now 10:01")
    first = render_result(RenderedState("origin", [box]), RenderedState("open", [box], action_error="Boom: no #x"),
                          blocked_urls=["https://fonts.example.org/f.css"])
    copy = render_result(RenderedState("origin", [later]), RenderedState("open", [later]))
    check = assess("clock", tmp_path, first, copy)
    assert check.failed_actions == ["open: Boom: no #x"]
    assert check.blocked_requests == ["https://fonts.example.org/f.css"]
    # the text filter fails on "10:01" (s = 1 − 1 = 0 ≥ −1, still matched): text similarity 0 in both states
    assert check.perfect_copy_score is not None and check.perfect_copy_score < 100
    assert check.perfect_copy_losses == ["origin: /html/body/div text 0.00", "open: /html/body/div text 0.00"]
    problems = check.problems
    assert problems[0] == "scripted action(s) fail on the target page: open: Boom: no #x"
    assert problems[1] == "request(s) blocked by the sandbox: https://fonts.example.org/f.css"
    assert problems[2].startswith(f"a perfect copy scores {check.perfect_copy_score:.2f}, not 100: origin:")


def test_a_check_survives_the_trip_through_json_and_the_summary_counts_each_kind():
    good = PageCheck(page="good", total_weight=10.0, perfect_copy_score=100.0)
    bad = PageCheck(page="bad", total_weight=10.0, perfect_copy_score=100.0, missing_files=["a.png"])
    stored = json.loads(json.dumps(bad.as_dict()))
    assert stored["status"] == "flagged" and stored["problems"] == ["missing file(s): a.png"]
    assert PageCheck.from_dict(stored) == bad
    assert summary_lines([good, bad], reused=1) == [
        "webui page 'bad' flagged:", "  - missing file(s): a.png",
        "webui page check: 2 page(s), 1 flagged (missing files 1); 1 unchanged page(s) kept their earlier check"]


# --- the import, with a browser ------------------------------------------------------------------

ACTION = """from selenium.webdriver.common.by import By
import time


def press(driver):
    driver.find_element(By.ID, '{element_id}').click()
    time.sleep(0.1)


actions = [press]
"""


def write_page(root: Path, name: str, body: str, *, element_id: str = "go", **files: str) -> None:
    page = root / "WebUI" / name
    page.mkdir(parents=True)
    (page / "index.html").write_text(f"<!doctype html><html><head></head><body>{body}</body></html>",
                                     encoding="utf-8")
    (page / "tasks.md").write_text(f"# {name}\n\nA test page.\n", encoding="utf-8")
    (page / "actions.py").write_text(ACTION.format(element_id=element_id), encoding="utf-8")
    for file_name, content in files.items():
        (page / file_name).write_text(content, encoding="utf-8")


BUTTON = ('<button id="go" data-filter-by="text" data-evalby="text|color" '
          'onclick="this.textContent=\'Done\'">Go</button>')
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'


@pytest.fixture
def resources(tmp_path: Path) -> Path:
    root = tmp_path / "resources"
    shutil.copytree(PAGES / "step-counter", root / "WebUI" / "step-counter")
    write_page(root, "broken action", BUTTON, element_id="missing")
    write_page(root, "no weight", '<button id="go">Go</button><p data-filter-by="text" data-evalby="text" '
                                  'style="display:none">hidden</p>')
    write_page(root, "missing asset", BUTTON + '<img src="gone.png" width="20" height="20">')
    write_page(root, "outside", BUTTON + '<link rel="stylesheet" href="https://cdn.example.org/site.css">')
    write_page(root, "url background", BUTTON + '<div id="hero" data-filter-by="has_text" '
               'data-evalby="background-image" style="width:50px;height:50px;background-image:url(bg.svg)">'
               'hero</div>', **{"bg.svg": SVG})
    names = sorted(p.name for p in (root / "WebUI").iterdir())
    (root / "WebUI_all.json").write_text(json.dumps([f"resources/WebUI/{n}" for n in names]), encoding="utf-8")
    (root / "WebUI_mini.json").write_text(json.dumps(["resources/WebUI/step-counter", "resources/WebUI/no weight"]),
                                          encoding="utf-8")
    return root


def run_import(resources: Path, *args: str) -> str:
    out = StringIO()
    call_command("import_magebench", str(resources), "--suite", "checked", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.integration
@pytest.mark.django_db
def test_the_import_runs_every_page_once_and_flags_those_that_cannot_be_evaluated(resources: Path, client):
    from catalogue.models import Scenario

    out = run_import(resources)
    stored = {s.key: s for s in Scenario.objects.filter(environment_id="webui", suite="checked")}
    status = {key: s.tags["page_check"] for key, s in stored.items()}
    assert status == {"step-counter": "ok", "broken action": "flagged", "no weight": "flagged",
                      "missing asset": "flagged", "outside": "flagged", "url background": "flagged"}
    checks = {key: s.data["page_check"] for key, s in stored.items()}
    assert checks["step-counter"]["perfect_copy_score"] == pytest.approx(100.0)
    assert checks["step-counter"]["problems"] == []
    assert checks["broken action"]["failed_actions"][0].startswith("press: NoSuchElementException")
    assert checks["no weight"]["total_weight"] == 0.0
    assert checks["missing asset"]["missing_files"] == ["gone.png"]
    assert checks["outside"]["blocked_requests"] == ["https://cdn.example.org/site.css"]
    # the computed url() differs between the page's folder and the copy's: the official comparison fails
    assert checks["url background"]["url_properties"] == ["/html/body/div[1] background-image"]
    assert checks["url background"]["perfect_copy_score"] < 100
    assert any("background-image 0.00" in loss for loss in checks["url background"]["perfect_copy_losses"])
    assert "webui page 'url background' flagged:" in out
    assert "webui page check: 6 page(s), 5 flagged" in out

    # An unchanged page keeps its check; --recheck-pages runs them again.
    assert "6 unchanged page(s) kept their earlier check" in run_import(resources)
    assert "kept their earlier check" not in run_import(resources, "--recheck-pages")

    # The board of the shown set says how many of its pages are affected.
    page = client.get(reverse("board", args=["webui", "global", "mini"]) + "?suite=checked").content.decode()
    assert "1 of the 2 pages shown cannot be evaluated as the" in page and "no weight" in page
    page = client.get(reverse("board", args=["webui", "global", "full"]) + "?suite=checked").content.decode()
    assert "5 of the 6 pages shown cannot be evaluated" in page


@pytest.mark.django_db
def test_the_page_check_can_be_skipped_and_then_the_board_says_nothing(resources: Path, client):
    from catalogue.models import Scenario

    out = run_import(resources, "--no-page-check")
    assert "page check" not in out
    assert not any("page_check" in s.tags for s in Scenario.objects.filter(environment_id="webui"))
    page = client.get(reverse("board", args=["webui", "global", "mini"]) + "?suite=checked").content.decode()
    assert "page-check-notice" not in page
