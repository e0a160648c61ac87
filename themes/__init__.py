"""TUI themes as data."""
