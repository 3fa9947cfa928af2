"""Official prompts are read from a checkout's files as data: the texts word for word, the request
composition checked, nothing in the checkout ever run (evaluators.agents.checkout).

The checkout read here is fixtures/official-checkout: the official file layout with the platform's
own sentences. Its expected texts are written out below character for character.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from evaluators.agents.checkout import OfficialCheckout
from evaluators.agents.official_source import CheckoutError
from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE, PROMPTS_OFFICIAL, PromptSet
from evaluators.football.official import official_prompt_set as football_prompts
from evaluators.sokoban.official import official_prompt_set as sokoban_prompts
from evaluators.webui.official import official_prompt_set as webui_prompts
from evaluators.webui.online_variants import ROUND_TEXTS

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "official-checkout"

SOKOBAN_RULES = (
    "Sokoban rules for the fixture checkout: walk the worker and push every crate onto a goal square.\n"
    "The moves are:\n"
    "- 'Left', 'Right', 'Up', 'Down': one square that way, pushing a crate in the way.\n"
    "\n"
    "A crate pushed into a corner that holds no goal square cannot be moved out again.\n"
)
FOOTBALL_RULES = (
    "Football rules for the fixture checkout: you steer the player in yellow and attack the goal on the right.\n"
    "Moves: 'action_left' ... 'action_bottom_left' run that way; 'action_shot' shoots at goal.\n"
    "Passes: 'action_short_pass', 'action_high_pass', 'action_long_pass'.\n"
    "\n"
)
WEBUI_RULES = (
    "WebUI rules for the fixture checkout: rebuild the page from its description as `index.html`,\n"
    "with `style.css` and `script.js` beside it when the page needs them.\n"
    "'write_html', 'write_css', 'write_javascript' - each replaces that file with its input.\n"
)
REGENERATE = "Fixture: no move could be read, answer again in the format."
GLOBAL_IMAGE_LEFT_OUT = "Fixture: a picture was left out here."
ONLINE_IMAGE_LEFT_OUT = "Fixture: a frame was left out here."
FIRST_TURN = "Fixture: here is the opening scene, make your move."
NEXT_TURN = "Fixture: here is the new scene, make your next move."

ONLINE_FLOW = "Flow/Online_HL_FBandSB.py"
GLOBAL_FLOW = "Flow/GlobalPlanning.py"
WEBUI_FLOW = "Flow/Online_Web_CoT_Natural.py"


@pytest.fixture
def fixture_checkout() -> OfficialCheckout:
    return OfficialCheckout(FIXTURE)


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """A copy of the fixture checkout, to change one statement at a time."""
    root = tmp_path / "MageBench"
    shutil.copytree(FIXTURE, root)
    return root


def edit(root: Path, path: str, old: str, new: str) -> int:
    """Replaces the one occurrence of ``old`` in ``path``; the line number where ``new`` starts."""
    file = root / path
    text = file.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    file.write_text(text.replace(old, new))
    return text[:text.index(old)].count("\n") + 1


def line_of(root: Path, path: str, snippet: str) -> int:
    """The line of ``path`` where the one occurrence of ``snippet`` starts."""
    text = (root / path).read_text()
    assert text.count(snippet) == 1, f"{snippet!r} is not in {path} exactly once"
    return text[:text.index(snippet)].count("\n") + 1


def refused(path: str, line: int, reason: str) -> str:
    return re.escape(f"{path} line {line}: the request is no longer built as the platform composes it: {reason}")


def every_set(checkout: OfficialCheckout) -> list[PromptSet | None]:
    return [sokoban_prompts(checkout, FLOW_GLOBAL), sokoban_prompts(checkout, FLOW_ONLINE),
            football_prompts(checkout, FLOW_GLOBAL), football_prompts(checkout, FLOW_ONLINE),
            webui_prompts(checkout, FLOW_GLOBAL), webui_prompts(checkout, FLOW_ONLINE)]


# --- the texts --------------------------------------------------------------------------------


def test_the_sokoban_global_prompts_are_the_checkouts_texts_word_for_word(fixture_checkout) -> None:
    prompts = sokoban_prompts(fixture_checkout, FLOW_GLOBAL)
    assert prompts.system == SOKOBAN_RULES
    # An f-string of a local text of the Sokoban branch, the unused local left alone.
    assert prompts.format_instruction == (
        "Fixture Sokoban format: plan the whole level in one reply. \n\n"
        "### Analyze\nyour reasoning\n### Actions\nthe moves, separated by ','")
    assert (prompts.first_turn, prompts.next_turn, prompts.observation_lead) == ("", "", "")
    assert prompts.regenerate == REGENERATE
    assert prompts.unavailable_image == GLOBAL_IMAGE_LEFT_OUT
    assert dict(prompts.extra) == {}


def test_the_sokoban_online_prompts_are_the_checkouts_texts_word_for_word(fixture_checkout) -> None:
    prompts = sokoban_prompts(fixture_checkout, FLOW_ONLINE)
    assert prompts.system == SOKOBAN_RULES
    assert prompts.format_instruction == "Fixture Sokoban format: one move per reply.\n# analyze\n...\n# action\nLeft"
    assert prompts.first_turn == FIRST_TURN
    assert prompts.next_turn == NEXT_TURN
    assert prompts.regenerate == REGENERATE
    assert prompts.unavailable_image == ONLINE_IMAGE_LEFT_OUT
    assert prompts.observation_lead == ""


def test_the_football_online_prompts_carry_the_text_before_every_frame(fixture_checkout) -> None:
    prompts = football_prompts(fixture_checkout, FLOW_ONLINE)
    assert prompts.system == FOOTBALL_RULES
    assert prompts.format_instruction == (
        "Fixture Football format: one action per reply.\n# analyze\n...\n# action\naction_shot")
    assert prompts.first_turn == FIRST_TURN
    assert prompts.next_turn == NEXT_TURN
    assert prompts.regenerate == REGENERATE
    assert prompts.unavailable_image == ONLINE_IMAGE_LEFT_OUT
    assert prompts.observation_lead == "Fixture frame follows:"


def test_football_has_no_official_global_prompts(fixture_checkout) -> None:
    assert football_prompts(fixture_checkout, FLOW_GLOBAL) is None


def test_the_webui_global_prompts_are_the_checkouts_texts_word_for_word(fixture_checkout) -> None:
    prompts = webui_prompts(fixture_checkout, FLOW_GLOBAL)
    # An f-string without placeholders.
    assert prompts.system == WEBUI_RULES
    assert prompts.format_instruction == (
        "Fixture WebUI format: write every file now, each in its own ```html, ```css or ```javascript block.")
    assert (prompts.first_turn, prompts.next_turn) == ("", "")
    assert prompts.regenerate == REGENERATE
    assert prompts.unavailable_image == GLOBAL_IMAGE_LEFT_OUT


def test_the_webui_online_turns_are_templates_that_format_back_to_the_official_text(fixture_checkout) -> None:
    prompts = webui_prompts(fixture_checkout, FLOW_ONLINE)
    assert prompts.system == WEBUI_RULES
    assert (prompts.format_instruction, prompts.first_turn, prompts.next_turn) == ("", "", "")
    assert prompts.regenerate == REGENERATE
    # Natural's texts go under the plain names (the other flows' are tested in test_webui_online_flows.py).
    assert {name: prompts.extra[name] for name in ROUND_TEXTS} == {
        # The literal braces of the f-string are doubled, so that .format() gives them back.
        "code_html": "Fixture page so far (files {{index.html}} and more):\n```html\n{html}\n```\n\n",
        "code_css": "```css\n{css}\n```\n\n",
        "code_javascript": "```javascript\n{javascript}\n```\n\n",
        "refine": ("Fixture: the picture above is your page as it renders now.\n"
                   "Say what differs from the description, then rewrite the files that must change.\n"),
        "no_code": "Fixture: nothing is written yet, write every file.",
        "continuation": "Fixture: the reply stopped inside a block, go on from there.",
    }
    assert prompts.extra["code_html"].format(html="<p>{x}</p>") == (
        "Fixture page so far (files {index.html} and more):\n```html\n<p>{x}</p>\n```\n\n")
    assert prompts.extra["code_css"].format(css="p { margin: 0 }") == "```css\np { margin: 0 }\n```\n\n"
    assert prompts.extra["code_javascript"].format(javascript="go();") == "```javascript\ngo();\n```\n\n"


def test_every_set_is_official_and_versioned_by_its_texts(fixture_checkout) -> None:
    sets = [p for p in every_set(fixture_checkout) if p is not None]
    assert len(sets) == 5
    for prompts in sets:
        assert prompts.source == PROMPTS_OFFICIAL
        assert re.fullmatch(r"official-[0-9a-f]{12}", prompts.version)
    assert len({p.version for p in sets}) == 5
    # Read again from a fresh checkout object: the same versions.
    assert [p.version for p in sets] == [
        p.version for p in every_set(OfficialCheckout(FIXTURE)) if p is not None]


def test_the_reader_evaluates_format_calls_and_local_names(copied: Path) -> None:
    edit(copied, "env/football_env.py",
         '        return """Football rules for the fixture checkout: you steer the player in yellow and attack '
         'the goal on the right.\n',
         '        side = "right"\n'
         '        return """Football rules for the fixture checkout: you steer the player in {0} and attack '
         'the goal on the {where}.\n')
    edit(copied, "env/football_env.py", "\n\n\"\"\"\n", "\n\n\"\"\".format(\"yellow\", where=side)\n")
    assert football_prompts(OfficialCheckout(copied), FLOW_ONLINE).system == FOOTBALL_RULES


