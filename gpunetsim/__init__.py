"""gpunetsim: the application layer (CLI, studies, reports) and the public Python API."""

__version__ = "0.1.0"
