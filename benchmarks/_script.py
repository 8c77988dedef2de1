"""``python benchmarks/<name>.py`` runs ``python -m benchmarks.<name>`` (same arguments, same exit status).

A script run by its path has ``benchmarks/`` first on ``sys.path``, not the repository, so
``benchmarks.harness`` would not import. Each benchmark starts with

    if __name__ == "__main__" and not __package__:  # python benchmarks/<name>.py
        import _script  # noqa: F401  (replaces this process by python -m benchmarks.<name>)

and this module replaces the process by the module run, with the repository on the child's
``PYTHONPATH`` (so the ``lego_build`` beside it is the one measured). No ``sys.path`` edits.
"""
import os
import sys
from pathlib import Path

_main = Path(sys.modules["__main__"].__file__).resolve()
_root = Path(__file__).resolve().parents[1]
_env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(_root), os.environ.get("PYTHONPATH")])))
sys.stdout.flush()
os.execve(sys.executable, [sys.executable, "-m", f"benchmarks.{_main.stem}", *sys.argv[1:]], _env)
