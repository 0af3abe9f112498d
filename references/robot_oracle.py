"""Pinocchio as the oracle for robots imported from URDF (and, in
:func:`oracle_accelerations`, MuJoCo for models imported from MJCF).

Pinocchio reads the same URDF text the declaration was built from
(``ms.options["urdf"]``) with its own parser, ``buildModelFromXML``, and
computes the forward dynamics by the articulated-body algorithm (``aba``):
nothing of the declaration or of the formulations is shared but the file.

Mapping: the coordinates of :func:`eomcompare.systems.from_urdf` are Pinocchio's
joints in its own order (checked by joint name here); a continuous joint,
which Pinocchio represents by ``(cos q, sin q)``, is given that pair; the
speeds are Pinocchio's ``v``.  Gravity is Pinocchio's default ``-9.81 z``,
and the declaration's ``g`` parameter is mapped onto it.  With
``damping=True`` the joint torques ``-b q'`` are passed to ``aba``.

Judgement: the harness fails a case whose q'' deviates from Pinocchio's by
more than :data:`ORACLE_TOLERANCE` (status ``oracle_disagrees``); a file
Pinocchio's parser refuses (urdfdom requires ``<limit>`` on revolute and
prismatic joints, which yourdfpy does not) leaves the system without an
oracle (:class:`OracleUnavailable`), not its formulations failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eomcompare.symbolic.types import ArrayLike, FloatArray
from eomcompare.systems import MechanicalSystem

__all__ = [
    "ORACLE_TOLERANCE",
    "OracleUnavailable",
    "urdf_pinocchio_model",
    "urdf_pinocchio_accelerations",
    "pinocchio_configuration",
    "oracle_accelerations",
]


#: Largest deviation of a formulation's q'' from the oracle's, relative to
#: the oracle's largest magnitude at each state (at least 1), that the
#: harness accepts.  The snapped rotations of a URDF import differ from the
#: file's rounded numbers by about 1e-11 (``ur5``); a wrong mass, inertia or
#: joint differs by orders of magnitude more.
ORACLE_TOLERANCE = 1e-6


class OracleUnavailable(RuntimeError):
    """The oracle cannot compute this system's q''; the message says why."""


def _urdf_system(ms):
    if not isinstance(ms, MechanicalSystem):
        raise TypeError(f"ms must be a MechanicalSystem, not {type(ms).__name__}")
    if ms.options.get("family") != "urdf":
        raise ValueError(
            f"system {ms.name!r} was not imported from URDF; "
            f"valid: systems built by systems.from_urdf"
        )
    return ms


def urdf_pinocchio_model(ms, parameters=None):
    """Pinocchio's model of the URDF ``ms`` was imported from.

    Raises
    ------
    OracleUnavailable
        When Pinocchio's parser refuses the file (a revolute joint without
        ``<limit>``, which yourdfpy reads).
    ValueError
        When ``ms`` is not from URDF, when Pinocchio orders the joints
        otherwise than the declaration, or when the declaration's inertia is
        symbolic with values other than the file's.
    """
    import pinocchio as pin

    ms = _urdf_system(ms)
    try:
        if ms.options.get("floating_base"):
            model = pin.buildModelFromXML(ms.options["urdf"], pin.JointModelFreeFlyer())
        else:
            model = pin.buildModelFromXML(ms.options["urdf"])
    except ValueError as exc:
        raise OracleUnavailable(f"Pinocchio cannot read the URDF: {exc}") from None
    names = tuple(model.names[1:])
    if names != tuple(ms.options["joints"]):
        raise ValueError(
            f"Pinocchio orders the joints {names}, the "
            f"declaration {ms.options['joints']}"
        )
    values = dict(
        zip((str(k) for k in ms.parameters), ms.states.parameter_vector(parameters))
    )
    model.gravity = pin.Motion(np.array([0.0, 0.0, -values["g"], 0, 0, 0]))
    if ms.options.get("symbolic_inertia") and parameters:
        raise ValueError(
            "Pinocchio reads the file's inertia: compare a "
            "symbolic-inertia system at its default parameters"
        )
    return model


