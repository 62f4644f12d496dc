"""The Python API refuses bad arguments as the command line does (docs/api.md: "Bad input raises InputError, whose
field and value name what is wrong"), review s25: a negative size ran, ``nodes="2"`` died in a TypeError, and
``nvls="ON"`` turned NVLS off."""

from __future__ import annotations

import pytest

import gpunetsim
from simulator.core.errors import InputError


@pytest.mark.parametrize("size", [-1, 0, True, "0"])
def test_a_collective_moves_at_least_one_byte(size):
    """``size_bytes=-1`` gave a 1.5 us result with size -1; the CLI refuses ``-b -1`` and ``-b 0``."""
    with pytest.raises(InputError) as e:
        gpunetsim.collective(size_bytes=size)
    assert e.value.field == "size_bytes" and e.value.value == size


@pytest.mark.parametrize("field, value", [("nodes", "2"), ("nodes", 2.5), ("nodes", True), ("gpus", "4"),
                                          ("gpus", 4.0)])
def test_a_server_count_is_a_whole_number(field, value):
    with pytest.raises(InputError) as e:
        gpunetsim.collective(size_bytes="1M", **{field: value})
    assert e.value.field == field and "whole number" in e.value.message


@pytest.mark.parametrize("topology", [None, 5])
def test_a_topology_that_is_not_a_name_is_an_unknown_topology(topology):
    with pytest.raises(InputError) as e:
        gpunetsim.topology(topology)
    assert e.value.field == "topology" and "unknown topology" in e.value.message


@pytest.mark.parametrize("field", ["nvls", "collnet"])
@pytest.mark.parametrize("value", ["ON", "maybe", 1])
def test_an_on_off_argument_takes_on_off_or_a_bool(field, value):
    with pytest.raises(InputError) as e:
        gpunetsim.collective(size_bytes="1M", **{field: value})
    assert e.value.field == field


def test_on_off_words_and_bools_still_choose():
    assert gpunetsim.collective(size_bytes="1G", nvls="off").algo == "ring"
    assert gpunetsim.collective(size_bytes="1G", nvls=True).algo == "nvls"


@pytest.mark.parametrize("field", ["sequence_parallel", "flash_attention"])
@pytest.mark.parametrize("value", ["yes", "false", 1, None])
def test_a_train_switch_is_a_bool(field, value):
    """``sequence_parallel="yes"`` ran with sequence parallelism, while a study's ``sequence_parallel: 'yes'`` is
    refused (review s24 rv24b: one switch rule)."""
    with pytest.raises(InputError) as e:
        gpunetsim.train(topology="dgx-h100", model="llama-2-7b", tp=8, global_batch=8, **{field: value})
    assert e.value.field == "--" + field.replace("_", "-")


def test_a_fabric_argument_with_a_topology_file_is_refused(tmp_path):
    f = tmp_path / "two.yaml"
    f.write_text("name: two\nnodes: [{name: g0}, {name: g1}]\nlinks: [{a: g0, b: g1, kind: pcie, bandwidth: 25 GB/s}]\n")
    assert gpunetsim.collective(topology=str(f), size_bytes="1M").gpus == 2
    with pytest.raises(InputError) as e:
        gpunetsim.collective(topology=str(f), size_bytes="1M", nic_bw="100 Gb/s")
    assert e.value.field == "nic_bw" and e.value.value == "100 Gb/s"


@pytest.mark.parametrize("field", ["no_p2p", "socket_transport", "sharp", "no_gdr"])
def test_a_topology_switch_is_a_bool(field):
    """``sharp="no"`` is a true string: it turned SHARP on."""
    with pytest.raises(InputError) as e:
        gpunetsim.collective(nodes=2, size_bytes="1M", **{field: "no"})
    assert e.value.field == field


@pytest.mark.parametrize("field, value", [("nics", "2"), ("nics", 2.5), ("hosts_per_leaf", "2"),
                                          ("hosts_per_leaf", 1.5), ("oversubscription", "2")])
def test_a_fabric_number_of_the_wrong_type_is_named(field, value):
    """Each died in a TypeError inside FabricSpec.check."""
    with pytest.raises(InputError) as e:
        gpunetsim.collective(nodes=2, size_bytes="1M", **{field: value})
    assert e.value.field == field and e.value.value == value


def test_ddp_takes_the_clis_word_for_no_compression():
    """``compression="none"`` was refused by a message offering "none"."""
    assert gpunetsim.ddp(workload="gpt2", compression="none").iteration_s == gpunetsim.ddp(workload="gpt2").iteration_s
    with pytest.raises(InputError) as e:
        gpunetsim.ddp(workload="gpt2", gradient_as_bucket_view="yes")
    assert e.value.field == "gradient_as_bucket_view"


@pytest.mark.parametrize("call, field", [
    (lambda: gpunetsim.train(topology="dgx-h100", model=5, tp=8, global_batch=8), "--model"),   # AttributeError
    (lambda: gpunetsim.cluster("shared-spine", seed=-1), "seed"),                              # ran
    (lambda: gpunetsim.run_study(5), None),                                                    # TypeError
])
def test_other_arguments_of_the_wrong_kind_are_input_errors(call, field):
    with pytest.raises(InputError) as e:
        call()
    assert e.value.field == field


@pytest.mark.parametrize("call, field", [
    (lambda: gpunetsim.ddp(topology="hgx-h200", gpus=4, model="resnet50"), "model"),      # the keyword is workload
    (lambda: gpunetsim.collective(topology="hgx-h200", gpus=4, size="1M"), "size"),
    (lambda: gpunetsim.train(topology="hgx-h200", gpus=4, model="llama-2-7b", tp=4, global_batch=4, nic_speed=1),
     "nic_speed"),
])
def test_an_unknown_keyword_is_refused_by_its_name(call, field):
    """A keyword that is neither the function's nor a topology option raised a TypeError naming the private
    ``_described`` (review s25)."""
    with pytest.raises(InputError, match="nor a topology option") as e:
        call()
    assert e.value.field == field and "nic_bw" in str(e.value)
