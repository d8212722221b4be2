"""Pins and policies: exact pins per backend, the same JAX version for both, clear errors on bad files."""

import pytest

from jaxci.catalogue import CatalogueError, load_catalogue, load_policies, read_pins


def test_pins_are_exact_and_agree_across_backends():
    cpu, cuda = read_pins("cpu"), read_pins("cuda13")
    assert cpu["jax"] == cuda["jax"] and cpu["numpyro"] == cuda["numpyro"]
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
