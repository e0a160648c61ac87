"""tau's application: CLI, config, agent loop, sessions, TUI, server."""
