"""Uploaded model outputs: both formats, their replay as replies, and every way an upload is refused."""
from __future__ import annotations

import io
import json
import pickle
import stat
import struct
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from jsonschema import Draft202012Validator

from conftest import FIXTURE_RESOURCES
from evaluators.agents.parsing import parse_global_actions, parse_online_action
from evaluators.base import get_plugin
from evaluators.sokoban.env import score_from
from evaluators.webui.parsing import files_after, parse_global, parse_online
from submissions.official_layout import OfficialRun, official_result, platform_score, zip_runs
from submissions.uploads import (
    SCHEMA_PATH,
    Problem,
    UploadedRun,
    UploadError,
    UploadLimits,
    parse_jsonl,
    parse_upload,
    parse_zip,
    runs_to_replies,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "example-sokoban-online.jsonl": ("sokoban", "online", {"1-Sokoban-small-v0", "10-Sokoban-small-v1"}),
    "example-webui-global.jsonl": ("webui", "global", {"step-counter", "faq-accordion"}),
}
SOKOBAN = {"1-Sokoban-small-v0", "3-Sokoban-small-v0", "10-Sokoban-small-v1"}
WEBUI = {"step-counter", "faq-accordion"}
MOVES = ("Up", "Down", "Left", "Right")
MIB = 1024 * 1024


def jsonl(*rows: Any) -> bytes:
    return "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows).encode()


def make_zip(files: Mapping[str, str | bytes], *, infos: Sequence[tuple[zipfile.ZipInfo, bytes]] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        for info, content in infos:
            archive.writestr(info, content)
    return buffer.getvalue()


def run_folder(folder: str, *, result: Any = 1.0, replies: list[str] | None = None,
               actions: list[str] | None = None) -> dict[str, str]:
    files = {f"{folder}/eval.json": json.dumps({"result": result, "details": {"steps": 2}, "parsing_err": 0})}
    if replies is not None:
        files[f"{folder}/replies.json"] = json.dumps(replies)
    if actions is not None:
        files[f"{folder}/actions.json"] = json.dumps(actions)
    return files


def sokoban(data: bytes, *, flow: str = "online", **options: Any) -> list[UploadedRun]:
    return parse_upload(data, env="sokoban", flow=flow, scenarios=SOKOBAN, **options)


def webui(data: bytes, *, flow: str = "global", **options: Any) -> list[UploadedRun]:
    return parse_upload(data, env="webui", flow=flow, scenarios=WEBUI, **options)


def problems_of(parse: Callable[[], object]) -> list[str]:
    with pytest.raises(UploadError) as caught:
        parse()
    return [str(problem) for problem in caught.value.problems]


def patch_central_directory(data: bytes, member: str, offset: int, value: int, fmt: str) -> bytes:
    """Rewrite one field of ``member``'s central directory entry (what zipfile trusts)."""
    patched = bytearray(data)
    position = patched.find(b"PK\x01\x02")
    while position >= 0:
        name_length = struct.unpack_from("<H", patched, position + 28)[0]
        if patched[position + 46:position + 46 + name_length] == member.encode():
            struct.pack_into(fmt, patched, position + offset, value)
            return bytes(patched)
        position = patched.find(b"PK\x01\x02", position + 4)
    raise AssertionError(f"{member} not in the archive")


# --- formats -----------------------------------------------------------------------------------

def test_a_jsonl_upload_is_parsed_into_runs() -> None:
    runs = sokoban(jsonl(
        {"scenario": "1-Sokoban-small-v0", "repeat": 0, "replies": ["# action\nUp", "# action\nLeft"],
         "score": 0.5, "meta": {"temperature": 0.1}},
        {"scenario": "1-Sokoban-small-v0", "repeat": 1, "actions": ["Down"], "error": "timed out"},
    ))
    assert runs == [
        UploadedRun(scenario="1-Sokoban-small-v0", repeat=0, replies=("# action\nUp", "# action\nLeft"),
                    self_score=0.5, source="line 1"),
        UploadedRun(scenario="1-Sokoban-small-v0", repeat=1, actions=("Down",), self_error="timed out",
                    source="line 2"),
    ]


def test_webui_code_in_jsonl_is_parsed_with_only_the_parts_given() -> None:
    runs = webui(jsonl({"scenario": "step-counter", "repeat": 0, "code": {"html": "<p>1</p>", "js": "x();"}}))
    assert runs[0].code == {"html": "<p>1</p>", "js": "x();"}


def test_blank_lines_windows_line_ends_and_a_byte_order_mark_are_accepted() -> None:
    data = ("\ufeff" + json.dumps({"scenario": "3-Sokoban-small-v0", "repeat": 0, "actions": ["Up"]}) + "\r\n\r\n  \n"
            + json.dumps({"scenario": "3-Sokoban-small-v0", "repeat": 1, "actions": ["Up"]}) + "\n").encode()
    runs = sokoban(data)
    assert [(run.repeat, run.source) for run in runs] == [(0, "line 1"), (1, "line 4")]


def test_a_zip_of_the_official_output_directory_is_parsed_into_runs() -> None:
    data = make_zip({
        **run_folder("1-Sokoban-small-v0_r0", result=1.0, replies=["# action\nUp"]),
        **run_folder("1-Sokoban-small-v0_r1", result=0, actions=["Up", "Left"]),
        "1-Sokoban-small-v0_r0/video.mp4": b"\x00\x01binary",
        "1-Sokoban-small-v0_r0/images/step0.png": b"\x89PNG",
        "1-Sokoban-small-v0_r0/output_progress.md": "# progress",
    })
    runs = sokoban(data)
    assert runs == [
        UploadedRun(scenario="1-Sokoban-small-v0", repeat=0, replies=("# action\nUp",), self_score=1.0,
                    source="1-Sokoban-small-v0_r0/"),
        UploadedRun(scenario="1-Sokoban-small-v0", repeat=1, actions=("Up", "Left"), self_score=0.0,
                    source="1-Sokoban-small-v0_r1/"),
    ]


def test_a_webui_zip_run_reads_the_page_files() -> None:
    data = make_zip({
        "step-counter_r0/eval.json": json.dumps({"result": 0.8}),
        "step-counter_r0/index.html": "<p>0</p>",
        "step-counter_r0/style.css": "p { color: red; }",
        "step-counter_r0/screenshot.png": b"\x89PNG",
        "faq-accordion_r0/eval.json": json.dumps({"result": 0.4}),
        "faq-accordion_r0/replies.json": json.dumps(["```html\n<details></details>\n```"]),
    })
    first, second = webui(data)
    assert (first.scenario, first.self_score) == ("faq-accordion", 40.0)
    assert first.replies == ("```html\n<details></details>\n```",)
    assert (second.scenario, second.code) == ("step-counter", {"html": "<p>0</p>", "css": "p { color: red; }"})


def test_a_single_wrapping_folder_in_the_zip_is_stripped() -> None:
    data = make_zip({"output/": "", **run_folder("output/3-Sokoban-small-v0_r0", replies=["# action\nUp"]),
                     "output/summary.json": "{}"})
    (run,) = sokoban(data)
    assert (run.scenario, run.repeat, run.source) == ("3-Sokoban-small-v0", 0, "output/3-Sokoban-small-v0_r0/")


def test_a_single_run_folder_at_the_top_is_not_taken_for_a_wrapper() -> None:
    (run,) = sokoban(make_zip(run_folder("3-Sokoban-small-v0_r2", replies=["# action\nUp"])))
    assert (run.scenario, run.repeat) == ("3-Sokoban-small-v0", 2)


def test_scenario_keys_with_underscores_name_run_folders() -> None:
    data = make_zip(run_folder("R1_P_1_r0", actions=["right"]))
    (run,) = parse_upload(data, env="football", flow="online", scenarios={"R1_P_1"})
    assert (run.scenario, run.repeat, run.actions) == ("R1_P_1", 0, ("right",))


def test_macos_archive_debris_is_ignored() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]),
                     "__MACOSX/3-Sokoban-small-v0_r0/._eval.json": b"\x00", "3-Sokoban-small-v0_r0/.DS_Store": b"\x00"})
    assert len(sokoban(data)) == 1


