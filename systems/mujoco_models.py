"""Catalogue entries from MJCF models that packages on the index install,
read by :func:`eomcompare.systems.from_mjcf` and checked against MuJoCo
(``pip install 'eomcompare[mujoco]'``).

They are registered ``heavy`` as the robots are: they need an optional
extra, so the default comparison leaves them out; name them to compare
them.
"""

from __future__ import annotations

import importlib.util
import os

from .base import MechanicalSystem
from .catalogue import register_system
from .mjcf import from_mjcf

__all__ = [
    "gymnasium_asset",
    "dm_control_asset",
    "inverted_double_pendulum",
    "ant",
    "quadruped",
    "robosuite_asset",
    "robosuite_arm",
    "ROBOSUITE_ARMS",
]

#: robosuite's single arms the catalogue entry ``robosuite_arm`` reads.
#: robosuite 1.4's ``sawyer`` is left out: MuJoCo 3's compiler refuses its
#: head mesh ("mesh volume is too small").
ROBOSUITE_ARMS = ("panda", "iiwa", "ur5e", "jaco", "kinova3")


def _package_file(package: str, parts: tuple[str, ...], what: str) -> str:
    """The path of ``parts`` inside an installed package, found without
    importing it; FileNotFoundError naming the extra to install."""
    spec = importlib.util.find_spec(package)
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        path = os.path.join(root, *parts)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        f"{package}'s {what} not found (searched {roots}); "
        f"pip install 'eomcompare[mujoco]'"
    )


def gymnasium_asset(name: str) -> str:
    """The path of one of gymnasium's MuJoCo models, e.g.
    ``"inverted_double_pendulum.xml"`` (found without importing
    gymnasium).

    Raises
    ------
    FileNotFoundError
        When gymnasium is not installed or has no such model (naming the
        extra to install).
    """
    return _package_file(
        "gymnasium", ("envs", "mujoco", "assets", name), f"MuJoCo model {name!r}"
    )


def dm_control_asset(name: str) -> str:
    """The path of one of dm-control's suite models, e.g.
    ``"quadruped.xml"`` (found without importing dm-control, whose import
    sets up rendering).

    Raises
    ------
    FileNotFoundError
        When dm-control is not installed or has no such model (naming the
        extra to install).
    """
    return _package_file("dm_control", ("suite", name), f"suite model {name!r}")


def robosuite_asset(robot: str) -> str:
    """The path of one of robosuite's robot models, e.g. ``"panda"`` for
    ``models/assets/robots/panda/robot.xml`` (found without importing
    robosuite, whose import compiles its controllers).

    Raises
    ------
    FileNotFoundError
        When robosuite is not installed or has no such robot (naming the
        extra to install).
    """
    return _package_file(
        "robosuite",
        ("models", "assets", "robots", robot, "robot.xml"),
        f"robot {robot!r}",
    )


@register_system(
    "robosuite_arm",
    heavy=True,
    oracle="mujoco",
    variants=[{"robot": r} for r in ROBOSUITE_ARMS[:4]],
)
def robosuite_arm(robot: str = "panda") -> MechanicalSystem:
    """One of robosuite's robot arms (``models/assets/robots/<robot>/
    robot.xml``, robosuite 1.4): ``panda``, ``iiwa``, ``ur5e``, ``jaco``
    or ``kinova3``, fixed to the ground, its links' inertias as the
    file gives them (or as MuJoCo computes them from the meshes), joint
    armature and damping as MuJoCo reads them.  Its motors, limits and
    contacts are left out (see :func:`eomcompare.systems.from_mjcf`).

    Raises
    ------
    ValueError
        For a robot that is not one of :data:`ROBOSUITE_ARMS`.
    """
    if robot not in ROBOSUITE_ARMS:
        raise ValueError(
            f"robosuite_arm: robot must be one of {list(ROBOSUITE_ARMS)}, not {robot!r}"
        )
    return from_mjcf(robosuite_asset(robot), name=f"robosuite_{robot}")


@register_system("inverted_double_pendulum", heavy=True, oracle="mujoco")
def inverted_double_pendulum(damping: bool = False) -> MechanicalSystem:
    """Gymnasium's ``InvertedDoublePendulum`` model
    (``inverted_double_pendulum.xml``): a cart on a slide carrying two
    hinged poles, inertias computed by MuJoCo from the capsule geoms, the
    model's gravity (tilted by 1e-5 m/s^2 along x).  Its rail limit and
    motor are left out (see :func:`eomcompare.systems.from_mjcf`); ``damping=True``
    keeps the joints' damping 0.05."""
    return from_mjcf(
        gymnasium_asset("inverted_double_pendulum.xml"),
        name="inverted_double_pendulum",
        damping=damping,
    )


@register_system("ant", heavy=True, oracle="mujoco")
def ant() -> MechanicalSystem:
    """Gymnasium's ``Ant`` model (``ant.xml``): a torso on a free joint
    (quaternion w, x, y, z and position: 7 coordinates, 6 speeds) and four
    legs of two hinges each, joint armature 1 kept, inertias computed by
    MuJoCo from the capsule geoms.  Its contacts with the floor, joint
    limits, motors and joint damping are left out (see
    :func:`eomcompare.systems.from_mjcf`): a floating tree in free fall under the
    model's gravity."""
    return from_mjcf(gymnasium_asset("ant.xml"), name="ant")


@register_system("quadruped", heavy=True, oracle="mujoco")
def quadruped() -> MechanicalSystem:
    """dm-control's ``quadruped`` suite model (``suite/quadruped.xml``):
    two free bodies, the quadruped's torso (four legs of three hinges each,
    joint armature kept) and the ball of its ``fetch`` task, each on its
    own free joint (7 coordinates, 6 speeds), 30 coordinates and 28 speeds
    in all.  Contacts, limits, actuators, tendons and joint damping are
    left out (see :func:`eomcompare.systems.from_mjcf`): the two bodies fly
    apart, each in free fall under the model's gravity, the legs moving
    the torso."""
    return from_mjcf(dm_control_asset("quadruped.xml"), name="quadruped")
