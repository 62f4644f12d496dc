"""NCCL 2.18-2.20's NVLS-Tree chunk on the two EFA p5 runs, alone and with the Hopper fit's NVLS fill, scored on
section 1b's held-out figure (session of 2026-11-28 stop 27, branch h10corpus27; not kept).

The facts tried (NCCL's enqueue.cc, read at stop 23; aws-ofi-nccl PR #332): before 2.22 NCCL starts an NVLS-Tree
chunk from the Simple buffer's step, NCCL_BUFFSIZE / NCCL_STEPS, and 2.20 caps it by NCCL_NVLSTREE_MAX_CHUNKSIZE,
which AWS's network plugin sets to 512 KiB on p5 from February 2024 (the 2024-04 p5 run: min(8 MiB / 8, 512 KiB) =
512 KiB; the NCCL 2.18.5 EKS run: 4 MiB / 8 = 512 KiB, 2.18 having no cap). The model keeps NCCL 2.22's chunk for
both (simulator.collectives.algorithms.NvlsChunks.taken_by); this script overrides that for the two runs only.
``fill`` adds the shipped corpus-nvlink-hopper fit's NVLS fill as the datasheet's (validation.corpus_checks
'nvls-tree-hopper-fill'). Figures at main 3b51686 (report 7.59%, 126 of 286 within 5%):

- chunk alone: 7.67%, 124 (efa 20 -> 18 within; p5 5.9% either way, 4 -> 4 within; EKS 20.7%, 2 -> 0);
- chunk + fill: 7.52%, 129 (ib-roce 18 -> 23: Lambda 2 -> 6, Nebius 9 -> 10; efa 20 -> 18: p5 5.9 -> 6.3%, EKS
  2 -> 0; A3 Mega all_reduce 20.0 -> 21.7%). The median falls only through the fill's gain on Lambda; the chunk,
  the fact aimed at p5, makes p5 and EKS worse with or without it, so nothing is kept.

::

    python validation/scripts/nvls_tree_v220_s27.py      # about 20 s
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from simulator.collectives.algorithms import NvlsChunks  # noqa: E402
from validation import corpus, corpus_checks  # noqa: E402
from validation.compare import Topo  # noqa: E402

START_BYTES = {"aws_2x_p5_16xH100_efa3200_allreduce": 512 * 1024,
               "aws_2x_p5_16xH100_eks_nccl2.18.5_allreduce_partial": 512 * 1024}
"""Dataset -> the NVLS-Tree chunk its NCCL starts from (before the size steps shrink it)."""


class RawChunks(NvlsChunks):
    """NVLS chunk settings every NCCL takes as given (NvlsChunks.taken_by keeps 2.22's defaults before 2.22)."""

    def taken_by(self, nccl_version):
        return self


def v220_chunk(topo: Topo) -> Topo:
    start = START_BYTES.get(Path(topo.source).stem)
    return topo if start is None else replace(topo, nvls_chunks=RawChunks(start, None))


def main() -> None:
    parts = corpus.corpus_parts(ROOT / "validation" / "data")
    fill = corpus_checks.hopper_nvls_kernel("nvls_fill_rounds")
    checks = [corpus_checks.BY_NAME["report"],
              corpus_checks.Check("v220-chunk", "NCCL 2.18-2.20's NVLS-Tree chunk on the EFA p5 runs",
                                  parts=corpus_checks.with_topo(v220_chunk)),
              corpus_checks.Check("v220-chunk+fill", "as v220-chunk, with the Hopper fit's NVLS fill",
                                  parts=corpus_checks.with_topo(v220_chunk), datasheet=fill)]
    print("\n".join(corpus_checks.table([corpus_checks.run(c, parts) for c in checks])))


if __name__ == "__main__":
    main()