def test_the_format_is_detected_by_its_magic_bytes() -> None:
    zipped = make_zip(run_folder("3-Sokoban-small-v0_r0", replies=["x"]))
    lines = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"]})
    assert sokoban(zipped) == parse_zip(zipped, env="sokoban", flow="online", scenarios=SOKOBAN)
    assert sokoban(lines) == parse_jsonl(lines, env="sokoban", flow="online", scenarios=SOKOBAN)
    assert problems_of(lambda: sokoban(b"PK\x05\x06" + b"\x00" * 18)) == [
        "upload: the archive contains no run folders (<scenario>_r<repeat>/)"]


# --- the official output folder, as the harness writes it -------------------------------------

def official_eval(result: float, parsing_err: bool | int = 0) -> str:
    return json.dumps({"result": result, "details": [{"type": "text", "text": "accumulated reward: 0"}],
                       "parsing_err": parsing_err}, indent=4)


def test_an_official_sokoban_global_output_folder_uploads_unchanged() -> None:
    reply = "### Analyze\nPush the box right.\n### Actions\nRight, Right"
    data = make_zip({
        "output/1-Sokoban-small-v0_r0/eval.json": official_eval(43.5, False),
        "output/1-Sokoban-small-v0_r0/output.txt": reply,
        "output/1-Sokoban-small-v0_r0/output_video.mp4": b"\x00\x00\x00\x18ftypmp42",
        "output/1-Sokoban-small-v0_r0/tmp.png": b"\x89PNG",
        "output/res.txt": "43.5",
    })
    assert sokoban(data, flow="global") == [
        UploadedRun(scenario="1-Sokoban-small-v0", repeat=0, replies=(reply,), self_score=43.5,
                    source="output/1-Sokoban-small-v0_r0/")]


def test_an_official_sokoban_online_output_folder_uploads_unchanged_with_its_calls_in_numeric_order() -> None:
    files: dict[str, str | bytes] = {"3-Sokoban-small-v0_r1/eval.json": official_eval(40.0, 2),
                                     "3-Sokoban-small-v0_r1/tmpp.png": b"\x89PNG", "res.txt": "40.0"}
    for loop in range(12):
        files[f"3-Sokoban-small-v0_r1/output_{loop}.txt"] = f"# analyze\ncall {loop}\n# action\nUp"
    (run,) = sokoban(make_zip(files))
    assert (run.scenario, run.repeat, run.self_score) == ("3-Sokoban-small-v0", 1, 40.0)
    # output_10 and output_11 come after output_9, not after output_1.
    assert [reply.split("\n")[1] for reply in run.replies] == [f"call {loop}" for loop in range(12)]


def test_an_official_football_output_folder_uploads_unchanged_with_its_result_on_the_platform_scale() -> None:
    files: dict[str, str | bytes] = {"R1_P_1_r0/eval.json": official_eval(3.25, 1),
                                     "R1_P_1_r0/output_video.mp4": b"\x00", "R1_P_1_r0/tmp.png": b"\x89PNG"}
    replies = ["# analyze\nRun.\n# action\naction_right", "no idea", "# analyze\nShoot.\n# action\naction_shot"]
    for loop, reply in enumerate(replies):
        files[f"R1_P_1_r0/output_{loop}.txt"] = reply
    (run,) = parse_upload(make_zip(files), env="football", flow="online", scenarios={"R1_P_1"})
    # The official Football result is the summed reward, already ×20: the platform's own score.
    assert (run.replies, run.self_score) == (tuple(replies), 3.25)