def pinocchio_configuration(model, q) -> np.ndarray:
    """Pinocchio's ``q`` for joint angles/displacements ``q``."""
    q = np.asarray(q, dtype=float)
    out = []
    for i, joint in enumerate(model.joints[1:]):
        if joint.nq == 2:
            out += [np.cos(q[i]), np.sin(q[i])]
        else:
            out.append(q[i])
    return np.array(out)


def urdf_pinocchio_accelerations(ms, q, qd, parameters=None, model=None):
    """q'' by Pinocchio's ``aba`` at angles ``q`` and rates ``qd`` (for a
    floating base through ``ms.to_pinocchio`` / ``ms.from_pinocchio``)."""
    import pinocchio as pin

    ms = _urdf_system(ms)
    model = model if model is not None else urdf_pinocchio_model(ms, parameters)
    data = model.createData()
    if ms.options.get("floating_base"):
        # Pinocchio's (q, v) of the state, its a back to u', and q'' from
        # the kinematic equations (the quaternion's F u' + F' u).
        from .mujoco_oracle import _qdd_function

        if ms.options.get("damping"):
            raise ValueError("damping is not compared on a floating base")
        u = ms.states.speeds_from_rates(0.0, q, qd)
        q_pin, v = ms.to_pinocchio(q, u)
        a = pin.aba(model, data, q_pin, v, np.zeros(model.nv))
        ud = ms.from_pinocchio(q_pin, v, np.asarray(a))[2]
        return np.asarray(_qdd_function(ms)(0.0, q, u, ud), dtype=float)
    qd = np.asarray(qd, dtype=float)
    tau = np.zeros(model.nv)
    if ms.options.get("damping"):
        tau = -np.asarray(model.damping, dtype=float) * qd
    return np.array(pin.aba(model, data, pinocchio_configuration(model, q), qd, tau))


def oracle_accelerations(
    ms: MechanicalSystem,
    states: Sequence[tuple[float, ArrayLike, ArrayLike]],
    parameters: Mapping[Any, float] | None = None,
) -> tuple[str, FloatArray] | None:
    """An independent library's q'' at ``states`` for the harness's oracle
    column, or None when the system has no oracle here.

    Parameters
    ----------
    ms : MechanicalSystem
    states : sequence of (t, q, qd)
        The states the formulations' q'' were computed at.

    Returns
    -------
    tuple (str, ndarray) or None
        ``("pinocchio", array of shape (len(states), n))`` for a system
        imported from URDF (Pinocchio reading the same file), ``("mujoco",
        ...)`` for one imported from MJCF (MuJoCo's ``qacc``,
        :mod:`eomcompare.references.mujoco_oracle`); None for any other system, and
        when the library is not installed (``pip install
        'eomcompare[robots]'``, ``'eomcompare[mujoco]'``).

    Raises
    ------
    OracleUnavailable
        When Pinocchio cannot read the file the system was imported from.
    """
    if not isinstance(ms, MechanicalSystem):
        raise TypeError(f"ms must be a MechanicalSystem, not {type(ms).__name__}")
    if ms.options.get("family") == "mjcf":
        from .mujoco_oracle import (
            mjcf_mujoco_model,
            mujoco_available,
            mujoco_coordinate_accelerations,
        )

        if not mujoco_available():
            return None
        mj = mjcf_mujoco_model(ms, parameters)
        return "mujoco", np.array(
            [
                mujoco_coordinate_accelerations(ms, t0, q, qd, model=mj)
                for t0, q, qd in states
            ]
        )
    if ms.options.get("family") != "urdf":
        return None
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None
    model = urdf_pinocchio_model(ms, parameters)
    return "pinocchio", np.array(
        [
            urdf_pinocchio_accelerations(ms, q, qd, parameters, model=model)
            for _, q, qd in states
        ]
    )
