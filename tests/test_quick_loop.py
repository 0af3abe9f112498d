"""The quick loop's measured list (tests/quick_loop.py) and its marking."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import types

import conftest
import pytest
import quick_loop
from quick_loop import MEASURED_SLOW


class _Item:
    def __init__(self, nodeid, module):
        self.nodeid = nodeid
        self.module = module
        self.marks = []

    def add_marker(self, mark):
        self.marks.append(mark.name)

    def get_closest_marker(self, name):
        return None


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


def test_a_table_entry_marks_its_test_and_a_stale_one_is_an_error(monkeypatch):
    mod = _module("test_a", "test_b")
    items = [_Item("tests/x.py::test_a[1]", mod), _Item("tests/x.py::test_b", mod)]
    monkeypatch.setattr(conftest, "MEASURED_SLOW", set())
    monkeypatch.setattr(conftest, "OVER_BUDGET", frozenset({"tests/x.py::test_b"}))
    conftest._mark_measured_slow(items)
    assert [i.marks for i in items] == [[], ["slow"]]
    monkeypatch.setattr(conftest, "OVER_BUDGET", frozenset({"tests/x.py::test_c"}))
    with pytest.raises(pytest.UsageError, match="test_c"):
        conftest._mark_measured_slow(items)


def _write(directory, name, rows):
    directory.mkdir(exist_ok=True)
    lines = [json.dumps({"test": t, "cpu_s": s}) for t, s in rows]
    (directory / name).write_text("\n".join(lines) + "\n")


def test_record_enters_tests_over_the_budget_and_removes_those_under_it(tmp_path):
    table = tmp_path / "table.json"
    over = quick_loop.CPU_BUDGET_S + 0.5
    under = quick_loop.CPU_BUDGET_S / 2
    table.write_text(json.dumps({"tests": {"t::a": over, "t::b": over}}))
    run = tmp_path / "run"
    # t::a ran faster now; t::c is new and slow; t::d is quick; t::e ran
    # twice, once over the budget (its larger measurement counts).
    _write(run, "cpu-gw0.jsonl", [("t::a", under), ("t::c", 2 * over), ("t::e", under)])
    _write(run, "cpu-gw1.jsonl", [("t::d", under), ("t::e", over)])
    entries = quick_loop.record([run], table)
    assert entries == {"t::b": over, "t::c": 2 * over, "t::e": over}
    assert quick_loop.over_budget(table) == entries  # and written so


def test_record_refuses_a_directory_without_measurements(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        quick_loop.main(["record", str(tmp_path)])
    assert exit_.value.code == 2
    assert "no cpu-*.jsonl" in capsys.readouterr().err


def _spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@pytest.mark.parametrize("in_child", [False, True], ids=["own", "child's"])
def test_the_hook_records_a_tests_processor_seconds(tmp_path, monkeypatch, in_child):
    """A test's own processor time and that of a process it waited for
    are recorded; the sleep beside it is not."""
    monkeypatch.setenv("EOMCOMPARE_TEST_CPU", str(tmp_path))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    item = _Item("tests/x.py::test_a", _module("test_a"))
    hook = conftest.pytest_runtest_protocol(item, None)
    next(hook)
    if in_child:
        busy = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
        subprocess.run([sys.executable, "-c", busy], check=True)
    else:
        _spin(0.4)
    time.sleep(0.4)
    with pytest.raises(StopIteration):
        hook.send(None)
    seconds = quick_loop.measured(tmp_path)
    assert list(seconds) == ["tests/x.py::test_a"]
    assert 0.35 <= seconds["tests/x.py::test_a"] < 0.75
    assert (tmp_path / "cpu-gw7.jsonl").is_file()
