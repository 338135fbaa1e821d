"""The server: what it offers (tools, resources, prompts, views) and running it over
stdio."""

from __future__ import annotations

import base64
import inspect
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from ._context import Context
from ._output import claim_stdio
from ._resources import (
    Prompt,
    PromptHandler,
    Resource,
    ResourceHandler,
    ResourceReturn,
    Template,
    TemplateHandler,
)
from ._session import Session
from ._skills import Skill, mime_type
from ._state import StateSealer
from ._tool import Handler, Tool
from ._views import MIME_APP, UI_SCHEME, view_meta

H = TypeVar("H", bound=Handler)
R = TypeVar("R", bound=ResourceHandler)
T = TypeVar("T", bound=TemplateHandler)
P = TypeVar("P", bound=PromptHandler)


class Server:
    """An MCP server of tools, speaking newline-delimited JSON-RPC over stdio.

    Handlers (of tools, prompts, resources) may be plain functions, run on a thread pool,
    or ``async def`` functions, run on an event loop the server owns; both kinds run at
    once. A cancelled call's Context says so (ctx.cancelled), and an async handler is
    cancelled as an asyncio task besides: asyncio.CancelledError at its next await.

    Options:
        version: serverInfo.version.
        instructions: sent in the initialize answer when given.
        max_workers: calls of sync handlers run at the same time (default 8); more wait
            in line. Async handlers are not bounded by it.
        page_size: tools per tools/list page (default 100).
        cache_ttl_ms: under 2026-07-28, how long a client may keep the tools/list and
            server/discover answers (default 60000: tools do not change while running).
        state_key: the key sealing the requestState of input_required results (default:
            $TOOLNODE_STATE_KEY, else random per process).
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.0.0",
        instructions: Optional[str] = None,
        max_workers: int = 8,
        page_size: int = 100,
        cache_ttl_ms: int = 60000,
        state_key: Optional[bytes] = None,
    ) -> None:
        if max_workers < 1 or page_size < 1:
            raise ValueError("max_workers and page_size must be at least 1")
        if cache_ttl_ms < 0:
            raise ValueError("cache_ttl_ms must not be negative")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.max_workers = max_workers
        self.page_size = page_size
        self.cache_ttl_ms = cache_ttl_ms
        self._sealer = StateSealer(state_key)
        self._tools: Dict[str, Tool] = {}
        self._resources: Dict[str, Resource] = {}
        self._templates: List[Template] = []
        self._prompts: Dict[str, Prompt] = {}
        self._skills: List[Skill] = []
        # Completion values by (reference type, prompt name or URI template, argument).
        self._completions: Dict[Tuple[str, str, str], List[str]] = {}
        self._session: Optional[Session] = None

    @property
    def tools(self) -> List[Tool]:
        """Registered tools, in the order tools/list shows them."""
        return list(self._tools.values())

    def tool(
        self,
        name: Optional[str] = None,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        input_schema: Optional[Dict[str, Any]] = None,
        output_schema: Optional[Dict[str, Any]] = None,
        annotations: Optional[Dict[str, Any]] = None,
        meta: Optional[Dict[str, Any]] = None,
        view: Optional[str] = None,
        visibility: Optional[Sequence[str]] = None,
        task_support: Optional[str] = None,
    ) -> Callable[[H], H]:
        """Register the decorated function as a tool and return it unchanged.

        The function is called as handler(args, ctx). name defaults to the
        function's name, description to its docstring, input_schema to an
        object without properties. meta is the tool's _meta. view names the ui://
        view (see Server.view) hosts show its results in, and visibility who may see
        and call it: ["model", "app"] by default, ["app"] for a tool only views call.
        task_support says whether a call may ("optional"), must ("required") or must
        not ("forbidden") run as a task.
        """
        if callable(name):
            raise TypeError(
                "@server.tool must be called: write @server.tool() or "
                '@server.tool(name="...", input_schema={...})'
            )

        tool_meta = view_meta(meta, view, visibility)

        def register(func: H) -> H:
            self.add_tool(
                Tool(
                    name=name if name is not None else func.__name__,
                    handler=func,
                    input_schema=(
                        input_schema
                        if input_schema is not None
                        else {"type": "object", "properties": {}}
                    ),
                    title=title,
                    description=description if description is not None else inspect.getdoc(func),
                    output_schema=output_schema,
                    annotations=annotations,
                    meta=tool_meta,
                    task_support=task_support,
                )
            )
            return func

        return register

    def add_tool(self, tool: Tool) -> None:
        """Register a tool built by hand; names must be unique."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def resource(
        self,
        uri: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
    ) -> Callable[[R], R]:
        """Register the decorated function as the resource at uri; it is called as
        handler(uri, ctx) and returns str (text), bytes (a blob), or contents dicts."""

        def register(func: R) -> R:
            if uri in self._resources:
                raise ValueError(f"resource {uri!r} is already registered")
            self._resources[uri] = Resource(
                uri, name or uri, func, title, description or inspect.getdoc(func), mime_type
            )
            return func

        return register

    def view(
        self,
        uri: str,
        html: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        ui: Optional[Dict[str, Any]] = None,
        listed: bool = True,
    ) -> None:
        """Offer an MCP Apps view: the HTML document at uri (ui://...), read with MIME type
        text/html;profile=mcp-app and ui (csp, permissions, domain, prefersBorder) as the
        _meta.ui of its listing and contents. listed=False leaves it out of resources/list;
        hosts find it through the tools naming it (@server.tool(view=uri))."""
        if not uri.lower().startswith(UI_SCHEME) or len(uri) == len(UI_SCHEME):
            raise ValueError(f"view URI {uri!r} must begin {UI_SCHEME}")
        if uri in self._resources:
            raise ValueError(f"resource {uri!r} is already registered")
        meta = {"ui": dict(ui or {})}

        def read(read_uri: str, ctx: Context) -> ResourceReturn:
            return {"uri": uri, "mimeType": MIME_APP, "text": html, "_meta": meta}

        self._resources[uri] = Resource(
            uri, name or uri, read, title, description, MIME_APP, meta, listed
        )

    def skill(self, path: str, folder: str) -> None:
        """Serve the Agent Skill in folder (a SKILL.md and the files it uses) by MCP's
        skills extension, under skill://<path>/: its files as unlisted resources, its entry
        (frontmatter, each file's sha256 digest and size) in skills/list and skills/get.
        The last name of path is the skill's name, which the frontmatter must give beside a
        description. Files are read now (hidden ones left out), within the extension's
        limits (512 files, 16 MiB). The frontmatter is read as simple YAML: "key: value"
        lines, a key followed by indented "key: value" lines (such as metadata), and > or |
        blocks; anything else is refused here."""
        sk = Skill(path, Path(folder))
        if any(s.uri == sk.uri for s in self._skills):
            raise ValueError(f"skill {path!r} is already registered")
        for uri, (rel, data) in sk.files.items():
            if uri in self._resources:
                raise ValueError(f"resource {uri!r} is already registered")
            self._resources[uri] = Resource(
                uri, rel, _skill_reader(uri, rel, data), mime_type=mime_type(rel, data), listed=False
            )
        self._skills.append(sk)

    def resource_template(
        self,
        uri_template: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
    ) -> Callable[[T], T]:
        """Register the decorated function for the URIs matching uri_template (variables
        as {name}); it is called as handler(uri, variables, ctx)."""

        def register(func: T) -> T:
            self._templates.append(
                Template(
                    uri_template,
                    name or uri_template,
                    func,
                    title,
                    description or inspect.getdoc(func),
                    mime_type,
                )
            )
            return func

        return register

    def prompt(
        self,
        name: Optional[str] = None,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        arguments: Optional[List[Dict[str, Any]]] = None,
    ) -> Callable[[P], P]:
        """Register the decorated function as a prompt, called as handler(args, ctx);
        arguments lists {"name", "description", "required"} dicts."""
        if callable(name):
            raise TypeError("@server.prompt must be called: write @server.prompt()")

        def register(func: P) -> P:
            key = name if name is not None else func.__name__
            if key in self._prompts:
                raise ValueError(f"prompt {key!r} is already registered")
            self._prompts[key] = Prompt(
                key, func, title, description or inspect.getdoc(func), arguments
            )
            return func

        return register

    def complete(self, ref: str, name: str, argument: str, values: Sequence[str]) -> None:
        """Offer values for completion/complete of a prompt's argument (ref "prompt", name
        the prompt's) or a template's variable (ref "resource", name the URI template)."""
        if ref not in ("prompt", "resource"):
            raise ValueError('ref must be "prompt" or "resource"')
        self._completions[(f"ref/{ref}", name, argument)] = list(values)

    def resource_updated(self, uri: str) -> None:
        """Tell the client that resource uri changed; safe from any thread.

        A client of 2025-11-25 and older hears it if it subscribed to uri
        (resources/subscribe); a client of 2026-07-28 once on each open
        subscriptions/listen that named uri, tagged with that request's id.
        """
        session = self._session
        if session is not None:
            session.updated(uri)

    def run(self) -> None:
        """Serve stdin/stdout until stdin closes; calls in flight finish first."""
        lines, out = claim_stdio()
        self._session = Session(self, out)
        try:
            self._session.serve(lines)
        finally:
            self._session = None


def _skill_reader(uri: str, rel: str, data: bytes) -> ResourceHandler:
    """The handler reading one file of a skill: text when UTF-8, else a blob."""
    mime = mime_type(rel, data)
    try:
        contents: Dict[str, Any] = {"uri": uri, "mimeType": mime, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        contents = {"uri": uri, "mimeType": mime, "blob": base64.b64encode(data).decode("ascii")}

    def read(read_uri: str, ctx: Context) -> ResourceReturn:
        return contents

    return read
