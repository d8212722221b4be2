"""Pins and policies: exact pins per backend, the same JAX version for both, clear errors on bad files."""

import pytest

from jaxci.catalogue import CatalogueError, load_catalogue, load_policies, read_pins


def test_pins_are_exact_and_agree_across_backends():
    cpu, cuda, tpu = read_pins("cpu"), read_pins("cuda13"), read_pins("tpu")
    assert cpu["jax"] == cuda["jax"] == tpu["jax"] and cpu["numpyro"] == cuda["numpyro"] == tpu["numpyro"]
    assert cpu["jaxlib"] == cpu["jax"]


def test_broken_pin_file_names_file_and_line(tmp_path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "requirements.txt").write_text("jax>=0.4\n")
    with pytest.raises(CatalogueError, match=r"requirements.txt:1: expected an exact pin"):
        read_pins("cpu", tmp_path)


def test_missing_pin_file_and_unknown_backend(tmp_path):
    with pytest.raises(CatalogueError, match="pin file not found"):
        read_pins("cpu", tmp_path)
    with pytest.raises(CatalogueError, match="unknown backend"):
        read_pins("rocm", tmp_path)


def test_malformed_catalogue_figure(tmp_path):
    (tmp_path / "machines.toml").write_text(
        '[machines.x]\ndescription="d"\nrunner="github"\nimage="i"\nbackend="cpu"\nspot="never"\nbench=false\n'
        'vcpu = 4\n')
    with pytest.raises(CatalogueError, match=r"machines.x.vcpu must be"):
        load_catalogue(tmp_path)


def test_policies_fraction_is_budget_over_n():
    policies, budget = load_policies()
    assert set(policies) >= {"default", "no-prealloc", "fraction", "platform"}
    env = policies["fraction"].environment(3, budget)
    assert env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.30"  # budget 0.90 / 3
    four = float(policies["fraction"].environment(4, budget)["XLA_PYTHON_CLIENT_MEM_FRACTION"])
    assert four == 0.22 and 4 * four <= budget  # 0.225 rounds down, never up
    assert policies["default"].environment(2, budget) == {}


LAB_ENTRY = ('[machines.fam]\ndescription="d"\nrunner="github"\nimage="i"\nbackend="cpu"\nspot="never"\nbench=false\n'
             '[machines.lab-x]\nkind="lab"\ndescription="lent"\nbackend="cuda13"\n')


def test_lab_machines_are_kept_out_of_the_runner_families():
    from jaxci.catalogue import lab_machines, machine_label

    families, everything = load_catalogue(), load_catalogue(include_lab=True)
    assert "lab-h200" not in families and "lab-h200" in everything
    assert all(not m.is_lab and m.runner in ("runs-on", "github") for m in families.values())
    lab = lab_machines()["lab-h200"]
    assert lab.is_lab and lab.has_gpu and not lab.bench and lab.runner == "lab"
    assert lab.value("gpu_fp64_tflops") == 34 and "hardware.md" in lab.figure("gpu_fp64_tflops").source
    assert lab.value("price_per_hour") is None and lab.figure("price_per_hour").reason  # never costed
    assert machine_label("lab-h200") == "lab: H200"
    assert machine_label("g4dn.2xlarge") == "g4dn.2xlarge" and machine_label("local-x") == "local-x"


@pytest.mark.parametrize("text, error", [
    (LAB_ENTRY, r"machines.lab-x lacks label"),
    (LAB_ENTRY + 'label="X"\nrunner="runs-on"\n', r"machines.lab-x is a lab machine: runner do not apply"),
    (LAB_ENTRY.replace('kind="lab"', 'kind="borrowed"') + 'label="X"\n', r"machines.lab-x.kind must be one of"),
    (LAB_ENTRY + 'label="X"\nvcpu = 16\n', r"machines.lab-x.vcpu must be"),
])
def test_lab_entry_errors_name_the_entry(tmp_path, text, error):
    (tmp_path / "machines.toml").write_text(text)
    with pytest.raises(CatalogueError, match=error):
        load_catalogue(tmp_path)
