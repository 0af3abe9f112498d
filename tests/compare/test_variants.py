"""A variant label and the builder options it stands for, both ways."""

from __future__ import annotations

import math

import pytest

from eomcompare.compare.variants import variant_label, variant_options


@pytest.mark.parametrize(
    "options",
    [
        (),
        (("n", 3),),
        (("n", 3), ("coordinates", "minimal")),
        (("size", (2, 3)), ("n", 4)),
        (("scale", 0.5), ("explicit", True)),
    ],
)
def test_label_reads_back_as_the_options(options):
    assert variant_options(variant_label(options)) == dict(options)


def test_no_label_is_no_options():
    # The empty variant read back from a CSV file is NaN.
    assert variant_options(math.nan) == {}
    assert variant_options("") == {}


def test_a_part_that_is_not_key_value_is_refused():
    with pytest.raises(ValueError, match="KEY=VALUE"):
        variant_options("minimal")
