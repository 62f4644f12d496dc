"""Collectives of the host-based backends, Gloo and MPI, in closed form.

Unlike NCCL, Gloo and MPI move data between *processes* with the CPU: every algorithm step is a
send and a receive (TCP for Gloo, shared memory or RDMA for MPI), every reduction runs on a CPU
core, and CUDA tensors are first copied to pinned host memory and back (Gloo on CUDA tensors,
what DDP with ``backend="gloo"`` does on GPUs). One process per GPU of the topology, in rank
order, so processes of one server are neighbours.

An algorithm is a list of *steps*; in a step every active rank sends ``m`` bytes to one partner
at once (:class:`Step`). A step costs its latency (``*.step_latency_s.net`` if any of its
transfers leaves its server, else the local one, as measured on two processes) scaled by
:func:`slowest_of` ``(n)``, plus ``m`` over the slowest transfer's bandwidth. The scaling: a
step ends when the last of the n processes has been woken up (a blocked receive is woken by the
transport's I/O thread, which epoll woke) and has sent; if each wake-up is a memoryless delay of
mean d, the last of n arrives after ``d * H(n)`` on average (H the harmonic number, the expected
maximum of n exponential delays), so a step on n processes costs ``H(n) / H(2)`` times a step on
two (1, 1.39, 1.81 for 2, 4, 8 processes):

* inside a server (Gloo: TCP over loopback; MPI: shared memory): one connection's rate
  (``gloo.loopback_Bps``, ``mpi.shm_Bps``), shared with every other local transfer of the same
  step through the host's memory (``*.host_memory_Bps`` divided by their number);
* across servers: the NIC bandwidth (Gloo uses one interface; MPI all of the server's NICs)
  times ``*.net_efficiency``, shared by the server's outgoing transfers of the step; Gloo's
  single TCP stream per peer also stops at ``gloo.tcp_stream_max_Bps``.

Algorithms (n ranks, S bytes as nccl-tests counts them): all_reduce ``ring`` (Gloo's default,
``gloo::allreduce``: reduce-scatter then all-gather, 2(n-1) steps of S/n) or
``halving_doubling`` (recursive halving then doubling between partners 2^k apart, 2 log2 n
steps of S/2, S/4, ...; ranks beyond the largest power of two first fold in and last receive
the result, one step of S each); reduce_scatter and all_gather rings (n-1 steps of S/n);
broadcast and reduce binomial trees (ceil(log2 n) steps of S); all_to_all n-1 pairwise
exchanges of S/n; send_recv one step of S. Reductions add ``reduced bytes / *.reduce_Bps``.
Every call adds ``*.call_overhead_s``. With CUDA tensors (Gloo's ``all_reduce`` and
``broadcast``), S is copied to the host and back over each GPU's PCIe route at
``gloo.staging_efficiency`` of the max-min fair rate of all GPUs copying at once, after
``gloo.staging_overhead_s`` per call (the copies' launches and stream synchronisations).

MPI's ``auto`` picks the faster of ring and halving-doubling, as Open MPI's tuned decision
does by size; Gloo's ``auto`` is ring, what PyTorch's ProcessGroupGloo runs. Protocol choices do
not exist here: the result's second field names the transport (``tcp``, ``shm``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simulator.collectives.backends import (ALGOS_FOR_HOST_OP, HOST_BACKENDS, check_support)
from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.core.vocabulary import Limit, NcclVersion, check_op
from simulator.network.fairness import max_min_rates
from topologies.routing import Router, router_for

if TYPE_CHECKING:
    import networkx as nx

    from topologies.preset_cluster import PresetCluster


@dataclass(frozen=True)
class Step:
    """Every rank ``i`` in ``senders`` sends ``fraction * S`` bytes to ``partner[i]`` at once."""

    pairs: tuple[tuple[int, int], ...]
    fraction: float
    reduce_fraction: float = 0.0     # bytes of S reduced on the CPU after this step


@dataclass(frozen=True)
class HostTime:
    """One call's time and its parts (seconds)."""

    time_s: float
    call_s: float
    latency_s: float
    wire_s: float
    reduce_s: float
    staging_s: float
    algo: str
    transport: str
    limit: Limit


