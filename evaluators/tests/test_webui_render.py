"""Rendering untrusted WebUI pages: states, extracted elements, isolation and bounded failures."""
from __future__ import annotations

import io
import os
import signal
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from evaluators.webui.elements import CSS_PROPERTIES
from evaluators.webui.render import PageRenderer
from evaluators.webui.results import PageUnresponsive, RenderedState, RenderResult
from evaluators.webui.selenium_compat import ActionChains, By, CompatDriver, load_actions

pytestmark = pytest.mark.integration

Action = Callable[[CompatDriver], object]


@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with PageRenderer(action_timeout=3.0, load_timeout=3.0, kill_grace=2.0) as shared:
        yield shared


def make_page(root: Path, html: str, folder: str = "page", **files: str) -> Path:
    page_dir = root / folder
    page_dir.mkdir(parents=True, exist_ok=True)
    (page_dir / "index.html").write_text(f"<!doctype html><html><head></head><body>{html}</body></html>",
                                         encoding="utf-8")
    for name, content in files.items():
        (page_dir / name.replace("_", ".")).write_text(content, encoding="utf-8")
    return page_dir


def render(renderer: PageRenderer, page_dir: Path, *actions: Action, **options: object) -> RenderResult:
    options.setdefault("screenshots", False)
    options.setdefault("settle_ms", 0)
    return renderer.render_states(page_dir, list(actions), **options)  # type: ignore[arg-type]


def by_id(state: RenderedState, element_id: str):
    return next(e for e in state.elements if e.attributes.get("id") == element_id)


def click(element_id: str) -> Action:
    def action(driver: CompatDriver) -> None:
        driver.find_element(By.ID, element_id).click()
        time.sleep(0.05)
    action.__name__ = f"click_{element_id}"
    return action


# --- states ----------------------------------------------------------------------------------

COUNTER = ('<h1 id="title" style="color:rgb(10, 20, 30)">Counter</h1>'
           '<button id="inc" onclick="const v = document.getElementById(\'v\'); v.textContent = +v.textContent + 1">'
           "+1</button><div id=\"v\">0</div>")


def test_a_page_renders_an_origin_state_and_one_state_per_action_with_screenshots(renderer: PageRenderer,
                                                                                   tmp_path: Path):
    result = render(renderer, make_page(tmp_path, COUNTER), click("inc"), click("inc"), screenshots=True)
    assert result.load_error is None
    assert [s.name for s in result.states] == ["origin", "click_inc", "click_inc"]
    assert [by_id(s, "v").text for s in result.states] == ["0", "1", "2"]
    with Image.open(io.BytesIO(result.states[-1].screenshot)) as shot:
        assert shot.size == (1920, 937)  # the official evaluator's page viewport today


def test_an_official_actions_file_drives_the_page_through_the_renderer(renderer: PageRenderer, tmp_path: Path):
    page_dir = make_page(tmp_path, COUNTER, folder="学生 统计表")
    (page_dir / "actions.py").write_text(
        "from selenium.webdriver.common.by import By\nimport time\n\n"
        "def press_inc(driver):\n    driver.find_element(By.ID, 'inc').click()\n    time.sleep(0.1)\n\n"
        "actions = [press_inc]\n", encoding="utf-8")
    result = render(renderer, page_dir, *load_actions(page_dir / "actions.py"))
    assert [(s.name, by_id(s, "v").text) for s in result.states] == [("origin", "0"), ("press_inc", "1")]


def test_an_interaction_changes_the_outer_html_of_the_element_it_changed_only(renderer: PageRenderer,
                                                                             tmp_path: Path):
    origin, after = render(renderer, make_page(tmp_path, COUNTER), click("inc")).states
    assert by_id(origin, "v").outer_html == '<div id="v">0</div>'
    assert by_id(after, "v").outer_html == '<div id="v">1</div>'
    assert by_id(origin, "title").outer_html == by_id(after, "title").outer_html
    assert after.dom["/html/body/div[1]"] == '<div id="v">1</div>'


def test_a_failed_action_is_recorded_and_later_actions_still_run(renderer: PageRenderer, tmp_path: Path):
    result = render(renderer, make_page(tmp_path, COUNTER), click("missing"), click("inc"))
    failed, later = result.states[1], result.states[2]
    assert failed.action_error.startswith("NoSuchElementException: no such element")
    assert failed.elements  # still read, so replays can show the page
    assert later.action_error is None and by_id(later, "v").text == "1"


