"""Keyed random permutations of ranks, computed element by element (no permutation array is stored).

A group mechanism that deals the records of one key (an SA value) among
several destinations in fixed numbers (SDR's sub-tables, bucketization's
size classes) needs a uniformly random choice of *which* records go where.
With the records identified by their rank among the records of the same
key (issue 15's plan/apply protocol), that is a random permutation
``pi_key`` of ``0 .. size - 1``: the record of rank r goes to position
``pi_key(r)`` of the key's dealing order.  :func:`permute` evaluates
``pi_key(r)`` for any batch of (key, rank) pairs on its own, so a chunk, a
partition or the whole table computes the same positions, and the plan
holds nothing per record.

Construction (the papers are silent; our choice): a key with at most
:data:`SMALL` elements gets an exact uniform permutation, the order of
``size`` random words (purpose ``"<purpose>/small"``, counter
``key * SMALL + rank``).  Larger keys use a balanced Feistel network on
``2h`` bits (``h`` the smallest number of bits with ``4**h >= size``),
8 rounds, with cycle walking (an output
``>= size`` is permuted again until it falls inside, which keeps a
bijection of ``0 .. size - 1``; since ``4**h < 4 size`` it takes fewer than
4 passes on average).  The round function is a 32-bit avalanche (lowbias32) of the right
half plus a round key; round keys are the high words of splitmix64 of two words of
:func:`core.rng.words` ``(seed, purpose, key)`` (counter = the key, so
each key has its own independent permutation).  Luby and Rackoff: four or
more rounds of a pseudo-random round function give a pseudo-random
permutation; on tiny domains (2-bit halves) 6 rounds were measurably
far from uniform on pairs, hence the exact small case.  The tests check
uniformity of positions and of pairs statistically.
"""

from __future__ import annotations

import numpy as np

from . import rng as _rng

ROUNDS = 8
#: keys with at most this many elements get an exact random permutation (a sort of random words)
SMALL = 256

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (a bijective avalanche of 64 bits); overwrites ``x`` when it is an array."""
    x += _GOLDEN
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def half_bits(size) -> np.ndarray:
    """``h`` per element: the smallest h >= 1 with ``4**h >= size``."""
    size = np.asarray(size, dtype=np.int64)
    bits = np.zeros(size.shape, dtype=np.int64)
    big = size > 1
    # bit length of size - 1 = ceil(log2(size)), exactly, from integers
    bits[big] = np.frexp((size[big] - 1).astype(np.float64))[1]
    return np.maximum(1, (bits + 1) // 2)


def round_keys(seed: int, purpose: str, keys: np.ndarray) -> np.ndarray:
    """(len(keys), ROUNDS) uint64 round keys of each key's permutation."""
    keys = np.asarray(keys, dtype=np.int64)
    out = np.empty((len(keys), ROUNDS), dtype=np.uint64)
    if not len(keys):
        return out
    lo, hi = int(keys.min()), int(keys.max())
    w = _rng.words(seed, purpose, lo, hi - lo + 1, 2)[keys - lo]  # (len, 2)
    for i in range(ROUNDS):
        out[:, i] = _mix(w[:, 0] + np.uint64((i * int(_GOLDEN)) % 2**64)) ^ w[:, 1]
    return out


