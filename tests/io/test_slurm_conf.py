"""slurm.conf as a machine and a scheduling policy: hand-made fragments with known machines."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from repo_paths import TINY
from schedbench.cli.main import main
from schedbench.errors import DataError
from schedbench.io import load, machine, slurm_conf


def write(tmp_path, text: str, name: str = "slurm.conf"):
    path = tmp_path / name
    path.write_text(text)
    return path


def read(tmp_path, text: str, name: str = "slurm.conf") -> slurm_conf.SlurmConf:
    return slurm_conf.read(write(tmp_path, text, name))


# --------------------------------------------------------------------------- host lists and durations


@pytest.mark.parametrize("text, names", [
    ("n[1-4,7]", ["n1", "n2", "n3", "n4", "n7"]),
    ("gpu[01-03]", ["gpu01", "gpu02", "gpu03"]),
    ("gpu[08-10]", ["gpu08", "gpu09", "gpu10"]),
    ("a[1-2]b[3-4]", ["a1b3", "a1b4", "a2b3", "a2b4"]),
    ("alpha,beta,n[2-3]", ["alpha", "beta", "n2", "n3"]),
    ("rack[0-1]_blade[7]", ["rack0_blade7", "rack1_blade7"]),
    ("single", ["single"]),
])
def test_host_lists(text, names):
    assert slurm_conf.expand_hostlist(text) == names


@pytest.mark.parametrize("bad", ["n[1-", "n[a-b]", "n[4-2]", "n]1[", "n[1-2"])
def test_bad_host_lists(bad):
    with pytest.raises(ValueError):
        slurm_conf.expand_hostlist(bad)


@pytest.mark.parametrize("text, seconds", [
    ("90", 5400), ("1:30", 90), ("2:00:00", 7200), ("1-0", 86400), ("1-12", 129600),
    ("2-03:04", (2 * 24 + 3) * 3600 + 4 * 60), ("2-03:04:05", (2 * 24 + 3) * 3600 + 4 * 60 + 5),
    ("7-0", 7 * 86400), ("0", 0),
])
def test_durations(text, seconds):
    assert slurm_conf.parse_duration(text) == seconds


def test_unlimited_only_where_allowed():
    assert slurm_conf.parse_duration("UNLIMITED", unlimited=True) == -1
    assert slurm_conf.parse_duration("infinite", unlimited=True) == -1
    with pytest.raises(ValueError):
        slurm_conf.parse_duration("UNLIMITED")
    with pytest.raises(ValueError):
        slurm_conf.parse_duration("1:2:3:4")


# --------------------------------------------------------------------------- nodes


CLUSTER = """\
# a small cluster: CPU nodes, GPU nodes, one big-memory node
ClusterName=demo
SlurmctldHost=head(10.0.0.1)
NodeName=DEFAULT Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=64000 State=UNKNOWN
NodeName=cpu[01-04] Feature=ib,skylake
NodeName=gpu[1-2] CPUs=32 RealMemory=256000 Gres=gpu:a100:4(S:0-1) Features=ib
NodeName=big CoresPerSocket=16 RealMemory=1T Feature=bigmem
"""


def test_node_lines_give_the_machine_in_file_order(tmp_path):
    with pytest.raises(DataError, match=r"slurm.conf:7: RealMemory=1T: expected a non-negative whole number"):
        read(tmp_path, CLUSTER)
    conf = read(tmp_path, CLUSTER.replace("RealMemory=1T", "RealMemory=1024000"))
    m = conf.machine
    assert m.node_names == ("cpu01", "cpu02", "cpu03", "cpu04", "gpu1", "gpu2", "big")
    # CPUs = sockets x cores x threads (threads counted, as Slurm does); CPUs= wins when given
    assert m.capacity.tolist() == [[32, 0, 0, 64000]] * 4 + [[32, 4, 0, 256000]] * 2 + [[64, 0, 0, 1024000]]
    assert m.node_features[0] == {"ib", "skylake"}
    assert m.node_features[4] == {"ib", "gpu:a100"}
    assert m.node_features[6] == {"bigmem"}
    assert m.spec == "4x(cores=32,mem=64000M)+2x(cores=32,gpus=4,mem=256000M)+1x(cores=64,mem=1024000M)"
    assert machine.from_spec(m.spec).capacity.tolist() == m.capacity.tolist()
    assert m.note == "from slurm.conf slurm.conf: 7 nodes, 0 partitions"
    assert m.partitions == ()
    assert conf.unknown_keys == () and conf.notices == ()


def test_boards_and_sockets_per_board(tmp_path):
    conf = read(tmp_path, "NodeName=b1 Boards=2 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=8\n"
                          "NodeName=b2 Boards=2 Sockets=3 CoresPerSocket=2 RealMemory=8\n"
                          "NodeName=p1 Procs=6 RealMemory=8\n")
    assert conf.machine.capacity[:, 0].tolist() == [16, 12, 6]


def test_default_lines_add_to_each_other_and_apply_after_them(tmp_path):
    conf = read(tmp_path, "NodeName=DEFAULT CPUs=8\n"
                          "NodeName=a RealMemory=100\n"
                          "NodeName=DEFAULT RealMemory=200 Gres=gpu:2\n"
                          "NodeName=b\n"
                          "NodeName=c Gres=\"\" CPUs=4\n")
    assert conf.machine.capacity.tolist() == [[8, 0, 0, 100], [8, 2, 0, 200], [4, 0, 0, 200]]
    assert conf.machine.node_features == (frozenset(),) * 3


def test_gres_forms(tmp_path):
    conf = read(tmp_path, "NodeName=a CPUs=4 RealMemory=1 Gres=gpu:tesla:1,gpu:kepler:2\n"
                          "NodeName=b CPUs=4 RealMemory=1 Gres=gpu:no_consume:3,mps:100,bandwidth:lustre:no_consume:4G\n"
                          "NodeName=c CPUs=4 RealMemory=1 Gres=gpu:1K\n")
    assert conf.machine.capacity[:, 1].tolist() == [3, 3, 1024]
    assert conf.machine.node_features[0] == {"gpu:tesla", "gpu:kepler"}
    assert conf.notices == (f"{tmp_path / 'slurm.conf'}: GRES other than gpu ignored: mps, bandwidth",)


def test_continuation_quotes_comments_and_case(tmp_path):
    conf = read(tmp_path, "nodename=n[1-2] \\\n   cpus=4 \\\n   realmemory=10 reason=\"down # for repair\" # trailing\n"
                          "# NodeName=ghost CPUs=1\n\n")
    assert conf.machine.node_names == ("n1", "n2")
    assert conf.machine.capacity.tolist() == [[4, 0, 0, 10]] * 2


def test_missing_real_memory_is_slurms_one_mib_with_a_notice(tmp_path):
    conf = read(tmp_path, "NodeName=x[1-3] CPUs=2\n")
    assert conf.machine.capacity[:, 3].tolist() == [1, 1, 1]
    assert conf.notices == (f"{tmp_path / 'slurm.conf'}: 3 nodes without RealMemory (first x1): Slurm's default "
                            "of 1 MiB each, so no job asking for memory fits there",)


def test_include_is_read_relative_to_the_file_or_skipped_with_a_notice(tmp_path):
    (tmp_path / "nodes.conf").write_text("NodeName=n[1-2] CPUs=4 RealMemory=10\n")
    conf = read(tmp_path, "Include nodes.conf\nPartitionName=p Nodes=ALL\n")
    assert conf.machine.node_names == ("n1", "n2")
    # an absolute path from the cluster is also looked for beside the including file
    conf = read(tmp_path, "include /etc/slurm/nodes.conf\n")
    assert conf.machine.n_nodes == 2
    conf = read(tmp_path, "Include gone.conf\nNodeName=a CPUs=1 RealMemory=1\n")
    assert conf.notices == (f"{tmp_path / 'slurm.conf'}:1: Include gone.conf: no such file (looked beside "
                            "slurm.conf too); skipped",)


# --------------------------------------------------------------------------- partitions


PARTITIONS = """\
NodeName=DEFAULT CPUs=16 RealMemory=64000
NodeName=n[1-4]
NodeName=g[1-2] Gres=gpu:v100:2 Feature=ib
DefMemPerCPU=2000
PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP
PartitionName=batch Nodes=n[1-4] Default=YES PriorityJobFactor=10 PriorityTier=2
PartitionName=gpu Nodes=g[1-2],n4 MaxTime=90 DefMemPerNode=32000
PartitionName=all Nodes=ALL MaxTime=UNLIMITED Priority=5
PartitionName=short Nodes=feature{ib} MaxTime=1:30
PartitionName=debug Nodes=n1 MaxTime=2-03:04:05
"""


def test_partitions(tmp_path):
    parts = {p.name: p for p in read(tmp_path, PARTITIONS).machine.partitions}
    assert list(parts) == ["batch", "gpu", "all", "short", "debug"]
    batch, gpu, every, short, debug = parts.values()
    assert batch.nodes.tolist() == [0, 1, 2, 3] and batch.nodes.dtype == np.int64
    assert (batch.default, batch.max_time, batch.job_factor, batch.tier) == (True, 86400, 10, 2)
    assert (batch.def_mem_per_cpu, batch.def_mem_per_node) == (2000, 0)  # the cluster-wide DefMemPerCPU
    assert gpu.nodes.tolist() == [3, 4, 5]  # overlapping partitions, nodes in index order
    assert (gpu.default, gpu.max_time, gpu.def_mem_per_cpu, gpu.def_mem_per_node) == (False, 5400, 0, 32000)
    assert every.nodes.tolist() == list(range(6))
    assert (every.max_time, every.job_factor, every.tier) == (-1, 5, 5)  # Priority= sets both
    assert short.nodes.tolist() == [4, 5] and short.max_time == 120  # 1:30 rounded up to whole minutes
    assert debug.max_time == ((2 * 24 + 3) * 60 + 5) * 60  # 05 s rounded up to the minute
    assert (debug.job_factor, debug.tier) == (1, 1)


def test_the_last_default_partition_wins_and_nodesets(tmp_path):
    conf = read(tmp_path, "NodeName=n[1-3] CPUs=1 RealMemory=1 Feature=x\nNodeName=m1 CPUs=1 RealMemory=1\n"
                          "NodeSet=xs Feature=x\nNodeSet=pair Nodes=n1,m1\n"
                          "PartitionName=a Nodes=xs Default=YES\nPartitionName=b Nodes=pair Default=YES\n")
    a, b = conf.machine.partitions
    assert (a.default, b.default) == (False, True)
    assert a.nodes.tolist() == [0, 1, 2] and b.nodes.tolist() == [0, 3]


def test_a_nodeset_with_nodes_and_feature_is_their_union(tmp_path):
    # NodeSet as in slurm.conf(5): Nodes= lists nodes, Feature= adds every node with that
    # feature; with both, the nodes of either.
    conf = read(tmp_path, "NodeName=n[1-3] CPUs=1 RealMemory=1 Feature=x\nNodeName=m1 CPUs=1 RealMemory=1\n"
                          "NodeSet=s Nodes=m1 Feature=x\nPartitionName=p Nodes=s\n")
    (p,) = conf.machine.partitions
    assert p.nodes.tolist() == [0, 1, 2, 3]


# --------------------------------------------------------------------------- policy


def test_policy_defaults(tmp_path):
    policy = read(tmp_path, "NodeName=a CPUs=1 RealMemory=1\n").policy
    assert policy == {
        "priority_type": "multifactor", "weight_age": 0, "weight_fairshare": 0, "weight_jobsize": 0,
        "weight_partition": 0, "weight_qos": 0, "max_age": 7 * 86400, "decay_half_life": 7 * 86400,
        "favor_small": False, "calc_period": 300, "sched_interval": 60, "default_queue_depth": 100,
        "bf_interval": 30, "bf_max_job_test": 500, "bf_window": 86400, "bf_resolution": 60,
        "bf_max_job_user": 0, "bf_continue": False, "scheduler_type": "backfill", "select_type": "cons_tres",
        "select_type_parameters": "CR_Core_Memory",
    }
    assert policy is not slurm_conf.DEFAULT_POLICY


def test_policy_overrides(tmp_path):
    conf = read(tmp_path, """\
