"""WebUI code extraction against hand-written replies (the official rules, reference §2.4)."""
from __future__ import annotations

import pytest

from evaluators.base import FLOW_GLOBAL, FLOW_ONLINE
from evaluators.webui import prompts
from evaluators.webui.parsing import (
    ERR_NO_CODE_BLOCK,
    ERR_NO_RECOGNISED_BLOCK,
    ERR_UNTERMINATED,
    CodeKind,
    CodeWrite,
    collapse_newlines,
    files_after,
    guess_kind,
    needs_continuation,
    parse_global,
    parse_online,
    parse_reply,
    regenerate_section,
)

GOOD_GLOBAL = """Here is the page.

```html
<!DOCTYPE html>
<html>
<head><link rel="stylesheet" href="style.css"></head>
<body><button id="inc">+1</button><script src="script.js"></script></body>
</html>
```

And the styles:

```css
#inc { color: red; }
```

```javascript
document.getElementById('inc').addEventListener('click', () => {});
```
"""


# --- Global -----------------------------------------------------------------------------------


def test_a_global_reply_with_the_three_tags_yields_one_write_per_block_in_order():
    result = parse_global(GOOD_GLOBAL)
    assert result.ok
    assert [write.kind for write in result.actions] == ["html", "css", "javascript"]
    assert result.tokens == ["write_html", "write_css", "write_javascript"]
    assert result.actions[1] == CodeWrite(kind="css", code="#inc { color: red; }")
    assert result.actions[0].code.startswith("<!DOCTYPE html>\n<html>")
    assert result.actions[0].code.endswith("</html>")


def test_a_global_write_knows_its_action_name_and_target_file():
    write = parse_global("```javascript\nlet a = 1;\n```").actions[0]
    assert write.action == "write_javascript" and write.filename == "script.js" and str(write) == "write_javascript"


def test_a_global_reply_with_only_html_is_fine():
    result = parse_global("```html\n<p>hi</p>\n```")
    assert result.ok and result.actions == [CodeWrite("html", "<p>hi</p>")]


def test_a_global_reply_without_any_fence_is_a_parse_error_named_no_code_block():
    result = parse_global("<html><body>I forgot the fences</body></html>")
    assert not result.ok and result.error == ERR_NO_CODE_BLOCK and result.actions == []


def test_a_js_tag_rejects_the_whole_global_reply_and_names_the_tag():
    reply = "```html\n<p>ok</p>\n```\n```js\nconsole.log(1);\n```"
    result = parse_global(reply)
    assert result.actions == [] and not result.ok
    assert "'js'" in (result.error or "")
    assert result.foreign_tokens == ["write_js"]
    assert result.tokens == ["write_html", "write_js"]


def test_an_uppercase_tag_is_rejected_because_tags_are_case_sensitive():
    result = parse_global("```HTML\n<p>ok</p>\n```")
    assert result.actions == [] and "'HTML'" in (result.error or "")


def test_a_block_without_a_tag_reads_its_first_code_line_as_the_tag_and_is_rejected():
    result = parse_global("```\nbody {\n  margin: 0;\n}\n```")
    assert result.actions == []
    assert "'body {'" in (result.error or "")


def test_every_distinct_offending_tag_is_named_once():
    reply = "```js\na;\n```\n```HTML\n<p></p>\n```\n```js\nb;\n```"
    error = parse_global(reply).error or ""
    assert error.count("'js'") == 1 and "'HTML'" in error


def test_a_very_long_first_line_is_shortened_in_the_error():
    reply = "```\n" + "x" * 200 + "\n```"
    error = parse_global(reply).error or ""
    assert "x" * 37 + "..." in error and "x" * 41 not in error


def test_an_empty_block_is_an_empty_tag():
    result = parse_global("before ``` ``` after")
    assert result.actions == [] and "an empty tag" in (result.error or "")


def test_a_block_on_one_line_loses_the_last_tag_letter_like_the_official_slice():
    result = parse_global("```html```")
    assert result.actions == [] and "'htm'" in (result.error or "")


def test_a_trailing_space_after_the_tag_is_kept_in_the_tag_and_rejected():
    # The official parser strips the segment, not the tag line.
    result = parse_global("```html \n<p>x</p>\n```")
    assert result.actions == [] and "'html '" in (result.error or "")


def test_leading_whitespace_before_the_tag_is_stripped_with_the_segment():
    result = parse_global("```\n\n  css\na { color: blue; }\n```")
    assert result.actions == [CodeWrite("css", "a { color: blue; }")]


