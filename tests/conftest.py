import pytest

from tests.asvutil import AsvSandbox


@pytest.fixture(scope="session")
def ci_run(tmp_path_factory):
    """The whole suite at CI scale on this interpreter, once per test session (asv run -E existing --quick).

    Tests that read results (the report, skipped-gpu checks) share it instead of running asv again.
    """
    box = AsvSandbox(tmp_path_factory.mktemp("asv")).write_conf()
    machine = box.register("ci-test")
    proc = box.run_existing(machine, JAXCI_FORK_AUDIT=str(box.root / "forks-after-backend.txt"))
    return box, machine, proc.stdout + proc.stderr


@pytest.fixture
def x64():
    """float64 JAX arrays for one test (x64 is process-wide), restored afterwards."""
    import jax

    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)
