"""Machine model: spec strings, Eurora node files, SWF headers."""

from __future__ import annotations

import re

import numpy as np
import pytest

from schedbench.errors import DataError, UsageError
from schedbench.io import machine


def test_spec_with_two_node_kinds():
    m = machine.parse("32x(cores=16,mics=2,mem=32G)+32x(cores=16,gpus=2,mem=32G)")
    assert m.n_nodes == 64
    assert m.capacity[0].tolist() == [16, 0, 2, 32 * 1024]
    assert m.capacity[63].tolist() == [16, 2, 0, 32 * 1024]
    assert machine.parse(m.spec).capacity.tolist() == m.capacity.tolist()


def test_memory_suffixes_are_binary():
    # io/machine.py: "memory suffixes K, M, G, T are binary; a bare number is MiB":
    # 1048576 KiB = 1024 MiB (a decimal K would give 1048).
    assert machine.parse("1x(cores=1,mem=1048576K)").capacity[0].tolist() == [1, 0, 0, 1024]


def test_machine_l():
    m = machine.parse("1024x(cores=8,gpus=2)")
    assert m.totals.tolist() == [8192, 2048, 0, 0]


@pytest.mark.parametrize("bad", ["1024", "4x(cores=a)", "4x(disks=2)", "0x(cores=1)", "2x(mem=4G)", "2x(cores=1,mem=4Q)"])
def test_bad_specs_are_usage_errors(bad):
    with pytest.raises(UsageError):
        machine.parse(bad)


@pytest.mark.parametrize(("bad", "words"), [
    ("4x(cores=99999999999999999999)", "at most 1,048,576 per node"),  # was an OverflowError
    ("4x(cores=8,mem=99999999999999999999T)", "at most 1,048,576T per node"),
    ("4x(cores=8,mem=9999999999999T)", "at most 1,048,576T per node"),
    ("1000000000x(cores=1)", "1,000,000,000 nodes or more; a machine has at most 1,048,576"),  # was a MemoryError
    ("1000000x(cores=1)+100000x(cores=2,gpus=1)", "1,100,000 nodes or more"),
])
def test_out_of_range_specs_are_usage_errors_before_any_array_is_built(bad, words):
    with pytest.raises(UsageError, match=re.escape(words)):
        machine.parse(bad)


def test_eurora_node_file(shared_traces):
    m = machine.parse(str(shared_traces / "eurora" / "system_configs" / "nodes_#64"))
    assert m.n_nodes == 64
    assert m.totals.tolist() == [1024, 64, 64, 64 * 32 * 1024]
    assert (m.capacity[:32, 2] == 2).all() and (m.capacity[32:, 1] == 2).all()


def test_node_file_errors_name_the_line(tmp_path):
    f = tmp_path / "nodes"
    f.write_text("0 16 0 2 33554432 0\n1 sixteen 0 2 33554432 0\n")
    with pytest.raises(DataError, match=r"nodes:2"):
        machine.from_node_file(f)


@pytest.mark.parametrize(
    "procs, nodes, widest, cap",
    [
        (240, 240, 0, [[1, 0, 0, 0]] * 240),
        (240, 120, 0, [[2, 0, 0, 0]] * 120),
        (100, 30, 0, [[100, 0, 0, 0]]),
        (None, 8, 0, [[1, 0, 0, 0]] * 8),
        (None, None, 17, [[17, 0, 0, 0]]),
    ],
)
def test_swf_header_rules(procs, nodes, widest, cap):
    m = machine.from_swf_header(procs, nodes, widest)
    np.testing.assert_array_equal(m.capacity, np.array(cap))
    assert m.note


def test_swf_header_without_any_size():
    with pytest.raises(DataError):
        machine.from_swf_header(None, None, 0)
