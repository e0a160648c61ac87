"""tau's hands: files, search, shell, git, and the permission rules around them.

Contracts: ``base`` (Tool, ToolContext, ToolResult), ``permissions_types`` (approval handshake).

Tools (what the model calls), assembled by ``registry.default_tools()``:
  file_read    read_file                     file_search  list_files, grep
  file_edit    write_file, edit_file         shell        run_shell
  git_tools    git_status, git_diff, git_log, git_commit

Rules around them: ``paths`` (workspace confinement), ``permissions`` (modes and the Policy),
``secret_files`` (files that need approval to read), ``gitguard`` (paths git reads as its own,
never written), ``undo`` (per-turn undo journal that keeps the user's later work),
``visible`` (control codes made visible in approval texts), ``cancel`` (the cancel protocol).

Pure helpers: ``matching`` (search/replace with fuzzy fallback), ``diffs`` (unified diffs),
``textio`` (encodings, BOM, line ends, binary sniffing), ``globs`` / ``ignore`` / ``walk``
(.gitignore-aware file walking), ``capping`` (head+tail output caps); thin I/O: ``atomic``
(atomic, no-follow writes), ``gitcmd`` (every git call, with overrides that keep a planted
config from running code), ``process`` (process-group runs with timeout and cancel), ``toolkit``
(argument coercion and result plumbing shared by the tools).
"""