def harmonic(n: int) -> float:
    """H(n) = 1 + 1/2 + ... + 1/n: the expected maximum of n independent exponential delays of mean 1."""
    return float(sum(1.0 / k for k in range(1, n + 1)))


def slowest_of(n: int) -> float:
    """How much longer the last of ``n`` processes' wake-ups takes, on average, than the last of
    two (memoryless wake-up delays): ``H(n) / H(2)``; 1 for two processes or fewer."""
    return harmonic(max(2, n)) / harmonic(2)


def _ring(n: int, steps: int, frac: float, reduce_steps: int = 0) -> list[Step]:
    pairs = tuple((i, (i + 1) % n) for i in range(n))
    return [Step(pairs, frac, frac if k < reduce_steps else 0.0) for k in range(steps)]


def _tree(n: int, reduce: bool) -> list[Step]:
    out = []
    k = 1
    while k < n:
        pairs = tuple((i, i + k) for i in range(k) if i + k < n)
        out.append(Step(tuple((b, a) for a, b in pairs) if reduce else pairs, 1.0, 1.0 if reduce else 0.0))
        k *= 2
    return out[::-1] if reduce else out


def _halving_doubling(n: int) -> list[Step]:
    p = 2 ** int(math.log2(n))
    extra = tuple((i, i - p) for i in range(p, n))
    steps: list[Step] = [Step(extra, 1.0, 1.0)] if extra else []
    rs = []
    d, frac = p // 2, 0.5
    while d >= 1:
        rs.append(Step(tuple((i, i ^ d) for i in range(p)), frac, frac))
        d, frac = d // 2, frac / 2
    steps += rs + [Step(s.pairs, s.fraction) for s in reversed(rs)]
    if extra:
        steps.append(Step(tuple((b, a) for a, b in extra), 1.0))
    return steps


def schedule(op: str, algo: str, n: int) -> list[Step]:
    """The steps of ``op`` with ``algo`` on ``n`` ranks (plain data, see the module docstring)."""
    if n < 2:
        return []
    if op == "all_reduce":
        return _ring(n, 2 * (n - 1), 1.0 / n, n - 1) if algo == "ring" else _halving_doubling(n)
    if op == "reduce_scatter":
        return _ring(n, n - 1, 1.0 / n, n - 1)
    if op == "all_gather":
        return _ring(n, n - 1, 1.0 / n)
    if op in ("broadcast", "reduce"):
        return _tree(n, op == "reduce")
    if op == "all_to_all":
        return [Step(tuple((i, (i + k) % n) for i in range(n)), 1.0 / n) for k in range(1, n)]
    return [Step(tuple((i, (i + 1) % n) for i in range(n)), 1.0)]       # send_recv


