"""doit dependency-DB backend ``lego_json``: doit's JSON DB, saved atomically.

doit's own JSON backend rewrites the file in place at the end of a run, so a build
killed while saving leaves a corrupted DB and every later ``doit`` stops with a
traceback. This backend (registered as the ``doit.BACKEND`` entry point
``lego_json``; ``dodo.py`` selects it):

* saves through :func:`lego_build.runtime.atomic.write_text` (temp file + rename);
* does not save after a rolled-back run (:mod:`lego_build.runtime.journal`), so a
  build stopped by bad input leaves the DB byte-identical;
* reads an unreadable DB (damaged outside lego_build) as empty, with a one-line
  note: every stage then re-runs, which is always correct because stages are
  deterministic.
"""
from __future__ import annotations

import sys
from pathlib import Path

from doit.dependency import JsonDB

from lego_build.runtime import journal
from lego_build.runtime.atomic import write_text


class AtomicJsonDB(JsonDB):
    desc = "JSON file saved atomically; skipped when the run was rolled back (lego_build)"

    def _load(self):
        try:
            return super()._load()
        except Exception as exc:  # doit's DatabaseException, or a decoder error
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            sys.stderr.write(f"note: dependency DB {self.name} is unreadable ({reason}); "
                             "the design's stages will re-run\n")
            return {}

    def dump(self):
        jnl = journal.active()
        if jnl is not None and jnl.rolled_back:
            return
        write_text(Path(self.name), self.codec.encode(self._db))
