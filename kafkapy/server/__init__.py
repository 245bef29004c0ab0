"""The broker: request handling, replica management and the delayed-operation purgatory."""
