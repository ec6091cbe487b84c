"""sha1 / sha256 hex digests without loading OpenSSL at startup.

``import hashlib`` costs ~12 ms (it loads OpenSSL and blake2), about 5% of ``tracker status``.
CPython's built-in implementations (``_sha1``, ``_sha2`` / ``_sha256``) give the same digests and
load in well under a millisecond; they are slower only on large inputs, and we hash plan files,
source files and short strings. Falls back to hashlib where the built-ins are missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import sha1 as _sha1
    from hashlib import sha256 as _sha256
else:
    try:
        from _sha1 import sha1 as _sha1
    except ImportError:  # other Python implementations
        from hashlib import sha1 as _sha1
    try:
        from _sha2 import sha256 as _sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256 as _sha256  # Python 3.11
        except ImportError:
            from hashlib import sha256 as _sha256


def sha1_hex(data: bytes) -> str:
    """Hex sha1 of ``data``."""
    return _sha1(data).hexdigest()


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return _sha256(data).hexdigest()
