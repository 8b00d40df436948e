"""The numbers the results pages cite are the numbers their committed files give.

Every declaration of ``tests/result_claim_pages.py`` and ``tests/result_claim_docs.py`` is
checked against its page and recomputed from its sources (``tests/result_claims.py`` says how);
the pages of :data:`COVERED` must have no decimal number outside a declaration.
"""

from __future__ import annotations

import pytest
from result_claim_docs import DOCS_CLAIMS
from result_claim_pages import PAGE_CLAIMS
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

DECLARATIONS = [*PAGE_CLAIMS, *DOCS_CLAIMS]
"""Everything the tests check."""

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


def test_a_planted_wrong_number_or_an_undeclared_one_fails(tmp_path):
    """The checks can fail: a number one digit off, a table cell off, a new undeclared number."""
    from result_claim_pages import HOPPER_ORIGINAL, T
    from result_claims import itr_of

    def page(text):
        path = tmp_path / "README.md"
        path.write_text(text)
        return read_page(str(path))

    claim = Claim(str(tmp_path / "README.md"), "ends at 216.1 and 211.7",
                  lambda: HOPPER_ORIGINAL.at(T))
    table = Table(str(tmp_path / "README.md"), "iteration",
                  rows={"original": lambda column: [HOPPER_ORIGINAL.itr(itr_of(column))[0]]})
    right = "It ends at 216.1 and 211.7 at 1e7.\n\n| iteration | 0 |\n|---|---|\n| original | 51.6 |\n"
    assert check_claim(page(right), claim) == [] and check_table(page(right), table) == []
    assert uncovered(page(right), [claim.quote], [table.header]) == []
    wrong = right.replace("216.1", "216.4").replace("51.6", "51.9")
    assert check_claim(page(wrong), Claim(claim.page, "ends at 216.4 and 211.7", claim.values)) \
        == [f"{claim.page}: 'ends at 216.4 and 211.7': the text says 216.4, the committed files "
            "give 216.072"]
    assert "the text says 51.9, the committed files give 51.6406" in check_table(page(wrong), table)[0]
    assert "quote not found" in check_claim(page(wrong), claim)[0]
    added = right.replace("at 1e7.", "at 1e7, 12.5 above the paper.")
    (problem,) = uncovered(page(added), [claim.quote], [table.header])
    assert "12.5 is in no declared claim" in problem
