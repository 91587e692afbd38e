"""The decision: a weighted matrix whose every score points at evidence (SPEC D1-D5)."""
