"""The robot section of the benchmark (``python -m eomcompare bench``, part
``robots``): the spatial arms of the catalogue against the literature and
against Pinocchio, every number of one run.

1. forward dynamics of ``spatial_chain(n)`` (general symbolic inertia and
   geometry): multiplications and additions per evaluation after cse,
   M and f plus the compiled backend's solve (LDL^T for a mass matrix
   symmetric as written, else LU)
   (:func:`eomcompare.bench.literature_counts.forward_dynamics_counts`), against
   Featherstone's ABA formula 224n - 259 / 205n - 248 (RBDA 2008, Table
   10.1), and the n where each formulation crosses it: ``kane`` (the
   body-by-body sums), ``kane_composite`` (composite-body sums),
   ``kane_articulated`` (the articulated-body recursion, the explicit form,
   no solve) and the other own formulations, each named; and the same
   counts of ``panda`` (numeric inertia from its URDF);
2. inverse dynamics of ``stanford_arm`` (tau = M q'' - f) against Kane &
   Levinson's 646 multiplications / 394 additions, under three inertia
   assumption sets (:data:`ASSUMPTION_SETS`), by each formulation's M and
   f (the explicit form of ``kane_articulated`` has no M and is not
   counted here) and by Kane's equations evaluated recursively in body
   frames (``kane_recursive``);
3. the compiled (C) right-hand side on ``panda`` and ``ur5`` against
   Pinocchio's ``aba`` per call (the same state, the accelerations
   compared), each formulation;
4. derivation seconds of each own formulation on each robot against
   ``sympy_kane``'s;
5. the seconds :func:`eomcompare.systems.from_urdf` takes to declare a chain of n
   links (:func:`urdf_chain`), which grows with n, not with 2**n;
6. Khalil's robots against SYMORO (:mod:`eomcompare.bench.khalil`);
7. floating bases (:mod:`eomcompare.bench.floating`): three-way agreement
   with Pinocchio and MuJoCo, the floating quadruped's compiled rhs and
   derivation, the floating-base operation-count table.

Each derivation and count runs in a child process under a time cap, so
a case that does not finish is recorded as ``capped`` and cannot hang the
run.  Ratios are printed; nothing here is a timed test.
"""

from __future__ import annotations

import csv
import functools
import statistics
import time
from pathlib import Path

import numpy as np

from .robots_report import (
    ASSUMPTION_SETS,
    ASSUMPTIONS,
    KANE_LEVINSON,
    _chain_markdown,
    _dash,
    _derive_markdown,
    _md_section,
    _panda_markdown,
    _rhs_markdown,
    _stanford_markdown,
)
from .rows import capped as _capped
from .rows import derive_row, merge_sections
from .rows import target_row as _target_row

__all__ = [
    "bench_robots",
    "urdf_chain",
    "OWN",
    "ROBOTS",
    "ASSUMPTIONS",
    "ASSUMPTION_SETS",
]

OWN = (
    "kane",
    "kane_composite",
    "kane_articulated",
    "lagrange",
    "modified_lagrange",
    "gibbs_appell",
)
#: Formulations whose equations are the explicit form u' = forcing: no
#: mass matrix to form the inverse dynamics tau = M q'' - f from.
EXPLICIT = ("kane_articulated",)
#: The algorithm each robot target is met by (:func:`robot_targets`).
TARGET_MET_BY = {
    "chain": "kane_articulated",
    "stanford": "kane_recursive",
    "rhs": "kane_articulated",
}
ROBOTS = ("ur5", "panda", "puma560", "stanford_arm")
#: The robots of the compiled right-hand-side part (those of ``robots`` among
#: them).
RHS_ROBOTS = ("panda", "ur5")


def _aba(n):
    from .literature_counts import featherstone

    return featherstone(n)["ABA"]


