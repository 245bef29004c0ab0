"""The request handlers, by area of Kafka's API: one small module per area.

Each module in ``HANDLER_MODULES`` exports ``HANDLERS``, a mapping ``{api_key: handler}`` of
``async def handler(context: RequestContext) -> response body`` (see
:mod:`kafkapy.server.kafka_apis` for the contract). ``default_handlers()`` merges them into the
table ``KafkaApis`` dispatches on; an API is advertised only once it has a handler here.

The modules are imported when ``default_handlers()`` is first called, not when this package is,
so a handler module may import :mod:`kafkapy.server.kafka_apis` (which imports this package).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkapy.server.kafka_apis import Handler

__all__ = ["HANDLER_MODULES", "default_handlers"]

# kafkapy/server/handlers/<name>.py
HANDLER_MODULES = ("api_versions", "metadata", "produce", "fetch", "list_offsets",
                   "topics_admin", "configs", "cluster", "group_and_offsets",
                   "consumer_group_protocol", "transaction")


def default_handlers() -> dict[int, Handler]:
    """``{api_key: handler}`` from every module in ``HANDLER_MODULES``.

    Raises:
        ValueError: two modules handle the same API key.
    """
    handlers: dict[int, Handler] = {}
    for name in HANDLER_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for key, handler in module.HANDLERS.items():
            if key in handlers:
                raise ValueError(f"API key {key} is handled by two modules (the second is "
                                 f"{name})")
            handlers[key] = handler
    return handlers
