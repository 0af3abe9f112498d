"""
Linearize and get eigenvalues: the Whipple bicycle
==================================================

Every formulation's equations can be linearized about an operating point
through the numeric contract (:func:`eomcompare.numeric.linearize.linearize`),
in the *minimal* state :math:`(\\mathbf q_{\\mathrm{ind}},
\\mathbf u_{\\mathrm{ind}})`.  The benchmark here is the Whipple bicycle of
Meijaard, Papadopoulos, Ruina and Schwab (2007): upright, straight running
at forward speed :math:`v`, whose lean/steer motion has four eigenvalues
published to fourteen digits.

The bicycle is the heaviest system of the catalogue (seven coordinates,
one holonomic and four nonholonomic constraints); its derivation takes
tens of seconds and is done once.
"""

# %%
# Eigenvalues at one speed
# ------------------------
# :func:`eomcompare.references.published.bicycle_eigenvalues` takes a formulation's name
# (it then derives the bicycle itself) or equations already derived; it
# builds the consistent upright state at speed ``v``, linearizes, and
# returns the lean/steer block's eigenvalues sorted by real part.
import numpy as np

from eomcompare.formulations import get_formulation
from eomcompare.references.published import bicycle_eigenvalues
from eomcompare.systems import get_system

ms = get_system("whipple_bicycle")
eom = get_formulation("kane").derive(ms)
print(eom)
ev = bicycle_eigenvalues(eom, 4.0)
print(ev)

# Meijaard et al. (2007), Table 2, v = 4 m/s: castor, capsize and the weave
# pair (typed here from the paper, not read from this package).
published = np.array(
    [
        -12.15861426576447,
        -1.42944427361326,
        0.41325331521125 - 3.07910818603206j,
        0.41325331521125 + 3.07910818603206j,
    ]
)
assert np.allclose(ev, published, rtol=1e-8, atol=1e-9), ev - published
print("largest difference from the published values:", np.max(np.abs(ev - published)))

# %%
# The same through the general API
# --------------------------------
# What the helper does, step by step, with the public API: derive, build a
# consistent operating point, linearize, take the eigenvalues of the
# lean/steer block (roll ``q4``, steer ``q6`` and their rates).
from eomcompare.numeric.linearize import linearize

rear_radius = ms.states.parameter_vector()[[str(s) for s in ms.parameters].index("rR")]
q = ms.states.solve_dependent_coordinates(0.0, np.zeros(7), np.zeros(1))
u = ms.states.solve_dependent_speeds(0.0, q, np.array([0.0, 0.0, -4.0 / rear_radius]))
qd = ms.states.rates_from_speeds(0.0, q, u)
# The roll and steer torques are constants of the declaration: as inputs
# they give the B matrix.
lin = linearize(eom, (0.0, q, qd), inputs=["T_phi", "T_delta"])
print(lin)
ev_general = np.sort_complex(lin.eigenvalues(["q4", "q6", "u4", "u6"]))
assert np.allclose(np.sort_complex(ev), ev_general, rtol=1e-8, atol=1e-9)

# %%
# Eigenvalues against speed
# -------------------------
# The classic figure: the real parts of the four eigenvalues from 0 to 6
# m/s.  The bicycle is self-stable where all real parts are negative,
# between the weave speed (about 4.29 m/s) and the capsize speed (about
# 6.02 m/s).
import matplotlib.pyplot as plt

speeds = np.linspace(0.0, 6.0, 13)
spectra = np.array([bicycle_eigenvalues(eom, v) for v in speeds])
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(speeds, spectra.real, "k.", ms=5)
ax.plot(speeds, np.abs(spectra.imag), ".", color="tab:blue", ms=4)
ax.axhline(0.0, color="0.5", lw=0.8)
ax.axvspan(
    4.29238253634111,
    6.02426201538837,
    color="tab:green",
    alpha=0.15,
    label="self-stable (published weave and capsize speeds)",
)
ax.set_ylim(-10, 10)
ax.set_xlabel("forward speed v (m/s)")
ax.set_ylabel("eigenvalue: real part (black), |imaginary| (blue)")
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()

# Stable inside the published window, unstable outside it.
stable = spectra.real.max(axis=1) < 0
inside = (speeds > 4.29238253634111) & (speeds < 6.02426201538837)
assert np.array_equal(stable, inside), list(zip(speeds, stable))
