"""The package as users get it: `python -m build` makes a wheel and an sdist, each installs
with pip into a clean venv, and a bundle outside the checkout runs on it; the example
bundle on the installed wheel passes `toolnode check`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import List

import pytest

SDK = Path(__file__).resolve().parents[1]
ROOT = SDK.parent
TOOLNODE = ROOT / "bin" / "toolnode"

BUNDLE = """
import asyncio

from toolnode_sdk import Context, Server

server = Server("outside", version="1.0.0")


@server.tool(name="twice", input_schema={"type": "object", "properties": {"n": {}}})
async def twice(args: dict, ctx: Context) -> str:
    await asyncio.sleep(0)
    return str(2 * args["n"])


server.run()
"""


def _run(args: List[str], cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and the sdist, built from a copy of the SDK (the build writes beside its
    sources), without an isolated environment: the test venv holds the pinned backend."""
    tmp = tmp_path_factory.mktemp("dist")
    source = tmp / "sdk-python"
    shutil.copytree(
        SDK,
        source,
        ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", "tests"),
    )
    # The sdist first, then the wheel from the sdist: the wheel proves the sdist builds.
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "out")], source)
    version = (ROOT / "VERSION").read_text().strip()
    built = sorted(p.name for p in (tmp / "out").iterdir())
    assert built == [
        f"toolnode_sdk-{version}-py3-none-any.whl",
        f"toolnode_sdk-{version}.tar.gz",
    ]
    return tmp / "out"


def _venv_with(tmp_path: Path, package: Path) -> Path:
    """A clean venv with package installed by pip. The venv gets no pip of its own
    (ensurepip takes half a minute on a busy machine): this one installs into it."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install"]
    _run([*pip, "--disable-pip-version-check", "-q", str(package)], tmp_path)
    # Installed, not taken from the checkout; typed: the marker ships.
    where = "import toolnode_sdk, pathlib; print(pathlib.Path(toolnode_sdk.__file__).parent)"
    found = Path(_run([str(python), "-c", where], tmp_path).strip())
    assert found.is_relative_to(env_dir), f"imported from {found}, not the venv"
    assert (found / "py.typed").is_file()
    return python


def _serves_a_bundle(python: Path, tmp_path: Path) -> None:
    script = tmp_path / "bundle.py"
    script.write_text(BUNDLE)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "twice", "arguments": {"n": 21}},
    }
    run = subprocess.run(
        [str(python), str(script)],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "42"}]},
    }


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_dist_installs_into_a_clean_venv(dists: Path, tmp_path: Path, kind: str) -> None:
    package = next(dists.glob("*.whl" if kind == "wheel" else "*.tar.gz"))
    python = _venv_with(tmp_path, package)
    assert sys.executable != str(python)
    _serves_a_bundle(python, tmp_path)
    if kind != "wheel":
        return
    if not TOOLNODE.is_file():
        pytest.skip(f"{TOOLNODE} is not built (make toolnode): the example is not checked")
    # The example bundle, away from the checkout, finds the SDK in the venv alone.
    bundle = tmp_path / "example"
    bundle.mkdir()
    shutil.copy(ROOT / "examples" / "python" / "server.py", bundle / "server.py")
    manifest = {"name": "python", "command": [str(python), "./server.py"], "seats": ["node-lamp"]}
    (bundle / "bundle.json").write_text(json.dumps(manifest))
    _run([str(TOOLNODE), "check", str(bundle)], tmp_path, timeout=120)