def test_runs_of_blank_lines_collapse_into_single_newlines_inside_code_too():
    reply = "```css\na { color: red; }\n\n\n\nb { color: blue; }\n```"
    assert parse_global(reply).actions == [CodeWrite("css", "a { color: red; }\nb { color: blue; }")]


def test_whitespace_only_lines_are_not_collapsed():
    assert collapse_newlines("a\n\n  \n\nb") == "a\n  \nb"


def test_a_later_block_of_the_same_kind_overwrites_the_earlier_one():
    reply = "```css\na { color: red; }\n```\ntext\n```html\n<p></p>\n```\n```css\na { color: green; }\n```"
    result = parse_global(reply)
    assert [write.kind for write in result.actions] == ["css", "html", "css"]
    assert files_after(result.actions) == {"css": "a { color: green; }", "html": "<p></p>"}


def test_files_after_starts_from_the_existing_files():
    existing: dict[CodeKind, str] = {"html": "<p>old</p>", "css": "p {}"}
    assert files_after([CodeWrite("css", "p { color: red; }")], existing) == {
        "html": "<p>old</p>", "css": "p { color: red; }"}
    assert existing["css"] == "p {}"


def test_an_unterminated_last_block_still_counts_in_global():
    result = parse_global("```html\n<p>cut off")
    assert result.actions == [CodeWrite("html", "<p>cut off")]


def test_text_between_blocks_is_ignored_even_if_it_looks_like_code():
    reply = "I use <div> tags; const x\n```css\np {}\n```\nthen { } and <b>"
    assert parse_global(reply).actions == [CodeWrite("css", "p {}")]


# --- Online -----------------------------------------------------------------------------------

ONLINE_REPLY = """# Analyze
1. The button is too small; ```css``` needs a bigger font.
# Regenerate
```css
#inc { font-size: 32px; }
```
*javascript do not need to change*
```html
<button id="inc">+1</button>
```
"""


def test_online_reads_only_the_regenerate_section():
    # The stray fences in the analysis would otherwise pair up with the real blocks.
    result = parse_online(ONLINE_REPLY)
    assert result.ok
    assert result.actions == [CodeWrite("css", "\n#inc { font-size: 32px; }\n"),
                              CodeWrite("html", "\n<button id=\"inc\">+1</button>\n")]


def test_online_reads_the_whole_reply_when_the_marker_is_missing():
    assert parse_online("```css\np {}\n```").actions == [CodeWrite("css", "\np {}\n")]


def test_online_stops_the_section_at_a_second_regenerate_marker():
    reply = "# Regenerate\n```css\np {}\n```\n# Regenerate\n```html\n<p></p>\n```"
    assert regenerate_section(reply) == "\n```css\np {}\n```\n"
    assert [write.kind for write in parse_online(reply).actions] == ["css"]


def test_online_takes_explicit_tags_by_prefix_in_html_javascript_css_order():
    reply = "# Regenerate\n```html5\n<p></p>\n```\n```javascript\nlet a = 1;\n```\n```css3\np {}\n```"
    result = parse_online(reply)
    assert [write.kind for write in result.actions] == ["html", "javascript", "css"]
    assert result.actions[0].code == "5\n<p></p>\n"


def test_online_guesses_html_when_angle_brackets_outnumber_newlines():
    assert guess_kind("\n<div><p>x</p></div>\n") == "html"


def test_online_guesses_javascript_from_semicolons_function_document_or_const():
    assert guess_kind("\nlet a = 1;\n") == "javascript"
    assert guess_kind("\nfunction go() {\n}\n") == "javascript"
    assert guess_kind("\ndocument.body\n") == "javascript"
    assert guess_kind("\nconst\n") == "javascript"


def test_online_guesses_css_from_two_braces_without_any_javascript_sign():
    assert guess_kind("\np {\n color: red\n}\n") == "css"


def test_a_semicolon_makes_a_css_block_look_like_javascript():
    assert guess_kind("\np {\n color: red;\n}\n") == "javascript"


def test_online_gives_up_on_blocks_with_no_recognisable_content():
    assert guess_kind("\nhello world\n") is None
    result = parse_online("# Regenerate\n```text\nhello world\n```")
    assert result.actions == [] and result.error == ERR_NO_RECOGNISED_BLOCK


def test_online_reports_no_code_block_when_there_is_no_fence():
    assert parse_online("# Analyze\nfine\n# Regenerate\nnothing to change").error == ERR_NO_CODE_BLOCK


def test_a_guessed_block_loses_as_many_characters_as_the_guessed_tag_is_long_by_default():
    # "```" + "javascript" is 13 characters: the official slice cuts "js\nconst a" off the code.
    result = parse_online("# Regenerate\n```js\nconst a = 1;\n```")
    assert result.actions == [CodeWrite("javascript", " = 1;\n")]


