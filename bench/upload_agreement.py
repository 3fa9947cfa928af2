"""Upload agreement: each baseline's platform score beside the score of its own run uploaded as the
official harness would have written it.

For the fixture sets (fixtures/magebench, the suite "fixture") every baseline agent plays every
environment and flow through the HTTP baseline server, as a live submission does. Its replies are
then laid out as the official output directory (``output/<scenario>_r0/`` with ``eval.json``,
``output.txt`` or ``output_<k>.txt``, WebUI's generated page, and the other files the official
runner leaves there, plus ``res.txt``), zipped, and re-scored through the upload path: the parser
the site uses, then the re-scoring its workers use. The two scores must be equal, and the upload's
own ``result`` must read back as the platform's score; the script exits 1 when any run differs.

Both plays use the official flows' rules (no parse retries). Football is stochastic: both plays
use one engine seed and render no frame (the baselines read none), which is what makes a replay
exact there.

Usage: .venv/bin/python bench/upload_agreement.py [--env E] [--flow F] [--agent A] [--subset mini|full]
       [--limit N] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.base import ScenarioSpec, default_environments, get_plugin, load_plugins  # noqa: E402
from evaluators.baselines.agents import AGENT_NAMES, make_agent  # noqa: E402
from evaluators.baselines.server import start_server  # noqa: E402
from evaluators.endpoints.client import ChatClient  # noqa: E402
from evaluators.runner import effective_settings, run_attempt  # noqa: E402
from evaluators.settings import EvaluationSettings  # noqa: E402
from evaluators.trajectory import load_trajectory  # noqa: E402
from submissions.official_layout import OfficialRun, official_run_from_trajectory, zip_runs  # noqa: E402
from submissions.rescoring import rescore_runs, resimulated, upload_settings  # noqa: E402
from submissions.uploads import parse_upload  # noqa: E402

RESOURCES = ROOT / "fixtures" / "magebench" / "resources"
CASES: tuple[tuple[str, str], ...] = (("sokoban", "global"), ("sokoban", "online"), ("football", "online"),
                                      ("webui", "global"))
#: One engine seed for the live play and the replay of every Football run.
FOOTBALL_SEED = 20_240_611
AGENT_SEED = 0


@dataclass(frozen=True)
class Row:
    env: str
    flow: str
    agent: str
    scenario: str
    platform: float | None
    upload: float | None
    reported: float | None
    error: str = ""

    @property
    def agrees(self) -> bool:
        return (not self.error and self.platform is not None and self.upload == self.platform
                and self.reported is not None and abs(self.reported - self.platform) <= 1e-6)


def fixture_scenarios(env: str, subset: str = "mini", resources: Path = RESOURCES) -> list[ScenarioSpec]:
    found = get_plugin(env).discover(resources, verify=False)
    return [ScenarioSpec(env=env, key=item.key, data=item.data, resource_path=item.resource_file)
            for item in found if (item.in_mini if subset == "mini" else item.in_full)]


def stochastic_overrides(env: str) -> dict[str, Any]:
    return {"seed": FOOTBALL_SEED} if resimulated(env) else {}


def live_settings(env: str, flow: str) -> EvaluationSettings:
    """A live submission's settings under the official flow rules, made replayable (see above)."""
    overrides: dict[str, Any] = {"parse_retries": 0, **stochastic_overrides(env)}
    if resimulated(env):
        overrides["observation_images"] = False
    return effective_settings(env, flow, overrides)


def play(spec: ScenarioSpec, flow: str, url: str, agent: str, out_dir: Path) -> tuple[float, OfficialRun]:
    """One live run of the baseline at ``url``: its platform score and its official run folder."""
    client = ChatClient(url, agent)
    result = run_attempt(scenario=spec, flow=flow, settings=live_settings(spec.env, flow), model=client,
                         out_dir=out_dir)
    official = official_run_from_trajectory(
        env=spec.env, flow=flow, scenario=spec.key, repeat=0, trajectory=load_trajectory(out_dir),
        score=result.score, page_folder=spec.resource_path if spec.env == "webui" else None)
    return result.score, official


def rescore_upload(data: bytes, *, env: str, flow: str, specs: Sequence[ScenarioSpec],
                   out_root: Path | None = None) -> dict[str, Any]:
    """Re-score an upload's bytes as the site would, by scenario key."""
    by_key = {spec.key: spec for spec in specs}
    runs = parse_upload(data, env=env, flow=flow, scenarios=set(by_key))
    settings = upload_settings(env, flow, overrides=stochastic_overrides(env))
    return {rescored.scenario: rescored
            for rescored in rescore_runs(runs, env=env, flow=flow, scenarios=by_key, settings=settings,
                                         out_root=out_root)}


