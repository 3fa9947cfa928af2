"""The Selenium facade: official actions.py files run unchanged on a Playwright page."""
from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.webui.render import PageRenderer
from evaluators.webui.selenium_compat import (
    ActionChains,
    ActionsFileError,
    By,
    CompatDriver,
    ElementClickInterceptedException,
    InvalidSelectorException,
    Keys,
    MoveTargetOutOfBoundsException,
    NoSuchElementException,
    UnsupportedSeleniumCall,
    WebDriverException,
    cooperative_sleep,
    load_actions,
)
from evaluators.webui.selenium_compat.keys import PLAYWRIGHT_KEYS

pytestmark = pytest.mark.integration

Opener = Callable[..., CompatDriver]


@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with PageRenderer(action_timeout=5.0) as shared:
        yield shared


@pytest.fixture
def open_page(renderer: PageRenderer, tmp_path: Path) -> Iterator[Opener]:
    """Write ``html`` as a page folder's index.html and return a driver on it, loaded."""
    with contextlib.ExitStack() as stack:
        def opener(html: str, folder: str = "page") -> CompatDriver:
            page_dir = tmp_path / folder
            page_dir.mkdir(parents=True, exist_ok=True)
            (page_dir / "index.html").write_text(f"<!doctype html><html><body>{html}</body></html>", encoding="utf-8")
            return stack.enter_context(renderer.open_page(page_dir)).driver
        yield opener


def js(driver: CompatDriver, expression: str) -> Any:
    return driver.page.evaluate(expression)


# --- lookups ---------------------------------------------------------------------------------

LOCATOR_PAGE = """
<div id="box" class="card main"><p name="first">one</p><p class="note">two</p></div>
<a href="#a">Read the docs</a><a href="#b">Docs</a><select id="s"><option>x</option><option>y</option></select>
"""


def test_by_names_carry_the_strings_selenium_sends():
    assert (By.ID, By.NAME, By.XPATH, By.CSS_SELECTOR) == ("id", "name", "xpath", "css selector")
    assert (By.CLASS_NAME, By.TAG_NAME, By.LINK_TEXT, By.PARTIAL_LINK_TEXT) == (
        "class name", "tag name", "link text", "partial link text")


def test_every_locator_strategy_finds_what_selenium_would(open_page: Opener):
    driver = open_page(LOCATOR_PAGE)
    assert driver.find_element(By.ID, "box").get_attribute("class") == "card main"
    assert driver.find_element(By.NAME, "first").text == "one"
    assert driver.find_element(By.CLASS_NAME, "note").text == "two"
    assert driver.find_element(By.CSS_SELECTOR, "div.card.main > p:nth-child(2)").text == "two"
    assert driver.find_element(By.XPATH, "//p[contains(text(), 'tw')]").text == "two"
    assert [p.text for p in driver.find_elements(By.TAG_NAME, "p")] == ["one", "two"]
    assert driver.find_element(By.LINK_TEXT, "Docs").get_attribute("href").endswith("#b")
    assert [a.text for a in driver.find_elements(By.PARTIAL_LINK_TEXT, "ocs")] == ["Read the docs", "Docs"]
    assert [o.text for o in driver.find_element(By.ID, "s").find_elements(By.TAG_NAME, "option")] == ["x", "y"]
    assert driver.find_element(By.ID, "box").find_element(By.CLASS_NAME, "note").tag_name == "p"


def test_a_missing_element_fails_at_once_instead_of_waiting(open_page: Opener):
    driver = open_page("<script>setTimeout(() => document.body.insertAdjacentHTML('beforeend', "
                       "'<b id=late>late</b>'), 3000)</script>")
    started = time.monotonic()
    with pytest.raises(NoSuchElementException, match="late"):
        driver.find_element(By.ID, "late")
    assert driver.find_elements(By.CSS_SELECTOR, "#late") == []
    # well under the 3 s after which the element would exist, with room for a busy host
    assert time.monotonic() - started < 2.5


def test_an_invalid_selector_raises_invalid_selector(open_page: Opener):
    driver = open_page("<p>x</p>")
    with pytest.raises(InvalidSelectorException):
        driver.find_element(By.CSS_SELECTOR, "p[")
    with pytest.raises(InvalidSelectorException):
        driver.find_element(By.XPATH, "//p/text()")


# --- element actions -------------------------------------------------------------------------


