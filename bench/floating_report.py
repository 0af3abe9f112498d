"""The floating-base section of ``robots.md`` and its rows of the target
table, from the rows of :func:`eomcompare.bench.floating.bench_floating`
(as measured or read back from ``floating.csv``)."""

from __future__ import annotations

from .floating import PUBLISHED_FLOATING, QUADRUPED, SOLVE_6, TOLERANCE
from .rows import target_row as _target_row

__all__ = ["floating_markdown", "floating_targets"]


def _num(x):
    """A measured number of a row (as measured or read back from CSV), or
    None (a reason, empty, NaN)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if v != v else v


def _int(x):
    return int(float(x))


def _count(x):
    """An integer cell (a CSV read back gives floats where a column has
    gaps), empty where there is none."""
    v = _num(x)
    return "" if v is None else int(v)


def _cell(x):
    v = _num(x)
    if v is not None:
        return f"{v:.2g}"
    return x if x not in (None, "") else "—"


def _row(cells):
    # A gap of a CSV read back (NaN) is an empty cell.
    cells = ["" if isinstance(c, float) and c != c else c for c in cells]
    return "|" + "".join(f" {c} |" for c in cells)


def _table(columns, body):
    return [_row(columns), "|" + "---|" * len(columns)] + [_row(r) for r in body]


def floating_markdown(rows, cap):
    """The floating-base section of ``robots.md``."""
    part = {
        k: [r for r in rows if r.get("table") == k]
        for k in ("agreement", "rhs", "derive", "counts")
    }
    lines = [
        "## Floating bases",
        "",
        "### Three-way agreement: own formulations, Pinocchio's aba, MuJoCo's qacc",
        "",
        f"Largest difference of the speeds' rates u' relative to the largest |u'|, "
        f"over random states (``ms.states.random_state(seed)``, seeds 0..n-1) of each "
        f"model; target: every pair within {TOLERANCE:g}.  Pinocchio: its URDF "
        "parser on the same file (free-flyer root for a floating base), or a "
        "model built from the DH table (puma560, stanford_arm); MuJoCo: the "
        "MJCF file (ant), or its own URDF parser on the same file (geometry "
        "stripped, a free joint on the root body, a placeholder link merged "
        "exactly with the link it is fixed to: anymal's root).  A reason in a "
        "column: that "
        "reference does not apply.  Derivation seconds in a child process "
        f"capped at {cap:g} s.",
        "",
    ]
    lines += _table(
        [
            "model",
            "floating",
            "formulation",
            "states",
            "own - Pinocchio",
            "own - MuJoCo",
            "Pinocchio - MuJoCo",
            "derive s",
            "status",
        ],
        [
            [
                r["model"],
                r.get("floating", ""),
                r["formulation"],
                _count(r.get("states")),
                _cell(r.get("own_pinocchio")),
                _cell(r.get("own_mujoco")),
                _cell(r.get("pinocchio_mujoco")),
                r.get("derive_s", ""),
                r.get("status", ""),
            ]
            for r in part["agreement"]
        ],
    )
    lines += [
        "",
        f"### Compiled right-hand side of {QUADRUPED} (free-flyer root) against Pinocchio's aba",
        "",
        "Microseconds per call at one state: the C backend's rhs (x' of the "
        "formulation's state) against ``pinocchio.aba`` on the same URDF with a "
        "``JointModelFreeFlyer`` root (Pinocchio as its package installs), "
        "every call of the table interleaved over the repeats; median of the "
        "repeats, the ratio of the medians and the range of the per-repeat "
        "ratios.  Target: ratio at most 1.",
        "",
    ]
    lines += _table(
        [
            "formulation",
            "C us",
            "aba us",
            "ratio",
            "ratio range",
            "repeats",
            "u' rel. diff",
            "cflags",
        ],
        [
            [
                r["formulation"],
                r["c_us"],
                r["aba_us"],
                r["ratio"],
                f"{r['ratio_min']}..{r['ratio_max']}",
                _count(r["repeats"]),
                _cell(r["ud_reldiff"]),
                f"``{r['cflags']}``",
            ]
            for r in part["rhs"]
        ],
    )
    lines += [
        "",
        f"### Deriving {QUADRUPED} against sympy_kane",
        "",
        f"One derivation each (``count_ops=False``), in a child process capped "
        f"at {cap:g} s; target: ratio at most 0.25, or sympy_kane capped.",
        "",
    ]
    lines += _table(
        ["formulation", "derive s", "sympy_kane s", "ratio"],
        [
            [
                r["formulation"],
                r["derive_s"] if _num(r.get("derive_s")) is not None else "capped",
                r["sympy_kane_s"]
                if _num(r.get("sympy_kane_s")) is not None
                else f"capped at {cap:g} s",
                r.get("ratio", "") if _num(r.get("ratio")) is not None else "",
            ]
            for r in part["derive"]
        ],
    )
    ((name, (pm, pa, what)),) = PUBLISHED_FLOATING.items()
    lines += [
        "",
        "### Floating-base forward dynamics: operation counts",
        "",
        "Multiplications / additions per evaluation after cse, literature "
        "convention (multiplications include divisions, additions "
        "subtractions, sin/cos apart; parameter-only parts counted apart): M "
        "and f of u' and the compiled backend's solve of the whole "
        "(6 + n) x (6 + n) mass matrix, which the total includes.  "
        "rx90_floating: the RX-90 of Khalil's modified-DH table (symbolic D3, "
        "RL4) on a free base, general symbolic inertia of all seven bodies, "
        "gravity along -z; like for like with the published row below.  "
        "solo12: numeric inertia and geometry from its URDF; no published "
        "count, so not like for like with anything.",
        "",
    ]
    lines += _table(
        [
            "model",
            "formulation",
            "speeds",
            "FD mul/add (total)",
            "of which solve",
            "vs published",
        ],
        [
            [
                r["model"],
                r["formulation"],
                _count(r.get("speeds")),
                f"{_int(r['fd_mul'])}/{_int(r['fd_add'])}"
                if _num(r.get("fd_mul")) is not None
                else f"capped at {cap:g} s",
                f"{_int(r['solve_mul'])}/{_int(r['solve_add'])}"
                if _num(r.get("solve_mul")) is not None
                else "",
                (
                    f"x{float(r['fd_mul']) / (pm + SOLVE_6[0]):.2f} / "
                    f"x{float(r['fd_add']) / (pa + SOLVE_6[1]):.2f}"
                    if r["model"] == "rx90_floating"
                    and _num(r.get("fd_mul")) is not None
                    else "—"
                    if r["model"] == "rx90_floating"
                    else "not like for like"
                ),
            ]
            for r in part["counts"]
        ],
    )
    lines += [
        "",
        "Published:",
        "",
        f"- {name}: {pm} / {pa} ({what}).  With Featherstone's "
        f"factorize-and-solve at n = 6 (n^3/6 + 3n^2/2 - 2n/3 / n^3/6 + n^2 - "
        f"7n/6, RBDA 2008, Table 10.1) added: {pm + SOLVE_6[0]} / "
        f"{pa + SOLVE_6[1]}, the figure the 'vs published' column divides by.  "
        "Its inverse dynamics, 592 / 450 plus a 6x6 solve, computes the base "
        "acceleration from the joints' (a hybrid problem), not tau = M u' - f: "
        "not counted here.",
        "- Featherstone's floating-base articulated-body algorithm: no "
        "published count found in the sources at hand (RBDA's Table 10.1 "
        "gives fixed-base chains of revolute joints); none set beside these.",
        "",
    ]
    return lines


def floating_targets(rows) -> list[dict]:
    """The floating part's rows of the target table: the worst three-way
    agreement measured (limit :data:`TOLERANCE`; the cases not measured,
    capped, named in the note), the quadruped's compiled rhs over
    aba (the fastest own formulation named, limit 1) and its slowest own
    derivation over sympy_kane's (limit 0.25; sympy_kane capped: met)."""
    out = []
    agree = [r for r in rows if r.get("table") == "agreement"]
    if agree:
        values = [
            _num(r.get(k))
            for r in agree
            for k in ("own_pinocchio", "own_mujoco", "pinocchio_mujoco")
        ]
        values = [v for v in values if v is not None]
        bad = [r for r in agree if r.get("status") == "DISAGREE"]
        unmeasured = [r for r in agree if r.get("status") not in ("agree", "DISAGREE")]
        worst = max(values, default=None)
        models = sorted({r["model"] for r in agree})

        def named(rs):
            return ", ".join(f"{r['model']} {r['formulation']}" for r in rs)

        def why(r):
            status = str(r.get("status"))
            if status == "capped":
                return "capped"
            return "not applicable" if "Unsupported" in status else "failed"

        out.append(
            _target_row(
                "robots: floating three-way agreement of u' (own, Pinocchio, MuJoCo)",
                worst,
                TOLERANCE,
                f"{len(models)} models, {_count(agree[0].get('states'))} states"
                + (f"; not agreeing: {named(bad)}" if bad else "")
                + (
                    "; not measured: "
                    + ", ".join(
                        f"{r['model']} {r['formulation']} ({why(r)})"
                        for r in unmeasured
                    )
                    if unmeasured
                    else ""
                ),
            )
        )
    rhs = [
        r for r in rows if r.get("table") == "rhs" and _num(r.get("ratio")) is not None
    ]
    if rhs:
        best = min(rhs, key=lambda r: float(r["ratio"]))
        out.append(
            _target_row(
                f"robots: {best['model']} floating C rhs / Pinocchio aba, {best['formulation']}",
                float(best["ratio"]),
                1.0,
                f"{float(best['c_us']):.2f} us / {float(best['aba_us']):.2f} us, "
                f"per repeat {best['ratio_min']}..{best['ratio_max']}",
            )
        )
    derive = [r for r in rows if r.get("table") == "derive"]
    if derive:
        out += _derive_targets(derive)
    return out


