"""URL slugs for post titles."""


def slugify(text, max_length=None):
    slug = "".join(c if c.isalnum() else "-" for c in text.lower())
    slug = slug.strip("-")
    if max_length is not None:
        slug = slug[:max_length]
    return slug