def test_click_runs_the_handler_and_leaves_the_pointer_on_the_element_centre(open_page: Opener):
    driver = open_page('<button id="b" style="position:absolute;left:100px;top:50px;width:200px;height:40px" '
                       "onclick=\"this.textContent='clicked'\">go</button>")
    driver.find_element(By.ID, "b").click()
    assert driver.find_element(By.ID, "b").text == "clicked"
    assert driver.pointer == (200, 70)


def test_a_click_below_the_fold_scrolls_the_element_into_view_first(open_page: Opener):
    driver = open_page('<div style="height:3000px"></div><button id="b" onclick="this.textContent=\'ok\'">far</button>')
    driver.find_element(By.ID, "b").click()
    assert driver.find_element(By.ID, "b").text == "ok"
    assert js(driver, "window.scrollY") > 1000


def test_a_click_on_a_covered_element_raises_click_intercepted_within_about_a_second(open_page: Opener):
    driver = open_page('<button id="b">under</button>'
                       '<div style="position:fixed;inset:0;background:rgba(0,0,0,.5)"></div>')
    started, page_started = driver.clock(), js(driver, "performance.now()")
    with pytest.raises(ElementClickInterceptedException, match="Other element would receive the click"):
        driver.find_element(By.ID, "b").click()
    # a second of the page's time (which the virtual clock passes without waiting for it); the
    # session clock also counts the host's own time, so only its lower bound is sharp
    assert driver.clock() - started >= 1.0
    assert 1000 <= js(driver, "performance.now()") - page_started < 1200


def test_clicking_an_option_selects_it_on_its_select_and_fires_change(open_page: Opener):
    driver = open_page('<select id="op" onchange="document.title=this.value">'
                       '<option value="-">minus</option><option value="+">plus</option></select>')
    driver.find_element(By.ID, "op").click()
    driver.find_element(By.XPATH, "//option[@value='+']").click()
    assert js(driver, "document.getElementById('op').value") == "+"
    assert js(driver, "document.title") == "+"
    assert driver.find_element(By.XPATH, "//option[@value='+']").is_selected()


def test_send_keys_types_after_the_current_value_and_enter_is_a_key_press(open_page: Opener):
    driver = open_page('<input id="q" value="ab"><textarea id="t"></textarea>'
                       "<script>window.keys=[];document.addEventListener('keyup',e=>keys.push(e.key))</script>")
    driver.find_element(By.ID, "q").send_keys("cd", Keys.ENTER)
    assert js(driver, "document.getElementById('q').value") == "abcd"
    driver.find_element(By.ID, "t").send_keys("one\ntwo")
    assert js(driver, "document.getElementById('t').value") == "one\ntwo"
    assert js(driver, "keys.filter(k => k === 'Enter').length") == 2


def test_send_keys_on_a_select_picks_the_option_by_its_text_even_in_chinese(open_page: Opener):
    driver = open_page('<select name="city" onchange="document.title=this.value">'
                       '<option>北京</option><option>上海</option><option>广州</option></select>')
    driver.find_element(By.NAME, "city").send_keys("上海")
    assert js(driver, "document.querySelector('select').value") == "上海"
    assert js(driver, "document.title") == "上海"


def test_a_colour_input_gets_its_value_assigned_without_events_as_chromedriver_does(open_page: Opener):
    driver = open_page('<input type="color" id="c" oninput="document.title=\'input\'">')
    driver.find_element(By.ID, "c").send_keys("#ff0000")
    assert js(driver, "document.getElementById('c').value") == "#ff0000"
    assert js(driver, "document.title") == ""


def test_a_range_input_is_reset_by_clear_and_ignores_typed_digits(open_page: Opener):
    driver = open_page('<input type="range" id="r" min="0" max="200" value="20" '
                       "onchange=\"document.title='change '+this.value\">")
    slider = driver.find_element(By.ID, "r")
    slider.clear()
    assert js(driver, "document.title") == "change 100"
    slider.send_keys("50")
    assert js(driver, "document.getElementById('r').value") == "100"


def test_a_date_input_receives_keystrokes_segment_by_segment(open_page: Opener):
    driver = open_page('<input type="date" id="d">')
    driver.find_element(By.ID, "d").send_keys("05022024")  # en-US fields: month, day, year
    assert js(driver, "document.getElementById('d').value") == "2024-05-02"


