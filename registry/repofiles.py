"""The files a manifests repository may carry besides its manifests and its policy: the repository's own.

A registry hosted on GitHub needs its CI workflow, a README, a licence; none of them is a manifest. They
are these paths, and only these (matched on the path's first component; names case-insensitively, as
GitHub finds a README):

- `.github/` and everything under it (workflows, CODEOWNERS, issue templates);
- at the top level: `README*`, `LICENSE*` (and `LICENCE*`), `CONTRIBUTING*`, `.gitattributes`, `.gitignore`.

The graph never reads them (it reads manifest folders only), a server follows a main that changes them,
and the pull-request check names each change to one and accepts it only from a commit signed by a
maintainer of the policy in force, as it accepts a policy change: they steer the repository (a workflow
runs with its token), so a contributor's pull request may not change them.

The set is fixed rather than read from a file in the repository: a list that widens what the check lets
through would itself be policy, with a trust chain of its own to keep; these paths are what GitHub and
editors look for, and none can shadow a manifest folder or the policy.
"""

from __future__ import annotations

__all__ = ["REPOSITORY_FILE_PATTERNS", "is_repository_file"]

REPOSITORY_FILE_PATTERNS = (
    ".github/",
    "README*",
    "LICENSE*",
    "LICENCE*",
    "CONTRIBUTING*",
    ".gitattributes",
    ".gitignore",
)
"""As documented above, for people; `is_repository_file` is the rule."""

_TOP_LEVEL_PREFIXES = ("readme", "license", "licence", "contributing")
_TOP_LEVEL_NAMES = (".gitattributes", ".gitignore")


def is_repository_file(path: str) -> bool:
    """Whether a path (as git writes it, `/`-separated) is one of the repository's own files.

    >>> [is_repository_file(p) for p in (".github/workflows/check.yml", "README.md", "docs/README.md")]
    [True, True, False]
    >>> [is_repository_file(p) for p in ("License", ".gitattributes", ".github", "benchmark-runs/README")]
    [True, True, False, False]
    """
    if path.startswith(".github/"):
        return len(path) > len(".github/")
    if "/" in path:
        return False
    return path.lower().startswith(_TOP_LEVEL_PREFIXES) or path in _TOP_LEVEL_NAMES
