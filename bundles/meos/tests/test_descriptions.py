"""The generated tools' descriptions: written by the team from the functions'
names (gen/describe.py), never a sentence of pymeos's documentation, and in
the words users say."""

from __future__ import annotations

import ast
import json
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "..", "build", "gen", "manifest.json")
# A sentence this short ("Returns the SRID.") says too little to be anyone's.
MIN_WORDS = 4


def sentences(text: str) -> set[str]:
    """The sentences of a text, lowercased, spaces and markup reduced, of MIN_WORDS words
    or more."""
    text = re.sub(r"[`*:]+", " ", text.lower())
    out = set()
    for s in re.split(r"(?<=[.!?])\s+|\n\s*\n", text):
        words = re.findall(r"[a-z0-9]+", s)
        if len(words) >= MIN_WORDS:
            out.add(" ".join(words))
    return out


def pymeos_docstrings() -> list[str]:
    """Every docstring of the installed pymeos (modules, classes, functions)."""
    pymeos = pytest.importorskip("pymeos", reason="pymeos is not installed in this venv")
    root = os.path.dirname(pymeos.__file__)
    docs = []
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                     ast.AsyncFunctionDef)):
                    if doc := ast.get_docstring(node):
                        docs.append(doc)
    return docs


def manifest() -> list[dict]:
    with open(MANIFEST, encoding="utf-8") as f:
        return json.load(f)


def test_no_description_shares_a_sentence_with_pymeos_docs():
    docs = pymeos_docstrings()
    assert len(docs) > 500, "found too few pymeos docstrings to compare with"
    theirs: set[str] = set()
    for d in docs:
        theirs |= sentences(d)
    shared = []
    for tool in manifest():
        for s in sentences(tool["description"]) & theirs:
            shared.append(f"{tool['name']}: {s!r}")
    assert not shared, f"{len(shared)} sentences taken from pymeos:\n" + "\n".join(shared[:20])


def test_the_comparison_catches_a_copied_sentence():
    docs = pymeos_docstrings()
    copied = next(s for d in docs for s in sentences(d))
    assert copied in sentences("Some words of ours. " + copied + ". More of ours.")


@pytest.mark.parametrize("name, words", [
    ("tfloat_max_value", ["maximum value of a temporal float", "largest", "peak"]),
    ("tpoint_minus_geom", ["part outside", "remove", "moving point"]),
    ("tdwithin_tgeo_tgeo", ["within a distance", "at each moment"]),
    ("tpoint_cumulative_length", ["distance covered so far"]),
    ("temporal_at_tstzspan", ["restricted to a period", "part inside"]),
    ("temporal_time_split", ["daily", "per day"]),
    ("tpoint_azimuth", ["heading", "bearing", "direction"]),
    ("left_stbox_stbox", ["space-time box"]),
])
def test_descriptions_say_what_the_tool_is_in_users_words(name, words):
    tool = next(t for t in manifest() if t["name"] == name)
    for w in words:
        assert w in tool["description"], f"{name}: {w!r} not in {tool['description']!r}"


def test_every_generated_tool_has_a_plain_description():
    for tool in manifest():
        first = tool["description"].split(". ")[0]
        assert not first.startswith("MEOS "), f"{tool['name']}: {first!r}"
        assert tool["function"] not in first, f"{tool['name']} describes itself by its C name"
