"""The asv repository plugin: `SnapshotRepo`, one fixed commit, so `asv run -E existing --set-commit-hash`
works on a copy of the repository that holds no .git (the lent machine's; rehearsals use it too).

asv loads it itself: `prepare` writes `"dvcs": DVCS, "plugins": [PLUGIN]` into the capture's asv.conf.json,
and asv, started in the repository root, imports the module named there (a leading "." puts the current
directory on sys.path first), then finds the Repo subclass whose `dvcs` matches. This module imports asv at
its top: only asv and `prepare` (once asv is importable) import it.
"""

from __future__ import annotations

import os

from asv.repo import Repo

DVCS = "jaxci-snapshot"
PLUGIN = ".jaxci.capture.asvrepo"   # asv.conf.json "plugins": this module, imported from the repository root


class SnapshotRepo(Repo):
    """One fixed commit (JAXCI_CAPTURE_COMMIT / JAXCI_CAPTURE_DATE): what `asv run -E existing
    --set-commit-hash` needs from a repository, without git."""

    dvcs = DVCS

    def __init__(self, url=None, mirror_path=None):
        self.url, self.path = url, None
        self._hash = os.environ["JAXCI_CAPTURE_COMMIT"]
        self._date_ms = int(os.environ["JAXCI_CAPTURE_DATE"]) * 1000

    @classmethod
    def url_match(cls, url):
        return False

    def pull(self):
        pass

    def checkout(self, path, commit_hash):
        pass

    def get_date(self, hash):
        return self._date_ms

    def get_date_from_name(self, name):
        return self._date_ms

    def get_hashes_from_range(self, range_spec):
        return [self._hash]

    def get_hash_from_name(self, name):
        return self._hash if name in (None, "HEAD", "main", "master") or self._hash.startswith(str(name)) else name

    def get_hash_from_parent(self, name):
        return self._hash

    def get_name_from_hash(self, commit):
        return None

    def get_tags(self):
        return {}

    def get_branch_commits(self, branch):
        return [self._hash]

    def get_revisions(self, commits):
        return {c: i for i, c in enumerate(commits)}

    def get_new_branch_commits(self, branches, existing):
        return [self._hash]

    def get_decorated_hash(self, commit_hash, n=8):
        return commit_hash[:n]