def test_a_guessed_block_keeps_its_code_whole_without_the_official_slicing():
    result = parse_online("# Regenerate\n```js\nconst a = 1;\n```", official_slicing=False)
    assert result.actions == [CodeWrite("javascript", "const a = 1;\n")]


def test_an_untagged_html_block_is_guessed_and_sliced_like_the_official_parser():
    # "```" + "html" is 7 characters: the newline and "<p>" after the fence are cut off.
    result = parse_online("# Regenerate\n```\n<p><b>x</b></p>\n```")
    assert result.actions == [CodeWrite("html", "<b>x</b></p>\n")]


def test_an_unguessable_block_shifts_the_pairing_of_the_following_fences():
    # Skipping only the opening fence makes the closing one open a block holding the text between.
    reply = "# Regenerate\n```text\nhello\n```\np { a: b; }\n```css\nq {}\n```"
    result = parse_online(reply, official_slicing=False)
    assert [write.kind for write in result.actions] == ["javascript"]
    assert result.actions[0].code == "p { a: b; }\n"


def test_uppercase_online_tags_are_guessed_instead_of_rejected():
    result = parse_online("# Regenerate\n```HTML\n<main><p>x</p></main>\n```", official_slicing=False)
    assert result.actions == [CodeWrite("html", "<main><p>x</p></main>\n")]


def test_online_collapses_blank_lines_before_parsing():
    result = parse_online("# Regenerate\n```css\n\n\np {}\n\n\nq {}\n```")
    assert result.actions == [CodeWrite("css", "\np {}\nq {}\n")]


def test_an_odd_number_of_fences_needs_a_continuation():
    assert needs_continuation("```html\n<p>cut")
    assert not needs_continuation("```html\n<p></p>\n```")
    assert not needs_continuation("no code at all")


def test_the_fence_count_covers_the_analysis_too():
    assert needs_continuation("# Analyze\nthe ``` mark\n# Regenerate\n```css\np {}\n```")


def test_an_unterminated_online_reply_is_reported_so_the_flow_can_ask_to_continue():
    result = parse_online("# Analyze\nx\n# Regenerate\n```css\np {}\n```\n```html\n<p>cut")
    assert result.error == ERR_UNTERMINATED and not result.ok
    assert [write.kind for write in result.actions] == ["css", "html"]


def test_the_concatenated_reply_is_parsed_as_it_is_with_the_last_block_to_the_end():
    first = "# Regenerate\n```html\n<p>cut"
    continuation = " off</p>\n"
    result = parse_online(first + continuation, allow_unterminated=True)
    assert result.ok and result.actions == [CodeWrite("html", "\n<p>cut off</p>\n")]


def test_a_continuation_that_closes_the_block_parses_cleanly():
    result = parse_online("# Regenerate\n```html\n<p>cut" + " off</p>\n```")
    assert result.ok and result.actions == [CodeWrite("html", "\n<p>cut off</p>\n")]


# --- Dispatch and prompts ----------------------------------------------------------------------


def test_parse_reply_dispatches_on_the_flow():
    assert parse_reply(FLOW_GLOBAL, "```js\na;\n```").error is not None
    assert parse_reply(FLOW_ONLINE, "```js\nlet a = 1;\n```").ok
    with pytest.raises(ValueError):
        parse_reply("replay", "")


def test_the_prompt_sets_carry_their_versions_and_name_the_exact_tags():
    assert prompts.GLOBAL.version == "webui-global-v2" and prompts.ONLINE.version == "webui-online-v3"
    for text in (prompts.GLOBAL.format_instruction, prompts.ONLINE.extra["refine"]):
        for tag in ("```html", "```css", "```javascript"):
            assert tag in text
    for prompt_set in (prompts.GLOBAL, prompts.ONLINE):
        assert "1920×1080" in prompt_set.system and "index.html" in prompt_set.system
    assert "# Analyze" in prompts.ONLINE.extra["refine"] and "# Regenerate" in prompts.ONLINE.extra["refine"]
    assert prompts.ONLINE.extra["code_css"].format(css="a{}") == "style.css:\n```css\na{}\n```\n\n"


def test_a_reply_that_follows_the_online_format_instruction_parses():
    reply = ("# Analyze\nThe title is too small.\n# Regenerate\n```html\n<h1>Title</h1>\n```\n"
             "```css\nh1 { font-size: 40px; }\n```\n```javascript\nconsole.log('ready');\n```")
    assert [write.kind for write in parse_online(reply).actions] == ["html", "css", "javascript"]
