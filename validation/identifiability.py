"""Which parameters a set of measurements determines, and how well.

The fitter works on log time, so the Jacobian J[i, k] = d log(predicted_i) / d x_k (x_k: key k in
its scaled units, simulator.collectives.params scale) says how each parameter moves each point.
Two parameters whose columns are (nearly) proportional cannot be told apart by these points: on 2
GPUs every ring has one hop each way, so the per-call cost, the per-rank cost (log2 2 = 1) and the
per-hop latency all move every point by the same amount.

:func:`identifiable` walks the candidates in a fixed order of preference (what does not scale with
the ranks first, then bandwidth, then what does scale with the ranks) and keeps a key only when its
column adds a direction the kept ones do not span (column-pivoted Gram-Schmidt). The rest stay at
their prior: the fit never invents a value the data cannot support. :func:`posterior` gives the
covariance of everything (data plus prior), which is what prediction intervals need: directions the
data left open keep their prior variance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

ORDER = ("call_overhead_s", "op_overhead_s.", "link_efficiency.", "nvls_efficiency.", "collnet_efficiency",
         "op_shard_s_per_byte.", "shm_efficiency",
         "socket_max_Bps", "ll_max_busbw_Bps", "proto_efficiency.", "op_local_s_per_byte.", "op_efficiency.",
         "base_latency_s.", "nvls_fill_rounds", "hop_latency_s.", "rank_overhead_s")
"""Preference when columns are collinear: per-call host cost before per-op cost, bandwidth shared by
every op before per-op factors, per-shard before per-byte before multiplicative per-op terms, fixed
latency before per-hop and per-rank latency (which only a change of world size reveals)."""

MIN_NEW_DIRECTION = 0.05
"""A column is kept when at least 5% of its norm lies outside the span of the columns kept before it."""


def priority(key: str) -> int:
    for i, prefix in enumerate(ORDER):
        if key == prefix or (prefix.endswith(".") and key.startswith(prefix)):
            return i
    return len(ORDER)


@dataclass(frozen=True)
class Verdict:
    """What the data say about one candidate parameter."""

    key: str
    determined: bool
    reason: str              # "determined", "collinear with ...", "moves no point", "weak: +-..."
    sd_scaled: float | None = None   # standard deviation from the data alone, in the key's scaled units


def identifiable(J: np.ndarray, keys: Sequence[str], tol: float = MIN_NEW_DIRECTION) -> list[Verdict]:
    """One verdict per key (in ``keys`` order) from the Jacobian ``J`` (points x keys)."""
    order = sorted(range(len(keys)), key=lambda i: (priority(keys[i]), i))
    basis: list[np.ndarray] = []
    kept_keys: list[str] = []
    out: dict[int, Verdict] = {}
    for i in order:
        col = J[:, i]
        norm = float(np.linalg.norm(col))
        if norm == 0 or not np.isfinite(norm):
            out[i] = Verdict(keys[i], False, "moves no point")
            continue
        v = col.copy()
        overlap = []
        for b, k in zip(basis, kept_keys):
            c = float(b @ v)
            v -= c * b
            overlap.append((abs(c), k))
        rest = float(np.linalg.norm(v))
        if rest < tol * norm:
            partners = [k for c, k in sorted(overlap, reverse=True)[:2] if c > 0.1 * norm]
            out[i] = Verdict(keys[i], False, "collinear with " + (", ".join(partners) or "the kept parameters"))
            continue
        basis.append(v / rest)
        kept_keys.append(keys[i])
        out[i] = Verdict(keys[i], True, "determined")
    return [out[i] for i in range(len(keys))]


def posterior(J: np.ndarray, noise_sd: float, prior_sd: np.ndarray) -> np.ndarray:
    """Linearised posterior covariance (scaled units) of all keys: data (residuals of standard
    deviation ``noise_sd`` in J's units) plus independent priors (``prior_sd`` per key)."""
    info = J.T @ J / max(noise_sd, 1e-9) ** 2 + np.diag(1.0 / np.asarray(prior_sd) ** 2)
    return np.linalg.inv(info)


RCOND = 1e-10
"""The pseudo-inverse's cutoff: directions of the data's information below this share of its largest are
dropped; a key whose column is below sqrt(RCOND) of the largest column lies in such a direction alone."""


def data_sd(J: np.ndarray, noise_sd: float) -> np.ndarray:
    """Standard deviation of each key from the data alone (inf where the data leave it free: a column of
    zero, or one below sqrt(RCOND) of the largest column, e.g. a host issue hidden under the GPU work at
    the fit, whose direction the pseudo-inverse drops and would print absurdly tight instead)."""
    info = J.T @ J / max(noise_sd, 1e-9) ** 2
    d = np.diag(np.linalg.pinv(info, rcond=RCOND))
    norms = np.linalg.norm(J, axis=0)
    free = (norms == 0) | (norms <= np.sqrt(RCOND) * (norms.max() if norms.size else 0.0)) | (d <= 0)
    return np.where(free, np.inf, np.sqrt(np.abs(d)))
