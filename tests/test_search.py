"""Plan search (issue 16): the space, the bound, pruning that never changes the answer, the CLI."""

import json

import pytest

from gpunetsim.cli import main
from gpunetsim.search import ClusterSimulator, make_cluster, search
from simulator.collectives.params import Parameters
from simulator.core.errors import InputError
from simulator.training.gpus import get_gpu
from simulator.training.llm.compute import ComputeModel, ComputeParams
from simulator.training.llm.config import Recompute, Schedule
from simulator.training.llm.memory import memory_per_gpu
from simulator.training.llm.model import TransformerSpec
from simulator.training.llm.plan_bound import iteration_lower_bound_s
from simulator.training.llm.search_space import SearchSpace, enumerate_plans

TINY = TransformerSpec("tiny", hidden=1024, layers=8, heads=16, seq=1024)
SMALL_SPACE = SearchSpace(micro_batches=(1, 2), recompute=(Recompute.NONE, Recompute.FULL),
                          shardings=("ddp", "zero-1"))


def test_every_plan_uses_all_gpus_and_divides_the_batch():
    plans = list(enumerate_plans(TINY, 8, 16, SMALL_SPACE))
    assert plans and len(set(plans)) == len(plans)
    for c in plans:
        assert c.gpus == 8 and c.global_batch % (c.micro_batch * c.dp) == 0
        assert c.sequence_parallel == (c.tp > 1)
        assert c.sharding == "ddp" or c.dp > 1
        if c.schedule is Schedule.INTERLEAVED:
            assert c.pp > 1 and c.microbatches % c.pp == 0


def test_space_limits_are_respected():
    space = SearchSpace(max_tp=2, max_pp=2, micro_batches=(1,), schedules=(Schedule.ONE_F_ONE_B,),
                        recompute=(Recompute.NONE,), shardings=("ddp",))
    shapes = {(c.tp, c.pp, c.dp) for c in enumerate_plans(TINY, 8, 16, space)}
    assert shapes == {(1, 1, 8), (1, 2, 4), (2, 1, 4), (2, 2, 2)}


def test_only_restricts_to_the_listed_plans():
    space = SearchSpace(micro_batches=(1, 2), schedules=(Schedule.ONE_F_ONE_B,), recompute=(Recompute.FULL,),
                        shardings=("ddp",), only=frozenset({(2, 2, 2, 1), (1, 1, 8, 2)}))
    assert {(c.tp, c.pp, c.dp, c.micro_batch) for c in enumerate_plans(TINY, 8, 16, space)} == \
        {(2, 2, 2, 1), (1, 1, 8, 2)}


@pytest.mark.parametrize("field,kw", [("--max-tp", {"max_tp": 0}), ("--sharding", {"shardings": ("zero-9",)}),
                                      ("--micro-batches", {"micro_batches": (0,)})])
def test_bad_space_names_the_flag(field, kw):
    with pytest.raises(InputError) as e:
        SearchSpace(**kw)
    assert e.value.field == field


def test_lower_bound_never_exceeds_the_simulation():
    cluster = make_cluster("dgx-a100", 8)
    sim = ClusterSimulator(TINY, Parameters(), ComputeParams())
    cm = ComputeModel(get_gpu(cluster.gpu), "bf16", ComputeParams())
    plans = list(enumerate_plans(TINY, 8, 16, SMALL_SPACE))[::3]
    assert len(plans) > 10
    for c in plans:
        assert iteration_lower_bound_s(TINY, c, cm) <= sim.simulate(cluster, c)["iteration_s"] * (1 + 1e-9)


@pytest.mark.parametrize("gpus", [8, 16])
def test_lower_bound_with_communication_never_exceeds_the_simulation(gpus):
    """Kernels plus TP collectives, pipeline sends and exposed DP sync alone: still a lower bound,
    and tighter than the kernels alone (on 16 GPUs sends and DP cross the NICs)."""
    from simulator.training.llm.plan_bound import PlanBound
    cluster = make_cluster("dgx-a100", gpus)
    sim = ClusterSimulator(TINY, Parameters(), ComputeParams())
    bound = PlanBound(TINY, ComputeModel(get_gpu(cluster.gpu), "bf16", ComputeParams()))
    space = SearchSpace(micro_batches=(1, 2), recompute=(Recompute.NONE,), shardings=("ddp", "zero-1", "fsdp-full"))
    plans = list(enumerate_plans(TINY, gpus, 32, space))[::2]
    assert len(plans) > 10 and {c.sharding for c in plans} == {"ddp", "zero-1", "fsdp-full"}
    tighter = 0
    for c in plans:
        simulated = sim.simulate(cluster, c)["iteration_s"]
        with_comm = bound.iteration_s(c, sim.comm_floor(cluster))
        assert bound.iteration_s(c) <= with_comm <= simulated * (1 + 1e-9), c
        tighter += with_comm > bound.iteration_s(c) * 1.01
    assert tighter > len(plans) // 2