def test_an_official_webui_output_folder_uploads_unchanged_and_its_fraction_becomes_a_percentage() -> None:
    reply = "```html\n<p>0</p>\n```\n```css\np { color: red; }\n```"
    folder = "output/step-counter_r2"
    data = make_zip({
        f"{folder}/eval.json": json.dumps({"result": 0.8125, "details": {"origin": [[], 0.8]},
                                           "parsing_err": False}),
        f"{folder}/output.txt": reply,
        # What the official environment leaves beside the reply: the page it generated, the copy of
        # the page folder it started from, its observations and its progress log.
        f"{folder}/index.html": "<p>0</p>", f"{folder}/style.css": "p { color: red; }",
        f"{folder}/tasks.md": "# Step counter", f"{folder}/actions.py": "actions = []",
        f"{folder}/_images/origin.png": b"\x89PNG", f"{folder}/last_ob.png": b"\x89PNG",
        f"{folder}/out_images/o-2-d-1.jpg": b"\xff\xd8", f"{folder}/output_progress.md": "# observation-2",
        "output/res.txt": "0.8125",
    })
    (run,) = webui(data)
    assert run == UploadedRun(scenario="step-counter", repeat=2, replies=(reply,), self_score=81.25,
                              source=f"{folder}/")


def test_only_webuis_official_result_is_rescaled_to_the_platforms_score() -> None:
    # Sokoban's official metric is the platform's own formula, 100 + 5·(B − R_ub); Football's is the
    # summed reward, already ×20 on both sides.
    assert score_from(10.4, 10.4) == 100.0 and score_from(0.0, 10.4) == 48.0
    assert platform_score("sokoban", 43.5) == 43.5 and platform_score("football", 19.726) == 19.726
    assert platform_score("webui", 0.318) == 31.8 and official_result("webui", 31.8) == pytest.approx(0.318)


def test_a_webui_run_with_no_generated_code_is_a_blank_reply_not_a_refusal() -> None:
    data = make_zip({
        "step-counter_r0/eval.json": json.dumps({"result": 0.0, "details": {}, "parsing_err": True}),
        "step-counter_r0/tasks.md": "# Step counter", "step-counter_r0/output_progress.md": "",
        "faq-accordion_r0/eval.json": json.dumps({"result": 0, "details": {}, "parsing_err": True}),
        "faq-accordion_r0/output.txt": "",
    })
    assert [(run.scenario, run.replies, run.self_score) for run in webui(data)] == [
        ("faq-accordion", ("",), 0.0), ("step-counter", ("",), 0.0)]
    assert runs_to_replies(webui(data)[1], env="webui", flow="global") == [""]


def test_a_webui_result_on_the_percentage_scale_is_refused_as_not_official() -> None:
    data = make_zip({"step-counter_r0/eval.json": json.dumps({"result": 81.25}),
                     "step-counter_r0/output.txt": "```html\n<p></p>\n```"})
    assert problems_of(lambda: webui(data)) == [
        "step-counter_r0/eval.json: 'result' is 81.25, but the official webui result is a fraction from 0 to 1 "
        "(the platform shows it ×100)"]


def test_reply_files_of_the_other_flow_are_refused_with_the_flow_named() -> None:
    online = make_zip({"3-Sokoban-small-v0_r0/eval.json": official_eval(40.0),
                       "3-Sokoban-small-v0_r0/output_0.txt": "# action\nUp"})
    assert problems_of(lambda: sokoban(online, flow="global")) == [
        "3-Sokoban-small-v0_r0/: has output_<k>.txt files, which the Online flow writes; this upload is for the "
        "Global flow, whose reply is output.txt"]
    global_ = make_zip({"3-Sokoban-small-v0_r0/eval.json": official_eval(40.0),
                        "3-Sokoban-small-v0_r0/output.txt": "### Actions\nUp"})
    assert problems_of(lambda: sokoban(global_, flow="online")) == [
        "3-Sokoban-small-v0_r0/: has output.txt, which the Global flow writes; this upload is for the Online "
        "flow, whose replies are output_0.txt, output_1.txt, …"]


def test_numbered_replies_with_a_gap_or_a_number_twice_are_refused() -> None:
    files = {"3-Sokoban-small-v0_r0/eval.json": official_eval(40.0), "3-Sokoban-small-v0_r0/output_0.txt": "Up",
             "3-Sokoban-small-v0_r0/output_3.txt": "Up", "3-Sokoban-small-v0_r0/output_03.txt": "Up"}
    assert problems_of(lambda: sokoban(make_zip(files))) == [
        "3-Sokoban-small-v0_r0/: output_03.txt and output_3.txt both number call 3",
        "3-Sokoban-small-v0_r0/: missing output_1.txt, output_2.txt: the Online flow writes output_0.txt, "
        "output_1.txt, … one per model call"]


def test_a_huge_call_number_is_reported_without_walking_every_number_before_it() -> None:
    files = {"3-Sokoban-small-v0_r0/eval.json": official_eval(40.0), "3-Sokoban-small-v0_r0/output_0.txt": "Up",
             "3-Sokoban-small-v0_r0/output_99999999999.txt": "Up"}
    assert problems_of(lambda: sokoban(make_zip(files))) == [
        "3-Sokoban-small-v0_r0/: missing output_1.txt, output_2.txt, output_3.txt, output_4.txt, output_5.txt and "
        "99999999993 more: the Online flow writes output_0.txt, output_1.txt, … one per model call"]


def test_replies_given_both_as_output_files_and_as_replies_json_are_refused() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", result=40.0, replies=["### Actions\nUp"]),
                     "3-Sokoban-small-v0_r0/output.txt": "### Actions\nDown"})
    assert problems_of(lambda: sokoban(data, flow="global")) == [
        "3-Sokoban-small-v0_r0/: gives the replies twice, in replies.json and in output.txt; keep one"]


