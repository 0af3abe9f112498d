"""The performance benchmark behind ``python -m eomcompare bench``.

:mod:`eomcompare.bench.suite` measures derivation time and operation counts against
the size of a scalable system, right-hand-side cost against Pinocchio's
``aba`` and end-to-end solve time, and checks them against the project's
performance targets.  Needs the ``bench`` extra.  :mod:`eomcompare.bench.methods`
measures the methods' own options (the Gibbs-Appell ways of forming S,
Kolev's equations against the approaches they improve on).
"""
