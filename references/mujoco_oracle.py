"""MuJoCo as the oracle for models imported from MJCF.

MuJoCo compiles the same MJCF the declaration was built from (the file
``ms.options["mjcf_path"]``, or the text ``ms.options["mjcf"]``) and
``mj_forward`` gives ``qacc``: MuJoCo's own recursive dynamics in C,
sharing nothing with the declaration or the formulations but the compiled
model.

What is switched off, so that ``qacc`` is the acceleration of the
equations of motion :func:`eomcompare.systems.from_mjcf` declares: every constraint
(contacts, joint limits, equality constraints, friction loss:
``mjDSBL_CONSTRAINT`` and the flags of each), actuation, joint and tendon
springs (``jnt_stiffness``, ``tendon_stiffness`` zeroed) and dampers
(``tendon_damping`` and, unless the system was declared with
``damping=True``, ``dof_damping`` zeroed), fluid forces (``opt.density = opt.viscosity = 0``) and gravity
compensation (``body_gravcomp = 0``); no control, applied force or
perturbation is set.  Kept: the model's gravity (its magnitude is the
declaration's ``g``) and joint armature.

States are converted by the system's own ``ms.to_mujoco`` and
``ms.from_mujoco`` (:class:`eomcompare.systems.mjcf.MujocoStates`).
"""

from __future__ import annotations

import numpy as np

from eomcompare.systems import MechanicalSystem

__all__ = [
    "mujoco_available",
    "mjcf_mujoco_model",
    "mujoco_accelerations",
    "mujoco_coordinate_accelerations",
    "MujocoWarning",
    "forward",
]


_DISABLED = (
    "mjDSBL_CONSTRAINT",
    "mjDSBL_CONTACT",
    "mjDSBL_LIMIT",
    "mjDSBL_EQUALITY",
    "mjDSBL_FRICTIONLOSS",
    "mjDSBL_ACTUATION",
    "mjDSBL_SPRING",
)


def mujoco_available() -> bool:
    """True when the ``mujoco`` module can be imported."""
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True


class MujocoWarning(RuntimeError):
    """MuJoCo warned during ``mj_forward`` (a near-singular inertia matrix,
    a bad state): its ``qacc`` is not an answer to compare with."""


def forward(model, data) -> None:
    """``mujoco.mj_forward(model, data)``, raising :class:`MujocoWarning`
    if MuJoCo warns.

    MuJoCo's default warning handler appends to ``MUJOCO_LOG.TXT`` in the
    working directory and carries on with a ``qacc`` it has just called
    unreliable.  Here the handler is replaced for the duration of the call
    (the previous one is restored) and a warning becomes an error; since
    MuJoCo reports each kind of warning only the first time for one
    ``MjData``, its counters (``data.warning``) are read as well.
    """
    import mujoco

    messages: list[str] = []
    before = [int(w.number) for w in data.warning]
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda text: messages.append(str(text)))
    try:
        mujoco.mj_forward(model, data)
    finally:
        mujoco.set_mju_user_warning(previous)
    raised = [
        mujoco.mjtWarning(i).name
        for i, w in enumerate(data.warning)
        if int(w.number) > before[i]
    ]
    if messages or raised:
        raise MujocoWarning(
            "MuJoCo's mj_forward warned: " + "; ".join(messages or raised)
        )


def _mjcf_system(ms):
    if not isinstance(ms, MechanicalSystem):
        raise TypeError(f"ms must be a MechanicalSystem, not {type(ms).__name__}")
    if ms.options.get("family") != "mjcf":
        raise ValueError(
            f"system {ms.name!r} was not imported from MJCF; "
            f"valid: systems built by systems.from_mjcf"
        )
    return ms


