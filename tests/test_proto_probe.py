"""validation.proto_probe: issue 10's protocol / channel probe (NCCL's choice per call against the tuner's)."""

import pytest

from simulator.core.errors import InputError
from validation import proto_probe as pp
from validation.data import DATA_DIR

LINE = "    {n}  {op}: {b} Bytes -> Algo RING proto {proto} channel{{Lo..Hi}}={{0..{hi}}}\n"


def write(tmp_path, name, *lines):
    (tmp_path / name).write_text("".join(lines))


def test_choices_count_calls_and_give_the_gathered_size(tmp_path):
    write(tmp_path, "proto_nccl_ch12_w4.txt",
          LINE.format(n=245, op="AllGather", b=4 << 20, proto="SIMPLE", hi=11),
          LINE.format(n=5, op="AllGather", b=4 << 20, proto="SIMPLE", hi=11),
          LINE.format(n=42, op="AllGather", b=48, proto="LL", hi=0),          # the runner's own small call
          "      2 24 coll channels, 24 collnet channels, 0 nvls channels\n")
    (c,) = pp.read_choices(tmp_path)
    assert (c.variant, c.world, c.op, c.size_bytes, c.algo, c.proto, c.channels, c.calls) == \
        ("ch12", 4, "all_gather", 16 << 20, "RING", "SIMPLE", 12, 250)
    assert pp.pin_held(c)


def test_choices_that_disagree_within_a_point_are_refused(tmp_path):
    write(tmp_path, "proto_nccl_default_w2.txt",
          LINE.format(n=3, op="AllReduce", b=16 << 20, proto="SIMPLE", hi=23),
          LINE.format(n=1, op="AllReduce", b=16 << 20, proto="LL128", hi=23))
    with pytest.raises(InputError, match="for one point"):
        pp.read_choices(tmp_path)


@pytest.mark.parametrize("variant, proto, channels, held", [
    ("simple", "SIMPLE", 24, True), ("simple", "LL128", 24, False), ("ll128", "LL128", 24, True),
    ("ch12", "SIMPLE", 24, False), ("ch32", "LL128", 32, True), ("default", "LL", 1, True)])
def test_pin_held(variant, proto, channels, held):
    c = pp.Choice(variant, 4, "all_reduce", 16 << 20, "RING", proto, channels, 1)
    assert pp.pin_held(c) is held


@pytest.mark.parametrize("op, world, size, ok", [
    ("all_gather", 4, 11863280, False), ("all_gather", 4, 16 << 20, True), ("reduce_scatter", 2, 47453128, False),
    ("reduce_scatter", 2, 23726560, True), ("all_reduce", 4, 47453132, True)])
def test_aligned(op, world, size, ok):
    assert pp.aligned(op, world, size) is ok


@pytest.mark.parametrize("world, op, size, want", [
    (4, "all_reduce", 8 << 20, ("ring", "ll128")), (4, "all_reduce", 16 << 20, ("ring", "simple")),
    (2, "all_reduce", 8 << 20, ("ring", "simple")), (4, "all_gather", 8 << 20, ("ring", "simple"))])
def test_tuner_picks_what_nccl_ran_on_the_probe(world, op, size, want):
    assert pp.tuner_choice(world, op, size) == want


def test_shipped_probe_agrees_with_the_tuner_everywhere():
    choices = pp.read_choices(DATA_DIR / pp.DATASET)
    base = [c for c in choices if c.variant == pp.BASE]
    assert len(base) == 42 and {c.channels for c in base} == {24}
    assert all(pp.tuner_choice(c.world, c.op, c.size_bytes) == (c.algo.lower(), c.proto.lower()) for c in base)
    assert all(pp.pin_held(c) for c in choices)
    rows = pp.choice_rows(choices)
    assert not any(r.endswith("| NO |") for r in rows)


def test_report_prints_every_table():
    text = "\n".join(pp.report(DATA_DIR / pp.DATASET))
    for head in ("NCCL's choice per call", "Each pin's fast level", "Slow repetitions", "Lines through"):
        assert head in text
    assert "(unaligned)" in text


def test_lines_show_the_intercepts_growth_below_the_models_for_all_reduce():
    rows = {r.split(" | ")[0].strip("| "): r for r in pp.line_rows(pp.load(DATA_DIR / pp.DATASET))[2:]}
    cells = rows["all_reduce"].strip("|").split("|")
    growth, model = float(cells[3]), float(cells[4])
    assert 0 < growth < model


def test_bad_folder_exits_2(tmp_path, capsys):
    assert pp.main([str(tmp_path)]) == 2
    assert "no proto_world" in capsys.readouterr().err


def test_a_log_file_named_off_the_pattern_is_refused_naming_it(tmp_path):
    """rv21 fresh-user pass: proto_nccl_default_wtwo.txt was an int() ValueError traceback."""
    write(tmp_path, "proto_nccl_default_wtwo.txt", LINE.format(n=1, op="AllGather", b=4 << 20, proto="SIMPLE", hi=23))
    with pytest.raises(InputError) as e:
        pp.read_choices(tmp_path)
    assert str(e.value) == (f"{tmp_path / 'proto_nccl_default_wtwo.txt'}: file name: expected a name "
                            "proto_nccl_<variant>_w<GPUs>.txt (got 'proto_nccl_default_wtwo.txt')")


def test_a_disagreement_names_the_file_and_the_line(tmp_path):
    write(tmp_path, "proto_nccl_default_w2.txt",
          LINE.format(n=3, op="AllReduce", b=16 << 20, proto="SIMPLE", hi=23),
          LINE.format(n=1, op="AllReduce", b=16 << 20, proto="LL128", hi=23))
    with pytest.raises(InputError) as e:
        pp.read_choices(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'proto_nccl_default_w2.txt'}: all_reduce 16777216 B: NCCL chose")
    assert "proto LL128" in str(e.value)
