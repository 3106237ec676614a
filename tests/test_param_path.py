"""The one grammar of parameter paths (models/param_path.py) and its users: --set, the sweep runner, analysis."""

import pytest

import configs
from drivers import sweep as sw
from models import param_path
from models.param_path import Step
from models.params import ParamError


def test_parse_names_indices_and_keys():
    assert param_path.parse("caches.llc.size") == (Step("name", "caches"), Step("name", "llc"), Step("name", "size"))
    assert param_path.parse("nics[1].pcie_lanes") == (Step("name", "nics"), Step("index", 1),
                                                      Step("name", "pcie_lanes"))
    assert param_path.parse("workload.argv[prefetch]") == (Step("name", "workload"), Step("name", "argv"),
                                                           Step("key", "prefetch"))


def test_the_old_dotted_index_is_an_alias_and_canonical_uses_brackets():
    assert param_path.parse("nics.1.pcie_lanes") == param_path.parse("nics[1].pcie_lanes")
    assert param_path.canonical("nics.1.pcie_lanes") == "nics[1].pcie_lanes"
    assert param_path.canonical("sockets.0.caches.llc.size") == "sockets[0].caches.llc.size"
    assert param_path.column("cfg", "nics.0.socket") == "cfg.nics[0].socket"
    assert param_path.column("param", "workload.argv[prefetch]") == "param.workload.argv[prefetch]"


@pytest.mark.parametrize("path,where", [
    ("", "empty"), ("1abc", "must start"), ("a..b", "'..b'"), ("a.b[", r"'\['"), ("a[]", r"'\[\]'"),
    ("a b", "' b'"), ("a.[0]", r"'.\[0\]'"),
])
def test_syntax_errors_say_where(path, where):
    with pytest.raises(ParamError, match=where):
        param_path.parse(path)


def test_set_reaches_objects_list_items_and_argv():
    system = configs.load("xeon_e5_2697v2_socket").system(cores=12)
    param_path.set_value(system, "nics[1].pcie_lanes", 16)
    param_path.set_value(system, "nics.0.pcie_lanes", 4)
    assert [n.pcie_lanes for n in system.nics][:2] == [4, 16]
    param_path.set_value(system, "core.rob_entries", 96)
    assert param_path.get(system, "core.rob_entries") == 96
    argv = list(system.workload.argv)
    param_path.set_value(system, "workload.argv[prefetch]", 0)
    assert system.workload.argv[-1] == "prefetch=0" and sum(a.startswith("prefetch=") for a in system.workload.argv) == 1
    assert param_path.get(system, "workload.argv[prefetch]") == "0"
    param_path.set_value(system, "workload.argv[newarg]", "x")
    assert system.workload.argv[-1] == "newarg=x" and len(system.workload.argv) == len(argv) + (
        0 if any(a.startswith("prefetch=") for a in argv) else 1) + 1


@pytest.mark.parametrize("path,message", [
    ("core.rob_entriez", r"Core has no parameter 'rob_entriez'; its parameters are: .*rob_entries"),
    ("cache.llc.size", r"System has no parameter 'cache'; its parameters are: .*caches"),
    ("nics[4].pcie_lanes", r"nics\[4\]: 4 is not an index of nics \(it has 4 entries\)"),
    ("nics.pcie_lanes", r"nics is a list of 4: give an index first, e.g. nics\[0\].pcie_lanes"),
    ("core.rob_entries.x", r"core.rob_entries is a value \(int\), not a parameter object"),
    ("harts[0]", r"harts is not a list"),
    ("nics[0]", r"nics\[0\] is a parameter object; set one of its parameters"),
    ("workload.binary[x]", r"workload.binary is not a list \(str\): \[x\] names a list item"),
])
def test_bad_paths_name_the_bad_part_and_the_choices(path, message):
    system = configs.load("xeon_e5_2697v2_socket").system(cores=12)
    with pytest.raises(ParamError, match=message):
        param_path.set_value(system, path, 1)


def test_a_bad_value_is_the_parameters_own_error():
    system = configs.load("kvs_default").system()
    with pytest.raises(ParamError, match="rob_entries"):
        param_path.set_value(system, "core.rob_entries", -3)


def test_get_and_flatten_on_a_resolved_configuration_agree():
    config = configs.load("xeon_e5_2697v2_socket").system(cores=12).to_dict()
    leaves = param_path.flatten(config)
    assert leaves["nics[1].socket"] == config["nics"][1]["socket"]
    assert all(param_path.get(config, path) == value for path, value in leaves.items())
    with pytest.raises(ParamError, match="no key 'nope'"):
        param_path.get(config, "nope")


def test_run_set_and_the_sweep_use_the_one_grammar():
    from drivers.cli import run

    system = configs.load("xeon_e5_2697v2_socket").system(cores=12)
    run.apply_override(system, "nics[1].pcie_lanes=16")
    run.apply_override(system, "workload.argv[prefetch]=0")
    assert system.nics[1].pcie_lanes == 16 and "prefetch=0" in system.workload.argv
    with pytest.raises(ParamError, match=r"--set 'nics\[5\].pcie_lanes=1': .*not an index of nics"):
        run.apply_override(system, "nics[5].pcie_lanes=1")
    other = configs.load("xeon_e5_2697v2_socket").system(cores=12)
    sw.set_path(other, "nics.1.pcie_lanes", 16)
    sw.set_path(other, "workload.argv[prefetch]", 0)
    assert other.to_dict() == system.to_dict()
    with pytest.raises(ParamError, match=r"parameter 'nics\[1\].pcie_lanez' = 1: .*its parameters are"):
        sw.set_path(other, "nics[1].pcie_lanez", 1)


def test_a_sweep_tie_spelled_in_the_old_form_still_follows_its_leader():
    point = sw.build_point(sw.Base("xeon_e5_2697v2_socket", cores=12), {"nics[0].pcie_lanes": 4},
                           {"nics.0.pcie_lanes": ("nics[1].pcie_lanes",)})
    assert [n.pcie_lanes for n in point.nics][:2] == [4, 4]


def test_run_set_refuses_a_system_level_parameter_that_every_socket_holds_its_own_copy_of():
    """On a server of several sockets the per-socket parameters live in each socket: `--set core.rob_entries=16` at
    the system's level would change nothing the run uses, so it is refused naming each socket's path; a socket's own
    path and a system-wide one apply."""
    from drivers.cli import run

    system = configs.load("xeon_e5_2697v2_dual").system()
    with pytest.raises(ParamError, match=r"each have their own 'core'.*--set 'sockets\[1\]\.core\.rob_entries=16'"):
        run.apply_override(system, "core.rob_entries=16")
    run.apply_override(system, "sockets[1].core.rob_entries=16")
    assert [s.core.rob_entries for s in system.sockets][1] == 16
    run.apply_override(system, "client.warmup_requests=5")
    assert system.client.warmup_requests == 5