def test_clear_empties_a_field_fires_change_and_blurs_it(open_page: Opener):
    driver = open_page('<input id="n" type="number" value="42" '
                       "onchange=\"document.title='changed'\" onblur=\"document.body.dataset.blurred='yes'\">")
    driver.find_element(By.ID, "n").clear()
    assert js(driver, "[document.getElementById('n').value, document.title, document.body.dataset.blurred]") == [
        "", "changed", "yes"]
    with pytest.raises(WebDriverException, match="invalid element state"):
        open_page('<input type="checkbox" id="c">', folder="other").find_element(By.ID, "c").clear()


def test_submit_dispatches_a_cancelable_submit_event_and_needs_a_form(open_page: Opener):
    driver = open_page('<form id="f"><input id="todo"></form><input id="loose">'
                       "<script>window.added=[];document.getElementById('f').addEventListener('submit', e => {"
                       "e.preventDefault(); added.push(document.getElementById('todo').value)})</script>")
    driver.find_element(By.ID, "todo").send_keys("milk")
    driver.find_element(By.ID, "todo").submit()
    assert js(driver, "window.added") == ["milk"]  # prevented: no reload, state kept
    with pytest.raises(WebDriverException, match="nested inside a form"):
        driver.find_element(By.ID, "loose").submit()


def test_text_is_the_rendered_text_and_empty_for_a_hidden_element(open_page: Opener):
    driver = open_page('<p id="p" style="text-transform:uppercase">  hello&nbsp;world </p>'
                       '<p id="h" style="display:none">secret</p>')
    assert driver.find_element(By.ID, "p").text == "HELLO WORLD"
    assert driver.find_element(By.ID, "h").text == ""


def test_element_state_and_attribute_readers_follow_selenium(open_page: Opener):
    driver = open_page('<input type="checkbox" id="c" checked><input id="i" value="v">'
                       '<div id="o" style="opacity:0">x</div>'
                       '<div id="d" style="position:absolute;left:10px;top:2000px;width:30px;height:40px"></div>')
    assert driver.find_element(By.ID, "c").is_selected()
    assert driver.find_element(By.ID, "c").get_attribute("checked") == "true"
    assert driver.find_element(By.ID, "i").get_attribute("value") == "v"
    assert driver.find_element(By.ID, "i").get_attribute("missing") is None
    assert not driver.find_element(By.ID, "o").is_displayed()
    driver.execute_script("window.scrollTo(0, 500);")
    assert driver.find_element(By.ID, "d").rect == {"x": 10, "y": 2000, "width": 30, "height": 40}
    assert driver.find_element(By.ID, "d").tag_name == "div"


def test_execute_script_runs_a_function_body_with_arguments(open_page: Opener):
    driver = open_page('<div style="height:5000px"></div><p id="p">x</p>')
    assert driver.execute_script("window.scrollBy(0, arguments[0]);", 3863 / 4) is None
    assert js(driver, "window.scrollY") == pytest.approx(965.75, abs=1)
    assert driver.execute_script("return arguments[0].id + arguments[1];", driver.find_element(By.ID, "p"), 2) == "p2"
    assert driver.execute_script("return document.getElementById('p');").tag_name == "p"


# --- ActionChains ----------------------------------------------------------------------------

POINTER_PAD = ('<div id="pad" style="position:absolute;left:0;top:0;width:1900px;height:1000px"></div>'
               '<div id="box" style="position:absolute;left:200px;top:100px;width:400px;height:300px"></div>'
               "<script>window.moves=[];document.addEventListener('mousemove',e=>moves.push([e.clientX,e.clientY]))"
               "</script>")


def test_hovering_with_move_to_element_applies_the_hover_style(open_page: Opener):
    driver = open_page('<style>#h{background-color:rgb(0,0,255)}#h:hover{background-color:rgb(255,0,0)}</style>'
                       '<div id="h" style="width:100px;height:50px">hover me</div>')
    item = driver.find_element(By.ID, "h")
    assert item.value_of_css_property("background-color") == "rgba(0, 0, 255, 1)"
    ActionChains(driver).move_to_element(item).perform()
    assert item.value_of_css_property("background-color") == "rgba(255, 0, 0, 1)"


def test_move_to_element_with_offset_measures_from_the_element_centre(open_page: Opener):
    driver = open_page(POINTER_PAD)
    ActionChains(driver).move_to_element_with_offset(driver.find_element(By.ID, "box"), 100, 100).perform()
    assert js(driver, "moves.at(-1)") == [500, 350]
    assert driver.pointer == (500, 350)