def test_an_unsupported_selenium_call_is_reported_as_such(renderer: PageRenderer, tmp_path: Path):
    def scroll(driver: CompatDriver) -> None:
        ActionChains(driver).scroll_by_amount(0, 200).perform()

    result = render(renderer, make_page(tmp_path, COUNTER), scroll)
    assert result.states[1].action_error == (
        "UnsupportedSeleniumCall: ActionChains.scroll_by_amount is not supported")
    assert result.unsupported_calls == ["ActionChains.scroll_by_amount is not supported"]


# --- extraction ------------------------------------------------------------------------------


def test_rects_are_in_document_coordinates_after_the_page_scrolls(renderer: PageRenderer, tmp_path: Path):
    page_dir = make_page(tmp_path, '<div style="height:2500px"></div>'
                                   '<p id="far" style="margin:0;height:20px;width:100px">far</p>')

    def scroll_down(driver: CompatDriver) -> None:
        driver.execute_script("window.scrollTo(0, document.body.scrollHeight);")

    origin, scrolled = render(renderer, page_dir, scroll_down).states
    assert by_id(origin, "far").rect == by_id(scrolled, "far").rect == (8.0, 2508.0, 100.0, 20.0)


# Values as chromedriver 156 reports them through Selenium's element.rect for the same markup.
GEOMETRY = ('<div id="frac" style="position:absolute;left:10.3px;top:20.6px;width:100.45px;height:33.33px"></div>'
            '<div id="scaled" style="position:absolute;left:300px;top:0;width:10px;height:10px;'
            'transform:scale(1.37)"></div>'
            '<svg id="svg" style="position:absolute;left:400px;top:0" width="200" height="100">'
            '<rect id="shape" x="10.2" y="5.1" width="50.7" height="20.2" transform="scale(2)"/></svg>'
            '<p id="tiny" style="position:absolute;left:700px;top:0;margin:0;width:0.4px;height:0.4px;'
            'overflow:hidden"></p>')


def test_boxes_take_the_corner_from_the_bounding_box_and_the_size_from_the_layout_like_chromedriver(
        renderer: PageRenderer, tmp_path: Path):
    state = render(renderer, make_page(tmp_path, GEOMETRY)).states[0]
    # x, y unrounded; width and height are offsetWidth/offsetHeight: whole pixels, transforms ignored
    assert by_id(state, "frac").rect == (10.296875, 20.59375, 100.0, 33.0)
    assert by_id(state, "scaled").rect[2:] == (10.0, 10.0)
    # SVG children have no offset sizes: their (transformed) bounding box is used
    assert by_id(state, "shape").rect[2:] == pytest.approx((101.4, 40.4), abs=1e-4)
    # both offset sizes 0 → the bounding box again, so a 0.39 × 0.39 box (area 0.15 > 0.1) is an element
    assert by_id(state, "tiny").rect[2:] == (0.390625, 0.390625)


def test_the_bounding_box_geometry_is_there_only_to_measure_what_the_official_sizes_change(tmp_path: Path):
    with pytest.raises(ValueError):
        PageRenderer(geometry="rounded")  # type: ignore[arg-type]
    with PageRenderer(geometry="bounding-box") as measuring:
        state = render(measuring, make_page(tmp_path, GEOMETRY)).states[0]
    assert by_id(state, "frac").rect == (10.296875, 20.59375, 100.4375, 33.328125)
    assert by_id(state, "scaled").rect[2:] == pytest.approx((13.7, 13.7), abs=1e-4)


FORM = ('<form><input id="name" placeholder="Name"><textarea id="note">hi</textarea>'
        '<input id="styled" style="color: red"><div contenteditable="true" id="edit">edit me</div></form>')


def test_a_screenshot_leaves_the_dom_and_the_styles_as_they_were(renderer: PageRenderer, tmp_path: Path):
    def focus(driver: CompatDriver) -> None:
        driver.find_element(By.ID, "name").send_keys("Ada")

    page_dir = make_page(tmp_path, FORM)
    plain = render(renderer, page_dir, focus, screenshots=False)
    shot = render(renderer, page_dir, focus, screenshots=True)
    assert all(state.screenshot for state in shot.states)
    for without, with_shots in zip(plain.states, shot.states):
        assert with_shots.dom == without.dom
        assert [e.styles for e in with_shots.elements] == [e.styles for e in without.elements]
    assert not any('style=""' in html for state in shot.states for html in (state.dom or {}).values())


