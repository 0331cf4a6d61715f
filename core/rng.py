"""Randomness keyed by record: the same release whatever the chunking, the engine or the order of work.

Every random draw a mechanism makes for a record comes from a counter-based
generator (numpy's :class:`~numpy.random.Philox`, 4 x 64 bits per counter
step) whose **key** is derived from the release seed and a *purpose* (a short
name such as ``"keep"``, ``"value"`` or ``"order"``) and whose **counter** is
the record's position in the table.  Record ``i`` therefore owns the block of
four 64-bit words at counter ``i`` of each purpose's stream, and a batch of
records ``start .. start + n - 1`` reads exactly its own blocks: one batch of
100M rows, a hundred batches of 1M or Dask partitions in any order give the
same words for the same record.

Choices made here (the papers are silent on how to draw):

* Keys: the first 16 bytes of SHA-256 of ``"workbench-rng/1|<seed>|<purpose>"``,
  as two little-endian uint64.  A new purpose is a new, independent stream;
  :data:`VERSION` changes whenever any mechanism's use of these streams
  changes, and manifests record it (``randomness``).
* Uniform doubles are ``(word >> 11) * 2**-53`` (53 random bits, [0, 1)),
  computed from :meth:`~numpy.random.Philox.random_raw`, about 7x faster
  than ``Generator(Philox).random``.
* A uniform choice among ``k`` values is ``floor(u * k)``; its bias is
  below ``k * 2**-53``, far under any sampling error we can measure.
* Group-level draws (one per group, not per record) use the group's index
  as the counter of their own purpose: :func:`uniforms` with ``start`` = the
  first group of the batch.

Words beyond the four of a block are never needed: a mechanism that needs
more draws per record uses another purpose.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: version of the randomness protocol; a manifest with another value cannot be reproduced by this code
VERSION = 1

_SCALE = 2.0 ** -53
#: records whose words are read from the generator at a time: the temporaries (512 KiB of raw words) stay
#: below the app's glibc mmap threshold, so they are reused from the heap instead of mapped and page-faulted
#: again on every batch (core.lru.fix_mmap_threshold)
WORDS_BATCH = 1 << 14


def key(seed: int, purpose: str) -> np.ndarray:
    """The Philox key of ``purpose``'s stream under ``seed`` (two uint64)."""
    digest = hashlib.sha256(f"workbench-rng/{VERSION}|{int(seed)}|{purpose}".encode()).digest()
    return np.frombuffer(digest[:16], dtype="<u8").astype(np.uint64)


def words(seed: int, purpose: str, start: int, n: int, k: int = 1) -> np.ndarray:
    """The first ``k`` (1..4) 64-bit words of records ``start .. start + n - 1``, shape (n, k) (n,) if k == 1."""
    if not 1 <= k <= 4:
        raise ValueError("a record has four words per purpose; use another purpose for more draws")
    if n <= 0:
        return np.empty((0,) if k == 1 else (0, k), dtype=np.uint64)
    n = int(n)
    bg = np.random.Philox(key=key(seed, purpose), counter=int(start))
    out = np.empty((n,) if k == 1 else (n, k), dtype=np.uint64)
    # the stream read in batches (the same words as one read): the temporary is one batch's four words,
    # not all n records' (32 bytes a record)
    for lo in range(0, n, WORDS_BATCH):
        hi = min(n, lo + WORDS_BATCH)
        raw = bg.random_raw(4 * (hi - lo)).reshape(hi - lo, 4)
        out[lo:hi] = raw[:, 0] if k == 1 else raw[:, :k]
    return out


def uniforms(seed: int, purpose: str, start: int, n: int, k: int = 1) -> np.ndarray:
    """Uniform doubles in [0, 1) for records ``start .. start + n - 1`` (shape (n,) or (n, k)).

    ``(word >> 11) * 2**-53`` of :func:`words`, computed batch by batch into
    the result (the same doubles: a value below ``2**53`` converts exactly),
    so no whole-size array of words is made.
    """
    if not 1 <= k <= 4:
        raise ValueError("a record has four words per purpose; use another purpose for more draws")
    n = max(0, int(n))
    out = np.empty((n,) if k == 1 else (n, k), dtype=np.float64)
    if n == 0:
        return out
    bg = np.random.Philox(key=key(seed, purpose), counter=int(start))
    shift = np.uint64(11)
    for lo in range(0, n, WORDS_BATCH):
        hi = min(n, lo + WORDS_BATCH)
        raw = bg.random_raw(4 * (hi - lo)).reshape(hi - lo, 4)
        w = raw[:, 0] if k == 1 else raw[:, :k]
        w = w >> shift
        np.multiply(w, _SCALE, out=out[lo:hi])
    return out


def choices(seed: int, purpose: str, start: int, n: int, k) -> np.ndarray:
    """A uniform draw from ``0 .. k - 1`` per record (``k`` a scalar or one per record), as int64."""
    u = uniforms(seed, purpose, start, n)
    out = np.floor(u * np.asarray(k, dtype=np.float64)).astype(np.int64)
    return np.minimum(out, np.asarray(k, dtype=np.int64) - 1)


def mismatch(version, what: str, way: str = "", verb: str = "was drawn with") -> str | None:
    """One sentence when ``what`` (a manifest, a session file) was drawn with another randomness version, else None.

    ``version`` is the recorded ``randomness`` (None or 0: written before
    it was recorded, by a version that drew with numpy generators).
    ``way`` is the way forward, appended after a semicolon; ``verb`` joins
    ``what`` to the version (``"was saved with"`` for a session).
    """
    v = 0 if version is None else version
    if v == VERSION:
        return None
    return (f"{what} {verb} randomness version {v} and this workbench draws differently (version "
            f"{VERSION}), so the same seed would give a different release here"
            + (f"; {way}" if way else "") + ".")


def order_keys(seed: int, start: int, n: int) -> np.ndarray:
    """Each record's place in the published order: sort by this uint64 (ties by position).

    Publishing records sorted by a key drawn from the seed gives a random
    global order that does not depend on the input order, the batch size
    or the engine.
    """
    return words(seed, "order", start, n)