def _derive_targets(derive):
    """kane's derivation and the slowest own one over sympy_kane's: a
    formulation capped while sympy_kane finished is at least cap / peer
    (its value that bound, the note saying so); sympy_kane capped while
    the formulation finished is met (value 0)."""
    peer = _num(derive[0].get("sympy_kane_s"))
    cap = _num(derive[0].get("cap_s"))

    def judged(r):
        own = _num(r.get("derive_s"))
        if own is not None and peer is not None:
            return own / peer, f"{own:g} s / {peer:g} s"
        if own is not None:
            return 0.0, f"{own:g} s, sympy_kane capped at {cap:g} s"
        if peer is not None and cap is not None:
            return cap / peer, f"capped at {cap:g} s: at least {cap:g} s / {peer:g} s"
        return None, "both capped"

    model = derive[0]["model"]
    out = []
    kane = [r for r in derive if r["formulation"] == "kane"]
    if kane:
        value, note = judged(kane[0])
        out.append(
            _target_row(
                f"robots: {model} floating derivation / sympy_kane, kane",
                None if value is None else round(value, 3),
                0.25,
                note,
            )
        )
    worst = max(
        ((judged(r), r["formulation"]) for r in derive),
        key=lambda x: -1.0 if x[0][0] is None else x[0][0],
    )
    (value, note), who = worst
    out.append(
        _target_row(
            f"robots: {model} floating derivation / sympy_kane, slowest own",
            None if value is None else round(value, 3),
            0.25,
            f"{who}: {note}",
        )
    )
    return out
