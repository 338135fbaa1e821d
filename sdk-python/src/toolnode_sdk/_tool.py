"""Tools: their definitions and what handlers may return."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union

from ._context import Context
from ._protocol import Message, dumps_compact


@dataclass(frozen=True)
class Result:
    """A tool answer beyond plain text.

    structured_content, when given without content, is also sent as one JSON text
    block, so clients that only read text see the same answer.
    """

    content: Optional[List[Dict[str, Any]]] = None
    structured_content: Optional[Dict[str, Any]] = None
    is_error: bool = False


ToolReturn = Union[str, List[Dict[str, Any]], Dict[str, Any], Result, None]
# A tool's function: sync (run on the server's thread pool) or async def (run on its
# event loop).
Handler = Callable[[Dict[str, Any], Context], Union[ToolReturn, Awaitable[ToolReturn]]]

# SEP-986: what a tool name may contain.
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")

# Values of a tool's execution.taskSupport (MCP's tasks extension).
TASK_SUPPORT = ("optional", "required", "forbidden")


@dataclass(frozen=True)
class Tool:
    """A registered tool: what tools/list shows, and the function that answers."""

    name: str
    handler: Handler
    input_schema: Dict[str, Any]
    title: Optional[str] = None
    description: Optional[str] = None
    output_schema: Optional[Dict[str, Any]] = None
    annotations: Optional[Dict[str, Any]] = None
    meta: Optional[Dict[str, Any]] = None
    # Whether a call may ("optional"), must ("required") or must not ("forbidden") run as
    # a task of MCP's tasks extension; None says nothing. A node in front (toolnode) holds
    # the task: the handler reports its status (Context.status) and asks for input.
    task_support: Optional[str] = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(
                f"tool name {self.name!r} must be 1-128 characters of A-Z a-z 0-9 _ - ."
            )
        if self.task_support is not None and self.task_support not in TASK_SUPPORT:
            raise ValueError(
                f"tool {self.name!r}: task_support {self.task_support!r} must be one of "
                + ", ".join(TASK_SUPPORT)
            )

    def definition(self) -> Message:
        """The tool as tools/list shows it; schemas pass through untouched."""
        listed: Message = {"name": self.name}
        if self.title is not None:
            listed["title"] = self.title
        if self.description is not None:
            listed["description"] = self.description
        listed["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            listed["outputSchema"] = self.output_schema
        if self.annotations is not None:
            listed["annotations"] = self.annotations
        if self.meta is not None:
            listed["_meta"] = self.meta
        if self.task_support is not None:
            listed["execution"] = {"taskSupport": self.task_support}
        return listed


def text_result(text: str, *, is_error: bool = False) -> Message:
    result: Message = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def call_result(value: ToolReturn) -> Message:
    """Turn what a handler returned into a tools/call result."""
    if isinstance(value, Result):
        return _from_result(value)
    if isinstance(value, str):
        return text_result(value)
    if isinstance(value, dict):
        return _from_result(Result(structured_content=value))
    if isinstance(value, list):
        return {"content": value}
    if value is None:
        return {"content": []}
    raise TypeError(
        f"a tool handler returned {type(value).__name__}; "
        "return str, a list of content dicts, a dict of structured content, or Result"
    )


def _from_result(value: Result) -> Message:
    result: Message = {}
    if value.content is not None:
        result["content"] = value.content
    elif value.structured_content is not None:
        result["content"] = [{"type": "text", "text": dumps_compact(value.structured_content)}]
    else:
        result["content"] = []
    if value.structured_content is not None:
        result["structuredContent"] = value.structured_content
    if value.is_error:
        result["isError"] = True
    return result
