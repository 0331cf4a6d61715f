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

import threading
from collections import OrderedDict

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
    """One pass of the network on uint32 values of ``2h <= 32`` bits; ``rk[inv]`` the round keys (uint32).

    The reference form (whole-array operations); :func:`_network` computes
    the same values block by block and is what :func:`permute` runs.
    """
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


#: elements per block of the network (:func:`_network`): the block's working arrays stay in the core's cache
BLOCK = 1 << 15


def _network(x: np.ndarray, hs, mask, rk: np.ndarray, kidx: np.ndarray | None, inverse: bool = False) -> np.ndarray:
    """One pass of the Feistel network (or its inverse) on uint32 values of ``2h <= 32`` bits; a new array.

    Parameters
    ----------
    x : ndarray of uint32
    hs, mask : np.uint32 or ndarray of uint32 aligned with ``x``
        Half width ``h`` and ``2**h - 1``, one for all elements or one each.
    rk : ndarray (K, ROUNDS) of uint32
        Round keys of the K distinct keys.
    kidx : ndarray of intp aligned with ``x``, or None
        Each element's row of ``rk`` (None: all elements use row 0).
    inverse : bool
        Run the rounds in reverse (:func:`_feistel_inverse`).

    The values are exactly those of :func:`_feistel` / :func:`_feistel_inverse`
    (the same operations on the same uint32 words); the work is done in
    blocks of :data:`BLOCK` elements with preallocated scratch arrays, so the
    72 operations of a pass run on data in the cache and allocate nothing per
    round (3x faster than whole-array operations on a million elements).
    """
    n = len(x)
    out = np.empty(n, dtype=np.uint32)
    size = min(n, BLOCK)
    a, b, f, t, kbuf = (np.empty(size, dtype=np.uint32) for _ in range(5))
    rounds = range(ROUNDS - 1, -1, -1) if inverse else range(ROUNDS)
    scalar = np.ndim(hs) == 0
    keys = rk.T.copy() if kidx is not None else None  # (ROUNDS, K): one contiguous row per round
    m1, m2 = np.uint32(0x7FEB352D), np.uint32(0x846CA68B)
    s15, s16 = np.uint32(15), np.uint32(16)
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        k = hi - lo
        xb = x[lo:hi]
        h = hs if scalar else hs[lo:hi]
        m = mask if scalar else mask[lo:hi]
        left, right, fb, tb = a[:k], b[:k], f[:k], t[:k]
        np.right_shift(xb, h, out=left)
        np.bitwise_and(left, m, out=left)
        np.bitwise_and(xb, m, out=right)
        kb = None if kidx is None else kidx[lo:hi]
        for i in rounds:
            key = rk[0, i] if kb is None else keys[i].take(kb, out=kbuf[:k])
            np.add(left if inverse else right, key, out=fb)
            np.right_shift(fb, s16, out=tb)  # lowbias32 (_mix32), in place
            fb ^= tb
            fb *= m1
            np.right_shift(fb, s15, out=tb)
            fb ^= tb
            fb *= m2
            np.right_shift(fb, s16, out=tb)
            fb ^= tb
            fb &= m
            if inverse:  # (L, R) <- (R ^ F_i(L), L)
                fb ^= right
                left, right, fb = fb, left, right
            else:  # (L, R) <- (R, L ^ F_i(R))
                fb ^= left
                left, right, fb = right, fb, left
        np.left_shift(left, h, out=left)
        np.bitwise_or(left, right, out=out[lo:hi])
    return out


