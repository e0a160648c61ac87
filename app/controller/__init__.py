"""The session layer: a session with a model, under every interactive front end.

``ModelSession`` (app.controller.model_session) opens the engine, builds the agent, runs
and cancels turns, asks the front end's approver, runs slash commands as typed results
(app.controller.results) and logs errors. The TUI (app.tui) and ``tau --plain``
(app.plain) render what it returns and forward what the user types. Plain Python: no
Textual, no prompt_toolkit.
"""
