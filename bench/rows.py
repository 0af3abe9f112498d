"""Helpers the robot parts of the benchmark share (:mod:`eomcompare.bench.robots`,
:mod:`eomcompare.bench.khalil`): a case run in a child process under the time cap,
and a row of the target table."""

from __future__ import annotations

from eomcompare.numeric.child import ChildTimeout, call_in_child

__all__ = ["capped", "target_row", "derive_row", "merge_sections"]


def capped(fn, *args, cap):
    """``fn(*args)`` in a child process killed after ``cap`` seconds (the
    suite's one time limit, :mod:`eomcompare.numeric.child`); None past the cap."""
    try:
        return call_in_child(fn, *args, timeout=cap)
    except ChildTimeout:
        return None


def derive_row(own, peer, **fields) -> dict:
    """A row of derivation seconds against ``sympy_kane``'s: ``fields``,
    then ``derive_s`` and ``sympy_kane_s`` (None where capped) and their
    ``ratio`` where both finished.

    >>> derive_row(2.0, 8.0, system="ur5")
    {'system': 'ur5', 'derive_s': 2.0, 'sympy_kane_s': 8.0, 'ratio': 0.25}
    >>> derive_row(None, 8.0)["derive_s"] is None
    True
    """
    row = dict(fields)
    row["derive_s"] = None if own is None else round(own, 2)
    row["sympy_kane_s"] = None if peer is None else round(peer, 2)
    if own is not None and peer is not None:
        row["ratio"] = round(own / peer, 3)
    return row


def target_row(name, value, limit, note):
    """A row of the benchmark's target table (as ``bench.suite`` writes
    them); ``value`` None: not measured."""
    if value is None:
        status = "not measured"
    else:
        status = "met" if value <= limit else "MISSED"
    return {
        "target": name,
        "value": float("nan") if value is None else value,
        "limit": limit,
        "status": status,
        "note": note,
    }


def _sections(text):
    """(preamble lines, [(title line, lines)]) of a markdown text split at
    its ``## `` headings."""
    pre, sections = [], []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line, [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            pre.append(line)
    return pre, sections


def merge_sections(old: str, new: str) -> str:
    """``new`` (a report of some parts) merged into ``old`` (the report of
    an earlier run): each ``## `` section of ``new`` replaces the one of
    ``old`` with the same heading, where it stood; the sections of ``old``
    that ``new`` lacks are kept; new ones are appended; the preamble is
    ``new``'s."""
    pre, fresh = _sections(new)
    fresh_by_title = dict(fresh)
    merged, done = [], set()
    for title, lines in _sections(old)[1]:
        if title in fresh_by_title:
            lines, _ = fresh_by_title[title], done.add(title)
        merged.append(lines)
    merged += [lines for title, lines in fresh if title not in done]
    out = list(pre)
    for lines in merged:
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        out += [*lines, ""]
    return "\n".join(out).rstrip("\n") + "\n"
