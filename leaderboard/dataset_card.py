"""A snapshot's dataset card: README.md in the Hugging Face dataset-card layout.

The YAML header names the Parquet files (``configs``), so that ``datasets.load_dataset`` on the
unpacked zip finds both tables, and lists each column's type (``dataset_info``); the body says what
the data is, how it was measured, every column (``leaderboard.columns``), the environment's score
scale, the licence and how to cite it. Everything environment-specific is read from its plug-in.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from django.conf import settings
from django.template.loader import render_to_string

from evaluators.base import EnvironmentPlugin, get_plugin
from leaderboard.columns import ATTEMPT_COLUMNS, Column, board_columns

if TYPE_CHECKING:
    from leaderboard.models import BoardSnapshot
    from leaderboard.selectors import Board

#: A snapshot's files, relative to its folder (and inside its zip).
CARD = "README.md"
BOARD_FILE = "data/board.parquet"
ATTEMPTS_FILE = "data/attempts.parquet"
#: The benchmark's paper, which every use of the data should cite beside the snapshot.
PAPER_BIBTEX = """@misc{zhang2024magebench,
  title         = {MageBench: Bridging Large Multimodal Models to Agents},
  author        = {Zhang, Miaosen and Dai, Qi and Yang, Yifan and Bao, Jianmin and Chen, Dongdong and Qiu, Kai and
                   Luo, Chong and Geng, Xin and Guo, Baining},
  year          = {2024},
  eprint        = {2412.04531},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2412.04531}
}"""
#: A column's type as ``datasets`` names it in a card's ``dataset_info``.
HF_TYPES = {"string": {"dtype": "string"}, "int64": {"dtype": "int64"}, "float64": {"dtype": "float64"},
            "bool": {"dtype": "bool"}, "timestamp": {"dtype": "timestamp[us, tz=UTC]"},
            "list<string>": {"sequence": "string"}}
CSV_NOTE = ("Read the Parquet files, not CSV: from CSV, pandas and `datasets` guess each column's type from its "
            "values, so a text column that is empty on every row (e.g. `note`, `error_message`) comes back as "
            "float64 and nullable integers as floats. Parquet keeps every column's type.")


def score_scale(plugin: EnvironmentPlugin) -> dict[str, str]:
    """What an environment's score means, from its plug-in and its metric card."""
    card = getattr(plugin, "metric_card", {}) or {}
    return {"env": plugin.slug, "title": plugin.title, "label": plugin.score_label,
            "hint": plugin.score_hint or plugin.score_label, "formula": str(card.get("formula", "")),
            "range": str(card.get("normalisation", "") or card.get("floor", ""))}


def _features(columns: tuple[Column, ...]) -> list[dict[str, Any]]:
    return [{"name": column.name, **HF_TYPES[column.type]} for column in columns]


def card_header(board: Board, snapshot: BoardSnapshot) -> dict[str, Any]:
    plugin = get_plugin(board.env)
    return {
        "pretty_name": f"MageBench Leaderboard: {plugin.title} {board.flow} {board.subset} "
                       f"(suite {board.suite}), {snapshot.version}",
        "license": settings.MAGEBENCH_DATA_LICENSE,
        "language": ["en"],
        "tags": ["benchmark", "leaderboard", "multimodal", "agents", "magebench"],
        "configs": [
            {"config_name": "board", "data_files": [{"split": "train", "path": BOARD_FILE}], "default": True},
            {"config_name": "attempts", "data_files": [{"split": "train", "path": ATTEMPTS_FILE}]},
        ],
        "dataset_info": [
            {"config_name": "board", "features": _features(board_columns(plugin))},
            {"config_name": "attempts", "features": _features(ATTEMPT_COLUMNS)},
        ],
    }


def dataset_bibtex(snapshot: BoardSnapshot, url: str = "") -> str:
    """The snapshot's own BibTeX entry: its board, version and content hash."""
    key = f"magebench_{snapshot.board_name}_{snapshot.version}".replace("-", "_").replace(".", "_")
    lines = [f"@misc{{{key},",
             f"  title     = {{MageBench Leaderboard snapshot: {snapshot.board_name}, version {snapshot.version}}},",
             f"  author    = {{{{{settings.MAGEBENCH_DATA_PUBLISHER}}}}},",
             f"  year      = {{{snapshot.created_at.year}}},",
             f"  version   = {{{snapshot.version}}},",
             f"  note      = {{sha256 {snapshot.content_hash}}},"]
    if url:
        lines.append(f"  url       = {{{url}}},")
    lines.append(f"  howpublished = {{Dataset snapshot, {snapshot.created_at.date().isoformat()}}}")
    return "\n".join(lines) + "\n}"


def card_markdown(board: Board, snapshot: BoardSnapshot) -> str:
    plugin = get_plugin(board.env)
    header = yaml.safe_dump(card_header(board, snapshot), sort_keys=False, allow_unicode=True, width=120)
    return render_to_string("leaderboard/data/card.md", {
        "header": header.strip(), "board": board, "snapshot": snapshot, "plugin": plugin,
        "board_columns": board_columns(plugin), "attempt_columns": ATTEMPT_COLUMNS, "scale": score_scale(plugin),
        "csv_note": CSV_NOTE, "licence": settings.MAGEBENCH_DATA_LICENSE, "dataset_bibtex": dataset_bibtex(snapshot),
        "paper_bibtex": PAPER_BIBTEX})