def test_move_by_offset_moves_from_the_tracked_pointer_position_across_actions(open_page: Opener):
    driver = open_page(POINTER_PAD)
    ActionChains(driver).move_by_offset(500, 500).perform()  # from the top-left corner, like mouse-event
    ActionChains(driver).move_by_offset(10, -20).perform()
    assert js(driver, "moves.slice(-2)") == [[500, 500], [510, 480]]
    with pytest.raises(MoveTargetOutOfBoundsException):
        ActionChains(driver).move_by_offset(-600, 0).perform()


def test_a_chain_reused_across_iterations_does_not_replay_earlier_steps(open_page: Opener):
    driver = open_page(POINTER_PAD)
    chain = ActionChains(driver, duration=0)
    for x in (100, 200, 300):
        chain.move_to_element_with_offset(driver.find_element(By.ID, "pad"), x - 950, 0).perform()
    assert js(driver, "moves.map(m => m[0])") == [100, 200, 300]


def test_dragging_a_range_thumb_with_click_and_hold_and_move_by_offset_changes_its_value(open_page: Opener):
    driver = open_page('<input type="range" id="r" min="0" max="100" value="50" style="width:300px;margin:0">')
    slider = driver.find_element(By.ID, "r")
    ActionChains(driver).click_and_hold(slider).move_by_offset(90, 0).release().perform()
    assert 75 <= int(js(driver, "document.getElementById('r').value")) <= 85


def test_double_click_and_context_click_fire_dblclick_and_contextmenu(open_page: Opener):
    driver = open_page('<div id="heart" style="width:200px;height:200px" ondblclick="this.dataset.liked=\'yes\'" '
                       "oncontextmenu=\"event.preventDefault(); this.dataset.menu='yes'\"></div>")
    heart = driver.find_element(By.ID, "heart")
    ActionChains(driver).double_click(heart).perform()
    ActionChains(driver).context_click(heart).perform()
    assert js(driver, "Object.assign({}, document.getElementById('heart').dataset)") == {"liked": "yes", "menu": "yes"}


def test_drag_and_drop_performs_a_real_html5_drop(open_page: Opener):
    driver = open_page('<div id="item" draggable="true" style="width:80px;height:80px;background:red">item</div>'
                       '<div id="bin" style="width:200px;height:200px;margin-top:40px;background:blue"></div>'
                       "<script>const bin=document.getElementById('bin');"
                       "bin.addEventListener('dragover',e=>e.preventDefault());"
                       "bin.addEventListener('drop',e=>{e.preventDefault();"
                       "bin.append(document.getElementById('item'))})"
                       "</script>")
    ActionChains(driver).drag_and_drop(driver.find_element(By.ID, "item"), driver.find_element(By.ID, "bin")).perform()
    assert js(driver, "document.getElementById('item').parentElement.id") == "bin"


def test_send_keys_without_an_element_goes_to_the_page_with_the_key_fields_chrome_reports(open_page: Opener):
    driver = open_page("<script>window.seen=[];window.addEventListener('keydown',"
                       "e=>seen.push([e.key,e.code,e.keyCode]))</script>")
    ActionChains(driver).send_keys("A").perform()
    ActionChains(driver).send_keys(" ").perform()
    assert js(driver, "seen") == [["A", "KeyA", 65], [" ", "Space", 32]]


def test_a_confirm_dialog_is_accepted_so_the_item_is_deleted(open_page: Opener):
    driver = open_page('<ul><li id="note">note</li></ul>'
                       "<script>document.getElementById('note').addEventListener('dblclick', e => {"
                       "if (confirm('Delete?')) e.target.remove(); })</script>")
    ActionChains(driver).double_click(driver.find_element(By.ID, "note")).perform()
    assert driver.find_elements(By.ID, "note") == []


def test_a_dialog_opened_during_an_actions_sleep_is_accepted_meanwhile(open_page: Opener, tmp_path: Path):
    driver = open_page("<script>setTimeout(() => { document.title = String(confirm('ok?')); }, 100)</script>")
    (wait,) = load_actions(write_actions(tmp_path / "actions-src",
                                         "import time\ndef wait(driver):\n    time.sleep(0.4)\nactions = [wait]\n"))
    with cooperative_sleep(driver.wait):
        wait(driver)
    assert js(driver, "document.title") == "true"


