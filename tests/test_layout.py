"""The layout: modules import each other without a cycle, the packages are
layered, and a formulation and a system are each added by one file."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import git_ls_files

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "symbolic",
    "numeric",
    "systems",
    "formulations",
    "references",
    "bench",
    "testing",
    "compare",
)
#: The one import name; the packages above are its subpackages.
PREFIX = "eomcompare"
#: Lower layers first; a package may import only from layers before it.
#: The published references and the hypothesis strategies read systems and
#: formulations; the harness shows the references; the benchmark measures
#: the harness; the package's own modules (``eomcompare/cli.py``, the
#: command line where harness and benchmark meet) are on top.
LAYERS = [
    {"symbolic"},
    {"numeric"},
    {"systems"},
    {"formulations"},
    {"references", "testing"},
    {"compare"},
    {"bench"},
    {PREFIX},
]


def _modules():
    mods = {}
    # The package's own modules, beside the links to its subpackages.
    for path in (ROOT / PREFIX).glob("*.py"):
        name = PREFIX if path.stem == "__init__" else f"{PREFIX}.{path.stem}"
        mods[name] = path
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


def _type_checking_only(tree):
    """The nodes inside ``if TYPE_CHECKING:`` blocks: imports that name a
    class in an annotation and never run."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (
                isinstance(node.test, ast.Attribute)
                and node.test.attr == "TYPE_CHECKING"
            )
        ):
            for inner in node.body:
                skipped.update(map(id, ast.walk(inner)))
    return skipped


def _import_graph():
    """Module -> modules of this project it imports, at any depth of the
    file (function-level imports count: they are cycles all the same).

    Imports under ``if TYPE_CHECKING:`` are left out: a lower layer's
    annotations may name an upper layer's class (the numeric contract's
    ``EquationsOfMotion``) without depending on it when it runs.

    The tree is parsed once per process (four tests read the graph); each
    caller gets a copy of its own.
    """
    return {mod: set(targets) for mod, targets in _parsed_import_graph().items()}


@functools.cache
def _parsed_import_graph():
    mods = _modules()
    graph = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]
        tree = ast.parse(path.read_text())
        annotation_only = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in annotation_only:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                    for a in node.names
                ]
            for target in targets:
                if target.split(".")[1:2] and target.split(".")[1] in PACKAGES:
                    target = target.removeprefix(f"{PREFIX}.")
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != mod:
                    graph[mod].add(target)
    return graph


def _find_cycle(graph):
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_graph_sees_the_imports():
    """The graph is not empty by mistake: known edges are in it."""
    graph = _import_graph()
    assert "symbolic.calculus" in graph["symbolic.frames"]
    assert "numeric.model" in graph["numeric.compiled"]
    assert "numeric.backends" in graph["formulations.result"]  # inside a method
    assert _find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    # A type-checking import is not an edge; the same import outside is.
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from eomcompare.systems.base import MechanicalSystem\n"
        "from eomcompare.systems.base import MechanicalSystem\n"
    )
    skipped = _type_checking_only(tree)
    imports = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)),
        key=lambda n: n.lineno,
    )
    assert [id(n) in skipped for n in imports] == [False, True, False]


def _old_name_imports(paths):
    """Imports that name a subpackage without the ``eomcompare.`` prefix:
    such a module would be loaded twice under two names (in a checkout the
    folder is importable by its own name too)."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in PACKAGES]
    return found


def test_every_import_uses_the_one_name(tmp_path):
    listed = git_ls_files("*.py")
    # The links in eomcompare/ lead to the same files.
    paths = [ROOT / p for p in listed if not p.startswith("eomcompare/")]
    assert len(paths) > 150
    assert not _old_name_imports(paths)
    # The check sees an old-style import, absolute or dotted.
    bad = tmp_path / "bad.py"
    bad.write_text("import numeric.model\nfrom systems import get_system\n")
    assert _old_name_imports([bad]) == ["bad.py: numeric.model", "bad.py: systems"]


def test_no_import_cycle_between_modules():
    cycle = _find_cycle(_import_graph())
    assert cycle is None, " -> ".join(cycle)


def _package_graph(graph):
    """Package -> the packages its modules import."""
    packages = {}
    for mod, deps in graph.items():
        a = mod.split(".")[0]
        packages.setdefault(a, set()).update(
            d.split(".")[0] for d in deps if d.split(".")[0] != a
        )
    return packages


def test_no_import_cycle_between_packages():
    packages = _package_graph(_import_graph())
    assert set(packages) == set(PACKAGES) | {PREFIX}
    cycle = _find_cycle(packages)
    assert cycle is None, " -> ".join(cycle)
    # The check sees a cycle made of two modules each in its own package.
    two = _package_graph({"a.x": {"b.y"}, "b.y": set(), "b.z": {"a.w"}, "a.w": set()})
    assert _find_cycle(two) == ["a", "b", "a"]


def test_packages_import_only_lower_layers():
    layer = {p: i for i, group in enumerate(LAYERS) for p in group}
    wrong = []
    for mod, deps in _import_graph().items():
        for dep in deps:
            a, b = mod.split(".")[0], dep.split(".")[0]
            if layer[b] > layer[a]:
                wrong.append(f"{mod} -> {dep}")
    assert not wrong, wrong


#: The one module that bounds the time work may take by killing a process.
TIME_LIMIT_HOME = "numeric.child"

#: Calls the check finds that time nothing out, each with its reason:
#: module -> the calls (as _process_killers names them, without the line).
NOT_TIME_LIMITS = {
    # _Parts.close stops the report's worker pool once its parts are
    # collected, or when the report is abandoned (an error, Ctrl-C): no
    # deadline, nothing is timed out.
    "compare.report": {"terminate"},
}


def _process_killers(tree) -> list[str]:
    """Calls in ``tree`` that start a process to time it out or kill one:
    ``Process(...)``, ``.terminate()``, ``.kill()`` on a process,
    ``os.kill`` and ``signal.alarm``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        owner = f.value if isinstance(f, ast.Attribute) else None
        owner_name = getattr(owner, "id", "")
        if name in {"Process", "terminate", "alarm"} or (
            name == "kill" and owner_name == "os"
        ):
            found.append(f"{name} (line {node.lineno})")
    return found


