"""``import_magebench`` reads an operator's checkout as data: a text too deep to read and a symbolic
link out of the checkout are refused by name, and nothing is imported."""
from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalogue.models import Scenario, SuitePromptSet
from conftest import FIXTURE_RESOURCES

pytestmark = pytest.mark.django_db

FIXTURE_CHECKOUT = Path(__file__).resolve().parents[2] / "fixtures" / "official-checkout"
RULES_START = '        return """Sokoban rules'


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "MageBench"
    shutil.copytree(FIXTURE_CHECKOUT, root)
    shutil.copytree(FIXTURE_RESOURCES, root / "resources")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("the server's own file\n")
    return secret


def _import(checkout: Path) -> str:
    out = StringIO()
    call_command("import_magebench", str(checkout / "resources"), "--suite", "mine", "--env", "sokoban",
                 "--official-code", str(checkout), "--no-page-check", "--no-verify", stdout=out)
    return out.getvalue()


def _nothing_imported() -> bool:
    return not Scenario.objects.filter(suite="mine").exists() and not SuitePromptSet.objects.exists()


def _rules_of_terms(checkout: Path, terms: int) -> None:
    """The Sokoban rules returned as ``"a" + "a" + …`` of ``terms`` parts."""
    file = checkout / "env" / "sokoban_env.py"
    text = file.read_text()
    start = text.index(RULES_START)
    end = text.index('"""', start + len(RULES_START)) + 3
    file.write_text(text[:start] + "        return " + " + ".join(['"a"'] * terms) + text[end:])


def test_a_text_of_60000_terms_is_refused_naming_its_file(checkout: Path) -> None:
    _rules_of_terms(checkout, 60_000)
    with pytest.raises(CommandError, match=re.escape(
            "env/sokoban_env.py: cannot be read as data: an expression is nested too deeply for the parser")):
        _import(checkout)
    assert _nothing_imported()


def test_a_text_deeper_than_it_is_read_is_refused_naming_its_file_and_line(checkout: Path) -> None:
    line = checkout.joinpath("env", "sokoban_env.py").read_text().split(RULES_START)[0].count("\n") + 1
    _rules_of_terms(checkout, 500)
    with pytest.raises(CommandError, match=re.escape(
            f"env/sokoban_env.py: cannot be read as data: line {line}: the code nests more than 100 deep")):
        _import(checkout)
    assert _nothing_imported()


def test_a_text_of_many_parts_within_the_depth_is_read_whole(checkout: Path) -> None:
    _rules_of_terms(checkout, 90)
    assert "prompts: sokoban global: official" in _import(checkout)
    assert SuitePromptSet.objects.get(flow="global").texts["system"] == "a" * 90


def test_a_scenario_list_nested_too_deeply_is_refused_naming_it(checkout: Path) -> None:
    (checkout / "resources" / "Sokoban_all.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CommandError, match=re.escape(
            "Sokoban_all.json cannot be read as JSON: the JSON is nested too deeply to read")):
        _import(checkout)
    assert _nothing_imported()


def test_a_file_of_the_checkout_linked_out_of_it_is_refused_naming_the_link(checkout: Path, outside: Path) -> None:
    flow = checkout / "Flow" / "GlobalPlanning.py"
    flow.unlink()
    flow.symlink_to(outside)
    with pytest.raises(CommandError, match=re.escape(
            f"Flow/GlobalPlanning.py: a symbolic link that leads out of the official checkout at {checkout} "
            f"(to {outside})")):
        _import(checkout)
    assert _nothing_imported()


def test_a_folder_of_the_checkout_linked_out_of_it_is_refused_naming_the_link(checkout: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere-env"
    shutil.move(checkout / "env", moved)
    (checkout / "env").symlink_to(moved, target_is_directory=True)
    with pytest.raises(CommandError, match=re.escape("env: a symbolic link that leads out of the official checkout")):
        _import(checkout)
    assert _nothing_imported()


def test_a_scenario_file_linked_out_of_the_checkout_is_refused_naming_the_link(checkout: Path,
                                                                               outside: Path) -> None:
    (checkout / "resources" / "Sokoban" / "notes.txt").symlink_to(outside)
    root = (checkout / "resources").resolve()
    with pytest.raises(CommandError, match=re.escape(
            f"Sokoban/notes.txt: a symbolic link that leads out of {root} (to {outside})")):
        _import(checkout)
    assert _nothing_imported()


def test_links_that_stay_inside_the_checkout_are_read(checkout: Path) -> None:
    client = checkout / "API" / "HF.py"
    kept = checkout / "API" / "HF_original.py"
    client.rename(kept)
    client.symlink_to(kept)
    (checkout / "resources" / "Sokoban" / "notes.txt").symlink_to(checkout / "resources" / "Sokoban_all.json")
    assert "prompts: sokoban online: official" in _import(checkout)
