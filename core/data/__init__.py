"""Reading tables and choosing their columns (read options, column proposals, banding)."""