def test_one_mechanism_bounds_the_time_of_work():
    """Time limits go through :mod:`numeric.child` (a forked child killed at
    its deadline); no other module starts or kills processes to time work
    out.  (symbolic.canonical caps trigsimp with a CPU timer inside the
    process, which kills nothing.)"""
    wrong = []
    for mod, path in _modules().items():
        if mod == TIME_LIMIT_HOME:
            assert _process_killers(ast.parse(path.read_text()))
            continue
        for call in _process_killers(ast.parse(path.read_text())):
            if call.split(" (")[0] not in NOT_TIME_LIMITS.get(mod, ()):
                wrong.append(f"{mod}: {call}")
    assert not wrong, wrong
    # The check sees a forked process timed out by hand.
    hand = "import multiprocessing as mp\np = mp.Process(target=f)\np.terminate()"
    assert len(_process_killers(ast.parse(hand))) == 2


def test_a_formulation_and_a_system_are_one_file_each(tmp_path):
    """A toy formulation and a toy system, each in its own module outside
    the packages, registered and run through compare.run."""
    (tmp_path / "toy_system.py").write_text(
        textwrap.dedent("""
        import sympy as sm
        import sympy.physics.mechanics as me
        from eomcompare.systems import MechanicalSystem, register_system

        @register_system("toy_spring", variants=({"k": 1.0}, {"k": 4.0}))
        def toy_spring(k=1.0):
            q, u = me.dynamicsymbols("q u")
            m, kk = sm.symbols("m k")
            N = me.ReferenceFrame("N")
            O = me.Point("O")
            O.set_vel(N, 0)
            P = O.locatenew("P", q * N.x)
            P.set_vel(N, u * N.x)
            body = me.Particle("B", P, m)
            sys_ = me.System(N, O)
            sys_.add_bodies(body)
            sys_.q_ind = [q]
            sys_.u_ind = [u]
            sys_.kdes = [q.diff() - u]
            sys_.add_loads(me.Force(P, -kk * q * N.x))
            return MechanicalSystem(
                name="toy_spring", system=sys_,
                parameters={m: 1.0, kk: k}, initial_state={q: 0.5, u: 0.0},
                potential_energy=kk * q**2 / 2, energy_conserved=True)
    """)
    )
    (tmp_path / "toy_formulation.py").write_text(
        textwrap.dedent('''
        import sympy as sm
        import sympy.physics.mechanics as me
        from eomcompare.formulations import Formulation, register, speed_form

        @register
        class Newton(Formulation):
            """m u' = F along each speed: one particle, no constraints."""
            name = "toy_newton"
            handles_holonomic = False
            handles_nonholonomic = False
            handles_rheonomic = False
            uses_multipliers = False
            needs_dependent_solutions = False
            is_peer = False

            def _derive(self, ms, stage):
                N = ms.frame
                with stage("newton"):
                    (body,) = ms.bodies
                    u = ms.speeds
                    M = sm.Matrix([[body.mass]])
                    F = sum((load.vector for load in ms.loads), me.Vector(0))
                    f = sm.Matrix([F.dot(body.masscenter.vel(N).diff(u[0], N))])
                return speed_form(ms, M, f)
    ''')
    )
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(tmp_path)!r}, {str(ROOT)!r}]
        import toy_system, toy_formulation
        from eomcompare import compare
        res = compare.run(["toy_spring"], ["kane", "toy_newton"], t_final=1.0,
                          jobs=1, progress=False, use_cache=False)
        df = res.frame
        print(sorted(set(df["status"])), sorted(set(df["formulation"])),
              len(df), float(df["qdd_max_rel_dev"].max()))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("['ok'] ['kane', 'toy_newton'] 4 "), line
    assert float(line.rsplit(" ", 1)[1]) < 1e-9, line


def test_register_refuses_an_unset_ability():
    import pytest

    from eomcompare.formulations import Formulation, register

    class Vague(Formulation):
        name = "vague"

        def _derive(self, system, stage):  # pragma: no cover - never called
            raise AssertionError

    with pytest.raises(TypeError, match="handles_holonomic"):
        register(Vague)

    class Abstract(Formulation):
        name = "abstract"
        handles_holonomic = handles_nonholonomic = False

    with pytest.raises(TypeError, match="_derive"):
        register(Abstract)
