"""Formulations named with options, as the command line writes them
(``NAME:KEY=VALUE``): read, checked and applied."""

from __future__ import annotations

import pytest

from formulations import get_formulation, split_formulation_spec


def test_options_in_the_name_are_read_as_literals_where_they_are():
    assert split_formulation_spec("kane") == ("kane", {})
    assert split_formulation_spec("lagrange:baumgarte=(5, 2.5)") == (
        "lagrange",
        {"baumgarte": (5, 2.5)},
    )
    assert split_formulation_spec(
        "modified_lagrange:variant=modified:dependent=implicit"
    ) == ("modified_lagrange", {"variant": "modified", "dependent": "implicit"})


def test_options_in_the_name_are_applied():
    kane = get_formulation("kane:forward=articulated_body")
    assert kane.options["forward"] == "articulated_body"
    assert get_formulation("kane").options["forward"] == "mass_matrix"
    stab = get_formulation("lagrange:baumgarte=(5.0,5.0)")
    assert stab.options["baumgarte"] == (5.0, 5.0)
    # Keywords add to them.
    both = get_formulation("kane:forward=articulated_body", count_ops=False)
    assert both.options["forward"] == "articulated_body"
    assert both.options["count_ops"] is False


@pytest.mark.parametrize(
    "spec, keywords, needle",
    [
        ("nope:x=1", {}, "`formulation` must be one of"),
        (
            "kane:frwd=1",
            {},
            "kane has no option 'frwd'; its options: assembly, forward",
        ),
        ("kane:forward", {}, "options are written NAME:KEY=VALUE"),
        ("kane:=1", {}, "options are written NAME:KEY=VALUE"),
        ("kane:forward=bogus", {}, "`forward` must be one of"),
        (
            "kane:forward=articulated_body",
            {"forward": "mass_matrix"},
            "given both in the name and as keywords",
        ),
    ],
)
def test_bad_options_are_named(spec, keywords, needle):
    with pytest.raises(ValueError, match=None) as info:
        get_formulation(spec, **keywords)
    assert needle in str(info.value)
