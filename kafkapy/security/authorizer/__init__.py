"""The authorizer: ACLs (``acl``), where they are kept (``acl_store``) and the broker's
``AclAuthorizer`` (``authorizer``), as Kafka 3.x's ``kafka.security.authorizer``."""