def test_files_the_page_asks_for_inside_its_folder_that_do_not_exist_are_listed(renderer: PageRenderer,
                                                                                tmp_path: Path):
    page_dir = make_page(tmp_path, '<img id="gone" src="img/missing.png" width="10" height="10">'
                                   '<img id="there" src="pic.svg" width="10" height="10">',
                         pic_svg='<svg xmlns="http://www.w3.org/2000/svg"/>')
    result = render(renderer, page_dir)
    assert [url.rsplit("/", 2)[-2:] for url in result.missing_files] == [["img", "missing.png"]]
    assert result.blocked_urls == []


def test_styles_read_every_listed_property_with_colours_as_selenium_reports_them(renderer: PageRenderer,
                                                                                tmp_path: Path):
    page_dir = make_page(tmp_path, '<h1 id="title">Title</h1>',
                         style_css="h1 { color: #0a141e; background-color: rgba(255, 0, 0, 0.5); "
                                   "font-size: 40px; box-shadow: 2px 2px 4px rgb(1, 2, 3); }")
    (page_dir / "index.html").write_text('<html><head><link rel="stylesheet" href="style.css"></head>'
                                         '<body><h1 id="title">Title</h1></body></html>', encoding="utf-8")
    title = by_id(render(renderer, page_dir).states[0], "title")
    assert set(title.styles) == set(CSS_PROPERTIES)
    assert title.styles["color"] == "rgba(10, 20, 30, 1)"
    assert title.styles["background-color"] == "rgba(255, 0, 0, 0.5)"
    assert title.styles["font-size"] == "40px"
    assert title.styles["box-shadow"] == "rgb(1, 2, 3) 2px 2px 4px 0px"
    assert title.styles["src"] == title.styles["type"] == ""


def test_each_element_carries_text_attributes_descendants_and_a_unique_xpath(renderer: PageRenderer,
                                                                             tmp_path: Path):
    state = render(renderer, make_page(tmp_path, '<div id="a" data-evalby="text|color"><p>one <b>bold</b></p>'
                                                 "<p>two</p></div><div id=\"b\"><p>three</p></div>")).states[0]
    outer = by_id(state, "a")
    assert (outer.tag, outer.text, outer.descendants) == ("div", "one bold\n\ntwo", 3)
    assert outer.attributes == {"id": "a", "data-evalby": "text|color"}
    assert [e.xpath for e in state.elements] == [
        "/html/body/div[1]", "/html/body/div[1]/p[1]", "/html/body/div[1]/p[1]/b[1]", "/html/body/div[1]/p[2]",
        "/html/body/div[2]", "/html/body/div[2]/p[1]"]
    assert [e.index for e in state.elements] == list(range(6))


def test_only_displayed_elements_with_a_visible_area_are_extracted_but_the_dom_has_them_all(
        renderer: PageRenderer, tmp_path: Path):
    hidden = ('<p id="none" style="display:none">x</p><p id="invisible" style="visibility:hidden">x</p>'
              '<div style="opacity:0"><p id="transparent">x</p></div><p id="empty"></p>'
              '<div style="overflow:hidden;height:50px;width:50px"><p id="clipped" style="margin-top:80px">x</p></div>'
              '<p id="offpage" style="position:absolute;left:-500px;width:100px">x</p>'
              '<input type="hidden" id="hid">')
    state = render(renderer, make_page(tmp_path, '<p id="shown">shown</p>' + hidden)).states[0]
    assert {e.attributes.get("id") for e in state.elements if e.tag == "p"} == {"shown"}
    assert len(state.dom) == 10
    assert any('id="clipped"' in html for html in state.dom.values())


def test_a_cjk_folder_name_with_spaces_renders(renderer: PageRenderer, tmp_path: Path):
    page_dir = make_page(tmp_path, '<p id="p">你好</p><img id="img" src="pic.svg" width="20" height="20">',
                         folder="说旅游 评论", pic_svg='<svg xmlns="http://www.w3.org/2000/svg"/>')
    result = render(renderer, page_dir)
    assert result.load_error is None and result.blocked_urls == []
    assert by_id(result.states[0], "p").text == "你好"


# --- isolation and failures ------------------------------------------------------------------


