"""gpunetsim's simulator: discrete-event network, NCCL-style collectives, closed-form model, DDP."""

__version__ = "0.1.0"
