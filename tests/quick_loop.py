"""Tests left out of the quick loop (``pytest -m "not slow"``) by measure.

The README's test command runs every test; ``-m "not slow"`` is the loop
run while working, and must stay within two minutes on two cores.  Three
ways put a test out of it, all of them marks the README's command ignores:

- a test slow by nature (a large declaration, a peer's long derivation)
  carries the ``slow`` mark where it is written;
- :data:`MEASURED_SLOW`: tests slow because of what they compare with, not
  what they check: each check keeps a cheaper instance in the quick loop
  (named in the comment), measured with ``--durations`` (seconds in the
  comment);
- the processor-time budget: a test that took more than
  :data:`CPU_BUDGET_S` of processor time (its own process's and the
  processes it started and waited for, set-up and tear-down included) in
  the last measurement, recorded in ``quick_loop_cpu.json``.  Processor
  time rather than wall time, so that a measurement taken on a busy
  machine marks the same tests as one on a quiet machine.  To measure::

      EOMCOMPARE_TEST_CPU=/tmp/cpu python -m pytest -q -n auto
      python tests/quick_loop.py record /tmp/cpu

  ``record`` updates the entries of the tests measured (added over the
  budget, removed under it) and keeps the others.  A check whose only test
  is over the budget is checked by the README's command (CI) alone.

``tests/conftest.py`` marks them; an entry of either list that names no
test is an error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

#: Test ids (``path::name[params]``) marked slow at collection.
MEASURED_SLOW = {
    # Hypothesis properties of the closed-loop class, 24 s and 18 s.  The
    # closed loops stay in the quick loop through tests/test_contract.py
    # and the catalogue's four-bar and crank-slider variants.
    "tests/test_properties.py::test_closed_loops",
    "tests/test_properties.py::test_reactions_from_multipliers_equal_auxiliary_speeds",
    # Derives n_link_pendulum(20) to pass a 0.01 s count cap, 24 s.  The
    # derivation cap keeps a quick case (a derivation past its cap is
    # recorded as capped); the counting cap has none: counting must outlast
    # the parent's 0.2 s polling to be seen passing its cap.
    "tests/bench/test_bench.py::test_counting_past_its_cap_keeps_the_timings",
    # The published solar-panel equations checked symbolically, 14 s; the
    # numeric check against the same equations stays.
    "tests/systems/test_solar_panels.py::test_published_equations_hold_symbolically",
    # sympy's own equations of the contact-coordinate disc at every state,
    # 14 s; the contact-point disc against sympy's asserted equations stays.
    "tests/systems/test_consistency.py::"
    "test_rolling_disc_with_contact_coordinates_matches_sympy_everywhere",
    "tests/systems/test_consistency_properties.py::"
    "test_unlocated_velocities_strategy_records_the_new_point",
    # A full URDF robot read twice, 13.5 s, and the damping option on two
    # chains by two formulations; the snapping rule and the damping term on
    # one joint stay (tests/systems/test_urdf_one_joint.py).
    "tests/systems/test_urdf.py::test_rounded_angles_snap_to_exact_rotations",
    "tests/systems/test_urdf.py::test_damping_option_against_pinocchio",
    # Counts of spatial_chain up to n = 8, 13 s; n <= 4 stay in
    # tests/systems/test_robots_articulated_body.py.
    "tests/bench/test_robots_bench.py::test_chain_counts_against_aba_and_the_crossing",
    # Six-joint arms by the slower formulations, 6-12 s each: every
    # formulation stays on spatial_chain(n <= 4), kane on each arm.
    "tests/systems/test_robots.py::test_accelerations_equal_pinocchio[puma560-lagrange]",
    "tests/systems/test_robots.py::"
    "test_accelerations_equal_pinocchio[puma560-modified_lagrange]",
    "tests/systems/test_robots.py::test_accelerations_equal_pinocchio[puma560-gibbs_appell]",
    "tests/systems/test_robots.py::test_accelerations_equal_pinocchio[stanford_arm-lagrange]",
    "tests/systems/test_robots.py::"
    "test_accelerations_equal_pinocchio[stanford_arm-modified_lagrange]",
    "tests/systems/test_robots.py::"
    "test_accelerations_equal_pinocchio[stanford_arm-gibbs_appell]",
    "tests/systems/test_robots_kane_recursive.py::"
    "test_recursion_equals_pinocchio_rnea[puma560-<lambda>]",
    "tests/systems/test_robots_articulated_body.py::"
    "test_accelerations_equal_pinocchio[spatial_chain-options4]",
    # The recursion against Kane's and Lagrange's mass-matrix forms on the
    # three-joint chain, 6 s; the two-joint chain stays (the arms are
    # marked slow where they are written).
    "tests/systems/test_robots_kane_recursive.py::"
    "test_recursion_equals_mass_matrix_form[spatial_chain-options2]",
    # The non-normalised continuous axis by the slower formulations and the
    # peer, 4-6.5 s each; kane stays, and every formulation on the other
    # joint types.
    "tests/systems/test_urdf.py::test_joint_types_against_pinocchio[continuous-lagrange]",
    "tests/systems/test_urdf.py::"
    "test_joint_types_against_pinocchio[continuous-modified_lagrange]",
    "tests/systems/test_urdf.py::test_joint_types_against_pinocchio[continuous-gibbs_appell]",
    "tests/systems/test_urdf.py::test_joint_types_against_pinocchio[continuous-sympy_kane]",
    # Andrews' squeezer by the two Lagrange derivations, 9-10 s; kane,
    # gibbs_appell and sympy_kane stay.
    "tests/systems/test_andrews_squeezer.py::"
    "test_accelerations_equal_the_test_set_equations[sympy_lagrange]",
    "tests/systems/test_andrews_squeezer.py::"
    "test_accelerations_equal_the_test_set_equations[lagrange]",
    # Random consistent states of the two largest declarations, 6-9 s;
    # the other sixteen systems stay.
    "tests/systems/test_declaration.py::"
    "test_random_states_are_consistent_and_reproducible[whipple_bicycle]",
    "tests/systems/test_declaration.py::"
    "test_random_states_are_consistent_and_reproducible[panda]",
    # The peers' and Kolev's slowest derivations of small systems, 4-7 s;
    # the other formulations on the same systems stay.
    "tests/test_contract.py::"
    "test_same_accelerations_as_kane[modified_lagrange-four_bar-coordinates=redundant]",
    "tests/test_contract.py::"
    "test_same_accelerations_as_kane[sympy_lagrange-four_bar-coordinates=minimal]",
    "tests/test_contract.py::"
    "test_same_accelerations_as_kane[sympy_lagrange-n_link_pendulum_on_cart]",
    "tests/formulations/test_multipliers.py::"
    "test_rolling_disc_multipliers_are_the_friction_force[sympy_lagrange]",
    # Kane & Levinson's ex. 11.7 by the two peers, 2-4 s each; the four
    # project formulations stay.
    "tests/systems/test_declarations_round3.py::"
    "test_coincident_point_is_no_obstacle_to_any_formulation[sympy_kane]",
    "tests/systems/test_declarations_round3.py::"
    "test_coincident_point_is_no_obstacle_to_any_formulation[sympy_lagrange]",
    # Kolev's transcription of a spatial chain, 11 s on a quiet machine; the
    # planar chains stay.
    "tests/formulations/test_modified_lagrange.py::"
    "test_nothing_to_eliminate_gives_the_split_transcription[spatial_chain]",
    # Second instances of checks whose first stays (quiet machine, before
    # the tests ran with a larger sympy cache):
    # - odeint's sweep, 4.8 s; the sweep's CSV schema and resume (solve_ivp)
    #   stay in test_the_sweep_writes_the_csv_schema_and_resumes.
    "tests/compare/test_precision.py::"
    "test_odeint_sweeps_the_pendulum_and_the_watched_equations",
    # - pytest's options failing a run in a pytest of its own, 3.8 s; the
    #   options as configured stay in
    #   test_the_test_command_runs_the_docstring_examples_strictly, and the
    #   checkers failing in test_the_checks_can_fail.
    "tests/test_habits.py::test_the_options_fail_a_run",
    # - a damaged compiled library rebuilt, 3.6 s in interpreters of its
    #   own; the signature check that refuses it stays in
    #   test_a_planted_library_is_never_opened.
    "tests/numeric/test_compiled_cache.py::test_a_damaged_library_is_rebuilt",
    # - robosuite's Panda against MuJoCo, 3.3 s; the MJCF importer against
    #   MuJoCo stays on tests/systems/test_mjcf.py's models and the two free
    #   bodies by kane.
    "tests/systems/test_mjcf_robosuite.py::test_panda_agrees_with_mujoco",
    # - random spatial trees, 3.3 s; random planar trees stay.
    "tests/test_properties.py::test_spatial_trees",
    # - the branched floating base by the articulated-body recursion,
    #   2.3-3 s each; the two-body floating base stays.
    "tests/systems/test_articulated_floating.py::"
    "test_speed_rates_equal_pinocchio_aba[branched]",
    "tests/systems/test_articulated_floating.py::test_speed_rates_equal_kane[branched]",
    # - the rolling disc linearised by gibbs_appell and the sympy_lagrange
    #   peer, 1-2 s each; kane, lagrange and modified_lagrange stay.
    "tests/numeric/test_linearize.py::"
    "test_rolling_disc_upright_rolling_against_sympy[gibbs_appell]",
    "tests/numeric/test_linearize.py::"
    "test_rolling_disc_upright_rolling_against_sympy[sympy_lagrange]",
    # - the RX-90's inverse dynamics against Pinocchio, 1.7 s; the Stanford
    #   arm's stays.
    "tests/systems/test_khalil_robots.py::"
    "test_inverse_dynamics_equals_pinocchio_rnea[rx90-options1]",
    # - the sympy_lagrange peer refusing constraint forces, 1.6 s; the
    #   project's formulations without the means stay.
    "tests/formulations/test_auxiliary_speeds.py::"
    "test_formulations_without_the_means_refuse_constraint_forces[sympy_lagrange]",
    # - the articulated-body recursion on two six-joint arms, 0.8-1.1 s
    #   each; spatial_chain(n <= 4) and the Stanford arm stay.
    "tests/systems/test_robots_articulated_body.py::"
    "test_accelerations_equal_pinocchio[puma560-options6]",
    "tests/systems/test_robots_articulated_body.py::"
    "test_accelerations_equal_pinocchio[ur5-options7]",
    # - the disc's steady rolling by the sympy_lagrange peer, 0.9 s; every
    #   other formulation stays.
    "tests/references/test_published.py::"
    "test_steady_circular_rolling_is_a_relative_equilibrium[0.3-4.0-sympy_lagrange]",
    # - random consistent states of Bricard's mechanism and the quadruped,
    #   about 1 s each; the other systems stay.
    "tests/systems/test_declaration.py::"
    "test_random_states_are_consistent_and_reproducible[bricard]",
    "tests/systems/test_declaration.py::"
    "test_random_states_are_consistent_and_reproducible[quadruped]",
    # - free flight by lagrange and modified_lagrange, about 1 s each;
    #   kane's stays, and Kolev's floating base in
    #   tests/formulations/test_modified_lagrange_floating.py.
    "tests/formulations/test_floating_base.py::"
    "test_free_flight_conserves_energy_and_momenta[lagrange]",
    "tests/formulations/test_floating_base.py::"
    "test_free_flight_conserves_energy_and_momenta[modified_lagrange]",
}


#: Processor seconds above which a test leaves the quick loop.
CPU_BUDGET_S = 1.0

#: The last measurement's tests over :data:`CPU_BUDGET_S`, with their
#: processor seconds.
CPU_TABLE = Path(__file__).with_name("quick_loop_cpu.json")


def over_budget(table: Path = CPU_TABLE) -> dict[str, float]:
    """The tests over the budget in ``table``: test id -> processor seconds."""
    if not table.is_file():
        return {}
    return dict(json.loads(table.read_text())["tests"])


def measured(directory: Path) -> dict[str, float]:
    """Each test's processor seconds in the ``cpu-*.jsonl`` files that a
    run with ``EOMCOMPARE_TEST_CPU=directory`` wrote (the largest, if a
    test ran twice)."""
    seconds: dict[str, float] = {}
    for path in sorted(directory.glob("cpu-*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                seconds[row["test"]] = max(seconds.get(row["test"], 0.0), row["cpu_s"])
    return seconds


def record(directories: list[Path], table: Path = CPU_TABLE) -> dict[str, float]:
    """Update ``table`` with the tests measured in ``directories``: a test
    measured over :data:`CPU_BUDGET_S` is entered with its seconds, one
    measured under it is removed, the others are kept."""
    entries = over_budget(table)
    for directory in directories:
        for test, cpu_s in measured(directory).items():
            if cpu_s > CPU_BUDGET_S:
                entries[test] = round(cpu_s, 2)
            else:
                entries.pop(test, None)
    body = {
        "budget_cpu_s": CPU_BUDGET_S,
        "about": "Tests over the quick loop's processor-time budget "
        "(tests/quick_loop.py); written by `python tests/quick_loop.py record`.",
        "tests": dict(sorted(entries.items())),
    }
    table.write_text(json.dumps(body, indent=1) + "\n")
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tests/quick_loop.py",
        description="Update the quick loop's processor-time table.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser(
        "record", help="enter the measurements of EOMCOMPARE_TEST_CPU runs"
    )
    rec.add_argument("directories", nargs="+", type=Path)
    args = parser.parse_args(argv)
    missing = [d for d in args.directories if not any(d.glob("cpu-*.jsonl"))]
    if missing:
        parser.error(f"no cpu-*.jsonl measurements in {', '.join(map(str, missing))}")
    before = over_budget()
    after = record(args.directories)
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    print(
        f"{len(after)} tests over {CPU_BUDGET_S} s ({len(added)} added, {len(removed)} removed)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
