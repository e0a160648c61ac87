"""tau's hands: files, search, shell, git, and the permission rules around them."""
