"""Request by request: what the platform sends to an OpenAI-compatible endpoint against what the
official MageBench runner sends, on the same fixture scenario and the same scripted endpoint.

For each flow (Sokoban Global, Sokoban Online, WebUI Global, Football Online, and WebUI Online in
each of the official harness's four flows, "Natural", "NoCoT", "NoIMG" and "MergeNoDes") two
recording endpoints are started on 127.0.0.1, both answering the same fixed
sequence of replies (valid actions, an unparsable reply that makes the Online flows send their
regenerate turn, a Football pass, WebUI code blocks and a reply cut off inside a code block). The
official runner (``main.py``; ``main_WebUI_online.py`` after it for WebUI Online, started from the
Global run's output) plays against the first one as a subprocess, with the experiment scripts'
settings; the platform plays the same scenario and flow against the second one through
``evaluators.runner.run_attempt``, with the official prompts read from the same checkout where its
plug-in reads them (its own prompts otherwise, as the report says). WebUI Online "Natural" is played
a second time on the platform with its labelled paper-era ``webui_viewport_1080`` option and compared
with the same official requests: the official runner's browser is measured and reported beside it.
The other three WebUI Online flows are played with the labelled ``webui_online_flow`` that follows
each, at the default viewport.

Each pair of requests is then compared in order: the top-level fields (model, temperature, top_p,
frequency_penalty, max_tokens), the roles and order of the messages, every text character for
character, and every image by its data URL's media-type label and its decoded pixels (Football
frames by their size only: the engine varies its lighting from run to run). A table goes to
standard output and to the report file.

The official checkout is never part of this repository: its folder is given on the command line,
with the folder its own dependencies were installed to (``pip install --target``) when they are not
in this interpreter. It runs under this interpreter (gym, gym-sokoban, gfootball come from the
project's environment). Selenium drives Debian's chromium-driver offline for the WebUI runs.

Usage: .venv/bin/python bench/official_requests.py --official-code DIR [--official-deps DIR]
       [--out bench/reports/official_requests.txt] [--flow NAME ...] [--max-loop N] [--keep DIR]
"""
from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._official.cases import CASES, Case, pick_scenario  # noqa: E402
from bench._official.compare import Outcome, compare  # noqa: E402
from bench._official.replies import Recorder  # noqa: E402
from bench._official.runs import run_official, run_platform  # noqa: E402
from evaluators.base import default_environments, load_plugins  # noqa: E402

DEFAULT_REPORT = ROOT / "bench" / "reports" / "official_requests.txt"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "?"


def _results(results: Sequence[tuple[str, Any]]) -> str:
    if not results:
        return "none written"
    shown = [(folder, str(round(r, 6)) if isinstance(r, float) else str(r)) for folder, r in results]
    return shown[0][1] if len(shown) == 1 else ", ".join(f"{folder} {value}" for folder, value in shown)