def _mix32(x: np.ndarray) -> np.ndarray:
    """A 32-bit avalanche (Wellons' lowbias32), in place."""
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def _feistel(x: np.ndarray, h: np.ndarray, rk: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """One pass of the network on uint32 values of ``2h <= 32`` bits; ``rk[inv]`` the round keys (uint32)."""
    hs = h.astype(np.uint32)
    mask = (np.uint32(1) << hs) - np.uint32(1)
    left = (x >> hs) & mask
    right = x & mask
    for i in range(ROUNDS):
        f = right + rk[:, i][inv]
        _mix32(f)
        f &= mask
        f ^= left
        left, right = right, f
    left <<= hs
    left |= right
    return left


def permute(seed: int, purpose: str, key, rank, size) -> np.ndarray:
    """``pi_key(rank)``: position of each rank under its key's random permutation of ``0 .. size - 1``.

    Parameters
    ----------
    seed : int
        The release seed.
    purpose : str
        The draw's purpose (a new purpose is an independent family of
        permutations, :mod:`core.rng`).
    key, rank, size : int arrays (broadcast together)
        The key (a small non-negative int, e.g. an SA code), the rank of
        each element among its key's elements (``0 <= rank < size``) and the
        key's number of elements.  Equal keys must come with equal sizes.

    Returns
    -------
    ndarray of int64
        For a fixed key, a bijection of ``0 .. size - 1``.

    Examples
    --------
    >>> sorted(permute(1, "demo", 0, np.arange(10), 10).tolist())
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    key, rank, size = np.broadcast_arrays(np.asarray(key, dtype=np.int64), np.asarray(rank, dtype=np.int64),
                                          np.asarray(size, dtype=np.int64))
    shape = key.shape
    key, rank, size = key.ravel(), rank.ravel(), size.ravel()
    if np.any((rank < 0) | (rank >= size)):
        raise ValueError("every rank must lie in 0 .. size - 1")
    out = rank.astype(np.uint64)
    if not len(out):
        return out.astype(np.int64).reshape(shape)
    small = size <= SMALL
    if small.any():
        out[small] = _small(seed, purpose, key[small], rank[small], size[small]).astype(np.uint64)
    big = np.flatnonzero(~small)
    if len(big):
        uniq, inv = np.unique(key[big], return_inverse=True)
        if int(size[big].max()) > 2**32:
            raise ValueError("a key of more than 2**32 elements cannot be permuted")
        rk_u = (round_keys(seed, purpose, uniq) >> np.uint64(32)).astype(np.uint32)
        h = half_bits(size[big])
        usize = size[big].astype(np.uint32 if int(size[big].max()) < 2**32 else np.uint64)
        res = _feistel(out[big].astype(np.uint32), h, rk_u, inv)
        todo = np.flatnonzero(res >= usize)
        while len(todo):  # cycle walking: fewer than 4 passes on average
            res[todo] = _feistel(res[todo], h[todo], rk_u, inv[todo])
            todo = todo[res[todo] >= usize[todo]]
        out[big] = res
    return out.astype(np.int64).reshape(shape)


def _small(seed: int, purpose: str, key: np.ndarray, rank: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Exact uniform permutations of keys with at most SMALL elements: rank r goes to the rank of its word."""
    uniq, inv = np.unique(key, return_inverse=True)
    n_of = np.zeros(len(uniq), dtype=np.int64)
    n_of[inv] = size
    j = np.arange(SMALL, dtype=np.int64)
    words = np.stack([_rng.words(seed, f"{purpose}/small", int(u) * SMALL, SMALL) for u in uniq])
    words = np.where(j[None, :] < n_of[:, None], words, np.uint64(2**64 - 1))  # padding sorts last
    order = np.argsort(words, axis=1, kind="stable")
    place = np.empty_like(order)
    np.put_along_axis(place, order, np.broadcast_to(j, order.shape), axis=1)
    return place[inv, rank]


def deal(counts: np.ndarray, key, pos) -> np.ndarray:
    """Destination of each element when a key's positions are dealt to destinations in order.

    ``counts[d, x]`` elements of key ``x`` go to destination ``d``:
    positions ``0 .. counts[0, x] - 1`` to destination 0, the next
    ``counts[1, x]`` to destination 1, and so on.  With ``pos`` a random
    permutation of the key's ranks (:func:`permute`) that is a uniformly
    random choice of which elements go where, in exactly these numbers.

    Parameters
    ----------
    counts : ndarray (k, m) of int
    key, pos : int arrays (n,)
        ``0 <= pos < counts[:, key].sum()``.

    Returns
    -------
    ndarray (n,) of int64
        The destination ``d`` of each element.

    Examples
    --------
    >>> deal(np.array([[2, 0], [1, 3]]), [0, 0, 0, 1], [0, 1, 2, 0]).tolist()
    [0, 0, 1, 1]
    """
    counts = np.asarray(counts, dtype=np.int64)
    k, m = counts.shape
    key = np.asarray(key, dtype=np.int64)
    pos = np.asarray(pos, dtype=np.int64)
    cum = np.cumsum(counts, axis=0)  # (k, m), nondecreasing down each column
    big = int(cum[-1].max(initial=0)) + 1
    flat = (cum.T + np.arange(m, dtype=np.int64)[:, None] * big).ravel()
    return np.searchsorted(flat, key * big + pos, side="right") - key * k


def relabel(seed: int, purpose: str, n: int) -> np.ndarray:
    """A uniformly random permutation of ``0 .. n - 1`` drawn at group level: ``new_id = out[old_id]``.

    Group ``g`` draws one word (counter ``g``, :mod:`core.rng`); new ids
    are the ranks of the words (ties, probability about ``n**2 / 2**65``,
    by group index).  Used to number published groups so an id reveals
    nothing about the order of construction.
    """
    keys = _rng.words(seed, purpose, 0, int(n))
    out = np.empty(int(n), dtype=np.int64)
    out[np.argsort(keys, kind="stable")] = np.arange(int(n), dtype=np.int64)
    return out

def _feistel_inverse(y: np.ndarray, h: np.ndarray, rk: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """The inverse of one :func:`_feistel` pass (rounds in reverse: ``(L, R) <- (R ^ F_i(L), L)``)."""
    hs = h.astype(np.uint32)
    mask = (np.uint32(1) << hs) - np.uint32(1)
    left = (y >> hs) & mask
    right = y & mask
    for i in reversed(range(ROUNDS)):
        f = left + rk[:, i][inv]
        _mix32(f)
        f &= mask
        f ^= right
        left, right = f, left
    left <<= hs
    left |= right
    return left


def unpermute(seed: int, purpose: str, key, pos, size) -> np.ndarray:
    """The inverse of :func:`permute`: the rank whose position under its key's permutation is ``pos``.

    ``permute(seed, purpose, key, unpermute(seed, purpose, key, pos, size), size) == pos``.
    Same construction run backwards: the exact small permutations read
    their sort order, the Feistel network runs its rounds in reverse with
    the same cycle walking (the inverse of a cycle-walked bijection is the
    cycle-walked inverse).

    Examples
    --------
    >>> r = np.arange(300)
    >>> bool(np.array_equal(unpermute(1, "demo", 0, permute(1, "demo", 0, r, 300), 300), r))
    True
    """
    key, pos, size = np.broadcast_arrays(np.asarray(key, dtype=np.int64), np.asarray(pos, dtype=np.int64),
                                         np.asarray(size, dtype=np.int64))
    shape = key.shape
    key, pos, size = key.ravel(), pos.ravel(), size.ravel()
    if np.any((pos < 0) | (pos >= size)):
        raise ValueError("every position must lie in 0 .. size - 1")
    out = pos.astype(np.uint64)
    if not len(out):
        return out.astype(np.int64).reshape(shape)
    small = size <= SMALL
    if small.any():
        k, p, s = key[small], pos[small], size[small]
        uniq, inv = np.unique(k, return_inverse=True)
        n_of = np.zeros(len(uniq), dtype=np.int64)
        n_of[inv] = s
        j = np.arange(SMALL, dtype=np.int64)
        words = np.stack([_rng.words(seed, f"{purpose}/small", int(u) * SMALL, SMALL) for u in uniq])
        words = np.where(j[None, :] < n_of[:, None], words, np.uint64(2**64 - 1))
        order = np.argsort(words, axis=1, kind="stable")  # order[key, position] = rank
        out[small] = order[inv, p].astype(np.uint64)
    big = np.flatnonzero(~small)
    if len(big):
        uniq, inv = np.unique(key[big], return_inverse=True)
        if int(size[big].max()) > 2**32:
            raise ValueError("a key of more than 2**32 elements cannot be permuted")
        rk_u = (round_keys(seed, purpose, uniq) >> np.uint64(32)).astype(np.uint32)
        h = half_bits(size[big])
        usize = size[big].astype(np.uint32)
        res = _feistel_inverse(out[big].astype(np.uint32), h, rk_u, inv)
        todo = np.flatnonzero(res >= usize)
        while len(todo):
            res[todo] = _feistel_inverse(res[todo], h[todo], rk_u, inv[todo])
            todo = todo[res[todo] >= usize[todo]]
        out[big] = res
    return out.astype(np.int64).reshape(shape)
