"""Root conftest: enables pytest's ``pytester`` fixture for the plugin's own tests."""

pytest_plugins = ["pytester"]
