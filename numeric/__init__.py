"""The numeric runtime: numbers from the symbolic contract.

- :mod:`numeric.model` turns an ``EquationsOfMotion`` into a numeric model
  (mass matrix and forcing, right-hand side, coordinate accelerations);
  it is the lambdify backend, and :mod:`numeric.compiled` the C one;
- :mod:`numeric.backends` registers them in ``BACKENDS`` (``eom.numeric(
  backend="c")``);
- :mod:`numeric.states` is the numeric half of a declaration: constraint
  residuals, Newton on the holonomic constraints, consistent and random
  states, energy;
- :mod:`numeric.integrate` integrates with constraint projection;
- :mod:`numeric.linearize` linearizes about an operating point.

This package imports nothing of ``systems`` or ``formulations``: it reads
the objects they produce by their attributes, so importing it costs no
derivation machinery and creates no cycle.
"""
