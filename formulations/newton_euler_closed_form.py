"""Closed-form moments for the customised Newton-Euler model
(:mod:`eomcompare.formulations.newton_euler`): the moment ``J wd + w x J
w`` of a link that turns with the first joint and its own alone (``w =
u_r e(theta) + u_s a``: the Stanford arm's link 2, the RX-90's links 2
and 3 by ``theta = q2 + q3``) taken from Lagrange's equations of ``w^T J
w / 2``, in sines and cosines of ``theta`` and ``2 theta`` with constant
coefficients, in place of the recursion's three components.  The links
are those of the tree's record
(:class:`eomcompare.systems.joint_tree.Link`)."""

from __future__ import annotations

import sympy as sm

from eomcompare.symbolic import lists3 as v3

__all__: list[str] = []


def _two_rate_links(links, floating):
    """``{k: (r, p)}`` for each revolute link k whose angular velocity is
    ``u_r e + u_s a``: r the first link (revolute, on a fixed base), k its
    child or the child of a link p parallel to k (no constant rotation,
    the same axis: ``_angle_sum``'s pair; p None otherwise), ``a`` k's
    axis and ``e`` r's axis seen in k's frame, across a."""
    out = {}
    if floating:
        return out
    for k, s in enumerate(links, start=1):
        p = s.parent
        if not s.joint.turns or not p:
            continue
        between = None
        if links[p - 1].parent:
            sp = links[p - 1]
            if (
                sm.Matrix(s.rotation) != sm.eye(3)
                or not sp.joint.turns
                or tuple(sp.joint.axis) != tuple(s.joint.axis)
            ):
                continue
            between, p = p, sp.parent
        r = links[p - 1]
        if r.parent or not r.joint.turns:
            continue
        out[k] = (p, between)
    return out


def _closed_form_moment(s, sp, J, between):
    """The constants of ``J wd + w x J w``'s share of ``tau_r`` and
    ``tau_k`` for a link k of :func:`_two_rate_links` (``s`` its record,
    ``sp`` r's, ``between`` the parallel link's or None, ``J`` k's
    inertia), from Lagrange's equations of ``T = w^T J w / 2`` with ``w =
    u_r e(theta) + u_s a``, ``theta = q_k`` (``q_p + q_k`` through the
    parallel p, whose ``tau_p`` then takes ``tau_k``'s share: the moment
    is a couple).  With ``Q = e^T J e = alpha_0 + alpha_1 C2 + alpha_2
    S2`` (``C2 = cos 2 theta``), ``L = e^T J a = beta_1 C + beta_2 S`` and
    ``ZZ = a^T J a``::

        tau_r: qdd_r Q + u_r u_s Q' + qdd_s L + u_s^2 L'
        tau_k: qdd_r L + ZZ qdd_s - u_r^2 Q' / 2

    (``'`` the derivative in theta; ``T`` does not depend on q_r).
    Returns ``(alpha_0, alpha_1, alpha_2, beta_1, beta_2, ZZ, sign, i)``
    with ``a = sign`` times the i-th coordinate axis, or None when e is
    not across a."""
    th = sm.Dummy("theta")
    # Parent-to-link rotation at theta (newton_euler._rotation).
    A = s.to_parent(th).T
    ar = sm.Matrix(sp.joint.axis)
    if between is not None:
        ar = sm.Matrix(between.rotation).T * ar
    e = A * ar
    a = sm.Matrix(s.joint.axis)
    if sm.simplify((e.T * a)[0]) != 0:
        return None
    C, S = sm.Dummy("C"), sm.Dummy("S")
    rule = {sm.cos(th): C, sm.sin(th): S}
    e = e.applyfunc(lambda x: sm.expand(x.xreplace(rule)))
    J = sm.Matrix(J)
    Q = sm.Poly(sm.expand((e.T * J * e)[0]), C, S)
    L = sm.Poly(sm.expand((e.T * J * a)[0]), C, S)
    if Q.total_degree() > 2 or L.total_degree() > 1:
        return None
    qcc, qss = Q.coeff_monomial(C**2), Q.coeff_monomial(S**2)
    qcs = Q.coeff_monomial(C * S)
    b1, b2 = L.coeff_monomial(C), L.coeff_monomial(S)
    a0 = sm.expand((qcc + qss) / 2)
    a1 = sm.expand((qcc - qss) / 2)
    a2 = sm.expand(qcs / 2)
    zz = sm.expand((a.T * J * a)[0])
    k_index = [abs(x) for x in s.joint.axis].index(1)
    sign = s.joint.axis[k_index]
    return a0, a1, a2, b1, b2, zz, sign, k_index


def _is_axisymmetric(got):
    """Whether the constants of :func:`_closed_form_moment` are those of an
    inertia symmetric about the link's axis a (``J = lam (1 - a a^T) + ZZ a
    a^T``): ``Q = e^T J e`` constant and ``L = e^T J a`` zero, so that the
    moment's share of ``tau_r`` is ``alpha_0 qdd_r`` (r's own) and its
    share of ``tau_k`` the one product ``ZZ qdd_s``; the recursion's
    moment across the axis has no share in tau."""
    return not any(v3.nz(x) for x in got[1:5])


