"""Security: who a client is and what it may do.

Authentication, SASL (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER) as Kafka's broker does it:

- :mod:`.authenticator`: a connection's SASL state machine (SaslHandshake, SaslAuthenticate);
- :mod:`.sasl_server`: the mechanism contract; :mod:`.plain`, :mod:`.scram`,
  :mod:`.oauthbearer` the mechanisms;
- :mod:`.jaas`: ``sasl.jaas.config`` text;
- :mod:`.credential_cache`: the SCRAM credentials the broker knows;
- :mod:`.listener_sasl`: a listener's settings turned into its authenticator factory, and
  the broker's own credentials on a SASL inter-broker listener;
- :mod:`.sasl_client`: the client side, for this broker's connections to the others.

Authorization, :mod:`.authorizer` (Kafka's ``kafka.security.authorizer`` and the clients'
``org.apache.kafka.common.acl`` / ``resource`` packages): ACLs, their store, the decisions.

A layer of its own below ``server`` (tests/test_layering.py): it knows Kafka's SASL exchanges,
ACLs and settings, not the broker.
"""
