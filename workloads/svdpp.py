"""ALS matrix factorisation with an SVD++-style implicit-feedback table (long reuse distances).

Caching pattern:
- `by_user` (user -> sorted (item, rating) list + payload) and `by_item` (item -> sorted
  (user, rating) list + payload), cached once; `by_user` is read in the first half of every round,
  `by_item` in the second half: two hot RDDs, each idle for half a round.
- `implicit` (user -> every item the user touched + payload), cached and materialised at the start,
  then read only by the evaluation every `eval_every` rounds and at the end: long reuse distance.
- `test` (held-out ratings keyed by user), cached at the start, read by the same evaluations.
- `user_f_i` / `item_f_i` (factor vectors), cached each round (collected into a broadcast, and
  `user_f_i` is joined again by the evaluation), never unpersisted: dead one round later.
- Two jobs per round plus an evaluation job every `eval_every` rounds.

Every per-key computation sorts its inputs first, so factors are bit-identical whatever the
partitioning; only the RMSE (a float sum) is rounded.
"""
from __future__ import annotations

import math

import numpy as np

from workloads import common

USERS_PER_SCALE = 2_000
ITEMS_PER_SCALE = 400
RATINGS_PER_USER = 25
RANK = 8
LAMBDA = 0.1
LIST_BYTES = 128


def ratings(seed: int, idx: np.ndarray, n_users: int, n_items: int):
    """Rating number idx -> (user, item, rating 1..5) from hidden user/item biases plus noise."""
    user = idx // RATINGS_PER_USER
    item = common.powerlaw(seed, 40, idx, n_items, alpha=1.5)
    bu = common.uniform(seed, 41, user) * 2 - 1
    bi = common.uniform(seed, 42, item) * 2 - 1
    noise = common.uniform(seed, 43, idx) - 0.5
    r = np.clip(np.rint(3 + 1.5 * (bu + bi) + noise), 1, 5).astype(np.int64)
    return user, item, r


def _solve(fixed: np.ndarray):
    """Least squares for one key given the other side's factors (rows of `fixed`)."""
    def solve(value):
        pairs, _blob = value
        ids = np.array([p[0] for p in pairs], dtype=np.int64)
        r = np.array([p[1] for p in pairs], dtype=np.float64)
        v = fixed[ids]
        a = v.T @ v + LAMBDA * len(ids) * np.eye(RANK)
        return np.linalg.solve(a, v.T @ r)
    return solve


def _as_matrix(pairs, n: int) -> np.ndarray:
    out = np.zeros((n, RANK))
    for k, vec in pairs:
        out[k] = vec
    return out


def _errors(items_bc):
    def err(kv):
        user, ((item, r), (uvec, _touched)) = kv[0], kv[1]
        pred = float(np.clip(uvec @ items_bc.value[item], 1, 5))
        return (user, item, r, round(pred, 4))
    return err


def _kv_user(rec):
    u, i, r = rec
    return u, (i, r)


def run(spark, *, scale: int = 1, seed: int = 42, storage_level: str | None = None,
        partitions: int | None = None, rounds: int = 6, eval_every: int = 3) -> dict:
    """ALS (rank 8) on 2k*scale users x 400*scale items, 25 ratings per user, 10% held out."""
    sc = spark.sparkContext
    level = common.storage_level(storage_level)
    parts = partitions or common.default_partitions(spark, scale)
    nu, ni = USERS_PER_SCALE * scale, ITEMS_PER_SCALE * scale

    def make(idx):
        u, i, r = ratings(seed, idx, nu, ni)
        return zip(idx.tolist(), u.tolist(), i.tolist(), r.tolist())

    allr = common.generate(sc, nu * RATINGS_PER_USER, parts, make)
    train = allr.filter(lambda t: t[0] % 10 != 0).map(lambda t: t[1:])
    by_user = common.persist(
        train.map(_kv_user).groupByKey(parts).mapValues(sorted)
        .mapPartitionsWithIndex(common.with_payload(seed, 44, LIST_BYTES), True), level, "by_user")
    by_item = common.persist(
        train.map(lambda t: (t[1], (t[0], t[2]))).groupByKey(parts).mapValues(sorted)
        .mapPartitionsWithIndex(common.with_payload(seed, 45, LIST_BYTES), True), level, "by_item")
    implicit = common.persist(
        allr.map(lambda t: (t[1], t[2])).groupByKey(parts).mapValues(lambda it: sorted(set(it)))
        .mapPartitionsWithIndex(common.with_payload(seed, 46, LIST_BYTES), True), level, "implicit")
    test = common.persist(allr.filter(lambda t: t[0] % 10 == 0)
                          .map(lambda t: _kv_user(t[1:])).partitionBy(parts), level, "test")
    counts = {"users": by_user.count(), "items": by_item.count(),
              "implicit": implicit.count(), "test": test.count()}

    item_mat = 0.1 + 0.1 * common.uniform(seed, 47, np.arange(ni * RANK)).reshape(ni, RANK)
    rmse = []
    preds = None
    for rnd in range(rounds):
        items_bc = sc.broadcast(item_mat)
        user_f = common.persist(by_user.mapValues(_solve(items_bc.value)), level, f"user_f_{rnd}")
        user_mat = _as_matrix(user_f.collect(), nu)
        item_f = common.persist(by_item.mapValues(_solve(user_mat)), level, f"item_f_{rnd}")
        item_mat = _as_matrix(item_f.collect(), ni)
        if (rnd + 1) % eval_every == 0 or rnd == rounds - 1:
            # SVD++ flavour: only users with implicit feedback are scored
            items_now = sc.broadcast(item_mat)
            scored = user_f.join(implicit, parts)
            preds = test.join(scored, parts).map(_errors(items_now))
            se, cnt = preds.map(lambda p: ((p[2] - p[3]) ** 2, 1)).reduce(
                lambda a, b: (a[0] + b[0], a[1] + b[1]))
            rmse.append(round(math.sqrt(se / cnt), 4))

    held = [r for _u, (_i, r) in test.collect()]
    mean = sum(held) / len(held)
    baseline = math.sqrt(sum((r - mean) ** 2 for r in held) / len(held))
    if not rmse[-1] < baseline:
        raise AssertionError(f"svdpp: test RMSE {rmse[-1]} not below the global-mean baseline "
                             f"{baseline:.4f}")
    checksum = common.rdd_checksum(preds, digits=4)
    result = dict(counts, rounds=rounds, rmse=rmse, baseline_rmse=round(baseline, 4))
    return {"checksum": checksum, "result": result}


if __name__ == "__main__":
    common.main("svdpp", run)
