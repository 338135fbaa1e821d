"""A bundle serving the MEOS bundle's skill, trajectory-analysis, by the skills extension."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolnode_sdk import Server  # noqa: E402

SKILL = Path(__file__).resolve().parents[2] / "bundles" / "meos" / "skills" / "trajectory-analysis"

server = Server("skills", version="1")
server.skill("geo/trajectory-analysis", str(SKILL))

if __name__ == "__main__":
    server.run()
