"""Validation: real-GPU runners (PyTorch, optional), measurement parsers and data, calibration, comparison.

Importing this package never imports torch; only the runner entry points do.
"""