# --- where the checkout is --------------------------------------------------------------------


def test_a_checkout_is_found_from_its_resources_folder(copied: Path, tmp_path: Path) -> None:
    (copied / "resources").mkdir()
    found = OfficialCheckout.beside(copied / "resources")
    assert found is not None and found.root == copied.resolve()

    (tmp_path / "elsewhere" / "resources").mkdir(parents=True)
    assert OfficialCheckout.beside(tmp_path / "elsewhere" / "resources") is None
    # The project's own resources folder has no official checkout beside it.
    assert OfficialCheckout.beside(ROOT / "fixtures" / "magebench" / "resources") is None


def test_a_folder_without_flow_and_env_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "Flow").mkdir()
    with pytest.raises(CheckoutError, match=r"is not an official MageBench checkout: it has no env/ folder$"):
        OfficialCheckout(tmp_path)
    with pytest.raises(CheckoutError, match="no such folder"):
        OfficialCheckout(tmp_path / "nowhere")


@pytest.mark.parametrize(("missing", "read"), [
    ("Flow/Online_Web_CoT_Natural.py", lambda c: webui_prompts(c, FLOW_ONLINE)),
    ("API/HF.py", lambda c: sokoban_prompts(c, FLOW_GLOBAL)),
    ("env/football_env.py", lambda c: football_prompts(c, FLOW_ONLINE)),
])
def test_a_missing_file_is_refused_by_name(copied: Path, missing: str,
                                           read: Callable[[OfficialCheckout], object]) -> None:
    (copied / missing).unlink()
    with pytest.raises(CheckoutError, match=re.escape(f"{missing}: missing from the official checkout at {copied}")):
        read(OfficialCheckout(copied))


