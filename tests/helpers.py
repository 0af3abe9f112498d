"""Small hand-checkable systems shared by several test modules."""

from __future__ import annotations

import math

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.systems import MechanicalSystem


def planar_particle(constraint, *, speeds=("u_x", "u_y"), body="bob"):
    """A particle P at (x, y) in the plane of N with speeds (x', y'), x
    independent and y dependent through the holonomic constraint
    ``constraint(x, y) = 0``; no loads.

    Returns ``(system, (x, y, ux, uy, N, O, P, particle))``; ``particle``
    has mass symbol ``m``.
    """
    x, y = me.dynamicsymbols("x y")
    ux, uy = me.dynamicsymbols(" ".join(speeds))
    m = sm.Symbol("m", positive=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, ux * N.x + uy * N.y)
    system = me.System(N, O)
    system.add_coordinates(x)
    system.add_coordinates(y, independent=False)
    system.add_speeds(ux)
    system.add_speeds(uy, independent=False)
    system.add_kdes(ux - x.diff(), uy - y.diff())
    system.add_holonomic_constraints(constraint(x, y))
    particle = me.Particle(body, P, m)
    system.add_bodies(particle)
    return system, (x, y, ux, uy, N, O, P, particle)


def cartesian_pendulum(
    *,
    length: float = 0.9,
    x0: float = 0.5,
    ux0: float = 0.0,
    explicit: bool = False,
    random_spread: float = 0.3,
    speed_scale: float = 2.0,
) -> MechanicalSystem:
    """A particle (mass m) on a massless rod of length l about O, gravity -y,
    in redundant Cartesian coordinates: x independent, y dependent,
    ``x^2 + y^2 - l^2 = 0``, hanging branch y < 0.

    With ``explicit`` the solution ``y = -sqrt(l^2 - x^2)`` is declared.
    """
    g, l = sm.symbols("g l", positive=True)
    system, (x, y, ux, uy, N, O, P, bob) = planar_particle(
        lambda x, y: x**2 + y**2 - l**2
    )
    m = bob.mass
    system.add_loads(me.Force(P, -m * g * N.y))
    return MechanicalSystem(
        name="cartesian_pendulum",
        system=system,
        parameters={m: 1.3, g: 9.81, l: length},
        initial_state={x: x0, y: -math.sqrt(length**2 - x0**2), ux: ux0},
        dependent_solutions={y: -sm.sqrt(l**2 - x**2)} if explicit else None,
        random_spread=random_spread,
        speed_scale=speed_scale,
    )


def power_balance(ms):
    """The terms of d(T + V)/dt along the motion, as a numeric function of
    (q, q', q''): T from the declared bodies, V the declared potential.

    For a conservative declaration the terms sum to zero with the true
    accelerations; their largest magnitude gives the scale of the check.
    """
    t = me.dynamicsymbols._t
    N = ms.frame
    qs, qds = list(ms.coordinates), [q.diff(t) for q in ms.coordinates]
    qdds = [q.diff(t, 2) for q in ms.coordinates]
    T = sm.sympify(sum(b.kinetic_energy(N) for b in ms.bodies))
    E = T.xreplace(dict(ms.kinematics.u_of_qdot)) + ms.potential_energy
    terms = [E.diff(q) * qd for q, qd in zip(qs, qds)] + [
        E.diff(qd) * qdd for qd, qdd in zip(qds, qdds)
    ]
    Q, QD, QDD = (sm.symbols(f"{s}0:{len(qs)}") for s in ("Q", "QD", "QDD"))
    rep = dict(zip(qdds, QDD)) | dict(zip(qds, QD)) | dict(zip(qs, Q))
    terms = [sm.sympify(e).xreplace(rep).xreplace(dict(ms.parameters)) for e in terms]
    return sm.lambdify([Q, QD, QDD], terms)


