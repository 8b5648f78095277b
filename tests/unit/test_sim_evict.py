"""EvictionIndex (per-RDD lazy heaps merged through ``top``) against a sorted list: random
inserts, accesses, priority changes, removals and unpersists, with and without admission (a
store that would evict a block ranked above the stored one fails)."""
from hypothesis import given, settings, strategies as st

from lrc.evict import EvictionIndex

NBLOCKS = 12


def _rdd(b):
    return b % 3


@st.composite
def operations(draw):
    ops = []
    for _ in range(draw(st.integers(1, 60))):
        ops.append((draw(st.sampled_from(["insert", "insert", "touch", "prio", "remove", "drop",
                                          "tidy"])),
                    draw(st.integers(0, NBLOCKS - 1)), draw(st.integers(-2, 2)),
                    frozenset(draw(st.lists(st.integers(0, NBLOCKS - 1), max_size=3)))))
    return draw(st.integers(1, 12)), draw(st.lists(st.integers(1, 4), min_size=NBLOCKS,
                                                   max_size=NBLOCKS)), ops


@settings(max_examples=300, deadline=None)
@given(operations(), st.booleans())
def test_index_evicts_like_a_sorted_list(case, admit):
    capacity, sizes, ops = case
    idx = EvictionIndex(capacity, sizes, [_rdd(b) for b in range(NBLOCKS)], admit=admit)
    model: dict[int, tuple] = {}  # block -> (priority, stamp)
    for stamp, (op, b, prio, pinned) in enumerate(ops):
        if op == "insert" and b not in model:
            need = sum(sizes[v] for v in model) + sizes[b] - capacity
            order = sorted((p, s, v) for v, (p, s) in model.items()
                           if _rdd(v) != _rdd(b) and v not in pinned)
            want, freed = [], 0
            for p, _, v in order:
                if freed >= need or (admit and p > prio):
                    break
                want.append(v)
                freed += sizes[v]
            got = idx.insert(b, prio, stamp, pinned)
            if freed < need:
                assert list(got) == [] and b not in idx
            else:
                assert list(got) == want
                for v in want:
                    del model[v]
                model[b] = (prio, stamp)
        elif op == "touch" and b in model:
            idx.touch(b, prio, stamp)
            model[b] = (prio, stamp)
        elif op == "prio" and b in model:
            idx.set_priority(b, prio)
            model[b] = (prio, model[b][1])
        elif op == "remove" and b in model:
            idx.remove(b)
            del model[b]
        elif op == "drop":
            gone = idx.drop_rdd(_rdd(b))
            assert sorted(gone) == sorted(v for v in model if _rdd(v) == _rdd(b))
            for v in gone:
                del model[v]
        elif op == "tidy":
            idx.tidy()
        assert len(idx) == len(model) and idx.used == sum(sizes[v] for v in model)
        assert all((v in idx) == (v in model) for v in range(NBLOCKS))


def test_admission_keeps_a_block_ranked_above_the_one_being_stored():
    """Without admission a dead block (priority -1) evicts a block read again (priority 2);
    with it, the store fails and the ranked block stays; an equal rank is evicted (LRU ties)."""
    rdd_of = [0, 1, 2]
    for admit, kept in ((False, False), (True, True)):
        idx = EvictionIndex(2, [2, 2, 2], rdd_of, admit=admit)
        idx.insert(0, 2.0, 0)
        assert list(idx.insert(1, -1.0, 1)) == ([] if admit else [0])
        assert (0 in idx) is kept and (1 in idx) is not kept
    idx = EvictionIndex(2, [2, 2, 2], rdd_of, admit=True)
    idx.insert(0, 1.0, 0)
    assert list(idx.insert(2, 1.0, 1)) == [0] and 2 in idx


def test_a_store_is_judged_at_its_store_rank_and_held_at_its_own():
    """crd's rank of a store (Policy.bind_stored) can be below the block's rank once held: the
    admission uses the first, the order of what is held the second."""
    idx = EvictionIndex(4, [2, 2, 2], [0, 1, 2], admit=True)
    idx.insert(0, 2.0, 0)
    idx.insert(1, 1.0, 1)
    assert list(idx.insert(2, 5.0, 2, admit_at=-1.0)) == [] and 2 not in idx  # refused
    assert list(idx.insert(2, 5.0, 3, admit_at=1.0)) == [1] and 2 in idx
    assert list(idx.shrink(2)) == [0]  # held at 5.0, above block 0


def test_simulate_cli_admits_as_the_executors_would(tmp_path):
    """`--admit auto` replays admission where spark.lrc.admit's default turns it on live (crd),
    `--admit` alone for every policy but lru (as before modes), none without it."""
    import json

    from lrc.cli import main

    def admitted(*flag: str) -> dict[str, bool]:
        out = tmp_path / "rows.json"
        assert main(["simulate", "--workload", "ml", "--policies", "lru,lrc,crd",
                     "--cache-fraction", "0.7", *flag, "--json", str(out)]) == 0
        return {r["policy"]: r.get("admit", False) for r in json.loads(out.read_text())["results"]}

    assert admitted() == {"lru": False, "lrc": False, "crd": False}
    assert admitted("--admit", "auto") == {"lru": False, "lrc": False, "crd": True}
    assert admitted("--admit") == {"lru": False, "lrc": True, "crd": True}
