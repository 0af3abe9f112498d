"""Test tooling for users' own dynamics code (needs the ``test`` extra).

:mod:`eomcompare.testing.strategies` holds hypothesis strategies that draw random
mechanical systems (open chains and trees, closed linkages, nonholonomic
sleighs and discs, driven systems) as
:class:`~eomcompare.systems.MechanicalSystem` declarations.
"""
