"""The shop package: orders and inventory."""
