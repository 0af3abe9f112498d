"""Measurements of other ways of deriving what a method derives, kept out
of the method modules: the cost of the ways of forming the Gibbs-Appell
acceleration energy and eliminating the dependent speed rates beside
Kane's method (the variants themselves, :class:`GibbsAppellVariant`,
live here: ``gibbs_appell`` is the method as printed).  Kolev's
modified equations beside the approaches the paper improves on are the
main job's (:mod:`eomcompare.compare.kolev_costs`).

``python -m eomcompare.bench.methods gibbs_appell [--max-n N] [--systems ...]`` prints
the table.
"""

from __future__ import annotations

import dataclasses
import sys

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.formulations.base import (
    Derivation,
    solve_dependent_speeds,
    speed_form,
)
from eomcompare.formulations.gibbs_appell import (
    GibbsAppell,
    acceleration_energy,
    generalized_active_forces,
)
from eomcompare.symbolic.calculus import jacobian, substitute
from eomcompare.symbolic.frames import sub
from eomcompare.systems import CATALOGUE, get_system

__all__ = [
    "GibbsAppellVariant",
    "STRATEGIES",
    "FRAMES",
    "ELIMINATIONS",
    "gibbs_appell_variants",
    "gibbs_appell_main",
]

_t = me.dynamicsymbols._t


# ----------------------------------------------------------------------
# Gibbs-Appell: the ways of forming S, beside Kane's method
# ----------------------------------------------------------------------
#: How S may be formed (:class:`GibbsAppellVariant`); "summed" is the
#: registered formulation's own.
STRATEGIES = ("components", "split", "full", "summed", "expanded")
#: Vector components through the shared FrameAlgebra or sympy's own DCMs.
FRAMES = ("merged", "sympy")
#: How the dependent speed rates may leave the equations: kept as unknowns
#: with the differentiated constraints appended (the registered method's
#: way), or eliminated before S is formed or after differentiating.
ELIMINATIONS = ("append", "substitute", "chain")


class _SympyFrames:
    """Vector components through sympy's own direction cosine matrices."""

    @staticmethod
    def components(vec, frame, rep=None):
        if vec == 0:
            return sm.zeros(3, 1)
        m = vec.to_matrix(frame)
        return m.xreplace(rep) if rep else m

    @staticmethod
    def dcm(A, B):
        return A.dcm(B)


def _energy_in_components(entry):
    """S_B in placeholder components of (a, alpha), its gradient with
    respect to them (the kinematics substituted after differentiating),
    and S_B with the kinematics substituted."""
    body = entry["body"]
    rigid = entry["w"] is not None
    X = sm.Matrix(sm.symbols(f"_ga0:{6 if rigid else 3}"))
    fake = {
        "body": body,
        "a": X[:3, :],
        "w": entry["w"],
        "alpha": X[3:, :] if rigid else None,
        "inertia": entry["inertia"],
    }
    S = acceleration_energy(fake, drop_free_terms=False)
    grad = sm.Matrix([S.diff(xi) for xi in X])
    x = entry["a"] if not rigid else entry["a"].col_join(entry["alpha"])
    rep = dict(zip(X, x))
    return S.xreplace(rep), grad.xreplace(rep)


