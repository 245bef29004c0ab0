"""Authentication: SASL (PLAIN, SCRAM-SHA-256/512) as Kafka's broker does it.

- :mod:`.authenticator`: a connection's SASL state machine (SaslHandshake, SaslAuthenticate);
- :mod:`.sasl_server`: the mechanism contract; :mod:`.plain`, :mod:`.scram`,
  :mod:`.oauthbearer` the mechanisms;
- :mod:`.jaas`: ``sasl.jaas.config`` text;
- :mod:`.credential_cache`: the SCRAM credentials the broker knows;
- :mod:`.listener_sasl`: a listener's settings turned into its authenticator factory, and
  the broker's own credentials on a SASL inter-broker listener;
- :mod:`.sasl_client`: the client side, for this broker's connections to the others.

A layer of its own between ``protocol``/``network``/``config`` and ``server``: it knows
Kafka's SASL exchanges and settings, not the broker.
"""
