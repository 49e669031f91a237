"""Real loopback servers standing in for external services in tests."""
