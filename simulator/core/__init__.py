"""Lowest layer: units, errors, input checking and the one vocabulary (ops, dtypes, busbw factors)."""