def _chain_case(n, formulation, system="spatial_chain"):
    """Forward-dynamics counts of ``system`` (``spatial_chain(n)``, or a
    catalogue robot with n None)."""
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    from .literature_counts import forward_dynamics_counts

    t0 = time.perf_counter()
    eom = get_formulation(formulation, count_ops=False).derive(
        get_system(system) if n is None else get_system(system, n=n)
    )
    derive = time.perf_counter() - t0
    t0 = time.perf_counter()
    fd = forward_dynamics_counts(eom)
    return {
        "fd_mul": fd["total"].mul,
        "fd_add": fd["total"].add,
        "fd_calls": sum(fd["mf"].calls.values()),
        "derive_s": round(derive, 2),
        "count_s": round(time.perf_counter() - t0, 2),
    }


def _stanford_case(formulation, assumptions="general"):
    """Inverse-dynamics counts of the Stanford arm under one of
    :data:`ASSUMPTION_SETS`: ``tau = M q'' - f`` of a formulation's
    equations, or (``"kane_recursive"``) Kane's equations evaluated
    recursively in body frames, without M."""
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    from .literature_counts import (
        inverse_dynamics_counts,
        recursive_inverse_dynamics_counts,
    )

    ms = get_system(
        "stanford_arm", symbolic_inertia=True, **ASSUMPTION_SETS[assumptions][0]
    )
    if formulation == "kane_recursive":
        inv = recursive_inverse_dynamics_counts(ms)
    else:
        eom = get_formulation(formulation, count_ops=False).derive(ms)
        inv = inverse_dynamics_counts(eom)
    return {
        "id_mul": inv.mul,
        "id_add": inv.add,
        "id_calls": sum(inv.calls.values()),
        "param_mul": inv.param_mul,
        "param_add": inv.param_add,
    }


def _derive_seconds(system, formulation):
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    ms = get_system(system)
    return get_formulation(formulation, count_ops=False).derive(ms).timings["total"]


def urdf_chain(n: int) -> str:
    """The URDF text of a chain of ``n`` continuous joints about the x, y
    and z axes in turn, each link (1 kg, mass centre a quarter metre down)
    half a metre below its parent."""
    parts = ['<robot name="chain"><link name="l0"/>']
    for k in range(1, n + 1):
        axis = ("1 0 0", "0 1 0", "0 0 1")[k % 3]
        parts.append(
            f'<link name="l{k}"><inertial><origin xyz="0 0 -0.25"/>'
            f'<mass value="1"/><inertia ixx="0.02" iyy="0.02" izz="0.005" '
            f'ixy="0" ixz="0" iyz="0"/></inertial></link>'
            f'<joint name="j{k:03d}" type="continuous"><parent link="l{k - 1}"/>'
            f'<child link="l{k}"/><origin xyz="0 0 -0.5"/><axis xyz="{axis}"/>'
            f"</joint>"
        )
    return "".join(parts) + "</robot>"


def _urdf_seconds(n):
    """(CPU, wall) seconds of ``from_urdf`` on :func:`urdf_chain` ``(n)``."""
    from eomcompare.systems import from_urdf

    text = urdf_chain(n)
    cpu, wall = time.process_time(), time.perf_counter()
    from_urdf(text)
    return time.process_time() - cpu, time.perf_counter() - wall


