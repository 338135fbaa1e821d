"""pip install ./sdk-python into a fresh venv, then a bundle outside the checkout uses it."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

SDK = Path(__file__).resolve().parents[1]

BUNDLE = """
from toolnode_sdk import Context, Server

server = Server("outside", version="1.0.0")


@server.tool(name="twice", input_schema={"type": "object", "properties": {"n": {}}})
def twice(args: dict, ctx: Context) -> str:
    return str(2 * args["n"])


server.run()
"""


def test_pip_install_into_a_venv(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    build = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(SDK)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    # A typed package: the marker ships in the wheel.
    where = "import toolnode_sdk, pathlib; print(pathlib.Path(toolnode_sdk.__file__).parent)"
    found = subprocess.run(
        [str(python), "-c", where], capture_output=True, text=True, cwd=tmp_path, check=True
    ).stdout.strip()
    assert Path(found).is_relative_to(env_dir), f"imported from {found}, not the venv"
    assert (Path(found) / "py.typed").is_file()

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
    assert sys.executable != str(python)
