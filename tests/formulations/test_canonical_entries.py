"""The canonical forms of single entries shared between derivations on disk
(formulations.cache.CanonicalEntries with symbolic.canonical.shared_entries):
the same counts as computed afresh, and a file not signed with the key is
never unpickled."""

from __future__ import annotations

import pickle

import sympy as sm

from eomcompare.formulations import get_formulation
from eomcompare.formulations.base import canonical_counts
from eomcompare.formulations.cache import CanonicalEntries
from eomcompare.symbolic.canonical import (
    canonical,
    entry_digest,
    shared_entries,
)
from eomcompare.systems import get_system


def _counts(eom, store=None):
    with shared_entries(store):
        return canonical_counts(
            eom.mass_matrix,
            eom.forcing,
            eom.system.parameters,
            as_derived=dict(eom.op_counts),
        )


def _comparable(counts):
    return {k: v for k, v in counts.items() if k != "canonical_s"}


def test_shared_entries_give_the_counts_computed_afresh(tmp_path):
    store = CanonicalEntries(tmp_path / "canonical")
    system = get_system("n_link_pendulum_on_cart", n=2)
    for name in ("kane", "gibbs_appell", "lagrange", "sympy_kane"):
        eom = get_formulation(name).derive(system)
        fresh = _comparable(_counts(eom))
        # The first pass fills the store, the second reads every entry.
        assert _comparable(_counts(eom, store)) == fresh, name
        assert _comparable(_counts(eom, store)) == fresh, name
    files = list((tmp_path / "canonical").rglob("*.canon"))
    assert files
    # Kane's and Gibbs-Appell's mass matrices share entries: fewer files
    # than the entries of the four derivations.
    assert len(files) < 4 * (9 + 3)


def test_an_entry_read_back_is_the_entry_computed(tmp_path):
    q = sm.Function("q")(sm.Symbol("t"))
    m = sm.Symbol("m", positive=True)
    exprs = [
        m * sm.sin(q) ** 2 + m * sm.cos(q) ** 2,
        (2 * m + 2 * q) / 2,
        m * sm.sin(q) ** 2 + m * sm.cos(q) ** 2,
    ]
    fresh = canonical(exprs).exprs
    store = CanonicalEntries(tmp_path)
    with shared_entries(store):
        first = canonical(exprs).exprs
        again = canonical(exprs).exprs
    assert first == fresh == again
    assert len(list(tmp_path.rglob("*.canon"))) == 2


def test_digest_tells_entries_apart_and_equal_ones_alike():
    x = sm.Symbol("x")
    xp = sm.Symbol("x", positive=True)
    assert entry_digest(x + 1) == entry_digest(sm.Add(1, x))
    assert entry_digest(x + 1) != entry_digest(xp + 1)
    assert entry_digest(sm.sin(x)) != entry_digest(sm.cos(x))
    assert entry_digest(sm.Function("q")(x)) != entry_digest(sm.Function("r")(x))


def test_a_planted_entry_is_refused_and_computed_again(tmp_path):
    x = sm.Symbol("x")
    entry = 2 * x * sm.sin(x) ** 2 + 2 * x * sm.cos(x) ** 2
    store = CanonicalEntries(tmp_path)
    with shared_entries(store):
        right = canonical([entry]).exprs
    (path,) = tmp_path.rglob("*.canon")
    # A payload that would run code when unpickled, without the signature
    # (another user's file, or a damaged one): it must not be loaded.
    head, rest = path.read_bytes().split(b"\n", 1)
    signature, _ = rest.split(b"\n", 1)
    planted = pickle.dumps(sm.Symbol("planted"))
    path.write_bytes(head + b"\n" + signature + b"\n" + planted)
    path.chmod(0o600)
    with shared_entries(store):
        assert canonical([entry]).exprs == right
    assert any("signature mismatch" in r for r in store.refused)
    # The refused file was replaced by the entry computed again.
    assert CanonicalEntries(tmp_path).get(entry_digest(entry)) == right[0]


def test_a_store_that_cannot_be_used_computes_every_entry(tmp_path):
    x = sm.Symbol("x")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the directory would be")
    with shared_entries(CanonicalEntries(blocked)):
        out = canonical([x * sm.sin(x) ** 2 + x * sm.cos(x) ** 2]).exprs
    assert out == (x,)


def test_a_store_inside_a_cache_others_can_write_keeps_nothing(tmp_path):
    x = sm.Symbol("x")
    cache = tmp_path / "derivations"
    cache.mkdir()
    cache.chmod(0o777)
    with shared_entries(CanonicalEntries(cache / "canonical")):
        out = canonical([x * sm.sin(x) ** 2 + x * sm.cos(x) ** 2]).exprs
    assert out == (x,)
    assert not (cache / "canonical").exists()
