"""Every reader of a file the project did not write itself goes through util.safeio: a FIFO or an oversized or
deeply nested JSON file is refused with one line naming the file, never read forever or with a traceback."""

import os

import pytest

from jaxci.capture.carried import CaptureError, source_commit
from jaxci.capture.pack import profiles
from jaxci.results.history import HistoryError, load_state
from jaxci.util.versions import release_key
from jaxci.workflows.failures import FailuresError, load_known
from jaxci.workflows.release_watch import WatchError, load_reports, version_key


def _fifo(path):
    os.mkfifo(path)
    return path


def _deep(path):
    path.write_text("[" * 200 + "]" * 200)
    return path


@pytest.mark.parametrize("make", [_fifo, _deep], ids=["fifo", "nested"])
@pytest.mark.parametrize("name, load, error", [("known.json", load_known, FailuresError),
                                               ("state.json", load_state, HistoryError)], ids=["known", "state"])
def test_known_failures_and_history_state_files_refused_in_one_line(tmp_path, make, name, load, error):
    with pytest.raises(error, match=name):
        load(make(tmp_path / name))
    assert load_state(tmp_path / "absent.json") == {}  # no history state yet: an empty one


def test_release_watch_artifact_that_is_a_fifo_is_refused(tmp_path):
    _fifo(tmp_path / "watch-0.11.1.json")
    with pytest.raises(WatchError, match="watch-0.11.1.json"):
        load_reports(tmp_path)


def test_carried_commit_file_that_is_a_fifo_is_refused(tmp_path):
    (tmp_path / ".device").mkdir()
    _fifo(tmp_path / ".device" / "commit.json")
    with pytest.raises(CaptureError, match="commit.json"):
        source_commit(tmp_path)


def test_profile_summary_that_is_a_fifo_is_reported_unreadable(tmp_path):
    _fifo(tmp_path / "dense.json")
    (row,) = [r for r in profiles(tmp_path) if "dense.json" in r]
    assert "unreadable" in row and "not a regular file" in row


def test_one_release_key_for_history_watch_and_analysis():
    assert release_key("0.12.0.1") == (0, 12, 0, 1)
    assert release_key("0.11.1") < release_key("0.11.10")
    assert release_key("0.5.0rc1") == () and release_key("main") == ()
    assert version_key("0.4.26") == (0, 4, 26)
    with pytest.raises(WatchError, match="not a JAX release"):
        version_key("0.5.0rc1")
