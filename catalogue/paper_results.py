"""The MageBench paper's own results, as reported rows on the official suite's boards.

The paper (arXiv 2412.04531) publishes its models' scores in Table 1 (the mini set), Table 4 (the
appendix: the full set) and the share of runs with invalid or repeating actions in Table 2. A JSON
file holds them as extracted from the paper (``fixtures/paper-results.json``; its ``source`` strings
quote each table's protocol), one object per table::

    {"table1_mini": {"source": "...", "rows": {"GPT-4o": {"WebUI_Global": 34.28, ...}, ...}},
     "table4_full": {"source": "...", "rows": {...}},
     "table2_ia_ra": {"source": "...", "rows": {"GPT-4o": [IA, RA, IA, RA, IA, RA], ...}}}

A column is ``<Environment>_<Flow>``, the environment as its plug-in's ``paper_rows`` names it, which
also says how the paper ran it (repeats, the ± stated, its place in Table 2); null is a cell the paper
leaves empty, and is skipped, as is a column no loaded environment claims. The rows are
``ReportedResult`` rows: shown on the official boards, marked as reported, never ranked.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.db import transaction

from catalogue.changes import results_changed
from catalogue.citations import PAPER_URL
from catalogue.models import Environment, ReportedResult
from evaluators.base import EnvironmentPlugin, PaperRows, all_plugins

NOTE = "reported in the paper, not evaluated here"


@dataclass(frozen=True)
class PaperTable:
    """One of the paper's score tables: the subset its rows were run on. How each environment's runs
    were made there (repeats, the ± stated) is the environment's plug-in's ``paper_rows``."""

    key: str
    label: str
    subset: str


TABLES = (
    PaperTable(key="table1_mini", label="Table 1", subset="mini"),
    PaperTable(key="table4_full", label="Table 4", subset="full"),
)
#: Table 2 names its models short; these are Table 1's names for them (the mini-set runs it counts).
IA_RA_MODELS = {"GPT-4o": "GPT-4o", "Gemini": "Gemini-1.5-pro", "Claude": "Claude-3.5-Sonnet",
                "InternVL2": "InternVL2-76B-LLaMA3", "LLaVA-1.5": "LLaVA-v1.5-13B", "MiniCPM": "MiniCPM-V2.6-8B",
                "Phi-3-V": "Phi-3.5-V-4.2B"}


def paper_table(subset: str) -> PaperTable | None:
    """The paper's score table of ``subset``'s rows (Table 1: mini, Table 4: full)."""
    return next((table for table in TABLES if table.subset == subset), None)


#: The table the IA/RA of the mini rows comes from.
IA_RA_TABLE = "Table 2"


class PaperResultsError(ValueError):
    """The file is not the paper's results in the expected form; the message says where."""


@dataclass(frozen=True)
class PaperResult:
    env: str
    flow: str
    subset: str
    model: str
    score: float
    repeats: int | None
    uncertainty: float | None
    table: str
    ia_pct: float | None = None
    ra_pct: float | None = None


@dataclass
class PaperImport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0


def _reported() -> dict[str, EnvironmentPlugin]:
    """The loaded environments the paper reports, by their name in its columns (in lower case)."""
    return {plugin.paper_rows.column.lower(): plugin for plugin in all_plugins() if plugin.paper_rows.column}


def _column(name: str, reported: dict[str, EnvironmentPlugin]) -> tuple[EnvironmentPlugin | None, str]:
    """The environment of a column (None: no loaded environment claims it) and its flow."""
    env, _, flow = name.partition("_")
    if not env or not flow:
        raise PaperResultsError(f"column {name!r} is not <Environment>_<Flow>")
    return reported.get(env.lower()), flow.lower()


def _ia_ra_columns() -> list[tuple[str, str] | None]:
    """Table 2's (IA, RA) pairs in order: the (environment, flow) each belongs to, None where no loaded
    environment claims a pair."""
    claimed = {index: (plugin.slug, flow) for plugin in all_plugins()
               for flow, index in plugin.paper_rows.ia_ra_pairs.items()}
    return [claimed.get(index) for index in range(max(claimed, default=-1) + 1)]


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PaperResultsError(f"{where}: {value!r} is not a number")
    return float(value)


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    table = data.get(key)
    if not isinstance(table, dict) or not isinstance(table.get("rows"), dict):
        raise PaperResultsError(f"no {key!r} object with its 'rows'")
    return table["rows"]


