import pytest

from tests.asvutil import AsvSandbox

#: the session fixtures that cost minutes, each computed once: every test that needs one runs on the same xdist
#: worker (scripts/test.sh runs `pytest -n WORKERS --dist loadgroup --no-loadscope-reorder`), and these groups go
#: first, in this order (the longest first), so they start while the short tests fill in around them
SHARED_RUNS = {"ci_run": "asv-ci-run", "release_environments": "release-environments",
               "small_lectures_executed": "executed-lectures"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """In an xdist worker: group each test by the costly session fixture it needs, else by its module (so a
    module-scoped fixture is built once), the costly groups first."""
    if not hasattr(config, "workerinput"):  # not an xdist worker: the order stays the files'
        return
    order = list(SHARED_RUNS)
    for item in items:
        shared = [fixture for fixture in SHARED_RUNS if fixture in item.fixturenames]
        item.add_marker(pytest.mark.xdist_group(SHARED_RUNS[shared[0]] if shared else item.module.__name__))
    items.sort(key=lambda item: min((order.index(f) for f in SHARED_RUNS if f in item.fixturenames),
                                    default=len(order)))


@pytest.fixture(scope="session")
def ci_run(tmp_path_factory):
    """The whole suite at CI scale on this interpreter, once per test session (asv run -E existing --quick).

    Every test that reads results of a stock asv run (each suite's checks, the report, skipped-gpu checks) shares
    it instead of running asv again on a subset; the suites' side files go to box.root/artifacts.
    """
    box = AsvSandbox(tmp_path_factory.mktemp("asv")).write_conf()
    machine = box.register("ci-test")
    proc = box.run_existing(machine, JAXCI_FORK_AUDIT=str(box.root / "forks-after-backend.txt"),
                            JAXCI_ARTIFACTS=str(box.root / "artifacts"))
    return box, machine, proc.stdout + proc.stderr


@pytest.fixture(scope="session")
def ci_results(ci_run):
    """(asv Results of the session-wide run, its log, its sandbox)."""
    from asv.results import iter_results_for_machine

    box, machine, log = ci_run
    (results,) = list(iter_results_for_machine(str(box.results), machine))
    return results, log, box


@pytest.fixture(scope="session")
def release_environments(tmp_path_factory):
    """One folder of asv virtualenvs for every test that installs JAX releases in a clone of its own (history,
    upgrade-check): the first builds the virtualenv and its dependencies, the others reuse it
    (asvutil.share_environments)."""
    return tmp_path_factory.mktemp("release-envs")


@pytest.fixture(scope="session")
def small_lectures_executed(tmp_path_factory):
    """The small fixture lectures executed once per session by `jaxci audit --execute` (its JSON, its run
    cache): tests/executed_lectures.py says who reads it."""
    from tests.executed_lectures import SMALL, execute

    return execute(SMALL, tmp_path_factory.mktemp("small-lectures"))


@pytest.fixture
def x64():
    """float64 JAX arrays for one test (x64 is process-wide), restored afterwards."""
    import jax

    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)
