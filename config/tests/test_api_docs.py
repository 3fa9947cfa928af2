"""The API's documentation: Swagger UI and ReDoc served from the site's own files under its policy,
the schema they show (every operation summarised) and its download as YAML and JSON."""
from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest
import yaml
from django.test import Client

from config.apidocs import redoc_style_sources
from config.security import HEADER

SCHEMA = "/api/v1/schema/"


def _documented_paths(client: Client) -> set[str]:
    return set(client.get(SCHEMA, {"format": "json"}).json()["paths"])


def _requests_elsewhere(page, site_url: str) -> list[str]:
    """The URLs the page asks of any host but the site, recorded from now on."""
    site = urlsplit(site_url).netloc
    elsewhere: list[str] = []
    page.on("request", lambda r: elsewhere.append(r.url)
            if urlsplit(r.url).scheme not in ("data", "blob") and urlsplit(r.url).netloc != site else None)
    return elsewhere


@pytest.mark.django_db
def test_every_documented_operation_has_a_summary_and_a_description(client):
    document = client.get(SCHEMA, {"format": "json"}).json()
    operations = [(f"{method.upper()} {path}", operation) for path, methods in document["paths"].items()
                  for method, operation in methods.items()]

    assert len(operations) >= 10
    assert [name for name, op in operations if not op.get("summary") or not op.get("description")] == []
    # Tagged by the segment after /api/v1/, as the docs pages group them, never all under "v1" or "api".
    tags = {tag for _, op in operations for tag in op["tags"]}
    assert {"boards", "submissions", "uploads", "attempts"} <= tags and not {"v1", "api"} & tags
    assert {tag["name"] for tag in document["tags"]} == tags


@pytest.mark.django_db
def test_the_schema_downloads_as_yaml_and_json_from_links_on_the_docs_pages(client):
    for docs in ("/api/docs/", "/api/redoc/"):
        page = client.get(docs).content.decode()
        assert f'href="{SCHEMA}?format=yaml" download="magebench-api.yaml"' in page, docs
        assert f'href="{SCHEMA}?format=json" download="magebench-api.json"' in page, docs

    as_yaml = client.get(SCHEMA, {"format": "yaml"})
    as_json = client.get(SCHEMA, {"format": "json"})

    assert as_yaml.status_code == as_json.status_code == 200
    assert as_yaml.headers["Content-Type"].startswith("application/vnd.oai.openapi")
    assert as_json.headers["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert yaml.safe_load(as_yaml.content) == json.loads(as_json.content)


@pytest.mark.django_db
def test_the_docs_pages_load_their_scripts_and_styles_from_the_site_and_hold_no_inline_script(client):
    swagger = client.get("/api/docs/").content.decode()
    redoc = client.get("/api/redoc/").content.decode()
    script = client.get("/api/docs/", {"script": ""})

    assert '<script src="/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js">' in swagger
    assert '<link rel="stylesheet" href="/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css">' in swagger
    assert '<script src="/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js">' in redoc
    for page in (swagger, redoc):
        assert not re.search(r'(?:src|href)="(?:https?:)?//', page)
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=", page)
    # Swagger UI's start-up script is a file of its own, pointed at the site's schema.
    assert '<script src="/api/docs/?script="></script>' in swagger
    assert script["Content-Type"].startswith("application/javascript")
    assert f'url: "{SCHEMA}"' in script.content.decode()


@pytest.mark.django_db
def test_only_the_redoc_page_allows_redocs_own_stylesheet_and_by_its_hash_alone(client):
    site_policy = client.get("/").headers[HEADER]
    redoc_policy = client.get("/api/redoc/").headers[HEADER]
    hashes = redoc_style_sources()

    assert len(hashes) == 1 and hashes[0].startswith("'sha256-")
    assert client.get("/api/docs/").headers[HEADER] == site_policy
    assert hashes[0] not in site_policy
    site_styles = re.search(r"style-src ([^;]*)", site_policy).group(1)
    assert re.search(r"style-src ([^;]*)", redoc_policy).group(1) == f"{site_styles} {hashes[0]}"
    assert redoc_policy.replace(f" {hashes[0]}", "") == site_policy


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_the_header_s_api_link_opens_swagger_ui_which_lists_every_operation_and_tries_one_on_the_site(
        live_server, site_page, wait_for):
    documented = _documented_paths(Client())
    page, errors = site_page(viewport={"width": 1280, "height": 900})
    elsewhere = _requests_elsewhere(page, live_server.url)
    page.goto(f"{live_server.url}/")

    page.locator("header.top nav").get_by_role("link", name="API", exact=True).click()
    page.wait_for_url("**/api/docs/")
    paths = page.locator(".opblock-summary-path")
    paths.first.wait_for()

    assert {paths.nth(i).get_attribute("data-path") for i in range(paths.count())} == documented
    assert "A board's ranked entries" in page.locator(".opblock-summary-description").all_inner_texts()
    queue = page.locator(".opblock", has=page.locator('[data-path="/api/v1/queue/"]'))
    queue.locator(".opblock-summary").click()
    queue.get_by_role("button", name="Try it out").click()
    queue.get_by_role("button", name="Execute").click()
    status = queue.locator(".live-responses-table .response .response-col_status")
    status.first.wait_for()
    assert status.first.inner_text().strip() == "200"
    assert '"active": []' in queue.locator(".live-responses-table .response-col_description pre").first.inner_text()
    assert errors == [] and elsewhere == []


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_the_reference_page_renders_every_operation_with_redoc_and_asks_nothing_of_another_host(
        live_server, site_page, wait_for):
    page, errors = site_page(viewport={"width": 1280, "height": 900})
    elsewhere = _requests_elsewhere(page, live_server.url)
    page.goto(f"{live_server.url}/api/docs/")

    page.get_by_role("link", name="Reference (ReDoc)").click()
    page.wait_for_url("**/api/redoc/")
    page.get_by_role("heading", name="A board's ranked entries").wait_for()

    headings = page.locator("[data-section-id^='tag/'] h2").all_inner_texts()
    assert {"Evaluate an OpenAI-compatible endpoint on a board", "Submit model outputs produced offline",
            "The evaluation queue"} <= set(headings)
    # ReDoc's side menu asks for Redocly's logo from Redocly's host; it is given no source and dropped.
    wait_for(lambda: page.locator("img[alt='redocly logo']").count() == 0, 10, "the logo to be dropped")
    # The stylesheet ReDoc injects (its scroll bars') was allowed, not refused.
    assert page.evaluate("[...document.styleSheets].some(s => [...s.cssRules].some(r => r.selectorText === '.ps'))")
    assert errors == [] and elsewhere == []
