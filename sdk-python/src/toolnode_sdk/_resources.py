"""Resources, resource templates and prompts: their definitions and what handlers return."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union
from urllib.parse import unquote

from ._context import Context
from ._protocol import Message

ResourceReturn = Union[str, bytes, Dict[str, Any], List[Dict[str, Any]]]
# Handlers are sync (run on the server's thread pool) or async def (run on its event loop).
ResourceHandler = Callable[[str, Context], Union[ResourceReturn, Awaitable[ResourceReturn]]]
TemplateHandler = Callable[
    [str, Dict[str, str], Context], Union[ResourceReturn, Awaitable[ResourceReturn]]
]
PromptReturn = Union[str, List[Dict[str, Any]], Dict[str, Any]]
PromptHandler = Callable[[Dict[str, str], Context], Union[PromptReturn, Awaitable[PromptReturn]]]


def _listed(fields: Dict[str, Any]) -> Message:
    return {k: v for k, v in fields.items() if v is not None}


@dataclass(frozen=True)
class Resource:
    """A resource at a fixed URI."""

    uri: str
    name: str
    handler: ResourceHandler
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    meta: Optional[Dict[str, Any]] = None
    listed: bool = True

    def definition(self) -> Message:
        return _listed(
            {
                "uri": self.uri,
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "mimeType": self.mime_type,
                "_meta": self.meta,
            }
        )


@dataclass(frozen=True)
class Template:
    """Resources whose URIs match an RFC 6570 level-1 template such as test://{id}/data."""

    uri_template: str
    name: str
    handler: TemplateHandler
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None

    def definition(self) -> Message:
        return _listed(
            {
                "uriTemplate": self.uri_template,
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "mimeType": self.mime_type,
            }
        )

    def match(self, uri: str) -> Optional[Dict[str, str]]:
        """The values of the template's variables in uri, or None when it does not match."""
        parts = re.split(r"\{([A-Za-z0-9_]+)\}", self.uri_template)
        pattern = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/?#]+)"
            for i, part in enumerate(parts)
        )
        found = re.fullmatch(pattern, uri)
        if found is None:
            return None
        return {k: unquote(v) for k, v in found.groupdict().items()}


@dataclass(frozen=True)
class Prompt:
    """A prompt template. arguments lists {"name", "description", "required"} dicts."""

    name: str
    handler: PromptHandler
    title: Optional[str] = None
    description: Optional[str] = None
    arguments: Optional[List[Dict[str, Any]]] = None

    def definition(self) -> Message:
        return _listed(
            {
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "arguments": self.arguments,
            }
        )


def contents(uri: str, mime_type: Optional[str], value: ResourceReturn) -> List[Message]:
    """Turn what a resource handler returned into the contents of resources/read."""
    if isinstance(value, str):
        return [_listed({"uri": uri, "mimeType": mime_type, "text": value})]
    if isinstance(value, bytes):
        blob = base64.b64encode(value).decode()
        return [_listed({"uri": uri, "mimeType": mime_type, "blob": blob})]
    items = [value] if isinstance(value, dict) else value
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise TypeError(
            "a resource handler must return str, bytes, a contents dict or a list of them"
        )
    return [{"uri": uri, **item} if "uri" not in item else item for item in items]


def prompt_result(value: PromptReturn) -> Message:
    """Turn what a prompt handler returned into a prompts/get result."""
    if isinstance(value, str):
        return {"messages": [{"role": "user", "content": {"type": "text", "text": value}}]}
    if isinstance(value, list):
        return {"messages": value}
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return value
    raise TypeError("a prompt handler must return str, a list of messages or a dict with messages")