def mjcf_mujoco_model(ms, parameters=None):
    """MuJoCo's model of the MJCF ``ms`` was imported from, with everything
    the declaration leaves out disabled (see the module docstring).

    Raises
    ------
    ValueError
        When ``ms`` is not from MJCF, or when its inertia is symbolic and
        ``parameters`` override it (MuJoCo reads the file's).
    """
    import mujoco

    from eomcompare.systems.mjcf import compile_mjcf

    ms = _mjcf_system(ms)
    if ms.options.get("symbolic_inertia") and parameters:
        raise ValueError(
            "MuJoCo reads the file's inertia: compare a "
            "symbolic-inertia system at its default parameters"
        )
    model, _, _ = compile_mjcf(ms.options["mjcf_path"] or ms.options["mjcf"])
    # The flags MuJoCo's version has (3.3.0 has no mjDSBL_SPRING or
    # mjDSBL_DAMPER), and the passive forces' own fields zeroed, which
    # holds in every version.
    for flag in _DISABLED:
        model.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag, 0))
    model.jnt_stiffness[:] = 0.0
    model.tendon_stiffness[:] = 0.0
    model.tendon_damping[:] = 0.0
    if not ms.options.get("damping"):
        model.dof_damping[:] = 0.0
    model.opt.density = 0.0
    model.opt.viscosity = 0.0
    model.body_gravcomp[:] = 0.0
    values = dict(
        zip((str(k) for k in ms.parameters), ms.states.parameter_vector(parameters))
    )
    gravity = np.asarray(model.opt.gravity, dtype=float)
    norm = float(np.linalg.norm(gravity))
    if norm > 0:
        model.opt.gravity[:] = gravity / norm * values["g"]
    return model


def mujoco_accelerations(ms, q, u, parameters=None, model=None):
    """u' (= q'' for hinge and slide joints) by MuJoCo's ``mj_forward`` at
    the project's state ``(q, u)`` (for a free joint, u' of its body rates
    and world-frame velocity, see :class:`eomcompare.systems.mjcf.MujocoStates`).

    Examples
    --------
    >>> from eomcompare.systems import from_mjcf
    >>> ms = from_mjcf('<mujoco><worldbody><body><joint axis="1 0 0"/>'
    ...                '<inertial pos="0 1 0" mass="2" diaginertia="1e-6 1e-6 1e-6"/>'
    ...                '</body></worldbody></mujoco>')
    >>> round(float(mujoco_accelerations(ms, [0.0], [0.0])[0]), 4)
    -9.81
    """
    import mujoco

    ms = _mjcf_system(ms)
    model = model if model is not None else mjcf_mujoco_model(ms, parameters)
    data = mujoco.MjData(model)
    qpos, qvel = ms.to_mujoco(q, u)
    data.qpos[:] = qpos
    data.qvel[:] = qvel
    forward(model, data)
    return ms.from_mujoco(data.qpos, data.qvel, data.qacc)[2]


def _qdd_function(ms):
    """``(t, q, u, u') -> q''`` from the kinematic equations ``q' = f(t, q,
    u)`` differentiated once (the quaternion's ``F u' + F' u``)."""
    import sympy as sm
    import sympy.physics.mechanics as me

    cached = getattr(ms, "_qdd_from_speed_rates", None)
    if cached is not None:
        return cached
    t = me.dynamicsymbols._t
    kin = ms.kinematics
    q, u = list(ms.coordinates), list(ms.speeds)
    qdot = sm.Matrix([kin.qdot[qi.diff(t)] for qi in q])
    qdd = qdot.diff(t).xreplace(dict(kin.qdot))
    Q, U, UD = (
        sm.symbols(f"{p}0:{len(x)}") for p, x in (("q", q), ("u", u), ("ud", u))
    )
    plain = {ui.diff(t): s for ui, s in zip(u, UD)}
    plain |= dict(zip(u, U)) | dict(zip(q, Q))
    T = sm.Symbol("t")
    expr = ms.substitute_specified(qdd).xreplace(dict(ms.parameters))
    f = sm.lambdify([T, Q, U, UD], list(expr.xreplace(plain).xreplace({t: T})))
    ms._qdd_from_speed_rates = f
    return f


def mujoco_coordinate_accelerations(ms, t0, q, qd, parameters=None, model=None):
    """q'' of every coordinate by MuJoCo at ``(t, q, q')``: its ``qacc`` is
    ``u'``, which the kinematic equations turn into ``q''`` where the
    speeds are not the coordinate rates (a free joint's quaternion)."""
    ms = _mjcf_system(ms)
    if len(ms.speeds) == len(ms.coordinates):
        return mujoco_accelerations(ms, q, qd, parameters, model)
    u = ms.states.speeds_from_rates(t0, q, qd)
    ud = mujoco_accelerations(ms, q, u, parameters, model)
    return np.asarray(_qdd_function(ms)(t0, q, u, ud), dtype=float)
