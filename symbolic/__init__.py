"""The symbolic toolkit every formulation builds on.

Nothing here knows about formulations, catalogue systems or numbers:

- :mod:`symbolic.calculus` differentiates by walking an expression tree
  once (coefficients of linear expressions, gradients, Jacobians,
  directional and time derivatives) and substitutes with a shared memo;
- :mod:`symbolic.frames` keeps vectors as components in each body's own
  frame with successive same-axis rotations merged (velocities,
  accelerations, kinetic energy, generalized forces);
- :mod:`symbolic.identities` decides identities at random points;
- :mod:`symbolic.linsolve` solves small linear systems without spurious
  pivots;
- :mod:`symbolic.dense` builds and reads sympy matrices of expressions
  without the checks of their constructor;
- :mod:`symbolic.plain` replaces functions of time by plain symbols.
"""
