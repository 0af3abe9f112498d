"""The quick loop's measured list (tests/quick_loop.py) and its marking."""

from __future__ import annotations

import types

import conftest
import pytest
from quick_loop import MEASURED_SLOW


class _Item:
    def __init__(self, nodeid, module):
        self.nodeid = nodeid
        self.module = module
        self.marks = []

    def add_marker(self, mark):
        self.marks.append(mark.name)


def _module(*functions):
    return types.SimpleNamespace(**{f: (lambda: None) for f in functions})


def test_entries_mark_their_tests_and_nothing_else(monkeypatch):
    mod = _module("test_a", "test_b")
    items = [
        _Item("tests/x.py::test_a[1]", mod),
        _Item("tests/x.py::test_a[2]", mod),
        _Item("tests/x.py::test_b", mod),
    ]
    monkeypatch.setattr(conftest, "MEASURED_SLOW", {"tests/x.py::test_a[2]"})
    conftest._mark_measured_slow(items)
    assert [i.marks for i in items] == [[], ["slow"], []]
    # A bare function name marks every parameter set.
    monkeypatch.setattr(conftest, "MEASURED_SLOW", {"tests/x.py::test_a"})
    conftest._mark_measured_slow(items)
    assert [i.marks for i in items] == [["slow"], ["slow", "slow"], []]


@pytest.mark.parametrize(
    "entry",
    ["tests/x.py::test_gone", "tests/x.py::test_a[3]"],
    ids=["renamed function", "removed parameter set"],
)
def test_a_stale_entry_is_an_error(monkeypatch, entry):
    mod = _module("test_a")
    items = [_Item("tests/x.py::test_a[1]", mod)]
    monkeypatch.setattr(conftest, "MEASURED_SLOW", {entry})
    with pytest.raises(pytest.UsageError, match="do not exist"):
        conftest._mark_measured_slow(items)


def test_entries_of_modules_not_collected_are_left_alone(monkeypatch):
    # Running one file must not fail on the other files' entries: this
    # file exists but is not collected here.
    items = [_Item("tests/x.py::test_a", _module("test_a"))]
    monkeypatch.setattr(
        conftest, "MEASURED_SLOW", {"tests/test_contract.py::test_not_collected"}
    )
    conftest._mark_measured_slow(items)
    assert items[0].marks == []


def test_an_entry_whose_file_was_renamed_is_an_error(monkeypatch):
    # Not collected because it no longer exists: no run would collect it.
    items = [_Item("tests/x.py::test_a", _module("test_a"))]
    monkeypatch.setattr(conftest, "MEASURED_SLOW", {"tests/renamed_away.py::test_a"})
    with pytest.raises(pytest.UsageError, match="renamed_away"):
        conftest._mark_measured_slow(items)


def test_every_entry_names_an_existing_file():
    for entry in MEASURED_SLOW:
        assert (conftest._ROOT / entry.partition("::")[0]).is_file(), entry
