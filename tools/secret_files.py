"""Files that commonly hold secrets; reading one needs the user's approval."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import PurePosixPath

# matched against the file name (lower-cased)
SECRET_NAME_PATTERNS = (
    ".env",
    ".env.*",
    ".envrc",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "credentials*.json",
    "client_secret*.json",
    "service-account*.json",
    "secrets.json",
    "secrets.yml",
    "secrets.yaml",
    "*.tfvars",
    "*.kdbx",
)
# matched against the end of the relative path
SECRET_PATH_SUFFIXES = (
    ".aws/credentials",
    ".aws/config",
    ".docker/config.json",
    ".kube/config",
    ".ssh/config",
    ".config/gcloud/credentials.db",
)
NOT_SECRET = (".env.example", ".env.sample", ".env.template", ".env.dist")


def is_secret_path(rel_path: str) -> bool:
    """Whether a workspace-relative path names a file that commonly holds secrets."""
    p = PurePosixPath(rel_path.replace("\\", "/"))
    name = p.name.lower()
    if not name or name in NOT_SECRET:
        return False
    if any(fnmatchcase(name, pat) for pat in SECRET_NAME_PATTERNS):
        return True
    lowered = p.as_posix().lower()
    return any(lowered == s or lowered.endswith("/" + s) for s in SECRET_PATH_SUFFIXES)
