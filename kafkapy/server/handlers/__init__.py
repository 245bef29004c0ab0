"""The request handlers, by area of Kafka's API: one small module per area.

Each module exports ``HANDLERS``, a mapping ``{ApiKey.X: handler}`` of ``async def
handler(context: RequestContext[XRequest]) -> XResponse`` (the contract is
:mod:`kafkapy.server.request_context`, which is all a handler module needs of the server
package's dispatch side). Handlers read and build the generated message classes of
:mod:`kafkapy.protocol.message_classes` by name. :mod:`kafkapy.server.kafka_apis` imports
every module and merges the tables into the one it dispatches on; an API is advertised only
once it has a handler here.
"""
