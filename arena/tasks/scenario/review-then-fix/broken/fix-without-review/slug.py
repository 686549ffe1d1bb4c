"""URL slugs for post titles."""

import re
import unicodedata

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text, max_length=None):
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    if max_length is not None:
        if max_length < 0:
            raise ValueError("max_length must be nonnegative")
        slug = slug[:max_length].rstrip("-")
    return slug