def agreement_rows(env: str, flow: str, agent: str, specs: Sequence[ScenarioSpec], workdir: Path) -> list[Row]:
    """Play ``agent`` on ``specs`` live, upload its runs in the official layout and compare."""
    pages = [RESOURCES / "WebUI"] if env == "webui" else []
    scores: dict[str, float] = {}
    folders: list[OfficialRun] = []
    with start_server(make_agent(agent, seed=AGENT_SEED, pages=pages)) as server:
        for spec in specs:
            score, official = play(spec, flow, server.url, agent, workdir / "live" / f"{env}-{flow}-{agent}" / spec.key)
            scores[spec.key] = score
            folders.append(official)
    data = zip_runs(folders)
    (workdir / "uploads").mkdir(parents=True, exist_ok=True)
    (workdir / "uploads" / f"{env}-{flow}-{agent}.zip").write_bytes(data)
    rescored = rescore_upload(data, env=env, flow=flow, specs=specs,
                              out_root=workdir / "rescored" / f"{env}-{flow}-{agent}")
    return [Row(env=env, flow=flow, agent=agent, scenario=key, platform=score, upload=rescored[key].score,
                reported=rescored[key].reported, error=rescored[key].error) for key, score in scores.items()]


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _pad(text: str, width: int) -> str:
    """``text`` left-aligned in ``width`` terminal columns (CJK page names take two columns a character)."""
    columns = sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)
    return text + " " * max(width - columns, 1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", action="append", help="only this environment (repeatable)")
    parser.add_argument("--flow", action="append", help="only this flow (repeatable)")
    parser.add_argument("--agent", action="append", choices=AGENT_NAMES, help="only this baseline (repeatable)")
    parser.add_argument("--subset", default="mini", choices=("mini", "full"))
    parser.add_argument("--limit", type=int, help="at most this many scenarios per environment")
    parser.add_argument("--keep", type=Path, help="keep the live runs, the zips and the re-scored runs here")
    parser.add_argument("--json", action="store_true", help="print one JSON object per run")
    args = parser.parse_args(argv)
    # Plain Python, no Django: the registry holds what it is given, and the cases are the benchmark's own.
    load_plugins(default_environments())

    rows: list[Row] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="magebench-agreement-") as scratch:
        workdir = args.keep or Path(scratch)
        for env, flow in CASES:
            if (args.env and env not in args.env) or (args.flow and flow not in args.flow):
                continue
            specs = fixture_scenarios(env, args.subset)[:args.limit]
            agents = [name for name in AGENT_NAMES if not args.agent or name in args.agent]
            if env != "webui":
                agents = [name for name in agents if name != "degraded"]  # a WebUI-only policy
            for agent in agents:
                case_rows = agreement_rows(env, flow, agent, specs, workdir)
                rows.extend(case_rows)
                for row in case_rows:
                    if args.json:
                        print(json.dumps(row.__dict__ | {"agrees": row.agrees}, ensure_ascii=False), flush=True)
                    else:
                        print(f"{env:<9}{flow:<8}{agent:<10}{_pad(row.scenario, 24)}{_number(row.platform):>10}"
                              f"{_number(row.upload):>10}{_number(row.reported):>10}  "
                              f"{'ok' if row.agrees else 'DIFFERS ' + row.error}", flush=True)
    wall = time.perf_counter() - started
    differing = [row for row in rows if not row.agrees]
    if not args.json:
        print()
        print(f"{'env':<9}{'flow':<8}{'agent':<10}{'runs':>5}{'platform mean':>15}{'upload mean':>13}  agreement")
        groups: dict[tuple[str, str, str], list[Row]] = {}
        for row in rows:
            groups.setdefault((row.env, row.flow, row.agent), []).append(row)
        for (env, flow, agent), group in groups.items():
            platform = [row.platform for row in group if row.platform is not None]
            upload = [row.upload for row in group if row.upload is not None]
            equal = sum(row.agrees for row in group)
            print(f"{env:<9}{flow:<8}{agent:<10}{len(group):>5}{sum(platform) / max(len(platform), 1):>15.4f}"
                  f"{sum(upload) / max(len(upload), 1):>13.4f}  {equal}/{len(group)} exact")
        print(f"\n{len(rows)} runs in {wall:.0f} s: {len(rows) - len(differing)} agree exactly, "
              f"{len(differing)} differ")
    return 1 if differing or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