def test_plan_bound_reuses_kernel_times_across_dp_and_sharding():
    from simulator.training.llm.plan_bound import PlanBound
    bound = PlanBound(TINY, ComputeModel(get_gpu("a100"), "bf16", ComputeParams()))
    a, b = [c for c in enumerate_plans(TINY, 8, 16, SMALL_SPACE) if (c.tp, c.pp, c.micro_batch) == (2, 2, 1)
            and c.recompute is Recompute.NONE and c.schedule is Schedule.ONE_F_ONE_B][:2]
    wider = next(c for c in enumerate_plans(TINY, 16, 32, SMALL_SPACE) if (c.tp, c.pp, c.micro_batch) == (2, 2, 1)
                 and c.recompute is Recompute.NONE and c.schedule is Schedule.ONE_F_ONE_B)
    assert a.sharding != b.sharding and wider.dp == 2 * a.dp
    assert bound.stages(a) is bound.stages(b) is bound.stages(wider)
    assert bound.iteration_s(a) == iteration_lower_bound_s(TINY, a, bound.cm)


@pytest.mark.parametrize("wave", [1, 3])
def test_smaller_waves_simulate_fewer_plans_and_find_the_same_best(wave):
    cluster = make_cluster("dgx-a100", 16)
    base = search(TINY, [cluster], 32, space=SMALL_SPACE, top=1)
    out = search(TINY, [cluster], 32, space=SMALL_SPACE, top=1, wave=wave)
    assert out.plans[0].iteration_s == base.plans[0].iteration_s
    assert out.simulated <= base.simulated and out.simulated + out.pruned + out.no_fit == out.enumerated


def test_pruned_search_returns_the_exhaustive_ranking():
    cluster = make_cluster("dgx-a100", 8)
    out = search(TINY, [cluster], 16, space=SMALL_SPACE, top=3)
    sim = ClusterSimulator(TINY, Parameters(), ComputeParams())
    fits = [c for c in enumerate_plans(TINY, 8, 16, SMALL_SPACE)
            if memory_per_gpu(TINY, c, get_gpu(cluster.gpu).memory_bytes).fits]
    exhaustive = sorted(sim.simulate(cluster, c)["iteration_s"] for c in fits)
    assert [p.iteration_s for p in out.plans] == pytest.approx(exhaustive[:3])
    assert out.pruned > 0 and out.simulated + out.pruned + out.no_fit == out.enumerated


def test_plans_that_do_not_fit_are_never_simulated():
    big = TransformerSpec("big", hidden=12288, layers=96, heads=96, seq=2048)
    out = search(big, [make_cluster("dgx-a100", 8)], 8, space=SMALL_SPACE)
    assert out.plans == [] and out.no_fit == out.enumerated > 0 and out.simulated == 0


def test_cost_objective_prefers_the_cheaper_cluster_per_iteration():
    clusters = [make_cluster("dgx-a100", 8, {"a100": 1.0}), make_cluster("dgx-a100", 16, {"a100": 1.0})]
    out = search(TINY, clusters, 16, space=SMALL_SPACE, objective="cost", top=5)
    costs = [p.result["iteration_s"] * p.cluster.gpus for p in out.plans]
    assert costs == sorted(costs)
    assert out.plans[0].cost == pytest.approx(out.plans[0].gpu_hours * 1.0)


def test_cost_objective_needs_a_price():
    with pytest.raises(InputError) as e:
        search(TINY, [make_cluster("dgx-a100", 8)], 16, space=SMALL_SPACE, objective="cost")
    assert e.value.field == "--price"


def test_process_pool_gives_the_same_ranking():
    from gpunetsim.search import worker_pool
    cluster = make_cluster("dgx-a100", 8)
    serial = search(TINY, [cluster], 16, space=SMALL_SPACE, top=4)
    with worker_pool(2) as pool:
        parallel = search(TINY, [cluster], 16, space=SMALL_SPACE, top=4, executor=pool)
    assert [p.as_dict() for p in parallel.plans] == [p.as_dict() for p in serial.plans]
    assert (parallel.simulated, parallel.pruned) == (serial.simulated, serial.pruned)