class GibbsAppellVariant(GibbsAppell):
    """The Gibbs-Appell equations with the acceleration energy formed, or
    the dependent speed rates eliminated, otherwise than by the method as
    printed (``gibbs_appell``): experiments measured by
    :func:`gibbs_appell_variants`, not a registered formulation.

    Parameters
    ----------
    strategy : {"summed", "components", "split", "full", "expanded"}
        ``"summed"``: S = sum_B S_B differentiated as a whole (the
        registered method).  ``"components"``: per body, S_B written in
        placeholder symbols for the components of (a, alpha),
        differentiated with respect to them, the kinematics substituted
        after (dS/du_r' = sum_B dS_B/dx_B . dx_B/du_r'); Kane's operation
        counts.  ``"split"``: per body, the u'-free parts of 1/2 m a.a and
        1/2 alpha.I.alpha dropped (a = a1 + a0, a1 linear in u').
        ``"full"``: per body, whole.  ``"expanded"``: S summed and
        expanded into a polynomial in u' (the procedure by hand).
    elimination : {"append", "substitute", "chain"}
        Dependent speed rates kept as unknowns with the differentiated
        velocity constraints appended (the registered method), or
        eliminated (p x p equations) by substitution before S is formed or
        after differentiation; the dependent speeds stay in the state
        either way.
    frames : {"merged", "sympy"}
        Vector components through :class:`~eomcompare.symbolic.frames.FrameAlgebra`
        (the registered method) or sympy's own direction cosine matrices.
    count_ops : bool
        As for every :class:`~eomcompare.formulations.base.Formulation`.

    Examples
    --------
    >>> eom = GibbsAppellVariant(elimination="substitute").derive("wheelbarrow")
    >>> eom.mass_matrix.shape
    (2, 2)
    """

    name = "gibbs_appell_variant"

    def __init__(
        self,
        *,
        strategy: str = "summed",
        elimination: str = "append",
        frames: str = "merged",
        count_ops: bool = True,
    ):
        super().__init__(count_ops=count_ops)
        self._set_options(
            strategy=(strategy, STRATEGIES),
            elimination=(elimination, ELIMINATIONS),
            frames=(frames, FRAMES),
        )

    def _frames(self):
        return super()._frames() if self.frames == "merged" else _SympyFrames()

    def _energy(self, entries, zero):
        if self.strategy == "summed":
            return super()._energy(entries, zero)
        if self.strategy == "components":
            pairs = [_energy_in_components(en) for en in entries]
            return sm.Add(*[S for S, _ in pairs]), [g for _, g in pairs]
        S_bodies = [
            acceleration_energy(en, drop_free_terms=self.strategy == "split", zero=zero)
            for en in entries
        ]
        S = sm.Add(*S_bodies)
        if self.strategy == "expanded":
            S = sm.expand(S)
            return S, [S]
        return S, S_bodies

    def _gradient(self, entries, parts, zs):
        if self.strategy != "components":
            return super()._gradient(entries, parts, zs)
        # x_B the stacked components (a, alpha) of body B.
        G = sm.zeros(len(zs), 1)
        for en, grad in zip(entries, parts):
            x = en["a"] if en["alpha"] is None else en["a"].col_join(en["alpha"])
            G += jacobian(x, zs).T * grad
        return G

    def _derive(self, ms, stage) -> Derivation:
        if self.elimination == "append" or not ms.u_dep:
            return super()._derive(ms, stage)
        return self._derive_eliminated(ms, stage)

    def _derive_eliminated(self, ms, stage) -> Derivation:
        """The dependent speed rates eliminated (p x p equations), by
        ``u_dep' = C u_ind' + d`` substituted into the accelerations before
        S is formed (``"substitute"``) or into dS/du' after the chain rule
        (``"chain"``); the dependent speeds stay in the state."""
        u = list(ms.speeds)
        p = len(ms.u_ind)
        ud = [ui.diff(_t) for ui in u]
        ud_ind, ud_dep = ud[:p], ud[p:]
        with stage("constraints"):
            A, samples, _, e = self._constraints(ms)
            Cd = solve_dependent_speeds(A[:, p:], (-A[:, :p]).row_join(-e), samples)
            C, d = Cd[:, :p], Cd[:, p:]
            dep_rates = {
                ud_dep[s]: (C[s, :] * sm.Matrix(ud_ind))[0] + d[s]
                for s in range(len(ud_dep))
            }
        with stage("kinematics"):
            frames, entries = self._kinematics(ms)
            if self.elimination == "substitute":
                self._stand_ins(entries, dep_rates)
        rates = ud_ind if self.elimination == "substitute" else ud
        zs = sm.symbols(f"_gz0:{len(rates)}")
        to_z = dict(zip(rates, zs))
        with stage("acceleration_energy"):
            self._stand_ins(entries, to_z)
            S, parts = self._energy(entries, {zi: 0 for zi in zs})
        with stage("differentiation"):
            G = self._gradient(entries, parts, zs)
            if self.elimination == "chain":
                G = G[:p, :] + C.T * G[p:, :]
                dep_z = {to_z[k]: v.xreplace(to_z) for k, v in dep_rates.items()}
                G = G.xreplace(dep_z)
                S = S.xreplace(dep_z)
                zs = zs[:p]
        with stage("generalized_active_forces"):
            F = generalized_active_forces(ms, u, dict(ms.kinematics.qdot), frames)
            Ft = F[:p, :] + C.T * F[p:, :]
        from_z = {zi: ud[i] for i, zi in enumerate(zs)}
        shared: dict = {}
        with stage("assembly"):
            M, G0 = self._split(G, zs, from_z, shared, symmetric=False)
            f = sub(Ft, sm.Matrix(G.rows, 1, G0))
        S = substitute([S], from_z, shared)[0]
        extras = self._extras(ms, S, Ft, C, dep_rates, stage)
        base = speed_form(ms, M, f)
        n_q = len(ms.coordinates)
        state_rates = sm.Matrix(base.state_rates)[: n_q + p, :].col_join(
            sm.Matrix([dep_rates[x] for x in ud_dep])
        )
        return dataclasses.replace(
            base,
            unknowns=tuple(ud_ind),
            state_rates=state_rates,
            accelerations=sm.Matrix(base.accelerations).xreplace(dep_rates),
            extras=extras,
        )