def run_args(out, systems, formulations=("kane",), *, t_final, jobs=1, extra=()):
    """Arguments of ``python -m eomcompare run`` for a small run of ``systems``
    with ``formulations``: quiet, no report, rows in ``out``."""
    return [
        "run",
        "--systems",
        *systems,
        "--formulations",
        *formulations,
        "--t-final",
        str(t_final),
        "--jobs",
        str(jobs),
        *extra,
        "--quiet",
        "--no-report",
        "--out",
        str(out),
    ]


#: The caches' variables a run may point elsewhere
#: (``formulations.cache.use_private_cache_if_refused``); :func:`cli_in_process`
#: puts them back.
_RUN_ENVIRONMENT = ("EOMCOMPARE_CACHE", "EOMCOMPARE_KEY")


def cli_in_process(*args, env=None):
    """``python -m eomcompare ARGS`` run in this process, as a
    :class:`subprocess.CompletedProcess` (``returncode``, ``stdout``,
    ``stderr``): the same entry point (:func:`eomcompare.cli.main`, whose
    value ``python -m eomcompare`` exits with), in the repository's root
    as the tests' subprocesses run, without starting an interpreter that
    imports sympy, numpy, scipy and pandas again (seconds each).

    For the tests of what a command computes, refuses or prints; a test
    about the process itself (signals, a killed worker, a limit on the
    files it writes) starts one.  The output is taken where a subprocess's
    would be, from file descriptors 1 and 2, so that what the command's
    worker processes print (forked with them) is read too.  ``env`` sets
    variables for the call (the derivation cache, ``EOMCOMPARE_CACHE``);
    they, the caches' variables and the systems a user's module registers
    in the catalogue are put back afterwards.  An argparse exit
    (``--help``, a usage error) is its status.  An exception the command
    does not turn into a status is raised, where a subprocess would have
    printed its traceback.
    """
    import contextlib
    import io
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from eomcompare.cli import main
    from eomcompare.systems import CATALOGUE

    root = Path(__file__).resolve().parent.parent
    argv = [str(a) for a in args]
    env = {k: str(v) for k, v in (env or {}).items()}
    saved = {k: os.environ.get(k) for k in {*env, *_RUN_ENVIRONMENT}}
    systems = set(CATALOGUE)
    sys.stdout.flush()
    sys.stderr.flush()
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(tempfile.TemporaryFile()) for _ in "12"]
        fds = [os.dup(1), os.dup(2)]
        for fd, file in zip((1, 2), files):
            os.dup2(file.fileno(), fd)
        # Unbuffered: a worker ending with os._exit loses nothing.
        out, err = (
            io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), write_through=True)
            for fd in (1, 2)
        )
        os.environ.update(env)
        try:
            with (
                contextlib.chdir(root),
                contextlib.redirect_stdout(out),
                contextlib.redirect_stderr(err),
            ):
                try:
                    code = main(argv)
                except SystemExit as exc:
                    code = (
                        exc.code if isinstance(exc.code, int) else int(bool(exc.code))
                    )
        finally:
            out.close()
            err.close()
            for fd, copy in zip((1, 2), fds):
                os.dup2(copy, fd)
                os.close(copy)
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            for name in set(CATALOGUE) - systems:
                del CATALOGUE[name]
        text = []
        for file in files:
            file.seek(0)
            text.append(file.read().decode("utf-8", errors="replace"))
    return subprocess.CompletedProcess(argv, code, *text)


def file_size_limit(nbytes: int):
    """A ``preexec_fn`` for :mod:`subprocess`: files the process writes
    stop at ``nbytes`` (``RLIMIT_FSIZE``), a write beyond failing with
    EFBIG instead of killing it (SIGXFSZ ignored), as on a disk that
    fills; no root needed, inherited by its child processes."""
    import resource
    import signal

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))

    return limit


def worst_relative_deviation(model, ms, oracle, n_states):
    """Largest ``max|ours - ref| / max(1, max|ref|)`` of ``model``'s q''
    against ``oracle(q, qd)`` at ``ms.states.random_state(seed)``, seeds
    ``0 .. n_states - 1``."""
    import numpy as np

    worst = 0.0
    for seed in range(n_states):
        t0, q, qd = ms.states.random_state(seed)
        ours = model.coordinate_accelerations(t0, q, qd)
        ref = oracle(q, qd)
        scale = max(1.0, float(np.max(np.abs(ref))))
        worst = max(worst, float(np.max(np.abs(ours - ref))) / scale)
    return worst