def test_an_official_reply_file_over_the_length_limit_is_named() -> None:
    data = make_zip({"3-Sokoban-small-v0_r0/eval.json": official_eval(40.0),
                     "3-Sokoban-small-v0_r0/output_0.txt": "Up", "3-Sokoban-small-v0_r0/output_1.txt": "x" * 11})
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_reply_chars=10))) == [
        "3-Sokoban-small-v0_r0/output_1.txt: reply is 11 characters long, the limit is 10"]


def test_an_official_reply_file_that_is_not_utf8_is_refused_by_name() -> None:
    data = make_zip({"3-Sokoban-small-v0_r0/eval.json": official_eval(40.0),
                     "3-Sokoban-small-v0_r0/output.txt": b"### Actions\nUp\xff"})
    assert problems_of(lambda: sokoban(data, flow="global")) == [
        "3-Sokoban-small-v0_r0/output.txt: not UTF-8 text (byte 0xff at offset 14)"]


def test_the_official_layout_writer_round_trips_through_the_parser() -> None:
    runs = [OfficialRun(scenario="3-Sokoban-small-v0", repeat=loop, flow="online",
                        replies=[f"# action\n{move}" for move in MOVES[:loop + 1]], result=40.0 + loop,
                        parsing_err=0, extras={"output_video.mp4": b"\x00"}) for loop in range(2)]
    parsed = sokoban(zip_runs(runs))
    assert [(run.repeat, run.replies, run.self_score) for run in parsed] == [
        (0, ("# action\nUp",), 40.0), (1, ("# action\nUp", "# action\nDown"), 41.0)]
    page = OfficialRun(scenario="step-counter", repeat=0, flow="global", replies=["```html\n<p></p>\n```"],
                       result=official_result("webui", 62.5), page={"html": "<p></p>"})
    (run,) = webui(zip_runs([page]))
    assert (run.replies, run.self_score) == (("```html\n<p></p>\n```",), 62.5)


# --- replay ------------------------------------------------------------------------------------

def test_replies_are_replayed_as_they_are() -> None:
    run = UploadedRun(scenario="s", repeat=0, replies=("first", "second"))
    assert runs_to_replies(run, env="sokoban", flow="global") == ["first", "second"]


def test_actions_make_one_actions_reply_in_the_global_flow() -> None:
    run = UploadedRun(scenario="s", repeat=0, actions=("Up", "Left", "Left"))
    (reply,) = runs_to_replies(run, env="sokoban", flow="global")
    assert reply == "### Actions\nUp, Left, Left"
    assert parse_global_actions(reply, MOVES).actions == ["Up", "Left", "Left"]


def test_actions_make_one_action_reply_per_action_in_the_online_flow() -> None:
    run = UploadedRun(scenario="s", repeat=0, actions=("Up", "Down"))
    replies = runs_to_replies(run, env="sokoban", flow="online")
    assert replies == ["# action Up", "# action Down"]
    assert [parse_online_action(reply, MOVES).actions for reply in replies] == [["Up"], ["Down"]]
    football = UploadedRun(scenario="R1_P_1", repeat=0, actions=("short_pass",))
    assert runs_to_replies(football, env="football", flow="online") == ["# action short_pass"]


def test_code_makes_one_reply_of_fenced_blocks_the_webui_parsers_read_back() -> None:
    code = {"html": "<button>+</button>", "css": "button { width: 3em; }", "js": "let n = 0;"}
    run = UploadedRun(scenario="step-counter", repeat=0, code=code)
    (reply,) = runs_to_replies(run, env="webui", flow="global")
    assert reply == ("```html\n<button>+</button>\n```\n\n```css\nbutton { width: 3em; }\n```\n\n"
                     "```javascript\nlet n = 0;\n```")
    assert files_after(parse_global(reply).actions) == {"html": code["html"], "css": code["css"],
                                                        "javascript": code["js"]}
    online = {kind: text.strip() for kind, text in files_after(parse_online(reply).actions).items()}
    assert online == {"html": code["html"], "css": code["css"], "javascript": code["js"]}


def test_code_with_only_html_makes_a_single_block() -> None:
    run = UploadedRun(scenario="faq-accordion", repeat=0, code={"html": "<p>hi</p>"})
    assert runs_to_replies(run, env="webui", flow="online") == ["```html\n<p>hi</p>\n```"]


def test_code_is_fenced_as_the_environments_plugin_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(get_plugin("webui")), "upload_code_fences", (("js", "js"), ("html", "xhtml")))
    run = UploadedRun(scenario="step-counter", repeat=0, code={"html": "<p></p>", "css": "p {}", "js": "f();"})
    assert runs_to_replies(run, env="webui", flow="global") == ["```js\nf();\n```\n\n```xhtml\n<p></p>\n```"]


# --- refusals: any upload ----------------------------------------------------------------------

def test_an_upload_over_the_size_limit_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x" * 500]})
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_upload_bytes=100))) == [
        f"upload: upload is {len(data)} bytes, the limit is 100"]


def test_an_empty_jsonl_upload_is_refused() -> None:
    assert problems_of(lambda: sokoban(b"\n  \n")) == ["upload: the file contains no runs"]


def test_an_empty_zip_is_refused() -> None:
    assert problems_of(lambda: sokoban(make_zip({}))) == [
        "upload: the archive contains no run folders (<scenario>_r<repeat>/)"]


def test_an_upload_error_lists_every_problem_one_per_line_and_survives_pickling() -> None:
    error = UploadError([Problem("line 1", "first"), Problem("line 2", "second")])
    assert str(error) == "line 1: first\nline 2: second"
    assert pickle.loads(pickle.dumps(error)).problems == error.problems


