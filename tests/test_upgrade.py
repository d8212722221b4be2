"""jaxci upgrade-check: the factor lives in env_matrix/upgrade.toml only; pins move as one commit; asv compare's
table is read row by row; and, end to end, a temporary clone with two pin commits gives a row per benchmark
with a ratio (this last test installs two JAX versions from the package index: it needs the network)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from jaxci import REPO_ROOT
from jaxci.catalogue import CatalogueError, read_pins
from jaxci.results import upgrade
from jaxci.results.upgrade import (
    CheckResult,
    Row,
    compare_args,
    continuous_args,
    load_config,
    local_check,
    local_env,
    make_clone,
    parse_compare,
    pin_commit,
)
from jaxci.util.pins import pin_jax
from jaxci.util.validate import InputError
from tests.asvutil import TWO_RELEASES, share_environments

COMPARE = """
All benchmarks:

| Change   | Before [92f529aa] <main~1>   | After [2136d897] <main>   |   Ratio | Benchmark (Parameter)                          |
|----------|------------------------------|---------------------------|---------|------------------------------------------------|
|          | 2.10±0.1μs                   | 2.05±0.1μs                |   ~0.98 | dispatch.TinyOp.time_warm('float32', 'cpu')    |
| +        | 10.0±0.2ms                   | 25.0±0.3ms                |    2.5  | loops.Scan.time_warm(10000, 1, 'float32', 'cpu') |
|          | n/a                          | n/a                       |     n/a | dispatch.TinyOp.time_warm('float32', 'gpu')    |
"""  # noqa: E501 (asv compare's table, as asv prints it)


def test_factor_is_set_once_and_passed_to_asv():
    config = load_config()
    assert config.factor > 1
    hits = [p for p in (REPO_ROOT / ".github").rglob("*.yml") if re.search(r"(-f|--factor)[ =]\d", p.read_text())]
    assert hits == [], f"a factor is hard-coded in {hits}; it belongs in env_matrix/upgrade.toml"
    args = continuous_args("a", "b", "m", config.factor, ["^x"], None)
    assert args[args.index("--factor") + 1] == f"{config.factor:g}"
    assert compare_args("a", "b", "m", config.factor)[2] == f"{config.factor:g}"


def test_bad_config_is_refused(tmp_path):
    shutil.copy(REPO_ROOT / "env_matrix" / "machines.toml", tmp_path / "machines.toml")
    (tmp_path / "upgrade.toml").write_text('factor = 0.9\nscale = "ci"\ncpu_family = "c7i.2xlarge"\n'
                                           'gpu_family = "g4dn.2xlarge"\n')
    with pytest.raises(CatalogueError, match="factor"):
        load_config(tmp_path)
    (tmp_path / "upgrade.toml").write_text('factor = 1.3\nscale = "ci"\ncpu_family = "g4dn.2xlarge"\n'
                                           'gpu_family = "g4dn.2xlarge"\n')
    with pytest.raises(CatalogueError, match="cpu_family"):
        load_config(tmp_path)


def test_the_pin_writer_moves_jax_and_jaxlib_only():
    text = "# pins\njax[cuda13]==0.10.2\njaxlib==0.10.2\nnumpyro==0.22.0\n"
    assert pin_jax(text, "0.10.1") == "# pins\njax[cuda13]==0.10.1\njaxlib==0.10.1\nnumpyro==0.22.0\n"
    with pytest.raises(ValueError, match="no jax pin"):
        pin_jax("numpyro==0.22.0\n", "0.10.1")


@pytest.mark.parametrize("bad", ["0.10.1; rm -rf /", "latest", "0.10.1\njax==0.1"])
def test_a_pin_commit_refuses_what_is_not_a_version(tmp_path, bad):
    with pytest.raises(ValueError):
        pin_commit(tmp_path, bad)


def test_parse_compare_reads_every_row():
    rows = parse_compare(COMPARE)
    assert [r.name.split("(")[0] for r in rows] == ["dispatch.TinyOp.time_warm", "loops.Scan.time_warm",
                                                    "dispatch.TinyOp.time_warm"]
    assert [r.ratio_value for r in rows] == [0.98, 2.5, None]
    result = CheckResult(1, "", COMPARE, rows)
    assert [r.name for r in result.regressions] == ["loops.Scan.time_warm(10000, 1, 'float32', 'cpu')"]
    assert result.status == 1
    assert CheckResult(0, "", "", []).status == 2  # no table: the check did not run
    assert CheckResult(0, "", COMPARE, [Row(" ", "1", "1", "1.0", "x")]).status == 0


def test_clone_has_two_pin_commits(tmp_path):
    repo, base, head = make_clone(tmp_path, "0.10.1", "0.10.2")
    assert read_pins("cpu", repo / "env_matrix")["jax"] == "0.10.2"
    assert subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=repo, capture_output=True,
                          text=True).stdout.strip() == base
    old = subprocess.run(["git", "show", f"{base}:env_matrix/cpu/requirements.txt"], cwd=repo,
                         capture_output=True, text=True).stdout
    assert "jax==0.10.1" in old and "jaxlib==0.10.1" in old and "numpyro==0.22.0" in old
    floor = subprocess.run(["git", "show", f"{base}:pyproject.toml"], cwd=repo, capture_output=True, text=True).stdout
    assert "jax>=0.10.2" not in floor  # the old commit must admit its own pin
    assert head != base


BENCH = ["^dispatch.TinyOp", "^loops.Scan"]


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.skipif(os.environ.get("JAXCI_OFFLINE") == "1", reason="JAXCI_OFFLINE=1: no package index")
def test_local_upgrade_check_has_a_row_and_ratio_per_benchmark(tmp_path, release_environments, monkeypatch):
    """One JAX release to the next at CI scale on two small benchmarks, in a temporary clone, one round each."""
    real_make_clone = upgrade.make_clone

    def clone_sharing_environments(*args, **kwargs):
        repo, base, head = real_make_clone(*args, **kwargs)
        share_environments(repo, release_environments)
        return repo, base, head

    monkeypatch.setattr(upgrade, "make_clone", clone_sharing_environments)
    result, base, head = local_check(*TWO_RELEASES, BENCH, load_config().factor, tmp_path, rounds=1)
    assert result.rows, result.continuous_log[-4000:] + result.compare_log[-2000:]
    names = {r.name.split("(")[0] for r in result.rows}
    assert names == {"dispatch.TinyOp.time_warm", "loops.Scan.time_warm"}
    measured = [r for r in result.rows if "n/a" not in (r.before, r.after) and "failed" not in (r.before, r.after)]
    assert all(r.ratio_value is not None and r.ratio_value > 0 for r in measured), measured
    for bench in names:  # each benchmark ran on this CPU at CI scale; gpu and large cases are n/a
        assert any(r.name.startswith(bench) and "'cpu'" in r.name for r in measured), bench
    assert not any("'gpu'" in r.name for r in measured)  # no GPU here: skipped, never faked
    assert f"Before [{base[:8]}]" in result.compare_log and f"After [{head[:8]}]" in result.compare_log
    assert result.status in (0, 1), result.continuous_log[-4000:]
    assert Path(tmp_path / "repo" / "results" / "upgrade-check").is_dir()


# ---- a reused work dir, JAXCI_OFFLINE, bad options: exit 2 and one line, before anything is cloned ----

def _upgrade_cli(*args, env=None):
    import sys

    return subprocess.run([sys.executable, "-m", "jaxci", "upgrade-check", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_a_reused_workdir_is_refused(tmp_path):
    (tmp_path / "repo").mkdir()
    proc = _upgrade_cli("--old", "0.10.1", "--new", "0.10.2", "--workdir", tmp_path)
    assert proc.returncode == 2 and "already holds" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(InputError, match="already holds"):
        make_clone(tmp_path, "0.10.1", "0.10.2")


@pytest.mark.parametrize("value, message", [("1", "JAXCI_OFFLINE=1: local mode installs"),
                                            ("yes", "JAXCI_OFFLINE='yes': expected 1")])
def test_jaxci_offline_is_read_by_jaxci(tmp_path, value, message):
    env = {k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"} | {"JAXCI_OFFLINE": value}
    proc = _upgrade_cli("--old", "0.10.1", "--new", "0.10.2", "--workdir", tmp_path / "w", env=env)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "w").exists()  # refused before anything was cloned


def test_offline_with_wheels_installs_from_them_only(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXCI_OFFLINE", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    env = local_env(tmp_path)
    assert env["PIP_NO_INDEX"] == "1" and env["PIP_FIND_LINKS"] == str(tmp_path)


@pytest.mark.parametrize("args, message", [
    (["--old", "0.10.1", "--new", "0.10;id"], "--new: '0.10;id' is not a JAX version"),
    (["--base", "x", "--head", "y", "--machine", "c7i.2xlarge"], "--base: 'x' is not a full 40-character"),
    (["--old", "0.10.1", "--new", "0.10.2", "--bench", "(.|.)*z"], "can backtrack through"),
    (["--old", "0.10.1", "--new", "0.10.2", "--rounds", "0"], "--rounds 0"),
    (["--old", "0.10.1", "--new", "0.10.2", "--summary", "/"], "--summary /: is a folder"),
])
def test_bad_options_exit_2_in_one_line(args, message):
    proc = _upgrade_cli(*args)
    assert proc.returncode == 2 and message in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