def test_cli_json(capsys):
    rc = main(["search", "--model-spec", "hidden=1024,layers=8,heads=16,seq=1024", "--topology", "dgx-a100",
               "--gpus", "8", "--global-batch", "16", "--micro-batches", "1,2", "--recompute", "none",
               "--sharding", "ddp", "--top", "2", "--json", "--price", "a100=1.5/h", "--tokens", "1e9"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["plans"]) == 2 and d["plans"][0]["iteration_s"] <= d["plans"][1]["iteration_s"]
    p = d["plans"][0]
    assert p["limiter"] in ("compute", "TP comm", "PP sends", "bubble", "DP exposed")
    assert p["cost"] == pytest.approx(p["gpu_hours"] * 1.5)
    assert p["training_s"] == pytest.approx(1e9 / p["tokens_per_s"])


@pytest.mark.parametrize("args,flag", [
    (["--gpus", "12"], "--gpus"), (["--gpus", "8,x"], "--gpus"), (["--price", "h100=cheap"], "--price"),
    (["--price", "nosuchgpu=1/h"], "--price"), (["--objective", "cost"], "--price"),
    (["--micro-batches", "0"], "--micro-batches"), (["--recompute", "some"], "--recompute"),
    (["--workers", "0"], "--workers"), (["--scheduler", "nohost"], "--scheduler"), (["--top", "0"], "--top"), (["--tokens", "-1"], "--tokens")])
def test_cli_bad_input_names_the_flag(capsys, args, flag):
    base = ["search", "--model", "llama-3-8b", "--gpus", "8", "--global-batch", "8"]
    rc = main(base + args)
    err = capsys.readouterr().err
    assert rc == 2 and flag in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("args,value", [(["--schedules", "1f1b,zigzag"], "zigzag"),
                                        (["--recompute", "none,partial"], "partial")])
def test_an_unknown_choice_in_a_list_is_named_with_the_choices(capsys, args, value):
    """Was 'expected a comma-separated list (got '1f1b,zigzag')': the converter's own error was swallowed."""
    assert main(["search", "--model", "llama-3-8b", "--gpus", "8", "--global-batch", "8"] + args) == 2
    err = capsys.readouterr().err
    assert f"{args[0]}: expected some of " in err and f"(got '{value}')" in err


def test_pareto_front_keeps_only_undominated_plans():
    from gpunetsim.search_report import pareto
    cluster = make_cluster("dgx-a100", 8)
    out = search(TINY, [cluster], 16, space=SMALL_SPACE, top=50)
    plans = out.simulated_plans
    front = pareto(plans, lambda p: p.gpu_hours)
    assert 0 < len(front) < len(plans)
    for p in front:       # nothing beats a front plan on both axes
        assert not any(q.training_s < p.training_s and q.gpu_hours < p.gpu_hours for q in plans)
    for p in plans:       # every other plan is matched or beaten on both by a front plan
        assert any(q.training_s <= p.training_s and q.gpu_hours <= p.gpu_hours for q in front)


def test_sensitivity_keeps_the_plan_and_scales_dp():
    from gpunetsim.search import sensitivity
    cluster = make_cluster("dgx-a100", 16)
    out = search(TINY, [cluster], 32, space=SMALL_SPACE, top=1)
    rows = sensitivity(out.plans[0], ClusterSimulator(TINY, Parameters(), ComputeParams()))
    nic = [r for r in rows if r["axis"] == "nic"]
    assert [r["factor"] for r in nic] == [0.25, 0.5, 1.0, 2.0]
    assert all(a["iteration_s"] >= b["iteration_s"] * (1 - 1e-9) for a, b in zip(nic, nic[1:]))
    assert {r["gpus"] for r in rows if r["axis"] == "gpus"} <= {8, 16, 32, 64}


def test_cli_out_writes_the_report(tmp_path, capsys):
    rc = main(["search", "--model-spec", "hidden=1024,layers=8,heads=16,seq=1024", "--topology", "dgx-a100",
               "--gpus", "8,16", "--global-batch", "32", "--micro-batches", "2", "--recompute", "none",
               "--sharding", "ddp", "--schedules", "1f1b", "--top", "3", "--out", str(tmp_path / "r")])
    assert rc == 0 and "report written to" in capsys.readouterr().out
    page = (tmp_path / "r" / "search.html").read_text()
    for key in ("pareto", "breakdown", "nic", "gpus"):
        assert f'id="fig-{key}"' in page
    assert len(json.loads((tmp_path / "r" / "plans.json").read_text())) >= 3


def test_dask_executor_gives_the_same_ranking():
    distributed = pytest.importorskip("dask.distributed")
    cluster = make_cluster("dgx-a100", 8)
    serial = search(TINY, [cluster], 16, space=SMALL_SPACE, top=4)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as lc, distributed.Client(lc) as client:
        on_dask = search(TINY, [cluster], 16, space=SMALL_SPACE, top=4, executor=client.get_executor())
    assert [p.as_dict() for p in on_dask.plans] == [p.as_dict() for p in serial.plans]
    assert (on_dask.simulated, on_dask.pruned) == (serial.simulated, serial.pruned)


@pytest.mark.parametrize("seconds, shown", [(3600 * 5, "5.0 h"), (86400 * 26.7, "26.7 d"), (86400 * 99999, "99999.0 d"),
                                            (86400 * 2.49e30, "2.5e+30 d")])
def test_the_training_time_stays_short(seconds, shown):
    """``--tokens 1e40`` printed '2489594354882605714222142717952.0 d' in a 7-column field (review s26)."""
    from gpunetsim.search_cli import _duration
    assert _duration(seconds) == shown