def test_an_unknown_flow_is_a_programming_error_not_an_upload_problem() -> None:
    with pytest.raises(ValueError, match="unknown flow"):
        parse_upload(b"", env="sokoban", flow="sideways", scenarios=SOKOBAN)


# --- refusals: JSONL ---------------------------------------------------------------------------

def test_a_jsonl_file_that_is_not_utf8_is_refused_at_its_first_bad_line() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"]}) + b"\n\n{\"a\xff\xfe\": 1}\n\xff"
    assert problems_of(lambda: sokoban(data)) == ["line 3: not UTF-8 text (byte 0xff at column 4)"]


def test_a_line_of_invalid_json_is_reported_with_its_number_and_the_json_error() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"]}, '{"scenario": "x",')
    assert problems_of(lambda: sokoban(data)) == [
        "line 2: invalid JSON: Expecting property name enclosed in double quotes (column 18)"]


def test_nan_and_duplicate_keys_are_not_valid_json_here() -> None:
    data = jsonl('{"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"], "score": NaN}',
                 '{"scenario": "3-Sokoban-small-v0", "repeat": 1, "replies": ["x"], "replies": ["y"]}')
    assert problems_of(lambda: sokoban(data)) == ["line 1: invalid JSON: NaN is not valid JSON",
                                                  "line 2: invalid JSON: duplicate key 'replies'"]


def test_a_line_that_is_not_an_object_is_refused() -> None:
    assert problems_of(lambda: sokoban(jsonl([1, 2], "null"))) == [
        "line 1: expected a JSON object, got an array", "line 2: expected a JSON object, got null"]


def test_schema_violations_are_reported_with_their_json_path() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": -1, "replies": ["ok", 7]})
    assert problems_of(lambda: sokoban(data)) == ["line 1: repeat: -1 is less than the minimum of 0",
                                                  "line 1: replies[1]: 7 is not of type 'string'"]


def test_a_long_offending_value_is_shortened_but_the_rule_it_breaks_is_kept() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"], "meta": "y" * 10_000})
    (problem,) = problems_of(lambda: sokoban(data))
    assert len(problem) < 250 and problem.startswith("line 1: meta: 'yyy")
    assert problem.endswith("y' is not of type 'object'")


def test_a_score_too_large_for_a_number_is_refused() -> None:
    data = b'{"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"], "score": 1e400}'
    assert problems_of(lambda: sokoban(data)) == ["line 1: score: must be a finite number"]


def test_a_line_with_an_unexpected_key_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"], "model": "m"})
    assert problems_of(lambda: sokoban(data)) == [
        "line 1: Additional properties are not allowed ('model' was unexpected)"]


def test_a_line_missing_its_scenario_or_repeat_is_refused() -> None:
    assert problems_of(lambda: sokoban(jsonl({"replies": ["x"]}))) == [
        "line 1: 'scenario' is a required property", "line 1: 'repeat' is a required property"]


def test_a_line_without_replies_actions_or_code_is_refused() -> None:
    assert problems_of(lambda: sokoban(jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0}))) == [
        "line 1: one of 'replies', 'actions' or 'code' is required"]


def test_a_line_giving_two_kinds_of_output_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"], "actions": ["Up"]})
    assert problems_of(lambda: sokoban(data)) == [
        "line 1: give only one of 'replies', 'actions' or 'code', not 'replies' and 'actions'"]


def test_empty_replies_are_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": []})
    assert problems_of(lambda: sokoban(data)) == ["line 1: replies: [] should be non-empty"]


def test_an_unknown_scenario_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"]},
                 {"scenario": "foo", "repeat": 0, "replies": ["x"]})
    assert problems_of(lambda: sokoban(data)) == ["line 2: unknown scenario 'foo' (not in this subset)"]


def test_a_duplicate_scenario_and_repeat_is_reported_with_both_lines() -> None:
    row = {"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"]}
    data = jsonl(row, {**row, "repeat": 1}, row)
    assert problems_of(lambda: sokoban(data)) == [
        "line 3: scenario '3-Sokoban-small-v0' repeat 0 already given on line 1"]


def test_a_repeat_beyond_the_number_of_repeats_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 3, "replies": ["x"]})
    assert problems_of(lambda: sokoban(data, max_repeats=3)) == [
        "line 1: repeat 3 is out of range: this evaluation has 3 repeat(s), numbered 0 to 2"]


def test_code_for_an_environment_other_than_webui_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "code": {"html": "<p></p>"}})
    assert problems_of(lambda: sokoban(data)) == [
        "line 1: code: code is only accepted for WebUI, not for sokoban; give replies or actions"]


def test_actions_for_webui_are_refused() -> None:
    data = jsonl({"scenario": "step-counter", "repeat": 0, "actions": ["write_html"]})
    assert problems_of(lambda: webui(data)) == [
        "line 1: actions: actions are not accepted for WebUI; give code or replies"]


def test_a_reply_longer_than_the_limit_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["short", "x" * 101]})
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_reply_chars=100))) == [
        "line 1: replies[1]: reply is 101 characters long, the limit is 100"]


def test_code_making_a_reply_longer_than_the_limit_is_refused() -> None:
    data = jsonl({"scenario": "step-counter", "repeat": 0, "code": {"html": "x" * 100}})
    assert problems_of(lambda: webui(data, limits=UploadLimits(max_reply_chars=100))) == [
        "line 1: code: the code makes a reply of 112 characters, the limit is 100"]


def test_an_action_name_that_would_split_into_several_is_refused() -> None:
    data = jsonl({"scenario": "3-Sokoban-small-v0", "repeat": 0, "actions": ["Up, Down"]})
    (problem,) = problems_of(lambda: sokoban(data))
    assert problem.startswith("line 1: actions[0]: 'Up, Down' does not match")


