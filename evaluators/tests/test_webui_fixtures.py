"""Static checks of the project's own WebUI pages (fixtures/magebench/resources/WebUI).

The pages follow the official page-folder format (reference §2.4 and its appendix; the actions.py
conventions of the actions survey §1–§4). Rendering them is tested elsewhere; here we only read files.
"""
from __future__ import annotations

import ast
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

RESOURCES = Path(__file__).resolve().parents[2] / "fixtures" / "magebench" / "resources"
WEBUI = RESOURCES / "WebUI"
PAGES = sorted(path for path in WEBUI.iterdir() if path.is_dir()) if WEBUI.is_dir() else []

REQUIRED_FILES = ("index.html", "style.css", "script.js", "actions.py", "tasks.md")

#: Property names the official scorer understands in data-evalby (reference §2.4).
EVALBY_PROPERTIES = frozenset({
    "text", "has_text", "placeholder", "value", "color", "background-color", "background", "background-image",
    "background-repeat", "border", "border-radius", "border-top", "border-left", "border-right", "outline",
    "font-family", "font-size", "font-style", "font-weight", "height", "width", "letter-spacing", "display",
    "box-shadow", "text-shadow", "src", "type",
})

#: Pre-filter methods that have a filter function; the official scorer silently drops target elements
#: filtered by anything else (text-shadow, box-shadow, background-size, gradients), so a fixture must not.
FILTER_METHODS = frozenset({
    "text", "has_text", "placeholder", "value", "class", "color", "background-color", "font-size", "height",
    "width", "letter-spacing", "font-family", "font-style", "font-weight", "display", "src", "type",
    "background-image", "background-repeat",
})

ALLOWED_IMPORTS = {
    ("selenium.webdriver.common.by", "By"),
    ("selenium.webdriver.common.action_chains", "ActionChains"),
    ("selenium.webdriver.common.keys", "Keys"),
    ("time", None),
}

BY_STRATEGIES = {"XPATH", "CSS_SELECTOR", "CLASS_NAME", "ID", "TAG_NAME", "LINK_TEXT"}

# The same pattern the official environment splits tasks.md with (greedy alt text included), so a
# second link on one line would swallow the first exactly as it would there.
OFFICIAL_IMAGE_SPLIT = re.compile(r"(?:!\[.*\]\((.*?)\))")

# SVG files need their namespace declared to render from <img>; it is an identifier, never fetched.
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
PROTOCOL_RELATIVE = re.compile(r"""(?:\b(?:src|href|action|srcset)\s*=\s*["']?|url\(\s*["']?)//""", re.IGNORECASE)
NETWORK_APIS = ("fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon", "@import", "import(")
NONDETERMINISTIC_APIS = ("Math.random", "performance.now", "localStorage", "sessionStorage", "crypto.")

TEXT_SUFFIXES = {".html", ".css", ".js", ".md", ".svg", ".py", ".json"}


def page_id(path: Path) -> str:
    return path.name


class _TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    handle_startendtag = handle_starttag


def html_tags(page: Path) -> list[tuple[str, dict[str, str]]]:
    collector = _TagCollector()
    collector.feed((page / "index.html").read_text(encoding="utf-8"))
    return collector.tags


def actions_module(page: Path) -> ast.Module:
    return ast.parse((page / "actions.py").read_text(encoding="utf-8"), filename=str(page / "actions.py"))


def functions(module: ast.Module) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}


def listed_actions(module: ast.Module) -> list[str]:
    for node in module.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "actions" for t in node.targets):
            assert isinstance(node.value, ast.List), "actions must be a literal list"
            names = []
            for element in node.value.elts:
                assert isinstance(element, ast.Name), "actions must list functions by name"
                names.append(element.id)
            return names
    raise AssertionError("actions.py defines no module-level `actions` list")


