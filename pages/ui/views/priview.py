"""Sanitize-page view of a priview release (seed 004): see :mod:`pages.ui.views._groups`."""

from __future__ import annotations

from ._groups import TOPIC, render

__all__ = ["TOPIC", "render"]