def report(outcomes: Sequence[Outcome], code: Path, max_loop: int | None) -> str:
    lines = [
        "Official request agreement (bench/official_requests.py)",
        f"run {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC on commit {_git('rev-parse', '--short', 'HEAD')}"
        + (" with uncommitted changes in evaluators/" if _git("status", "--porcelain", "evaluators") else ""),
        f"official runner: {code} (rebuilt outside the repository), run with {Path(sys.executable).name} "
        f"{sys.version.split()[0]}",
        "scripted endpoint: the same replies on both sides; images compared by media-type label and decoded "
        "pixels, Football frames by size only",
    ]
    if max_loop is not None:
        lines.append(f"Online flows capped at {max_loop} decisions on both sides (--max-loop)")
    lines.append("")
    header = (f"{'flow':<26}{'scenario':<20}{'official':>9}{'platform':>9}{'compared':>9}{'equal':>6}"
              f"{'differing':>10}  first difference")
    lines.append(header)
    lines.append("-" * len(header))
    for outcome in outcomes:
        lines.append(f"{outcome.label:<26}{outcome.scenario:<20}{len(outcome.official.bodies):>9}"
                     f"{len(outcome.platform.bodies):>9}{outcome.compared:>9}{outcome.equal:>6}"
                     f"{len(outcome.differences) + (1 if outcome.count_differs else 0):>10}  "
                     f"{outcome.first[:160]}")
    lines.append("")
    lines.append("'differing' counts the differing request pairs, plus one when the two sides made a different "
                 "number of requests.")
    for outcome in outcomes:
        lines.append("")
        lines.append(f"== {outcome.label}: {outcome.scenario} ({outcome.picked})")
        lines.append(f"settings (both sides): {dict(outcome.case.values)}")
        lines.append(f"platform prompts: {outcome.platform.prompts}")
        lines.append(f"official: {len(outcome.official.bodies)} requests in {outcome.official.seconds:.0f} s; "
                     f"platform: {len(outcome.platform.bodies)} requests in {outcome.platform.seconds:.0f} s")
        lines.append(f"GET /v1/models (not compared): official {outcome.official.listings}, "
                     f"platform {outcome.platform.listings}")
        tally = outcome.tally
        lines.append(f"images compared: {tally.compared}; identical pixels: {tally.same_pixels} "
                     f"(identical PNG bytes: {tally.same_bytes})"
                     + (f"; size only: {tally.size_only}" if tally.size_only else ""))
        for note in outcome.official.notes:
            lines.append(f"official note: {note}")
        for note in outcome.platform.notes:
            lines.append(f"platform note: {note}")
        lines.append(f"scores (not compared; the platform's in the official result's units): official eval.json "
                     f"{_results(outcome.official.results)}; platform "
                     f"{'-' if outcome.platform.score is None else round(outcome.platform.score, 6)} "
                     f"({outcome.platform.outcome or 'no result'})")
        if outcome.count_differs:
            lines.append(f"request count differs: official {len(outcome.official.bodies)}, "
                         f"platform {len(outcome.platform.bodies)}")
            limit = outcome.case.values.get("max_loop")
            if (outcome.case.stochastic and limit is not None
                    and max(len(outcome.official.bodies), len(outcome.platform.bodies)) < limit):
                lines.append(f"    both episodes ended before max_loop ({limit}): each side's engine draws its "
                             "own random seed (the official runner sets none), so the games, and where they end, "
                             "differ from run to run")
        for index, found in outcome.differences[:25]:
            lines.append(f"request {index + 1}: {len(found)} difference(s)")
            for item in found[:6]:
                lines.append(f"    {item}")
            if len(found) > 6:
                lines.append(f"    … and {len(found) - 6} more")
        if len(outcome.differences) > 25:
            lines.append(f"… and {len(outcome.differences) - 25} more differing requests")
    return "\n".join(lines) + "\n"


def run_case(case: Case, code: Path, deps: Path | None, work: Path, max_loop: int | None) -> list[Outcome]:
    entry, picked = pick_scenario(case.env)
    values = dict(case.values)
    if max_loop is not None and "max_loop" in values:
        values["max_loop"] = min(values["max_loop"], max_loop)
        case = replace(case, values=values)
    key = Path(entry).stem if case.env != "webui" else Path(entry).name
    folder = work / case.name
    print(f"[{case.name}] official runner on {entry} …", flush=True)
    with Recorder(case.script) as recorder:
        official = run_official(case, entry, code, deps, recorder, folder / "official", values)
    print(f"[{case.name}] {len(official.bodies)} official requests in {official.seconds:.0f} s", flush=True)
    (folder / "official-requests.json").write_text(json.dumps(official.bodies), encoding="utf-8")
    outcomes = []
    for short, extra in (("", {}), *case.variants):
        label = f"{case.name}/{short}" if short else case.name
        side = f"platform-{short}" if short else "platform"
        with Recorder(case.script) as recorder:
            platform = run_platform(case, entry, code, recorder, folder / side, values, extra)
        print(f"[{label}] {len(platform.bodies)} platform requests in {platform.seconds:.0f} s", flush=True)
        (folder / f"{side}-requests.json").write_text(json.dumps(platform.bodies), encoding="utf-8")
        outcomes.append(compare(label, case, key, picked, official, platform))
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official-code", type=Path, required=True,
                        help="the official MageBench runner's folder (main.py, API/, Flow/, env/)")
    parser.add_argument("--official-deps", type=Path,
                        help="a folder of the official runner's own dependencies (pip install --target), "
                             "put on its PYTHONPATH")
    parser.add_argument("--out", type=Path, default=DEFAULT_REPORT, help="the report file")
    parser.add_argument("--flow", action="append", choices=[case.name for case in CASES],
                        help="only this flow (repeatable)")
    parser.add_argument("--max-loop", type=int, help="cap the Online flows' decisions on both sides")
    parser.add_argument("--keep", type=Path, help="keep the runs and the recorded requests here")
    args = parser.parse_args(argv)
    code = args.official_code.resolve()
    deps = args.official_deps.resolve() if args.official_deps else None
    if not (code / "main.py").is_file():
        parser.error(f"{code} has no main.py")
    load_plugins(default_environments())

    outcomes = []
    with tempfile.TemporaryDirectory(prefix="magebench-official-requests-") as scratch:
        work = args.keep.resolve() if args.keep else Path(scratch)
        for case in CASES:
            if args.flow and case.name not in args.flow:
                continue
            outcomes.extend(run_case(case, code, deps, work, args.max_loop))
    text = report(outcomes, code, args.max_loop)
    print()
    print(text, end="")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 1 if any(o.differences or o.count_differs or not o.compared for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
