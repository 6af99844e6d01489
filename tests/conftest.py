"""The tests' shared fixtures live in tests/support (see tests/README.md): registered here, so a
test uses `note_writer`, `start_daemon` or `standin_ollama` without importing them."""

pytest_plugins = ["support.standin_ollama", "support.bots", "support.nginx", "support.scripts"]  # in the order they import each other
