"""One module per Kafka API: its REQUEST and RESPONSE schemas, declared once for every version.

The registry that collects them is :mod:`kafkapy.protocol.api_keys`.
"""
