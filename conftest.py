"""Root conftest: pytest's ``pytester`` and the loopback fake model servers for the plugin's tests."""

pytest_plugins = ["pytester", "tests.fakes.fixtures", "tests.support.fixtures", "tests.support.multiprocess"]
