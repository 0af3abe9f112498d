"""Floating-base robots from example-robot-data, imported with
``from_urdf(..., floating_base=True)`` (see :mod:`eomcompare.systems.pinocchio_states`
for the free joint and Pinocchio's conventions)."""

from __future__ import annotations

from .base import MechanicalSystem
from .catalogue import register_system
from .robots import robot_data_path
from .urdf import from_urdf

__all__ = ["solo12"]


@register_system("solo12", heavy=True, oracle="pinocchio")
def solo12() -> MechanicalSystem:
    """The Solo-12 quadruped (Open Dynamic Robot Initiative) from
    example-robot-data's ``solo_description/robots/solo12.urdf``: a free
    base (7 coordinates, 6 speeds) and four legs of three revolute joints,
    19 coordinates and 18 speeds; the links fixed to the base are merged
    into it.  Checked against Pinocchio's ``aba`` with a free-flyer root."""
    return from_urdf(
        robot_data_path("solo_description/robots/solo12.urdf"),
        name="solo12",
        floating_base=True,
    )
