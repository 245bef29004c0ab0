"""The network layer (Kafka's ``kafka.network``): listeners, connections and the request channel.

It moves size-prefixed frames between sockets and request handlers and knows nothing of Kafka
APIs; of kafkapy it imports only ``_frames`` and ``errors``.
"""

from kafkapy.network.request_channel import (
    CloseConnection,
    ConnectionLink,
    FileSliceLike,
    NoResponse,
    Request,
    RequestChannel,
    Response,
    SendResponse,
)
from kafkapy.network.socket_server import Endpoint, SocketServer

__all__ = [
    "CloseConnection",
    "ConnectionLink",
    "Endpoint",
    "FileSliceLike",
    "NoResponse",
    "Request",
    "RequestChannel",
    "Response",
    "SendResponse",
    "SocketServer",
]