def test_every_problem_of_a_file_is_reported_at_once() -> None:
    data = jsonl({"scenario": "foo", "repeat": 0, "replies": ["x"]}, "[", {"scenario": "3-Sokoban-small-v0"},
                 {"scenario": "3-Sokoban-small-v0", "repeat": 0, "replies": ["x"]})
    assert [problem.split(":")[0] for problem in problems_of(lambda: sokoban(data))] == [
        "line 1", "line 2", "line 3", "line 3"]


def test_problems_beyond_the_limit_are_counted_not_listed() -> None:
    data = b"[]\n" * 12
    found = problems_of(lambda: sokoban(data, limits=UploadLimits(max_problems=10)))
    assert len(found) == 11 and found[-1] == "upload: 2 more problem(s) not listed"


# --- refusals: zip -----------------------------------------------------------------------------

def test_data_that_only_looks_like_a_zip_is_refused_as_not_a_zip_archive() -> None:
    assert problems_of(lambda: sokoban(b"PK\x03\x04 this is not really a zip")) == ["upload: not a zip archive"]
    assert problems_of(lambda: parse_zip(b"hello", env="sokoban", flow="online", scenarios=SOKOBAN)) == [
        "upload: not a zip archive"]


@pytest.mark.parametrize("name, reason", [
    ("../3-Sokoban-small-v0_r0/eval.json", "member name contains '..'"),
    ("3-Sokoban-small-v0_r0/../../etc/passwd", "member name contains '..'"),
    ("/etc/cron.d/evil", "member name is absolute"),
    ("3-Sokoban-small-v0_r0\\..\\evil.json", "member name contains a backslash"),
    ("C:/Windows/evil.dll", "member name starts with a drive letter"),
])
def test_a_zip_member_escaping_the_folder_is_refused(name: str, reason: str) -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]), name: "evil"})
    assert problems_of(lambda: sokoban(data)) == [f"{name}: {reason}: the archive is refused"]


def test_an_archive_with_too_many_members_is_refused() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]), "3-Sokoban-small-v0_r0/a.txt": "a"})
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_members=2))) == [
        "upload: the archive has 3 members, the limit is 2"]


def test_a_member_larger_than_the_member_limit_is_refused() -> None:
    data = make_zip(run_folder("3-Sokoban-small-v0_r0", replies=["x" * 5000]))
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_member_bytes=1000))) == [
        "3-Sokoban-small-v0_r0/replies.json: member is 5004 bytes uncompressed, the limit is 1000"]


def test_members_larger_than_the_total_limit_together_are_refused() -> None:
    files = {**run_folder("3-Sokoban-small-v0_r0", replies=["x" * 3000]), "3-Sokoban-small-v0_r0/video.mp4": "0" * 3000}
    total = sum(len(content) for content in files.values())
    assert problems_of(lambda: sokoban(make_zip(files), limits=UploadLimits(max_total_bytes=5000))) == [
        f"upload: the members total {total} bytes uncompressed, the limit is 5000"]


def test_a_highly_compressed_member_is_refused_as_a_zip_bomb() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]),
                     "3-Sokoban-small-v0_r0/video.mp4": b"\x00" * (4 * MIB)})
    (problem,) = problems_of(lambda: sokoban(data, limits=UploadLimits(max_ratio=100)))
    assert problem.startswith("3-Sokoban-small-v0_r0/video.mp4: compression ratio ")
    assert problem.endswith("exceeds 100 (possible zip bomb)")


def test_a_small_highly_compressible_member_is_not_taken_for_a_zip_bomb() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]),
                     "3-Sokoban-small-v0_r0/output_progress.md": b"\x00" * (MIB // 2)})
    assert len(sokoban(data, limits=UploadLimits(max_ratio=100))) == 1


def test_a_member_whose_declared_size_lies_is_refused_when_read() -> None:
    data = make_zip(run_folder("3-Sokoban-small-v0_r0", replies=["x" * 100_000]))
    # The declared size passes every check made before reading; the content is much larger.
    lying = patch_central_directory(data, "3-Sokoban-small-v0_r0/replies.json", 24, 10, "<I")
    (problem,) = problems_of(lambda: sokoban(lying, limits=UploadLimits(max_member_bytes=1000)))
    assert problem.startswith("3-Sokoban-small-v0_r0/replies.json: ")


def test_an_encrypted_member_is_refused() -> None:
    data = make_zip(run_folder("3-Sokoban-small-v0_r0", replies=["x"]))
    encrypted = patch_central_directory(data, "3-Sokoban-small-v0_r0/replies.json", 8, 0x1, "<H")
    assert problems_of(lambda: sokoban(encrypted)) == [
        "3-Sokoban-small-v0_r0/replies.json: encrypted members are not accepted"]


def test_a_symlink_member_is_refused() -> None:
    link = zipfile.ZipInfo("3-Sokoban-small-v0_r0/replies.json")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    data = make_zip({"3-Sokoban-small-v0_r0/eval.json": json.dumps({"result": 1})}, infos=[(link, b"/etc/passwd")])
    assert problems_of(lambda: sokoban(data)) == [
        "3-Sokoban-small-v0_r0/replies.json: symbolic links are not accepted"]


def test_a_folder_not_named_after_a_scenario_and_repeat_is_refused() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]), **run_folder("results", replies=["x"])})
    assert problems_of(lambda: sokoban(data)) == [
        "results/: folder is not named <scenario>_r<repeat> (e.g. 1-Sokoban-small-v0_r0)"]


def test_a_run_folder_of_an_unknown_scenario_is_refused() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]), **run_folder("foo_r0", replies=["x"])})
    assert problems_of(lambda: sokoban(data)) == ["foo_r0/: unknown scenario 'foo' (not in this subset)"]


