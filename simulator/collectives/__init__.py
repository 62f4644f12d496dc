"""Collective plans per algorithm, NCCL's tuner and cost model, parameters and shipped calibrations."""
