"""Fail once, on a real jupyter-cache project: a failing notebook is recorded by the gating build, skipped by
the other builders while unchanged, and executed again once its code changes."""

import json

import pytest

from jaxci.commands import failures as cli

jc = pytest.importorskip("jupyter_cache")
nbf = pytest.importorskip("nbformat")


def notebook(path, code):
    nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbf.write(nb, str(path))
    return str(path)


def execute(cache):
    from jupyter_cache.executors import load_executor

    load_executor("local-serial", cache).run_and_cache(timeout=120)


def test_failure_recorded_skipped_until_changed(tmp_path, capsys):
    good = notebook(tmp_path / "good.ipynb", "x = 1 + 1")
    bad = notebook(tmp_path / "bad.ipynb", "raise ValueError('boom')")
    folder = tmp_path / ".jupyter_cache"
    cache = jc.get_cache(str(folder))
    for path in (good, bad):
        cache.add_nb_to_project(path)
    execute(cache)
    # jupyter-cache's own behaviour, which the policy answers: the failure is not cached and runs again
    assert cache.get_cached_project_nb(good) is not None and cache.get_cached_project_nb(bad) is None
    assert [r.uri for r in cache.list_unexecuted()] == [bad]

    known = tmp_path / "known-failures.json"
    assert cli.main(["record", "--cache", str(folder), "--out", str(known), "--project", str(tmp_path)]) == 0
    recorded = json.loads(known.read_text())["failures"]
    assert list(recorded) == ["bad.ipynb"] and "boom" in recorded["bad.ipynb"]["error"]  # relative: any runner

    capsys.readouterr()
    assert cli.main(["skip", "--cache", str(folder), "--known", str(known), "--remove",
                     "--project", str(tmp_path)]) == 0
    assert capsys.readouterr().out.split() == ["bad.ipynb"]
    assert [r.uri for r in cache.list_project_records()] == [good]  # the other builder does not run it again

    cache.add_nb_to_project(notebook(tmp_path / "bad.ipynb", "x = 2"))  # the author fixes the notebook
    assert cli.main(["skip", "--cache", str(folder), "--known", str(known), "--project", str(tmp_path)]) == 0
    assert capsys.readouterr().out.split() == []  # changed code: a new hash, so it executes again
    execute(cache)
    assert cache.get_cached_project_nb(bad) is not None


def test_unreadable_inputs_exit_2_with_the_reason(tmp_path, capsys):
    assert cli.main(["record", "--cache", str(tmp_path), "--out", str(tmp_path / "k.json")]) == 2
    assert "not a jupyter-cache folder" in capsys.readouterr().err
    jc.get_cache(str(tmp_path / "c")).list_project_records()
    (tmp_path / "k.json").write_text("{}")
    assert cli.main(["skip", "--cache", str(tmp_path / "c"), "--known", str(tmp_path / "k.json")]) == 2
    assert "not a known-failures file" in capsys.readouterr().err
