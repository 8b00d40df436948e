"""Numbers that the hand-written results pages cite, declared with the committed files they come from.

A results README (``benchmarks/results/<folder>/README.md``) is prose written by a person around
numbers that a script could recompute from the run files next to it.
``tests/result_claim_pages.py`` declares those numbers with what this module provides, so that
``tests/test_result_claims.py`` recomputes each from its source and fails when the text cites a
number the files do not give:

* :class:`Claim`: a quote from a page (matched with whitespace collapsed, so rewrapping is
  free) and a function that returns the numbers of the quote, in order, from the sources.
  The numbers of the quote are its decimal numbers (``216.1``, ``-0.1``, ``1.02e7``; integers
  such as seed numbers or iteration counts are not read unless ``integers=True``); each must
  equal its recomputed value to half a unit of its last digit.
* :class:`Table`: a markdown table of a page, found by the start of its header; every body
  row's label maps to a function of the column header that returns the numbers of the cell.
* :class:`Unchecked`: a quote whose numbers do not come from a run file (settings, versions,
  numbers of another page or of a log), with the reason.

Every decimal number of a page with declarations must lie in a declared quote or table: a
number added to such a page without a declaration fails the test too.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from meta_policy_search.experiment.comparison import confidence_interval
from meta_policy_search.experiment.curves import read_progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")

NUMBER = re.compile(
    r"(?:(?<![\w.])-|(?<![\w.]))\d+(?:,\d{3})*(?:\.\d+)?(?:e[+-]?\d+)?(?!(?!x\b)\w)")
"""A number as the pages write them, not part of a word or version (``41c0e54``, ``0.5.7``) but
possibly a factor (``1.2x``); a hyphen is a minus sign only after a space or bracket
(``44.1-65.9`` is a range of two positive numbers)."""


# ---------------------------------------------------------------------------- sources
class Runs:
    """The seeds of one cell: every ``progress.csv`` a glob under ``benchmarks/results`` matches.

    Seeds are read as ``reproduce.py`` reads them (a resumed iteration's last row wins) and kept
    in the order of their seed number (``seed_2`` before ``seed_10``).
    """

    def __init__(self, pattern: str, column: str = "Step_1-AverageReturn") -> None:
        self.pattern = pattern
        self.column = column
        self._seeds: list[dict[str, np.ndarray]] | None = None

    @property
    def seeds(self) -> list[dict[str, np.ndarray]]:
        """Each seed's columns; raises if the glob matches nothing (a moved folder)."""
        if self._seeds is None:
            paths = glob.glob(os.path.join(RESULTS, self.pattern, "progress.csv"))
            if not paths:
                raise FileNotFoundError(f"no progress.csv matches benchmarks/results/{self.pattern}")
            number = re.compile(r"seed_(\d+)")
            paths.sort(key=lambda p: [int(n) for n in number.findall(p)] or [0])
            self._seeds = [read_progress(path) for path in paths]
        return self._seeds

    def column_of(self, seed: dict[str, np.ndarray], column: str | None) -> np.ndarray:
        """A seed's column (the cell's metric by default)."""
        return seed[column or self.column]

    def at(self, timesteps: float, column: str | None = None) -> list[float]:
        """Each seed's value at ``timesteps``, linear between the two iterations around it (as
        ``reproduce.py`` reads a curve at the paper's timesteps); seeds short of it are left out."""
        return [float(np.interp(timesteps, seed["n_timesteps"], self.column_of(seed, column)))
                for seed in self.seeds if seed["n_timesteps"].max() >= timesteps]

    def itr(self, iteration: int, column: str | None = None) -> list[float]:
        """Each seed's value at ``Itr == iteration``."""
        return [float(self.column_of(seed, column)[seed["Itr"] == iteration][0])
                for seed in self.seeds]

    def nearest(self, timesteps: float, column: str | None = None) -> list[float]:
        """Each seed's value at the logged iteration whose ``n_timesteps`` is nearest."""
        return [float(self.column_of(seed, column)[np.argmin(abs(seed["n_timesteps"] - timesteps))])
                for seed in self.seeds]

    def over(self, column: str | None = None, first: int = 0,
             last: int | None = None) -> list[np.ndarray]:
        """Each seed's values at iterations ``first..last`` (inclusive; default: to the end)."""
        out = []
        for seed in self.seeds:
            itr = seed["Itr"]
            keep = (itr >= first) & (itr <= (itr.max() if last is None else last))
            out.append(self.column_of(seed, column)[keep])
        return out


def mean(values: Sequence[float]) -> float:
    """The mean."""
    return float(np.mean(values))


def std(values: Sequence[float]) -> float:
    """The sample std (ddof 1), as the results pages give a spread over seeds."""
    return float(np.std(values, ddof=1))


def interval(values: Sequence[float]) -> list[float]:
    """The 95% t interval of the mean, as ``reproduction.md`` computes it: ``[low, high]``."""
    result = confidence_interval(values)
    assert result is not None, "an interval needs two values"
    middle, _, half = result
    return [middle - half, middle + half]


def summary(values: Sequence[float]) -> list[float]:
    """``[mean, std, low, high]``: how the pages write ``m +- s, CI [low, high]``."""
    return [mean(values), std(values), *interval(values)]


def span(arrays: Sequence[np.ndarray]) -> list[float]:
    """``[min, max]`` over every value of every seed."""
    joined = np.concatenate(list(arrays))
    return [float(joined.min()), float(joined.max())]


# ---------------------------------------------------------------------------- declarations
@dataclass(frozen=True)
class Claim:
    """A quote of ``page`` whose numbers ``values()`` recomputes, in the order they appear."""

    page: str
    quote: str
    values: Callable[[], Sequence[float]]
    integers: bool = False


@dataclass(frozen=True)
class Table:
    """A markdown table of ``page`` (its header row contains ``header``): row -> cell numbers.

    A row is named by its first ``key_columns`` cells joined by ``" | "`` (e.g. ``"DiCE-VPG |
    HalfCheetahRandDirecEnv | 1e+07"``); ``rows[name](column_header)`` returns the numbers of
    that row's cell under that column, for the columns after the key; ``columns(column_header)``,
    if given, the decimal numbers of the header cell itself.
    """

    page: str
    header: str
    rows: dict[str, Callable[[str], Sequence[float]]]
    columns: Callable[[str], Sequence[float]] | None = None
    integers: bool = False
    key_columns: int = 1


@dataclass(frozen=True)
class Unchecked:
    """A quote whose numbers come from no run file of the page's folder, and why."""

    page: str
    quote: str
    reason: str


@dataclass
class Page:
    """A page split into its prose (whitespace collapsed: a rewrapped sentence is the same
    quote) and its markdown tables (each a list of rows of stripped cells, header first)."""

    path: str
    prose: str
    tables: list[list[list[str]]]


def collapse(text: str) -> str:
    """Whitespace runs as one space."""
    return re.sub(r"\s+", " ", text).strip()


def read_page(page: str) -> Page:
    """``page`` (relative to the repository root) as prose and tables."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        lines = f.read().splitlines()
    prose: list[str] = []
    tables: list[list[list[str]]] = []
    previous_was_row = False
    for line in lines:
        is_row = line.startswith("|")
        if is_row and not set(line) <= set("|-: "):  # the |---| line is no row
            if not previous_was_row:
                tables.append([])
            tables[-1].append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif not is_row:
            prose.append(line)
        previous_was_row = is_row
    return Page(page, collapse("\n".join(prose)), tables)


def numbers(text: str, integers: bool = False) -> list[str]:
    """The numbers of ``text`` as written: decimals (``216.1``, ``3.2e5``), and integers if asked."""
    found = [m.group(0) for m in NUMBER.finditer(text)]
    return [n for n in found if integers or "." in n]


def agrees(written: str, value: float) -> bool:
    """Whether ``value`` rounds to ``written``: within half a unit of its last digit."""
    text = written.replace(",", "")
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return abs(float(text) - value) <= unit / 2 + 1e-9 * max(1.0, abs(value))


def check_numbers(where: str, written: Sequence[str], values: Sequence[float]) -> list[str]:
    """Problems: a count mismatch, or each written number that its value does not round to."""
    values = [float(v) for v in values]
    if len(written) != len(values):
        return [f"{where}: the text has {len(written)} numbers {list(written)}, the sources give "
                f"{len(values)}: {[round(v, 4) for v in values]}"]
    return [f"{where}: the text says {text}, the committed files give {value:.6g}"
            for text, value in zip(written, values) if not agrees(text, value)]


def check_claim(page: Page, claim: Claim) -> list[str]:
    """Problems of one claim: its quote is not on the page, or a number disagrees."""
    quote = collapse(claim.quote)
    if quote not in page.prose:
        return [f"{claim.page}: quote not found (edited? update its declaration in "
                f"tests/result_claim_pages.py): {quote!r}"]
    return check_numbers(f"{claim.page}: {quote!r}", numbers(quote, claim.integers),
                         claim.values())


def find_table(page: Page, header: str) -> list[list[str]] | None:
    """The table of ``page`` whose header row (cells joined by ``" | "``) contains ``header``."""
    for table in page.tables:
        if header in " | ".join(table[0]):
            return table
    return None


def check_table(page: Page, declared: Table) -> list[str]:
    """Problems of one table: missing, a row not declared or missing, a cell that disagrees."""
    table = find_table(page, declared.header)
    if table is None:
        return [f"{declared.page}: no table whose header starts with {declared.header!r}"]
    keys = declared.key_columns
    head, body = table[0], table[1:]
    problems = []
    labels = [" | ".join(row[:keys]) for row in body]
    problems += [f"{declared.page}: table {declared.header!r} has no row {label!r}"
                 for label in declared.rows if label not in labels]
    if declared.columns is not None:
        for column in head[keys:]:
            problems += check_numbers(f"{declared.page}: header {column!r}", numbers(column),
                                      declared.columns(column))
    for label, row in zip(labels, body):
        if label not in declared.rows:
            problems.append(f"{declared.page}: table {declared.header!r}, row {label!r} is not "
                            "declared in tests/result_claim_pages.py")
            continue
        for column, cell in zip(head[keys:], row[keys:]):
            problems += check_numbers(f"{declared.page}: row {label!r}, column {column!r}",
                                      numbers(cell, declared.integers),
                                      declared.rows[label](column))
    return problems


def uncovered(page: Page, quotes: Sequence[str], headers: Sequence[str]) -> list[str]:
    """The decimal numbers of ``page`` in no declared quote and no declared table."""
    covered = np.zeros(len(page.prose), dtype=bool)
    for quote in quotes:
        start = page.prose.find(collapse(quote))
        while start >= 0:
            covered[start:start + len(collapse(quote))] = True
            start = page.prose.find(collapse(quote), start + 1)
    problems = []
    for match in NUMBER.finditer(page.prose):
        if "." in match.group(0) and not covered[match.start():match.end()].all():
            context = page.prose[max(0, match.start() - 50):match.end() + 20]
            problems.append(f"{page.path}: {match.group(0)} is in no declared claim: ...{context}...")
    for table in page.tables:
        if not any(header in " | ".join(table[0]) for header in headers):
            cells = " ".join(" ".join(row) for row in table)
            if numbers(cells):
                problems.append(f"{page.path}: table {table[0][0]!r} is not declared")
    return problems


def itr_of(column_header: str) -> int:
    """The iteration a column header such as ``"12 (4.2e6)"`` starts with."""
    return int(column_header.split()[0])
