"""tau serve: the resident model behind an OpenAI-compatible HTTP API."""

from app.server.app import create_app
from app.server.runner import ServerThread

__all__ = ["create_app", "ServerThread"]
