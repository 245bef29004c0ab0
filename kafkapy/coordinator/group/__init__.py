"""The classic group coordinator: consumer groups, their rebalances and committed offsets."""
