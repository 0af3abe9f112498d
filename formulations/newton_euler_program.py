"""The evaluation program of the customised Newton-Euler recursion
(:mod:`eomcompare.formulations.newton_euler`): every intermediate
expression named by a new symbol, the fallbacks a definition may take
where nothing else needs one of its symbols, and the program pruned to
what the outputs need."""

from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef

__all__ = ["_Program", "_same"]


def _same(x):
    return x


def _is_input(e):
    """An atom or a coordinate, speed, ``q(t)``: named as it is (a speed
    named anew would hide its products from cse)."""
    return e.is_Atom or isinstance(e, AppliedUndef)


class _Program:
    """Names every intermediate expression (entries of lists, matrices,
    dicts) by a new symbol, except atoms, signed atoms and parameter-only
    expressions (constants, left to the count's per-parameter-set part)."""

    def __init__(self, parameters):
        self.parameters = set(parameters)
        self.symbols, self.definitions = [], []
        # What each definition is part of (set by the caller, read by
        # bench.khalil's breakdown): ``(link, stage)`` or None.
        self.stage, self.stages = None, []
        # (symbol, a symbol its definition uses, the definition without
        # it): taken by pruned() where nothing else needs that symbol
        # (all the fallbacks of one symbol at once).
        self.fallbacks = []

    def __call__(self, x):
        if isinstance(x, list):
            return [self(e) for e in x]
        if isinstance(x, dict):
            return {k: self(e) for k, e in x.items()}
        if isinstance(x, sm.MatrixBase):
            return x.applyfunc(self)
        e = sm.sympify(x)
        if (
            _is_input(e)
            or (
                e.is_Mul
                and len(e.args) == 2
                and e.args[0] is sm.S.NegativeOne
                and _is_input(e.args[1])
            )
            or e.free_symbols <= self.parameters
        ):
            return e
        s = sm.Symbol(f"_ne{len(self.symbols)}")
        self.symbols.append(s)
        self.definitions.append(e)
        self.stages.append(self.stage)
        return s

    def scaled(self, v):
        """The entries of a list named, except a constant times one input
        (``RL2 q''_1``): left whole, a turn that follows multiplies the
        input by its cosine and sine, products cse shares with the turn
        of the input alone (``wd``'s)."""
        out = []
        for e in v:
            e = sm.sympify(e)
            moving = [a for a in e.args if not a.free_symbols <= self.parameters]
            plain = e.is_Mul and len(moving) == 1 and _is_input(moving[0])
            out.append(e if plain else self(e))
        return out

    def _in_order(self, keep, index):
        """``keep`` (indices of definitions) reordered so that each comes
        after the symbols it uses (a fallback may use a symbol named
        later), otherwise in the order given."""
        kept = set(keep)
        done, out = set(), []
        for start in keep:
            stack = [(start, False)]
            while stack:
                i, expanded = stack.pop()
                if i in done:
                    continue
                if expanded:
                    done.add(i)
                    out.append(i)
                    continue
                stack.append((i, True))
                deps = sorted(
                    index[x]
                    for x in self.definitions[i].free_symbols
                    if x in index and index[x] in kept and index[x] not in done
                )
                stack += [(d, False) for d in reversed(deps)]
        return out

    def pruned(self, outputs):
        """The :class:`~eomcompare.formulations.articulated_body.Assignments` of the
        definitions ``outputs`` need, in order."""
        from .articulated_body import Assignments

        index = {s: i for i, s in enumerate(self.symbols)}

        def needed():
            need = set()
            stack = [
                s for e in outputs for s in sm.sympify(e).free_symbols if s in index
            ]
            while stack:
                s = stack.pop()
                if s in need:
                    continue
                need.add(s)
                stack += [
                    x for x in self.definitions[index[s]].free_symbols if x in index
                ]
            return need

        need = needed()
        # The fallbacks sharing one ``via`` are taken together, once
        # nothing outside them needs it; taking some frees others (a
        # leaf's moment frees its parent's wd, whose U entries then free
        # the grandparent's): until none is left to take.
        groups = {}
        for s, via, alone in self.fallbacks:
            groups.setdefault(via, []).append((s, alone))
        outside = {x for e in outputs for x in sm.sympify(e).free_symbols}
        changed = True
        while changed:
            changed = False
            for via, members in groups.items():
                mine = {s for s, _ in members}
                if via not in need or via in outside:
                    continue
                if any(
                    via in self.definitions[index[t]].free_symbols
                    for t in need
                    if t not in mine
                ):
                    continue
                taken = False
                for s, alone in members:
                    if s in need and via in self.definitions[index[s]].free_symbols:
                        self.definitions[index[s]] = alone
                        taken = True
                if taken:
                    need = needed()
                    changed = True
        keep = [i for i in range(len(self.symbols)) if self.symbols[i] in need]
        if self.fallbacks:
            keep = self._in_order(keep, index)
        return Assignments(
            tuple(self.symbols[i] for i in keep),
            tuple(self.definitions[i] for i in keep),
            tuple(outputs),
        )
