"""The Markdown sections of the robots part of the benchmark
(``reports/bench/robots/robots.md``): the spatial chain's counts against
Featherstone's ABA, the Stanford arm against Kane & Levinson under stated
inertia assumptions, the right-hand side against Pinocchio, the derivation
times."""

from __future__ import annotations

__all__ = ["ASSUMPTIONS", "ASSUMPTION_SETS", "KANE_LEVINSON"]

#: The assumption sets of the inverse-dynamics counts: name -> (options of
#: ``stanford_arm`` besides ``symbolic_inertia=True``, statement).
ASSUMPTION_SETS = {
    "general": (
        {},
        "each body's mass, all three mass-centre coordinates and all six "
        "central inertia components (products included) symbolic, none "
        "assumed zero",
    ),
    "principal axes": (
        {"principal_axes": True},
        "as general, but each body's central principal axes parallel to "
        "its link frame (the three products of inertia zero); mass centres "
        "anywhere",
    ),
    "principal axes, mass centres on joint axes": (
        {"principal_axes": True, "mass_centres": "joint_axes"},
        "products of inertia zero and each body's mass centre on the axis "
        "of the joint that moves it (two of its three coordinates zero)",
    ),
}

#: The modelling assumptions of the inverse-dynamics counts.
ASSUMPTIONS = {
    "this project": (
        "stanford_arm(symbolic_inertia=True, ...): six bodies, kinematics "
        "the numeric AIM-177 DH table (link twists -pi/2, pi/2, 0, -pi/2, "
        "pi/2, 0; offsets d1 = 0.412, d2 = 0.154, d6 = 0.263 m; all a = 0); "
        "gravity g along -z of the base; parameter-only subexpressions "
        "counted apart (once per parameter set); the inertia under three "
        "sets: " + "; ".join(f"{k}: {v[1]}" for k, v in ASSUMPTION_SETS.items())
    ),
    "Kane & Levinson (1983)": (
        "their own Stanford arm model (IJRR 2(3), 3-21); the paper could "
        "not be consulted here, so which inertia products vanish and where "
        "the mass centres lie in it is not known.  The 'general' set "
        "contains every special case they can have taken (any vanishing "
        "products, any mass-centre placement), so a count under it at or "
        "below 646 / 394 meets the target whatever their assumptions were; "
        "the two special sets show how much such assumptions save"
    ),
}
KANE_LEVINSON = (646, 394)


def _dash(x):
    """A ratio, or an em dash where there is none (ABA's formula is
    negative at n = 1)."""
    return "—" if x is None else x


def _md_row(cells) -> str:
    return "|" + "".join(f" {c} |" if c != "" else " |" for c in cells)


def _md_section(title, text, columns, rows) -> list[str]:
    """A markdown section: heading, paragraph and a table of ``rows``
    (sequences of cells) under ``columns``."""
    lines = [f"## {title}", "", text, "", _md_row(columns), "|" + "---|" * len(columns)]
    return lines + [_md_row(r) for r in rows]


def _chain_markdown(rows, formulations, cap):
    lines = _md_section(
        "spatial_chain(n): forward dynamics against ABA",
        "Multiplications / additions per evaluation after cse (M, f "
        "and the compiled backend's solve, LDL^T for a mass matrix "
        "symmetric as written, else LU; parameter-only parts counted "
        "apart; for "
        "kane_articulated the recursion's evaluation order, "
        "explicit, without a solve), "
        "against Featherstone's ABA, 224n - 259 / 205n - 248 (RBDA "
        "2008, Table 10.1).  Ratio: (mul + add) / ABA's.  Target: at "
        "most 1 for every n <= 8.",
        [
            "n",
            "formulation",
            "FD mul/add",
            "ABA mul/add",
            "ratio",
            "derive s",
            "count s",
        ],
        [
            [r["n"], r["formulation"]]
            + (
                [
                    f"{r['fd_mul']}/{r['fd_add']}",
                    f"{r['aba_mul']}/{r['aba_add']}",
                    _dash(r["ratio_total"]),
                    r["derive_s"],
                    r["count_s"],
                ]
                if r["status"] == "ok"
                else [f"capped at {cap:g} s", f"{r['aba_mul']}/{r['aba_add']}"]
                + [""] * 3
            )
            for r in rows
        ],
    )
    lines += [
        "",
        "Where each formulation crosses ABA (first n whose "
        "multiplications or additions exceed ABA's, among n >= 2: at "
        "n = 1 ABA's formula is negative):",
        "",
    ]
    for label in formulations:
        ok = [
            r
            for r in rows
            if r["formulation"] == label and r["status"] == "ok" and r["n"] >= 2
        ]
        # Above ABA: in multiplications or in additions.
        above = [
            r["n"]
            for r in ok
            if r["fd_mul"] > r["aba_mul"] or r["fd_add"] > r["aba_add"]
        ]
        if not ok:
            lines.append(f"- {label}: not measured")
        elif above:
            lines.append(
                f"- {label}: above ABA from n = {min(above)} "
                f"(measured up to n = {max(r['n'] for r in ok)})"
            )
        else:
            lines.append(
                f"- {label}: at or below ABA in multiplications and in "
                f"additions for every measured n "
                f"(up to n = {max(r['n'] for r in ok)})"
            )
    return lines + [""]


