"""Write MCP tool bundles for toolnode in Python, with the standard library only."""

from ._context import Context
from ._errors import ToolError, ToolnodeError
from ._protocol import LATEST_VERSION, STATELESS_VERSIONS, SUPPORTED_VERSIONS, RpcError
from ._server import Server
from ._tool import Result, Tool
from ._views import MIME_APP, UI_EXTENSION

__all__ = [
    "LATEST_VERSION",
    "MIME_APP",
    "STATELESS_VERSIONS",
    "SUPPORTED_VERSIONS",
    "UI_EXTENSION",
    "Context",
    "Result",
    "RpcError",
    "Server",
    "Tool",
    "ToolError",
    "ToolnodeError",
]
__version__ = "0.3.0"