# --- nothing is run ---------------------------------------------------------------------------


def test_the_checkouts_files_are_read_and_never_run(copied: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    for file in [*copied.rglob("*.py")]:
        file.write_text(f"open({str(marker)!r}, 'w').write('ran')\n" + file.read_text())
    modules_before = set(sys.modules)

    checkout = OfficialCheckout(copied)
    assert len([p for p in every_set(checkout) if p is not None]) == 5

    assert not marker.exists()
    assert not any(name.split(".")[0] in {"Flow", "env", "API"} for name in set(sys.modules) - modules_before)


# --- the composition --------------------------------------------------------------------------


def test_an_online_system_message_sent_as_a_string_is_refused(copied: Path) -> None:
    line = edit(copied, ONLINE_FLOW,
                '{"role": "system", "content": [{"type": "text", "text": self.env.system_prompt}]},',
                '{"role": "system", "content": self.env.system_prompt},')
    with pytest.raises(CheckoutError, match=refused(ONLINE_FLOW, line, "the system message's content is no "
                                                                       "longer a list of one text part")):
        sokoban_prompts(OfficialCheckout(copied), FLOW_ONLINE)


def test_a_global_system_message_sent_as_parts_is_refused(copied: Path) -> None:
    line = edit(copied, GLOBAL_FLOW, '{"role": "system", "content": self.env.system_prompt},',
                '{"role": "system", "content": [{"type": "text", "text": self.env.system_prompt}]},')
    with pytest.raises(CheckoutError, match=refused(GLOBAL_FLOW, line, "the system message's content is no longer "
                                                                       "self.env.system_prompt as a plain string")):
        webui_prompts(OfficialCheckout(copied), FLOW_GLOBAL)


def test_a_regenerate_text_moved_out_of_the_no_action_branch_is_refused(copied: Path) -> None:
    old = ('            if len(actions) == 0:\n'
           '                next_turn.append({"type": "text", "text": "Fixture: no move could be read, answer again '
           'in the format."})\n')
    new = ('            next_turn.append({"type": "text", "text": "Fixture: no move could be read, answer again '
           'in the format."})\n'
           '            if len(actions) == 0:\n'
           '                pass\n')
    line = edit(copied, ONLINE_FLOW, old, new) + 1
    with pytest.raises(CheckoutError, match=refused(ONLINE_FLOW, line, "the regenerate text is no longer the one text "
                                                                       "appended to next_turn when no action was "
                                                                       "parsed")):
        football_prompts(OfficialCheckout(copied), FLOW_ONLINE)


def test_an_online_memory_that_no_longer_starts_with_the_task_description_is_refused(copied: Path) -> None:
    edit(copied, ONLINE_FLOW,
         '"content": first_parts + [{"type": "text", "text": "Fixture: here is the opening scene, make your move."}],',
         '"content": [{"type": "text", "text": "Fixture: here is the opening scene, make your move."}],')
    line = line_of(copied, ONLINE_FLOW, "history = [{")
    with pytest.raises(CheckoutError, match=refused(ONLINE_FLOW, line, "the memory no longer starts with the "
                                                                           "task description and one text")):
        sokoban_prompts(OfficialCheckout(copied), FLOW_ONLINE)


def test_webui_code_added_in_another_order_is_refused(copied: Path) -> None:
    path = copied / WEBUI_FLOW
    text = path.read_text()
    css = ('            if files.cur_css is not None:\n'
           '                code += f"```css\\n{files.cur_css}\\n```\\n\\n"\n')
    javascript = ('            if files.cur_js is not None:\n'
                  '                code += f"```javascript\\n{files.cur_js}\\n```\\n\\n"\n')
    assert css + javascript in text
    path.write_text(text.replace(css + javascript, javascript + css))
    with pytest.raises(CheckoutError, match=re.escape("the current code is added as ['html', 'javascript', 'css'], "
                                                      "not as ['html', 'css', 'javascript']")):
        webui_prompts(OfficialCheckout(copied), FLOW_ONLINE)


def test_a_continuation_sent_as_parts_is_refused(copied: Path) -> None:
    edit(copied, WEBUI_FLOW,
         '{"role": "user", "content": "Fixture: the reply stopped inside a block, go on from there."},',
         '{"role": "user", "content": [{"type": "text", "text": "Fixture: go on."}]},')
    line = line_of(copied, WEBUI_FLOW, "rest = self.generator(")
    with pytest.raises(CheckoutError, match=refused(WEBUI_FLOW, line, "the continuation no longer sends the reply "
                                                                          "and its request as plain strings")):
        webui_prompts(OfficialCheckout(copied), FLOW_ONLINE)


def test_a_client_that_no_longer_merges_same_role_messages_is_refused(copied: Path) -> None:
    edit(copied, "API/HF.py", "messages=merge_role(message)", "messages=message")
    line = line_of(copied, "API/HF.py", "def generate(")
    with pytest.raises(CheckoutError, match=refused("API/HF.py", line, "generate no longer sends merge_role(message)")):
        sokoban_prompts(OfficialCheckout(copied), FLOW_GLOBAL)


def test_football_frames_led_by_different_texts_are_refused(copied: Path) -> None:
    edit(copied, "env/football_env.py", 'seen.add_text("Fixture frame follows:")', 'seen.add_text("Another lead:")')
    line = line_of(copied, "env/football_env.py", "class FootballEnv")
    with pytest.raises(CheckoutError, match=re.escape(f"env/football_env.py line {line}: FootballEnv puts different "
                                                      "texts before its frames in __init__ and _take_action")):
        football_prompts(OfficialCheckout(copied), FLOW_ONLINE)


# --- texts the reader does not evaluate -------------------------------------------------------


def test_a_text_built_from_a_call_is_refused_with_file_and_line(copied: Path) -> None:
    line = edit(copied, GLOBAL_FLOW, '{layout}",', '{layout.strip()}",')
    with pytest.raises(CheckoutError, match=re.escape(f"{GLOBAL_FLOW} line {line}: the text is built from "
                                                      "'layout.strip()', which is not read as a text")):
        sokoban_prompts(OfficialCheckout(copied), FLOW_GLOBAL)


def test_a_text_from_outside_the_method_is_refused_with_file_and_line(copied: Path) -> None:
    line = edit(copied, "env/sokoban_env.py", 'return """Sokoban rules', 'return RULES + """Sokoban rules')
    with pytest.raises(CheckoutError, match=re.escape(f"env/sokoban_env.py line {line}: the text uses 'RULES', "
                                                      "which is not a local text")):
        sokoban_prompts(OfficialCheckout(copied), FLOW_ONLINE)


def test_a_formatted_field_with_a_conversion_is_refused(copied: Path) -> None:
    line = edit(copied, GLOBAL_FLOW, '{layout}",', '{layout!r}",')
    with pytest.raises(CheckoutError, match=re.escape(f"{GLOBAL_FLOW} line {line}: the f-string field of 'layout' "
                                                      "has a conversion or format spec")):
        sokoban_prompts(OfficialCheckout(copied), FLOW_GLOBAL)


# --- versions and digests ---------------------------------------------------------------------


def test_one_changed_character_changes_the_version(copied: Path) -> None:
    before = sokoban_prompts(OfficialCheckout(copied), FLOW_ONLINE)
    edit(copied, "env/sokoban_env.py", "goal square.\n", "goal square!\n")
    after = sokoban_prompts(OfficialCheckout(copied), FLOW_ONLINE)
    assert after.system == SOKOBAN_RULES.replace("goal square.\n", "goal square!\n")
    assert after.version != before.version


def test_the_digest_changes_with_any_file_read_and_the_version_only_with_texts(copied: Path) -> None:
    first = OfficialCheckout(copied)
    before = sokoban_prompts(first, FLOW_GLOBAL)
    assert set(first.files()) == {GLOBAL_FLOW, ONLINE_FLOW, "API/HF.py", "env/sokoban_env.py"}
    assert first.files()[GLOBAL_FLOW] == hashlib.sha256((copied / GLOBAL_FLOW).read_bytes()).hexdigest()

    (copied / GLOBAL_FLOW).write_text((copied / GLOBAL_FLOW).read_text() + "# one more line\n")
    second = OfficialCheckout(copied)
    after = sokoban_prompts(second, FLOW_GLOBAL)
    assert after.version == before.version
    assert second.digest() != first.digest()
    assert {p: s for p, s in second.files().items() if p != GLOBAL_FLOW} == {
        p: s for p, s in first.files().items() if p != GLOBAL_FLOW}
