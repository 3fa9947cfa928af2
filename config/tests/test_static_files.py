"""Collected static files are served compressed, under hashed names browsers keep for a year."""
from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.management import call_command
from django.test import Client, override_settings

COLLECTED = {
    "STORAGES": {"default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
                 "staticfiles": {"BACKEND": "config.staticstorage.CollectedStaticStorage"}},
    "WHITENOISE_USE_FINDERS": False,
    "WHITENOISE_AUTOREFRESH": False,
}


@pytest.fixture(scope="module")
def collected_once(tmp_path_factory):
    """One collection for the module's tests, which only read it: compressing every file costs seconds."""
    root = tmp_path_factory.mktemp("collected") / "static"
    with override_settings(**COLLECTED, STATIC_ROOT=root):
        call_command("collectstatic", interactive=False, verbosity=0)
    return root


@pytest.fixture
def collected(settings, collected_once):
    for name, value in COLLECTED.items():
        setattr(settings, name, value)
    settings.STATIC_ROOT = collected_once
    return collected_once


def test_plotly_is_served_gzipped_under_its_hashed_name_with_a_long_immutable_cache_header(collected, settings):
    settings.DEBUG = True  # the demo's development server: hashed names all the same
    url = staticfiles_storage.url("vendor/plotly.min.js")
    assert re.fullmatch(r"/static/vendor/plotly\.min\.[0-9a-f]{12}\.js", url), url
    assert (collected / url.removeprefix("/static/")).with_suffix(".js.gz").is_file()
    # A new client loads the middleware, and WhiteNoise its files, with these settings.
    response = Client().get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert response.status_code == 200
    assert response.headers["Content-Encoding"] in ("gzip", "br")
    cache_control = response.headers["Cache-Control"]
    assert "immutable" in cache_control and "public" in cache_control
    assert int(re.search(r"max-age=(\d+)", cache_control).group(1)) >= 365 * 24 * 3600
    body = b"".join(response.streaming_content)  # type: ignore[attr-defined]
    assert len(body) < (collected / "vendor" / "plotly.min.js").stat().st_size / 3


def test_a_page_links_its_scripts_and_styles_by_their_hashed_names(collected, db):
    page = Client().get("/").content.decode()
    assert re.search(r'href="/static/css/site\.[0-9a-f]{12}\.css"', page)
    assert re.search(r'src="/static/js/board_sort\.[0-9a-f]{12}\.js"', page)


def test_the_api_docs_load_swagger_ui_and_redoc_collected_under_hashed_names(collected, db):
    swagger = Client().get("/api/docs/").content.decode()
    redoc = Client().get("/api/redoc/").content.decode()
    sidecar = r"/static/drf_spectacular_sidecar/"
    assets = [re.search(sidecar + r"swagger-ui-dist/swagger-ui-bundle\.[0-9a-f]{12}\.js", swagger),
              re.search(sidecar + r"swagger-ui-dist/swagger-ui\.[0-9a-f]{12}\.css", swagger),
              re.search(sidecar + r"redoc/bundles/redoc\.standalone\.[0-9a-f]{12}\.js", redoc),
              re.search(r"/static/js/api_reference\.[0-9a-f]{12}\.js", redoc)]
    assert all(assets), assets
    for asset in assets:
        response = Client().get(asset.group(0), HTTP_ACCEPT_ENCODING="gzip")
        assert response.status_code == 200 and response.headers["Content-Encoding"] in ("gzip", "br")


def test_the_icon_browsers_ask_for_on_pages_that_name_none_is_the_sites_own(client) -> None:
    from django.templatetags.static import static

    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (301, static("favicon.svg"))
