"""toolnode's tools inside any LLM call: tool definitions for OpenAI, Anthropic and Gemini,
their calls run through a node over the official MCP client.

Install with ``pip install 'toolnode-sdk[app]'``. See docs/applications.md.
"""

from ._connection import CLIENT_NAME, Endpoint, Unreachable
from ._formats import FORMATS, Definitions, definitions
from ._names import MAX_NAME, NameMap, is_provider_name, map_names
from ._patterns import Filter, match
from ._results import Call, Outcome, calls_of, result_messages
from ._schema import SchemaError
from ._sync import SyncConversation, SyncToolnode
from ._toolnode import REFUSAL, Conversation, Toolnode

__all__ = [
    "CLIENT_NAME",
    "FORMATS",
    "MAX_NAME",
    "REFUSAL",
    "Call",
    "Conversation",
    "Definitions",
    "Endpoint",
    "Filter",
    "NameMap",
    "Outcome",
    "SchemaError",
    "SyncConversation",
    "SyncToolnode",
    "Toolnode",
    "Unreachable",
    "calls_of",
    "definitions",
    "is_provider_name",
    "map_names",
    "match",
    "result_messages",
]