def test_calls_outside_the_supported_surface_raise_a_clear_error_naming_them(open_page: Opener):
    driver = open_page("<p id='p'>x</p>")
    with pytest.raises(UnsupportedSeleniumCall, match=r"ActionChains\.scroll_by_amount is not supported"):
        ActionChains(driver).scroll_by_amount(0, 100)
    with pytest.raises(UnsupportedSeleniumCall, match=r"WebDriver\.get is not supported"):
        driver.get("https://example.com/")
    with pytest.raises(UnsupportedSeleniumCall, match=r"WebElement\.screenshot is not supported"):
        driver.find_element(By.ID, "p").screenshot("x.png")


def test_every_webdriver_key_maps_to_a_key_playwright_can_press(open_page: Opener):
    driver = open_page("<input id='i'>")
    driver.find_element(By.ID, "i").click()
    for name in set(PLAYWRIGHT_KEYS.values()):
        driver.page.keyboard.press(name)
    assert Keys.ENTER == "\ue007" and Keys.RETURN == "\ue006" and Keys.ARROW_DOWN == Keys.DOWN == "\ue015"


# --- loading actions.py ----------------------------------------------------------------------

OFFICIAL_STYLE = '''from selenium.webdriver.common.by import By
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
import time

def interact(driver, dir):
    driver.save_screenshot(f"{dir}/origin.png")

def hover_card(driver):
    card = driver.find_element(By.CLASS_NAME, 'card')
    ActionChains(driver).move_to_element(card).perform()
    time.sleep(1)

def press_enter(driver):
    driver.find_element(By.ID, 'q').send_keys('word', Keys.ENTER)
    time.sleep(2)

actions = [hover_card, press_enter]
'''


def write_actions(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "actions.py"
    path.write_text(source, encoding="utf-8")
    return path


def test_an_official_style_actions_file_loads_its_listed_functions_in_order(tmp_path: Path):
    actions = load_actions(write_actions(tmp_path / "fashion match", OFFICIAL_STYLE))
    assert [f.__name__ for f in actions] == ["hover_card", "press_enter"]
    assert actions[0].__globals__["ActionChains"] is ActionChains
    assert actions[0].__globals__["By"].CLASS_NAME == "class name"


def test_folders_with_spaces_and_cjk_names_load(tmp_path: Path):
    assert len(load_actions(write_actions(tmp_path / "学生统计表", OFFICIAL_STYLE))) == 2
    assert len(load_actions(write_actions(tmp_path / "tab栏切换 x", OFFICIAL_STYLE))) == 2


def test_loading_leaves_sys_modules_untouched(tmp_path: Path):
    before = set(sys.modules)
    load_actions(write_actions(tmp_path, OFFICIAL_STYLE))
    assert not {name for name in set(sys.modules) - before if name.startswith("selenium")}
    assert "selenium" not in sys.modules


def test_a_missing_actions_file_is_an_empty_list(tmp_path: Path):
    assert load_actions(tmp_path / "Hoodie3" / "actions.py") == []


@pytest.mark.parametrize("line, named", [
    ("import os", "'os'"),
    ("from selenium.webdriver.support.ui import Select", "'Select'"),
    ("import selenium.webdriver", "'selenium.webdriver'"),
    ("def f(driver):\n    import subprocess", "'subprocess'"),
    ("from . import helpers", "relative import"),
])
def test_a_forbidden_import_is_refused_and_named(tmp_path: Path, line: str, named: str):
    path = write_actions(tmp_path, f"import time\n{line}\nactions = []\n")
    with pytest.raises(ActionsFileError, match=named):
        load_actions(path)


def test_a_file_without_an_actions_list_or_with_bad_syntax_is_refused(tmp_path: Path):
    with pytest.raises(ActionsFileError, match="no module-level `actions` list"):
        load_actions(write_actions(tmp_path / "a", "import time\n"))
    with pytest.raises(ActionsFileError, match="does not compile"):
        load_actions(write_actions(tmp_path / "b", "def broken(:\n"))


def test_time_sleep_in_an_action_goes_through_the_cooperative_sleeper(tmp_path: Path):
    source = "import time\ndef nap(driver):\n    time.sleep(2.5)\nactions = [nap]\n"
    (action,) = load_actions(write_actions(tmp_path, source))
    slept: list[float] = []
    with cooperative_sleep(slept.append):
        action(None)
    assert slept == [2.5]
    assert action.__globals__["time"].time() == pytest.approx(time.time(), abs=5)