NodeName=a CPUs=1 RealMemory=1
PriorityType=priority/basic
PriorityWeightAge=1000 PriorityWeightFairshare=100000 PriorityWeightJobSize=10
PriorityWeightPartition=5 PriorityWeightQOS=7
PriorityMaxAge=1-0 PriorityDecayHalfLife=14-0 PriorityCalcPeriod=2 PriorityFavorSmall=YES
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory,CR_CORE_DEFAULT_DIST_BLOCK
SchedulerParameters=sched_interval=120,default_queue_depth=50,bf_interval=60,bf_max_job_test=1000,\\
bf_window=2880,bf_resolution=300,bf_max_job_user=20,bf_continue,max_rpc_cnt=150,defer,bf_max_job_part=5
""")
    p = conf.policy
    assert p["priority_type"] == "basic" and p["scheduler_type"] == "builtin"
    assert (p["weight_age"], p["weight_fairshare"], p["weight_jobsize"], p["weight_partition"], p["weight_qos"]) == (
        1000, 100000, 10, 5, 7)
    assert (p["max_age"], p["decay_half_life"], p["calc_period"], p["favor_small"]) == (86400, 14 * 86400, 120, True)
    assert (p["sched_interval"], p["default_queue_depth"], p["bf_interval"], p["bf_max_job_test"]) == (120, 50, 60, 1000)
    assert (p["bf_window"], p["bf_resolution"], p["bf_max_job_user"], p["bf_continue"]) == (2880 * 60, 300, 20, True)
    assert p["select_type_parameters"] == "CR_Core_Memory,CR_CORE_DEFAULT_DIST_BLOCK"
    # performance knobs pass silently; items that change the schedule are named
    assert conf.unknown_keys == ("SchedulerParameters:defer", "SchedulerParameters:bf_max_job_part")


def test_unknown_keys_are_listed_once_and_infrastructure_is_silent(tmp_path):
    conf = read(tmp_path, """\