#: Every refusal a test may meet deriving a catalogue system (the names
#: and option tuples of tests/test_contract.py), by (formulation, system,
#: options): the exception kind and a phrase of its message.  The peers
#: (sympy_kane, sympy_lagrange) refuse none of them; the two tree
#: algorithms refuse what is not a tree (kane_articulated: every catalogue
#: system not declared by systems.declare_tree, see
#: :func:`expected_refusal`).  Anything else fails the test that meets it.
EXPECTED_REFUSALS = {
    # Closed loops and absolute angles: no speed moves its bodies as one
    # rigid motion in a tree.
    **{
        ("kane_composite", "crank_slider", ((c_opt, c_val),)): "not a tree of twists"
        for c_opt, c_val in (("coordinates", "redundant"), ("coordinates", "minimal"))
    },
    ("kane_composite", "double_pendulum", ()): "not a tree of twists",
    (
        "kane_composite",
        "four_bar",
        (("coordinates", "minimal"),),
    ): "not a tree of twists",
    (
        "kane_composite",
        "n_link_pendulum",
        (("angles", "absolute"), ("n", 3)),
    ): "not a tree of twists",
    # A02's closed loops (IFToMM): no tree of twists either.
    ("kane_composite", "n_four_bar", ()): "not a tree of twists",
    # A04, Bricard's mechanism: five closure constraints for four
    # dependent coordinates (one redundant everywhere), which sympy's
    # KanesMethod refuses outright and which the formulations that form
    # constraint rows from the declared constraints cannot invert.
    (
        "sympy_kane",
        "bricard",
        (),
    ): "equal number of dependent coordinates and configuration constraints",
    ("sympy_lagrange", "bricard", ()): "has redundant velocity constraints",
}


def expected_refusal(formulation, ms, options, exc) -> bool:
    """Whether ``exc``, raised by ``formulation`` deriving the catalogue
    system ``ms`` built with ``options`` (a tuple of pairs), is one of the
    listed refusals: an :class:`~eomcompare.formulations.UnsupportedSystemError`
    with the listed phrase, or kane_articulated's refusal of a system
    that is not a joint tree of ``declare_tree`` (the declaration's own
    fact, ``ms.joint_tree``)."""
    from eomcompare.formulations import UnsupportedSystemError

    if not isinstance(exc, UnsupportedSystemError) or not str(exc):
        return False
    if formulation == "kane_articulated":
        return getattr(ms, "joint_tree", None) is None and (
            "needs a tree of one-coordinate joints" in str(exc)
        )
    phrase = EXPECTED_REFUSALS.get((formulation, ms.name, tuple(options)))
    return phrase is not None and phrase in str(exc)


def git_ls_files(*patterns: str) -> list[str]:
    """The files git tracks in this checkout matching ``patterns``
    (repository-relative paths)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        ["git", "ls-files", *patterns],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def parallelogram_branch(n=2, t_final=10.0, g=9.81):
    """IFToMM A02 on its parallelogram branch, solved independently of the
    project: a physical pendulum in the crank angle phi0,
    ((n+1)/3 + n) phi0'' = -((n+1)/2 + n) g cos(phi0) (unit masses and
    lengths), phi0 = pi/2 and phi0' = -1 at the start (the
    specification); its events are the times the linkage is horizontal,
    sin(phi0) = 0, the singular positions."""
    import numpy as np
    from scipy.integrate import solve_ivp

    inertia, moment = (n + 1) / 3 + n, (n + 1) / 2 + n

    def horizontal(tt, y):
        return np.sin(y[0])

    return solve_ivp(
        lambda tt, y: [y[1], -moment * g * np.cos(y[0]) / inertia],
        (0.0, t_final),
        [np.pi / 2, -1.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        dense_output=True,
        events=horizontal,
    )


def write_report_text(result, out, **kw):
    """``compare.report.write_report`` of ``result`` into ``out``, with the
    Markdown and HTML it wrote: ``(paths, markdown, html)``.  The optional
    sections' tables are given (or read from ``out``): the report derives
    nothing."""
    from eomcompare.compare.report import write_report

    paths = write_report(result, out, **kw)
    return (
        paths,
        paths["markdown"].read_text(encoding="utf-8"),
        paths["html"].read_text(encoding="utf-8"),
    )


def md_section(markdown: str, title: str) -> str:
    """The text of one ``## title`` section of a Markdown report."""
    start = markdown.index(f"## {title}")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end >= 0 else None]


