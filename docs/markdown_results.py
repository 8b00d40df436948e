"""Committed result files (``benchmarks/results/**/*.md``) as reStructuredText, at build time.

The results page includes the benchmark and reproduction tables from the files the scripts
wrote, converted here, so the page shows exactly what is committed and never a copy that can
drift. Only what those files use is converted: ``#`` headings (as rubrics), pipe tables (as
list-tables), ``-`` and ``*`` lists, paragraphs, ```code``` spans and ``[text](url)`` links.
"""

from __future__ import annotations

import os
import re

_CODE = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")
_BULLETS = ("- ", "* ")  # markdown list items (meta_testing.py writes "* ")


def inline(text: str) -> str:
    """Markdown inline markup as reST: code spans, links; reST's own specials escaped."""
    out = []
    position = 0
    for match in _CODE.finditer(text):
        out.append(_plain(text[position:match.start()]))
        # glued to a word, a reST literal needs an escaped space (``x``\ s)
        before = "\\ " if text[:match.start()][-1:].isalnum() else ""
        after = "\\ " if text[match.end():match.end() + 1].isalnum() else ""
        out.append(f"{before}``{match.group(2).strip()}``{after}")
        position = match.end()
    out.append(_plain(text[position:]))
    return "".join(out)


def _plain(part: str) -> str:
    part = part.replace("\\", "\\\\").replace("*", "\\*").replace("|", "\\|")
    part = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", part)  # a trailing _ is a reST reference
    # "--flag" stays two hyphens: Sphinx's smart quotes would make an en dash of it.
    part = part.replace("--", "-\\-")
    return _LINK.sub(lambda m: f"`{m.group(1)} <{m.group(2)}>`__", part)


def _cell(cell: str) -> str:
    """A table cell: a lone ``-`` (no value) must not start a bullet list."""
    text = inline(cell)
    return "\\" + text if text.startswith(("- ", "+ ", "* ")) or text in ("-", "+") else text


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def markdown_to_rst(text: str) -> str:
    """Convert one result file (see the module docstring).

    Args:
        text: the markdown.

    Returns:
        reStructuredText for ``.. include::`` inside a section.
    """
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            out += [f".. rubric:: {inline(line.lstrip('#').strip())}", ""]
        elif line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1]) <= set("|-: "):
            rows = [_cells(line)]
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out += [".. list-table::", "   :header-rows: 1", "   :class: results-table", ""]
            for row in rows:
                out.append(f"   * - {_cell(row[0])}" if row[0] else "   * -")
                out += [f"     - {_cell(cell)}" if cell else "     -" for cell in row[1:]]
            out.append("")
            continue
        elif line.startswith(_BULLETS):
            out.append(f"* {inline(line[2:])}")
            if i + 1 < len(lines) and not lines[i + 1].startswith(_BULLETS):
                out.append("")
        elif line.strip():
            out += [inline(line), ""] if not (i + 1 < len(lines) and lines[i + 1].strip()
                                               and not lines[i + 1].startswith(("|", "#", *_BULLETS))) \
                else [inline(line)]
        i += 1
    return "\n".join(out).rstrip() + "\n"


def section(text: str, heading: str) -> str:
    """The body of the ``## `` section of a result file whose heading starts with ``heading``.

    Args:
        text: the markdown.
        heading: the start of the heading, without the ``## ``.

    Returns:
        The lines after that heading up to the next ``#`` heading.

    Raises:
        ValueError: naming ``heading`` if the file has no such section (a renamed heading must
            fail the docs build, not drop the table from the page).
    """
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("## " + heading)]
    if not starts:
        raise ValueError(f"no section '## {heading}...' in the result file")
    body = []
    for line in lines[starts[0] + 1:]:
        if line.startswith("#"):
            break
        body.append(line)
    return "\n".join(body).strip() + "\n"


def long_horizon_rst(results_dir: str, folder: str) -> str:
    """The results page's section on the long runs: ``benchmarks/results/<folder>/``.

    A grid of ``reproduce.py --timesteps 1e8 --out benchmarks/results/<folder>`` has its own
    figure and tables (``reproduction.png``, ``reproduction_full.png``, ``reproduction.md``).
    Until that folder has a ``reproduction.md``, the section says that no such runs are
    committed, so the page builds either way.

    Args:
        results_dir: the ``benchmarks/results`` directory.
        folder: the grid's folder inside it.

    Returns:
        reStructuredText with a subsection title, for ``.. include::`` in ``docs/results.rst``.
    """
    title = "Long runs: HalfCheetah to the paper's horizon"
    lines = [title, "~" * len(title)]
    table = os.path.join(results_dir, folder, "reproduction.md")
    if not os.path.isfile(table):
        return "\n".join([*lines, f"No long runs are committed yet: ``benchmarks/results/{folder}/`` "
                           "will hold the grid of ``reproduce.py --timesteps 1e8 --out "
                           f"benchmarks/results/{folder}``.", ""])
    with open(table, encoding="utf-8") as f:
        text = f.read()
    lines += [f"The grid in ``benchmarks/results/{folder}/`` (its command is at the top of its "
              "``reproduction.md``), drawn to where its runs reach and, while they are short of "
              "the paper's last point, over every point of the paper.", ""]
    figures = [("reproduction.png", "the timesteps the runs reach")]
    if "Reference points not reached yet" in text:  # else the two views are the same
        figures.append(("reproduction_full.png", "every point of the paper's figure 2"))
    for name, caption in figures:
        if os.path.isfile(os.path.join(results_dir, folder, name)):
            lines += [f".. figure:: ../benchmarks/results/{folder}/{name}",
                      f"   :alt: Post-update return of the long runs against timesteps, {caption}.",
                      "   :width: 70%", "",
                      f"   ``benchmarks/results/{folder}/{name}``: {caption}.", ""]
    heading = "The paper's later points"
    if f"## {heading}" in text:  # the table at 2e7, 5e7 and 1e8; the rest is in the file
        text = section(text, heading)
        lines += [f"Ours at the paper's later points (the rest: ``benchmarks/results/{folder}/"
                  "reproduction.md``):", ""]
    return "\n".join(lines) + "\n" + markdown_to_rst(text)