def test_outside_requests_are_blocked_and_recorded_while_the_page_still_renders(renderer: PageRenderer,
                                                                               tmp_path: Path):
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")
    page_dir = make_page(tmp_path, '<p id="p">page</p><img src="https://example.com/logo.png">'
                                   '<iframe src="../secret.txt"></iframe>'
                                   "<script>fetch('http://example.com/api').catch(() => "
                                   "document.getElementById('p').textContent = 'offline');"
                                   "new WebSocket('ws://example.com/socket');</script>")
    result = render(renderer, page_dir, settle_ms=300)
    assert set(result.blocked_urls) == {"https://example.com/logo.png", (tmp_path / "secret.txt").as_uri(),
                                        "http://example.com/api", "ws://example.com/socket"}
    assert by_id(result.states[0], "p").text == "offline"


def test_navigation_away_from_the_page_is_cancelled_and_the_page_stays(renderer: PageRenderer, tmp_path: Path):
    page_dir = make_page(tmp_path, '<a id="out" href="https://example.com/">out</a>'
                                   '<a id="sibling" href="other.html">other</a><p id="p">still here</p>',
                         other_html="<p>other page</p>")
    result = render(renderer, page_dir, click("out"), click("sibling"))
    assert result.blocked_urls == ["https://example.com/", (page_dir / "other.html").as_uri()]
    assert [by_id(s, "p").text for s in result.states] == ["still here"] * 3


def test_target_and_generated_renders_do_not_share_storage(renderer: PageRenderer, tmp_path: Path):
    page_dir = make_page(tmp_path, '<p id="p"></p><script>const n = Number(localStorage.getItem("n") || 0) + 1;'
                                   'localStorage.setItem("n", n); document.getElementById("p").textContent = n;'
                                   "</script>")
    first, second = render(renderer, page_dir), render(renderer, page_dir)
    assert by_id(first.states[0], "p").text == by_id(second.states[0], "p").text == "1"


def test_a_missing_index_html_is_a_load_error(renderer: PageRenderer, tmp_path: Path):
    (tmp_path / "empty").mkdir()
    result = render(renderer, tmp_path / "empty", click("inc"))
    assert result.load_error is not None and "index.html" in result.load_error
    assert result.states == []


def test_page_errors_are_recorded_and_those_raised_on_load_kept_apart(renderer: PageRenderer, tmp_path: Path):
    page_dir = make_page(tmp_path, '<button id="b" onclick="undefinedFunction()">b</button>'
                                   "<script>console.error('broken config'); null.boom;</script>")
    result = render(renderer, page_dir, click("b"))
    assert len(result.page_errors_on_load) == 1 and result.page_errors_on_load[0].startswith("TypeError")
    assert len(result.page_errors) == 2 and "undefinedFunction" in result.page_errors[1]
    assert "broken config" in result.console_errors
    assert any("undefinedFunction" in e for e in result.states[1].console_errors)


def test_an_infinite_loop_in_a_click_handler_is_stopped_and_the_worker_goes_on(renderer: PageRenderer,
                                                                               tmp_path: Path):
    page_dir = make_page(tmp_path, '<button id="spin" onclick="while (true) {}">spin</button>' + COUNTER)
    started = time.monotonic()
    result = render(renderer, page_dir, click("inc"), click("spin"), click("inc"))
    assert time.monotonic() - started < 15
    assert result.unresponsive
    assert [s.action_error is None for s in result.states] == [True, True, False, False]
    assert result.states[2].action_error.startswith("PageUnresponsive: action 'click_spin' did not finish")
    assert result.states[3].action_error == "not run: the page stopped responding during 'click_spin'"
    again = render(renderer, make_page(tmp_path, COUNTER, folder="next"), click("inc"))
    assert by_id(again.states[1], "v").text == "1"


def test_a_browser_that_dies_while_a_blank_page_opens_is_relaunched_and_the_page_still_renders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    opened = PageRenderer._open_context
    calls: list[int | None] = []

    def dying_once(self: PageRenderer, browser, *args, **kwargs):
        calls.append(self.browser_pid)
        if len(calls) == 1 and self.browser_pid is not None:
            os.kill(self.browser_pid, signal.SIGKILL)  # before the page's own files are even asked for
        return opened(self, browser, *args, **kwargs)

    monkeypatch.setattr(PageRenderer, "_open_context", dying_once)
    with PageRenderer(action_timeout=3.0, load_timeout=3.0, kill_grace=2.0) as fresh:
        result = render(fresh, make_page(tmp_path, COUNTER), click("inc"))
        assert by_id(result.states[1], "v").text == "1" and not result.unresponsive
        assert len(calls) == 2 and None not in calls and calls[0] != calls[1]