def _axisymmetric_balance(links, two_rate):
    """The balance of a link's inertia about its joint axis chosen for a
    two-rate ancestor (``chosen`` of
    :func:`eomcompare.formulations.newton_euler_inertia._balance_axes`):
    ``(p, D, Jp) -> lam``, for a revolute link whose first revolute
    ancestor is p, the ``lam`` that leaves p's inertia ``Jp - lam D``
    symmetric about p's axis (:func:`_is_axisymmetric`; 0 where it is
    already and ``D`` would break it), or None where p is not in
    ``two_rate`` (:func:`_two_rate_links`), ``D`` is symmetric about p's
    axis itself, or no ``lam`` does.

    The body symmetric about the link's axis moves freely between the
    link and p (Khalil & Dombre's grouping of ``YY_j``); the amount is
    chosen here for p instead of for the link's own ``ZZ = XX + YY``:
    p's moment becomes the closed form's one product ``ZZ qdd_s``, in
    place of the recursion's three components (their products, the U
    entries only they need, and the sums joining them to the moment
    carried back), while the link's moment across its own axis, formed
    anyway, takes at most one product and one sum more per component
    (``XX U_zy + (ZZ - XX - YY) w_y w_z`` in place of ``XX U_zy``).
    ``e^T J e`` and ``e^T J a`` are linear in J: their coefficients for
    ``Jp - lam D`` are Jp's less lam times D's."""

    def choose(p, D, Jp):
        if p not in two_rate:
            return None
        r, between = two_rate[p]
        args = (links[p - 1], links[r - 1])
        middle = None if between is None else links[between - 1]
        got = _closed_form_moment(*args, Jp, middle)
        per = _closed_form_moment(*args, D, middle)
        if got is None or per is None:
            return None
        if any(v3.nz(x) for x in (*got[3:5], *per[3:5])):
            # e^T J a: no lam removes it.
            return None
        (a1, a2), (d1, d2) = got[1:3], per[1:3]
        if not (v3.nz(d1) or v3.nz(d2)):
            return None
        lam = sm.expand(a1 / d1 if v3.nz(d1) else a2 / d2)
        if sm.expand(a1 - lam * d1) != 0 or sm.expand(a2 - lam * d2) != 0:
            return None
        return lam

    return choose


def _closed_forms(links, inertia, two_rate):
    """``(closed, inertia)``: ``closed`` maps each link k of ``two_rate``
    (:func:`_two_rate_links`) whose moment is taken in closed form to
    ``(r, between, constants)`` (:func:`_closed_form_moment`'s), and
    ``inertia`` is the given one with ``alpha_0`` added to r's moment of
    inertia about its axis (``alpha_0 qdd_r``, r's own moment's share).
    A link is taken where it has products of inertia, or where its inertia
    is symmetric about its axis (:func:`_is_axisymmetric`: its moment is
    then the one product ``ZZ qdd_s`` on ``tau_k``); with other principal
    axes the recursion's moment is cheaper."""
    inertia = list(inertia)
    closed = {}
    for k, (r, between) in two_rate.items():
        J = sm.Matrix(inertia[k - 1][2])
        got = _closed_form_moment(
            links[k - 1],
            links[r - 1],
            J,
            None if between is None else links[between - 1],
        )
        if got is None:
            continue
        principal = not any(
            v3.nz(J[i, j]) for i in range(3) for j in range(3) if i != j
        )
        if principal and not _is_axisymmetric(got):
            continue
        closed[k] = (r, between, got)
        # alpha_0 qdd_r: r's own moment about its axis.
        ar = sm.Matrix(links[r - 1].joint.axis)
        mr, mcr, Jr = inertia[r - 1]
        Jr = (sm.Matrix(Jr) + got[0] * ar * ar.T).applyfunc(sm.expand)
        inertia[r - 1] = (mr, mcr, Jr)
    return closed, inertia


def _closed_form_shares(got, th, first, wi, wdi, wii, let):
    """``(share of tau_r, share of tau_k)`` of a link's moment in closed
    form (:func:`_closed_form_moment`'s constants ``got``; ``th`` the angle
    theta, ``first`` r's ``(u_r, qdd_r)``, ``wi`` and ``wdi`` the link's
    w and wd along its axis, whose sign the constants carry, ``wii`` the
    product ``w_i w_i`` as the recursion has it), the sines and cosines'
    combinations named by ``let``.  ``alpha_0 qdd_r`` is r's own
    (:func:`_closed_forms`)."""
    _, a1, a2, b1, b2, zz, sign, _ = got
    C, S = sm.cos(th), sm.sin(th)
    C2, S2 = sm.cos(2 * th), sm.sin(2 * th)
    ur, zr = first
    us, zs = sign * wi, sign * wdi
    E = let(a1 * C2 + a2 * S2)
    Qp = let(-2 * a1 * S2 + 2 * a2 * C2)
    L = let(b1 * C + b2 * S)
    Lp = let(-b1 * S + b2 * C)
    to_r = zr * E + ur * us * Qp + zs * L + wii * Lp
    return to_r, zr * L + zz * zs - ur**2 * Qp / 2
