"""Formulations named with options, as the command line writes them
(``NAME:KEY=VALUE``): read, checked and applied."""

from __future__ import annotations

import pytest

from eomcompare.formulations import get_formulation, split_formulation_spec


def test_options_in_the_name_are_read_as_literals_where_they_are():
    assert split_formulation_spec("kane") == ("kane", {})
    assert split_formulation_spec("lagrange:baumgarte=(5, 2.5)") == (
        "lagrange",
        {"baumgarte": (5, 2.5)},
    )
    assert split_formulation_spec(
        "modified_lagrange:dependent=implicit:dependent_rates=keep"
    ) == ("modified_lagrange", {"dependent": "implicit", "dependent_rates": "keep"})


def test_options_in_the_name_are_applied():
    implicit = get_formulation("modified_lagrange:dependent=implicit")
    assert implicit.options["dependent"] == "implicit"
    assert get_formulation("modified_lagrange").options["dependent"] == "auto"
    stab = get_formulation("lagrange:baumgarte=(5.0,5.0)")
    assert stab.options["baumgarte"] == (5.0, 5.0)
    # Keywords add to them.
    both = get_formulation("lagrange:baumgarte=(5.0,5.0)", count_ops=False)
    assert both.options["baumgarte"] == (5.0, 5.0)
    assert both.options["count_ops"] is False


def test_kane_is_one_algorithm_without_options():
    # The composite-body sums and the articulated-body recursion are
    # formulations of their own, not options of kane.
    assert get_formulation("kane").options == {"count_ops": True}
    for old in ("kane:forward=articulated_body", "kane:assembly=composite"):
        with pytest.raises(ValueError, match="its options: count_ops"):
            get_formulation(old)


@pytest.mark.parametrize(
    "spec, keywords, needle",
    [
        ("nope:x=1", {}, "`formulation` must be one of"),
        (
            "lagrange:bmgt=1",
            {},
            "lagrange has no option 'bmgt'; its options: baumgarte, count_ops",
        ),
        ("kane:forward", {}, "options are written NAME:KEY=VALUE"),
        ("kane:=1", {}, "options are written NAME:KEY=VALUE"),
        ("modified_lagrange:dependent=bogus", {}, "`dependent` must be one of"),
        (
            "modified_lagrange:dependent=implicit",
            {"dependent": "explicit"},
            "given both in the name and as keywords",
        ),
    ],
)
def test_bad_options_are_named(spec, keywords, needle):
    with pytest.raises(ValueError, match=None) as info:
        get_formulation(spec, **keywords)
    assert needle in str(info.value)


def test_default_comparison_leaves_out_the_tree_algorithms():
    # The default run keeps to the six formulations it compared before the
    # split (its time budget); the tree algorithms run when named, and the
    # help says so.
    from eomcompare.compare.cases import expand_cases
    from eomcompare.compare.cli import _formulations_help

    cases = expand_cases(systems=["double_pendulum"])
    assert sorted({c.formulation for c in cases}) == [
        "gibbs_appell",
        "kane",
        "lagrange",
        "modified_lagrange",
        "sympy_kane",
        "sympy_lagrange",
    ]
    named = expand_cases(systems=["double_pendulum"], formulations=["kane_composite"])
    assert [c.formulation for c in named] == ["kane_composite"]
    text = " ".join(_formulations_help().split())
    assert "also registered: kane_articulated, kane_composite" in text
