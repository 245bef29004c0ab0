"""Test-suite configuration: enables kafkapy's pytest plugin (``kafkapy.testing``).

An installed kafkapy (``pip install -e .``, as CI does) loads the plugin through its
``pytest11`` entry point; a bare checkout run with PYTHONPATH has no entry point, so the
plugin is registered here, under the entry point's name, unless it already is. (Not
``pytest_plugins = ["kafkapy.testing"]``: with the entry point loaded too, pytest would
import the module a second time for assertion rewriting and stop with "Module already
imported so cannot be rewritten".)
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    import kafkapy.testing

    if not config.pluginmanager.is_registered(kafkapy.testing):
        config.pluginmanager.register(kafkapy.testing, "kafkapy")
