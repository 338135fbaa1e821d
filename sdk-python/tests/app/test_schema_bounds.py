"""A listing whose schemas name one large value many times (a schema bomb) costs the
application a bounded amount: inlining is bounded in bytes per tool and in all, and a tool
over a bound is left out with an error naming it, the others given."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import ROOT, TIMEOUT, TOOLNODE

# A $defs entry whose default holds 20,000 numbers (109 KB of JSON), named by 1,600
# properties: 136 KB of tools/list that inlines to 174 MB.
BOMB = {
    "type": "object",
    "$defs": {"big": {"type": "array", "items": {"type": "integer"}, "default": list(range(20_000))}},
    "properties": {f"p{i}": {"$ref": "#/$defs/big"} for i in range(1_600)},
}
# Each under the bound of one tool (9 copies, about 980 KB), together past the bound of all.
WIDE = 20
WIDE_SCHEMA = {**BOMB, "properties": {f"p{i}": {"$ref": "#/$defs/big"} for i in range(9)}}

# What the application may grow by while it makes the definitions of this listing: the 16
# MiB of schemas the bound in all lets through, as Python objects, and the request's JSON.
MAX_GROWTH_KIB = 64 << 10
# Far past what the bounds allow, short of what the unbounded library took (2.5 GB).
KILL_KIB = 1 << 20

DRIVER = """
import asyncio, json, sys
sys.path.insert(0, {src!r})
from toolnode_sdk.app import Toolnode

def kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1])

async def main():
    tn = Toolnode(command=[{toolnode!r}, "serve"], bundles=[{bundles!r}], timeout=60)
    listed = await tn.list_tools()
    before = kib("VmRSS:")
    defs = await tn.definitions("openai")
    body = json.dumps(defs.tools, separators=(",", ":"))
    print(json.dumps({{"listed": len([t for t in listed if t["name"].startswith("bombs.")]), "given": [t["function"]["name"] for t in defs.tools],
                      "left_out": defs.left_out, "bytes": len(body),
                      "grew_kib": kib("VmHWM:") - before}}))
    await tn.close()

asyncio.run(main())
"""


def serve_bombs(folder: Path) -> None:
    folder.mkdir()
    (folder / "server.py").write_text(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(ROOT / 'sdk-python' / 'src')!r})
        from toolnode_sdk import Server
        server = Server("bombs")
        schemas = json.load(open({str(folder / 'schemas.json')!r}))
        for name, schema in schemas.items():
            server.tool(name=name, input_schema=schema)(lambda args, ctx: "ok")
        server.run()
        """))
    schemas = {"bomb": BOMB, "fine": {"type": "object", "properties": {"q": {"type": "string"}}}}
    schemas.update({f"wide{i:02d}": WIDE_SCHEMA for i in range(WIDE)})
    (folder / "schemas.json").write_text(json.dumps(schemas))
    (folder / "bundle.json").write_text(json.dumps({"name": "bombs", "command": [sys.executable, "./server.py"]}))


def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def test_a_schema_bomb_is_left_out_by_name_and_costs_a_bounded_amount(tmp_path: Path) -> None:
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    serve_bombs(bundles / "bombs")
    driver = DRIVER.format(src=str(ROOT / "sdk-python" / "src"), toolnode=str(TOOLNODE), bundles=str(bundles))
    p = subprocess.Popen([sys.executable, "-c", driver], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 4 * TIMEOUT
    peak = 0
    while p.poll() is None:
        peak = max(peak, rss_kib(p.pid))
        if peak > KILL_KIB or time.monotonic() > deadline:
            p.kill()
            p.communicate()
            raise AssertionError(f"the application reached {peak} KiB making the definitions (killed)")
        time.sleep(0.05)
    out, err = p.communicate()
    assert p.returncode == 0, err[-2000:]
    got = json.loads(out.strip().splitlines()[-1])
    assert got["listed"] == WIDE + 2
    assert "bombs_fine" in got["given"]
    assert got["left_out"]["bombs.bomb"].startswith("tool bombs.bomb left out: schema expands past 1048576 bytes")
    over = sorted(n for n, why in got["left_out"].items() if "allowed in all" in why)
    assert over, got["left_out"]
    assert all(n.startswith("bombs.wide") for n in over), over
    assert len([n for n in got["given"] if n.startswith("bombs_")]) + len(got["left_out"]) == WIDE + 2
    print(f"{len(over)} wide tools left out by the bound in all; definitions {got['bytes']} bytes; "
          f"grew {got['grew_kib']} KiB")
    assert got["bytes"] <= 17 << 20
    assert got["grew_kib"] <= MAX_GROWTH_KIB, f"grew {got['grew_kib']} KiB"
