"""Database backends: Django's, each with a small change (see its module)."""