def _rhs_case(system, formulations, repeats):
    """Microseconds per call of the C right-hand side of each formulation
    and of Pinocchio's aba (one state), and the largest q'' difference.

    The results are keyed by formulation.  The calls of every case are interleaved
    over the repeats (aba's too), so that a load on a shared machine
    weighs on all of them alike, and each is the median of its repeats."""
    import pinocchio as pin

    from eomcompare.formulations import get_formulation
    from eomcompare.numeric.compiled import DEFAULT_CFLAGS, default_cflags
    from eomcompare.references.robot_oracle import (
        pinocchio_configuration,
        urdf_pinocchio_model,
    )
    from eomcompare.systems import get_system

    from .timing import per_call

    ms = get_system(system)
    model = urdf_pinocchio_model(ms)
    data = model.createData()
    t0, q, qd = ms.states.random_state(seed=1)
    pq = pinocchio_configuration(model, q)
    v = np.asarray(qd, dtype=float)
    tau = np.zeros(model.nv)
    ref = np.array(pin.aba(model, data, pq, v, tau))
    calls = {"aba": lambda: pin.aba(model, data, pq, v, tau)}
    # The default build is for this machine's processor where the compiler
    # takes it; the build with the baseline flags alone is timed beside it,
    # the instruction set a portable binary (as Pinocchio's package) has.
    flags = default_cflags()
    baseline = tuple(DEFAULT_CFLAGS) if tuple(DEFAULT_CFLAGS) != flags else None
    out = {}
    for label in formulations:
        eom = get_formulation(label, count_ops=False).derive(ms)
        cm = eom.numeric(backend="c")
        x = cm.state_from(q, qd, t0)
        calls[label] = functools.partial(cm.rhs, t0, x)
        out[f"{label}_maxdiff"] = float(
            np.max(np.abs(cm.coordinate_accelerations(t0, q, qd) - ref))
        )
        if baseline is not None:
            portable = eom.numeric(backend="c", cflags=baseline)
            calls[f"{label}_baseline"] = functools.partial(portable.rhs, t0, x)
    runs = {label: [] for label in calls}
    for _ in range(repeats):
        for label, call in calls.items():
            runs[label].append(per_call(call, 1))
    out["cflags"] = " ".join(flags)
    out["aba_us"] = statistics.median(runs.pop("aba")) * 1e6
    for label, times in runs.items():
        out[f"{label}_c_us"] = statistics.median(times) * 1e6
    return out


def _baseline_columns(got, label) -> dict:
    """The baseline-flags build's microseconds and ratio to aba, where it
    was timed (the default build used flags beyond the baseline)."""
    us = got.get(f"{label}_baseline_c_us")
    if us is None:
        return {}
    return {
        "baseline_c_us": round(us, 3),
        "baseline_ratio": round(us / got["aba_us"], 3),
    }


