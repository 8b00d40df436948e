"""The numbers the results pages cite are the numbers their committed files give.

Every declaration of ``tests/result_claim_pages.py`` is checked against its page and recomputed
from its sources (``tests/result_claims.py`` says how); the pages of :data:`COVERED` must have
no decimal number outside a declaration.
"""

from __future__ import annotations

import pytest
from result_claim_pages import DECLARATIONS
from result_claims import (
    Claim,
    Table,
    Unchecked,
    check_claim,
    check_table,
    collapse,
    read_page,
    uncovered,
)

COVERED = sorted({declaration.page for declaration in DECLARATIONS})
"""Every page with a declaration is covered whole."""


@pytest.mark.parametrize("page", COVERED)
def test_every_number_of_a_results_page_is_recomputed_from_its_files(page):
    text = read_page(page)
    problems = []
    for declaration in (d for d in DECLARATIONS if d.page == page):
        if isinstance(declaration, Claim):
            problems += check_claim(text, declaration)
        elif isinstance(declaration, Table):
            problems += check_table(text, declaration)
        elif collapse(declaration.quote) not in text.prose:
            problems.append(f"{page}: unchecked quote not found: {declaration.quote!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", COVERED)
def test_no_number_of_a_results_page_goes_undeclared(page):
    declared = [d for d in DECLARATIONS if d.page == page]
    problems = uncovered(read_page(page),
                         [d.quote for d in declared if isinstance(d, (Claim, Unchecked))],
                         [d.header for d in declared if isinstance(d, Table)])
    assert not problems, "\n".join(problems)
