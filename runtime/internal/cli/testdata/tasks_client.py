"""The official MCP Python SDK (mcp 2.3.0) as a client of the tasks extension.

The SDK speaks 2026-07-28 and lets a client add extensions; it has no tasks extension of
its own, so this script adds one as the SDK means extensions to be added: it claims the
"task" resultType of tools/call and resolves it by polling tasks/get, answering the task's
input requests with tasks/update. Usage: tasks_client.py URL TOOL ARGUMENTS_JSON. It prints
one JSON line: the statuses seen, their status messages and the tool's final text.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List, Literal, Optional

import anyio
from pydantic import TypeAdapter

import mcp_types as types
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim

TASKS = "io.modelcontextprotocol/tasks"
ANY = TypeAdapter(Dict[str, Any])


class CreateTaskResult(types.Result):
    """The flat task a tools/call answers with (resultType "task")."""

    result_type: Literal["task"]
    task_id: str
    status: str
    poll_interval_ms: Optional[int] = None


class TaskParams(types.RequestParams):
    task_id: str
    input_responses: Optional[Dict[str, Any]] = None


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class UpdateTask(types.Request[TaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: TaskParams
    name_param = "taskId"


class Tasks(ClientExtension):
    identifier = TASKS

    def __init__(self) -> None:
        self.seen: List[List[Optional[str]]] = []

    def claims(self) -> List[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        answered = set()
        interval = (created.poll_interval_ms or 100) / 1000
        while True:
            task = await ctx.session.send_request(GetTask(params=TaskParams(task_id=created.task_id)), ANY)
            status = task["status"]
            if not self.seen or self.seen[-1] != [status, task.get("statusMessage")]:
                self.seen.append([status, task.get("statusMessage")])
            if status == "completed":
                return types.CallToolResult.model_validate(task["result"])
            if status in ("failed", "cancelled"):
                raise RuntimeError(f"task {status}: {task.get('error')}")
            responses = {}
            for key, request in (task.get("inputRequests") or {}).items():
                if key not in answered:
                    answered.add(key)
                    assert request["method"] == "elicitation/create", request
                    responses[key] = {"action": "accept", "content": {"answer": "yes"}}
            if responses:
                update = UpdateTask(params=TaskParams(task_id=created.task_id, input_responses=responses))
                await ctx.session.send_request(update, ANY)
            await anyio.sleep(interval)


async def elicit(context: Any, params: Any) -> types.ElicitResult:
    """What the user says to a question asked on a request (none is here: the node asks
    through the task); declaring it declares the elicitation capability."""
    return types.ElicitResult(action="accept", content={"answer": "yes"})


async def main(url: str, tool: str, arguments: Dict[str, Any]) -> None:
    tasks = Tasks()
    async with Client(url, mode="2026-07-28", extensions=[tasks], elicitation_callback=elicit) as client:
        result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else None
    print(json.dumps({"statuses": tasks.seen, "text": text, "isError": result.is_error}))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
