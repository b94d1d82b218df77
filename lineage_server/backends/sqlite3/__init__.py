"""Django's SQLite backend, creating the database file's folder when it first connects."""