def _key_index(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative int keys, by counting when their range is small."""
    if len(key) and int(key.min()) >= 0:
        top = int(key.max())
        if top < (1 << 16) and top <= 4 * len(key):
            present = np.bincount(key, minlength=top + 1) > 0
            uniq = np.flatnonzero(present)
            lut = np.zeros(top + 1, dtype=np.intp)
            lut[uniq] = np.arange(len(uniq))
            return uniq.astype(key.dtype), lut[key]
    uniq, inv = np.unique(key, return_inverse=True)
    return uniq, inv.reshape(-1)


def _walk(seed: int, purpose: str, key: np.ndarray, x: np.ndarray, size: np.ndarray, inverse: bool) -> np.ndarray:
    """The cycle-walked network (or its inverse) of ``x`` under each element's key; ``size <= 2**32``, all > SMALL.

    ``key`` and ``size`` may be 0-d (the same for every element).
    """
    if np.ndim(key) == 0:  # one key for every element
        uniq, inv = np.asarray(key, dtype=np.int64).reshape(1), None
    else:
        uniq, inv = _key_index(key)
    rk_u = (round_keys(seed, purpose, uniq) >> np.uint64(32)).astype(np.uint32)
    kidx = inv if len(uniq) > 1 else None
    lo_size, hi_size = int(np.min(size)), int(np.max(size))
    if lo_size == hi_size:  # one size (every key of the same size): scalar width and bound
        h = int(half_bits(np.array([lo_size]))[0])
        hs, mask = np.uint32(h), np.uint32((1 << h) - 1)
        bound = np.uint64(lo_size) if lo_size >= 2**32 else np.uint32(lo_size)
    else:
        hs = half_bits(size).astype(np.uint32)
        mask = (np.uint32(1) << hs) - np.uint32(1)
        bound = size.astype(np.uint32 if hi_size < 2**32 else np.uint64)
    res = _network(x.astype(np.uint32), hs, mask, rk_u, kidx, inverse)
    todo = np.flatnonzero(res >= bound)
    while len(todo):  # cycle walking: fewer than 4 passes on average
        each = np.ndim(hs) > 0
        res[todo] = _network(res[todo], hs[todo] if each else hs, mask[todo] if each else mask, rk_u,
                             None if kidx is None else kidx[todo], inverse)
        todo = todo[res[todo] >= (bound[todo] if each else bound)]
    return res


def _one_size(seed: int, purpose: str, key: np.ndarray, x: np.ndarray, size: np.ndarray,
              inverse: bool) -> np.ndarray:
    """:func:`permute` (or :func:`unpermute`) when every element's key has the same ``size > SMALL`` (a 0-d array)."""
    shape = np.broadcast_shapes(key.shape, x.shape)
    x = np.broadcast_to(x, shape).reshape(-1)
    if len(x) and (int(x.min()) < 0 or int(x.max()) >= int(size)):
        raise ValueError(f"every {'position' if inverse else 'rank'} must lie in 0 .. size - 1")
    if int(size) > 2**32:
        raise ValueError("a key of more than 2**32 elements cannot be permuted")
    if not len(x):
        return np.zeros(shape, dtype=np.int64)
    if key.ndim:
        key = np.broadcast_to(key, shape).reshape(-1)
    return _walk(seed, purpose, key, x, size, inverse).astype(np.int64).reshape(shape)


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
    key, rank, size = (np.asarray(v, dtype=np.int64) for v in (key, rank, size))
    if size.ndim == 0 and int(size) > SMALL:  # one big size (a column of SPLU's layout): no per-element arrays
        return _one_size(seed, purpose, key, rank, size, False)
    key, rank, size = np.broadcast_arrays(key, rank, size)
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
    if small.all():
        return out.astype(np.int64).reshape(shape)
    if not small.any():  # every element is big: no selection copies
        if int(size.max()) > 2**32:
            raise ValueError("a key of more than 2**32 elements cannot be permuted")
        return _walk(seed, purpose, key, rank, size, False).astype(np.int64).reshape(shape)
    big = np.flatnonzero(~small)
    if int(size[big].max()) > 2**32:
        raise ValueError("a key of more than 2**32 elements cannot be permuted")
    out[big] = _walk(seed, purpose, key[big], out[big], size[big], False)
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


#: :func:`relabel` keeps the sorted order of its words from this many groups on (below, sorting is cheap)
RELABEL_KEEP_FROM = 1 << 16
#: bytes the kept orders may take together (the least recently used go first)
RELABEL_KEEP_BYTES = 64 * 2**20
#: an order is kept for this many times the groups asked for, so a larger count asked next is served too
RELABEL_HEADROOM = 1.25
_ORDERS: "OrderedDict[tuple[int, str], np.ndarray]" = OrderedDict()
_ORDERS_LOCK = threading.Lock()


def relabel(seed: int, purpose: str, n: int) -> np.ndarray:
    """A uniformly random permutation of ``0 .. n - 1`` drawn at group level: ``new_id = out[old_id]``.

    Group ``g`` draws one word (counter ``g``, :mod:`core.rng`); new ids
    are the ranks of the words (ties, probability about ``n**2 / 2**65``,
    by group index).  Used to number published groups so an id reveals
    nothing about the order of construction.

    Group ``g``'s word does not depend on ``n``, so the ranks of the first
    ``n`` words are the stable order of more words with the indices ``>= n``
    left out.  From :data:`RELABEL_KEEP_FROM` groups on, that order is kept
    per (seed, purpose) for ``1.25 n`` words (:func:`_kept_order`), and a
    slider that changes the group count (bucketization's bucket size,
    Mondrian's k, Anatomy's l) filters it in one pass instead of drawing and
    sorting again: census 5M's 1.4M buckets, 0.13 s to 0.02 s.  The same
    permutation either way (tested).
    """
    n = int(n)
    out = np.empty(n, dtype=np.int64)
    if n < RELABEL_KEEP_FROM:
        out[_stable_order(_rng.words(seed, purpose, 0, n))] = np.arange(n, dtype=np.int64)
        return out
    order = _kept_order(int(seed), str(purpose), n)
    if len(order) > n:
        order = order[order < n]  # the stable order of the first n words
    out[order] = np.arange(n, dtype=np.int64)
    return out


def _kept_order(seed: int, purpose: str, n: int) -> np.ndarray:
    """The stable order of the first N words of (seed, purpose), ``n <= N <= 4 n``, kept or computed."""
    key = (seed, purpose)
    with _ORDERS_LOCK:
        got = _ORDERS.get(key)
        if got is not None and n <= len(got) <= 4 * n:
            _ORDERS.move_to_end(key)
            return got
    size = int(n * RELABEL_HEADROOM)
    order = _stable_order(_rng.words(seed, purpose, 0, size))
    order = order.astype(np.int32) if size < 2**31 else order
    with _ORDERS_LOCK:
        _ORDERS[key] = order
        _ORDERS.move_to_end(key)
        total = sum(v.nbytes for v in _ORDERS.values())
        while total > RELABEL_KEEP_BYTES and len(_ORDERS) > 1:
            total -= _ORDERS.popitem(last=False)[1].nbytes
    return order


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of uint64 words, by sorting values instead of indices (faster).

    Each word's low bits are replaced by its index, and the packed words
    sorted: that orders by the high bits, then by index.  Words whose high
    bits tie (a few in a million at 1.4M words) are put in order by their
    full value, then index, within their run: the same order as the stable
    argsort.
    """
    keys = np.asarray(keys, dtype=np.uint64)
    n = len(keys)
    bits = max(1, int(n - 1).bit_length())
    if n < 2 or bits > 40:
        return np.argsort(keys, kind="stable")
    low = np.uint64((1 << bits) - 1)
    packed = keys & ~low
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & low).astype(np.int64)
    packed >>= np.uint64(bits)  # the high bits, sorted
    tie = packed[1:] == packed[:-1]
    if tie.any():
        run = np.zeros(n, dtype=bool)
        run[1:] |= tie
        run[:-1] |= tie
        at = np.flatnonzero(run)
        sub = order[at]
        # within each run of equal high bits (kept in place: high bits first), by full word, then index
        order[at] = sub[np.lexsort((sub, keys[sub], packed[at]))]
    return order

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
    key, pos, size = (np.asarray(v, dtype=np.int64) for v in (key, pos, size))
    if size.ndim == 0 and int(size) > SMALL:
        return _one_size(seed, purpose, key, pos, size, True)
    key, pos, size = np.broadcast_arrays(key, pos, size)
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
    if small.all():
        return out.astype(np.int64).reshape(shape)
    if not small.any():
        if int(size.max()) > 2**32:
            raise ValueError("a key of more than 2**32 elements cannot be permuted")
        return _walk(seed, purpose, key, pos, size, True).astype(np.int64).reshape(shape)
    big = np.flatnonzero(~small)
    if int(size[big].max()) > 2**32:
        raise ValueError("a key of more than 2**32 elements cannot be permuted")
    out[big] = _walk(seed, purpose, key[big], out[big], size[big], True)
    return out.astype(np.int64).reshape(shape)
