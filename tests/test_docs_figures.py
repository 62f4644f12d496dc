"""Figures typed into docs prose that the code computes: each one checked against the computation, so that a
recalibration or a model change that moves it fails here instead of leaving the docs stale (review s18)."""

from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_training_md_pipeline_send_cost_is_the_calibrations():
    """docs/training.md: a pipeline send's fixed cost (its alpha, the call overhead included) of an 8 MiB send under
    h100-nvlink-2gpu, priced as simulator.training.llm.groups prices a stage's send; and the PP runner's measured
    p2p range over section 7's campaigns. It said '92.5 of the 115 us' (alpha then 92.5 us, the send 121 us)."""
    from simulator.collectives.params import load_calibration
    from simulator.training.llm.groups import GroupCollectives
    from topologies.presets import server
    from topologies.routing import Router
    from validation.llm_blind import DATA
    from validation.llm_real import CAMPAIGNS, OTHER_GPU_CAMPAIGNS
    from validation.llm_records import read_llm_records

    router = Router(server("dgx-h100", gpus=4))
    groups = GroupCollectives(router, load_calibration("h100-nvlink-2gpu"))
    pair = tuple(router.gpus[:2])
    size = 8 << 20
    alpha, beta, _ = groups._shape("send_recv", "direct", "simple", pair, size)
    measured = [r.p2p_s for f, n, *_ in (*CAMPAIGNS, *OTHER_GPU_CAMPAIGNS)
                for r in read_llm_records([DATA / f / n]).runs if r.runner == "pp" and r.p2p_s]
    text = " ".join((DOCS / "training.md").read_text().split())
    assert (f"{alpha * 1e6:.1f} of the {(alpha + beta * size) * 1e6:.0f} us an 8 MiB send takes under "
            f"`h100-nvlink-2gpu`, where the PP runner measures {min(measured) * 1e6:.0f}-{max(measured) * 1e6:.0f} us"
            ) in text