def md_table_row(section: str, first_cell: str) -> list[str]:
    """The cells of the Markdown table row that starts with ``first_cell``."""
    line = next(l for l in section.splitlines() if l.startswith(f"| {first_cell} |"))
    return [c.strip() for c in line.strip("|").split("|")]


# The customised Newton-Euler model's tests (tests/formulations/
# test_newton_euler*.py): q'' as these symbols, one per joint.
NE_ACCELERATIONS = sm.symbols("zdd0:6")


def tau_function(ms, tau, extra=()):
    """tau (in q, q' and :data:`NE_ACCELERATIONS`) as a numeric function
    of (q, q', q'', extra values), the system's parameters at their
    values."""
    q, u = list(ms.coordinates), list(ms.speeds)
    rule = {v.diff(me.dynamicsymbols._t): w for v, w in zip(q, u)}
    e = sm.Matrix(tau).xreplace(rule)
    f = sm.lambdify([*q, *u, *NE_ACCELERATIONS, *ms.parameters, *extra], e, cse=True)
    p = [float(v) for v in ms.parameters.values()]
    return lambda q, v, a, x=(): np.asarray(f(*q, *v, *a, *p, *x), float).ravel()


def random_states(n, count=5, seed=4):
    """``count`` random (q, q', q'') of n joints, each entry in [-1.5, 1.5]."""
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-1.5, 1.5, n) for _ in range(3)) for _ in range(count)]


def customised_counts(ms, inertia, params, **options):
    """(mul, add) of the customised Newton-Euler program of a small chain
    with the given inertia, its symbols ``params`` constants."""
    from eomcompare.formulations.newton_euler import customised_inverse_dynamics
    from eomcompare.symbolic.literature_counts import assignments_counts

    prog, _ = customised_inverse_dynamics(
        ms, NE_ACCELERATIONS[: len(inertia)], inertia=inertia, program=True, **options
    )
    c = assignments_counts(prog, set(params) | set(ms.parameters))
    return c.mul, c.add


def random_expression(draw, leaves, unary, binary, depth):
    """A random sympy expression for a hypothesis ``composite``: a leaf, or
    one of ``unary`` of a smaller one, or one of ``binary`` of two, at most
    ``depth`` deep (a leaf one time in four at every level)."""
    from hypothesis import strategies as st

    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(leaves))
    if draw(st.booleans()):
        return draw(st.sampled_from(unary))(
            random_expression(draw, leaves, unary, binary, depth - 1)
        )
    a = random_expression(draw, leaves, unary, binary, depth - 1)
    b = random_expression(draw, leaves, unary, binary, depth - 1)
    return draw(st.sampled_from(binary))(a, b)


def report_of_later_parts(monkeypatch, title, part, n=2):
    """Make the report's head a title and ``n`` parts ``part``, each made
    later in the report's forked workers (``report_blocks.Later``); skip
    where there is no fork, since the parts are made in forked workers
    only."""
    import os
    from pathlib import Path

    import pytest

    from eomcompare.compare import report as report_module
    from eomcompare.compare.report_blocks import Later

    if not hasattr(os, "fork"):
        pytest.skip("parts are made in forked workers only where fork exists")

    def head(result, out, figures=True):
        rep = report_module.Report(Path(out))
        rep.h(1, title)
        rep.blocks += [Later(part) for _ in range(n)]
        return rep, None

    monkeypatch.setattr(report_module, "_build_head", head)