def test_a_duplicate_run_folder_is_reported_with_both_folders() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0", replies=["x"]),
                     **run_folder("3-Sokoban-small-v0_r00", replies=["x"])})
    assert problems_of(lambda: sokoban(data)) == [
        "3-Sokoban-small-v0_r00/: scenario '3-Sokoban-small-v0' repeat 0 already given in 3-Sokoban-small-v0_r0/"]


def test_a_run_folder_beyond_the_number_of_repeats_is_refused() -> None:
    data = make_zip(run_folder("3-Sokoban-small-v0_r1", replies=["x"]))
    assert problems_of(lambda: sokoban(data, max_repeats=1)) == [
        "3-Sokoban-small-v0_r1/: repeat 1 is out of range: this evaluation has 1 repeat(s), numbered 0 to 0"]


def test_a_run_folder_without_eval_json_is_refused() -> None:
    data = make_zip({"3-Sokoban-small-v0_r0/replies.json": json.dumps(["x"])})
    assert problems_of(lambda: sokoban(data)) == [
        "3-Sokoban-small-v0_r0/: missing eval.json: the run did not finish (the official harness writes it last, "
        "and runs such a folder again when resumed); finish the run or leave the folder out"]


@pytest.mark.parametrize("report, message", [
    ('{"details": {}}', "'result' is missing"),
    ('{"result": "1.0"}', "'result' must be a finite number, got \"1.0\""),
    ('{"result": true}', "'result' must be a finite number, got true"),
    ('{"result": 1e400}', "'result' must be a finite number, got Infinity"),
    ('[1.0]', "expected a JSON object, got an array"),
])
def test_an_eval_json_without_a_numeric_result_is_refused(report: str, message: str) -> None:
    data = make_zip({"3-Sokoban-small-v0_r0/eval.json": report,
                     "3-Sokoban-small-v0_r0/replies.json": json.dumps(["x"])})
    assert problems_of(lambda: sokoban(data)) == [f"3-Sokoban-small-v0_r0/eval.json: {message}"]


def test_an_eval_json_with_a_malformed_parsing_err_is_refused() -> None:
    data = make_zip({"3-Sokoban-small-v0_r0/eval.json": json.dumps({"result": 1, "parsing_err": "none"}),
                     "3-Sokoban-small-v0_r0/replies.json": json.dumps(["x"])})
    assert problems_of(lambda: sokoban(data)) == [
        "3-Sokoban-small-v0_r0/eval.json: 'parsing_err' must be a boolean or an integer"]


def test_a_sokoban_run_folder_without_replies_is_refused_with_the_files_the_flow_writes() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0"), "3-Sokoban-small-v0_r0/output_video.mp4": b"\x00"})
    assert problems_of(lambda: sokoban(data)) == [
        "3-Sokoban-small-v0_r0/: missing the model's replies: output_0.txt, output_1.txt, … (the Online flow's "
        "replies, one per model call), or replies.json or actions.json"]
    assert problems_of(lambda: sokoban(data, flow="global")) == [
        "3-Sokoban-small-v0_r0/: missing the model's replies: output.txt (the Global flow's reply), "
        "or replies.json or actions.json"]


def test_a_replies_json_that_is_not_a_list_of_strings_is_refused() -> None:
    data = make_zip({**run_folder("3-Sokoban-small-v0_r0"), "3-Sokoban-small-v0_r0/replies.json": '{"0": "x"}',
                     **run_folder("10-Sokoban-small-v1_r0"), "10-Sokoban-small-v1_r0/actions.json": "[]"})
    assert problems_of(lambda: sokoban(data)) == [
        "10-Sokoban-small-v1_r0/actions.json: expected a non-empty JSON list of action names",
        "3-Sokoban-small-v0_r0/replies.json: expected a non-empty JSON list of strings"]


def test_a_zip_json_member_that_is_not_utf8_is_reported_by_name() -> None:
    data = make_zip({"3-Sokoban-small-v0_r0/eval.json": b'{"result": 1, "note": "\xff"}',
                     "3-Sokoban-small-v0_r0/replies.json": b'["caf\xe9"]'})
    assert problems_of(lambda: sokoban(data)) == [
        "3-Sokoban-small-v0_r0/eval.json: not UTF-8 text (byte 0xff at offset 23)",
        "3-Sokoban-small-v0_r0/replies.json: not UTF-8 text (byte 0xe9 at offset 5)"]


def test_invalid_json_in_a_zip_member_is_reported_by_name() -> None:
    data = make_zip({"3-Sokoban-small-v0_r0/eval.json": "{result: 1}",
                     "3-Sokoban-small-v0_r0/replies.json": json.dumps(["x"])})
    assert problems_of(lambda: sokoban(data)) == [
        "3-Sokoban-small-v0_r0/eval.json: invalid JSON: Expecting property name enclosed in double quotes (column 2)"]


def test_a_reply_longer_than_the_limit_in_a_zip_is_refused() -> None:
    data = make_zip(run_folder("3-Sokoban-small-v0_r0", replies=["x" * 11]))
    assert problems_of(lambda: sokoban(data, limits=UploadLimits(max_reply_chars=10))) == [
        "3-Sokoban-small-v0_r0/replies.json[0]: reply is 11 characters long, the limit is 10"]


# --- examples, schema and command --------------------------------------------------------------

def test_the_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_example_files_validate_against_the_schema_and_parse(name: str) -> None:
    path = ROOT / "fixtures" / "uploads" / name
    validator = Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for line in lines:
        assert list(validator.iter_errors(json.loads(line))) == []
    env, flow, scenarios = EXAMPLES[name]
    runs = parse_upload(path.read_bytes(), env=env, flow=flow, scenarios=scenarios, max_repeats=3)
    assert len(runs) == len(lines)
    assert {run.scenario for run in runs} == scenarios


