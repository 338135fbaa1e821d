"""Tool calls out of a model's response, and tool results into the API's messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Call", "Outcome", "calls_of", "result_messages"]

# Image types every API here takes as an image block; others are described in text.
_ANTHROPIC_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


@dataclass
class Call:
    """One tool call of a response: the API's call id (None when Gemini gives none), the
    function name as the model wrote it, and its arguments (or why they cannot be read)."""

    id: str | None
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    bad_arguments: str | None = None


@dataclass
class Outcome:
    """What one call produced: text and images, the structured content, or an error shaped
    as toolnode's ``{kind, dispatched, message}``."""

    call: Call
    texts: list[str] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (mime type, base64 data)
    structured: Any = None
    error: dict[str, Any] | None = None

    def text(self) -> str:
        """The result as one text: the error as JSON, else the text blocks joined."""
        if self.error is not None:
            return json.dumps({"error": self.error}, sort_keys=True)
        return "\n".join(self.texts)


def _plain(obj: Any) -> Any:
    """An SDK response object (pydantic) or a dict, as plain JSON-like data."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return obj


def _args(raw: Any, name: str, call_id: str | None) -> Call:
    if isinstance(raw, dict):
        return Call(call_id, name, raw)
    if raw is None or raw == "":
        return Call(call_id, name, {})
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError as e:
            return Call(call_id, name, bad_arguments=f"the arguments are not JSON ({e})")
        if isinstance(value, dict):
            return Call(call_id, name, value)
    return Call(call_id, name, bad_arguments="the arguments must be a JSON object")


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if isinstance(d, dict) and k in d:
            return d[k]
    return None


def calls_of(fmt: str, response: Any) -> list[Call]:
    """The tool calls of a response (or message, or list of output items) of the API ``fmt``."""
    data = _plain(response)
    if isinstance(data, list):
        data = [_plain(x) for x in data]
    out: list[Call] = []
    if fmt == "openai":
        message = data
        if isinstance(data, dict) and "choices" in data:
            message = data["choices"][0].get("message", {}) if data["choices"] else {}
        for tc in _get(message, "tool_calls") or []:
            fn = tc.get("function") or {}
            out.append(_args(fn.get("arguments"), fn.get("name", ""), tc.get("id")))
    elif fmt == "openai-responses":
        items = data.get("output", []) if isinstance(data, dict) else data
        for item in items or []:
            item = _plain(item)
            if isinstance(item, dict) and item.get("type") == "function_call":
                out.append(_args(item.get("arguments"), item.get("name", ""), item.get("call_id")))
    elif fmt == "anthropic":
        blocks = data.get("content", []) if isinstance(data, dict) else data
        for b in blocks or []:
            b = _plain(b)
            if isinstance(b, dict) and b.get("type") == "tool_use":
                out.append(_args(b.get("input"), b.get("name", ""), b.get("id")))
    elif fmt == "gemini":
        content = data
        if isinstance(data, dict) and "candidates" in data:
            content = data["candidates"][0].get("content", {}) if data["candidates"] else {}
        parts = content.get("parts", []) if isinstance(content, dict) else content
        for p in parts or []:
            p = _plain(p)
            fc = _get(p, "functionCall", "function_call")
            if isinstance(fc, dict):
                out.append(_args(fc.get("args"), fc.get("name", ""), fc.get("id")))
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return out


def outcome_of(call: Call, result: dict[str, Any]) -> Outcome:
    """An MCP ``tools/call`` result (a JSON object) as an Outcome."""
    o = Outcome(call)
    for block in result.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            o.texts.append(str(block.get("text", "")))
        elif kind == "image" and isinstance(block.get("data"), str):
            o.images.append((str(block.get("mimeType") or "image/png"), block["data"]))
        elif kind == "resource":
            res = block.get("resource") or {}
            if "text" in res:
                o.texts.append(str(res["text"]))
            else:
                o.texts.append(f"[resource {res.get('uri', '')} ({res.get('mimeType', 'binary')}), "
                               f"{len(str(res.get('blob', ''))) * 3 // 4} bytes]")
        elif kind == "resource_link":
            o.texts.append(f"[resource {block.get('uri', '')}: {block.get('name', '')}]")
        elif kind == "audio":
            o.texts.append(f"[audio ({block.get('mimeType', '')}), {len(str(block.get('data', ''))) * 3 // 4} bytes]")
    structured = result.get("structuredContent")
    if result.get("isError"):
        err = structured.get("error") if isinstance(structured, dict) else None
        if isinstance(err, dict) and isinstance(err.get("kind"), str):
            o.error = {"kind": err["kind"], "dispatched": bool(err.get("dispatched", True)),
                       "message": str(err.get("message", ""))}
        else:
            o.error = {"kind": "failed", "dispatched": True, "message": "\n".join(o.texts) or "the tool failed"}
        return o
    if structured is not None:
        o.structured = structured
        as_json = json.dumps(structured, sort_keys=True)
        mirrored = False
        for t in o.texts:
            try:
                mirrored = mirrored or json.dumps(json.loads(t), sort_keys=True) == as_json
            except ValueError:
                pass
        if not mirrored:
            o.texts.append(json.dumps(structured, sort_keys=True))
    return o


def error_outcome(call: Call, kind: str, dispatched: bool, message: str) -> Outcome:
    """An Outcome for a call that failed before or around the tool."""
    return Outcome(call, error={"kind": kind, "dispatched": dispatched, "message": message})


def _data_uri(mime: str, data: str) -> str:
    return f"data:{mime};base64,{data}"


def _image_note(o: Outcome, where: str) -> str:
    n = len(o.images)
    note = f"[{n} image{'s' if n > 1 else ''} of this result {where}]"
    return f"{o.text()}\n{note}" if o.texts or o.error else note


def result_messages(fmt: str, outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """The messages (or input items) that carry ``outcomes`` back to the API ``fmt``.

    Gemini matches a response to its call by the name the model wrote, which it is given back.
    """
    if fmt == "openai":
        # A tool message holds text only: images follow in one user message, as image_url parts.
        msgs: list[dict[str, Any]] = []
        pictures: list[dict[str, Any]] = []
        for o in outcomes:
            text = _image_note(o, "follow in the next message") if o.images else o.text()
            msgs.append({"role": "tool", "tool_call_id": o.call.id, "content": text})
            if o.images:
                pictures.append({"type": "text", "text": f"Images returned by tool call {o.call.id}:"})
                pictures += [{"type": "image_url", "image_url": {"url": _data_uri(m, d)}} for m, d in o.images]
        if pictures:
            msgs.append({"role": "user", "content": pictures})
        return msgs
    if fmt == "openai-responses":
        items = []
        for o in outcomes:
            output: Any = o.text()
            if o.images:
                output = ([{"type": "input_text", "text": o.text()}] if o.texts or o.error else []) + [
                    {"type": "input_image", "image_url": _data_uri(m, d)} for m, d in o.images
                ]
            items.append({"type": "function_call_output", "call_id": o.call.id, "output": output})
        return items
    if fmt == "anthropic":
        blocks = []
        for o in outcomes:
            content: list[dict[str, Any]] = []
            if o.texts or o.error or not o.images:
                content.append({"type": "text", "text": o.text() or "(no output)"})
            for m, d in o.images:
                if m in _ANTHROPIC_IMAGES:
                    content.append({"type": "image", "source": {"type": "base64", "media_type": m, "data": d}})
                else:
                    content.append({"type": "text", "text": f"[an image of type {m}, which the API does not take]"})
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": o.call.id, "content": content}
            if o.error is not None:
                block["is_error"] = True
            blocks.append(block)
        return [{"role": "user", "content": blocks}]
    if fmt == "gemini":
        parts = []
        for o in outcomes:
            if o.error is not None:
                response: dict[str, Any] = {"error": o.error}
            elif o.structured is not None:
                response = {"output": o.structured}
            else:
                response = {"output": "\n".join(o.texts)}
            fr: dict[str, Any] = {"name": o.call.name, "response": response}
            if o.call.id:
                fr["id"] = o.call.id
            if o.images:
                fr["parts"] = [{"inlineData": {"mimeType": m, "data": d}} for m, d in o.images]
            parts.append({"functionResponse": fr})
        return [{"role": "user", "parts": parts}]
    raise ValueError(f"unknown format {fmt!r}")
