"""The one-of-each helpers in jaxci.util: the process-tree killer, the git wrapper, the benchmark filter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from jaxci.util import proc
from jaxci.util.git import GitError, git, head
from jaxci.util.validate import InputError, bench_filter
from tests.suiteutil import alive, gone

# a child that starts a grandchild in a new session (out of the child's group) and prints its pid
SPAWNER = ("import subprocess, sys, time; g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
           " start_new_session=True); print(g.pid, flush=True); time.sleep(60)")


def _spawn():
    child = subprocess.Popen([sys.executable, "-c", SPAWNER], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    grandchild = int(child.stdout.readline())
    return child, grandchild


def test_kill_tree_reaches_a_grandchild_in_another_session():
    child, grandchild = _spawn()
    assert grandchild in proc.descendants(child.pid)
    killed = proc.kill_tree(child.pid)
    assert child.pid in killed and grandchild in killed
    child.wait(timeout=10)
    assert not alive(grandchild)


def test_a_snapshot_still_kills_what_was_orphaned_after_its_root_exited():
    child, grandchild = _spawn()
    tree = proc.snapshot(child.pid)
    child.kill()
    child.wait(timeout=10)
    assert alive(grandchild) and grandchild not in proc.descendants(child.pid)  # reparented, out of reach
    assert proc.kill_tree(tree) == [grandchild]
    assert gone(grandchild, timeout=10)


def test_a_snapshot_never_kills_a_process_that_reused_a_pid():
    stranger = proc.Proc(os.getpid(), started=-1)  # our own pid, with another start time
    assert proc.kill_tree([stranger]) == []


def test_git_raises_one_error_with_gits_own_words(tmp_path):
    assert head(tmp_path) is None
    with pytest.raises(GitError, match="git rev-parse HEAD"):
        git(tmp_path, "rev-parse", "HEAD")


@pytest.mark.parametrize("bad, why", [("(" * 1000 + "a" + ")" * 1000, "at most 200"),
                                      ("a{4294967296}", "nested or repeated|not a valid"),
                                      ("[", "not a valid regular expression"), ("(a|ab)+c", "backtrack"),
                                      ("$(id)", "shell syntax"), ("-x", "option"), ("a;b", "not allowed")])
def test_one_benchmark_filter_check_for_every_command(bad, why):
    with pytest.raises(InputError, match=why):
        bench_filter("--bench", bad)
    assert bench_filter("--bench", r"^dense\.Dense\.time_warm$") == r"^dense\.Dense\.time_warm$"
    assert bench_filter("input 'bench'", "", allow_empty=True) is None


def test_children_session_and_orphans_are_read_from_proc_in_one_place():
    """The notebook runner's view of a kernel's processes (its children, its session, an orphan it left) comes
    from util.proc, the module that kills them."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        assert child.pid in proc.children(os.getpid())
        assert child.pid in proc.session(child.pid)       # it leads a session of its own
        assert proc.orphan_since(child.pid, 0)             # outside our session, started after boot
        assert not proc.orphan_since(os.getpid(), 0)       # we are in our own session
    finally:
        proc.kill_tree(child.pid)
    assert child.wait(timeout=10) is not None
