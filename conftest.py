"""Root conftest: the plugin's own tests run real pytest sessions through pytester."""

pytest_plugins = ["pytester"]
