"""The two eras a request may belong to, as objects that know what differs between them.

A request of a session (2025-11-25 and older, opened by initialize) is answered as it is,
its handler asks the client for input with requests of ours, and its log level is the
session's. A request of 2026-07-28 stands alone: what the server may know of the client is
in its _meta, its answer says resultType, a handler's questions end the round with an
input_required result, and what it lists carries a cache hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, Optional, Union

from ._context import Asker, Context, InputRequired, trace_context_of
from ._protocol import (
    ALL_VERSIONS,
    INPUT_METHODS,
    INVALID_PARAMS,
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MISSING_CLIENT_CAPABILITY,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    UNSUPPORTED_VERSION,
    Message,
    RequestId,
    RpcError,
    as_request_id,
)
from ._state import StateSealer, call_digest

RESOURCE_NOT_FOUND = -32002

# What a call runs: the handler's work for a Context, as a coroutine (which, for a sync
# handler, never suspends).
Work = Callable[[Context], Awaitable[Message]]


@dataclass(frozen=True)
class CallRequest:
    """What a request that starts a call says, as its era needs it."""

    request_id: RequestId
    params: Message
    send: Callable[[Message], None]
    method: str  # tools/call, prompts/get or resources/read
    target: str  # the tool's or prompt's name, or the URI read
    args: Any  # what the call is bound to besides: its arguments
    cache_hint: Optional[Message] = None  # what a 2026-07-28 answer carries

    @property
    def meta(self) -> Any:
        """The request's _meta."""
        return self.params.get("_meta")


class Call:
    """One tools/call, prompts/get or resources/read of an era: its Context, and how its
    work's result or questions become the answer."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def run(self, work: Work) -> Message:
        """The answer to the request: work's result as the era shapes it."""
        return await work(self.ctx)


class SessionEra:
    """A request of the session opened by initialize."""

    # Unknown resources answer -32002 (2026-07-28 moved this to -32602).
    not_found_code = RESOURCE_NOT_FOUND
    # subscriptions/listen is a 2026-07-28 method.
    listens = False

    def __init__(self, log_enabled: Callable[[str], bool], asker: Asker) -> None:
        self._log_enabled = log_enabled
        self._asker = asker

    def answer(self, result: Message, *, cache_hint: Optional[Message] = None) -> Message:
        """A request's result as this era sends it: unchanged."""
        return result

    def call(self, request: CallRequest) -> Call:
        """A call for the request: its handler logs at the session's level and asks the
        client with requests of ours."""
        return Call(
            Context(
                request.request_id,
                _progress_token(request.meta),
                request.send,
                self._log_enabled,
                self._asker,
                trace_context=trace_context_of(request.meta),
            )
        )


class StatelessEra:
    """A 2026-07-28 request, standing alone."""

    not_found_code = INVALID_PARAMS
    listens = True

    def __init__(self, meta: Message, sealer: StateSealer) -> None:
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        level = meta.get(META_LOG_LEVEL)
        self.capabilities: Message = capabilities if isinstance(capabilities, dict) else {}
        # Index in LOG_LEVELS of the least severe level sent; None sends none.
        self._log_threshold = LOG_LEVELS.index(level) if level in LOG_LEVELS else None
        self._sealer = sealer

    def answer(self, result: Message, *, cache_hint: Optional[Message] = None) -> Message:
        """A request's result as 2026-07-28 sends it: complete, with its cache hint."""
        result["resultType"] = "complete"
        if cache_hint is not None:
            result.update(cache_hint)
        return result

    def call(self, request: CallRequest) -> Call:
        """A call for the request: the client's answers so far come in it (inputResponses,
        and requestState sealed by an earlier round), and questions still open end it."""
        return _StatelessCall(self, request)

    def log_enabled(self, level: str) -> bool:
        """Whether the request's _meta asked for messages of level."""
        threshold = self._log_threshold
        return threshold is not None and LOG_LEVELS.index(level) >= threshold

    def capable(self, capability: str) -> bool:
        """Whether the request's client declared capability."""
        return isinstance(self.capabilities.get(capability), dict)


class _StatelessCall(Call):
    def __init__(self, era: StatelessEra, request: CallRequest) -> None:
        self._era = era
        # Hashing the arguments costs more than a small call: only when a state is opened
        # or sealed.
        self._digest: Callable[[], str] = lambda: call_digest(
            request.method, request.target, request.args
        )
        self._cache_hint = request.cache_hint
        answers = _restore_answers(era._sealer, request.params, self._digest)
        super().__init__(
            Context(
                request.request_id,
                _progress_token(request.meta),
                request.send,
                era.log_enabled,
                lambda ctx, wanted: _answer_from(era, answers, wanted),
                era.capable,
                trace_context=trace_context_of(request.meta),
            )
        )

    async def run(self, work: Work) -> Message:
        try:
            result = await work(self.ctx)
        except InputRequired as need:
            return {
                "resultType": "input_required",
                "inputRequests": need.requests,
                "requestState": self._era._sealer.seal(self._digest(), need.answers),
            }
        return self._era.answer(result, cache_hint=self._cache_hint)


# A request's era.
Era = Union[SessionEra, StatelessEra]


def era_of(params: Message, session: SessionEra, sealer: StateSealer) -> Era:
    """The era of a request: the session's, unless its _meta names a 2026-07-28 version."""
    meta = params.get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if version is None or version in SUPPORTED_VERSIONS:
        return session
    assert isinstance(meta, dict)
    if version not in STATELESS_VERSIONS:
        raise RpcError(
            UNSUPPORTED_VERSION,
            f"unsupported protocol version {str(version)[:64]!r}",
            {"supported": list(ALL_VERSIONS), "requested": version},
        )
    return StatelessEra(meta, sealer)


def _progress_token(meta: Any) -> Optional[RequestId]:
    return as_request_id(meta.get("progressToken")) if isinstance(meta, dict) else None


def _restore_answers(
    sealer: StateSealer, params: Message, digest: Callable[[], str]
) -> Dict[str, Message]:
    """The client's answers so far: those sealed in requestState by an earlier round and
    those of this one. Refuses what is malformed or tampered with (-32602)."""
    answers: Dict[str, Message] = {}
    state = params.get("requestState")
    if state is not None:
        if not isinstance(state, str):
            raise RpcError(INVALID_PARAMS, "requestState must be a string")
        try:
            answers.update(sealer.open(state, digest()))
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, f"invalid requestState: {exc}") from None
    responses = params.get("inputResponses")
    if responses is not None:
        if not isinstance(responses, dict) or not all(
            isinstance(v, dict) for v in responses.values()
        ):
            raise RpcError(INVALID_PARAMS, "inputResponses must map each key to a result object")
        answers.update(responses)
    return answers


def _answer_from(
    era: StatelessEra, answers: Dict[str, Message], wanted: Dict[str, Message]
) -> Dict[str, Message]:
    """The answers the client already gave, or InputRequired for the rest."""
    missing = {key: request for key, request in wanted.items() if key not in answers}
    if not missing:
        return {key: answers[key] for key in wanted}
    for request in missing.values():
        capability = INPUT_METHODS[request["method"]]
        if not era.capable(capability):
            raise RpcError(
                MISSING_CLIENT_CAPABILITY,
                f"{request['method']} needs the client capability {capability!r}",
                {"requiredCapabilities": {capability: {}}},
            )
    raise InputRequired(missing, answers)
