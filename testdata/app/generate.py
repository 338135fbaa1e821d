"""Writes vectors.json from inputs.json with the Python library: what a renamed tool and a
converted schema must be, for the Python and Go libraries and `toolnode tools --format` alike.

Run after changing a rule on purpose, read the diff, and commit both:

    PYTHONPATH=sdk-python/src build/app-venv/bin/python testdata/app/generate.py
"""

import json
import pathlib

from toolnode_sdk.app import FORMATS, definitions, map_names

HERE = pathlib.Path(__file__).resolve().parent


def main() -> None:
    inputs = json.loads((HERE / "inputs.json").read_text())
    names = []
    for case in inputs["names"]:
        m = map_names(case["names"])
        names.append({"case": case["case"], "rendered": {n: m.provider_name(n) for n in case["names"]}})
    schemas = []
    for i, case in enumerate(inputs["schemas"]):
        tool = {"name": f"vectors.case{i}", "description": case["case"], "inputSchema": case["schema"]}
        out = {}
        for fmt in FORMATS:
            out[fmt] = definitions([tool], fmt).tools
            if fmt.startswith("openai"):
                out[fmt + "+strict"] = definitions([tool], fmt, strict=True).tools
        schemas.append({"case": case["case"], "tool": tool, "definitions": out})
    text = json.dumps({"names": names, "schemas": schemas}, indent=1, ensure_ascii=False, sort_keys=True)
    (HERE / "vectors.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
