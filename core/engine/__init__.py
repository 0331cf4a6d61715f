"""Engines: one protocol (plan from counts, apply per chunk) run locally or on Dask.

Read top-down: :mod:`core.engine.combos` (the compact counts a plan is
built from), :mod:`core.engine.protocol` (:class:`Plan`, :class:`Chunk`,
ranks), :mod:`core.engine.local` (the local engine, published order,
partitioned output).  The randomness is :mod:`core.rng`'s.
"""

from .combos import Combos  # noqa: F401
from .protocol import Chunk, Plan  # noqa: F401

__all__ = ["Combos", "Chunk", "Plan"]
