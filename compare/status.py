"""One vocabulary for what became of a case and what class a system is in.

Every section of a report counts cases the same way (:data:`KINDS`:
ok, failed, a peer's limitation, refused; :func:`case_kind`) and classes
systems by one stated rule (:data:`CLASS_RULE`, :func:`system_classes`).
"""

from __future__ import annotations

import pandas as pd

__all__ = [
    "CLASSES",
    "CLASS_RULE",
    "KINDS",
    "case_kind",
    "case_kinds",
    "kind_counts",
    "refusals",
    "system_classes",
]

#: Classes of system, in the order they are reported.
CLASSES = ("unconstrained", "holonomic constraints", "nonholonomic", "rheonomic")
#: The rule that gives every system its classes, as the report states it.
CLASS_RULE = (
    "Systems are classed by their declaration, not by the mechanism's "
    "topology: 'holonomic constraints' when the declaration has holonomic "
    "constraints (redundant coordinates of a closed loop, or Kolev's "
    "centroid coordinates), 'nonholonomic' when it has velocity "
    "constraints, 'unconstrained' when it has neither (so a four-bar "
    "declared in one minimal coordinate is unconstrained), and "
    "'rheonomic' besides when time appears explicitly."
)
#: Class names of runs written before :data:`CLASS_RULE` was stated.
OLD_CLASSES = {"open chain": "unconstrained", "closed loop": "holonomic constraints"}
#: What became of a case, in the order every section counts them.
KINDS = ("ok", "failed", "peer limitation", "refused")


def system_classes(ms) -> list[str]:
    """The classes of a declaration by :data:`CLASS_RULE`: holonomic
    constraints, nonholonomic, unconstrained (neither), and rheonomic
    (explicit time) besides."""
    out = []
    if ms.holonomic_constraints:
        out.append("holonomic constraints")
    if ms.nonholonomic_constraints:
        out.append("nonholonomic")
    if not out:
        out.append("unconstrained")
    if ms.is_rheonomic:
        out.append("rheonomic")
    return out


def _family_of(name: str) -> str | None:
    """The family a formulation belongs to for refusals: the methods that
    differentiate a kinetic energy (``needs_velocities_from_positions``)
    are the Lagrange family."""
    from eomcompare.formulations import FORMULATIONS

    cls = FORMULATIONS.get(str(name).split(":")[0])
    if cls is not None and cls.needs_velocities_from_positions:
        return "Lagrange family"
    return None


def refusals(rows: pd.DataFrame) -> list[tuple[str, list[str], str]]:
    """The refusals (``unsupported`` rows) of one system variant, grouped by
    reason: ``(who, formulations, reason)``, where ``who`` is "Lagrange
    family" when every member of that family in ``rows`` refused for the
    same reason, and the formulations' names otherwise; the reason is the
    error without the formulation's name in front.

    >>> rows = pd.DataFrame({"formulation": ["kane", "lagrange",
    ...     "sympy_lagrange"], "status": ["ok", "unsupported", "unsupported"],
    ...     "error": ["", "lagrange: no speeds", "sympy_lagrange: no speeds"]})
    >>> refusals(rows)
    [('Lagrange family', ['lagrange', 'sympy_lagrange'], 'no speeds')]
    """
    groups: dict[str, list[str]] = {}
    for fm, st, err in zip(rows["formulation"], rows["status"], rows["error"]):
        if st != "unsupported":
            continue
        err = "" if err is None or err != err else str(err)
        reason = err.removeprefix(f"{fm}: ").removeprefix(f"{str(fm).split(':')[0]}: ")
        groups.setdefault(reason, []).append(str(fm))
    family = {
        "Lagrange family": [str(fm) for fm in rows["formulation"] if _family_of(fm)]
    }
    out = []
    for reason, names in groups.items():
        who = ", ".join(names)
        for label, members in family.items():
            if len(members) > 1 and sorted(members) == sorted(names):
                who = label
        out.append((who, names, reason))
    return out


def is_flagged(value) -> bool:
    """A boolean cell of a frame or of ``results.csv`` read back."""
    return value is True or value == "True" or value == 1


def case_kind(status, peer_limitation=False) -> str:
    """What became of a case, one of :data:`KINDS`.

    A peer's limitation is named as such whatever its status (a peer that
    declines a system, times out or gives non-finite equations); a
    formulation of the project that declines a system (``unsupported``)
    refused it; any other status but ``ok`` failed.

    >>> case_kind("error", True), case_kind("unsupported"), case_kind("timeout")
    ('peer limitation', 'refused', 'failed')
    """
    if status == "ok":
        return "ok"
    if is_flagged(peer_limitation):
        return "peer limitation"
    if status == "unsupported":
        return "refused"
    return "failed"


def case_kinds(frame: pd.DataFrame) -> pd.Series:
    """:func:`case_kind` of every row of ``frame``."""
    limited = (
        frame["peer_limitation"]
        if "peer_limitation" in frame.columns
        else pd.Series(False, index=frame.index)
    )
    return pd.Series(
        [case_kind(s, p) for s, p in zip(frame["status"], limited)],
        index=frame.index,
        dtype=object,
    )


def kind_counts(frame: pd.DataFrame) -> str:
    """The cases of ``frame`` counted by kind, as every section states them:
    "101 ok, 1 peer limitation" (kinds without a case left out; a failed
    case's status in brackets when it is not plain ``error``).

    >>> kind_counts(pd.DataFrame({"status": ["ok", "timeout", "unsupported"]}))
    '1 ok, 1 failed (1 timeout), 1 refused'
    """
    if not len(frame):
        return "no cases"
    kinds = case_kinds(frame)
    parts = []
    for kind in KINDS:
        n = int((kinds == kind).sum())
        if not n:
            continue
        text = f"{n} {kind}"
        if kind == "failed":
            statuses = frame.loc[kinds == kind, "status"].value_counts()
            if set(statuses.index) != {"error"}:
                text += " (" + ", ".join(f"{v} {k}" for k, v in statuses.items()) + ")"
        parts.append(text)
    return ", ".join(parts)
