"""Make the calculator's standard library: Pyodide's `python_stdlib.zip` with every module compiled to bytecode.

The npm package's `python_stdlib.zip` holds source only, so every module Pyodide imports as it starts (its own
`_pyodide` and `pyodide` packages among them) is compiled in the browser, by an interpreter that is itself running as
WebAssembly: about two thirds of the calculator's start on the machine `scripts/bench.py` part d measures. This script
runs the vendored Pyodide once in Node (`node` 18 or later), compiles each module there, by the very interpreter that
will import it (same version, same bytecode), and writes the modules as unchecked hash-based `.pyc` files (PEP 552:
no timestamp, so the zip is the same bytes on every run) into `docs/assets/pyodide-stdlib/python_stdlib.zip`; the
worker passes it to `loadPyodide` as `stdLibURL`, a documented option. Every other member is copied as it is.

    python scripts/pyodide_stdlib.py          # rewrite the zip and its SOURCE record
    python scripts/pyodide_stdlib.py --check  # exit 1 if the zip is not what this script makes now

Run it after updating the vendored Pyodide; tests/unit/test_calculator.py checks the zip against its source.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYODIDE = ROOT / "docs" / "assets" / "pyodide"
OUT = ROOT / "docs" / "assets" / "pyodide-stdlib"

COMPILE = r"""
import zipfile, importlib.util, marshal, sys
src = zipfile.ZipFile("/tmp/in.zip")
out = zipfile.ZipFile("/tmp/out.zip", "w", zipfile.ZIP_DEFLATED)
for info in src.infolist():
    data = src.read(info)
    if info.filename.endswith(".py"):
        code = compile(data, info.filename, "exec", dont_inherit=True, optimize=0)
        flags = (0b01).to_bytes(4, "little")  # PEP 552: hash-based, not checked against a source
        pyc = importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(data) + marshal.dumps(code)
        member = zipfile.ZipInfo(info.filename[:-3] + ".pyc", info.date_time)
        member.compress_type = zipfile.ZIP_DEFLATED
        out.writestr(member, pyc)
    else:
        out.writestr(info, data)
out.close()
"{} {}".format(sys.version.split()[0], importlib.util.MAGIC_NUMBER.hex())
"""

SCRIPT = """
import { loadPyodide } from "%(pyodide)s/pyodide.mjs";
import fs from "node:fs";
const py = await loadPyodide({ indexURL: "%(pyodide)s/" });
py.FS.writeFile("/tmp/in.zip", fs.readFileSync("%(pyodide)s/python_stdlib.zip"));
const made = py.runPython(fs.readFileSync("%(compile)s", "utf8"));
fs.writeFileSync("%(out)s", py.FS.readFile("/tmp/out.zip"));
console.log(made);
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make(dest: Path) -> str:
    """Write the compiled zip to `dest`; return Pyodide's Python version and bytecode magic, as it reports them."""
    node = shutil.which("node")
    if node is None:
        sys.exit("scripts/pyodide_stdlib.py needs node (18 or later) to run Pyodide")
    with tempfile.TemporaryDirectory() as tmp:
        compile_py = Path(tmp) / "compile.py"
        compile_py.write_text(COMPILE, encoding="utf-8")
        script = Path(tmp) / "make.mjs"
        script.write_text(SCRIPT % {"pyodide": PYODIDE.as_posix(), "compile": compile_py.as_posix(),
                                    "out": dest.as_posix()}, encoding="utf-8")
        done = subprocess.run([node, str(script)], check=True, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1]


def record(made: str, zip_path: Path) -> str:
    version, magic = made.split()
    pyodide = (PYODIDE / "VERSION").read_text(encoding="utf-8").split()[1]
    return (f"python_stdlib.zip: Pyodide {pyodide}'s standard library compiled to bytecode by "
            f"scripts/pyodide_stdlib.py\n"
            f"source: ../pyodide/python_stdlib.zip sha256 {sha256(PYODIDE / 'python_stdlib.zip')}\n"
            f"python: {version} (the vendored Pyodide's own interpreter, run in Node)\n"
            f"magic: {magic}\n"
            f"sha256: {sha256(zip_path)}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with what is committed; write nothing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        made_zip = Path(tmp) / "python_stdlib.zip"
        text = record(make(made_zip), made_zip)
        if args.check:
            same = (OUT / "SOURCE").read_text(encoding="utf-8") == text and sha256(OUT / "python_stdlib.zip") == \
                sha256(made_zip)
            print("the compiled standard library is up to date" if same else "the compiled standard library differs")
            return 0 if same else 1
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(made_zip, OUT / "python_stdlib.zip")
        (OUT / "SOURCE").write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
