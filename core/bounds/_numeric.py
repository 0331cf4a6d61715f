"""Integer rounding that survives floating point, shared by the bound modules.

The papers' sums run over integers such as ``ceil((1 - eps) f)`` and
``floor((1 + eps) f)``.  In binary floating point ``(1 + 0.15) * 100`` is
``114.99999999999999`` and ``(1 - 0.45) * 100`` is ``55.00000000000001``, so a
plain ``floor``/``ceil`` moves the summation limit by one whenever the exact
product is an integer.  These helpers first snap values that lie within a
relative ``1e-9`` of an integer onto that integer.

This module's name starts with an underscore, so the bound registry
(:func:`core.registry.collect`) does not look for ``BOUNDS`` in it.
"""

from __future__ import annotations

import numpy as np

#: Relative distance to the nearest integer below which a value is taken to
#: *be* that integer.  Products of a float eps (about 16 significant digits)
#: and a count up to 10^6 are off by ~1e-12 relative at most; a genuine value
#: this close to an integer would need an eps with more than 9 digits.
SNAP_RTOL = 1e-9


def snap(values):
    """Replace values within ``SNAP_RTOL`` (relative) of an integer by it.

    Parameters
    ----------
    values : float or array_like

    Returns
    -------
    numpy.ndarray
        Float array of the same shape.

    Examples
    --------
    >>> float(snap((1 + 0.15) * 100))
    115.0
    >>> float(snap(114.5))
    114.5
    """
    v = np.asarray(values, dtype=float)
    r = np.rint(v)
    close = np.abs(v - r) <= SNAP_RTOL * np.maximum(1.0, np.abs(v))
    return np.where(close, r, v)


def floor_int(values):
    """``floor`` after :func:`snap`, as int64.

    Examples
    --------
    >>> int(floor_int((1 + 0.15) * 100))   # naive floor gives 114
    115
    """
    return np.floor(snap(values)).astype(np.int64)


def ceil_int(values):
    """``ceil`` after :func:`snap`, as int64.

    Examples
    --------
    >>> int(ceil_int((1 - 0.45) * 100))    # naive ceil gives 56
    55
    """
    return np.ceil(snap(values)).astype(np.int64)
