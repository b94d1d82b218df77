"""Web pages (HTML shells fed by the JSON API)."""
