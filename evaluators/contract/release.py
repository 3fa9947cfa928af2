"""An environment's place in the benchmark as published: whether it loads by default, what the
official release holds and how the paper reports it."""
from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from evaluators.declarations import PaperRows


class ReleaseDeclarations:
    #: Left out of the default MAGEBENCH_ENVIRONMENTS (an example): the setting names it to load it.
    opt_in: ClassVar[bool] = False
    #: How many scenarios the official release has per subset ({"mini": 20, "full": 182}): what the
    #: published (reported) numbers of its boards were measured on, before any official import here.
    official_scenarios: ClassVar[Mapping[str, int]] = {}
    #: How the MageBench paper's tables report this environment (``import_paper_results``).
    paper_rows: ClassVar[PaperRows] = PaperRows()
