"""What the equations are checked against, none of it written here.

- :mod:`eomcompare.references.published` holds published numbers (the Whipple
  bicycle's eigenvalues of Meijaard et al. 2007, the rolling disc's critical
  speed, the Andrews squeezer's reference solution, Kolev's cost table) and
  the functions that compute the same quantities through the contract;
- :mod:`eomcompare.references.oracles` builds Pinocchio models of the same mechanisms
  for an independent forward-dynamics answer.
"""