def test_the_validate_upload_command_reports_ok_or_every_problem_with_its_line(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios.txt"
    scenarios.write_text("1-Sokoban-small-v0\n10-Sokoban-small-v1\n\n", encoding="utf-8")
    example = ROOT / "fixtures" / "uploads" / "example-sokoban-online.jsonl"
    out = io.StringIO()
    call_command("validate_upload", str(example), env="sokoban", flow="online", scenarios_file=str(scenarios),
                 stdout=out)
    assert out.getvalue().strip() == "OK: 4 runs (scenarios: 2, repeats: 0, 1)"

    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(jsonl({"scenario": "1-Sokoban-small-v0", "repeat": 0, "actions": ["Up"]}, "{",
                             {"scenario": "nope", "repeat": 0, "actions": ["Up"]}))
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("validate_upload", str(broken), env="sokoban", flow="online", scenarios_file=str(scenarios),
                     stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "line 2: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        "line 3: unknown scenario 'nope' (not in this subset)"]


def solution_of(level: str) -> list[str]:
    """The level's optimal moves from its upper_bound.json (upper case pushes, lower case walks)."""
    moves = {"l": "Left", "r": "Right", "u": "Up", "d": "Down"}
    bounds = json.loads((FIXTURE_RESOURCES / "Sokoban" / "upper_bound.json").read_text(encoding="utf-8"))
    return [moves[letter.lower()] for letter in bounds[level]["actions"]]


def rescore_lines(path: Path, *, env: str, flow: str, **options: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    call_command("validate_upload", str(path), env=env, flow=flow, resources=str(FIXTURE_RESOURCES), rescore=True,
                 json=True, stdout=out, **options)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_validate_upload_rescores_an_official_folder_offline_and_prints_one_json_object_per_run(tmp_path: Path) -> None:
    solved = "### Analyze\nPush both boxes down.\n### Actions\n" + ", ".join(solution_of("1-Sokoban-small-v0"))
    upload = tmp_path / "output.zip"
    upload.write_bytes(make_zip({
        "output/1-Sokoban-small-v0_r0/eval.json": official_eval(100.0, False),
        "output/1-Sokoban-small-v0_r0/output.txt": solved,
        # The claim is wrong: an empty action list leaves the level as it was.
        "output/1-Sokoban-small-v0_r1/eval.json": official_eval(100.0, True),
        "output/1-Sokoban-small-v0_r1/output.txt": "### Analyze\nNothing to do.\n### Actions\n",
        "output/res.txt": "100.0",
    }))
    lines = rescore_lines(upload, env="sokoban", flow="global", subset="mini")
    assert lines == [
        {"scenario": "1-Sokoban-small-v0", "repeat": 0, "score": 100.0, "reported": 100.0, "agrees": True,
         "error": None},
        {"scenario": "1-Sokoban-small-v0", "repeat": 1, "score": 48.0, "reported": 100.0, "agrees": False,
         "error": None},
    ]


def test_validate_upload_reports_webui_claims_on_the_platform_scale(tmp_path: Path) -> None:
    upload = tmp_path / "output.zip"
    upload.write_bytes(make_zip({"step-counter_r0/eval.json": json.dumps({"result": 0.0, "parsing_err": True}),
                                 "step-counter_r0/tasks.md": "# Step counter"}))
    out = io.StringIO()
    call_command("validate_upload", str(upload), env="webui", flow="global", resources=str(FIXTURE_RESOURCES),
                 json=True, stdout=out)
    assert json.loads(out.getvalue()) == {"scenario": "step-counter", "repeat": 0, "score": None, "reported": 0.0,
                                          "agrees": None, "error": None}


def test_rescoring_needs_the_scenarios_not_only_their_keys(tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("1-Sokoban-small-v0\n", encoding="utf-8")
    example = ROOT / "fixtures" / "uploads" / "example-sokoban-online.jsonl"
    with pytest.raises(CommandError, match="--rescore needs the scenarios themselves"):
        call_command("validate_upload", str(example), env="sokoban", flow="online", scenarios_file=str(keys),
                     rescore=True)


@pytest.mark.django_db
def test_validate_upload_without_a_suite_names_the_suites_when_there_are_several(fixture_scenarios) -> None:
    from catalogue.models import Scenario

    copy = Scenario.objects.filter(environment_id="sokoban", suite="fixture").first()
    Scenario.objects.create(environment_id="sokoban", suite="official", key=copy.key, in_mini=True, data=copy.data,
                            resource_path=copy.resource_path, content_hash=copy.content_hash)
    example = ROOT / "fixtures" / "uploads" / "example-sokoban-online.jsonl"
    with pytest.raises(CommandError, match=r"sokoban has scenarios in several suites \(fixture, official\); "
                                           r"choose one with --suite"):
        call_command("validate_upload", str(example), env="sokoban", flow="online", stdout=io.StringIO())
    with pytest.raises(CommandError, match=r"no full scenarios of sokoban in the suite 'nope' "
                                           r"\(suites known for sokoban: fixture, official\)"):
        call_command("validate_upload", str(example), env="sokoban", flow="online", suite="nope")
    out = io.StringIO()
    call_command("validate_upload", str(example), env="sokoban", flow="online", suite="fixture", rescore=True,
                 json=True, stdout=out)
    assert [(line["scenario"], line["repeat"], line["score"]) for line in map(json.loads, out.getvalue().splitlines())
            ] == [("1-Sokoban-small-v0", 0, 100.0), ("1-Sokoban-small-v0", 1, 48.0), ("10-Sokoban-small-v1", 0, 45.0),
                  ("10-Sokoban-small-v1", 1, 45.0)]


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_example_files_score_on_the_platform_scale_and_agree_with_the_platform(name: str) -> None:
    env, flow, _ = EXAMPLES[name]
    lines = rescore_lines(ROOT / "fixtures" / "uploads" / name, env=env, flow=flow)
    assert lines and all(line["error"] is None and line["score"] is not None for line in lines), lines
    assert [line for line in lines if line["agrees"] is not True] == []