def paper_results_read(data: Any) -> list[PaperResult]:
    """The scores of the paper's tables in ``data`` (the JSON file's content), with Table 2's IA/RA
    on the mini rows of the models it names; null cells are left out."""
    if not isinstance(data, dict):
        raise PaperResultsError("the file holds no JSON object")
    results: dict[tuple[str, str, str, str], PaperResult] = {}
    reported = _reported()
    for spec in TABLES:
        for model, cells in _table(data, spec.key).items():
            if not isinstance(cells, dict):
                raise PaperResultsError(f"{spec.key} {model!r}: not an object of columns")
            for column, value in cells.items():
                score = _number(value, f"{spec.key} {model!r} {column}")
                if score is None:
                    continue
                plugin, flow = _column(column, reported)
                # A column no loaded environment claims is kept with no environment, and skipped on import.
                env = plugin.slug if plugin else ""
                rows = plugin.paper_rows if plugin else PaperRows()
                results[(env or column, flow, spec.subset, model)] = PaperResult(
                    env=env, flow=flow, subset=spec.subset, model=model, score=score,
                    repeats=rows.repeats.get(spec.subset), uncertainty=rows.uncertainty.get((flow, spec.subset)),
                    table=spec.label)
    pairs = _ia_ra_columns()
    for short, values in (_table(data, "table2_ia_ra") if "table2_ia_ra" in data else {}).items():
        if not isinstance(values, list) or len(values) % 2 or len(values) < 2 * len(pairs):
            raise PaperResultsError(f"table2_ia_ra {short!r}: not (IA, RA) pairs, at least {len(pairs)} of them")
        model = IA_RA_MODELS.get(short, short)
        for index, pair in enumerate(pairs):
            found = results.get((*pair, "mini", model)) if pair else None
            if pair and found is not None:
                results[(*pair, "mini", model)] = replace(
                    found, ia_pct=_number(values[2 * index], f"table2_ia_ra {short!r}"),
                    ra_pct=_number(values[2 * index + 1], f"table2_ia_ra {short!r}"))
    return list(results.values())


def paper_results_load(path: Path) -> list[PaperResult]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PaperResultsError(f"cannot read {path}: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PaperResultsError(f"{path} is not JSON: {error}") from None
    return paper_results_read(data)


def paper_results_import(results: list[PaperResult]) -> PaperImport:
    """Create or update one ``ReportedResult`` per result (an environment not installed here is
    skipped): keyed by board, model and the paper's address, so that importing again updates the
    rows instead of adding new ones. Tells the boards once the rows are written."""
    report = PaperImport()
    environments = set(Environment.objects.values_list("slug", flat=True))
    changed: set[tuple[str, str, str]] = set()
    fields = ("score", "repeats", "uncertainty", "ia_pct", "ra_pct", "note")
    with transaction.atomic():
        for result in results:
            if result.env not in environments:
                report.skipped += 1
                continue
            values = {"score": result.score, "repeats": result.repeats, "uncertainty": result.uncertainty,
                      "ia_pct": result.ia_pct, "ra_pct": result.ra_pct,
                      "note": f"{NOTE} ({result.table}, {result.subset} set)"}
            rows = list(ReportedResult.objects.filter(environment_id=result.env, flow=result.flow,
                                                      subset=result.subset, model_name=result.model,
                                                      source=PAPER_URL).order_by("id"))
            if not rows:
                ReportedResult.objects.create(environment_id=result.env, flow=result.flow, subset=result.subset,
                                              model_name=result.model, source=PAPER_URL, **values)
                report.created += 1
            elif all(getattr(rows[0], name) == values[name] for name in fields) and len(rows) == 1:
                report.unchanged += 1
                continue
            else:
                ReportedResult.objects.filter(id__in=[row.id for row in rows[1:]]).delete()
                ReportedResult.objects.filter(id=rows[0].id).update(**values)
                report.updated += 1
            changed.add((result.env, result.flow, result.subset))
        if report.created:
            # A new row can make the official suite one every board of its environment offers.
            results_changed()
        elif changed:
            results_changed(*sorted(changed))
    return report
