"""Developer sessions. `python -m pip install 'nox[uv]'` once, then `nox -s <session>`.

- build: strict build of the site into site/
- serve: strict build, then live preview at http://127.0.0.1:8000 (reloads on docs/, data/, snippets/)
- lint: ruff, and mypy --strict on snippets/ (the engine, the pages and the build plugin)
- tests: everything CI runs: lint (mypy beside the build), the strict build, then the whole pytest suite
- snapshot: accept an intended change of computed figures (rewrites tests/site/__snapshots__/)
- bench: build and test timings, medians of 3 runs (`-- --runs 5`, `-- --only ab`): scripts/bench.py
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator

import nox

# uv installs the environments (about 15 s against pip's 2 min here); plain venv + pip where uv is absent
nox.options.default_venv_backend = "uv|venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

SITE_DIR = "site"


def _env() -> dict[str, str]:
    """Environment for every mkdocs and pytest run: quiet about MkDocs 2, dated by the last commit (reproducible),
    bytecode written as CPython does by default, and Material's search index built (`serve` alone leaves it out).

    An environment that sets PYTHONDONTWRITEBYTECODE (some sandboxes and CI images do) makes every process compile
    every module it imports from source again: each xdist worker, each build a test runs, each notebook kernel
    (IPython alone is hundreds of modules). An empty value is CPython's "unset"; the bytecode goes to the
    `__pycache__` directories git ignores, inside the session's own virtual environment and the checkout."""
    env = {"NO_MKDOCS_2_WARNING": "1", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "", "SERVING_SEARCH": "true"}
    if "SOURCE_DATE_EPOCH" not in os.environ:
        try:
            stamp = subprocess.run(
                ["git", "log", "-1", "--format=%ct"], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            stamp = ""
        env["SOURCE_DATE_EPOCH"] = stamp or "0"
    return env


def _install(session: nox.Session, extra: str) -> None:
    session.install("-e", f".[{extra}]")


@nox.session
def build(session: nox.Session) -> None:
    """Strict build into site/: any warning, broken link, data error or failing block stops it."""
    _install(session, "docs")
    session.run("mkdocs", "build", "--strict", "--clean", "-d", SITE_DIR, env=_env())


@nox.session
def serve(session: nox.Session) -> None:
    """Strict build and live preview at http://127.0.0.1:8000, without Material's search index unless
    SERVING_SEARCH=true (the index is a second of every rebuild: mkdocs.yml)."""
    _install(session, "docs")
    session.run(
        "mkdocs", "serve", "--strict", "-a", "127.0.0.1:8000",  # watches data/ and snippets/: see mkdocs.yml
        *session.posargs,
        env={**_env(), "SERVING_SEARCH": os.environ.get("SERVING_SEARCH", "false")},
    )


LINT_PATHS = ("snippets", "tests", "scripts", "noxfile.py", "docs/notebooks")


def _lint(session: nox.Session) -> None:
    session.run("ruff", "check", *LINT_PATHS)
    session.run("mypy", "snippets")  # strict: see [tool.mypy] in pyproject.toml


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the code, mypy --strict over snippets/."""
    session.install("-e", ".[lint,docs]")
    _lint(session)


@contextlib.contextmanager
def _beside(session: nox.Session, *args: str) -> Iterator[None]:
    """Run the session's command `args` while the block runs, its output kept and shown when both are done; the
    session fails if it failed (after the block, which runs to its end)."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([os.path.join(session.bin, args[0]), *args[1:]], stdout=out, stderr=subprocess.STDOUT)
        try:
            yield
        finally:
            code = proc.wait()
            out.seek(0)
            session.log(f"{' '.join(args)} (run beside the build):\n{out.read().decode(errors='replace').rstrip()}")
        if code != 0:
            session.error(f"{' '.join(args)} failed (exit status {code})")


@nox.session
def tests(session: nox.Session) -> None:
    """All that CI needs: lint, the strict build into site/, then the whole test suite against it."""
    session.install("-e", ".[test,lint]")
    session.run("ruff", "check", *LINT_PATHS)
    env = _env()
    # mypy takes one core for about 16 s from a cold cache; the build leaves part of the second core idle (82 CPU-s
    # in 44 s), so mypy runs beside it
    with _beside(session, "mypy", "snippets"):
        session.run("mkdocs", "build", "--strict", "--clean", "-d", SITE_DIR, env=env)
    # worksteal: an idle worker takes queued tests from the busy one; the browser sweeps and the full builds are
    # long and uneven, and xdist's default hand-out in fixed chunks left one worker idle for about a minute
    session.run("pytest", "-n", "2", "--dist", "worksteal", *session.posargs,
                env={**env, "SERVING_SITE_DIR": SITE_DIR})


@nox.session
def snapshot(session: nox.Session) -> None:
    """Accept the figures of the current build as the new snapshot (review the diff before committing)."""
    _install(session, "test")
    env = _env()
    session.run("mkdocs", "build", "--strict", "--clean", "-d", SITE_DIR, env=env)
    session.run("pytest", "tests/site/test_snapshot.py", "--snapshot-update", env={**env, "SERVING_SITE_DIR": SITE_DIR})


@nox.session
def bench(session: nox.Session) -> None:
    """Timings: build with execution on against off, rebuild after a data edit, the test suite."""
    _install(session, "test")
    session.run("python", "scripts/bench.py", *session.posargs, env=_env())
