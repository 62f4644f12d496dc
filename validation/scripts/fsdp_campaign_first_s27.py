"""Trial of branch h14fsdp27 (session of 2026-11-28 stop 27, issue 14): an FSDP-only file on a lease that ran its own
LLM campaign takes that campaign's compute fit first (``llm_blind.Method.OWN_CAMPAIGN``), before the configurations'
paired probes and the lease's host issue probe.

Why (``validation/scripts/fsdp_misses_s27.py`` and the table this script prints with ``table``): the same
configuration on the same lease, FULL_SHARD measured alike in the ``llm4`` and ``fsdp4`` phases, is predicted by two
fits. The ``llm4`` rows take the campaign's fit, whose block issue time is the TP-sharded block's (``host_tp_block_s``,
the unit the host work is carried in), and miss little; the FSDP-only rows take the issue probe's fit, which measures
the unsharded block (``host_tp_block_s`` 0) and so carries 0.75-0.96 of the host work (the carry-unit mismatch of
``validation.fsdp_carry_unit``), and FULL_SHARD comes out fast. The leases without a probe of their own already take
the campaign's fit (branch h14fsdp8). Section 7's FSDP-only leases ran no LLM campaign, so nothing there moves.

The order is ``llm_blind.lease_methods``' (``lease_method`` takes the first); the trial reorders it for the run only::

    python validation/scripts/fsdp_campaign_first_s27.py table           # same lease, same configuration, two fits
    python validation/scripts/fsdp_campaign_first_s27.py first sealed    # campaign first, then the sealed leases
    python validation/scripts/fsdp_campaign_first_s27.py second sealed   # campaign after the paired probes only
    python validation/scripts/fsdp_campaign_first_s27.py off sealed      # today's order
    python validation/scripts/fsdp_campaign_first_s27.py first-steady sealed   # with the steady-state iteration
    python validation/scripts/fsdp_campaign_first_s27.py first llm OUT   # section 7 (--only llm) written to OUT

Figures (main 3b51686, 2026-11-28 11:40-11:50 UTC; designed knowing every sealed figure, so a check, not a blind
test). Sealed FSDP sets within 8% (``python -m validation.sealed_campaign``), today 22 of 37:

* ``first``: 27 of 37, but six sets worse by more than 0.3 points: h100x4_2026-11-27 fsdp2 6.7 -> 9.5,
  h200x4_2026-11-27e fsdp4 7.5 -> 8.3, h200x4_2026-11-27f fsdp4 5.3 -> 9.6, h200x4_2026-11-27h fsdppair4 6.9 -> 12.4,
  h200x4_2026-11-28e fsdp4 5.9 -> 7.1 and fsdppair4 8.2 -> 11.3 (better: h200x4_2026-11-27d fsdp4 13.8 -> 3.9,
  h100x4_2026-11-27g fsdppair4 11.2 -> 1.5, h200x4_2026-11-28 fsdp4 9.1 -> 2.2 and fsdppair4 15.5 -> 6.6,
  h200x4_2026-11-28c fsdp4 12.3 -> 6.4 and fsdppair4 10.6 -> 4.8, h200x4_2026-11-27f fsdppair4 10.9 -> 4.4). Not kept.
* ``second``: 23 of 37, four sets worse (the ``fsdp2`` and three ``fsdp4`` sets above). Not kept.
* ``first`` with the steady-state iteration (``ComputeParams.fsdp_steady``, host work refitted with it, as
  ``fsdp_steady_paces_s26.py`` does): 21 of 37, 23 sets worse (llm4 FSDP on nine leases, up to +5.7; llm4 TP on
  four, up to +0.5, as the refit moves the host keys). Not kept.

Why it cannot be kept (signed medians over the changed configurations, today -> ``first``): the campaign's fit
charges every strategy more host work. FULL_SHARD comes right (``fsdp4`` h2048 -9.3 -> -1.1%, h4096 -8.7 -> -3.1%;
``fsdppair4`` -13.7 -> -3.0%, -9.0 -> -1.4%) and NO_SHARD goes slow (``fsdp4`` h2048 +0.9 -> +7.2%, h4096 +6.5 ->
+13.0%; ``fsdppair4`` h4096 +7.5 -> +11.7%). The host level moves both strategies together; what the FSDP-only files
miss is the difference between them (``fsdp_misses_s27.py``'s last table: FULL_SHARD less NO_SHARD 3.1 / 3.6 ms
longer than simulated at h2048 / h4096, medians over 24 files), and no choice of fit closes it.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation import llm_blind  # noqa: E402

VARIANTS = ("off", "first", "second", "first-steady")
"""The orders tried; ``first-steady`` is ``first`` with the steady-state iteration (``fsdp_steady_paces_s26.py``'s
``steady`` trial: ``ComputeParams.fsdp_steady`` on every compute set, the host work refitted with it)."""


@contextmanager
def order(variant: str) -> Iterator[None]:
    """``llm_blind.lease_method`` with the campaign's fit moved up: ``first`` before every other method, ``second``
    after the paired probes only, ``off`` as it is."""
    original = llm_blind.lease_method

    def method(path, records, world, own_probes=True):  # type: ignore[no-untyped-def]
        found = list(llm_blind.lease_methods(path, records, world)) if own_probes else []
        campaign = llm_blind.Method.OWN_CAMPAIGN
        if campaign in found and (variant.startswith("first") or found[0] is not llm_blind.Method.PAIRED_PROBE):
            return campaign
        return original(path, records, world, own_probes)

    if variant != "off":
        llm_blind.lease_method = method  # type: ignore[assignment]
    try:
        if variant.endswith("-steady"):
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from fsdp_steady_paces_s26 import switches, trial  # type: ignore[import-not-found]
            with trial(switches("steady")):
                yield
        else:
            yield
    finally:
        llm_blind.lease_method = original  # type: ignore[assignment]


def table() -> list[str]:
    """Per sealed lease with both an ``llm4`` campaign and FSDP-only FULL_SHARD rows: measured / predicted ms of each
    row, and each fit's block issue time and carried FSDP host work per unit and per all-gather."""
    from fsdp_misses_s27 import predictor  # type: ignore[import-not-found]

    from validation import sealed_campaign as sc
    from validation.fsdp_pair import for_run
    from validation.fsdp_time_parts import what
    from validation.llm_real import measured_block_s
    from validation.llm_records import compare_runs, group_runs, read_llm_records

    lines = ["| lease | row | FULL_SHARD h2048: measured / predicted ms | FULL_SHARD h4096 | block issue ms | FSDP "
             "host per unit / per all-gather ms |", "|---|---|---|---|---|---|"]
    for c in sc.SEALED:
        rows = [r for r in c.runs if r[2] == "fsdp"]
        if not any(r[0].startswith("llm4") for r in rows) or len(rows) < 2:
            continue
        for label, name, _ in rows:
            path = c.llm / name
            records = read_llm_records([path])
            full = predictor(c, label, path, records)
            runs = {g.point: g.first for g in group_runs(records.runs) if g.first.runner == "fsdp"}
            cells, compute = {}, None
            for e in compare_runs(records, full.iteration_s):  # type: ignore[attr-defined]
                run = runs.get(e.point)
                if run is not None and run.strategy == "full_shard":
                    cells[what(run)] = f"{e.measured_s * 1e3:.1f} / {e.predicted_s * 1e3:.1f}"
                    compute = for_run(full, run).compute  # type: ignore[attr-defined]
            assert compute is not None
            lines.append(f"| {c.llm.name} | {label} | {cells.get('FULL_SHARD h2048', '-')} | "
                         f"{cells.get('FULL_SHARD h4096', '-')} | {measured_block_s(compute) * 1e3:.3f} | "
                         f"{compute.fsdp_unit_host_s * 1e3:.3f} / {compute.fsdp_gather_host_s * 1e3:.3f} |")
    return lines


def main(argv: list[str]) -> int:
    if argv == ["table"]:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        print("\n".join(table()))
        return 0
    if len(argv) not in (2, 3) or argv[0] not in VARIANTS or argv[1] not in ("sealed", "llm"):
        print("usage: python validation/scripts/fsdp_campaign_first_s27.py table | off|first|second|first-steady "
              "sealed|llm [OUT]",
              file=sys.stderr)
        return 2
    with order(argv[0]):
        if argv[1] == "llm":
            from validation.accuracy import main as run
            return run(["--only", "llm", *(["--out", argv[2]] if len(argv) == 3 else [])])
        from validation.sealed_campaign import main as run_sealed
        return run_sealed([])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
