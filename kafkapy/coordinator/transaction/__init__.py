"""The transaction coordinator: producer ids and the durable state of transactions."""