def _stanford_markdown(rows):
    lines = _md_section(
        "stanford_arm: inverse dynamics against Kane & Levinson",
        "tau = M q'' - f, multiplications / additions per evaluation "
        "after cse (parameter-only parts apart): of each formulation's "
        "M and f, and (kane_recursive) Kane's equations evaluated "
        "recursively in body frames without forming M "
        "(formulations.kane_recursive).  Target: at most 646 / 394 under "
        "assumptions at least as general as theirs.",
        [
            "assumptions",
            "formulation",
            "ID mul/add",
            "x 646",
            "x 394",
            "calls",
            "param mul/add",
        ],
        [
            [
                r.get("assumptions", "general"),
                r["formulation"],
                f"{r['id_mul']}/{r['id_add']}",
                r["ratio_mul"],
                r["ratio_add"],
                r["id_calls"],
                f"{r['param_mul']}/{r['param_add']}",
            ]
            if r["status"] == "ok"
            else [r.get("assumptions", "general"), r["formulation"], "capped"]
            + [""] * 4
            for r in rows
        ],
    )
    lines += ["", "Assumptions:", ""]
    lines += [f"- {k}: {v}." for k, v in ASSUMPTIONS.items()]
    return lines + [""]


def _rhs_markdown(rows):
    flags = sorted({r.get("cflags", "") for r in rows} - {""})
    built = (
        f"the C built with ``{'``, ``'.join(flags)}`` (the backend's default "
        "here: code for this machine's processor where the compiler takes "
        "it), Pinocchio as its package installs; "
        if flags
        else ""
    )
    baseline = any("baseline_c_us" in r for r in rows)
    if baseline:
        built += (
            "the last two columns time the same C built with the baseline "
            "flags alone (the instruction set of a portable binary such as "
            "Pinocchio's package), for comparison; "
        )
    columns = [
        "system",
        "formulation",
        "C us",
        "aba us",
        "ratio",
        "q'' max diff",
    ]
    if baseline:
        columns += ["C us, baseline flags", "ratio, baseline flags"]
    body = []
    for r in rows:
        cells = [
            r["system"],
            r["formulation"],
            r["c_us"],
            r["aba_us"],
            r["ratio"],
            f"{r['qdd_maxdiff']:.2g}",
        ]
        if baseline:
            cells += [
                _dash(r.get("baseline_c_us")),
                _dash(r.get("baseline_ratio")),
            ]
        body.append(cells)
    return _md_section(
        "Compiled right-hand side against Pinocchio's aba",
        "Microseconds per call at one state (median of repeats, the "
        "calls of every row and of aba interleaved), the "
        "C backend against ``pinocchio.aba`` on the same URDF; "
        + built
        + "kane_articulated is Kane's explicit form by the "
        "articulated-body recursion (no solve); "
        "target: ratio at most 1 (the default build).",
        columns,
        body,
    ) + [""]


def _derive_markdown(rows, cap):
    def seconds(x):
        return "capped" if x is None else x

    return _md_section(
        "Derivation seconds against sympy_kane",
        f"One derivation each, in a child process capped at {cap:g} s; "
        "target: ratio at most 0.25 (or sympy_kane capped).",
        ["system", "formulation", "derive s", "sympy_kane s", "ratio"],
        [
            [
                r["system"],
                r["formulation"],
                seconds(r["derive_s"]),
                seconds(r["sympy_kane_s"]),
                r.get("ratio", ""),
            ]
            for r in rows
        ],
    ) + [""]


def _panda_markdown(rows, cap):
    return _md_section(
        "panda: forward dynamics per evaluation",
        "Multiplications / additions per evaluation after cse, counted as "
        "for spatial_chain (M, f and the compiled backend's solve; "
        "kane_articulated's evaluation order without a solve), on panda "
        "as its URDF declares it (numeric masses, inertias and geometry, "
        "so not comparable with the general-inertia counts above).",
        ["formulation", "FD mul/add", "derive s"],
        [
            [r["formulation"], f"{r['fd_mul']}/{r['fd_add']}", r["derive_s"]]
            if r["status"] == "ok"
            else [r["formulation"], f"capped at {cap:g} s", ""]
            for r in rows
        ],
    ) + [""]
