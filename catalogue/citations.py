"""How to cite what the boards show: the MageBench paper (whose tables the official boards show as
reported rows) and the leaderboard itself. The one place these facts live; pages read them from here.

The paper's entry is the one its authors publish in the benchmark's repository (microsoft/MageBench,
README, "Citation"); its tables are named as the paper numbers them.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

PAPER_ARXIV_ID = "2412.04531"
PAPER_URL = f"https://arxiv.org/abs/{PAPER_ARXIV_ID}"
#: The paper's full text (its tables), as arXiv serves it.
PAPER_PDF_URL = f"https://arxiv.org/pdf/{PAPER_ARXIV_ID}"
PAPER_TITLE = "MageBench: Bridging Large Multimodal Models to Agents"
PAPER_AUTHORS = ("Miaosen Zhang", "Qi Dai", "Yifan Yang", "Jianmin Bao", "Dongdong Chen", "Kai Qiu", "Chong Luo",
                 "Xin Geng", "Baining Guo")
PAPER_YEAR = 2024
PAPER_KEY = "zhang2024magebench"


@dataclass(frozen=True)
class Citation:
    """One work to cite: what the page calls it, where it is, and its BibTeX entry."""

    key: str
    label: str
    url: str
    bibtex: str


def _bibtex(kind: str, key: str, fields: list[tuple[str, str]]) -> str:
    width = max(len(name) for name, _ in fields)
    lines = [f"  {name.ljust(width)} = {{{value}}}," for name, value in fields]
    return f"@{kind}{{{key},\n" + "\n".join(lines) + "\n}"


PAPER = Citation(
    key=PAPER_KEY, label=f"{PAPER_TITLE} (arXiv {PAPER_ARXIV_ID})", url=PAPER_URL,
    bibtex=_bibtex("misc", PAPER_KEY, [
        ("title", PAPER_TITLE), ("author", " and ".join(PAPER_AUTHORS)), ("year", str(PAPER_YEAR)),
        ("eprint", PAPER_ARXIV_ID), ("archivePrefix", "arXiv"), ("primaryClass", "cs.CV"), ("url", PAPER_URL)]))


def leaderboard_citation(*, url: str, board: str, accessed: date) -> Citation:
    """The leaderboard as a web resource: its address (``url``, the board cited), which board
    (``board``, e.g. "Sokoban, Global flow, mini set, suite official") and when it was read, since
    a board changes as entries arrive."""
    key = f"magebench_leaderboard_{accessed:%Y}"
    return Citation(key=key, label="The MageBench Leaderboard", url=url, bibtex=_bibtex("misc", key, [
        ("title", "{MageBench} Leaderboard"), ("howpublished", f"\\url{{{url}}}"), ("year", f"{accessed:%Y}"),
        ("note", f"{board}; accessed {accessed.isoformat()}. Benchmark: \\cite{{{PAPER_KEY}}}")]))