def gibbs_appell_variants(cases=None, variants=None, file=sys.stdout):
    """Derivation seconds and op counts of the S strategies next to Kane's.

    Every derivation starts from a freshly built declaration with sympy's
    cache cleared: points cache their velocities and sympy caches results,
    so whichever method ran second would otherwise be timed cheaper.

    Parameters
    ----------
    cases : list of (system name, options dict), optional
        Default: n_link_pendulum n = 3..5 (relative angles) and every other
        catalogue system with its default options.
    variants : list of (strategy, elimination[, frames]), optional
        Default: every strategy with ``"append"`` elimination.
    file : file object or None
        Where the table is printed (None: not printed).

    Returns
    -------
    list of dict
        One row per (case, method): system, method, seconds, ops_raw,
        ops_cse.

    Examples
    --------
    >>> rows = gibbs_appell_variants([("double_pendulum", {})],
    ...                              [("split", "append")], file=None)
    >>> sorted(r["method"] for r in rows)
    ['gibbs_appell[split/append]', 'kane']
    """
    from sympy.core.cache import clear_cache

    if cases is None:
        cases = [("n_link_pendulum", {"n": n}) for n in range(3, 6)]
        cases += [(name, {}) for name in CATALOGUE if name != "n_link_pendulum"]
    if variants is None:
        variants = [(s, "append") for s in STRATEGIES]
    rows = []
    for name, opts in cases:
        label = name + "".join(f" {k}={v}" for k, v in opts.items())
        methods = [("kane", get_formulation("kane"))]
        for v in variants:
            tag = "/".join(v[:2]) + (f"/{v[2]}" if len(v) > 2 else "")
            methods.append(
                (
                    f"gibbs_appell[{tag}]",
                    GibbsAppellVariant(
                        strategy=v[0],
                        elimination=v[1],
                        frames=v[2] if len(v) > 2 else "merged",
                    ),
                )
            )
        for mname, form in methods:
            ms = get_system(name, **opts)
            clear_cache()
            eom = form.derive(ms)
            rows.append(
                {
                    "system": label,
                    "method": mname,
                    "seconds": eom.timings["total"],
                    "ops_raw": eom.op_counts["raw"],
                    "ops_cse": eom.op_counts["cse"],
                }
            )
            if file is not None:
                r = rows[-1]
                print(
                    f"{r['system']:<26} {r['method']:<38} "
                    f"{r['seconds']:9.3f} {r['ops_raw']:>9} {r['ops_cse']:>7}",
                    file=file,
                    flush=True,
                )
    return rows


def gibbs_appell_main(argv=None):
    """Print the measurement table: every variant on the catalogue and on
    n_link_pendulum n = 3..5, the cheaper ones up to n = 8."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m eomcompare.bench.methods gibbs_appell",
        description="Derivation cost of the ways of forming S, beside Kane's.",
    )
    parser.add_argument(
        "--max-n", type=int, default=8, help="largest n of n_link_pendulum (default 8)"
    )
    parser.add_argument(
        "--systems",
        nargs="*",
        default=None,
        help="catalogue systems besides n_link_pendulum (default: all)",
    )
    args = parser.parse_args(argv)
    names = (
        args.systems
        if args.systems is not None
        else [n for n in CATALOGUE if n != "n_link_pendulum"]
    )
    print(
        f"{'system':<26} {'method':<38} {'seconds':>9} {'ops_raw':>9} {'ops_cse':>7}",
        flush=True,
    )
    every = [(s, "append") for s in STRATEGIES] + [
        ("components", "substitute"),
        ("components", "chain"),
        ("components", "append", "sympy"),
    ]
    # Expanding S, or composing direction cosines without merging, grows
    # too fast for the larger chains (minutes each).
    cheap = [v for v in every if v[0] != "expanded" and v[2:] != ("sympy",)]
    small = [("n_link_pendulum", {"n": n}) for n in range(3, min(args.max_n, 5) + 1)]
    large = [("n_link_pendulum", {"n": n}) for n in range(6, args.max_n + 1)]
    # The largest catalogue systems (tens of seconds for Kane alone) are
    # measured with the default only.
    huge = {"whipple_bicycle", "andrews_squeezer"}
    rows = gibbs_appell_variants(
        small + [(n, {}) for n in names if n not in huge], every
    )
    rows += gibbs_appell_variants(large, cheap)
    rows += gibbs_appell_variants(
        [(n, {}) for n in names if n in huge], [("components", "append")]
    )
    return rows


def main(argv=None):
    """``python -m eomcompare.bench.methods gibbs_appell ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "gibbs_appell":
        print(
            "usage: python -m eomcompare.bench.methods gibbs_appell [--max-n N] "
            "[--systems NAME ...]",
            file=sys.stderr,
        )
        return 2
    gibbs_appell_main(argv[1:])
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
