"""An example streaming gateway built on streamwire: see README.md beside this file.

Not part of the streamwire package (nothing in ``python/streamwire`` imports
it); the tests import it from ``examples/`` to run it over loopback.
"""

from .app import Gateway, GatewayConfig, app_from_env, create_app
from .mapping import (
    CLIENT_PROTOCOLS,
    UPSTREAM_PROTOCOLS,
    Prompt,
    Tool,
    ToolOutput,
    ToolUse,
    Turn,
    parse_request,
)

__all__ = [
    "CLIENT_PROTOCOLS",
    "UPSTREAM_PROTOCOLS",
    "Gateway",
    "GatewayConfig",
    "Prompt",
    "Tool",
    "ToolOutput",
    "ToolUse",
    "Turn",
    "app_from_env",
    "create_app",
    "parse_request",
]
