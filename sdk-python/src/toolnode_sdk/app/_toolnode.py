"""The application API: a node's tools in a model API's format, and its calls run."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Sequence
from typing import Any

from mcp.shared.exceptions import MCPError

from ._connection import Endpoint, Unreachable, broken, connection, forget
from ._formats import Definitions, check_format, definitions
from ._names import map_names
from ._patterns import Filter
from ._results import Call, Outcome, calls_of, error_outcome, outcome_of, result_messages
from ._schema import drop_strict_nulls

__all__ = ["Conversation", "Toolnode", "REFUSAL"]

REFUSAL = (
    "Tool call refused: this conversation has used its {limit} tool-calling turns. "
    "Give your final answer without calling tools."
)


def _toolnode_binary() -> str:
    found = shutil.which("toolnode")
    return found or "toolnode"


class Toolnode:
    """A node's tools for LLM applications.

    Give either ``url`` (a node's Streamable HTTP endpoint, with ``token`` as its bearer or
    OAuth access token) or ``bundles`` (folders a ``toolnode serve`` started here over stdio
    serves; ``command`` replaces ``["toolnode", "serve"]``, or, given as one path,
    ``"toolnode"``: ``command="/opt/toolnode/bin/toolnode"`` runs that program's ``serve``).
    Every Toolnode of one endpoint
    shares one session on each event loop. ``allow`` and ``deny`` are patterns over tool
    names as in the node's access files; ``timeout`` bounds each tool call in seconds;
    ``mode`` is passed to the MCP client (``"auto"`` negotiates the protocol era).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        bundles: Sequence[str | os.PathLike[str]] = (),
        command: str | os.PathLike[str] | Sequence[str] | None = None,
        allow: Sequence[str] = ("*",),
        deny: Sequence[str] = (),
        timeout: float = 60.0,
        mode: str = "auto",
    ) -> None:
        if (url is None) == (not bundles and command is None):
            raise ValueError("give either url= (a running node) or bundles= (folders to serve over stdio)")
        if url is not None:
            self.endpoint = Endpoint(url=url, token=token, mode=mode)
        else:
            if command is None:
                cmd: tuple[str, ...] = (_toolnode_binary(), "serve")
            elif isinstance(command, (str, os.PathLike)):
                # One path is the program, not a sequence of one-character arguments.
                cmd = (os.fspath(command), "serve")
            else:
                cmd = tuple(command)
            for b in bundles:
                cmd += ("--bundles", os.fspath(b))
            self.endpoint = Endpoint(command=cmd, mode=mode)
        if timeout <= 0:
            raise ValueError("timeout must be positive (seconds)")
        self.filter = Filter(allow, deny)
        self.timeout = timeout
        self._defs: dict[tuple[str, bool], tuple[int, Definitions]] = {}

    # ---- tools ----

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools this Toolnode may use, as ``tools/list`` gives them (JSON objects)."""
        listed = await connection(self.endpoint).tools()
        return [t for t in listed.tools if self.filter(t["name"])]

    async def definitions(self, fmt: str, *, strict: bool = False) -> Definitions:
        """The tools in the format of ``fmt``, with the names they were given."""
        check_format(fmt)
        listed = await connection(self.endpoint).tools()
        cached = self._defs.get((fmt, strict))
        if cached is not None and cached[0] == listed.version:
            return cached[1]
        allowed = [t for t in listed.tools if self.filter(t["name"])]
        defs = definitions(allowed, fmt, strict=strict)
        # One unusable schema must not cost the application every other tool: it is left out.
        for why in defs.left_out.values():
            logging.getLogger("toolnode_sdk.app").warning("%s", why)
        self._defs[(fmt, strict)] = (listed.version, defs)
        return defs

    async def tools(self, fmt: str, *, strict: bool = False) -> list[dict[str, Any]]:
        """The ``tools`` of a request to the model API ``fmt`` (see FORMATS)."""
        return (await self.definitions(fmt, strict=strict)).tools

    def conversation(self, fmt: str, *, strict: bool = False, max_turns: int = 10) -> Conversation:
        """A conversation with the model API ``fmt``: its tools, and its tool calls run
        with at most ``max_turns`` turns of them."""
        return Conversation(self, check_format(fmt), strict=strict, max_turns=max_turns)

    # ---- calls ----

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool by its toolnode name; the ``tools/call`` result as a JSON object.

        Raises PermissionError for a tool the patterns leave out, Unreachable when the node
        cannot be reached or the session is lost during the call (the next call opens it
        again), TimeoutError past ``timeout``, and the SDK's MCPError for an error answer.
        """
        if not self.filter(name):
            raise PermissionError(f"tool {name!r} is not allowed here (allow={list(self.filter.allow)}, "
                                  f"deny={list(self.filter.deny)})")
        conn = connection(self.endpoint)
        client = await conn.client()
        try:
            res = await asyncio.wait_for(client.call_tool(name, arguments or {}), self.timeout)
        except Exception as e:
            if broken(e):
                conn.lost(client)
                raise Unreachable(
                    f"lost the node at {self.endpoint.describe()} during the call of {name}: {e}; "
                    "the next call opens the session again"
                ) from e
            raise
        return res.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def _run(self, call: Call, defs: Definitions) -> Outcome:
        name = defs.names.tool_name(call.name)
        if name is None and call.name in defs.schemas:  # the toolnode name itself: accepted too
            name = call.name
        if name is None:
            return await self._not_given(call)
        if call.bad_arguments is not None:
            return error_outcome(call, "invalid_arguments", False, f"{name}: {call.bad_arguments}")
        args = call.arguments
        if name in defs.strict:
            args = drop_strict_nulls(args, defs.schemas[name])
        conn = connection(self.endpoint)
        try:
            client = await conn.client()
        except Unreachable as e:
            return error_outcome(call, "failed", False, str(e))
        try:
            res = await asyncio.wait_for(client.call_tool(name, args), self.timeout)
        except (TimeoutError, asyncio.TimeoutError):
            return error_outcome(call, "timeout", True,
                                 f"{name} gave no answer within {self.timeout:g} s and was cancelled; "
                                 "it may have acted: check before calling it again")
        except MCPError as e:
            if broken(e):
                conn.lost(client)
                return error_outcome(call, "failed", True,
                                     f"the session to the node was lost during the call of {name} ({e}); "
                                     "it may have acted: check before calling it again")
            kind = "unknown_tool" if "unknown tool" in str(e).lower() else "invalid_arguments"
            return error_outcome(call, kind, False, f"{name}: {e}")
        except Exception as e:
            if not broken(e):
                raise
            conn.lost(client)
            return error_outcome(call, "failed", True,
                                 f"the session to the node was lost during the call of {name} ({e}); "
                                 "it may have acted: check before calling it again")
        return outcome_of(call, res.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def _not_given(self, call: Call) -> Outcome:
        """The outcome of a call of a tool the model was not given: a tool of the node the
        patterns leave out, or none at all."""
        listed = await connection(self.endpoint).tools()
        every = map_names(t["name"] for t in listed.tools)
        name = every.tool_name(call.name)
        if name is None and any(t["name"] == call.name for t in listed.tools):
            name = call.name
        if name is not None:
            return error_outcome(call, "forbidden", False, f"tool {name!r} is not allowed here")
        return error_outcome(call, "unknown_tool", False,
                             f"no tool is named {call.name!r}; call one of the tools given")

    async def run(self, fmt: str, calls: Sequence[Call], *, strict: bool = False) -> list[Outcome]:
        """Run calls (as the model named them) in parallel; one Outcome each, in order.

        Cancelling the run cancels every call still in flight."""
        defs = await self.definitions(fmt, strict=strict)
        return list(await asyncio.gather(*(self._run(c, defs) for c in calls)))

    async def close(self) -> None:
        """End this endpoint's shared session on the running loop (every Toolnode of it)."""
        conn = forget(self.endpoint)
        if conn is not None:
            await conn.close()


class Conversation:
    """One conversation's tools and tool turns.

    Each response with tool calls is a turn; past ``max_turns`` the calls are answered with
    a refusal the model can read instead of being run.
    """

    def __init__(self, node: Toolnode, fmt: str, *, strict: bool, max_turns: int) -> None:
        if max_turns < 0:
            raise ValueError("max_turns must be 0 or more")
        self.node = node
        self.format = fmt
        self.strict = strict
        self.max_turns = max_turns
        self.turns = 0

    async def tools(self) -> list[dict[str, Any]]:
        """The ``tools`` of a request."""
        return await self.node.tools(self.format, strict=self.strict)

    def calls(self, response: Any) -> list[Call]:
        """The tool calls of a response, as the model wrote them."""
        return calls_of(self.format, response)

    async def results(self, response: Any) -> list[dict[str, Any]]:
        """Run the tool calls of ``response`` in parallel and return the messages (input items
        for Responses) that carry their results back; [] when it has none."""
        calls = self.calls(response)
        if not calls:
            return []
        self.turns += 1
        if self.turns > self.max_turns:
            text = REFUSAL.format(limit=self.max_turns)
            outcomes = [Outcome(c, texts=[text]) for c in calls]
        else:
            outcomes = await self.node.run(self.format, calls, strict=self.strict)
        return result_messages(self.format, outcomes)

    @property
    def exhausted(self) -> bool:
        """Whether the next response's tool calls would be refused."""
        return self.turns >= self.max_turns
