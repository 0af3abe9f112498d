"""eomcompare: equations of motion derived several ways, compared side by side.

The one import name of the project.  Its subpackages, from the lowest
floor up:

- :mod:`eomcompare.symbolic` — the symbolic toolkit (calculus, frames,
  operation counts);
- :mod:`eomcompare.numeric` — the numeric contract and its backends;
- :mod:`eomcompare.systems` — the declaration (``MechanicalSystem``) and
  the catalogue;
- :mod:`eomcompare.formulations` — the formulation backends;
- :mod:`eomcompare.references`, :mod:`eomcompare.compare`,
  :mod:`eomcompare.bench`, :mod:`eomcompare.testing` — the published
  references and oracles, the comparison harness, the benchmark and the
  property-based strategies.

In the repository the subpackages are the top-level folders
(``formulations/``, ``systems/``, ``compare/`` …) and this folder holds a
relative symbolic link to each, so a checkout, an editable install and
the wheel import the same names; the wheel holds the files themselves
under ``eomcompare/``.  Importing this package imports none of them
(``python -m eomcompare`` starts the command line).
"""

__version__ = "0.1.0"
