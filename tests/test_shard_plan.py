"""The shard plan a sharded build reads (jaxci.workflows.sharded.load_plan): every field checked, a page in two
shards refused, each refusal one line naming the file; `jaxci sharded` says it and changes nothing."""

from __future__ import annotations

import json

import pytest

from jaxci.workflows import sharded

GOOD = {"format": "jaxci-shard-plan", "version": 1, "repository": "r", "option": "o",
        "shards": [{"name": "gpu", "runs_on": "g4dn.2xlarge", "device": "gpu", "pages": ["lectures/a.md"],
                    "predicted_s": [1, 0.5, 2]},
                   {"name": "cpu-1", "runs_on": "ubuntu-latest", "device": "cpu", "pages": ["lectures/b.md"],
                    "predicted_s": [1, 0.5, 2]}]}


def _with(**change) -> dict:
    doc = json.loads(json.dumps(GOOD))
    for key, value in change.items():
        if key.startswith("shard0_"):
            doc["shards"][0][key.removeprefix("shard0_")] = value
        else:
            doc[key] = value
    return doc


@pytest.mark.parametrize(("doc", "said"), [
    (_with(version=2), "jaxci-shard-plan version 2, this jaxci reads 1"),
    (_with(version=True), "version True"),
    (_with(format="other"), "not a jaxci-shard-plan shard plan"),
    (_with(shards=[]), "`shards` is not a non-empty list"),
    (_with(shard0_pages=["lectures/b.md"]), "lectures/b.md is in two shards"),
    (_with(shard0_pages=["../outside.md"]), "`pages` is not a list"),
    (_with(shard0_pages=["lectures/a.py"]), "`pages` is not a list"),
    (_with(shard0_device="tpu"), "`device` is tpu, not gpu or cpu"),
    (_with(shard0_predicted_s=[1, 2]), "`predicted_s` is not [mid, low, high] seconds"),
    (_with(shard0_name="a\nb"), "`name` is not a one-line name"),
    (_with(shard0_name="cpu-1"), "two shards have one name"),
])
def test_a_bad_plan_is_refused_naming_the_file(tmp_path, doc, said):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(sharded.ShardError) as err:
        sharded.load_plan(path)
    assert said in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_the_command_refuses_in_one_line_and_changes_nothing(tmp_path, capsys, monkeypatch):
    from jaxci.commands import sharded as cmd

    monkeypatch.chdir(tmp_path)
    book = tmp_path / "book"
    book.mkdir()
    (book / "_config.yml").write_text("execute:\n  execute_notebooks: cache\n")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(GOOD))
    assert cmd.main(["share", "--plan", str(plan), "--shard", "nope", "--book", str(book),
                     "--engine", "jupyter-book"]) == 2
    assert "no shard nope in the plan (it has gpu, cpu-1)" in capsys.readouterr().err
    assert (book / "_config.yml").read_text() == "execute:\n  execute_notebooks: cache\n"
    assert cmd.main(["merge", "--engine", "mystmd", "--book", str(book), str(tmp_path / "missing")]) == 2
    assert "not a mystmd execution cache" in capsys.readouterr().err
    assert cmd.main(["merge", "--engine", "jupyter-book", "--book", str(book), str(tmp_path)]) == 2
    assert "not a jupyter-cache folder" in capsys.readouterr().err


def test_a_shard_keeps_to_its_own_pages(tmp_path, monkeypatch):
    """Jupyter Book: the other shards' pages (relative to the book) become execute.exclude_patterns."""
    import yaml

    book = tmp_path / "lectures"
    book.mkdir()
    (book / "_config.yml").write_text("execute:\n  execute_notebooks: cache\n")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(GOOD))
    monkeypatch.chdir(tmp_path)
    names = sharded.keep_to_share(sharded.load_plan(plan), "gpu", "lectures", "jupyter-book")
    assert names == ["b.md"]
    assert yaml.safe_load((book / "_config.yml").read_text())["execute"]["exclude_patterns"] == ["b.md"]


def test_one_bad_cache_merges_nothing(tmp_path):
    """Every shard's cache is checked before any is merged: a bad one is named and the book's cache stays as it
    was (the build then executes what it lacks, as a whole build would)."""
    good = tmp_path / "shard-cache-cpu-1"
    good.mkdir()
    (good / "0123abcd.json").write_text("{}")
    book = tmp_path / "book"
    book.mkdir()
    with pytest.raises(sharded.ShardError, match="shard-cache-gpu: not a mystmd execution cache"):
        sharded.merge("mystmd", [good, tmp_path / "shard-cache-gpu"], book)
    assert not (book / "_build").exists()
    assert sharded.merge("mystmd", [good], book) == 1 and (book / "_build" / "execute" / "0123abcd.json").exists()


def test_a_mystmd_share_that_cannot_skip_a_page_changes_none(tmp_path, monkeypatch):
    """mystmd skips a page by its front matter: an .ipynb page of another shard cannot be skipped, so the share is
    refused and no page is written (it used to write the others first)."""
    doc = json.loads(json.dumps(GOOD))
    doc["shards"][1]["pages"] = ["lectures/b.md", "lectures/c.ipynb"]
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    book = tmp_path / "lectures"
    book.mkdir()
    (book / "b.md").write_text("# b\n")
    (book / "c.ipynb").write_text("{}")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(sharded.ShardError, match="c.ipynb"):
        sharded.keep_to_share(sharded.load_plan(tmp_path / "plan.json"), "gpu", "lectures", "mystmd")
    assert (book / "b.md").read_text() == "# b\n"