def is_sleep_call(node: ast.AST, seconds: float | None = None) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    if not (isinstance(func, ast.Attribute) and func.attr == "sleep" and isinstance(func.value, ast.Name)
            and func.value.id == "time"):
        return False
    if seconds is None:
        return True
    args = node.value.args
    return len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value == seconds


def text_files(page: Path) -> list[Path]:
    return [path for path in sorted(page.rglob("*")) if path.is_file() and path.suffix in TEXT_SUFFIXES]


# --- The set of pages ---------------------------------------------------------------------------


def test_there_are_at_least_seven_pages():
    assert len(PAGES) >= 7


def test_folder_names_include_one_with_a_space_and_one_with_cjk_characters():
    names = [page.name for page in PAGES]
    assert any(" " in name for name in names)
    assert any(re.search(r"[\u3400-\u9fff]", name) for name in names)


def test_the_all_list_names_exactly_the_page_folders():
    listed = json.loads((RESOURCES / "WebUI_all.json").read_text(encoding="utf-8"))
    assert len(listed) == len(set(listed))
    assert all(entry.startswith("resources/WebUI/") for entry in listed)
    assert sorted(entry.removeprefix("resources/WebUI/") for entry in listed) == sorted(p.name for p in PAGES)


def test_the_mini_list_is_three_pages_of_the_all_list():
    full = json.loads((RESOURCES / "WebUI_all.json").read_text(encoding="utf-8"))
    mini = json.loads((RESOURCES / "WebUI_mini.json").read_text(encoding="utf-8"))
    assert len(mini) == 3 and len(set(mini)) == 3
    assert set(mini) <= set(full)
    for entry in mini:
        assert (RESOURCES.parent / entry).is_dir()


def test_the_pages_together_cover_every_kind_of_interaction():
    sources = {page.name: (page / "actions.py").read_text(encoding="utf-8") for page in PAGES}
    scripts = "\n".join((page / "script.js").read_text(encoding="utf-8") for page in PAGES)
    styles = "\n".join((page / "style.css").read_text(encoding="utf-8") for page in PAGES)
    every_action = "\n".join(sources.values())
    for needle in (".click()", ".send_keys(", ".clear()", ".move_to_element(", "Keys."):
        assert needle in every_action, needle
    assert "confirm(" in scripts
    assert "classList.toggle(" in scripts
    assert re.search(r"transition:\s*[^;]*0?\.\d+s", styles)
    assert any(tag == "select" for page in PAGES for tag, _ in html_tags(page))
    assert any(set(re.findall(r"By\.([A-Z_]+)", source)) >= BY_STRATEGIES for source in sources.values())


