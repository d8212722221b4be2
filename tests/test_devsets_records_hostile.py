"""The two development-set records read hostile or careless edits as one line and exit 2, never a traceback, a
`nan` on the board or a forged Markdown row (issue 83: seven tracebacks, two numbers, one injection)."""

from __future__ import annotations

import copy
import json

import pytest

from jaxci import REPO_ROOT
from jaxci.commands import devsets as cmd

V1 = json.loads((REPO_ROOT / "docs" / "reference" / "dev-sets.json").read_text())
V2 = json.loads((REPO_ROOT / "docs" / "reference" / "dev-sets-all.json").read_text())
FAMILY = "g4dn.2xlarge"


def _v1(edit):
    data = copy.deepcopy(V1)
    edit(data)
    return data


def _v2(edit):
    data = copy.deepcopy(V2)
    edit(data)
    return data


def _every(data, key, value):
    for row in data["sets"][FAMILY]["lectures"]:
        row[key] = value


CASES = [
    ("v1-set-a-list", _v1(lambda d: d["sets"].__setitem__(FAMILY, [1])), "not a version 1"),
    ("v1-row-without-lecture", _v1(lambda d: d["sets"][FAMILY]["lectures"][0].pop("lecture")), "lecture name"),
    ("v1-board-of-numbers", _v1(lambda d: d.__setitem__("board", [1, 2])), "'board'"),
    ("v1-set-with-no-lectures", _v1(lambda d: d["sets"][FAMILY].__setitem__("lectures", [])), "non-empty"),
    ("v1-published-1e308", _v1(lambda d: _every(d, "published_s", 1e308)), "not positive"),
    ("v1-version-true", _v1(lambda d: d.__setitem__("version", True)), "not a version 1"),
    ("v2-lectures-a-string", _v2(lambda d: d["sets"][FAMILY].__setitem__("lectures", "abc")), "'lectures'"),
    ("v2-lost-row-a-string", _v2(lambda d: d["sets"][FAMILY].__setitem__("lost", ["x"])), "'lost'"),
    ("v2-low_s-a-string", _v2(lambda d: d["sets"][FAMILY]["lectures"][0].__setitem__("low_s", "x")), "not positive"),
    ("v2-published-1e308", _v2(lambda d: _every(d, "published_s", 1e308)), "not positive"),
    ("v2-name-with-a-heading", _v2(lambda d: d["sets"][FAMILY]["lectures"][0].__setitem__(
        "lecture", "x\n\n# Forged heading\n<!-- hidden")), "lecture name"),
]


@pytest.mark.parametrize("case, data, said", CASES, ids=[c[0] for c in CASES])
def test_a_bad_record_is_one_line(case, data, said, tmp_path, capsys):
    table = tmp_path / "t.json"
    table.write_text(json.dumps(data))
    assert cmd.main(["--table", str(table), "--lectures", "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and str(table) in err, err


def test_a_printable_name_with_markdown_stays_in_its_cell(tmp_path, capsys):
    data = _v2(lambda d: d["sets"][FAMILY]["lectures"][0].__setitem__("lecture", "evil<!-- hidden | forged"))
    table = tmp_path / "t.json"
    table.write_text(json.dumps(data))
    assert cmd.main(["--table", str(table), "--lectures"]) == 0
    out = capsys.readouterr().out
    assert "evil&lt;!-- hidden \\| forged" in out and "<!--" not in out


def test_an_output_in_a_missing_folder_is_refused_before_any_file_is_written(tmp_path, capsys):
    audit = tmp_path / "never-read.json"   # the outputs are checked first: the audit is not even opened
    record = tmp_path / "r.json"
    assert cmd.main(["--from-audit", str(audit), "--record", str(tmp_path / "nodir" / "r.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cmd.main(["--from-audit", str(audit), "--record", str(record), "--calibrate",
                     str(tmp_path / "nodir" / "c.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--calibrate" in err and not record.exists()


def test_a_set_larger_than_any_build_is_refused_at_once(tmp_path, capsys):
    """Issue 83 (hang): 20,000 lectures in a --set run did not finish (leave-one-lecture-out is quadratic)."""
    from jaxci.analysis import devsets as D

    big = tmp_path / "big.json"
    big.write_text(json.dumps({"lectures": [{"ratio": 1.0}] * (D.MAX_LECTURES + 1), "meta": {}}))
    assert cmd.main(["--set", f"ubuntu-latest={big}", "--set", f"g4dn.2xlarge={big}"]) == 2
    assert "more than a development set holds" in capsys.readouterr().err
