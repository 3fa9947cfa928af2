"""CSV files that a spreadsheet opens without running anything in them.

Every CSV the platform serves (board exports) and every one its command-line client writes
(results, boards) goes through :func:`write_csv`. Names, organisations and error messages come from
submitters and their endpoints; a spreadsheet runs a cell starting with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return as a formula. Such a cell is written with a leading single quote, as
OWASP recommends. A cell that reads as a plain decimal number (``-12.5``, ``+4``, ``1e-3``) is left
as it is, so negative scores stay numeric.

Standard library only: the command-line client imports this module and must run without Django; the
site's board exports import it from the client's package.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: A plain decimal number, the only text starting with + or - that is kept as it is.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """``value`` as it is safe to write: text a spreadsheet would run gets a leading quote."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(out: SupportsWrite[str], columns: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """A header of ``columns``, then one line per row (missing cells empty, extra keys left out)."""
    names = list(columns)
    writer = csv.writer(out)
    writer.writerow([csv_cell(name) for name in names])
    for row in rows:
        writer.writerow([csv_cell(row.get(name, "")) for name in names])