ClusterName=c SlurmctldHost=h AuthType=auth/munge StateSaveLocation=/var/spool SlurmctldLogFile=/var/log/x
AccountingStorageType=accounting_storage/slurmdbd ProctrackType=proctrack/cgroup
Licenses=matlab:2 PreemptType=preempt/qos licenses=x PriorityFlags=NO_FAIR_TREE
NodeName=a CPUs=1 RealMemory=1 Weight=10 NodeAddr=10.0.0.2
PartitionName=p Nodes=a MaxNodes=2 AllowGroups=g OverSubscribe=NO MaxNodes=3
""")
    assert conf.unknown_keys == ("Licenses", "PreemptType", "PriorityFlags", "NodeName:Weight",
                                 "PartitionName:MaxNodes")
    path = tmp_path / "slurm.conf"
    assert slurm_conf.notices(conf, path) == [
        f"{path}: slurm.conf keys the replay does not model, ignored: Licenses, PreemptType, PriorityFlags, "
        "NodeName:Weight, PartitionName:MaxNodes"]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("text, message", [
    ("NodeName=a CPUs=x\n", "slurm.conf:1: CPUs=x: expected a positive whole number"),
    ("NodeName=a CPUs=0\n", "slurm.conf:1: CPUs=0: expected a positive whole number"),
    ("NodeName=n[3-1] CPUs=1\n", re.escape("slurm.conf:1: NodeName=n[3-1]: range 3-1 runs backwards in 'n[3-1]'")),
    ("NodeName=n[1-x] CPUs=1\n", re.escape("slurm.conf:1: NodeName=n[1-x]: bad range [1-x] in 'n[1-x]'")),
    ("\nNodeName=a RealMemory=10\n", "slurm.conf:2: NodeName=a: no CPU count"),
    ("NodeName=a CPUs=1\nNodeName=a CPUs=2\n", "slurm.conf:2: node a is already defined at .*slurm.conf:1"),
    ("NodeName=a CPUs=1\nPartitionName=p Nodes=a,b\n", "slurm.conf:2: partition p: no node named 'b'"),
    ("NodeName=a CPUs=1\nPartitionName=p Nodes=a MaxTime=soon\n",
     r"slurm.conf:2: MaxTime=soon: expected a duration \(minutes, MM:SS, HH:MM:SS or D-HH\[:MM\[:SS\]\]\) or UNLIMITED"),
    ("NodeName=a CPUs=1\nPartitionName=p Nodes=a\nPartitionName=p Nodes=a\n",
     "slurm.conf:3: partition p is already defined at .*slurm.conf:2"),
    ("NodeName=a CPUs=1\nthis is not a setting\n", "slurm.conf:2: expected key=value, got 'this'"),
    ("NodeName=a CPUs=1 \\\n Gres=gpu:many\n", "slurm.conf:1: Gres=gpu:many: expected NAME"),
    ("NodeName=a CPUs=1\nPriorityWeightAge=-3\n", "slurm.conf:2: PriorityWeightAge=-3: expected a non-negative"),
    ("NodeName=a CPUs=1\nPriorityMaxAge=a week\n", "slurm.conf:2: expected key=value, got 'week'"),
    ("NodeName=a CPUs=1\nPriorityMaxAge=week\n", "slurm.conf:2: PriorityMaxAge=week: expected a duration"),
    ("NodeName=a CPUs=1\nPriorityType=priority/fancy\n",
     "slurm.conf:2: PriorityType=priority/fancy: expected priority/multifactor or priority/basic"),
    ("NodeName=a CPUs=1\nSchedulerParameters=bf_window=0\n",
     "slurm.conf:2: SchedulerParameters bf_window=0: expected bf_window=N with N >= 1"),
    ("NodeName=a CPUs=1\nPriorityFavorSmall=maybe\n", "slurm.conf:2: PriorityFavorSmall=maybe: expected YES or NO"),
    ("NodeName=a CPUs=1 Reason=\"open\n", "slurm.conf:1: unbalanced quotes"),
    ("NodeName=a CPUs=1 \\\n", r"slurm.conf:1: the file ends inside a continued line"),
    ("ClusterName=c\n", r"slurm.conf: no NodeName lines"),
])
def test_malformed_lines_name_file_and_line(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        read(tmp_path, text)


def test_an_error_in_an_included_file_names_that_file(tmp_path):
    (tmp_path / "nodes.conf").write_text("NodeName=a CPUs=1\n\nNodeName=b CPUs=two\n")
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 'nodes.conf'}:3: CPUs=two")):
        read(tmp_path, "ClusterName=c\nInclude nodes.conf\n")


def test_an_include_loop_is_an_error(tmp_path):
    with pytest.raises(DataError, match="Include loop"):
        read(tmp_path, "Include slurm.conf\n")


# --------------------------------------------------------------------------- wiring


def test_machine_parse_reads_a_slurm_conf_by_name_or_content(tmp_path):
    by_name = write(tmp_path, "NodeName=n[1-2] CPUs=4 RealMemory=100\n")
    by_content = write(tmp_path, "# cluster\n  NodeName=n[1-3] CPUs=4 RealMemory=100\n", name="cluster.txt")
    assert machine.parse(str(by_name)).node_names == ("n1", "n2")
    assert machine.parse(str(by_content)).n_nodes == 3
    assert slurm_conf.sniff(str(by_content)) and not slurm_conf.sniff(str(TINY))


def test_load_puts_the_policy_and_the_notice_in_meta(tmp_path):
    conf = write(tmp_path, "NodeName=n[1-8] CPUs=4 RealMemory=16000\nPartitionName=batch Nodes=ALL Default=YES\n"
                           "PriorityWeightAge=100 Licenses=x:1\n")
    table, mach, meta, _ = load.load(str(TINY), str(conf))
    assert mach.n_nodes == 8 and [p.name for p in mach.partitions] == ["batch"]
    assert meta["slurm"]["weight_age"] == 100 and meta["slurm"]["bf_interval"] == 30
    assert meta["notices"] == [f"{conf}: slurm.conf keys the replay does not model, ignored: Licenses"]
    _, _, meta, _ = load.load(str(TINY), "8x(cores=4)")
    assert "slurm" not in meta


def test_replay_with_a_slurm_conf_machine(tmp_path, capsys):
    conf = write(tmp_path, "ClusterName=tiny\nNodeName=DEFAULT Sockets=1 CoresPerSocket=4 RealMemory=16000\n"
                           "NodeName=n[1-8]\nPartitionName=batch Nodes=ALL Default=YES MaxTime=UNLIMITED\n"
                           "SchedulerParameters=bf_interval=60,defer\n")
    out = tmp_path / "run"
    assert main(["replay", str(TINY), "--machine", str(conf), "-s", "easy", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "keys the replay does not model, ignored: SchedulerParameters:defer" in captured.err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs_input"] == 60 and summary["jobs_replayed"] == 60
    assert summary["machine"] == "8x(cores=4,mem=16000M)"
