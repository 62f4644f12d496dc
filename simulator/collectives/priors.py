"""Each parameter's scale and prior spread: what a calibration starts from before any data (the fitter's units,
validation.calibrate) and what an interval charges for a key no data touched (simulator.network.intervals)."""

from __future__ import annotations

from simulator.collectives.params import DEFAULTS


def prior_sd(key: str) -> float:
    """Prior standard deviation of a key, in its scaled units (see :func:`scale`)."""
    if "efficiency" in key:
        return 0.25
    if key.endswith("_Bps"):
        return 0.5
    return 1.0


def scale(key: str) -> float:
    """A key's unit in the fitter: its default, or a typical size when the default is 0."""
    d = DEFAULTS[key]
    if d > 0:
        return d
    return 1e-12 if "_s_per_byte" in key else 10e-6


def class_keys(hop_class: str) -> list[str]:
    """The keys that describe one hop class (``hop_latency_s.net.ring.ll``, ``link_efficiency.net``,
    ``net_call_overhead_s`` for ``net``): what a calibration whose data never crossed that class cannot know."""
    return [k for k in DEFAULTS if hop_class in k.split(".")[1:] or k.startswith(f"{hop_class}_")]
