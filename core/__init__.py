"""Privacy-utility workbench: the pure library behind the pages and the CLI.

Nothing in ``core`` imports streamlit, so the CLI, the tests, a notebook and
the pages all call the same code.
"""

__version__ = "0.1.0"
