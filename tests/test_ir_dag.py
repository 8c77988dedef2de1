"""Typed node attributes of the DAG and their ``dag.json`` form (``[key, string]`` pairs, as it always was)."""
import json

import pytest

from lego_build.ir.dag import (
    DAG,
    DelaySpec,
    FifoSpec,
    GateSpec,
    MulSpec,
    MuxSpec,
    Node,
    PortSpec,
    TensorSpec,
)
from lego_build.ir.serialize import from_jsonable, to_jsonable

NODES = (
    (Node("agen_A", "agen", 0, 12, TensorSpec("A")), [["tensor", "A"]]),
    (Node("rd_A_1", "read", 1, 8, PortSpec("A", 1)), [["lane", "1"], ["tensor", "A"]]),
    (Node("wr_Y_0", "write", 0, 32, PortSpec("Y", 0)), [["lane", "0"], ["tensor", "Y"]]),
    (Node("pin_A_0_0", "pin", 0, 8, TensorSpec("A")), [["tensor", "A"]]),
    (Node("ctrl_commit_tap0", "pin", 0, 1), []),  # a broadcast tap has no tensor
    (Node("fifo_X", "fifo", 0, 8, FifoSpec(4, 1, 0)), [["capacity", "4"], ["shift", "1"], ["static_depth", "0"]]),
    (Node("mux_A_0_1", "mux", 0, 8, MuxSpec((("mn", 0), ("icoc", 1)))), [["select", "mn:0,icoc:1"]]),
    (Node("gate_0_0_0_1", "gate", 0, 32, GateSpec(("icoc",))), [["dataflows", "icoc"]]),
    (Node("dly_a", "delay", 2, 8, DelaySpec(("mn", "icoc"))), [["enable", "mn,icoc"]]),
    (Node("dly_b", "delay", 2, 8, DelaySpec()), []),  # always clocked: no pairs
    (Node("mul_0_0", "mul", 1, 16, MulSpec("bitfusion")), [["fu", "bitfusion"]]),
    (Node("mul_0_1", "mul", 1, 16, MulSpec()), []),  # the default FU: no pairs
    (Node("add_0_0", "add", 1, 32), []),
)


def _dag(nodes) -> DAG:
    return DAG((1, 1), 1, 1, 16, (), tuple(nodes), ())


def test_attributes_are_written_as_the_pairs_dag_json_always_held():
    doc = to_jsonable(_dag(n for n, _ in NODES))
    assert [row["attrs"] for row in doc["nodes"]] == [pairs for _, pairs in NODES]
    assert set(doc["nodes"][0]) == {"name", "kind", "latency", "width", "attrs"}


def test_dag_json_round_trip_restores_the_typed_attributes():
    dag = _dag(n for n, _ in NODES)
    doc = json.loads(json.dumps(to_jsonable(dag)))
    assert from_jsonable(DAG, doc) == dag
    assert to_jsonable(from_jsonable(DAG, doc)) == doc


def test_spec_names_the_node_whose_attributes_have_another_type():
    node = Node("rd_A_0", "read", 1, 8, PortSpec("A", 0))
    assert node.spec(PortSpec).lane == 0
    with pytest.raises(TypeError, match="rd_A_0 .*not a FifoSpec"):
        node.spec(FifoSpec)


def test_mux_input_per_dataflow():
    assert MuxSpec((("mn", 0), ("icoc", 1))).input_of("icoc") == 1


def test_fifo_capacities_read_the_typed_fifo_attributes():
    fifos = (Node("f0", "fifo", 0, 8, FifoSpec(4, 1, 0)), Node("f1", "fifo", 0, 8, FifoSpec(2, 1, 2)),
             Node("f2", "fifo", 0, 8, FifoSpec(3, 0, 0)))
    dag = DAG((1, 1), 1, 1, 16, (), fifos, (), shifts=((1,), (2,)))
    assert dag.fifo_capacities() == (3, 4)


def test_attributes_on_a_kind_that_has_none_are_rejected():
    doc = to_jsonable(_dag([Node("add_0_0", "add", 1, 32)]))
    doc["nodes"][0]["attrs"] = [["tensor", "A"]]
    with pytest.raises(ValueError, match="add node add_0_0 carries attributes"):
        from_jsonable(DAG, doc)
