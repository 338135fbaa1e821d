"""The SDK's exception family."""

from __future__ import annotations


class ToolnodeError(Exception):
    """Base class of every error the SDK raises on purpose."""


class ToolError(ToolnodeError):
    """Raised by a tool handler to fail the call.

    The message becomes the text of a result with ``isError: true``, which the
    model reads, so say what went wrong and how to do better.
    """