# --- Each page ----------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_page_has_the_official_files_and_no_screenshots_yet(page: Path):
    for name in REQUIRED_FILES:
        assert (page / name).is_file(), name
    assert not (page / "tasks_content.json").exists()


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_index_links_its_stylesheet_and_script_and_every_local_file_it_names_exists(page: Path):
    tags = html_tags(page)
    assert ("link", "style.css") in {(tag, attrs.get("href")) for tag, attrs in tags}
    assert ("script", "script.js") in {(tag, attrs.get("src")) for tag, attrs in tags}
    for _, attrs in tags:
        for attribute in ("src", "href"):
            target = attrs.get(attribute)
            if target and not target.startswith("#"):
                assert (page / target).is_file(), target


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_annotated_element_uses_a_known_filter_and_known_evalby_properties(page: Path):
    annotated = [(tag, attrs) for tag, attrs in html_tags(page) if "data-filter-by" in attrs or "data-evalby" in attrs]
    assert len(annotated) >= 8
    for tag, attrs in annotated:
        assert attrs.get("data-filter-by") in FILTER_METHODS, (tag, attrs)
        names = attrs.get("data-evalby", "").split("|")
        assert names and set(names) <= EVALBY_PROPERTIES, (tag, attrs)
        assert len(names) == len(set(names)), (tag, attrs)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_elements_created_by_script_are_annotated_with_known_names_too(page: Path):
    script = (page / "script.js").read_text(encoding="utf-8")
    for attribute, value in re.findall(r"setAttribute\('(data-filter-by|data-evalby)',\s*'([^']*)'\)", script):
        if attribute == "data-filter-by":
            assert value in FILTER_METHODS
        else:
            assert set(value.split("|")) <= EVALBY_PROPERTIES


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_actions_import_only_by_action_chains_keys_and_time(page: Path):
    module = actions_module(page)
    for node in module.body:
        if isinstance(node, ast.Import):
            assert {(alias.name, None) for alias in node.names} <= ALLOWED_IMPORTS
        elif isinstance(node, ast.ImportFrom):
            assert {(node.module, alias.name) for alias in node.names} <= ALLOWED_IMPORTS
        else:
            # Like every official file: nothing at module level but imports, defs and the list.
            assert isinstance(node, (ast.FunctionDef, ast.Assign)), ast.dump(node)
    nested_imports = [n for n in ast.walk(module) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all(n in module.body for n in nested_imports)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_actions_lists_at_least_two_driver_functions_that_each_end_by_sleeping_a_second(page: Path):
    module = actions_module(page)
    defined = functions(module)
    names = listed_actions(module)
    assert len(names) >= 2 and len(names) == len(set(names))
    for name in names:
        assert name in defined, name
        function = defined[name]
        assert [arg.arg for arg in function.args.args] == ["driver"], name
        assert is_sleep_call(function.body[-1], 1), f"{name} must end with time.sleep(1)"
        assert not any(isinstance(n, ast.Name) and n.id == "dir" for n in ast.walk(function)), name


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_interact_runs_every_action_and_saves_one_screenshot_per_state(page: Path):
    module = actions_module(page)
    interact = functions(module).get("interact")
    assert interact is not None
    assert [arg.arg for arg in interact.args.args] == ["driver", "dir"]
    names = listed_actions(module)
    in_order = sorted(ast.walk(interact), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    called = [n.func.id for n in in_order if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert called == names
    saved = [n.value for n in in_order if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and "_images/" in n.value]
    assert saved == ["/_images/origin.png"] + [f"/_images/after_{name}.png" for name in names]
    screenshots = [n for n in ast.walk(interact) if isinstance(n, ast.Attribute) and n.attr == "save_screenshot"]
    assert len(screenshots) == len(names) + 1


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_tasks_md_links_origin_and_one_after_image_per_action_in_order(page: Path):
    markdown = (page / "tasks.md").read_text(encoding="utf-8")
    names = listed_actions(actions_module(page))
    expected = ["./_images/origin.png"] + [f"./_images/after_{name}.png" for name in names]
    parts = [part for part in OFFICIAL_IMAGE_SPLIT.split(markdown) if part]
    # The environment turns every part ending in .png into an image, so no prose part may end so.
    assert [part for part in parts if part.endswith(".png")] == expected
    assert re.findall(r"!\[[^\]]*\]\(([^)]*)\)", markdown) == expected
    assert parts[0].strip() and not parts[0].endswith(".png")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_nothing_in_the_page_points_outside_its_folder(page: Path):
    for path in text_files(page):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".svg":
            text = text.replace(f'xmlns="{SVG_NAMESPACE}"', "")
        assert "http:" not in text and "https:" not in text, path.name
        assert not re.search(r"\b(?:file|data|ftp|ws|wss):", text), path.name
        if path.suffix != ".py":  # XPath expressions in actions.py legitimately start with //
            assert not PROTOCOL_RELATIVE.search(text), path.name


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_scripts_use_no_network_clock_randomness_or_storage(page: Path):
    script = (page / "script.js").read_text(encoding="utf-8")
    for needle in NETWORK_APIS + NONDETERMINISTIC_APIS:
        assert needle not in script, needle
    assert not re.search(r"\bDate\b", script)
    for needle in NETWORK_APIS:
        assert needle not in (page / "style.css").read_text(encoding="utf-8"), needle
