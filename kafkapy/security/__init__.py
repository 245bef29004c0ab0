"""Security: who a client is and what it may do (Kafka's ``kafka.security`` and the clients'
``org.apache.kafka.common.acl`` / ``resource`` packages). Below ``server``: it may import
``common``, ``zk`` and ``errors`` only (tests/test_layering.py)."""
