"""Khalil's robots against SYMORO (the robots section's part ``khalil``):
operation counts of inverse dynamics, forward dynamics and the mass matrix
of ``stanford_arm(geometry="khalil")`` and ``rx90`` under SYMORO's four
inertia assumption sets, beside the figures of SYMORO's customised
Newton-Euler (``../shared/anchors.md``: OpenSYMORO run on the same robot
files and counted with this project's convention).

Counted per evaluation after cse, multiplications (divisions and squares
included) / additions (subtractions included), unary minus free, sin/cos
apart, parameter-only subexpressions once per parameter set and apart, only
what the outputs need (:mod:`eomcompare.symbolic.literature_counts`).  Parametrisation:
``customised_ne`` takes SYMORO's standard parameters (inertia about the
link origin, first moments, mass: :mod:`eomcompare.formulations.regressor`) or the base
parameters; the other formulations take the declaration's mass, mass
centre and central inertia (the standard parameters are parameter-only
functions of them, counted apart), and only the standard set.

``khalil_passes.csv`` holds what single customisations save (summed
angles, the inertia moves) and ``khalil_links.csv`` where the customised
Newton-Euler's operations go, link by link (:func:`link_breakdown`).

Regenerate the CSVs and their Markdown tables (a few minutes)::

    python -m eomcompare.bench.khalil --out reports/bench/robots

``python -m eomcompare bench`` runs it as part of the robot section, and its
targets (at most 0.9 x SYMORO's count, :data:`TARGETS`) join targets.txt.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from .rows import capped as _capped
from .rows import target_row as _target_row

__all__ = [
    "ROBOTS",
    "SYMORO",
    "TARGETS",
    "bench_khalil",
    "khalil_targets",
    "customisation_rows",
    "summed_angle_rows",
    "inertia_move_rows",
    "link_breakdown",
    "main",
]

#: Robot name -> builder options of its Khalil geometry.
ROBOTS = {"stanford_arm": {"geometry": "khalil"}, "rx90": {}}
#: Assumption set -> the system's options (symbolic inertia in both).
SYSTEM_OPTIONS = {
    "general": {},
    "simplified": {"principal_axes": True, "mass_centres": "joint_axes"},
}
#: SYMORO's counts (robot, assumptions, parameters) -> {model: (mul, add)}.
SYMORO = {
    ("stanford_arm", "general", "standard"): {
        "inverse": (324, 279),
        "forward": (767, 597),
        "mass_matrix": (149, 125),
    },
    ("stanford_arm", "general", "base"): {
        "inverse": (262, 211),
        "forward": (734, 536),
        "mass_matrix": (147, 105),
    },
    ("stanford_arm", "simplified", "standard"): {
        "inverse": (209, 149),
        "forward": (555, 397),
        "mass_matrix": (111, 70),
    },
    ("stanford_arm", "simplified", "base"): {
        "inverse": (143, 96),
        "forward": (471, 322),
        "mass_matrix": (99, 52),
    },
    ("rx90", "general", "standard"): {"inverse": (331, 282), "forward": (885, 672)},
    ("rx90", "general", "base"): {"inverse": (287, 226), "forward": (864, 622)},
}
#: The targets: (robot, assumptions, parameters, model) -> (mul, add) limits,
#: 0.9 x SYMORO's rounded to the nearest integer (as the issue states them).
TARGETS = {
    ("stanford_arm", "general", "standard", "inverse"): (292, 251),
    ("stanford_arm", "general", "base", "inverse"): (236, 190),
    ("stanford_arm", "simplified", "standard", "inverse"): (188, 134),
    ("stanford_arm", "simplified", "base", "inverse"): (129, 86),
    ("rx90", "general", "standard", "inverse"): (298, 254),
    ("rx90", "general", "base", "inverse"): (258, 203),
    ("stanford_arm", "general", "standard", "forward"): (690, 537),
    ("stanford_arm", "simplified", "base", "forward"): (424, 290),
}
#: Mass-matrix formulations counted for inverse dynamics (tau = M q'' - f),
#: and those counted for forward dynamics and M.
INVERSE_FORMULATIONS = (
    "kane",
    "kane_composite",
    "lagrange",
    "modified_lagrange",
    "gibbs_appell",
)
FORWARD_FORMULATIONS = ("kane_articulated", "kane_composite")
COLUMNS = (
    "robot",
    "assumptions",
    "parameters",
    "model",
    "formulation",
    "mul",
    "add",
    "symoro_mul",
    "symoro_add",
    "param_mul",
    "param_add",
    "trig",
    "status",
)
#: The function calls counted in the column ``trig``: sin/cos evaluations
#: per evaluation (:attr:`OpCount.calls`), which SYMORO's convention, and
#: this project's, leave out of the multiplications and additions.
TRIG_CALLS = ("sin", "cos")


def _trig(c) -> int:
    """sin/cos evaluations per evaluation of an :class:`OpCount`."""
    return sum(c.calls.get(name, 0) for name in TRIG_CALLS)


def _counts(c, extra=(0, 0)):
    """The tuple a case returns per model: mul, add (each plus ``extra``,
    a solve's), param_mul, param_add, trig."""
    return (c.mul + extra[0], c.add + extra[1], c.param_mul, c.param_add, _trig(c))


def _system(robot, assumptions):
    from eomcompare.systems import get_system

    return get_system(
        robot, symbolic_inertia=True, **ROBOTS[robot], **SYSTEM_OPTIONS[assumptions]
    )


def _customised_case(robot, assumptions, parameters):
    """Counts of the customised Newton-Euler inverse dynamics, of the
    forward dynamics (``tau - h`` by it and M's upper triangle by
    composite links in one evaluation order, then the symmetric solve
    LDL^T) and of M alone."""
    import sympy as sm

    from eomcompare.formulations.newton_euler import (
        customised_inverse_dynamics,
        link_inertia,
    )
    from eomcompare.formulations.newton_euler_composite import (
        customised_forward_dynamics,
    )
    from eomcompare.symbolic.literature_counts import (
        assignments_counts,
        ldl_solve_counts,
    )
    from eomcompare.systems import get_system

    ms = get_system(robot, **ROBOTS[robot])
    zdd = sm.symbols(f"_zdd0:{len(ms.coordinates)}")
    link = link_inertia(ms, assumptions, parameters)
    prog, _ = customised_inverse_dynamics(ms, zdd, inertia=link[0], program=True)
    params = set(link[1]) | set(ms.parameters)
    c = assignments_counts(prog, params)
    out = {"inverse": _counts(c)}
    prog, _ = customised_inverse_dynamics(
        ms, zdd, inertia=link[0], program=True, summed_angles=False
    )
    t = assignments_counts(prog, params)
    out["inverse_turn_by_turn"] = _counts(t)
    prog, _ = customised_inverse_dynamics(
        ms, zdd, inertia=link[0], program=True, inertia_moves=False
    )
    t = assignments_counts(prog, params)
    out["inverse_inertia_kept"] = _counts(t)
    prog, _, n = customised_forward_dynamics(ms, link=link)
    c = assignments_counts(prog, params)
    out["forward"] = _counts(c, ldl_solve_counts(n))
    prog, _, n = customised_forward_dynamics(ms, link=link, mass_matrix_only=True)
    c = assignments_counts(prog, params)
    out["mass_matrix"] = _counts(c)
    return out


def _formulation_case(robot, assumptions, formulation):
    """Counts of one formulation's equations on the declared robot:
    inverse dynamics ``M q'' - f`` (mass-matrix formulations), forward
    dynamics (M, f and the solve, or the evaluation order) and M (its
    lower triangle)."""
    import sympy as sm

    from eomcompare.bench.literature_counts import (
        forward_dynamics_counts,
        inverse_dynamics_counts,
        recursive_inverse_dynamics_counts,
    )
    from eomcompare.formulations import get_formulation
    from eomcompare.symbolic.literature_counts import count_ops_literature

    ms = _system(robot, assumptions)
    out = {}
    if formulation == "kane_recursive":
        c = recursive_inverse_dynamics_counts(ms)
        return {"inverse": _counts(c)}
    eom = get_formulation(formulation, count_ops=False).derive(ms)
    if formulation in INVERSE_FORMULATIONS:
        c = inverse_dynamics_counts(eom)
        out["inverse"] = _counts(c)
    if formulation in FORWARD_FORMULATIONS:
        fd = forward_dynamics_counts(eom)["total"]
        out["forward"] = _counts(fd)
        if "assignments" not in eom.extras:
            M = sm.Matrix(eom.mass_matrix)
            n = M.shape[0]
            lower = [M[i, j] for i in range(n) for j in range(i + 1)]
            c = count_ops_literature(lower, set(ms.parameters))
            out["mass_matrix"] = _counts(c)
    return out


def _row(robot, assumptions, parameters, model, formulation, got):
    symoro = SYMORO.get((robot, assumptions, parameters), {}).get(model, ("", ""))
    row = dict.fromkeys(COLUMNS, "")
    row.update(
        robot=robot,
        assumptions=assumptions,
        parameters=parameters,
        model=model,
        formulation=formulation,
        symoro_mul=symoro[0],
        symoro_add=symoro[1],
    )
    if got is None:
        row["status"] = "capped"
    else:
        row.update(
            mul=got[0],
            add=got[1],
            param_mul=got[2],
            param_add=got[3],
            trig=got[4] if len(got) > 4 else "",
            status="ok",
        )
    return row


def bench_khalil(out, log=print, *, cap=300.0, formulations=True) -> list[dict]:
    """Count every case, write ``khalil.csv`` and ``khalil.md`` into
    ``out`` and return the rows (columns :data:`COLUMNS`).  Each case runs
    in a child process capped at ``cap`` seconds; ``formulations`` False
    counts ``customised_ne`` alone."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows, summed, links = [], [], []
    for robot in ROBOTS:
        for assumptions in SYSTEM_OPTIONS:
            for parameters in ("standard", "base"):
                t0 = time.perf_counter()
                got = _capped(_customised_case, robot, assumptions, parameters, cap=cap)
                if got is not None:
                    summed += summed_angle_rows(robot, assumptions, parameters, got)
                    summed += inertia_move_rows(robot, assumptions, parameters, got)
                    links += (
                        _capped(link_breakdown, robot, assumptions, parameters, cap=cap)
                        or []
                    )
                for model in ("inverse", "forward", "mass_matrix"):
                    rows.append(
                        _row(
                            robot,
                            assumptions,
                            parameters,
                            model,
                            "customised_ne",
                            None if got is None else got[model],
                        )
                    )
                    log(
                        f"  {robot} {assumptions} {parameters} {model} "
                        f"customised_ne: {rows[-1]['mul']}/{rows[-1]['add']} "
                        f"against SYMORO {rows[-1]['symoro_mul']}/"
                        f"{rows[-1]['symoro_add']} "
                        f"({time.perf_counter() - t0:.0f} s)"
                    )
            if not formulations:
                continue
            names = dict.fromkeys(
                ("kane_recursive", *INVERSE_FORMULATIONS, *FORWARD_FORMULATIONS)
            )
            for f in names:
                got = _capped(_formulation_case, robot, assumptions, f, cap=cap)
                models = (
                    ["inverse"] * (f in INVERSE_FORMULATIONS or f == "kane_recursive")
                    + ["forward"] * (f in FORWARD_FORMULATIONS)
                    + ["mass_matrix"] * (f == "kane_composite")
                )
                for model in models:
                    rows.append(
                        _row(
                            robot,
                            assumptions,
                            "standard",
                            model,
                            f,
                            None if got is None else got.get(model),
                        )
                    )
                    log(
                        f"  {robot} {assumptions} standard {model} {f}: "
                        f"{rows[-1]['mul']}/{rows[-1]['add']}"
                    )
    with open(out / "khalil.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    passes = []
    if formulations:
        for robot in ROBOTS:
            log(f"  customisation passes, {robot} (Khalil), general inertia")
            got = _capped(customisation_rows, robot, cap=cap) or []
            for r in got:
                log(
                    f"    {r['formulation']:15s} {r['pass']:14s} "
                    f"{r['mul']}/{r['add']} (saved {r['saved_mul']}/"
                    f"{r['saved_add']}, calls {r['calls']})"
                )
            passes += got
    passes += summed
    if passes:
        with open(out / "khalil_passes.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(passes[0]))
            w.writeheader()
            w.writerows(passes)
    if links:
        with open(out / "khalil_links.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(links[0]))
            w.writeheader()
            w.writerows(links)
    (out / "khalil.md").write_text(khalil_markdown(rows, passes, links))
    return rows


def _pass_rows(robot, name, labelled):
    """Rows of the customisation passes: ``labelled`` pairs (label, counts),
    each saving against the first."""
    first = labelled[0][1]
    return [
        {
            "robot": robot,
            "formulation": name,
            "pass": label,
            "mul": c[0],
            "add": c[1],
            "calls": "",
            "param_mul": c[2],
            "param_add": c[3],
            "saved_mul": first[0] - c[0],
            "saved_add": first[1] - c[1],
            "saved_calls": "",
        }
        for label, c in labelled
    ]


def inertia_move_rows(robot, assumptions, parameters, got) -> list[dict]:
    """Two rows of the customisation passes for one case of the customised
    Newton-Euler inverse dynamics (``got`` of ``_customised_case``): each
    link's inertia kept where the parametrisation puts it, then moved
    between links where that is cheaper (masses folded into parents,
    axial first moments into children, inertia balanced about the axes),
    and what the moves saved.  The moves are the base parameters'
    regroupings (and the freedom they leave), so they save in the
    standard parameters much of what the base parameters would."""
    return _pass_rows(
        robot,
        f"customised_ne {assumptions} {parameters}",
        [
            ("inertia kept", got["inverse_inertia_kept"]),
            ("inertia moved", got["inverse"]),
        ],
    )


def link_breakdown(robot, assumptions, parameters) -> list[dict]:
    """Where the customised Newton-Euler inverse dynamics' operations go,
    link by link: per evaluation, the multiplications and additions of
    link k's forward recursion (``w``, ``wd``, ``vd``, the products and
    ``U``), of its own wrench (``F``, ``N``) and of its backward step
    (its wrench carried into its parent, ``tau_k``), each intermediate
    counted once after the parameter-only parts are set apart; a last row
    ``cse`` is what cse shares across them (the total minus their sum), so
    that the rows add up to the count of the first table."""
    import sympy as sm

    from eomcompare.formulations.newton_euler import (
        customised_inverse_dynamics,
        link_inertia,
    )
    from eomcompare.formulations.newton_euler_program import _Program
    from eomcompare.symbolic.literature_counts import (
        OpCount,
        _hoist_parameters,
        _tree_counts,
        assignments_counts,
    )
    from eomcompare.systems import get_system

    ms = get_system(robot, **ROBOTS[robot])
    n = len(ms.coordinates)
    zdd = sm.symbols(f"_zdd0:{n}")
    inertia, symbols = link_inertia(ms, assumptions, parameters)
    constants = set(symbols) | set(ms.parameters)
    let = _Program(constants)
    tau, _ = customised_inverse_dynamics(ms, zdd, inertia=inertia, program=let)
    prog = let.pruned(list(tau))
    stage = dict(zip(let.symbols, let.stages))
    params = set(constants)
    for s, d in zip(prog.symbols, prog.definitions):
        if d.free_symbols <= params:
            params.add(s)
    hoisted, _ = _hoist_parameters(
        [*prog.definitions, *prog.outputs], lambda s: s in params or s.is_number
    )
    where = [stage[s] for s in prog.symbols] + [
        (k, "backward") for k in range(1, n + 1)
    ]
    what = ("forward", "wrench", "backward")
    counts = {(k, x): [0, 0] for k in range(1, n + 1) for x in what}
    for e, key in zip(hoisted, where):
        c = OpCount()
        _tree_counts(e, c)
        counts[key][0] += c.mul
        counts[key][1] += c.add
    total = assignments_counts(prog, constants)
    rows = []
    for k in [*range(1, n + 1), "cse"]:
        row = {
            "robot": robot,
            "assumptions": assumptions,
            "parameters": parameters,
            "link": k,
        }
        for x in what:
            m, a = counts[k, x] if k != "cse" else ("", "")
            row[f"{x}_mul"], row[f"{x}_add"] = m, a
        if k == "cse":
            row["mul"] = total.mul - sum(c[0] for c in counts.values())
            row["add"] = total.add - sum(c[1] for c in counts.values())
        else:
            row["mul"] = sum(counts[k, x][0] for x in what)
            row["add"] = sum(counts[k, x][1] for x in what)
        rows.append(row)
    return rows


def summed_angle_rows(robot, assumptions, parameters, got) -> list[dict]:
    """Two rows of the customisation passes for one case of the
    customised Newton-Euler inverse dynamics (``got`` of
    ``_customised_case``): turned joint by joint, then with parallel
    revolute joints turned by the sum of their angles, and what the sums
    saved (formulation ``customised_ne <assumptions> <parameters>``)."""
    return _pass_rows(
        robot,
        f"customised_ne {assumptions} {parameters}",
        [
            ("turn by turn", got["inverse_turn_by_turn"]),
            ("summed angles", got["inverse"]),
        ],
    )


def _best(rows, key):
    """The row of ``key`` (robot, assumptions, parameters, model) with the
    smallest ratio to its target, and that ratio (the larger of mul / mul
    limit and add / add limit)."""
    lm, la = TARGETS[key]
    best = None
    for r in rows:
        if (r["robot"], r["assumptions"], r["parameters"], r["model"]) != key:
            continue
        if r.get("status") != "ok" or r.get("mul") in ("", None):
            continue
        ratio = max(float(r["mul"]) / lm, float(r["add"]) / la)
        if best is None or ratio < best[1]:
            best = (r, ratio)
    return best


def khalil_targets(rows) -> list[dict]:
    """One row of the benchmark's target table per :data:`TARGETS` entry
    (``target, value, limit, status, note``): the value is the best
    formulation's larger ratio to the limits (met at most 1), the note its
    counts against the limits."""
    out = []
    for key, (lm, la) in TARGETS.items():
        robot, assumptions, parameters, model = key
        best = _best(rows or [], key)
        name = (
            f"robots: khalil {robot} {model}, {assumptions}, {parameters} "
            f"parameters, <= 0.9 x SYMORO"
        )
        if best is None:
            out.append(_target_row(name, None, 1.0, f"limits {lm}/{la}"))
            continue
        r, ratio = best
        out.append(
            _target_row(
                name,
                round(ratio, 3),
                1.0,
                f"{r['formulation']} {r['mul']}/{r['add']} against {lm}/{la}",
            )
        )
    return out


def khalil_markdown(rows, passes=(), links=()) -> str:
    """The rows as a Markdown table, with the targets met or missed, the
    customisation passes (:func:`customisation_rows`) and the per-link
    breakdown (:func:`link_breakdown`) when given."""
    lines = [
        "# Khalil's robots against SYMORO's customised Newton-Euler",
        "",
        "Per evaluation after cse: multiplications / additions (divisions and "
        "squares are multiplications, unary minus free, sin/cos apart, "
        "parameter-only work once per parameter set and apart). SYMORO's "
        "figures: OpenSYMORO on the same robots, counted the same way. "
        "Regenerate with `python -m eomcompare.bench.khalil --out reports/bench/robots`.",
        "",
        "| robot | assumptions | parameters | model | formulation | mul | add "
        "| sin/cos | SYMORO mul | SYMORO add |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [
            r["robot"],
            r["assumptions"],
            r["parameters"],
            r["model"],
            r["formulation"],
            r["mul"] if r["status"] == "ok" else "capped",
            r["add"] if r["status"] == "ok" else "",
            r.get("trig", "") if r["status"] == "ok" else "",
            r["symoro_mul"],
            r["symoro_add"],
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", _trig_sentence(rows)]
    lines += ["", "## Targets (at most 0.9 x SYMORO's count)", ""]
    lines += ["| target | value | status | note |", "|---|---|---|---|"]
    for t in khalil_targets(rows):
        lines.append(f"| {t['target']} | {t['value']} | {t['status']} | {t['note']} |")
    if passes:
        lines += [
            "",
            "## Customisation passes (symbolic.customise), applied alike",
            "",
            "tau of each formulation on each robot's Khalil geometry with "
            "general symbolic inertia (declared mass, mass centre, central "
            "inertia); the zero products are those of the simplified "
            "assumption set. Counts after each pass, and what the pass saved "
            "per evaluation. The rows `customised_ne <assumptions> "
            "<parameters>` are the customised Newton-Euler inverse dynamics "
            "of that case (the counts of the first table), turned joint by "
            "joint and with parallel revolute joints turned by the sum of "
            "their angles; and with each link's inertia kept where the "
            "parametrisation puts it, then moved between links (masses "
            "folded into parents, axial first moments into children, "
            "inertia balanced about the axes). The moves are the base "
            "parameters' regroupings and the freedom they leave, so the "
            "standard parameters get from them much of what the base "
            "parameters save: kept in place, base saves over standard about "
            "what SYMORO's base saves over its standard.",
            "",
            "| robot | formulation | pass | mul | add | sin/cos calls | per "
            "parameter set mul/add | saved mul/add/calls |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in passes:
            lines.append(
                f"| {r.get('robot', '')} | {r['formulation']} | {r['pass']} | "
                f"{r['mul']} | {r['add']} | "
                f"{r['calls']} | {r['param_mul']}/{r['param_add']} | "
                f"{r['saved_mul']}/{r['saved_add']}/{r['saved_calls']} |"
            )
    if links:
        lines += _links_markdown(links)
    return "\n".join(lines) + "\n"


def _trig_sentence(rows) -> str:
    """The note under the main table: sin/cos are counted apart, and how
    many each customised row evaluates."""
    counts = [
        f"{r['robot']} {r['assumptions']} {r['parameters']} {r['model']} {r['trig']}"
        for r in rows
        if r["formulation"] == "customised_ne"
        and r["status"] == "ok"
        and r.get("trig", "") != ""
    ]
    return (
        "sin/cos: evaluations of " + " and ".join(TRIG_CALLS) + " per evaluation, "
        "not counted in mul/add (SYMORO's convention); the customised rows "
        "evaluate " + ("; ".join(counts) or "none counted") + ". The closed-form "
        "moments trade multiplications and additions for evaluations of "
        "sin/cos of 2 theta (and a turned leaf's of q + beta)."
    )


def _links_markdown(links):
    """The per-link breakdown (:func:`link_breakdown`), a table per case."""
    lines = [
        "",
        "## Where the customised Newton-Euler's operations go, link by link",
        "",
        "Inverse dynamics, per evaluation, mul/add: link k's forward "
        "recursion (w, wd, vd, the products of w and U), its own wrench "
        "(F = M vd + U MS, N = J wd + w x J w + MS x vd, each zero parameter "
        "dropped) and its backward step (its wrench carried into its parent "
        "and tau_k), each intermediate counted once with the parameter-only "
        "parts set apart; `cse` is what cse shares across them, so that a "
        "column adds up to the first table's count.",
    ]
    cases = {}
    for r in links:
        key = (r["robot"], r["assumptions"], r["parameters"])
        cases.setdefault(key, []).append(r)
    for (robot, assumptions, parameters), rs in cases.items():
        lines += [
            "",
            f"{robot}, {assumptions}, {parameters} parameters:",
            "",
            "| link | forward | wrench | backward | total |",
            "|---|---|---|---|---|",
        ]
        for r in rs:
            cells = [
                f"{r[f'{x}_mul']}/{r[f'{x}_add']}" if r[f"{x}_mul"] != "" else ""
                for x in ("forward", "wrench", "backward")
            ]
            lines.append(
                f"| {r['link']} | " + " | ".join(cells) + f" | {r['mul']}/{r['add']} |"
            )
        total = (sum(int(r["mul"]) for r in rs), sum(int(r["add"]) for r in rs))
        lines.append(f"| all | | | | {total[0]}/{total[1]} |")
    return lines


def customisation_rows(robot="stanford_arm", formulations=("kane", "kane_composite")):
    """The customisation passes (:mod:`eomcompare.symbolic.customise`) applied alike
    to ``tau`` of each formulation (``M q'' - f``) and of the customised
    Newton-Euler recursion (declared inertia, as expressions) on the
    robot's Khalil geometry with general symbolic inertia; the zero
    products are those of the simplified assumption set (mass centres off
    the joint axes, products of inertia).  Rows: ``formulation`` and the
    pass's row."""
    import sympy as sm

    from eomcompare.formulations import get_formulation
    from eomcompare.formulations.newton_euler import customised_inverse_dynamics
    from eomcompare.symbolic.customise import customisation_passes

    ms = _system(robot, "general")
    zero = [
        s
        for s in ms.parameters
        if s.name.startswith(("cx", "cy")) or s.name.endswith(("_xy", "_yz", "_zx"))
    ]
    zdd = sm.symbols(f"_zdd0:{len(ms.coordinates)}")
    taus = {}
    for f in formulations:
        eom = get_formulation(f, count_ops=False).derive(ms)
        taus[f] = [eom.mass_matrix * sm.Matrix(zdd[: len(eom.unknowns)]) - eom.forcing]
    tau, _ = customised_inverse_dynamics(ms, zdd, parameters="declared")
    taus["customised_ne"] = [tau]
    rows = []
    for f, exprs in taus.items():
        for r in customisation_passes(
            exprs, ms.parameters, zero=zero, values=ms.parameters
        ):
            rows.append({"robot": robot, "formulation": f} | r)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m eomcompare.bench.khalil",
        description="Operation counts of Khalil's robots against SYMORO's; "
        "writes khalil.csv and khalil.md",
    )
    ap.add_argument("--out", default="reports/bench/robots")
    ap.add_argument("--cap", type=float, default=300.0, help="seconds per case")
    ap.add_argument(
        "--customised-only",
        action="store_true",
        help="count the customised Newton-Euler recursion alone",
    )
    args = ap.parse_args(argv)
    if args.cap <= 0:
        ap.error("--cap must be positive")
    rows = bench_khalil(
        args.out, print, cap=args.cap, formulations=not args.customised_only
    )
    for t in khalil_targets(rows):
        print(f"  {t['status']:>12}  {t['target']}: {t['note']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