def test_a_browser_that_dies_twice_while_opening_is_an_unresponsive_page_not_a_hang(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    opened = PageRenderer._open_context

    def dying(self: PageRenderer, browser, *args, **kwargs):
        assert self.browser_pid is not None
        os.kill(self.browser_pid, signal.SIGKILL)
        return opened(self, browser, *args, **kwargs)

    monkeypatch.setattr(PageRenderer, "_open_context", dying)
    with (PageRenderer(action_timeout=3.0, load_timeout=3.0, kill_grace=2.0) as fresh,
          pytest.raises(PageUnresponsive, match="the page crashed or was closed")):
        render(fresh, make_page(tmp_path, COUNTER))


def test_a_page_that_hangs_while_loading_is_a_load_error(renderer: PageRenderer, tmp_path: Path):
    result = render(renderer, make_page(tmp_path, "<p>x</p><script>while (true) {}</script>"))
    assert result.states == [] and result.load_error is not None
    assert render(renderer, make_page(tmp_path, COUNTER, folder="next")).states[0].elements


def test_sleeps_inside_actions_do_not_count_against_the_action_time_limit(renderer: PageRenderer,
                                                                          tmp_path: Path):
    page_dir = make_page(tmp_path, COUNTER)
    (slow,) = load_actions(_write(page_dir / "actions.py",
                                  "from selenium.webdriver.common.by import By\nimport time\n"
                                  "def slow(driver):\n    driver.find_element(By.ID, 'inc').click()\n"
                                  "    time.sleep(3.5)  # longer than the 3 s limit on non-sleeping work\n"
                                  "actions = [slow]\n"))
    result = render(renderer, page_dir, slow)
    assert result.states[1].action_error is None and by_id(result.states[1], "v").text == "1"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_trace_zip_is_written_when_asked(renderer: PageRenderer, tmp_path: Path):
    trace = tmp_path / "out" / "trace.zip"
    result = render(renderer, make_page(tmp_path, COUNTER), click("inc"), trace_path=trace)
    assert result.trace_path == trace
    with zipfile.ZipFile(trace) as archive:
        assert any(name.endswith(".trace") for name in archive.namelist())


def test_a_form_submit_that_reloads_the_page_is_allowed_and_the_new_document_is_read(renderer: PageRenderer,
                                                                                    tmp_path: Path):
    page_dir = make_page(tmp_path, '<form><input id="q" name="q"></form>'
                                   "<p id=\"seen\"></p><script>document.getElementById('seen').textContent = "
                                   "new URLSearchParams(location.search).get('q') || 'none'</script>")

    def search(driver: CompatDriver) -> None:
        driver.find_element(By.ID, "q").send_keys("shoes")
        driver.find_element(By.ID, "q").submit()

    result = render(renderer, page_dir, search)
    assert [by_id(s, "seen").text for s in result.states] == ["none", "shoes"]
    assert result.blocked_urls == []


def test_a_popup_is_closed_and_the_page_keeps_its_state(renderer: PageRenderer, tmp_path: Path):
    page_dir = make_page(tmp_path, '<button id="open" onclick="window.open(\'index.html\'); '
                                   "this.textContent = 'opened'\">open</button>")
    result = render(renderer, page_dir, click("open"))
    assert by_id(result.states[1], "open").text == "opened"
    assert result.states[1].action_error is None


def test_the_watchdog_escalates_in_two_stages_and_sleeps_extend_its_deadline():
    from evaluators.webui.watchdog import Watchdog

    stages: list[int] = []
    watchdog = Watchdog(stages.append, grace=0.2)
    try:
        with watchdog.guard(0.3):
            watchdog.extend(0.5)
            time.sleep(0.5)
        assert stages == [] and not watchdog.fired
        with watchdog.guard(0.1):
            time.sleep(0.6)
        assert stages == [1, 2] and watchdog.fired
    finally:
        watchdog.close()


def test_a_page_that_breaks_json_stringify_fails_its_state_instead_of_the_worker(renderer: PageRenderer,
                                                                                tmp_path: Path):
    page_dir = make_page(tmp_path, '<button id="b" onclick="JSON.stringify = () => \'{broken\'">break</button>'
                                   + COUNTER)
    result = render(renderer, page_dir, click("b"), click("inc"))
    assert result.states[0].elements
    assert [s.action_error.split(":")[0] for s in result.states[1:]] == ["PageReadError", "PageReadError"]
    sabotaged = render(renderer, make_page(tmp_path, "<script>JSON.stringify = () => 'x'</script>", folder="early"))
    assert sabotaged.states == []
    assert sabotaged.load_error.startswith("the page returned an unreadable state")
