"""A baseline's live run, written in the official output layout and uploaded, scores exactly as it did live.

These run one small case per environment and flow of ``bench/upload_agreement.py``, which does the
same for every baseline on the whole fixture sets.
"""
from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("upload_agreement", ROOT / "bench" / "upload_agreement.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("upload_agreement", module)
    spec.loader.exec_module(module)
    return module


bench = _bench()


@pytest.mark.integration
@pytest.mark.parametrize("env, flow, agent, reply_file", [
    ("sokoban", "global", "oracle", "output.txt"),
    ("sokoban", "online", "random", "output_0.txt"),
    ("football", "online", "random", "output_0.txt"),
    ("webui", "global", "degraded", "output.txt"),
])
def test_a_baselines_run_uploaded_in_the_official_layout_scores_exactly_as_it_did_live(
        env: str, flow: str, agent: str, reply_file: str, tmp_path: Path) -> None:
    specs = bench.fixture_scenarios(env)[:1]
    (row,) = bench.agreement_rows(env, flow, agent, specs, tmp_path)
    assert row.error == "" and row.platform is not None
    assert row.upload == row.platform
    assert row.reported == pytest.approx(row.platform, abs=1e-9)
    assert row.agrees

    # What was uploaded is the official folder, not the platform's own formats.
    with zipfile.ZipFile(tmp_path / "uploads" / f"{env}-{flow}-{agent}.zip") as archive:
        names = set(archive.namelist())
    folder = f"output/{specs[0].key}_r0/"
    assert {"output/res.txt", folder + "eval.json", folder + reply_file} <= names
    assert not any(name.endswith(("replies.json", "actions.json")) for name in names)
    if env == "webui":
        assert folder + "index.html" in names and folder + "tasks.md" in names


def test_a_run_agrees_only_when_the_upload_and_its_own_result_both_match_the_platform() -> None:
    row = bench.Row(env="sokoban", flow="global", agent="idle", scenario="s", platform=48.0, upload=48.0,
                    reported=48.0)
    assert row.agrees
    assert not bench.Row(**{**row.__dict__, "upload": 48.5}).agrees
    assert not bench.Row(**{**row.__dict__, "reported": 0.48}).agrees
    assert not bench.Row(**{**row.__dict__, "upload": None, "error": "EnvironmentFailure"}).agrees