def _write_csv(path: Path, rows):
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def bench_robots(
    out,
    log,
    *,
    ns=range(1, 9),
    formulations=OWN,
    robots=ROBOTS,
    cap=120.0,
    repeats=5,
    parts=None,
    urdf_ns=(10, 20, 30),
) -> dict:
    """Run the robot section; write ``robots_*.csv`` and ``robots.md``
    into ``out`` and return the rows by part.

    Parameters
    ----------
    out : path
    log : callable
        Receives each line as it is measured.
    ns : iterable of int
        Sizes of ``spatial_chain`` (a formulation capped at n is not tried
        at larger n).
    cap : float
        Seconds for one derivation (and its count) in a child process.
    parts : set of str, optional
        Any of ``"chain"``, ``"panda"``, ``"stanford"``, ``"rhs"``,
        ``"derive"``, ``"urdf"``, ``"khalil"``, ``"floating"`` (all by
        default; the last two write ``khalil.csv``,
        :mod:`eomcompare.bench.khalil`, and ``floating.csv``,
        :mod:`eomcompare.bench.floating`).  ``robots.md`` keeps the
        sections of the parts not run from the file already in ``out``.
    robots : iterable of str
        The robots of the parts that take robots (the right-hand-side part
        times those of :data:`RHS_ROBOTS` among them).
    urdf_ns : iterable of int
        Links of the URDF chains part 5 declares.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    parts = (
        {"chain", "panda", "stanford", "rhs", "derive", "urdf", "khalil", "floating"}
        if parts is None
        else set(parts)
    )
    result = {}
    lines = [
        "# Robots: operation counts against the literature, speed against Pinocchio",
        "",
    ]
    if "chain" in parts:
        log(
            "robots 1. spatial_chain(n) forward dynamics after cse against "
            "ABA (224n-259 mul / 205n-248 add)"
        )
        rows, capped = [], set()
        for n in ns:
            am, aa = _aba(n)
            for f in formulations:
                row = {
                    "n": n,
                    "formulation": f,
                    "aba_mul": am,
                    "aba_add": aa,
                }
                got = None if f in capped else _capped(_chain_case, n, f, cap=cap)
                if got is None:
                    capped.add(f)
                    row["status"] = "capped"
                else:
                    row.update(got, status="ok")
                    row["ratio_mul"] = round(got["fd_mul"] / am, 3) if am > 0 else None
                    row["ratio_total"] = (
                        round((got["fd_mul"] + got["fd_add"]) / (am + aa), 3)
                        if am + aa > 0
                        else None
                    )
                rows.append(row)
                log(
                    f"  n={n} {f:18s} "
                    + (
                        f"{row['fd_mul']}/{row['fd_add']} vs ABA {am}/{aa}: "
                        f"x{_dash(row['ratio_total'])} (derive {row['derive_s']} s, "
                        f"count {row['count_s']} s)"
                        if row["status"] == "ok"
                        else f"capped at {cap:g} s"
                    )
                )
        _write_csv(out / "robots_chain.csv", rows)
        result["chain"] = rows
        lines += _chain_markdown(rows, formulations, cap)
    if "panda" in parts:
        log("robots 1b. panda forward dynamics after cse (numeric inertia)")
        rows = []
        for f in formulations:
            got = _capped(_chain_case, None, f, "panda", cap=cap)
            row = {"system": "panda", "formulation": f}
            row.update(got or {}, status="ok" if got else "capped")
            rows.append(row)
            log(
                f"  panda {f:18s} "
                + (
                    f"{row['fd_mul']}/{row['fd_add']} (derive {row['derive_s']} s)"
                    if got
                    else f"capped at {cap:g} s"
                )
            )
        _write_csv(out / "robots_panda.csv", rows)
        result["panda"] = rows
        lines += _panda_markdown(rows, cap)
    if "stanford" in parts:
        log("robots 2. stanford_arm inverse dynamics against Kane & Levinson's 646/394")
        rows = []
        for assumptions in ASSUMPTION_SETS:
            for f in (
                *[g for g in formulations if g not in EXPLICIT],
                "kane_recursive",
            ):
                got = _capped(_stanford_case, f, assumptions, cap=cap)
                row = {
                    "assumptions": assumptions,
                    "formulation": f,
                    "kl_mul": KANE_LEVINSON[0],
                    "kl_add": KANE_LEVINSON[1],
                }
                if got is None:
                    row["status"] = "capped"
                else:
                    row.update(got, status="ok")
                    row["ratio_mul"] = round(got["id_mul"] / KANE_LEVINSON[0], 3)
                    row["ratio_add"] = round(got["id_add"] / KANE_LEVINSON[1], 3)
                rows.append(row)
                log(
                    f"  {assumptions}: {f:18s} "
                    + (
                        f"{row['id_mul']}/{row['id_add']}: "
                        f"x{row['ratio_mul']} / x{row['ratio_add']}"
                        if got
                        else "capped"
                    )
                )
        _write_csv(out / "robots_stanford.csv", rows)
        result["stanford"] = rows
        lines += _stanford_markdown(rows)
    if "rhs" in parts:
        log("robots 3. compiled rhs against Pinocchio aba, us per call")
        rows = []
        for system in [r for r in RHS_ROBOTS if r in robots]:
            cases = list(formulations)
            try:
                got = _capped(
                    _rhs_case,
                    system,
                    tuple(cases),
                    repeats,
                    cap=cap * len(cases),
                )
            except Exception as exc:  # no compiler or no Pinocchio: reported
                log(f"  {system}: not measured ({type(exc).__name__}: {exc})")
                continue
            if got is None:
                log(f"  {system}: capped")
                continue
            for label in cases:
                rows.append(
                    {
                        "system": system,
                        "formulation": label,
                        "c_us": round(got[f"{label}_c_us"], 3),
                        "aba_us": round(got["aba_us"], 3),
                        "ratio": round(got[f"{label}_c_us"] / got["aba_us"], 3),
                        "qdd_maxdiff": got[f"{label}_maxdiff"],
                        "cflags": got["cflags"],
                    }
                    | _baseline_columns(got, label)
                )
                log(
                    f"  {system} {label:18s} C {got[f'{label}_c_us']:.2f} us, "
                    f"aba {got['aba_us']:.2f} us: x{rows[-1]['ratio']}"
                )
        _write_csv(out / "robots_rhs.csv", rows)
        result["rhs"] = rows
        lines += _rhs_markdown(rows)
    if "derive" in parts:
        log("robots 4. derivation seconds against sympy_kane")
        rows = []
        for system in robots:
            peer = _capped(_derive_seconds, system, "sympy_kane", cap=cap)
            for f in formulations:
                own = _capped(_derive_seconds, system, f, cap=cap)
                row = derive_row(own, peer, system=system, formulation=f)
                rows.append(row)
                log(
                    f"  {system} {f:18s} {row['derive_s']} s vs sympy_kane "
                    f"{row['sympy_kane_s'] if peer is not None else 'capped'}"
                    + (f": x{row['ratio']}" if "ratio" in row else "")
                )
        _write_csv(out / "robots_derive.csv", rows)
        result["derive"] = rows
        lines += _derive_markdown(rows, cap)
    if "urdf" in parts:
        log("robots 5. from_urdf seconds of a chain of n links")
        rows = []
        for n in urdf_ns:
            got = _capped(_urdf_seconds, n, cap=cap)
            row = {"n": n, "status": "capped" if got is None else "ok"}
            if got is not None:
                row["cpu_s"], row["wall_s"] = round(got[0], 2), round(got[1], 2)
            rows.append(row)
            log(
                f"  n={n}: "
                + (
                    f"{row['cpu_s']} s CPU, {row['wall_s']} s wall"
                    if got
                    else f"capped at {cap:g} s"
                )
            )
        _write_csv(out / "robots_urdf.csv", rows)
        result["urdf"] = rows
        lines += _md_section(
            "Declaring a URDF chain of n links",
            f"from_urdf on bench.robots.urdf_chain(n), in a child process "
            f"capped at {cap:g} s; target: 30 links in under 5 s.",
            ["n", "CPU s", "wall s"],
            [
                [r["n"], r.get("cpu_s", "capped"), r.get("wall_s", "capped")]
                for r in rows
            ],
        ) + [""]
    if "khalil" in parts:
        from .khalil import bench_khalil

        log("robots 6. Khalil's robots against SYMORO (bench.khalil)")
        result["khalil"] = bench_khalil(out, lambda m: log("  " + m), cap=cap)
    if "floating" in parts:
        from .floating import bench_floating
        from .floating_report import floating_markdown

        result["floating"] = bench_floating(out, log, cap=cap)
        lines += floating_markdown(result["floating"], cap)
    text, md = "\n".join(lines) + "\n", out / "robots.md"
    # A run of some parts keeps the other parts' sections of the last run.
    md.write_text(merge_sections(md.read_text(), text) if md.exists() else text)
    return result


def _given(x) -> bool:
    """A measured cell: not None, empty or NaN (a CSV read back)."""
    return x is not None and x != "" and not (isinstance(x, float) and x != x)


def robot_targets(result) -> list[dict]:
    """The robot section's targets as rows of the benchmark's target table
    (``target, value, limit, status, note``), each naming the algorithm
    that meets it (:data:`TARGET_MET_BY`):

    - spatial_chain(n), every measured n >= 2: forward dynamics at most
      ABA's multiplications and additions, by ``kane_articulated`` (value:
      the largest of FD mul / ABA mul and FD add / ABA add);
    - Stanford arm inverse dynamics with general inertia at most Kane &
      Levinson's 646 multiplications and 394 additions, by
      ``kane_recursive`` (value: the larger of the two ratios);
    - compiled rhs of panda and ur5 at most Pinocchio's aba per call, by
      ``kane_articulated``;
    - derivation seconds of every own formulation at most 0.25 of
      sympy_kane's on each robot (value: the largest ratio, the
      formulation named; sympy_kane capped counts as met);
    - from_urdf declares a chain of 30 links in under 5 s of CPU;
    - Khalil's robots at most 0.9 x SYMORO's counts
      (:func:`eomcompare.bench.khalil.khalil_targets`).

    ``result`` maps part names to their rows (what :func:`bench_robots`
    returns, or its CSV files read back); a part not present gives no row,
    a part without the algorithm's row a "not measured" one.
    """
    out = []
    chain = result.get("chain") or []
    if chain:
        who = TARGET_MET_BY["chain"]
        mine = [
            r
            for r in chain
            if r["formulation"] == who and r["status"] == "ok" and int(r["n"]) >= 2
        ]
        worst = max(
            (
                max(
                    float(r["fd_mul"]) / float(r["aba_mul"]),
                    float(r["fd_add"]) / float(r["aba_add"]),
                )
                for r in mine
            ),
            default=None,
        )
        ns = sorted(int(r["n"]) for r in mine)
        out.append(
            _target_row(
                f"robots: spatial_chain FD / ABA (mul and add), {who}",
                None if worst is None else round(worst, 3),
                1.0,
                f"n = {ns[0]}..{ns[-1]}" if ns else "no n >= 2 measured",
            )
        )
    stanford = result.get("stanford") or []
    if stanford:
        who = TARGET_MET_BY["stanford"]
        row = next(
            (
                r
                for r in stanford
                if r["formulation"] == who
                and r.get("assumptions", "general") == "general"
                and r["status"] == "ok"
            ),
            None,
        )
        value = None
        if row is not None:
            value = round(
                max(
                    float(row["id_mul"]) / KANE_LEVINSON[0],
                    float(row["id_add"]) / KANE_LEVINSON[1],
                ),
                3,
            )
        out.append(
            _target_row(
                f"robots: stanford_arm ID / Kane & Levinson 646/394, {who}",
                value,
                1.0,
                "general inertia"
                + ("" if row is None else f": {row['id_mul']}/{row['id_add']}"),
            )
        )
    who = TARGET_MET_BY["rhs"]
    for r in result.get("rhs") or []:
        if r["formulation"] == who:
            out.append(
                _target_row(
                    f"robots: {r['system']} C rhs / Pinocchio aba, {who}",
                    float(r["ratio"]),
                    1.0,
                    f"{float(r['c_us']):.2f} us / {float(r['aba_us']):.2f} us",
                )
            )
    derive = result.get("derive") or []
    for system in dict.fromkeys(r["system"] for r in derive):
        rows = [r for r in derive if r["system"] == system]
        ratios = [
            (float(r["ratio"]), r["formulation"])
            for r in rows
            if _given(r.get("ratio"))
        ]
        peer_capped = not any(_given(r.get("sympy_kane_s")) for r in rows)
        own_done = all(_given(r.get("derive_s")) for r in rows)
        if peer_capped and own_done:
            out.append(
                _target_row(
                    f"robots: {system} derivation / sympy_kane, slowest own",
                    0.0,
                    0.25,
                    "sympy_kane capped",
                )
            )
            continue
        worst = max(ratios, default=None)
        out.append(
            _target_row(
                f"robots: {system} derivation / sympy_kane, slowest own",
                None if worst is None or not own_done else worst[0],
                0.25,
                "" if worst is None else worst[1],
            )
        )
    if result.get("khalil"):
        from .khalil import khalil_targets

        out += khalil_targets(result["khalil"])
    if result.get("floating"):
        from .floating_report import floating_targets

        out += floating_targets(result["floating"])
    for r in result.get("urdf") or []:
        if int(r["n"]) == 30:
            out.append(
                _target_row(
                    "robots: from_urdf of a 30-link chain (CPU seconds)",
                    float(r["cpu_s"]) if _given(r.get("cpu_s")) else None,
                    5.0,
                    r["status"],
                )
            )
    return out
