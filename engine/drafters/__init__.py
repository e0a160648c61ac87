"""Drafters: each proposes tokens the target model then verifies."""
