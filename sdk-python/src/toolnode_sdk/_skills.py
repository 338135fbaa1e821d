"""Skills of MCP's skills extension (SEP-2640): Agent Skills read from a folder, their
entries (frontmatter, each file's digest and size) and their files as skill:// resources."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

from ._protocol import Message

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
MAX_FILES = 512
MAX_BYTES = 16 << 20
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9]|-[a-z0-9]){0,63}$")
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


class Skill:
    """A skill read from a folder: its entry and its files' bytes, by URI."""

    def __init__(self, path: str, folder: Path) -> None:
        name = path.rsplit("/", 1)[-1]
        if not path or path.startswith("/") or path.endswith("/") or not _NAME.match(name):
            raise ValueError(
                f"skill path {path!r} must end in a skill name "
                "(lowercase letters, digits and single hyphens)"
            )
        files = _read(folder)
        if SKILL_FILE not in files:
            raise ValueError(f"skill {path!r}: no {SKILL_FILE} in {folder}")
        front = parse_frontmatter(files[SKILL_FILE].decode("utf-8"))
        if front.get("name") != name or not front.get("description"):
            raise ValueError(
                f"skill {path!r}: its frontmatter must have name {name!r} and a description"
            )
        base = f"skill://{path}/"
        self.uri = base + SKILL_FILE
        self.files: Dict[str, Tuple[str, bytes]] = {
            base + rel: (rel, data) for rel, data in sorted(files.items())
        }
        self.entry: Message = {
            "uri": self.uri,
            "frontmatter": front,
            "resources": [
                {
                    "uri": uri,
                    "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                }
                for uri, (_, data) in self.files.items()
            ],
        }


def _read(folder: Path) -> Dict[str, bytes]:
    """Every regular file under folder but hidden ones, by its path relative to it."""
    files: Dict[str, bytes] = {}
    total = 0
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or p.is_symlink() or not p.is_file():
            continue
        data = p.read_bytes()
        total += len(data)
        if total > MAX_BYTES or len(files) == MAX_FILES:
            raise ValueError(f"skill folder {folder}: past the limits of 512 files and 16 MiB")
        files[rel.as_posix()] = data
    return files


def mime_type(rel: str, data: bytes) -> str:
    """A skill file's media type."""
    if rel.endswith(".md"):
        return "text/markdown"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain"


def parse_frontmatter(text: str) -> Dict[str, Any]:
    """The frontmatter of a SKILL.md, read as simple YAML: "key: value" lines (plain or
    quoted), a key followed by indented "key: value" lines (a map), and > or | blocks."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise ValueError(f"{SKILL_FILE} does not begin with frontmatter (a line ---)")
    block, sep, _ = text[4:].partition("\n---")
    if not sep:
        raise ValueError(f"{SKILL_FILE}'s frontmatter has no closing line ---")
    lines = block.split("\n")
    out: Dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.strip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not key or key != key.strip():
            raise ValueError(f"{SKILL_FILE} frontmatter line {line!r}: want key: value")
        value = value.strip()
        nested: List[str] = []
        while i < len(lines) and (lines[i].startswith(" ") or not lines[i].strip()):
            nested.append(lines[i])
            i += 1
        if value in (">", "|", ">-", "|-"):
            joined = (" " if value[0] == ">" else "\n").join(n.strip() for n in nested).strip()
            out[key] = joined if value.endswith("-") else joined + "\n"
        elif not value and nested:
            mapping: Dict[str, Any] = {}
            for n in nested:
                if not n.strip():
                    continue
                k, c, v = n.strip().partition(":")
                if not c:
                    raise ValueError(f"{SKILL_FILE} frontmatter line {n!r}: want key: value")
                mapping[k] = _scalar(v.strip())
            out[key] = mapping
        elif any(n.strip() for n in nested):
            raise ValueError(
                f"{SKILL_FILE} frontmatter key {key!r}: a value the SDK's simple YAML does not read"
            )
        else:
            out[key] = _scalar(value)
    return out


def _scalar(v: str) -> Any:
    """A YAML scalar as YAML reads it: quoted strings, booleans, null, numbers, else text."""
    if len(v) >= 2 and v[0] == v[-1] == '"':
        return json.loads(v)
    if len(v) >= 2 and v[0] == v[-1] == "'":
        return v[1:-1].replace("''", "'")
    if v in ("true", "false"):
        return v == "true"
    if v in ("", "null", "~"):
        return None
    if _NUMBER.match(v):
        return float(v) if any(c in v for c in ".eE") else int(v)
    return v
