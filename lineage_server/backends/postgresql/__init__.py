"""Django's PostgreSQL backend, sending lists as arrays without psycopg's escaping by regular expression."""