class HostCollectiveModel:
    """Closed-form times of Gloo or MPI collectives on one topology (one process per GPU).

    Offers what the DDP model asks of a cost model (``best``, ``time_s``, ``limit``, ``ranks``,
    ``params``, ``router``); it has no flow plans, so it is timed in closed form only
    (``closed_form_only``)."""

    closed_form_only = True

    def __init__(self, G_or_router: nx.Graph | PresetCluster | Router, params: Parameters | None = None,
                 backend: str = "gloo", tensors: str = "cpu") -> None:
        if backend not in HOST_BACKENDS:
            raise InputError(f"host backends are {', '.join(HOST_BACKENDS)}", field="backend", value=backend)
        check_support(backend, tensors, "all_reduce" if tensors == "cuda" and backend == "gloo" else "send_recv")
        self.router = router_for(G_or_router)
        self.params = params or Parameters()
        self.backend, self.tensors = backend, tensors
        self._host = [self.router.host_of(g) for g in self.router.gpus]
        info = self.router.info
        nic = float(info.nic_Bps or 0.0)
        nics = 1 if backend == "gloo" else max(1, info.nics_per_host)
        self._net_Bps = nic * nics * self.params[f"{backend}.net_efficiency"]
        self._staging_Bps: float | None = None
        self._unc: tuple | None = None      # (the backend's Uncertainty or None,), read on first use

    @property
    def ranks(self) -> int:
        return len(self.router.gpus)

    def _p(self, key: str) -> float:
        return self.params[f"{self.backend}.{key}"]

    # ------------------------------------------------------------------ pieces
    def _step_time(self, step: Step, size_bytes: float) -> tuple[float, float, bool]:
        """(latency, wire seconds, crosses servers) of one step."""
        local: dict[int, int] = {}
        out: dict[int, int] = {}
        for a, b in step.pairs:
            d = local if self._host[a] == self._host[b] else out
            d[self._host[a]] = d.get(self._host[a], 0) + 1
        one_local = self._p("loopback_Bps") if self.backend == "gloo" else self._p("shm_Bps")
        rates = [min(one_local, self._p("host_memory_Bps") / k) for k in local.values()]
        if out:
            if self._net_Bps <= 0:
                raise InputError("ranks on several servers but the topology has no NIC bandwidth",
                                 field="nic_Bps", value=self.router.info.nic_Bps)
            cap = self._p("tcp_stream_max_Bps") if self.backend == "gloo" else math.inf
            rates += [min(cap, self._net_Bps / k) for k in out.values()]
        wire = step.fraction * size_bytes / min(rates)
        lat = self._p("step_latency_s.net" if out else
                      ("step_latency_s.loopback" if self.backend == "gloo" else "step_latency_s.shm"))
        # A step ends when the last of its ranks has been woken up and has sent (slowest_of).
        return lat * slowest_of(self.ranks), wire, bool(out)

    def staging_Bps(self) -> float:
        """Per-GPU rate of the copies of CUDA tensors to host memory, all GPUs at once (max-min
        fair over each GPU's PCIe route to its nearest CPU)."""
        if self._staging_Bps is None:
            import numpy as np
            r = self.router
            routes = [r.to_host_memory(g) for g in r.gpus]
            links = [np.asarray(x, dtype=np.int64) for x in routes]
            g_ = np.concatenate([np.full(len(x), i) for i, x in enumerate(links)])
            cap = r.capacity_Bps * np.array([self.params.link_efficiency(k) for k in r.kind])
            rates = max_min_rates(g_, np.concatenate(links), np.ones(len(g_)), cap,
                                  np.full(len(links), np.inf))
            self._staging_Bps = float(rates.min()) * self.params["gloo.staging_efficiency"]
        return self._staging_Bps

    def algos(self, op: str, algo: str = "auto") -> tuple[str, ...]:
        check_op(op)
        check_support(self.backend, self.tensors, op)
        allowed = ALGOS_FOR_HOST_OP[op]
        if algo == "auto":
            return allowed if self.backend == "mpi" else allowed[:1]
        if algo not in allowed:
            raise InputError(f"{self.backend} runs {op} with {', '.join(allowed)}", field="algo", value=algo)
        return (algo,)

    def timing(self, op: str, size_bytes: float, algo: str = "auto") -> HostTime:
        """The call's time and parts with ``algo`` (``auto``: the backend's own choice)."""
        best: HostTime | None = None
        for a in self.algos(op, algo):
            t = self._timing(op, size_bytes, a)
            if best is None or t.time_s < best.time_s:
                best = t
        assert best is not None
        return best

    def _timing(self, op: str, size_bytes: float, algo: str) -> HostTime:
        lat = wire = red = 0.0
        net = False
        for step in schedule(op, algo, self.ranks):
            l, w, crosses = self._step_time(step, size_bytes)
            lat, wire, net = lat + l, wire + w, net or crosses
            red += step.reduce_fraction * size_bytes / self._p("reduce_Bps")
        staging = (self.params["gloo.staging_overhead_s"] + 2 * size_bytes / self.staging_Bps()
                   if self.tensors == "cuda" and self.ranks > 1 else 0.0)
        call = self._p("call_overhead_s") if self.ranks > 1 else 0.0
        parts = {Limit.LATENCY: call + lat, Limit.PCIE: staging, Limit.HOST: red + (0.0 if net else wire)}
        if net:
            parts[Limit.NET] = wire
        transport = ("tcp" if self.backend == "gloo" else ("net" if net else "shm"))
        return HostTime(call + lat + wire + red + staging, call, lat, wire, red, staging, algo, transport,
                        max(parts, key=lambda k: parts[k]))

    # ------------------------------------------------------ the cost-model interface
    def best(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> tuple[float, str, str]:
        """(seconds, algorithm, transport)."""
        if proto not in ("auto", "tcp", "shm", "net"):
            raise InputError(f"{self.backend} has no NCCL protocols; leave --proto auto", field="proto",
                             value=proto)
        t = self.timing(op, size_bytes, algo)
        return t.time_s, t.algo, t.transport

    def time_s(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> float:
        return self.best(op, size_bytes, algo, proto)[0]

    def limit(self, op: str, size_bytes: float, algo: str = "auto", proto: str = "auto") -> Limit:
        return self.timing(op, size_bytes, algo).limit

    def interval(self, op: str, size_bytes: float, algo: str = "auto"):
        """The call's 90% interval (a :class:`~simulator.network.intervals.Interval`) from the backend's
        residual spread (simulator.collectives.host_uncertainty): the calibration's, else the datasheet's;
        ``outside`` says where the prediction leaves the data behind it. None without any block."""
        from simulator.collectives import host_uncertainty
        from simulator.network.intervals import Interval
        if self._unc is None:
            self._unc = (host_uncertainty.of(self.params, self.backend),)
        unc = self._unc[0]
        if unc is None:
            return None
        t = self.timing(op, size_bytes, algo)
        if not t.time_s > 0:
            return Interval(t.time_s, t.time_s)
        lo, hi = unc.bounds(t.time_s, (t.call_s + t.latency_s) / t.time_s, 0.0, size_bytes)
        why = unc.outside(self.ranks, [], size_bytes, op)
        tensors = unc.domain.get("tensors")
        if tensors and self.tensors not in tensors:
            why.append(f"{self.tensors} tensors (measured on {', '.join(tensors)})")
        servers, measured = len(set(self._host)), unc.domain.get("servers")
        if measured and servers > measured:
            why.append(f"{servers} servers over the NICs (measured on {measured}: "
                       f"{'TCP over loopback' if self.backend == 'gloo' else 'shared memory'})")
        if self._block_unmeasured():
            why.append(f"no {self.backend} measurement behind this interval (a prior)")
        if not lo <= t.time_s <= hi:      # the residuals' median is far from 1: the parameters are biased here
            own = bool((getattr(self.params, "host_uncertainty", None) or {}).get(self.backend))
            why.append(f"prediction {'below' if t.time_s < lo else 'above'} its own 90% interval (measured/"
                       f"predicted {lo / t.time_s:.2f}-{hi / t.time_s:.2f} here): "
                       + ("the calibration's residuals are biased at this size" if own else
                          f"the {self.backend} datasheet defaults are biased at this size (python -m "
                          "validation.host_calibrate fits them to your runs)"))
        return Interval(lo, hi, tuple(why))

    def _block_unmeasured(self) -> bool:
        from simulator.collectives import host_uncertainty
        block = host_uncertainty.block_for(self.params, self.backend)
        return bool(block is not None and block.get("measured") is False)


def collective_model(G_or_router: nx.Graph | PresetCluster | Router, params: Parameters | None = None,
                     backend: str = "nccl", tensors: str | None = None, tuner_plugin: str | None = None,
                     nccl_version: NcclVersion | None = None):
    """The cost model of ``backend`` with tensors on ``tensors`` (default: CUDA for NCCL, CPU
    for Gloo and MPI): a :class:`~simulator.network.closed_form.CostModel` for NCCL, else a
    :class:`HostCollectiveModel`. NCCL with CPU tensors is refused, as PyTorch refuses it.
    ``tuner_plugin``: the instance type whose AWS tuner plugin NCCL loads, ``nccl_version`` the NCCL planned for
    (NCCL only; None: the newest modelled)."""
    from simulator.collectives.backends import default_tensors
    from simulator.network.closed_form import CostModel
    tensors = tensors or default_tensors(backend)
    if backend == "nccl":
        check_support(backend, tensors, "all_reduce")
        return CostModel(G_or_router, params, tuner_plugin=tuner_plugin, nccl_version=nccl_version)
    if tuner_plugin is not None:
        raise InputError("a tuner plugin is NCCL's; this backend does not load one", field="--tuner-plugin",
                         value=backend)
    if nccl_version is not None:
        raise InputError(f"an NCCL version is NCCL's; the {backend} backend does not run NCCL",
                         field="--nccl-version", value=str(nccl_version))
    return HostCollectiveModel(G_or_router, params, backend, tensors)
