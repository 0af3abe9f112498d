"""The symbolic toolkit every formulation builds on.

Nothing here knows about formulations, catalogue systems or numbers:

- :mod:`eomcompare.symbolic.calculus` differentiates by walking an expression tree
  once (coefficients of linear expressions, gradients, Jacobians,
  directional and time derivatives) and substitutes with a shared memo;
- :mod:`eomcompare.symbolic.frames` keeps vectors as components in each body's own
  frame with successive same-axis rotations merged (velocities,
  accelerations, kinetic energy, generalized forces);
- :mod:`eomcompare.symbolic.identities` decides identities at random points;
- :mod:`eomcompare.symbolic.linsolve` solves small linear systems without spurious
  pivots;
- :mod:`eomcompare.symbolic.dense` builds and reads sympy matrices of expressions
  without the checks of their constructor;
- :mod:`eomcompare.symbolic.plain` replaces functions of time by plain symbols;
- :mod:`eomcompare.symbolic.text` writes a function of time's name for a
  reader and reads ``key=value`` options.
"""
